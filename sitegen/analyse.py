"""The analyses of the reference report, computed right.

Pure functions from the model to JSON-ready dicts. Non-finite values are
left out of every statistic (``count`` says how many values were finite).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence

from sitegen.model.parsed import BatchCounts, MetricBlock, ParsedLog, TrialSet, VllmStats
from sitegen.model.vocabulary import (
    GEN_WAIT,
    REWARD,
    STALENESS,
    STEP_TIME,
    SYNC_GEN_WAIT,
    TOKENS,
    exception_kind,
    gen_wait_key,
    is_finite,
    pass_at_k,
    pass_at_key,
)

# The fully-async trainer's timers (formats.md §3): parent -> children.
TIMER_TREE: dict[str, tuple[str, ...]] = {
    "step": (
        "wait_for_generation_buffer",
        "convert_to_training_input",
        "run_training",
        "sync_weights",
    ),
    "run_training": (
        "fwd_logprobs_values_reward",
        "apply_reward_kl_penalty",
        "compute_advantages_and_returns",
        "train_critic_and_policy",
    ),
    "train_critic_and_policy": ("policy_train", "critic_train"),
}
OUTSIDE_STEP = ("save_checkpoints", "save_hf_model", "cleanup_old_checkpoints", "eval")
# The synchronous trainer's (formats.md §8, read from SkyRL's trainer.py): generation,
# checkpoints and the reference update happen inside `step`; only `eval` is outside.
SYNC_TIMER_TREE: dict[str, tuple[str, ...]] = {
    "step": (
        "generate",
        "postprocess_generator_output",
        "convert_to_training_input",
        "fwd_logprobs_values_reward",
        "apply_reward_kl_penalty",
        "compute_advantages_and_returns",
        "train_critic_and_policy",
        "save_checkpoints",
        "save_hf_model",
        "update_ref_with_policy",
        "sync_weights",
    ),
    "train_critic_and_policy": ("policy_train", "critic_train"),
    "save_checkpoints": ("cleanup_old_checkpoints",),
}
SYNC_OUTSIDE_STEP = ("eval",)
UNACCOUNTED = "(rest)"

# vLLM utilization verdict. Per-engine means over all stat lines of the job.
SATURATED_WAITING_MEAN = 1.0  # requests queue on average: engines are the bottleneck
STARVED_GEN_TPS = 300.0  # nothing queued and decoding this slowly: engines wait for work
VERDICT_THRESHOLDS = {
    "saturated_waiting_mean": SATURATED_WAITING_MEAN,
    "starved_gen_throughput_tps": STARVED_GEN_TPS,
}


def finite(values: Iterable[object]) -> list[float]:
    return [float(v) for v in values if is_finite(v)]


def summarize(values: Iterable[object]) -> dict:
    """mean, sample std (None below 2 values), min, max, count of finite values."""
    xs = finite(values)
    n = len(xs)
    if not n:
        return {"mean": None, "std": None, "min": None, "max": None, "count": 0}
    mean = math.fsum(xs) / n
    return {
        "mean": mean,
        # two-pass sample std in floats (statistics.stdev is exact but ~20x slower)
        "std": math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1)) if n >= 2 else None,
        "min": min(xs),
        "max": max(xs),
        "count": n,
    }


def metric_names(blocks: Sequence[MetricBlock]) -> list[str]:
    names: set[str] = set()
    for b in blocks:
        names.update(b.metrics)
    return sorted(names)


def metric_summary(blocks: Sequence[MetricBlock]) -> dict[str, dict]:
    """Per-metric statistics over the blocks' steps."""
    return {name: summarize(b.metrics.get(name) for b in blocks) for name in metric_names(blocks)}


def series(blocks: Sequence[MetricBlock]) -> dict[str, list]:
    """Columnar per-step values: ``{"step": [...], name: [...]}``, None where absent."""
    names = metric_names(blocks)
    out: dict[str, list] = {"step": [b.step for b in blocks]}
    for name in names:
        out[name] = [b.metrics.get(name) for b in blocks]
    return out


def _values(blocks: Sequence[MetricBlock], name: str) -> list[float]:
    return finite(b.metrics.get(name) for b in blocks)


def _mean(xs: list[float]) -> float | None:
    return math.fsum(xs) / len(xs) if xs else None


def headline(blocks: Sequence[MetricBlock]) -> dict:
    """The figures that summarise a job or run in tables and previews."""
    rewards = _values(blocks, REWARD)
    step_times = _timer_values(blocks, STEP_TIME)
    pk = pass_at_key(metric_names(blocks))
    wait = gen_wait_key(metric_names(blocks))
    paired = [
        b for b in blocks if _timer_ok(b.metrics.get(wait)) and _timer_ok(b.metrics.get(STEP_TIME))
    ]
    wait_total = math.fsum(float(b.metrics[wait]) for b in paired)
    step_total_paired = math.fsum(float(b.metrics[STEP_TIME]) for b in paired)
    return {
        "steps": len(blocks),
        "first_step": blocks[0].step if blocks else None,
        "last_step": blocks[-1].step if blocks else None,
        "reward_mean": _mean(rewards),
        "reward_max": max(rewards) if rewards else None,
        "reward_last": rewards[-1] if rewards else None,
        "pass_at_k": pass_at_k(pk),
        "pass_at_k_mean": _mean(_values(blocks, pk)) if pk else None,
        "total_time_s": math.fsum(step_times) if step_times else None,
        "step_time_mean_s": _mean(step_times),
        "gen_wait_mean_s": _mean(_timer_values(blocks, wait)),
        "gen_wait_share": wait_total / step_total_paired if step_total_paired > 0 else None,
        "avg_tokens_mean": _mean(_values(blocks, TOKENS)),
        "staleness_mean": _mean(_values(blocks, STALENESS)),
    }


