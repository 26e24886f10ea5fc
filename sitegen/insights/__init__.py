"""Analyses that answer questions: what a run learned, where rollout time went, what looks wrong.

Pure functions from the model (:mod:`sitegen.model.parsed`) to frozen Structs;
pages turn them into JSON with :func:`to_json`. Thresholds and rules are in
docs/data.md ("What the insights mean").
"""

from __future__ import annotations

from typing import Any

import msgspec


def to_json(obj: Any) -> Any:
    """A Struct tree as plain dicts and lists (tuples become lists)."""
    if isinstance(obj, msgspec.Struct):
        return {name: to_json(getattr(obj, name)) for name in obj.__struct_fields__}
    if isinstance(obj, dict):
        return {k: to_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_json(v) for v in obj]
    return obj
