"""vLLM engine statistics lines (docs/formats.md §5), accumulated in bounded memory: per
engine, sums and maxima; over time, one bucket per minute of wall time.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePosixPath

from sitegen.model.parsed import EngineStats, VllmStats, VllmTimeBucket
from sitegen.read.lines import Line

ENGINE_RE = re.compile(r"^(?:Engine (\d+)|(\d+) Engines Aggregated): (.*)$")
ENGINE_START_RE = re.compile(r"^(?:Engine \d+|\d+ Engines Aggregated):")
# "1 Engines Aggregated: " is the one engine's line (vLLM 0.10.2's default logger aggregates
# whatever the count), read as that process's "Engine 000".
ONE_AGGREGATED_INDEX = "000"
# The V0 engine's line (docs/formats.md §5): no "Engine NNN:", Pending for Waiting, a final ".".
V0_PREFIX = "Avg prompt throughput: "
# With prefix caching on, the V0 engine logs its hit rate on a line of its own right after
# its stats line; a negative rate is one of a cache not in use.
V0_RATE_PREFIX = "Prefix cache hit rate: GPU: "
V0_RATE_RE = re.compile(r"^Prefix cache hit rate: GPU: (-?[0-9]+(?:\.[0-9]+)?)%, CPU: ")
# V0's scheduler (vllm/core/scheduler.py) warns at an engine's 1st, 51st, 101st, … preemption
# with its count so far: "Sequence group 12 is preempted by PreemptionMode.RECOMPUTE mode
# because there is not enough KV cache space. … total_num_cumulative_preemption=51" (older
# versions: total_cumulative_preemption_cnt). Found by search: the line is long.
PREEMPT_PREFIX = "Sequence group "
PREEMPTED = " is preempted by "
PREEMPT_COUNT_RE = re.compile(
    r"\btotal_(?:num_cumulative_preemption|cumulative_preemption_cnt)=([0-9]{1,18})\b"
)
STEP_RE = re.compile(r"^vLLM Stats \(step (\d{1,18})\):\s*(.*)$")  # (as markers.STEP_RE)
# "engines=4, running(peak/med)=10/5, kv(peak/med)=80.0%/41.0%": key=value, values maybe "a/b"
# (read from where its run of word characters starts, digits before the name skipped: the
# same pairs, each run read once instead of from each of its characters)
STEP_PAIR_RE = re.compile(r"(?<!\w)[^\WA-Za-z_]*+([A-Za-z_]\w*+)(?:\(([\w/]+)\))?=([^,\s]+)")
# The other fork's line names no pair: "running=5.0/10, kv_cache=41.0/80.0%" is median/peak
# (its format_console_summary).
UNNAMED_PAIR = ("med", "peak")
# The units a value may carry: a share, or a time (in seconds: milliseconds converted). Any
# other (a multiplier "1.2k", "tok/s") is no number this reader can put beside the others.
STEP_UNIT_RE = re.compile(r"(-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)(%|s|ms)")
_STEP_UNIT_SCALE = {"%": 1.0, "s": 1.0, "ms": 0.001}
# One "Key: value [unit]" part; a trailing "." (V0) or other text after the unit is ignored.
PART_RE = re.compile(
    r"^\s*([A-Za-z][A-Za-z /\-]*?): (-?[0-9]+(?:\.[0-9]+)?|nan|inf)\s*(%|tokens/s|reqs)?"
)
KEYS = {
    "Avg prompt throughput": "prompt_tps",
    "Avg generation throughput": "gen_tps",
    "Running": "running",
    "Waiting": "waiting",
    "Pending": "waiting",  # V0's name for it
    "Swapped": "swapped",
    "CPU KV cache usage": "cpu_kv_pct",
    "Deferred": "deferred",
    "Preemptions": "preemptions",
    "GPU KV cache usage": "kv_pct",
    "Prefix cache hit rate": "prefix_pct",
    "External prefix cache hit rate": "ext_prefix_pct",
    "MM cache hit rate": "mm_pct",
    "Corrupted": "corrupted",
}
REQUIRED = frozenset({"gen_tps", "running", "waiting"})
# How every version's stats message starts after its "Engine NNN: " (a line cut short
# within it, or right after the prefix, is a stats line too).
# vLLM logs other messages under the same prefix, none of them stats: "Engine 000: vllm
# cache_config_info with initialization after num_gpu_blocks is: 31406" (at start, INFO
# up to 0.10), "Engine 000: MFU: 12.3 TF/s/GPU 456.7 GB/s/GPU" (each interval, with
# --enable-mfu-metrics).
STATS_START = "Avg"
BUCKET_S = 60


@dataclass
class _Engine:
    """One engine's running sums and maxima over its stats lines."""

    samples: int = 0
    running_sum: float = 0.0
    running_max: float = 0.0
    waiting_sum: float = 0.0
    waiting_max: float = 0.0
    gen_sum: float = 0.0
    gen_max: float = 0.0
    prompt_sum: float = 0.0
    kv_sum: float = 0.0
    prefix_sum: float = 0.0
    prefix_n: int = 0
    # vLLM counts preemptions per logging interval (its logger zeroes the count after each
    # line), so the engine's total is their sum; None: no line of it reports them.
    preempt_max: float | None = None
    preempt_sum: float = 0.0
    # A V0 sample awaiting its hit rate line (docs/formats.md §5.3), and its time bucket.
    rate_due: bool = False
    rate_bucket: int | None = None

    def merge(self, o: _Engine) -> None:
        """Add the samples of the same engine read from another file."""
        self.samples += o.samples
        self.running_sum += o.running_sum
        self.running_max = max(self.running_max, o.running_max)
        self.waiting_sum += o.waiting_sum
        self.waiting_max = max(self.waiting_max, o.waiting_max)
        self.gen_sum += o.gen_sum
        self.gen_max = max(self.gen_max, o.gen_max)
        self.prompt_sum += o.prompt_sum
        self.kv_sum += o.kv_sum
        self.prefix_sum += o.prefix_sum
        self.prefix_n += o.prefix_n
        if o.preempt_max is not None:
            self.preempt_sum += o.preempt_sum
            self.preempt_max = max(self.preempt_max or 0.0, o.preempt_max)


