"""End to end: a synthetic archive's site data compared, value by value, with the ground truth synth wrote."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import statistics
from pathlib import Path

import pytest

from sitegen.model.vocabulary import exception_kind
from tests.conftest import load, schema

REWARD = "reward/avg_raw_reward"


def _num(v):
    if isinstance(v, str):  # synth writes "nan"/"inf" for non-finite values
        return float(v)
    return v


def _jobs(index: dict) -> dict[str, dict]:
    return {j["log"]: j for j in index["jobs"]}


def test_a_job_that_stopped_early_says_so_in_its_findings(index, truth):
    """Every failed or cancelled job of the sample tops its page with how it stopped."""
    jobs = _jobs(index)
    want = {"failed": "job_failed", "cancelled": ("job_cancelled", "job_time_limit")}
    seen = set()
    for log, t in truth["jobs"].items():
        ids = {f["id"] for f in jobs[log]["findings"]}
        ended = ids & {"job_failed", "job_cancelled", "job_time_limit"}
        if t["end"] in want:
            (got,) = ended
            assert got in want[t["end"]], log
            assert (got == "job_time_limit") == (t.get("status_detail") == "TIME LIMIT"), log
            seen.add(t["end"])
        else:
            assert not ended, log
    assert seen == {"failed", "cancelled"}  # the sample has both


def test_index_lists_every_job_with_status(index, truth):
    jobs = _jobs(index)
    assert set(jobs) == set(truth["jobs"])
    for log, t in truth["jobs"].items():
        j = jobs[log]
        assert j["status"] == t["end"], log
        assert j["first_step"] == t["first_step"]
        assert j["last_step"] == t["last_step"]
        assert j["metric_blocks"] == len(t["steps"])
        assert j["url"] == f"jobs/{j['id']}/"
        assert j["data"] == f"data/jobs/{j['id']}.json"


def test_status_details(index):
    jobs = _jobs(index)
    assert jobs["exp-async/logs/async-run_561773.out"]["status_detail"] == "TIME LIMIT"
    assert jobs["flat/chain-a/train_600300.out"]["status_detail"] == "PREEMPTION"
    assert "global_step 7" in jobs["flat/sync-baseline/train_600100.out"]["status_detail"]


def test_job_metrics_match_truth(site, index, truth):
    for log, t in truth["jobs"].items():
        j = load(site, _jobs(index)[log]["data"])
        steps = [int(s) for s in t["metrics"]]
        assert j["series"]["step"] == steps
        names = sorted({k for d in t["metrics"].values() for k in d})
        assert sorted(j["metrics"]) == names
        for name in names:
            vals = [_num(d.get(name)) for d in t["metrics"].values()]
            finite = [v for v in vals if v is not None and math.isfinite(v)]
            st = j["metrics"][name]
            assert st["count"] == len(finite), (log, name)
            if finite:
                assert st["mean"] == pytest.approx(statistics.fmean(finite), rel=1e-12, abs=1e-12)
                assert st["min"] == min(finite) and st["max"] == max(finite)
                if len(finite) > 1:
                    assert st["std"] == pytest.approx(statistics.stdev(finite), rel=1e-9, abs=1e-12)
                else:
                    assert st["std"] is None
            # the per-step series, non-finite as null
            col = j["series"][name]
            for got, want in zip(col, vals, strict=True):
                if want is None or not math.isfinite(want):
                    assert got is None
                else:
                    assert got == pytest.approx(want, rel=1e-12)
        rewards = [d[REWARD] for d in t["metrics"].values()]
        assert j["reward_mean"] == pytest.approx(statistics.fmean(rewards))
        assert j["reward_max"] == max(rewards)
        assert j["reward_last"] == rewards[-1]
        assert j["total_time_s"] == pytest.approx(
            math.fsum(d["timing/step"] for d in t["metrics"].values())
        )


def test_steps_csv_matches_truth(site, index, truth):
    """Each job's steps.csv, cell by cell: the value logged, blank where the step did not log
    the metric, and a logged NaN or infinity as such (not blank: it was logged)."""
    seen_nan = 0
    for log, t in truth["jobs"].items():
        job = _jobs(index)[log]
        rows = list(csv.DictReader(io.StringIO((site / job["url"] / "steps.csv").read_text())))
        assert [int(r["step"]) for r in rows] == [int(s) for s in t["metrics"]]
        for row, want in zip(rows, t["metrics"].values(), strict=True):
            for name, cell in row.items():
                if name == "step":
                    continue
                v = _num(want.get(name))
                if v is None:
                    assert cell == "", (log, name)
                elif math.isnan(v):
                    assert cell == "nan", (log, name)
                    seen_nan += 1
                else:
                    assert float(cell) == pytest.approx(v, rel=1e-12), (log, name)
    assert seen_nan > 0  # (the synth logs a NaN KL now and then)


def test_mirror_form_preferred_over_console(site, index, truth):
    """561774 logs both forms; the JSON mirror's full precision wins over the 4-decimal console."""
    log = "exp-async/logs/async-run_561774.out"
    j = load(site, _jobs(index)[log]["data"])
    assert j["metric_form"] == "mirror"
    first = str(j["series"]["step"][0])
    want = truth["jobs"][log]["metrics"][first][REWARD]
    assert j["series"][REWARD][0] == want
    assert round(want, 4) != want  # full precision, not the rounded console copy


