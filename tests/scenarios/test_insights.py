"""End to end: the planted archive's insights, value by value against its ground truth."""

from __future__ import annotations

import gzip
import json
import statistics
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from sitegen.synth import plants as P
from tests.conftest import schema
from tests.present.helpers import decode_compare_items


def _load(site: Path, rel: str) -> dict:
    return json.loads((site / rel).read_text())


def _page(site: Path, log: str) -> dict:
    index = _load(site, "data/index.json")
    row = next(j for j in index["jobs"] if j["log"] == log)
    return _load(site, row["data"])


def test_every_planted_finding_and_no_other(planted):
    site, truth = planted
    for job in truth["jobs"]:
        page = _page(site, job["log"])
        assert sorted(f["id"] for f in page["findings"]) == job["findings"], job["log"]
        for f in page["findings"]:
            assert f["severity"] in ("error", "warning", "info") and f["title"] and f["detail"]
            assert f["section"] in (
                "metrics",
                "progression",
                "policy",
                "timing",
                "tasks",
                "rollouts",
                "overview",
                "batches",
                "config",
            )
        if "policy_frozen_severity" in job:
            pf = next(f for f in page["findings"] if f["id"] == "policy_frozen")
            assert pf["severity"] == job["policy_frozen_severity"]
    # the index carries them too (its findings column), and each run of one job the same
    index = _load(site, "data/index.json")
    by_log = {j["log"]: j for j in index["jobs"]}
    for job in truth["jobs"]:
        row = by_log[job["log"]]
        assert sorted(f["id"] for f in row["findings"]) == job["findings"]
        run = next(r for r in index["runs"] if row["id"] in r["jobs"])
        assert sorted(f["id"] for f in run["findings"]) == job["findings"]


def test_finding_details_name_the_planted_values(planted):
    site, truth = planted
    page = _page(site, truth["jobs"][0]["log"])
    f = {x["id"]: x for x in page["findings"]}
    assert (
        f["step_time_outlier"]["title"] == f"Step {P.OUTLIER_STEP} took 3.5x the median step time"
    )
    assert f["infra_burst"]["title"].endswith(f"step {P.OUTLIER_STEP}")
    assert "8 of 28 rollouts" in f["infra_burst"]["detail"]
    assert "90%" in f["gen_wait_high"]["title"] and f["gen_wait_high"]["section"] == "rollouts"
    assert "0% (steps 1–4) to 30% (steps 9–12)" in f["error_rate_rising"]["detail"]
    mid = _page(site, truth["jobs"][3]["log"])
    assert any(x["title"] == "Log starts mid-run at step 182" for x in mid["findings"])


def _tasks_truth(truth: dict) -> dict:
    trials = truth["jobs"][0]["trials"]
    by_task: dict[str, list[dict]] = defaultdict(list)
    for t in trials:
        by_task[t["task"]].append(t)
    out = {}
    for task, ts in by_task.items():
        graded = [t for t in ts if t["reward"] is not None]
        ok = [t for t in graded if t["reward"] > 0]
        solved_steps = sorted({t["step"] for t in ok if t["step"] is not None})
        exc = Counter(t["exception"] for t in ts if t["exception"])
        out[task] = {
            "trials": len(ts),
            "graded": len(graded),
            "successes": len(ok),
            "first_solved_step": solved_steps[0] if solved_steps else None,
            "last_solved_step": solved_steps[-1] if solved_steps else None,
            "top_exception": exc.most_common(1)[0][0] if exc else None,
            "category": truth["jobs"][0]["categories"][task],
        }
    return out


