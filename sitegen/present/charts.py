"""Charts: plain functions from page data to Vega-Lite dicts.

Each chart's shape is a skeleton built with Altair and validated once, stored as package
data (``skeletons/*.json``, made by ``make skeletons`` from :mod:`sitegen.present.shapes`);
a chart is a copy with its records and few own values (titles, a height) put in, so a build
imports neither Altair nor jsonschema. Long series are downsampled to at most
:data:`sitegen.analyse.curves.MAX_POINTS` buckets of mean, min and max (spikes stay visible
as a band); the raw values stay in the JSON data files.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sitegen.analyse.curves import MAX_POINTS, downsample_columns, smooth
from sitegen.model.vocabulary import finite_or_none as _num

WIDTH = "container"
HEIGHT = 220
# The series colours, for the charts and (through the overlay spec it is baked into) the
# comparison page's table swatches in static/site.js: one source.
PALETTE = [
    "#4c78a8",
    "#f58518",
    "#54a24b",
    "#e45756",
    "#72b7b2",
    "#b279a2",
    "#ff9da6",
    "#9d755d",
    "#bab0ac",
    "#eeca3b",
]
# Past ten series (a timing stack of many leaf timers) the palette goes on with ten more
# hues (light and dark companions, none close to the first ten), so no two parts share a
# colour; the first ten are PALETTE.
PALETTE_20 = PALETTE + [
    "#9ecae9",
    "#ffbf79",
    "#88d27a",
    "#b79a20",
    "#439894",
    "#d67195",
    "#d6a5c9",
    "#d8b5a5",
    "#79706e",
    "#1f3b73",
]
# A top legend does not wrap by itself: past this many characters of labels it is laid out
# in LEGEND_COLUMNS columns (rows of entries) instead of one row wider than the chart.
LEGEND_ONE_ROW_CHARS = 90
LEGEND_COLUMNS = 4
KIND_COLOURS = {
    "none": "#54a24b",
    "model": "#f58518",
    "infrastructure": "#e45756",
    "other": "#9d755d",
}


# -- skeletons -------------------------------------------------------------------------------------


def hole(name: str) -> str:
    """The placeholder a skeleton carries where a chart's own value goes (see :func:`fill`)."""
    return "${" + name + "}"


@functools.cache
def skeleton(name: str) -> dict:
    """A stored chart shape (package data), read once per process; never mutated (:func:`fill`
    copies every dict and list it passes through)."""
    # (beside this module, not through importlib.resources: see sitegen.present.assets.package_dir)
    path = Path(__file__).parent / "skeletons" / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


# A hole's value that leaves the hole's key out of the chart (a y scale only some charts need).
OMIT: Any = object()


def fill(node: Any, holes: dict[str, Any], data: dict[str, list]) -> Any:
    """A copy of a skeleton with each data stub ``{"name": n}`` replaced by ``{"values": data[n]}``
    and each hole ``"${k}"`` by ``holes[k]`` (a missing one is a KeyError: a bug, not input);
    a key whose hole is :data:`OMIT` is left out."""
    if isinstance(node, dict):
        if len(node) == 1 and "name" in node and node["name"] in data:
            return {"values": data[node["name"]]}
        filled = {k: fill(v, holes, data) for k, v in node.items()}
        return {k: v for k, v in filled.items() if v is not OMIT}
    if isinstance(node, list):
        return [fill(v, holes, data) for v in node]
    if isinstance(node, str) and node.startswith("${") and node.endswith("}"):
        return holes[node[2:-1]]
    return node


def _chart(name: str, data: dict[str, list], **holes: Any) -> dict:
    return fill(skeleton(name), holes, data)


# -- the charts ------------------------------------------------------------------------------------

# A series goes into a spec as one datum of columns, {label, column: [values...]}, which the
# spec's flatten transform turns back into rows: the field names and the label are written
# once per series instead of once per point (a third of a job page's bytes).
PROGRESSION_COLUMNS = ("step", "value", "lo", "hi", "smoothed")
LINES_COLUMNS = ("x", "y", "lo", "hi")
STACK_COLUMNS = ("x", "value")


def _band(col: list, ys: list) -> list:
    """A band's edge, or ``[]`` when it is the line itself: the flatten transform reads an
    empty column as nulls, which the band leaves out, so the line's numbers are not written
    three times (a third of a page's chart bytes)."""
    return [] if col == ys else col


