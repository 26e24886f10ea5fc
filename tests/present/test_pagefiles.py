"""present/pagefiles: the job page's per-step table body, written in one pass; trial tables made apart."""

from __future__ import annotations

import math

import jinja2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitegen.model.sections import ProgressionRow
from sitegen.present.formatting import fmt_num
from sitegen.present.pagefiles import TableSlot, content, progression_tbody, resolve

# The template's loop it replaces, as templates/job.html had it.
LOOP = (
    "{% for r in progression_rows %}<tr><td>{{ r.step }}</td><td>{{ r.reward|num }}</td>"
    "<td>{{ r.pass_at_k|num }}</td><td>{{ r.kl|num(6) }}</td><td>{{ r.loss|num }}</td>"
    "<td>{{ r.step_time|num(1) }}</td><td>{{ r.gen_wait|num(1) }}</td></tr>{% endfor %}"
)

VALUES = st.one_of(
    st.none(),
    st.floats(),
    st.integers(-(10**13), 10**13),
    st.booleans(),
    st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e-7, 123456.5, 2e12, "<b>&"]),
)


def _loop(rows: list[ProgressionRow]) -> str:
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["num"] = fmt_num
    return env.from_string(LOOP).render(progression_rows=rows)


@given(st.lists(st.tuples(st.integers(0, 10**6), *[VALUES] * 6), max_size=8))
def test_the_table_body_is_what_the_template_loop_wrote(cells):
    rows = [ProgressionRow(*c) for c in cells]
    assert str(progression_tbody(rows)) == _loop(rows)


@given(VALUES | st.text(max_size=4), st.sampled_from([0, 1, 4, 6]))
def test_fmt_num_writes_nothing_html_would_read_as_markup(v, digits):
    assert not set(fmt_num(v, digits)) & set("<>&'\"")


def test_a_table_made_elsewhere_fills_its_slot_and_an_empty_slot_is_never_written() -> None:
    files = [("runs/r/data.json", "{}"), ("runs/r/trials.csv.gz", TableSlot(1)), ("x", b"y")]
    made = [b"other", b"table"]
    assert resolve(files, made) == [
        ("runs/r/data.json", "{}"),
        ("runs/r/trials.csv.gz", b"table"),
        ("x", b"y"),
    ]
    assert [content(c) for _, c in resolve(files, made)] == ["{}", b"table", b"y"]
    with pytest.raises(TypeError, match="never made"):
        content(TableSlot(0))
