"""vLLM figures: per-job and per-engine means of the engine stat lines, and the verdict."""

from __future__ import annotations

import math
from collections.abc import Iterable

from sitegen.model.numbers import fixed
from sitegen.model.parsed import VllmStats

# vLLM utilization verdict. Per-engine means over all stat lines of the job.
SATURATED_WAITING_MEAN = 1.0  # requests queue on average: engines are the bottleneck
STARVED_GEN_TPS = 300.0  # nothing queued and decoding this slowly: engines wait for work
VERDICT_THRESHOLDS = {
    "saturated_waiting_mean": SATURATED_WAITING_MEAN,
    "starved_gen_throughput_tps": STARVED_GEN_TPS,
}


def verdict(samples: int, waiting_mean: float | None, gen_mean: float | None) -> tuple[str, str]:
    """A label and a sentence; thresholds in :data:`VERDICT_THRESHOLDS`."""
    if not samples or waiting_mean is None or gen_mean is None:
        return "no data", "No per-engine vLLM stat lines in this log."
    if waiting_mean >= SATURATED_WAITING_MEAN:
        return "saturated", (
            f"Engines saturated: on average {fixed(waiting_mean, 1)} requests wait "
            f"(≥ {SATURATED_WAITING_MEAN:g}); generation is the bottleneck."
        )
    if gen_mean < STARVED_GEN_TPS:
        return "starved", (
            f"Engines starved: almost nothing waits (mean {fixed(waiting_mean, 2)}) and each decodes "
            f"{fixed(gen_mean, 0)} tok/s (< {STARVED_GEN_TPS:g}); they wait for work."
        )
    return "spare capacity", (
        f"Spare capacity: almost nothing waits (mean {fixed(waiting_mean, 2)}) at {fixed(gen_mean, 0)} tok/s per engine."
    )


def _total(xs: Iterable[float | None]) -> float | None:
    """The sum of the engines' totals that are known; None when no engine reports one."""
    known = [x for x in xs if x is not None]
    return math.fsum(known) if known else None


def vllm_summary(v: VllmStats) -> dict:
    """Per-job and per-engine means of the per-engine stat lines, plus a verdict."""
    n = sum(e.samples for e in v.engines)
    prefix_n = sum(e.prefix_samples for e in v.engines)

    def m(total: float, count: int) -> float | None:
        return total / count if count else None

    running = m(sum(e.running_sum for e in v.engines), n)
    waiting = m(sum(e.waiting_sum for e in v.engines), n)
    gen = m(sum(e.gen_tps_sum for e in v.engines), n)
    label, reason = verdict(n, waiting, gen)
    return {
        "samples": n,
        "engines": len(v.engines),
        "running_mean": running,
        "running_max": max((e.running_max for e in v.engines), default=None),
        "waiting_mean": waiting,
        "waiting_max": max((e.waiting_max for e in v.engines), default=None),
        "gen_throughput_mean": gen,
        "gen_throughput_max": max((e.gen_tps_max for e in v.engines), default=None),
        "prompt_throughput_mean": m(sum(e.prompt_tps_sum for e in v.engines), n),
        "kv_cache_pct_mean": m(sum(e.kv_pct_sum for e in v.engines), n),
        "prefix_hit_pct_mean": m(sum(e.prefix_pct_sum for e in v.engines), prefix_n),
        "preemptions_total": _total(e.preemptions_total for e in v.engines),
        "verdict": label,
        "verdict_reason": reason,
        "verdict_thresholds": VERDICT_THRESHOLDS,
        "aggregated_lines": v.aggregated_lines,
        "suppressed_copies": v.suppressed_copies,
        "step_lines": v.step_lines,
        "step_stats": {str(k): d for k, d in v.step_stats.items()},
        "per_engine": [
            {
                "engine": e.engine,
                "samples": e.samples,
                "running_mean": e.running_sum / e.samples,
                "running_max": e.running_max,
                "waiting_mean": e.waiting_sum / e.samples,
                "waiting_max": e.waiting_max,
                "gen_throughput_mean": e.gen_tps_sum / e.samples,
                "gen_throughput_max": e.gen_tps_max,
                "kv_cache_pct_mean": e.kv_pct_sum / e.samples,
                "prefix_hit_pct_mean": e.prefix_pct_sum / e.prefix_samples
                if e.prefix_samples
                else None,
                "preemptions_total": e.preemptions_total,
                "preemptions_max": e.preemptions_max,
            }
            for e in v.engines
        ],
        "timeline": {
            "t_s": [b.t_s for b in v.timeline],
            "samples": [b.samples for b in v.timeline],
            "gen_throughput_mean": [b.gen_tps_mean for b in v.timeline],
            "gen_throughput_min": [b.gen_tps_min for b in v.timeline],
            "gen_throughput_max": [b.gen_tps_max for b in v.timeline],
            "running_mean": [b.running_mean for b in v.timeline],
            "waiting_mean": [b.waiting_mean for b in v.timeline],
            "kv_cache_pct_mean": [b.kv_pct_mean for b in v.timeline],
            "prefix_hit_pct_mean": [b.prefix_pct_mean for b in v.timeline],
        },
    }