def _gaps(cols: dict[str, list], xs: Sequence, ys: Sequence) -> dict[str, list]:
    """``cols`` (a series drawn point for point) with a null at each step whose value was
    logged but is not a number (NaN, ±inf): Vega-Lite breaks the line there, as the finding
    naming that step says. A step that did not log the metric (``None``) is no gap.
    Unchanged when nothing is non-finite, or when the points are bucket means."""
    bad = sum(1 for y in ys if type(y) is float and not math.isfinite(y))
    if not bad or len(cols["x"]) + bad > MAX_POINTS or cols["lo"] != cols["y"]:
        return cols
    px: list = []
    py: list = []
    for x, y in zip(xs, ys, strict=False):
        v = _num(y)
        if v is not None:
            px.append(x)
            py.append(v)
        elif type(y) is float:  # NaN or ±inf (a non-float non-number is no value at all)
            px.append(x)
            py.append(None)
    return {"x": px, "y": py, "lo": py, "hi": py}


def flat_domain(series: Sequence[Sequence[object]]) -> list[float] | None:
    """The y domain of a chart none of whose ``series`` varies, else ``None`` (Vega's own).

    Vega's zero-based domain of a constant 0.25 is [0, 0.25]: the line lies on the top
    border, where it reads as clipped. Twice the values' spread (their size for one value, 1
    for zero) around them, zero kept in, puts a lone line mid-chart."""
    levels: list[float] = []
    for ys in series:
        vals = {float(v) for v in ys if _num(v) is not None}  # type: ignore[arg-type]
        if len(vals) > 1:
            return None
        levels += vals
    if not levels:
        return None
    lo, hi = min(levels), max(levels)
    pad = (hi - lo) / 2 or abs(hi) or 1.0
    return [min(0.0, lo - pad), max(0.0, hi + pad)]


def _y_scale(series: Sequence[Sequence[object]]) -> Any:
    """The ``y_scale`` hole: :func:`flat_domain`'s domain (joined with the data's own), or
    left out."""
    domain = flat_domain(series)
    return OMIT if domain is None else {"domain": {"unionWith": domain}}


def progression(
    series: dict,
    names: dict[str, str],
    rules: Sequence[dict] = (),
    marks: Sequence[dict] = (),
    bands: Mapping[str, tuple[str, str]] | None = None,
) -> dict | None:
    """Raw (thin, faint) and smoothed (bold) lines for each metric in ``names`` {key: label}.
    ``rules``: vertical markers ``{x, label}`` (restarts); ``marks``: crosses ``{x, y,
    label}`` (discarded steps); ``bands``: a metric's band columns ``{key: (low, high)}``
    (an interval per step), else the band of the downsampled buckets.
    """
    steps = series.get("step", [])
    records = []
    for key, label in names.items():
        ys = series.get(key) or []
        lo_key, hi_key = (bands or {}).get(key, (None, None))
        if lo_key and hi_key:
            raw = downsample_columns(steps, ys, los=series.get(lo_key), his=series.get(hi_key))
        else:
            raw = _gaps(downsample_columns(steps, ys), steps, ys)
        if raw["x"]:
            # a gap in the raw line is one in the smoothed line too
            sm = [None if v is None else m for v, m in zip(raw["y"], smooth(raw["y"]), strict=True)]
            records.append(
                {
                    "metric": label,
                    "step": raw["x"],
                    "value": raw["y"],
                    "lo": _band(raw["lo"], raw["y"]),
                    "hi": _band(raw["hi"], raw["y"]),
                    "smoothed": sm,
                }
            )
    if not records:
        return None
    name = "progression" + ("_rules" if rules else "") + ("_marks" if marks else "")
    data = {"records": records, "rules": list(rules), "marks": list(marks)}
    return _chart(
        name,
        data,
        x_title="step",
        metrics=[r["metric"] for r in records],
        y_scale=_y_scale([[*r["value"], *r["lo"], *r["hi"]] for r in records]),
    )


