"""The golden scenario: its files, the readable form they are kept in, and the checks of every
figure they hold against the ground truth synth wrote for it.

A golden file is kept readable so that a refresh shows the values that moved: JSON (a data
file, a chart's Vega-Lite spec, the argument of each ``sitegen.data(...)`` call of a data
script) pretty-printed with sorted keys, one value a line; Markdown as it is. The checks
(:data:`CHECKS`) read the same documents from a fresh build or from tests/golden, and
``make golden`` writes nothing unless they pass on the fresh build.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest

from sitegen.commands.build import build
from sitegen.jsonio import dumps
from sitegen.options import BuildOptions
from sitegen.synth import TRUTH_FILE, synth
from tests.conftest import page_specs

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
JOB = "exp-async.async-run_561773"
JOB_LOG = "exp-async/logs/async-run_561773.out"
RUN = "exp-async"  # two jobs: a resume, discarded steps
# site file (or page#chart) -> its golden file
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
REWARD = "reward/avg_raw_reward"
STEP = "timing/step"
WAIT = "timing/wait_for_generation_buffer"


def make_site(root: Path) -> tuple[Path, dict]:
    """(site, ground truth) of the golden scenario, built under ``root``."""
    synth(root / "a", seed=11, steps=8, trials_per_step=2)
    build(BuildOptions(archive=root / "a", out=root / "site", workers=1, now=0.0))
    return root / "site", json.loads((root / "a" / TRUTH_FILE).read_text())


def site_bytes(site: Path, src: str) -> bytes:
    """A golden file's source as the site holds it (a chart: the spec its page embeds)."""
    if "#" in src:
        page, name = src.split("#")
        return dumps(page_specs(site / page / "index.html")[name], indent=True)
    return (site / src).read_bytes()


# -- the readable form ----------------------------------------------------------------------------

_CALL_RE = re.compile(r'sitegen\.data\(("(?:[^"\\]|\\.)*"), (.*)\);')


def _pretty(value: object) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def readable(name: str, data: bytes) -> bytes:
    """The golden form of a site file's bytes (``name``: the golden file's name)."""
    text = data.decode("utf-8")
    if name.endswith(".json"):
        return (_pretty(json.loads(text)) + "\n").encode()
    if name.endswith(".js"):  # one sitegen.data(name, value) call a line
        calls = [_CALL_RE.fullmatch(line) for line in text.splitlines()]
        assert all(calls), f"{name}: not one sitegen.data call a line"
        return "".join(
            f"sitegen.data({m[1]},\n{_pretty(json.loads(m[2]))}\n);\n" for m in calls if m
        ).encode()
    return data


def parse(name: str, data: bytes) -> object:
    """The document a golden file (or a site file) holds: JSON as objects, a data script as
    ``{its name: its value}``, Markdown as text."""
    text = data.decode("utf-8")
    if name.endswith(".json"):
        return json.loads(text)
    if name.endswith(".js"):
        calls = re.findall(
            r'sitegen\.data\(("(?:[^"\\]|\\.)*"),\s*(.*?)\s*\);\s*$', text, re.S | re.M
        )
        return {json.loads(n): json.loads(v) for n, v in calls}
    return text


def documents(read: Callable[[str], bytes]) -> dict[str, object]:
    """Every golden document by its golden file's name, ``read(src)`` giving its bytes."""
    return {name: parse(name, read(src)) for src, name in FILES.items()}


# -- the truth, per step ----------------------------------------------------------------------------


def _num(v):
    return float(v) if isinstance(v, str) else v  # synth writes "nan" and "inf"


def _finite(vals) -> list[float]:
    return [v for v in map(_num, vals) if isinstance(v, int | float) and math.isfinite(v)]


def job_steps(truth: dict, log: str) -> dict[int, dict]:
    return {int(s): m for s, m in truth["jobs"][log]["metrics"].items()}


