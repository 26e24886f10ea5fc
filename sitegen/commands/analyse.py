"""The analyse step of a build: every page object, and the files of the pages made now.

Each run made again is analysed with its jobs in forked children (:mod:`sitegen.pages.forkmap`),
and its pages' files are made right after in the same process (the renderer's ``premake``),
so analysis and rendering share one split between the cores. A run kept from the last build
gives its rows from its record. It ties the analyse, page and present stages together, so it
sits with the build; what the last build left comes in as plain values.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast

import msgspec
from msgspec.structs import replace

from sitegen.assemble.runs import warnings_by_job
from sitegen.model.parsed import Discovery, Job, JobSource, Run, TrialSet
from sitegen.redact import Redactor

if TYPE_CHECKING:
    from collections.abc import Callable

    from sitegen.errors import BuildWarning
    from sitegen.insights.sampling import TranscriptsSection
    from sitegen.insights.sections import Insights
    from sitegen.insights.tasks import TaskAnalysis
    from sitegen.options import BuildOptions
    from sitegen.pages.kept import JobEntry, RunEntry, RunRecord
    from sitegen.pages.objects import (
        CompareItem,
        ComparePage,
        IndexPage,
        JobPage,
        JobRow,
        RunPage,
        RunRow,
    )
    from sitegen.present.pagefiles import Prepared

    # The renderer's ``premake``: (run page, its job pages with their trial sets, the run's
    # trial set, task tables by url, what was made apart) -> by page url, (arguments, files).
    MakeFiles = Callable[
        [
            RunPage,
            list[tuple[JobPage, TrialSet | None]],
            TrialSet | None,
            Mapping[str, TaskAnalysis],
            Prepared,
        ],
        dict[str, Any],
    ]
    # A run analysed: job pages with task tables, run page and task table, files, transcripts.
    Analysed = tuple[
        list[tuple[JobPage, TaskAnalysis | None]],
        RunPage,
        TaskAnalysis | None,
        dict[str, Any],
        list[Any],
    ]


class Notes(msgspec.Struct, frozen=True):
    """The jobs' ``notes.md`` as read (by path), and as sanitized HTML by their redacted
    Markdown (converted before any fork)."""

    texts: Mapping[str, str]
    html: Mapping[str, str] = msgspec.field(default_factory=dict)

    def of(self, job: JobSource) -> str | None:
        return self.texts.get(job.notes) if job.notes else None


class Sampler(Protocol):
    """What picks a page's trials and makes their transcripts' data (``TranscriptMaker``)."""

    wanted: int

    def section(
        self, trials: TrialSet | None, ins: Insights, page_url: str
    ) -> TranscriptsSection | None: ...

    def make(self, section: TranscriptsSection, group: str) -> Any: ...


# What reading, redacting and encoding one sampled transcript costs, in the units of the
# split below (docs/benchmarks.md, "Transcripts").
TRANSCRIPT_COST = 180


@dataclass
class SitePages:
    """The page objects of one build, and the runs analysed now (what the next build keeps)."""

    index: IndexPage
    runs: list[tuple[RunPage | RunEntry, TrialSet | None]]  # in run order
    jobs: list[tuple[JobPage | JobEntry, TrialSet | None]]  # in archive order
    compare: ComparePage
    task_tables: dict[str, TaskAnalysis]  # by page url: the full per-task tables (insights)
    made: list[tuple[str | None, RunPage, list[JobPage]]]  # runs analysed now, with their keys
    premade: dict[str, Any] = field(default_factory=dict)  # by page url: make_files' results
    transcripts: list[Any] = field(default_factory=list)  # the runs analysed now: their data


def site_pages(
    opts: BuildOptions,
    disc: Discovery,
    jobs: list[Job],
    runs: list[Run],
    warnings: list[BuildWarning],
    trials: int,
    kept: dict[str, tuple[str | None, RunRecord | None]],
    notes: Notes | None = None,
    make_files: MakeFiles | None = None,
    transcripts: Sampler | None = None,
) -> SitePages:
    """The page objects of every job and run, the index and the comparison page, and the full
    per-task tables by page url.

    ``kept``: each run's key, and its record when carried over (not analysed: its rows come
    from the record). With ``make_files``, each analysed run's page files are made right
    after its analysis (``SitePages.premade``); with ``transcripts``, each page with trials
    of its own samples some (``SitePages.transcripts``)."""
    from sitegen.pages.forkmap import fork_map
    from sitegen.pages.make import compare_page_of, index_page
    from sitegen.present.pagefiles import Prepared, TableSlot

    todo = [run for run in runs if kept[run.id][1] is None]
    # With make_files, each trial table is a unit of its own (a placeholder until made), so a
    # one-job rebuild makes it on the second core meanwhile.
    tabled = [r.trials for r in todo if r.trials is not None] if make_files else []
    tabled = list({id(ts): ts for ts in tabled}.values())  # (each set once)
    notes = notes or Notes({})
    analyser = _Analyser(
        Redactor(opts.redact_patterns),
        warnings_by_job(jobs, warnings),
        {job.id: notes.of(job.source) for run in todo for job in run.jobs},
        Prepared({id(ts): TableSlot(i) for i, ts in enumerate(tabled)}, notes.html),
        make_files,
        transcripts,
    )
    picks = transcripts.wanted if transcripts is not None else 0
    units: list[Run | TrialSet] = [*todo, *tabled]
    done = fork_map(
        analyser, units, opts.workers or os.cpu_count() or 1, _costs(todo, tabled, picks)
    )
    g = _gather(
        runs,
        kept,
        cast("list[Analysed]", done[: len(todo)]),
        cast("list[bytes]", done[len(todo) :]),
    )
    index = index_page(
        [g.job_rows[j.id] for j in jobs], g.run_rows, disc, len(warnings), trials, opts.title
    )
    return SitePages(
        index,
        g.run_pages,
        [g.job_pages[j.id] for j in jobs],
        compare_page_of([*g.run_items, *(g.job_items[j.id] for j in jobs)]),
        g.task_tables,
        g.made,
        g.premade,
        g.transcripts,
    )


def _costs(todo: list[Run], tabled: list[TrialSet], picks: int) -> list[float]:
    """Each unit's rough cost, for the split between the cores: 8 a step of each of a run's
    pages, 200 for a run with trials plus 0.85 a trial and the transcripts it samples, 0.35
    a trial's table row."""
    runs = [
        (
            200 + 0.85 * len(r.trials.results) + TRANSCRIPT_COST * min(picks, len(r.trials.results))
            if r.trials
            else 0
        )
        + 8 * len(r.blocks) * (1 + len(r.jobs))
        for r in todo
    ]
    return runs + [0.35 * len(ts.results) for ts in tabled]


