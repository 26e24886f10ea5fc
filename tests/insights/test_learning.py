"""Is it learning? (sitegen/insights/learning.py) at each step count, against values by hand."""

from __future__ import annotations

from datetime import timedelta

import pytest

from sitegen.analyse import ar1
from sitegen.insights.attribution import attribute
from sitegen.insights.learning import (
    is_learning,
    learning_section,
    pass_at_k_check,
    pass_k,
    reward_learning,
    step_success,
    trial_learning,
    windows,
)
from sitegen.insights.tasks import analyse_tasks
from sitegen.insights.verdicts import Learning
from tests.insights.helpers import T0, blocks, trial

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
    # each window on its line: no noise about it, so the change is sure
    assert found.units == 6 and found.step_correlation == ar1.FLOOR
    assert found.lo == pytest.approx(found.change) == found.hi
    assert "allowing for correlated neighbouring steps" in found.method


def test_reward_learning_by_hand():
    # 10 steps, windows 1–3 and 8–10, 4 steps between. Windows of 3 steps: the noise from
    # the run's second differences, -0.3 0.8 -1.6 1.6 -1.2 0.8 -0.4 0.3, their median size
    # 0.8, σ = 0.8 / 0.6744898 and σ² = σ² of them / (6 − 8φ + 2φ²) = 0.7327031 at φ = 0.6.
    # Var of the change / σ²: 2(3 + 2(2φ + φ²) − φ⁵(1 + φ + φ²)²)/9 = 1.2936172; its
    # standard error 0.9735694.
    ys = [0.1, 0.3, 0.2, 0.9, 0.0, 0.7, 0.2, 0.5, 0.4, 0.6]
    found, _ = reward_learning(blocks(10, lambda k: {"reward/avg_raw_reward": ys[k - 1]}))
    c = ar1.CRITICAL_SHORT[10 - 6]
    assert found.change == pytest.approx(0.3)
    assert (found.lo, found.hi) == pytest.approx((0.3 - c * 0.9735694, 0.3 + c * 0.9735694))
    assert found.verdict == "no change" and found.step_correlation == 0.6
    assert "the noise measured on second differences, the whole run's" in found.method


def test_reward_learning_sees_no_change_in_noise_and_a_fall():
    flat, _ = reward_learning(blocks(20, lambda k: {"reward/avg_raw_reward": 0.4 + 0.05 * (k % 2)}))
    assert flat.verdict == "no change" and flat.lo < 0 < flat.hi
    fall, _ = reward_learning(blocks(20, lambda k: {"reward/avg_raw_reward": 1 - k / 20}))
    assert fall.verdict == "worse" and fall.hi < 0
    assert fall.window_steps == 4 and fall.step_correlation == ar1.FLOOR  # fifths of 4


@pytest.mark.parametrize("n", [6, 10, 15, 25])
def test_reward_learning_takes_a_lucky_last_step_for_noise(n):
    # a reward on one value (a small batch's) until its last step: most second differences
    # are 0, so only the late window's own shows the noise; "no change", not a sure rise
    ys = [0.25] * (n - 1) + [0.5]
    found, _ = reward_learning(blocks(n, lambda k: {"reward/avg_raw_reward": ys[k - 1]}))
    assert found.verdict == "no change" and found.lo < 0 < found.change < found.hi


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


# -- every field and sentence, where a window's bound, a count or a plural could slip ----------


def _solved_at(steps_solved: set[int], n: int = 10, tasks: int = 12):
    """``tasks`` tasks, two trials each a step, every one solved at ``steps_solved`` only."""
    trials = [
        trial(t, s, reward=1.0 if s in steps_solved else 0.0, offset_s=10 + j)
        for s in range(1, n + 1)
        for t in TASKS[:tasks]
        for j in range(2)
    ]
    bs = blocks(n)
    return analyse_tasks(trials, attribute(trials, bs, None))


