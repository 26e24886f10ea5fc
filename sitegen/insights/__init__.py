"""Analyses that answer questions: what a run learned, where rollout time went, what looks wrong.

Pure functions from the model (:mod:`sitegen.model.parsed`) to frozen dataclasses;
pages turn them into JSON with :func:`to_json`. Thresholds and rules are in
docs/data.md ("What the insights mean").
"""

from __future__ import annotations

import dataclasses
from typing import Any


def to_json(obj: Any) -> Any:
    """A dataclass tree as plain dicts and lists (tuples become lists)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_json(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {k: to_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_json(v) for v in obj]
    return obj
