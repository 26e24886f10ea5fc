"""What a reader sees of a sampled transcript, from ``file://`` and over HTTP: the turns
decompressed in the browser, outputs collapsed to a preview, expand and collapse all, find,
``#turn-N`` links, j / k, the verifier and exception blocks, the shared instruction loaded on
demand, and every text put in as text (terminal output holding ``<script>`` runs nothing)."""

from __future__ import annotations

import base64
import gzip
import json
import re

import pytest

from tests.scenarios.test_browser_insights import (  # noqa: F401 - the shared fixtures
    pbase,
    planted_server,
    tab,
)

# (pytest passes the fixtures imported above by name: ruff's F811 does not apply)
# ruff: noqa: F811

pytestmark = pytest.mark.browser


def _entry(planted, trial: str) -> dict:
    site, _ = planted
    page = json.loads((site / "data/jobs/plants.flat.tasks.train_700100.json").read_text())
    return next(e for e in page["transcripts"]["entries"] if e["trial"] == trial)


def _open(tab, pbase, entry: dict, hash_: str = "") -> None:
    tab.goto(pbase + entry["url"] + "index.html" + hash_)
    tab.page.wait_for_selector("section.tr-turn")


def test_a_transcript_reads_and_finds(tab, pbase, planted):
    e = _entry(planted, "never-kernel__s12j3")  # ATIF, 5 turns, a 100 KB output, an exception
    _open(tab, pbase, e)
    page = tab.page
    assert page.locator("section.tr-turn[id^=turn-]").count() == 5
    assert "most recent AgentTimeoutError" in page.inner_text("p.lead")
    # the task's instruction, stored once for every transcript, loads on demand
    page.wait_for_selector(".tr-instruction pre")
    assert page.inner_text(".tr-instruction pre").startswith("Task never-kernel: the project")
    # outputs are one-line previews until opened; expand all, collapse all
    opened = "els => els.filter(d => d.open).length"
    assert page.eval_on_selector_all("details.tr-output", opened) == 0
    preview = page.inner_text("#turn-2 details.tr-output summary")
    assert (
        preview.startswith("New Terminal Output: grep -n TODO src/part2.py")
        and "100,063 bytes" in preview
    )
    page.click("#tr-expand")
    assert (
        page.eval_on_selector_all("#transcript details", opened)
        == page.locator("#transcript details").count()
    )
    assert "bytes omitted …]" in page.inner_text("#turn-2 details.tr-output pre")
    page.click("#tr-collapse")
    assert page.eval_on_selector_all("#transcript details", opened) == 0
    # find opens what matches and marks it
    page.fill("#tr-find", "PART3")
    assert page.inner_text("#tr-found").startswith("2 matches in 1 part")
    assert page.locator("#turn-3 mark").count() == 2
    assert page.eval_on_selector("#turn-3 details.tr-output", "d => d.open")
    page.fill("#tr-find", "")
    assert page.locator("#transcript mark").count() == 0
    # the verifier's output and the exception in their own blocks
    assert page.inner_text("#verifier pre").endswith("=== 40 passed in 1.2s ===\n")
    assert page.inner_text("#exception h2") == "Exception: AgentTimeoutError"

    # j / k walk the turns (the address follows; page.url follows replaceState only later)
    def at() -> str:
        return page.evaluate("location.hash")

    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("j")
    page.keyboard.press("j")
    assert at() == "#turn-2"
    page.keyboard.press("k")
    assert at() == "#turn-1"
    # ... on to the last turn, also where the last turns cannot scroll to the page's top
    last = page.eval_on_selector_all("section.tr-turn[id^=turn-]", "s => s[s.length - 1].id")
    for _ in range(8):
        page.keyboard.press("j")
    assert at() == "#" + last
    page.keyboard.press("k")
    assert at() != "#" + last
    assert tab.errors == []


def test_a_turn_link_opens_that_turn(tab, pbase, planted):
    e = _entry(planted, "forget-css__s06j3")  # episodes, 12 turns: episode-10 after episode-9
    _open(tab, pbase, e, "#turn-11")
    page = tab.page
    assert page.locator("section.tr-turn[id^=turn-]").count() == 12
    assert page.inner_text("#turn-11 pre.tr-msg").startswith("Analysis: Turn 11 of forget-css")
    assert page.eval_on_selector("#turn-11 details.tr-output", "d => d.open")
    top = page.eval_on_selector("#turn-11", "el => el.getBoundingClientRect().top")
    assert 0 <= top < 400
    assert tab.errors == []


def test_terminal_output_is_text_never_html(tab, pbase, planted):
    e = _entry(planted, "mixed-regex__s01j0")  # <script> and an onerror image in an output
    dialogs: list[str] = []

    def dismiss(d) -> None:
        dialogs.append(d.message)
        d.dismiss()

    tab.page.on("dialog", dismiss)
    _open(tab, pbase, e)
    page = tab.page
    page.click("#tr-expand")
    out = page.inner_text("#turn-1 details.tr-output pre")
    assert '<script>alert("transcript")</script><img src=x onerror=alert(1)>' in out
    assert "[REDACTED:trial-secret]" in out and "[REDACTED:build-secret]" in out
    assert page.locator("#transcript script, #transcript img").count() == 0
    assert dialogs == []
    assert tab.errors == []
    page.remove_listener("dialog", dismiss)  # (the page goes on to another test)


