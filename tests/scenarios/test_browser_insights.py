"""What a reader sees of the insights: the findings box, the tasks and rollouts sections draw,
the tasks table filters and links, the full table loads on demand (HTTP and file://), and the
comparison page shows findings, config diff and tasks, with the most recent runs by default."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest

from tests.conftest import made_once
from tests.present.helpers import decode_compare_items
from tests.scenarios.test_browser import CHROMIUM, Watched, _Quiet  # noqa: F401 - skips without chromium

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def planted_server(planted):
    site, _ = planted
    handler = functools.partial(_Quiet, directory=str(site.parent))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/{site.name}/"
    httpd.shutdown()


@pytest.fixture
def tab(browser_page):
    tab = Watched(browser_page)
    yield tab
    tab.stop()


@pytest.fixture(params=["http", "file"])
def pbase(request, planted_server, planted):
    return planted_server if request.param == "http" else planted[0].as_uri() + "/"


def _tasks_job_url(planted) -> str:
    import json

    site, truth = planted
    index = json.loads((site / "data" / "index.json").read_text())
    return next(j["url"] for j in index["jobs"] if j["log"] == truth["jobs"][0]["log"])


def test_findings_tasks_and_rollouts_draw(tab, pbase, planted):
    tab.goto(pbase + _tasks_job_url(planted) + "index.html#task-learn-sql")
    page = tab.page
    assert tab.errors == []
    ids = page.eval_on_selector_all("#findings li", "els => els.map(e => e.dataset.finding)")
    assert sorted(ids) == planted[1]["jobs"][0]["findings"]
    # each finding links to a section that exists; a burst, an error, a slow step and a
    # forgotten task to a sampled transcript that shows one
    for href in page.eval_on_selector_all(
        "#findings li a:not(.tx)", "els => els.map(e => e.getAttribute('href'))"
    ):
        assert page.locator(f"section{href}").count() == 1, href
    shown = page.eval_on_selector_all(
        "#findings li a.tx", "els => els.map(e => [e.closest('li').dataset.finding, e.href])"
    )
    assert sorted(f for f, _ in shown) == [
        "error_rate_rising",
        "infra_burst",
        "step_time_outlier",
        "task_forgotten",
    ]
    assert all("/transcripts/" in h and h.endswith("/index.html") for _, h in shown)
    for name in (
        "task_heatmap",
        "wasted",
        "rollout_steps",
        "rollout_kinds",
        "tokens_steps",
        "output_tokens_steps",
    ):
        el = page.locator(f".chart[data-chart={name}]")
        assert el.get_attribute("data-rendered") == "1", name
    # five tasks on all 12 steps, the crashing one on step 8 only
    assert page.locator(".chart[data-chart=task_heatmap] g.mark-rect path").count() == 5 * 12 + 1
    assert page.locator("#tasks-table tr#task-learn-sql").count() == 1
    assert "Learned" in page.inner_text("#task-learn-sql")
    # filter by category, then by text
    page.select_option("#task-category", "never")
    shown = page.eval_on_selector_all(
        "#tasks-table tbody tr", "els => els.filter(e => !e.hidden).length"
    )
    assert shown == 2
    page.select_option("#task-category", "")
    page.fill("#task-filter", "daytona")
    names = page.eval_on_selector_all(
        "#tasks-table tbody tr", "els => els.filter(e => !e.hidden).map(e => e.id)"
    )
    assert names == ["task-sandbox-heavy"]
    assert "1 of 6 tasks shown" in page.inner_text("#task-count")
    assert tab.errors == []
    # a task's row links to its sampled transcript
    page.fill("#task-filter", "")
    link = page.locator("#task-learn-sql a.tx")
    assert link.inner_text() == "view"
    link.click()
    page.wait_for_selector("section.tr-turn")
    assert "first success of a learned task" in page.inner_text("p.lead")
    assert tab.errors == []


def test_index_findings_column(tab, pbase, planted):
    tab.goto(pbase + "index.html")
    assert tab.errors == []
    errors = tab.page.locator("td.findings-cell .fsev.sev-error").all_inner_texts()
    assert errors == ["2"]  # the lr-zero run: lr_zero and policy_frozen


@pytest.mark.no_charts
def test_compare_defaults_to_recent_runs_and_shows_insights(tab, pbase, planted):
    tab.goto(pbase + "compare/index.html")
    page = tab.page
    assert tab.errors == []
    assert page.locator("#default-note").is_visible()
    rows = page.locator("#compare-table tbody tr").count()
    assert rows == 5  # every planted run (the five most recent)
    assert "?" not in page.url  # the default is not written into the address
    assert page.locator("#compare-findings .sev-error").count() == 2
    assert (
        page.locator(
            "#compare-config tbody tr", has_text="trainer.policy.optimizer_config.lr"
        ).count()
        == 1
    )
    # two of the picks have trials and one task in common: the tasks job's five others were
    # never run by the tz job, which therefore failed none of them (none is a difference)
    page.wait_for_function("document.getElementById('task-compare-summary').textContent.length > 0")
    summary = page.inner_text("#task-compare-summary")
    assert summary.startswith("0 of 1 task that every pick ran are solved by some"), summary
    assert "5 tasks not run by every pick: not compared." in summary
    assert page.locator("#compare-tasks tbody tr").count() == 0
    assert tab.errors == []


@pytest.fixture(scope="module")
def few_rows(tmp_path_factory, planted_archive) -> tuple[Path, dict]:
    """(site, truth) of the planted jobs built with two task rows inline on each page."""
    import time

    from sitegen.commands.build import build
    from sitegen.insights import sections
    from sitegen.options import BuildOptions

    root, truth = planted_archive

    def make(folder: Path) -> None:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(sections, "INLINE_TASK_ROWS", 2)
            build(BuildOptions(archive=root, out=folder / "site", workers=1, now=time.time()))

    return made_once(tmp_path_factory, "few-rows", make) / "site", truth


@pytest.mark.no_charts
def test_full_task_table_loads_on_demand(tab, pbase, few_rows):
    """A page that holds only part of its rows loads the rest (gzip JSON over HTTP, tasks.js from file://)."""
    import json

    out, truth = few_rows
    index = json.loads((out / "data" / "index.json").read_text())
    url = next(j["url"] for j in index["jobs"] if j["log"] == truth["jobs"][0]["log"])
    assert (out / url / "tasks.js").exists()
    base = out.as_uri() + "/"
    if pbase.startswith("http"):
        handler = functools.partial(_Quiet, directory=str(out.parent))
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{httpd.server_address[1]}/{out.name}/"
    rows = """els => Object.fromEntries(els.map(tr => [tr.id, Array.from(tr.cells).map(td =>
      [td.className, td.innerHTML])]))"""
    try:
        # the rows the script draws are the page's own, cell for cell, figures included
        tab.goto(base + url + "index.html")
        page = tab.page
        inline = page.eval_on_selector_all("#tasks-table tbody tr", rows)
        page.click("#task-load")
        page.wait_for_function("document.querySelectorAll('#tasks-table tbody tr').length === 6")
        drawn = page.eval_on_selector_all("#tasks-table tbody tr", rows)
        assert len(inline) == 2 and {k: drawn[k] for k in inline} == inline
        # a link to a row the page does not hold: the table loads, then the row is there
        tab.goto(base + url + "index.html#task-sandbox-heavy")
        page.wait_for_selector(
            "#tasks-table tr#task-sandbox-heavy", state="attached", timeout=10000
        )
        assert page.locator("#tasks-table tbody tr").count() == 6
        assert page.locator("#task-load").is_hidden()
        # the loaded rows say success as the page's own do: rate, then successes/graded
        import re

        cells = page.eval_on_selector_all(
            "#tasks-table tbody tr td:nth-child(4)", "els => els.map(e => e.textContent)"
        )
        assert all(re.fullmatch(r"\d+\.\d% \d+/\d+|–", c) for c in cells), cells
        assert any(c != "–" for c in cells)
        # its run of one job loads the same table from the job's folder
        run = next(r for r in index["runs"] if r["url"] != url and url.split("/")[1] in r["jobs"])
        tab.goto(base + run["url"] + "index.html#task-sandbox-heavy")
        page.wait_for_selector(
            "#tasks-table tr#task-sandbox-heavy", state="attached", timeout=10000
        )
        assert page.locator("#tasks-table tbody tr").count() == 6
        assert tab.errors == []
    finally:
        if pbase.startswith("http"):
            httpd.shutdown()


@pytest.mark.no_charts
def test_compare_tasks_of_two_runs(tab, site, index):
    """Two runs with trials: the tasks one solves and the other does not, as solved.js says."""
    import json

    runs = [r for r in index["runs"] if r["trial_success_rate"] is not None][:2]
    assert len(runs) == 2
    text = (site / "compare" / "items.js").read_text()
    items = {
        (i["kind"], i["id"]): i
        for i in decode_compare_items(json.loads(text[text.index(", ") + 2 : text.rindex(");")]))
    }
    solved, ran = [], []
    for r in runs:
        text = (site / items[("run", r["id"])]["tasks"] / "solved.js").read_text()
        d = json.loads(text[text.index(", ") + 2 : text.rindex(");")])
        solved.append({t for t, s in zip(d["tasks"], d["successes"], strict=True) if s > 0})
        ran.append(set(d["tasks"]))
    # only tasks both ran: a task one never ran is no task it failed
    both = ran[0] & ran[1]
    differ = ((solved[0] | solved[1]) - (solved[0] & solved[1])) & both
    tab.goto(site.as_uri() + "/compare/index.html?runs=" + ",".join(r["id"] for r in runs))
    page = tab.page
    page.wait_for_function(
        "document.getElementById('task-compare-summary').textContent.indexOf('every pick ran') >= 0"
        " || document.getElementById('task-compare-summary').textContent.indexOf('in common') >= 0"
    )
    assert page.locator("#compare-tasks tbody tr").count() == len(differ)
    summary = page.inner_text("#task-compare-summary")
    if both:
        n = f"{len(both)} task{'s' if len(both) != 1 else ''}"
        assert summary.startswith(f"{len(differ)} of {n} that every pick ran"), summary
    else:
        assert summary.startswith("The picks with trials ran no task in common"), summary
    assert "not run" not in page.inner_text("#compare-tasks")
    assert page.locator("#default-note").is_hidden()
    assert tab.errors == []


@pytest.mark.no_charts
def test_compare_lists_only_tasks_every_pick_ran(tab, tmp_path):
    """Two runs of the same tasks (the sample's sync baseline, and a copy in which one
    task never succeeds and another was never run): the first is listed as solved by one
    pick alone; the task one run never ran is no difference, and is counted apart, even
    when its name is one every JavaScript object has (``constructor``)."""
    import json
    import shutil

    from sitegen.commands.build import build
    from sitegen.options import BuildOptions

    src = Path(__file__).resolve().parents[2] / "sample" / "archive" / "flat" / "sync-baseline"
    archive = tmp_path / "a"
    shutil.copytree(src, archive / "base")
    shutil.copytree(src, archive / "other")
    trials = archive / "other" / "trace_jobs"
    by_task: dict[str, list[Path]] = {}
    for f in sorted(trials.glob("*/result.json")):
        by_task.setdefault(json.loads(f.read_text())["task_name"], []).append(f)
    solved = {
        t
        for t, fs in by_task.items()
        if any(
            (json.loads(f.read_text()).get("verifier_result") or {})
            .get("rewards", {})
            .get("reward", 0)
            > 0
            for f in fs
        )
    }
    lost, gone = sorted(solved)[:2]  # lost: never solved in "other"; gone: never run there
    for f in by_task[lost]:
        d = json.loads(f.read_text())
        d["verifier_result"] = {"rewards": {"reward": 0.0}}
        f.write_text(json.dumps(d))
    for f in by_task[gone]:
        shutil.rmtree(f.parent)
        base = archive / "base" / "trace_jobs" / f.parent.name / "result.json"
        base.write_text(base.read_text().replace(json.dumps(gone), '"constructor"'))
    site = tmp_path / "site"
    build(BuildOptions(archive=archive, out=site, workers=1))
    index = json.loads((site / "data" / "index.json").read_text())
    runs = sorted(r["id"] for r in index["runs"])
    tab.goto(f"{site.as_uri()}/compare/index.html?runs={','.join(runs)}")
    page = tab.page
    page.wait_for_function(
        "document.getElementById('task-compare-summary').textContent.indexOf('every pick ran') >= 0"
    )
    summary = page.inner_text("#task-compare-summary")
    n = len(by_task) - 1
    assert summary.startswith(f"1 of {n} tasks that every pick ran is solved by some"), summary
    assert "1 task not run by every pick: not compared." in summary
    rows = page.eval_on_selector_all(
        "#compare-tasks tbody tr td:first-child", "els => els.map(e => e.textContent)"
    )
    assert rows == [lost]
    cells = page.eval_on_selector_all(
        "#compare-tasks tbody tr td:not(:first-child)", "els => els.map(e => e.className)"
    )
    assert sorted(cells) == ["no", "yes"]
    assert tab.errors == []


# Each line of a chart (its path's vertical centre) against its plot area (the y axis's extent).
LINE_AT = """(sel) => { const c = document.querySelector(sel + ' svg');
  const axis = Array.from(c.querySelectorAll('.role-axis-domain line, .role-axis-domain path'))
    .map(e => e.getBoundingClientRect()).reduce((a, b) => a.height > b.height ? a : b);
  return [axis.top, axis.bottom, Array.from(c.querySelectorAll('g.mark-line path')).map(p => {
    const b = p.getBoundingClientRect(); return (b.top + b.bottom) / 2; })]; }"""


def test_a_constant_metric_is_drawn_inside_its_chart(tab, planted):
    """The planted mid-run job logs the same reward (0.25) and step times (600 s, 300 s of
    them waiting) at every step: the reward's line lies mid-chart, the step times' inside
    it, not on the top border where Vega's zero-based domain put the highest; so does the
    comparison chart of that run alone. Its steps are 182–195: on the same load, its
    reward's step axis ticks each of them once (test_browser_axes.py)."""
    import json

    from tests.scenarios.test_browser_axes import _check_page

    site, truth = planted
    index = json.loads((site / "data" / "index.json").read_text())
    job = next(j for j in index["jobs"] if j["log"] == "plants/flat/midrun/train_700203.out")
    assert (job["first_step"], job["last_step"]) == (182, 195)
    url = site.as_uri() + "/" + job["url"] + "index.html"
    seen = _check_page(tab, site / job["url"] / "index.html", url)
    assert seen["reward"]["X"] == [str(s) for s in range(182, 196)]
    top, bottom, lines = tab.page.evaluate(LINE_AT, "[data-chart=reward]")
    assert lines and all(abs(y - (top + bottom) / 2) <= 2 for y in lines), (top, bottom, lines)
    top, bottom, lines = tab.page.evaluate(LINE_AT, "[data-chart=step_time]")
    assert len(lines) == 2 and all(top + 20 < y < bottom - 20 for y in lines)
    tab.goto(f"{site.as_uri()}/compare/index.html?runs={job['run']}")
    top, bottom, lines = tab.page.evaluate(LINE_AT, "#overlay-chart")
    assert len(lines) == 1 and abs(lines[0] - (top + bottom) / 2) <= 2, (top, bottom, lines)
    assert tab.errors == []


@pytest.mark.no_charts
def test_compare_verdicts_are_the_python_reference(tab, pbase, planted):
    """Each pick against the first, computed in the browser (static/stats.js) from the
    picks' solved.js: every figure as sitegen.insights.paired.compare gives it, printed by
    the site's rule; the steps chosen kept in the address; the same on every load."""
    import json

    import msgspec

    from sitegen.insights.paired import compare
    from sitegen.present.formatting import fmt_num, fmt_pct

    site, truth = planted
    index = json.loads((site / "data" / "index.json").read_text())
    run_of = {}
    for name in ("pair-a", "pair-b", "improves"):
        log = next(j["log"] for j in truth["jobs"] if j["run"] == f"plants-{name}")
        job = next(j for j in index["jobs"] if j["log"] == log)
        run_of[name] = next(r for r in index["runs"] if job["id"] in r["jobs"])
    solved = {}
    for name, run in run_of.items():
        page = json.loads((site / run["data"]).read_text())
        text = (site / page["tasks"]["table_dir"] / "solved.js").read_text()
        solved[name] = json.loads(text[text.index(", ") + 2 : text.rindex(");")])

    def counts(s, steps):
        src = s if steps == "whole" else s["final"]
        return list(zip(s["tasks"], src["graded"], src["successes"], strict=True))

    def expected(steps):
        out = []
        for name in ("pair-b", "improves"):
            v = compare(counts(solved["pair-a"], steps), counts(solved[name], steps))
            if not v.tasks:  # no task graded in both: one cell says so
                out.append([["no task graded in both: not compared"]])
                continue
            cells = [
                f"{v.verdict} ({v.tasks})",
                f"{fmt_pct(v.ref_rate)} → {fmt_pct(v.pick_rate)}",
                f"{fmt_num(100 * v.diff, 1)} ({fmt_num(100 * v.diff_lo, 1)} to "
                f"{fmt_num(100 * v.diff_hi, 1)})",
                f"{fmt_num(v.improvement, 2)} ({fmt_num(v.improvement_lo, 2)} to "
                f"{fmt_num(v.improvement_hi, 2)})",
            ]
            out.append([cells + [f"{v.only_pick} / {v.only_ref} (p = {fmt_num(v.sign_p, 3)})"]])
        return out

    def shown():
        page.wait_for_function(
            "document.querySelectorAll('#compare-verdicts tbody tr').length === 2"
        )
        return [
            [r.locator("td").all_inner_texts()[1:]]
            for r in page.locator("#compare-verdicts tbody tr").all()
        ]

    ids = ",".join(run_of[n]["id"] for n in ("pair-a", "pair-b", "improves"))
    tab.goto(pbase + "compare/index.html?runs=" + ids)
    page = tab.page
    want = expected("final")
    assert shown() == want
    assert want[0][0][0] == "can't tell (16)"  # the planted truth: three tasks are no proof
    assert "3 / 0 (p = 0.250)" in want[0][0][-1]
    assert want[1] == [["no task graded in both: not compared"]]  # no task in common
    page.select_option("#window-select", "whole")
    assert "steps=whole" in page.evaluate("location.search")  # (page.url follows it later)
    assert shown() == expected("whole")
    # the page's own numbers, unprinted: the reference's to the bit
    got = page.evaluate(
        "([a, b]) => sitegen.stats.compare(a, b)",
        [
            {"tasks": solved["pair-a"]["tasks"], "graded": solved["pair-a"]["graded"],
             "successes": solved["pair-a"]["successes"]},
            {"tasks": solved["pair-b"]["tasks"], "graded": solved["pair-b"]["graded"],
             "successes": solved["pair-b"]["successes"]},
        ],
    )  # fmt: skip
    assert got == msgspec.structs.asdict(
        compare(counts(solved["pair-a"], "whole"), counts(solved["pair-b"], "whole"))
    )
    # a reload: the address keeps the choice, the generator its numbers
    tab.goto(page.evaluate("location.href"))
    assert page.input_value("#window-select") == "whole"
    assert shown() == expected("whole")
    assert tab.errors == []
