"""Typed page objects: every page of the site, as frozen Structs built by
:mod:`sitegen.pages.make`, rendered to HTML and to ``data/...json``
(:meth:`PageData.to_json`, the contract of ``docs/schemas/``: field order is the published
key order, so it must not be shuffled).
Each field's comment, or its section's docstring, names the function that computes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from sitegen.errors import BuildWarning
from sitegen.insights.findings import Finding
from sitegen.insights.sections import TasksSection
from sitegen.insights.verdicts import LearningSection
from sitegen.pages.data import PageData
from sitegen.pages.sections import (
    BatchSummary,
    DiscardedStep,
    Headline,
    ProgressionRow,
    Restart,
    SavedCheckpoint,
    Series,
    Stats,
    Timing,
    TrialSummary,
    VllmSummary,
    families,
    progression_rows,
)

if TYPE_CHECKING:  # read back by data._hints; imported where trials are analysed
    from sitegen.insights.rollouts import RolloutAnalysis
    from sitegen.insights.sampling import TranscriptsSection


# -- job ----------------------------------------------------------------------------------------


class JobRow(msgspec.Struct, PageData, frozen=True, kw_only=True):
    """A job's row in ``index.json`` and its run's table; the first fields of its page
    (``pages.job_page``; headline: ``analyse.headline``)."""

    id: str
    url: str
    data: str
    run: str
    log: str | None
    status: str
    status_detail: str | None
    first_step: int | None
    last_step: int | None
    metric_blocks: int
    reward_mean: float | None
    reward_max: float | None
    reward_last: float | None
    total_time_s: float | None
    headline: Headline
    started_at: str | None
    last_activity: str | None
    trial_success_rate: float | None
    trial_error_rate: float | None
    reward_spark: list[int | float | None]  # pages.spark: bucket means for the index sparkline
    findings: tuple[Finding, ...]  # insights.findings.evaluate, most severe first


class JobPage(JobRow, frozen=True, kw_only=True):
    """Everything a job page shows (``data/jobs/<id>.json``): ``pages.job_page``."""

    schema: str = "sitegen/job@1"
    layout: str  # "experiment" or "flat": discover (JobSource.layout)
    group: str  # the experiment or folder the log sits in: discover
    # "console", "mirror", "text" (values read from text lines only: not the full metric
    # set) or "": read.logparse (ParsedLog.metric_form)
    metric_form: str
    resumed_from: int | None  # checkpoint step the log says it resumed from: read.logparse
    fresh_start: bool  # the log says it started from scratch: read.logparse
    checkpoints: list[int]  # every global_step_N the log says it saved: read.logparse
    # the one of them saved after the loop: N is the last step + 1 (then not a step of its
    # own) or the last step, by trainer version (read.logparse, model.parsed.Checkpoint)
    final_checkpoint: int | None
    mid_run: str | None  # why the log looks like it starts mid-run, or None: read.logparse
    planned_steps: int | None  # the trainer's planned total, from its progress bar
    log_bytes: int
    log_lines: int
    run_name: Any  # trainer.run_name from the config dump, as logged (vocabulary.config_value)
    model: Any  # trainer.policy.model.path
    ckpt_path: Any  # trainer.ckpt_path
    n_samples_per_prompt: Any  # generator.n_samples_per_prompt
    config: dict[str, Any] | None  # the config dump, redacted at parse time (read.logparse)
    metrics: dict[str, Stats]  # analyse.metric_summary
    series: Series  # analyse.series
    eval_series: Series  # analyse.series over eval blocks
    timing: Timing  # analyse.timing_tree
    vllm: VllmSummary | None  # analyse.vllm_summary
    batches: BatchSummary | None  # analyse.batch_summary
    batch_series: Series  # analyse.batch_series
    trials: TrialSummary | None  # analyse.trial_stats (only when the job owns its trials)
    notes_md: str | None  # notes.md beside the log, redacted
    warnings: tuple[BuildWarning, ...]  # build warnings about this job's files
    tasks: TasksSection | None  # insights.sections.tasks_section (the job's own trials)
    rollouts: RolloutAnalysis | None  # insights.rollouts.analyse_rollouts
    learning: LearningSection | None  # insights.learning.learning_section
    # sampled trial transcripts: present.transcripts.TranscriptMaker.section (insights.sampling)
    transcripts: TranscriptsSection | None = None
    # why the page's bulk data (trial and task tables, transcripts) is not in the site:
    # write/budget.py (SiteBudget.mark), or None
    left_out: str | None = None

    def saved_checkpoints(self) -> list[SavedCheckpoint]:
        """The checkpoints the log says it saved, the final save marked."""
        return [
            SavedCheckpoint(job=self.id, step=s, final=s == self.final_checkpoint)
            for s in self.checkpoints
        ]

    def row(self) -> JobRow:
        """The summary fields (index row): the page's first fields, by :class:`JobRow`'s list."""
        return JobRow(**{f: getattr(self, f) for f in JobRow.__struct_fields__})

    def progression(self) -> list[ProgressionRow]:
        return progression_rows(self.series, self.metrics)

    def families(self) -> dict[str, dict[str, Stats]]:
        return families(self.metrics)


# -- run ----------------------------------------------------------------------------------------


class RunRow(msgspec.Struct, PageData, frozen=True, kw_only=True):
    """A run's row in ``index.json``: the summary fields of its page (:meth:`RunPage.row`)."""

    id: str
    url: str
    data: str
    jobs: list[str]
    status: str
    first_step: int | None
    last_step: int | None
    steps: int
    discarded_steps: int
    resumed_from: list[int]
    reward_mean: float | None
    reward_max: float | None
    reward_last: float | None
    total_time_s: float | None
    headline: Headline
    trial_success_rate: float | None
    trial_error_rate: float | None
    reward_spark: list[int | float | None]
    last_activity: str | None
    findings: tuple[Finding, ...]


