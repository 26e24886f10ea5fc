"""The golden scenario's figures against synth's ground truth, value by value: in the files
kept in tests/golden ("stored") and in a fresh build ("built", what ``make golden`` would
write: it runs these first and writes nothing unless they pass). And the rollouts of the
shared scenario's Harbor-shaped trials against theirs."""

from __future__ import annotations

import json
import math
import re
import statistics
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import load
from tests.scenarios.golden import (
    CHECKS,
    FILES,
    GOLDEN,
    JOB,
    _approx,
    documents,
    progression,
    site_bytes,
)


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


STAGES = ("env_setup_s", "agent_setup_s", "agent_exec_s", "verifier_s")


def _same_anatomy(got: dict, trials: list[dict], where: object) -> None:
    """A rollout anatomy against the truth of its trials: the mean duration; each stage's
    mean over the timed trials (a duration and a stage), a stage that did not run counted as
    0 s; the overhead, what of a duration the stages leave (not below 0)."""
    timed = [t for t in trials if any(t[k] is not None for k in STAGES)]
    assert (got["trials"], got["timed"]) == (len(trials), len(timed)), where
    assert got["duration_mean_s"] == _approx(statistics.fmean(t["duration_s"] for t in trials))
    for k in STAGES:
        assert got[k] == _approx(math.fsum(t[k] or 0.0 for t in timed) / len(timed)), (where, k)
    over = [max(0.0, t["duration_s"] - sum(t[k] or 0.0 for k in STAGES)) for t in timed]
    assert got["overhead_s"] == _approx(math.fsum(over) / len(over)), where


def test_the_harbor_trials_rollouts_are_the_truth(archive: Path, site: Path, truth: dict):
    """The job page's rollouts section of the Harbor-shaped trials, value by value: a
    multi-step trial times its agent and verifier and counts its cached tokens on its steps,
    the top level's null (docs/formats.md §6.5), and is read as the sums over its steps."""
    ((rel, tt),) = [(rel, t) for rel, t in truth["trials"].items() if t["per_trial_stages"]]
    docs = [json.loads(f.read_text()) for f in (archive / rel).glob("*/result.json")]
    multi = [d for d in docs if d.get("step_results")]
    assert multi and all(d["agent_execution"] is None and d["verifier"] is None for d in multi)
    (log,) = [log for log, r in truth["job_trials"].items() if r == rel]
    (job,) = [j for j in load(site, "data/index.json")["jobs"] if j["log"] == log]
    rollouts = load(site, f"data/jobs/{job['id']}.json")["rollouts"]
    trials = tt["per_trial_stages"]
    _same_anatomy(rollouts["overall"], trials, "overall")
    by_step = defaultdict(list)
    for (_task, step, _reward), t in zip(tt["per_trial"], trials, strict=True):
        if step is not None:
            by_step[step].append(t)
    assert [s["step"] for s in rollouts["per_step"]] == sorted(by_step)
    for s in rollouts["per_step"]:
        _same_anatomy(s["anatomy"], by_step[s["step"]], s["step"])
        assert s["cache_tokens"] == sum(t["cache_tokens"] for t in by_step[s["step"]]), s["step"]
    cache = [t["cache_tokens"] for t in trials]
    assert rollouts["tokens"]["cache_total"] == sum(cache) > 0
    assert rollouts["tokens"]["cache_mean"] == _approx(statistics.fmean(cache))