def test_split_timing_blocks_merged(site, index, truth):
    log = "flat/sync-baseline/train_600100.out"
    j = load(site, _jobs(index)[log]["data"])
    assert j["metric_blocks"] == len(truth["jobs"][log]["steps"])
    assert all(v is not None for v in j["series"]["timing/step"])
    assert not any(k.startswith("async/") for k in j["metrics"])


def test_resume_and_checkpoints(site, index, truth):
    for log, t in truth["jobs"].items():
        j = load(site, _jobs(index)[log]["data"])
        assert j["resumed_from"] == t["resumed_from"]
        assert j["checkpoints"] == t["checkpoints"]
        assert j["n_samples_per_prompt"] == t["n_samples"]
        assert j["run_name"] == t["run_name"]
        assert j["model"] == t["model"]


def test_batches_attributed_to_following_step(site, index, truth):
    for log, t in truth["jobs"].items():
        b = load(site, _jobs(index)[log]["data"])["batches"]
        for k in ("batches", "instances", "successful", "failed", "masked"):
            assert b[k] == t["batches"].get(k, 0), (log, k)
        assert b["exceptions"] == t["batch_exceptions"]
        assert b["eval"]["batches"] == t["eval_batches"]
        assert set(b["per_step"]) == set(t["batches_per_step"])
        for step, c in t["batches_per_step"].items():
            got = b["per_step"][step]
            assert got["batches"] == c["batches"] and got["failed"] == c["failed"]
            assert got["exceptions"] == {k[4:]: v for k, v in c.items() if k.startswith("exc:")}


def test_vllm_summary(site, index, truth):
    for log, t in truth["jobs"].items():
        v = load(site, _jobs(index)[log]["data"])["vllm"]
        tv = t["vllm"]
        assert v["samples"] == tv["samples"], log
        assert sorted(e["engine"] for e in v["per_engine"]) == tv["engines"]
        assert v["engines"] == len(tv["engines"])
        assert v["aggregated_lines"] == tv["aggregated"]
        assert v["suppressed_copies"] == tv["suppressed"]
        assert v["step_stats"] == tv["step_stats"]
        if tv["samples"]:
            n = tv["samples"]
            assert v["gen_throughput_mean"] == pytest.approx(tv["sums"]["gen"] / n)
            assert v["running_mean"] == pytest.approx(tv["sums"]["running"] / n)
            assert v["waiting_mean"] == pytest.approx(tv["sums"]["waiting"] / n)
            assert v["kv_cache_pct_mean"] == pytest.approx(tv["sums"]["kv"] / n)
            # V0 engines log no prefix hit rate (docs/formats.md §5)
            assert v["prefix_hit_pct_mean"] == pytest.approx(
                tv["sums"]["prefix"] / tv.get("prefix_samples", n)
            )
            assert v["waiting_max"] == tv["waiting_max"]
            # vLLM counts preemptions per logging interval: the total is their sum, and
            # none where no line reports them (before vLLM 0.11.1)
            assert v["preemptions_total"] == tv["sums"].get("preemptions")
            page = _jobs(index)[log]["url"]
            report = (site / page / "report.md").read_text()
            if v["preemptions_total"] is None:
                assert "- Preemptions:" not in report
            else:
                assert f"- Preemptions: {v['preemptions_total']:.0f} in all" in report
            assert sum(e["samples"] for e in v["per_engine"]) == n
            assert v["verdict"] in ("saturated", "starved", "spare capacity")


