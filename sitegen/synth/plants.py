"""``sitegen synth --plants``: an archive that plants every insight, with its ground truth.

Kept apart from the main scenario (whose counts many tests rely on) and from
:mod:`sitegen.synth.logs` / :mod:`sitegen.synth.trials`. It writes, under ``plants/``:

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
tasks job every figure of the tasks and rollouts sections."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timedelta
from pathlib import Path

import sitegen.synth.transcripts as tx
from sitegen.synth.plantlog import SAMPLES, STEP_S, T0, utc
from sitegen.synth.plantlog import plant_config as _config
from sitegen.synth.plantlog import plant_log as _log
from sitegen.synth.plantlog import plant_spec as _spec
from sitegen.synth.statplants import write_stat_plants

STEPS = 12
OUTLIER_STEP = 8  # its step takes 3.5x the others; its trials set up slowly and crash
TASKS = ("always-ok", "forget-css", "learn-sql", "mixed-regex", "never-kernel")
INFRA_TASK = "sandbox-heavy"
ENV_S, AGENT_SETUP_S, VERIFIER_S, OVERHEAD_S = 8.0, 2.0, 4.0, 1.0
SLOW_ENV_S, INFRA_ENV_S = 240.0, 300.0
TOKEN_IDS = 50_000  # in one result.json's rollout details (twice): ~1 MB
WAITING_HALF = {"timing/step": 600.0, "timing/wait_for_generation_buffer": 300.0}


def _hazards() -> dict[str, dict]:
    """The trials whose transcripts carry hazards and secrets (each is sampled: see the
    truth's ``transcripts``): form, turns, reply style, and what a turn's output shows."""
    sec = {k: v[0] for k, v in tx.planted_secrets().items()}
    env = "\n".join(v for k, v in sec.items() if k.startswith("env:"))
    return {
        "learn-sql__s07j0": {
            "form": "atif",
            "summarized": True,
            "token_ids": TOKEN_IDS,
            "hazards": {1: f"$ printenv\n{env}\n"},
        },
        "learn-sql__s06j3": {
            "form": "messages",
            "summarized": True,
            "style": "xml",
            "hazards": {2: f"{sec['git-remote']}\n{sec['extraheader']}\n"},
        },
        "forget-css__s06j3": {
            "form": "episodes",
            "turns": 12,
            "hazards": {3: f"{sec['bearer']}\n{sec['x-api-key']}\n{sec['query']}\n"},
        },
        "forget-css__s07j0": {
            "form": "atif",
            "style": "raw",
            "hazards": {1: sec["private-key"] + "\n"},
        },
        "never-kernel__s12j3": {
            "form": "atif",
            "hazards": {2: tx.long_output(sec["jwt"]), 3: f"{sec['api-base']}\n{sec['home']}\n"},
        },
        "mixed-regex__s01j0": {
            "form": "episodes",
            "hazards": {
                1: f"{tx.colour(tx.SCRIPT)}\n{sec['config-value']}\n{sec['build-value']}\n"
            },
        },
        "mixed-regex__s03j1": {
            "form": "messages",
            "style": "text",
            "hazards": {1: tx.colour("ERROR")},
        },
    }


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
    root: Path,
    task: str,
    step: int,
    j: int,
    start: datetime,
    truth_trials: list[dict],
    transcripts: dict | None = None,
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
        return {"started_at": utc(marks[i]), "finished_at": utc(marks[i + 1])}

    name = f"{task}__s{step:02d}j{j}"
    turns = 0 if infra else 2 + j
    plant = _hazards().get(name, {}) if transcripts is not None else {}
    turns = plant.get("turns", turns)
    obj = {
        "id": name,
        "task_name": task,
        "trial_name": name,
        "agent_result": {
            "n_input_tokens": 1000 * (j + 1),
            "n_output_tokens": 100 * (j + 1),
            "n_cache_tokens": 500 * j,
            "metadata": {"n_episodes": turns},
        },
        "verifier_result": None if reward is None else {"rewards": {"reward": reward}},
        "exception_info": None if exc is None else {"exception_type": exc},
        "started_at": utc(start),
        "finished_at": utc(end),
        "environment_setup": stage(0),
        "agent_setup": stage(1),
        "agent_execution": stage(2),
        "verifier": stage(3),
    }
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "result.json").write_text(json.dumps(obj))
    if transcripts is not None and turns:  # the agent ran: it may get a transcript
        form = plant.get("form", tx.FORMS[(step + j) % 3])
        transcripts[name] = {"form": form, "turns": turns}
    truth_trials.append(
        {
            "name": name,
            "task": task,
            "step": step if step <= STEPS else None,
            "reward": reward,
            "exception": exc,
            "env_setup_s": env,
            "duration_s": (end - start).total_seconds(),
            "tokens": [1000 * (j + 1), 100 * (j + 1), 500 * j],
        }
    )


def _tasks_job(root: Path) -> dict:
    rel = "plants/flat/tasks/train_700100.out"
    spec = _spec(rel, "plants-tasks", 1, STEPS, "complete")
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
    _log(path, spec, _config("plants-tasks"), steps, "complete")
    # Step s ends when its block is logged; its trials start just after step s−1's block.
    ends = {0: T0}
    for s in range(1, STEPS + 1):
        ends[s] = ends[s - 1] + timedelta(seconds=_step_time(s))
    trials_dir = path.parent / "trace_jobs"
    trials: list[dict] = []
    made: dict[str, dict] = {}  # trial -> its transcript's form and turns
    for s in range(1, STEPS + 2):  # step 13: in flight when the log ends
        tasks = TASKS if s <= STEPS else ("learn-sql",)
        for ti, task in enumerate(tasks):
            for j in range(SAMPLES):
                start = ends[s - 1] + timedelta(seconds=5 + ti + j)
                _trial(trials_dir, task, s, j, start, trials, made)
        if s == OUTLIER_STEP:
            for j in range(8):
                start = ends[s - 1] + timedelta(seconds=30 + j)
                _trial(trials_dir, INFRA_TASK, s, j, start, trials, made)
    os.utime(path, (ends[STEPS].timestamp(), ends[STEPS].timestamp()))
    transcripts = _transcripts_truth(trials, made)
    _write_transcripts(trials_dir, [name for name, _ in transcripts["picks"]], made)
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
        ),  # fmt: skip
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
        "transcripts": transcripts,
    }


# The picks the sampling must make of the tasks job's trials before the slowest rollouts
# (insights/sampling.py), by construction of the plants above: (trial, reasons).
_PICKED_FOR = (
    ("learn-sql__s07j0", "first success of a learned task"),
    ("learn-sql__s06j3", "the failure just before a learned task's first success"),
    ("forget-css__s06j3", "last success of a forgotten task"),
    ("forget-css__s07j0", "the first failure after a forgotten task's last success"),
    ("never-kernel__s12j3", "most recent AgentTimeoutError"),  # the last step's latest start
    ("sandbox-heavy__s08j7", "most recent DaytonaError"),
    ("mixed-regex__s01j0", "best trial of a mixed task"),  # reward 1, first by name
    ("mixed-regex__s03j1", "worst trial of a mixed task"),  # reward 0, first by name
)
PICKS = 48  # the default transcripts per job


def _write_transcripts(root: Path, picks: list[str], made: dict[str, dict]) -> None:
    """The transcripts of the trials the sampling picks (only those: the sample archive stays
    light), each trial's result.json given what its form adds (synth/transcripts.py)."""
    plants = _hazards()
    for name in picks:
        if name not in made:
            continue  # its agent never ran
        plant = plants.get(name, {})
        folder = root / name
        obj = json.loads((folder / "result.json").read_text())
        patch = tx.write_transcript(
            folder,
            obj["task_name"],
            made[name]["turns"],
            made[name]["form"],
            plant.get("hazards"),
            plant.get("style", "json"),
            plant.get("summarized", False),
            plant.get("token_ids", 0),
        )
        obj["agent_result"]["metadata"].update(patch["metadata"])
        obj["config"] = patch["config"]
        if "rollout_details" in patch:
            obj["agent_result"]["rollout_details"] = patch["rollout_details"]
        (folder / "result.json").write_text(json.dumps(obj))


def _transcripts_truth(trials: list[dict], made: dict[str, dict]) -> dict:
    """What the tasks job's transcripts must be: the trials picked (in order, each with its
    reasons), and for each the form and turns of its transcript ({} when its agent never
    ran); the secrets planted in them (each must vanish from every output byte)."""
    picks: dict[str, list[str]] = {}
    for name, why in _PICKED_FOR[:-2]:
        picks.setdefault(name, []).append(why)
    # then a trial that shows each finding at its worst step: the burst's and the rising
    # errors' most recent failures are picked already; the slow step's slowest is new
    picks["sandbox-heavy__s08j7"].append(
        f"an infrastructure failure of the burst at step {OUTLIER_STEP}"
    )
    picks["never-kernel__s12j3"].append(f"an exception at step {STEPS}, as the error rate rose")
    slow = min(
        (t for t in trials if t["step"] == OUTLIER_STEP),
        key=lambda t: (-t["duration_s"], t["name"]),
    )
    picks.setdefault(slow["name"], []).append(f"the slowest rollout of slow step {OUTLIER_STEP}")
    for name, why in _PICKED_FOR[-2:]:  # the mixed task's best and worst
        picks.setdefault(name, []).append(why)
    by_time = sorted(trials, key=lambda t: (-t["duration_s"], t["name"]))
    for t in by_time:  # then the slowest rollouts, until the budget is full
        if len(picks) >= PICKS:
            break
        picks.setdefault(t["name"], []).append("among the slowest rollouts")
    return {
        "wanted": PICKS,
        "picks": [[name, why] for name, why in picks.items()],
        "made": {name: made.get(name, {}) for name in picks},
        "hazards": sorted(_hazards()),
        "secrets": {k: v[1] for k, v in tx.planted_secrets().items()},
        "build_secret_env": tx.BUILD_SECRET_ENV,
        "build_secret": tx.BUILD_SECRET,
        "token_ids": TOKEN_IDS,
    }


def _simple_job(
    root: Path, rel: str, first: int, last: int, end: str, config: dict | None, metrics, **truth
) -> dict:
    """A planted job without trials, its run named after its folder; its truth: ``truth``."""
    run = "plants-" + rel.split("/")[-2]
    path = root / rel
    _log(
        path,
        _spec(rel, run, first, last, end),
        config,
        {s: metrics(s) for s in range(first, last + 1)},
        end,
    )
    when = time.time() - 2 * 86400 if end == "incomplete" else (T0 + timedelta(hours=9)).timestamp()
    os.utime(path, (when, when))
    return {"log": rel, "run": run, "trials_total": 0, **truth}


def write_plants(root: Path) -> dict:
    """Write the planted jobs under ``root/plants`` and return their ground truth: per job
    its log, its run (each planted job is a run of its own), the training trials it wrote
    (``trials_total``) and what it plants."""
    lr_zero = _simple_job(
        root,
        "plants/flat/lr-zero/train_700201.out",
        1,
        12,
        "complete",
        _config("plants-lr-zero", policy={"optimizer_config": {"lr": 0.0}}),
        lambda s: {
            "reward/avg_raw_reward": 0.3 + 0.02 * s,
            "policy/policy_lr": 0.0,
            "policy/log_ratio_abs_pos50": 0.0,
            "policy/policy_kl": 0.0,
            "policy/ppo_clip_ratio": 0.0,
            "async/staleness_max": 2,
            **WAITING_HALF,
        },
        findings=["lr_zero", "policy_frozen"],
        policy_frozen_severity="error",
    )
    collapse = _simple_job(
        root,
        "plants/flat/collapse/train_700202.out",
        1,
        20,
        "complete",
        _config("plants-collapse", fully_async={"max_staleness_steps": 1}),
        lambda s: {
            "reward/avg_raw_reward": 0.6 - 0.015 * s,
            "policy/policy_entropy": 0.5 * 0.8**s,
            "async/staleness_max": 3 if s in (15, 16) else 1,
            **WAITING_HALF,
        },
        findings=sorted(["entropy_collapse", "reward_falling", "staleness_over_limit"]),
    )
    midrun = _simple_job(
        root,
        "plants/flat/midrun/train_700203.out",
        182,
        195,
        "incomplete",
        None,
        lambda s: {"reward/avg_raw_reward": 0.25, **WAITING_HALF},
        findings=sorted(["log_starts_mid_run", "no_terminal_line", "reward_flat"]),
    )
    jobs = [_tasks_job(root), lr_zero, collapse, midrun, _tz_job(root)]
    return {"jobs": jobs + write_stat_plants(root)}


TZ_HOURS = 5  # the tz job's trial times read 5 h ahead of its log (UTC vs a UTC−5 cluster)


def _tz_job(root: Path) -> dict:
    """A job whose trials' clock is TZ_HOURS ahead of its log's: found, shifted, attributed."""
    rel = "plants/flat/tz/train_700204.out"
    steps = {
        s: {"reward/avg_raw_reward": 0.3 + 0.02 * s, "timing/step": STEP_S} for s in range(1, 7)
    }
    path = root / rel
    _log(path, _spec(rel, "plants-tz", 1, 6, "complete"), _config("plants-tz"), steps, "complete")
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
