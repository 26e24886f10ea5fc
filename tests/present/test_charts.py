import pytest

from sitegen.present import charts


def test_downsample_keeps_spikes_in_the_band():
    ys = [0.0] * 1000
    ys[500] = 9.0
    pts = charts.downsample(list(range(1000)), ys, max_points=50)
    assert len(pts) == 50
    assert max(p["hi"] for p in pts) == 9.0 and max(p["y"] for p in pts) < 9.0
    short = charts.downsample([1, 2, 3], [1.0, None, float("nan")])
    assert short == [{"x": 1, "y": 1.0, "lo": 1.0, "hi": 1.0}]


def test_specs_are_validated_and_data_inlined():
    spec = charts.lines({"step": [1, 2, 3], "m": [1.0, 2.0, 3.0]}, {"m": "metric"})
    assert spec["$schema"].endswith("v6.json")
    assert any("values" in layer.get("data", {}) for layer in [spec, *spec.get("layer", [])])
    bad = dict(spec, mark="lin")
    with pytest.raises(Exception):  # noqa: B017 - jsonschema's ValidationError
        charts.validate(bad)


def test_smoothing_window():
    assert charts.smooth([1, 2, 3, 4, 5], window=3) == [1.5, 2.0, 3.0, 4.0, 4.5]


def test_band_from_per_point_ranges():
    spec = charts.lines(
        {"minute": [0, 1, 2], "m": [5.0, 6.0, 7.0], "lo": [1.0, 2.0, 3.0], "hi": [9.0, 10.0, 11.0]},
        {"m": "metric"},
        x="minute",
        bands={"m": ("lo", "hi")},
    )
    values = (
        spec["layer"][0]["data"]["values"] if "data" in spec["layer"][0] else spec["data"]["values"]
    )
    assert [(r["lo"], r["y"], r["hi"]) for r in values] == [
        (1.0, 5.0, 9.0),
        (2.0, 6.0, 10.0),
        (3.0, 7.0, 11.0),
    ]
    many = charts.downsample(
        list(range(1000)), [1.0] * 1000, 10, los=[0.0] * 1000, his=[2.0] * 999 + [50.0]
    )
    assert many[-1]["hi"] == 50.0 and many[0]["lo"] == 0.0 and many[0]["y"] == 1.0
