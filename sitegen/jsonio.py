"""Strict JSON out: no NaN or Infinity (null instead), deterministic bytes."""

from __future__ import annotations

import math
from typing import Any

import orjson

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


def clean(obj: Any) -> Any:
    """A copy of ``obj`` with non-finite floats replaced by None (for Altair/Jinja)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [clean(v) for v in obj]
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
