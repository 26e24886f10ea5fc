"""The change between two windows under AR(1) noise (sitegen/analyse/ar1.py) against its
definition: dense matrices, traces and a grid where the module uses polynomials, closed
forms and bisection."""

from __future__ import annotations

import numpy as np
import pytest

from sitegen.analyse import ar1


@pytest.fixture(autouse=True)
def _uncached():
    """Each test computes the lag sums afresh: a cache filled before would hide them."""
    ar1._lag_sums.cache_clear()


def _correlation(phi: float, n: int) -> np.ndarray:
    i = np.arange(n)
    return phi ** np.abs(i[:, None] - i[None, :])


def _residual_maker(w: int) -> np.ndarray:
    x = np.stack([np.ones(w), np.arange(w, dtype=float)], axis=1)
    return np.eye(w) - x @ np.linalg.pinv(x)


def _expected(phi: float, w: int) -> tuple[float, float]:
    """E[e'e] and E[Σ e_t e_(t+1)] / σ² by their traces: tr(M R), tr(M A M R)."""
    m, r = _residual_maker(w), _correlation(phi, w)
    a = (np.eye(w, k=1) + np.eye(w, k=-1)) / 2
    return float(np.trace(m @ r)), float(np.trace(m @ a @ m @ r))


def test_lag_sums_of_three_steps_by_hand():
    # residuals of 3 steps about their line: e = v v'y, v = (1, −2, 1)/√6; M's entries by
    # lag: 1 on the diagonal, 2·(−2/6)·2 at lag 1, 2·(1/6) at lag 2
    m, _ = ar1._lag_sums(3)
    assert m == pytest.approx([1.0, -4 / 3, 1 / 3])


@pytest.mark.parametrize("w", [3, 4, 7, 12, 40])
@pytest.mark.parametrize("phi", [0.0, 0.3, 0.6, 0.9])
def test_expected_sums_are_the_traces(w, phi):
    m, a = ar1._lag_sums(w)
    ss, lag = _expected(phi, w)
    p = np.asarray([phi])
    assert ar1._poly(m, p)[0] == pytest.approx(ss, abs=1e-12)
    assert ar1._poly(a, p)[0] == pytest.approx(lag, abs=1e-12)


@pytest.mark.parametrize("w", [4, 5, 8, 20, 60, 200])
def test_the_expected_ratio_rises_with_phi(w):
    """The bisection needs it: from the floor to the cap, for short and long windows."""
    q = ar1._expected_ratio(np.linspace(ar1.FLOOR, ar1.CAP, 200), w)
    assert np.all(np.diff(q) > 0)


def test_phi_is_estimated_by_matching_the_expected_ratio():
    w = ar1.MIN_ESTIMATE_STEPS
    at = ar1._expected_ratio(np.asarray([0.6, 0.75, 0.95]), w)
    got = ar1._estimate_phi(np.asarray([at[1], at[0] - 0.1, at[0], at[2], at[2] + 0.1]), w)
    # inside: the φ whose expected ratio it is; below the floor's: the floor; past the cap's
    assert got[0] == pytest.approx(0.75, abs=1e-9)
    assert got[1:].tolist() == [ar1.FLOOR, ar1.FLOOR, ar1.CAP, ar1.CAP]
    # a window one step shorter: the floor, whatever its residuals show
    short = ar1._expected_ratio(np.asarray([0.75, 0.95]), w - 1)
    assert ar1._estimate_phi(short, w - 1).tolist() == [ar1.FLOOR, ar1.FLOOR]


@pytest.mark.parametrize(("w", "gap"), [(3, 0), (3, 4), (5, 11), (12, 36)])
@pytest.mark.parametrize("phi", [0.0, 0.6, 0.9])
def test_difference_variance_is_the_quadratic_form(w, gap, phi):
    n = 2 * w + gap
    a = np.zeros(n)
    a[:w], a[-w:] = -1 / w, 1 / w
    want = a @ _correlation(phi, n) @ a
    assert ar1.difference_variance(np.asarray([phi]), w, gap)[0] == pytest.approx(want)


