"""Typed values as msgpack: parsed logs, the parser's state, trials outcomes and sets, run records.

The cache must be data, never code (a planted pickle would run), and a damaged file refused,
not half-read: msgspec reads each value back checked against its declared type (ValueError
when it does not fit); the checksum beside the body (:func:`~sitegen.cache.files.packed_entry`)
tells damage msgspec lets pass. :func:`shape` keeps what was written for another shape of the
model from being read as this one. Loosely typed values (the config dump) go through a small
tagged form, so YAML's dates, tuples, sets and non-string keys come back equal.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import typing
from collections import Counter, deque
from datetime import date, datetime
from functools import cache
from typing import Any

import msgspec

from sitegen.cache.files import Fingerprint, Known
from sitegen.errors import BuildWarning
from sitegen.model.parsed import ParsedLog, TrialResult, TrialSet

_TAGS = ("$dt", "$date", "$set", "$tuple", "$map")


def shape(tp: Any) -> str:
    """A short hash of a type's classes' names, field names and declared types, all the way
    down, so the model may change without a format number to bump."""
    return hashlib.sha1(_described(tp).encode()).hexdigest()[:16]


@cache
def _described(tp: Any) -> str:
    if _is_record(tp):
        fields = ",".join(f"{n}:{_described(ftp)}" for n, ftp in _fields(tp))
        return f"{typing.cast(type, tp).__qualname__}({fields})"
    origin = typing.get_origin(tp)
    if origin is not None:
        return f"{_described(origin)}[{','.join(map(_described, typing.get_args(tp)))}]"
    return getattr(tp, "__qualname__", repr(tp))


def _is_record(tp: Any) -> bool:
    """Is ``tp`` a class of fields: a Struct (the model) or a dataclass (the parser's state)?"""
    return isinstance(tp, type) and (issubclass(tp, msgspec.Struct) or dataclasses.is_dataclass(tp))


@cache
def _fields(cls: type) -> list[tuple[str, Any]]:
    """The field names of a Struct or dataclass, in order, with their declared types."""
    hints = typing.get_type_hints(cls)
    if issubclass(cls, msgspec.Struct):
        names: tuple[str, ...] = cls.__struct_fields__
    else:
        names = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
    return [(name, hints[name]) for name in names]


def encode(value: Any, tp: Any) -> bytes:
    """``value`` of declared type ``tp`` as msgpack; ValueError for what msgpack cannot
    hold (an integer beyond 64 bits, text with a lone surrogate: a name that was not UTF-8)."""
    try:
        return _ENCODER.encode(_loose_mapped(value, tp, _any_out))
    except (OverflowError, TypeError, UnicodeEncodeError) as exc:
        raise ValueError(f"cannot encode: {exc}") from None


def decode(data: bytes | msgspec.Raw, tp: Any) -> Any:
    """The value of type ``tp`` that :func:`encode` wrote, every part checked; ValueError
    (msgspec's ValidationError and DecodeError are ones) if ``data`` is not one."""
    try:
        return _loose_mapped(_decoder(tp).decode(data), tp, _any_in)
    except RecursionError:  # (a loosely typed value nested past the interpreter's limit)
        raise ValueError("nested too deeply") from None


def _enc_hook(value: Any) -> Any:
    if isinstance(value, deque):
        return list(value)
    raise TypeError(f"no msgpack encoding for a {type(value).__name__}")


def _dec_hook(tp: Any, data: Any) -> Any:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is deque:
        return deque(msgspec.convert(data, list[args[0]]))  # type: ignore[valid-type]
    if origin is Counter:
        return Counter(msgspec.convert(data, dict[args[0], int]))  # type: ignore[valid-type]
    raise TypeError(f"no msgpack decoding for {tp!r}")


_ENCODER = msgspec.msgpack.Encoder(enc_hook=_enc_hook)


@cache
def _decoder(tp: Any) -> msgspec.msgpack.Decoder:
    return msgspec.msgpack.Decoder(tp, dec_hook=_dec_hook)


def log_body_bytes(fingerprint: Fingerprint, parsed: ParsedLog) -> bytes:
    """A log's parse (or its summary) and the fingerprint it was made from, as msgpack."""
    return encode((fingerprint, msgspec.Raw(encode(parsed, ParsedLog))), Any)


def log_body(data: bytes) -> tuple[Fingerprint, msgspec.Raw]:
    """The fingerprint :func:`log_body_bytes` wrote, and the parse still encoded."""
    return decode(data, tuple[Fingerprint, msgspec.Raw])


def _is_loose(tp: Any) -> bool:
    if tp is Any or tp is object or tp is dict:
        return True
    return typing.get_origin(tp) is dict and typing.get_args(tp)[1] is Any


def _optional(tp: Any) -> Any:
    """``X`` of ``X | None``; ``tp`` itself otherwise."""
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    return args[0] if type(None) in typing.get_args(tp) and len(args) == 1 else tp


@cache
def _loose_fields(tp: Any) -> tuple[tuple[str, Any], ...]:
    """A record's fields holding loosely typed values (with None) or records that hold some,
    alone or in a tuple or list (with that record's class)."""
    if not _is_record(tp):
        return ()
    out: list[tuple[str, Any]] = []
    for name, ftp in _fields(tp):
        inner = _optional(ftp)
        if _is_loose(inner):
            out.append((name, None))
            continue
        if typing.get_origin(inner) in (tuple, list):
            inner = typing.get_args(inner)[0]
        if _loose_fields(inner):
            out.append((name, inner))
    return tuple(out)


def _loose_mapped(value: Any, tp: Any, convert: typing.Callable[[Any], Any]) -> Any:
    """``value`` with ``convert`` applied to each loosely typed part (a copy where one is)."""
    fields = _loose_fields(tp)
    if value is None or not fields:
        return value
    new = copy.copy(value)
    put = msgspec.structs.force_setattr if isinstance(new, msgspec.Struct) else object.__setattr__
    for name, inner in fields:
        v = getattr(value, name)
        if v is None:
            continue
        if inner is None:
            v = convert(v)
        elif isinstance(v, tuple | list):
            v = type(v)(_loose_mapped(x, inner, convert) for x in v)
        else:
            v = _loose_mapped(v, inner, convert)
        put(new, name, v)
    return new


def _any_out(v: Any) -> Any:
    if v is None or isinstance(v, bool | int | float | str | bytes):
        return v
    if isinstance(v, datetime):
        return {"$dt": v.isoformat()}
    if isinstance(v, date):
        return {"$date": v.isoformat()}
    if isinstance(v, list):
        return [_any_out(x) for x in v]
    if isinstance(v, tuple):
        return {"$tuple": [_any_out(x) for x in v]}
    if isinstance(v, set | frozenset):
        return {"$set": [_any_out(x) for x in v]}
    if isinstance(v, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in v):
            return {k: _any_out(x) for k, x in v.items()}
        return {"$map": [[_any_out(k), _any_out(x)] for k, x in v.items()]}
    if isinstance(v, BuildWarning):
        return _any_out(v.to_json())
    raise TypeError(f"no msgpack encoding for a {type(v).__name__}")


def _any_in(d: Any) -> Any:
    if d is None or isinstance(d, bool | int | float | str | bytes):
        return d
    if isinstance(d, list):
        return [_any_in(x) for x in d]
    if not isinstance(d, dict):
        raise ValueError(f"unexpected {type(d).__name__} in a loosely typed value")
    if len(d) == 1 and next(iter(d)) in _TAGS:
        ((tag, body),) = d.items()
        try:
            if tag == "$dt" and isinstance(body, str):
                return datetime.fromisoformat(body)
            if tag == "$date" and isinstance(body, str):
                return date.fromisoformat(body)
            if tag == "$tuple" and isinstance(body, list):
                return tuple(_any_in(x) for x in body)
            if tag == "$set" and isinstance(body, list):
                return set(_any_in(x) for x in body)
            if tag == "$map" and isinstance(body, list):
                return {_hashable(_any_in(k)): _any_in(x) for k, x in _pairs(body)}
        except (ValueError, TypeError):
            pass
        raise ValueError(f"bad {tag} value")
    if not all(isinstance(k, str) for k in d):
        raise ValueError("a key that is not a string outside $map")
    return {k: _any_in(x) for k, x in d.items()}


def _pairs(body: list) -> list[tuple[Any, Any]]:
    if not all(isinstance(p, list) and len(p) == 2 for p in body):
        raise ValueError("bad $map pairs")
    return [(p[0], p[1]) for p in body]


def _hashable(k: Any) -> Any:
    hash(k)  # TypeError when it is not
    return k


class Outcomes(msgspec.Struct, array_like=True, frozen=True):
    """A folder's outcomes as columns, with the trials of the "ok" ones in order. An outcome is
    None for an "ok" (its trial: the next of ``trials``), ``["ok", notes]`` with notes,
    ``["tar", [[member, outcome], ...]]`` for a tar archive, the outcome itself otherwise."""

    paths: list[str]
    sizes: list[int]
    mtimes: list[int]
    outcomes: list[list[Any] | None]
    trials: list[TrialResult]


def known_bytes(known: Known) -> bytes:
    """A trials folder's outcomes as msgpack, less those msgpack cannot hold (a name that was
    not UTF-8, a count beyond 64 bits): their files are read again by the next build."""
    try:
        return _known_bytes(known)
    except ValueError:
        return _known_bytes({rel: e for rel, e in known.items() if _holds(rel, e)})


def _holds(rel: str, entry: tuple[int, int, Any]) -> bool:
    try:
        _known_bytes({rel: entry})
    except ValueError:
        return False
    return True


def _known_bytes(known: Known) -> bytes:
    trials: list[TrialResult] = []

    def put(o: tuple) -> list | None:
        if o[0] != "ok":
            return list(o)
        trials.append(o[1])
        return ["ok", o[2]] if len(o) > 2 else None

    outcomes = [
        ["tar", [[m, put(o)] for m, o in e[2]]] if isinstance(e[2], list) else put(e[2])
        for e in known.values()
    ]
    entries = known.values()
    cols = Outcomes(list(known), [e[0] for e in entries], [e[1] for e in entries], outcomes, trials)
    return encode(cols, Outcomes)


def known_from_bytes(data: bytes | msgspec.Raw) -> Known:
    """The outcomes :func:`known_bytes` wrote; ValueError if ``data`` is not them."""
    cols: Outcomes = decode(data, Outcomes)
    n = len(cols.paths)
    if not len(cols.sizes) == len(cols.mtimes) == len(cols.outcomes) == n:
        raise ValueError("uneven outcome columns")
    trial = iter(cols.trials).__next__

    def single(o: list | None) -> tuple:
        """A file's outcome (a tar archive's member's)."""
        if o is None:
            return ("ok", trial())
        if o[:1] == ["ok"] and len(o) == 2:
            return ("ok", trial(), _notes(o[1]))
        return _outcome(o)

    def entry(o: list) -> Any:
        if o[:1] == ["tar"] and len(o) == 2 and type(o[1]) is list:
            return [_member(m, single) for m in o[1]]
        return single(o)

    try:  # (most are a plain "ok": made in the comprehension, no call)
        out = [("ok", trial()) if o is None else entry(o) for o in cols.outcomes]
    except StopIteration:
        raise ValueError("fewer trials than outcomes") from None
    if next(iter(trial, None), None) is not None:
        raise ValueError("more trials than outcomes")
    return dict(zip(cols.paths, zip(cols.sizes, cols.mtimes, out, strict=True), strict=True))


def _member(v: Any, single: typing.Callable[[Any], tuple]) -> tuple[str, tuple]:
    if type(v) is not list or len(v) != 2 or type(v[0]) is not str:
        raise ValueError("bad tar member")
    if v[1] is not None and type(v[1]) is not list:
        raise ValueError("bad tar member's outcome")
    return v[0], single(v[1])


def _line(v: Any) -> int | None:
    if v is not None and type(v) is not int:
        raise ValueError("a line is not an integer")
    return v


def _notes(v: Any) -> tuple[tuple[str, int | None], ...]:
    """An "ok" outcome's notes: ``[[message, line or null], ...]``."""
    if type(v) is not list or not v:
        raise ValueError("an outcome's notes are not a list")
    if not all(type(n) is list and len(n) == 2 and type(n[0]) is str for n in v):
        raise ValueError("a bad note")
    return tuple((n[0], _line(n[1])) for n in v)


def _outcome(v: list) -> tuple:
    """An outcome other than "ok"."""
    kind = v[0] if v else None
    if kind in ("eval", "job", "missing") and len(v) == 1:
        return (kind,)
    if kind == "bad" and len(v) == 3 and type(v[1]) is str:
        return ("bad", v[1], _line(v[2]))
    raise ValueError(f"unknown outcome {str(kind)[:40]!r}")


_Summary = tuple[str, int, TrialSet]


def trial_summary_bytes(token: str, results: int, ts: TrialSet) -> bytes:
    """A trial set's summary: its token, its number of results and the set without them."""
    return encode((token, results, msgspec.structs.replace(ts, results=())), _Summary)


def trial_summary(data: bytes | msgspec.Raw) -> tuple[str, int, TrialSet]:
    """What :func:`trial_summary_bytes` wrote; ValueError otherwise."""
    return decode(data, _Summary)
