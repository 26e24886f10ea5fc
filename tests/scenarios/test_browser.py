"""What a reader sees: pages load in headless Chromium without errors, charts draw, the index sorts and
filters, anchors exist, the comparison selection survives a reload. Over HTTP from a subpath and from file://."""

from __future__ import annotations

import functools
import http.server
import math
import os
import shutil
import threading
from pathlib import Path

import pytest

from tests.chromium import CHROMIUM, without_charts

pytestmark = pytest.mark.browser

if not Path(CHROMIUM).exists():
    if os.environ.get("CI"):
        raise RuntimeError("CI must install Debian's chromium for the browser tests")
    pytest.skip("no chromium on this machine", allow_module_level=True)

from sitegen.present.formatting import (  # noqa: E402
    dur_unit,
    fixed,
    fmt_dur_in,
    fmt_num,
    fmt_pct,
    fmt_score,
)
from tests.conftest import JOB_SECTIONS, load, made_once  # noqa: E402

sync_api = pytest.importorskip("playwright.sync_api")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(site: Path):
    """Serve the site's parent folder, so the site lives at a subpath: /<name>/ like GitHub Pages."""
    handler = functools.partial(_Quiet, directory=str(site.parent))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/{site.name}/"
    httpd.shutdown()


@pytest.fixture(params=["http", "file"])
def base(request, server, site):
    return server if request.param == "http" else site.as_uri() + "/"


class Watched:
    """A page and the errors it shows: console errors, uncaught exceptions, failed requests
    and HTTP errors, from its listeners (removed by :meth:`stop`)."""

    def __init__(self, page):
        self.page = page
        self.errors: list[str] = []
        self._listeners = (
            ("console", lambda m: m.type == "error" and self.errors.append(m.text)),
            ("pageerror", lambda e: self.errors.append(str(e))),
            ("requestfailed", self._failed),
            (
                "response",
                lambda r: r.status >= 400 and self.errors.append(f"HTTP {r.status} {r.url}"),
            ),
        )
        for event, listener in self._listeners:
            page.on(event, listener)

    def stop(self) -> None:
        """Stop listening: the page goes on to another test (``browser_page``)."""
        for event, listener in self._listeners:
            self.page.remove_listener(event, listener)

    def _failed(self, request) -> None:
        # A reload or another address cuts short what the page was still fetching (the icon,
        # a picked run's curves.js): net::ERR_ABORTED is no error of the page. A missing file
        # still shows: an HTTP 404 below, and under file:// a failure other than an abort.
        if request.failure == "net::ERR_ABORTED":
            return
        self.errors.append(f"failed request {request.url}")

    def goto(self, url: str):
        self.page.goto(url)
        self.page.wait_for_load_state("load")
        self.wait_charts()

    def wait_charts(self):
        self.page.wait_for_function(
            "Array.from(document.querySelectorAll('.chart[data-chart]')).every("
            "el => el.getAttribute('data-rendered') === '1' || !el.closest('[hidden]') && el.id === 'overlay-chart' "
            "&& !document.querySelector('#compare-table tbody tr'))",
            timeout=20000,
        )

    def charts_with_marks(self) -> tuple[int, int]:
        return self.page.evaluate(
            """() => { const cs = Array.from(document.querySelectorAll('.chart[data-rendered="1"]'));
            const ok = cs.filter(c => c.querySelectorAll('g.mark-line path, g.mark-area path, g.mark-rect path, '
              + 'g.mark-symbol path, g.mark-rule line').length > 0);
            return [cs.length, ok.length]; }"""
        )


@pytest.fixture
def tab(browser_page):
    tab = Watched(browser_page)
    yield tab
    tab.stop()


def _ids(index):
    job = next(j for j in index["jobs"] if j["log"] == "exp-async/logs/async-run_561773.out")
    run = next(r for r in index["runs"] if job["id"] in r["jobs"])
    return job, run


