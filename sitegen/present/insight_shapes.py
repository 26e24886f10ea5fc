"""Chart shapes of the insights (see :mod:`sitegen.present.shapes`, which registers them).

Only the skeleton generator and the tests import this module (it needs Altair).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import altair as alt

from sitegen.present.charts import WIDTH, hole
from sitegen.present.vegalite import finish


def heatmap() -> dict:
    """Task × step success rate: ``[{task, order, step, rate, trials, href}]``; rows in
    ``order``; a cell with an ``href`` (a sampled transcript) opens it.

    Holes: ``x_title`` (``step`` or ``steps (bins of N)``), ``height`` (one band per task).
    """
    chart = (
        alt.Chart(alt.Data(name="records"))
        .mark_rect()
        .encode(
            x=alt.X(
                "step:O", title=hole("x_title"), axis=alt.Axis(labelOverlap=True, labelAngle=0)
            ),
            y=alt.Y(
                "task:N",
                title=None,
                sort=alt.EncodingSortField(field="order", order="ascending"),
                axis=alt.Axis(labelLimit=220),
            ),
            color=alt.Color(
                "rate:Q",
                title="success rate",
                # 0 % is orange, not the near-white of a blue scheme, so a task tried and
                # never solved at a step does not look like one not run there (no cell)
                scale=alt.Scale(
                    domain=[0, 0.5, 1], range=["#fdae6b", "#c6dbef", "#08519c"], interpolate="rgb"
                ),
                legend=alt.Legend(orient="top", format=".0%"),
            ),
            href=alt.Href("href:N"),
            tooltip=[
                alt.Tooltip("task:N"),
                alt.Tooltip("step:O", title=hole("x_title")),
                alt.Tooltip("rate:Q", title="success rate", format=".0%"),
                alt.Tooltip("trials:Q"),
            ],
        )
        .properties(width=WIDTH)
    )
    spec = finish(chart)
    spec["height"] = hole("height")  # set after building: Altair checks a height's type
    return spec


INSIGHT_SHAPES: dict[str, tuple[Callable[[], dict], dict[str, Any]]] = {
    "heatmap": (heatmap, {"x_title": "step", "height": 200}),
}
