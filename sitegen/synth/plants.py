"""``sitegen synth --plants``: an archive that plants every insight, with its ground truth.

Kept apart from the main scenario (whose counts many tests rely on) and from
:mod:`sitegen.synth.logs` / :mod:`sitegen.synth.trials`. It writes, under
``plants/``:

* ``flat/tasks``: 12 steps and Harbor trials with stage timestamps: a learned,
  a forgotten, an always- and a never-solved task, a mixed one, prompt groups
  whose rewards are all equal, a slow-setup and infrastructure-failure burst at
  step 8 (also a step-time outlier), an error rate that rises, generation wait
  above 80 % of step time, zero log-ratio/KL with no staleness (fully on-policy),
  and trials still in flight after the last step.
* ``flat/lr-zero``: learning rate 0 on every step, so the updates have no effect.
* ``flat/collapse``: entropy collapse, falling reward, staleness above the limit.
* ``flat/midrun``: a log that starts at step 182 and ends without a terminal line,
  with a flat reward.

The truth lists, per log, the finding ids the rules must raise, and for the
tasks job every figure of the tasks and rollouts sections.
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timedelta
from pathlib import Path

from sitegen.synth.plantlog import STEP_S, T0, plant_config
from sitegen.synth.plantlog import plant_log as _log
from sitegen.synth.plantlog import plant_spec as _spec
from sitegen.synth.statplants import write_stat_plants

STEPS = 12
OUTLIER_STEP = 8  # its step takes 3.5x the others; its trials set up slowly and crash
SAMPLES = 4
TASKS = ("always-ok", "forget-css", "learn-sql", "mixed-regex", "never-kernel")
INFRA_TASK = "sandbox-heavy"
ENV_S, AGENT_SETUP_S, VERIFIER_S, OVERHEAD_S = 8.0, 2.0, 4.0, 1.0
SLOW_ENV_S, INFRA_ENV_S = 240.0, 300.0


def _config(run: str, **trainer: object) -> dict:
    return plant_config(run, SAMPLES, **trainer)


def _step_time(step: int) -> float:
    return STEP_S * (3.5 if step == OUTLIER_STEP else 1.0)


def _reward(task: str, step: int, j: int) -> float:
    late = step > STEPS // 2
    if task == "learn-sql":
        return 1.0 if late else 0.0
    if task == "forget-css":
        return 0.0 if late else 1.0
    if task == "always-ok":
        return 1.0
    if task == "never-kernel":
        return 0.0
    return 1.0 if step <= 2 or j % 2 == 0 else 0.0  # mixed-regex: all solved at steps 1–2


def _exception(task: str, step: int, j: int) -> str | None:
    if task == "never-kernel" and step >= 7:
        return "AgentTimeoutError"
    if task == "mixed-regex" and step >= 9 and j < 2:
        return "AgentTimeoutError"
    return None


def _trial(
    root: Path, task: str, step: int, j: int, start: datetime, truth_trials: list[dict]
) -> None:
    infra = task == INFRA_TASK
    env = INFRA_ENV_S if infra else SLOW_ENV_S if step == OUTLIER_STEP else ENV_S
    agent_setup = 0.0 if infra else AGENT_SETUP_S
    execution = 0.0 if infra else 30.0 + 10.0 * j
    verifier = 0.0 if infra else VERIFIER_S
    exc = "DaytonaError" if infra else _exception(task, step, j)
    reward = None if infra else _reward(task, step, j)
    marks = [start + timedelta(seconds=OVERHEAD_S / 2)]
    for d in (env, agent_setup, execution, verifier):
        marks.append(marks[-1] + timedelta(seconds=d))
    end = marks[-1] + timedelta(seconds=OVERHEAD_S / 2)

    def stage(i: int) -> dict | None:
        if (env, agent_setup, execution, verifier)[i] == 0 and infra:
            return None  # the stage never ran
        return {"started_at": _z(marks[i]), "finished_at": _z(marks[i + 1])}

    name = f"{task}__s{step:02d}j{j}"
    obj = {
        "id": name,
        "task_name": task,
        "trial_name": name,
        "agent_result": {
            "n_input_tokens": 1000 * (j + 1),
            "n_output_tokens": 100 * (j + 1),
            "n_cache_tokens": 500 * j,
            "metadata": {"n_episodes": 0 if infra else 2 + j},
        },
        "verifier_result": None if reward is None else {"rewards": {"reward": reward}},
        "exception_info": None if exc is None else {"exception_type": exc},
        "started_at": _z(start),
        "finished_at": _z(end),
        "environment_setup": stage(0),
        "agent_setup": stage(1),
        "agent_execution": stage(2),
        "verifier": stage(3),
    }
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "result.json").write_text(json.dumps(obj))
    truth_trials.append(
        {
            "task": task,
            "step": step if step <= STEPS else None,
            "reward": reward,
            "exception": exc,
            "env_setup_s": env,
            "duration_s": (end - start).total_seconds(),
            "tokens": [1000 * (j + 1), 100 * (j + 1), 500 * j],
        }
    )


def _z(t: datetime) -> str:
    return t.isoformat() + "Z"


def _tasks_job(root: Path) -> dict:
    rel = "plants/flat/tasks/train_700100.out"
    spec = _spec(rel, "plants-tasks", 1, STEPS, "complete", 700100)
    steps = {}
    for s in range(1, STEPS + 1):
        st = _step_time(s)
        steps[s] = {
            "reward/avg_raw_reward": 0.3 + 0.02 * s,
            "policy/policy_entropy": 0.3,
            "policy/log_ratio_abs_pos50": 0.0,
            "policy/policy_kl": 0.0,
            "async/staleness_max": 0,
            "timing/step": st,
            "timing/wait_for_generation_buffer": 0.9 * st,
        }
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    _log(path, spec, _config("plants-tasks"), steps, "complete")
    # Step s ends when its block is logged; its trials start just after step s−1's block.
    ends = {0: T0}
    for s in range(1, STEPS + 1):
        ends[s] = ends[s - 1] + timedelta(seconds=_step_time(s))
    trials_dir = path.parent / "trace_jobs"
    trials: list[dict] = []
    for s in range(1, STEPS + 2):  # step 13: in flight when the log ends
        tasks = TASKS if s <= STEPS else ("learn-sql",)
        for ti, task in enumerate(tasks):
            for j in range(SAMPLES):
                _trial(trials_dir, task, s, j, ends[s - 1] + timedelta(seconds=5 + ti + j), trials)
        if s == OUTLIER_STEP:
            for j in range(8):
                _trial(
                    trials_dir, INFRA_TASK, s, j, ends[s - 1] + timedelta(seconds=30 + j), trials
                )
    os.utime(path, (ends[STEPS].timestamp(), ends[STEPS].timestamp()))
    return {
        "log": rel,
        "run": "plants-tasks",
        "trials_total": len(trials),
        "findings": sorted(
            [
                "gen_wait_high",
                "step_time_outlier",
                "infra_burst",
                "error_rate_rising",
                "policy_frozen",
                "task_forgotten",
            ]
        ),
        "policy_frozen_severity": "info",
        "trials": trials,
        "categories": {
            "learn-sql": "learned",
            "forget-css": "forgotten",
            "always-ok": "always",
            "never-kernel": "never",
            "mixed-regex": "mixed",
            INFRA_TASK: "never",
        },
        "in_flight": SAMPLES,
        "slow_setup_step": OUTLIER_STEP,
    }


def _simple_job(
    root: Path,
    rel: str,
    run: str,
    first: int,
    last: int,
    end: str,
    job_id: int,
    config: dict | None,
    metrics,
) -> None:
    spec = _spec(rel, run, first, last, end, job_id)
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    _log(path, spec, config, {s: metrics(s) for s in range(first, last + 1)}, end)
    when = time.time() - 2 * 86400 if end == "incomplete" else (T0 + timedelta(hours=9)).timestamp()
    os.utime(path, (when, when))


def write_plants(root: Path) -> dict:
    """Write the planted jobs under ``root/plants`` and return their ground truth: per job
    its log, its run (each planted job is a run of its own), the training trials it wrote
    (``trials_total``) and what it plants."""
    jobs = [_tasks_job(root)]
    rel = "plants/flat/lr-zero/train_700201.out"
    _simple_job(
        root,
        rel,
        "plants-lr-zero",
        1,
        12,
        "complete",
        700201,
        _config("plants-lr-zero", policy={"optimizer_config": {"lr": 0.0}}),
        lambda s: {
            "reward/avg_raw_reward": 0.3 + 0.02 * s,
            "policy/policy_lr": 0.0,
            "policy/log_ratio_abs_pos50": 0.0,
            "policy/policy_kl": 0.0,
            "policy/ppo_clip_ratio": 0.0,
            "async/staleness_max": 2,
            "timing/step": 600.0,
            "timing/wait_for_generation_buffer": 300.0,
        },
    )
    jobs.append(
        {
            "log": rel,
            "run": "plants-lr-zero",
            "trials_total": 0,
            "findings": ["lr_zero", "policy_frozen"],
            "policy_frozen_severity": "error",
        }
    )
    rel = "plants/flat/collapse/train_700202.out"
    _simple_job(
        root,
        rel,
        "plants-collapse",
        1,
        20,
        "complete",
        700202,
        _config("plants-collapse", fully_async={"max_staleness_steps": 1}),
        lambda s: {
            "reward/avg_raw_reward": 0.6 - 0.015 * s,
            "policy/policy_entropy": 0.5 * 0.8**s,
            "async/staleness_max": 3 if s in (15, 16) else 1,
            "timing/step": 600.0,
            "timing/wait_for_generation_buffer": 300.0,
        },
    )
    jobs.append(
        {
            "log": rel,
            "run": "plants-collapse",
            "trials_total": 0,
            "findings": sorted(["entropy_collapse", "reward_falling", "staleness_over_limit"]),
        }
    )
    rel = "plants/flat/midrun/train_700203.out"
    _simple_job(
        root,
        rel,
        "plants-midrun",
        182,
        195,
        "incomplete",
        700203,
        None,
        lambda s: {
            "reward/avg_raw_reward": 0.25,
            "timing/step": 600.0,
            "timing/wait_for_generation_buffer": 300.0,
        },
    )
    jobs.append(
        {
            "log": rel,
            "run": "plants-midrun",
            "trials_total": 0,
            "findings": sorted(["log_starts_mid_run", "no_terminal_line", "reward_flat"]),
        }
    )
    jobs.append(_tz_job(root))
    jobs += write_stat_plants(root)
    return {"jobs": jobs}


TZ_HOURS = 5  # the tz job's trial times read 5 h ahead of its log (UTC vs a UTC−5 cluster)


def _tz_job(root: Path) -> dict:
    """A job whose trials' clock is TZ_HOURS ahead of its log's: found, shifted, attributed."""
    rel = "plants/flat/tz/train_700204.out"
    steps = {
        s: {"reward/avg_raw_reward": 0.3 + 0.02 * s, "timing/step": STEP_S} for s in range(1, 7)
    }
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    _log(
        path,
        _spec(rel, "plants-tz", 1, 6, "complete", 700204),
        _config("plants-tz"),
        steps,
        "complete",
    )
    trials: list[dict] = []
    for s in range(1, 7):
        start = T0 + timedelta(hours=TZ_HOURS, seconds=STEP_S * (s - 1) + 5)
        for j in range(2):
            _trial(
                path.parent / "trace_jobs", "always-ok", s, j, start + timedelta(seconds=j), trials
            )
    when = (T0 + timedelta(hours=9)).timestamp()
    os.utime(path, (when, when))
    return {
        "log": rel,
        "run": "plants-tz",
        "trials_total": len(trials),
        "findings": [],
        "offset_s": -TZ_HOURS * 3600.0,
        "attributed": len(trials),
    }
