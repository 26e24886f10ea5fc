"""Proof by simulation (docs/statistics.md, "How we know"): on data drawn with a known
effect, 200 seeded replicates each, the intervals cover what they should and the verdicts
do not cry wolf. Seeded, so each run of the suite draws the same data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sitegen.analyse import ar1, stats
from sitegen.insights.learning import windows
from sitegen.insights.paired import compare
from tests.insights.helpers import ar1 as ar1_noise

REPLICATES = 200
TASKS = 64
NAMES = [f"task-{i:02d}" for i in range(TASKS)]


def _rows(graded: int, successes: np.ndarray) -> list[tuple[str, int, int]]:
    return [(n, graded, int(s)) for n, s in zip(NAMES, successes, strict=True)]


def test_paired_intervals_cover_the_true_difference():
    """Each task's success probability raised by exactly 0.1 under the pick, 8 trials a
    task in each run: the 95 % interval holds 0.1 in 93–97 % of the replicates. 200
    replicates pin a coverage to ±1.5 points (one binomial standard error): the figure is
    this seed's; the design's, over 2000, is 94.0 % (docs/statistics.md)."""
    rng = np.random.default_rng(0)
    covered = better = 0
    for _ in range(REPLICATES):
        base = rng.uniform(0.1, 0.6, TASKS)
        v = compare(_rows(8, rng.binomial(8, base)), _rows(8, rng.binomial(8, base + 0.1)))
        covered += v.diff_lo <= 0.1 <= v.diff_hi
        better += v.verdict == "better"
    assert 0.93 <= covered / REPLICATES <= 0.97
    assert better / REPLICATES > 0.5  # and a real 10-point gain is mostly found


def test_a_run_against_itself_cant_tell():
    """One run's 16 trials of each task, reshuffled and dealt into two halves: the two
    halves are the same run, and the verdict says "can't tell" in at least 95 %."""
    rng = np.random.default_rng(1)
    cant = 0
    for _ in range(REPLICATES):
        base = rng.uniform(0.05, 0.95, TASKS)
        trials = rng.permuted(rng.binomial(1, base[:, None], (TASKS, 16)), axis=1)
        v = compare(_rows(8, trials[:, :8].sum(axis=1)), _rows(8, trials[:, 8:].sum(axis=1)))
        cant += v.verdict == "can't tell"
    assert cant / REPLICATES >= 0.95


def test_more_trials_of_the_same_tasks_only_narrow_a_real_difference():
    """Trials repeated (each task's counts multiplied, test_paired) change nothing; more
    *new* trials of the same tasks narrow the interval around a real difference and never
    turn a null into "better" more often than its 5 %."""
    rng = np.random.default_rng(2)
    false = 0
    for _ in range(REPLICATES):
        base = rng.uniform(0.1, 0.9, TASKS)
        v = compare(_rows(32, rng.binomial(32, base)), _rows(32, rng.binomial(32, base)))
        false += v.verdict == "better"
    assert false / REPLICATES <= 0.05


def _binomial_pmf(n: int, k: int, p: float) -> float:
    return math.comb(n, k) * p**k * (1 - p) ** (n - k)


def test_wilson_covers_a_proportion():
    """The exact coverage of Wilson's interval (every outcome weighed by its probability),
    averaged over success rates 0.1–0.9, for a step of 20, 50 and 100 graded trials."""
    for n in (20, 50, 100):
        cover = []
        for p in np.linspace(0.1, 0.9, 41):
            cover.append(
                sum(
                    _binomial_pmf(n, k, p)
                    for k in range(n + 1)
                    if (w := stats.wilson(k, n)) and w[0] <= p <= w[1]
                )
            )
        assert 0.93 <= sum(cover) / len(cover) <= 0.97, n
        assert min(cover) >= 0.92, n


# the windows "reward is falling" and "flat" fit: the last 8 to 20 steps
WINDOWS = (8, 12, 20)


def _fitted(phi: float, seed: int) -> tuple[np.ndarray, np.ndarray, float]:
    """200 replicates a window of a reward falling 0.03 a step under AR(1) noise of spread
    1: the fitted change's intervals (bounds, rows of replicates by window) and the truth."""
    rng = np.random.default_rng(seed)
    los, his, truths = [], [], []
    for n in WINDOWS:
        xs = [float(s) for s in range(n)]
        y = ar1_noise(rng, REPLICATES, n, phi) - 0.03 * np.arange(n)
        _, lo, hi, _, _ = stats.ar1_contrast(y, stats.fitted_weights(xs), xs)
        los.append(lo)
        his.append(hi)
        truths.append(np.full(REPLICATES, -0.03 * (n - 1)))
    return np.concatenate(los), np.concatenate(his), np.concatenate(truths)


@pytest.mark.parametrize(
    ("phi", "low", "high"), [(0.0, 0.93, 0.98), (0.3, 0.92, 0.97), (0.6, 0.88, 0.97)]
)
def test_the_fitted_change_covers_a_trend_under_correlated_steps(phi, low, high):
    """The interval "reward is falling" and "flat" rest on (:func:`stats.ar1_contrast` of
    the least-squares change, the replicates as rows), 600 seeded replicates over windows of
    8, 12 and 20 steps: it holds the true change in 93–98 % at φ = 0 (measured over 4000 a
    window: 96.4–97.6 %, the bias-corrected r credits short windows of independent steps
    some correlation), 92–97 % at 0.3 (93.8–94.7 %) and at least 88 % at 0.6 (90.8–93.1 %:
    a window of 8 steps cannot show its correlation). Below the truth, the side "falling"
    reads, in at most 4.6 % at 0.6."""
    lo, hi, true = _fitted(phi, 40 + int(10 * phi))
    covered = float(np.mean((lo <= true) & (true <= hi)))
    assert low <= covered <= high
    assert float(np.mean(hi < true)) <= 0.06


# "Is it learning?" on the logged reward: runs of these many steps (windows of 3 to 60)
RUNS = (15, 20, 30, 50, 100, 300)
LEARNING_REPLICATES = 500


def _learning(y: np.ndarray) -> np.ndarray:
    """+1 ("improved"), 0 or −1 ("worse") for each row of logged reward, as
    :func:`reward_learning` judges it (its windows, :func:`ar1.window_changes`)."""
    _, lo, hi, _ = ar1.window_changes(y, _window(y.shape[1]))
    return np.where(lo > 0, 1, np.where(hi < 0, -1, 0))


def _window(n: int) -> int:
    return len(windows(list(range(n)))[0])


@pytest.mark.parametrize("phi", [0.0, 0.3, 0.6])
def test_is_it_learning_on_correlated_noise_says_no_change(phi):
    """Steps of AR(1) noise (``phi`` of the last step's) and no change, runs of 15 to 300
    steps, 500 seeded replicates a length: "improved" or "worse" in at most 7 % of each
    length (5 % expected at φ = 0.6, where the critical values are calibrated; 7 % is two
    binomial standard errors of 500 above it) and at most 6 % of the 3000 (2.5 above).
    The moving-block bootstrap said so in 13–26 % at φ = 0.6 (1000 replicates a length);
    this interval in 4.3–5.2 % (2000), and in at most 0.2 % and 0.5 % at φ = 0 and 0.3
    (docs/statistics.md)."""
    rng = np.random.default_rng(50 + int(10 * phi))
    alarms = 0
    for n in RUNS:
        said = np.count_nonzero(_learning(ar1_noise(rng, LEARNING_REPLICATES, n, phi)))
        assert said / LEARNING_REPLICATES <= 0.07, n
        alarms += said
    assert alarms / (len(RUNS) * LEARNING_REPLICATES) <= 0.06


@pytest.mark.parametrize("phi", [0.0, 0.3, 0.6])
def test_is_it_learning_covers_the_true_window_change(phi):
    """A reward rising 0.01 a step under AR(1) noise of spread 1: the interval holds the
    true change of the window means, 0.01 times the steps between the windows' starts, in
    at least 93 % of 500 replicates of each length (over 2000: 94.6–95.7 % at φ = 0.6, at
    least 99.5 % below; the moving blocks, 73.5–86.7 % at 0.6; docs/statistics.md)."""
    rng = np.random.default_rng(60 + int(10 * phi))
    for n in RUNS:
        w = _window(n)
        y = ar1_noise(rng, LEARNING_REPLICATES, n, phi) + 0.01 * np.arange(n)
        _, lo, hi, _ = ar1.window_changes(y, w)
        true = 0.01 * (n - w)
        assert np.mean((lo <= true) & (true <= hi)) >= 0.93, n


def _curve(shape: str, n: int) -> np.ndarray:
    t = np.arange(n)
    if shape == "saturating":
        return 0.6 - 0.3 * np.exp(-5 * t / n)
    if shape == "jump":
        return np.where(t < n / 2, 0.3, 0.6)
    return 0.3 + 0.3 * np.exp(-5 * t / n)  # a clear fall


ALL_RUNS = (10, 15, 20, 30, 50, 100)


@pytest.mark.parametrize(
    ("shape", "noise", "runs", "least"),
    [
        ("saturating", 0.01, ALL_RUNS, 0.98),
        ("jump", 0.01, ALL_RUNS, 0.98),
        ("fall", 0.01, ALL_RUNS, 0.98),
        ("saturating", 0.02, ALL_RUNS[1:], 0.97),
        ("saturating", 0.02, (10,), 0.85),
        ("jump", 0.02, ALL_RUNS, 0.95),
    ],
)
def test_is_it_learning_sees_real_learning(shape, noise, runs, least):
    """A reward rising as 0.6 − 0.3·e^(−5t/n) (most of it in the first fifth), a jump from
    0.3 to 0.6 halfway, and a fall mirroring the rise, with independent noise of spread
    ``noise``, 200 seeded replicates a length: "improved" ("worse" for the fall) in at
    least ``least`` of them. A line through the whole run called the first two "no change"
    in every run of 10 to 100 steps; this interval, with noise 0.01, sees each in at least
    99.9 % of 2000, with 0.02 in 91.5 % (runs of 10 steps, whose windows of 3 hold the
    steepest part of the rise) to 100 % (docs/statistics.md)."""
    rng = np.random.default_rng(70)
    want = -1 if shape == "fall" else 1
    for n in runs:
        y = _curve(shape, n) + rng.normal(0, noise, (REPLICATES, n))
        assert np.mean(_learning(y) == want) >= least, n
