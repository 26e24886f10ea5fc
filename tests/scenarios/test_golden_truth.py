"""The golden scenario's figures against synth's ground truth, value by value: in the files
kept in tests/golden ("stored") and in a fresh build ("built", what ``make golden`` would
write: it runs these first and writes nothing unless they pass)."""

from __future__ import annotations

import re

import pytest

from tests.scenarios.golden import CHECKS, FILES, GOLDEN, JOB, documents, progression, site_bytes


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__.removeprefix("check_"))
@pytest.mark.parametrize("source", ["built", "stored"])
def test_golden_figures_are_the_truth(golden_site, source, check):
    site, truth = golden_site
    if source == "built":
        docs = documents(lambda src: site_bytes(site, src))
    else:
        docs = documents(lambda src: (GOLDEN / FILES[src]).read_bytes())
    check(docs, truth)


def test_the_job_pages_per_step_table_is_the_truth(golden_site):
    """The job page's per-step table (written in one pass, not by the template's loop: that
    test compares the two; this one the figures), cell by cell."""
    site, truth = golden_site
    html = (site / "jobs" / JOB / "index.html").read_text()
    body = html[html.index('aria-label="Per-step table"') :]
    body = body[body.index("<tbody>") : body.index("</tbody>")]
    rows = [re.findall(r"<td>(.*?)</td>", tr) for tr in body.split("</tr>") if "<td>" in tr]
    assert rows == progression(truth, sep=",")