def test_trial_learning_in_full_each_window_to_its_bounds():
    # solved at step 1 and step 10 only: each window (steps 1-3, 8-10) a third solved; a
    # window one step short or shifted would read a half or nothing
    found, why = trial_learning(_solved_at({1, 10}))
    assert why == ""
    assert found == Learning(
        source="trials",
        verdict="no change",
        method="success rate paired by task over the 12 tasks graded in both windows; "
        "95 % interval from 2000 bootstrap resamples of those tasks",
        early=(1, 3),
        late=(8, 10),
        window_steps=3,
        early_value=pytest.approx(1 / 3),
        late_value=pytest.approx(1 / 3),
        change=0.0,
        lo=0.0,
        hi=0.0,
        units=12,
        improvement=0.5,
        improvement_lo=0.5,
        improvement_hi=0.5,
        step_correlation=None,
        resamples=2000,
    )


def test_trial_learning_needs_ten_tasks_and_says_how_many_ran():
    found, _ = trial_learning(_solved_at({10}, tasks=10))
    assert found is not None and found.units == 10 and found.verdict == "improved"
    for tasks, word in ((1, "task"), (2, "tasks")):
        found, why = trial_learning(_solved_at({10}, tasks=tasks))
        assert found is None
        assert why == (
            f"{tasks} {word} ran in both the first and the last fifth of the steps: paired by "
            "task, a verdict needs 10 at least"
        )


@pytest.mark.parametrize(("n", "steps"), [(1, "1 step"), (2, "2 steps")])
def test_too_few_steps_is_said_in_full(n, steps):
    _, why = reward_learning(blocks(n, lambda k: {"reward/avg_raw_reward": 0.5}))
    assert why == (
        f"reward/avg_raw_reward logged on {steps}: comparing the first and the last fifth "
        "needs 6 at least (3 in each)"
    )


@pytest.mark.parametrize(
    ("n", "measured", "calibrated"),
    [
        (
            10,
            "on second differences, the whole run's by their median or the windows' own, "
            "whichever is larger",
            "runs of 10 steps",
        ),
        (30, "about each window's own line", "windows of 6 steps"),
    ],
)
def test_reward_learning_says_its_method_in_full(n, measured, calibrated):
    found, why = reward_learning(blocks(n, lambda k: {"reward/avg_raw_reward": k / n}))
    w = found.window_steps
    assert why == "" and found.resamples is None and found.units == 2 * w
    assert found.method == (
        f"no trials to pair by task: the logged reward/avg_raw_reward of {w} steps in each "
        "window; 95 % interval allowing for correlated neighbouring steps (each step's noise "
        f"taken to carry 0.60 of the last one's, the least this assumes; the noise measured "
        f"{measured}), its critical value {ar1.critical(w, n):.2f} calibrated by simulation "
        f"for {calibrated}"
    )


def test_reward_learning_says_a_larger_correlation_it_found():
    # 100 steps (windows of 20) whose noise carries over strongly: φ estimated above 0.6
    ys, x = [], 0.0
    for k in range(100):
        x = 0.9 * x + 0.01 * ((k * 7919) % 13 - 6) / 6
        ys.append(0.5 + x)
    found, _ = reward_learning(blocks(100, lambda k: {"reward/avg_raw_reward": ys[k - 1]}))
    assert found.step_correlation > ar1.FLOOR
    assert f"carrying {found.step_correlation:.2f} of the last one's, as the windows show" in (
        found.method
    )


def test_is_learning_says_nothing_more_than_it_must():
    rising = blocks(10, lambda k: {"reward/avg_raw_reward": k / 10})
    found, note = is_learning(rising, None)  # no trials: the reward, nothing to explain
    assert found.source == "reward" and note == ""
    found, note = is_learning(rising, _solved_at({10}))  # the trials' verdict
    assert found.source == "trials" and note == ""
    found, note = is_learning(blocks(2), None)
    assert found is None and note == (
        "reward/avg_raw_reward logged on 0 steps: comparing the first and the last fifth "
        "needs 6 at least (3 in each)"
    )


