"""The log parser's resumable state, and the primitives every part of the parser shares.

:class:`ParserState` is what a grown log is read on from (the build cache keeps it);
:class:`ParserCore` adds the file's name, the redactor and the rules each line handler
uses: capped warnings, the step boundary batches count up to, metric values, vLLM times.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from dataclasses import dataclass, field
from datetime import datetime

from sitegen.errors import BuildWarning
from sitegen.model.parsed import BatchCounts
from sitegen.model.vocabulary import is_finite
from sitegen.read.markers import is_srun_end
from sitegen.read.vllm import VllmAccumulator
from sitegen.redact import Redactor

INT64 = 1 << 63
MAX_BLOCK_LINES = 5000
MAX_CONFIG_LINES = 20000
MAX_WARNINGS_PER_KIND = 10


@dataclass
class PendingBlock:
    """A metrics dict being read: its step, process, first line and lines so far."""

    step: int
    source: str
    line: int
    text: list[str] = field(default_factory=list)


@dataclass
class BatchTally:
    """Batch-generation counts being added up (a step's or the whole log's)."""

    batches: int = 0
    instances: int = 0
    successful: int = 0
    failed: int = 0
    masked: int = 0
    exceptions: Counter[str] = field(default_factory=Counter)

    def add(self, other: BatchTally) -> None:
        self.batches += other.batches
        self.instances += other.instances
        self.successful += other.successful
        self.failed += other.failed
        self.masked += other.masked
        self.exceptions.update(other.exceptions)

    def freeze(self) -> BatchCounts:
        return BatchCounts(
            self.batches,
            self.instances,
            self.successful,
            self.failed,
            self.masked,
            dict(sorted(self.exceptions.items())),
        )


@dataclass(eq=False)
class ParserState:
    """Everything a :class:`LogParser` has learnt so far: the resumable part of a parse.

    Plain typed fields only, kept as msgpack and checked on the way back. Add a field
    here, not as a loose attribute: the cache notices a new shape of it by itself.
    """

    year_hint: int | None = None
    # the time vLLM's year-less lines are dated by while the log has no loguru time of its
    # own (a split log's .out: its .err's first time, docs/formats.md §1)
    time_hint: datetime | None = None
    console: dict[int, dict[str, int | float]] = field(default_factory=dict)
    console_lines: dict[int, int] = field(default_factory=dict)
    mirror: dict[int, dict[str, int | float]] = field(default_factory=dict)
    mirror_lines: dict[int, int] = field(default_factory=dict)
    evals: dict[int, dict[str, int | float]] = field(default_factory=dict)
    eval_lines: dict[int, int] = field(default_factory=dict)
    pending: dict[str, PendingBlock] = field(default_factory=dict)
    end_marker: str | None = None
    end_detail: str | None = None
    resumed_from: int | None = None
    resume_path: str | None = None
    fresh_start: bool = False
    checkpoints: dict[int, str] = field(default_factory=dict)
    config_lines: list[str] | None = None
    config_source: str | None = None
    config_line: int = 0
    config_done: bool = False
    config_blanks: int = 0  # blank lines of the dump's process held: inside a string, or its end
    restarted: bool = False  # a start line came after a step: LogParser._restarting
    config_cuts: list[int] = field(default_factory=list)  # the dump's lines before each blank run
    config: dict | None = None
    batches: BatchTally = field(default_factory=BatchTally)
    eval_batches: BatchTally = field(default_factory=BatchTally)
    batch_pending: BatchTally = field(default_factory=BatchTally)
    batches_per_step: dict[int, BatchTally] = field(default_factory=dict)
    batch_modes: deque[str] = field(default_factory=deque)
    batch_exc: Counter[str] | None = None
    boundary: int = -1  # highest step whose marker has been seen
    vllm: VllmAccumulator = field(default_factory=lambda: VllmAccumulator(""))
    suppressed: int = 0
    first_time: datetime | None = None
    last_time: datetime | None = None
    block_times: dict[int, datetime] = field(default_factory=dict)  # step: its first marker's time
    lines: int = 0  # lines read, counting the ones a tqdm bar's \r makes (a log's reading)
    cr_lines: int = 0  # of those, the ones a \r made: lines - cr_lines is the file's own line
    warnings: list[BuildWarning] = field(default_factory=list)
    warn_counts: Counter[str] = field(default_factory=Counter)
    # Values read from text lines (docs/formats.md §3: logs without metric dicts).
    text_steps: dict[int, dict[str, int | float]] = field(default_factory=dict)
    text_lines: dict[int, int] = field(default_factory=dict)
    text_open: dict[str, int | float] | None = None  # the step being timed
    text_open_line: int = 0
    text_closed_after: int | None = None  # last_done when its 'step' timer finished
    text_closed: bool = False
    text_closed_time: datetime | None = None  # loguru time of its 'step' timer: the step's end
    last_done: int | None = None  # the last step known complete (bar, block, resume line)
    planned_steps: int | None = None
    truncated_at: int | None = None  # line of a "output truncated" banner
    # A failure SLURM reported that more training undoes and a later plain cancel keeps: the
    # job's memory (a worker the trainer's Ray starts again), a step's FAILED (a step run
    # beside training, or the one that failed before the script's end cancelled the rest)
    side_failure: str | None = None
    # A failure SLURM or srun reported after 'Training done!' (warned; the job stays complete)
    # with no training output nor 'Training done!' since: a plain cancel now keeps it complete
    done_then_failed: bool = False
    final_checkpoint: int | None = None  # saved after the loop ("Saved final checkpoint.")
    evidence: str | None = None  # the first sign of a training job read (read/evidence.py)
    # secrets hidden while reading: kind -> [first line, count] (reported, never the values)
    secrets: dict[str, list[int]] = field(default_factory=dict)


class ParserCore(ParserState):
    """A :class:`ParserState` that knows its file: the base of the parser's line handlers."""

    def __init__(self, rel_path: str, redactor: Redactor, year_hint: int | None = None) -> None:
        super().__init__(year_hint=year_hint, vllm=VllmAccumulator(rel_path))
        self.rel = rel_path
        self.redactor = redactor
        # Ray prefixes (raw bytes) checked for the line fast paths: what
        # split_line makes of them, or None (a cache, not state: rebuilt after a resume).
        self.prefixes: dict[bytes, tuple[str, str | None, str | None] | None] = {}
        # The regex of a run of one prefix's continuation lines (MetricBlocks._take_run).
        self.runs: dict[bytes, re.Pattern[bytes]] = {}

    def warn(self, line: int | None, kind: str, message: str) -> None:
        self.warn_counts[kind] += 1
        if self.warn_counts[kind] <= MAX_WARNINGS_PER_KIND:
            self.warnings.append(BuildWarning(self.rel, line, message))

    def redact(self, line: int, text: str) -> str:
        """``text`` as the site may show it; each secret hidden is noted against ``line``."""
        out, kinds = self.redactor.hide(text)
        self.note_secrets(line, kinds)
        return out

    def note_secrets(self, line: int, kinds: list[str]) -> None:
        """Count secrets of these kinds hidden on ``line`` (the build reports them)."""
        for kind in kinds:
            seen = self.secrets.setdefault(kind, [line, 0])
            seen[1] += 1

    def _marker(self, step: int, now: bool = True) -> None:
        """A step's metrics appear: batches finished since the last marker are its. ``now``:
        read at this line (not a step timed earlier, stored once its number is known)."""
        if self.config_lines is None:
            self.config_done = True  # the config dump comes before training or not at all
        if now:
            self._training_goes_on()
        if self.last_done is None or step > self.last_done:
            self.last_done = step  # metrics are logged once the step is over
        if step > self.boundary:
            self._flush_batches(step)
            self.boundary = step

    def _training_goes_on(self) -> None:
        """Training or eval output after an end srun reported, a memory failure or a step's
        FAILED: what ended was a background step's (``srun pkill``) or a worker Ray started
        again, not the training's. Such a failure (or one warned after 'Training done!') is
        forgotten: a plain cancel later is the job's end."""
        if is_srun_end(self.end_detail) or (
            self.side_failure is not None
            and self.end_marker == "failed"
            and self.end_detail == self.side_failure
        ):
            self.end_marker = self.end_detail = None
        self.side_failure = None
        self.done_then_failed = False

    def _flush_batches(self, step: int) -> None:
        if self.batch_pending.batches:
            self.batches_per_step.setdefault(step, BatchTally()).add(self.batch_pending)
            self.batch_pending = BatchTally()

    def _numbers(self, line: int, d: dict) -> dict[str, float]:
        """Numeric values of a metrics dict (see :func:`_numbers`), warning about any dropped."""
        out, dropped = _numbers(d)
        if dropped:
            self.warn(line, "value", f"metric {dropped[0]!r} is not a number we can keep: left out")
        for k, v in out.items():
            if k.startswith("timing/") and not (is_finite(v) and v >= 0):
                self.warn(line, "timer", f"timer {k} is {v}: left out of timing sums and means")
        return out

    @staticmethod
    def _store(into: dict, lines: dict, step: int, metrics: dict, line: int) -> None:
        # A second block for the same step (split timing block) merges into the first.
        if step in into:
            into[step].update(metrics)
        else:
            into[step] = metrics
            lines[step] = line

    def _vllm_time(self, mdhms: str | None) -> datetime | None:
        """vLLM prints no year: take it from the latest loguru time (else :attr:`time_hint`,
        else the file's mtime), across a new year."""
        if not mdhms:
            return None
        ref = self.last_time or self.time_hint
        year = ref.year if ref else self.year_hint
        if year is None:
            return None
        try:
            # "MM-DD HH:MM:SS" sliced: strptime would be a large share of a cold build
            t = datetime(
                year,
                int(mdhms[0:2]),
                int(mdhms[3:5]),
                int(mdhms[6:8]),
                int(mdhms[9:11]),
                int(mdhms[12:14]),
            )
            if ref is not None and (ref - t).days > 180:  # Dec loguru time, Jan vLLM line
                t = t.replace(year=year + 1)
            elif ref is not None and (t - ref).days > 180:  # Jan loguru time, Dec vLLM line
                t = t.replace(year=year - 1)
        except ValueError:  # 02-29 outside a leap year, or a damaged time
            return None
        return t


def _numbers(d: dict) -> tuple[dict[str, float | int], list[str]]:
    """Keep numeric values: numeric strings become floats; ``None`` and other strings are no
    metrics, skipped quietly; an integer beyond 64 bits becomes a float, or is dropped and
    named in the second result when not even a float holds it."""
    out: dict[str, float | int] = {}
    dropped: list[str] = []
    for k, v in d.items():
        if isinstance(v, bool):
            out[str(k)] = int(v)
        elif isinstance(v, int):
            if -INT64 <= v < INT64:
                out[str(k)] = v
            else:
                try:
                    out[str(k)] = float(v)
                except OverflowError:
                    dropped.append(str(k))
        elif isinstance(v, float):
            out[str(k)] = v
        elif isinstance(v, str):
            try:
                out[str(k)] = float(v)
            except ValueError:
                continue  # a string that is not a number: not a metric
    return out, dropped
