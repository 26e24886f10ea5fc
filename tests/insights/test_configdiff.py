from sitegen.insights.configdiff import diff, flatten, varying


def test_flatten_dotted_keys_and_values():
    f = flatten({"a": {"b": 1, "c": [1, 2], "d": {}}, "e": "x" * 300, "f": None})
    assert f["a.b"] == "1" and f["a.c"] == "[1, 2]" and f["a.d"] == "{}" and f["f"] == "null"
    assert len(f["e"]) == 200 and f["e"].endswith("…")


def test_diff_shows_only_differing_keys_and_missing_ones():
    a = {"trainer": {"lr": 1e-6, "epochs": 2}, "gen": {"n": 8}}
    b = {"trainer": {"lr": 2e-6, "epochs": 2}}
    rows = dict(diff({"a": a, "b": b}))
    assert rows == {"gen.n": {"a": "8", "b": None}, "trainer.lr": {"a": "1e-06", "b": "2e-06"}}


def test_varying_keeps_keys_that_differ_anywhere():
    cfgs = {
        "r1": {"x": 1, "y": 1, "z": 1},
        "r2": {"x": 1, "y": 2},
        "r3": {"x": 1, "y": 1, "z": 1},
        "r4": None,
    }
    v = varying(cfgs)
    assert v == {"r1": {"y": "1", "z": "1"}, "r2": {"y": "2"}, "r3": {"y": "1", "z": "1"}}