def run_steps(truth: dict, run: dict) -> dict[int, dict]:
    """The steps a run kept: each job's up to the step the next one resumed from, the last
    job's all."""
    out: dict[int, dict] = {}
    for i, log in enumerate(run["logs"]):
        cut = run["resumed_from"][i] if i < len(run["resumed_from"]) else None
        out.update({s: m for s, m in job_steps(truth, log).items() if cut is None or s <= cut})
    return dict(sorted(out.items()))


def _values(steps: dict[int, dict], name: str) -> list[float]:
    return _finite(m.get(name) for m in steps.values())


def _mean(xs: list[float]) -> float | None:
    return statistics.fmean(xs) if xs else None


def headline(steps: dict[int, dict]) -> dict:
    """What a page's headline must say of these steps, worked out from the truth."""
    rewards = _values(steps, REWARD)
    paired = [m for m in steps.values() if _finite([m.get(WAIT)]) and _finite([m.get(STEP)])]
    pass_keys = {k for m in steps.values() for k in m if k.startswith("reward/avg_pass_at_")}
    (pass_key,) = pass_keys or {None}
    stale_max = _values(steps, "async/staleness_max")
    return {
        "steps": len(steps),
        "first_step": min(steps),
        "last_step": max(steps),
        "reward_mean": _mean(rewards),
        "reward_max": max(rewards),
        "reward_last": rewards[-1],
        "pass_at_k": int(pass_key.rsplit("_", 1)[1]) if pass_key else None,
        "pass_at_k_mean": _mean(_values(steps, pass_key)) if pass_key else None,
        "total_time_s": math.fsum(_values(steps, STEP)),
        "step_time_mean_s": _mean(_values(steps, STEP)),
        "gen_wait_mean_s": _mean(_values(steps, WAIT)),
        "gen_wait_share": math.fsum(m[WAIT] for m in paired) / math.fsum(m[STEP] for m in paired),
        "avg_tokens_mean": _mean(_values(steps, "generate/avg_num_tokens")),
        "staleness_mean": _mean(_values(steps, "async/staleness_mean")),
        "staleness_max": max(stale_max) if stale_max else None,
    }


def _approx(want):
    return pytest.approx(want, rel=1e-12, abs=1e-12) if isinstance(want, float) else want


def _same_headline(got: dict, steps: dict[int, dict], where: str) -> None:
    for key, want in headline(steps).items():
        assert got[key] == _approx(want), (where, key)


def _metrics(doc: dict, steps: dict[int, dict], where: str) -> None:
    """A page's per-step series and per-metric statistics, value by value."""
    assert doc["series"]["step"] == list(steps), where
    names = sorted({k for m in steps.values() for k in m})
    assert sorted(doc["metrics"]) == names, where
    for name in names:
        vals = [_num(m.get(name)) for m in steps.values()]
        finite = _finite(vals)
        st = doc["metrics"][name]
        assert st["count"] == len(finite), (where, name)
        if finite:
            assert st["mean"] == _approx(statistics.fmean(finite)), (where, name)
            assert (st["min"], st["max"]) == (min(finite), max(finite)), (where, name)
            if len(finite) > 1:
                want_std = statistics.stdev(finite)
                assert st["std"] == pytest.approx(want_std, rel=1e-9, abs=1e-15), (where, name)
            else:
                assert st["std"] is None, (where, name)
        for got, want in zip(doc["series"][name], vals, strict=True):
            finite_want = want is not None and math.isfinite(want)
            assert got == (_approx(float(want)) if finite_want else None), (where, name)


# -- the checks ---------------------------------------------------------------------------------


