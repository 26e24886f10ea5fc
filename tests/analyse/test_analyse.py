import math

import pytest

from sitegen.analyse import summarize, timing_tree, trial_stats, verdict
from sitegen.model.parsed import MetricBlock, TrialResult, TrialSet


def test_summarize_sample_std_and_non_finite():
    s = summarize([1.0, 2.0, 3.0, math.nan, math.inf, None])
    assert s == {"mean": 2.0, "std": 1.0, "min": 1.0, "max": 3.0, "count": 3}
    assert summarize([5.0])["std"] is None
    assert summarize([])["count"] == 0


def test_timing_tree_no_double_counting():
    m = {
        "timing/step": 100.0,
        "timing/wait_for_generation_buffer": 60.0,
        "timing/run_training": 30.0,
        "timing/policy_train": 20.0,
        "timing/train_critic_and_policy": 25.0,
        "timing/sync_weights": 5.0,
        "timing/save_checkpoints": 7.0,
    }
    t = timing_tree([MetricBlock(1, m, 1), MetricBlock(2, m, 2)])
    tree = t["tree"]
    shares = {c["name"]: c["share_of_step"] for c in tree["children"]}
    assert shares == pytest.approx(
        {
            "wait_for_generation_buffer": 0.6,
            "run_training": 0.3,
            "sync_weights": 0.05,
            "(rest)": 0.05,
        }
    )
    rt = next(c for c in tree["children"] if c["name"] == "run_training")
    assert [c["name"] for c in rt["children"]] == ["train_critic_and_policy", "(rest)"]
    assert (
        t["outside_step"][0]["name"] == "save_checkpoints"
        and t["outside_step"][0]["total_s"] == 14.0
    )


def test_verdict_thresholds():
    assert verdict(10, 1.0, 100.0)[0] == "saturated"
    assert verdict(10, 0.5, 299.0)[0] == "starved"
    assert verdict(10, 0.5, 301.0)[0] == "spare capacity"
    assert verdict(0, None, None)[0] == "no data"


def test_trial_stats_negative_reward_is_failure():
    rs = [
        TrialResult("a", "t", 1.0, None, 2, 1, 1, 1.0, False),
        TrialResult("b", "t", -1.0, None, 4, 1, 1, 1.0, False),
        TrialResult("c", "t", None, "DaytonaError", None, 1, 1, 1.0, False),
        TrialResult("d", "t", 0.0, "AgentTimeoutError", 1, 1, 1, 1.0, False),
    ]
    s = trial_stats(TrialSet("x", tuple(rs), 0, 0, 0, 0, ()))
    assert s["reward"] == {
        "mean": 0.0,
        "success_rate": pytest.approx(1 / 3),
        "count": 3,
        "success": 1,
        "failure": 2,
    }
    assert s["turns_by_outcome"]["failure"] == {"mean": 2.5, "median": 2.5, "count": 2}
    assert s["exception_kinds"] == {"none": 2, "infrastructure": 1, "model": 1, "other": 0}
    assert s["error_rate"] == 0.5
