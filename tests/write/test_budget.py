"""The site budget's choices: newest job first until one does not fit, weighed by what the
last build wrote, then for real; never above the budget."""

from __future__ import annotations

import pytest

from sitegen.errors import OutputError
from sitegen.write.budget import Owner, bulk_files, fit, plan


def _owners(n: int) -> list[Owner]:
    """Jobs j0 (newest) … j{n-1} (oldest), 100 trials each; j1 also shown by its run r1."""
    out = []
    for i in range(n):
        pages = (f"jobs/j{i}/", "runs/r1/") if i == 1 else (f"jobs/j{i}/",)
        out.append(Owner(f"jobs/j{i}/", f"job j{i}", (i, f"j{i}"), pages, 100))
    return out


def _site(owners: list[Owner], bulk: int) -> dict[str, int]:
    sizes = {"index.html": 50_000, "runs/r1/index.html": 10_000, "runs/r1/tasks.json.gz": bulk}
    for o in owners:
        sizes[f"{o.url}index.html"] = 40_000
        sizes[f"{o.url}trials.csv.gz"] = bulk
        sizes[f"{o.url}transcripts/a/index.html"] = bulk // 2
    return sizes


def test_bulk_files_are_the_tables_and_transcripts_of_an_owners_pages():
    o = _owners(2)[1]
    names = _site(_owners(2), 1000)
    assert sorted(bulk_files(o, names)) == [
        "jobs/j1/transcripts/a/index.html",
        "jobs/j1/trials.csv.gz",
        "runs/r1/tasks.json.gz",  # its run's own task table of the same trials
    ]


def test_plan_fills_newest_first_and_stops_at_the_first_that_does_not_fit():
    owners = _owners(4)
    previous = {rel: (n, 0) for rel, n in _site(owners, 10_000).items()}
    # essential: 50 k + 10 k + 4 x 40 k = 220 k; bulk 15 k each (j1: 25 k with its run's table)
    assert plan(owners, previous, 220_000 + 15_000 + 25_000 + 14_000, 48) == {
        "jobs/j2/",
        "jobs/j3/",
    }
    assert plan(owners, previous, 10**9, 48) == set()
    # a job the last build left out is weighed as it was when last made
    del previous["jobs/j0/trials.csv.gz"], previous["jobs/j0/transcripts/a/index.html"]
    weighed = {"jobs/j0/": 30_000}
    assert plan(owners, previous, 220_000 + 40_000, 48, weighed) == {
        "jobs/j1/",
        "jobs/j2/",
        "jobs/j3/",
    }
    assert len(plan(owners, previous, 220_000 + 20_000, 48, weighed)) == 4
    assert plan(owners, {}, 1, 48) == set()  # no last build: every page is weighed for real


def test_fit_drops_the_oldest_made_now_and_never_goes_over():
    owners = _owners(4)
    sizes = _site(owners, 10_000)
    total = sum(sizes.values())
    more, files = fit(owners, sizes, set(), set(), total - 1, {})
    assert more == {"jobs/j3/"} and sorted(files) == [
        "jobs/j3/transcripts/a/index.html",
        "jobs/j3/trials.csv.gz",
    ]
    # j3 kept whole from the last build (fixed): the oldest made now goes instead
    more, _ = fit(owners, sizes, set(), {"jobs/j3/"}, total - 1, {})
    assert more == {"jobs/j2/"}
    # a shared text goes with the last owner that uses it
    shared = {"jobs/j3/transcripts/": {"aa"}, "jobs/j2/transcripts/": {"aa", "bb"}}
    sizes = {**sizes, "transcripts/shared/aa.js": 500, "transcripts/shared/bb.js": 500}
    more, files = fit(owners, sizes, set(), set(), total - 20_000, shared)
    assert more == {"jobs/j3/", "jobs/j2/"}
    assert {"transcripts/shared/aa.js", "transcripts/shared/bb.js"} <= set(files)
    with pytest.raises(OutputError, match="over its budget"):
        fit(owners, _site(owners, 10_000), set(), set(), 100_000, {})
