"""The change between the first and the last window of a series of steps whose noise carries
over from step to step (docs/statistics.md, "Is it learning? on the logged reward").

The steps' noise is taken as AR(1): a step keeps φ of the last one's, φ = :data:`FLOOR`
(the most correlation the calibration allows for: a few steps cannot tell φ). Windows of
:data:`LINE_STEPS` steps or more measure the noise about each window's own least-squares
line, so a learning curve within a window does not pass for noise, σ² by matching its
expectation under AR(1) exactly (no small-sample bias); windows of
:data:`MIN_ESTIMATE_STEPS` or more estimate φ the same way and use it when it is larger.
Shorter windows, which a line leaves 1 to 3 residuals, measure the noise on second
differences: the whole run's by their median (a jump or a bend moves few of them), or the
windows' own by their mean square where that is larger (a blip inside a window counts).
The variance of the difference of the two window means is then exact under AR(1) (Σ φ^|i−j|
over the windows' steps), and the critical value of the ratio of the change to its standard error is
calibrated by simulation (:data:`CRITICAL`, :data:`CRITICAL_SHORT`, made by
``scripts/calibrate_ar1.py``): the 95 % quantile of the ratio's size at φ = :data:`FLOOR`,
where it is largest over φ from 0 to the floor, over the gaps a first and a last fifth leave
between them. Closed form and a table: no resampling."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

FLOOR = 0.6  # the least correlation between neighbouring steps a window change assumes
CAP = 0.95  # past this a series is a drift: the estimate is held here
ROUNDING = 1e-12  # residuals below this share of the windows' spread are rounding, not noise
# Windows shorter than this cannot tell φ from their residuals: between φ = FLOOR and CAP the
# residuals' expected lag-1 ratio moves by less than its own sampling spread (by 0.04 in
# windows of 6 steps, 0.19 in 20; its spread about 1/√(2(w − 2)): 0.35 and 0.17).
MIN_ESTIMATE_STEPS = 20
# Windows shorter than this (3 to 5 steps: runs of 6 to 25) measure the noise on the whole
# run instead of about their own lines, which leave them 1 to 3 residuals each.
LINE_STEPS = 6
Z75 = 0.6744897501960817  # the standard normal's 75 % quantile: median |x| / Z75 = σ
# The critical values of |change| / its standard error (scripts/calibrate_ar1.py, 40 000
# replicates a cell): for the runs of 6, 7, … 25 steps whose windows are shorter than
# LINE_STEPS (longer runs take the last), and for windows of 6, 7, … 20 steps and the
# largest of 21 to 40 (longer windows take that one).
CRITICAL_SHORT = (
    2.39, 2.42, 2.29, 2.29, 2.20, 2.19, 2.10, 2.09, 2.09, 2.07,
    2.05, 2.04, 2.04, 2.03, 2.02, 2.03, 1.97, 1.99, 1.99, 1.98,
)  # fmt: skip
CRITICAL = (
    2.37, 2.29, 2.23, 2.18, 2.17, 2.17, 2.13, 2.13, 2.11, 2.11,
    2.10, 2.10, 2.10, 2.09, 1.99, 1.98,
)  # fmt: skip


class WindowChange(NamedTuple):
    """A change of the mean between two windows, its 95 % interval, the correlation φ
    between neighbouring steps the interval allowed for and the critical value it used."""

    change: float
    lo: float
    hi: float
    phi: float
    critical: float


def _pair_sums(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The entries of the matrix p q' summed by lag k = |i − j|, k = 0 … len(p) − 1."""
    n = len(p)
    c = np.correlate(q, p, "full")  # c[n − 1 + k] = Σ_i p_i q_(i+k), for k from −(n − 1)
    out = c[n - 1 :] + c[n - 1 :: -1]
    out[0] /= 2
    return out


@functools.lru_cache(maxsize=64)
def _lag_sums(w: int) -> tuple[np.ndarray, np.ndarray]:
    """For the residuals e = M·y of ``w`` steps about their least-squares line: the entries
    of M and of M·A·M summed by lag k = |i − j| (A the lag-1 matrix, e'Ae = Σ e_t e_(t+1)).
    Under AR(1) of marginal variance σ² and correlation φ^k at lag k, E[e'e] = σ² Σ_k
    m[k] φ^k and E[Σ e_t e_(t+1)] = σ² Σ_k a[k] φ^k: polynomials in φ.

    M = I − H with H = Σ_r d_r u_r u_r' (u = the ones and the centred steps, d = 1 / u'u),
    so M·A·M = A − H·A − A·H + H·A·H is A and outer products: summed by lag in O(w²) time
    without a w × w matrix (a run of thousands of steps has windows of hundreds)."""
    x = np.arange(w) - (w - 1) / 2
    units: list[tuple[np.ndarray, float]] = [(np.ones(w), 1 / w), (x, float(1 / (x @ x)))]
    m, mam = np.zeros(w), np.zeros(w)
    m[0], mam[1] = w, w - 1  # I and A
    for u, du in units:
        au = (np.concatenate(([0.0], u[:-1])) + np.concatenate((u[1:], [0.0]))) / 2  # A·u
        m -= du * _pair_sums(u, u)
        mam -= 2 * du * _pair_sums(u, au)
        for v, dv in units:
            mam += du * dv * float(v @ au) * _pair_sums(u, v)
    m.flags.writeable = mam.flags.writeable = False
    return m, mam


