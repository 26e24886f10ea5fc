"""Strict JSON out: no NaN or Infinity (null instead), deterministic bytes."""

from __future__ import annotations

import functools
import math
from typing import Any, TypeVar

import msgspec
import orjson

T = TypeVar("T")

_OPTS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def _default(obj: Any) -> Any:
    if isinstance(obj, msgspec.Struct):  # (a page object or section: its fields, in order)
        return msgspec.structs.asdict(obj)
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def dumps(obj: Any, indent: bool = False) -> bytes:
    """Serialize ``obj``; non-finite floats become ``null`` (orjson's own rule)."""
    return orjson.dumps(
        obj, default=_default, option=_OPTS | (orjson.OPT_INDENT_2 if indent else 0)
    )


_SAME: Any = object()  # what _clean returns for a value it leaves as it is


def clean(obj: T) -> T:
    """``obj`` with non-finite floats replaced by None (for Altair/Jinja); Structs keep their
    type, tuples stay tuples, and what holds none is returned as it is, not copied (nothing
    mutates a page object: they are frozen)."""
    out = _clean(obj)
    return obj if out is _SAME else out


def _clean(obj: Any) -> Any:
    """The cleaned copy of ``obj``, or :data:`_SAME` when nothing in it needs replacing."""
    t = type(obj)
    if t is float:
        return _SAME if math.isfinite(obj) else None
    if t is str or t is int or t is bool or obj is None:
        return _SAME
    if t is list or t is tuple:
        if _finite_column(obj):
            return _SAME
        items = [_clean(v) for v in obj]
        if all(c is _SAME for c in items):
            return _SAME
        new = [v if c is _SAME else c for v, c in zip(obj, items, strict=True)]
        return new if t is list else tuple(new)
    if t is dict:
        vals = {k: _clean(v) for k, v in obj.items()}
        if all(c is _SAME for c in vals.values()):
            return _SAME
        return {k: v if vals[k] is _SAME else vals[k] for k, v in obj.items()}
    names = _struct_fields(t)  # type: ignore[arg-type]  # a type is hashable
    if names is not None:
        vals = {n: _clean(getattr(obj, n)) for n in names}
        if all(c is _SAME for c in vals.values()):
            return _SAME
        return t(**{n: getattr(obj, n) if c is _SAME else c for n, c in vals.items()})
    return _subclass(obj)


def _finite_column(col: list | tuple) -> bool:
    """True when every item of ``col`` is None or a finite number, told by one sum (finite only
    when each term is), Nones left out; False also when a sum cannot tell (text, overflow)."""
    try:
        return math.isfinite(sum(col))
    except OverflowError:
        return False
    except TypeError:
        pass
    try:
        return math.isfinite(sum([v for v in col if v is not None]))
    except (TypeError, OverflowError):
        return False


def _subclass(obj: Any) -> Any:
    """The rare kinds (a float, dict, list or tuple subclass): copied."""
    if isinstance(obj, float):
        return _SAME if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: clean(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [clean(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(clean(v) for v in obj)
    return _SAME


@functools.cache
def _struct_fields(t: type) -> tuple[str, ...] | None:
    """The field names of Struct type ``t`` (None for any other type), looked up once."""
    return t.__struct_fields__ if issubclass(t, msgspec.Struct) else None


def script_json(obj: Any) -> str:
    """JSON safe to embed in ``<script type="application/json">``: it cannot close the element."""
    text = dumps(obj).decode("utf-8")
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
