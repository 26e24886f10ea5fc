"""The insights as page sections: what a job or run page publishes (``docs/schemas/``).

:func:`job_insights` and :func:`run_insights` run every analysis once; the page keeps the
compact sections (findings, at most :data:`INLINE_TASK_ROWS` task rows, the rollout
anatomy) and the renderer writes the full task table beside it (``tasks.json.gz``, and
``tasks.js`` when the page lacks rows), so a 40 k-trial job's page stays within budget."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

import msgspec
from msgspec.structs import replace

from sitegen.analyse.batches import logged_batches
from sitegen.insights.attribution import Attribution, attribute
from sitegen.insights.findings import SEVERITIES, Finding, batch_step_trials, evaluate, step_trials
from sitegen.insights.rollouts import RolloutAnalysis, analyse_rollouts
from sitegen.insights.tasks import TaskAnalysis, TaskRow, TaskRowBrief, Wasted, analyse_tasks
from sitegen.insights.verdicts import LearningSection
from sitegen.model.parsed import BatchCounts, Job, MetricBlock, ParsedLog, Run, TrialSet

HEATMAP_TASKS = 30  # rows of the task × step heatmap: learned and forgotten first, then most run
HEATMAP_BINS = 50  # columns: longer runs are binned by steps
INLINE_TASK_ROWS = 200  # rows a page holds; more load from tasks.js / tasks.json.gz on demand
LIST_NAMES = 25  # task names a list shows on the page (its count says how many there are)
TASKS_TABLE_FILE = "tasks.json.gz"
TASKS_SCRIPT_FILE = "tasks.js"


def brief(row: TaskRow) -> TaskRowBrief:
    return TaskRowBrief(**{f: getattr(row, f) for f in TaskRowBrief.__struct_fields__})


class TaskListSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One category of the task lists (learned, forgotten, always, never) as a page shows it."""

    category: str  # learned | forgotten | always | never
    count: int
    trials: int
    share_of_rollouts: float | None
    tasks: tuple[str, ...]  # the first LIST_NAMES, in table order
    slugs: tuple[str, ...]  # their row anchors (``#task-<slug>``)


class HeatCell(msgspec.Struct, frozen=True, kw_only=True):
    """One task in one step bin (``step`` is the bin's first step)."""

    task: str
    order: int  # row order: the table's (first solved step)
    step: int
    rate: float | None
    trials: int


class TasksSection(msgspec.Struct, frozen=True, kw_only=True):
    """The ``tasks`` section of a job or run page (``sitegen.insights.tasks``)."""

    attribution: str  # "time" | "none"
    attribution_note: str
    trials: int
    attributed: int
    before_log: int
    after_last_step: int
    undated: int
    steps: int  # steps with attributed trials
    early_window: tuple[int, int] | None
    late_window: tuple[int, int] | None
    tasks_total: int
    lists: tuple[TaskListSummary, ...]
    wasted: Wasted
    rows: tuple[TaskRowBrief, ...]  # the first INLINE_TASK_ROWS, by first solved step
    table_file: str  # every row with its per-step cells (gzip JSON), relative to the page
    table_dir: str  # the site folder holding the table files: the page's, or its job's when
    # a run of one job shares that job's trials (the same table, written once)
    heatmap: tuple[HeatCell, ...]
    heatmap_tasks: int  # tasks drawn (of tasks_total)
    heatmap_bin_steps: int  # steps per column


class Insights(msgspec.Struct, frozen=True):
    """Everything the insights say about one job or run (the full task table included)."""

    tasks: TaskAnalysis | None
    rollouts: RolloutAnalysis | None
    findings: tuple[Finding, ...]
    attribution: Attribution | None = None
    learning: LearningSection | None = None  # insights.learning.learning_section

    def tasks_section(self, page_url: str, table_dir: str | None = None) -> TasksSection | None:
        """The page's section; ``table_dir``: another page's folder holding the same table."""
        if not self.tasks:
            return None
        return tasks_section(self.tasks, self.attribution, page_url, table_dir or page_url)


def tasks_section(
    ta: TaskAnalysis, attr: Attribution | None, page_url: str = "", table_dir: str = ""
) -> TasksSection:
    order = {r.name: i for i, r in enumerate(ta.tasks)}
    slug = {r.name: r.slug for r in ta.tasks}
    shown = {tl.category: sorted(tl.tasks, key=order.__getitem__)[:LIST_NAMES] for tl in ta.lists}
    return TasksSection(
        attribution=ta.attribution,
        attribution_note=ta.attribution_note,
        trials=ta.trials,
        attributed=ta.attributed,
        before_log=attr.before if attr else 0,
        after_last_step=attr.after if attr else 0,
        undated=attr.undated if attr else 0,
        steps=len(ta.steps),
        early_window=ta.early_window,
        late_window=ta.late_window,
        tasks_total=len(ta.tasks),
        lists=tuple(
            TaskListSummary(
                category=tl.category,
                count=len(tl.tasks),
                trials=tl.trials,
                share_of_rollouts=tl.share_of_rollouts,
                tasks=tuple(shown[tl.category]),
                slugs=tuple(slug[n] for n in shown[tl.category]),
            )
            for tl in ta.lists
        ),
        wasted=ta.wasted,
        rows=tuple(brief(r) for r in ta.tasks[:INLINE_TASK_ROWS]),
        table_file=_relative(page_url, table_dir) + TASKS_TABLE_FILE,
        table_dir=table_dir,
        **heatmap(ta),
    )


