"""The per-step statistics' quicker column passes give what the value-by-value reference gave.

``finite`` skips None before :func:`is_finite`, ``metric_summary`` builds each column once and
``timing_tree`` pairs each timer with its step's time: the references below are the earlier
definitions, compared on blocks holding every kind of value a metric may have (nan, ±inf,
bools, ints, negative timers, absent keys).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitegen import analyse
from sitegen.analyse import steps
from sitegen.model.parsed import MetricBlock
from sitegen.model.vocabulary import STEP_TIME, is_finite

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000),
    st.floats(-1e6, 1e6),
    st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 0.0, 0, 0.5]),
)
NAMES = st.sampled_from(
    [
        STEP_TIME,
        "timing/wait_for_generation_buffer",
        "timing/run_training",
        "timing/train_critic_and_policy",
        "timing/policy_train",
        "timing/generate",
        "timing/eval",
        "timing/save_checkpoints",
        "timing/odd_one",
        "reward/avg_raw_reward",
        "reward/avg_pass_at_4",
        "policy/policy_kl",
    ]
)
BLOCKS = st.lists(st.dictionaries(NAMES, VALUES, max_size=12), max_size=12).map(
    lambda ms: [MetricBlock(i, m, i) for i, m in enumerate(ms)]
)


def finite_ref(values: Iterable[object]) -> list[float]:
    return [float(v) for v in values if is_finite(v)]


def summarize_ref(values: Iterable[object]) -> dict:
    xs = finite_ref(values)
    n = len(xs)
    if not n:
        return {"mean": None, "std": None, "min": None, "max": None, "count": 0}
    mean = math.fsum(xs) / n
    return {
        "mean": mean,
        "std": math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1)) if n >= 2 else None,
        "min": min(xs),
        "max": max(xs),
        "count": n,
    }


def metric_summary_ref(blocks: Sequence[MetricBlock]) -> dict[str, dict]:
    return {
        name: summarize_ref(b.metrics.get(name) for b in blocks)
        for name in steps.metric_names(blocks)
    }


def timer_ok_ref(v: object) -> bool:
    return is_finite(v) and v >= 0  # type: ignore[operator]


def node_ref(blocks: Sequence[MetricBlock], key: str) -> tuple[list[float], list[float]]:
    """A timer's values and per-step ratios, as timing_tree computed them value by value."""
    on = [b for b in blocks if timer_ok_ref(b.metrics.get(STEP_TIME))]
    present = [float(v) for b in on if timer_ok_ref(v := b.metrics.get(key))]
    ratios = [
        float(b.metrics[key]) / float(b.metrics[STEP_TIME])
        for b in on
        if timer_ok_ref(b.metrics.get(key)) and float(b.metrics[STEP_TIME]) > 0
    ]
    return present, ratios


@SETTINGS
@given(st.lists(VALUES, max_size=30))
def test_finite_and_summarize_equal_the_reference(values):
    assert analyse.finite(values) == finite_ref(values)
    assert analyse.finite(iter(values)) == finite_ref(values)  # any iterable, as before
    assert analyse.summarize(values) == summarize_ref(values)


def test_finite_leaves_out_bools_none_and_non_finite_and_makes_ints_floats():
    out = analyse.finite([None, True, False, math.nan, math.inf, -math.inf, 3, -0.0, 2.5])
    assert out == [3.0, -0.0, 2.5]
    assert [type(x) for x in out] == [float, float, float]


@SETTINGS
@given(BLOCKS)
def test_metric_summary_equals_the_reference(blocks):
    assert analyse.metric_summary(blocks) == metric_summary_ref(blocks)


def _nodes(tree: dict | None) -> list[dict]:
    if tree is None:
        return []
    return [tree] + [n for c in tree.get("children", []) for n in _nodes(c)]


@SETTINGS
@given(BLOCKS)
def test_timing_tree_equals_the_reference(blocks):
    t = analyse.timing_tree(blocks)
    on = [b for b in blocks if timer_ok_ref(b.metrics.get(STEP_TIME))]
    step_total = math.fsum(float(b.metrics[STEP_TIME]) for b in on)
    assert (t["steps"], t["step_total_s"]) == (len(on), step_total)
    for n in _nodes(t["tree"]):
        if n["name"] == steps.UNACCOUNTED:
            continue
        present, ratios = node_ref(blocks, f"timing/{n['name']}")
        assert (n["total_s"], n["count"]) == (math.fsum(present), len(present))
        assert n["mean_step_share"] == (math.fsum(ratios) / len(ratios) if ratios else None)
    for o in t["outside_step"]:
        xs = [float(v) for b in blocks if timer_ok_ref(v := b.metrics.get(f"timing/{o['name']}"))]
        assert (o["total_s"], o["count"]) == (math.fsum(xs), len(xs))
        _, ratios = node_ref(blocks, f"timing/{o['name']}")
        assert o["mean_step_share"] == (math.fsum(ratios) / len(ratios) if ratios else None)
