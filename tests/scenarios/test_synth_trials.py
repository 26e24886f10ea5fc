"""Synth trials look like a real run's: spread over its steps, with Harbor's stage times."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from tests.conftest import load

STAGES = ("environment_setup", "agent_setup", "agent_execution", "verifier")


def _t(s: str) -> datetime:
    return datetime.fromisoformat(s.removesuffix("Z"))


def test_stage_times_in_order_inside_the_trial(archive: Path) -> None:
    staged = 0
    for rel in ("exp-async/async-run/trace_jobs", "flat/sync-baseline/trace_jobs"):
        for f in (archive / rel).glob("*/result.json"):
            try:
                obj = json.loads(f.read_text())
            except ValueError:
                continue  # the planted truncated and empty files
            if not any(obj.get(s) for s in STAGES):
                continue  # the older trials (tarball, eval) carry no stages
            staged += 1
            times = [_t(obj["started_at"])]
            for s in STAGES:
                if obj.get(s):
                    times += [_t(obj[s]["started_at"]), _t(obj[s]["finished_at"])]
            times.append(_t(obj["finished_at"]))
            assert times == sorted(times), f
    assert staged >= 12 * 5  # every regular trial of both sets


def test_trials_cover_every_step(site: Path, truth: dict) -> None:
    run = load(site, "data/runs/exp-async.json")
    assert run["tasks"]["steps"] == len(truth["runs"][0]["steps"])
    assert run["rollouts"]["overall"]["timed"] > 0
    # the wait for the step stays a wait, not the days between the run's two jobs
    assert run["rollouts"]["overall"]["wait_for_step_s"] < 3600
    job = load(site, "data/jobs/flat.sync-baseline.train_600100.json")
    assert job["tasks"]["steps"] == len(
        truth["jobs"]["flat/sync-baseline/train_600100.out"]["steps"]
    )
