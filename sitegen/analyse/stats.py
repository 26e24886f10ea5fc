"""How sure a difference is: intervals and tests, as docs/statistics.md explains each one.

Pure functions, no I/O: Wilson's interval for a proportion and Newcombe's for the difference
of two, the percentile bootstrap of a ratio over independent units (Efron), the paired
bootstrap over tasks with the probability of improvement (rliable), the moving-block
bootstrap over windows of steps (Künsch), a trend's interval over steps whose noise carries
over (Santer et al.), the exact sign test and the unbiased pass@k estimator (Chen et al.).

Every resample is drawn from one small seeded generator, mulberry32, whose state is a
counter: its outputs are computed all at once here (numpy) and one by one by
``static/stats.js``, which draws the very same numbers and sums them in the same order, so
the comparison page's figures, computed in the browser, are :func:`paired_bootstrap`'s to
the bit. The same seed on every call: a page gives the same numbers on every build."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

SEED = 1
RESAMPLES = 2000  # a comparison's resamples (paired by task)
BAND_RESAMPLES = 1000  # a step's reward band: drawn, never compared
Z95 = 1.959963984540054  # the standard normal's 97.5 % quantile
_STEP = 0x6D2B79F5  # mulberry32's increment
_MASK = 0xFFFFFFFF
_SCALE = 600  # the sign test rescales its sum by 2**±600 (exact: a power of two)
_BIG, _SMALL = 2.0**_SCALE, 2.0**-_SCALE

Interval = tuple[float, float]


# -- the generator -------------------------------------------------------------------------------


def mulberry32(count: int, seed: int = SEED) -> np.ndarray:
    """The first ``count`` 32-bit outputs of mulberry32 seeded with ``seed`` (uint32).

    Its state after k draws is ``seed + k * 0x6D2B79F5`` (mod 2**32) and each output a
    hash of that state alone, so all of them are computed at once."""
    k = np.arange(1, count + 1, dtype=np.uint64)
    a = ((k * np.uint64(_STEP) + np.uint64(seed & _MASK)) & np.uint64(_MASK)).astype(np.uint32)
    t = (a ^ (a >> 15)) * (a | 1)
    t ^= t + (t ^ (t >> 7)) * (t | 61)
    return t ^ (t >> 14)


def indices(n: int, count: int, seed: int = SEED) -> np.ndarray:
    """``count`` indices in ``[0, n)`` from the generator: ``floor(u * n)`` of each output
    ``u = r / 2**32`` (exact in floating point too: ``r * n`` < 2**53)."""
    r = mulberry32(count, seed).astype(np.uint64)
    return ((r * np.uint64(n)) >> np.uint64(32)).astype(np.intp)


@functools.lru_cache(maxsize=64)
def draws(n: int, rows: int, seed: int = SEED) -> np.ndarray:
    """A ``rows`` × ``n`` matrix of indices in ``[0, n)``, row after row from the generator:
    each row one resample of ``n`` units. Kept for the next call with the same arguments (a
    run's steps with as many prompt groups draw alike): read-only."""
    out = indices(n, rows * n, seed).reshape(rows, n)
    out.flags.writeable = False
    return out


def percentile_interval(values: np.ndarray) -> Interval:
    """The 2.5th and 97.5th percentiles of resampled statistics: the ``k``-th smallest and
    largest of them, ``k = resamples // 40`` (counted from 0)."""
    s = np.sort(values)
    k = len(s) // 40
    return float(s[k]), float(s[len(s) - 1 - k])


def _resampled_means(values: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The mean of each row's drawn values, summed left to right (a running sum: as
    static/stats.js sums them, so both give the same bits; ``sum`` adds pairwise)."""
    return np.cumsum(values[idx], axis=1)[:, -1] / idx.shape[1]


# -- proportions ---------------------------------------------------------------------------------


def wilson(successes: int, n: int, z: float = Z95) -> Interval | None:
    """Wilson's score interval for a proportion (Wilson 1927); None for no trial."""
    if n <= 0:
        return None
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # at 0 and at n successes the bound is 0 (1) exactly, which rounding would miss
    return (0.0 if successes <= 0 else centre - half), (1.0 if successes >= n else centre + half)


def newcombe(s1: int, n1: int, s2: int, n2: int, z: float = Z95) -> Interval | None:
    """The interval of ``s2/n2 − s1/n1`` from the two Wilson intervals at ``z`` (Newcombe
    1998, method 10); None when either has no trial."""
    w1, w2 = wilson(s1, n1, z), wilson(s2, n2, z)
    if w1 is None or w2 is None:
        return None
    p1, p2 = s1 / n1, s2 / n2
    d = p2 - p1
    lo = d - math.sqrt((p2 - w2[0]) ** 2 + (w1[1] - p1) ** 2)
    hi = d + math.sqrt((w2[1] - p2) ** 2 + (p1 - w1[0]) ** 2)
    return lo, hi


def bonferroni_z(tests: int) -> float:
    """The normal quantile of a 95 % interval that holds for ``tests`` of them at once
    (Bonferroni): each at 1 − 0.05/tests, two-sided; 1.96 for one."""
    if tests <= 1:
        return Z95
    return NormalDist().inv_cdf(1 - 0.025 / tests)


# -- bootstraps ----------------------------------------------------------------------------------


def bootstrap_ratio(
    num: Sequence[float], den: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED
) -> Interval | None:
    """The percentile bootstrap interval of ``Σ num / Σ den`` over independent units (a
    step's prompt groups: summed reward and graded trials), None for fewer than two."""
    if len(num) < 2:
        return None
    idx = draws(len(num), resamples, seed)
    nu, de = np.asarray(num, dtype=float)[idx].sum(axis=1), np.asarray(den, dtype=float)[idx]
    return percentile_interval(nu / de.sum(axis=1))


def paired_bootstrap(
    diffs: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED
) -> tuple[Interval, float, Interval]:
    """Paired units (tasks) resampled together: the interval of the mean difference, the
    probability of improvement (the share of units whose difference is above zero, a tie
    counting half: rliable's, with the task as the unit) and its interval, all from the
    same resamples."""
    d = np.asarray(diffs, dtype=float)
    wins = np.where(d > 0, 1.0, np.where(d < 0, 0.0, 0.5))
    idx = draws(len(d), resamples, seed)
    return (
        percentile_interval(_resampled_means(d, idx)),
        float(wins.sum() / len(d)),
        percentile_interval(_resampled_means(wins, idx)),
    )


def t975(df: float) -> float:
    """Student's t distribution's 97.5 % quantile for ``df`` degrees of freedom (any real
    ``df`` ≥ 1). From 4 on by the Cornish–Fisher expansion in 1/df (Abramowitz and Stegun
    26.7.5, to df**-3: 2.769 at 4, exact 2.776, within 0.001 from 6 on); below, where that
    expansion falls short (9.7 at 1 against 12.71), by Newton's method on the t
    distribution's tail (:func:`_t_tail`) from the expansion's value: the tail is convex
    and the start below the root, so each step stays below it and comes closer."""
    start = float(_cornish_fisher(np.asarray(float(df))))
    if df >= 4:
        return start
    t = start
    density = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    for _ in range(100):
        step = (_t_tail(t, df) - 0.025) / (density * (1 + t * t / df) ** (-(df + 1) / 2))
        t += step
        if step < 1e-13 * t:
            break
    return t


def _cornish_fisher(df: np.ndarray) -> np.ndarray:
    z = Z95
    z3, z5, z7 = z**3, z**5, z**7
    return (
        z
        + (z3 + z) / (4 * df)
        + (5 * z5 + 16 * z3 + 3 * z) / (96 * df**2)
        + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * df**3)
    )


