"""``@frozen``: a frozen dataclass whose ``__repr__``, ``__eq__`` and ``__hash__`` are not compiled.

``@dataclass(frozen=True)`` writes six methods per class as source text and
compiles each one (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__``, ``__delattr__``): about 0.55 ms a class on CPython 3.11, so
the ~90 model classes cost ~50 ms of every ``sitegen`` command's start-up, a
sixth of a one-job rebuild. ``@frozen`` asks :func:`dataclasses.dataclass`
for the three that must know the class's fields to be fast or to stay frozen
(``__init__`` and the refusing ``__setattr__``/``__delattr__``) and gives
every class the same three plain functions for the rest, bound to the
class's field names by closure (no source text, no compile). They behave as
the generated ones do: ``__eq__`` compares the fields with ``compare=True`` as
one tuple, and only with an instance of the very same class;
``__hash__`` is ``hash`` of that tuple (the fields with ``hash=True``, or
``compare=True`` where ``hash`` is unset); ``__repr__`` is
``Name(field=value, ...)`` over the fields with ``repr=True``, ``...`` on
recursion. A method the class writes itself is kept, as dataclass keeps it.
``tests/model/test_frozen.py`` holds every such class of the package against a
twin made by ``dataclass(frozen=True)``.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar("T")


@overload
def frozen(cls: type[T], /) -> type[T]: ...


@overload
def frozen(*, kw_only: bool = False) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen(cls: type[T] | None = None, /, *, kw_only: bool = False) -> Any:
    """``@dataclass(frozen=True)`` (``kw_only`` as there), its eq/hash/repr shared, not compiled."""

    def wrap(cls: type[T]) -> type[T]:
        return _finish(
            dataclasses.dataclass(cls, frozen=True, eq=False, repr=False, kw_only=kw_only)
        )

    return wrap if cls is None else wrap(cls)


def _finish(cls: type[T]) -> type[T]:
    own = cls.__dict__
    flds = dataclasses.fields(cls)  # type: ignore[arg-type]  # a dataclass by now
    if "__repr__" not in own:
        cls.__repr__ = _repr(cls, tuple(f.name for f in flds if f.repr))  # type: ignore[method-assign]
    if "__eq__" not in own:
        cls.__eq__ = _eq(cls, _key(tuple(f.name for f in flds if f.compare)))  # type: ignore[method-assign]
    # Python set __hash__ = None when the class wrote __eq__ without __hash__: dataclass then
    # adds its own hash (frozen, eq), and so does this.
    if "__hash__" not in own or (own["__hash__"] is None and "__eq__" in own):
        hashed = tuple(f.name for f in flds if (f.compare if f.hash is None else f.hash))
        cls.__hash__ = _hash(cls, _key(hashed))  # type: ignore[method-assign]
    return cls


def _key(names: tuple[str, ...]) -> Callable[[object], tuple]:
    """The values of ``names`` as a tuple (as the generated methods build it)."""
    if len(names) > 1:
        return attrgetter(*names)  # a tuple for two names or more
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _named(fn: Callable, cls: type, name: str) -> Callable:
    fn.__name__ = name
    fn.__qualname__ = f"{cls.__qualname__}.{name}"
    fn.__module__ = cls.__module__
    return fn


def _eq(cls: type, key: Callable[[object], tuple]) -> Callable:
    def eq(self: object, other: object) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return _named(eq, cls, "__eq__")


def _hash(cls: type, key: Callable[[object], tuple]) -> Callable:
    def hash_(self: object) -> int:
        return hash(key(self))

    return _named(hash_, cls, "__hash__")


def _repr(cls: type, names: tuple[str, ...]) -> Callable:
    @reprlib.recursive_repr()
    def repr_(self: object) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
        return f"{self.__class__.__qualname__}({fields})"

    return _named(repr_, cls, "__repr__")
