"""The analyse stage's figures of batches, vLLM engines and trials, against values worked out
by hand (the end-to-end tests compare them with synth's truth; these pin each figure and each
edge: no batches, an engine without prefix samples, ungraded and unturned trials)."""

from __future__ import annotations

import math

import pytest
from msgspec.structs import replace

from sitegen.analyse import batch_series, batch_summary, trial_stats, verdict, vllm_summary
from sitegen.model.parsed import (
    BatchCounts,
    EngineStats,
    MetricBlock,
    TrialResult,
    TrialSet,
    VllmStats,
    VllmTimeBucket,
)
from sitegen.read.logparse import LogParser
from sitegen.redact import Redactor


def _log(per_step: dict[int, BatchCounts], total: BatchCounts, evals: BatchCounts, steps=None):
    """A log with these batches and a metric block at each step of ``steps`` (by default
    each step that has batches: every step logged)."""
    log = LogParser("x.out", Redactor(), year_hint=2026).finish(0, 0.0)
    blocks = tuple(MetricBlock(s, {}, s) for s in (per_step if steps is None else steps))
    return replace(log, blocks=blocks, batches_per_step=per_step, batches=total, eval_batches=evals)


STEP_1 = BatchCounts(2, 16, 13, 2, 1, {"AgentTimeoutError": 2, "DaytonaError": 1})
STEP_3 = BatchCounts(1, 8, 8, 0, 0, {})
STEP_4 = BatchCounts(0, 0, 0, 0, 0, {"AgentTimeoutError": 4})  # (counts without a batch line)


def test_batch_summary_totals_per_step_and_statistics_over_steps():
    total = BatchCounts(3, 24, 21, 2, 1, {"AgentTimeoutError": 2, "DaytonaError": 1})
    evals = BatchCounts(1, 4, 4, 0, 0, {})
    s = batch_summary(_log({1: STEP_1, 3: STEP_3}, total, evals))
    assert {k: s[k] for k in ("batches", "instances", "successful", "failed", "masked")} == {
        "batches": 3,
        "instances": 24,
        "successful": 21,
        "failed": 2,
        "masked": 1,
    }
    assert s["exceptions"] == {"AgentTimeoutError": 2, "DaytonaError": 1}
    assert s["per_step"] == {"1": STEP_1.to_json(), "3": STEP_3.to_json()}
    assert s["eval"] == evals.to_json()
    summary = s["summary"]
    # over the two steps: 2 and 1 batches, 16 and 8 instances, …
    assert summary["batch_errors/total_batches"] == {
        "mean": 1.5,
        "std": pytest.approx(math.sqrt(0.5)),
        "min": 1.0,
        "max": 2.0,
        "count": 2,
    }
    assert summary["batch_errors/total_instances"]["mean"] == 12.0
    assert summary["batch_errors/total_successful"]["min"] == 8.0
    assert summary["batch_errors/total_failed"]["max"] == 2.0
    assert summary["batch_errors/total_masked"]["mean"] == 0.5
    # an exception's statistics cover the steps that had it: per batch, and in all
    assert summary["batch_errors/avg_AgentTimeoutError"]["mean"] == 1.0  # 2 in 2 batches
    assert summary["batch_errors/avg_DaytonaError"]["mean"] == 0.5
    assert summary["batch_errors/total_AgentTimeoutError"]["count"] == 1
    assert set(summary) == {
        *(
            f"batch_errors/total_{f}"
            for f in ("batches", "instances", "successful", "failed", "masked")
        ),
        *(
            f"batch_errors/{k}_{e}"
            for k in ("avg", "total")
            for e in ("AgentTimeoutError", "DaytonaError")
        ),
    }


