"""Per-task counts compared, paired by task (sitegen/insights/paired.py)."""

from __future__ import annotations

import random

import pytest

from sitegen.insights.attribution import attribute
from sitegen.insights.paired import MIN_TASKS, compare, final_window, solved_counts
from sitegen.insights.tasks import analyse_tasks
from tests.insights.helpers import blocks, trial


def _counts(rates: dict[str, tuple[int, int]]) -> list[tuple[str, int, int]]:
    return [(name, g, s) for name, (g, s) in rates.items()]


def test_compare_by_hand():
    ref = [("a", 4, 0), ("b", 4, 2), ("c", 4, 4), ("d", 0, 0), ("e", 2, 1)]
    pick = [("c", 2, 1), ("a", 4, 3), ("b", 4, 2), ("d", 4, 4), ("x", 9, 9)]
    v = compare(ref, pick)
    # shared (graded in both): a, b, c; d has no graded trial in ref, e none in pick
    assert v.tasks == 3
    assert v.ref_rate == pytest.approx((0 + 0.5 + 1) / 3)
    assert v.pick_rate == pytest.approx((0.75 + 0.5 + 0.5) / 3)
    assert v.diff == pytest.approx((0.75 + 0 - 0.5) / 3)
    assert v.improvement == pytest.approx((1 + 0.5 + 0) / 3)  # a better, b tied, c worse
    assert (v.only_pick, v.only_ref) == (1, 0)  # a: solved by the pick only
    assert v.sign_p == 1.0
    assert v.verdict == "can't tell"  # 3 < MIN_TASKS shared tasks, whatever the interval


def test_no_shared_task():
    v = compare([("a", 4, 1)], [("b", 4, 4)])
    assert v.tasks == 0 and v.diff is None and v.verdict == "can't tell" and v.sign_p == 1.0


def test_min_tasks_for_a_verdict():
    def run(n, rate):
        return _counts({f"t{i}": (4, rate) for i in range(n)})

    assert compare(run(MIN_TASKS - 1, 0), run(MIN_TASKS - 1, 4)).verdict == "can't tell"
    assert compare(run(MIN_TASKS, 0), run(MIN_TASKS, 4)).verdict == "better"
    assert compare(run(MIN_TASKS, 4), run(MIN_TASKS, 0)).verdict == "worse"


def test_a_one_task_difference_is_never_better():
    rng = random.Random(3)
    for n in range(MIN_TASKS, 80):
        ref = _counts({f"t{i}": (8, rng.randint(0, 8)) for i in range(n)})
        pick = list(ref)
        name, g, s = pick[n // 2]
        pick[n // 2] = (name, g, min(g, s + rng.randint(1, 8)))  # one task better, all else equal
        v = compare(ref, pick)
        assert v.verdict == "can't tell", n
        assert v.diff_lo == 0.0 and v.improvement_lo == 0.5


def test_repeating_trials_never_turns_cant_tell_into_better():
    """Each trial repeated (its task's counts multiplied): the tasks' rates, and so every
    figure and the verdict, stay as they were; a test over trials would grow surer."""
    rng = random.Random(5)
    seen = set()
    for _ in range(60):
        n = rng.randint(MIN_TASKS, 50)
        shift = rng.choice((0, 1, 2))
        ref = {f"t{i}": (4, rng.randint(0, 4)) for i in range(n)}
        pick = {t: (g, min(g, max(0, s + rng.randint(-2, 2 + shift)))) for t, (g, s) in ref.items()}
        v = compare(_counts(ref), _counts(pick))
        seen.add(v.verdict)
        for k in (2, 3, 5, 10):
            more = compare(
                _counts({t: (k * g, k * s) for t, (g, s) in ref.items()}),
                _counts({t: (k * g, k * s) for t, (g, s) in pick.items()}),
            )
            assert (more.verdict, more.diff_lo, more.diff_hi) == (v.verdict, v.diff_lo, v.diff_hi)
    assert "can't tell" in seen and "better" in seen  # both cases were met


def test_the_pair_of_three_tasks():
    """Two runs alike but for three tasks the pick solves (sitegen/synth/statplants.py's pair):
    the sign test says 3 to 0 (p = 0.25) and the verdict "can't tell"."""
    ref = _counts({f"t{i}": (8, (i % 5) + (i % 3)) for i in range(16)})
    pick = list(ref)
    for j in (3, 8, 14):
        pick[j] = (ref[j][0], ref[j][1], 0)
    v = compare(pick, ref)  # ref solves three tasks the (new) reference never solves
    assert (v.only_pick, v.only_ref, v.sign_p, v.verdict) == (3, 0, 0.25, "can't tell")


def _analysis(steps: int, tasks: int = 2):
    trials = [
        trial(f"task-{t}", s, reward=float((s + t) % 2), offset_s=10 + j)
        for s in range(1, steps + 1)
        for t in range(tasks)
        for j in range(2)
    ]
    return analyse_tasks(trials, attribute(trials, blocks(steps), None))


@pytest.mark.parametrize(
    ("steps", "window"),
    [(1, (1, 1)), (2, (1, 2)), (3, (1, 3)), (4, (2, 4)), (5, (3, 5)), (7, (5, 7)),
     (10, (8, 10)), (11, (9, 11)), (16, (13, 16))],
)  # fmt: skip
def test_final_window_at_each_step_count(steps, window):
    assert final_window(list(range(1, steps + 1))) == window
    counts = solved_counts(_analysis(steps))
    assert counts["final"]["steps"] == list(window)
    lo, hi = window
    # task-0 succeeds at odd steps, task-1 at even ones; two trials a step each
    odd = sum(1 for s in range(lo, hi + 1) if s % 2)
    even = hi - lo + 1 - odd
    assert counts["tasks"] == ["task-0", "task-1"]
    assert counts["final"]["graded"] == [2 * (hi - lo + 1)] * 2
    assert counts["final"]["successes"] == [2 * odd, 2 * even]
    assert counts["graded"] == [2 * steps, 2 * steps]