def check_job(docs: dict, truth: dict) -> None:
    """The job page's data: its log's truth, figure by figure."""
    j, t = docs["job.json"], truth["jobs"][JOB_LOG]
    steps = job_steps(truth, JOB_LOG)
    assert (j["id"], j["log"], j["run"]) == (JOB, JOB_LOG, RUN)
    assert (j["status"], j["status_detail"]) == (t["end"], t["status_detail"])
    assert (j["first_step"], j["last_step"]) == (t["first_step"], t["last_step"])
    assert j["metric_blocks"] == len(t["steps"]) == len(steps)
    assert j["checkpoints"] == t["checkpoints"] and j["final_checkpoint"] == t["final_checkpoint"]
    assert j["resumed_from"] == t["resumed_from"] and bool(j["mid_run"]) == t["mid_run"]
    assert (j["run_name"], j["model"], j["metric_form"]) == (
        t["run_name"],
        t["model"],
        t["metric_form"],
    )
    assert j["n_samples_per_prompt"] == t["n_samples"] and j["planned_steps"] == t["planned_steps"]
    assert j["config"]["data"]["train_data"] == t["train_data"]
    _metrics(j, steps, "job")
    _same_headline(j["headline"], steps, "job")
    for key in ("reward_mean", "reward_max", "reward_last", "total_time_s"):
        assert j[key] == j["headline"][key]
    assert j["reward_spark"] == [m[REWARD] for m in steps.values()]
    # the timer tree (its nesting is SkyRL's): each timer's total, mean and count over the
    # steps that logged it, a "(rest)" for what its parent's children leave
    tree = j["timing"]["tree"]
    assert tree["count"] == j["timing"]["steps"] == len(_values(steps, STEP))
    _timer(tree, steps, tree["total_s"], None)
    # the batch lines: totals, per step, per exception
    b, tb = j["batches"], t["batches"]
    assert {k: b[k] for k in tb} == tb and b["exceptions"] == t["batch_exceptions"]
    per_step = {int(s): v for s, v in t["batches_per_step"].items()}
    for s, want in per_step.items():
        got = b["per_step"][str(s)]
        assert {k: got[k] for k in want if not k.startswith("exc:")} == {
            k: v for k, v in want.items() if not k.startswith("exc:")
        }
        assert got["exceptions"] == {k[4:]: v for k, v in want.items() if k.startswith("exc:")}
    series = j["batch_series"]
    assert series["step"] == sorted(per_step)
    assert series["failed"] == [per_step[s]["failed"] for s in sorted(per_step)]
    assert series["masked"] == [per_step[s]["masked"] for s in sorted(per_step)]
    for exc in t["batch_exceptions"]:
        assert series[exc] == [per_step[s].get(f"exc:{exc}", 0) for s in sorted(per_step)]
    # the vLLM stats lines
    v, tv = j["vllm"], t["vllm"]
    n = tv["samples"]
    assert (v["samples"], v["engines"]) == (n, len(tv["engines"]))
    assert [e["engine"] for e in v["per_engine"]] == tv["engines"]
    assert v["running_mean"] == _approx(tv["sums"]["running"] / n)
    assert v["waiting_mean"] == _approx(tv["sums"]["waiting"] / n)
    assert v["waiting_max"] == tv["waiting_max"]
    assert v["gen_throughput_mean"] == pytest.approx(tv["sums"]["gen"] / n, rel=1e-9)
    assert v["kv_cache_pct_mean"] == pytest.approx(tv["sums"]["kv"] / n, rel=1e-9)
    assert v["prefix_hit_pct_mean"] == pytest.approx(tv["sums"]["prefix"] / tv["prefix_samples"])
    # the sum of every line's per-interval count; none when no line of the job reports one
    assert v["preemptions_total"] == tv["sums"].get("preemptions")
    assert (v["aggregated_lines"], v["suppressed_copies"]) == (tv["aggregated"], tv["suppressed"])
    _findings(j["findings"], steps, t["end"], t["status_detail"], "job")