def test_the_step_still_generating_at_the_logs_end_is_no_step_of_the_statistics():
    # a job cancelled while generating step 3: its batches so far are on the page (the
    # per-step table and chart say so) but the old report's per-step statistics are over
    # the steps the job logged, 1 and 2, not a step cut short
    partial = BatchCounts(1, 8, 3, 5, 0, {"DaytonaError": 5})
    log = _log({1: STEP_1, 2: STEP_3, 3: partial}, BatchCounts(), BatchCounts(), steps=(1, 2))
    s = batch_summary(log)
    assert set(s["per_step"]) == {"1", "2", "3"}
    assert s["summary"]["batch_errors/total_batches"]["count"] == 2
    assert s["summary"]["batch_errors/total_successful"]["min"] == 8.0
    assert "batch_errors/total_DaytonaError" in s["summary"]  # step 1's
    assert s["summary"]["batch_errors/total_DaytonaError"]["count"] == 1


def test_a_job_that_logged_no_step_has_batches_but_no_statistics():
    # batch lines but no metric block (cancelled while generating its first step, or a
    # log cut before it): every batch is the step still being generated, cut short; the
    # totals and the per-step table keep them, the per-step statistics have no step
    total = BatchCounts(1, 8, 3, 5, 0, {"DaytonaError": 5})
    s = batch_summary(_log({1: total}, total, BatchCounts(), steps=()))
    assert (s["batches"], s["instances"], s["successful"], s["failed"]) == (1, 8, 3, 5)
    assert s["exceptions"] == {"DaytonaError": 5}
    assert s["per_step"] == {"1": total.to_json()}
    assert s["summary"] == {}


def test_an_exception_counted_at_a_step_without_batches_has_no_per_batch_figure():
    s = batch_summary(_log({4: STEP_4}, STEP_4, BatchCounts()))["summary"]
    assert s["batch_errors/avg_AgentTimeoutError"]["count"] == 0  # 4 / 0 batches: no number
    assert s["batch_errors/total_AgentTimeoutError"]["mean"] == 4.0


def test_batch_series_has_a_column_a_exception_zero_where_a_step_had_none():
    out = batch_series({3: STEP_3, 1: STEP_1, 4: STEP_4})
    assert out == {
        "step": [1, 3, 4],
        "failed": [2, 0, 0],
        "masked": [1, 0, 0],
        "AgentTimeoutError": [2, 0, 4],
        "DaytonaError": [1, 0, 0],
    }
    assert batch_series({}) == {"step": [], "failed": [], "masked": []}


def _engine(name: str, samples: int, prefix_samples: int, k: float) -> EngineStats:
    return EngineStats(
        engine=name,
        samples=samples,
        running_sum=10.0 * k,
        running_max=4.0 * k,
        waiting_sum=6.0 * k,
        waiting_max=3.0 * k,
        gen_tps_sum=2000.0 * k,
        gen_tps_max=900.0 * k,
        prompt_tps_sum=100.0 * k,
        kv_pct_sum=200.0 * k,
        prefix_pct_sum=150.0 * k,
        prefix_samples=prefix_samples,
        preemptions_max=k,
        preemptions_total=3 * k,
    )


def test_vllm_preemptions_total_is_unknown_only_when_no_engine_reports_it():
    known, unknown = _engine("1@a", 4, 0, 1.0), _engine("2@b", 4, 0, 2.0)
    unknown = replace(unknown, preemptions_max=None, preemptions_total=None)
    bucket = VllmTimeBucket(60.0, 8, 500.0, 100.0, 900.0, 3.0, 1.8, 60.0, None)
    assert (
        vllm_summary(VllmStats((known, unknown), (bucket,), 0, 0, 0, {}))["preemptions_total"]
        == 3.0
    )
    assert vllm_summary(VllmStats((unknown,), (bucket,), 0, 0, 0, {}))["preemptions_total"] is None


