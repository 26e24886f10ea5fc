"""The golden scenario's figures against synth's ground truth, value by value: in the files
kept in tests/golden ("stored") and in a fresh build ("built", what ``make golden`` would
write: it runs these first and writes nothing unless they pass)."""

from __future__ import annotations

import pytest

from tests.scenarios.golden import CHECKS, FILES, GOLDEN, documents, site_bytes


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__.removeprefix("check_"))
@pytest.mark.parametrize("source", ["built", "stored"])
def test_golden_figures_are_the_truth(golden_site, source, check):
    site, truth = golden_site
    if source == "built":
        docs = documents(lambda src: site_bytes(site, src))
    else:
        docs = documents(lambda src: (GOLDEN / FILES[src]).read_bytes())
    check(docs, truth)
