"""``@frozen``: a frozen dataclass of which only ``__init__`` is compiled.

``@dataclass(frozen=True)`` writes six methods per class as source text and
compiles each one (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__``, ``__delattr__``): with the package's many model classes that
is a large share of every ``sitegen`` command's start-up, and of a one-job
rebuild (docs/benchmarks.md). ``@frozen`` asks :func:`dataclasses.dataclass`
for the fields alone (``init=False``, not frozen, no eq or repr) and compiles
only the ``__init__``, the one method that must be fast for its fields: the
text dataclass(frozen=True) writes, each field set through
``object.__setattr__``. Every class gets the same five plain functions for the
rest, bound to the class's field names by closure (no source text, no
compile). They behave as the generated ones do: ``__setattr__`` and
``__delattr__`` raise ``FrozenInstanceError`` for the class's own instances
and its fields; ``__eq__`` compares the fields with ``compare=True`` as one
tuple, and only with an instance of the very same class; ``__hash__`` is
``hash`` of that tuple (the fields with ``hash=True``, or ``compare=True``
where ``hash`` is unset); ``__repr__`` is ``Name(field=value, ...)`` over the
fields with ``repr=True``, ``...`` on recursion. The class's dataclass
parameters say ``frozen`` and ``init``, as dataclass's would; a method the
class writes itself is kept, as dataclass keeps it; a subclass of a frozen
class is left to dataclass's frozen machinery (dataclass requires it).
``tests/test_frozen.py`` holds every such class of the package against
twins made by ``dataclass(frozen=True)``: the same behaviour, ``__init__``
signature and docstring.
"""

from __future__ import annotations

import dataclasses
import inspect
import reprlib
import sys
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
    """``@dataclass(frozen=True)`` (``kw_only`` as there), only its ``__init__`` compiled."""

    def wrap(cls: type[T]) -> type[T]:
        params = [b.__dict__["__dataclass_params__"] for b in cls.__mro__[1:] if _is_dc(b)]
        if any(not p.frozen for p in params):  # (as dataclass refuses it)
            raise TypeError("cannot inherit frozen dataclass from a non-frozen one")
        if params:
            # dataclass requires a frozen base's subclasses to be declared frozen to it: for
            # them (JobPage, TaskRow, BatchSummary) it writes the frozen methods itself.
            made = dataclasses.dataclass(cls, frozen=True, eq=False, repr=False, kw_only=kw_only)
            return _finish(made)
        had_doc = bool(cls.__dict__.get("__doc__"))
        made = dataclasses.dataclass(
            cls, init=False, frozen=False, eq=False, repr=False, kw_only=kw_only
        )
        return _finish(_freeze(made, had_doc))

    return wrap if cls is None else wrap(cls)


def _is_dc(cls: type) -> bool:
    return "__dataclass_params__" in cls.__dict__


# The names dataclass gives the helpers its __init__ refers to (a field of such a name would
# clash there too).
_SET, _FACTORY = "__dataclass_set__", "__dataclass_HAS_DEFAULT_FACTORY__"
_HAS_FACTORY = type("_HasDefaultFactory", (), {"__repr__": lambda self: "<factory>"})()


def _freeze(cls: type[T], had_doc: bool) -> type[T]:
    """What dataclass(frozen=True, init=True) adds to a class dataclass made with neither:
    its ``__init__`` (each field set through ``object.__setattr__``), the ``__setattr__`` and
    ``__delattr__`` that refuse, and the class's parameters saying so.

    The ``__init__`` is compiled as dataclass compiles it; the refusing pair are two plain
    functions bound by closure, not compiled per class, which every command's start-up
    would otherwise pay for each class. (An ``InitVar`` is refused: the ``__init__``
    written here takes none; no model class has one.)
    """
    own = cls.__dict__
    for name in ("__setattr__", "__delattr__"):
        if name in own:  # (as dataclass refuses them)
            raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    flds = dataclasses.fields(cls)  # type: ignore[arg-type]  # a dataclass by now
    pseudo = set(own["__dataclass_fields__"]) - {f.name for f in flds}  # ClassVar, InitVar
    if any(_is_initvar(own["__dataclass_fields__"][n].type) for n in pseudo):
        raise TypeError(f"@frozen takes no InitVar ({cls.__name__}): use @dataclass(frozen=True)")
    if "__init__" not in own:
        cls.__init__ = _init(cls, flds)  # type: ignore[method-assign]
    names = frozenset(f.name for f in flds)
    cls.__setattr__ = _refuse_set(cls, names)  # type: ignore[method-assign,assignment]
    cls.__delattr__ = _refuse_del(cls, names)  # type: ignore[method-assign,assignment]
    # The parameters dataclass keeps on the class say what it now is: frozen, with an
    # __init__ (subclasses must then be frozen too, as dataclass checks).
    params = own["__dataclass_params__"]
    params.init = params.frozen = True
    if not had_doc:  # dataclass's docstring of a class without one: its signature
        try:
            sig = str(inspect.signature(cls)).replace(" -> None", "")
        except (TypeError, ValueError):
            sig = ""
        cls.__doc__ = cls.__name__ + sig
    return cls