@pytest.mark.parametrize(
    ("config", "want"),
    [
        ({"generator": {"n_samples_per_prompt": 4}}, (4, None)),
        ({"generator": {"n_samples_per_prompt": 1}}, (1, None)),
        ({"generator": {"n_samples_per_prompt": 0}}, (None, None)),
        ({"generator": {"n_samples_per_prompt": True}}, (None, None)),
        ({"generator": {"n_samples_per_prompt": "4"}}, (None, None)),
        ({"trainer": {"n_samples_per_prompt": 4}}, (None, None)),
        (None, (None, None)),
    ],
)
def test_pass_k_from_the_config_without_a_logged_metric(config, want):
    assert pass_k(blocks(2, lambda k: {"reward/avg_raw_reward": 0.5}), config) == want


def test_pass_k_from_the_logged_metric_first():
    bs = blocks(2, lambda k: {"reward/avg_pass_at_8": 0.5})
    cfg = {"generator": {"n_samples_per_prompt": 4}}
    assert pass_k(bs, cfg) == (8, "reward/avg_pass_at_8")


def test_step_success_keeps_its_k():
    trials = [trial("a", 1, offset_s=10 + j) for j in range(2)]
    ps, _ = step_success(trials, attribute(trials, blocks(1), None), k=2)
    assert ps.k == 2


@pytest.mark.parametrize("value", [0.0, 1.0])
def test_pass_at_k_check_agrees_within_its_tolerance_and_no_further(value):
    # every task solved always (or never): the estimate and its interval are the value
    c = 4 if value else 0
    cells = {s: [(4, c)] * 3 for s in (1, 2)}
    key = "reward/avg_pass_at_4"
    for off, agrees in ((1e-4, True), (2e-4, False)):
        logged = value - off if value else value + off
        check = pass_at_k_check(cells, blocks(2, lambda k, v=logged: {key: v}), key, 4)
        assert (check.key, check.lo, check.hi, check.estimated) == (key, value, value, value)
        assert check.agrees is agrees, off


def test_pass_at_k_check_resamples_each_step_with_a_seed_of_its_own():
    import numpy as np

    from sitegen.analyse import stats

    cells = {1: [(4, 1), (4, 4), (4, 0)], 2: [(4, 2), (4, 3), (4, 0), (4, 4)]}
    key = "reward/avg_pass_at_4"
    check = pass_at_k_check(cells, blocks(2, lambda k: {key: 0.5}), key, 4)
    ests = [[stats.pass_at_k(n, c, 4) for n, c in cells[s]] for s in (1, 2)]
    means = sum(
        np.asarray(e)[stats.draws(len(e), stats.RESAMPLES, stats.SEED + i)].mean(axis=1)
        for i, e in enumerate(ests)
    )
    assert (check.lo, check.hi) == stats.percentile_interval(means / 2)


def test_learning_section_with_trials_puts_each_part_together():
    # 12 tasks, two trials a step, all solved from step 6 on; pass@2 logged as 1.0 then
    trials = [
        trial(t, s, reward=1.0 if s > 5 else 0.0, offset_s=10 + j)
        for s in range(1, 11)
        for t in TASKS
        for j in range(2)
    ]
    bs = blocks(10, lambda k: {"reward/avg_pass_at_2": 1.0 if k > 5 else 0.0})
    attr = attribute(trials, bs, None)
    ta = analyse_tasks(trials, attr)
    sec = learning_section(bs, trials, attr, ta, {"generator": {"n_samples_per_prompt": 4}})
    assert (sec.verdict.source, sec.verdict.verdict, sec.note) == ("trials", "improved", "")
    ps = sec.per_step
    assert ps.k == 2 and ps.step == list(range(1, 11))  # the logged key's k, not the config's
    assert ps.graded == [24] * 10 and ps.rate == [0.0] * 5 + [1.0] * 5
    assert ps.pass_at_k == [0.0] * 5 + [1.0] * 5
    check = sec.pass_at_k
    assert (check.key, check.k, check.steps, check.cells) == ("reward/avg_pass_at_2", 2, 10, 120)
    assert (check.estimated, check.logged, check.agrees) == (0.5, 0.5, True)
    # trials that could not be placed in time: no per-step figures, the reward's verdict
    none = attribute(trials, [], None)
    sec = learning_section(bs, trials, none, None, None)
    assert sec.per_step is None and sec.pass_at_k is None