@dataclass
class _Bucket:
    """The sums of one time bucket of the vLLM timeline."""

    n: int = 0
    gen_sum: float = 0.0
    gen_min: float = math.inf
    gen_max: float = -math.inf
    running_sum: float = 0.0
    waiting_sum: float = 0.0
    kv_sum: float = 0.0
    prefix_sum: float = 0.0
    prefix_n: int = 0

    def merge(self, b: _Bucket) -> None:
        self.n += b.n
        self.gen_sum += b.gen_sum
        self.gen_min = min(self.gen_min, b.gen_min)
        self.gen_max = max(self.gen_max, b.gen_max)
        self.running_sum += b.running_sum
        self.waiting_sum += b.waiting_sum
        self.kv_sum += b.kv_sum
        self.prefix_sum += b.prefix_sum
        self.prefix_n += b.prefix_n


def is_stats_like(message: str) -> bool:
    """Cheap test: could this vLLM message be a stats line (so its time is worth reading)?"""
    return message.startswith(
        ("Engine ", V0_PREFIX, V0_RATE_PREFIX, "vLLM Stats", PREEMPT_PREFIX)
    ) or (message[:1].isdigit() and " Engines Aggregated:" in message)


def parse_stats(text: str) -> dict[str, float]:
    """Key/value pairs of an engine stats message (any vLLM version's field set): every
    ``Key: value [unit]`` of a known key."""
    vals: dict[str, float] = {}
    for part in text.split(","):
        p = PART_RE.match(part)
        if p and p.group(1) in KEYS:
            vals[KEYS[p.group(1)]] = float(p.group(2))
    return vals


def parse_step_stats(text: str) -> dict[str, float]:
    """A fork's all-engine line per step: ``running(peak/med)=10/5`` → running_peak, running_med;
    an unnamed pair ``running=5.0/10`` is median/peak (:data:`UNNAMED_PAIR`). A value's unit
    (``80.0%``, ``0.50s``, ``850ms``: :data:`STEP_UNIT_RE`) is dropped, milliseconds made
    seconds; a value with another unit (``1.2k``, ``812.3tok/s``) is left out."""
    out: dict[str, float] = {}
    for key, parts, value in STEP_PAIR_RE.findall(text):
        values = value.split("/")
        numbers = [_step_number(v) for v in values]
        if len(values) > 1 and not parts and None in numbers:
            continue  # "812.3tok/s": one value with a unit of its own, not a pair
        unnamed = list(UNNAMED_PAIR) if len(values) == 2 else [""]
        names = parts.split("/") if parts else unnamed
        for name, number in zip(names, numbers, strict=False):
            if number is not None:
                out[f"{key}_{name}" if name else key] = number
    return out