def test_critical_values_by_window_and_run_length():
    # windows of 3 to 5 steps: by the run's length, 6 to 25 steps (longer runs: the last)
    assert ar1.critical(3, 6) == ar1.CRITICAL_SHORT[0]
    assert ar1.critical(3, 15) == ar1.CRITICAL_SHORT[9]
    assert ar1.critical(5, 25) == ar1.critical(5, 60) == ar1.CRITICAL_SHORT[-1]
    assert len(ar1.CRITICAL_SHORT) == 20
    # from 6 steps a window: by the window's length, 6 to 20, then one for all longer
    assert ar1.critical(6, 30) == ar1.CRITICAL[0]
    assert ar1.critical(20, 100) == ar1.CRITICAL[14]
    assert ar1.critical(21, 105) == ar1.critical(400, 2000) == ar1.CRITICAL[-1]
    assert len(ar1.CRITICAL) == 16
    # every value above the normal's 1.96 and below Student's t with one degree of freedom
    assert min(ar1.CRITICAL + ar1.CRITICAL_SHORT) > 1.96
    assert max(ar1.CRITICAL + ar1.CRITICAL_SHORT) < 12.71


def _by_definition(series: list[float], w: int) -> tuple[float, ...]:
    """The interval by its definition. Windows of 6 steps or more: residuals about each
    window's own line (numpy's polyfit); φ the floor, or from windows long enough the point
    of a fine grid where the traces' ratio meets the residuals' lag-1 ratio, if above the
    floor; σ² = Σe² / (2 tr(M R)). Shorter: from the second differences, the larger of
    (median size of the run's / Z75)² and the mean square of those inside a window, over
    6 − 8φ + 2φ² at the floor. Then the variance
    a'Ra · σ² and the table's critical value."""
    y = np.asarray(series, dtype=float)
    n = len(y)
    early, late = y[:w], y[-w:]
    phi = ar1.FLOOR
    if w >= ar1.LINE_STEPS:
        xs = np.arange(w, dtype=float)
        res = [v - np.polyval(np.polyfit(xs, v, 1), xs) for v in (early, late)]
        ss = sum(float(r @ r) for r in res)
        lag = sum(float(r[1:] @ r[:-1]) for r in res)
        if w >= ar1.MIN_ESTIMATE_STEPS:
            # a grid of 1/1000 steps, then one of 1/10⁶ around its nearest point
            m = _residual_maker(w)
            mam = m @ (np.eye(w, k=1) + np.eye(w, k=-1)) / 2 @ m
            lags = np.abs(np.subtract.outer(np.arange(w), np.arange(w)))[None, :, :]
            lo, hi = ar1.FLOOR, ar1.CAP
            for _ in range(2):
                grid = np.linspace(lo, hi, 2001)[:, None, None]
                ratios = np.einsum("gij,ij->g", grid**lags, mam) / np.einsum(
                    "gij,ij->g", grid**lags, m
                )
                phi = float(grid[np.argmin(np.abs(ratios - lag / ss)), 0, 0])
                lo, hi = max(phi - 1e-3, ar1.FLOOR), min(phi + 1e-3, ar1.CAP)
        sigma2 = ss / (2 * _expected(phi, w)[0])
    else:
        d2 = [y[t - 1] - 2 * y[t] + y[t + 1] for t in range(1, n - 1)]
        inside = [d2[t - 1] for t in range(1, n - 1) if t + 1 < w or t - 1 >= n - w]
        assert len(inside) == 2 * (w - 2)
        median = (float(np.median(np.abs(d2))) / 0.6744897501960817) ** 2
        sigma2 = max(median, float(np.mean(np.square(inside)))) / (6 - 8 * phi + 2 * phi * phi)
    a = np.zeros(n)
    a[:w], a[-w:] = -1 / w, 1 / w
    se = np.sqrt(sigma2 * (a @ _correlation(phi, n) @ a))
    change = late.mean() - early.mean()
    c = ar1.critical(w, n)
    return change, change - c * se, change + c * se, phi


def test_a_long_window_change_by_its_definition():
    # windows of 24 steps whose noise carries over (AR(1), 0.8): φ estimated above the floor
    rng = np.random.default_rng(3)
    noise = np.zeros(120)
    for k in range(1, 120):
        noise[k] = 0.8 * noise[k - 1] + rng.normal(0, 0.01)
    series = (0.3 + noise + 0.2 * (np.arange(120) >= 60)).tolist()
    want = _by_definition(series, 24)
    got = ar1.window_change(series, 24)
    assert ar1.FLOOR < got.phi < ar1.CAP
    assert got.phi == pytest.approx(want[3], abs=2e-5)
    assert (got.change, got.lo, got.hi) == pytest.approx(want[:3], rel=1e-4)
    assert got.critical == ar1.critical(24, 120) == ar1.CRITICAL[-1]


