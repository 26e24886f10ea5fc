import json
import subprocess
import sys
from pathlib import Path

import pytest

from sitegen.analyse.curves import downsample
from sitegen.present import charts, shapes
from tests.conftest import whole_axes
from tests.present.helpers import rows

SKELETONS = Path(charts.__file__).parent / "skeletons"


def test_a_band_is_written_only_where_it_is_not_the_line():
    """Downsampled buckets carry their min and max; a given range (vLLM's per-minute
    engines) is kept even where it is not downsampled."""
    steps = list(range(1, 1001))
    spec = charts.lines({"step": steps, "m": [float(i % 7) for i in steps]}, {"m": "metric"})
    (datum,) = spec["data"]["values"]
    assert len(datum["lo"]) == len(datum["y"]) == 400 and datum["lo"] != datum["y"]
    banded = {"t": [1, 2], "v": [2.0, 3.0], "lo": [1.0, 2.5], "hi": [2.0, 3.5]}
    spec = charts.lines(banded, {"v": "v"}, x="t", bands={"v": ("lo", "hi")})
    assert spec["data"]["values"][0]["lo"] == [1.0, 2.5]
    assert spec["data"]["values"][0]["hi"] == [2.0, 3.5]
    spec = charts.progression({"step": [1, 2], "r": [0.1, 0.2]}, {"r": "reward"})
    assert spec["data"]["values"][0]["lo"] == spec["data"]["values"][0]["hi"] == []


def test_specs_are_validated_and_data_inlined():
    spec = charts.lines({"step": [1, 2, 3], "m": [1.0, 2.0, 3.0]}, {"m": "metric"})
    assert spec["$schema"].endswith("v6.json")
    # one datum of columns per series, flattened back into rows by the spec
    assert spec["data"] == {
        "values": [
            {
                "metric": "metric",
                "x": [1, 2, 3],
                "y": [1.0, 2.0, 3.0],
                # no band: every point is its own (not a bucket's mean), so the band's
                # edges would repeat the line; an empty column flattens to nulls
                "lo": [],
                "hi": [],
            }
        ]
    }
    assert rows(spec) == [
        {"metric": "metric", "x": x, "y": float(x), "lo": None, "hi": None} for x in (1, 2, 3)
    ]
    shapes.validate(spec)
    with pytest.raises(Exception):  # noqa: B017 - jsonschema's ValidationError
        shapes.validate(dict(spec, mark="lin"))


@pytest.mark.parametrize("name", sorted(shapes.SHAPES))
def test_stored_skeletons_match_altair(name):
    """The stored skeleton is exactly what Altair builds now (and it validates)."""
    stored = (SKELETONS / f"{name}.json").read_text(encoding="utf-8")
    assert stored == shapes.dumps(shapes.build(name)), (
        f"sitegen/present/skeletons/{name}.json is stale: run make skeletons"
    )


def test_no_stray_skeletons():
    assert {p.stem for p in SKELETONS.glob("*.json")} == set(shapes.SHAPES)


def test_filled_charts_validate_with_their_data():
    """Holes and data filled in, every kind of chart is valid Vega-Lite (titles of any type)."""
    s = {"step": [1, 2, 3], "m": [1.0, 2.0, 3.0]}
    made = [
        charts.progression(s, {"m": "m"}, rules=[{"x": 1.5, "label": "r"}]),
        charts.progression(s, {"m": "m"}, marks=[{"x": 2, "y": 1.0, "label": "d"}]),
        charts.lines(s, {"m": "m"}, y_title=None),
        charts.lines({"minute": [0.5], "m": [1.0]}, {"m": "m"}, x="minute", x_title="min"),
        charts.stacked_bars([{"x": 1, "part": "a", "value": 2.0}], "step", "s"),
        charts.bars([{"label": "a", "value": 1, "kind": "model"}], "e", "n", "kind", "kinds", True),
        charts.bars([{"label": "a", "value": 1}], "turns", "trials"),
        charts.overlay([]),
    ]
    for spec in made:
        assert spec is not None
        shapes.validate(spec)
    h = made[5]
    assert h["height"] == 120 and h["encoding"]["color"]["field"] == "kind"
    assert h["encoding"]["color"]["scale"]["range"] == list(charts.KIND_COLOURS.values())
    assert made[2]["layer"][1]["encoding"]["y"]["title"] is None
    assert made[3]["layer"][0]["encoding"]["x"]["axis"] == {}