def test_runs_stitched(site, index, truth):
    by_logs = {}
    for r in index["runs"]:
        logs = tuple(next(j["log"] for j in index["jobs"] if j["id"] == jid) for jid in r["jobs"])
        by_logs[logs] = r
    assert len(index["runs"]) == len(truth["runs"])
    for tr in truth["runs"]:
        r = by_logs[tuple(tr["logs"])]
        data = load(site, r["data"])
        assert data["steps"] == len(tr["steps"])
        assert data["series"]["step"] == tr["steps"]
        assert [d["step"] for d in data["discarded"]] == tr["discarded"]
        assert data["discarded_steps"] == len(tr["discarded"])
        assert data["resumed_from"] == tr["resumed_from"]
        assert data["series"][REWARD] == pytest.approx(tr["reward"])
        first = truth["jobs"][tr["logs"][0]]["metrics"]
        for d in data["discarded"]:  # the discarded first attempts keep their own values
            assert d["reward"] == first[str(d["step"])][REWARD]
        assert data["reward_mean"] == pytest.approx(statistics.fmean(tr["reward"]))


def test_trials_match_truth(site, index, truth):
    runs = {r["id"]: r for r in index["runs"]}
    owners = {}
    for r in runs.values():
        data = load(site, r["data"])
        if data["trials"]:
            owners[data["trials"]["path"]] = data["trials"]
    assert set(owners) == set(truth["trials"])
    for path, t in truth["trials"].items():
        got = owners[path]
        assert got["total"] == t["total"]
        assert got["malformed"] == t["malformed"]
        assert got["missing"] == t["missing"]
        assert got["eval"] == t["eval"]
        assert got["exceptions"] == t["exceptions"]
        turns = t["turns"]
        assert got["turns"]["count"] == len(turns)
        assert got["turns"]["mean"] == pytest.approx(statistics.fmean(turns))
        assert got["turns"]["median"] == statistics.median(turns)
        assert got["turns"]["std"] == pytest.approx(statistics.stdev(turns))
        assert got["turns"]["min"] == min(turns) and got["turns"]["max"] == max(turns)
        rewards = t["rewards"]
        assert got["reward"]["count"] == len(rewards)
        assert got["reward"]["mean"] == pytest.approx(statistics.fmean(rewards))
        succ = sum(1 for x in rewards if x > 0)
        assert got["reward"]["success_rate"] == pytest.approx(succ / len(rewards))
        assert got["reward"]["failure"] == len(rewards) - succ  # negative rewards are failures
        for exc, vals in t["turns_by_exception"].items():
            assert got["turns_by_exception"][exc]["count"] == len(vals)
            assert got["turns_by_exception"][exc]["mean"] == pytest.approx(statistics.fmean(vals))
            assert got["turns_by_exception"][exc]["median"] == statistics.median(vals)
        for k in ("success", "failure"):
            assert got["turns_by_outcome"][k]["count"] == len(t["turns_by_outcome"][k])
        kinds = {"none": 0, "infrastructure": 0, "model": 0, "other": 0}
        for exc, n in t["exceptions"].items():
            kinds[exception_kind(None if exc == "none" else exc)] += n
        assert got["exception_kinds"] == kinds


def test_flat_job_owns_its_trials(site, index, truth):
    for log, tp in truth["job_trials"].items():
        j = load(site, _jobs(index)[log]["data"])
        assert j["trials"]["path"] == tp
        assert j["trials"]["total"] == truth["trials"][tp]["total"]
    # experiment jobs do not own the run's trials; the run does
    j = load(site, _jobs(index)["exp-async/logs/async-run_561773.out"]["data"])
    assert j["trials"] is None


def test_skipped_folders_reported(index, truth):
    assert sorted(s["path"] for s in index["skipped"]) == truth["skipped"]
    assert all(s["reason"] for s in index["skipped"])


