"""The findings that weigh a difference by its interval (reward falling or flat, error rate
rising, a task forgotten, pass@k disagreeing) at each step count, against values by hand:
each fires on a difference its interval is sure of, stays quiet on one noise could make, and
quotes the interval."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from sitegen.analyse import stats
from sitegen.insights import findings as F
from sitegen.insights.attribution import attribute
from sitegen.insights.findings import StepTrials
from sitegen.insights.intervalrules import pass_at_k_mismatch, task_forgotten
from sitegen.insights.tasks import analyse_tasks
from sitegen.insights.verdicts import PassAtKCheck
from tests.insights.helpers import blocks, trial

STEP_COUNTS = (1, 2, 3, 4, 5, 7, 10, 11)


@pytest.mark.parametrize("n", STEP_COUNTS)
def test_reward_falling_at_each_step_count(n):
    f = F.reward_trend(blocks(n, lambda k: {"reward/avg_raw_reward": 0.8 - 0.01 * k}))
    if n < 8:
        assert f is None
        return
    # the window: the last 8 steps (half of 10 or 11 is under 8); 7 intervals at −0.01
    assert f.id == "reward_falling"
    assert f"steps {n - 7}–{n}" in f.detail and "drops by 0.070" in f.detail
    assert "change 95 % interval -0.070 to -0.070" in f.detail


@pytest.mark.parametrize("n", STEP_COUNTS)
def test_reward_flat_at_each_step_count(n):
    f = F.reward_trend(blocks(n, lambda k: {"reward/avg_raw_reward": 0.25}))
    if n < 8:
        assert f is None
        return
    assert f.id == "reward_flat" and "stays at 0.250" in f.detail
    assert "95 % interval 0.000 to 0.000, inside ±0.05" in f.detail


def test_a_fall_noise_could_make_is_not_reported():
    """A drop of 0.08 fitted through one step's dip among swings of ±0.15: the old t-test's
    slope was 2 standard errors down; the interval of the change reaches above zero."""
    swings = [0.15, -0.15, 0.15, -0.15, 0.15, -0.15, 0.15, -0.55]
    f = F.reward_trend(blocks(8, lambda k: {"reward/avg_raw_reward": 0.5 + swings[k - 1]}))
    assert f is None


# error rate: the first and the last third of the steps with trials (2 steps at least)
ERROR_WINDOWS = {7: ((1, 2), (6, 7)), 10: ((1, 3), (8, 10)), 11: ((1, 3), (9, 11))}


@pytest.mark.parametrize("n", STEP_COUNTS)
def test_error_rising_at_each_step_count(n):
    steps = [StepTrials(s, 10, 1 if s <= n / 2 else 4, 0) for s in range(1, n + 1)]
    f = F.error_rising(steps, "tasks")
    if n < 6:
        assert f is None
        return
    (a, b), (c, d) = ERROR_WINDOWS[n]
    assert f.id == "error_rate_rising"
    assert f"from 10% (steps {a}–{b}) to 40% (steps {c}–{d})" in f.detail
    # every step of a window alike: the trials' own noise, Newcombe's for the pooled counts
    lo, hi = stats.newcombe(b - a + 1, 10 * (b - a + 1), 4 * (d - c + 1), 10 * (d - c + 1))
    assert f"30.0 points (95 % interval {100 * lo:.1f} to {100 * hi:.1f})" in f.detail
    assert 0 < lo < 0.3 < hi


def test_one_bad_step_is_no_rising_error_rate():
    """All of one late step's rollouts failed, none elsewhere: 33 % against 0 % passes the
    thresholds, but a third of the resamples of the last steps miss that step."""
    steps = [StepTrials(s, 10, 10 if s == 10 else 0, 0) for s in range(1, 10)]
    steps.append(StepTrials(10, 10, 0, 0))
    steps[8] = StepTrials(9, 10, 10, 0)
    assert F.error_rising(steps, "tasks") is None
    # the same share spread over every late step is a real rise
    steady = [StepTrials(s, 30, 0 if s <= 3 else 10, 0) for s in range(1, 10)]
    assert F.error_rising(steady, "tasks").id == "error_rate_rising"


# a task's thirds: the first and last third of the attributed steps' span (rounded up)
TASK_WINDOWS = {3: (1, 3), 4: (2, 3), 5: (2, 4), 7: (3, 5), 10: (4, 7), 11: (4, 8)}


@pytest.mark.parametrize("n", STEP_COUNTS)
@pytest.mark.parametrize("per_step", [1, 4])
def test_task_forgotten_at_each_step_count(n, per_step):
    """A task solved in every trial of the first third of the steps and in none after:
    forgotten beyond doubt, but for one trial a step in windows of one or two steps. Two
    tasks are graded, so the intervals hold for both at once: z = 2.2414 (1 − 0.05/2
    two-sided), and 2 of 2 against 0 of 2 has Wilson bounds 2/(2 + z²) = 0.2847 and
    z²/(2 + z²) = 0.7153, Newcombe's upper bound −1 + √(2 × 0.7153²) = +0.012: not sure;
    3 of 3 against 0 of 3: −1 + √(2 × (z²/(3 + z²))²) = −0.115, sure."""
    early_end, late_start = TASK_WINDOWS.get(n, (1, n))
    trials = [
        trial("forget-me", s, reward=1.0 if s <= early_end else 0.0, offset_s=10 + j)
        for s in range(1, n + 1)
        for j in range(per_step)
    ] + [trial("other", s, reward=1.0, offset_s=40) for s in range(1, n + 1)]
    ta = analyse_tasks(trials, attribute(trials, blocks(n), None))
    f = task_forgotten(ta)
    if n not in TASK_WINDOWS or (per_step == 1 and n < 7):
        assert f is None  # under 3 steps: no windows; 2 trials against 2: not sure
        return
    assert next(r for r in ta.tasks if r.name == "forget-me").category == "forgotten"
    eg, lg = per_step * early_end, per_step * (n - late_start + 1)
    assert f.id == "task_forgotten" and f.section == "tasks"
    assert f.title == "Task forget-me was forgotten"
    assert f"succeeded in {eg} of {eg} graded trials in steps 1–{early_end}" in f.detail
    assert f"and in 0 of {lg} in steps {late_start}–{n}: -100.0 points" in f.detail
    assert "(95 % interval -100.0 to " in f.detail
    assert ", jointly for the 2 tasks graded in both)" in f.detail


def test_pass_at_k_mismatch_quotes_the_interval():
    check = PassAtKCheck(
        k=4, key="reward/avg_pass_at_4", steps=8, cells=100, skipped=0,
        estimated=0.85, lo=0.78, hi=0.92, logged=1.0, agrees=False,
    )  # fmt: skip
    f = pass_at_k_mismatch(check)
    assert f.id == "pass_at_k_mismatch" and f.section == "progression"
    assert "averages 1.000 over 8 steps" in f.detail
    assert "0.850 (95 % interval 0.780 to 0.920" in f.detail
    assert pass_at_k_mismatch(None) is None


def _forgetting(names, n=10, per_step=4):
    """Each named task solved in every trial of steps 1-4 of ``n`` and in none after; a
    task solved always beside them (it comes first in the table)."""
    trials = [trial("always", s, reward=1.0, offset_s=5) for s in range(1, n + 1)]
    trials += [
        trial(name, s, reward=1.0 if s <= 4 else 0.0, offset_s=10 + j)
        for name in names
        for s in range(1, n + 1)
        for j in range(per_step)
    ]
    return analyse_tasks(trials, attribute(trials, blocks(n), None))


def test_task_forgotten_in_full():
    # 16 of 16 in steps 1-4, 0 of 16 in steps 7-10, beside a task always solved: one finding
    # for the 2 tasks graded in both windows, so Bonferroni's z for 2 (2.2414, the normal's
    # 1 - 0.025 / 2 quantile). Wilson's bound for 0 of 16 is z² / (16 + z²) = 0.2390 (and 1
    # less that for 16 of 16), so Newcombe's interval is -1 to -1 + sqrt(2) * 0.2390 = -0.6621
    assert task_forgotten(_forgetting(["t1"])) == F.Finding(
        "task_forgotten",
        "warning",
        "Task t1 was forgotten",
        "t1 succeeded in 16 of 16 graded trials in steps 1–4 and in 0 of 16 in steps 7–10: "
        "-100.0 points (95 % interval -100.0 to -66.2, jointly for the 2 tasks graded in both).",
        "tasks",
        tasks=("t1",),
    )
    assert task_forgotten(None) is None


def test_task_forgotten_alone_or_beside_a_task_graded_in_one_window():
    # the only task graded in both windows: z = 1.96, no "jointly"; Wilson's bound for 0 of
    # 16 is 1.96² / (16 + 1.96²) = 0.1936, Newcombe's upper one -1 + sqrt(2) * 0.1936 = -0.7262
    alone = [
        trial("t1", s, reward=1.0 if s <= 4 else 0.0, offset_s=10 + j)
        for s in range(1, 11)
        for j in range(4)
    ]
    f = task_forgotten(analyse_tasks(alone, attribute(alone, blocks(10), None)))
    assert f.detail == (
        "t1 succeeded in 16 of 16 graded trials in steps 1–4 and in 0 of 16 in steps 7–10: "
        "-100.0 points (95 % interval -100.0 to -72.6)."
    )
    # a task graded only in the early window (steps 1-3) is not one of the tasks weighed
    # jointly: z stays Bonferroni's for 2, as in test_task_forgotten_in_full
    trials = [trial("always", s, reward=1.0, offset_s=5) for s in range(1, 11)]
    trials += [trial("early", s, reward=1.0, offset_s=50) for s in range(1, 4)]
    trials += alone
    f = task_forgotten(analyse_tasks(trials, attribute(trials, blocks(10), None)))
    assert f.detail.endswith(
        "(95 % interval -100.0 to -66.2, jointly for the 2 tasks graded in both)."
    )


@pytest.mark.parametrize(
    ("count", "bound", "also"),
    [
        # count + 1 tasks graded in both: z for 7, 8, 9 (2.6901, 2.7344, 2.7729), the bound
        # -1 + sqrt(2) * z² / (16 + z²)
        (6, "-56.0", "t2, t3, t4, t5, t6"),  # five others: all named
        (7, "-55.0", "t2, t3, t4, t5, t6 and 1 more"),
        (8, "-54.1", "t2, t3, t4, t5, t6 and 2 more"),
    ],
)
def test_several_tasks_forgotten_name_five_and_count_the_rest(count, bound, also):
    f = task_forgotten(_forgetting([f"t{i}" for i in range(1, count + 1)]))
    assert f.title == f"{count} tasks were forgotten, t1 most surely"
    assert f.detail.endswith(
        f"(95 % interval -100.0 to {bound}, jointly for the {count + 1} tasks graded in both). "
        f"Also forgotten beyond doubt: {also}."
    )
    assert (f.id, f.severity, f.section) == ("task_forgotten", "warning", "tasks")
    assert f.tasks == tuple(f"t{i}" for i in range(1, count + 1))  # every one, the surest first


def test_pass_at_k_mismatch_in_full():
    check = PassAtKCheck(
        k=4, key="reward/avg_pass_at_4", steps=8, cells=100, skipped=0,
        estimated=0.85, lo=0.78, hi=0.9215, logged=1.0, agrees=False,
    )  # fmt: skip
    assert pass_at_k_mismatch(check) == F.Finding(
        "pass_at_k_mismatch",
        "warning",
        "Logged pass@4 disagrees with the trials",
        "reward/avg_pass_at_4 averages 1.000 over 8 steps; the trials give 0.850 (95 % "
        "interval 0.780 to 0.922; unbiased pass@4 from 100 task-steps with 4 graded trials or "
        "more): the trainer grouped or graded rollouts otherwise than these trial files say.",
        "progression",
    )
    agreeing = replace(check, agrees=True)
    assert pass_at_k_mismatch(agreeing) is None


def test_a_task_forgotten_from_three_quarters_solved():
    # 3 of the 4 trials of each of steps 1-4 solved, none after: 12 of 16, then 0 of 16, with
    # Bonferroni's z for 2 tasks (2.2414). Wilson: 0.4703 to 0.9102 for 12 of 16, 0 to 0.2390
    # for 0 of 16; Newcombe: -0.75 less (0.9102 - 0.75) = -0.9102, plus
    # sqrt(0.2390² + (0.75 - 0.4703)²) = -0.3821
    trials = [trial("always", s, reward=1.0, offset_s=5) for s in range(1, 11)]
    trials += [
        trial("t1", s, reward=1.0 if s <= 4 and j < 3 else 0.0, offset_s=10 + j)
        for s in range(1, 11)
        for j in range(4)
    ]
    f = task_forgotten(analyse_tasks(trials, attribute(trials, blocks(10), None)))
    assert f.detail == (
        "t1 succeeded in 12 of 16 graded trials in steps 1–4 and in 0 of 16 in steps 7–10: "
        "-75.0 points (95 % interval -91.0 to -38.2, jointly for the 2 tasks graded in both)."
    )
