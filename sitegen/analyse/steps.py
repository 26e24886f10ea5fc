"""Per-step figures: metric statistics, columns, the headline and the timer tree.

Pure functions from the model to JSON-ready dicts. Non-finite values are
left out of every statistic (``count`` says how many values were finite)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from sitegen.model.parsed import MetricBlock
from sitegen.model.vocabulary import (
    GEN_WAIT,
    REWARD,
    STALENESS,
    STALENESS_MAX,
    STEP_TIME,
    SYNC_GEN_WAIT,
    TOKENS,
    gen_wait_key,
    is_duration,
    is_finite,
    pass_at_k,
    pass_at_key,
)

# The fully-async trainer's timers (docs/formats.md §3): parent -> children.
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
# The synchronous trainer's (docs/formats.md §3, read from SkyRL's trainer.py): generation,
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


def finite(values: Iterable[object]) -> list[float]:
    """The finite numbers among ``values`` (:func:`is_finite` decides), as floats. (Most
    per-step values are None, a metric not logged at that step: passed over before the call.)"""
    return [float(v) for v in values if v is not None and is_finite(v)]


def summarize(values: Iterable[object]) -> dict:
    """mean, sample std (None below 2 values), min, max, count of finite values."""
    xs = finite(values)
    n = len(xs)
    if not n:
        return {"mean": None, "std": None, "min": None, "max": None, "count": 0}
    mean = math.fsum(xs) / n
    return {
        "mean": mean,
        # two-pass sample std in floats (statistics.stdev is exact but far slower)
        "std": math.sqrt(math.fsum([(x - mean) ** 2 for x in xs]) / (n - 1)) if n >= 2 else None,
        "min": min(xs),
        "max": max(xs),
        "count": n,
    }


def metric_names(blocks: Sequence[MetricBlock]) -> list[str]:
    return sorted({k for b in blocks for k in b.metrics})


def metric_summary(blocks: Sequence[MetricBlock]) -> dict[str, dict]:
    """Per-metric statistics over the blocks' steps."""
    rows = [b.metrics for b in blocks]
    return {name: summarize([m.get(name) for m in rows]) for name in metric_names(blocks)}


def series(blocks: Sequence[MetricBlock]) -> dict[str, list]:
    """Columnar per-step values: ``{"step": [...], name: [...]}``, None where absent."""
    out: dict[str, list] = {"step": [b.step for b in blocks]}
    out.update((name, [b.metrics.get(name) for b in blocks]) for name in metric_names(blocks))
    return out


def _values(blocks: Sequence[MetricBlock], name: str) -> list[float]:
    return finite([b.metrics.get(name) for b in blocks])


def _last(blocks: Sequence[MetricBlock], name: str) -> float | None:
    """The metric's value at the last step that logged it; None when that value is no finite
    number (a run that diverged at its end does not show the step before's value as its last)."""
    v = next((b.metrics[name] for b in reversed(blocks) if name in b.metrics), None)
    return float(v) if v is not None and is_finite(v) else None


def _mean(xs: list[float]) -> float | None:
    return math.fsum(xs) / len(xs) if xs else None


def headline(blocks: Sequence[MetricBlock]) -> dict:
    """The figures that summarise a job or run in tables and previews."""
    rewards = _values(blocks, REWARD)
    step_times = _timer_values(blocks, STEP_TIME)
    names = metric_names(blocks)
    pk = pass_at_key(names)
    wait = gen_wait_key(names)
    stale_max = _values(blocks, STALENESS_MAX)
    return {
        "steps": len(blocks),
        "first_step": blocks[0].step if blocks else None,
        "last_step": blocks[-1].step if blocks else None,
        "reward_mean": _mean(rewards),
        "reward_max": max(rewards) if rewards else None,
        "reward_last": _last(blocks, REWARD),
        "pass_at_k": pass_at_k(pk),
        "pass_at_k_mean": _mean(_values(blocks, pk)) if pk else None,
        "total_time_s": math.fsum(step_times) if step_times else None,
        "step_time_mean_s": _mean(step_times),
        "gen_wait_mean_s": _mean(_timer_values(blocks, wait)),
        "gen_wait_share": gen_wait_share(blocks, wait),
        "avg_tokens_mean": _mean(_values(blocks, TOKENS)),
        "staleness_mean": _mean(_values(blocks, STALENESS)),
        # the worst step: what the trainer's max_staleness_steps limit is held to
        "staleness_max": max(stale_max) if stale_max else None,
    }


