"""What every stored chart skeleton shares: the Vega-Lite version and the final touches
(for :mod:`sitegen.present.shapes` and :mod:`~sitegen.present.insight_shapes`, not the build).
"""

from __future__ import annotations

import altair as alt

SCHEMA_URL = "https://vega.github.io/schema/vega-lite/v6.json"


def finish(chart: alt.TopLevelMixin) -> dict:
    """The chart as a plain spec: transparent, no view stroke, the pinned schema URL."""
    spec = (
        chart.configure(background="transparent")
        .configure_view(stroke=None)
        .to_dict(validate=False)
    )
    spec.pop("$schema", None)
    spec["$schema"] = SCHEMA_URL
    return spec
