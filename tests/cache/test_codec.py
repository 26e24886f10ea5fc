"""Typed values as msgpack: round trip equal and typed, damaged input refused."""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter, deque
from datetime import date, datetime
from pathlib import Path

import msgspec
import pytest
from msgspec.structs import replace

from sitegen.cache.codec import decode, encode, shape
from sitegen.cache.logs import log_entries
from sitegen.model.parsed import BatchCounts, MetricBlock, ParsedLog
from sitegen.read.logfile import LogState, parse_log
from sitegen.read.logstate import ParserState
from sitegen.redact import Redactor
from sitegen.synth import synth


@pytest.fixture(scope="module")
def parsed(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("synth-codec")
    synth(root, seed=2, steps=6)
    return [parse_log(p, p.name, Redactor())[0] for p in sorted(root.rglob("*.out"))]


def _typed(v):
    """Builtins with each leaf's type: -0.0 is not 0.0, 3 not 3.0, NaN equals NaN."""
    if _is_record(v):
        return (type(v).__name__, [(name, _typed(getattr(v, name))) for name in _names(v)])
    if isinstance(v, dict):
        return (type(v).__name__, [(_typed(k), _typed(x)) for k, x in v.items()])
    if isinstance(v, list | tuple | deque | set):
        return (type(v).__name__, [_typed(x) for x in v])
    return (type(v).__name__, repr(v))


def test_round_trip_equal_and_typed(parsed):
    assert any(p.blocks for p in parsed) and any(p.vllm.engines for p in parsed)
    for log in parsed:
        back = decode(encode(log, ParsedLog), ParsedLog)
        assert _typed(back) == _typed(log)
        if all(math.isfinite(v) for b in log.blocks for v in b.metrics.values()):
            assert back == log  # (NaN != NaN: compared above where there is one)


def test_odd_values_come_back_equal_and_typed(parsed):
    config = {
        "a": {1: "int key", "$x": [1.5, math.inf, -0.0]},
        "d": date(2026, 1, 2),
        "dt": datetime(2026, 1, 2, 3, 4),
        "t": (1, (2, "x")),
        "s": {1, 2},
        "$dt": "not a tag: one key among others",
        "b": b"\x00\xff",
    }
    metrics = {"int": 3, "nan": math.nan, "inf": -math.inf, "zero": -0.0, "big": 2**63 - 1}
    log = replace(
        parsed[0],
        blocks=(MetricBlock(3, metrics, 7, datetime(2026, 1, 2, 3, 4, 5, 678901)),),
        config=config,
        first_time=datetime(2026, 1, 2, 3, 4, 5, 678901),
        mtime=-math.inf,
    )
    back = decode(encode(log, ParsedLog), ParsedLog)
    assert _typed(back) == _typed(log)
    assert back.config == config and back.mtime == -math.inf
    assert isinstance(back.blocks, tuple) and isinstance(back.warnings, tuple)


def test_a_parser_state_comes_back_equal_and_typed():
    root = Path(__file__).parents[2] / "sample" / "archive"
    logs = sorted(root.rglob("*.out"))[:4]
    assert logs
    for p in logs:
        state = parse_log(p, p.name, Redactor())[1].parser
        back = decode(encode(state, ParserState), ParserState)
        assert _typed(back) == _typed(state) and type(back) is ParserState
    state = ParserState(console={1: {"a": 1.0, "b": math.nan, "c": 3}, 2: {}})
    state.warn_counts.update(["x", "x", "y"])
    state.batch_modes.extend(["a", "b"])
    state.block_times = {3: datetime(2026, 1, 1, 2, 3, 4)}
    state.config = {"when": date(2026, 1, 1), (1, 2): None}
    back = decode(encode(state, ParserState), ParserState)
    assert _typed(back) == _typed(state)
    assert type(back.warn_counts) is Counter and type(back.batch_modes) is deque


def _damaged(log: ParsedLog, damage) -> bytes:
    d = msgspec.msgpack.decode(encode(log, ParsedLog))
    damage(d)
    return msgspec.msgpack.encode(d)


@pytest.mark.parametrize(
    ("damage", "where"),
    [
        (lambda d: d.pop("path"), "missing required field `path`"),
        (lambda d: d.update(lines=1.5), "`int`, got `float` - at `$.lines`"),
        (lambda d: d.update(blocks={}), "`array`, got `object` - at `$.blocks`"),
        (lambda d: d.update(metric_form=None), "`str`, got `None` - at `$.metric_form`"),
        (lambda d: d["batches"].update(batches="3"), "got `str` - at `$.batches.batches`"),
        (
            lambda d: d["batches_per_step"].update(one=d["batches"]),
            "`int`, got `str` - at `key` in `$.batches_per_step`",
        ),
        (
            lambda d: d["blocks"][0]["metrics"].update(x="str"),
            "got `str` - at `$.blocks[0].metrics[...]`",
        ),
        (
            lambda d: d["blocks"][0]["metrics"].update(x=True),
            "got `bool` - at `$.blocks[0].metrics[...]`",
        ),
        (lambda d: d["blocks"][0].update(step="3"), "got `str` - at `$.blocks[0].step`"),
        (
            lambda d: d["batches"]["exceptions"].update(E=1.5),
            "got `float` - at `$.batches.exceptions[...]`",
        ),
        (lambda d: d.update(config={"$date": 5}), "bad $date value"),
        (lambda d: d.update(config={"$map": [[[1], 2]]}), "bad $map value"),
        (lambda d: d.update(config={"$tuple": 5}), "bad $tuple value"),
        (lambda d: d.update(config={1: 2}), "not a string outside $map"),
    ],
)
def test_a_damaged_value_is_refused_with_where_it_is(parsed, damage, where):
    log = next(p for p in parsed if p.blocks)
    with pytest.raises(ValueError, match=re.escape(where)):
        decode(_damaged(log, damage), ParsedLog)


@pytest.mark.parametrize(
    "data",
    [b"", b"\xc1", msgspec.msgpack.encode([1, 2]), msgspec.msgpack.encode({"path": 1}), b"{}"],
)
def test_what_is_no_parsed_log_is_refused(data):
    with pytest.raises(ValueError):
        decode(data, ParsedLog)


def test_counted_and_queued_items_are_checked():
    good = msgspec.msgpack.decode(encode(ParserState(), ParserState))
    for field, bad in (("warn_counts", {"x": "1"}), ("batch_modes", [1])):
        with pytest.raises(ValueError):
            decode(msgspec.msgpack.encode({**good, field: bad}), ParserState)


@pytest.mark.parametrize(
    "odd",
    [{"config": {"huge": 2**70}}, {"path": "caf\udce9.out"}, {"end_detail": "cut \ud800"}],
)
def test_what_msgpack_cannot_hold_is_refused_and_not_kept(parsed, odd):
    """An integer beyond 64 bits, text with a lone surrogate (a name that was not UTF-8):
    the log's entries are not kept (it is read again), the build goes on."""
    log = replace(parsed[0], **odd)
    with pytest.raises(ValueError, match="cannot encode"):
        encode(log, ParsedLog)
    assert log_entries(log.path, (("x", 1, 2),), log, LogState(0, b"", ParserState())) == []
    assert (
        log_entries("caf\udce9", (("x", 1, 2),), parsed[0], LogState(0, b"", ParserState())) == []
    )


def _is_record(v: object) -> bool:
    """A Struct (the model) or a dataclass (the parser's state) instance."""
    return isinstance(v, msgspec.Struct) or (
        dataclasses.is_dataclass(v) and not isinstance(v, type)
    )


def _names(v: object) -> list[str]:
    if isinstance(v, msgspec.Struct):
        return list(v.__struct_fields__)
    return [f.name for f in dataclasses.fields(v)]  # type: ignore[arg-type]


def test_decoded_instances_are_as_their_init_makes_them(parsed):
    """A decoded Struct is what its ``__init__`` makes: the same fields in the same
    order, the same repr and hash, frozen."""
    for log in parsed:
        back = decode(encode(log, ParsedLog), ParsedLog)
        mine, theirs = _instances(back, []), _instances(log, [])
        assert len(mine) == len(theirs) > 1
        for a, b in zip(mine, theirs, strict=True):
            assert type(a) is type(b)
            assert _typed(a) == _typed(b)  # the same fields in the same order, typed alike
            assert repr(a) == repr(b)
            if type(a).__hash__ is not None and not any(
                isinstance(v, dict | list) for v in msgspec.structs.astuple(a)
            ):
                assert hash(a) == hash(b)
            with pytest.raises(AttributeError, match="immutable"):
                setattr(a, a.__struct_fields__[0], None)


def _instances(obj: object, out: list) -> list:
    """``obj`` and every Struct instance inside it (fields, sequences, dict values)."""
    if isinstance(obj, msgspec.Struct):
        out.append(obj)
        for name in obj.__struct_fields__:
            _instances(getattr(obj, name), out)
    elif isinstance(obj, list | tuple | deque):
        for v in obj:
            _instances(v, out)
    elif isinstance(obj, dict):
        for v in obj.values():
            _instances(v, out)
    return out


def _model(**fields: type) -> type:
    return msgspec.defstruct("Model", list(fields.items()), frozen=True)


def test_the_shape_follows_every_field_and_type():
    first = shape(_model(n=int, counts=BatchCounts))
    assert len(first) == 16 and shape(_model(n=int, counts=BatchCounts)) == first
    assert shape(_model(n=float, counts=BatchCounts)) != first  # a field retyped
    assert shape(_model(m=int, counts=BatchCounts)) != first  # renamed
    assert shape(_model(n=int, counts=BatchCounts, x=int)) != first  # added
    assert shape(_model(n=int, counts=MetricBlock)) != first  # a class inside changed
    assert shape(dict[int, BatchCounts]) != shape(dict[str, BatchCounts])