@pytest.mark.parametrize("kind", ["job", "run"])
def test_tasks_value_by_value(planted, kind):
    site, truth = planted
    job = _page(site, truth["jobs"][0]["log"])
    page = job if kind == "job" else _load(site, f"data/runs/{job['run']}.json")
    t = page["tasks"]
    want = _tasks_truth(truth)
    n = len(truth["jobs"][0]["trials"])
    assert t["attribution"] == "time"
    assert t["trials"] == n and t["after_last_step"] == truth["jobs"][0]["in_flight"]
    assert t["attributed"] == n - truth["jobs"][0]["in_flight"] and t["steps"] == P.STEPS
    assert t["tasks_total"] == len(want)
    for row in t["rows"]:
        w = want[row["name"]]
        for k in (
            "trials",
            "graded",
            "successes",
            "first_solved_step",
            "last_solved_step",
            "top_exception",
            "category",
        ):
            assert row[k] == w[k], (row["name"], k)
        assert row["success_rate"] == (w["successes"] / w["graded"] if w["graded"] else None)
    # rows in order of the first solved step, never-solved last
    firsts = [r["first_solved_step"] for r in t["rows"]]
    solved = [f for f in firsts if f is not None]
    assert solved == sorted(solved) and firsts[len(solved) :] == [None] * (
        len(firsts) - len(solved)
    )
    lists = {x["category"]: x for x in t["lists"]}
    for cat in ("learned", "forgotten", "always", "never"):
        names = sorted(k for k, v in want.items() if v["category"] == cat)
        assert sorted(lists[cat]["tasks"]) == names
        share = sum(want[k]["trials"] for k in names) / n
        assert lists[cat]["share_of_rollouts"] == pytest.approx(share)
    # the full table beside the page: every row with its per-step cells
    table = json.loads(gzip.decompress((site / page["url"] / t["table_file"]).read_bytes()))
    learn = next(r for r in table["tasks"] if r["name"] == "learn-sql")
    assert [(c["step"], c["trials"], c["successes"]) for c in learn["steps"]] == [
        (s, P.SAMPLES, P.SAMPLES if s > P.STEPS // 2 else 0) for s in range(1, P.STEPS + 1)
    ]


def test_wasted_rollouts_per_step(planted):
    site, truth = planted
    t = _page(site, truth["jobs"][0]["log"])["tasks"]
    groups: dict[tuple[int, str], list[float]] = defaultdict(list)
    for tr in truth["jobs"][0]["trials"]:
        if tr["step"] is not None and tr["reward"] is not None:
            groups[(tr["step"], tr["task"])].append(tr["reward"])
    per_step: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for (s, _), rs in groups.items():
        per_step[s][0] += 1
        per_step[s][1] += len(set(rs)) == 1
    got = {w["step"]: (w["groups"], w["all_equal"]) for w in t["wasted"]["steps"]}
    assert got == {s: tuple(v) for s, v in per_step.items()}
    g = sum(v[0] for v in per_step.values())
    e = sum(v[1] for v in per_step.values())
    assert t["wasted"]["share"] == pytest.approx(e / g)


def test_rollout_anatomy_per_step_and_kind(planted):
    site, truth = planted
    r = _page(site, truth["jobs"][0]["log"])["rollouts"]
    trials = truth["jobs"][0]["trials"]
    for s in r["per_step"]:
        ts = [t for t in trials if t["step"] == s["step"]]
        assert s["anatomy"]["trials"] == len(ts)
        assert s["anatomy"]["env_setup_s"] == pytest.approx(
            statistics.fmean(t["env_setup_s"] for t in ts)
        )
        assert s["anatomy"]["duration_mean_s"] == pytest.approx(
            statistics.fmean(t["duration_s"] for t in ts)
        )
    slow = next(s for s in r["per_step"] if s["step"] == P.OUTLIER_STEP)
    assert slow["anatomy"]["env_setup_s"] > 5 * r["per_step"][0]["anatomy"]["env_setup_s"]
    kinds = {k["kind"]: k["anatomy"] for k in r["by_kind"]}
    assert (
        kinds["infrastructure"]["trials"] == 8
        and kinds["infrastructure"]["env_setup_s"] == P.INFRA_ENV_S
    )
    assert kinds["infrastructure"]["agent_exec_s"] == 0
    assert r["overall"]["overhead_s"] == pytest.approx(P.OVERHEAD_S)
    assert sum(v for v in r["shares"].values()) == pytest.approx(1.0)
    assert r["slowest_tasks"][0]["name"] == P.INFRA_TASK
    tok = [t["tokens"] for t in trials]
    assert (
        r["tokens"]["input_total"],
        r["tokens"]["output_total"],
        r["tokens"]["cache_total"],
    ) == (
        sum(x[0] for x in tok),
        sum(x[1] for x in tok),
        sum(x[2] for x in tok),
    )
    assert r["tokens"]["cache_mean"] == pytest.approx(statistics.fmean(x[2] for x in tok))
    step1 = next(s for s in r["per_step"] if s["step"] == 1)
    assert step1["input_tokens"] == sum(t["tokens"][0] for t in trials if t["step"] == 1)


def test_published_json_matches_the_schemas(planted):
    site, _ = planted
    index = _load(site, "data/index.json")
    schema("index").validate(index)
    for kind, rows in (("job", index["jobs"]), ("run", index["runs"])):
        for row in rows:
            page = _load(site, row["data"])
            schema(kind).validate(page)
            if page["tasks"]:
                table = json.loads(
                    gzip.decompress((site / page["url"] / page["tasks"]["table_file"]).read_bytes())
                )
                schema("tasks").validate(table)


def test_compare_items_carry_findings_and_differing_config(planted):
    site, truth = planted
    text = (site / "compare" / "items.js").read_text()
    items = decode_compare_items(json.loads(text[text.index(", ") + 2 : text.rindex(");")]))
    by_id = {(i["kind"], i["id"]): i for i in items}
    index = _load(site, "data/index.json")
    lr = next(j for j in index["jobs"] if j["log"] == truth["jobs"][1]["log"])
    item = by_id[("job", lr["id"])]
    assert [f["id"] for f in item["findings"]] == ["lr_zero", "policy_frozen"]
    # only keys that differ among the configs there are: the lr and the run name do, the
    # sample count does not (a log without a config dump, the mid-run one, is left out)
    assert item["config"] == {
        "trainer.policy.optimizer_config.lr": "0.0",
        "trainer.run_name": "plants-lr-zero",
    }
    mid = next(j for j in index["jobs"] if j["log"] == truth["jobs"][3]["log"])
    assert by_id[("job", mid["id"])]["config"] == {}
    tasks_job = next(j for j in index["jobs"] if j["log"] == truth["jobs"][0]["log"])
    assert by_id[("job", tasks_job["id"])]["tasks"] == tasks_job["url"] and item["tasks"] is None
    # its run of one job shares the job's table: written once, in the job's folder
    assert by_id[("run", tasks_job["run"])]["tasks"] == tasks_job["url"]
    assert not (site / "runs" / tasks_job["run"] / "tasks.json.gz").exists()
    solved = (site / tasks_job["url"] / "solved.js").read_text()
    assert "learn-sql" in solved and solved.startswith("sitegen.data(")


def test_a_time_zone_difference_is_shifted_and_said(planted):
    site, truth = planted
    job = next(j for j in truth["jobs"] if "offset_s" in j)
    t = _page(site, job["log"])["tasks"]
    assert t["attribution"] == "time" and t["attributed"] == job["attributed"] and t["steps"] == 6
    assert f"shifted by {job['offset_s'] / 3600:+g} h" in t["attribution_note"]


def test_report_md_lists_the_findings(planted):
    site, truth = planted
    page = _page(site, truth["jobs"][0]["log"])
    report = (site / page["url"] / "report.md").read_text()
    assert "## Findings" in report
    for f in page["findings"]:
        assert f"- **{f['severity']}** {f['title']}" in report