def test_index_loads_sorts_and_filters(tab, base, index):
    """The index draws every run; at 1400 px its table needs no sideways scroll (its last
    column, the reward sparklines, in view: long headers wrap instead of widening their
    columns); it sorts, filters, and says when nothing matches."""
    tab.goto(base + "index.html")
    assert tab.errors == []
    page = tab.page
    assert page.viewport_size == {"width": 1400, "height": 1000}
    over = page.evaluate(
        "() => { const w = document.querySelector('.table-wrap'); return w.scrollWidth - w.clientWidth; }"
    )
    assert over <= 0, over
    assert page.locator("tbody.group").count() == len(index["runs"])
    spark = page.locator("td.spark polyline").count()
    assert spark >= len(index["runs"])
    # sort by reward mean, descending on the second click
    header = page.locator("th", has_text="reward mean")
    header.click()
    header.click()
    vals = page.eval_on_selector_all(
        "tbody.group > tr.run-row > td:nth-child(5)", "els => els.map(e => e.textContent)"
    )
    nums = [float(v.replace(",", "")) for v in vals if v != "–"]
    assert nums == sorted(nums, reverse=True) and len(nums) >= 3
    assert header.get_attribute("aria-sort") == "descending"
    # filter by a job name: only its run stays
    page.fill("#filter", "chain-b")
    visible = page.eval_on_selector_all("tbody.group", "els => els.filter(e => !e.hidden).length")
    assert visible == 1
    page.fill("#filter", "")
    page.select_option("#status-filter", "failed")
    visible = page.eval_on_selector_all("tbody.group", "els => els.filter(e => !e.hidden).length")
    # a run stays when it or one of its jobs failed
    failed_jobs = {j["run"] for j in index["jobs"] if j["status"] == "failed"}
    expected = {r["id"] for r in index["runs"] if r["status"] == "failed"} | failed_jobs
    assert visible == len(expected) >= 1
    assert page.locator("#no-match").is_hidden()
    # a filter nothing matches says so, and its button brings every run back
    page.fill("#filter", "no-such-run-zzzz")
    assert page.locator("#no-match").is_visible()
    page.click("#clear-filter")
    assert page.input_value("#filter") == "" and page.input_value("#status-filter") == ""
    visible = page.eval_on_selector_all("tbody.group", "els => els.filter(e => !e.hidden).length")
    assert visible == len(index["runs"]) and page.locator("#no-match").is_hidden()
    assert tab.errors == []


def test_job_page_charts_and_anchors(tab, base, index):
    job, _ = _ids(index)
    tab.goto(base + job["url"] + "index.html#vllm")
    assert tab.errors == []
    total, with_marks = tab.charts_with_marks()
    assert total >= 8 and with_marks == total
    for sec in JOB_SECTIONS:
        assert tab.page.locator(f"section#{sec}").count() == 1, sec
    # a number of the reference report is on the page: the job's reward mean
    assert f"{job['reward_mean']:.4f}" in tab.page.inner_text("#overview")
    # the "Vega-Lite spec" link is the embedded spec, made into a file in the browser
    spec = tab.page.evaluate(
        "() => fetch(document.querySelector('a[data-spec=reward]').href).then(r => r.json())"
    )
    assert spec["$schema"].endswith("v6.json") and spec["layer"]


def test_run_page(tab, base, site, index):
    """A run's page draws its charts and links its chain; its discarded first attempt,
    hovered, shows a tooltip whose figure is formatting.fixed's (on the same page load)."""
    from tests.conftest import page_specs

    _, run = _ids(index)
    tab.goto(base + run["url"] + "index.html")
    assert tab.errors == []
    total, with_marks = tab.charts_with_marks()
    assert total >= 3 and with_marks == total
    assert tab.page.locator("g.mark-rule line").count() >= 1  # restart marked
    assert tab.page.locator("g.mark-symbol path").count() >= 1  # discarded first attempts marked
    for jid in run["jobs"]:
        assert tab.page.locator(f"#chain a[href$='jobs/{jid}/index.html']").count() == 1
    # a chart's tooltip prints as the tables do
    marks = page_specs(site / run["url"] / "index.html")["reward"]["layer"][-1]["data"]["values"]
    tab.page.locator("[data-chart=reward] g.mark-symbol path").first.hover(force=True)
    tab.page.wait_for_selector("#vg-tooltip-element.visible")
    text = tab.page.inner_text("#vg-tooltip-element")
    assert text.split()[-1] == fixed(marks[0]["y"], 4, group=False), text
    assert tab.errors == []


@pytest.mark.no_charts
def test_a_page_without_charts_runs_its_own_script(tab, site, index):
    """What ``no_charts`` leaves out (tests/chromium.py) is Vega's drawing alone: every chart
    of a job page still goes through the page's script (its spec link made, the chart
    marked drawn when the embed resolves), none holds an SVG, and nothing fails."""
    job, _ = _ids(index)
    tab.goto(site.as_uri() + "/" + job["url"] + "index.html")
    total, with_marks = tab.charts_with_marks()
    drawn = tab.page.eval_on_selector_all(
        ".chart[data-rendered='1']", "els => els.map(e => e.dataset.chart)"
    )
    specs = tab.page.evaluate(
        """() => { const specs = JSON.parse(document.getElementById('chart-specs').text);
          return Array.from(document.querySelectorAll('.chart[data-chart]'))
            .map(e => e.dataset.chart).filter(name => specs[name]); }"""
    )
    assert total >= 8 and with_marks == 0 and drawn == specs
    assert tab.page.locator(".chart svg").count() == 0
    links = tab.page.eval_on_selector_all(
        "a[data-spec]",
        "els => els.filter(a => a.href.startsWith('blob:')).map(a => a.dataset.spec)",
    )
    assert sorted(links) == sorted(drawn)
    assert tab.errors == []