def test_fill_leaves_the_stored_skeleton_alone():
    before = json.dumps(charts.skeleton("overlay"))
    spec = charts.overlay([{"step": 1, "value": 2.0, "name": "a"}])
    spec["encoding"]["color"]["scale"]["range"].append("#000")
    assert json.dumps(charts.skeleton("overlay")) == before


def test_a_build_needs_neither_altair_nor_jsonschema(tmp_path):
    """A whole build (every chart) runs with both made unimportable."""
    code = (
        "import sys; sys.modules['altair'] = None; sys.modules['jsonschema'] = None\n"
        "from pathlib import Path\n"
        "from sitegen.commands.build import build\n"
        "from sitegen.options import BuildOptions\n"
        "from sitegen.synth import synth\n"
        f"synth(Path({str(tmp_path / 'a')!r}), seed=2, steps=8, trials_per_step=2)\n"
        f"r = build(BuildOptions(archive=Path({str(tmp_path / 'a')!r}), out=Path({str(tmp_path / 's')!r}), workers=1))\n"
        "print(r.pages)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert int(out) > 10


def test_band_from_per_point_ranges():
    spec = charts.lines(
        {"minute": [0, 1, 2], "m": [5.0, 6.0, 7.0], "lo": [1.0, 2.0, 3.0], "hi": [9.0, 10.0, 11.0]},
        {"m": "metric"},
        x="minute",
        bands={"m": ("lo", "hi")},
    )
    assert [(r["lo"], r["y"], r["hi"]) for r in rows(spec)] == [
        (1.0, 5.0, 9.0),
        (2.0, 6.0, 10.0),
        (3.0, 7.0, 11.0),
    ]
    many = downsample(
        list(range(1000)), [1.0] * 1000, 10, los=[0.0] * 1000, his=[2.0] * 999 + [50.0]
    )
    assert many[-1]["hi"] == 50.0 and many[0]["lo"] == 0.0 and many[0]["y"] == 1.0


def test_values_that_look_like_holes_stay_as_they_are():
    """Only the stored skeleton's own strings are holes: a series named "${y_title}" is just
    a name, and a title may read like a hole."""
    spec = charts.stacked_bars([{"x": 1, "part": "${y_title}", "value": 2.0}], "${y}", "${x_title}")
    assert spec is not None
    enc = spec["encoding"]
    assert enc["x"]["title"] == "${y}" and enc["y"]["title"] == "${x_title}"
    assert rows(spec) == [{"part": "${y_title}", "x": 1, "value": 2.0}]


def test_a_logged_nan_breaks_the_line_and_a_missing_value_does_not():
    """A step that logged NaN or ±inf is a gap in the line (a null point: Vega-Lite breaks
    the path there and keeps the step on the axis), so the chart agrees with the finding
    naming that step; a step that did not log the metric is passed over."""
    nan, inf = float("nan"), float("inf")
    s = {"step": [1, 2, 3, 4, 5], "m": [1.0, nan, None, 4.0, inf]}
    (datum,) = charts.lines(s, {"m": "m"})["data"]["values"]
    assert datum["x"] == [1, 2, 4, 5] and datum["y"] == [1.0, None, 4.0, None]
    assert datum["lo"] == datum["hi"] == []
    (rec,) = charts.progression(s, {"m": "m"})["data"]["values"][0:1]
    assert rec["step"] == [1, 2, 4, 5] and rec["value"] == [1.0, None, 4.0, None]
    assert rec["smoothed"][1] is None and rec["smoothed"][3] is None
    assert rec["smoothed"][0] is not None and rec["smoothed"][2] is not None
    # bucket means (more steps than points) take the finite values only, as before
    steps = list(range(1, 1001))
    many = {"step": steps, "m": [nan if i % 10 == 0 else float(i) for i in steps]}
    (datum,) = charts.lines(many, {"m": "m"})["data"]["values"]
    assert None not in datum["y"] and len(datum["y"]) == 400


def test_a_chart_none_of_whose_series_varies_gets_a_domain_around_them():
    """A constant 0.25 would lie on the top border of Vega's zero-based [0, 0.25]: the
    domain is twice the values' spread around them (their size for one value), zero kept
    in; a chart where anything varies keeps Vega's own (no scale written)."""
    assert charts.flat_domain([[0.25, 0.25, None]]) == [0.0, 0.5]
    assert charts.flat_domain([[600.0] * 3, [300.0] * 3]) == [0.0, 750.0]
    assert charts.flat_domain([[-2.0, float("nan")]]) == [-4.0, 0.0]
    assert charts.flat_domain([[0.0, 0.0]]) == [-1.0, 1.0]
    assert charts.flat_domain([[1.0, 2.0], [3.0]]) is None and charts.flat_domain([[]]) is None
    flat = charts.progression({"step": [1, 2, 3], "r": [0.25] * 3}, {"r": "reward"})
    ys = [layer["encoding"]["y"] for layer in flat["layer"] if "y" in layer["encoding"]]
    assert ys and all(y["scale"] == {"domain": {"unionWith": [0.0, 0.5]}} for y in ys)
    shapes.validate(flat)
    moving = charts.lines({"step": [1, 2], "m": [1.0, 2.0]}, {"m": "m"})
    assert all("scale" not in layer["encoding"]["y"] for layer in moving["layer"])
    shapes.validate(moving)


def test_every_whole_number_axis_caps_its_ticks_at_its_span():
    """Each axis a skeleton formats as whole numbers (``d``: steps, counts) carries
    :func:`shapes.whole_axis`'s tick count, read from its own channel's scale and size: with
    ``tickMinStep`` alone Vega ticked 1.5 on a 3-step chart
    (tests/scenarios/test_browser_axes.py draws them)."""
    whole: list[tuple[str, str]] = []
    for name in shapes.SHAPES:
        for ch, axis in whole_axes(charts.skeleton(name)):
            assert axis == shapes.whole_axis(ch).to_dict(), (name, ch)
            whole.append((name, ch))
    assert shapes.whole_axis("y").to_dict()["tickCount"] == {
        "expr": "min(ceil(height/40),max(1,round(span(domain('y')))))"
    }
    # every step axis and the count axes of the bars and the error stack
    assert {n for n, _ in whole} >= {"progression", "lines_step", "overlay", "bars_h_kinds"}
    assert ("stacked_bars_steps_count", "y") in whole and ("bars_v_one", "y") in whole


def _x_encodings(spec: object) -> list[dict]:
    """Every ``x`` encoding of a spec, at any depth (each layer's)."""
    if isinstance(spec, list):
        return [x for v in spec for x in _x_encodings(v)]
    if not isinstance(spec, dict):
        return []
    found = [spec["encoding"]["x"]] if "x" in spec.get("encoding", {}) else []
    return found + [x for v in spec.values() for x in _x_encodings(v)]


def test_a_step_axis_spans_the_steps_drawn_and_no_more():
    """Vega's default "nice" domain rounded steps 1–16 out to 0–16 and a bar chart of steps
    1–8 (bars 0.55–8.45 wide) to 0–9: every x scale of a chart over steps, each layer's
    (a run's restart rules and discarded-step crosses too), is neither niced nor zero-based."""
    # the charts whose x axis ticks whole numbers, less the horizontal bars (x counts trials)
    stepped = {
        n
        for n in shapes.SHAPES
        if not n.startswith("bars_h") and any(ch == "x" for ch, _ in whole_axes(charts.skeleton(n)))
    }
    assert stepped >= {
        "progression_rules_marks",
        "lines_step",
        "stacked_bars_steps_count",
        "overlay",
    }
    for name in stepped:
        for x in _x_encodings(charts.skeleton(name)):
            assert x["scale"] == {"nice": False, "zero": False}, (name, x)
    # an axis that is not of steps (minutes since the start) keeps Vega's round ends
    assert all("scale" not in x for x in _x_encodings(charts.skeleton("lines")))
