"""Both trainers' timer trees, chosen from the keys present; bad timer values left out."""

from __future__ import annotations

import math

import pytest

from sitegen import analyse
from sitegen.model.parsed import MetricBlock
from tests.read.test_logparse import block, parse

SYNC = {
    "timing/step": 100.0,
    "timing/generate": 40.0,
    "timing/postprocess_generator_output": 2.0,
    "timing/convert_to_training_input": 3.0,
    "timing/fwd_logprobs_values_reward": 10.0,
    "timing/compute_advantages_and_returns": 1.0,
    "timing/train_critic_and_policy": 30.0,
    "timing/policy_train": 29.0,
    "timing/save_checkpoints": 6.0,
    "timing/cleanup_old_checkpoints": 1.0,
    "timing/sync_weights": 5.0,
    "timing/eval": 12.0,
}


def _node(tree: dict, name: str) -> dict:
    for c in tree["children"]:
        if c["name"] == name:
            return c
    raise KeyError(name)


def test_synchronous_tree_puts_generate_and_checkpoints_inside_step():
    blocks = [MetricBlock(1, SYNC, 1), MetricBlock(2, {**SYNC, "timing/step": 110.0}, 9)]
    t = analyse.timing_tree(blocks)
    root = t["tree"]
    names = [c["name"] for c in root["children"]]
    assert names[:3] == ["generate", "postprocess_generator_output", "convert_to_training_input"]
    assert "save_checkpoints" in names and names[-1] == "(rest)"
    assert _node(root, "generate")["total_s"] == 80.0
    assert _node(root, "generate")["share_of_parent"] == pytest.approx(80 / 210)
    # rest = 210 - (80+4+6+20+2+60+12+10) = 16; shares at each level add up to 1
    assert _node(root, "(rest)")["total_s"] == pytest.approx(16.0)
    assert math.fsum(c["share_of_parent"] for c in root["children"]) == pytest.approx(1.0)
    ck = _node(root, "save_checkpoints")
    assert [c["name"] for c in ck["children"]] == ["cleanup_old_checkpoints", "(rest)"]
    tcp = _node(root, "train_critic_and_policy")
    assert [c["name"] for c in tcp["children"]] == ["policy_train", "(rest)"]
    assert [o["name"] for o in t["outside_step"]] == ["eval"]
    h = analyse.headline(blocks)
    assert h["gen_wait_mean_s"] == 40.0 and h["gen_wait_share"] == pytest.approx(80 / 210)


def test_fully_async_tree_when_its_wait_timer_is_present():
    m = {
        "timing/step": 10.0,
        "timing/wait_for_generation_buffer": 4.0,
        "timing/save_checkpoints": 2.0,
    }
    t = analyse.timing_tree([MetricBlock(1, m, 1)])
    assert [c["name"] for c in t["tree"]["children"]] == ["wait_for_generation_buffer", "(rest)"]
    assert [o["name"] for o in t["outside_step"]] == ["save_checkpoints"]
    assert analyse.headline([MetricBlock(1, m, 1)])["gen_wait_share"] == 0.4


def test_negative_and_non_finite_timers_are_left_out_with_a_warning():
    log = parse(
        block(1, {"timing/step": "10.0000", "timing/sync_weights": "-3.0000"})
        + block(2, {"timing/step": "-5.0000", "timing/sync_weights": "2.0000"})
        + block(3, {"timing/step": "nan", "timing/sync_weights": "1.0000"})
    )
    assert sum("left out of timing sums" in w.message for w in log.warnings) == 3
    t = analyse.timing_tree(log.blocks)
    assert t["steps"] == 1 and t["step_total_s"] == 10.0
    assert analyse.headline(log.blocks)["total_time_s"] == 10.0
    assert t["tree"]["total_s"] == 10.0 and t["tree"]["children"] == []  # -3 s not counted


def test_compare_page_overlays_the_trainers_own_generation_wait():
    from sitegen.pages.make import compare_metrics

    assert compare_metrics({"timing/generate": {}})["generation wait (s)"] == "timing/generate"
    both = {"timing/generate": {}, "timing/wait_for_generation_buffer": {}}
    assert compare_metrics(both)["generation wait (s)"] == "timing/wait_for_generation_buffer"


def test_a_timer_outside_the_step_has_the_old_reports_mean_per_step_share():
    # the old report's "Avg % of Step Time" of save_checkpoints: its mean over the steps
    # that saved of save / step (10 % and 20 % → 15 %), beside the time-weighted share
    # (20 s of 750 s)
    times = [100.0, 200.0, 50.0, 400.0]
    saves = {1: 10.0, 3: 10.0}
    blocks = [
        MetricBlock(
            i,
            {"timing/step": t, **({"timing/save_checkpoints": saves[i]} if i in saves else {})},
            i,
        )
        for i, t in enumerate(times, 1)
    ]
    (o,) = analyse.timing_tree(blocks)["outside_step"]
    assert (o["name"], o["total_s"], o["count"]) == ("save_checkpoints", 20.0, 2)
    assert o["share_of_step"] == pytest.approx(20.0 / 750)
    assert o["mean_step_share"] == pytest.approx(0.15)
