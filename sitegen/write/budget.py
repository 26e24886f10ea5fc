"""One budget for the whole site (``site_budget``, default GitHub Pages' 1 GB).

The pages, charts and data of every job and run go in first; the *bulk* data (trial table,
full task table, sampled transcripts) newest job first until the budget: the first job whose
bulk does not fit and every older one leave theirs out, and say so (docs/design.md).

:func:`plan`, before anything is analysed, weighs each job's bulk by what the last build
wrote (a new job's by :func:`estimate`); its choice is part of each run's key. :func:`fit`,
once every file is made, weighs them for real; if the site is still over, the bulk of the
oldest jobs made this build goes too (their pages are made again to say so).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import msgspec
import orjson
from msgspec.structs import replace

from sitegen.errors import OutputError
from sitegen.model.parsed import Job, Run
from sitegen.write.site import MARKER, FileRecord, SiteWriter
from sitegen.write.weight import mb

if TYPE_CHECKING:
    from sitegen.options import BuildOptions


class PageLists(Protocol):
    """The build's page objects (``commands.analyse.SitePages``): (page, trial set) pairs."""

    jobs: list[tuple[Any, Any]]
    runs: list[tuple[Any, Any]]


BULK_FILES = ("trials.csv.gz", "tasks.json.gz", "tasks.js")
BULK_FOLDER = "transcripts/"
SHARED_FOLDER = "transcripts/shared/"  # the site's transcripts' shared texts
# What a job new to the site is guessed to weigh: its pages when the last build had none to
# go by, and its bulk per trial and per sampled transcript (docs/benchmarks.md).
PAGE_BYTES = 300_000
BULK_BYTES_PER_TRIAL = 40
BULK_BYTES_PER_TRANSCRIPT = 12_000


class Owner(msgspec.Struct, frozen=True):
    """A page whose folder holds bulk data (a job with trials of its own, or a run with its
    own), and the pages that show it (its own, and a run that shows its job's)."""

    url: str
    label: str  # "job ID" / "run ID"
    newest: tuple  # sort key, newest first: (-last activity, label)
    pages: tuple[str, ...]
    trials: int


def owners(jobs: Iterable[Job], runs: Iterable[Run]) -> list[Owner]:
    """Every page with bulk data, newest first (by its last log line, then name)."""
    out = []
    by_set: dict[int, list[str]] = {}
    for run in runs:
        if run.trials is not None:
            by_set.setdefault(id(run.trials), []).append(f"runs/{run.id}/")
    owned = set()
    for job in jobs:
        if job.trials is None:
            continue
        owned.add(id(job.trials))
        url, trials = f"jobs/{job.id}/", len(job.trials.results)
        runs_of = tuple(by_set.get(id(job.trials), ()))
        out.append(Owner(url, f"job {job.id}", _newest([job], job.id), (url, *runs_of), trials))
    for run in runs:
        if run.trials is not None and id(run.trials) not in owned:
            url, trials = f"runs/{run.id}/", len(run.trials.results)
            out.append(Owner(url, f"run {run.id}", _newest(run.jobs, run.id), (url,), trials))
    return sorted(out, key=lambda o: o.newest)


def _newest(jobs: Iterable[Job], name: str) -> tuple:
    times = [j.log.last_time for j in jobs if j.log and j.log.last_time]
    last = max(times, default=datetime.min)
    return (-(last - datetime.min).total_seconds(), name)


def is_bulk(rel: str, url: str) -> bool:
    """Whether site file ``rel`` is bulk data of the page at ``url``."""
    if not rel.startswith(url):
        return False
    rest = rel[len(url) :]
    return rest in BULK_FILES or rest.startswith(BULK_FOLDER)


def bulk_files(owner: Owner, names: Iterable[str]) -> list[str]:
    """The bulk files of ``owner`` among ``names``: in its folder, and a run's own task table
    of the same trials (a run of several jobs sharing their folder)."""
    return [rel for rel in names if any(is_bulk(rel, page) for page in owner.pages)]


def estimate(owner: Owner, transcripts: int) -> int:
    """A guess of an owner's bulk bytes, before it is made."""
    return BULK_BYTES_PER_TRIAL * owner.trials + BULK_BYTES_PER_TRANSCRIPT * min(
        transcripts, owner.trials
    )


