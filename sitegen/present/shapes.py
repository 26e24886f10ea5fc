"""Chart shapes: each chart's Vega-Lite skeleton, built with Altair (the design card's library).

A skeleton is a validated Vega-Lite spec with its data left out: a named stub
(``{"name": "records"}``) where :mod:`sitegen.present.charts` puts the records, and a *hole*
(the string ``"${name}"``) where a value differs from chart to chart (an axis title, a
height). ``make skeletons`` stores them in ``sitegen/present/skeletons/*.json``, which a
build only fills in; ``tests/present/test_charts.py`` rebuilds each here and compares.
Only the generator and the tests import this module.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import altair as alt
import jsonschema
from altair.utils.schemapi import debug_mode
from altair.vegalite.v6.schema import core

from sitegen.present import charts
from sitegen.present.charts import HEIGHT, KIND_COLOURS, PALETTE, WIDTH, fill, hole
from sitegen.present.insight_shapes import INSIGHT_SHAPES
from sitegen.present.vegalite import finish


def whole_axis(channel: str) -> alt.Axis:
    """An axis of whole numbers (steps, counts) on ``channel`` (``"x"`` or ``"y"``): each
    tick a whole number, each label once.

    Vega's ``tickMinStep: 1`` only caps the tick count, and d3 still steps by 0.5 over a
    span of 1 or 2 (labels "1 2 2 3 3"). At most ``round(span)`` ticks (or Vega-Lite's own
    ``ceil(size/40)``) leaves each tick at least 0.75 of the domain, which d3 rounds to a
    whole step; rounding, not flooring, keeps a tick on each of two steps' bars (0.55–2.45).
    Read from the drawn scale at render time, so it follows the data (the comparison page
    redraws its chart with other rows) and the width."""
    size = "width" if channel == "x" else "height"
    count = f"min(ceil({size}/40),max(1,round(span(domain('{channel}')))))"
    return alt.Axis(format="d", tickCount=alt.ExprRef(expr=count))


# Steps are always on x.
STEP_AXIS = whole_axis("x")
# ... and span exactly the steps drawn: Vega's default "nice" domain rounds steps 1–16 out
# to 0–16 and a bar chart's 1–8 (bars 0.55–8.45 wide) to 0–9, ticking steps that never ran.
STEP_SCALE = alt.Scale(nice=False, zero=False)
# The one legend every coloured chart uses: on top, solid symbols.
LEGEND = alt.Legend(orient="top", symbolOpacity=1, symbolStrokeWidth=3)


def _colour(field: str, colours: dict[str, str] | None = None) -> alt.Color:
    """One colour per series (the palette, or ``colours`` {value: colour}) and the legend."""
    scale = (
        alt.Scale(domain=list(colours), range=list(colours.values()))
        if colours
        else alt.Scale(range=PALETTE)
    )
    return alt.Color(f"{field}:N", title=None, scale=scale, legend=LEGEND)


# The y scale of line charts: a hole the build fills with a domain only when no series
# varies (charts.flat_domain), and otherwise leaves out (charts.OMIT).
Y_SCALE: Any = hole("y_scale")


def progression(rules: bool, marks: bool) -> dict:
    """Raw (thin, faint) and smoothed (bold) lines with a band; optional restart rules and
    discarded-step crosses. Data: ``records``, ``rules``, ``marks``. The colours follow the
    ``metrics`` hole, not the names' sort: reward is the first colour on every page."""
    domain: Any = hole("metrics")
    colour = alt.Color(
        "metric:N", title=None, scale=alt.Scale(domain=domain, range=PALETTE), legend=LEGEND
    )
    base = (
        alt.Chart(alt.Data(name="records"))
        .transform_flatten(list(charts.PROGRESSION_COLUMNS))
        .properties(width=WIDTH, height=HEIGHT)
        .encode(
            x=alt.X("step:Q", title=hole("x_title"), axis=STEP_AXIS, scale=STEP_SCALE),
            color=colour,
        )
    )
    layers: list = [
        base.mark_area(opacity=0.15).encode(y=alt.Y("lo:Q", scale=Y_SCALE), y2=alt.Y2("hi:Q")),
        base.mark_line(opacity=0.35, strokeWidth=1).encode(
            y=alt.Y("value:Q", title=None, scale=Y_SCALE)
        ),
        base.mark_line(strokeWidth=2.5).encode(
            y=alt.Y("smoothed:Q", scale=Y_SCALE),
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
            alt.Chart(alt.Data(name="rules"))
            .mark_rule(strokeDash=[4, 3], color="#888")
            .encode(x=alt.X("x:Q", scale=STEP_SCALE), tooltip=[alt.Tooltip("label:N")])
        )
    if marks:
        layers.append(
            alt.Chart(alt.Data(name="marks"))
            .mark_point(shape="cross", size=60, color="#e45756")
            .encode(
                x=alt.X("x:Q", scale=STEP_SCALE),
                y=alt.Y("y:Q", scale=Y_SCALE),
                tooltip=[alt.Tooltip("label:N"), alt.Tooltip("y:Q", format=".4f")],
            )
        )
    return finish(alt.layer(*layers))


def lines(step_axis: bool, points: bool = False) -> dict:
    """Lines with a min/max band. Data: ``records``; holes: ``x_title``, ``y_title``."""
    base = (
        alt.Chart(alt.Data(name="records"))
        .transform_flatten(list(charts.LINES_COLUMNS))
        .properties(width=WIDTH, height=HEIGHT)
        .encode(
            x=alt.X("x:Q", title=hole("x_title"), axis=STEP_AXIS, scale=STEP_SCALE)
            if step_axis
            else alt.X("x:Q", title=hole("x_title"), axis=alt.Axis()),
            color=_colour("metric"),
        )
    )
    return finish(
        alt.layer(
            base.mark_area(opacity=0.2).encode(y=alt.Y("lo:Q", scale=Y_SCALE), y2=alt.Y2("hi:Q")),
            base.mark_line(strokeWidth=1.8, point=points or alt.Undefined).encode(
                y=alt.Y("y:Q", title=hole("y_title"), scale=Y_SCALE),
                tooltip=[
                    alt.Tooltip("x:Q", title=hole("x_title")),
                    alt.Tooltip("metric:N"),
                    alt.Tooltip("y:Q", format=",.2f"),
                ],
            ),
        ),
    )


def stacked_bars(steps: bool = False, count: bool = False) -> dict:
    """Stacked bars from ``[{x, part, value}]``. Holes: ``x_title``, ``y_title``.

    ``steps``: ``x`` is a step on a numeric axis (a step without bars shows as a gap), each
    bar spanning ``[x_start, x_end]``, expressions in holes of those names. ``count``: the
    values are counts, ticked in whole numbers (0–2 errors must not tick 0.5).
    """
    y_axis = whole_axis("y") if count else alt.Undefined
    base = (
        alt.Chart(alt.Data(name="records"))
        .transform_flatten(list(charts.STACK_COLUMNS))
        .properties(width=WIDTH, height=HEIGHT)
    )
    if steps:
        base = base.transform_calculate(x_start=hole("x_start"), x_end=hole("x_end"))
        x: dict = {
            "x": alt.X("x_start:Q", title=hole("x_title"), axis=STEP_AXIS, scale=STEP_SCALE),
            "x2": alt.X2("x_end:Q"),
        }
        x_tip = alt.Tooltip("x:Q", title=hole("x_title"))
    else:
        x = {
            "x": alt.X("x:O", title=hole("x_title"), axis=alt.Axis(labelOverlap=True, labelAngle=0))
        }
        x_tip = alt.Tooltip("x:O", title=hole("x_title"))
    # many parts (leaf timers): a palette of up to 20 and a legend that wraps (both holes;
    # a hole is a string where the schema wants a number until the build fills it in)
    columns: Any = hole("legend_columns")
    colour = alt.Color(
        "part:N",
        title=None,
        scale=alt.Scale(range=hole("palette")),
        legend=alt.Legend(orient="top", symbolOpacity=1, symbolStrokeWidth=3, columns=columns),
    )
    chart = base.mark_bar().encode(
        **x,
        y=alt.Y("sum(value):Q", title=hole("y_title"), stack="zero", axis=y_axis),
        color=colour,
        tooltip=[
            x_tip,
            alt.Tooltip("part:N"),
            alt.Tooltip("value:Q", format=",d" if count else ",.2f"),
        ],
    )
    return finish(chart)


def bars(horizontal: bool, colour: str) -> dict:
    """Simple bars from ``[{label, value[, <colour_field>]}]``; the values are counts.
    ``colour``: ``"one"``, ``"palette"`` or ``"kinds"`` (the exception-kind colours) by the
    ``colour_field`` hole. Holes: ``x_title``, ``y_title``, ``colour_field``; ``height``
    when horizontal (one row per bar)."""
    enc: dict = {
        "tooltip": [
            alt.Tooltip("label:N", title=hole("x_title")),
            alt.Tooltip("value:Q", title=hole("y_title")),
        ],
    }
    if horizontal:
        enc["y"] = alt.Y("label:N", title=None, sort="-x")
        enc["x"] = alt.X("value:Q", title=hole("y_title"), axis=whole_axis("x"))
    else:
        enc["x"] = alt.X("label:O", title=hole("x_title"), sort=None, axis=alt.Axis(labelAngle=0))
        enc["y"] = alt.Y("value:Q", title=hole("y_title"), axis=whole_axis("y"))
    if colour == "one":
        enc["color"] = alt.value(PALETTE[0])
    else:
        enc["color"] = _colour(hole("colour_field"), KIND_COLOURS if colour == "kinds" else None)
    spec = finish(
        alt.Chart(alt.Data(name="records"))
        .mark_bar()
        .encode(**enc)
        .properties(width=WIDTH, height=HEIGHT)
    )
    if horizontal:  # Altair checks a height's type as it is set, so the hole goes in after
        spec["height"] = hole("height")
    return spec


def overlay() -> dict:
    """The comparison chart; the page fills in ``[{step, value, name}]`` and the colours."""
    chart = (
        alt.Chart(alt.Data(name="records"))
        .mark_line(strokeWidth=2)
        .encode(
            x=alt.X("step:Q", title="step", axis=STEP_AXIS, scale=STEP_SCALE),
            # not from 0: picks differ by a few hundredths of reward, which a zero-based axis flattens
            y=alt.Y("value:Q", title="reward (smoothed)", scale=alt.Scale(zero=False)),
            color=_colour("name"),
            tooltip=[
                alt.Tooltip("name:N"),
                alt.Tooltip("step:Q"),
                alt.Tooltip("value:Q", format=".4f"),
            ],
        )
        .properties(width=WIDTH, height=300)
    )
    return finish(chart)


# name -> (builder, example holes used to validate the shape against the Vega-Lite schema)
_TITLES = {"x_title": "step", "y_title": "seconds"}
_Y = {"y_scale": {"domain": {"unionWith": [0, 1]}}}
_PROG = {"x_title": "step", "metrics": ["reward", "pass@8"], **_Y}
_STACK = {**_TITLES, "palette": PALETTE, "legend_columns": 4}
SHAPES: dict[str, tuple[Callable[[], dict], dict[str, Any]]] = {
    "progression": (lambda: progression(False, False), _PROG),
    "progression_rules": (lambda: progression(True, False), _PROG),
    "progression_marks": (lambda: progression(False, True), _PROG),
    "progression_rules_marks": (lambda: progression(True, True), _PROG),
    "lines_step": (lambda: lines(True), {**_TITLES, **_Y}),
    "lines_step_points": (lambda: lines(True, points=True), {**_TITLES, **_Y}),
    "lines": (lambda: lines(False), {**_TITLES, **_Y}),
    "stacked_bars": (stacked_bars, _STACK),
    "stacked_bars_steps": (
        lambda: stacked_bars(steps=True),
        {**_STACK, "x_start": "datum.x - 0.45", "x_end": "datum.x + 0.45"},
    ),
    "stacked_bars_steps_count": (
        lambda: stacked_bars(steps=True, count=True),
        {**_STACK, "x_start": "datum.x - 0.45", "x_end": "datum.x + 0.45"},
    ),
    "overlay": (overlay, {}),
}
SHAPES.update(INSIGHT_SHAPES)
for _h in (False, True):
    for _c in ("one", "palette", "kinds"):
        SHAPES[f"bars_{'h' if _h else 'v'}_{_c}"] = (
            functools.partial(bars, _h, _c),
            {**_TITLES, "colour_field": "kind", **({"height": 120} if _h else {})},
        )


def build(name: str) -> dict:
    """One skeleton, freshly built with Altair and validated with example holes."""
    make, example = SHAPES[name]
    with debug_mode(False):  # validated once below, not object by object
        spec = make()
    validate(fill(spec, example, _empty_data(spec)))
    return spec


def _empty_data(spec: object, found: dict[str, list] | None = None) -> dict[str, list]:
    found = {} if found is None else found
    if isinstance(spec, dict):
        if set(spec) == {"name"}:
            found[spec["name"]] = []
        for v in spec.values():
            _empty_data(v, found)
    elif isinstance(spec, list):
        for v in spec:
            _empty_data(v, found)
    return found


@functools.cache
def _validator() -> Any:
    """A validator for the Vega-Lite schema Altair ships, compiled once (a cache, not state)."""
    schema = core.load_schema()
    return jsonschema.validators.validator_for(schema)(schema)


def validate(spec: dict) -> None:
    """Validate a Vega-Lite spec against the schema Altair ships; raises on the first error."""
    _validator().validate(spec)


def dumps(spec: dict) -> str:
    """How a skeleton is stored: stable, diff-friendly JSON (key order is the spec's)."""
    return json.dumps(spec, indent=1, ensure_ascii=False) + "\n"
