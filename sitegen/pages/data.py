"""The JSON side of page objects: ``to_json()`` (the data contract) and ``from_json()``,
which walks the type hints (a nested section is built from its dict) and refuses a missing
or unknown key, so an analysis and its page type cannot drift apart unnoticed.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Any, Self

import msgspec
import orjson

from sitegen.jsonio import dumps


class PageData:
    """The JSON side of a page object or section (a mixin for frozen Structs)."""

    __slots__ = ()  # (its Structs keep no __dict__)

    def to_json(self) -> dict[str, Any]:
        """The published JSON value: fields in order, non-finite numbers as ``null``
        (``jsonio.dumps(obj)`` writes the same bytes, without this copy)."""
        return orjson.loads(dumps(self))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        """Build from a JSON-shaped dict (an analysis result or a published file)."""
        return _build(cls, data)


# -- the JSON -> Struct walk -------------------------------------------------------------


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except NameError:
        return typing.get_type_hints(cls, localns=_analysis_types())


def _analysis_types() -> dict[str, type]:
    """The classes of the task and rollout analyses, by name: pages name them in hints only
    (``if TYPE_CHECKING`` imports)."""
    from sitegen.insights import rollouts, sampling, tasks

    return {
        name: obj
        for mod in (tasks, rollouts, sampling)
        for name, obj in vars(mod).items()
        if isinstance(obj, type) and obj.__module__ == mod.__name__
    }


@functools.cache
def _typed(tp: Any) -> bool:
    """Does a type hint contain a Struct (so its values need building)?"""
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return True
    return any(_typed(a) for a in typing.get_args(tp) if a is not Ellipsis)


def _build(cls: type, data: Any) -> Any:
    if isinstance(data, cls):
        return data
    if not isinstance(data, dict):
        raise TypeError(f"{cls.__name__}: expected an object, got {type(data).__name__}")
    hints = _hints(cls)
    names = typing.cast(type[msgspec.Struct], cls).__struct_fields__
    missing = [n for n in names if n not in data]
    extra = [k for k in data if k not in hints]
    if missing or extra:
        raise TypeError(f"{cls.__name__}: missing keys {missing}, unknown keys {extra}")
    return cls(**{n: _value(hints[n], data[n]) for n in names})


def _value(tp: Any, v: Any) -> Any:
    if v is None or not _typed(tp):
        return v
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        inner = [a for a in args if a is not type(None)]
        if len(inner) != 1:  # which member a dict is would be a guess: name it
            raise TypeError(f"cannot build {tp!r}: use one section type (or None)")
        return _value(inner[0], v)
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return _build(tp, v)
    if origin is tuple:
        return tuple(_value(args[0], x) for x in v)
    if origin is list:
        return [_value(args[0], x) for x in v]
    if origin is dict:
        return {k: _value(args[1], x) for k, x in v.items()}
    raise TypeError(f"cannot build {tp!r}")
