"""jsonio: strict JSON out, and ``clean`` (the page copy the templates see)."""

from __future__ import annotations

import math
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.jsonio import clean


def _slow_clean(obj: Any) -> Any:
    """The straightforward copy-everything ``clean`` the fast one must equal."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _slow_clean(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_slow_clean(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_slow_clean(v) for v in obj)
    if isinstance(obj, msgspec.Struct):
        return type(obj)(**{n: _slow_clean(getattr(obj, n)) for n in obj.__struct_fields__})
    return obj


class _Leaf(msgspec.Struct, frozen=True):
    value: float | None
    values: tuple


class _Page(msgspec.Struct, frozen=True):
    name: str
    series: dict
    leaves: tuple
    extra: Any = None


class _Float(float):
    pass


class _Dict(dict):
    pass


CASES = [
    1.0,
    math.nan,
    -math.inf,
    [1.0, 2, True, 3.5],
    [1.0, math.nan, 2.0],
    [1e308, 1e308],  # finite values whose sum overflows: checked one by one
    [10**400, 1],  # an int too big for a float
    (math.inf, -math.inf),
    ["a", None, 1.0],
    [[1.0, math.nan], [2.0]],
    {"step": [1, 2, 3], "reward": [0.5, math.nan, 0.7], "name": "x"},
    {"a": {"b": [{"c": math.inf}]}},
    [_Float(math.nan), _Float(1.5)],
    _Dict(a=math.nan, b=1.0),
    _Dict(a=1.0),
    {1, 2},
    _Page("p", {"step": [1, 2], "y": [1.0, 2.0]}, (_Leaf(1.0, (1.0,)),)),
    _Page("p", {"y": [1.0, math.nan]}, (_Leaf(math.nan, ()), _Leaf(2.0, (math.inf, 1)))),
    _Page("p", {}, (), extra=_Leaf),  # a Struct type is not a page object
    [],
    (),
    {},
    # columns with gaps (None), summed without them
    [None, 1.0, None, 2, True],
    [None, math.nan, 1.0],
    (None, -math.inf),
    [None, "a", 1.0],
    [None, 1e308, 1e308],
    [None, 10**400, 1.0],
    [None, [math.nan]],
    [None, _Float(math.inf)],
    [None, _Leaf(math.nan, ())],
    [None],
]


@pytest.mark.parametrize("obj", CASES, ids=range(len(CASES)))
def test_clean_equals_the_copy_everything_version(obj: Any) -> None:
    got, want = clean(obj), _slow_clean(obj)
    assert type(got) is type(want)
    assert got == want  # cleaned: no nan left to compare unequal
    assert repr(got) == repr(want)  # same kinds inside too (1 vs 1.0, list vs tuple)


def test_clean_leaves_finite_data_uncopied_and_copies_what_it_changes() -> None:
    col = [1.0, 2.0, 3.0]
    page = _Page("p", {"y": col}, (_Leaf(1.0, ()),))
    assert clean(page) is page  # nothing to replace: no copy at all
    bad = _Page("p", {"y": col, "z": [math.nan]}, (_Leaf(1.0, ()),))
    out = clean(bad)
    assert out is not bad and out.series["z"] == [None] and bad.series["z"][0] != 0
    assert out.series["y"] is col and out.leaves is bad.leaves  # untouched parts are shared


ITEMS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),  # nan and ±inf included
    st.sampled_from([1e308, -1e308, 10**400, "x", "", _Float(math.nan), _Float(2.0)]),
)
COLUMNS = st.recursive(
    st.lists(ITEMS, max_size=8), lambda inner: st.lists(inner | ITEMS, max_size=4), max_leaves=20
)


@settings(max_examples=150, deadline=None)
@given(st.one_of(COLUMNS, COLUMNS.map(tuple)))
def test_clean_of_any_column_equals_the_copy_everything_version(col: Any) -> None:
    got, want = clean(col), _slow_clean(col)
    assert repr(got) == repr(want)
    if repr(want) == repr(col):  # nothing to replace: the column itself
        assert got is col
