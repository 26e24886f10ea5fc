"""The data model: what parsing an archive produces, as frozen msgspec Structs with units
in names. Mappings inside are plain dicts, never mutated after construction.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from sitegen.errors import BuildWarning
from sitegen.model.vocabulary import exception_kind as kind_of_name


class MetricBlock(msgspec.Struct, frozen=True):
    """The metrics dict logged for one training step."""

    step: int
    metrics: dict[str, int | float]  # a value logged as an integer stays one
    line: int  # where the block starts in its log
    # loguru time of the block's marker: the end of the step (trial attribution, docs/data.md)
    time: datetime | None = None


class Checkpoint(msgspec.Struct, frozen=True):
    """A checkpoint a log says was saved: its step and path."""

    step: int
    path: str
    # The save after the training loop ("Saved final checkpoint."): named global_step_{last+1}
    # by the older synchronous and the fully-async trainers (docs/formats.md §3.5; it holds step
    # ``step - 1``'s weights, and no step ``step`` is ever trained), global_step_{last} by
    # the newer synchronous trainer.
    final: bool = False


class BatchCounts(msgspec.Struct, frozen=True):
    """Batch-generation totals (docs/formats.md §4) for a step or a whole job."""

    batches: int = 0
    instances: int = 0
    successful: int = 0
    failed: int = 0
    masked: int = 0
    exceptions: dict[str, int] = msgspec.field(default_factory=dict)

    def to_json(self) -> dict:
        return {**msgspec.structs.asdict(self), "exceptions": dict(sorted(self.exceptions.items()))}


class EngineStats(msgspec.Struct, frozen=True):
    """Sums over the per-engine vLLM stat lines of one engine (pid, ip)."""

    engine: str
    samples: int
    running_sum: float
    running_max: float
    waiting_sum: float
    waiting_max: float
    gen_tps_sum: float
    gen_tps_max: float
    prompt_tps_sum: float
    kv_pct_sum: float
    prefix_pct_sum: float
    prefix_samples: int
    preemptions_max: float | None  # per logging interval; None: never reported
    preemptions_total: float | None  # the sum of the intervals' counts


class VllmTimeBucket(msgspec.Struct, frozen=True):
    """All per-engine samples whose time falls in one bucket (seconds from job start)."""

    t_s: float
    samples: int
    gen_tps_mean: float
    gen_tps_min: float
    gen_tps_max: float
    running_mean: float
    waiting_mean: float
    kv_pct_mean: float
    prefix_pct_mean: float | None


class VllmStats(msgspec.Struct, frozen=True):
    """What a log's vLLM engine statistics lines add up to (docs/formats.md §5)."""

    engines: tuple[EngineStats, ...]
    timeline: tuple[VllmTimeBucket, ...]
    aggregated_lines: int  # "N Engines Aggregated" lines (N > 1): cluster totals, kept apart
    suppressed_copies: int  # sum of Ray's "[repeated Nx across cluster]"
    step_lines: int  # "vLLM Stats (step N)" lines
    step_stats: dict[int, dict[str, float]]  # their values by step


class ParsedLog(msgspec.Struct, frozen=True):
    """Everything read from one SLURM log."""

    path: str  # relative to the archive
    blocks: tuple[MetricBlock, ...]  # sorted by step, one per step
    eval_blocks: tuple[MetricBlock, ...]
    metric_form: str  # "console", "mirror", "text" (from log text lines only) or "" (none)
    end_marker: str | None  # "complete" | "cancelled" | "failed" | None
    end_detail: str | None
    resumed_from: int | None
    resume_path: str | None
    fresh_start: bool
    checkpoints: tuple[Checkpoint, ...]
    config: dict | None  # redacted
    batches: BatchCounts
    batches_per_step: dict[int, BatchCounts]
    eval_batches: BatchCounts
    vllm: VllmStats
    first_time: datetime | None
    last_time: datetime | None
    lines: int
    size_bytes: int
    mtime: float
    warnings: tuple[BuildWarning, ...]
    # The log does not start at the job's start (docs/formats.md §4: a notebook keeps only
    # its last lines): why we think so, or None.
    mid_run: str | None = None
    planned_steps: int | None = None  # the trainer's total, from its progress bar
    # What shows it is a training job's log (the first sign read: "a Ray prefix", …;
    # read/evidence.py), or None: not a job's, listed as skipped (discover.drop_non_jobs).
    evidence: str | None = None