def gen_wait_share(blocks: Sequence[MetricBlock], wait: str) -> float | None:
    """Σ ``wait`` / Σ ``timing/step`` over the steps where both are usable timers (the
    overview's figure, and what the ``gen_wait_high`` finding holds to its threshold)."""
    paired = [
        b
        for b in blocks
        if is_duration(b.metrics.get(wait)) and is_duration(b.metrics.get(STEP_TIME))
    ]
    step_total = math.fsum(float(b.metrics[STEP_TIME]) for b in paired)
    return (
        math.fsum(float(b.metrics[wait]) for b in paired) / step_total if step_total > 0 else None
    )


# -- timing ------------------------------------------------------------------------------


def timing_tree(blocks: Sequence[MetricBlock]) -> dict:
    """The timer tree over steps that logged ``timing/step``.

    Each node: ``total_s`` (sum over those steps), ``mean_s`` (over steps where it was
    logged), ``count``, ``share_of_parent`` and ``share_of_step`` (time-weighted: total /
    step total), ``mean_step_share`` (the mean of the per-step percentages, as the old
    report printed it), ``children``. Every parent gets a ``(rest)`` child for time its
    children do not cover, so shares at each level add up to 1. A timer's name is unique in
    the tree (its ``timing/<name>`` key is one flat namespace; the tree's shape comes from
    the static :data:`TIMER_TREE` / :data:`SYNC_TIMER_TREE`), which the chart relies on."""
    tree, outside_names = timer_tree_of(blocks)
    # each step that logged its time: (its metrics, that time)
    steps = [(b.metrics, float(t)) for b in blocks if is_duration(t := b.metrics.get(STEP_TIME))]
    step_total = math.fsum([t for _, t in steps])
    known = {"step"} | {c for cs in tree.values() for c in cs}

    def node(name: str, parent_total: float | None) -> dict | None:
        key = f"timing/{name}"
        timed = [
            (float(v), t) for m, t in steps if (v := m.get(key)) is not None and is_duration(v)
        ]
        if not timed:
            return None
        present = [v for v, _ in timed]
        total = math.fsum(present)
        ratios = [v / t for v, t in timed if t > 0]
        out = _timer_node(name, total, len(present), parent_total, step_total, _mean(ratios))
        kids = [k for k in (node(c, total) for c in tree.get(name, ())) if k]
        if kids:
            rest = total - math.fsum(k["total_s"] for k in kids)
            kids.append(_timer_node(UNACCOUNTED, rest, len(present), total, step_total, None))
            out["children"] = kids
        return out

    root = node("step", None) if steps else None
    timers = {n.removeprefix("timing/") for n in metric_names(blocks) if n.startswith("timing/")}
    others = sorted(timers - known - set(outside_names))
    outside = []
    for name in (*outside_names, *others):
        key = f"timing/{name}"
        xs = _timer_values(blocks, key)
        if xs or name in others:  # (a known timer with no usable value is left out)
            # the old report's figure: over the steps that logged it, the mean of its share
            ratios = [float(v) / t for m, t in steps if t > 0 and is_duration(v := m.get(key))]
            outside.append(
                {
                    "name": name,
                    "total_s": math.fsum(xs),
                    "mean_s": _mean(xs),
                    "count": len(xs),
                    "share_of_step": math.fsum(xs) / step_total if step_total and xs else None,
                    "mean_step_share": _mean(ratios),
                }
            )
    return {"steps": len(steps), "step_total_s": step_total, "tree": root, "outside_step": outside}


def timer_tree_of(
    blocks: Sequence[MetricBlock],
) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...]]:
    """The trainer's timer tree and its outside-step timers, chosen from the keys present.

    ``wait_for_generation_buffer`` exists only in the fully-async trainer and ``generate``
    only in the synchronous one (docs/formats.md §3); with neither, the fully-async tree."""
    names = {k for b in blocks for k in b.metrics if k.startswith("timing/")}
    if GEN_WAIT not in names and SYNC_GEN_WAIT in names:
        return SYNC_TIMER_TREE, SYNC_OUTSIDE_STEP
    return TIMER_TREE, OUTSIDE_STEP


def _timer_values(blocks: Sequence[MetricBlock], name: str) -> list[float]:
    return [float(v) for b in blocks if (v := b.metrics.get(name)) is not None and is_duration(v)]


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
