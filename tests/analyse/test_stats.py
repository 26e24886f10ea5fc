"""The statistics (sitegen/analyse/stats.py) against values worked by hand or published."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sitegen.analyse import stats


def _mulberry32_one_by_one(seed: int, count: int) -> list[int]:
    """mulberry32 as its JavaScript is written: one state update and hash per draw."""
    out, a = [], seed
    for _ in range(count):
        a = (a + 0x6D2B79F5) & 0xFFFFFFFF
        t = ((a ^ (a >> 15)) * (a | 1)) & 0xFFFFFFFF
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
        out.append((t ^ (t >> 14)) & 0xFFFFFFFF)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2, 12345, 0xFFFFFFFF])
def test_mulberry32_all_at_once_is_the_generator_one_by_one(seed):
    assert stats.mulberry32(3000, seed).tolist() == _mulberry32_one_by_one(seed, 3000)


def test_mulberry32_first_output_is_the_published_one():
    # mulberry32(1)() in JavaScript: 0.6270739405881613 (= 2693262067 / 2**32)
    assert int(stats.mulberry32(1, 1)[0]) == 2693262067
    assert 2693262067 / 2**32 == 0.6270739405881613


def test_indices_are_floor_of_u_times_n():
    for n in (1, 2, 7, 64, 300, 5000):
        r = _mulberry32_one_by_one(stats.SEED, 500)
        want = [math.floor(x / 4294967296 * n) for x in r]
        assert stats.indices(n, 500).tolist() == want
        assert all(0 <= i < n for i in want)


def test_draws_are_rows_of_the_stream_and_read_only():
    d = stats.draws(5, 4)
    assert d.shape == (4, 5)
    assert d.ravel().tolist() == stats.indices(5, 20).tolist()
    with pytest.raises(ValueError):
        d[0, 0] = 1


def test_percentile_interval_takes_the_kth_from_each_end():
    vals = np.arange(2000, dtype=float)[::-1]  # order does not matter
    assert stats.percentile_interval(vals) == (50.0, 1949.0)
    assert stats.percentile_interval(np.arange(40, dtype=float)) == (1.0, 38.0)
    assert stats.percentile_interval(np.arange(39, dtype=float)) == (0.0, 38.0)


def test_wilson_by_the_formula():
    lo, hi = stats.wilson(3, 10)
    assert lo == pytest.approx(0.10779, abs=1e-5) and hi == pytest.approx(0.60322, abs=1e-5)
    assert stats.wilson(0, 10) == (0.0, pytest.approx(0.27753, abs=1e-5))
    assert stats.wilson(10, 10) == (pytest.approx(0.72247, abs=1e-5), 1.0)
    assert stats.wilson(0, 0) is None
    # the interval never leaves [0, 1] and holds the rate
    for n in range(1, 30):
        for s in range(n + 1):
            lo, hi = stats.wilson(s, n)
            assert 0 <= lo <= s / n <= hi <= 1


def test_newcombe_reproduces_the_published_example():
    # Newcombe (1998), Statistics in Medicine 17: 56/70 against 48/80, method 10:
    # difference 0.2000, 95 % interval 0.0524 to 0.3339
    lo, hi = stats.newcombe(48, 80, 56, 70)
    assert lo == pytest.approx(0.0524, abs=1e-4) and hi == pytest.approx(0.3339, abs=1e-4)
    assert stats.newcombe(1, 0, 1, 2) is None
    # at 99 % (z = 2.5758): both Wilson intervals at that z, by the formula
    # ((p + z²/2n) ± z·√(p(1 − p)/n + z²/4n²)) / (1 + z²/n): 48/80 gives 0.4566 to 0.7281,
    # 56/70 gives 0.6535 to 0.8946; 0.2 − √(0.1465² + 0.1281²), 0.2 + √(0.0946² + 0.1434²)
    lo, hi = stats.newcombe(48, 80, 56, 70, z=2.5758293035489004)
    assert lo == pytest.approx(0.00537, abs=1e-5) and hi == pytest.approx(0.37181, abs=1e-5)


def test_sign_test_is_the_exact_binomial():
    assert stats.sign_test(3, 0) == 0.25
    assert stats.sign_test(0, 3) == 0.25
    assert stats.sign_test(10, 0) == 2 / 1024
    assert stats.sign_test(5, 5) == 1.0
    assert stats.sign_test(1, 0) == 1.0
    assert stats.sign_test(0, 0) == 1.0
    for w, lose in ((7, 2), (12, 30), (40, 41)):
        n = w + lose
        exact = min(1, 2 * sum(math.comb(n, i) for i in range(min(w, lose) + 1)) / 2**n)
        assert stats.sign_test(w, lose) == pytest.approx(exact, rel=1e-12)


def test_pass_at_k_unbiased_estimator():
    assert stats.pass_at_k(4, 1, 4) == 1.0  # n = k: solved once is passed
    assert stats.pass_at_k(4, 0, 4) == 0.0
    assert stats.pass_at_k(8, 2, 4) == pytest.approx(1 - 15 / 70)  # 1 − C(6,4)/C(8,4)
    assert stats.pass_at_k(10, 3, 1) == pytest.approx(0.3)  # pass@1 is the success rate
    assert stats.pass_at_k(3, 1, 4) is None  # fewer samples than k: no estimate


def test_bootstrap_ratio():
    # groups of unequal size: the ratio of sums, not the mean of means
    assert stats.bootstrap_ratio([2.0, 2.0], [4, 4]) == (0.5, 0.5)
    assert stats.bootstrap_ratio([1.0], [2]) is None


def test_paired_bootstrap_one_unit_that_differs_ties_at_half():
    lo_hi, pi, (pi_lo, pi_hi) = stats.paired_bootstrap([0.0] * 19 + [1.0])
    assert lo_hi[0] == 0.0 and pi == pytest.approx(0.525) and pi_lo == 0.5


def _by_hand(ys: list[float], ws: list[float], xs: list[float] | None = None):
    """:func:`stats.ar1_contrast` by its definition, one step at a time in Python floats."""
    n = len(ys)
    xs = xs or [float(i) for i in range(n)]
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    e = [y - my - slope * (x - mx) for x, y in zip(xs, ys, strict=True)]
    ss = sum(v * v for v in e)
    r = sum(e[i] * e[i + 1] for i in range(n - 1)) / ss
    rho = min(max((n * r + 2) / (n - 5), 0.0), 0.95)
    n_eff = max(n * (1 - rho) / (1 + rho), 3.0)
    est = sum(w * y for w, y in zip(ws, ys, strict=True))
    half = stats.t975(n_eff - 2) * math.sqrt(ss / (n_eff - 2) * sum(w * w for w in ws))
    return est, est - half, est + half, rho, n_eff


def test_ar1_contrast_by_hand():
    # 12 steps whose residuals carry over, and 40 of mild noise
    ys = [0.1, 0.3, 0.35, 0.2, 0.15, 0.3, 0.5, 0.55, 0.4, 0.5, 0.7, 0.65]
    rng = np.random.default_rng(7)
    noisy = (0.01 * np.arange(40) + rng.normal(0, 0.1, 40)).tolist()
    for series in (ys, noisy):
        xs = [float(i) for i in range(len(series))]
        ws = stats.fitted_weights(xs).tolist()
        got = [float(v[0]) for v in stats.ar1_contrast(np.asarray(series), np.asarray(ws), xs)]
        assert got == pytest.approx(list(_by_hand(series, ws)), rel=1e-12)
        assert stats.fitted_change_interval(xs, series) == pytest.approx(got[1:3], rel=1e-12)
    # a step from 0.2 to 0.5 in 6 steps: residuals about the line that carry over (r
    # corrected to 0.5), 2 effective steps held at 3 (the floor): Student's t with 1 df
    step = [0.2] * 3 + [0.5] * 3
    x6 = [float(i) for i in range(6)]
    assert _by_hand(step, stats.fitted_weights(x6).tolist())[3:] == pytest.approx((0.5, 3.0))
    lo, hi = stats.fitted_change_interval(x6, step)
    assert lo < 0 < 0.3 < hi
    x40 = [float(i) for i in range(40)]
    assert 0 < _by_hand(noisy, stats.fitted_weights(x40).tolist(), x40)[3] < 0.2
    # replicates as rows: each row its own correlation and interval
    x12 = [float(i) for i in range(12)]
    both = stats.ar1_contrast(np.stack([ys, noisy[:12]]), stats.fitted_weights(x12), x12)
    assert both[1][1] == pytest.approx(_by_hand(noisy[:12], stats.fitted_weights(x12).tolist())[1])


def test_the_autocorrelation_at_its_bounds():
    # five steps or fewer: no estimate of r (its correction divides by n − 5): held at 0.95
    # whatever they show; six alternating steps: r negative, held at 0
    for n, rho, n_eff in ((5, 0.95, 3.0), (6, 0.0, 6.0)):
        xs = [float(i) for i in range(n)]
        ys = np.asarray([0.5 + 0.1 * (-1) ** i for i in range(n)])
        got = stats.ar1_contrast(ys, stats.fitted_weights(xs), xs)[3:]
        assert (float(got[0][0]), float(got[1][0])) == (rho, n_eff), n
    # a slow wave over 200 steps: r corrected past 1, held at 0.95: 200 · 0.05 / 1.95 steps
    xs = [float(i) for i in range(200)]
    got = stats.ar1_contrast(np.sin(np.arange(200) / 15), stats.fitted_weights(xs), xs)[3:]
    assert float(got[0][0]) == 0.95
    assert float(got[1][0]) == pytest.approx(200 * 0.05 / 1.95)
    # no residual at all (every step 0): r is 0, not 0 / 0, and the interval the point
    assert stats.fitted_change_interval(xs[:8], [0.0] * 8) == (0.0, 0.0)


def test_a_negative_autocorrelation_is_not_credited():
    # alternating steps: r near −1, held at 0: the interval of independent steps (n − 2 df)
    ys = [0.5 + 0.1 * (-1) ** i for i in range(10)]
    x10 = [float(i) for i in range(10)]
    _, lo, hi, rho, n_eff = stats.ar1_contrast(np.asarray(ys), stats.fitted_weights(x10), x10)
    assert rho[0] == 0.0 and n_eff[0] == 10.0
    assert hi[0] - lo[0] > 0


def test_the_fitted_change_on_uneven_steps():
    # the residuals about the line in the steps themselves, not their order
    xs, ys = [1.0, 2.0, 4.0, 5.0, 7.0, 9.0, 10.0, 12.0], [0.3, 0.1, 0.6, 0.4, 0.9, 0.5, 0.7, 1.0]
    ws = stats.fitted_weights(xs).tolist()
    _, lo, hi, _, _ = _by_hand(ys, ws, xs)
    assert stats.fitted_change_interval(xs, ys) == pytest.approx((lo, hi), rel=1e-12)
    # the weights give the least-squares change: slope × span
    mx, my = sum(xs) / 8, sum(ys) / 8
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )
    assert sum(w * y for w, y in zip(ws, ys, strict=True)) == pytest.approx(slope * 11)


@pytest.mark.parametrize(("n", "block"), [(1, 1), (3, 1), (4, 2), (8, 2), (20, 3), (64, 4)])
def test_block_length_is_about_the_cube_root(n, block):
    assert stats.block_length(n) == block


def test_moving_blocks_are_runs_of_consecutive_steps():
    idx = stats.moving_blocks(10, 3, 200)
    assert idx.shape == (200, 10) and idx.min() >= 0 and idx.max() <= 9
    for row in idx:
        for start in range(0, 9, 3):  # blocks at 0, 3, 6 (the last cut to one step)
            block = row[start : start + 3]
            assert list(block) == list(range(block[0], block[0] + len(block)))


def test_window_changes_of_constant_and_linear_series():
    # steps that agree leave the resamples nothing to vary: the interval is the trials' own,
    # Newcombe's for 3 of 30 against 12 of 30 (Wilson's 0.0346–0.2562 and 0.2459–0.5768 by
    # hand), not the point 0.3
    assert stats.window_ratio_change([(1, 10)] * 3, [(4, 10)] * 3) == pytest.approx(
        (0.0806, 0.4885), abs=1e-4
    )
    xs = [float(x) for x in range(3, 11)]
    ys = [0.8 - 0.01 * x for x in xs]
    assert float(stats.fitted_weights(xs) @ np.asarray(ys)) == pytest.approx(-0.07)
    assert stats.fitted_change_interval(xs, ys) == pytest.approx((-0.07, -0.07))


def _exact_sign_p(wins: int, losses: int) -> float:
    """The sign test in exact integers: 2 · Σ_{i ≤ min} C(n, i) / 2**n, at most 1."""
    n, term, total = wins + losses, 1, 0
    for i in range(min(wins, losses) + 1):  # C(n, i) from C(n, i - 1), exactly
        total += term
        term = term * (n - i) // (i + 1)
    return min(1.0, 2 * total / 2**n)


@pytest.mark.parametrize(
    ("wins", "losses"), [(600, 600), (537, 538), (2000, 2100), (5000, 4900), (1100, 0), (1, 1500)]
)
def test_sign_test_beyond_a_thousand_tasks(wins, losses):
    # 2**-n is 0 in floating point from n = 1075: an even split must still be p = 1, and
    # 2000 against 2100 is p = 0.12206 (scipy.stats.binomtest gives 0.12206497999113655)
    assert stats.sign_test(wins, losses) == pytest.approx(_exact_sign_p(wins, losses), rel=1e-12)


def test_sign_test_even_split_of_many_tasks_is_one():
    assert stats.sign_test(600, 600) == 1.0
    assert stats.sign_test(2000, 2100) == pytest.approx(0.12206497999113655, rel=1e-12)


def test_sign_test_small_n_bits_unchanged():
    # the rescaled sum is the direct one times a power of two: the same digits as summing
    # C(n, i) / 2**n from 2**-n while that stays a normal float
    for w, lose in ((3, 0), (7, 2), (12, 30), (40, 41), (250, 260), (490, 500)):
        n, term, tail = w + lose, 2.0 ** -(w + lose), 0.0
        for i in range(min(w, lose) + 1):
            tail += term
            term = term * (n - i) / (i + 1)
        assert stats.sign_test(w, lose) == min(1.0, 2 * tail)


def test_t975_by_hand():
    # Student's t 97.5 % quantiles: below 4 df exact (scipy.stats.t.ppf(0.975, df) to the
    # last bits), from 4 on the Cornish–Fisher expansion (tables: 2.7764 at 4 df, 2.2281 at
    # 10, 2.0423 at 30)
    exact = {
        1: 12.706204736174694,
        1.5: 6.016663104427929,
        2: 4.302652729749462,
        3: 3.1824463052837078,
        3.99: 2.779191557030763,
    }
    for df, want in exact.items():
        assert stats.t975(df) == pytest.approx(want, rel=1e-14), df
    assert stats.t975(4) == pytest.approx(2.7764, abs=0.008)
    assert stats.t975(10) == pytest.approx(2.2281, abs=5e-4)
    assert stats.t975(30) == pytest.approx(2.0423, abs=1e-4)
    # many at once: the expansion from 4 on, the exact quantile below, as one by one
    dfs = np.asarray([1.0, 3.99, 4.0, 4.5, 30.0])
    assert stats._t975s(dfs).tolist() == [stats.t975(d) for d in dfs]


def test_small_sample_factor_by_hand():
    # 3 units a window: sqrt(3/2) · t975(4) / 1.959964 = 1.224745 · 2.769373 / 1.959964
    assert stats.small_sample_factor(3) == pytest.approx(1.73053, abs=1e-5)
    assert 1 < stats.small_sample_factor(1000) < 1.002


def test_expanded_interval_and_bonferroni_by_hand():
    # resampled changes 0.0..1.0 about an observed 0.5, 4 units and 3 degrees of freedom:
    # factor sqrt(4/3) · t975(3) / 1.959964 = 1.154701 · 3.182446 / 1.959964 = 1.874918;
    # the percentiles 0.025 and 0.975 of 0..1 spread by it
    resampled = np.linspace(0.0, 1.0, 2001)
    lo, hi = stats.expanded_interval(0.5, resampled, 4, 3)
    assert stats.small_sample_factor(4, 3) == pytest.approx(1.874918, abs=1e-5)
    assert (lo, hi) == pytest.approx((0.5 - 0.475 * 1.874918, 0.5 + 0.475 * 1.874918), abs=1e-5)
    # Bonferroni: 1 − 0.025/2 → 2.241403, 1 − 0.025/64 → 3.359354 (normal quantiles)
    assert stats.bonferroni_z(1) == stats.Z95
    assert stats.bonferroni_z(2) == pytest.approx(2.241403, abs=1e-6)
    assert stats.bonferroni_z(64) == pytest.approx(3.359354, abs=1e-6)


def test_rule_intervals_are_widened_like_the_learning_one():
    # a pooled error rate: windows of 3 steps (blocks of 1), the raw percentiles spread by
    # small_sample_factor(3) about the observed change 0.3 - 0.1
    early, late = [(1, 10), (0, 10), (2, 10)], [(2, 10), (4, 10), (3, 10)]
    lo, hi = stats.window_ratio_change(early, late)
    ev = np.asarray([2.0, 4.0, 3.0])[stats.moving_blocks(3, 1, stats.RESAMPLES, 2)].sum(axis=1)
    e0 = np.asarray([1.0, 0.0, 2.0])[stats.moving_blocks(3, 1, stats.RESAMPLES, 1)].sum(axis=1)
    raw = stats.percentile_interval(ev / 30 - e0 / 30)
    f = stats.small_sample_factor(3)
    assert (lo, hi) == pytest.approx((0.2 + f * (raw[0] - 0.2), 0.2 + f * (raw[1] - 0.2)))


# -- each bootstrap redone by its definition, one draw at a time -----------------------------


def _idx(n: int, count: int, seed: int) -> list[int]:
    return [(r * n) >> 32 for r in _mulberry32_one_by_one(seed, count)]


def _percentiles(vals: list[float]) -> tuple[float, float]:
    s, k = sorted(vals), len(vals) // 40
    return s[k], s[len(s) - 1 - k]


def _blocks(n: int, resamples: int, seed: int) -> list[list[int]]:
    """Moving blocks by their definition: ceil(n / b) starts a row, b ≈ n^(1/3), cut to n."""
    b = max(1, round(n ** (1 / 3)))
    count = -(-n // b)
    starts = _idx(n - b + 1, resamples * count, seed)
    return [
        [s + j for s in starts[r * count : (r + 1) * count] for j in range(b)][:n]
        for r in range(resamples)
    ]


SEEDED = 80, 5  # resamples (the 2nd smallest and largest are the bounds), a seed not the default


def test_the_bootstraps_draw_as_their_definitions_with_the_seed_given():
    resamples, seed = SEEDED
    rows = [_idx(5, 5 * resamples, seed)[r * 5 : (r + 1) * 5] for r in range(resamples)]
    num, den = [1.0, 3.0, 0.0, 2.0, 4.0], [2, 4, 1, 2, 4]
    want = _percentiles([sum(num[i] for i in row) / sum(den[i] for i in row) for row in rows])
    assert stats.bootstrap_ratio(num, den, resamples, seed) == pytest.approx(want, abs=1e-15)
    assert stats.bootstrap_ratio(num, den, resamples, seed) != stats.bootstrap_ratio(
        num, den, resamples
    )
    e_rows, l_rows = _blocks(4, resamples, seed), _blocks(5, resamples, seed + 1)
    ev, lv = [(1, 4), (0, 2), (3, 5), (2, 4)], [(3, 4), (2, 2), (4, 5), (1, 1), (0, 3)]

    def pooled(w, row):
        return sum(w[i][0] for i in row) / sum(w[i][1] for i in row)

    # spread about the observed change by the factor of the smaller window's 2 blocks
    observed = pooled(lv, range(5)) - pooled(ev, range(4))
    f = stats.small_sample_factor(2)
    want = _percentiles(
        [
            observed + f * (pooled(lv, lr) - pooled(ev, er) - observed)
            for er, lr in zip(e_rows, l_rows, strict=True)
        ]
    )
    # a change of a rate is held within ±1 (here the widened upper end passes 1)
    want = (max(want[0], -1.0), min(want[1], 1.0))
    assert want[1] == 1.0
    assert stats.window_ratio_change(ev, lv, resamples, seed) == pytest.approx(want, abs=1e-15)


def test_a_rate_change_is_held_within_one_both_ways():
    ev, lv = [(1, 4), (0, 2), (3, 5), (2, 4)], [(3, 4), (2, 2), (4, 5), (1, 1), (0, 3)]
    assert stats.window_ratio_change(lv, ev)[0] == -1.0
    assert stats.window_ratio_change(ev, lv)[1] == 1.0


def test_a_window_without_trials_is_a_rate_of_zero():
    # each resample of the early window holds no trial: 0, not 0 / 0
    assert stats.window_ratio_change([(0, 0)] * 2, [(1, 2)] * 2) == (0.5, 0.5)


def test_the_fitted_change_of_two_steps_is_the_line():
    # two steps (too few to tell a correlation: r held at 0.95) lie on their line: no residual
    assert stats.fitted_change_interval([1.0, 2.0], [0.0, 1.0]) == pytest.approx((1.0, 1.0))
    # steps half a step apart (Σ dx² below 1): still a slope
    assert stats.fitted_change_interval([1.0, 1.5], [0.0, 1.0]) == pytest.approx((1.0, 1.0))


def test_wilson_leaves_its_lower_bound_to_the_formula_from_one_success():
    p, n, z2 = 0.1, 10, stats.Z95**2
    centre = (p + z2 / 20) / (1 + z2 / 10)
    half = stats.Z95 * math.sqrt(p * (1 - p) / n + z2 / 400) / (1 + z2 / 10)
    assert stats.wilson(1, 10) == pytest.approx((centre - half, centre + half))
    assert stats.wilson(1, 10)[0] > 0


def test_two_values_have_a_bootstrap():
    assert stats.bootstrap_ratio([0.0, 1.0], [1, 1], 80) == (0.0, 1.0)


def _window_by_definition(early, late, rate, units, resamples, seed):
    """A window interval by its definition: each window resampled in moving blocks (the
    late one with the next seed), the changes of ``rate`` spread about the observed change
    by the small-sample factor of ``units`` blocks, their percentiles."""
    e_rows, l_rows = _blocks(len(early), resamples, seed), _blocks(len(late), resamples, seed + 1)
    observed = rate(late, range(len(late))) - rate(early, range(len(early)))
    f = stats.small_sample_factor(units)
    return _percentiles(
        [
            observed + f * (rate(late, lr) - rate(early, er) - observed)
            for er, lr in zip(e_rows, l_rows, strict=True)
        ]
    )


def _pooled(w, row):
    """Σ events / Σ trials of the steps in ``row``; 0 when they hold no trial."""
    trials = sum(w[i][1] for i in row)
    return sum(w[i][0] for i in row) / trials if trials else 0.0


# windows of unlike lengths and the smaller one's blocks: 4 steps in 2 blocks of 2, 12 in 6
# of 2, 5 in 2.5 of 2, 27 in 9 of 3
UNLIKE = [(4, 12, 2), (12, 4, 2), (5, 27, 2.5), (27, 5, 2.5)]


@pytest.mark.parametrize(("n_early", "n_late", "units"), UNLIKE)
def test_a_rate_change_is_widened_by_the_window_of_fewer_blocks(n_early, n_late, units):
    resamples, seed = SEEDED
    early = [(7 * i % 5, 5) for i in range(n_early)]
    late = [(11 * i % 5 + 1, 6) for i in range(n_late)]
    want = _window_by_definition(early, late, _pooled, units, resamples, seed)
    assert -1 < want[0] < want[1] < 1  # (not held at ±1, where the factor would not show)
    assert stats.window_ratio_change(early, late, resamples, seed) == pytest.approx(want, abs=1e-15)


def _joined(want, early, late):
    """``want`` widened to Newcombe's interval of the windows' pooled counts where that is wider."""
    e, le = (sum(x[i] for x in early) for i in (0, 1)), (sum(x[i] for x in late) for i in (0, 1))
    floor = stats.newcombe(*e, *le)
    return want if floor is None else (min(want[0], floor[0]), max(want[1], floor[1]))


def test_agreeing_steps_keep_the_trials_binomial_noise():
    """No error in any of 4 early steps of 20 rollouts, 6 in each late one: resampling steps
    sees no spread at all, yet 0 of 80 is a sample. The interval is Newcombe's for 0 of 80
    against 24 of 80, and still above zero."""
    lo, hi = stats.window_ratio_change([(0, 20)] * 4, [(6, 20)] * 4)
    assert (lo, hi) == pytest.approx(stats.newcombe(0, 80, 24, 80))
    assert 0.15 < lo < 0.3 < hi < 0.45
    # where the steps differ more than their trials do, the resamples' interval stands
    wide = [(0, 20), (10, 20), (2, 20), (12, 20)]
    got = stats.window_ratio_change([(0, 20)] * 4, wide)
    floor = stats.newcombe(0, 80, 24, 80)
    assert got[0] < floor[0] and got[1] > floor[1]


def test_a_window_of_one_trial_is_that_trials_rate():
    # 27 steps of which one holds a trial, a success: the window's rate is 1, as is that of
    # each resample that draws the step (once or more), not the rate of no trial
    resamples, seed = SEEDED
    sparse = [(0, 0)] * 27
    sparse[13] = (1, 1)
    assert _pooled(sparse, range(27)) == 1.0
    steady = [(1, 2)] * 8  # 4 blocks of 2, fewer than the sparse window's 9 of 3
    for early, late in ((sparse, steady), (steady, sparse)):
        want = _window_by_definition(early, late, _pooled, 4, resamples, seed)
        assert -1 < want[0] < want[1] < 1
        got = stats.window_ratio_change(early, late, resamples, seed)
        # (one trial is a wide sample: Newcombe's interval reaches further than the resamples)
        assert got == pytest.approx(_joined(want, early, late), abs=1e-15) != want


def test_a_series_without_residuals_has_no_autocorrelation():
    # rows of zeros among rows of noise: a zero row's r is 0 (its 0 / 0 left out), so its ρ
    # is the bias correction alone, 2 / (40 − 5), and n_eff = 40 · (33/35) / (37/35).
    # numpy hands out freed small buffers again: fill them with NaN first, so an r left
    # unset (memory as it was) shows
    n, rows = 40, 7
    xs = [float(i) for i in range(n)]
    ys = np.random.default_rng(3).normal(0, 0.1, (rows, n))
    ys[::2] = 0.0
    junk = [np.full(rows, np.nan) for _ in range(7)]
    del junk
    _, lo, hi, rho, n_eff = stats.ar1_contrast(ys, stats.fitted_weights(xs), xs)
    assert rho[::2].tolist() == pytest.approx([2 / 35] * 4, rel=1e-15)
    assert n_eff[::2].tolist() == pytest.approx([40 * 33 / 37] * 4, rel=1e-14)
    assert lo[::2].tolist() == hi[::2].tolist() == [0.0] * 4
    assert np.isfinite(rho[1::2]).all() and np.isfinite(n_eff[1::2]).all()
