"""Per-step curves made shorter (bucket means with a min–max band) and smoother."""

from __future__ import annotations

import math
import random

import pytest

from sitegen.analyse.curves import downsample, downsample_columns, smooth
from sitegen.model.vocabulary import finite_or_none


def test_downsample_keeps_spikes_in_the_band():
    ys = [0.0] * 1000
    ys[500] = 9.0
    pts = downsample(list(range(1000)), ys, max_points=50)
    assert len(pts) == 50
    assert max(p["hi"] for p in pts) == 9.0 and max(p["y"] for p in pts) < 9.0
    short = downsample([1, 2, 3], [1.0, None, float("nan")])
    assert short == [{"x": 1, "y": 1.0, "lo": 1.0, "hi": 1.0}]


def test_smoothing_window():
    assert smooth([1, 2, 3, 4, 5], window=3) == [1.5, 2.0, 3.0, 4.0, 4.5]


def test_smooth_skips_gaps_and_non_finite_values():
    assert smooth([1.0, None, math.nan, 3.0], window=3) == [1.0, 1.0, 3.0, 3.0]
    assert smooth([]) == []


def _slow_downsample(xs, ys, max_points=400, los=None, his=None):
    """The point-by-point version the fast columns must equal (value for value)."""
    pts = []
    lo_col = los if los is not None else ys
    hi_col = his if his is not None else ys
    for x, y, lo, hi in zip(xs, ys, lo_col, hi_col, strict=False):
        v = finite_or_none(y)
        if v is not None:
            lv, hv = finite_or_none(lo), finite_or_none(hi)
            pts.append((x, v, v if lv is None else lv, v if hv is None else hv))
    if len(pts) <= max_points:
        return [{"x": x, "y": y, "lo": lo, "hi": hi} for x, y, lo, hi in pts]
    out, n = [], len(pts)
    for i in range(max_points):
        chunk = pts[i * n // max_points : (i + 1) * n // max_points]
        if chunk:
            vals = [p[1] for p in chunk]
            out.append(
                {
                    "x": chunk[len(chunk) // 2][0],
                    "y": sum(vals) / len(vals),
                    "lo": min(p[2] for p in chunk),
                    "hi": max(p[3] for p in chunk),
                }
            )
    return out


def _slow_smooth(ys, window=None):
    vals = [finite_or_none(v) for v in ys]
    w = window or max(3, (len(vals) // 15) | 1)
    out = []
    for i in range(len(vals)):
        chunk = [v for v in vals[max(0, i - w // 2) : i + w // 2 + 1] if v is not None]
        out.append(sum(chunk) / len(chunk) if chunk else None)
    return out


def _column(rng: random.Random, n: int, gaps: bool) -> list:
    odd = [math.nan, math.inf, -math.inf, None, True, "x", 7]
    return [rng.choice(odd) if gaps and rng.random() < 0.1 else rng.gauss(0, 1e3) for _ in range(n)]


@pytest.mark.parametrize("n", [0, 1, 5, 399, 400, 401, 1237])
@pytest.mark.parametrize("gaps", [False, True])
def test_fast_downsample_and_smooth_equal_the_slow_ones(n: int, gaps: bool):
    rng = random.Random(n * 2 + gaps)
    xs, ys = list(range(n)), _column(rng, n, gaps)
    for max_points in (400, 37):
        want = _slow_downsample(xs, ys, max_points)
        assert repr(downsample(xs, ys, max_points)) == repr(want)  # 1 vs 1.0 counts too
        cols = downsample_columns(xs, ys, max_points)
        assert repr(cols) == repr({k: [p[k] for p in want] for k in ("x", "y", "lo", "hi")})
        los, his = _column(rng, n, gaps), _column(rng, n, gaps)
        want = _slow_downsample(xs, ys, max_points, los, his)
        assert repr(downsample(xs, ys, max_points, los, his)) == repr(want)
        assert repr(downsample(xs, ys, max_points, los=los)) == repr(
            _slow_downsample(xs, ys, max_points, los=los)
        )
    assert repr(smooth(ys)) == repr(_slow_smooth(ys))
    assert repr(smooth(ys, window=5)) == repr(_slow_smooth(ys, window=5))


class _Float(float):
    """A float subclass: a value the all-finite-floats fast path must not take as a float."""


@pytest.mark.parametrize(
    "ys",
    [
        [1e308, 1e308, -1e308] * 300,  # finite values whose sum overflows: value by value
        [0.0, -0.0, 5e-324, -5e-324] * 250,  # signed zeros and subnormals: min/max keep which
        [1.5] * 399 + [_Float(2.5)] + [3.5] * 600,  # a subclass among floats
        [2.0**60 + 1] + [1.0] * 900,  # an int among floats
        [float(i % 7) for i in range(1000)],  # all finite floats: the fast path
        [1.0, math.nan] * 500,
        [1.0, math.inf, -math.inf] * 400,
    ],
)
@pytest.mark.parametrize("nx", [-5, 0, 5])  # xs shorter, as long and longer (zip's length)
def test_fast_downsample_paths_equal_the_slow_one(ys: list, nx: int):
    xs = list(range(len(ys) + nx))
    for max_points in (400, 37, 5000):
        want = _slow_downsample(xs, ys, max_points)
        cols = downsample_columns(xs, ys, max_points)
        assert repr(cols) == repr({k: [p[k] for p in want] for k in ("x", "y", "lo", "hi")})
        assert [type(v) for v in cols["y"]] == [type(p["y"]) for p in want]
        # as bands: each column in turn the odd one, the others all finite floats
        plain = [float(i % 5) - 2.0 for i in range(len(ys) + 3)]
        for los, his in ((ys, plain), (plain, ys), (plain, plain[:-7])):
            want = _slow_downsample(xs, plain, max_points, los, his)
            cols = downsample_columns(xs, plain, max_points, los, his)
            assert repr(cols) == repr({k: [p[k] for p in want] for k in ("x", "y", "lo", "hi")})


def test_a_window_of_gaps_alone_is_a_gap():
    assert smooth([1.0, None, None, math.nan, 2.0], window=3) == [1.0, 1.0, None, 2.0, 2.0]


def test_a_band_given_on_one_side_only_defaults_to_the_value_on_the_other():
    got = downsample_columns([1, 2, 3], [1.0, None, 3.0], his=[1.5, 9.0, math.inf])
    assert got == {"x": [1, 3], "y": [1.0, 3.0], "lo": [1.0, 3.0], "hi": [1.5, 3.0]}
    got = downsample_columns([1, 2], [1.0, 2.0], los=[0.5, None])
    assert got == {"x": [1, 2], "y": [1.0, 2.0], "lo": [0.5, 2.0], "hi": [1.0, 2.0]}


def test_columns_come_back_as_lists_whatever_they_were_given_as():
    got = downsample_columns((1, 2), (1.0, 2.0))
    assert got == {"x": [1, 2], "y": [1.0, 2.0], "lo": [1.0, 2.0], "hi": [1.0, 2.0]}
    assert all(type(c) is list for c in got.values())


def test_columns_are_cut_to_the_shortest_the_values_included():
    # every value a finite float (the columns taken as they are): x and the band longer than
    # the values are cut to them, as the value-by-value reading stops at the shortest
    got = downsample_columns([1, 2, 3], [1.0, 2.0], los=[0.0, 1.0, 2.0], his=[2.0, 3.0, 4.0])
    assert got == {"x": [1, 2], "y": [1.0, 2.0], "lo": [0.0, 1.0], "hi": [2.0, 3.0]}