def _is_initvar(tp: object) -> bool:
    # (a string under `from __future__ import annotations`, as dataclass reads it)
    if isinstance(tp, str):
        return tp.startswith(("InitVar", "dataclasses.InitVar"))
    return isinstance(tp, dataclasses.InitVar) or tp is dataclasses.InitVar


def _init(cls: type, flds: tuple[dataclasses.Field, ...]) -> Callable:
    """The ``__init__`` dataclass(frozen=True) writes for ``flds``, compiled the same way."""
    self = "__dataclass_self__" if "self" in {f.name for f in flds} else "self"
    ns: dict[str, Any] = {_SET: object.__setattr__, _FACTORY: _HAS_FACTORY}
    positional: list[str] = []
    keywords: list[str] = []
    body: list[str] = []
    annotations: dict[str, Any] = {}
    after_default = False  # a positional parameter with a default came before
    for i, f in enumerate(flds):
        dflt = f"__dataclass_dflt_{i}__"
        has_factory = f.default_factory is not dataclasses.MISSING
        if has_factory:
            ns[dflt] = f.default_factory
        if not f.init:
            if has_factory:  # (a plain default stays the class attribute, as dataclass leaves it)
                body.append(f"  {_SET}({self}, {f.name!r}, {dflt}())")
            continue
        if f.default is not dataclasses.MISSING:
            ns[dflt] = f.default
            param = f"{f.name}={dflt}"
        elif has_factory:
            param = f"{f.name}={_FACTORY}"
        else:
            param = f.name
        if f.kw_only:
            keywords.append(param)
        else:
            if param == f.name and after_default:  # (no default, after one that had)
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
            after_default = param != f.name
            positional.append(param)
        annotations[f.name] = f.type
        value = f"{dflt}() if {f.name} is {_FACTORY} else {f.name}" if has_factory else f.name
        body.append(f"  {_SET}({self}, {f.name!r}, {value})")
    if hasattr(cls, "__post_init__"):
        body.append(f"  {self}.__post_init__()")
    params = ", ".join([self, *positional, *(["*", *keywords] if keywords else [])])
    # As dataclass's _create_fn: the helpers are an outer function's parameters, so the
    # __init__ sees them by closure and has the class's module as its globals (type hints
    # of it resolve there).
    inner = f" def __init__({params}):\n" + ("\n".join(f" {b}" for b in body) or "   pass")
    src = f"def __create_fn__({', '.join(ns)}):\n{inner}\n return __init__\n"
    local: dict[str, Any] = {}
    module = sys.modules.get(cls.__module__)
    exec(src, module.__dict__ if module else {}, local)  # noqa: S102  (field names: as dataclass)
    fn = local["__create_fn__"](**ns)
    fn.__annotations__ = {**annotations, "return": None}
    return _named(fn, cls, "__init__")


def _refuse_set(cls: type, names: frozenset[str]) -> Callable:
    def setattr_(self: object, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)  # type: ignore[arg-type]

    return _named(setattr_, cls, "__setattr__")


def _refuse_del(cls: type, names: frozenset[str]) -> Callable:
    def delattr_(self: object, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)  # type: ignore[arg-type]

    return _named(delattr_, cls, "__delattr__")


def _finish(cls: type[T]) -> type[T]:
    own = cls.__dict__
    flds = dataclasses.fields(cls)  # type: ignore[arg-type]  # a dataclass by now
    # (decided before __eq__ is added, as dataclass decides: a __hash__ = None the class
    # wrote itself stays; the None Python sets for a class writing __eq__ does not)
    add_hash = "__hash__" not in own or (own["__hash__"] is None and "__eq__" in own)
    if "__repr__" not in own:
        cls.__repr__ = _repr(cls, tuple(f.name for f in flds if f.repr))  # type: ignore[method-assign]
    if "__eq__" not in own:
        cls.__eq__ = _eq(cls, _key(tuple(f.name for f in flds if f.compare)))  # type: ignore[method-assign]
    # Python set __hash__ = None when the class wrote __eq__ without __hash__: dataclass then
    # adds its own hash (frozen, eq), and so does this.
    if add_hash:
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
