"""Per-step curves made shorter (bucket means with a min–max band) and smoother."""

from __future__ import annotations

import math

from sitegen.curves import downsample, smooth


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
