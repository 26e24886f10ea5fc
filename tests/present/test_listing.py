"""The listings that grow with the archive: index rows, their sparklines, the comparison list."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from sitegen.pages.objects import CompareItem, Headline, IndexPage, JobRow, RunRow
from sitegen.present import listing
from sitegen.present.formatting import dur_unit, fmt_dur_in, fmt_num, fmt_pct, fmt_score
from sitegen.present.listing import (
    compare_items,
    first_groups,
    listing_groups,
    listing_row,
    spark_code,
    spark_points,
    step_time_unit,
)
from tests.conftest import column_in_one_unit
from tests.present.helpers import decode_compare_items
from tests.present.test_html import _script_data

HEADLINE = list(Headline.__struct_fields__)


def test_spark_code_spans_the_levels_and_keeps_gaps():
    code = spark_code([0.0, None, 0.5, 1.0, float("nan")])
    assert code == "0-kE-"
    assert spark_code([0.3, 0.3]) == "00"  # flat: every point at the bottom, no division by 0
    assert spark_code([1.0, None]) == "" and spark_code([]) == ""


def test_spark_points_are_integers_from_left_to_right_edge():
    assert spark_points("0-kE-") == "0,44 50,24 75,4"
    # 40 points: x rounded half up (100 * 1 / 39 = 2.56 -> 3; 100 * 2 / 39 = 5.13 -> 5)
    pts = spark_points("0" * 40).split()
    assert pts[0] == "0,44" and pts[1] == "3,44" and pts[2] == "5,44" and pts[-1] == "100,44"
    assert spark_points("0") == "" and spark_points("0---") == ""


def test_listing_rows_print_what_the_page_formatters_print(index, run_pages):
    idx = IndexPage.from_json(index)
    chains = idx.jobs_by_run()
    unit = step_time_unit(idx)
    for run in idx.runs:
        row = listing_row(run, unit, chains[run.id])
        h = run.headline
        assert row.kind == "run" and row.url == run.url and row.jobs == len(chains[run.id])
        assert row.reward_mean == (None if h.reward_mean is None else fmt_score(h.reward_mean))
        assert row.step_time == (
            None if h.step_time_mean_s is None else fmt_dur_in(h.step_time_mean_s, unit)
        )
        assert row.gen_wait == (None if h.gen_wait_share is None else fmt_pct(h.gen_wait_share))
        assert row.discarded == run.discarded_steps
        assert sum(row.findings) == len(run.findings)
        assert (row.job is not None) == (len(chains[run.id]) == 1)
        if row.job:
            assert row.job_url == chains[run.id][0].url
    job = idx.jobs[0]
    jr = listing_row(job, unit)
    assert jr.kind == "job" and jr.jobs == 0 and jr.job is None and jr.discarded == 0


def _row(id: str, last: str | None, run: str | None = None, jobs: tuple[str, ...] = ()) -> dict:
    """A minimal run (or, with ``run``, job) row for ordering tests; ``jobs``: a run's, in
    chain order."""
    h = {k: None for k in HEADLINE} | {"steps": 0}
    base = {
        "id": id,
        "url": f"{'jobs' if run else 'runs'}/{id}/",
        "data": "",
        "status": "complete",
        "first_step": None,
        "last_step": None,
        "reward_mean": None,
        "reward_max": None,
        "reward_last": None,
        "total_time_s": None,
        "headline": h,
        "trial_success_rate": None,
        "trial_error_rate": None,
        "reward_spark": [],
        "last_activity": last,
        "findings": [],
    }
    if run:
        return base | {
            "run": run,
            "log": None,
            "status_detail": None,
            "metric_blocks": 0,
            "started_at": None,
        }
    return base | {"jobs": list(jobs), "steps": 0, "discarded_steps": 0, "resumed_from": []}


def _index(runs: list[dict], jobs: list[dict]) -> IndexPage:
    return IndexPage(
        title="t",
        jobs=tuple(JobRow.from_json(j) for j in jobs),
        runs=tuple(RunRow.from_json(r) for r in runs),
        skipped=(),
        totals={"runs": len(runs), "jobs": len(jobs), "steps": 0, "trials": 0, "warnings": 0},  # type: ignore[arg-type]
    )


def test_groups_newest_first_and_the_first_rows_cut_at_a_group():
    runs = [_row("a", "2026-01-01T00:00:00", jobs=("a1",)), _row("b", None, jobs=("b1",)),
            _row("c", "2026-03-01T00:00:00.5", jobs=("c1", "c2")),
            _row("d", "2026-01-01T00:00:00", jobs=("d1",))]  # fmt: skip
    jobs = [_row("c1", None, "c"), _row("c2", None, "c"), _row("a1", None, "a"),
            _row("b1", None, "b"), _row("d1", None, "d")]  # fmt: skip
    groups = listing_groups(_index(runs, jobs), "s")
    # newest first; equal times keep the index's order; no time last
    assert [g.run.id for g in groups] == ["c", "a", "d", "b"]
    assert [j.id for j in groups[0].jobs] == ["c1", "c2"] and groups[1].jobs == ()
    assert groups[0].run.last_activity == "2026-03-01T00:00:00"  # to the second
    assert groups[1].run.job == "a1" and "a1" in groups[1].search
    assert [g.run.id for g in first_groups(groups, 4)] == ["c", "a"]  # 3 rows + 1 row
    assert [g.run.id for g in first_groups(groups, 5)] == ["c", "a", "d"]
    assert [g.run.id for g in first_groups(groups, 1)] == ["c"]  # never empty
    data = listing.rows_data(groups, "s")
    assert len(data["groups"]) == 4 and data["columns"] == listing.ROW_COLUMNS
    assert all(len(r) == len(data["columns"]) for g in data["groups"] for r in [g[0], *g[1]])


def test_a_runs_jobs_are_listed_in_chain_order_not_the_archives():
    # an experiment whose logs carry no SLURM id is chained by start time: "zz-first"
    # started before "aa-second", which the archive (and index.json's jobs) list first;
    # the index's group and the comparison page's picker list the run's jobs as it chains them
    runs = [_row("exp", "2026-01-02T00:00:00", jobs=("exp.zz-first", "exp.aa-second"))]
    jobs = [_row("exp.aa-second", None, "exp"), _row("exp.zz-first", None, "exp")]
    idx = _index(runs, jobs)
    assert [j.id for j in idx.jobs_by_run()["exp"]] == ["exp.zz-first", "exp.aa-second"]
    assert [j.id for j in listing_groups(idx, "s")[0].jobs] == ["exp.zz-first", "exp.aa-second"]
    assert listing.picker_chains(idx) == [("exp", ["exp.zz-first", "exp.aa-second"])]


def _timed(row: dict, step_s: float | None) -> dict:
    return row | {"headline": row["headline"] | {"step_time_mean_s": step_s}}


def test_the_step_time_column_is_in_one_unit_over_every_row():
    """The index's step times are printed in one unit, chosen over every run and job it
    lists: runs of 90 s and 100 s beside a job of 7300 s are all in minutes ("1.50", not
    "90.0 s" above "121.7 min"), a 0.2 s one is "< 0.01", none is "–"; the rows file
    names the unit and the sort key stays in seconds."""
    runs = [_timed(_row("a", "2026-01-02T00:00:00", jobs=("a1",)), 90.0),
            _timed(_row("c", "2026-01-03T00:00:00", jobs=("c1", "c2")), 100.0),
            _timed(_row("e", "2026-01-01T00:00:00", jobs=("e1",)), None)]  # fmt: skip
    jobs = [_timed(_row("a1", None, "a"), 90.0), _timed(_row("c1", None, "c"), 0.2),
            _timed(_row("c2", None, "c"), 7300.0), _timed(_row("e1", None, "e"), None)]  # fmt: skip
    idx = _index(runs, jobs)
    assert step_time_unit(idx) == "min"  # (a job's 7300 s; every run is below 2 min)
    assert step_time_unit(_index(runs, jobs[:2])) == "s"
    groups = listing_groups(idx, step_time_unit(idx))
    rows = [r for g in groups for r in (g.run, *g.jobs)]
    assert [(r.id, r.step_time, r.step_time_s) for r in rows] == [
        ("c", "1.67", 100.0),
        ("c1", "< 0.01", 0.2),
        ("c2", "121.67", 7300.0),
        ("a", "1.50", 90.0),
        ("e", None, None),
    ]
    data = listing.rows_data(groups, "min")
    assert data["step_time_unit"] == "min"
    at = data["columns"].index("step_time")
    assert [g[0][at] for g in data["groups"]] == ["1.67", "1.50", None]


def test_the_index_prints_its_step_times_in_one_unit(site, index):
    """The index page's step time column and the rows index-rows.js adds: one unit over
    every run and job (dur_unit), named in the header, each cell a bare number in it."""
    html = (site / "index.html").read_text(encoding="utf-8")
    _, data = _script_data(site / listing.ROWS_FILE)
    seconds = {
        (kind, r["id"]): r["headline"]["step_time_mean_s"]
        for kind in ("run", "job")
        for r in index[kind + "s"]
    }
    col = {c: i for i, c in enumerate(data["columns"])}
    rows = [(r[col["kind"]], r[col["id"]], r) for g in data["groups"] for r in (g[0], *g[1])]
    took = [seconds[kind, rid] for kind, rid, _ in rows]
    unit = column_in_one_unit(html, "runs-table", "step time", took)
    assert unit == data["step_time_unit"] == dur_unit(seconds.values())
    for s, (_, _, r) in zip(took, rows, strict=True):  # the rows the script adds: the same
        assert r[col["step_time"]] == (None if s is None else fmt_dur_in(s, unit))


def test_compare_items_print_as_the_index_and_list_as_it(site, index):
    """compare/items.js carries the comparison table's figures as the page formatters print
    them (the index's own), each item once (a run of one job's job points at its run), and
    the picker's groups: every run, newest first as on the index, then its jobs."""
    from sitegen.pages.objects import IndexPage

    _, value = _script_data(site / "compare" / "items.js")
    items = decode_compare_items(value)
    assert len(items) == len(index["runs"]) + len(index["jobs"])
    by = {(i["kind"], i["id"]): i for i in items}
    for kind, rows in (("run", index["runs"]), ("job", index["jobs"])):
        for r in rows:
            got, h = by[(kind, r["id"])], r["headline"]
            assert got["url"] == r["url"] and got["status"] == r["status"]
            assert all("detail" not in f for f in got["findings"])  # (with its curves.js)
            assert got["cells"]["steps"] == fmt_num(h["steps"])
            for k in ("reward_mean", "reward_max", "reward_last"):
                assert got["cells"][k] == fmt_score(h[k])
            # durations in seconds: the page prints them in one unit over the picks
            assert got["cells"]["step_time"] == h["step_time_mean_s"]
            assert got["cells"]["gen_wait"] == h["gen_wait_mean_s"]
            assert got["cells"]["gen_wait_share"] == fmt_pct(h["gen_wait_share"])
            assert got["cells"]["success"] == fmt_pct(r["trial_success_rate"])
            assert got["cells"]["error"] == fmt_pct(r["trial_error_rate"])
    # the same strings as the index's rows (a step time in the index's unit)
    idx = IndexPage.from_json(index)
    unit = step_time_unit(idx)
    rows = {(g.run.kind, g.run.id): g.run for g in listing_groups(idx, unit)}
    for (kind, rid), row in rows.items():
        cells = by[(kind, rid)]["cells"]
        assert [cells["reward_mean"], fmt_dur_in(cells["step_time"], unit)] == [
            row.reward_mean or "–",
            row.step_time or "–",
        ]
    # a run of one job is stored once: its job's row points at it
    short = [r for r in value["rows"] if len(r) == 4]
    assert short and all(value["rows"][r[3]][0] == "run" for r in short)
    # the picker's groups: the index's order, each run with its jobs in chain order
    order = [g.run.id for g in listing_groups(idx, unit)]
    assert [items[g[0]]["id"] for g in value["groups"]] == order
    for g in value["groups"]:
        run = next(r for r in index["runs"] if r["id"] == items[g[0]]["id"])
        assert [items[i]["id"] for i in g[1:]] == run["jobs"]
        assert {items[i]["kind"] for i in g[1:]} <= {"job"}


