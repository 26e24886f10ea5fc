"""Each finding as a reader sees it: id, severity, title, detail and section, written out in
full for every branch of every rule, at the thresholds' own values (a rule fires *at* its
threshold), and the helpers that count a step's trials."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pytest

from sitegen.insights import findings as F
from sitegen.insights.attribution import attribute
from sitegen.insights.findings import Finding, StepTrials, evaluate
from sitegen.model.parsed import BatchCounts, MetricBlock
from tests.insights.helpers import T0, blocks, trial


def test_steps_text_names_five_steps_then_counts_the_rest():
    from sitegen.insights.rulebase import steps_text

    assert steps_text([1, 2, 3, 4, 5]) == "1, 2, 3, 4, 5"
    assert steps_text([1, 2, 3, 4, 5, 6, 9]) == "1, 2, 3, 4, 5 and 2 more"
    assert steps_text([7, 8, 9], limit=2) == "7, 8 and 1 more"
    assert steps_text([]) == ""


def test_step_trials_counts_each_steps_trials_errors_and_infrastructure_failures():
    bs = blocks(3)
    ts = [
        trial("a", 1, 1.0),
        trial("a", 1, 0.0, "AgentTimeoutError"),  # a model error
        trial("a", 1, None, "DaytonaError"),  # infrastructure
        trial("a", 3, None, "AgentSetupTimeoutError", offset_s=1),
        trial("a", 3, None, "DaytonaError", offset_s=2),
        trial("a", None, 1.0, start=T0.replace(year=2020)),  # not at any step
    ]
    assert F.step_trials(ts, attribute(ts, bs, T0)) == [
        StepTrials(1, 3, 2, 1),
        StepTrials(3, 2, 2, 2),
    ]
    assert F.step_trials([], attribute([], bs, T0)) == []
    # a trial at no step before the ones at a step: they are counted all the same
    first = [ts[-1], *ts[:-1]]
    assert F.step_trials(first, attribute(first, bs, T0)) == [
        StepTrials(1, 3, 2, 1),
        StepTrials(3, 2, 2, 2),
    ]


def test_a_step_counts_infrastructure_failures_by_harbors_own_kind():
    # Harbor 0.26 classifies each exception in the file (exception_info.policy), and the
    # trials table counts by it: a RuntimeError its policy calls infrastructure is one,
    # a DaytonaError it calls "other" is not (the name decides only without a policy)
    from msgspec.structs import replace

    bs = blocks(1)
    ts = [
        replace(trial("a", 1, None, "RuntimeError"), exception_kind="infrastructure"),
        replace(trial("a", 1, None, "RuntimeError", offset_s=2), exception_kind="infrastructure"),
        replace(trial("a", 1, None, "DaytonaError", offset_s=3), exception_kind="other"),
        trial("a", 1, None, "RuntimeError", offset_s=4),
    ]
    assert F.step_trials(ts, attribute(ts, bs, T0)) == [StepTrials(1, 4, 4, 2)]


def test_batch_step_trials_count_the_rollouts_that_did_not_succeed_as_errors():
    # the generator's line: successful = trials − failed trajectories; "failed instances"
    # counts prompts with a failure and "masked" failed trajectories kept out of the
    # baseline, so neither (nor their sum) is the count of failed rollouts
    per = {
        4: BatchCounts(1, 8, 8, 0, 0, {}),
        2: BatchCounts(2, 16, 10, 4, 2, {"DaytonaError": 3, "AgentTimeoutError": 1}),
        # 2 workers' 32 trials, 20 lost to the sandbox on 4 prompts, all 20 masked
        5: BatchCounts(2, 64, 24, 8, 40, {"DaytonaValidationError": 40}),
        # 3 of 16 failed on 1 prompt, none masked
        6: BatchCounts(1, 16, 13, 1, 0, {"AgentTimeoutError": 2, "DaytonaError": 1}),
        # an older generator subtracting exception counts: -1/8 successful
        7: BatchCounts(1, 8, -1, 1, 0, {"DaytonaError": 9}),
    }
    assert F.batch_step_trials(per) == [
        StepTrials(2, 16, 6, 3),
        StepTrials(4, 8, 0, 0),
        StepTrials(5, 64, 40, 40),
        StepTrials(6, 16, 3, 1),
        StepTrials(7, 8, 8, 8),  # (no more failures than rollouts)
    ]


def test_values_keeps_each_steps_finite_number():
    from sitegen.insights.rulebase import metric_values

    bs = blocks(5, lambda k: {"m": [1.0, math.nan, 2, None, "3"][k - 1]})
    assert metric_values(bs, "m") == [(1, 1.0), (3, 2.0)]


# -- the trial and status rules ------------------------------------------------------------


def test_infra_burst_in_full_at_its_thresholds():
    # the median step has 1 failure: a burst needs max(3, 3 x 1) = 3, and 20 % of its rollouts
    steps = [StepTrials(s, 15, 1, 1) for s in range(1, 6)]
    steps[1] = StepTrials(2, 15, 3, 3)  # 3 of 15: exactly 20 %
    steps[3] = StepTrials(4, 20, 5, 5)  # the worst
    assert F.infra_burst(steps, "rollouts") == Finding(
        "infra_burst",
        "warning",
        "Infrastructure failures burst at step 4",
        "5 of 20 rollouts of step 4 failed in the infrastructure (sandbox, setup timeouts; the "
        "median step has 1); bursts at steps 2, 4.",
        "rollouts",
        steps=(4, 2),  # the worst first
    )
    steps[1] = StepTrials(2, 16, 3, 3)  # under 20 %: step 4 alone
    assert F.infra_burst(steps, "batches").detail.endswith("the median step has 1).")
    steps[3] = StepTrials(4, 20, 2, 2)
    assert F.infra_burst(steps, "batches") is None
    assert F.infra_burst([StepTrials(1, 0, 0, 0)] * 3, "batches") is None


def test_error_rising_in_full_at_its_thresholds():
    # each step of the first third 30 of 200 rollouts (15 %), of the last 60 of 200 (30 %):
    # 15 points and twice; every resample the same, so the interval is the trials' own,
    # Newcombe's for 60 of 400 against 120 of 400 (Wilson's 0.1183–0.1883 and 0.2572–0.3466
    # by hand)
    steps = [StepTrials(s, 200, e, 0) for s, e in enumerate((30, 30, 40, 50, 60, 60), 1)]
    assert F.error_rising(steps, "tasks") == Finding(
        "error_rate_rising",
        "warning",
        "Error rate is rising",
        "Rollouts ending in an exception went from 15% (steps 1–2) to 30% (steps 5–6): "
        "15.0 points (95 % interval 9.3 to 20.6).",
        "tasks",
        steps=(6, 5),  # the last third, the latest first
    )
    # the same rates from 20 rollouts a step: 6 of 40 against 12 of 40 is within the trials'
    # noise, though every step of a window agrees
    few = [StepTrials(s, 20, e, 0) for s, e in enumerate((3, 3, 4, 5, 6, 6), 1)]
    assert F.error_rising(few, "tasks") is None
    # the first two steps at 10 % and 20 %: a raw interval of 10 to 20 points (each end 1 in
    # 4), spread about 15 by the factor of 2 blocks (3.0097): -0.05 to 30.05, not above 0
    uneven = [StepTrials(s, 10, e, 0) for s, e in enumerate((1, 2, 3, 3, 3, 3), 1)]
    assert F.error_rising(uneven, "tasks") is None
    # 15 points and twice, but the interval reaches below 0: the last third's 60 % and 0 %
    # drawn as 0 % with the first's 30 % and 0 % as 30 % (1 in 16): no finding
    assert (
        F.error_rising(
            [StepTrials(s, 100, e, 0) for s, e in enumerate((0, 30, 0, 0, 60, 0), 1)], "t"
        )
        is None
    )
    # 14 points: no; twice but less than 15 points: no; 15 points but under twice: no
    for errors in ((10, 10, 0, 0, 24, 24), (5, 5, 0, 0, 10, 10), (20, 20, 0, 0, 35, 35)):
        steps = [StepTrials(s, 100, e, 0) for s, e in enumerate(errors, 1)]
        assert F.error_rising(steps, "t") is None, errors
    # steps without trials are left out before the thirds are taken
    empty = [StepTrials(s, 0, 0, 0) for s in (7, 8, 9)]
    assert F.error_rising(steps + empty, "tasks") == F.error_rising(steps, "tasks")


@dataclass
class _Log:
    blocks: list[MetricBlock]
    resumed_from: int | None = None
    fresh_start: bool = False
    config: dict | None = None
    extra: dict = field(default_factory=dict)


def test_log_mid_run_in_full():
    bs = [MetricBlock(s, {}, s) for s in (2, 3)]
    assert F.log_mid_run(_Log(bs)) == Finding(
        "log_starts_mid_run",
        "warning",
        "Log starts mid-run at step 2",
        "The log's first metrics are step 2, with no start or resume line and no config dump: "
        "earlier steps are not in this archive.",
        "overview",
    )
    assert F.log_mid_run(_Log(bs, config={"a": 1})).detail == (
        "The log's first metrics are step 2, with no start or resume line: earlier steps are "
        "not in this archive."
    )
    assert F.log_mid_run(_Log(bs, fresh_start=True)) is None
    assert F.log_mid_run(_Log(bs, resumed_from=1)) is None
    assert F.log_mid_run(_Log([MetricBlock(1, {}, 1)])) is None
    assert F.log_mid_run(_Log([])) is None and F.log_mid_run(None) is None


def test_no_terminal_line_in_full():
    assert F.no_terminal_line("incomplete") == Finding(
        "no_terminal_line",
        "warning",
        "Log ends without a terminal line",
        "No 'Training done!', cancellation or failure line, and the log has not changed for "
        "15 minutes: the job died silently or its log was cut.",
        "overview",
    )


@pytest.mark.parametrize(
    ("status", "detail", "of_run", "want"),
    [
        ("failed", "oom", False, ("job_failed", "error", "Job failed", "The job ended in a failure: oom.")),
        ("failed", None, True, ("job_failed", "error", "Last job failed", "The run's last job ended in a failure: no reason given.")),
        ("cancelled", "TIME LIMIT", False, ("job_time_limit", "info", "Job reached its SLURM time limit", "SLURM cancelled the job DUE TO TIME LIMIT; a job resumed from its last checkpoint carries the run on.")),
        ("cancelled", " TIME LIMIT ", True, ("job_time_limit", "info", "Last job reached its SLURM time limit", "SLURM cancelled the run's last job DUE TO TIME LIMIT; a job resumed from its last checkpoint carries the run on.")),
        ("cancelled", None, False, ("job_cancelled", "warning", "Job was cancelled", "SLURM cancelled the job (scancel or the scheduler).")),
        ("cancelled", "CANCELLED", True, ("job_cancelled", "warning", "Last job was cancelled", "SLURM cancelled the run's last job (scancel or the scheduler).")),
        ("cancelled", "PREEMPTION", False, ("job_cancelled", "warning", "Job was cancelled", "SLURM cancelled the job DUE TO PREEMPTION.")),
    ],
)  # fmt: skip
def test_job_ended_in_full(status, detail, of_run, want):
    assert F.job_ended(status, detail, of_run=of_run) == Finding(*want, "overview")


def test_evaluate_orders_by_severity_and_names_sections_by_the_trials_source():
    bs = blocks(
        12,
        lambda k: {
            "policy/policy_lr": 0.0,
            "reward/avg_raw_reward": 0.5,
            "timing/step": 100.0,
            "timing/wait_for_generation_buffer": 90.0,
        },
    )
    per_step = [StepTrials(s, 10, 0 if s < 9 else 9, 0 if s != 6 else 5) for s in range(1, 13)]
    kw = dict(config={}, metric_form="mirror", first_log=None, status="cancelled")
    with_trials = evaluate(
        bs, per_step=per_step, per_step_source="trials", status_detail="TIME LIMIT", **kw
    )
    assert [(f.id, f.severity, f.section) for f in with_trials] == [
        ("lr_zero", "error", "metrics"),
        ("reward_flat", "warning", "progression"),
        ("gen_wait_high", "warning", "rollouts"),
        ("infra_burst", "warning", "rollouts"),
        ("error_rate_rising", "warning", "tasks"),
        ("job_time_limit", "info", "overview"),
    ]
    from_batches = evaluate(bs, per_step=per_step, per_step_source="batches", of_run=True, **kw)
    assert [(f.id, f.section) for f in from_batches] == [
        ("lr_zero", "metrics"),
        ("reward_flat", "progression"),
        ("gen_wait_high", "timing"),
        ("infra_burst", "batches"),
        ("error_rate_rising", "batches"),
        ("job_cancelled", "overview"),
    ]
    assert from_batches[-1].title == "Last job was cancelled"
    frozen = blocks(
        4, lambda k: {"policy/policy_kl": 0.0, "policy/clip_ratio": 0.0, "policy/policy_lr": 0.0}
    )
    fs = evaluate(frozen, per_step=[], per_step_source="batches", **{**kw, "status": "complete"})
    assert [(f.id, f.severity) for f in fs] == [("lr_zero", "error"), ("policy_frozen", "error")]
    log = _Log([MetricBlock(5, {}, 1)])
    fs = evaluate(
        [],
        per_step=[],
        per_step_source="batches",
        **{**kw, "first_log": log, "status": "incomplete"},
    )
    assert [f.id for f in fs] == ["log_starts_mid_run", "no_terminal_line"]


# -- the metric rules -------------------------------------------------------------------------


def test_lr_zero_in_full():
    zero = blocks(3, lambda k: {"optim/lr": 0.0})
    assert F.lr_zero(zero, None, "mirror") == Finding(
        "lr_zero",
        "error",
        "Learning rate is zero on every step",
        "optim/lr is 0 on all 3 steps: the optimizer never changes the weights.",
        "metrics",
    )
    cfg0 = {"trainer": {"policy": {"optimizer_config": {"lr": 0}}}}
    assert F.lr_zero(zero, cfg0, "console").id == "lr_zero"
    assert F.lr_zero(zero, None, "console") is None  # 1e-6 prints as 0.0000 there
    assert (
        F.lr_zero(blocks(2, lambda k: {"optim/lr": 0.0 if k == 1 else 1e-6}), None, "mirror")
        is None
    )
    assert F.lr_zero(blocks(2), cfg0, "mirror") == Finding(
        "lr_zero",
        "error",
        "Learning rate is zero",
        "trainer.policy.optimizer_config.lr is 0 in the config: the optimizer never changes the "
        "weights.",
        "config",
    )
    assert F.lr_zero([], cfg0, "mirror") is None
    # each rate metric in turn: the first one at 0 on every step is named
    for key in F.LR_KEYS:
        f = F.lr_zero(blocks(2, lambda k, key=key: {key: 0.0, "x/lr": 1.0}), None, "mirror")
        assert f.detail.startswith(f"{key} is 0 on all 2 steps")


def test_policy_frozen_in_full():
    def three(k):
        return {"policy/log_ratio_abs": 0.0, "policy/policy_kl": 0.0, "policy/clip_ratio": 0.0}

    assert F.policy_frozen(blocks(3, three), None, lr_is_zero=True) == Finding(
        "policy_frozen",
        "error",
        "Updates have no effect",
        "log-ratio, KL and clip ratio are 0 on every step and the learning rate is 0: the policy "
        "never moves.",
        "policy",
    )
    assert F.policy_frozen(blocks(3, three), None, lr_is_zero=False) == Finding(
        "policy_frozen",
        "info",
        "Fully on-policy: ratio metrics carry no signal",
        "log-ratio, KL and clip ratio are 0 on every step. No rollout is stale and each batch is "
        "one optimizer step, so the new policy equals the one that generated the data when the "
        "ratio is taken: expected, not a bug.",
        "policy",
    )
    two = lambda k: {"policy/policy_kl": 0.0, "policy/clip_ratio": 0.0}  # noqa: E731
    mini = {"trainer": {"policy_mini_batch_size": 32, "train_batch_size": 64}}
    assert F.policy_frozen(blocks(3, two), mini, lr_is_zero=False) == Finding(
        "policy_frozen",
        "warning",
        "Policy ratios never move although data is off-policy",
        "KL and clip ratio are 0 on every step while rollouts are stale or several optimizer "
        "steps run per batch: the policy may not be updating (check weight sync and the "
        "optimizer).",
        "policy",
    )
    full = {
        "trainer": {
            "policy_mini_batch_size": 64,
            "train_batch_size": 64,
            "update_epochs_per_batch": 1,
        }
    }
    assert F.policy_frozen(blocks(3, two), full, lr_is_zero=False).severity == "info"
    # a family logged on fewer steps counts as its own steps; the longest must reach 3
    sparse = lambda k: {"policy/policy_kl": 0.0, **({"policy/clip_ratio": 0.0} if k == 1 else {})}  # noqa: E731
    assert F.policy_frozen(blocks(3, sparse), None, lr_is_zero=False).severity == "info"
    assert F.policy_frozen(blocks(2, two), None, lr_is_zero=False) is None
    # a family that moves once, or a second family absent, says nothing
    moving = lambda k: {**two(k), "policy/clip_ratio": 0.1 * (k == 2)}  # noqa: E731
    assert F.policy_frozen(blocks(3, moving), None, lr_is_zero=False) is None
    gap = lambda k: {"policy/policy_kl": 0.0, "policy/clip_ratio": math.nan}  # noqa: E731
    assert F.policy_frozen(blocks(3, gap), None, lr_is_zero=False) is None


def test_entropy_collapse_in_full():
    ent = lambda k: {"policy/policy_entropy": 2.0 if k <= 3 else 0.3}  # noqa: E731
    assert F.entropy_collapse(blocks(30, ent)) == Finding(
        "entropy_collapse",
        "warning",
        "Entropy collapsed",
        "Policy entropy fell from 2 (mean of the first 3 steps) to 0.3 (last 3): below 20% of "
        "where it started; the policy stopped exploring.",
        "policy",
    )
    # 40 % of 10 % : the window is 4 steps at 31 to 40 steps
    assert "first 4 steps" in F.entropy_collapse(blocks(31, ent)).detail
    at = lambda k: {"policy/policy_entropy": 1.0 if k <= 3 else 0.2}  # noqa: E731
    assert F.entropy_collapse(blocks(20, at)) is None  # exactly 20 %: not below it
    neg = lambda k: {"policy/policy_entropy": -1.0 if k <= 3 else -5.0}  # noqa: E731
    assert F.entropy_collapse(blocks(20, neg)) is None  # a first mean of 0 or less: no ratio


def test_reward_trend_in_full():
    fall = F.reward_trend(blocks(16, lambda k: {"reward/avg_raw_reward": 1.0 - 0.01 * k}))
    assert fall == Finding(
        "reward_falling",
        "warning",
        "Reward is falling",
        # (a straight line: every resample's slope is the line's, so the interval is a point)
        "Over the last 8 steps (steps 9–16) the fitted reward drops by 0.070 (from 0.910 to "
        "0.840; change 95 % interval -0.070 to -0.070).",
        "progression",
    )
    # a drop under 0.05 over the window: not falling (and not flat either)
    assert F.reward_trend(blocks(16, lambda k: {"reward/avg_raw_reward": 1.0 - 0.007 * k})) is None
    # a large but noisy drop: its slope is under 2 standard errors
    zig = [0.9, 0.1, 0.9, 0.1, 0.9, 0.1, 0.9, 0.0]
    assert F.reward_trend(blocks(8, lambda k: {"reward/avg_raw_reward": zig[k - 1]})) is None
    # a rise of 0.002 a step: std 0.002 * sqrt(63 / 12) = 0.0046, mean 0.409, change 0.014
    flat = F.reward_trend(blocks(8, lambda k: {"reward/avg_raw_reward": 0.4 + 0.002 * k}))
    assert flat == Finding(
        "reward_flat",
        "warning",
        "Reward is flat",
        "Over the last 8 steps (steps 1–8) the reward stays at 0.409 (std 0.0046 < 0.01; "
        "fitted change 0.014, 95 % interval 0.014 to 0.014, inside ±0.05): nothing is being "
        "learned.",
        "progression",
    )
    # a small spread, but a fitted fall of 0.05 or more: neither flat nor (its interval
    # reaching 0 or not) anything else than falling
    steep = F.reward_trend(blocks(8, lambda k: {"reward/avg_raw_reward": 0.5 - 0.0075 * k}))
    assert steep is not None and steep.id == "reward_falling"


def test_gen_wait_in_full():
    bs = blocks(4, lambda k: {"timing/step": 100.0, "timing/generate": 90.0 if k > 1 else None})
    assert F.gen_wait(bs, has_trials=False) == Finding(
        "gen_wait_high",
        "warning",
        "90% of step time waits for generation",
        "timing/generate adds up to 90.0% of timing/step (above 80%): the trainer idles while "
        "rollouts run.",
        "timing",
    )
    assert F.gen_wait(bs, has_trials=True).detail.endswith(
        "rollouts run. The Rollouts section shows where that time goes."
    )
    assert F.gen_wait(blocks(3, lambda k: {"timing/generate": 9.0}), has_trials=False) is None


def test_step_outlier_in_full():
    times = [100] * 5 + [301, 350, 400, 450, 500, 550, 600] + [100] * 4  # the median: 100
    bs = blocks(len(times), lambda k: {"timing/step": float(times[k - 1])})
    assert F.step_outlier(bs) == Finding(
        "step_time_outlier",
        "warning",
        "Step 12 took 6.0x the median step time",
        "Steps over 3x the median (100 s): 6, 7, 8, 9, 10 and 2 more; the slowest, step 12, "
        "took 600 s.",
        "timing",
        steps=(12, 11, 10, 9, 8, 7, 6),  # the slowest first
    )
    assert F.step_outlier(blocks(5, lambda k: {"timing/step": 0.0 if k < 5 else 9.0})) is None


def test_staleness_in_full():
    bs = blocks(7, lambda k: {"async/staleness_max": [1, 4, 1, 6, 1, 4, 1][k - 1]})
    cfg = {"trainer": {"fully_async": {"max_staleness_steps": 3}}}
    assert F.staleness(bs, cfg) == Finding(
        "staleness_over_limit",
        "warning",
        "Staleness above the async limit",
        "async/staleness_max exceeds trainer.fully_async.max_staleness_steps = 3 on 3 steps "
        "(2, 4, 6; up to 6 at step 4).",
        "metrics",
    )
    at = {"trainer": {"fully_async": {"max_staleness_steps": 6}}}
    assert F.staleness(bs, at) is None  # at the limit is within it


def test_non_finite_in_full():
    bs = blocks(3, lambda k: {f"loss/l{i}": math.nan if k == 2 else 1.0 for i in range(5)})
    assert F.non_finite(bs) == Finding(
        "non_finite_metric",
        "warning",
        "NaN or infinite loss/l0 and 4 more",
        "loss/l0, loss/l1, loss/l2, loss/l3 … logged as NaN or ±inf at step 2: a numerical "
        "problem in the update (a charted metric's line breaks there, the job page's per-step "
        "table shows nan; statistics count finite values only).",
        "progression",
    )
    # the metric non-finite most often first; a value that is no float is no NaN
    bs = blocks(
        3,
        lambda k: {
            "reward/a": math.inf if k > 1 else 0.0,
            "critic/b": -math.inf if k == 3 else "nan",
        },
    )
    f = F.non_finite(bs)
    assert f.title == "NaN or infinite reward/a and 1 more"
    assert f.detail.startswith("reward/a, critic/b logged as NaN or ±inf at steps 2, 3:")


# -- the metric rules at their edges ----------------------------------------------------------


def test_policy_frozen_with_one_of_the_two_batch_sizes_in_the_config():
    two = lambda k: {"policy/policy_kl": 0.0, "policy/clip_ratio": 0.0}  # noqa: E731
    # a batch size missing: no evidence of several optimizer steps a batch
    for trainer in ({"policy_mini_batch_size": 32}, {"train_batch_size": 64}):
        f = F.policy_frozen(blocks(3, two), {"trainer": trainer}, lr_is_zero=False)
        assert f.severity == "info", trainer


def test_entropy_collapse_compares_the_last_window_with_the_first():
    # steps 4-7 keep the first level: only the last 3 steps fell
    ent = [1.2345] * 3 + [1.0] * 4 + [0.12345] * 3
    f = F.entropy_collapse(blocks(10, lambda k: {"policy/policy_entropy": ent[k - 1]}))
    assert f.detail == (
        "Policy entropy fell from 1.23 (mean of the first 3 steps) to 0.123 (last 3): below "
        "20% of where it started; the policy stopped exploring."
    )
    # a last mean of exactly 20 % of the first (5.0 → 1.0 in binary too): not below it
    at = [5.0] * 3 + [1.0] * 7
    assert F.entropy_collapse(blocks(10, lambda k: {"policy/policy_entropy": at[k - 1]})) is None


def test_reward_trend_at_its_thresholds():
    def trend(ys):
        return F.reward_trend(blocks(len(ys), lambda k: {"reward/avg_raw_reward": ys[k - 1]}))

    # a straight fall of exactly 0.05 over the window (the fit gives -0.05 to the bit): falling
    fall = trend([0.5 - 0.05 * k / 7 for k in range(8)])
    assert fall.detail == (
        "Over the last 8 steps (steps 1–8) the fitted reward drops by 0.050 (from 0.500 to "
        "0.450; change 95 % interval -0.050 to -0.050)."
    )
    # a spread of exactly 0.01 (0 and 0.02 in turn: the mean is 0.01 and each value 0.01
    # from it): not under the limit, so not flat
    assert trend([0.0, 0.02] * 4) is None
    # a fitted fall of 0.33 through one step's dip among swings of ±0.15: its interval
    # reaches above 0 (to 0.30, under 1): not falling
    swings = [0.15, -0.15, 0.15, -0.15, 0.15, -0.15, 0.15, -0.55]
    assert trend([0.5 + s for s in swings]) is None


def test_gen_wait_and_step_outlier_with_steps_under_a_second():
    bs = blocks(2, lambda k: {"timing/step": 0.4, "timing/generate": 0.38})
    assert F.gen_wait(bs, has_trials=False).title == "95% of step time waits for generation"
    times = [0.5] * 5 + [2.0]
    f = F.step_outlier(blocks(6, lambda k: {"timing/step": times[k - 1]}))
    assert f.title == "Step 6 took 4.0x the median step time"


def test_step_outlier_names_the_slowest_step_not_the_last():
    times = [100.0] * 5 + [500.0, 400.0]
    f = F.step_outlier(blocks(7, lambda k: {"timing/step": times[k - 1]}))
    assert f.title == "Step 6 took 5.0x the median step time"
    assert f.detail.endswith("(100 s): 6, 7; the slowest, step 6, took 500 s.")


def test_non_finite_names_four_metrics_without_an_ellipsis():
    bs = blocks(2, lambda k: {f"loss/l{i}": math.nan if k == 2 else 1.0 for i in range(4)})
    assert F.non_finite(bs).detail.startswith(
        "loss/l0, loss/l1, loss/l2, loss/l3 logged as NaN or ±inf at step 2:"
    )


def test_evaluate_hands_the_config_and_the_metric_form_to_the_rules():
    kw = dict(first_log=None, status="complete", per_step=[], per_step_source="batches")
    # the config's rate of 0 (no rate logged) and its staleness limit
    stale = blocks(3, lambda k: {"async/staleness_max": [1, 5, 1][k - 1]})
    cfg = {"trainer": {"policy": {"optimizer_config": {"lr": 0}}}}
    cfg["trainer"]["fully_async"] = {"max_staleness_steps": 3}
    fs = evaluate(stale, config=cfg, metric_form="mirror", **kw)
    assert [(f.id, f.detail) for f in fs] == [
        (
            "lr_zero",
            "trainer.policy.optimizer_config.lr is 0 in the config: the optimizer never "
            "changes the weights.",
        ),
        (
            "staleness_over_limit",
            "async/staleness_max exceeds trainer.fully_async.max_staleness_steps = 3 on 1 "
            "steps (2; up to 5 at step 2).",
        ),
    ]
    # the console's 0.0000 with a rate of 1e-6 in the config: no finding
    lr = blocks(3, lambda k: {"policy/policy_lr": 0.0})
    small = {"trainer": {"policy": {"optimizer_config": {"lr": 1e-6}}}}
    assert evaluate(lr, config=small, metric_form="console", **kw) == ()
    # two optimizer steps a batch: ratios at 0 are a warning, not on-policy
    frozen = blocks(3, lambda k: {"policy/policy_kl": 0.0, "policy/clip_ratio": 0.0})
    epochs = {"trainer": {"update_epochs_per_batch": 2}}
    fs = evaluate(frozen, config=epochs, metric_form="mirror", **kw)
    assert [(f.id, f.severity) for f in fs] == [("policy_frozen", "warning")]
