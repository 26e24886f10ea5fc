"""Typed page objects: every page of the site and its parts, as frozen dataclasses.

A page object is rendered twice: to HTML through Jinja (templates read its
attributes) and to ``data/...json`` through :meth:`PageData.to_json`, which *is*
the data contract described by ``docs/schemas/``. Field order is the key
order of the published JSON, so it must not be shuffled.

Each field's comment names the function that computes it: from a page object
a reader is one hop from any figure on the page. :func:`sitegen.pages` builds
the pages; the section parts are made from the analyses' dicts with
:meth:`PageData.from_json`, which refuses a missing or unknown key, so an
analysis and its page type cannot drift apart without the first build failing.

Sections are frozen, but long columns (per-step series, timelines) stay
lists: copying them into tuples would cost a large archive's build time for
no safety the type checker does not already give.
"""

from __future__ import annotations

import functools
import types
import typing
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, Self

import orjson

from sitegen.errors import BuildWarning
from sitegen.jsonio import dumps
from sitegen.model.vocabulary import (
    GEN_WAIT,
    POLICY_KL,
    POLICY_LOSS,
    REWARD,
    STEP_TIME,
    metric_family,
    pass_at_key,
    pass_at_label,
)

JOB_SCHEMA = "sitegen/job@1"
RUN_SCHEMA = "sitegen/run@1"
INDEX_SCHEMA = "sitegen/index@1"

Series = dict[
    str, list[Any]
]  # columnar per-step values: {"step": [...], metric: [...]}, None where absent


class PageData:
    """The JSON side of a page object or section (a mixin for frozen dataclasses)."""

    def to_json(self) -> dict[str, Any]:
        """The published JSON value: fields in order, non-finite numbers as ``null``.

        ``jsonio.dumps(obj)`` writes the same bytes as ``dumps(obj.to_json())``
        (orjson serialises dataclasses field by field), which is how the
        build writes data files without a copy.
        """
        return orjson.loads(dumps(self))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        """Build from a JSON-shaped dict (an analysis result or a published file)."""
        return _build(cls, data)


# -- the JSON <-> dataclass walk -------------------------------------------------------------


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


@functools.cache
def _typed(tp: Any) -> bool:
    """Does a type hint contain a dataclass (so its values need building)?"""
    if isinstance(tp, type) and is_dataclass(tp):
        return True
    return any(_typed(a) for a in typing.get_args(tp) if a is not Ellipsis)


def _build(cls: type, data: Any) -> Any:
    if isinstance(data, cls):
        return data
    if not isinstance(data, dict):
        raise TypeError(f"{cls.__name__}: expected an object, got {type(data).__name__}")
    hints = _hints(cls)
    names = [f.name for f in fields(cls)]
    missing = [n for n in names if n not in data]
    extra = [k for k in data if k not in hints]
    if missing or extra:
        raise TypeError(f"{cls.__name__}: missing keys {missing}, unknown keys {extra}")
    return cls(**{n: _value(hints[n], data[n]) for n in names})


def _value(tp: Any, v: Any) -> Any:
    if v is None or not _typed(tp):
        return v
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        (inner,) = [a for a in args if a is not type(None)]
        return _value(inner, v)
    if isinstance(tp, type) and is_dataclass(tp):
        return _build(tp, v)
    if origin is tuple:
        return tuple(_value(args[0], x) for x in v)
    if origin is list:
        return [_value(args[0], x) for x in v]
    if origin is dict:
        return {k: _value(args[1], x) for k, x in v.items()}
    raise TypeError(f"cannot build {tp!r}")


# -- sections ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Headline(PageData):
    """The figures that summarise a job or run (index rows, cards, previews): ``analyse.headline``."""

    steps: int
    first_step: int | None
    last_step: int | None
    reward_mean: float | None
    reward_max: float | None
    reward_last: float | None
    pass_at_k: int | None
    pass_at_k_mean: float | None
    total_time_s: float | None
    step_time_mean_s: float | None
    gen_wait_mean_s: float | None
    gen_wait_share: float | None
    avg_tokens_mean: float | None
    staleness_mean: float | None

    @property
    def pass_label(self) -> str:
        """``pass@8`` (``pass@k`` when the log has no pass@k metric)."""
        return pass_at_label(self.pass_at_k)