def test_compare_items_keep_distinct_items_apart():
    h = {k: None for k in HEADLINE} | {"steps": 3, "reward_mean": 0.123456789}
    common = {"status": "complete", "headline": h, "trial_success_rate": None,
              "trial_error_rate": None, "last_activity": None, "findings": [], "tasks": None}  # fmt: skip
    a = CompareItem.from_json(
        {"kind": "run", "id": "a", "url": "runs/a/", **common, "config": {"k": "1"}}
    )
    b = CompareItem.from_json(
        {"kind": "job", "id": "b", "url": "jobs/b/", **common, "config": {"k": "2"}}
    )
    c = CompareItem.from_json(
        {"kind": "job", "id": "c", "url": "jobs/c/", **common, "config": {"k": "1"}}
    )
    value = compare_items([a, b, c], [("a", ["b", "c", "gone"])])
    assert [len(r) for r in value["rows"]] == [9, 9, 4] and value["rows"][2][3] == 0
    assert value["config_values"] == [["1", "2"]]  # each value once
    assert [r[7] for r in value["rows"][:2]] == [[0], [1]]
    assert value["groups"] == [[0, 1, 2]]  # (a job the items lack is left out)
    got = decode_compare_items(json.loads(json.dumps(value)))
    assert [i["config"] for i in got] == [{"k": "1"}, {"k": "2"}, {"k": "1"}]
    assert got[0]["cells"]["reward_mean"] == "0.1235" and got[0]["cells"]["steps"] == "3"
    assert got[0]["cells"]["staleness"] == "–" and got[0]["cells"]["pass_at_k"] == "–"


