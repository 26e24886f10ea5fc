"""Every rule that looks at a window of steps, at 1, 2, 3, 4, 5, 7, 10 and 11 steps, against
values worked out by hand: the task categories' early and late thirds, and the findings
that need a number of steps or compare the first steps with the last.

At these counts a third, a tenth or a half rounds differently (3 and 10 divide evenly, the
rest do not), so a window one step too short or too long, or a threshold off by one, changes
an expected value here.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from sitegen.insights import findings as F
from sitegen.insights.attribution import attribute
from sitegen.insights.findings import StepTrials
from sitegen.insights.tasks import analyse_tasks
from sitegen.model.parsed import MetricBlock
from tests.insights.helpers import STEP_S, T0, blocks, trial

COUNTS = (1, 2, 3, 4, 5, 7, 10, 11)
# (and, for a rule that needs 6, 8 or 10 steps, the count at its threshold or below it)

# -- the task categories ------------------------------------------------------------------------

# n steps -> (early window, late window): the first and last third of the steps, rounded
# up; none below 3 steps.
WINDOWS = {
    1: (None, None),
    2: (None, None),
    3: ((1, 1), (3, 3)),
    4: ((1, 2), (3, 4)),
    5: ((1, 2), (4, 5)),
    7: ((1, 3), (5, 7)),
    10: ((1, 4), (7, 10)),
    11: ((1, 4), (8, 11)),
}
# n steps -> the category of the task solved at step k alone (one trial a step), k = 1..n:
# F(orgotten) in the early window, L(earned) in the late one, M(ixed) between or without
# windows, A(lways) when its one trial is its one success.
ONLY_AT = {
    1: "A",
    2: "MM",
    3: "FML",
    4: "FFLL",
    5: "FFMLL",
    7: "FFFMLLL",
    10: "FFFFMMLLLL",
    11: "FFFFMMMLLLL",
}
LETTER = {"F": "forgotten", "L": "learned", "M": "mixed", "A": "always"}


def _tasks(n: int):
    """Tasks ``only-k`` solved at step k alone, one trial a step, over steps 1..n."""
    ts = [
        trial(f"only-{k:02d}", s, 1.0 if s == k else 0.0)
        for k in range(1, n + 1)
        for s in range(1, n + 1)
    ]
    bs = blocks(n)
    return analyse_tasks(ts, attribute(ts, bs, T0))


@pytest.mark.parametrize("n", COUNTS)
def test_task_windows_and_categories(n):
    ta = _tasks(n)
    assert (ta.early_window, ta.late_window) == WINDOWS[n]
    assert ta.steps == tuple(range(1, n + 1))
    got = {r.name: r.category for r in ta.tasks}
    assert got == {f"only-{k:02d}": LETTER[c] for k, c in enumerate(ONLY_AT[n], 1)}
    early, late = WINDOWS[n]
    for r in ta.tasks:
        k = int(r.name.split("-")[1])
        if early is None:
            assert r.early_rate is None and r.late_rate is None
            continue
        size = early[1] - early[0] + 1  # both windows are as long
        assert r.early_rate == (1 / size if k <= early[1] else 0.0), r.name
        assert r.late_rate == (1 / size if k >= late[0] else 0.0), r.name
    lists = {x.category: x for x in ta.lists}
    learned = [f"only-{k:02d}" for k, c in enumerate(ONLY_AT[n], 1) if c == "L"]
    assert lists["learned"].tasks == tuple(learned)
    assert lists["learned"].trials == n * len(learned)
    assert lists["learned"].share_of_rollouts == pytest.approx(len(learned) / n)


# A run that starts at step 21: the windows are thirds of the steps it has, not of 1..n.
@pytest.mark.parametrize(
    ("n", "early", "late"),
    [
        (3, (21, 21), (23, 23)),
        (5, (21, 22), (24, 25)),
        (7, (21, 23), (25, 27)),
        (11, (21, 24), (28, 31)),
    ],
)
def test_task_windows_of_a_run_that_starts_later(n, early, late):
    bs = [MetricBlock(20 + k, {}, k, T0 + timedelta(seconds=k * STEP_S)) for k in range(1, n + 1)]
    ts = [trial("t", k, 1.0 if k == n else 0.0) for k in range(1, n + 1)]
    ta = analyse_tasks(ts, attribute(ts, bs, T0))
    assert (ta.early_window, ta.late_window) == (early, late)
    assert ta.tasks[0].category == "learned" and ta.tasks[0].first_solved_step == 20 + n


# -- the findings -------------------------------------------------------------------------------


def _entropy(n: int):
    # 1.0 on the first three steps, 0.1 after: the mean of the first window is 1 only when
    # the window is three steps
    return F.entropy_collapse(
        blocks(n, lambda k: {"policy/policy_entropy": 1.0 if k <= 3 else 0.1})
    )


ENTROPY = {  # at least 10 steps; windows of a tenth of them, at least 3
    10: "Policy entropy fell from 1 (mean of the first 3 steps) to 0.1 (last 3): below 20% of "
    "where it started; the policy stopped exploring.",
    11: "Policy entropy fell from 1 (mean of the first 3 steps) to 0.1 (last 3): below 20% of "
    "where it started; the policy stopped exploring.",
}


@pytest.mark.parametrize("n", COUNTS + (9,))
def test_entropy_collapse_windows(n):
    f = _entropy(n)
    assert (f.detail if f else None) == ENTROPY.get(n)


REWARD_FLAT = {  # at least 8 steps; the last half of them, at least 8, at most 20
    8: "Over the last 8 steps (steps 1–8) the reward stays at 0.500 (std 0.0000 < 0.01; "
    "fitted change 0.000, 95 % interval 0.000 to 0.000, inside ±0.05): nothing is being learned.",
    9: "Over the last 8 steps (steps 2–9) the reward stays at 0.500 (std 0.0000 < 0.01; "
    "fitted change 0.000, 95 % interval 0.000 to 0.000, inside ±0.05): nothing is being learned.",
    10: "Over the last 8 steps (steps 3–10) the reward stays at 0.500 (std 0.0000 < 0.01; "
    "fitted change 0.000, 95 % interval 0.000 to 0.000, inside ±0.05): nothing is being learned.",
    11: "Over the last 8 steps (steps 4–11) the reward stays at 0.500 (std 0.0000 < 0.01; "
    "fitted change 0.000, 95 % interval 0.000 to 0.000, inside ±0.05): nothing is being learned.",
}


@pytest.mark.parametrize("n", COUNTS + (8, 9))
def test_reward_trend_window(n):
    f = F.reward_trend(blocks(n, lambda k: {"reward/avg_raw_reward": 0.5}))
    assert (f.detail if f else None) == REWARD_FLAT.get(n)


# Step k has 10 rollouts, k - 1 of them (at most 10) ending in an exception. The interval:
# each third's steps drawn with replacement (blocks of one step below 4 steps a window).
# Two steps a third (rates a and a + 5 %): each third's mean is a, a + 2.5 or a + 5 %
# (1/4, 1/2, 1/4), so the raw change's ends (1 in 16 each) are its 2.5th and 97.5th
# percentiles: the point -+ 5 points. Three steps a third (0, 1, 2 errors more than the
# third's first step): the change is (point * 30 + X - Y) / 30, X and Y three draws of 0, 1
# or 2 each, so X - Y + 6 is the sum of six such draws: P(X - Y <= -5) = 7 / 729 < 2.5 % <
# P(X - Y <= -4) = 28 / 729, and the raw ends are the point -+ 4 / 30. Each is then spread
# about the point by the small-sample factor of the blocks a window holds: 3.1026 for 2,
# 1.7305 for 3 (tests/analyse/test_stats.py holds the factor to Student's t).
ERROR_RISING = {  # at least 6 steps; the first and last third, at least 2 steps each
    6: "Rollouts ending in an exception went from 5% (steps 1–2) to 45% (steps 5–6): "
    "40.0 points (95 % interval 9.0 to 71.0).",
    7: "Rollouts ending in an exception went from 5% (steps 1–2) to 55% (steps 6–7): "
    "50.0 points (95 % interval 19.0 to 81.0).",
    10: "Rollouts ending in an exception went from 10% (steps 1–3) to 80% (steps 8–10): "
    "70.0 points (95 % interval 46.7 to 93.1).",  # below: Newcombe's for 3 of 30, 24 of 30
    11: "Rollouts ending in an exception went from 10% (steps 1–3) to 90% (steps 9–11): "
    "80.0 points (95 % interval 56.9 to 100.0).",  # widened past 100, held to it
}


@pytest.mark.parametrize("n", COUNTS + (6,))
def test_error_rising_windows(n):
    per_step = [StepTrials(k, 10, min(k - 1, 10), 0) for k in range(1, n + 1)]
    f = F.error_rising(per_step, "tasks")
    assert (f.detail if f else None) == ERROR_RISING.get(n)


@pytest.mark.parametrize("n", COUNTS)
def test_infra_burst_needs_three_steps(n):
    # the last step: 5 of its 10 rollouts failed in the infrastructure, none before
    per_step = [StepTrials(k, 10, 5 if k == n else 0, 5 if k == n else 0) for k in range(1, n + 1)]
    f = F.infra_burst(per_step, "rollouts")
    want = (
        f"5 of 10 rollouts of step {n} failed in the infrastructure (sandbox, setup timeouts; "
        "the median step has 0)."
    )
    assert (f.detail if f else None) == (want if n >= 3 else None)


@pytest.mark.parametrize("n", COUNTS)
def test_step_outlier_needs_five_steps(n):
    bs = blocks(n, lambda k: {"timing/step": 400.0 if k == n else 100.0})
    f = F.step_outlier(bs)
    want = f"Step {n} took 4.0x the median step time"
    assert (f.title if f else None) == (want if n >= 5 else None)


@pytest.mark.parametrize("n", COUNTS)
def test_policy_frozen_needs_three_steps(n):
    bs = blocks(n, lambda k: {"policy/policy_kl": 0.0, "policy/clip_ratio": 0.0})
    f = F.policy_frozen(bs, None, lr_is_zero=False)
    assert (f.title if f else None) == (
        "Fully on-policy: ratio metrics carry no signal" if n >= 3 else None
    )


@pytest.mark.parametrize("n", COUNTS)
def test_lr_zero_needs_two_steps(n):
    f = F.lr_zero(blocks(n, lambda k: {"policy/policy_lr": 0.0}), None, "mirror")
    want = f"policy/policy_lr is 0 on all {n} steps: the optimizer never changes the weights."
    assert (f.detail if f else None) == (want if n >= 2 else None)


# -- the curves: bucket means and the rolling mean -------------------------------------------

# n points 1..n (x = y = k) into at most 3 buckets: k * n // 3 bounds them; x is the
# middle point's, y the mean, lo and hi the extremes.
BUCKETS = {
    4: ([1, 2, 4], [1.0, 2.0, 3.5], [1.0, 2.0, 3.0], [1.0, 2.0, 4.0]),
    5: ([1, 3, 5], [1.0, 2.5, 4.5], [1.0, 2.0, 4.0], [1.0, 3.0, 5.0]),
    7: ([2, 4, 6], [1.5, 3.5, 6.0], [1.0, 3.0, 5.0], [2.0, 4.0, 7.0]),
    10: ([2, 5, 9], [2.0, 5.0, 8.5], [1.0, 4.0, 7.0], [3.0, 6.0, 10.0]),
    11: ([2, 6, 10], [2.0, 5.5, 9.5], [1.0, 4.0, 8.0], [3.0, 7.0, 11.0]),
}


@pytest.mark.parametrize("n", COUNTS)
def test_downsample_buckets(n):
    from sitegen.analyse.curves import downsample_columns

    ks = list(range(1, n + 1))
    got = downsample_columns(ks, [float(k) for k in ks], max_points=3)
    x, y, lo, hi = BUCKETS.get(
        n, (ks, [float(k) for k in ks], [float(k) for k in ks], [float(k) for k in ks])
    )
    assert got == {"x": x, "y": y, "lo": lo, "hi": hi}


@pytest.mark.parametrize("n", (*COUNTS, 44, 45, 60, 75))
def test_smooth_window(n):
    """A centred mean over about n/15 points (odd, at least 3): 3 up to 59 points, 5 at 60."""
    from sitegen.analyse.curves import smooth

    half = 2 if n >= 60 else 1
    ys = [float(k) for k in range(1, n + 1)]
    want = [
        sum(ys[max(0, i - half) : i + half + 1]) / len(ys[max(0, i - half) : i + half + 1])
        for i in range(n)
    ]
    assert smooth(ys) == want
    assert smooth(ys)[0] == (2.0 if n >= 60 else (1.5 if n > 1 else 1.0))
