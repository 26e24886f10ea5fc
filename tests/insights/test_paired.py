"""Per-task counts compared, paired by task (sitegen/insights/paired.py), and the browser's
copy of it (static/stats.js) held to it bit for bit."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import msgspec
import pytest

from sitegen.analyse import stats
from sitegen.insights import paired
from sitegen.insights.attribution import attribute
from sitegen.insights.paired import MIN_TASKS, compare, final_window, solved_counts
from sitegen.insights.tasks import analyse_tasks
from sitegen.insights.verdicts import PairedVerdict
from tests.insights.helpers import blocks, trial

STATS_JS = Path(__file__).resolve().parents[2] / "static" / "stats.js"


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


def test_no_shared_task_in_full():
    # ungraded on one side (d) or run by one side only (a, b): no pair, nothing counted
    v = compare([("a", 4, 1), ("d", 0, 0)], [("b", 4, 4), ("d", 4, 4)])
    assert v == PairedVerdict(
        verdict="can't tell",
        tasks=0,
        ref_rate=None,
        pick_rate=None,
        diff=None,
        diff_lo=None,
        diff_hi=None,
        improvement=None,
        improvement_lo=None,
        improvement_hi=None,
        only_pick=0,
        only_ref=0,
        sign_p=1.0,
    )


# a task's difference of rates (4 graded trials each side) as its (ref, pick) successes
_SUCCESSES = {1.0: (0, 4), 0.75: (0, 3), 0.5: (1, 3), 0.25: (1, 2), -0.25: (2, 1)}
_SUCCESSES |= {-0.5: (2, 0), -0.75: (3, 0), -1.0: (4, 0)}


def _diffs(*diffs: float):
    ref = [(f"t{i:02d}", 4, _SUCCESSES[d][0]) for i, d in enumerate(diffs)]
    pick = [(f"t{i:02d}", 4, _SUCCESSES[d][1]) for i, d in enumerate(diffs)]
    return compare(ref, pick)


def test_a_verdict_needs_both_bounds_strictly_past_their_line():
    """Tasks' differences chosen (with the default seed's resamples) so that one bound lands
    exactly on its line, 0 for the mean difference or ½ for the probability of improvement,
    while the other is past its own: exactly on the line is not past it, "can't tell"."""
    # 14 tasks gain 0.25, one loses 1: the 50th smallest of 2000 resampled means is 0
    v = _diffs(*[0.25] * 13, -1.0, 0.25)
    assert (v.diff_lo, v.improvement_lo, v.verdict) == (0.0, 0.8, "can't tell")
    # 9 gain 0.75, 3 lose: the mean's interval above 0, the improvement's reaches ½
    v = _diffs(*[0.75] * 9, -0.75, -0.5, -0.75)
    assert v.diff_lo > 0 and (v.improvement_lo, v.verdict) == (0.5, "can't tell")
    # the mirror images: worse ends at 0 and at ½
    v = _diffs(*[-0.5] * 9, 0.75, 0.5)
    assert (v.diff_hi, v.verdict) == (0.0, "can't tell") and v.improvement_hi < 0.5
    v = _diffs(*[-0.75] * 7, 0.5, -0.75, 0.25)
    assert v.diff_hi < 0 and (v.improvement_hi, v.verdict) == (0.5, "can't tell")


def test_worse_on_most_tasks_or_on_the_mean_alone_is_not_worse():
    # 10 tasks lose 0.25, 2 gain 1: worse on most tasks, but the mean's interval reaches 0.27
    v = _diffs(*[-0.25] * 10, 1.0, 1.0)
    assert (v.diff_lo, v.diff_hi) == (-0.25, pytest.approx(0.2708333))
    assert v.improvement_hi == pytest.approx(5 / 12) and v.verdict == "can't tell"
    # 12 tasks gain 0.1, 8 lose 1: worse on the mean, better on most tasks
    ref = [(f"t{i}", 10, 0) for i in range(12)] + [(f"u{i}", 10, 10) for i in range(8)]
    pick = [(f"t{i}", 10, 1) for i in range(12)] + [(f"u{i}", 10, 0) for i in range(8)]
    v = compare(ref, pick)
    assert v.diff_hi < 0 and (v.improvement_lo, v.improvement_hi) == (0.4, 0.8)
    assert v.verdict == "can't tell"


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


# -- the browser's copy --------------------------------------------------------------------------


def test_stats_js_constants_are_pythons():
    js = STATS_JS.read_text()
    found = re.search(r"var SEED = (\d+), RESAMPLES = (\d+), MIN_TASKS = (\d+);", js)
    assert found and tuple(map(int, found.groups())) == (stats.SEED, stats.RESAMPLES, MIN_TASKS)


NODE = shutil.which("node")

_RUNNER = """
const fs = require("fs"), vm = require("vm");
const window = { sitegen: { format: {} } };
vm.runInNewContext(fs.readFileSync(process.argv[1], "utf8"), { window, Float64Array, Map, Math });
const cases = JSON.parse(fs.readFileSync(0, "utf8"));
const s = window.sitegen.stats, next = s.mulberry32(7);
const stream = Array.from({ length: 50 }, () => next());
process.stdout.write(JSON.stringify({
  compare: cases.map(c => s.compare(c[0], c[1])),
  signs: [[0, 0], [3, 0], [7, 2], [12, 30], [40, 41]].map(w => s.signTest(w[0], w[1])),
  stream,
}));
"""


@pytest.mark.skipif(NODE is None, reason="needs node")
def test_stats_js_gives_the_python_numbers_to_the_bit():
    rng = random.Random(11)
    cases = []
    for n in (0, 1, 2, 5, 9, 10, 23, 64, 130):
        names = [f"task {i}" for i in range(n)] + ["constructor", "__proto__"]
        ref = {"tasks": names, "graded": [], "successes": []}
        pick = {"tasks": list(reversed(names)), "graded": [], "successes": []}
        for side in (ref, pick):
            for _ in names:
                g = rng.choice((0, 1, 2, 4, 8, 16))
                side["graded"].append(g)
                side["successes"].append(rng.randint(0, g))
        cases.append((ref, pick))
    out = subprocess.run(
        [NODE, "-e", _RUNNER, str(STATS_JS)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(out.stdout)
    for (ref, pick), js in zip(cases, got["compare"], strict=True):

        def rows(d):
            return list(zip(d["tasks"], d["graded"], d["successes"], strict=True))

        assert js == msgspec.structs.asdict(paired.compare(rows(ref), rows(pick))), len(
            ref["tasks"]
        )
    assert got["signs"] == [
        stats.sign_test(w, lose) for w, lose in [(0, 0), (3, 0), (7, 2), (12, 30), (40, 41)]
    ]
    assert got["stream"] == stats.mulberry32(50, 7).tolist()


_SIGN_RUNNER = """
const fs = require("fs"), vm = require("vm");
const window = { sitegen: { format: {} } };
vm.runInNewContext(fs.readFileSync(process.argv[1], "utf8"), { window, Float64Array, Map, Math });
const pairs = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(pairs.map(w => window.sitegen.stats.signTest(w[0], w[1]))));
"""

_MANY_SIGNS = [(600, 600), (537, 538), (2000, 2100), (5000, 4900), (1100, 0), (1, 1500), (3, 0)]


@pytest.mark.skipif(NODE is None, reason="needs node")
def test_stats_js_sign_test_beyond_a_thousand_tasks_is_pythons():
    out = subprocess.run(
        [NODE, "-e", _SIGN_RUNNER, str(STATS_JS)],
        input=json.dumps(_MANY_SIGNS),
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout) == [stats.sign_test(w, lose) for w, lose in _MANY_SIGNS]
    assert json.loads(out.stdout)[0] == 1.0


def test_solved_counts_in_full():
    assert solved_counts(_analysis(4)) == {
        "tasks": ["task-0", "task-1"],
        "trials": [8, 8],
        "successes": [4, 4],
        "graded": [8, 8],
        "final": {"steps": [2, 4], "graded": [6, 6], "successes": [2, 4]},
    }
    # no graded trial at all: no final window, and nothing graded or solved in it
    trials = [trial(f"task-{t}", 1, reward=None, offset_s=10 + t) for t in range(2)]
    ungraded = analyse_tasks(trials, attribute(trials, blocks(1), None))
    assert solved_counts(ungraded) == {
        "tasks": ["task-0", "task-1"],
        "trials": [1, 1],
        "successes": [0, 0],
        "graded": [0, 0],
        "final": {"steps": None, "graded": [0, 0], "successes": [0, 0]},
    }