def _t975s(df: np.ndarray) -> np.ndarray:
    """:func:`t975` of each of ``df`` (the expansion at once, Newton's method one by one)."""
    out = _cornish_fisher(np.maximum(df, 4.0))
    for i in np.flatnonzero(df < 4):
        out[i] = t975(float(df[i]))
    return out


def _t_tail(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom: half the regularized
    incomplete beta I_x(df/2, 1/2) at x = df/(df + t²), by its continued fraction
    (Lentz's method, as in Press et al., *Numerical Recipes*, 6.4)."""
    a, b, x = df / 2, 0.5, df / (df + t * t)
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 200):
        for num in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + num * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + num / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1) < 1e-15:
            break
    return front * f / a / 2


# -- windows of steps: the moving-block bootstrap ------------------------------------------------


def block_length(n: int) -> int:
    """The moving-block bootstrap's block: about n^(1/3) steps (Künsch 1989), at least 1."""
    return max(1, round(n ** (1 / 3)))


def moving_blocks(n: int, block: int, resamples: int, seed: int = SEED) -> np.ndarray:
    """A ``resamples`` × ``n`` matrix of indices into a series of ``n``: each row the
    consecutive steps of ``ceil(n / block)`` blocks whose starts are drawn uniformly from
    the ``n − block + 1`` there are, joined and cut to ``n``."""
    count = -(-n // block)
    starts = indices(n - block + 1, resamples * count, seed).reshape(resamples, count)
    rows = (starts[:, :, None] + np.arange(block)[None, None, :]).reshape(resamples, -1)
    return rows[:, :n]


def small_sample_factor(units: float, df: float | None = None) -> float:
    """How much wider than the bootstrap's spread an interval over ``units`` independent
    units must be (Hesterberg's expanded percentile interval): the bootstrap's variance of a
    mean is (n − 1)/n of the truth, and a mean over few units follows Student's t, not the
    normal, with ``df`` degrees of freedom: by default two windows of ``units`` each,
    2(units − 1)."""
    if df is None:
        df = 2 * (units - 1)
    return math.sqrt(units / (units - 1)) * t975(df) / Z95


def expanded_interval(
    observed: float, resampled: np.ndarray, units: float, df: float | None = None
) -> Interval:
    """The percentile interval of ``resampled`` statistics spread about the ``observed`` one
    by :func:`small_sample_factor` (``units`` resampled units, ``df`` degrees of freedom)
    first: a block bootstrap over a window of a few steps resamples a handful of blocks,
    and its bare percentiles are too narrow."""
    factor = small_sample_factor(units, df)
    return percentile_interval(observed + factor * (np.asarray(resampled) - observed))


def window_ratio_change(
    early: Sequence[tuple[int, int]],
    late: Sequence[tuple[int, int]],
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Interval:
    """The interval of the change in a pooled rate (``Σ events / Σ trials`` of each window's
    steps, given as ``(events, trials)``), each window resampled by moving blocks and the
    changes spread about the observed one by :func:`expanded_interval` of the smaller
    window's block count, with 2(k − 1) degrees of freedom; never narrower than
    :func:`newcombe`'s for the pooled counts.

    Resampling steps sees only how the steps differ: where a window's steps agree (no
    error in any early step, a common case) it would call that window's rate exact, though
    its trials are a sample. Newcombe's interval is what the trials' own binomial noise
    allows at the least, so the two are joined."""

    def pooled(w: Sequence[tuple[int, int]], idx: np.ndarray) -> np.ndarray:
        ev = np.asarray([e for e, _ in w], dtype=float)[idx]
        tot = np.asarray([t for _, t in w], dtype=float)[idx].sum(axis=-1)
        return np.divide(ev.sum(axis=-1), tot, out=np.zeros(tot.shape), where=tot > 0)

    be, bl = block_length(len(early)), block_length(len(late))
    me = pooled(early, moving_blocks(len(early), be, resamples, seed))
    ml = pooled(late, moving_blocks(len(late), bl, resamples, seed + 1))
    observed = pooled(late, np.arange(len(late))) - pooled(early, np.arange(len(early)))
    lo, hi = expanded_interval(float(observed), ml - me, min(len(early) / be, len(late) / bl))
    counts = [sum(x[i] for x in w) for w in (early, late) for i in (0, 1)]
    floor = newcombe(*counts)
    if floor is not None:
        lo, hi = min(lo, floor[0]), max(hi, floor[1])
    # a change of a rate lies within ±1: the widening must not quote 103 points
    return max(lo, -1.0), min(hi, 1.0)


# -- a trend over steps whose noise carries over -------------------------------------------------

MAX_AUTOCORRELATION = 0.95  # past this a series is a drift, and its effective steps too few
MIN_EFFECTIVE_STEPS = 3.0  # Student's t with one degree of freedom at least


def ar1_contrast(
    series: np.ndarray, weights: np.ndarray, xs: Sequence[float]
) -> tuple[np.ndarray, ...]:
    """A linear contrast ``Σ weights · series`` of a series of steps (one per row of a
    2-D ``series``: replicates), with its 95 % interval allowing for the correlation between
    neighbouring steps (Santer et al. 2000):

    * the residuals about the series' least-squares line over the steps ``xs``, their lag-1
      autocorrelation r;
    * r corrected for its bias in a short series, −(2 + 5ρ)/n for the residuals of a fitted
      line (the least-squares bias of an AR(1) coefficient with a fitted trend, −(2 + 4ρ)/n,
      Shaman and Stine 1988, and −ρ/n more as r divides by all n squares), and held to
      [0, 0.95]: a series too short to show its correlation is not credited with a negative
      one;
    * the effective number of steps n(1 − r)/(1 + r) (3 at least), the residual variance
      Σe² / (n_eff − 2), and Student's t with n_eff − 2 degrees of freedom.

    Returns the contrast, the interval's bounds, r and n_eff: arrays of one value a row."""
    y = np.atleast_2d(np.asarray(series, dtype=float))
    n = y.shape[1]
    x = np.asarray(xs, dtype=float)
    q, _ = np.linalg.qr(np.stack([np.ones(n), x - x.mean()], axis=1))
    e = y - (y @ q) @ q.T
    ss = np.einsum("ij,ij->i", e, e)
    lag = np.einsum("ij,ij->i", e[:, 1:], e[:, :-1])
    r = np.divide(lag, ss, out=np.zeros_like(ss), where=ss > 0)
    rho = (n * r + 2) / (n - 5) if n > 5 else np.full_like(r, MAX_AUTOCORRELATION)
    rho = np.clip(rho, 0.0, MAX_AUTOCORRELATION)
    n_eff = np.maximum(n * (1 - rho) / (1 + rho), MIN_EFFECTIVE_STEPS)
    w = np.asarray(weights, dtype=float)
    se = np.sqrt(ss / (n_eff - 2) * (w @ w))
    t = _t975s(n_eff - 2)
    est = y @ w
    return est, est - t * se, est + t * se, rho, n_eff


def fitted_weights(xs: Sequence[float]) -> np.ndarray:
    """The contrast that gives the least-squares line's change from the first ``x`` to the
    last: ``(x − x̄) / Σ(x − x̄)² · (x_last − x_first)``."""
    x = np.asarray(xs, dtype=float)
    dx = x - x.mean()
    return dx / (dx @ dx) * (x[-1] - x[0])


def fitted_change_interval(xs: Sequence[float], ys: Sequence[float]) -> Interval:
    """The interval of the least-squares line's change from the first of ``xs`` to the last
    (:func:`fitted_weights`): its residuals' lag-1 autocorrelation widens it
    (:func:`ar1_contrast`, Santer et al.'s interval of a trend)."""
    _, lo, hi, _, _ = ar1_contrast(np.asarray(ys, dtype=float), fitted_weights(xs), xs)
    return float(lo[0]), float(hi[0])


# -- tests and estimators ------------------------------------------------------------------------


def sign_test(wins: int, losses: int) -> float:
    """The exact two-sided binomial sign test's p-value for ``wins`` against ``losses``
    (ties left out before): twice the smaller tail of Binomial(n, ½), at most 1.

    The tail's binomial coefficients are summed from C(n, 0) = 1 up, scaled down by 2**-600
    whenever a term passes 2**600, and the sum times 2**-n at the end, in steps: ``2**-n``
    itself is 0 in floating point beyond n = 1074, which would make an even split p = 0.
    Scaling by a power of two is exact, so the digits are those of summing ``C(n, i) / 2**n``
    directly; static/stats.js does the very same operations."""
    n = wins + losses
    if n == 0:
        return 1.0
    term, tail, exponent = 1.0, 0.0, -n
    for i in range(min(wins, losses) + 1):
        tail += term
        term = term * (n - i) / (i + 1)
        if term > _BIG:
            term, tail, exponent = term * _SMALL, tail * _SMALL, exponent + _SCALE
    while exponent < -_SCALE:
        tail, exponent = tail * _SMALL, exponent + _SCALE
    return min(1.0, 2 * (tail * 2.0**exponent))


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """The unbiased estimator of pass@k from ``n`` samples with ``c`` successes,
    ``1 − C(n−c, k) / C(n, k)`` (Chen et al. 2021); None when ``n < k``."""
    if n < k or k < 1:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)
