"""The parts of pages: headline, statistics, timers, vLLM, batches, trials, restarts.

Frozen Structs made from the analyses' dicts (:meth:`PageData.from_json`), each naming the
function that computes it. Long columns stay lists: tuples would cost build time for no
check mypy does not already make.
"""

from __future__ import annotations

from typing import Any

import msgspec

from sitegen.model.vocabulary import (
    POLICY_KL,
    POLICY_LOSS,
    REWARD,
    STEP_TIME,
    gen_wait_key,
    metric_family,
    pass_at_key,
    pass_at_label,
)
from sitegen.pages.data import PageData

# columnar per-step values: {"step": [...], metric: [...]}, None where absent
Series = dict[str, list[Any]]


class Headline(msgspec.Struct, PageData, frozen=True, kw_only=True):
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
    staleness_max: float | None

    @property
    def pass_label(self) -> str:
        """``pass@8`` (``pass@k`` when the log has no pass@k metric)."""
        return pass_at_label(self.pass_at_k)


class Stats(msgspec.Struct, PageData, frozen=True, kw_only=True):
    """mean, sample std, min, max over finite values; ``count`` of them: ``analyse.summarize``."""

    mean: float | None
    std: float | None
    min: float | None
    max: float | None
    count: int


class TimerNode(msgspec.Struct, PageData, frozen=True, kw_only=True):
    """One timer of the tree: ``analyse.timing_tree`` (shares are fractions, not %)."""

    name: str
    total_s: float
    mean_s: float
    count: int
    share_of_parent: float | None
    share_of_step: float | None
    mean_step_share: float | None
    children: tuple[TimerNode, ...]


class TimerRow(msgspec.Struct, frozen=True):
    """A timer in the flattened table: the node and how deep it sits (not published)."""

    depth: int
    node: TimerNode


class OutsideTimer(msgspec.Struct, PageData, frozen=True, kw_only=True):
    """A timer logged outside the step (checkpoints, eval, unknown timers): ``analyse.timing_tree``."""

    name: str
    total_s: float
    mean_s: float | None
    count: int
    share_of_step: float | None
    mean_step_share: float | None  # over the steps that logged it: as the old report's


class Timing(msgspec.Struct, PageData, frozen=True, kw_only=True):
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


class EngineSummary(msgspec.Struct, PageData, frozen=True, kw_only=True):
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
    preemptions_total: float | None
    preemptions_max: float | None


class VllmTimeline(msgspec.Struct, PageData, frozen=True, kw_only=True):
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
        return {f: getattr(self, f) for f in self.__struct_fields__}


class VllmSummary(msgspec.Struct, PageData, frozen=True, kw_only=True):
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
    preemptions_total: float | None
    verdict: str
    verdict_reason: str
    verdict_thresholds: dict[str, float]
    aggregated_lines: int
    suppressed_copies: int
    step_lines: int
    step_stats: dict[str, dict[str, float]]
    per_engine: tuple[EngineSummary, ...]
    timeline: VllmTimeline


class BatchTotals(msgspec.Struct, PageData, frozen=True, kw_only=True):
    """Batch-generation counts for a step or a job (``BatchCounts.to_json``)."""

    batches: int
    instances: int
    successful: int
    failed: int
    masked: int
    exceptions: dict[str, int]


class BatchSummary(BatchTotals, frozen=True, kw_only=True):
    """Training batch totals, per step, eval apart, and ``batch_errors/*`` stats: ``analyse.batch_summary``."""

    per_step: dict[str, BatchTotals]
    eval: BatchTotals
    summary: dict[str, Stats]


class TurnStats(msgspec.Struct, PageData, frozen=True, kw_only=True):
    """Turns per trial: ``analyse.trial_stats``."""

    mean: float | None
    median: float | None
    std: float | None
    min: float | None
    max: float | None
    count: int


class TurnGroup(msgspec.Struct, PageData, frozen=True, kw_only=True):
    """Turns of the trials with one exception or outcome: ``analyse.trial_stats``."""

    mean: float | None
    median: float | None
    count: int


class TrialRewards(msgspec.Struct, PageData, frozen=True, kw_only=True):
    """Rewards of the trials that have one (success: reward > 0): ``analyse.trial_stats``."""

    mean: float | None
    success_rate: float | None
    count: int
    success: int
    failure: int


class TrialSummary(msgspec.Struct, PageData, frozen=True, kw_only=True):
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


class Restart(msgspec.Struct, PageData, frozen=True, kw_only=True):
    """Where a job of a run resumed and what it discarded: ``assemble`` (``Run.restarts``)."""

    job: str
    resumed_from: int | None
    cut_at: int
    discarded_steps: list[int]
    discarded_time_s: float


class SavedCheckpoint(msgspec.Struct, PageData, frozen=True, kw_only=True):
    """A checkpoint a job of a run says it saved: ``read.logparse`` (``ParsedLog.checkpoints``)."""

    job: str
    step: int  # the N of global_step_N
    final: bool  # the save after the training loop (model.parsed.Checkpoint)


class DiscardedStep(msgspec.Struct, PageData, frozen=True, kw_only=True):
    """A step logged by an earlier job and replaced after a resume: ``pages.run_page``."""

    step: int
    time_s: float | None
    reward: float | None


class ProgressionRow(msgspec.Struct, frozen=True):
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
        for key in (REWARD, pk, POLICY_KL, POLICY_LOSS, STEP_TIME, gen_wait_key(series))
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