def test_vllm_summary_means_over_every_sample_and_per_engine():
    a, b = _engine("1@10.0.0.1", 4, 3, 1.0), _engine("2@10.0.0.2", 6, 0, 2.0)
    bucket = VllmTimeBucket(60.0, 10, 500.0, 100.0, 900.0, 3.0, 1.8, 60.0, None)
    v = VllmStats((a, b), (bucket,), 2, 7, 1, {5: {"x": 1.0}})
    s = vllm_summary(v)
    assert (s["samples"], s["engines"]) == (10, 2)
    assert s["running_mean"] == 3.0  # (10 + 20) / 10
    assert (s["running_max"], s["waiting_max"], s["gen_throughput_max"]) == (8.0, 6.0, 1800.0)
    assert s["waiting_mean"] == 1.8
    assert s["gen_throughput_mean"] == 600.0
    assert s["prompt_throughput_mean"] == 30.0
    assert s["kv_cache_pct_mean"] == 60.0
    assert s["prefix_hit_pct_mean"] == 150.0  # (150 + 300) over the 3 samples with a prefix
    assert (s["aggregated_lines"], s["suppressed_copies"], s["step_lines"]) == (2, 7, 1)
    assert s["step_stats"] == {"5": {"x": 1.0}}
    assert s["verdict"] == "saturated"
    assert s["per_engine"][0] == {
        "engine": "1@10.0.0.1",
        "samples": 4,
        "running_mean": 2.5,
        "running_max": 4.0,
        "waiting_mean": 1.5,
        "waiting_max": 3.0,
        "gen_throughput_mean": 500.0,
        "gen_throughput_max": 900.0,
        "kv_cache_pct_mean": 50.0,
        "prefix_hit_pct_mean": 50.0,
        "preemptions_total": 3.0,
        "preemptions_max": 1.0,
    }
    assert s["per_engine"][1]["prefix_hit_pct_mean"] is None  # no prefix samples
    assert s["preemptions_total"] == 9.0  # 3 + 6: every engine's intervals summed
    assert s["per_engine"][1]["running_mean"] == pytest.approx(20 / 6)
    assert s["timeline"] == {
        "t_s": [60.0],
        "samples": [10],
        "gen_throughput_mean": [500.0],
        "gen_throughput_min": [100.0],
        "gen_throughput_max": [900.0],
        "running_mean": [3.0],
        "waiting_mean": [1.8],
        "kv_cache_pct_mean": [60.0],
        "prefix_hit_pct_mean": [None],
    }


def test_vllm_summary_without_samples():
    s = vllm_summary(VllmStats((), (), 0, 0, 0, {}))
    assert s["samples"] == 0 and s["running_mean"] is None and s["running_max"] is None
    assert s["prefix_hit_pct_mean"] is None and s["verdict"] == "no data"
    assert s["per_engine"] == [] and s["timeline"]["t_s"] == []


def test_verdict_sentences_at_and_around_their_thresholds():
    assert verdict(5, 1.0, 100.0) == (
        "saturated",
        "Engines saturated: on average 1.0 requests wait (≥ 1); generation is the bottleneck.",
    )
    assert verdict(5, 0.99, 299.4) == (
        "starved",
        "Engines starved: almost nothing waits (mean 0.99) and each decodes 299 tok/s (< 300); "
        "they wait for work.",
    )
    assert verdict(5, 0.5, 300.0) == (
        "spare capacity",
        "Spare capacity: almost nothing waits (mean 0.50) at 300 tok/s per engine.",
    )
    assert verdict(5, None, 300.0)[0] == verdict(5, 0.5, None)[0] == "no data"


def _t(reward, exception=None, turns=None, kind=None) -> TrialResult:
    return TrialResult("n", "t", reward, exception, turns, 1, 1, 1.0, False, exception_kind=kind)


