"""Is it learning? (sitegen/insights/learning.py) at each step count, against values by hand."""

from __future__ import annotations

import pytest

from sitegen.insights.attribution import attribute
from sitegen.insights.learning import (
    is_learning,
    learning_section,
    pass_at_k_check,
    reward_learning,
    step_success,
    trial_learning,
    windows,
)
from sitegen.insights.tasks import analyse_tasks
from tests.insights.helpers import blocks, trial

STEP_COUNTS = (1, 2, 3, 4, 5, 7, 10, 11)
# the windows of each count: the first and the last fifth, at least 3 steps each
WINDOWS = {7: ([1, 2, 3], [5, 6, 7]), 10: ([1, 2, 3], [8, 9, 10]), 11: ([1, 2, 3], [9, 10, 11])}


@pytest.mark.parametrize("n", STEP_COUNTS)
def test_windows_at_each_step_count(n):
    assert windows(list(range(1, n + 1))) == WINDOWS.get(n)
    assert windows(list(range(1, 17))) == ([1, 2, 3, 4], [13, 14, 15, 16])  # 16 / 5 → 4
    assert windows([2, 4, 9, 20, 21, 30]) == ([2, 4, 9], [20, 21, 30])  # steps, not a span


@pytest.mark.parametrize("n", STEP_COUNTS)
def test_reward_learning_at_each_step_count(n):
    """Reward k/10 at step k: the windows' means and their change, by hand."""
    found, why = reward_learning(blocks(n, lambda k: {"reward/avg_raw_reward": k / 10}))
    if n not in WINDOWS:
        assert found is None
        assert why.startswith(f"reward/avg_raw_reward logged on {n} step")
        assert "needs 6 at least (3 in each)" in why
        return
    early, late = WINDOWS[n]
    assert found.source == "reward" and found.verdict == "improved"
    assert (found.early, found.late) == ((early[0], early[-1]), (late[0], late[-1]))
    assert found.early_value == pytest.approx(sum(early) / 30)
    assert found.late_value == pytest.approx(sum(late) / 30)
    assert found.change == pytest.approx((sum(late) - sum(early)) / 30)
    # three steps a window: blocks of one step; each resampled change lies between these
    # bounds, then is spread about the observed change by the small-sample factor (1.7305)
    assert found.block == 1 and found.units == 6
    lo_bound = found.change - 1.7306 * (found.change - (late[0] - early[-1]) / 10)
    hi_bound = found.change + 1.7306 * ((late[-1] - early[0]) / 10 - found.change)
    assert lo_bound <= found.lo < found.change < found.hi <= hi_bound
    assert "moving-block bootstrap" in found.method and "blocks of 1 step" in found.method


def test_reward_learning_sees_no_change_in_noise_and_a_fall():
    flat, _ = reward_learning(blocks(20, lambda k: {"reward/avg_raw_reward": 0.4 + 0.05 * (k % 2)}))
    assert flat.verdict == "no change" and flat.lo < 0 < flat.hi
    fall, _ = reward_learning(blocks(20, lambda k: {"reward/avg_raw_reward": 1 - k / 20}))
    assert fall.verdict == "worse" and fall.hi < 0
    assert fall.window_steps == 4 and fall.block == 2  # 20 steps: fifths of 4, blocks of 2


TASKS = [f"task-{t:02d}" for t in range(12)]


def _trial_run(n: int, late_rate: float = 1.0, early_rate: float = 0.0):
    """12 tasks, two trials of each at every step; a task succeeds in the first half of the
    steps with ``early_rate`` (per trial pair: both or none), in the second ``late_rate``."""
    trials = []
    for s in range(1, n + 1):
        rate = early_rate if s <= n / 2 else late_rate
        for i, t in enumerate(TASKS):
            ok = (i + 0.5) / len(TASKS) < rate
            trials += [trial(t, s, reward=1.0 if ok else 0.0, offset_s=10 + j) for j in range(2)]
    bs = blocks(n)
    attr = attribute(trials, bs, None)
    return trials, attr, analyse_tasks(trials, attr), bs


@pytest.mark.parametrize("n", STEP_COUNTS)
def test_trial_learning_at_each_step_count(n):
    _, _, ta, _ = _trial_run(n)
    found, why = trial_learning(ta)
    if n not in WINDOWS:
        assert found is None
        assert why.startswith(f"graded trials on {n} step")
        return
    early, late = WINDOWS[n]
    assert found.source == "trials" and found.verdict == "improved"
    assert (found.early, found.late) == ((early[0], early[-1]), (late[0], late[-1]))
    # every task 0 % early and 100 % late: 100 points, no spread, every task improved
    assert (found.early_value, found.late_value, found.change) == (0.0, 1.0, 1.0)
    assert (found.lo, found.hi, found.units) == (1.0, 1.0, 12)
    assert (found.improvement, found.improvement_lo, found.improvement_hi) == (1.0, 1.0, 1.0)


