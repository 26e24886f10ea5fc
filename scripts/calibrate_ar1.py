"""The calibration of the trend and rate findings on steps whose noise carries over
(docs/statistics.md, "How we know"): seeded replicates of AR(1) noise about a flat or a
straight-line reward (or error rate), through the very functions the pages use. Run once;
its figures are quoted in the docs; tests/insights/test_simulation.py and
test_rule_alarms.py keep smaller seeded counts.

    .venv/bin/python scripts/calibrate_ar1.py [replicates]
"""

from __future__ import annotations

import math
import sys

import numpy as np

from sitegen.analyse import stats
from sitegen.insights import findings as F
from sitegen.insights.findings import StepTrials
from tests.insights.helpers import ar1, blocks


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
    trend(reps)
    falling(reps)
    rising(reps)