class _Analyser(msgspec.Struct, frozen=True):
    """What analysing a run takes that is the same for every run; called on a run (its pages)
    or a trial set (its table). Pure: may run in a forked child."""

    redactor: Redactor
    own: Mapping[str, list[BuildWarning]]  # warnings by job id
    texts: Mapping[str, str | None]  # notes by job id
    prepared: Prepared  # the trial tables made as units of their own, the notes as HTML
    make_files: MakeFiles | None
    transcripts: Sampler | None

    def __call__(self, unit: Run | TrialSet) -> Analysed | bytes:
        from sitegen.present.pagefiles import trials_table

        return trials_table(unit) if isinstance(unit, TrialSet) else self.run(unit)

    def run(self, run: Run) -> Analysed:
        """A run's and its jobs' pages and task tables, with ``make_files`` their files, and
        the data of the transcripts they sampled."""
        from sitegen.insights.sections import job_insights, run_insights
        from sitegen.pages.make import job_page, run_page

        chain = []
        made: list[Any] = []
        # by trial set: a run of its job's trials shows that job's
        sections: dict[int, TranscriptsSection | None] = {}
        for job in run.jobs:
            ins = job_insights(job)
            page = job_page(job, self.own[job.id], self.redactor, self.texts[job.id], ins)
            if job.trials is not None:
                sections[id(job.trials)] = sec = self._sample(
                    job.trials, ins, page.url, job.source.group, made
                )
                if sec is not None:
                    page = replace(page, transcripts=sec)
            chain.append((page, ins.tasks))
        ins = run_insights(run)
        rp = run_page(run, {p.id: p.row() for p, _ in chain}, ins, chain[0][0] if chain else None)
        if run.trials is not None:
            if id(run.trials) in sections:
                sec = sections[id(run.trials)]
            else:
                sec = self._sample(run.trials, ins, rp.url, run.jobs[0].source.group, made)
            if sec is not None:
                rp = replace(rp, transcripts=sec)
        if self.make_files is None:
            return chain, rp, ins.tasks, {}, made
        tables = {p.url: t for p, t in chain if t}
        if ins.tasks:
            tables[rp.url] = ins.tasks
        own_trials = [(p, job.trials) for (p, _), job in zip(chain, run.jobs, strict=True)]
        files = self.make_files(rp, own_trials, run.trials, tables, self.prepared)
        return chain, rp, ins.tasks, files, made

    def _sample(
        self, trials: TrialSet, ins: Insights, url: str, group: str, made: list[Any]
    ) -> TranscriptsSection | None:
        """The transcripts section of the page at ``url``, its data added to ``made``."""
        if self.transcripts is None:
            return None
        sec = self.transcripts.section(trials, ins, url)
        if sec is not None:
            got = self.transcripts.make(sec, group)
            if got is not None:
                made.append(got)
        return sec