@dataclass(frozen=True, kw_only=True)
class Stats(PageData):
    """mean, sample std, min, max over finite values; ``count`` of them: ``analyse.summarize``."""

    mean: float | None
    std: float | None
    min: float | None
    max: float | None
    count: int


@dataclass(frozen=True, kw_only=True)
class TimerNode(PageData):
    """One timer of the tree: ``analyse.timing_tree`` (shares are fractions, not %)."""

    name: str
    total_s: float
    mean_s: float
    count: int
    share_of_parent: float | None
    share_of_step: float | None
    mean_step_share: float | None
    children: tuple[TimerNode, ...]


@dataclass(frozen=True)
class TimerRow:
    """A timer in the flattened table: the node and how deep it sits (not published)."""

    depth: int
    node: TimerNode


@dataclass(frozen=True, kw_only=True)
class OutsideTimer(PageData):
    """A timer logged outside the step (checkpoints, eval, unknown timers): ``analyse.timing_tree``."""

    name: str
    total_s: float
    mean_s: float | None
    count: int
    share_of_step: float | None


@dataclass(frozen=True, kw_only=True)
class Timing(PageData):
    """The timer tree over steps that logged ``timing/step``: ``analyse.timing_tree``."""

    steps: int
    step_total_s: float
    tree: TimerNode | None
    outside_step: tuple[OutsideTimer, ...]

    def rows(self) -> list[TimerRow]:
        """The tree depth-first, for tables."""
        out: list[TimerRow] = []

        def walk(node: TimerNode, depth: int) -> None:
            out.append(TimerRow(depth, node))
            for child in node.children:
                walk(child, depth + 1)

        if self.tree:
            walk(self.tree, 0)
        return out


@dataclass(frozen=True, kw_only=True)
class EngineSummary(PageData):
    """One vLLM engine's means over its stat lines: ``analyse.vllm_summary``."""

    engine: str
    samples: int
    running_mean: float
    running_max: float
    waiting_mean: float
    waiting_max: float
    gen_throughput_mean: float
    gen_throughput_max: float
    kv_cache_pct_mean: float
    prefix_hit_pct_mean: float | None
    preemptions_max: float | None


