"""Per-step curves made shorter and smoother, for charts and the comparison page.

Pure functions on columns of numbers; non-finite values are gaps (they never
enter a bucket mean or a rolling mean)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise
from typing import cast

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
    without them a point's range is its value."""
    c = downsample_columns(xs, ys, max_points, los, his)
    return [
        {"x": x, "y": y, "lo": lo, "hi": hi}
        for x, y, lo, hi in zip(c["x"], c["y"], c["lo"], c["hi"], strict=True)
    ]


def downsample_columns(
    xs: Sequence,
    ys: Sequence,
    max_points: int = MAX_POINTS,
    los: Sequence | None = None,
    his: Sequence | None = None,
) -> dict[str, list]:
    """:func:`downsample` as columns ``{x, y, lo, hi}`` (what the charts store), without a
    dict per point: the charts' hot loop. The same numbers, summed in the same order."""
    px: list = []
    py: list[float] = []
    if _finite_floats(ys) and _finite_floats(los) and _finite_floats(his):
        # Every value a finite float (most series, and bands): the points are the columns as
        # they are, no value tested one by one in Python (the loops below).
        m = min(len(xs), len(ys), len(ys if los is None else los), len(ys if his is None else his))
        px, py = list(xs[:m]), cast("list[float]", ys[:m])  # (a list: _finite_floats)
        plo = py if los is None else los[:m]
        phi = py if his is None else his[:m]
    elif los is None and his is None:
        isfinite = math.isfinite
        for x, y in zip(xs, ys, strict=False):
            if type(y) is float:  # nearly every value: tested inline
                if isfinite(y):
                    px.append(x)
                    py.append(y)
            elif y is not None:  # (None: a step that did not log it, the other common case)
                v = finite_or_none(y)
                if v is not None:
                    px.append(x)
                    py.append(v)
        plo = phi = py
    else:
        plo, phi = [], []
        lo_col = los if los is not None else ys
        hi_col = his if his is not None else ys
        isfinite = math.isfinite
        for x, y, lo, hi in zip(xs, ys, lo_col, hi_col, strict=False):
            # finite_or_none of each, a float (nearly every value) tested inline: a finite
            # float is its own float()
            if type(y) is float:
                if not isfinite(y):
                    continue
                v = y
            elif y is None or (v := finite_or_none(y)) is None:
                continue
            lv = lo if type(lo) is float and isfinite(lo) else finite_or_none(lo)
            hv = hi if type(hi) is float and isfinite(hi) else finite_or_none(hi)
            px.append(x)
            py.append(v)
            plo.append(v if lv is None else lv)
            phi.append(v if hv is None else hv)
    n = len(py)
    if n <= max_points:
        return {"x": px, "y": py, "lo": list(plo), "hi": list(phi)}
    # The buckets' bounds (n > max_points: none is empty), then each column by one
    # comprehension over the buckets' slices, a slice taken once for the three columns that
    # share it when the band is the values: the same sums, in the same order, and the same
    # min and max, with fewer appends and slices than a loop over the buckets.
    bounds = [i * n // max_points for i in range(max_points + 1)]
    spans = list(pairwise(bounds))
    chunks = [py[a:b] for a, b in spans]
    return {
        "x": [px[a + (b - a) // 2] for a, b in spans],
        "y": [sum(c) / len(c) for c in chunks],
        "lo": list(map(min, chunks)) if plo is py else [min(plo[a:b]) for a, b in spans],
        "hi": list(map(max, chunks)) if phi is py else [max(phi[a:b]) for a, b in spans],
    }


def _finite_floats(ys: Sequence | None) -> bool:
    """True when ``ys`` is None or a list of floats (not a subclass), all finite: told in C,
    by the set of their types and their sum (which is finite only if each of them is; a sum
    that overflows answers False, and the caller then goes value by value: never different)."""
    if ys is None:
        return True
    return type(ys) is list and {*map(type, ys)} == {float} and math.isfinite(sum(ys))


def smooth(ys: Sequence[float | None], window: int | None = None) -> list[float | None]:
    """Centred rolling mean over finite values (window ≈ n/15, odd, at least 3)."""
    vals: list[float | None] = [
        v if type(v) is float and math.isfinite(v) else finite_or_none(v) for v in ys
    ]
    n = len(vals)
    w = window or max(3, (n // 15) | 1)
    half = w // 2
    out: list[float | None] = []
    if None not in vals:  # no gaps (the usual case): each window is a plain slice
        full = cast(list[float], vals)
        for i in range(n):
            window_vals = full[max(0, i - half) : i + half + 1]
            out.append(sum(window_vals) / len(window_vals))
        return out
    for i in range(n):
        chunk = [v for v in vals[max(0, i - half) : i + half + 1] if v is not None]
        out.append(sum(chunk) / len(chunk) if chunk else None)
    return out