class _Rows(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.groups = 0
        self.rows = 0

    def handle_starttag(self, tag, attrs):
        self.groups += tag == "tbody"
        self.rows += tag == "tr"


def test_index_holds_the_newest_rows_and_every_row_is_in_the_rows_file(site, index):
    html = (site / "index.html").read_text()
    p = _Rows()
    p.feed(html)
    name, data = _script_data(site / listing.ROWS_FILE)
    assert name == "index-rows" and len(data["groups"]) == len(index["runs"])
    ids = [g[0][1] for g in data["groups"]]
    assert sorted(ids) == sorted(r["id"] for r in index["runs"])
    # the small archive fits: every run in the HTML, and no "more" note
    assert p.groups == len(index["runs"]) and 'id="more-rows"' not in html
    assert f'data-rows="{listing.ROWS_FILE}"' in html


def test_a_sparkline_says_what_it_spans(site, index):
    """Each sparkline is drawn on its own scale: its tooltip gives the lowest and highest
    value, so a run that barely moved is not read as one that moved a lot."""
    from sitegen.present.listing import spark_title

    assert spark_title([0.25, None, 0.4700, float("nan"), 0.3]) == (
        "reward per step from 0.2500 to 0.4700 (own scale)"
    )
    assert spark_title([0.5]) == "" and spark_title([]) == ""
    html = (site / "index.html").read_text(encoding="utf-8")
    assert html.count('class="spark" title="reward per step from ') >= 1


def test_last_activity_shows_its_year(tmp_path):
    """ "01-01 00:50" beside "12-31 23:10" hid that one is a year later: every row shows its
    date in full, in the page as in index-rows.js and in the runs list, whether the listed
    activity spans one year or two."""
    import json
    import shutil
    from pathlib import Path

    from sitegen.commands.build import build
    from sitegen.options import BuildOptions
    from sitegen.present.listing import _when

    assert _when("2026-01-01T00:50:06") == "2026-01-01 00:50" and _when(None) is None

    src = Path(__file__).resolve().parents[2] / "sample" / "archive" / "flat" / "sync-baseline"

    def shown(archive: Path) -> list[str]:
        out = archive.parent / f"site-{archive.name}"
        build(BuildOptions(archive=archive, out=out, workers=1))
        text = (out / "index-rows.js").read_text()
        d = json.loads(text[text.index(", ") + 2 : text.rindex(");")])
        col = d["columns"].index("last_shown")
        got = [g[0][col] for g in d["groups"]]
        html = (out / "index.html").read_text(encoding="utf-8")
        runs = (out / "runs" / "index.html").read_text(encoding="utf-8")
        assert all(f">{s}</td>" in html and f">{s}</td>" in runs for s in got)
        return got

    one = tmp_path / "one"
    shutil.copytree(src, one / "a")
    shutil.copytree(src, one / "b")
    assert shown(one) == ["2026-02-13 00:38"] * 2
    two = tmp_path / "two"
    shutil.copytree(src, two / "a")
    shutil.copytree(src, two / "b")
    log = next((two / "b").glob("*.out"))
    log.write_bytes(log.read_bytes().replace(b"2026-", b"2025-"))  # (it holds binary junk)
    dates = shown(two)
    assert sorted(s[:4] for s in dates) == ["2025", "2026"] and all(len(s) == 16 for s in dates)