@pytest.mark.parametrize(("w", "n"), [(3, 6), (3, 10), (4, 17), (5, 25), (6, 30), (19, 95)])
def test_a_window_change_at_the_floor_by_its_definition(w, n):
    rng = np.random.default_rng(n)
    series = (rng.normal(0.3, 0.05, n) + 0.1 * (np.arange(n) >= n / 2)).tolist()
    got = ar1.window_change(series, w)
    want = _by_definition(series, w)
    assert got.phi == ar1.FLOOR == want[3]
    assert (got.change, got.lo, got.hi) == pytest.approx(want[:3], rel=1e-9)
    assert got.critical == ar1.critical(w, n)


def test_the_short_windows_noise_ignores_a_jump_between_them():
    # a jump of 10 halfway through 10 steps of small noise moves two second differences
    # of eight: the median, and the interval, stay those of the noise
    steps = [0.01 * ((k * 7) % 5) for k in range(10)]
    jumped = [v + (10.0 if k >= 5 else 0.0) for k, v in enumerate(steps)]
    calm, jump = ar1.window_change(steps, 3), ar1.window_change(jumped, 3)
    assert jump.hi - jump.lo == pytest.approx(calm.hi - calm.lo)
    assert jump.lo > 9


def test_a_lucky_last_step_is_noise_not_a_sure_change():
    # nine steps at 0, the last at 0.3: seven of the eight second differences are 0, so
    # their median sees no noise; the late window's own one (0.3) does: σ² = (0² + 0.3²) / 2
    # / (6 − 8φ + 2φ²) = 0.0234375, the change's variance 1.2936172 σ², its standard error
    # 0.1741240
    got = ar1.window_change([0.0] * 9 + [0.3], 3)
    c = ar1.critical(3, 10)
    assert (got.change, got.lo, got.hi) == pytest.approx(
        (0.1, 0.1 - c * 0.1741240, 0.1 + c * 0.1741240)
    )
    assert got.lo < 0 < got.hi
    # a reward that sits on one value (a small batch's) but for a late blip, windows of 4
    series = [0.5] * 16 + [0.625, 0.5, 0.5, 0.625]
    got = ar1.window_change(series, 4)
    assert got.change == pytest.approx(0.0625) and got.lo < 0 < got.hi
    assert (got.lo, got.hi) == pytest.approx(_by_definition(series, 4)[1:3])


def test_a_long_window_of_anticorrelated_steps_assumes_the_floor():
    series = [0.3 + 0.2 * (k % 2) for k in range(20)] + [0.5] * 60
    series += [0.6 - 0.2 * (k % 2) for k in range(20)]
    got = ar1.window_change(series, 20)
    assert got.phi == ar1.FLOOR == _by_definition(series, 20)[3]


def test_tiny_residuals_show_their_correlation_and_rounding_none():
    # windows of 20 steps on a line of 0.001 a step, plus a slow wave 3e-8 high: residuals
    # far above the rounding of the line's fit (1e-12 of the windows' spread, in squares)
    # and as correlated as can be, so φ is held at the cap; the line alone leaves only
    # rounding, from which no correlation is read; each replicate is judged alone, one 100
    # higher or beside a steep line
    t = np.arange(100)
    line = 0.5 + 1e-3 * t
    waved = line + 3e-8 * np.sin(2 * np.pi * t / 25)
    assert ar1.window_change(waved.tolist(), 20).phi == ar1.CAP
    assert ar1.window_change(line.tolist(), 20).phi == ar1.FLOOR
    _, _, _, phi = ar1.window_changes(np.stack([waved, waved + 100, line, 1000 * line]), 20)
    assert phi.tolist() == [ar1.CAP, ar1.CAP, ar1.FLOOR, ar1.FLOOR]


def test_windows_on_their_lines_have_no_spread():
    # no residual: the change is sure, and no correlation is read from nothing
    series = [0.1 + 0.01 * k for k in range(20)] + [0.5] * 60 + [0.7] * 20
    got = ar1.window_change(series, 20)
    assert (got.lo, got.hi) == pytest.approx((0.505, 0.505)) and got.phi == ar1.FLOOR
    # a run on a line: no second difference, no spread
    got = ar1.window_change([0.2 + 0.05 * k for k in range(10)], 3)
    assert (got.change, got.lo, got.hi) == pytest.approx((0.35, 0.35, 0.35))


@pytest.mark.parametrize(("n", "w"), [(12, 3), (30, 6), (120, 24)])
def test_rows_are_replicates(n, w):
    rng = np.random.default_rng(0)
    y = rng.normal(0, 1, (5, n))
    change, lo, hi, phi = ar1.window_changes(y, w)
    for i in range(5):
        one = ar1.window_change(y[i].tolist(), w)
        assert (one.change, one.lo, one.hi, one.phi) == pytest.approx(
            (change[i], lo[i], hi[i], phi[i]), abs=1e-12
        )