def _poly(coef: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """Σ_k coef[k] φ^k for each φ."""
    return (phi[:, None] ** np.arange(len(coef))[None, :]) @ coef


def _expected_ratio(phi: np.ndarray, w: int) -> np.ndarray:
    """E[Σ e_t e_(t+1)] / E[e'e] of the residuals about a line of ``w`` steps at each φ."""
    m, a = _lag_sums(w)
    return _poly(a, phi) / _poly(m, phi)


def _estimate_phi(ratio: np.ndarray, w: int) -> np.ndarray:
    """The φ whose expected lag-1 ratio of the residuals is the observed ``ratio``, held to
    [FLOOR, CAP]: FLOOR for windows too short to show φ, or a ratio that φ = FLOOR would
    already give; CAP for one past CAP's; else by bisection (the ratio rises with φ)."""
    if w < MIN_ESTIMATE_STEPS:
        return np.full(ratio.shape, FLOOR)
    at_floor, at_cap = _expected_ratio(np.asarray([FLOOR, CAP]), w)
    lo, hi = np.full(ratio.shape, FLOOR), np.full(ratio.shape, CAP)
    for _ in range(40):  # (CAP − FLOOR) / 2**40: far below any figure shown
        mid = (lo + hi) / 2
        above = _expected_ratio(mid, w) > ratio
        hi, lo = np.where(above, mid, hi), np.where(above, lo, mid)
    return np.where(ratio <= at_floor, FLOOR, np.where(ratio >= at_cap, CAP, (lo + hi) / 2))


def difference_variance(phi: np.ndarray, w: int, gap: int) -> np.ndarray:
    """Var(mean of the late window − mean of the early one) / σ² for two windows of ``w``
    steps with ``gap`` steps between them, under AR(1) with correlation φ^|i−j|: the sums
    of φ^|i−j| within each window, less twice those across, over w²."""
    phi = np.asarray(phi, dtype=float)
    k = np.arange(1, w)
    within = w + 2 * ((w - k)[None, :] * phi[:, None] ** k[None, :]).sum(axis=1)
    run = (phi[:, None] ** np.arange(w)[None, :]).sum(axis=1)  # Σ_(k<w) φ^k
    across = phi ** (gap + 1) * run * run
    return 2 * (within - across) / (w * w)


def critical(w: int, n: int) -> float:
    """The calibrated critical value for windows of ``w`` steps in a run of ``n``."""
    if w < LINE_STEPS:
        return CRITICAL_SHORT[min(n, len(CRITICAL_SHORT) + 5) - 6]
    return CRITICAL[min(w, len(CRITICAL) + 5) - LINE_STEPS]


def _line_noise(e: np.ndarray, lt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """σ² and φ of each row from the residuals about each window's own least-squares line."""
    w = e.shape[1]
    x = np.arange(w) - (w - 1) / 2
    res = [v - v.mean(axis=1, keepdims=True) - np.outer(v @ x / (x @ x), x) for v in (e, lt)]
    ss = sum(np.einsum("ij,ij->i", r, r) for r in res)
    lag = sum(np.einsum("ij,ij->i", r[:, 1:], r[:, :-1]) for r in res)
    # no residual beyond rounding (each window on its line): nothing shows a correlation
    spread = sum(((v - v.mean(axis=1, keepdims=True)) ** 2).sum(axis=1) for v in (e, lt))
    ratio, real = np.full_like(ss, -np.inf), ss > ROUNDING * spread
    ratio[real] = lag[real] / ss[real]
    phi = _estimate_phi(ratio, w)
    m, _ = _lag_sums(w)
    return ss / (2 * _poly(m, phi)), phi


def _run_noise(y: np.ndarray, w: int) -> np.ndarray:
    """σ² of each row for windows of ``w`` steps too short for their own lines, from second
    differences y_(t−1) − 2y_t + y_(t+1), whose variance under AR(1) is σ²(6 − 8φ + 2φ²), at
    φ = FLOOR: the larger of two measures. The whole run's, by their median size / Z75 (a
    jump or a bend between the windows moves only a few of them); and the windows' own, by
    their mean square, so that a lucky last step, or a reward that sits on one value (a small
    batch's) and leaves most second differences at zero, is noise and not a sure change."""
    d2 = y[:, 2:] - 2 * y[:, 1:-1] + y[:, :-2]
    spread = np.median(np.abs(d2), axis=1) ** 2 / Z75**2
    last = d2.shape[1]
    own = np.concatenate((d2[:, : w - 2], d2[:, last - (w - 2) :]), axis=1)  # inside a window
    return np.maximum(spread, (own**2).mean(axis=1)) / (6 - 8 * FLOOR + 2 * FLOOR**2)


def window_changes(y: np.ndarray, w: int) -> tuple[np.ndarray, ...]:
    """The change from the mean of the first ``w`` steps of each row of ``y`` (a run's
    logged values; rows: replicates) to the mean of its last ``w``, with its 95 % interval
    under AR(1) noise and the φ it allowed for: arrays of one value a row."""
    y = np.atleast_2d(np.asarray(y, dtype=float))
    n = y.shape[1]
    e, lt = y[:, :w], y[:, n - w :]
    if w < LINE_STEPS:
        sigma2, phi = _run_noise(y, w), np.full(len(y), FLOOR)
    else:
        sigma2, phi = _line_noise(e, lt)
    se = np.sqrt(sigma2 * difference_variance(phi, w, n - 2 * w))
    change = lt.mean(axis=1) - e.mean(axis=1)
    c = critical(w, n)
    return change, change - c * se, change + c * se, phi


def window_change(series: Sequence[float], w: int) -> WindowChange:
    """:func:`window_changes` of one run's series."""
    change, lo, hi, phi = window_changes(np.asarray([series]), w)
    return WindowChange(
        float(change[0]), float(lo[0]), float(hi[0]), float(phi[0]), critical(w, len(series))
    )
