"""The calibration of "Is it learning?" on the logged reward and of the trend and rate
findings on steps whose noise carries over (docs/statistics.md, "How we know"): seeded
replicates of AR(1) noise about a flat or a straight-line reward (or error rate), through
the very functions the pages use. Run once; its figures are quoted in the docs (and the
window change's critical values are ``sitegen.analyse.ar1.CRITICAL``);
tests/insights/test_simulation.py and test_rule_alarms.py keep smaller seeded counts.

    .venv/bin/python scripts/calibrate_ar1.py [replicates] [part ...]

Parts: critical, learning, trend, falling, rising (all by default).
"""

from __future__ import annotations

import math
import sys

import numpy as np

from sitegen.analyse import ar1 as A
from sitegen.analyse import stats
from sitegen.insights import findings as F
from sitegen.insights.findings import StepTrials
from tests.insights.helpers import ar1, blocks

LONGEST_WINDOW = 40  # ar1.CRITICAL lists windows of 6 to 20 steps, then the largest of 21-40


def _window(n: int) -> int:
    """The first and the last fifth of ``n`` steps, 3 at least (insights.learning.windows)."""
    return max(3, -(-n // 5))


def _ratio_quantile(rng: np.random.Generator, reps: int, runs: range, phi: float) -> float:
    """The largest over runs of these lengths of the 95 % quantile of |change| / its
    standard error, on AR(1) noise with no change."""
    worst = 0.0
    for n in runs:
        w = _window(n)
        change, _, hi, _ = A.window_changes(ar1(rng, reps, n, phi), w)
        ratio = np.abs(change) * A.critical(w, n) / (hi - change)
        worst = max(worst, float(np.quantile(ratio, 0.95)))
    return worst


def _runs_of(w: int) -> range:
    """The runs whose fifths are windows of ``w`` steps (6 steps or more): 5w − 4 to 5w."""
    return range(5 * w - 4, 5 * w + 1, 2)


def critical(reps: int) -> None:
    """The window change's critical values (``ar1.CRITICAL_SHORT`` by run, ``ar1.CRITICAL``
    by window): the 95 % quantile of |change| / its standard error at φ = ar1.FLOOR, where it
    is largest over φ from 0 to the floor (the first rows show it)."""
    rng = np.random.default_rng(5)
    print("95 % quantile of |change| / standard error, by φ (a quarter of the replicates)")
    for runs in (range(6, 7), range(15, 16), range(24, 25), _runs_of(6), _runs_of(20)):
        row = [
            f"φ {phi}: {_ratio_quantile(rng, reps // 4, runs, phi):.2f}" for phi in (0, 0.3, 0.45)
        ]
        print(f"  runs of {runs.start}-{runs.stop - 1} steps: " + ", ".join(row), flush=True)
    print(f"at φ = {A.FLOOR}: runs of 6 to 25 steps (windows of 3 to 5)")
    short = []
    for n in range(6, 26):
        short.append(_ratio_quantile(rng, reps, range(n, n + 1), A.FLOOR))
        print(f"  {n} steps: {short[-1]:.3f}", flush=True)
    print("windows of 6 steps or more")
    out = []
    for w in range(A.LINE_STEPS, LONGEST_WINDOW + 1):
        out.append(_ratio_quantile(rng, reps, _runs_of(w), A.FLOOR))
        print(f"  {w} steps: {out[-1]:.3f}", flush=True)
    table = [*out[: 21 - A.LINE_STEPS], max(out[21 - A.LINE_STEPS :])]

    def listed(values: list[float]) -> str:
        return "(" + ", ".join(f"{math.ceil(100 * c) / 100:.2f}" for c in values) + ")"

    print(f"CRITICAL_SHORT = {listed(short)}")
    print(f"CRITICAL = {listed(table)}")


def _learning_verdicts(y: np.ndarray) -> np.ndarray:
    """+1, 0 or −1 ("improved", "no change", "worse") of each row of logged reward."""
    _, lo, hi, _ = A.window_changes(y, _window(y.shape[1]))
    return np.where(lo > 0, 1, np.where(hi < 0, -1, 0))


def learning(reps: int) -> None:
    """ "Is it learning?" on the logged reward: "improved" or "worse" on AR(1) noise with no
    change; "improved" on a saturating curve and a jump halfway; coverage of a trend."""
    rng = np.random.default_rng(6)
    print('"is it learning?" (logged reward): improved or worse on no change')
    for phi in (0.0, 0.3, 0.6, 0.8):
        row = [
            f"{n}: {np.mean(_learning_verdicts(ar1(rng, reps, n, phi)) != 0):.3f}"
            for n in (10, 15, 20, 30, 50, 100, 300)
        ]
        print(f"  φ {phi}: " + ", ".join(row))
    print("  coverage of the true change, a trend of 0.01 a step under the same noise")
    for phi in (0.0, 0.3, 0.6):
        row = []
        for n in (15, 20, 30, 50, 100, 300):
            w = _window(n)
            _, lo, hi, _ = A.window_changes(ar1(rng, reps, n, phi) + 0.01 * np.arange(n), w)
            true = 0.01 * (n - w)
            row.append(f"{n}: {np.mean((lo <= true) & (true <= hi)):.3f}")
        print(f"  φ {phi}: " + ", ".join(row))
    print('  "improved" ("worse" for the fall) on learning curves, independent noise of spread s')
    for noise in (0.01, 0.02, 0.03, 0.05):
        for name in ("saturating", "jump", "fall"):
            row = []
            for n in (10, 15, 20, 30, 50, 100):
                t = np.arange(n)
                curve = {
                    "saturating": 0.6 - 0.3 * np.exp(-5 * t / n),
                    "jump": np.where(t < n / 2, 0.3, 0.6),
                    "fall": 0.3 + 0.3 * np.exp(-5 * t / n),
                }[name]
                y = curve + rng.normal(0, noise, (reps, n))
                want = -1 if name == "fall" else 1
                row.append(f"{n}: {np.mean(_learning_verdicts(y) == want):.3f}")
            print(f"  s {noise} {name}: " + ", ".join(row))


def trend(reps: int) -> None:
    """The fitted change's interval ("reward is falling", "flat") over windows of 8-20
    steps of a reward falling 0.03 a step: its coverage, and the share below the truth."""
    rng = np.random.default_rng(0)
    print("fitted change: coverage of the true change (and the share of intervals below it)")
    for n in (8, 10, 12, 16, 20):
        xs = [float(s) for s in range(n)]
        row = []
        for phi in (0.0, 0.3, 0.6):
            y = ar1(rng, reps, n, phi) - 0.03 * np.arange(n)
            _, lo, hi, _, _ = stats.ar1_contrast(y, stats.fitted_weights(xs), xs)
            true = -0.03 * (n - 1)
            row.append(
                f"φ {phi}: {np.mean((lo <= true) & (true <= hi)):.3f} ({np.mean(hi < true):.3f})"
            )
        print(f"  {n} steps: " + ", ".join(row))


def falling(reps: int) -> None:
    """ "Reward is falling" on a level reward of spread 1 (the 0.05 threshold never decides)."""
    rng = np.random.default_rng(1)
    print('"reward is falling" on a level reward')
    for n in (8, 12, 20, 30, 50):
        row = []
        for phi in (0.0, 0.3, 0.6):
            ys = ar1(rng, reps, n, phi)
            fired = sum(
                (
                    f := F.reward_trend(
                        blocks(n, lambda k, y=y: {"reward/avg_raw_reward": float(y[k - 1])})
                    )
                )
                is not None
                and f.id == "reward_falling"
                for y in ys
            )
            row.append(f"φ {phi}: {fired / reps:.3f}")
        print(f"  {n} steps: " + ", ".join(row))


def rising(reps: int) -> None:
    """ "Error rate is rising": 16 rollouts a step, a failure rate of 0.2 whose logit drifts
    as AR(1) with a spread of 1."""
    rng = np.random.default_rng(2)
    print('"error rate is rising" on a steady rate')
    for n in (6, 12, 20, 30, 50):
        row = []
        for phi in (0.0, 0.3, 0.6):
            logit = math.log(0.2 / 0.8) + ar1(rng, reps, n, phi) * math.sqrt(1 - phi * phi)
            errors = rng.binomial(16, 1 / (1 + np.exp(-logit)))
            fired = sum(
                F.error_rising(
                    [StepTrials(s + 1, 16, int(e), 0) for s, e in enumerate(row_e)], "tasks"
                )
                is not None
                for row_e in errors
            )
            row.append(f"φ {phi}: {fired / reps:.3f}")
        print(f"  {n} steps: " + ", ".join(row))


if __name__ == "__main__":
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    parts = sys.argv[2:] or ["critical", "learning", "trend", "falling", "rising"]
    for part in parts:
        {
            "critical": critical,
            "learning": learning,
            "trend": trend,
            "falling": falling,
            "rising": rising,
        }[part](reps)
