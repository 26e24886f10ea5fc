"""A site everyone can read: axe-core finds no serious or critical violation on the index (whole or
holding the newest runs), a job, a run,
the runs list and the compare page (with a selection), in light and dark; every chart has a text alternative.

axe-core is vendored (tests/vendor/axe.min.js, axe-core 4.14.1 from npm, MPL-2.0, its licence header
kept): the test runs offline and pins the rules it checks. Refresh with
`npm pack axe-core@4 && tar -xOzf axe-core-*.tgz package/axe.min.js > tests/vendor/axe.min.js`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

# the browser and server fixtures; over HTTP, as axe reads the stylesheets (file:// forbids it)
from tests.scenarios.test_browser import Watched, _Quiet, browser, partial, server  # noqa: F401

pytestmark = pytest.mark.browser
AXE = (Path(__file__).resolve().parents[1] / "vendor" / "axe.min.js").read_text(encoding="utf-8")
# WCAG 2.1 A and AA and axe's best practices; serious and critical impacts fail the test.
RUN = """() => axe.run(document, {
  runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']},
  resultTypes: ['violations'],
}).then(r => r.violations.map(v => ({id: v.id, impact: v.impact,
  nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ': ' + n.failureSummary)})))"""


@pytest.fixture(params=["light", "dark"])
def scheme_tab(request, browser):  # noqa: F811
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, color_scheme=request.param)
    page = ctx.new_page()
    yield Watched(page)
    ctx.close()


def _violations(tab: Watched) -> list[dict]:
    tab.page.add_script_tag(content=AXE)
    found = tab.page.evaluate(RUN)
    return [v for v in found if v["impact"] in ("serious", "critical")]


def _charts_have_text(tab: Watched) -> list[str]:
    """Every chart is an image with a name that says what it shows (its caption)."""
    return tab.page.evaluate(
        """() => Array.from(document.querySelectorAll('.chart[data-chart]'))
          .filter(c => c.getAttribute('role') !== 'img' || (c.getAttribute('aria-label') || '').trim().length < 8)
          .map(c => c.dataset.chart)"""
    )


def _pages(index: dict) -> list[str]:
    job = index["jobs"][0]["id"]
    run = next(r for r in index["runs"] if len(r["jobs"]) > 1)["id"]
    return ["index.html", "runs/index.html", f"jobs/{job}/index.html", f"runs/{run}/index.html"]


def test_pages_have_no_serious_violations(scheme_tab, server, index):  # noqa: F811
    for rel in _pages(index):
        scheme_tab.goto(server + rel)
        assert _violations(scheme_tab) == [], rel
        assert _charts_have_text(scheme_tab) == [], rel
    assert scheme_tab.errors == []


def test_compare_page_has_no_serious_violations(scheme_tab, server, index):  # noqa: F811
    tab = scheme_tab
    tab.goto(server + "index.html")
    for r in index["runs"][:2]:
        tab.page.check(f"input.pick[data-kind=run][data-id='{r['id']}']")
    tab.page.click("#compare-btn")
    tab.page.wait_for_load_state("load")
    tab.wait_charts()
    assert tab.page.locator("#compare-table tbody tr").count() == 2
    assert _violations(tab) == []
    assert _charts_have_text(tab) == []
    assert tab.errors == []


def test_partial_index_has_no_serious_violations(scheme_tab, partial, index):  # noqa: F811
    """The index of a big archive: its "more runs" note and button, then every row drawn."""
    import functools
    import http.server
    import threading

    site, _ = partial
    handler = functools.partial(_Quiet, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        scheme_tab.goto(f"http://127.0.0.1:{httpd.server_address[1]}/index.html")
        assert scheme_tab.page.is_visible("#all-rows-btn")
        assert _violations(scheme_tab) == []
        scheme_tab.page.click("#all-rows-btn")
        scheme_tab.page.wait_for_function(
            f"document.querySelectorAll('tbody.group').length === {len(index['runs'])}"
        )
        assert _violations(scheme_tab) == []
        assert scheme_tab.errors == []
    finally:
        httpd.shutdown()


def test_axe_sees_a_violation(scheme_tab, server):  # noqa: F811
    """The check can fail: grey on grey text is reported."""
    scheme_tab.goto(server + "index.html")
    scheme_tab.page.evaluate(
        """() => { const p = document.createElement('p');
          p.innerHTML = '<span style="color:#777;background:#888">hard to read</span> and ' +
            '<a href="#x" style="color:#333;text-decoration:none">a link</a> in text';
          p.style.color = '#222'; document.querySelector('main').append(p); }"""
    )
    ids = {v["id"] for v in _violations(scheme_tab)}
    assert "color-contrast" in ids
