"""Per-step curves made shorter and smoother, for charts and the comparison page.

Pure functions on columns of numbers; non-finite values are gaps (they never
enter a bucket mean or a rolling mean).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sitegen.model.vocabulary import finite_or_none

MAX_POINTS = 400


def downsample(
    xs: Sequence,
    ys: Sequence,
    max_points: int = MAX_POINTS,
    los: Sequence | None = None,
    his: Sequence | None = None,
) -> list[dict]:
    """``[{x, y, lo, hi}]``: every point, or bucket means with min/max when too many.

    ``los``/``his`` give each point's own range (e.g. per-minute min and max);
    without them a point's range is its value.
    """
    pts: list[tuple[Any, float, float, float]] = []
    if los is None and his is None:  # the common case, once per value (a hot loop of charts)
        for x, y in zip(xs, ys, strict=False):
            v = finite_or_none(y)
            if v is not None:
                pts.append((x, v, v, v))
    else:
        lo_col = los if los is not None else ys
        hi_col = his if his is not None else ys
        for x, y, lo, hi in zip(xs, ys, lo_col, hi_col, strict=False):
            v = finite_or_none(y)
            if v is not None:
                lv, hv = finite_or_none(lo), finite_or_none(hi)
                pts.append((x, v, v if lv is None else lv, v if hv is None else hv))
    if len(pts) <= max_points:
        return [{"x": x, "y": y, "lo": lo, "hi": hi} for x, y, lo, hi in pts]
    out = []
    n = len(pts)
    for i in range(max_points):
        chunk = pts[i * n // max_points : (i + 1) * n // max_points]
        if not chunk:
            continue
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


def smooth(ys: Sequence[float | None], window: int | None = None) -> list[float | None]:
    """Centred rolling mean over finite values (window ≈ n/15, odd, at least 3)."""
    vals = [finite_or_none(v) for v in ys]
    n = len(vals)
    w = window or max(3, (n // 15) | 1)
    half = w // 2
    out: list[float | None] = []
    for i in range(n):
        chunk = [v for v in vals[max(0, i - half) : i + half + 1] if v is not None]
        out.append(sum(chunk) / len(chunk) if chunk else None)
    return out
