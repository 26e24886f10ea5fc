"""Proof by simulation (docs/statistics.md, "How we know"): on data drawn with a known
effect, 200 seeded replicates each, the intervals cover what they should and the verdicts
do not cry wolf. Seeded, so each run of the suite draws the same data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sitegen.analyse import stats
from sitegen.insights.paired import compare
from tests.insights.helpers import ar1

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
        y = ar1(rng, REPLICATES, n, phi) - 0.03 * np.arange(n)
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


def test_moving_blocks_respect_correlated_steps():
    """Steps whose noise carries over (AR(1), 0.6 of the last step's): the moving-block
    interval of a change between two windows of 27 steps is wider than one that resamples
    steps one by one, and holds the true change more often."""
    rng = np.random.default_rng(3)
    wide = blocks_cover = single_cover = 0
    w, true = 27, 0.5
    for _ in range(REPLICATES):
        noise = np.zeros(2 * w + 100)
        shocks = rng.normal(0, 1, len(noise))
        for i in range(1, len(noise)):
            noise[i] = 0.6 * noise[i - 1] + shocks[i]
        early, late = noise[50 : 50 + w], noise[-w:] + true
        lo, hi = stats.window_change(early.tolist(), late.tolist())
        ones = stats.draws(w, stats.RESAMPLES)
        d = late[stats.draws(w, stats.RESAMPLES, 2)].mean(axis=1) - early[ones].mean(axis=1)
        slo, shi = stats.percentile_interval(d)
        wide += (hi - lo) > (shi - slo)
        blocks_cover += lo <= true <= hi
        single_cover += slo <= true <= shi
    assert wide / REPLICATES > 0.8
    assert blocks_cover > single_cover


def test_window_change_of_pure_noise_says_no_change():
    """Steps of independent noise and no trend, the windows "Is it learning?" compares on
    the logged reward (3 to 20 steps each), 200 replicates per size: the interval excludes no
    change in at most 6.5 % of the 1000 (5 % expected, 6.5 % two binomial standard errors
    above), and in at most 10 % of any one size's 200."""
    rng = np.random.default_rng(4)
    total = 0
    for w in (3, 4, 5, 10, 20):
        false = 0
        for _ in range(REPLICATES):
            steps = rng.normal(0.5, 0.05, 2 * w)
            lo, hi = stats.window_change(steps[:w].tolist(), steps[w:].tolist())
            false += lo > 0 or hi < 0
        assert false / REPLICATES <= 0.10, w
        total += false
    assert total / (5 * REPLICATES) <= 0.065