def test_trial_stats_every_figure():
    trials = (
        _t(1.0, None, 2),
        _t(0.5, None, 4),
        _t(0.0, None, 3),
        _t(None, "DaytonaError", None),  # infrastructure, ungraded, no turns
        _t(-1.0, "AgentTimeoutError", 3),
        _t(math.nan, "AgentTimeoutError", 5),  # a NaN reward: no reward
        _t(None, "WeirdError", 1, kind="infrastructure"),  # Harbor's own kind wins
    )
    s = trial_stats(TrialSet("p/trace_jobs", trials, 2, 1, 3, 4, ()))
    assert (s["path"], s["total"], s["eval"], s["malformed"], s["missing"], s["archives"]) == (
        "p/trace_jobs",
        7,
        2,
        1,
        3,
        4,
    )
    assert list(s["exceptions"].items()) == [
        ("none", 3),
        ("AgentTimeoutError", 2),
        ("DaytonaError", 1),
        ("WeirdError", 1),
    ]
    assert s["exception_kinds"] == {"none": 3, "infrastructure": 2, "model": 2, "other": 0}
    assert s["exception_kind_of"] == {
        "none": "none",
        "DaytonaError": "infrastructure",
        "AgentTimeoutError": "model",
        "WeirdError": "infrastructure",
    }
    assert s["turns"] == {
        "mean": 3.0,
        "median": 3.0,
        "std": pytest.approx(math.sqrt(2.0)),
        "min": 1.0,
        "max": 5.0,
        "count": 6,
    }
    assert s["turn_histogram"] == {"1": 1, "2": 1, "3": 2, "4": 1, "5": 1}
    assert s["reward"] == {
        "mean": 0.125,
        "success_rate": 0.5,
        "count": 4,
        "success": 2,
        "failure": 2,
    }
    assert s["error_rate"] == 4 / 7
    assert list(s["turns_by_exception"].items()) == [
        ("none", {"mean": 3.0, "median": 3.0, "count": 3}),
        ("AgentTimeoutError", {"mean": 4.0, "median": 4.0, "count": 2}),
        ("WeirdError", {"mean": 1.0, "median": 1.0, "count": 1}),
    ]
    assert s["turns_by_outcome"] == {
        "success": {"mean": 3.0, "median": 3.0, "count": 2},
        "failure": {"mean": 3.0, "median": 3.0, "count": 2},
    }


def test_trial_stats_of_no_trials():
    s = trial_stats(TrialSet("p", (), 0, 0, 0, 0, ()))
    assert s["total"] == 0 and s["error_rate"] is None and s["turn_histogram"] == {}
    assert s["turns"]["median"] is None and s["turns"]["count"] == 0
    assert s["reward"] == {
        "mean": None,
        "success_rate": None,
        "count": 0,
        "success": 0,
        "failure": 0,
    }
    assert s["turns_by_outcome"] == {
        "success": {"mean": None, "median": None, "count": 0},
        "failure": {"mean": None, "median": None, "count": 0},
    }


# -- per-step figures: the headline, the columns, the timer tree -----------------------------


def _blocks(*metrics: dict):
    from sitegen.model.parsed import MetricBlock

    return [MetricBlock(s, m, 10 * s) for s, m in enumerate(metrics, 1)]


def test_headline_of_the_async_trainer():
    from sitegen.analyse import headline

    bs = _blocks(
        {"reward/avg_raw_reward": 0.2, "reward/avg_pass_at_4": 0.5, "timing/step": 100.0,
         "timing/wait_for_generation_buffer": 60.0, "generate/avg_num_tokens": 1000,
         "async/staleness_mean": 1.0, "async/staleness_max": 3},
        {"reward/avg_raw_reward": 0.6, "reward/avg_pass_at_4": 0.7, "timing/step": 300.0,
         "timing/wait_for_generation_buffer": math.nan, "generate/avg_num_tokens": 3000,
         "async/staleness_mean": 2.0, "async/staleness_max": 5},
        {"reward/avg_raw_reward": math.nan, "timing/step": -5.0,  # a clock step back: no time
         "timing/wait_for_generation_buffer": 20.0, "async/staleness_max": math.inf},
        {"reward/avg_raw_reward": 0.4, "timing/step": 50.0, "timing/wait_for_generation_buffer": 40.0},
    )  # fmt: skip
    assert headline(bs) == {
        "steps": 4,
        "first_step": 1,
        "last_step": 4,
        "reward_mean": pytest.approx(0.4),
        "reward_max": 0.6,
        "reward_last": 0.4,  # the last finite reward
        "pass_at_k": 4,
        "pass_at_k_mean": 0.6,
        "total_time_s": 450.0,
        "step_time_mean_s": 150.0,
        "gen_wait_mean_s": 40.0,  # 60, 20 and 40 (NaN left out)
        # the steps that logged both timers: (60 + 40) / (100 + 50)
        "gen_wait_share": pytest.approx(100 / 150),
        "avg_tokens_mean": 2000.0,
        "staleness_mean": 1.5,
        "staleness_max": 5.0,
    }