@dataclass
class _Gathered:
    """The pages, rows and comparison items of every run, analysed now or carried over."""

    job_pages: dict[str, tuple[JobPage | JobEntry, TrialSet | None]] = field(default_factory=dict)
    job_rows: dict[str, JobRow] = field(default_factory=dict)
    job_items: dict[str, tuple[CompareItem, dict | None]] = field(default_factory=dict)
    run_pages: list[tuple[RunPage | RunEntry, TrialSet | None]] = field(default_factory=list)
    run_rows: list[RunRow] = field(default_factory=list)
    run_items: list[tuple[CompareItem, dict | None]] = field(default_factory=list)
    task_tables: dict[str, TaskAnalysis] = field(default_factory=dict)
    made: list[tuple[str | None, RunPage, list[JobPage]]] = field(default_factory=list)
    premade: dict[str, Any] = field(default_factory=dict)
    transcripts: list[Any] = field(default_factory=list)


def _gather(
    runs: list[Run],
    kept: dict[str, tuple[str | None, RunRecord | None]],
    analysed: list[Analysed],
    tables: list[bytes],
) -> _Gathered:
    """Every run's pages and rows in run order: from its record when carried over, else from
    its analysis (``analysed``, in the same order), its files given their ``tables``."""
    from sitegen.pages.make import compare_item
    from sitegen.present.pagefiles import resolve

    g = _Gathered()
    fresh = iter(analysed)
    for run in runs:
        key, record = kept[run.id]
        if record is not None:
            for e in record.jobs:
                g.job_pages[e.id], g.job_rows[e.id] = (e, None), e.row
                g.job_items[e.id] = (e.compare, e.config)
            g.run_pages.append((record.run, None))
            g.run_rows.append(record.run.row)
            g.run_items.append((record.run.compare, record.run.config))
            continue
        chain, rp, run_tasks, files, made_t = next(fresh)
        g.transcripts += made_t
        g.premade.update(
            {url: (args, resolve(made, tables)) for url, (args, made) in files.items()}
        )
        for job, (page, tasks) in zip(run.jobs, chain, strict=True):
            g.job_pages[job.id], g.job_rows[job.id] = (page, job.trials), page.row()
            g.job_items[job.id] = (compare_item("job", page), page.config)
            if tasks:
                g.task_tables[page.url] = tasks
        g.run_pages.append((rp, run.trials))
        g.run_rows.append(rp.row())
        g.run_items.append((compare_item("run", rp), chain[-1][0].config if chain else None))
        if run_tasks:
            g.task_tables[rp.url] = run_tasks
        g.made.append((key, rp, [p for p, _ in chain]))
    return g