def test_a_page_handed_back_is_left_as_a_new_one(browser_page, site):
    """``SharedChromium.release`` (tests/chromium.py) leaves the shared page as a new one
    of its kind: a blank document, its size, the light scheme (a test that emulates the
    dark one or a phone's width leaves neither to the next)."""
    from tests.conftest import _chromium

    page = browser_page
    page.emulate_media(color_scheme="dark")
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto(site.as_uri() + "/index.html")
    _chromium.release(page)
    assert _chromium.page() is page  # (handed on: the fixture hands it back again)
    assert page.url == "about:blank"
    assert page.viewport_size == {"width": 1400, "height": 1000}
    assert not page.evaluate("() => matchMedia('(prefers-color-scheme: dark)').matches")


def test_compare_selection_survives_reload(tab, base, site, index):
    tab.goto(base + "index.html")
    page = tab.page
    runs = index["runs"][:2]
    for r in runs:
        page.check(f"input.pick[data-kind=run][data-id='{r['id']}']")
    page.click("#compare-btn")
    page.wait_for_load_state("load")
    assert "runs=" in page.url
    tab.wait_charts()
    assert page.locator("#compare-table tbody tr").count() == 2
    assert tab.charts_with_marks() == [1, 1]
    without_charts(page)  # (what is read after the reload is the table and the spec, not marks)
    page.reload()
    page.wait_for_load_state("load")
    tab.wait_charts()
    names = page.eval_on_selector_all(
        "#compare-table tbody tr td:first-child a", "els => els.map(e => e.textContent)"
    )
    assert names == [f"run {r['id']}" for r in runs]
    # the staleness column: mean, and the worst step's staleness beside it where logged
    stale = page.eval_on_selector_all(
        "#compare-table tbody tr td:nth-child(12)", "els => els.map(e => e.textContent)"
    )
    times = page.eval_on_selector_all(
        "#compare-table tbody tr td:nth-child(8)", "els => els.map(e => e.textContent)"
    )
    # step time as the run pages print a column of them: one unit, named in the header
    unit = dur_unit(r["headline"]["step_time_mean_s"] for r in runs)
    assert page.text_content("#compare-table th:nth-child(8)") == f"step time ({unit})"
    for r, cell in zip(runs, times, strict=True):
        assert cell == fmt_dur_in(r["headline"]["step_time_mean_s"], unit), cell
    for r, cell in zip(runs, stale, strict=True):
        worst = r["headline"]["staleness_max"]
        if worst is None:
            assert "max" not in cell
        else:  # (no mean: "– (max 3)")
            assert cell.endswith(f" (max {worst:,.0f})"), cell
    spec = page.evaluate(
        "() => fetch(document.querySelector('a[data-spec=overlay]').href).then(r => r.json())"
    )
    assert {v["name"] for v in spec["data"]["values"]} == {f"run {r['id']}" for r in runs}
    # each finding's detail is its tooltip, come with the pick's curves.js
    tips = page.eval_on_selector_all(
        "#compare-findings tbody tr",
        "trs => trs.map(tr => Array.from("
        "tr.querySelectorAll('.finding')).map(d => [d.querySelector('a').textContent, d.title]))",
    )
    want = [[[f["title"], f["detail"]] for f in load(site, r["data"])["findings"]] for r in runs]
    assert tips == want and any(want)
    assert tab.errors == []


@pytest.mark.no_charts
def test_compare_lines_up_a_late_start(tab, base, index):
    """A pick whose log starts late (a resumed job) and one from step 1: "from each pick's first
    step" counts both from 0, and the choice survives in the address."""
    late = next(j for j in index["jobs"] if (j["first_step"] or 0) > 1)
    early = next(j for j in index["jobs"] if j["first_step"] == 1)
    tab.goto(base + f"compare/index.html?jobs={late['id']},{early['id']}&x=since")
    page = tab.page
    tab.wait_charts()
    assert page.input_value("#x-select") == "since"
    spec = page.evaluate(
        "() => fetch(document.querySelector('a[data-spec=overlay]').href).then(r => r.json())"
    )
    firsts: dict[str, int] = {}
    for v in spec["data"]["values"]:
        firsts[v["name"]] = min(firsts.get(v["name"], 10**9), v["step"])
    assert firsts == {f"job {late['id']}": 0, f"job {early['id']}": 0}
    assert spec["encoding"]["x"]["title"] == "steps after the pick's first step"
    page.select_option("#x-select", "step")
    assert "x=since" not in page.evaluate("location.search")
    spec = page.evaluate(
        "() => fetch(document.querySelector('a[data-spec=overlay]').href).then(r => r.json())"
    )
    steps = [v["step"] for v in spec["data"]["values"] if v["name"] == f"job {late['id']}"]
    assert min(steps) == late["first_step"]
    assert tab.errors == []


