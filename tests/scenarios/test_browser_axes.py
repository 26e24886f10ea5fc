"""Axes of whole numbers (steps, counts) tick each whole number once, however few the steps:
Vega's ``tickMinStep`` alone let a 3-step chart tick 1, 1.5, 2, 2.5, 3, which format ``d``
labelled "1 2 2 3 3"; and no step axis ticks a step before the first or past the last
(Vega's "nice" domain drew steps 1–16 from 0). Read from the drawn SVG: a 3-step job's and run's charts, a job of
steps 182–195 (on the load of its page that test_browser_insights.py's constant metric
reads), the comparison chart in both x modes; and each chart shape with such an axis over
1, 2, 3, 5, 7 and 182–195 steps at a desktop's and a phone's width."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sitegen.present import charts
from tests.conftest import page_specs, whole_axes
from tests.scenarios.test_browser import CHROMIUM, Watched  # noqa: F401 - skips without chromium

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")

BUNDLE = Path(__file__).resolve().parents[2] / "static" / "vendor" / "vega-bundle.js"

# Each labelled axis of a chart element: [aria-label ("X-axis titled 'step' for a linear
# scale ..."), its tick labels in order]. Grid axes carry no label and are left out.
AXES = """el => Array.from(el.querySelectorAll('g.role-axis[aria-label]')).map(a => [
  a.getAttribute('aria-label'),
  Array.from(a.querySelectorAll('g.role-axis-label text'), t => t.textContent)])"""


@pytest.fixture
def tab(browser_page):
    tab = Watched(browser_page)
    yield tab
    tab.stop()


def _whole_channels(spec: dict) -> set[str]:
    """The channels (``"X"``, ``"Y"``) whose axis a spec formats as whole numbers."""
    return {ch.upper() for ch, _ in whole_axes(spec)}


def _whole_labels(axes: list, channel: str) -> list[str]:
    """The tick labels of the chart's ``channel`` axis, each checked to be a whole number
    shown once ("1,000" and "−2" are whole)."""
    (labels,) = [t for label, t in axes if label.startswith(f"{channel}-axis")]
    assert labels, axes
    assert all(re.fullmatch(r"[−-]?\d{1,3}(,\d{3})*", t) for t in labels), labels
    assert len(set(labels)) == len(labels), labels
    return labels


def _check_page(tab, page: Path, url: str) -> dict[str, dict[str, list[str]]]:
    """Every whole-number axis of every chart of a built page: {chart: {channel: labels}}."""
    tab.goto(url)
    out = {}
    for name, spec in page_specs(page).items():
        drawn = tab.page.locator(f".chart[data-chart={name}]")
        if spec is None or not (channels := _whole_channels(spec)) or not drawn.count():
            continue
        axes = drawn.evaluate(AXES)
        out[name] = {ch: _whole_labels(axes, ch) for ch in channels}
    assert tab.errors == []
    return out


def _index(site: Path) -> dict:
    return json.loads((site / "data" / "index.json").read_text())


def test_a_three_step_job_and_run_tick_each_step_once(tab, planted):
    site, _ = planted
    index = _index(site)
    job = next(j for j in index["jobs"] if (j["first_step"], j["last_step"]) == (1, 3))
    run = next(r for r in index["runs"] if r["id"] == job["run"])
    for url in (job["url"], run["url"]):
        seen = _check_page(tab, site / url / "index.html", site.as_uri() + "/" + url + "index.html")
        # reward, step time, success, timing stack, wasted rollouts, trial exceptions...
        assert len(seen) >= 5, seen
        assert seen["reward"]["X"] == seen["step_time"]["X"] == ["1", "2", "3"]


def test_the_comparison_chart_ticks_each_step_once(tab, planted):
    """Two 3-step runs, as logged and counted from each pick's first step; a 3-step run
    beside one of steps 182–195 (lined up from their first steps by default)."""
    site, _ = planted
    index = _index(site)
    few = [j["run"] for j in index["jobs"] if (j["first_step"], j["last_step"]) == (1, 3)]
    late = next(j["run"] for j in index["jobs"] if j["first_step"] == 182)
    base = f"{site.as_uri()}/compare/index.html?runs="

    def ticks() -> list[str]:
        tab.page.wait_for_selector("#overlay-chart[data-rendered='1']")
        assert tab.errors == []
        return _whole_labels(tab.page.eval_on_selector("#overlay-chart", AXES), "X")

    tab.goto(base + ",".join(few[:2]))
    assert tab.page.input_value("#x-select") == "step"
    assert ticks() == ["1", "2", "3"]
    tab.page.select_option("#x-select", "since")  # (the chart drawn again, for the same picks)
    assert ticks() == ["0", "1", "2"]
    tab.goto(base + ",".join([few[0], late]))
    assert tab.page.input_value("#x-select") == "since"
    assert ticks() == [str(s) for s in range(14)]


def _shapes(steps: list[int]) -> dict[str, dict]:
    """Every chart shape with a whole-number axis, drawn over ``steps``."""
    n = len(steps)
    values = [0.1 * i for i in range(n)]
    series = {"step": steps, "r": values, "t": values}
    errors = [{"x": s, "part": "timeout", "value": 1 + i % 2} for i, s in enumerate(steps)]
    counts = [{"label": "a", "value": 1, "kind": "model"}, {"label": "b", "value": n}]
    out = {
        "progression": charts.progression(series, {"r": "reward"}),
        "lines": charts.lines(series, {"t": "tokens"}, y_title="tokens"),
        "errors": charts.stacked_bars(errors, "step", "errors", step_width=1, count=True),
        "bars_v": charts.bars(counts, "turns", "trials"),
        "bars_h": charts.bars(counts, "exception", "trials", "kind", "kinds", horizontal=True),
        "overlay": charts.overlay(
            [{"step": s, "value": v, "name": "a"} for s, v in zip(steps, values, strict=True)]
        ),
    }
    return {k: v for k, v in out.items() if v is not None}


# The step counts drawn at a desktop's width; a phone's (fewer ticks) matters past 9 steps.
DRAWN = [([1], 1300), ([1, 2], 1300), ([1, 2, 3], 1300), ([*range(1, 6)], 1300)]
DRAWN += [([*range(1, 8)], 1300), ([*range(1, 17)], 1300), ([*range(182, 196)], 1300)]
DRAWN += [([*range(182, 196)], 360)]


def test_every_whole_axis_shape_ticks_whole_numbers_once(browser_page, tmp_path):
    page = tmp_path / "axes.html"
    page.write_text(f"<!doctype html><script src='{BUNDLE.as_uri()}'></script>")
    tab = browser_page
    tab.goto(page.as_uri())
    for steps, width in DRAWN:
        for name, spec in _shapes(steps).items():
            axes = tab.evaluate(
                f"""async ([spec, width]) => {{
                  const el = document.createElement('div');
                  el.style.width = width + 'px';
                  document.body.replaceChildren(el);
                  const res = await vegaEmbed(el, spec, {{renderer: 'svg', actions: false}});
                  res.finalize();
                  return ({AXES})(el);
                }}""",
                [spec, width],
            )
            labels = {ch: _whole_labels(axes, ch) for ch in _whole_channels(spec)}
            if not name.startswith("bars"):  # a step axis ticks no step before or after them
                ticked = [int(t.replace(",", "")) for t in labels["X"]]
                assert steps[0] <= min(ticked) <= max(ticked) <= steps[-1], (name, steps, ticked)
            if name in ("progression", "lines", "overlay") and width > 1000:
                assert labels["X"] == [str(s) for s in steps], (name, steps)
            elif name == "errors":
                # each step's bar ticked (where the width holds them); its one or two errors
                assert width < 1000 or {str(s) for s in steps} <= set(labels["X"]), labels
                assert labels["Y"] == (["0", "1"] if len(steps) == 1 else ["0", "1", "2"])
            elif name.startswith("bars"):
                count = labels["X" if name == "bars_h" else "Y"]
                assert count[0] == "0" and int(count[-1]) == len(steps), (name, count)
