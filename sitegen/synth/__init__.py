"""``sitegen synth``: a realistic synthetic archive and the ground truth it holds.

The scenario covers every input variant of docs/formats.md: both layouts, both metric forms
(and split timing blocks), old and new vLLM lines with and without ``ip=`` and with dedup
suffixes, coloured and plain Ray prefixes, batch lines, config dumps with secrets, a resume
chain in each layout whose first job ran past its last checkpoint, every end state, and
Harbor trials with every odd case. Deterministic for a seed (file contents; the live job's
mtime is "now" so that it reads as running).

The ground truth is written to ``synth-truth.json`` at the archive root."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timedelta
from pathlib import Path

from msgspec.structs import replace

from sitegen import SYNTH_TRUTH
from sitegen.errors import SitegenError
from sitegen.progress import archive_counts, counted
from sitegen.synth.harbor import HARBOR_VARIANTS, write_harbor_trials
from sitegen.synth.jobspec import LogTruth, numbered
from sitegen.synth.logs import write_log
from sitegen.synth.plants import write_plants
from sitegen.synth.realjobs import REAL_TRIALS_OWNER, real_specs
from sitegen.synth.trials import step_windows, write_trials
from sitegen.synth.trialtruth import TrialsTruth
from sitegen.synth.vllm import write_infra

TRUTH_FILE = SYNTH_TRUTH
MIN_JOBS = 7
T0 = datetime(2026, 2, 8)  # the first job's start


class SynthError(SitegenError):
    """The folder to write a synthetic archive into cannot be used."""


def _new_folder(out: Path) -> None:
    """Create ``out``; refuse a folder that holds anything (two archives would mix, and the
    ground truth describe one of them) or one that cannot be made."""
    try:
        if out.exists() or out.is_symlink():
            if not out.is_dir():
                raise SynthError(f"{out} exists and is not a folder: give a new folder for synth")
            if any(out.iterdir()):
                raise SynthError(f"{out} is not empty: give a new (or empty) folder for synth")
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SynthError(
            f"cannot create {out}: {exc.strerror}: give a folder you can write"
        ) from None


def synth(
    out: Path,
    seed: int = 0,
    jobs: int = MIN_JOBS,
    steps: int = 12,
    trials_per_step: int = 4,
    pad_mb: float = 0.0,
    trial_kb: float = 4.0,
    long_line_kb: int = 64,
    payload: str = "",
    plants: bool = False,
    real: bool = False,
) -> dict:
    """Write a synthetic archive into ``out`` (created) and return its ground truth.

    ``jobs``: job logs (at least the scenario's 7); ``steps``: each run's length;
    ``trials_per_step``: the experiment run's trials a step; ``pad_mb``: noise padding over
    all logs; ``trial_kb``: each ``result.json``'s size; ``payload``: planted in names and
    messages (injection tests); ``plants``: add the jobs of :mod:`sitegen.synth.plants`;
    ``real``: add the five jobs of docs/formats.md §2–§6 (:mod:`sitegen.synth.realjobs`)."""
    steps = max(steps, 8)
    jobs = max(jobs, MIN_JOBS)
    _new_folder(out)
    c = max(2, steps // 4)
    k = max(c, (steps // 2) // c * c)
    k2 = max(3, (steps // 2) // 3 * 3)
    day = timedelta(days=1)
    # fmt: off
    specs = [
        numbered(
            "exp-async/logs/async-run_561773.out", "async-run", 1, k + 2, "cancelled", T0,
            ckpt_interval=c, long_line_bytes=long_line_kb * 1024, cancel_reason="TIME LIMIT",
            engines=2,
        ),
        numbered(
            "exp-async/logs/async-run_561774.out", "async-run", k + 1, steps, "complete",
            T0 + 3 * day, form="both", vllm_shape="new", colour=False, resume_from=k,
            ckpt_interval=c, engines=3, eval_interval=max(2, steps // 3),
        ),
        numbered(
            "flat/sync-baseline/train_600100.out", "sync-baseline", 1, steps // 2, "failed",
            T0 + 5 * day, async_trainer=False, split_timing=True, colour=False, engines=1,
            ckpt_root="/ckpt/sync",
        ),
        numbered(
            "flat/live/train_600200.log", "live", 1, steps // 3 + 1, "running", T0 + 7 * day,
            engines=0,
        ),
        numbered(
            "flat/stale/train_600150.out", "stale", 1, steps // 3, "incomplete", T0 + 6 * day,
            form="mirror",
        ),
        numbered(
            "flat/chain-a/train_600300.out", "chain", 1, k2 + 1, "cancelled", T0 + 10 * day,
            cancel_reason="PREEMPTION", ckpt_interval=3,
        ),
        numbered(
            "flat/chain-b/train_600301.out", "chain", k2 + 1, steps, "complete", T0 + 12 * day,
            resume_from=k2, ckpt_interval=3, vllm_shape="new",
        ),
    ]
    # fmt: on
    for i in range(jobs - MIN_JOBS):
        name, start = f"extra-{i:03d}", T0 + (20 + i) * day
        specs.append(
            numbered(f"flat/{name}/train_{610000 + i}.out", name, 1, steps, "complete", start)
        )
    if real:
        specs += real_specs(steps, c, T0)
    total_steps = sum(s.last_step - s.first_step + 1 for s in specs)
    pad_total = int(pad_mb * (1 << 20))
    truths: dict[str, LogTruth] = {}
    if payload:
        specs = [replace(s, payload=payload) for s in specs]
        # A folder whose name is hostile too (no "/" can be in a name).
        weird = "flat/we ird ünï <b onmouseover=alert(1)> '..'/train_700000.out"
        specs.append(numbered(weird, "weird", 1, 8, "complete", T0 + 30 * day))
        total_steps += 8
    for i, spec in enumerate(specs):
        spec = replace(
            spec, pad_bytes=pad_total * (spec.last_step - spec.first_step + 1) // total_steps
        )
        path = out / spec.path
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as fh:
            truth = write_log(fh, spec, seed * 1000 + i)
        truths[spec.path] = truth
        if spec.end == "running":
            write_infra(
                path.parent / "infra-engines.log", seed * 1000 + 500 + i, spec.start, 40, truth
            )
            now = time.time()
            os.utime(path, (now, now))
        else:
            end = spec.start + timedelta(hours=6)
            if spec.end == "incomplete":
                end = datetime.now() - timedelta(days=2)
            os.utime(path, (end.timestamp(), end.timestamp()))

    trials: dict[str, TrialsTruth] = {}
    tp = "exp-async/async-run/trace_jobs"
    trials[tp] = write_trials(
        out / tp,
        tp,
        steps * trials_per_step,
        seed * 7 + 1,
        int(trial_kb * 1024),
        variants=True,
        payload=payload,
        # the steps the run kept: the first job's up to the checkpoint the second resumed
        # from (its later steps were discarded), then the second job's
        windows=step_windows(specs[0], truths[specs[0].path], k)
        + step_windows(specs[1], truths[specs[1].path]),
    )
    tp2 = "flat/sync-baseline/trace_jobs"
    trials[tp2] = write_trials(
        out / tp2,
        tp2,
        2 * steps,
        seed * 7 + 2,
        1024,
        variants=False,
        windows=step_windows(specs[2], truths[specs[2].path]),
    )
    tp3 = f"{REAL_TRIALS_OWNER}/trace_jobs"
    if real:
        owner_spec = next(x for x in specs if x.path.startswith(REAL_TRIALS_OWNER + "/"))
        trials[tp3] = write_harbor_trials(
            out / tp3,
            tp3,
            3 * len(HARBOR_VARIANTS),
            seed * 7 + 3,
            windows=step_windows(owner_spec, truths[owner_spec.path]),
        )
    notes_payload = (
        f"\n{payload}\n\n[click me](javascript:alert(1)) <img src=x onerror=alert(1)>\n"
        if payload
        else ""
    )
    (out / "exp-async" / "notes.md").write_text(
        "# async-run\n\nResumed once after the **time limit**. See [the SkyRL docs](https://skyrl.readthedocs.io/).\n"
        + notes_payload
    )
    (out / "misc" / "empty-dir").mkdir(parents=True, exist_ok=True)
    (out / "misc" / "empty-dir" / "README.txt").write_text("nothing to see\n")
    (out / "misc" / "scratch").mkdir(parents=True, exist_ok=True)
    (out / "misc" / "scratch" / "plot.csv").write_text("step,reward\n1,0.5\n")

    p = [s.path for s in specs]
    runs = [
        _run(p[0:2], list(range(1, steps + 1)), tp, [k], [k + 1, k + 2]),
        _run([p[2]], truths[p[2]].steps, tp2),
        _run([p[4]], truths[p[4]].steps),
        _run([p[3]], truths[p[3]].steps),
        _run(p[5:7], list(range(1, steps + 1)), None, [k2], [k2 + 1]),
    ]
    extra: list[dict] = []
    for spec in specs[7:]:
        # a job resumed from a checkpoint of the job before it (same run name) joins its run
        cut = spec.resume_from
        prev = extra[-1] if extra else None
        if cut is not None and prev and truths[prev["logs"][-1]].run_name == spec.run_name:
            prev["logs"].append(spec.path)
            prev["resumed_from"].append(cut)
            prev["discarded"] += [x for x in prev["steps"] if x > cut]
            prev["steps"] = [x for x in prev["steps"] if x <= cut] + truths[spec.path].steps
        else:
            extra.append(_run([spec.path], list(truths[spec.path].steps)))
    runs += extra
    for r in runs:
        stitched: dict[int, dict] = {}
        for log in r["logs"]:
            lt = truths[log]
            if lt.resumed_from is not None:
                for s in [s for s in stitched if s > lt.resumed_from]:
                    del stitched[s]
            stitched.update(lt.metrics)
        r["reward"] = [stitched[s]["reward/avg_raw_reward"] for s in sorted(stitched)]
    job_trials = {p[2]: tp2}
    if real:
        owner = next(x for x in p if x.startswith(REAL_TRIALS_OWNER + "/"))
        job_trials[owner] = tp3
        for r in runs:
            if r["logs"] == [owner]:
                r["trials"] = tp3
    result: dict = {
        "seed": seed,
        "jobs": {k_: v.to_json() for k_, v in truths.items()},
        "runs": runs,
        "trials": {k_: v.to_json() for k_, v in trials.items()},
        "job_trials": job_trials,
        "skipped": ["misc/empty-dir", "misc/scratch"],
        "secrets": sorted({s for t in truths.values() for s in t.secrets}),
    }
    if plants:
        result["plants"] = write_plants(out)
    result["counts"] = counts(result)
    (out / TRUTH_FILE).write_text(json.dumps(result, indent=1))
    return result


def _run(
    logs: list[str],
    steps: list[int],
    trials: str | None = None,
    resumed_from: list[int] | None = None,
    discarded: list[int] | None = None,
) -> dict:
    """A run of the ground truth: its logs in chain order, the step each resumed from, the
    steps the resumes discarded, its stitched steps and its trials folder."""
    return {
        "logs": logs,
        "resumed_from": resumed_from or [],
        "discarded": discarded or [],
        "steps": steps,
        "trials": trials,
    }


def counts(truth: dict) -> dict[str, int]:
    """What a build of the archive counts, from its ground truth, under the names of
    :class:`~sitegen.commands.build.BuildReport`'s counts: jobs and runs (each planted job a
    run of its own; ``planted_jobs`` of them); training trials (an archive's members too),
    eval trials, unreadable ``result.json`` files, job-level ones in trial folders (synth
    writes its own beside the trials, where they are not read), trial folders without a ``result.json``;
    and the ``result.json`` files read in all (``trial_files``)."""
    planted = truth.get("plants", {}).get("jobs", [])
    folders = truth["trials"].values()
    out = {
        "jobs": len(truth["jobs"]) + len(planted),
        "runs": len(truth["runs"]) + len({p["run"] for p in planted}),
        "planted_jobs": len(planted),
        "trials": sum(t["total"] for t in folders) + sum(p["trials_total"] for p in planted),
        "eval_trials": sum(t["eval"] for t in folders),
        "unreadable": sum(t["malformed"] for t in folders),
        "job_level": 0,
        "missing": sum(t["missing"] for t in folders),
    }
    out["trial_files"] = out["trials"] + out["eval_trials"] + out["unreadable"] + out["job_level"]
    return out


def summary_line(truth: dict, out: Path) -> str:
    """What ``sitegen synth`` prints: the archive's counts as a build of it prints them."""
    c = truth["counts"]
    what = archive_counts(c)
    planted = f"; {c['planted_jobs']} of the jobs planted" if c["planted_jobs"] else ""
    return (
        f"wrote {what} ({counted(c['trial_files'], 'result.json file')}{planted}) to {out}; "
        f"its ground truth: {out / TRUTH_FILE}"
    )
