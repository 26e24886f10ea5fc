"""Charts: plain functions from page data to validated Vega-Lite dicts (Altair).

Data is always inlined by us (``_Datasets``), never
through Altair's global data transformer. Long series are downsampled for
display to at most :data:`MAX_POINTS` buckets carrying mean, min and max, so
spikes stay visible as a band; the raw values stay in the JSON data files.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from typing import Any

import altair as alt
import jsonschema
from altair.vegalite.v6.schema import core

MAX_POINTS = 400
WIDTH = "container"
HEIGHT = 220
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
STEP_AXIS = alt.Axis(format="d", tickMinStep=1)
KIND_COLOURS = {
    "none": "#54a24b",
    "model": "#f58518",
    "infrastructure": "#e45756",
    "other": "#9d755d",
}


def _num(v: object) -> float | None:
    return float(v) if isinstance(v, int | float) and math.isfinite(v) else None


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
    lo_col = los if los is not None else ys
    hi_col = his if his is not None else ys
    pts: list[tuple[Any, float, float, float]] = []
    for x, y, lo, hi in zip(xs, ys, lo_col, hi_col, strict=False):
        v = _num(y)
        if v is not None:
            lv, hv = _num(lo), _num(hi)
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
    vals = [_num(v) for v in ys]
    n = len(vals)
    w = window or max(3, (n // 15) | 1)
    half = w // 2
    out: list[float | None] = []
    for i in range(n):
        chunk = [v for v in vals[max(0, i - half) : i + half + 1] if v is not None]
        out.append(sum(chunk) / len(chunk) if chunk else None)
    return out


class _Datasets:
    """Chart data kept out of Altair's hands: a named placeholder while the chart is built,
    the records put in place after ``to_dict()`` (Altair deep-copies and walks inline data,
    which cost most of a build)."""

    def __init__(self) -> None:
        self.values: dict[str, list] = {}

    def __call__(self, records: list) -> alt.Data:
        name = f"sitegen_data_{len(self.values)}"
        self.values[name] = records
        return alt.Data(name=name)

    def inline(self, node: Any) -> Any:
        if isinstance(node, dict):
            if set(node) == {"name"} and node["name"] in self.values:
                return {"values": self.values[node["name"]]}
            return {k: self.inline(v) for k, v in node.items()}
        if isinstance(node, list):
            return [self.inline(v) for v in node]
        return node


def _series_colour(field: str) -> alt.Color:
    """One colour per series, legend on top with solid symbols."""
    return alt.Color(
        f"{field}:N",
        title=None,
        scale=alt.Scale(range=PALETTE),
        legend=alt.Legend(orient="top", symbolOpacity=1, symbolStrokeWidth=3),
    )


def _base(d: _Datasets, records: list[dict]) -> alt.Chart:
    return alt.Chart(d(records)).properties(width=WIDTH, height=HEIGHT)


def _stub_data(node: object, seen: list[int]) -> object:
    """A copy of a spec with every inline ``{"values": [...]}`` replaced by a named stub."""
    if isinstance(node, dict):
        if "values" in node and isinstance(node["values"], list) and len(node) == 1:
            seen.append(1)
            return {"name": f"data{len(seen)}"}
        return {k: _stub_data(v, seen) for k, v in node.items()}
    if isinstance(node, list):
        return [_stub_data(v, seen) for v in node]
    return node


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    """A validator for the Vega-Lite schema Altair ships, compiled once (a cache, not state)."""
    schema = core.load_schema()
    return jsonschema.validators.validator_for(schema)(schema)


def validate(spec: dict) -> None:
    """Validate a Vega-Lite spec against the schema Altair ships; raises on the first error.

    The inline data arrays are left out of validation (they are plain records
    we built), and a spec whose shape was already validated in this process is
    not validated again: pages repeat the same chart shapes with other data.
    """
    _validate_shape(json.dumps(_stub_data(spec, []), sort_keys=True))


@functools.lru_cache(maxsize=1024)
def _validate_shape(stub: str) -> None:
    _validator().validate(json.loads(stub))


def _finish(d: _Datasets, chart: alt.TopLevelMixin) -> dict:
    """The chart as a validated Vega-Lite dict with its data inlined."""
    spec = (
        chart.configure(background="transparent")
        .configure_view(stroke=None)
        .to_dict(validate=False)
    )
    spec = d.inline(spec)  # type: ignore[assignment]
    validate(spec)
    spec.pop("$schema", None)
    spec["$schema"] = "https://vega.github.io/schema/vega-lite/v6.json"
    return spec


def progression(
    series: dict,
    names: dict[str, str],
    x_title: str = "step",
    rules: Sequence[dict] = (),
    marks: Sequence[dict] = (),
) -> dict | None:
    """Raw (thin, faint) and smoothed (bold) lines for each metric in ``names`` {key: label}.

    ``rules``: vertical markers ``{x, label}`` (restart points); ``marks``:
    points ``{x, y, label}`` drawn as crosses (discarded steps).
    """
    d = _Datasets()
    steps = series.get("step", [])
    records = []
    for key, label in names.items():
        ys = series.get(key)
        if not ys:
            continue
        raw = downsample(steps, ys)
        sm = smooth([r["y"] for r in raw])
        for r, s in zip(raw, sm, strict=True):
            records.append(
                {
                    "step": r["x"],
                    "value": r["y"],
                    "lo": r["lo"],
                    "hi": r["hi"],
                    "smoothed": s,
                    "metric": label,
                }
            )
    if not records:
        return None
    colour = _series_colour("metric")
    base = _base(d, records).encode(x=alt.X("step:Q", title=x_title, axis=STEP_AXIS), color=colour)
    layers: list = [
        base.mark_area(opacity=0.15).encode(y=alt.Y("lo:Q"), y2=alt.Y2("hi:Q")),
        base.mark_line(opacity=0.35, strokeWidth=1).encode(y=alt.Y("value:Q", title=None)),
        base.mark_line(strokeWidth=2.5).encode(
            y=alt.Y("smoothed:Q"),
            tooltip=[
                alt.Tooltip("step:Q"),
                alt.Tooltip("metric:N"),
                alt.Tooltip("value:Q", format=".4f"),
                alt.Tooltip("smoothed:Q", format=".4f"),
            ],
        ),
    ]
    if rules:
        layers.append(
            alt.Chart(d(list(rules)))
            .mark_rule(strokeDash=[4, 3], color="#888")
            .encode(x=alt.X("x:Q"), tooltip=[alt.Tooltip("label:N")])
        )
    if marks:
        layers.append(
            alt.Chart(d(list(marks)))
            .mark_point(shape="cross", size=60, color="#e45756")
            .encode(
                x=alt.X("x:Q"),
                y=alt.Y("y:Q"),
                tooltip=[alt.Tooltip("label:N"), alt.Tooltip("y:Q", format=".4f")],
            )
        )
    return _finish(d, alt.layer(*layers))


def lines(
    series: dict,
    names: dict[str, str],
    x: str = "step",
    x_title: str = "step",
    y_title: str | None = None,
    bands: dict[str, tuple[str, str]] | None = None,
) -> dict | None:
    """Lines with a min/max band: the range of downsampled buckets, or for a series in
    ``bands`` (``{key: (min column, max column)}``) the range those columns give."""
    d = _Datasets()
    xs = series.get(x, [])
    records = []
    for key, label in names.items():
        ys = series.get(key)
        if not ys:
            continue
        lo_key, hi_key = (bands or {}).get(key, (None, None))
        rows = downsample(
            xs,
            ys,
            los=series.get(lo_key) if lo_key else None,
            his=series.get(hi_key) if hi_key else None,
        )
        for r in rows:
            records.append(
                {"x": r["x"], "y": r["y"], "lo": r["lo"], "hi": r["hi"], "metric": label}
            )
    if not records:
        return None
    colour = _series_colour("metric")
    base = _base(d, records).encode(
        x=alt.X("x:Q", title=x_title, axis=STEP_AXIS if x == "step" else alt.Axis()), color=colour
    )
    return _finish(
        d,
        alt.layer(
            base.mark_area(opacity=0.2).encode(y=alt.Y("lo:Q"), y2=alt.Y2("hi:Q")),
            base.mark_line(strokeWidth=1.8).encode(
                y=alt.Y("y:Q", title=y_title),
                tooltip=[
                    alt.Tooltip("x:Q", title=x_title),
                    alt.Tooltip("metric:N"),
                    alt.Tooltip("y:Q", format=",.2f"),
                ],
            ),
        ),
    )


def stacked_bars(
    rows: list[dict], x_title: str, y_title: str, colours: dict[str, str] | None = None
) -> dict | None:
    """Stacked bars from ``[{x, part, value}]``."""
    d = _Datasets()
    rows = [r for r in rows if _num(r["value"])]
    if not rows:
        return None
    scale = (
        alt.Scale(domain=list(colours), range=list(colours.values()))
        if colours
        else alt.Scale(range=PALETTE)
    )
    chart = (
        _base(d, rows)
        .mark_bar()
        .encode(
            x=alt.X("x:O", title=x_title, axis=alt.Axis(labelOverlap=True, labelAngle=0)),
            y=alt.Y("sum(value):Q", title=y_title, stack="zero"),
            color=alt.Color(
                "part:N",
                title=None,
                scale=scale,
                legend=alt.Legend(orient="top", symbolOpacity=1, symbolStrokeWidth=3),
            ),
            tooltip=[
                alt.Tooltip("x:O", title=x_title),
                alt.Tooltip("part:N"),
                alt.Tooltip("value:Q", format=",.2f"),
            ],
        )
    )
    return _finish(d, chart)


def bars(
    rows: list[dict],
    x_title: str,
    y_title: str,
    colour_field: str | None = None,
    colours: dict[str, str] | None = None,
    horizontal: bool = False,
) -> dict | None:
    """Simple bars from ``[{label, value[, colour_field]}]``."""
    d = _Datasets()
    if not rows:
        return None
    enc: dict = {
        "tooltip": [alt.Tooltip("label:N", title=x_title), alt.Tooltip("value:Q", title=y_title)],
    }
    if horizontal:
        enc["y"] = alt.Y("label:N", title=None, sort="-x")
        enc["x"] = alt.X("value:Q", title=y_title)
    else:
        enc["x"] = alt.X("label:O", title=x_title, sort=None, axis=alt.Axis(labelAngle=0))
        enc["y"] = alt.Y("value:Q", title=y_title)
    if colour_field:
        scale = (
            alt.Scale(domain=list(colours), range=list(colours.values()))
            if colours
            else alt.Scale(range=PALETTE)
        )
        enc["color"] = alt.Color(
            f"{colour_field}:N",
            title=None,
            scale=scale,
            legend=alt.Legend(orient="top", symbolOpacity=1, symbolStrokeWidth=3),
        )
    else:
        enc["color"] = alt.value(PALETTE[0])
    height = max(120, 22 * len(rows)) if horizontal else HEIGHT
    return _finish(
        d, alt.Chart(d(rows)).mark_bar().encode(**enc).properties(width=WIDTH, height=height)
    )


def overlay(rows: list[dict]) -> dict:
    """Comparison chart: one colour per run/job; rows ``[{step, value, name}]`` (filled in by the page)."""
    d = _Datasets()
    chart = (
        alt.Chart(d(rows))
        .mark_line(strokeWidth=2)
        .encode(
            x=alt.X("step:Q", title="step", axis=STEP_AXIS),
            y=alt.Y("value:Q", title="reward (smoothed)"),
            color=alt.Color(
                "name:N",
                title=None,
                scale=alt.Scale(range=PALETTE),
                legend=alt.Legend(orient="top", symbolOpacity=1, symbolStrokeWidth=3),
            ),
            tooltip=[
                alt.Tooltip("name:N"),
                alt.Tooltip("step:Q"),
                alt.Tooltip("value:Q", format=".4f"),
            ],
        )
        .properties(width=WIDTH, height=300)
    )
    return _finish(d, chart)


def sparkline(values: Sequence) -> str:
    """An inline SVG polyline path for the index table (no JavaScript needed)."""
    pts = [(i, v) for i, v in enumerate(values) if _num(v) is not None]
    if len(pts) < 2:
        return ""
    lo = min(v for _, v in pts)
    hi = max(v for _, v in pts)
    span = (hi - lo) or 1.0
    n = max(1, len(values) - 1)
    return " ".join(f"{100 * i / n:.1f},{22 - 20 * (v - lo) / span:.1f}" for i, v in pts)


def card(title: str, subtitle: str, figures: list[tuple[str, str]], series: dict, key: str) -> dict:
    """The 1200×630 social preview card: reward curve plus key figures."""
    d = _Datasets()
    pts = downsample(series.get("step", []), series.get(key, []) or [], 200)
    curve_rows = [{"step": p["x"], "reward": p["y"]} for p in pts] or [{"step": 0, "reward": 0}]
    curve = (
        alt.Chart(d(curve_rows))
        .mark_line(strokeWidth=5, color="#4c78a8")
        .encode(
            x=alt.X(
                "step:Q",
                title="step",
                axis=alt.Axis(format="d", tickMinStep=1, labelFontSize=18, titleFontSize=18),
            ),
            y=alt.Y(
                "reward:Q",
                title="reward",
                scale=alt.Scale(zero=False),
                axis=alt.Axis(labelFontSize=18, titleFontSize=18),
            ),
        )
        .properties(width=600, height=400)
    )
    text_rows = [{"y": i, "key": k, "value": v} for i, (k, v) in enumerate(figures)]
    rows = alt.Y("y:O", axis=None)
    keys = (
        alt.Chart(d(text_rows))
        .mark_text(align="left", fontSize=24, color="#666")
        .encode(x=alt.value(0), y=rows, text=alt.Text("key:N"))
    )
    values = (
        alt.Chart(d(text_rows))
        .mark_text(align="left", fontSize=34, fontWeight="bold", color="#1d2126")
        .encode(x=alt.value(170), y=rows, text=alt.Text("value:N"))
    )
    text = alt.layer(keys, values).properties(width=400, height=400)
    chart = alt.hconcat(curve, text, spacing=50).properties(
        title=alt.TitleParams(
            title, subtitle=subtitle, fontSize=40, subtitleFontSize=24, anchor="start"
        ),
        padding={"left": 30, "top": 30, "right": 20, "bottom": 20},
    )
    spec = d.inline(
        chart.configure(background="#ffffff").configure_view(stroke=None).to_dict(validate=False)
    )
    validate(spec)
    return spec
