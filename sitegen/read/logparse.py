"""Streaming parser of a SkyRL SLURM ``.out`` log (formats.md §2–5).

The parser reads the file in fixed-size chunks and keeps only what the site
needs: one dict per step, counters, and per-minute vLLM buckets. Memory does
not grow with the log's length beyond those (a step's dict, a bucket per
minute of wall time).
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections import Counter, deque
from dataclasses import dataclass, field, fields
from datetime import datetime

import yaml

from sitegen.errors import BuildWarning
from sitegen.model import codec
from sitegen.model.parsed import BatchCounts, Checkpoint, MetricBlock, ParsedLog
from sitegen.read.lines import TQDM_TAIL_RE, Line, iter_blocks, iter_raw_lines, split_line
from sitegen.read.vllm import V0_PREFIX, VllmAccumulator, is_stats_like
from sitegen.redact import Redactor

STEP_RE = re.compile(r"^Step (\d+):\s*$")
MIRROR_RE = re.compile(r"^WANDB_MIRROR kind=(\w+) step=(\d+) metrics=(\{.*\})\s*$")
BATCH_START_RE = re.compile(r"^Starting batch generation for (\d+) trials \(mode=(\w+)")
BATCH_EXC_RE = re.compile(r"^Exception breakdown: (\{.*\})\s*$")
# The success count can be negative: the generator subtracts exception counts, which can
# exceed the batch (formats.md §8). Read as written.
BATCH_DONE_RE = re.compile(
    r"^Batch generation complete: (-?\d+)/(\d+) successful, (-?\d+) failed instances, (\d+) masked"
)
LOAD_CKPT_RE = re.compile(r"^Loading checkpoint from: (\S+)")
RESUME_RE = re.compile(r"^(?:Resuming from global_step:?|Resumed training from global_step) (\d+)")
CKPT_STEP_RE = re.compile(r"global_step_(\d+)")
SAVED_RE = re.compile(r"^Successfully saved checkpoint for global_step_(\d+) to: (\S+)")
FAILED_RE = re.compile(r"^(?:Train loop failed at global_step (\d+)|Training failed at step (\d+))")
SLURM_CANCEL_RE = re.compile(
    r"^slurmstepd: error: \*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED AT (\S+)(?: DUE TO ([A-Z ]+?))? \*\*\*"
)
SLURM_OOM_RE = re.compile(r"^slurmstepd: error: Detected (\d+) oom[_-]kill event")
STEP_LIKE_RE = re.compile(r"^Step \d+:")
TIMER_RE = re.compile(r"^Finished: '([^']+)', time cost: (-?[0-9.]+(?:e[-+]?\d+)?|nan|inf)s\s*$")
STARTED_STEP = "Started: 'step'"
# "reward/avg_pass_at_5: 0.6533, reward/avg_raw_reward: 0.2174, reward/mean_positive_reward: …"
REWARD_PAIR_RE = re.compile(r"(reward/[\w/.\-]+): (-?[0-9.]+(?:e[-+]?\d+)?|nan|inf|-inf)(?=,|\s*$)")
# tqdm bars of the training loop (both trainers): "…Progress:  14%|█▍   | 1/7 [00:10<…]"
TRAIN_BAR_RE = re.compile(
    r"^Training (?:Step Progress|Batches Processed):[^|]*\|[^|]*\| ?(\d+)/(\d+) "
)
TOTAL_STEPS_RE = re.compile(r"^Total training steps: (\d+)\s*$")
# A notebook front end that keeps only the last lines says so (formats.md §8).
TRUNCATED_RE = re.compile(r"^(?:Output is truncated\b|\[?\.\.\. ?\[?\d+ lines? truncated)")
# Timers the site knows (both trainers' trees and what is logged beside `step`); other
# Timer lines (init_weight_sync_state, dump_data_batch, …) are not part of timing/*.
KNOWN_TIMERS = frozenset(
    {
        "step",
        "wait_for_generation_buffer",
        "generate",
        "postprocess_generator_output",
        "convert_to_training_input",
        "run_training",
        "fwd_logprobs_values_reward",
        "apply_reward_kl_penalty",
        "compute_advantages_and_returns",
        "train_critic_and_policy",
        "policy_train",
        "critic_train",
        "sync_weights",
        "save_checkpoints",
        "save_hf_model",
        "cleanup_old_checkpoints",
        "update_ref_with_policy",
        "eval",
    }
)
INT64 = 1 << 63
YAML_TOP_RE = re.compile(r"^[A-Za-z_][\w\-]*:(?: .*)?$")
CONFIG_ROOTS = frozenset({"data", "trainer", "generator", "environment", "algorithm"})

# A line holding none of these cannot carry anything we read (once the config
# dump is behind us and no metrics dict is open): a loguru header (a time,
# maybe a colour code, then " | "; tqdm bars have " | " too, but after a space),
# a vLLM engine line, the SLURM end line, vLLM step lines.
LOGURU_HINT = re.compile(rb"\d(?:\x1b\[[0-9;]*m)? \| ")


class _Markers:
    """Finds the next line of a block that may carry a marker, at ``bytes.find`` speed.

    The literals are searched with ``find`` and their next positions cached, so a
    block is scanned about once per literal whatever the number of markers; a
    loguru header is a " | " right after a digit (or the end of a colour code).
    """

    # "Engine 0", not "Engine": the Ray actor AsyncVLLMInferenceEngine prefixes every line
    # an engine writes (most are "Request truncated" warnings), and only stats lines say
    # "Engine 000:" (issue 11: 262 k of 269 k lines taken as vLLM lines were not stats).
    LITERALS = (
        b"Engine 0",
        b"Engines Aggregated",
        b"slurmstepd",
        b"vLLM Stats",
        b"WANDB_MIRROR",
        b"Avg prompt throughput",
        b"Training Step Progress",
        b"Training Batches Processed",
        b"Output is truncated",  # not "truncated": engines log "Request truncated" a lot
        b"lines truncated",
    )

    def __init__(self, block: bytes) -> None:
        self.block = block
        self.next = {lit: -2 for lit in self.LITERALS}
        self.bar = -2

    def find(self, pos: int) -> int:
        b = self.block
        best = -1
        for lit in self.LITERALS:
            i = self.next[lit]
            if i != -1 and i < pos:
                i = self.next[lit] = b.find(lit, pos)
            if i >= 0 and (best < 0 or i < best):
                best = i
        i = self.bar
        while True:
            if i != -1 and i < pos:
                i = b.find(b" | ", pos)
            if i < 0 or (best >= 0 and i > best):
                break
            if b[i - 1 : i].isdigit() or (
                b[i - 1 : i] == b"m" and LOGURU_HINT.search(b, max(0, i - 12), i + 3)
            ):
                best = i
                break
            pos = i + 3
            i = -2
        self.bar = i
        return best


MAX_BLOCK_LINES = 5000
MAX_CONFIG_LINES = 20000
MAX_WARNINGS_PER_KIND = 10


@dataclass
class _PendingBlock:
    step: int
    source: str
    line: int
    text: list[str] = field(default_factory=list)


@dataclass
class _Batches:
    batches: int = 0
    instances: int = 0
    successful: int = 0
    failed: int = 0
    masked: int = 0
    exceptions: Counter[str] = field(default_factory=Counter)

    def add(self, other: _Batches) -> None:
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

    Plain typed fields only, so :mod:`sitegen.model.codec` can write it as JSON
    and check it on the way back (incremental builds read a grown log on from
    here). Add a field here, not as a loose attribute, and bump
    :data:`STATE_FORMAT`.
    """

    year_hint: int | None = None
    console: dict[int, dict[str, float]] = field(default_factory=dict)
    console_lines: dict[int, int] = field(default_factory=dict)
    mirror: dict[int, dict[str, float]] = field(default_factory=dict)
    mirror_lines: dict[int, int] = field(default_factory=dict)
    evals: dict[int, dict[str, float]] = field(default_factory=dict)
    eval_lines: dict[int, int] = field(default_factory=dict)
    pending: dict[str, _PendingBlock] = field(default_factory=dict)
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
    config: dict | None = None
    batches: _Batches = field(default_factory=_Batches)
    eval_batches: _Batches = field(default_factory=_Batches)
    batch_pending: _Batches = field(default_factory=_Batches)
    batches_per_step: dict[int, _Batches] = field(default_factory=dict)
    batch_modes: deque[str] = field(default_factory=deque)
    batch_exc: Counter[str] | None = None
    boundary: int = -1  # highest step whose marker has been seen
    vllm: VllmAccumulator = field(default_factory=lambda: VllmAccumulator(""))
    suppressed: int = 0
    first_time: datetime | None = None
    last_time: datetime | None = None
    block_times: dict[int, datetime] = field(
        default_factory=dict
    )  # step -> its first marker's time
    lines: int = 0
    warnings: list[BuildWarning] = field(default_factory=list)
    warn_counts: Counter[str] = field(default_factory=Counter)
    # Values read from text lines (formats.md §8: logs without metric dicts).
    text_steps: dict[int, dict[str, float]] = field(default_factory=dict)
    text_lines: dict[int, int] = field(default_factory=dict)
    text_open: dict[str, float] | None = None  # the step being timed
    text_open_line: int = 0
    text_closed_after: int | None = None  # last_done when its 'step' timer finished
    text_closed: bool = False
    text_closed_time: datetime | None = None  # loguru time of its 'step' timer: the step's end
    last_done: int | None = None  # the last step known complete (bar, block, resume line)
    planned_steps: int | None = None
    truncated_at: int | None = None  # line of a "output truncated" banner
    oom_line: int | None = None
    final_checkpoint: int | None = None  # saved after the loop ("Saved final checkpoint.")