def _timer(node: dict, steps: dict[int, dict], step_total: float, parent: float | None) -> float:
    """Check one node of the timer tree (and below it) against the truth; its total."""
    if node["name"] == "(rest)":
        total = node["total_s"]  # checked by the parent: what its other children leave
    else:
        vals = _values(steps, f"timing/{node['name']}")
        total = math.fsum(vals)
        assert node["count"] == len(vals), node["name"]
        assert node["total_s"] == _approx(total), node["name"]
        assert node["mean_s"] == _approx(statistics.fmean(vals)), node["name"]
    assert node["share_of_step"] == _approx(total / step_total), node["name"]
    assert node["share_of_parent"] == (None if parent is None else _approx(total / parent))
    kids = [_timer(c, steps, step_total, total) for c in node["children"]]
    if kids:
        assert node["children"][-1]["name"] == "(rest)"
        assert kids[-1] == _approx(total - math.fsum(kids[:-1])), node["name"]
    return total


def _findings(found: list[dict], steps: dict[int, dict], end: str, detail: str, where: str) -> None:
    """The findings the truth calls for: a non-finite policy metric, the generation wait over
    80 % of step time, the time limit; no other (the scenario plants no other)."""
    bad = sorted(
        {
            k
            for m in steps.values()
            for k, v in m.items()
            if k.startswith(("policy/", "loss/", "reward/")) and not _finite([v])
        }
    )
    h = headline(steps)
    want = {
        "non_finite_metric": f"NaN or infinite {bad[0]}" if bad else None,
        "gen_wait_high": f"{h['gen_wait_share']:.0%} of step time waits for generation"
        if h["gen_wait_share"] > 0.8
        else None,
        "job_time_limit": "Job reached its SLURM time limit"
        if (end, detail) == ("cancelled", "TIME LIMIT")
        else None,
    }
    got = {f["id"]: f["title"] for f in found}
    if where == "run":
        want["job_time_limit"] = None  # the run's last job completed
    assert got == {k: v for k, v in want.items() if v}, where


def check_run(docs: dict, truth: dict) -> None:
    """The run page's data: the jobs' truth stitched at each resume, and its trials' truth."""
    r = docs["run.json"]
    (tr,) = [x for x in truth["runs"] if JOB_LOG in x["logs"]]
    steps = run_steps(truth, tr)
    ids = {j["log"]: j["id"] for j in docs["index.json"]["jobs"]}
    assert r["id"] == RUN and r["jobs"] == [ids[log] for log in tr["logs"]]
    assert list(steps) == tr["steps"] and r["steps"] == len(tr["steps"])
    assert (r["first_step"], r["last_step"]) == (tr["steps"][0], tr["steps"][-1])
    assert r["resumed_from"] == tr["resumed_from"]
    assert [m[REWARD] for m in steps.values()] == tr["reward"] == r["reward_spark"]
    # the steps the resume discarded: the first job's, past the step it resumed from
    first = job_steps(truth, tr["logs"][0])
    assert r["discarded_steps"] == len(tr["discarded"])
    assert r["discarded"] == [
        {"step": s, "time_s": first[s][STEP], "reward": first[s][REWARD]} for s in tr["discarded"]
    ]
    assert r["discarded_time_s"] == _approx(math.fsum(first[s][STEP] for s in tr["discarded"]))
    (restart,) = r["restarts"]
    assert (restart["job"], restart["resumed_from"]) == (ids[tr["logs"][1]], tr["resumed_from"][0])
    assert restart["discarded_steps"] == tr["discarded"]
    assert [(c["job"], c["step"]) for c in r["checkpoints"]] == [
        (ids[log], s) for log in tr["logs"] for s in truth["jobs"][log]["checkpoints"]
    ]
    _metrics(r, steps, "run")
    _same_headline(r["headline"], steps, "run")
    _findings(r["findings"], steps, "complete", "", "run")
    _trials(r, truth["trials"][tr["trials"]])
    _tasks(r["tasks"], truth["trials"][tr["trials"]]["per_trial"])


