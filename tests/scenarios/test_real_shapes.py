"""The jobs synth writes in real shapes (formats.md §8), read back against their ground truth."""

from __future__ import annotations

import math
import statistics

import pytest

from tests.conftest import load

REAL = (
    "real/sync-glued/train_700100.out",
    "real/wandb-only/train_700200.out",
    "real/mirror-newyear/train_700300.out",
)


@pytest.fixture(scope="module")
def pages(site, index) -> dict[str, dict]:
    rows = {j["log"]: j for j in index["jobs"]}
    return {log: load(site, rows[log]["data"]) for log in REAL}


def test_every_real_job_reads_as_its_truth(pages, truth):
    for log in REAL:
        j, t = pages[log], truth["jobs"][log]
        assert j["metric_form"] == t["metric_form"], log
        assert j["status"] == t["end"] and j["status_detail"] == t["status_detail"], log
        assert (j["mid_run"] is not None) == t["mid_run"], log
        assert j["final_checkpoint"] == t["final_checkpoint"], log
        assert j["planned_steps"] == t["planned_steps"], log
        assert j["series"]["step"] == t["steps"], log


def test_glued_sync_console_job(pages, truth):
    log = REAL[0]
    j, t = pages[log], truth["jobs"][log]
    assert j["status"] == "complete" and j["final_checkpoint"] == t["last_step"] + 1
    assert j["checkpoints"][-1] == t["last_step"] + 1 and j["checkpoints"] == t["checkpoints"]
    # the synchronous trainer's tree: generate and the checkpoint inside step
    kids = {c["name"]: c for c in j["timing"]["tree"]["children"]}
    assert {"generate", "postprocess_generator_output", "save_checkpoints"} <= set(kids)
    assert "wait_for_generation_buffer" not in kids
    # in-loop eval rides in the train block: outside step, and in the eval series too
    assert [o["name"] for o in j["timing"]["outside_step"]] == ["eval"]
    eval_steps = [int(s) for s, d in t["metrics"].items() if "eval/all/avg_score" in d]
    # eval_before_train's eval-only block at step 0 is an eval, not a step
    assert eval_steps and j["eval_series"]["step"] == [0, *eval_steps]
    assert j["eval_series"]["eval/all/avg_score"][0] == 0.4125 and j["first_step"] == 1
    gens = [d["timing/generate"] for d in t["metrics"].values()]
    assert kids["generate"]["total_s"] == pytest.approx(math.fsum(gens))
    assert j["headline"]["gen_wait_mean_s"] == pytest.approx(statistics.fmean(gens))
    assert sum(c["share_of_parent"] for c in kids.values()) == pytest.approx(1.0)
    # the negative batch line, read as written, with a note
    assert j["batches"]["per_step"]["1"]["successful"] < j["batches"]["per_step"]["1"]["instances"]
    assert any("negative count" in w["message"] for w in j["warnings"])
    # every vLLM prefix form and the V0 engine
    assert {e["engine"] for e in j["vllm"]["per_engine"]} == set(t["vllm"]["engines"])
    assert "1@driver" in t["vllm"]["engines"]


def test_text_only_mid_run_job(pages, truth):
    log = REAL[1]
    j, t = pages[log], truth["jobs"][log]
    assert j["metric_form"] == "text" and "truncated (line 1)" in j["mid_run"]
    assert j["first_step"] == t["first_step"] > 1 and j["run_name"] is None
    assert j["status_detail"] == "JOB REQUEUE"
    lr = [v for v in j["series"]["policy/policy_lr"]]
    assert lr and all(v == 9.99e-07 for v in lr)  # full precision from the status dict


def test_headerless_mirror_across_new_year_killed_by_oom(pages, truth):
    log = REAL[2]
    j, t = pages[log], truth["jobs"][log]
    assert j["metric_form"] == "mirror" and j["status"] == "failed"
    assert "note" not in j["metrics"] and "tag" not in j["metrics"]
    assert j["started_at"].startswith("2025-12-31") and j["last_activity"].startswith("2026-01-01")
    # vLLM samples on both sides of midnight stay within the job's span
    span = j["vllm"]["timeline"]["t_s"]
    assert span and min(span) >= -60 and max(span) <= t["vllm"]["samples"] * 60


def test_harbor_trials_of_both_versions(site, index, truth):
    tp = truth["job_trials"][REAL[0]]
    j = load(site, {r["log"]: r for r in index["jobs"]}[REAL[0]]["data"])
    got, want = j["trials"], truth["trials"][tp]
    assert got["total"] == want["total"] == 15 and got["exceptions"] == want["exceptions"]
    assert got["reward"]["count"] == len(want["rewards"])  # Harbor's invalid rewards left out
    assert got["exception_kinds"]["model"] >= 3 and got["exception_kinds"]["infrastructure"] >= 3


def test_job_pages_say_mid_run_and_from_log_text(site, index, truth):
    rows = {j["log"]: j for j in index["jobs"]}
    html = (site / rows[REAL[1]]["url"] / "index.html").read_text()
    assert "Starts mid-run:" in html and "From log text:" in html
    assert f"of {truth['jobs'][REAL[1]]['planned_steps']} planned" in html
    other = (site / rows[REAL[0]]["url"] / "index.html").read_text()
    assert "Starts mid-run:" not in other and "From log text:" not in other
    last = truth["jobs"][REAL[0]]["last_step"]
    assert f'{last + 1} <small class="dim">(final save, after step {last})</small>' in other
