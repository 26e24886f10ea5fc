"""The jobs synth writes in real shapes (docs/formats.md §2–§6), read against their truth."""

from __future__ import annotations

import math
import statistics

import pytest

from sitegen.model.vocabulary import REWARD, STEP_TIME
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
    # every vLLM prefix form and the V0 engine; the API server's two engines apart
    assert {e["engine"] for e in j["vllm"]["per_engine"]} == set(t["vllm"]["engines"])
    assert {"1@driver:engine000", "1@driver:engine001"} <= set(t["vllm"]["engines"])
    assert j["vllm"]["engines"] == len(t["vllm"]["engines"]) == 4


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


CHAIN = ("real/notebook-chain/train_700400.out", "real/notebook-chain/train_700401.out")


@pytest.fixture(scope="module")
def chain(site, index, truth) -> tuple[dict, dict, list[dict]]:
    """The notebook chain's run (data file), its truth, and its jobs' data files."""
    rows = {j["log"]: j for j in index["jobs"]}
    jobs = [load(site, rows[log]["data"]) for log in CHAIN]
    run = load(site, next(r for r in index["runs"] if r["id"] == jobs[0]["run"])["data"])
    want = next(r for r in truth["runs"] if r["logs"] == list(CHAIN))
    return run, want, jobs


def test_headers_glued_after_prefixless_bars_keep_every_step(chain, truth):
    """Step headers glued after the driver's bars (their Ray prefix lost, kept after the bar,
    after \\r redraws) or after the \\r of the trainer's own bar on its line (Ray's dim cyan
    prefix, another process's line before the dict), dict lines with a prefix: every step,
    its values, no warning."""
    _, _, jobs = chain
    for log, j in zip(CHAIN, jobs, strict=True):
        t = truth["jobs"][log]
        assert j["series"]["step"] == t["steps"] and j["metric_blocks"] == len(t["steps"]), log
        for i, step in enumerate(t["steps"]):
            want = t["metrics"][str(step)]
            assert j["series"][REWARD][i] == want[REWARD], (log, step)
            assert j["series"][STEP_TIME][i] == want[STEP_TIME], (log, step)
        said = " ".join(w["message"] for w in j["warnings"])
        assert "Step" not in said and "cut off" not in said and "checkpoint" not in said, log


def test_final_checkpoints_and_a_resume_from_the_final_save(chain, truth):
    """The older trainer's final save (last + 1) and the newer one's (the last step) are
    listed and marked; a job resumed from global_step_{last+1} joins the run, starts at
    last + 2, and nothing is discarded or missing."""
    run, want, jobs = chain
    first, second = (truth["jobs"][log] for log in CHAIN)
    assert first["final_checkpoint"] == first["last_step"] + 1
    assert second["final_checkpoint"] == second["last_step"]
    for log, j in zip(CHAIN, jobs, strict=True):
        t = truth["jobs"][log]
        assert (j["checkpoints"], j["final_checkpoint"]) == (
            t["checkpoints"],
            t["final_checkpoint"],
        )
    assert second["resumed_from"] == first["final_checkpoint"] == second["first_step"] - 1
    assert run["jobs"] == [j["id"] for j in jobs] and run["resumed_from"] == [
        first["final_checkpoint"]
    ]
    assert run["discarded"] == [] and run["series"]["step"] == want["steps"]
    assert first["final_checkpoint"] not in run["series"]["step"]
    (restart,) = run["restarts"]
    assert restart["cut_at"] == first["final_checkpoint"] and restart["discarded_steps"] == []
    assert run["checkpoints"] == [
        {"job": j["id"], "step": s, "final": s == truth["jobs"][log]["final_checkpoint"]}
        for log, j in zip(CHAIN, jobs, strict=True)
        for s in truth["jobs"][log]["checkpoints"]
    ]
    # the run's figures over every step of both jobs
    rewards = [
        truth["jobs"][log]["metrics"][str(s)][REWARD]
        for log in CHAIN
        for s in truth["jobs"][log]["steps"]
    ]
    assert rewards == want["reward"]
    assert run["reward_mean"] == pytest.approx(statistics.fmean(rewards))
    times = [
        truth["jobs"][log]["metrics"][str(s)][STEP_TIME]
        for log in CHAIN
        for s in truth["jobs"][log]["steps"]
    ]
    assert run["total_time_s"] == pytest.approx(math.fsum(times))


def test_pages_list_every_checkpoint_with_the_final_marked(site, chain, truth):
    run, _, jobs = chain
    first, second = (truth["jobs"][log] for log in CHAIN)
    mark = '<small class="dim">(final save{})</small>'
    a = (site / jobs[0]["url"] / "index.html").read_text()
    b = (site / jobs[1]["url"] / "index.html").read_text()
    want_a = (
        ", ".join(map(str, first["checkpoints"]))
        + " "
        + mark.format(f", after step {first['last_step']}")
    )
    want_b = ", ".join(map(str, second["checkpoints"])) + " " + mark.format("")
    assert f"<th>checkpoints saved</th><td>{want_a}</td>" in a
    assert f"<th>checkpoints saved</th><td>{want_b}</td>" in b
    page = (site / run["url"] / "index.html").read_text()
    assert want_a in page and want_b in page


def test_a_config_dump_logged_as_one_record_is_read_from_its_first_key(site, index, truth):
    """Upstream logs the dump with one ``logger.info``: its first key (``data:``) rides on
    the loguru header, the rest follows with the process's prefix. Every section is read,
    the first too, on every job that dumps one (header-less dumps alike)."""
    rows = {j["log"]: j for j in index["jobs"]}
    dumped = {log: t for log, t in truth["jobs"].items() if t["train_data"] is not None}
    assert set(REAL[:1] + CHAIN) <= set(dumped)
    for log, t in dumped.items():
        j = load(site, rows[log]["data"])
        cfg = j["config"]
        assert list(cfg)[:4] == ["data", "trainer", "generator", "environment"], log
        assert cfg["data"]["train_data"] == t["train_data"], log
        assert (j["run_name"], j["model"]) == (t["run_name"], t["model"]), log
        assert j["n_samples_per_prompt"] == t["n_samples"], log
    html = (site / rows[CHAIN[0]]["url"] / "index.html").read_text()
    config = html[html.index('id="config"') :]
    assert "train_data" in config and "/data/train.parquet" in config