def test_a_transcript_page_has_no_serious_violations(tab, planted_server, planted):  # noqa: F811
    """axe-core (test_a11y.py's rules, in both schemes) on a transcript with every part
    open, and on the list."""
    from tests.scenarios.test_a11y import _goto_light, _passes_in_both_schemes

    e = _entry(planted, "learn-sql__s06j3")
    for url, expand in ((e["url"] + "index.html", True), (e["url"] + "../index.html", False)):
        _goto_light(tab, planted_server + url)
        if expand:
            tab.page.wait_for_selector("section.tr-turn")
            tab.page.click("#tr-expand")
        _passes_in_both_schemes(tab, url)
        if expand:  # (still open: the scheme changed on the page, not by a reload)
            assert tab.page.eval_on_selector_all(
                "#transcript details", "ds => ds.every(d => d.open)"
            )
    assert tab.errors == []


@pytest.mark.no_charts
def test_the_comparisons_task_differences_link_each_picks_transcript(tab, pbase, planted):
    """pair-a and pair-b differ on three tasks (synth/statplants.py): each row links the
    transcript each pick sampled of that task, when it sampled one."""
    a, b = "plants.flat.pair-a.train_700503", "plants.flat.pair-b.train_700504"
    tab.goto(pbase + f"compare/index.html?jobs={a},{b}")
    page = tab.page
    page.wait_for_selector("#compare-tasks tbody tr")
    rows = page.locator("#compare-tasks tbody tr")
    assert rows.count() == 3
    links = page.eval_on_selector_all("#compare-tasks tbody a.tx", "els => els.map(e => e.href)")
    assert links and all("/transcripts/" in h and h.endswith("/index.html") for h in links)
    assert {h.split("/jobs/")[1].split("/")[0] for h in links} <= {a, b}
    page.locator("#compare-tasks tbody a.tx").first.click()
    page.wait_for_selector("section.tr-turn, #transcript p.note")
    assert tab.errors == []


def test_a_summarized_context_is_said_before_the_turns(tab, pbase, planted):
    e = _entry(planted, "learn-sql__s06j3")  # all_messages after one summarization
    _open(tab, pbase, e)
    page = tab.page
    note = page.inner_text("#transcript p.note.warn")
    assert note.startswith("The agent's context was summarized once: earlier turns were replaced")
    assert page.inner_text("#prompt details.tr-first summary") == "The handoff after the summary"
    assert tab.errors == []


def test_the_list_of_transcripts_fits_a_laptop_screen(tab, planted):
    """Why each trial was picked wraps in its cell: the table fits a laptop's 1280 px, where
    the reasons on one line pushed their ends out of sight behind a sideways scroll."""
    site, _ = planted
    tab.page.set_viewport_size({"width": 1280, "height": 1000})
    tab.goto(site.as_uri() + "/jobs/plants.flat.tasks.train_700100/transcripts/index.html")
    reasons = tab.page.locator("#transcripts-table tbody td:last-child").all_inner_texts()
    assert max(map(len, reasons)) > 60, reasons  # (some reasons are long)
    scroll, client = tab.page.eval_on_selector(
        ".table-wrap", "el => [el.scrollWidth, el.clientWidth]"
    )
    assert scroll <= client, (scroll, client)
    assert tab.errors == []


def test_a_multi_step_trials_step_is_a_heading(tab, pbase, planted):
    # a multi-step trial's turns open each step with an event naming it: shown as the
    # step's heading, not as a message (the page's data swapped in: no planted trial has steps)
    e = _entry(planted, "never-kernel__s12j3")
    site, _ = planted
    js = (site / e["url"] / "transcript.js").read_text()
    name, payload = re.fullmatch(r'sitegen\.transcript\("(.*?)", "(.*)"\);\s*', js).groups()
    data = json.loads(gzip.decompress(base64.b64decode(payload)))
    data["turns"].insert(0, {"text": "Step 1 of 2: setup-repo", "event": "step"})
    body = base64.b64encode(gzip.compress(json.dumps(data).encode())).decode()
    tab.page.route(
        "**/" + e["url"] + "transcript.js",
        lambda route: route.fulfill(
            body=f'sitegen.transcript("{name}", "{body}");\n', content_type="text/javascript"
        ),
    )
    _open(tab, pbase, e)
    first = tab.page.locator("section.tr-turn").first
    assert first.locator("h3").inner_text() == "Step 1 of 2: setup-repo"
    assert first.locator("pre.tr-msg").count() == 0
    assert tab.page.locator("section.tr-turn[id^=turn-]").count() == 5
    assert tab.errors == []