STATE_FORMAT = 2  # bump whenever ParserState or a dataclass inside it changes


class LogParser(ParserState):
    """Feed it :class:`~sitegen.read.lines.Line` objects in order; ``finish()`` returns the result.

    Its state (the :class:`ParserState` fields) can be saved with
    :meth:`state_json` and taken up again with :meth:`from_state_json`.
    """

    def __init__(self, rel_path: str, redactor: Redactor, year_hint: int | None = None) -> None:
        super().__init__(year_hint=year_hint, vllm=VllmAccumulator(rel_path))
        self.rel = rel_path
        self.redactor = redactor

    def state_json(self) -> dict:
        """The parse so far as plain JSON (see :mod:`sitegen.model.codec`)."""
        return {"format": STATE_FORMAT, "state": codec.to_json(self, ParserState)}

    @classmethod
    def from_state_json(cls, data: object, rel_path: str, redactor: Redactor) -> LogParser:
        """A parser that goes on from a saved state; ValueError when ``data`` is not one."""
        if not isinstance(data, dict) or data.get("format") != STATE_FORMAT or "state" not in data:
            raise ValueError("not a log parser state of this format")
        state = codec.from_json(data["state"], ParserState, "$.parser")
        parser = cls(rel_path, redactor)
        for f in fields(ParserState):
            setattr(parser, f.name, getattr(state, f.name))
        parser.vllm.source_name = rel_path
        return parser

    def feed_stream(self, fh) -> None:
        """Read a binary stream (``read(n)``) to its end, numbering lines on from :attr:`lines`."""
        for number, block, line, truncated in iter_blocks(fh, first=self.lines + 1):
            if block is None:
                self.feed_raw(number, line, truncated)
            else:
                self.feed_block(number, block)

    def read_engine_log(self, rel: str, fh) -> None:
        """Add the vLLM lines of an ``infra-*.log`` (engine output kept apart, §5).

        Its lines are not counted as the log's; nothing is added if reading fails
        part-way (the ``OSError`` reaches the caller).
        """
        sub = VllmAccumulator(rel)
        for number, raw, _truncated in iter_raw_lines(fh):
            ln = split_line(number, raw)
            if ln.emitter == "vllm" and is_stats_like(ln.message):
                sub.feed(ln, self._vllm_time(ln.vllm_time))
        self.vllm.merge(sub)

    def file_warning(self, rel: str, message: str) -> None:
        """A warning about another file read with this log (an infra log)."""
        self.warnings.append(BuildWarning(rel, None, message))

    # -- warnings -----------------------------------------------------------
    def warn(self, line: int | None, kind: str, message: str) -> None:
        self.warn_counts[kind] += 1
        n = self.warn_counts[kind]
        if n <= MAX_WARNINGS_PER_KIND:
            self.warnings.append(BuildWarning(self.rel, line, message))

    # -- the per-line dispatch ---------------------------------------------
    def feed_raw(self, number: int, raw: bytes, truncated: bool) -> None:
        """Take one physical line. Lines that cannot matter skip the full split (fast path)."""
        self.lines = number
        if truncated:
            self.warn(number, "long", "line longer than 1 MiB: read its first 1 MiB only")
        if b"\x00" in raw:
            self.warn(number, "nul", "NUL bytes in line (binary data?): removed")
        if not raw.isascii():
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                self.warn(number, "utf8", "invalid UTF-8: decoded with replacement characters")
        if (
            self.pending
            or self.config_lines is not None
            or any(lit in raw for lit in _Markers.LITERALS)
            or (b" | " in raw and LOGURU_HINT.search(raw) is not None)
            or (not self.config_done and b":" in raw)
        ):
            self.feed(split_line(number, raw))

    def steady(self) -> bool:
        """No metrics dict open and the config dump behind us: only marker lines matter."""
        return not self.pending and self.config_lines is None and self.config_done

    def feed_block(self, first: int, block: bytes) -> None:
        """Take a block of complete lines (each ending in ``\\n``), numbered from ``first``.

        In the steady state a clean block (valid UTF-8, no NUL) is searched for
        marker lines in one pass of a compiled pattern; only those lines reach
        Python. Otherwise, and as soon as a marker opens a dict or a config
        dump, lines are taken one by one.
        """
        clean = b"\x00" not in block and _utf8(block)
        markers = _Markers(block)
        pos, number, end = 0, first, len(block)
        while pos < end:
            if clean and self.steady():
                hit = markers.find(pos)
                if hit < 0:
                    number += block.count(b"\n", pos)
                    break
                nl = block.rfind(b"\n", pos, hit)
                start = nl + 1 if nl >= 0 else pos  # pos is always a line start
                number += block.count(b"\n", pos, start)
                stop = block.find(b"\n", hit)
                self.lines = number
                self.feed(split_line(number, block[start:stop]))
            else:
                stop = block.find(b"\n", pos)
                self.feed_raw(number, block[pos:stop], False)
            number += 1
            pos = stop + 1
        self.lines = number - 1

    def feed(self, ln: Line) -> None:
        if ln.before:
            self._bar(ln.before)  # a progress bar that a record was glued onto
        if ln.time is not None:
            if self.first_time is None:
                self.first_time = ln.time
            self.last_time = ln.time

        pend = self.pending.get(ln.source)
        if pend is not None and ln.emitter == "":
            if self._continue_block(pend, ln):
                return
        elif pend is not None:
            # Another header from the same process: the dict never closed.
            self._cut_block(pend, ln.number)

        if self.config_lines is not None and not self.config_done:
            if ln.source == self.config_source and ln.emitter == "" and self._yamlish(ln.message):
                if len(self.config_lines) < MAX_CONFIG_LINES:
                    self.config_lines.append(ln.message)
                return
            if ln.source == self.config_source:
                self._finish_config()

        if ln.emitter == "loguru":
            self._loguru(ln)
        elif ln.emitter == "vllm":
            self._vllm(ln)
        else:
            self._plain(ln)

    def _loguru(self, ln: Line) -> None:
        msg = ln.message
        c = msg[:1]
        if c == "S":
            m = STEP_RE.match(msg)
            if m:
                step = int(m.group(1))
                self._marker(step)
                if ln.time is not None:
                    self.block_times.setdefault(step, ln.time)
                self.pending[ln.source] = _PendingBlock(step, ln.source, ln.number)
                return
            if msg.startswith(STARTED_STEP):
                self._text_start(ln.number)
                return
            m = SAVED_RE.match(msg)
            if m:
                step = int(m.group(1))
                self.checkpoints[step] = self.redactor.text(m.group(2))
                return
            if msg.startswith("Saved final checkpoint.") and self.checkpoints:
                self.final_checkpoint = max(self.checkpoints)
                return
            m = BATCH_START_RE.match(msg)
            if m:
                self.batch_modes.append(m.group(2))
                return
            if STEP_LIKE_RE.match(msg):
                self.warn(ln.number, "marker", "unreadable 'Step N:' marker: ignored")
                return
        elif c == "F":
            if msg.startswith("Finished: '"):
                self._timer(ln, msg)
                return
        elif c == "r":
            if msg.startswith("reward/") and self.text_open is not None:
                self._reward_line(ln, msg)
                return
        elif c == "{":
            if self.text_open is not None:
                self._status_dict(ln, msg)
                return
        elif c == "W":
            if msg.startswith("WANDB_MIRROR"):
                self._mirror_line(ln, msg)
                return
        elif c == "B":
            if msg.startswith("Batch generation complete"):
                m = BATCH_DONE_RE.match(msg)
                if m:
                    self._batch_done(ln, m)
                else:
                    self.warn(
                        ln.number, "batch", "unreadable 'Batch generation complete' line: ignored"
                    )
                return
        elif c == "E":
            m = BATCH_EXC_RE.match(msg)
            if m:
                self._exception_breakdown(ln, m.group(1))
                return
        elif c == "L":
            m = LOAD_CKPT_RE.match(msg)
            if m:
                self.resume_path = self.redactor.text(m.group(1))
                s = CKPT_STEP_RE.search(m.group(1))
                if s:
                    self.resumed_from = int(s.group(1))
                    self.last_done = self.resumed_from
                return
        elif c == "R":
            m = RESUME_RE.match(msg)
            if m:
                self.resumed_from = self.last_done = int(m.group(1))
                return
        elif c == "N":
            if msg.startswith("No checkpoint found, starting training from scratch"):
                self.fresh_start = True
                self.last_done = 0
                return
        elif c == "v":
            if self.vllm.feed_step_line(msg):
                return
        elif c == "T":
            if msg.strip() == "Training done!":
                self.end_marker, self.end_detail = "complete", None
                return
            m = FAILED_RE.match(msg)
            if m:
                self.end_marker = "failed"
                self.end_detail = self.redactor.text(msg)[:300]  # redact, then cut
                return
            m = TOTAL_STEPS_RE.match(msg)
            if m:
                self.planned_steps = int(m.group(1))
                return

    def _plain(self, ln: Line) -> None:
        msg = ln.message
        if msg.startswith("slurmstepd:"):
            if not ln.source:
                self._slurm(ln, msg)
            return
        c = msg[:1]
        if c == "W" and msg.startswith("WANDB_MIRROR "):
            self._mirror_line(ln, msg)  # formats.md §8: it can come with no loguru header
            return
        if c == "T" and self._bar(msg):
            return
        if (
            ("Engine 0" in msg or "Avg prompt throughput: " in msg) and "throughput: " in msg
        ) or "WANDB_MIRROR kind=" in msg:
            # a marker in a line whose header was not found (damaged, or after unknown text)
            self.warn(
                ln.number,
                "vllm",
                "vLLM stats or WANDB_MIRROR line without a readable header: ignored",
            )
            return
        if ("truncated" in msg) and TRUNCATED_RE.match(msg):
            if self.truncated_at is None:
                self.truncated_at = ln.number
            return
        if not self.config_done and self.config_lines is None:
            key = msg.split(":", 1)[0]
            if key in CONFIG_ROOTS and YAML_TOP_RE.match(msg) and msg.rstrip().endswith(":"):
                self.config_lines = [msg]
                self.config_source = ln.source
                self.config_line = ln.number

    def _bar(self, text: str) -> bool:
        """The training loop's tqdm bar: planned total, and the steps done so far."""
        m = TRAIN_BAR_RE.match(text)
        if not m:
            return False
        done, total = int(m.group(1)), int(m.group(2))
        self.planned_steps = total
        self.last_done = done  # the bar is updated after the step's metrics
        return True

    def _slurm(self, ln: Line, msg: str) -> None:
        m = SLURM_CANCEL_RE.match(msg)
        if m:
            reason = m.group(2) or "CANCELLED"
            if self.oom_line is not None and not m.group(2):
                # An oom_kill event, then a plain CANCELLED: the job died of memory.
                self.end_marker, self.end_detail = "failed", "out of memory (oom_kill)"
            else:
                self.end_marker, self.end_detail = "cancelled", reason
            return
        m = SLURM_OOM_RE.match(msg)
        if m:
            self.oom_line = ln.number
            self.end_marker, self.end_detail = "failed", "out of memory (oom_kill)"
            return
        self.warn(ln.number, "slurm", "slurmstepd line not understood: ignored")

    # -- values from text lines (logs without metric dicts, formats.md §8) ----------
    def _text_start(self, line: int) -> None:
        self._text_flush()
        self.text_open, self.text_open_line = {}, line
        self.text_closed, self.text_closed_after = False, None

    def _text_flush(self) -> None:
        """Store the timed step once it is over (its number is known by then)."""
        vals, self.text_open = self.text_open, None
        if vals is None or not self.text_closed:
            return  # never started, or cut off before its 'step' timer finished
        after = self.text_closed_after
        if self.last_done is not None and (after is None or self.last_done > after):
            step = self.last_done  # a bar or block after the step named it
        elif after is not None:
            step = after + 1
        else:
            self.warn(self.text_open_line, "textstep", "a timed step with no known number: skipped")
            return
        self._marker(step)  # its batches are the ones finished since the last step
        self.text_steps[step] = vals
        self.text_lines[step] = self.text_open_line
        if self.text_closed_time is not None:
            self.block_times.setdefault(step, self.text_closed_time)
        if self.last_done is None or step > self.last_done:
            self.last_done = step

    def _timer(self, ln: Line, msg: str) -> None:
        m = TIMER_RE.match(msg)
        if not m:
            self.warn(ln.number, "timer", "unreadable 'Finished:' timer line: ignored")
            return
        name, secs = m.group(1), float(m.group(2))
        if name not in KNOWN_TIMERS:
            return
        if name == "step":
            if self.text_open is None or self.text_closed:
                self._text_start(ln.number)  # its 'Started' line was lost
            self.text_closed = True
            self.text_closed_after = self.last_done
            self.text_closed_time = ln.time
        if self.text_open is not None:
            self.text_open[f"timing/{name}"] = secs

    def _reward_line(self, ln: Line, msg: str) -> None:
        pairs = REWARD_PAIR_RE.findall(msg)
        if not pairs:
            self.warn(ln.number, "reward", "unreadable reward line: ignored")
            return
        assert self.text_open is not None
        for k, v in pairs:
            self.text_open[k] = float(v)

    def _status_dict(self, ln: Line, msg: str) -> None:
        """The trainer's ``logger.info(status)``: the policy's numbers at full precision."""
        try:
            d = ast.literal_eval(msg.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return  # some other message in braces
        if not isinstance(d, dict):
            return
        assert self.text_open is not None
        for k, v in self._numbers(ln, d).items():
            self.text_open[k if "/" in k else f"policy/{k}"] = v

    # -- metric blocks -------------------------------------------------------
    def _marker(self, step: int) -> None:
        """A step's metrics appear: batches finished since the last marker are its."""
        if self.config_lines is None:
            self.config_done = True  # the config dump comes before training or not at all
        if self.last_done is None or step > self.last_done:
            self.last_done = step  # metrics are logged once the step is over
        if step > self.boundary:
            self._flush_batches(step)
            self.boundary = step

    def _flush_batches(self, step: int) -> None:
        if self.batch_pending.batches:
            self.batches_per_step.setdefault(step, _Batches()).add(self.batch_pending)
            self.batch_pending = _Batches()

    def _continue_block(self, pend: _PendingBlock, ln: Line) -> bool:
        text = ln.message
        stripped = text.rstrip()
        if not pend.text:
            if not stripped.startswith("{"):
                self.warn(
                    pend.line,
                    "block",
                    f"'Step {pend.step}:' is not followed by a metrics dict: block skipped",
                )
                del self.pending[ln.source]
                return False
        elif stripped[:1] not in (" ", "\t"):  # pformat indents every continuation line
            self._cut_block(pend, ln.number)
            return False
        pend.text.append(stripped)
        if stripped.endswith("}"):
            del self.pending[ln.source]
            self._close_block(pend)
        elif len(pend.text) > MAX_BLOCK_LINES:
            del self.pending[ln.source]
            self.warn(
                pend.line, "block", f"metrics dict of step {pend.step} never closes: block skipped"
            )
        return True

    def _cut_block(self, pend: _PendingBlock, at: int | None) -> None:
        self.pending.pop(pend.source, None)
        where = f"at line {at}" if at else "at end of file"
        self.warn(
            pend.line, "cut", f"metrics dict of step {pend.step} is cut off {where}: block skipped"
        )

    def _close_block(self, pend: _PendingBlock) -> None:
        try:
            d = ast.literal_eval("\n".join(pend.text))
            if not isinstance(d, dict):
                raise ValueError("not a dict")
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            self.warn(
                pend.line, "block", f"unreadable metrics dict of step {pend.step}: block skipped"
            )
            return
        self._store(
            self.console, self.console_lines, pend.step, self._numbers(pend.line, d), pend.line
        )

    def _mirror_line(self, ln: Line, msg: str) -> None:
        m = MIRROR_RE.match(msg)
        if not m:
            self.warn(ln.number, "mirror", "unreadable WANDB_MIRROR line: ignored")
            return
        kind, step = m.group(1), int(m.group(2))
        try:
            d = json.loads(m.group(3))
            if not isinstance(d, dict):
                raise ValueError("not an object")
        except (ValueError, RecursionError):
            self.warn(
                ln.number, "mirror", f"unreadable WANDB_MIRROR metrics of step {step}: skipped"
            )
            return
        if kind == "train":
            self._marker(step)
            if ln.time is not None:
                self.block_times.setdefault(step, ln.time)
            self._store(
                self.mirror, self.mirror_lines, step, self._numbers(ln.number, d), ln.number
            )
        elif kind == "eval":
            self._store(self.evals, self.eval_lines, step, self._numbers(ln.number, d), ln.number)
        else:
            self.warn(ln.number, "mirror", f"WANDB_MIRROR kind={kind} not known: ignored")

    def _numbers(self, line: int, d: dict) -> dict[str, float]:
        """Numeric values of a metrics dict (see :func:`_numbers`), warning about any dropped."""
        out, dropped = _numbers(d)
        if dropped:
            self.warn(line, "value", f"metric {dropped[0]!r} is not a number we can keep: left out")
        for k, v in out.items():
            if k.startswith("timing/") and not (math.isfinite(v) and v >= 0):
                self.warn(
                    line,
                    "timer",
                    f"timer {k} is {v}: left out of timing sums and means",
                )
        return out

    @staticmethod
    def _store(into: dict, lines: dict, step: int, metrics: dict, line: int) -> None:
        # A second block for the same step (split timing block) merges into the first.
        if step in into:
            into[step].update(metrics)
        else:
            into[step] = metrics
            lines[step] = line

    # -- batches ---------------------------------------------------------------
    def _exception_breakdown(self, ln: Line, text: str) -> None:
        try:
            d = ast.literal_eval(text)
            if not isinstance(d, dict):
                raise ValueError("not a dict")
            counts = Counter()
            for k, v in d.items():
                if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                    raise ValueError("not a count")
                counts[str(k)] = int(v)
        except (
            ValueError,
            SyntaxError,
            TypeError,
            AttributeError,
            MemoryError,
            RecursionError,
            OverflowError,
        ):
            self.warn(ln.number, "exc", "unreadable 'Exception breakdown' dict: ignored")
            return
        self.batch_exc = counts

    def _batch_done(self, ln: Line, m: re.Match) -> None:
        ok, total, failed, masked = (int(g) for g in m.groups())
        if ok < 0 or failed < 0:
            self.warn(
                ln.number,
                "negative",
                f"negative count in batch line ({ok}/{total} successful, {failed} failed; the "
                "generator subtracts exception counts): read as written",
            )
        mode = self.batch_modes.popleft() if self.batch_modes else "training"
        b = _Batches(1, total, ok, failed, masked, self.batch_exc or Counter())
        self.batch_exc = None
        if mode == "eval":
            self.eval_batches.add(b)
        else:
            self.batches.add(b)
            self.batch_pending.add(b)

    # -- vLLM ------------------------------------------------------------------
    def _vllm(self, ln: Line) -> None:
        if ln.repeated and ln.message.startswith(("Engine ", V0_PREFIX)):
            self.suppressed += ln.repeated  # copies Ray did not print: never seen, never counted
        if not is_stats_like(ln.message):
            return  # most vLLM lines are not stats: no time to read for them
        problem = self.vllm.feed(ln, self._vllm_time(ln.vllm_time))
        if problem:
            self.warn(ln.number, "vllm", problem)

    def _vllm_time(self, mdhms: str | None) -> datetime | None:
        """vLLM prints no year: take it from the latest loguru time (or the file's mtime)."""
        if not mdhms:
            return None
        ref = self.last_time
        year = ref.year if ref else self.year_hint
        if year is None:
            return None
        try:
            # "MM-DD HH:MM:SS" sliced: strptime cost a fifth of a cold build (issue 11)
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

    # -- config ------------------------------------------------------------------
    @staticmethod
    def _yamlish(msg: str) -> bool:
        return (
            bool(msg)
            and (msg[0] in " -\t" or YAML_TOP_RE.match(msg) is not None)
            and TQDM_TAIL_RE.search(msg) is None  # a progress bar redrawn inside the dump
        )

    def _finish_config(self) -> None:
        self.config_done = True
        lines, self.config_lines = self.config_lines or [], None
        try:
            data = yaml.safe_load("\n".join(lines))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            at = self.config_line + mark.line if mark is not None else self.config_line
            self.warn(at, "config", "config dump is not valid YAML: config not shown")
            return
        if isinstance(data, dict):
            self.config = self.redactor.value(None, data)  # type: ignore[assignment]

    # -- the result ----------------------------------------------------------------
    def finish(self, size_bytes: int = 0, mtime: float = 0.0) -> ParsedLog:
        for pend in list(self.pending.values()):
            self._cut_block(pend, None)
        if self.config_lines is not None and not self.config_done:
            self._finish_config()
        if self.batch_pending.batches:
            # Batches after the last metrics dict belong to the step being generated.
            self._flush_batches(self.boundary + 1 if self.boundary >= 0 else 0)
        self._text_flush()
        if self.mirror:
            form, source, lines = "mirror", self.mirror, self.mirror_lines
        elif self.console:
            form, source, lines = "console", self.console, self.console_lines
        elif self.text_steps:
            # No metric dict anywhere (wandb-only logger): what the text lines said.
            form, source, lines = "text", self.text_steps, self.text_lines
        else:
            form, source, lines = "", {}, {}
        blocks: list[MetricBlock] = []
        eval_src: dict[int, MetricBlock] = {
            s: MetricBlock(s, self.evals[s], self.eval_lines[s]) for s in self.evals
        }
        for s in sorted(source):
            metrics = source[s]
            evals = {k: v for k, v in metrics.items() if k.startswith("eval/")}
            if evals and len(evals) + ("timing/eval" in metrics) == len(metrics):
                # An eval-only block (eval_before_train at the resumed step K, §8): not a step.
                eval_src.setdefault(s, MetricBlock(s, metrics, lines[s]))
                continue
            if evals:  # in-loop eval riding in the train block (synchronous trainer)
                eval_src.setdefault(s, MetricBlock(s, evals, lines[s]))
            blocks.append(MetricBlock(s, metrics, lines[s], self.block_times.get(s)))
        evals_out = tuple(eval_src[s] for s in sorted(eval_src))
        mid_run = None
        if self.truncated_at is not None:
            mid_run = f"the log says its output was truncated (line {self.truncated_at})"
        elif (
            blocks
            and blocks[0].step > 1
            and self.resumed_from is None
            and not self.fresh_start
            and self.config is None  # a config dump is printed at the job's start
        ):
            mid_run = f"first step {blocks[0].step}, with no start or resume line"
        last = blocks[-1].step if blocks else None
        final = self.final_checkpoint
        if final is not None and last is not None and final <= last:
            final = None  # a regular save of a logged step
        for kind, n in self.warn_counts.items():
            if n > MAX_WARNINGS_PER_KIND:
                self.warnings.append(
                    BuildWarning(
                        self.rel,
                        None,
                        f"{n - MAX_WARNINGS_PER_KIND} more warnings like the above ({kind})",
                    )
                )
        return ParsedLog(
            path=self.rel,
            blocks=tuple(blocks),
            eval_blocks=evals_out,
            metric_form=form,
            end_marker=self.end_marker,
            end_detail=self.end_detail,
            resumed_from=self.resumed_from,
            resume_path=self.resume_path,
            fresh_start=self.fresh_start,
            checkpoints=tuple(
                Checkpoint(s, p, s == final) for s, p in sorted(self.checkpoints.items())
            ),
            config=self.config,
            batches=self.batches.freeze(),
            batches_per_step={s: b.freeze() for s, b in sorted(self.batches_per_step.items())},
            eval_batches=self.eval_batches.freeze(),
            vllm=self.vllm.freeze(self.first_time, self.suppressed),
            first_time=self.first_time,
            last_time=self.last_time,
            lines=self.lines,
            size_bytes=size_bytes,
            mtime=mtime,
            warnings=tuple(self.warnings),
            mid_run=mid_run,
            planned_steps=self.planned_steps,
        )


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _numbers(d: dict) -> tuple[dict[str, float | int], list[str]]:
    """Keep numeric values: 4-decimal strings become floats, ``'nan'``/``'inf'`` non-finite.

    ``None`` and non-numeric strings are not metrics (a mirror can carry both) and are
    skipped quietly; an integer beyond 64 bits becomes a float, or is dropped and named
    in the second result when not even a float holds it.
    """
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