class TrialResult(msgspec.Struct, frozen=True, array_like=True):
    """The few fields of a Harbor ``result.json`` that the site uses (kept in the build
    cache as an array, in field order: a folder's outcomes hold tens of thousands)."""

    name: str
    task: str
    reward: float | None
    exception: str | None
    turns: int | None
    input_tokens: int | None
    output_tokens: int | None
    duration_s: float | None
    eval: bool
    # For the insights (sitegen/insights/): wall-clock start as written (tz dropped, see
    # docs/data.md), the four Harbor stages in seconds, and cached input tokens.
    started_at: datetime | None = None
    env_setup_s: float | None = None
    agent_setup_s: float | None = None
    agent_exec_s: float | None = None
    verifier_s: float | None = None
    cache_tokens: int | None = None
    # Harbor's own classification of the exception (``exception_info.policy``, 0.26),
    # as vocabulary.policy_kind reads it; None: classify by the exception's name.
    exception_kind: str | None = None

    @property
    def kind(self) -> str:
        """``none``, ``infrastructure``, ``model`` or ``other``: Harbor's own kind where the
        file gives one, else the exception's name decides (docs/formats.md §6.3)."""
        return self.exception_kind or kind_of_name(self.exception)


class TrialSet(msgspec.Struct, frozen=True):
    """The parsed trials of one trials directory."""

    path: str  # relative to the archive
    results: tuple[TrialResult, ...]  # training trials only
    eval_count: int
    malformed: int
    missing: int
    archives: int  # trials_step*.tar[.gz] read
    warnings: tuple[BuildWarning, ...]
    job_level: int = 0  # job-level result.json files found in trial folders (not trials)


class JobSource(msgspec.Struct, frozen=True):
    """A job found by discovery: its log (if any) and where it belongs."""

    id: str
    log: str | None  # relative to the archive
    group: str  # experiment or flat directory, relative to the archive
    layout: str  # "experiment" or "flat"
    order_key: tuple
    infra_logs: tuple[str, ...] = ()
    notes: str | None = None  # notes.md beside the log


class Discovery(msgspec.Struct, frozen=True):
    """What the discover stage found in an archive: its jobs, trials folders, and what it skipped."""

    jobs: tuple[JobSource, ...]
    # trials directories by owner: experiment group or flat directory
    trials_dirs: dict[str, list[str]]
    skipped: tuple[tuple[str, str], ...]  # (path, reason)
    warnings: tuple[BuildWarning, ...]
    # Paths above are as the site shows them (a secret in a name hashed); these map the
    # few that differ back to the file on disk. Never shown.
    real_paths: dict[str, str] = msgspec.field(default_factory=dict)

    def real(self, rel: str) -> str:
        """The on-disk path (relative to the archive) of a path as discovery shows it."""
        return self.real_paths.get(rel, rel)


class Job(msgspec.Struct, frozen=True):
    """One SLURM job: its source, parsed log and status."""

    source: JobSource
    log: ParsedLog | None
    status: str
    run_id: str
    trials: TrialSet | None

    @property
    def id(self) -> str:
        return self.source.id

    @property
    def steps(self) -> list[int]:
        return [b.step for b in self.log.blocks] if self.log else []


class Restart(msgspec.Struct, frozen=True):
    """Where a job of a chain picked up, and the earlier steps that cost."""

    job_id: str
    resumed_from: int | None  # explicit checkpoint step, None if the log does not say
    cut_at: int  # steps after this one, logged earlier, were discarded
    discarded_steps: tuple[int, ...]
    discarded_time_s: float


class Run(msgspec.Struct, frozen=True):
    """A resume chain: jobs in order, stitched to one per-step series."""

    id: str
    jobs: tuple[Job, ...]
    blocks: tuple[MetricBlock, ...]  # stitched, one per step
    discarded: tuple[MetricBlock, ...]  # blocks an earlier job logged and a resume threw away
    resumed_from: tuple[int, ...]
    restarts: tuple[Restart, ...]
    trials: TrialSet | None