def plan(
    all_owners: list[Owner],
    previous: Mapping[str, tuple],
    budget: int,
    transcripts: int,
    weighed: Mapping[str, int] | None = None,
) -> set[str]:
    """The owners (urls) whose bulk the site leaves out, weighed by what the last build wrote
    (``previous``), one it left out by ``weighed``, a new job's by :func:`estimate`. Without a
    last build, none: :func:`fit` weighs them all for real."""
    if not previous:
        return set()
    by_page = {p: o for o in all_owners for p in o.pages}
    bulk = {o.url: 0 for o in all_owners}
    known: set[str] = set()
    pages: set[str] = set()
    essential = 0.0
    for rel, rec in previous.items():
        parts = rel.split("/", 2)  # the job or run page folder it lies in (jobs/ID/), or ""
        page = f"{parts[0]}/{parts[1]}/" if len(parts) == 3 and parts[0] in ("jobs", "runs") else ""
        if page:
            pages.add(page)
        o = by_page.get(page)
        if o is not None and is_bulk(rel, page):
            bulk[o.url] += rec[0]
            known.add(o.url)
        elif not rel.startswith(SHARED_FOLDER):
            essential += rec[0]
    per_page = essential / len(pages) if pages else PAGE_BYTES  # (with its share of listings)
    essential += per_page * len(set(by_page) - pages)  # pages new to the site
    weighed = weighed or {}
    sizes = {
        o.url: bulk[o.url] if o.url in known else weighed.get(o.url, estimate(o, transcripts))
        for o in all_owners
    }
    return _left_out(all_owners, sizes, budget - essential)


def _left_out(all_owners: list[Owner], sizes: Mapping[str, int], room: float) -> set[str]:
    """Newest first until one does not fit: it and every older one are left out."""
    out: set[str] = set()
    for o in all_owners:
        if out or sizes[o.url] > room:
            out.add(o.url)
        else:
            room -= sizes[o.url]
    return out


def fit(
    all_owners: list[Owner],
    sizes: Mapping[str, int],
    left_out: set[str],
    fixed: set[str],
    budget: int,
    shared_of: Mapping[str, set[str]],
) -> tuple[set[str], list[str]]:
    """Once every file is made: the owners whose bulk must go too for the site to fit, oldest
    first among those not ``fixed`` (kept whole), and their files (a shared transcript text
    only when no owner kept uses it); :class:`OutputError` when the rest alone is over."""
    total = sum(sizes.values())
    more: set[str] = set()
    files: list[str] = []
    droppable = [o for o in reversed(all_owners) if o.url not in left_out and o.url not in fixed]
    while total > budget and droppable:
        o = droppable.pop(0)
        more.add(o.url)
        mine = bulk_files(o, sizes)
        still = set().union(
            *(
                shared_of.get(f"{x.url}{BULK_FOLDER}", set())
                for x in all_owners
                if x.url not in left_out | more
            )
        )
        mine += [
            f"{SHARED_FOLDER}{name}.js"
            for name in shared_of.get(f"{o.url}{BULK_FOLDER}", set()) - still
            if f"{SHARED_FOLDER}{name}.js" in sizes
        ]
        total -= sum(sizes[rel] for rel in mine)
        files += mine
    if total > budget:
        raise OutputError(
            f"the site would be {mb(total)}, over its budget of {mb(budget)} even without the "
            "bulk data (trial and task tables, transcripts) of the jobs made now: raise "
            "site_budget in sitegen.toml (or --site-budget)"
        )
    return more, files


RECORD = "data/site-budget.json"  # what the budget did: the next build weighs left-out jobs by it
_KEY_PART = "#budget="


