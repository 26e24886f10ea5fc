"""Each rule fires on what it is for, stays quiet just below its threshold, and names its section."""

import math
import random

from msgspec.structs import replace

from sitegen.insights import findings as F
from sitegen.insights.findings import StepTrials, evaluate
from sitegen.model.parsed import BatchCounts
from tests.insights.helpers import blocks


def _noise(seed=0):
    rng = random.Random(seed)
    return lambda k: {
        "reward/avg_raw_reward": 0.3 + 0.01 * k + rng.gauss(0, 0.02),
        "policy/policy_entropy": 0.2 + rng.uniform(-0.01, 0.01),
        "timing/step": 100 + rng.uniform(-5, 5),
        "timing/wait_for_generation_buffer": 50.0,
    }


def _ids(fs):
    return [f.id for f in fs]


def test_healthy_run_has_no_findings():
    fs = evaluate(
        blocks(30, _noise()),
        config={},
        metric_form="mirror",
        first_log=None,
        status="complete",
        per_step=[StepTrials(s, 10, 1, 0) for s in range(1, 31)],
        per_step_source="trials",
    )
    assert fs == ()


def test_lr_zero_mirror_and_console_rounding():
    bs = blocks(5, lambda k: {"policy/policy_lr": 0.0})
    f = F.lr_zero(bs, None, "mirror")
    assert f and f.severity == "error" and f.section == "metrics"
    # console prints 1e-6 as 0.0000: only the config can confirm
    assert (
        F.lr_zero(bs, {"trainer": {"policy": {"optimizer_config": {"lr": 1e-6}}}}, "console")
        is None
    )
    assert F.lr_zero(bs, {"trainer": {"policy": {"optimizer_config": {"lr": 0}}}}, "console")
    assert F.lr_zero(blocks(5, lambda k: {"policy/policy_lr": 1e-6}), None, "mirror") is None


def test_policy_frozen_says_which():
    zero = lambda k: {  # noqa: E731
        "policy/log_ratio_abs_pos50": 0.0,
        "policy/policy_kl": 0.0,
        "async/staleness_max": 0,
    }
    f = F.policy_frozen(blocks(4, zero), {}, lr_is_zero=False)
    assert f.severity == "info" and "on-policy" in f.title
    assert f.section == "policy"  # the page's policy-health charts show the flat lines
    f = F.policy_frozen(blocks(4, zero), {}, lr_is_zero=True)
    assert f.severity == "error" and "no effect" in f.title
    stale = lambda k: {**zero(k), "async/staleness_max": 2}  # noqa: E731
    assert F.policy_frozen(blocks(4, stale), {}, lr_is_zero=False).severity == "warning"
    epochs = {"trainer": {"update_epochs_per_batch": 2}}
    assert F.policy_frozen(blocks(4, zero), epochs, lr_is_zero=False).severity == "warning"
    # KL moves: nothing; only one family present: nothing
    moving = lambda k: {**zero(k), "policy/policy_kl": 1e-4 * (k == 3)}  # noqa: E731
    assert F.policy_frozen(blocks(4, moving), {}, False) is None
    assert F.policy_frozen(blocks(4, lambda k: {"policy/policy_kl": 0.0}), {}, False) is None


def test_entropy_collapse_threshold():
    def ent(last):
        return lambda k: {"policy/policy_entropy": 1.0 if k <= 3 else last}

    f = F.entropy_collapse(blocks(20, ent(0.19)))
    assert f is not None and f.id == "entropy_collapse" and f.section == "policy"
    assert F.entropy_collapse(blocks(20, ent(0.21))) is None
    assert F.entropy_collapse(blocks(9, ent(0.0))) is None  # too short to say


def test_reward_falling_and_flat():
    fall = F.reward_trend(blocks(30, lambda k: {"reward/avg_raw_reward": 0.8 - 0.01 * k}))
    assert fall.id == "reward_falling" and fall.section == "progression"
    # 30 steps: the window is the last half, 15 steps, 14 intervals at −0.01
    assert "last 15 steps" in fall.detail and "drops by 0.140" in fall.detail
    long = F.reward_trend(blocks(60, lambda k: {"reward/avg_raw_reward": 0.8 - 0.01 * k}))
    assert "last 20 steps" in long.detail and "drops by 0.190" in long.detail
    flat = F.reward_trend(blocks(30, lambda k: {"reward/avg_raw_reward": 0.4}))
    assert flat.id == "reward_flat"
    rng = random.Random(1)
    noisy = F.reward_trend(
        blocks(12, lambda k: {"reward/avg_raw_reward": 0.4 + rng.gauss(0, 0.06)})
    )
    assert noisy is None or noisy.id != "reward_flat"
    assert F.reward_trend(blocks(7, lambda k: {"reward/avg_raw_reward": 0.4})) is None


def test_gen_wait_share():
    def w(share):
        return lambda k: {"timing/step": 100.0, "timing/wait_for_generation_buffer": 100 * share}

    f = F.gen_wait(blocks(5, w(0.85)), has_trials=True)
    assert f.id == "gen_wait_high" and f.section == "rollouts" and "85%" in f.title
    assert F.gen_wait(blocks(5, w(0.8)), has_trials=False) is None
    sync = F.gen_wait(
        blocks(5, lambda k: {"timing/step": 10.0, "timing/generate": 9.0}), has_trials=False
    )
    assert sync.section == "timing"


