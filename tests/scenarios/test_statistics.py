"""End to end: the planted runs whose truth is a difference (sitegen/synth/statplants.py),
the pages' verdicts and intervals against it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sitegen.analyse import stats
from sitegen.insights.paired import compare
from tests.present.helpers import rows


def _load(site: Path, rel: str) -> dict:
    return json.loads((site / rel).read_text())


def _planted(planted, run: str) -> tuple[dict, dict, dict]:
    """(truth, job page, run page) of a planted run."""
    site, truth = planted
    job = next(j for j in truth["jobs"] if j["run"] == f"plants-{run}")
    index = _load(site, "data/index.json")
    row = next(r for r in index["jobs"] if r["log"] == job["log"])
    run_row = next(r for r in index["runs"] if row["id"] in r["jobs"])
    return job, _load(site, row["data"]), _load(site, run_row["data"])


def _solved(site: Path, page: dict) -> dict:
    text = (site / page["tasks"]["table_dir"] / "solved.js").read_text()
    return json.loads(text[text.index(", ") + 2 : text.rindex(");")])


def test_a_run_that_improves_by_a_known_amount(planted):
    truth, job, run = _planted(planted, "improves")
    for page in (job, run):
        v = page["learning"]["verdict"]
        assert v["source"] == "trials" and v["verdict"] == truth["learning"]["verdict"]
        assert (v["early"], v["late"], v["units"]) == ([1, 3], [4, 6], 16)
        true = truth["learning"]["true_change"]
        assert true == pytest.approx(0.3 * 3 / 5)  # the windows' centres, 3 of 5 steps apart
        # outcomes follow the probabilities, give or take a trial of 12 per task and window
        assert v["change"] == pytest.approx(true, abs=0.02)
        assert 0 < v["lo"] <= true <= v["hi"]
        assert page["learning"]["pass_at_k"]["agrees"]  # the logged pass@4 is the trials'
    html = (planted[0] / job["url"] / "index.html").read_text()
    assert "<strong>Is it learning?</strong>" in html and "Improved by 16.7 points" in html


def test_a_lucky_last_step_only_looks_better(planted):
    truth, job, run = _planted(planted, "lucky")
    h = run["headline"]
    # the last step drew the easiest tasks: the run's best step, well above its mean
    assert h["reward_last"] == h["reward_max"] > h["reward_mean"] + 0.09
    v = run["learning"]["verdict"]
    assert v["verdict"] == "no change" and truth["learning"]["verdict"] == "no change"
    assert v["lo"] <= truth["learning"]["true_change"] <= v["hi"]
    assert v["units"] >= 10  # tasks drawn in both windows, paired
    # its logged pass@4 passes a group only when all four samples passed: far below the trials'
    check = run["learning"]["pass_at_k"]
    assert check["logged"] < check["lo"] and not check["agrees"]
    f = next(f for f in run["findings"] if f["id"] == "pass_at_k_mismatch")
    assert f"95 % interval {check['lo']:.3f} to {check['hi']:.3f}" in f["detail"]


@pytest.mark.parametrize("steps", ["whole", "final"])
def test_a_pair_that_differs_on_three_tasks(planted, steps):
    site, _ = planted
    _, _, a = _planted(planted, "pair-a")
    truth, _, b = _planted(planted, "pair-b")
    sa, sb = _solved(site, a), _solved(site, b)

    def counts(s):
        src = s if steps == "whole" else s["final"]
        return list(zip(s["tasks"], src["graded"], src["successes"], strict=True))

    v = compare(counts(sa), counts(sb))
    want = truth["compare"]
    assert v.tasks == want["shared_tasks"]
    assert (v.only_pick, v.only_ref, v.sign_p) == (want["only_b"], want["only_a"], want["sign_p"])
    assert v.verdict == want["verdict"]
    assert v.diff_lo == 0.0 and v.improvement_lo == 0.5  # resamples without the three tie
    if steps == "final":
        assert sa["final"]["steps"] == [1, 3]  # three steps: all of them


def test_bands_on_the_charts(planted):
    site, _ = planted
    _, job, _ = _planted(planted, "improves")
    html = (site / job["url"] / "index.html").read_text()
    specs = json.loads(
        html.split('<script type="application/json" id="chart-specs">')[1].split("</script>")[0]
    )
    ps = job["learning"]["per_step"]
    success = {r["step"]: r for r in rows(specs["success"])}
    for i, step in enumerate(ps["step"]):
        lo, hi = stats.wilson(ps["successes"][i], ps["graded"][i])
        assert success[step]["value"] == ps["rate"][i]
        assert (success[step]["lo"], success[step]["hi"]) == (lo, hi)
    reward = [r for r in rows(specs["reward"]) if r["metric"] == "reward"]
    assert [(r["lo"], r["hi"]) for r in reward] == list(
        zip(ps["reward_lo"], ps["reward_hi"], strict=True)
    )
    trials_pass = [r["value"] for r in rows(specs["reward"]) if r["metric"] == "pass@4 (trials)"]
    assert trials_pass == ps["pass_at_k"]


def test_runs_without_trials_say_how_they_were_judged(planted):
    _, _, run = _planted(planted, "lr-zero")
    v = run["learning"]["verdict"]
    assert v["source"] == "reward" and v["step_correlation"] == 0.6 and v["resamples"] is None
    assert "allowing for correlated neighbouring steps" in v["method"]
    # reward 0.3 + 0.02 × step over 12 steps: steps 1–3 against 10–12, 0.18 apart, each
    # window on its line: no noise about it, so the change is sure
    assert (v["early"], v["late"]) == ([1, 3], [10, 12]) and v["change"] == pytest.approx(0.18)
    assert v["lo"] == pytest.approx(0.18) and v["hi"] == pytest.approx(0.18)
    assert v["verdict"] == "improved"
