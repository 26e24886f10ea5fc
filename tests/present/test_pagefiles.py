"""present/pagefiles: the job page's per-step table body, written in one pass; trial tables made apart."""

from __future__ import annotations

import math

import jinja2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitegen.pages.sections import ProgressionRow
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


def test_a_run_page_sharing_its_jobs_figures_makes_the_files_made_apart(job_pages, run_pages):
    """PageFiles makes what a run page shares with its one job's page once (``_once``): the
    files are those two PageFiles, one per page, make; a run of several jobs shares nothing."""
    from msgspec.structs import replace

    from sitegen.present.pagefiles import PageFiles

    def html(template, rel, ctx, meta):  # (the context as the templates would get it)
        return f"{rel}index.html", repr(sorted(ctx.items())) + repr(meta)

    kinds = set()
    for run in run_pages.values():
        job = job_pages[run.jobs[0]]
        if len(run.jobs) == 1:  # as pages.run_page makes it: the job's very objects
            run = replace(run, series=job.series, metrics=job.metrics, timing=job.timing)
        kinds.add(len(run.jobs) == 1)
        both = PageFiles(html, {})
        shared = [both.job(job, run, None, None), both.run(run, None, None, None, None)]
        apart = [
            PageFiles(html, {}).job(job, run, None, None),
            PageFiles(html, {}).run(run, None, None, None, None),
        ]
        assert shared == apart
    assert kinds == {True, False}


def test_charts_made_from_shared_step_charts_are_the_charts_made_anew(job_pages, run_pages):
    from sitegen.present.chartsets import job_charts, run_charts, step_charts

    for page in job_pages.values():
        steps = step_charts(page.series, page.metrics, page.timing)
        assert job_charts(page, steps) == job_charts(page)
    restarts = 0
    for page in run_pages.values():
        steps = step_charts(page.series, page.metrics, page.timing)
        assert run_charts(page, steps) == run_charts(page)
        restarts += bool(page.restarts or page.discarded)
    assert restarts  # a run whose reward chart is its own (restarts, discarded steps)