class RunPage(msgspec.Struct, PageData, frozen=True, kw_only=True):
    """The stitched run (``data/runs/<id>.json``): ``pages.run_page``. The published key
    order puts ``schema`` first and interleaves the summary fields, so this class lists them
    again; :meth:`row` picks them by :class:`RunRow`'s list (a field missing here fails the
    first build)."""

    schema: str = "sitegen/run@1"
    id: str
    url: str
    data: str
    jobs: list[str]  # the chain, in order: assemble (Run.jobs)
    job_rows: tuple[JobRow, ...]
    status: str  # the last job's status
    first_step: int | None  # headline (analyse.headline over the stitched steps)
    last_step: int | None
    steps: int  # distinct stitched steps: assemble.stitch
    discarded_steps: int
    discarded: tuple[DiscardedStep, ...]
    discarded_time_s: float  # timing/step summed over the discarded steps
    resumed_from: list[int]  # assemble (Run.resumed_from)
    restarts: tuple[Restart, ...]
    checkpoints: tuple[SavedCheckpoint, ...]  # every job's saves, in chain order
    reward_mean: float | None
    reward_max: float | None
    reward_last: float | None
    total_time_s: float | None
    headline: Headline
    metrics: dict[str, Stats]  # analyse.metric_summary over the stitched steps
    series: Series  # analyse.series
    timing: Timing  # analyse.timing_tree
    trials: TrialSummary | None  # analyse.trial_stats over the run's trials
    trial_success_rate: float | None
    trial_error_rate: float | None
    reward_spark: list[int | float | None]
    last_activity: str | None  # the latest of its jobs'
    findings: tuple[Finding, ...]  # insights.findings.evaluate over the stitched run
    tasks: TasksSection | None  # insights.sections.tasks_section (the run's trials)
    rollouts: RolloutAnalysis | None  # insights.rollouts.analyse_rollouts
    learning: LearningSection | None  # insights.learning.learning_section
    transcripts: TranscriptsSection | None = None  # as JobPage's (its job's, for a run of one)
    left_out: str | None = None  # as JobPage's

    def row(self) -> RunRow:
        return RunRow(**{f: getattr(self, f) for f in RunRow.__struct_fields__})

    def families(self) -> dict[str, dict[str, Stats]]:
        return families(self.metrics)

    def restart_of(self, job_id: str) -> Restart | None:
        """The restart a job made (None for the first job or a job that did not resume)."""
        return next((r for r in self.restarts if r.job == job_id), None)

    def checkpoints_of(self, job_id: str) -> list[SavedCheckpoint]:
        """The checkpoints a job of the run saved, in step order."""
        return [c for c in self.checkpoints if c.job == job_id]


# -- index and compare ------------------------------------------------------------------------


class Skipped(msgspec.Struct, PageData, frozen=True, kw_only=True):
    """A folder discovery passed over, and why: ``discover``."""

    path: str
    reason: str


class Totals(msgspec.Struct, PageData, frozen=True, kw_only=True):
    """The index's counts: ``pages.index_page``."""

    runs: int
    jobs: int
    steps: int
    trials: int
    warnings: int


class IndexPage(msgspec.Struct, PageData, frozen=True, kw_only=True):
    """``data/index.json`` and the index and runs pages: ``pages.index_page``."""

    schema: str = "sitegen/index@1"
    title: str
    jobs: tuple[JobRow, ...]
    runs: tuple[RunRow, ...]
    skipped: tuple[Skipped, ...]
    totals: Totals

    def jobs_by_run(self) -> dict[str, list[JobRow]]:
        """Each run's job rows, in chain order (its ``jobs``: ``jobs`` here is in archive
        order, which is not the chain's where logs are chained by SLURM id or start time)."""
        rows = {j.id: j for j in self.jobs}
        return {r.id: [rows[i] for i in r.jobs if i in rows] for r in self.runs}


class CompareItem(msgspec.Struct, PageData, frozen=True, kw_only=True):
    """A run or job on the comparison page (``pages.make.compare_item``; its curves:
    ``pages.make.series_curves``)."""

    kind: str  # "run" or "job"
    id: str
    url: str
    status: str
    headline: Headline
    trial_success_rate: float | None
    trial_error_rate: float | None
    last_activity: str | None  # the comparison page starts with the most recent runs
    findings: tuple[Finding, ...]
    config: dict[str, str]  # insights.configdiff.varying: only keys that differ somewhere
    tasks: str | None  # the folder whose solved.js lists its tasks (task-level comparison)


class ComparePage(msgspec.Struct, PageData, frozen=True, kw_only=True):
    """The comparison page's data (``compare/items.js``)."""

    items: tuple[CompareItem, ...]