def _relative(page_url: str, folder: str) -> str:
    """``folder`` (a site path ending in ``/``) as seen from the page at ``page_url``."""
    if folder == page_url:
        return ""
    return "../" * page_url.count("/") + folder


def heatmap(ta: TaskAnalysis) -> dict:
    """The heatmap's cells: at most HEATMAP_TASKS tasks × HEATMAP_BINS step bins.

    Learned and forgotten tasks are the point of the chart, so they come first;
    the rest are the most-run tasks. Rows keep the table's order (first solved)."""
    if not ta.steps:
        return {"heatmap": (), "heatmap_tasks": 0, "heatmap_bin_steps": 1}
    lo, hi = ta.steps[0], ta.steps[-1]
    width = max(1, math.ceil((hi - lo + 1) / HEATMAP_BINS))
    rank = {r.name: i for i, r in enumerate(ta.tasks)}
    movers = [r for r in ta.tasks if r.category in ("learned", "forgotten")]
    rest = sorted(
        (r for r in ta.tasks if r.category not in ("learned", "forgotten") and r.steps),
        key=lambda r: (-r.trials, rank[r.name]),
    )
    chosen = sorted((movers + rest)[:HEATMAP_TASKS], key=lambda r: rank[r.name])
    cells = []
    for order, row in enumerate(chosen):
        bins: dict[int, list[int]] = {}
        for c in row.steps:
            b = bins.setdefault(lo + (c.step - lo) // width * width, [0, 0, 0])
            b[0] += c.trials
            b[1] += c.graded
            b[2] += c.successes
        for start, (n, g, ok) in sorted(bins.items()):
            cells.append(
                HeatCell(
                    task=row.name, order=order, step=start, rate=ok / g if g else None, trials=n
                )
            )
    return {"heatmap": tuple(cells), "heatmap_tasks": len(chosen), "heatmap_bin_steps": width}


def _insights(
    blocks: Sequence[MetricBlock],
    trials: TrialSet | None,
    log_start: datetime | None,
    *,
    config: dict | None,
    metric_form: str,
    first_log: ParsedLog | None,
    status: str,
    status_detail: str | None,
    of_run: bool,
    batches_per_step: dict[int, BatchCounts],
) -> Insights:
    ta = ra = attr = None
    if trials is not None and trials.results:
        attr = attribute(trials.results, blocks, log_start)
        ta = analyse_tasks(trials.results, attr)
        ra = analyse_rollouts(trials.results, attr)
        # the table's slugs (two names that slug alike were told apart there)
        slugs = {r.name: r.slug for r in ta.tasks}
        slowest = tuple(replace(s, slug=slugs.get(s.name, s.slug)) for s in ra.slowest_tasks)
        ra = replace(ra, slowest_tasks=slowest)
        per_step, source = step_trials(trials.results, attr), "trials"
    else:  # (the step still being generated when the log ends is cut short: left out)
        per_step = batch_step_trials(logged_batches(batches_per_step, blocks))
        source = "batches"
    found = evaluate(
        blocks,
        config=config,
        metric_form=metric_form,
        first_log=first_log,
        status=status,
        per_step=per_step,
        per_step_source=source,
        status_detail=status_detail,
        of_run=of_run,
    )
    # how sure the differences are (numpy: imported when pages are analysed, not before)
    from sitegen.insights.intervalrules import pass_at_k_mismatch, task_forgotten
    from sitegen.insights.learning import learning_section

    learning = learning_section(blocks, trials.results if trials else None, attr, ta, config)
    sure = [f for f in (task_forgotten(ta), pass_at_k_mismatch(learning.pass_at_k)) if f]
    if sure:
        found = tuple(sorted((*found, *sure), key=lambda f: SEVERITIES.index(f.severity)))
    return Insights(ta, ra, found, attr, learning)


def job_insights(job: Job) -> Insights:
    """The insights of one job: its own blocks, trials (when it owns them) and log."""
    log = job.log
    return _insights(
        log.blocks if log else (),
        job.trials,
        log.first_time if log else None,
        config=log.config if log else None,
        metric_form=log.metric_form if log else "",
        first_log=log,
        status=job.status,
        status_detail=log.end_detail if log else None,
        of_run=False,
        batches_per_step=log.batches_per_step if log else {},
    )


def run_insights(run: Run) -> Insights:
    """The insights of a run: stitched blocks, the run's trials, first and last job's logs."""
    logs = [j.log for j in run.jobs if j.log is not None]
    last = logs[-1] if logs else None
    # Stitched as the steps are: a resume drops the batches of the steps it cut off (steps
    # no later job may log again), and a later job's batches for a step replace an earlier's;
    # each job's of the steps it logged (not the one it was generating when it ended).
    cut = {r.job_id: r.cut_at for r in run.restarts}
    batches: dict[int, BatchCounts] = {}
    for j in run.jobs:
        if j.log is None:
            continue
        if j.id in cut:
            batches = {s: b for s, b in batches.items() if s <= cut[j.id]}
        batches.update(logged_batches(j.log.batches_per_step, j.log.blocks))
    return _insights(
        run.blocks,
        run.trials,
        logs[0].first_time if logs else None,
        config=last.config if last else None,
        metric_form=last.metric_form if last else "",
        first_log=run.jobs[0].log if run.jobs else None,
        status=run.jobs[-1].status if run.jobs else "incomplete",
        status_detail=run.jobs[-1].log.end_detail if run.jobs and run.jobs[-1].log else None,
        of_run=True,
        batches_per_step=batches,
    )
