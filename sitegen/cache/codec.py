"""Plain-JSON encoding of typed values: parsed logs, the log parser's state, run records.

The build cache keeps them between builds. It must be data, never code (a pickle
planted beside the output would run on the next build), and a damaged file must be
refused, not half-read. So the encoding is driven by the dataclasses' own type
hints: every field is written as plain JSON (no NaN, no Infinity, string keys only)
and, on the way back, checked against its declared type. Anything unexpected raises
:class:`ValueError`. :func:`shape` names a type's shape, so that what was written for
another shape of the model is not read back as this one.

Values typed loosely (the redacted config dump, ``dict`` or ``object``) go
through a small tagged form so that YAML's dates, non-string keys and
non-finite floats come back equal.
"""

from __future__ import annotations

import base64
import collections
import dataclasses
import hashlib
import math
import operator
import types
import typing
from collections import Counter, deque
from datetime import date, datetime
from functools import cache
from typing import Any

from sitegen.errors import BuildWarning
from sitegen.model.parsed import ParsedLog

_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_TAGS = ("$f", "$dt", "$date", "$b", "$set", "$tuple", "$map")


def parsed_to_json(log: ParsedLog) -> dict:
    """``log`` as a JSON-ready dict (strict JSON: no NaN, string keys)."""
    return to_json(log, ParsedLog)


def parsed_from_json(data: object) -> ParsedLog:
    """The :class:`ParsedLog` that :func:`parsed_to_json` wrote; ValueError if ``data`` is not one."""
    return from_json(data, ParsedLog)


def shape(tp: Any) -> str:
    """A short hash of a type's shape: its dataclasses' names, field names and declared
    types, all the way down. Values written for another shape (a field added, renamed or
    retyped) are not read back as this one, so the model may change without a format
    number to bump."""
    return hashlib.sha1(_described(tp).encode()).hexdigest()[:16]


@cache
def _described(tp: Any) -> str:
    if dataclasses.is_dataclass(tp):
        fields = ",".join(f"{n}:{_described(ftp)}" for n, ftp in _fields(typing.cast(type, tp)))
        return f"{typing.cast(type, tp).__qualname__}({fields})"
    origin = typing.get_origin(tp)
    if origin is not None:
        return f"{_described(origin)}[{','.join(map(_described, typing.get_args(tp)))}]"
    return getattr(tp, "__qualname__", repr(tp))


# -- the type-driven codec --------------------------------------------------------


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _fields(cls: type) -> list[tuple[str, Any]]:
    hints = _hints(cls)
    return [(f.name, hints[f.name]) for f in dataclasses.fields(cls)]


def _float_out(v: float) -> float | str:
    if math.isfinite(v):
        return v
    return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")


def to_json(value: Any, tp: Any) -> Any:
    """Encode ``value`` of declared type ``tp`` as plain JSON."""
    return _encoder(tp)(value)


# Encoding runs for every log a build parses (its ParsedLog and parser state: hundreds of
# thousands of values), so, as for decoding, each type's rules are worked out once into a
# closure; values whose JSON is themselves (int, str, bool, None) are not even
# called for. The output is what the type-walking reference (_to_json_walk, kept for the
# tests) writes, byte for byte.
@cache
def _encoder(tp: Any) -> typing.Callable[[Any], Any]:
    origin = typing.get_origin(tp)
    if tp is Any or tp is object or tp is dict and origin is None:
        return _any_out
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        inner = _encoder(args[0] if len(args) == 1 else Any)
        if inner is _same:
            return _same

        def union(value: Any) -> Any:
            return None if value is None else inner(value)

        return union
    if dataclasses.is_dataclass(tp):
        return _dataclass_encoder(typing.cast(type, tp))
    if tp is float:
        return _float_value_out
    if tp in (int, str, bool, type(None)):
        return _same
    if tp is datetime:
        return _datetime_out
    if tp is bytes:
        return _bytes_out
    if origin in (tuple, list, deque, collections.deque):
        item_args = typing.get_args(tp)
        item = _encoder(item_args[0] if item_args else Any)
        if item is _same:
            return list

        def sequence_out(value: Any) -> list:
            return [item(v) for v in value]

        return sequence_out
    if origin in (dict, Counter, collections.Counter):
        kv = typing.get_args(tp)
        ktp, vtp = (kv[0], kv[1]) if len(kv) == 2 else (kv[0], int)
        return _mapping_encoder(ktp, _encoder(vtp))
    raise TypeError(f"no JSON encoding for {tp!r}")