def test_data_files_are_strict_json(site):
    for path in (site / "data").rglob("*.json"):
        text = path.read_text()
        bad = []
        json.loads(text, parse_constant=bad.append)
        assert not bad, f"{path}: non-standard JSON constants {bad}"


def test_no_secret_published(site, truth):
    """Every secret synth planted in logs and configs is absent from every output file."""
    secrets = [s.encode() for s in truth["secrets"]]
    assert len(secrets) >= 6
    for path in Path(site).rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for s in secrets:
                assert s not in data, f"{path} leaks a secret"


def test_config_is_shown_redacted(site, index):
    j = load(site, _jobs(index)["exp-async/logs/async-run_561773.out"]["data"])
    cfg = j["config"]
    assert cfg["trainer"]["wandb_api_key"] == "[REDACTED]"
    assert cfg["environment"]["env_vars"]["HF_TOKEN"] == "[REDACTED]"
    assert "[REDACTED]@inference.internal" in cfg["generator"]["api_base"]
    assert cfg["generator"]["max_tokens"] == 4096  # not a secret


def test_timing_tree_adds_up(site, index):
    j = load(site, _jobs(index)["exp-async/logs/async-run_561773.out"]["data"])
    tree = j["timing"]["tree"]
    assert tree["name"] == "step"

    def check(node):
        if node["children"]:
            assert math.fsum(c["total_s"] for c in node["children"]) == pytest.approx(
                node["total_s"]
            )
            assert math.fsum(c["share_of_parent"] for c in node["children"]) == pytest.approx(1.0)
            for c in node["children"]:
                check(c)

    check(tree)
    names = [c["name"] for c in tree["children"]]
    assert "run_training" in names and "policy_train" not in names  # nested, not a sibling


def test_timing_table_one_unit_per_column(site, index):
    """The job page's timer table prints each duration column in one unit, named in its
    header, and each cell is its timer's total in that unit (the tree's order)."""
    job = _jobs(index)["exp-async/logs/async-run_561773.out"]
    tree = load(site, job["data"])["timing"]["tree"]
    html = (site / job["url"] / "index.html").read_text()
    table = html[html.index('<table class="num-table timing">') :]
    table = table[: table.index("</table>")]
    unit = re.search(r"<th>total \((s|min|h)\)</th>", table).group(1)
    per = {"s": 1, "min": 60, "h": 3600}[unit]
    cells = re.findall(r'<tr class="depth-\d+">\s*<td[^>]*>[^<]*</td>\s*<td>([^<]*)</td>', table)

    def totals(node):
        yield node["total_s"]
        for c in node["children"]:
            yield from totals(c)

    want = list(totals(tree))
    assert len(cells) == len(want) > 3
    for cell, total in zip(cells, want, strict=True):
        cell = cell.replace("&lt;", "<")
        assert not re.search(r"[a-z]", cell)  # a bare number: the unit is in the header
        if cell.startswith("<"):
            assert total / per < 0.1
        else:
            assert float(cell.replace(",", "")) == pytest.approx(total / per, abs=0.051)
    assert unit == ("s" if max(want) < 120 else "min" if max(want) < 36000 else "h")


def test_schema_files_validate(site, index):
    schema("index").validate(index)
    for j in index["jobs"]:
        schema("job").validate(load(site, j["data"]))
    for r in index["runs"]:
        schema("run").validate(load(site, r["data"]))


def test_rollout_stage_shares_are_of_the_rollout(site, index):
    """The Rollouts lead gives each stage as a share of the rollout itself (its card's
    seconds over the rollout's), the wait for the step apart."""
    import re

    checked = 0
    for run in index["runs"]:
        data = json.loads((site / run["data"]).read_text())
        ro = data.get("rollouts")
        if not ro or not ro["overall"]["timed"]:
            continue
        html = (site / run["url"] / "index.html").read_text()
        lead = re.search(r"A rollout takes [^<]*", html).group(0)
        o = ro["overall"]
        stages = ("env_setup_s", "agent_setup_s", "agent_exec_s", "verifier_s", "overhead_s")
        whole = sum(o[k] for k in stages)
        want = round(100 * o["agent_exec_s"] / whole)
        assert f"agent execution {want}%" in lead, lead
        checked += 1
    assert checked