@dataclass(frozen=True, kw_only=True)
class VllmTimeline(PageData):
    """Per-minute means over all engines (columns): ``analyse.vllm_summary``."""

    t_s: list[float]
    samples: list[int]
    gen_throughput_mean: list[float | None]
    gen_throughput_min: list[float | None]
    gen_throughput_max: list[float | None]
    running_mean: list[float | None]
    waiting_mean: list[float | None]
    kv_cache_pct_mean: list[float | None]
    prefix_hit_pct_mean: list[float | None]

    def columns(self) -> dict[str, list[Any]]:
        """The columns by name (a fresh dict; the lists are shared)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, kw_only=True)
class VllmSummary(PageData):
    """Per-job and per-engine vLLM figures and the utilization verdict: ``analyse.vllm_summary``."""

    samples: int
    engines: int
    running_mean: float | None
    running_max: float | None
    waiting_mean: float | None
    waiting_max: float | None
    gen_throughput_mean: float | None
    gen_throughput_max: float | None
    prompt_throughput_mean: float | None
    kv_cache_pct_mean: float | None
    prefix_hit_pct_mean: float | None
    verdict: str
    verdict_reason: str
    verdict_thresholds: dict[str, float]
    aggregated_lines: int
    suppressed_copies: int
    step_lines: int
    step_stats: dict[str, dict[str, float]]
    per_engine: tuple[EngineSummary, ...]
    timeline: VllmTimeline


@dataclass(frozen=True, kw_only=True)
class BatchTotals(PageData):
    """Batch-generation counts for a step or a job (``BatchCounts.to_json``)."""

    batches: int
    instances: int
    successful: int
    failed: int
    masked: int
    exceptions: dict[str, int]


@dataclass(frozen=True, kw_only=True)
class BatchSummary(PageData):
    """Training batch totals, per step, eval apart, and ``batch_errors/*`` stats: ``analyse.batch_summary``."""

    batches: int
    instances: int
    successful: int
    failed: int
    masked: int
    exceptions: dict[str, int]
    per_step: dict[str, BatchTotals]
    eval: BatchTotals
    summary: dict[str, Stats]


@dataclass(frozen=True, kw_only=True)
class TurnStats(PageData):
    """Turns per trial: ``analyse.trial_stats``."""

    mean: float | None
    median: float | None
    std: float | None
    min: float | None
    max: float | None
    count: int


@dataclass(frozen=True, kw_only=True)
class TurnGroup(PageData):
    """Turns of the trials with one exception or outcome: ``analyse.trial_stats``."""

    mean: float | None
    median: float | None
    count: int


@dataclass(frozen=True, kw_only=True)
class TrialRewards(PageData):
    """Rewards of the trials that have one (success: reward > 0): ``analyse.trial_stats``."""

    mean: float | None
    success_rate: float | None
    count: int
    success: int
    failure: int


@dataclass(frozen=True, kw_only=True)
class TrialSummary(PageData):
    """A trials directory: turns, exceptions (by type and kind), rewards: ``analyse.trial_stats``."""

    path: str
    total: int
    malformed: int
    missing: int
    eval: int
    archives: int
    exceptions: dict[str, int]
    exception_kinds: dict[str, int]
    exception_kind_of: dict[str, str]
    turns: TurnStats
    turn_histogram: dict[str, int]
    reward: TrialRewards
    error_rate: float | None
    turns_by_exception: dict[str, TurnGroup]
    turns_by_outcome: dict[str, TurnGroup]


@dataclass(frozen=True, kw_only=True)
class Restart(PageData):
    """Where a job of a run resumed and what it discarded: ``assemble`` (``Run.restarts``)."""

    job: str
    resumed_from: int | None
    cut_at: int
    discarded_steps: list[int]
    discarded_time_s: float


@dataclass(frozen=True, kw_only=True)
class DiscardedStep(PageData):
    """A step logged by an earlier job and replaced after a resume: ``pages.run_page``."""

    step: int
    time_s: float | None
    reward: float | None


@dataclass(frozen=True)
class ProgressionRow:
    """A row of the per-step table (the reference report's columns; not published as JSON)."""

    step: int
    reward: float | None
    pass_at_k: float | None
    kl: float | None
    loss: float | None
    step_time: float | None
    gen_wait: float | None


def progression_rows(series: Series, metrics: dict[str, Stats]) -> list[ProgressionRow]:
    """Reward, pass@k, KL, loss, step time and generation wait per step, from ``series``."""
    pk = pass_at_key(metrics)
    cols = [
        series.get(key) if key else None
        for key in (REWARD, pk, POLICY_KL, POLICY_LOSS, STEP_TIME, GEN_WAIT)
    ]
    return [
        ProgressionRow(step, *(c[i] if c else None for c in cols))
        for i, step in enumerate(series["step"])
    ]


def families(metrics: dict[str, Stats]) -> dict[str, dict[str, Stats]]:
    """Metrics grouped by family (the prefix before ``/``), in name order within each."""
    out: dict[str, dict[str, Stats]] = {}
    for name, stats in metrics.items():
        out.setdefault(metric_family(name), {})[name] = stats
    return out


# -- job ----------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class JobRow(PageData):
    """A job's row in ``index.json`` and in its run's table; the first fields of its page.

    Built by ``pages.job_page`` (headline: ``analyse.headline``).
    """

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


@dataclass(frozen=True, kw_only=True)
class JobPage(JobRow):
    """Everything a job page shows (``data/jobs/<id>.json``): ``pages.job_page``."""

    schema: str = JOB_SCHEMA
    layout: str
    group: str
    metric_form: str
    resumed_from: int | None
    fresh_start: bool
    checkpoints: list[int]
    log_bytes: int
    log_lines: int
    run_name: Any  # config values as logged (a string in every log seen)
    model: Any
    ckpt_path: Any
    n_samples_per_prompt: Any
    config: dict[str, Any] | None  # redacted at parse time (read.logparse, Redactor)
    metrics: dict[str, Stats]  # analyse.metric_summary
    series: Series  # analyse.series
    eval_series: Series  # analyse.series over eval blocks
    timing: Timing
    vllm: VllmSummary | None
    batches: BatchSummary | None
    batch_series: Series  # analyse.batch_series
    trials: TrialSummary | None
    notes_md: str | None  # notes.md beside the log, redacted
    warnings: tuple[BuildWarning, ...]  # build warnings about this job's files

    def row(self) -> JobRow:
        """The summary fields (index row): the page's first fields, by :class:`JobRow`'s list."""
        return JobRow(**{f.name: getattr(self, f.name) for f in fields(JobRow)})

    def progression(self) -> list[ProgressionRow]:
        return progression_rows(self.series, self.metrics)

    def families(self) -> dict[str, dict[str, Stats]]:
        return families(self.metrics)


# -- run ----------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RunRow(PageData):
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


@dataclass(frozen=True, kw_only=True)
class RunPage(PageData):
    """The stitched run (``data/runs/<id>.json``): ``pages.run_page``.

    The published key order puts ``schema`` first and interleaves the summary
    fields, so this class lists them again; :meth:`row` picks them by
    :class:`RunRow`'s list (a field missing here fails the first build).
    """

    schema: str = RUN_SCHEMA
    id: str
    url: str
    data: str
    jobs: list[str]
    job_rows: tuple[JobRow, ...]
    status: str
    first_step: int | None
    last_step: int | None
    steps: int
    discarded_steps: int
    discarded: tuple[DiscardedStep, ...]
    discarded_time_s: float
    resumed_from: list[int]
    restarts: tuple[Restart, ...]
    reward_mean: float | None
    reward_max: float | None
    reward_last: float | None
    total_time_s: float | None
    headline: Headline
    metrics: dict[str, Stats]
    series: Series
    timing: Timing
    trials: TrialSummary | None
    trial_success_rate: float | None
    trial_error_rate: float | None
    reward_spark: list[int | float | None]
    last_activity: str | None

    def row(self) -> RunRow:
        return RunRow(**{f.name: getattr(self, f.name) for f in fields(RunRow)})

    def progression(self) -> list[ProgressionRow]:
        return progression_rows(self.series, self.metrics)

    def families(self) -> dict[str, dict[str, Stats]]:
        return families(self.metrics)

    def restart_of(self, job_id: str) -> Restart | None:
        """The restart a job made (None for the first job or a job that did not resume)."""
        return next((r for r in self.restarts if r.job == job_id), None)


# -- index and compare ------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Skipped(PageData):
    """A folder discovery passed over, and why: ``discover``."""

    path: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class Totals(PageData):
    """The index's counts: ``pages.index_page``."""

    runs: int
    jobs: int
    steps: int
    trials: int
    warnings: int


@dataclass(frozen=True, kw_only=True)
class IndexPage(PageData):
    """``data/index.json`` and the index and runs pages: ``pages.index_page``."""

    schema: str = INDEX_SCHEMA
    title: str
    jobs: tuple[JobRow, ...]
    runs: tuple[RunRow, ...]
    skipped: tuple[Skipped, ...]
    totals: Totals

    def jobs_by_run(self) -> dict[str, list[JobRow]]:
        """Each run's job rows, in chain order."""
        out: dict[str, list[JobRow]] = {}
        for j in self.jobs:
            out.setdefault(j.run, []).append(j)
        return out


@dataclass(frozen=True, kw_only=True)
class CompareItem(PageData):
    """A run or job on the comparison page (``pages.compare_page``; its curves: ``pages.compare_curves``)."""

    kind: str  # "run" or "job"
    id: str
    url: str
    status: str
    headline: Headline
    trial_success_rate: float | None
    trial_error_rate: float | None


@dataclass(frozen=True, kw_only=True)
class ComparePage(PageData):
    """The comparison page's data (``compare/items.js``)."""

    items: tuple[CompareItem, ...]
