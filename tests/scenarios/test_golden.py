"""Golden output: one small scenario's job, run, index and comparison data, Vega-Lite specs
and report.md, byte for byte.

The specs are the ones the job page embeds, written out as the site wrote them before
pages stopped carrying standalone copies (``dumps(spec, indent=True)``).

After an intended change, refresh with ``make golden`` (SITEGEN_UPDATE_GOLDEN=1) and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sitegen.commands.build import build
from sitegen.jsonio import dumps
from sitegen.options import BuildOptions
from sitegen.synth import synth
from tests.conftest import page_specs

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
JOB = "exp-async.async-run_561773"
RUN = "exp-async"  # two jobs: a resume, discarded steps
FILES = {
    f"data/jobs/{JOB}.json": "job.json",
    f"data/runs/{RUN}.json": "run.json",
    "data/index.json": "index.json",
    "compare/items.js": "compare-items.js",
    f"runs/{RUN}/curves.js": "run-curves.js",
    f"jobs/{JOB}/#reward": "reward.vl.json",
    f"jobs/{JOB}/#timing_stack": "timing_stack.vl.json",
    f"jobs/{JOB}/#vllm_throughput": "vllm_throughput.vl.json",
    f"jobs/{JOB}/report.md": "report.md",
}


@pytest.fixture(scope="module")
def small_site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("golden")
    synth(root / "a", seed=11, steps=8, trials_per_step=2)
    build(BuildOptions(archive=root / "a", out=root / "site", workers=1, now=0.0))
    return root / "site"


@pytest.mark.parametrize("src", sorted(FILES))
def test_golden(small_site, src):
    if "#" in src:  # a chart the page embeds
        page, name = src.split("#")
        got = dumps(page_specs(small_site / page / "index.html")[name], indent=True)
    else:
        got = (small_site / src).read_bytes()
    golden = GOLDEN / FILES[src]
    if os.environ.get("SITEGEN_UPDATE_GOLDEN"):
        golden.write_bytes(got)
    assert golden.exists(), f"missing golden file {golden.name}: run make golden"
    assert got == golden.read_bytes(), (
        f"{src} differs from tests/golden/{golden.name} (make golden refreshes it)"
    )
