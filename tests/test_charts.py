import pytest

from sitegen import charts


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