@pytest.mark.no_charts
def test_compare_says_which_picks_it_does_not_have(tab, base, index):
    run = index["runs"][0]["id"]
    tab.goto(base + f"compare/index.html?runs=no-such-run,{run}")
    page = tab.page
    tab.wait_charts()
    assert page.locator("#missing-note").is_visible()
    assert "run no-such-run" in page.text_content("#missing-note")
    assert page.locator("#compare-table tbody tr").count() == 1
    assert tab.errors == []


@pytest.mark.no_charts
def test_compare_lines_up_picks_whose_steps_do_not_overlap(tab, base, index):
    """Without an x= choice, a pick starting after another ended is counted from its first
    step; picks that overlap stay as logged."""
    jobs = {j["id"]: j for j in index["jobs"]}
    first = min(
        (j for j in jobs.values() if j["first_step"] == 1 and j["last_step"]),
        key=lambda j: j["last_step"],
    )
    late = next((j for j in jobs.values() if (j["first_step"] or 0) > first["last_step"]), None)
    if late is None:
        pytest.skip("no job in the sample starts after another ended")
    tab.goto(base + f"compare/index.html?jobs={first['id']},{late['id']}")
    tab.wait_charts()
    assert tab.page.input_value("#x-select") == "since"
    # a default, not a choice in the address
    assert "x=since" not in tab.page.evaluate("location.search")
    assert tab.errors == []


# -- an index holding only the newest runs (a team archive's, in small) ------------------------

# Each cell as a reader (and the sort) sees it: class, sort value, tooltip, text, links (with
# their markup: an id may break after its dots), picks.
CELLS = """els => els.map(g => Array.from(g.rows).map(tr => Array.from(tr.cells).map(td => [
  td.className, td.getAttribute('data-v'), td.getAttribute('title'),
  td.textContent.replace(/\\s+/g, ' ').trim(),
  Array.from(td.querySelectorAll('a')).map(a => [a.getAttribute('href'), a.className, a.title, a.innerHTML]),
  Array.from(td.querySelectorAll('input')).map(i => [i.dataset.kind, i.dataset.id, i.getAttribute('aria-label')]),
  Array.from(td.querySelectorAll('polyline')).map(p => p.getAttribute('points'))])))"""