# -- timing ------------------------------------------------------------------------------


def timing_tree(blocks: Sequence[MetricBlock]) -> dict:
    """The timer tree over steps that logged ``timing/step``.

    Each node: ``total_s`` (sum over those steps), ``mean_s`` (over steps
    where it was logged), ``count``, ``share_of_parent`` and ``share_of_step``
    (time-weighted: total / step total), ``mean_step_share`` (the mean of the
    per-step percentages, as the old report printed it), ``children``. Every
    parent gets a ``(rest)`` child for time its children do not cover, so
    shares at each level add up to 1.
    """
    tree, outside_names = timer_tree_of(blocks)
    steps = [b for b in blocks if _timer_ok(b.metrics.get(STEP_TIME))]
    step_total = math.fsum(float(b.metrics[STEP_TIME]) for b in steps)
    known = {"step"} | {c for cs in tree.values() for c in cs}

    def node(name: str, parent_total: float | None) -> dict | None:
        key = f"timing/{name}"
        present = [float(v) for b in steps if _timer_ok(v := b.metrics.get(key))]
        if not present:
            return None
        total = math.fsum(present)
        ratios = [
            float(b.metrics[key]) / float(b.metrics[STEP_TIME])
            for b in steps
            if _timer_ok(b.metrics.get(key)) and float(b.metrics[STEP_TIME]) > 0
        ]
        out = _timer_node(name, total, len(present), parent_total, step_total, _mean(ratios))
        kids = [k for k in (node(c, total) for c in tree.get(name, ())) if k]
        if kids:
            rest = total - math.fsum(k["total_s"] for k in kids)
            kids.append(_timer_node(UNACCOUNTED, rest, len(present), total, step_total, None))
            out["children"] = kids
        return out

    root = node("step", None) if steps else None
    outside = []
    for name in outside_names:
        xs = _timer_values(blocks, f"timing/{name}")
        if xs:
            outside.append(
                {
                    "name": name,
                    "total_s": math.fsum(xs),
                    "mean_s": _mean(xs),
                    "count": len(xs),
                    "share_of_step": math.fsum(xs) / step_total if step_total else None,
                }
            )
    others = sorted(
        n[len("timing/") :]
        for n in metric_names(blocks)
        if n.startswith("timing/")
        and n[len("timing/") :] not in known
        and n[len("timing/") :] not in outside_names
    )
    for name in others:
        xs = _timer_values(blocks, f"timing/{name}")
        outside.append(
            {
                "name": name,
                "total_s": math.fsum(xs),
                "mean_s": _mean(xs),
                "count": len(xs),
                "share_of_step": math.fsum(xs) / step_total if step_total and xs else None,
            }
        )
    return {"steps": len(steps), "step_total_s": step_total, "tree": root, "outside_step": outside}


def timer_tree_of(
    blocks: Sequence[MetricBlock],
) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...]]:
    """The trainer's timer tree and its outside-step timers, chosen from the keys present.

    ``wait_for_generation_buffer`` exists only in the fully-async trainer and
    ``generate`` only in the synchronous one (formats.md §8); with neither, the
    fully-async tree (the one §3 documents).
    """
    names = {k for b in blocks for k in b.metrics if k.startswith("timing/")}
    if GEN_WAIT not in names and SYNC_GEN_WAIT in names:
        return SYNC_TIMER_TREE, SYNC_OUTSIDE_STEP
    return TIMER_TREE, OUTSIDE_STEP


def _timer_ok(v: object) -> bool:
    """A usable timer value: finite and not negative (a clock step back is no duration)."""
    return is_finite(v) and v >= 0


def _timer_values(blocks: Sequence[MetricBlock], name: str) -> list[float]:
    return [float(v) for b in blocks if _timer_ok(v := b.metrics.get(name))]


def _timer_node(
    name: str,
    total: float,
    count: int,
    parent_total: float | None,
    step_total: float,
    mean_step_share: float | None,
) -> dict:
    return {
        "name": name,
        "total_s": total,
        "mean_s": total / count,
        "count": count,
        "share_of_parent": total / parent_total if parent_total else None,
        "share_of_step": total / step_total if step_total else None,
        "mean_step_share": mean_step_share,
        "children": [],
    }


# -- batches ------------------------------------------------------------------------------


