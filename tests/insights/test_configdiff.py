from sitegen.insights.configdiff import diff, flatten, varying


def test_flatten_dotted_keys_and_values():
    f = flatten({"a": {"b": 1, "c": [1, 2], "d": {}}, "e": "x" * 300, "f": None})
    assert f["a.b"] == "1" and f["a.c"] == "[1, 2]" and f["a.d"] == "{}" and f["f"] == "null"
    assert len(f["e"]) == 200 and f["e"].startswith("x" * 191) and f["e"][191:194] == "… #"


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


def test_long_values_that_differ_past_the_cut_still_differ():
    # two prompt templates alike for their first 300 characters: the cut text (200
    # characters) is the same, but the values are not; the diff keeps the key, and each
    # shows a value of its own, of at most 200 characters; equal values show alike
    same = "You are a helpful agent. " * 12
    a, b = same + "Use bash.", same + "Use python."
    v = varying({"r1": {"t": a}, "r2": {"t": b}, "r3": {"t": a}})
    assert set(v["r1"]) == {"t"} and v["r1"]["t"] != v["r2"]["t"] and v["r1"] == v["r3"]
    assert all(len(x["t"]) == 200 and x["t"].startswith(same[:150]) for x in v.values())
    assert [k for k, _ in diff({"r1": {"t": a}, "r2": {"t": b}})] == ["t"]
    assert diff({"r1": {"t": a}, "r3": {"t": a}}) == []


def test_a_string_that_reads_as_another_value_differs_from_that_value():
    # YAML's '5' and 5, 'true' and true, 'null' and null: one key, two values
    a = {"n": "5", "flag": "true", "none": "null", "lst": "[1, 2]", "name": "Qwen3-8B"}
    b = {"n": 5, "flag": True, "none": None, "lst": [1, 2], "name": "Qwen3-8B"}
    rows = dict(diff({"a": a, "b": b}))
    assert rows == {
        "flag": {"a": '"true"', "b": "true"},
        "lst": {"a": '"[1, 2]"', "b": "[1, 2]"},
        "n": {"a": '"5"', "b": "5"},
        "none": {"a": '"null"', "b": "null"},
    }
    # a string that reads as nothing else shows as written, its quotes and all
    assert flatten({"s": 'He said "hi"', "t": "1e-6x", "u": ""}) == {
        "s": 'He said "hi"',
        "t": "1e-6x",
        "u": "",
    }