def test_step_success_passes_over_unplaced_and_ungraded_trials_only():
    trials = [
        trial("a", start=T0 - timedelta(days=2)),  # before the log: no step
        trial("a", 1, reward=None),  # not graded
        trial("a", 1, reward=1.0, offset_s=20),
        trial("b", 1, reward=0.0, offset_s=30),
        trial("a", 1, reward=1.0, offset_s=40),
    ]
    ps, cells = step_success(trials, attribute(trials, blocks(1), None), k=2)
    assert (ps.graded, ps.successes) == ([3], [2]) and cells == {1: [(2, 2), (1, 0)]}


def test_step_success_band_is_drawn_with_its_own_resample_count():
    import numpy as np

    from sitegen.analyse import stats

    # one step, eight prompt groups of two trials with summed rewards 0, 0.25, … 1.75
    quarters = (0.0, 0.25, 0.5, 0.75, 1.0)
    rewards = [(0.0, q) for q in quarters] + [(q, 1.0) for q in quarters[1:4]]
    trials = [
        trial(f"t{i}", 1, reward=r, offset_s=10 + 2 * i + j)
        for i, pair in enumerate(rewards)
        for j, r in enumerate(pair)
    ]
    ps, _ = step_success(trials, attribute(trials, blocks(1), None), k=None)
    sums = np.array([sum(p) for p in rewards])
    # the band by its definition: BAND_RESAMPLES rows of 6 groups drawn with the seed, the
    # ratio Σ reward / Σ graded of each row, its 2.5th and 97.5th percentiles
    idx = stats.draws(8, stats.BAND_RESAMPLES, stats.SEED)
    ratios = np.sort(sums[idx].sum(axis=1) / (2 * 8))
    k = stats.BAND_RESAMPLES // 40
    assert (ps.reward_lo[0], ps.reward_hi[0]) == (ratios[k], ratios[-1 - k])
    assert stats.BAND_RESAMPLES != stats.RESAMPLES
    assert (ps.reward_lo[0], ps.reward_hi[0]) != stats.bootstrap_ratio(sums, [2] * 8)


def test_learning_section_takes_k_from_the_config_without_a_logged_pass_at_k():
    trials = [
        trial(t, s, reward=float(j == 0), offset_s=10 + j)
        for s in (1, 2)
        for t in TASKS
        for j in range(2)
    ]
    bs = blocks(2, lambda k: {"reward/avg_raw_reward": 0.5})
    attr = attribute(trials, bs, None)
    sec = learning_section(
        bs, trials, attr, analyse_tasks(trials, attr), {"generator": {"n_samples_per_prompt": 2}}
    )
    # each task 1 of 2 a step: pass@2 = 1 - C(1, 2) / C(2, 2) = 1
    assert sec.per_step.k == 2 and sec.per_step.pass_at_k == [1.0, 1.0]
    assert sec.pass_at_k is None  # nothing logged to check it against


def test_pass_at_k_check_draws_step_i_with_the_seed_plus_i():
    import numpy as np

    from sitegen.analyse import stats

    # three steps of six tasks with unlike counts: each step's draws change the interval
    cells = {s: [(5, 1), (7, 3), (6, 2), (9, 1), (8, 6), (3, 1)] for s in (1, 2, 3)}
    key = "reward/avg_pass_at_2"
    check = pass_at_k_check(cells, blocks(3, lambda k: {key: 0.5}), key, 2)
    ests = [stats.pass_at_k(n, c, 2) for n, c in cells[1]]
    means = sum(
        np.asarray(ests)[stats.draws(6, stats.RESAMPLES, stats.SEED + i)].mean(axis=1)
        for i in range(3)
    )
    assert (check.lo, check.hi) == stats.percentile_interval(means / 3)
    assert (check.lo, check.hi) == (
        pytest.approx(0.48338, abs=1e-5),
        pytest.approx(0.70485, abs=1e-5),
    )