def _step_number(text: str) -> float | None:
    """A value of a step line: a number, maybe with a unit glued on; None if none."""
    try:
        return float(text)
    except ValueError:
        m = STEP_UNIT_RE.fullmatch(text)
        return float(m.group(1)) * _STEP_UNIT_SCALE[m.group(2)] if m else None


def engine_names(keys: Iterable[str]) -> dict[str, str]:
    """Each engine key's name (:meth:`VllmAccumulator.engine_key`): its process's, or
    ``<process>:engine<index>`` when that process logged several engine indexes."""
    keys = list(keys)
    indexes = Counter(k.rpartition("#")[0] for k in keys)
    names = {}
    for k in keys:
        process, _, index = k.rpartition("#")
        names[k] = f"{process}:engine{index}" if indexes[process] > 1 else process
    return names


@dataclass(eq=False)
class VllmAccumulator:
    """Feed vLLM-header lines; ``freeze()`` gives :class:`~sitegen.model.parsed.VllmStats`.
    Plain fields: it is part of the log parser's resumable state."""

    source_name: str  # engine label for lines without a Ray prefix
    # An engine log (infra-*.log) of its own: a pid names a process of that file only
    # (vLLM's own "(APIServer pid=1) ", the same in every container).
    engine_log: bool = False
    engines: dict[str, _Engine] = field(default_factory=dict)
    buckets: dict[int, _Bucket] = field(default_factory=dict)
    aggregated_lines: int = 0
    step_lines: int = 0
    step_stats: dict[int, dict[str, float]] = field(default_factory=dict)
    # Each process's greatest count in V0's preemption warnings (key: engine_key with no
    # index); freeze() gives it to that process's engine.
    warned_preemptions: dict[str, float] = field(default_factory=dict)

    def feed(self, ln: Line, when: datetime | None) -> tuple[bool, str | None]:
        """Take one line: whether it was an engine's sample (the lines whose copies Ray
        held back count, docs/formats.md §5.8), and a warning for an unreadable stats line."""
        m = ENGINE_RE.match(ln.message)
        if m:
            if m.group(2) is None:
                index = m.group(1)
            elif int(m.group(2)) == 1:
                # vLLM 0.10.2 aggregates by default, one engine too: that engine's sample
                index = ONE_AGGREGATED_INDEX
            else:
                self.aggregated_lines += 1  # cluster totals, not one engine
                return False, None
            text = m.group(3)
        elif ln.message.startswith(V0_PREFIX):
            index, text = "", ln.message  # V0: one engine per process, no index
        elif ln.message.startswith(V0_RATE_PREFIX):
            return False, self.add_v0_rate(ln.pid, ln.ip, ln.message)
        elif ln.message.startswith(PREEMPT_PREFIX):
            return False, self.add_preemption_warning(ln.pid, ln.ip, ln.message)
        elif ENGINE_START_RE.match(ln.message):
            return False, "vLLM stats line without throughput/running/waiting: ignored"
        else:
            self.feed_step_line(ln.message)
            return False, None
        vals = parse_stats(text)
        if not vals.keys() >= REQUIRED:
            if not vals and not STATS_START.startswith(text[: len(STATS_START)]):
                return False, None  # another message of the engine's: not a stats line at all
            return False, "vLLM stats line without throughput/running/waiting: ignored"
        self.add(ln.pid, ln.ip, index, vals, when)
        if not index and "prefix_pct" not in vals:  # V0: its hit rate may follow
            e = self.engines[self.engine_key(ln.pid, ln.ip, index)]
            e.rate_due = True
            e.rate_bucket = int(when.timestamp()) // BUCKET_S if when is not None else None
        return True, None

    def add_v0_rate(self, pid: str | None, ip: str | None, message: str) -> str | None:
        """The V0 engine's ``Prefix cache hit rate: GPU: X%, CPU: Y%`` line: X is the prefix
        hit rate of that process's last sample, taken once; returns a warning if unreadable."""
        m = V0_RATE_RE.match(message)
        if m is None:
            return "unreadable vLLM prefix cache hit rate line: ignored"
        e = self.engines.get(self.engine_key(pid, ip, ""))
        rate = float(m.group(1))
        if e is None or not e.rate_due or rate < 0:
            return None  # no sample of its engine awaits it, or no GPU prefix cache
        e.rate_due = False
        e.prefix_sum += rate
        e.prefix_n += 1
        b = self.buckets.get(e.rate_bucket) if e.rate_bucket is not None else None
        if b is not None:
            b.prefix_sum += rate
            b.prefix_n += 1
        return None

    def add_preemption_warning(self, pid: str | None, ip: str | None, message: str) -> str | None:
        """V0's ``Sequence group … is preempted by … total_num_cumulative_preemption=N``: its
        process's count so far (the greatest said is kept); returns a warning if unreadable."""
        if PREEMPTED not in message:
            return None  # another message about a sequence group
        m = PREEMPT_COUNT_RE.search(message)
        if m is None:
            return "vLLM preemption warning without its count: ignored"
        key = self.engine_key(pid, ip, "")
        count = float(m.group(1))
        if count > self.warned_preemptions.get(key, -1.0):
            self.warned_preemptions[key] = count
        return None

    def add(
        self,
        pid: str | None,
        ip: str | None,
        index: str,
        vals: dict[str, float],
        when: datetime | None,
    ) -> None:
        """One engine sample (``vals`` as :func:`parse_stats` gives them) of engine ``index``."""
        self.add_sample(
            self.engine_key(pid, ip, index),
            vals["running"],
            vals["waiting"],
            vals["gen_tps"],
            vals.get("prompt_tps", 0.0),
            vals.get("kv_pct", 0.0),
            vals.get("preemptions"),
            vals.get("prefix_pct"),
            when,
        )

    def engine_key(self, pid: str | None, ip: str | None, index: str) -> str:
        """The engine a sample is of, as ``process#index``: its process (``pid@ip``,
        ``pid@driver``; in an engine log ``<file>:pid``; else ``<file>:engine<index>``) and
        its index there (one process can log several engines: vLLM's data parallelism, an
        API server in front of several engine cores)."""
        if pid and not self.engine_log:
            process = f"{pid}@{ip}" if ip else f"{pid}@driver"
        elif pid:
            name = PurePosixPath(self.source_name).name
            process = f"{name}:{pid}@{ip}" if ip else f"{name}:{pid}"
        else:
            process = f"{PurePosixPath(self.source_name).name}:engine{index}"
        return f"{process}#{index}"

    def add_sample(
        self,
        engine: str,
        running: float,
        waiting: float,
        gen: float,
        prompt: float,
        kv: float,
        preempt: float | None,
        prefix: float | None,
        when: datetime | None,
    ) -> None:
        """One sample of ``engine``, its values one by one (the standard line's fast path
        passes them as it reads them)."""
        e = self.engines.get(engine)
        if e is None:  # (not setdefault: that makes a throwaway _Engine for every line)
            e = self.engines[engine] = _Engine()
        # "if v > m: m = v" is max(m, v) (the first of equals kept, a NaN never replaces nor
        # is replaced), without a call
        e.samples += 1
        e.running_sum += running
        if running > e.running_max:
            e.running_max = running
        e.waiting_sum += waiting
        if waiting > e.waiting_max:
            e.waiting_max = waiting
        e.gen_sum += gen
        if gen > e.gen_max:
            e.gen_max = gen
        e.prompt_sum += prompt
        e.kv_sum += kv
        if preempt is not None:
            e.preempt_sum += preempt
            if e.preempt_max is None or preempt > e.preempt_max:
                e.preempt_max = preempt
        if prefix is not None:
            e.prefix_sum += prefix
            e.prefix_n += 1
        if when is not None:
            key = int(when.timestamp()) // BUCKET_S
            b = self.buckets.get(key)
            if b is None:
                b = self.buckets[key] = _Bucket()
            # _Bucket.merge of a one-sample bucket, without making it: the same operations in
            # the same order (float sums equal merge's bit for bit), a missing prefix rate's
            # 0.0 left out (a sum begun at 0.0 is never -0.0, which adding 0.0 changes)
            b.n += 1
            b.gen_sum += gen
            if gen < b.gen_min:
                b.gen_min = gen
            if gen > b.gen_max:
                b.gen_max = gen
            b.running_sum += running
            b.waiting_sum += waiting
            b.kv_sum += kv
            if prefix is not None:
                b.prefix_sum += prefix
                b.prefix_n += 1

    def feed_step_line(self, message: str) -> bool:
        """A ``vLLM Stats (step N): …`` line (from vLLM's or the trainer's logger)."""
        sm = STEP_RE.match(message)
        if not sm:
            return False
        self.step_lines += 1
        self.step_stats[int(sm.group(1))] = parse_step_stats(sm.group(2))
        return True

    def merge(self, other: VllmAccumulator) -> None:
        """Add what ``other`` read (another file of the job): an engine both read is one."""
        for engine, e in other.engines.items():
            if engine in self.engines:
                self.engines[engine].merge(e)
            else:
                self.engines[engine] = e
        for key, b in other.buckets.items():
            self.buckets.setdefault(key, _Bucket()).merge(b)
        self.aggregated_lines += other.aggregated_lines
        self.step_lines += other.step_lines
        self.step_stats.update(other.step_stats)
        for process, count in other.warned_preemptions.items():
            self.warned_preemptions[process] = max(
                count, self.warned_preemptions.get(process, count)
            )

    def _warned_counts(self) -> dict[str, float]:
        """Each engine's count from preemption warnings: a process's goes to its engine with
        no index (V0's), else to the one engine it logs; a process with none, or with several
        indexed ones, cannot say whose it is (docs/formats.md §5.3)."""
        by_process: dict[str, list[str]] = {}
        for k in self.engines:
            by_process.setdefault(k.rpartition("#")[0] + "#", []).append(k)
        out = {}
        for key, count in self.warned_preemptions.items():
            keys = by_process.get(key, [])
            if key in self.engines:
                out[key] = count
            elif len(keys) == 1:
                out[keys[0]] = count
        return out

    def freeze(self, start: datetime | None, suppressed: int) -> VllmStats:
        names = engine_names(self.engines)
        warned = self._warned_counts()
        engines = tuple(
            EngineStats(
                name,
                e.samples,
                e.running_sum,
                e.running_max,
                e.waiting_sum,
                e.waiting_max,
                e.gen_sum,
                e.gen_max,
                e.prompt_sum,
                e.kv_sum,
                e.prefix_sum,
                e.prefix_n,
                e.preempt_max,
                _preempt_total(e, warned.get(key)),
            )
            for name, key, e in sorted((names[k], k, e) for k, e in self.engines.items())
        )
        keys = sorted(self.buckets)
        t_start = start.timestamp() if start else (keys[0] * BUCKET_S if keys else 0.0)
        timeline = tuple(
            VllmTimeBucket(
                t_s=float(k * BUCKET_S - t_start),
                samples=b.n,
                gen_tps_mean=b.gen_sum / b.n,
                gen_tps_min=b.gen_min,
                gen_tps_max=b.gen_max,
                running_mean=b.running_sum / b.n,
                waiting_mean=b.waiting_sum / b.n,
                kv_pct_mean=b.kv_sum / b.n,
                prefix_pct_mean=b.prefix_sum / b.prefix_n if b.prefix_n else None,
            )
            for k in keys
            if (b := self.buckets[k]).n
        )
        return VllmStats(
            engines,
            timeline,
            self.aggregated_lines,
            suppressed,
            self.step_lines,
            {k: self.step_stats[k] for k in sorted(self.step_stats)},
        )


def _preempt_total(e: _Engine, warned: float | None) -> float | None:
    """An engine's preemptions: the sum of its lines' counts, or the count its warnings
    said (a cumulative count: the greatest), whichever is greater; None: neither said any."""
    summed = e.preempt_sum if e.preempt_max is not None else None
    if warned is None or summed is None:
        return summed if warned is None else warned
    return max(summed, warned)
