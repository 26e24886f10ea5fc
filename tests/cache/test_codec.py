"""The parsed model as plain JSON: round trip equal, strict JSON, malformed input refused."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections import Counter, deque
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path

import pytest

from sitegen.cache.codec import parsed_from_json, parsed_to_json
from sitegen.read.logfile import parse_log
from sitegen.redact import Redactor
from sitegen.synth import synth


@pytest.fixture(scope="module")
def parsed(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("synth-codec")
    synth(root, seed=2, steps=6)
    return [parse_log(p, p.name, Redactor())[0] for p in sorted(root.rglob("*.out"))]


def _through_text(d: dict) -> dict:
    return json.loads(json.dumps(d, allow_nan=False))


def test_round_trip_equal(parsed):
    assert any(p.blocks for p in parsed) and any(p.vllm.engines for p in parsed)
    for log in parsed:
        back = parsed_from_json(_through_text(parsed_to_json(log)))
        assert parsed_to_json(back) == parsed_to_json(log)
        # NaN != NaN, so compare directly only where every value is finite
        if all(math.isfinite(v) for b in log.blocks for v in b.metrics.values()):
            assert back == log


def test_odd_values_come_back_equal_and_typed(parsed):
    log = replace(
        parsed[0],
        config={"a": {1: "int key", "$x": [1.5, math.inf]}, "d": date(2026, 1, 2), "t": (1, 2)},
        first_time=datetime(2026, 1, 2, 3, 4, 5, 678901),
        mtime=-math.inf,
    )
    back = parsed_from_json(_through_text(parsed_to_json(log)))
    assert back.config == log.config and isinstance(back.config["t"], tuple)
    assert back.first_time == log.first_time and back.mtime == -math.inf
    steps = [b.step for b in back.blocks]
    assert all(isinstance(s, int) for s in steps)
    assert all(isinstance(k, int) for k in back.batches_per_step)
    assert isinstance(back.blocks, tuple) and isinstance(back.warnings, tuple)


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d.update(format=0),
        lambda d: d.pop("path"),
        lambda d: d.update(lines=1.5),
        lambda d: d.update(blocks={}),
        lambda d: d.update(batches_per_step={"one": d["batches"]}),
        lambda d: d.update(config={"$f": "lots"}),
        lambda d: d.update(metric_form=None),
        lambda d: d["batches"].update(batches="3"),
    ],
)
def test_malformed_parsed_log_is_refused(parsed, damage):
    d = _through_text(parsed_to_json(parsed[0]))
    damage(d)
    with pytest.raises(ValueError):
        parsed_from_json(d)


# -- the compiled encoder writes what the type-walking reference writes -----------------------


def _both(value, tp):
    """(compiled, reference) encodings, or the exception type each raised."""
    from sitegen.cache.codec import _to_json_walk, to_json

    out = []
    for enc in (to_json, _to_json_walk):
        try:
            out.append(json.dumps(enc(value, tp), allow_nan=False))
        except (TypeError, ValueError) as exc:
            out.append(type(exc).__name__)
    return out


def test_compiled_encoder_equals_the_reference_on_parsed_logs_and_parser_states(parsed):
    from sitegen.model.parsed import ParsedLog
    from sitegen.read.logparse import LogParser
    from sitegen.read.logstate import ParserState

    for log in parsed:
        compiled, ref = _both(log, ParsedLog)
        assert compiled == ref and compiled.startswith("{")
    root = Path(__file__).parents[2] / "sample" / "archive"
    logs = sorted(root.rglob("*.out"))[:4]
    assert logs
    for p in logs:
        state = parse_log(p, p.name, Redactor())[1].parser
        compiled, ref = _both(state, ParserState)
        assert compiled == ref and compiled.startswith("{")
    state = LogParser("x", Redactor())
    state.console = {1: {"a": 1.0, "b": math.nan, "c": 3}, 2: {}}
    state.warn_counts.update(["x", "x", "y"])
    state.batch_modes.extend(["a", "b"])
    state.block_times = {3: datetime(2026, 1, 1, 2, 3, 4)}
    compiled, ref = _both(state, ParserState)
    assert compiled == ref and '"NaN"' in compiled


class _F(float):
    pass


class _I(int):
    pass


class _S(str):
    pass


@pytest.mark.parametrize(
    ("value", "tp"),
    [
        (1.5, float),
        (3, float),  # an int in a float field stays an int
        (True, float),
        (math.inf, float),
        (-math.inf, float),
        (math.nan, float),
        (_F(2.5), float),  # a float subclass (numpy's float64 is one) becomes a float
        (_F(math.inf), float),
        (None, float | None),
        (math.nan, float | None),
        (7, int | None),
        ({1: {"a": math.inf}, _I(2): {}}, dict[int, dict[str, float]]),
        ({_S("k"): 1.0, "j": 2}, dict[str, float]),
        ({True: 1}, dict[int, int]),  # a bool is no integer key
        ({1: 1}, dict[str, int]),
        ({"a": 1}, dict[int, int]),
        (Counter({"a": 2, "b": 1}), Counter[str]),
        (deque(["a", "b"]), deque[str]),
        ((1.0, math.nan), tuple[float, ...]),
        ([None, 1.5], list[float | None]),
        (b"\x00\xff", bytes),
        (datetime(2026, 1, 2, 3, 4, 5, 6), datetime),
        ({"a": (1, 2), 3: "x", "t": datetime(2026, 1, 1)}, dict),
        ([1, "a", None], tuple[str, ...]),  # the first argument types every item, as before
        (object(), dict),
    ],
)
def test_compiled_encoder_equals_the_reference_on_odd_values(value, tp):
    compiled, ref = _both(value, tp)
    assert compiled == ref


@pytest.mark.parametrize(
    ("damage", "where"),
    [
        (
            lambda d: d["blocks"][0]["metrics"].update(x="str"),
            "$.blocks[0].metrics.x: expected a number",
        ),
        (
            lambda d: d["blocks"][0]["metrics"].update(x=True),
            "$.blocks[0].metrics.x: expected a number",
        ),
        (lambda d: d["blocks"][0].update(step="3"), "$.blocks[0].step: expected an integer"),
        (
            lambda d: d["batches_per_step"].update({"01": d["batches"]}),
            "$.batches_per_step.01: bad key",
        ),
        (
            lambda d: d["batches"]["exceptions"].update(E=1.5),
            "$.batches.exceptions.E: expected an integer",
        ),
    ],
)
def test_a_damaged_value_is_refused_with_where_it_is(parsed, damage, where):
    """The decoder says where a value broke."""
    from sitegen.cache.codec import from_json
    from sitegen.model.parsed import ParsedLog

    log = next(p for p in parsed if p.blocks)
    d = _through_text(parsed_to_json(log))
    damage(d)
    with pytest.raises(ValueError, match=f"^{re.escape(where)}"):
        from_json(d, ParsedLog)


def test_special_numbers_come_back_in_metric_dicts(parsed):
    from sitegen.cache.codec import from_json
    from sitegen.model.parsed import ParsedLog

    log = next(p for p in parsed if p.blocks)
    d = _through_text(parsed_to_json(log))
    d["blocks"][0]["metrics"].update(a="Infinity", b="NaN", c=3)
    m = from_json(d, ParsedLog).blocks[0].metrics
    assert m["a"] == math.inf and math.isnan(m["b"]) and m["c"] == 3 and type(m["c"]) is int


# -- the compiled encoder against the reference, types included ---------------------------------


def _typed(v):
    """JSON-ready data with each leaf's type: -0.0 is not 0.0, 3 not 3.0, a subclass not a float."""
    if isinstance(v, dict):
        return {k: _typed(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_typed(x) for x in v]
    return (type(v).__name__, repr(v))


def _typed_both(value, tp):
    from sitegen.cache.codec import _to_json_walk, to_json

    out = []
    for enc in (to_json, _to_json_walk):
        try:
            out.append(_typed(enc(value, tp)))
        except (TypeError, ValueError, OverflowError) as exc:
            out.append(type(exc).__name__)
    return out


def _bucket(**kw):
    from sitegen.model.parsed import VllmTimeBucket

    base = dict(
        t_s=0.0,
        samples=3,
        gen_tps_mean=640.5,
        gen_tps_min=458.6,
        gen_tps_max=981.8,
        running_mean=11.3,
        waiting_mean=15.3,
        kv_pct_mean=41.2,
        prefix_pct_mean=91.9,
    )
    return VllmTimeBucket(**{**base, **kw})


ODD_NUMBERS = [
    math.nan,
    math.inf,
    -math.inf,
    -0.0,
    3,  # an int where a float goes stays an int
    True,
    2**70,
    10**400,  # beyond a float: as it is (an int)
    _F(2.5),  # a float subclass becomes a float
    _F(math.nan),
    1e308,  # finite, with a sum that is not
    None,
]


@pytest.mark.parametrize("odd", ODD_NUMBERS, ids=repr)
def test_compiled_encoder_equals_the_reference_on_odd_numbers(odd):
    from sitegen.model.parsed import BatchCounts, MetricBlock, VllmTimeBucket

    buckets = tuple(_bucket(t_s=float(i)) for i in range(3))
    odd_one = (buckets[0], _bucket(gen_tps_max=odd, prefix_pct_mean=odd), buckets[2])
    blocks = tuple(
        MetricBlock(step=i, metrics={"a": 1.0, "b": 2, "c": odd if i == 1 else 0.5}, line=i)
        for i in range(3)
    )
    cases = [
        (buckets, tuple[VllmTimeBucket, ...]),
        (odd_one, tuple[VllmTimeBucket, ...]),
        (list(odd_one), list[VllmTimeBucket]),
        (blocks, tuple[MetricBlock, ...]),
        ({1: BatchCounts(1, 2, exceptions={"E": 1}), 2: BatchCounts()}, dict[int, BatchCounts]),
        ({"x": odd_one[1]}, dict[str, VllmTimeBucket]),
        ({"a": 1.0, "b": odd, "c": -0.0}, dict[str, float]),
        ((1.0, odd, 2), tuple[float, ...]),
        (deque([odd, 1.5]), deque[float]),
    ]
    for value, tp in cases:
        compiled, ref = _typed_both(value, tp)
        assert compiled == ref, (value, tp)


LOOSE = [
    None,
    True,
    0,
    -7,
    1.5,
    "x",
    math.nan,  # never in JSON text: refused as before
    math.inf,
    {"$f": "NaN"},
    {"$f": "Infinity"},
    {"$f": "bad"},
    {"$dt": "2026-01-02T03:04:05"},
    {"$tuple": [1, {"$f": "-Infinity"}]},
    [1, 2.5, None, {"a": [math.inf]}],
    {"a": 1, "b": [None, "c"]},
    object(),
]


@pytest.mark.parametrize("data", LOOSE, ids=range(len(LOOSE)))
@pytest.mark.parametrize("tp", ["Any", "int | float", "int | float | None", "dict"])
def test_loosely_typed_values_decode_as_the_tagged_reader_reads_them(data, tp):
    """A loosely typed value (a union of several types, Any, a bare dict) is the tagged
    form's: JSON scalars come back as they are without a call, everything else through
    ``_any_in``, which returns or refuses it as before (the same value, the same message)."""
    from typing import Any  # noqa: F401 - named by the tp strings

    from sitegen.cache.codec import _any_in, from_json

    typ = eval(tp)
    try:
        want = ("ok", _any_in(data, ""))
    except ValueError as exc:
        want = ("bad", f"$: {str(exc).lstrip(': ')}")
    try:
        got = ("ok", from_json(data, typ))
    except ValueError as exc:
        got = ("bad", str(exc))
    assert repr(got) == repr(want)
    if want[0] == "ok" and type(data) in (str, int, bool, float, type(None)):
        assert got[1] is data


def _instances(obj: object, out: list) -> list:
    """``obj`` and every dataclass instance inside it (fields, sequences, dict values)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out.append(obj)
        for f in dataclasses.fields(obj):
            _instances(getattr(obj, f.name), out)
    elif isinstance(obj, list | tuple | deque):
        for v in obj:
            _instances(v, out)
    elif isinstance(obj, dict):
        for v in obj.values():
            _instances(v, out)
    return out


def test_decoded_instances_are_as_their_init_makes_them(parsed):
    """A decoded dataclass is what its ``__init__`` makes: the same fields in the same
    order, the same repr and hash, frozen."""
    for log in parsed:
        back = parsed_from_json(_through_text(parsed_to_json(log)))
        mine, theirs = _instances(back, []), _instances(log, [])
        assert len(mine) == len(theirs) > 1
        for a, b in zip(mine, theirs, strict=True):
            assert type(a) is type(b)
            assert list(vars(a)) == list(vars(b)) == [f.name for f in dataclasses.fields(a)]
            assert repr(a) == repr(b)
            if type(a).__hash__ is not None and not any(
                isinstance(v, dict | list) for v in vars(a).values()
            ):
                assert hash(a) == hash(b)
            with pytest.raises(dataclasses.FrozenInstanceError):
                a.__setattr__(next(iter(vars(a))), None)


@dataclasses.dataclass(frozen=True)
class _Checked:
    n: int

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError("n below 0")


@dataclasses.dataclass(frozen=True)
class _Derived:
    n: int
    twice: int = dataclasses.field(init=False, default=0)


@dataclasses.dataclass(frozen=True, slots=True)
class _Slotted:
    n: int


def test_a_class_whose_init_does_more_is_made_through_it():
    from sitegen.cache.codec import from_json

    assert from_json({"n": 1}, _Checked) == _Checked(1)
    with pytest.raises(ValueError, match="n below 0"):  # its __post_init__ ran
        from_json({"n": -1}, _Checked)
    with pytest.raises(ValueError, match="twice"):  # not an argument of its __init__
        from_json({"n": 1, "twice": 2}, _Derived)
    assert from_json({"n": 3}, _Slotted) == _Slotted(3)