def test_trial_learning_half_the_tasks_learned():
    _, _, ta, _ = _trial_run(10, late_rate=0.5)
    found, _ = trial_learning(ta)
    # 6 of 12 tasks go from 0 to 100 %, 6 stay at 0: +50 points, probability 0.75
    assert found.change == 0.5 and found.improvement == 0.75
    assert found.verdict == "improved" and 0 < found.lo < 0.5 < found.hi <= 1


def test_trial_learning_needs_enough_shared_tasks():
    trials = [trial(t, s, offset_s=10) for s in range(1, 11) for t in TASKS[:9]]
    ta = analyse_tasks(trials, attribute(trials, blocks(10), None))
    found, why = trial_learning(ta)
    assert found is None and why.startswith("9 tasks ran in both")


def test_is_learning_falls_back_to_the_logged_reward_and_says_why():
    trials = [trial(t, s, offset_s=10) for s in range(1, 11) for t in TASKS[:3]]
    bs = blocks(10, lambda k: {"reward/avg_raw_reward": k / 10})
    ta = analyse_tasks(trials, attribute(trials, bs, None))
    found, note = is_learning(bs, ta)
    assert found.source == "reward" and note.startswith("Trials give no verdict (3 tasks ran")
    found, note = is_learning(blocks(4, lambda k: {"reward/avg_raw_reward": 0.5}), ta)
    assert found is None and "3 tasks ran" in note and "logged on 4 steps" in note


def test_step_success_figures_by_hand():
    # step 1: task a 3 of 4, task b 1 of 4; step 2: task a 2 of 2 (one group)
    trials = [
        *(trial("a", 1, reward=r, offset_s=10 + j) for j, r in enumerate((1.0, 1.0, 1.0, 0.0))),
        *(trial("b", 1, reward=r, offset_s=20 + j) for j, r in enumerate((0.0, 0.0, 0.5, 0.0))),
        *(trial("a", 2, reward=1.0, offset_s=10 + j) for j in range(2)),
        trial("b", 2, reward=None, exception="DaytonaError"),  # not graded
    ]
    ps, cells = step_success(trials, attribute(trials, blocks(2), None), k=4)
    assert ps.step == [1, 2] and ps.graded == [8, 2] and ps.successes == [4, 2]
    assert ps.rate == [0.5, 1.0] and ps.groups == [2, 1]
    assert ps.rate_lo[0] == pytest.approx(0.2152, abs=1e-4)  # Wilson, 4 of 8
    assert ps.rate_hi[1] == 1.0
    assert ps.reward_mean == [3.5 / 8, 1.0]
    assert ps.reward_lo[1] is None  # one prompt group: no band
    lo, hi = ps.reward_lo[0], ps.reward_hi[0]
    assert (lo, hi) == (0.125, 0.75)  # resamples of the two groups: b twice, a twice
    assert ps.pass_at_k == [1.0, None]  # step 2: task a has 2 graded trials < k = 4
    assert cells == {1: [(4, 3), (4, 1)], 2: [(2, 2)]}


def test_pass_at_k_check_agrees_and_disagrees():
    cells = {s: [(4, 1), (4, 0), (4, 4), (4, 0), (4, 2), (4, 3), (2, 2)] for s in range(1, 4)}
    ok = blocks(3, lambda k: {"reward/avg_pass_at_4": 2 / 3})
    check = pass_at_k_check(cells, ok, "reward/avg_pass_at_4", 4)
    assert (check.k, check.steps, check.cells, check.skipped) == (4, 3, 18, 3)  # (2, 2) < k
    assert check.estimated == pytest.approx(2 / 3) and check.logged == pytest.approx(2 / 3)
    assert check.agrees and 0 <= check.lo <= 2 / 3 <= check.hi <= 1
    off = pass_at_k_check(
        cells, blocks(3, lambda k: {"reward/avg_pass_at_4": 1.0}), "reward/avg_pass_at_4", 4
    )
    assert not off.agrees and off.hi < 1.0
    assert pass_at_k_check(cells, ok, None, 4) is None


def test_learning_section_without_trials():
    sec = learning_section(
        blocks(10, lambda k: {"reward/avg_raw_reward": 0.3}), None, None, None, None
    )
    assert sec.verdict.verdict == "no change" and sec.per_step is None and sec.pass_at_k is None