def test_the_last_reward_is_the_last_step_that_logged_one():
    from sitegen.analyse import headline

    # a run that diverged at its end: its last reward is no number, not the step before's
    # (a block without the metric, as a split timing block, passes over)
    r = "reward/avg_raw_reward"
    h = headline(_blocks({r: 0.2}, {r: 0.5}, {r: math.nan}, {"timing/step": 1.0}))
    assert (h["reward_mean"], h["reward_max"], h["reward_last"]) == (0.35, 0.5, None)
    assert headline(_blocks({r: 0.2}, {r: 0.5}, {"timing/step": 1.0}))["reward_last"] == 0.5
    assert headline(_blocks({r: 0.2}, {r: "0.4"}))["reward_last"] is None  # not a number


def test_headline_of_the_sync_trainer_and_of_nothing():
    from sitegen.analyse import headline

    bs = _blocks(
        {"reward/avg_raw_reward": 1.0, "timing/step": 10.0, "timing/generate": 4.0},
        {"reward/avg_raw_reward": 0.0, "timing/step": 30.0, "timing/generate": 6.0},
    )
    h = headline(bs)
    assert (h["gen_wait_mean_s"], h["gen_wait_share"]) == (5.0, 0.25)
    assert (h["pass_at_k"], h["pass_at_k_mean"], h["staleness_mean"], h["staleness_max"]) == (
        None,
        None,
        None,
        None,
    )
    assert headline([]) == {
        "steps": 0,
        "first_step": None,
        "last_step": None,
        "reward_mean": None,
        "reward_max": None,
        "reward_last": None,
        "pass_at_k": None,
        "pass_at_k_mean": None,
        "total_time_s": None,
        "step_time_mean_s": None,
        "gen_wait_mean_s": None,
        "gen_wait_share": None,
        "avg_tokens_mean": None,
        "staleness_mean": None,
        "staleness_max": None,
    }
    # steps of no time: no share
    assert headline(_blocks({"timing/step": 0.0, "timing/generate": 0.0}))["gen_wait_share"] is None


def test_series_is_a_column_a_metric_none_where_a_step_did_not_log_it():
    from sitegen.analyse import series

    bs = _blocks({"b": 1.0, "a": 2}, {"a": math.nan}, {"c": "x"})
    assert series(bs) == {
        "step": [1, 2, 3],
        "a": [2, bs[1].metrics["a"], None],
        "b": [1.0, None, None],
        "c": [None, None, "x"],
    }
    assert series([]) == {"step": []}