def lines(
    series: dict,
    names: dict[str, str],
    x: str = "step",
    x_title: str = "step",
    y_title: str | None = None,
    bands: dict[str, tuple[str, str]] | None = None,
    points: bool = False,
) -> dict | None:
    """Lines with a min/max band: the range of downsampled buckets, or for a series in
    ``bands`` (``{key: (min column, max column)}``) the range those columns give. ``points``
    (over steps only) marks each value, for a sparse series such as eval metrics."""
    xs = series.get(x, [])
    records = []
    for key, label in names.items():
        ys = series.get(key)
        if not ys:
            continue
        lo_key, hi_key = (bands or {}).get(key, (None, None))
        cols = downsample_columns(
            xs,
            ys,
            los=series.get(lo_key) if lo_key else None,
            his=series.get(hi_key) if hi_key else None,
        )
        if not bands or key not in bands:
            cols = _gaps(cols, xs, ys)
        if cols["x"]:
            ys_shown = cols["y"]
            cols["lo"], cols["hi"] = _band(cols["lo"], ys_shown), _band(cols["hi"], ys_shown)
            records.append({"metric": label, **cols})
    if not records:
        return None
    name = ("lines_step_points" if points else "lines_step") if x == "step" else "lines"
    return _chart(
        name,
        {"records": records},
        x_title=x_title,
        y_title=y_title,
        y_scale=_y_scale([[*r["y"], *r["lo"], *r["hi"]] for r in records]),
    )


def stacked_bars(
    rows: list[dict],
    x_title: str,
    y_title: str,
    *,
    step_width: int | None = None,
    count: bool = False,
    fixed: Mapping[str, str] | None = None,
) -> dict | None:
    """Stacked bars from ``[{x, part, value}]``, one palette colour per part; ``fixed``: the
    colour of some parts wherever they appear (a timer keeps its colour from page to page).
    With ``step_width`` the ``x`` are steps on a numeric axis, each bar covering
    ``step_width`` steps from its ``x``; ``count`` (with it only) ticks whole numbers.
    """
    parts: dict[str, list[dict]] = {}
    for r in rows:
        if _num(r["value"]):
            parts.setdefault(r["part"], []).append(r)
    if not parts:
        return None
    records = [
        {"part": p, "x": [r["x"] for r in rs], "value": [r["value"] for r in rs]}
        for p, rs in parts.items()
    ]
    names = sorted(parts)  # the legend's order (Vega sorts a nominal domain)
    colours = {
        "palette": part_colours(names, fixed)
        if fixed
        else (PALETTE if len(names) <= len(PALETTE) else PALETTE_20),
        "legend_columns": (
            len(names) if sum(len(n) + 4 for n in names) <= LEGEND_ONE_ROW_CHARS else LEGEND_COLUMNS
        ),
    }
    if step_width is None:
        return _chart(
            "stacked_bars", {"records": records}, x_title=x_title, y_title=y_title, **colours
        )
    # a bar is 90 % of its bin, centred on the bin's steps (one step: x ± 0.45)
    return _chart(
        "stacked_bars_steps_count" if count else "stacked_bars_steps",
        {"records": records},
        x_title=x_title,
        y_title=y_title,
        **colours,
        x_start=_x_plus(0.05 * step_width - 0.5),
        x_end=_x_plus(step_width - 0.5 - 0.05 * step_width),
    )


def part_colours(names: list[str], fixed: Mapping[str, str]) -> list[str]:
    """The colour range for the sorted ``names`` (a nominal domain, as Vega sorts it):
    each name in ``fixed`` its own colour, the others the colours of :data:`PALETTE_20`
    that ``fixed`` does not use, in order (again from the first past twenty)."""
    taken = set(fixed.values())
    free = itertools.cycle([c for c in PALETTE_20 if c not in taken] or PALETTE_20)
    return [fixed[n] if n in fixed else next(free) for n in names]


def _x_plus(offset: float) -> str:
    """The Vega expression ``datum.x`` plus ``offset`` (short, with its sign)."""
    v = round(offset, 4) + 0.0
    return f"datum.x {'-' if v < 0 else '+'} {abs(v):g}"


def bars(
    rows: list[dict],
    x_title: str,
    y_title: str,
    colour_field: str | None = None,
    colours: str = "palette",
    horizontal: bool = False,
) -> dict | None:
    """Simple bars from ``[{label, value[, colour_field]}]``, coloured by ``colour_field``
    with the ``"palette"`` or the exception-``"kinds"`` colours (:data:`KIND_COLOURS`)."""
    if not rows:
        return None
    name = f"bars_{'h' if horizontal else 'v'}_{colours if colour_field else 'one'}"
    holes: dict[str, Any] = {"x_title": x_title, "y_title": y_title, "colour_field": colour_field}
    if horizontal:
        holes["height"] = max(120, 22 * len(rows))
    return _chart(name, {"records": rows}, **holes)


def overlay(rows: list[dict]) -> dict:
    """Comparison chart: one colour per run/job; rows ``[{step, value, name}]`` (filled in by the page)."""
    return _chart("overlay", {"records": rows})
