"""Golden output: one small scenario's job, run, index and comparison data, Vega-Lite specs
and report.md, value by value, kept in a readable form (tests/scenarios/golden.py) so that
a refresh shows the values that moved.

After an intended change, refresh with ``make golden`` and review the diff. It writes
nothing unless the new output's figures agree with synth's ground truth
(tests/scenarios/test_golden_truth.py), so a refresh cannot bless a wrong number.
"""

from __future__ import annotations

import os

import pytest

from tests.scenarios.golden import CHECKS, FILES, GOLDEN, documents, readable, site_bytes


@pytest.mark.parametrize("src", sorted(FILES))
def test_golden(golden_site, src):
    site, truth = golden_site
    name = FILES[src]
    got = readable(name, site_bytes(site, src))
    golden = GOLDEN / name
    if os.environ.get("SITEGEN_UPDATE_GOLDEN"):
        docs = documents(lambda s: site_bytes(site, s))
        for check in CHECKS:  # a failure here writes nothing: fix the output, not the golden
            check(docs, truth)
        golden.write_bytes(got)
    assert golden.exists(), f"missing golden file {golden.name}: run make golden"
    assert got == golden.read_bytes(), (
        f"{src} differs from tests/golden/{golden.name} (make golden refreshes it)"
    )