def test_timing_tree_figures_by_hand():
    from sitegen.analyse import timing_tree

    bs = _blocks(
        {"timing/step": 100.0, "timing/wait_for_generation_buffer": 50.0, "timing/run_training": 40.0,
         "timing/policy_train": 30.0, "timing/eval": 7.0, "timing/zzz_custom": 2.0},
        {"timing/step": 300.0, "timing/wait_for_generation_buffer": 90.0, "timing/run_training": 120.0,
         "timing/eval": -1.0, "timing/zzz_custom": math.nan},
        {"timing/wait_for_generation_buffer": 5.0},  # no step time: left out of the tree
    )  # fmt: skip
    t = timing_tree(bs)
    assert (t["steps"], t["step_total_s"]) == (2, 400.0)
    root = t["tree"]
    assert {k: root[k] for k in root if k != "children"} == {
        "name": "step",
        "total_s": 400.0,
        "mean_s": 200.0,
        "count": 2,
        "share_of_parent": None,
        "share_of_step": 1.0,
        "mean_step_share": 1.0,
    }
    wait, run, rest = root["children"]
    assert wait == {
        "name": "wait_for_generation_buffer",
        "total_s": 140.0,
        "mean_s": 70.0,
        "count": 2,
        "share_of_parent": 0.35,
        "share_of_step": 0.35,
        "mean_step_share": 0.4,  # the mean of 50 % and 30 %
        "children": [],
    }
    assert (run["total_s"], run["count"]) == (160.0, 2)
    # policy_train sits below train_critic_and_policy, which was not logged: run_training
    # has no timed child, so no "(rest)" either
    assert run["children"] == []
    assert rest == {
        "name": "(rest)",
        "total_s": 100.0,
        "mean_s": 50.0,
        "count": 2,
        "share_of_parent": 0.25,
        "share_of_step": 0.25,
        "mean_step_share": None,
        "children": [],
    }
    # mean per-step share: over the steps that logged the timer (a negative or NaN one did not)
    assert t["outside_step"] == [
        {
            "name": "eval",
            "total_s": 7.0,
            "mean_s": 7.0,
            "count": 1,
            "share_of_step": 7.0 / 400,
            "mean_step_share": 7.0 / 100,
        },
        {
            "name": "zzz_custom",
            "total_s": 2.0,
            "mean_s": 2.0,
            "count": 1,
            "share_of_step": 2.0 / 400,
            "mean_step_share": 2.0 / 100,
        },
    ]


def test_timing_tree_without_step_times():
    from sitegen.analyse import timing_tree

    t = timing_tree(_blocks({"timing/eval": 3.0, "timing/other": math.nan}))
    assert t == {
        "steps": 0,
        "step_total_s": 0.0,
        "tree": None,
        "outside_step": [
            {
                "name": "eval",
                "total_s": 3.0,
                "mean_s": 3.0,
                "count": 1,
                "share_of_step": None,
                "mean_step_share": None,
            },
            {
                "name": "other",
                "total_s": 0.0,
                "mean_s": None,
                "count": 0,
                "share_of_step": None,
                "mean_step_share": None,
            },
        ],
    }


def test_the_timer_tree_follows_the_trainer():
    from sitegen.analyse import timer_tree_of
    from sitegen.analyse.steps import OUTSIDE_STEP, SYNC_OUTSIDE_STEP, SYNC_TIMER_TREE, TIMER_TREE

    sync = _blocks({"timing/generate": 1.0})
    assert timer_tree_of(sync) == (SYNC_TIMER_TREE, SYNC_OUTSIDE_STEP)
    both = _blocks({"timing/generate": 1.0, "timing/wait_for_generation_buffer": 1.0})
    assert timer_tree_of(both) == (TIMER_TREE, OUTSIDE_STEP)
    assert timer_tree_of(_blocks({"generate": 1.0})) == (TIMER_TREE, OUTSIDE_STEP)


def test_a_generation_share_of_steps_shorter_than_a_second():
    from sitegen.analyse import headline

    bs = _blocks({"timing/step": 0.4, "timing/wait_for_generation_buffer": 0.2})
    assert headline(bs)["gen_wait_share"] == 0.5


def test_ties_are_ordered_by_name_and_all_errors_is_an_error_rate_of_one():
    trials = (_t(None, "Zeta", 1), _t(None, "Beta", 2), _t(None, "Zeta", 3), _t(None, "Alpha", 4))
    s = trial_stats(TrialSet("p", trials, 0, 0, 0, 0, ()))
    assert list(s["exceptions"]) == ["Zeta", "Alpha", "Beta"]
    assert list(s["turns_by_exception"]) == ["Zeta", "Alpha", "Beta"]
    assert s["error_rate"] == 1.0


def test_the_verdict_and_its_thresholds_are_in_the_summary():
    s = vllm_summary(VllmStats((), (), 0, 0, 0, {}))
    assert s["verdict_reason"] == "No per-engine vLLM stat lines in this log."
    assert s["verdict_thresholds"] == {
        "saturated_waiting_mean": 1.0,
        "starved_gen_throughput_tps": 300.0,
    }
