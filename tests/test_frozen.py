"""``@frozen``: every frozen class of the package behaves as ``@dataclass(frozen=True)`` would."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from pathlib import PurePath  # (resolved in this module by the __init__'s hints)

import pytest

import sitegen
from sitegen.frozen import frozen


def _frozen_classes() -> list[type]:
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(sitegen.__path__, "sitegen."):
        if info.name.endswith("__main__"):  # runs the command
            continue
        try:
            mod = importlib.import_module(info.name)
        except ModuleNotFoundError as exc:  # an optional extra not installed here: skipped
            if (exc.name or "sitegen").startswith("sitegen"):
                raise
            continue
        for obj in vars(mod).values():
            if (
                isinstance(obj, type)
                and obj.__module__ == info.name
                and dataclasses.is_dataclass(obj)
                and obj.__dataclass_params__.frozen  # type: ignore[attr-defined]
            ):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [found[k] for k in sorted(found)]


CLASSES = _frozen_classes()


def test_the_walk_finds_the_model():
    names = {c.__qualname__ for c in CLASSES}
    assert {"ParsedLog", "JobPage", "RunPage", "TrialResult", "BuildWarning", "Finding"} <= names
    assert len(CLASSES) >= 80


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_every_frozen_class_is_declared_with_frozen(cls):
    """A plain ``@dataclass(frozen=True)`` would compile its methods again at every start-up."""
    code = frozen(type("Probe", (), {"__annotations__": {"a": int}})).__eq__.__code__
    assert cls.__eq__.__code__ is code, f"declare {cls.__qualname__} with @frozen"


def _twin(cls: type) -> type:
    """The same fields (flags included) declared by the standard library's frozen dataclass."""
    flds = dataclasses.fields(cls)
    ns = {
        "__annotations__": {f.name: f.type for f in flds},
        "__qualname__": cls.__qualname__,
        **{
            f.name: dataclasses.field(repr=f.repr, compare=f.compare, hash=f.hash, kw_only=True)
            for f in flds
        },
    }
    return dataclasses.dataclass(frozen=True)(type(cls.__name__, (), ns))


def _make(cls: type, values: dict) -> object:
    """An instance holding ``values`` (as unpickling builds it: no __init__/__post_init__ checks)."""
    obj = object.__new__(cls)
    obj.__dict__.update(values)
    return obj


def _values(cls: type, salt: int, nan: bool = False) -> dict:
    """Equal but not identical values for equal ``salt`` (tuples made anew; a new NaN)."""
    return {
        f.name: float("nan") if nan and i == 0 else (f"v{i}", salt, (i, f"x{i}"))
        for i, f in enumerate(dataclasses.fields(cls))
    }


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_every_frozen_class_behaves_as_a_standard_frozen_dataclass(cls):
    twin = _twin(cls)
    for nan in (False, True):
        values = [_values(cls, s, nan) for s in (1, 1, 2)]  # the twin holds the same objects
        a, b, c = (_make(cls, v) for v in values)
        ta, tb, tc = (_make(twin, v) for v in values)
        assert repr(a) == repr(ta) and repr(a).startswith(f"{cls.__qualname__}(")
        assert (a == a, a == b, a == c, a != b, a != c) == (
            ta == ta,
            ta == tb,
            ta == tc,
            ta != tb,
            ta != tc,
        )
        assert hash(a) == hash(ta) and hash(c) == hash(tc)
        assert (a == ta) is False and a.__eq__(ta) is NotImplemented  # never another class
    a, b, c = (_make(cls, _values(cls, s)) for s in (1, 1, 2))
    assert a == b and hash(a) == hash(b) and a is not b
    if dataclasses.fields(cls):
        assert a != c
        name = dataclasses.fields(cls)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(a, name, 0)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(a, name)
        assert getattr(a, name) == getattr(b, name)


def test_frozen_keeps_the_flags_and_what_the_class_writes_itself():
    @frozen(kw_only=True)
    class Point:
        x: float
        y: float = dataclasses.field(compare=False, repr=False)
        z: int = dataclasses.field(default=0, hash=False)

    p, q = Point(x=1.0, y=2.0, z=3), Point(x=1.0, y=5.0, z=4)
    assert (
        repr(p)
        == "test_frozen_keeps_the_flags_and_what_the_class_writes_itself.<locals>.Point(x=1.0, z=3)"
    )
    assert p != q and Point(x=1.0, y=9.0, z=3) == p  # y not compared
    assert hash(p) == hash(q) == hash((1.0,))  # z compared, but not hashed
    with pytest.raises(TypeError):
        Point(1.0, 2.0)  # type: ignore[misc]  # keyword-only
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 2.0  # type: ignore[misc]
    assert {p: 1}[Point(x=1.0, y=0.0, z=3)] == 1

    @frozen
    class Named:
        name: str

        def __repr__(self) -> str:
            return f"<{self.name}>"

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Named) and other.name.lower() == self.name.lower()

    assert repr(Named("A")) == "<A>" and Named("A") == Named("a")
    assert hash(Named("A")) == hash(("A",))  # eq written, hash not: dataclass's hash is added

    @frozen
    class Empty:
        pass

    assert Empty() == Empty() and hash(Empty()) == hash(()) and repr(Empty()).endswith("Empty()")