def _same(value: Any) -> Any:
    return value


def _float_value_out(value: Any) -> Any:
    if type(value) is float:
        return value if math.isfinite(value) else _float_out(value)
    # an int stays an int (metric values may be either); a float subclass becomes a float
    return _float_out(float(value)) if isinstance(value, float) else value


def _datetime_out(value: datetime) -> str:
    return value.isoformat()


def _bytes_out(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def _dataclass_encoder(tp: type) -> typing.Callable[[Any], dict]:
    names = tuple(n for n, _ in _fields(tp))
    get = operator.attrgetter(*names) if len(names) > 1 else None
    encs = tuple(None if (e := _encoder(ftp)) is _same else e for _, ftp in _fields(tp))
    if get is None:  # one field (or none): no tuple from attrgetter

        def small_out(value: Any) -> dict:
            return {n: _encoder(ftp)(getattr(value, n)) for n, ftp in _fields(tp)}

        return small_out

    def dataclass_out(value: Any) -> dict:
        return {
            n: v if enc is None else enc(v)
            for n, enc, v in zip(names, encs, get(value), strict=True)
        }

    return dataclass_out


def _mapping_encoder(ktp: Any, value: typing.Callable[[Any], Any]) -> typing.Callable[[Any], dict]:
    def mapping_out(d: Any) -> dict:
        return {_key_out(k, ktp): value(v) for k, v in d.items()}

    return mapping_out


def _to_json_walk(value: Any, tp: Any) -> Any:
    """The reference encoder: the declared type walked for every value (slow; for the tests)."""
    origin = typing.get_origin(tp)
    if tp is Any or tp is object or tp is dict and origin is None:
        return _any_out(value)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _to_json_walk(value, args[0] if len(args) == 1 else Any)
    if dataclasses.is_dataclass(tp):
        return {
            name: _to_json_walk(getattr(value, name), ftp)
            for name, ftp in _fields(typing.cast(type, tp))
        }
    if tp is float:
        return _float_out(float(value)) if isinstance(value, float) else value
    if tp in (int, str, bool, type(None)):
        return value
    if tp is datetime:
        return value.isoformat()
    if tp is bytes:
        return base64.b64encode(value).decode("ascii")
    if origin in (tuple, list, deque, collections.deque):
        item_args = typing.get_args(tp)
        item = item_args[0] if item_args else Any
        return [_to_json_walk(v, item) for v in value]
    if origin in (dict, Counter, collections.Counter):
        kv = typing.get_args(tp)
        ktp, vtp = (kv[0], kv[1]) if len(kv) == 2 else (kv[0], int)
        return {_key_out(k, ktp): _to_json_walk(v, vtp) for k, v in value.items()}
    raise TypeError(f"no JSON encoding for {tp!r}")


def _key_out(k: Any, ktp: Any) -> str:
    if ktp is int and isinstance(k, int) and not isinstance(k, bool):
        return str(k)
    if ktp is str and isinstance(k, str):
        return k
    raise TypeError(f"key {k!r} is not {ktp!r}")


def from_json(data: Any, tp: Any, where: str = "$") -> Any:
    """Decode ``data`` as a value of type ``tp``, checking every part; ValueError if it does not fit."""
    try:
        return _decoder(tp)(data)
    except _Bad as exc:
        raise ValueError(f"{where}{''.join(reversed(exc.path))}: {exc.msg}") from None


class _Bad(Exception):
    """A value that does not fit its type; ``path`` is filled in on the way out (innermost first)."""

    def __init__(self, msg: str) -> None:
        super().__init__(msg)
        self.msg = msg
        self.path: list[str] = []


# Decoding runs on every rebuild for every cached log, so each type's checks are worked out
# once into a closure (no typing introspection per value, no location string per field).
@cache
def _decoder(tp: Any) -> typing.Callable[[Any], Any]:
    origin = typing.get_origin(tp)
    if tp is Any or tp is object or tp is dict and origin is None:
        return _any_decoder
    if origin in (typing.Union, types.UnionType):
        none_ok = type(None) in typing.get_args(tp)
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        inner = _decoder(args[0] if len(args) == 1 else Any)
        if inner is _any_decoder:  # (int | float | None: loosely typed, None included)
            return inner

        def union(data: Any) -> Any:
            return None if data is None and none_ok else inner(data)

        return union
    if dataclasses.is_dataclass(tp):
        return _dataclass_decoder(tp)
    if tp is float:
        return _float_in
    if tp is int:
        return _int_in
    if tp is bool or tp is str:

        def exact(data: Any) -> Any:
            if type(data) is tp:
                return data
            raise _Bad(f"expected {tp.__name__}")

        return exact
    if tp is datetime:
        return _datetime_in
    if tp is bytes:
        return _bytes_in
    if origin in (tuple, list, deque, collections.deque):
        return _sequence_decoder(origin, typing.get_args(tp))
    if origin in (dict, Counter, collections.Counter):
        return _mapping_decoder(origin, typing.get_args(tp))
    raise ValueError(f"no JSON decoding for {tp!r}")


def _any_decoder(data: Any) -> Any:
    t = type(data)
    # JSON's scalars come back as they are (most loosely typed values: int | float fields)
    if t is str or t is int or t is bool or data is None or t is float and math.isfinite(data):
        return data
    try:
        return _any_in(data, "")
    except ValueError as exc:
        raise _Bad(str(exc).lstrip(": ")) from None


def _dataclass_decoder(tp: Any) -> typing.Callable[[Any], Any]:
    fields = [(n, _decoder(ftp)) for n, ftp in _fields(tp)]
    names = frozenset(n for n, _ in fields)

    def dataclass_in(data: Any) -> Any:
        if not isinstance(data, dict):
            raise _Bad(f"expected an object for {tp.__name__}")
        if data.keys() != names:
            missing, extra = sorted(names - set(data)), sorted(set(data) - names)
            raise _Bad(f"{tp.__name__} fields differ (missing {missing}, extra {extra})")
        try:
            kw = {n: dec(data[n]) for n, dec in fields}
        except _Bad as exc:
            for n, dec in fields:  # which field: only worked out on the error path
                try:
                    dec(data[n])
                except _Bad:
                    exc.path.append(f".{n}")
                    break
            raise
        try:
            return tp(**kw)
        except (TypeError, ValueError) as exc:
            raise _Bad(str(exc)) from None

    return dataclass_in


def _float_in(data: Any) -> Any:
    t = type(data)
    if t is float or t is int:
        return data  # an int stays an int (metric values may be either)
    if isinstance(data, str) and data in _NONFINITE:
        return _NONFINITE[data]
    if isinstance(data, int | float) and not isinstance(data, bool):
        return data
    raise _Bad("expected a number")


def _int_in(data: Any) -> int:
    if isinstance(data, int) and not isinstance(data, bool):
        return data
    raise _Bad("expected an integer")


def _datetime_in(data: Any) -> datetime:
    if not isinstance(data, str):
        raise _Bad("expected a date-time string")
    try:
        return datetime.fromisoformat(data)
    except ValueError:
        raise _Bad("bad date-time") from None


def _bytes_in(data: Any) -> bytes:
    if not isinstance(data, str):
        raise _Bad("expected base64 text")
    try:
        return base64.b64decode(data.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise _Bad("bad base64") from None


def _sequence_decoder(origin: Any, args: tuple) -> typing.Callable[[Any], Any]:
    item = _decoder(args[0] if args else Any)
    make = {tuple: tuple, list: list}.get(origin, deque)

    def sequence_in(data: Any) -> Any:
        if not isinstance(data, list):
            raise _Bad("expected a list")
        try:
            return make([item(v) for v in data])
        except _Bad as exc:
            for i, v in enumerate(data):  # where it broke: only worked out on the error path
                try:
                    item(v)
                except _Bad:
                    exc.path.append(f"[{i}]")
                    break
            raise

    return sequence_in


def _mapping_decoder(origin: Any, args: tuple) -> typing.Callable[[Any], Any]:
    ktp, vtp = (args[0], args[1]) if len(args) == 2 else (args[0], int)
    value = _decoder(vtp)

    def checked(data: dict) -> dict:
        out = {}
        for k, v in data.items():
            try:
                out[_key_in(k, ktp)] = value(v)
            except ValueError as exc:
                bad = _Bad(str(exc))
                bad.path.append(f".{k}")
                raise bad from None
            except _Bad as exc:
                exc.path.append(f".{k}")
                raise
        return out

    def mapping_in(data: Any) -> Any:
        if not isinstance(data, dict):
            raise _Bad("expected an object")
        out = checked(data)
        return Counter(out) if origin is not dict else out

    return mapping_in


def _key_in(k: str, ktp: Any) -> Any:
    if ktp is str:
        return k
    if ktp is int:
        try:
            n = int(k)
        except ValueError:
            raise ValueError(f"key {k!r} is not an integer") from None
        if str(n) == k:
            return n
    raise ValueError(f"bad key {k!r}")


# -- loosely typed values (YAML config): a tagged form --------------------------


def _any_out(v: Any) -> Any:
    if v is None or isinstance(v, bool | int | str):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else {"$f": _float_out(v)}
    if isinstance(v, datetime):
        return {"$dt": v.isoformat()}
    if isinstance(v, date):
        return {"$date": v.isoformat()}
    if isinstance(v, bytes):
        return {"$b": base64.b64encode(v).decode("ascii")}
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
    raise TypeError(f"no JSON encoding for a {type(v).__name__}")


def _any_in(d: Any, where: str) -> Any:
    if d is None or isinstance(d, bool | int | str):
        return d
    if isinstance(d, float):
        if not math.isfinite(d):
            raise ValueError(f"{where}: non-finite number in plain JSON")
        return d
    if isinstance(d, list):
        return [_any_in(x, where) for x in d]
    if not isinstance(d, dict):
        raise ValueError(f"{where}: not JSON data")
    if len(d) == 1 and next(iter(d)) in _TAGS:
        ((tag, body),) = d.items()
        try:
            if tag == "$f" and body in _NONFINITE:
                return _NONFINITE[body]
            if tag == "$dt" and isinstance(body, str):
                return datetime.fromisoformat(body)
            if tag == "$date" and isinstance(body, str):
                return date.fromisoformat(body)
            if tag == "$b" and isinstance(body, str):
                return base64.b64decode(body.encode("ascii"), validate=True)
            if tag == "$tuple" and isinstance(body, list):
                return tuple(_any_in(x, where) for x in body)
            if tag == "$set" and isinstance(body, list):
                return set(_any_in(x, where) for x in body)
            if tag == "$map" and isinstance(body, list):
                return {
                    _hashable(_any_in(k, where), where): _any_in(x, where)
                    for k, x in _pairs(body, where)
                }
        except (ValueError, TypeError, UnicodeEncodeError):
            raise ValueError(f"{where}: bad {tag} value") from None
        raise ValueError(f"{where}: bad {tag} value")
    return {k: _any_in(x, f"{where}.{k}") for k, x in d.items()}


def _pairs(body: list, where: str) -> list[tuple[Any, Any]]:
    if not all(isinstance(p, list) and len(p) == 2 for p in body):
        raise ValueError(f"{where}: bad $map pairs")
    return [(p[0], p[1]) for p in body]


def _hashable(k: Any, where: str) -> Any:
    try:
        hash(k)
    except TypeError:
        raise ValueError(f"{where}: unhashable key") from None
    return k