@pytest.fixture(scope="module")
def partial(archive: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """A site whose index holds 4 rows (3 or 4 runs): the rest come from index-rows.js."""
    import time

    from sitegen.commands.build import build
    from sitegen.options import BuildOptions
    from sitegen.present import listing

    def make(folder: Path) -> None:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(listing, "INDEX_ROWS", 4)
            build(BuildOptions(archive=archive, out=folder / "site", workers=1, now=time.time()))

    out = made_once(tmp_path_factory, "partial", make) / "site"
    html = (out / "index.html").read_text()
    return out, html.count('<tbody class="group"')


def test_partial_index_draws_every_row_as_the_page_does(tab, partial, index):
    site, shown = partial
    assert 1 <= shown < len(index["runs"])
    tab.goto(site.as_uri() + "/index.html")
    page = tab.page
    assert page.locator("tbody.group").count() == shown
    assert page.is_visible("#more-rows") and page.is_visible("#all-rows-btn")
    assert page.text_content("#row-count") == f"{shown} of {len(index['runs'])} runs shown"
    page.check("tbody.group:first-of-type input.pick[data-kind=run]")
    before = page.eval_on_selector_all("tbody.group", CELLS)
    page.click("#all-rows-btn")
    page.wait_for_function(
        f"document.querySelectorAll('tbody.group').length === {len(index['runs'])}"
    )
    after = page.eval_on_selector_all("tbody.group", CELLS)
    # the script draws the page's rows cell for cell, in the same order, the pick kept
    assert after[:shown] == before
    assert page.is_checked("tbody.group:first-of-type input.pick[data-kind=run]")
    assert not page.is_visible("#more-rows")
    assert page.locator("td.spark polyline").count() >= len(index["runs"])
    # every id, the page's and the script's, may break after a dot and reads as the id
    names = page.eval_on_selector_all(
        "td.name > a:not(.joblink)", "els => els.map(a => [a.textContent, a.innerHTML])"
    )
    assert len(names) > len(index["runs"]) and any("." in text for text, _ in names)
    assert all(html == text.replace(".", ".<wbr>") for text, html in names)
    assert tab.errors == []


def test_partial_index_filters_and_sorts_every_run(tab, partial, index):
    site, shown = partial
    tab.goto(site.as_uri() + "/index.html")
    page = tab.page
    html_ids = page.eval_on_selector_all(
        "tbody.group input.pick[data-kind=run]", "els => els.map(e => e.dataset.id)"
    )
    hidden_run = next(r for r in index["runs"] if r["id"] not in html_ids)
    page.fill("#filter", hidden_run["jobs"][-1].lower())  # a job's name finds its run
    page.wait_for_function(
        f"document.querySelectorAll('tbody.group').length === {len(index['runs'])}"
    )
    visible = page.eval_on_selector_all(
        "tbody.group",
        "els => els.filter(e => !e.hidden).map(e => e.querySelector('input').dataset.id)",
    )
    assert hidden_run["id"] in visible
    page.fill("#filter", "")
    header = page.locator("th", has_text="reward mean")
    header.click()
    vals = page.eval_on_selector_all(
        "tbody.group > tr.run-row > td:nth-child(5)", "els => els.map(e => e.textContent)"
    )
    nums = [float(v.replace(",", "")) for v in vals if v != "–"]
    assert len(vals) == len(index["runs"]) and nums == sorted(nums)
    assert tab.errors == []


def test_a_phone_sees_whole_legends_and_the_names_beside_the_figures(tab, site, index):
    """At a phone's width (390 px): every legend label of a job page's charts lies inside
    its chart (a timing stack's columns of timers ran past the chart's edge), the comparison
    picker's names keep their words, and the index's run names stay in view when its table
    is scrolled to the figures."""
    tab.page.set_viewport_size({"width": 390, "height": 800})
    job, _ = _ids(index)
    tab.goto(site.as_uri() + "/" + job["url"] + "index.html")
    assert tab.errors == []
    out = tab.page.evaluate(
        """() => Array.from(document.querySelectorAll('.chart[data-rendered="1"]')).flatMap(c => {
          const box = c.querySelector('svg').getBoundingClientRect();
          return Array.from(c.querySelectorAll('.role-legend-label text'))
            .filter(t => t.getBoundingClientRect().right > box.right + 0.5)
            .map(t => c.dataset.chart + ': ' + t.textContent); })"""
    )
    assert out == []
    cols = tab.page.evaluate(
        """() => JSON.parse(document.getElementById('chart-specs').textContent)
          .timing_stack.encoding.color.legend.columns"""
    )
    assert cols > 1  # (the embedded spec keeps its columns: only the drawing fits them)
    # the comparison chart's legend: every pick's name whole, inside the chart
    runs = ",".join(r["id"] for r in index["runs"][:3])
    tab.goto(f"{site.as_uri()}/compare/index.html?runs={runs}")
    labels = tab.page.evaluate(
        """() => { const c = document.getElementById('overlay-chart');
          const box = c.querySelector('svg').getBoundingClientRect();
          return Array.from(c.querySelectorAll('.role-legend-label text')).map(t =>
            [t.textContent, t.getBoundingClientRect().right <= box.right + 0.5]); }"""
    )
    assert sorted(t for t, _ in labels) == sorted(f"run {r['id']}" for r in index["runs"][:3])
    assert all(inside for _, inside in labels), labels
    # the picker's names stay whole words, not a letter a line beside the run's figures
    tall = tab.page.evaluate(
        """() => Array.from(document.querySelectorAll('.picker .pick-name')).filter(n =>
          n.getBoundingClientRect().height > 2.5 * parseFloat(getComputedStyle(n).lineHeight))
          .map(n => n.textContent)"""
    )
    assert tall == []
    tab.goto(site.as_uri() + "/index.html")
    page = tab.page
    page.evaluate("() => { document.querySelector('.table-wrap').scrollLeft = 300; }")
    name = page.locator("tbody.group > tr.run-row td.name").first.bounding_box()
    assert name is not None and name["x"] >= 0 and name["x"] + name["width"] <= 390


def test_a_phone_sees_every_kind_beside_long_exception_names(browser_page, tmp_path):
    """The exceptions chart's legend of kinds starts where its bars do, right of the
    exceptions' names: at a phone's width its four kinds go in columns (the last ran past the
    chart's edge, "other" cut off), and at a desktop's they stay on one row."""
    from sitegen.jsonio import script_json
    from sitegen.present import charts

    names = ["none", "AgentTimeoutError", "DaytonaAuthenticationError", "AgentSetupTimeoutError"]
    counts = [
        {"label": n, "value": 40 // (i + 1), "kind": k}
        for i, (n, k) in enumerate(
            zip(names, ["none", "model", "infrastructure", "other"], strict=True)
        )
    ]
    spec = charts.bars(counts, "exception", "trials", "kind", "kinds", horizontal=True)
    static = Path(__file__).resolve().parents[2] / "static"
    page = tmp_path / "exceptions.html"
    page.write_text(
        f"<!doctype html><link rel='stylesheet' href='{(static / 'style.css').as_uri()}'>"
        "<main><figure class='chart-box'><div class='chart' data-chart='x'></div></figure></main>"
        f"<script type='application/json' id='chart-specs'>{script_json({'x': spec})}</script>"
        f"<script src='{(static / 'vendor/vega-bundle.js').as_uri()}'></script>"
        f"<script src='{(static / 'site.js').as_uri()}'></script>"
        "<script>sitegen.drawCharts();</script>"
    )
    tab = browser_page
    for width, rows in ((360, 4), (1300, 1)):
        tab.set_viewport_size({"width": width, "height": 800})
        tab.goto(page.as_uri())
        tab.wait_for_selector(".chart[data-rendered='1'] svg", state="attached")
        labels = tab.evaluate(
            """() => { const box = document.querySelector('.chart svg').getBoundingClientRect();
              return Array.from(document.querySelectorAll('.role-legend-label text')).map(t => {
                const r = t.getBoundingClientRect();
                return [t.textContent, r.right <= box.right + 0.5, Math.round(r.top)]; }); }"""
        )
        assert [t for t, _, _ in labels] == ["none", "model", "infrastructure", "other"]
        assert all(inside for _, inside, _ in labels), (width, labels)
        assert len({top for _, _, top in labels}) == rows, (width, labels)


# -- one rounding rule in the pages and in the script --------------------------------------------

# Ties of the shortest decimal (0.37075, 0.125, 2.5) either side of zero, a tie whose binary
# value lies below it (1.005, 2.675), zeros, the scientific edges (1e-7, 1e9), large
# integers as floats, non-numbers.
TRICKY = [0.37075, 0.37074999999999997, 0.125, -0.125, 2.5, -2.5, 0.5, 1.5, 0.0, -0.0, 1e-7, -1e-7,
          5e-5, 9.9996e-5, 1.005, -1.005, 2.675, 0.0005, 0.045, 999.99995, 0.999995, 1e9,
          999999999.99996, 123456789.5, 2.0**53, 1e21, 1.5e300, 5e-324, 0.1 + 0.2, 1 / 3,
          725.0, 433.01274, 81.25 / 100, float("nan"), float("inf"), float("-inf")]  # fmt: skip


def _numbers() -> list[float]:
    import random

    rng = random.Random(34)
    out = list(TRICKY)
    for _ in range(1500):
        out.append(rng.choice((-1, 1)) * 10 ** rng.uniform(-9, 12))
        out.append(float(f"{rng.randrange(-(10**8), 10**8)}5e-{rng.randrange(1, 10)}"))  # a tie
        out.append(float(rng.randrange(-(10**6), 10**6)))
    return out


def test_the_script_rounds_as_the_pages_do(tab, site):
    """static/site.js's formatters (the task rows it draws) and formatting.py's print the
    same text for every value: ties, signs, zeros, tiny and huge numbers, nan and ±inf."""
    tab.goto(site.as_uri() + "/index.html")
    values = _numbers()
    got = tab.page.evaluate(
        """(vs) => { const f = sitegen.format;
          return vs.map(v => [0, 1, 2, 4, 6].map(d => f.num(v, d))
            .concat([f.score(v), f.pct(v), f.pct(v, 0), f.pct(v, 2)])); }""",
        values,
    )
    want = [
        [fmt_num(v, d) for d in (0, 1, 2, 4, 6)]
        + [fmt_score(v), fmt_pct(v), fmt_pct(v, 0), fmt_pct(v, 2)]
        for v in values
    ]
    wrong = [(v, g, w) for v, g, w in zip(values, got, want, strict=True) if g != w]
    assert wrong == []
    # a column of durations (the comparison table's): its unit, and each value in every unit
    seconds = [*values, None, 119.99, 120.0, 35999.9, 36000.0, 0.0499, 0.05, 0.3, 17.9, 18.0]
    durs = tab.page.evaluate(
        """(vs) => { const f = sitegen.format;
          return vs.map(v => [f.durUnit([1, v]), f.durIn(v, 's'), f.durIn(v, 'min'), f.durIn(v, 'h')]); }""",
        seconds,
    )
    in_units = [[dur_unit([1, v]), *(fmt_dur_in(v, u) for u in ("s", "min", "h"))] for v in seconds]
    assert [(v, g, w) for v, g, w in zip(seconds, durs, in_units, strict=True) if g != w] == []
    assert want[0][3] == "0.3708" and want[TRICKY.index(1.005)][2] == "1.01"
    assert want[TRICKY.index(-0.0)][3] == "0.0000" and want[TRICKY.index(1e-7)][3] == "1.000e-07"
    # the charts' tooltips: ".4f" and ",.2f" drawn by the same rule
    finite = [v for v in values if math.isfinite(v)]
    tips = tab.page.evaluate(
        "(vs) => vs.map(v => [sitegen.format.vegaFixed(v, '.4f'), sitegen.format.vegaFixed(v, ',.2f')])",
        finite,
    )
    assert tips == [[fixed(v, 4, group=False), fixed(v, 2)] for v in finite]
    ints = [0, 7, -7, 999, 1000, -1234567, 2**53]
    counts = tab.page.evaluate("(vs) => vs.map(v => sitegen.format.count(v))", ints)
    assert counts == [fmt_num(n) for n in ints]
    assert tab.errors == []


# -- the comparison page's picker at team scale -----------------------------------------------------

TEAM_RUNS = 500


@pytest.fixture(scope="module")
def team_compare(site: Path, index: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample's site with a comparison list of 500 runs (every fifth of three jobs), made
    by listing.compare_items from synthetic items: the picker as a team archive fills it.
    Run n's step time is n²/2 s, its generation wait 1.5·n s.
    Each item's folder is one of the sample's runs (its curves load; they are not drawn)."""
    from sitegen.pages.objects import CompareItem, Headline
    from sitegen.present.listing import compare_items
    from sitegen.present.pagefiles import script_data

    out = tmp_path_factory.mktemp("team-compare") / "site"
    shutil.copytree(site, out)
    url = index["runs"][0]["url"]
    statuses = ["complete", "running", "cancelled", "failed"]
    items, chains = [], []

    def item(kind: str, name: str, n: int) -> CompareItem:
        h = dict.fromkeys(Headline.__struct_fields__) | {
            "steps": 10 + n % 7,
            "reward_mean": n / 1000,
            # from seconds to a day: a column of them spans units (run 1 has none)
            "step_time_mean_s": n * n / 2 if n != 1 else None,
            "gen_wait_mean_s": n * 1.5,
        }
        return CompareItem.from_json(
            {
                "kind": kind,
                "id": name,
                "url": url,
                "status": statuses[n % 4],
                "headline": h,
                "trial_success_rate": None,
                "trial_error_rate": None,
                "findings": [],
                "tasks": None,
                "last_activity": f"2026-03-{1 + n % 28:02d}T{n % 24:02d}:00:00",
                "config": {},
            }  # fmt: skip
        )

    for n in range(TEAM_RUNS):
        run = f"team.sweep-{n:04d}"
        jobs = [f"{run}.attempt-{a}" for a in range(3 if n % 5 == 0 else 1)]
        items.append(item("run", run, n))
        items += [item("job", j, n) for j in jobs]
        chains.append((run, jobs))
    (out / "compare" / "items.js").write_text(
        script_data("compare-items", compare_items(items, chains)), encoding="utf-8"
    )
    return out


@pytest.mark.no_charts
def test_the_picker_finds_and_keeps_picks_among_500_runs(tab, team_compare):
    """Among 500 runs the picker shows one line a run (its jobs below it when it has
    several), filters by name and status as the index does, is worked from the keyboard, and
    keeps what is picked in the address across a reload."""
    page = tab.page
    page.goto(team_compare.as_uri() + "/compare/index.html")  # (its curves are not drawn)
    page.wait_for_load_state("load")
    groups = "#picker > li.pick-group"
    shown = "els => els.filter(e => !e.hidden).length"
    assert page.locator(groups).count() == TEAM_RUNS
    assert page.text_content("#pick-count") == f"{TEAM_RUNS} of {TEAM_RUNS} runs shown"
    assert page.locator("#picker input.pick").count() == TEAM_RUNS + 3 * (TEAM_RUNS // 5)
    # by name: a job's name finds its run; by status, as on the index
    page.fill("#pick-filter", "sweep-0420.attempt-2")
    assert page.eval_on_selector_all(groups, shown) == 1
    assert page.text_content("#pick-count") == f"1 of {TEAM_RUNS} runs shown"
    page.fill("#pick-filter", "")
    page.select_option("#pick-status", "failed")
    assert page.eval_on_selector_all(groups, shown) == TEAM_RUNS // 4
    page.select_option("#pick-status", "")
    page.fill("#pick-filter", "no-such-run")
    assert page.is_visible("#pick-no-match")
    page.click("#pick-clear-filter")
    assert page.eval_on_selector_all(groups, shown) == TEAM_RUNS
    # the keyboard: type, arrow down into the list, space picks; down again to its job
    assert page.locator("#picked-list .chip").count() == 5  # (the newest runs, until one picks)
    page.click("#clear-btn")
    page.fill("#pick-filter", "sweep-0420")
    page.focus("#pick-filter")
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.id") == "team.sweep-0420"
    page.keyboard.press("Space")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.id") == "team.sweep-0420.attempt-1"
    page.keyboard.press("Space")
    search = "() => location.search"  # (page.url follows replaceState only later)
    assert page.evaluate(search) == "?runs=team.sweep-0420&jobs=team.sweep-0420.attempt-1"
    page.fill("#pick-filter", "sweep-0007")
    page.check("input.pick[data-id='team.sweep-0007']")
    assert page.evaluate(search).startswith("?runs=team.sweep-0420,team.sweep-0007&")
    assert page.locator("#compare-table tbody tr").count() == 3
    # kept across a reload: ticked in the list, listed above it, in the table
    page.reload()
    page.wait_for_load_state("load")
    assert page.is_checked("input.pick[data-id='team.sweep-0007']")
    assert page.is_checked("input.pick[data-id='team.sweep-0420.attempt-1']")
    chips = page.eval_on_selector_all(
        "#picked-list .chip", "els => els.map(e => e.getAttribute('aria-label'))"
    )
    assert chips == [  # (in the address's order: runs, then jobs)
        "Drop run team.sweep-0420",
        "Drop run team.sweep-0007",
        "Drop job team.sweep-0420.attempt-1",
    ]
    # a pick's button drops it, and the keyboard stays on the buttons
    page.focus("#picked-list .chip")
    page.keyboard.press("Enter")
    assert page.evaluate(search) == "?runs=team.sweep-0007&jobs=team.sweep-0420.attempt-1"
    assert page.evaluate("document.activeElement.className") == "chip"
    assert not page.is_checked("input.pick[data-id='team.sweep-0420']")
    # the table prints what compare_items printed: reward 0.0070 (not 0.007)
    cells = page.eval_on_selector_all(
        "#compare-table tbody tr td:nth-child(4)", "els => els.map(e => e.textContent)"
    )
    assert cells == ["0.0070", "0.4200"]
    assert tab.errors == []


@pytest.mark.no_charts
def test_a_compared_duration_column_is_in_one_unit_over_the_picks(tab, team_compare):
    """The comparison table's step times and generation waits: each column in one unit over
    the rows picked (as formatting.dur_unit picks it), named in its header, each cell a bare
    number in it, by formatting.fmt_dur_in's rounding; dropping the longest pick changes the
    unit of the rows left."""
    page = tab.page
    picked = [1, 3, 7, 420]  # step times: none, 4.5 s, 24.5 s, 24.5 h
    runs = ",".join(f"team.sweep-{n:04d}" for n in picked)
    page.goto(team_compare.as_uri() + f"/compare/index.html?runs={runs}")
    page.wait_for_load_state("load")

    def column(at: int) -> tuple[str, list[str]]:
        head = page.text_content(f"#compare-table th:nth-child({at})")
        cells = page.eval_on_selector_all(
            f"#compare-table tbody tr td:nth-child({at})", "els => els.map(e => e.textContent)"
        )
        return head, cells

    def expect(label: str, seconds: list[float | None]) -> tuple[str, list[str]]:
        unit = dur_unit(seconds)
        return f"{label} ({unit})", [fmt_dur_in(s, unit) for s in seconds]

    step = [None if n == 1 else n * n / 2 for n in picked]
    wait = [n * 1.5 for n in picked]
    assert (
        column(8)
        == expect("step time", step)
        == ("step time (h)", ["–", "< 0.01", "0.01", "24.50"])
    )
    assert (
        column(9)
        == expect("gen wait", wait)
        == ("gen wait (min)", ["0.03", "0.08", "0.18", "10.50"])
    )
    page.click("#picked-list .chip[title='drop run team.sweep-0420']")
    assert column(8) == ("step time (s)", ["–", "4.5", "24.5"])
    assert column(9) == ("gen wait (s)", ["1.5", "4.5", "10.5"])
    assert tab.errors == []