def _trials(r: dict, tt: dict) -> None:
    """The run's trials: counts, exceptions, turns and rewards as synth wrote them."""
    t = r["trials"]
    for key in ("path", "total", "malformed", "missing", "eval"):
        assert t[key] == tt[key], key
    assert t["exceptions"] == tt["exceptions"]
    turns, rewards = tt["turns"], tt["rewards"]
    assert t["turns"]["count"] == len(turns)
    assert t["turns"]["mean"] == _approx(statistics.fmean(turns))
    assert t["turns"]["median"] == statistics.median(turns)
    assert (t["turns"]["min"], t["turns"]["max"]) == (min(turns), max(turns))
    assert t["turn_histogram"] == {str(k): n for k, n in sorted(Counter(turns).items())}
    success = sum(1 for x in rewards if x > 0)
    assert t["reward"]["count"] == len(rewards) and t["reward"]["success"] == success
    assert t["reward"]["failure"] == len(rewards) - success
    assert t["reward"]["mean"] == _approx(statistics.fmean(rewards))
    assert t["reward"]["success_rate"] == r["trial_success_rate"] == success / len(rewards)
    errors = tt["total"] - tt["exceptions"].get("none", 0)
    assert t["error_rate"] == r["trial_error_rate"] == errors / tt["total"]
    for group in ("turns_by_exception", "turns_by_outcome"):
        assert set(t[group]) == set(tt[group]), group
        for key, xs in tt[group].items():
            got = t[group][key]
            assert got["count"] == len(xs) and got["median"] == statistics.median(xs), key
            assert got["mean"] == _approx(statistics.fmean(xs)), key