def test_a_recursive_repr_stops():
    @frozen
    class Box:
        items: list

    box = Box([])
    box.items.append(box)
    assert repr(box).endswith("Box(items=[...])")


def _std_twin(cls: type) -> type:
    """``cls``'s fields as declared (defaults, factories, init and kw_only included), made by
    the standard library's frozen dataclass."""
    flds = dataclasses.fields(cls)
    ns = {
        "__annotations__": {f.name: f.type for f in flds},
        "__qualname__": cls.__qualname__,
        "__module__": cls.__module__,
        "__doc__": cls.__dict__.get("__doc__")
        if not cls.__doc__.startswith(cls.__name__ + "(")
        else None,
        **{
            f.name: dataclasses.field(
                default=f.default,
                default_factory=f.default_factory,
                init=f.init,
                repr=f.repr,
                compare=f.compare,
                hash=f.hash,
                kw_only=f.kw_only,
            )
            for f in flds
        },
    }
    return dataclasses.dataclass(frozen=True)(type(cls.__name__, (), ns))


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_every_frozen_class_is_made_as_a_standard_frozen_dataclass(cls):
    """The same __init__ (parameters, defaults, annotations), docstring and parameters."""
    import inspect

    twin = _std_twin(cls)
    assert str(inspect.signature(cls.__init__)) == str(inspect.signature(twin.__init__))
    assert cls.__doc__ == twin.__doc__
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    assert (params.init, params.frozen, params.eq) == (True, True, False)


def test_frozen_init_sets_defaults_factories_and_runs_post_init():
    made: list[str] = []

    @frozen
    class Box:
        a: int
        b: list = dataclasses.field(default_factory=list)
        c: str = "c"
        d: dict = dataclasses.field(default_factory=dict, init=False)
        e: int = dataclasses.field(default=5, init=False)

        def __post_init__(self) -> None:
            made.append(f"{self.a}{self.c}")

    x, y = Box(1), Box(2, [3], c="z")
    assert (x.a, x.b, x.c, x.d, x.e) == (1, [], "c", {}, 5) and made == ["1c", "2z"]
    assert y.b == [3] and x.b is not Box(1).b and x.d is not Box(1).d  # a new one each time
    with pytest.raises(TypeError):
        Box()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Box(1, d={})  # type: ignore[call-arg]  # not an argument
    with pytest.raises(dataclasses.FrozenInstanceError):
        x.b = []  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del x.a
    assert x == Box(1) and x != Box(1, [0])

    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        @frozen
        class Bad:
            a: int = 0
            b: int  # type: ignore[misc]

    @frozen
    class Sub(Box):  # a frozen class's subclass: dataclass's own frozen machinery
        f: int = 0

    assert Sub(1, f=2).f == 2 and made[-1] == "1c"
    with pytest.raises(dataclasses.FrozenInstanceError):
        Sub(1).f = 3  # type: ignore[misc]


def test_frozen_refuses_an_initvar():
    with pytest.raises(TypeError, match="InitVar"):

        @frozen
        class WithInitVar:
            a: int
            b: dataclasses.InitVar[int]


def test_frozen_init_sees_its_module_and_keeps_dataclass_checks():
    """The __init__'s globals are its module's (its string hints resolve), a __hash__ = None
    the class writes stays, and a non-frozen dataclass base is refused, all as dataclass does."""
    import typing

    @frozen
    class Where:
        path: PurePath  # (a string here: from __future__ import annotations)

    hints = typing.get_type_hints(Where.__init__)
    assert hints == {"path": PurePath, "return": type(None)}

    @frozen
    class Unhashable:
        x: int
        __hash__ = None  # type: ignore[assignment]

    assert Unhashable.__hash__ is None and Unhashable(1) == Unhashable(1)

    @dataclasses.dataclass
    class Plain:
        x: int

    with pytest.raises(TypeError, match="non-frozen"):

        @frozen
        class OnPlain(Plain):
            y: int