def batch_summary(log: ParsedLog) -> dict:
    """Totals, per step, and the old report's ``batch_errors/*`` statistics over steps."""
    per_step = {str(s): b.to_json() for s, b in log.batches_per_step.items()}
    rows: dict[str, list[float]] = {}
    for b in log.batches_per_step.values():
        for field in ("batches", "instances", "successful", "failed", "masked"):
            rows.setdefault(f"batch_errors/total_{field}", []).append(getattr(b, field))
        for exc, n in b.exceptions.items():
            rows.setdefault(f"batch_errors/avg_{exc}", []).append(
                n / b.batches if b.batches else math.nan
            )
            rows.setdefault(f"batch_errors/total_{exc}", []).append(n)
    return {
        **log.batches.to_json(),
        "per_step": per_step,
        "eval": log.eval_batches.to_json(),
        "summary": {k: summarize(v) for k, v in rows.items()},
    }


def batch_series(per_step: dict[int, BatchCounts]) -> dict[str, list]:
    """Columnar per-step batch errors for charts: one column per exception type."""
    steps = sorted(per_step)
    types = sorted({t for b in per_step.values() for t in b.exceptions})
    out: dict[str, list] = {
        "step": steps,
        "failed": [per_step[s].failed for s in steps],
        "masked": [per_step[s].masked for s in steps],
    }
    for t in types:
        out[t] = [per_step[s].exceptions.get(t, 0) for s in steps]
    return out


# -- vLLM ------------------------------------------------------------------------------------


def verdict(samples: int, waiting_mean: float | None, gen_mean: float | None) -> tuple[str, str]:
    """A label and a sentence; thresholds in :data:`VERDICT_THRESHOLDS`."""
    if not samples or waiting_mean is None or gen_mean is None:
        return "no data", "No per-engine vLLM stat lines in this log."
    if waiting_mean >= SATURATED_WAITING_MEAN:
        return "saturated", (
            f"Engines saturated: on average {waiting_mean:.1f} requests wait "
            f"(≥ {SATURATED_WAITING_MEAN:g}); generation is the bottleneck."
        )
    if gen_mean < STARVED_GEN_TPS:
        return "starved", (
            f"Engines starved: almost nothing waits (mean {waiting_mean:.2f}) and each decodes "
            f"{gen_mean:.0f} tok/s (< {STARVED_GEN_TPS:g}); they wait for work."
        )
    return "spare capacity", (
        f"Spare capacity: almost nothing waits (mean {waiting_mean:.2f}) at {gen_mean:.0f} tok/s per engine."
    )


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


# -- trials ----------------------------------------------------------------------------------


def _turn_stats(xs: list[int]) -> dict:
    if not xs:
        return {"mean": None, "median": None, "count": 0}
    return {
        "mean": math.fsum(xs) / len(xs),
        "median": float(statistics.median(xs)),
        "count": len(xs),
    }


def trial_stats(ts: TrialSet) -> dict:
    """Turns, exceptions (by type and kind), rewards, turns by exception and outcome."""
    res = ts.results
    exceptions = Counter(r.exception or "none" for r in res)
    kinds = Counter(exception_kind(r.exception) for r in res)
    turns = [r.turns for r in res if r.turns is not None]
    rewards = [r.reward for r in res if is_finite(r.reward)]
    success = sum(1 for x in rewards if x > 0)
    by_exc: dict[str, list[int]] = {}
    by_outcome: dict[str, list[int]] = {"success": [], "failure": []}
    for r in res:
        if r.turns is None:
            continue
        by_exc.setdefault(r.exception or "none", []).append(r.turns)
        if is_finite(r.reward):
            by_outcome["success" if r.reward > 0 else "failure"].append(r.turns)
    tstats = summarize(turns)
    return {
        "path": ts.path,
        "total": len(res),
        "malformed": ts.malformed,
        "missing": ts.missing,
        "eval": ts.eval_count,
        "archives": ts.archives,
        "exceptions": dict(sorted(exceptions.items(), key=lambda kv: (-kv[1], kv[0]))),
        "exception_kinds": {
            k: kinds.get(k, 0) for k in ("none", "infrastructure", "model", "other")
        },
        "exception_kind_of": {e: exception_kind(None if e == "none" else e) for e in exceptions},
        "turns": {
            "mean": tstats["mean"],
            "median": float(statistics.median(turns)) if turns else None,
            "std": tstats["std"],
            "min": tstats["min"],
            "max": tstats["max"],
            "count": tstats["count"],
        },
        "turn_histogram": {str(k): v for k, v in sorted(Counter(turns).items())},
        "reward": {
            "mean": _mean(rewards),
            "success_rate": success / len(rewards) if rewards else None,
            "count": len(rewards),
            "success": success,
            "failure": len(rewards) - success,
        },
        "error_rate": (len(res) - exceptions.get("none", 0)) / len(res) if res else None,
        "turns_by_exception": {
            k: _turn_stats(v)
            for k, v in sorted(by_exc.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        },
        "turns_by_outcome": {k: _turn_stats(v) for k, v in by_outcome.items()},
    }
