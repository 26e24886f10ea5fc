"""Strict JSON out: no NaN or Infinity (null instead), deterministic bytes."""

from __future__ import annotations

import math
from dataclasses import fields, is_dataclass
from typing import Any, TypeVar

import orjson

T = TypeVar("T")

_OPTS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def _default(obj: Any) -> Any:
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def dumps(obj: Any, indent: bool = False) -> bytes:
    """Serialize ``obj``; non-finite floats become ``null`` (orjson's own rule)."""
    return orjson.dumps(
        obj, default=_default, option=_OPTS | (orjson.OPT_INDENT_2 if indent else 0)
    )


def clean(obj: T) -> T:
    """A copy of ``obj`` with non-finite floats replaced by None (for Altair/Jinja).

    Dataclasses (page objects) are copied field by field and keep their type;
    tuples stay tuples.
    """
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None  # type: ignore[return-value]
    if isinstance(obj, dict):
        return {k: clean(v) for k, v in obj.items()}  # type: ignore[return-value]
    if isinstance(obj, list):
        return [clean(v) for v in obj]  # type: ignore[return-value]
    if isinstance(obj, tuple):
        return tuple(clean(v) for v in obj)  # type: ignore[return-value]
    if is_dataclass(obj) and not isinstance(obj, type):
        return type(obj)(**{f.name: clean(getattr(obj, f.name)) for f in fields(obj)})
    return obj


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