class SiteBudget:
    """The site budget's choices for one build: planned from what the last build wrote (and
    :data:`RECORD`), checked against what this one made; part of each run's key."""

    def __init__(
        self,
        opts: BuildOptions,
        jobs: list[Job],
        runs: list[Run],
        previous: Mapping[str, FileRecord],
        out: Path,
    ) -> None:
        self.budget = opts.site_budget
        self.owners = owners(jobs, runs)
        self.weighed = _record(out, previous)  # by owner: its bulk bytes when last made
        self.left_out = plan(
            self.owners, previous, self.budget, opts.transcripts_wanted(), self.weighed
        )

    @property
    def pages(self) -> set[str]:
        """The pages that leave their bulk data out (an owner's, and a run showing its)."""
        return {p for o in self.owners if o.url in self.left_out for p in o.pages}

    def key(self, key: str | None, run: Run) -> str | None:
        """A run's key with which of its pages leave their bulk data out."""
        return self._keyed(key, {f"runs/{run.id}/", *(f"jobs/{j.id}/" for j in run.jobs)})

    def _keyed(self, key: str | None, pages: set[str]) -> str | None:
        if key is None:
            return None
        return key.split(_KEY_PART)[0] + _KEY_PART + ",".join(sorted(pages & self.pages))

    def mark(self, pages: PageLists) -> None:
        """Each page made now (not one kept) that leaves its bulk data out says what, why and
        how to see it."""
        from sitegen.pages.objects import JobPage, RunPage

        why = (
            f"the trial table, full task table and sampled transcripts of these trials are not "
            f"in this site: it keeps to its budget of {mb(self.budget)} (site_budget), holding "
            "the pages, charts and data of every job first, then bulk data newest job first. "
            "Build the archive locally (sitegen build ARCHIVE) or raise site_budget to see them."
        )
        out = self.pages

        def marked(p: Any) -> Any:
            made = isinstance(p, JobPage | RunPage)
            return replace(p, left_out=why) if made and p.url in out else p

        pages.jobs = [(marked(p), t) for p, t in pages.jobs]
        pages.runs = [(marked(p), t) for p, t in pages.runs]

    def fit(
        self,
        writer: SiteWriter,
        kept: Mapping[str, tuple[str | None, Any]],
        shared_of: Mapping[str, set[str]],
    ) -> bool:
        """Weigh what this build made, write :data:`RECORD`, and leave out the bulk of the
        oldest pages made now while the site is over budget; True when pages must be made
        again to say so. ``kept``: each run's key and record if kept whole; ``shared_of``: by
        transcripts folder, the shared texts it uses."""
        fixed = {
            e.row.url for _, rec in kept.values() if rec is not None for e in (rec.run, *rec.jobs)
        }
        for o in self.owners:  # (a run kept whole too: its transcripts may be made again)
            made = bulk_files(o, writer.sizes)
            if made:
                self.weighed[o.url] = sum(writer.sizes[rel] for rel in made)
        record = self._record_bytes(self.owners)  # (its largest: every owner listed as left out)
        sizes = {**writer.sizes, MARKER: writer.manifest_size(), RECORD: len(record)}
        more, files = fit(
            self.owners,
            sizes,
            self.left_out,
            {o.url for o in self.owners if o.url in fixed},
            self.budget,
            shared_of,
        )
        for rel in files:
            writer.drop(rel)
        self.left_out |= more
        writer.write(RECORD, self._record_bytes([o for o in self.owners if o.url in self.left_out]))
        return bool(more)

    def rekey(self, made: list[tuple[str | None, Any, Any]]) -> list[tuple[str | None, Any, Any]]:
        """The keys of the runs made now, with the choices as they ended (:meth:`fit`)."""
        return [
            (self._keyed(key, {rp.url, *(j.url for j in jobs)}), rp, jobs) for key, rp, jobs in made
        ]

    def _record_bytes(self, left_out: list[Owner]) -> bytes:
        body = {
            "budget": self.budget,
            "left_out": [o.url for o in left_out],
            "bulk": {url: self.weighed[url] for url in sorted(self.weighed)},
        }
        return orjson.dumps(body, option=orjson.OPT_INDENT_2) + b"\n"

    def summary(self) -> str | None:
        """The build summary's line about the jobs whose bulk data was left out."""
        names = [o.label for o in self.owners if o.url in self.left_out]  # (newest first)
        if not names:
            return None
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        return (
            f"site budget {mb(self.budget)}: the trial and task tables and transcripts of "
            f"{len(names)} {'job' if len(names) == 1 else 'jobs'} left out, newest first: {shown} "
            "(each page says so; build locally or raise site_budget to see them)"
        )


def _record(out: Path, previous: Mapping[str, FileRecord]) -> dict[str, int]:
    """The bulk bytes of each job as the last build's :data:`RECORD` says (checked: it lies
    in the output folder)."""
    if RECORD not in previous:
        return {}
    try:
        raw = orjson.loads((out / RECORD).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    bulk = raw.get("bulk") if isinstance(raw, dict) else None
    if not isinstance(bulk, dict):
        return {}
    return {k: v for k, v in bulk.items() if isinstance(k, str) and type(v) is int and v >= 0}