def _tasks(ta: dict, per_trial: list) -> None:
    """The task table, lists and wasted groups, worked out from where synth put each trial:
    success is a reward above 0; the early and late windows are the first and last third of
    the steps (rounded up); learned = no success early, some late; forgotten the reverse."""
    placed = [(task, step, reward) for task, step, reward in per_trial if step is not None]
    steps = sorted({s for _, s, _ in placed})
    assert ta["trials"] == len(per_trial) and ta["attributed"] == len(placed)
    assert ta["steps"] == len(steps)
    lo, hi = steps[0], steps[-1]
    w = -(-(hi - lo + 1) // 3)
    early, late = (lo, lo + w - 1), (hi - w + 1, hi)
    assert (tuple(ta["early_window"]), tuple(ta["late_window"])) == (early, late)
    by_task = defaultdict(list)
    for task, step, reward in per_trial:
        by_task[task].append((step, reward))
    rows = {row["name"]: row for row in ta["rows"]}
    assert set(rows) == set(by_task) and ta["tasks_total"] == len(by_task)
    category = {}
    for task, trials in by_task.items():
        row, graded = rows[task], [(s, x) for s, x in trials if x is not None]
        solved = sorted(s for s, x in graded if x > 0 and s is not None)

        def window(a: int, b: int, graded=graded) -> tuple[int, int]:
            inside = [x for s, x in graded if s is not None and a <= s <= b]
            return len(inside), sum(1 for x in inside if x > 0)

        (eg, es), (lg, ls) = window(*early), window(*late)
        successes = sum(1 for _, x in graded if x > 0)
        if graded and successes == len(graded):
            category[task] = "always"
        elif successes == 0:
            category[task] = "never"
        elif eg and lg and es == 0 and ls > 0:
            category[task] = "learned"
        elif eg and lg and es > 0 and ls == 0:
            category[task] = "forgotten"
        else:
            category[task] = "mixed"
        want = {
            "trials": len(trials),
            "graded": len(graded),
            "successes": successes,
            "success_rate": successes / len(graded) if graded else None,
            "first_solved_step": solved[0] if solved else None,
            "last_solved_step": solved[-1] if solved else None,
            "early_rate": es / eg if eg else None,
            "late_rate": ls / lg if lg else None,
            "category": category[task],
        }
        assert {k: row[k] for k in want} == want, task
        assert row["reward_mean"] == _approx(statistics.fmean(x for _, x in graded))
    for lst in ta["lists"]:
        members = sorted(t for t, c in category.items() if c == lst["category"])
        n = sum(len(by_task[t]) for t in members)
        assert (sorted(lst["tasks"]), lst["trials"]) == (members, n), lst["category"]
        assert lst["share_of_rollouts"] == _approx(n / len(per_trial))
    # prompt groups: a task's graded trials at one step, two at least; all rewards equal: wasted
    groups = defaultdict(list)
    for task, step, reward in placed:
        if reward is not None:
            groups[(step, task)].append(reward)
    per_step: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for (step, _), rewards in groups.items():
        if len(rewards) > 1:
            per_step[step][0] += 1
            per_step[step][1] += len(set(rewards)) == 1
    wasted = ta["wasted"]
    assert [(x["step"], x["groups"], x["all_equal"]) for x in wasted["steps"]] == [
        (s, g, e) for s, (g, e) in sorted(per_step.items())
    ]
    assert wasted["groups"] == sum(g for g, _ in per_step.values())


def _status(end: str) -> str:
    """The status a log ending so has in the golden build: made at time 0, before every log's
    last change, so a log without an end line is still running (not yet silent 15 minutes)."""
    return "running" if end == "incomplete" else end


def check_index(docs: dict, truth: dict) -> None:
    """The index: every job and run of the archive as its truth says, what was skipped, totals."""
    index = docs["index.json"]
    jobs = {j["log"]: j for j in index["jobs"]}
    assert set(jobs) == set(truth["jobs"])
    for log, t in truth["jobs"].items():
        j, steps = jobs[log], job_steps(truth, log)
        assert (j["status"], j["first_step"], j["last_step"]) == (
            _status(t["end"]),
            t["first_step"],
            t["last_step"],
        )
        assert j["metric_blocks"] == len(t["steps"])
        _same_headline(j["headline"], steps, log)
        assert j["reward_spark"] == [m[REWARD] for m in steps.values()]
    logs_of = {j["id"]: j["log"] for j in index["jobs"]}
    runs = {tuple(logs_of[i] for i in r["jobs"]): r for r in index["runs"]}
    assert set(runs) == {tuple(r["logs"]) for r in truth["runs"]}
    for tr in truth["runs"]:
        r = runs[tuple(tr["logs"])]
        assert (r["steps"], r["discarded_steps"]) == (len(tr["steps"]), len(tr["discarded"]))
        assert r["resumed_from"] == tr["resumed_from"]
        _same_headline(r["headline"], run_steps(truth, tr), r["id"])
    assert [s["path"] for s in index["skipped"]] == truth["skipped"]
    totals = index["totals"]
    assert (totals["jobs"], totals["runs"]) == (len(truth["jobs"]), len(truth["runs"]))
    assert totals["steps"] == sum(len(r["steps"]) for r in truth["runs"])
    assert totals["trials"] == sum(t["total"] for t in truth["trials"].values())


def _cells(h: dict, trials: dict | None) -> list:
    """A comparison row's cells, written from the truth's figures as a reader reads them (the
    durations in seconds: the page prints them in one unit over the picks)."""
    stale = h["staleness_mean"]
    return [
        str(h["steps"]),
        *(f"{h[k]:.4f}" for k in ("reward_mean", "reward_max", "reward_last")),
        f"{h['pass_at_k_mean']:.4f} @{h['pass_at_k']}",
        _approx(h["step_time_mean_s"]),
        _approx(h["gen_wait_mean_s"]),
        f"{h['gen_wait_share']:.1%}",
        f"{h['avg_tokens_mean']:,.1f}",
        f"{stale:.3f} (max {h['staleness_max']:g})" if stale is not None else "\u2013",
        *(
            (f"{trials['success']:.1%}", f"{trials['error']:.1%}")
            if trials
            else ("\u2013", "\u2013")
        ),
    ]


def check_compare_items(docs: dict, truth: dict) -> None:
    """The comparison page's rows: each run's and job's cells, from the truth."""
    items = docs["compare-items.js"]["compare-items"]
    col = {c: i for i, c in enumerate(items["columns"])}
    # (a row that repeats another's figures, a one-job run's job, names that row by its index)
    rows = {
        (row[col["kind"]], row[col["id"]]): items["rows"][row[3]][col["cells"]]
        if len(row) == 4 and isinstance(row[3], int)
        else row[col["cells"]]
        for row in items["rows"]
    }
    index = docs["index.json"]
    ids = {j["log"]: j["id"] for j in index["jobs"]}
    run_of = {tuple(r["jobs"]): r["id"] for r in index["runs"]}
    for tr in truth["runs"]:
        trials = None
        if tr["trials"]:
            tt = truth["trials"][tr["trials"]]
            success = sum(1 for x in tt["rewards"] if x > 0) / len(tt["rewards"])
            trials = {
                "success": success,
                "error": 1 - tt["exceptions"].get("none", 0) / tt["total"],
            }
        rid = run_of[tuple(ids[log] for log in tr["logs"])]
        assert rows[("run", rid)] == _cells(headline(run_steps(truth, tr)), trials), rid
    for log in truth["jobs"]:
        job_trials = truth["job_trials"].get(log)
        trials = None
        if job_trials:
            tt = truth["trials"][job_trials]
            success = sum(1 for x in tt["rewards"] if x > 0) / len(tt["rewards"])
            trials = {
                "success": success,
                "error": 1 - tt["exceptions"].get("none", 0) / tt["total"],
            }
        assert rows[("job", ids[log])] == _cells(headline(job_steps(truth, log)), trials), log


def _smooth(ys: list[float]) -> list[float]:
    """A centred mean of three (two at the ends), as the curves are drawn."""
    return [statistics.fmean(ys[max(0, i - 1) : i + 2]) for i in range(len(ys))]


def check_curves(docs: dict, truth: dict) -> None:
    """The run's curves for the comparison page: each metric's finite values smoothed, to 5
    decimals; and the run's findings."""
    (tr,) = [x for x in truth["runs"] if JOB_LOG in x["logs"]]
    steps = run_steps(truth, tr)
    curves = docs["run-curves.js"][f"curves:run:{RUN}"]
    metrics = {
        "reward": REWARD,
        "step time (s)": STEP,
        "generation wait (s)": WAIT,
        "avg tokens": "generate/avg_num_tokens",
        "staleness": "async/staleness_mean",
        "policy KL": "policy/policy_kl",
        "policy entropy": "policy/policy_entropy",
        "gradient norm": "policy/raw_grad_norm",
        "pass@k": "reward/avg_pass_at_8",
    }
    assert set(curves) == set(metrics)
    for name, key in metrics.items():
        pts = [(s, _num(m[key])) for s, m in steps.items() if _finite([m.get(key)])]
        smoothed = _smooth([y for _, y in pts])
        assert curves[name] == [[s, round(y, 5)] for (s, _), y in zip(pts, smoothed, strict=True)]
    details = [f["detail"] for f in docs["run.json"]["findings"]]
    assert docs["run-curves.js"][f"findings:run:{RUN}"] == details


def check_charts(docs: dict, truth: dict) -> None:
    """The job page's charts: the reward and pass@k per step (and smoothed), each timer's
    seconds per step."""
    steps = job_steps(truth, JOB_LOG)
    layers = {d["metric"]: d for d in docs["reward.vl.json"]["data"]["values"]}
    for name, key in (("reward", REWARD), ("pass@8", "reward/avg_pass_at_8")):
        ys = [m[key] for m in steps.values()]
        assert layers[name]["step"] == list(steps) and layers[name]["value"] == ys, name
        assert layers[name]["smoothed"] == pytest.approx(_smooth(ys), rel=1e-12), name
    # the timers that hold no other (each step's seconds) and each parent's "(rest)" (its
    # seconds less its children's), as the job's timer tree nests them
    parts = {
        p["part"]: dict(zip(p["x"], p["value"], strict=True))
        for p in docs["timing_stack.vl.json"]["data"]["values"]
    }
    want: dict[str, dict] = {}

    def stack(node: dict) -> None:
        kids = [c for c in node["children"] if c["name"] != "(rest)"]
        key = f"timing/{node['name']}"
        if not node["children"]:
            want[node["name"]] = {s: m[key] for s, m in steps.items() if key in m}
            return
        want[f"{node['name']} (rest)"] = {
            s: pytest.approx(m[key] - math.fsum(m[f"timing/{c['name']}"] for c in kids), abs=1e-9)
            for s, m in steps.items()
        }
        for c in kids:
            stack(c)

    stack(docs["job.json"]["timing"]["tree"])
    assert parts == want
    # vLLM's generation throughput a minute, per engine: a sample of each engine each minute
    (vllm,) = docs["vllm_throughput.vl.json"]["data"]["values"]
    tv = truth["jobs"][JOB_LOG]["vllm"]
    assert len(vllm["x"]) == tv["samples"] // len(tv["engines"])
    assert statistics.fmean(vllm["y"]) == pytest.approx(tv["sums"]["gen"] / tv["samples"])
    assert all(lo <= y <= hi for lo, y, hi in zip(vllm["lo"], vllm["y"], vllm["hi"], strict=True))


def check_report(docs: dict, truth: dict) -> None:
    """The job's report.md: the overview row and each metric's statistics row."""
    text, t = docs["report.md"], truth["jobs"][JOB_LOG]
    steps = job_steps(truth, JOB_LOG)
    h = headline(steps)
    overview = (
        f"| {JOB} | {t['end']} | {t['first_step']} | {t['last_step']} | {len(steps)} | "
        f"{h['reward_mean']:.4f} | {h['reward_max']:.4f} | {h['reward_last']:.4f} | "
        f"{h['total_time_s']:.1f} |"
    )
    assert overview in text.splitlines()
    rows = ["| " + " | ".join(r) + " |" for r in progression(truth)]
    i = text.splitlines().index(rows[0])
    assert text.splitlines()[i : i + len(rows)] == rows
    for name in sorted({k for m in steps.values() for k in m}):
        vals = _finite(m.get(name) for m in steps.values())
        if not vals or name.startswith("trainer/"):
            continue
        std = statistics.stdev(vals) if len(vals) > 1 else None
        cells = [statistics.fmean(vals), std, min(vals), max(vals)]
        row = f"| {name} | " + " | ".join("" if c is None else f"{c:g}" for c in cells)
        assert f"{row} | {len(vals)} |" in text, name


def progression(truth: dict, sep: str = "") -> list[list[str]]:
    """The job's per-step table, from the truth: step, reward, pass@k, KL (6 decimals), loss,
    step time and generation wait (1 decimal); ``sep`` groups thousands."""

    def cell(v, digits: int) -> str:
        v = _num(v)
        return "nan" if math.isnan(v) else f"{v:{sep}.{digits}f}"

    return [
        [str(s)]
        + [cell(m[k], 4) for k in (REWARD, "reward/avg_pass_at_8")]
        + [cell(m["policy/policy_kl"], 6), cell(m["policy/policy_loss"], 4)]
        + [cell(m[STEP], 1), cell(m[WAIT], 1)]
        for s, m in job_steps(truth, JOB_LOG).items()
    ]


def check_no_secret(docs: dict, truth: dict) -> None:
    """No secret synth planted in the archive is in any golden file."""
    text = json.dumps(docs, ensure_ascii=False)
    assert [s for s in truth["secrets"] if s in text] == []


CHECKS = (
    check_job,
    check_run,
    check_index,
    check_compare_items,
    check_curves,
    check_charts,
    check_report,
    check_no_secret,
)