def test_gen_wait_share_is_the_overview_cards():
    # a timer the reader left out of the timing sums (a negative wait: the clock stepped
    # back) is left out here too, as the overview's share leaves it out: 90 % at step 1 only
    from sitegen.analyse import headline

    waits = {1: 90.0, 2: -50.0}
    bs = blocks(2, lambda k: {"timing/step": 100.0, "timing/wait_for_generation_buffer": waits[k]})
    assert headline(bs)["gen_wait_share"] == 0.9
    assert F.gen_wait(bs, has_trials=False).title == "90% of step time waits for generation"


def test_step_time_outlier():
    f = F.step_outlier(blocks(8, lambda k: {"timing/step": 310.0 if k == 6 else 100.0}))
    assert f.title.startswith("Step 6 took 3.1x") and f.section == "timing"
    assert F.step_outlier(blocks(8, lambda k: {"timing/step": 300.0 if k == 6 else 100.0})) is None


def test_infra_burst_and_error_rising():
    steps = [StepTrials(s, 20, 2, 1 if s != 5 else 6) for s in range(1, 9)]
    f = F.infra_burst(steps, "rollouts")
    assert f.title.endswith("step 5") and "6 of 20" in f.detail
    steps[4] = StepTrials(5, 40, 2, 6)  # 15 % of the step: under the share threshold
    assert F.infra_burst(steps, "rollouts") is None
    rising = [StepTrials(s, 10, 1 if s <= 3 else 4, 0) for s in range(1, 10)]
    f = F.error_rising(rising, "tasks")
    assert f.id == "error_rate_rising" and "10%" in f.detail and "40%" in f.detail
    assert F.error_rising([StepTrials(s, 10, 1, 0) for s in range(1, 10)], "tasks") is None


def test_batch_lines_feed_the_step_counts():
    per = {
        3: BatchCounts(2, 16, 10, 4, 2, {"DaytonaError": 3, "AgentTimeoutError": 1}),
    }
    assert F.batch_step_trials(per) == [StepTrials(3, 16, 6, 3)]


def test_staleness_over_limit():
    bs = blocks(5, lambda k: {"async/staleness_max": 3 if k == 4 else 1})
    cfg = {"trainer": {"fully_async": {"max_staleness_steps": 2}}}
    f = F.staleness(bs, cfg)
    assert f.id == "staleness_over_limit" and "step 4" in f.detail
    assert F.staleness(bs, {}) is None


def test_log_mid_run_and_no_terminal():
    class Log:
        blocks = blocks(3)
        resumed_from = None
        fresh_start = False
        config = None

    log = Log()
    log.blocks = [replace(b, step=b.step + 181) for b in log.blocks]
    f = F.log_mid_run(log)
    assert f.title == "Log starts mid-run at step 182" and "no config dump" in f.detail
    log.resumed_from = 181
    assert F.log_mid_run(log) is None
    assert F.no_terminal_line("incomplete").id == "no_terminal_line"
    assert F.no_terminal_line("running") is None


def test_a_job_known_by_its_trials_alone_has_no_log_to_end():
    # a folder of trials without a log is a job (docs/formats.md §1), "incomplete" for want
    # of an end line: no log was cut, so no finding says one was
    fs = evaluate(
        [],
        config=None,
        metric_form="none",
        first_log=None,
        status="incomplete",
        per_step=[],
        per_step_source="trials",
    )
    assert _ids(fs) == []
    assert F.no_terminal_line("incomplete", has_log=False) is None


def test_job_ended_says_how_the_job_stopped():
    f = F.job_ended("failed", "out of memory (oom_kill)")
    assert (f.id, f.severity, f.title) == ("job_failed", "error", "Job failed")
    assert "out of memory (oom_kill)" in f.detail and f.section == "overview"
    f = F.job_ended("cancelled", "TIME LIMIT", of_run=True)
    assert (f.id, f.severity) == ("job_time_limit", "info")
    assert f.title == "Last job reached its SLURM time limit"
    assert "the run's last job" in f.detail
    f = F.job_ended("cancelled", "CANCELLED")
    assert (f.id, f.severity) == ("job_cancelled", "warning")
    assert "scancel" in f.detail
    assert "DUE TO PREEMPTION" in F.job_ended("cancelled", "PREEMPTION").detail
    for status in ("complete", "running", "incomplete"):
        assert F.job_ended(status, None) is None


def test_severity_order():
    fs = evaluate(
        blocks(30, lambda k: {"policy/policy_lr": 0.0, "reward/avg_raw_reward": 0.5}),
        config={},
        metric_form="mirror",
        first_log=None,
        status="incomplete",
        per_step=[],
        per_step_source="batches",
    )
    assert _ids(fs) == ["lr_zero", "reward_flat", "no_terminal_line"]


def test_non_finite_metrics_are_named_with_their_steps():
    bs = blocks(6, lambda k: {"policy/policy_kl": math.nan if k in (3, 5) else 0.001})
    f = F.non_finite(bs)
    assert f.id == "non_finite_metric" and f.title == "NaN or infinite policy/policy_kl"
    assert "steps 3, 5" in f.detail and f.section == "policy"  # (its chart breaks there)
    mixed = blocks(4, lambda k: {"policy/policy_kl": math.nan, "loss/x": math.inf * (k == 2)})
    assert F.non_finite(mixed).section == "progression"
    assert F.non_finite(blocks(6, lambda k: {"system/x": math.inf, "policy/kl": 0.0})) is None
