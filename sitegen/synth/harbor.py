"""Synthetic trials in Harbor's own shapes (docs/formats.md §6): 0.1.45 and 0.26 ``result.json``
exactly as Harbor's pydantic models serialize them, with what a reader must take from each."""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

from sitegen.synth.trialtruth import (
    TrialsTruth,
    Window,
    make_trial_name,
    place,
    record_truth,
    step_of,
)

# -- Harbor's own shapes (docs/formats.md §6), as its pydantic models serialize them ------------

# Harbor 0.26's error_policy table, for the types the synth uses: (retry, grade, valid reward)
_POLICY = {
    "AgentTimeoutError": (False, True, True),
    "ContextLengthExceededError": (False, True, True),
    "VerifierTimeoutError": (False, True, False),
    "EnvironmentStartTimeoutError": (True, False, False),
    "ApiRateLimitError": (True, True, False),
}


def _utc(t: datetime) -> str:
    return t.isoformat(timespec="microseconds") + "Z"


def _exception(
    kind: str, at: datetime, version: str, where: str = "trial.py", line: int = 310
) -> dict:
    """Harbor's ``ExceptionInfo``; ``where``/``line``: the frame that caught it."""
    info: dict[str, object] = {
        "exception_type": kind,
        "exception_message": f"{kind}: the trial did not finish",
        "exception_traceback": f'Traceback (most recent call last):\n  File "harbor/trial/{where}", line {line}\n{kind}\n',
        # 0.1.x wrote datetime.now(): naive, beside UTC "Z" times in the same file
        "occurred_at": at.isoformat(timespec="microseconds") if version == "0.1.45" else _utc(at),
    }
    if version != "0.1.45":
        retry, grade, valid = _POLICY[kind]
        info["policy"] = {"should_retry": retry, "should_grade": grade, "has_valid_reward": valid}
    return info


def _agent(rng: random.Random, turns: int, version: str) -> tuple[dict, int, int]:
    n_in, n_out = rng.randint(1000, 90000), rng.randint(100, 9000)
    usage = {
        "n_input_tokens": n_in,
        "n_cache_tokens": 0,
        "n_output_tokens": n_out,
        "cost_usd": None,
    }
    ctx: dict = dict(usage)
    if version != "0.1.45":
        ctx["model_usage"] = {"hosted_vllm/Qwen3-8B": usage}
    ctx["rollout_details"] = None
    ctx["metadata"] = {"n_episodes": turns, "api_request_times_msec": [900] * turns}
    return ctx, n_in, n_out


# Exceptions that stop a trial in an early stage: the later stages never start (null).
_STOPS_IN = {
    "DaytonaError": "environment_setup",
    "DaytonaAuthenticationError": "environment_setup",
    "AgentSetupTimeoutError": "agent_setup",
}


Span = tuple[datetime, datetime]
_STAGES = ("environment_setup", "agent_setup", "agent_execution", "verifier")


def stage_times(
    rng: random.Random, start: datetime, end: datetime, exc: str | None, verified: bool
) -> dict[str, Span | None]:
    """Harbor's stage timestamps, in order inside ``start``..``end``.

    Environment setup takes a few percent of the trial, agent setup less, the agent the
    bulk; the verifier runs last when the trial was verified. Gaps between stages are the
    trial's overhead (sandbox queueing, uploads). A trial stopped by an environment or
    agent-setup failure ends in that stage; the stages after it are null, as Harbor writes."""
    total = (end - start).total_seconds()
    stop = _STOPS_IN.get(exc or "")
    shares = {
        "environment_setup": rng.uniform(0.04, 0.12),
        "agent_setup": rng.uniform(0.01, 0.04),
        "agent_execution": 0.0,  # the rest
        "verifier": rng.uniform(0.03, 0.1) if verified else 0.0,
    }
    gap = total * rng.uniform(0.005, 0.02)  # overhead before each stage
    out: dict[str, Span | None] = {}
    t = start
    for stage, share in shares.items():
        if stop is not None and out.get(stop) is not None or (stage == "verifier" and not verified):
            out[stage] = None
            continue
        t += timedelta(seconds=gap)
        if stage == stop:
            dur = (end - t).total_seconds()
        elif stage == "agent_execution":
            dur = (end - t).total_seconds() - total * shares["verifier"] - 2 * gap
        else:
            dur = total * share
        fin = min(end, t + timedelta(seconds=max(0.0, dur)))
        out[stage] = (t, fin)
        t = fin
    return out


def _steps(
    rng: random.Random,
    drawn: Sequence[tuple[str, dict, float, str | None]],
    lo: datetime,
    hi: datetime,
    version: str,
) -> tuple[list[dict], list[tuple[Span, Span]]]:
    """A multi-step trial's ``step_results`` (Harbor's ``StepResult``) and each step's agent
    and verifier spans, one after the other in ``lo``..``hi``.

    Each step first sets up (uploads its workdir, runs its setup.sh), then runs its agent,
    collects artifacts and runs its verifier: the gaps are a few percent of its time, as is
    the environment's teardown after the last. An agent's exception is caught as its phase
    ends; the verifier still grades it (the types drawn here are graded). Each step's agent
    counts cached tokens of its own."""
    bounds = ((0.01, 0.04), (1.0, 3.0), (0.005, 0.02), (0.05, 0.15))
    shares = [tuple(rng.uniform(lo, hi) for lo, hi in bounds) for _ in drawn]
    teardown = rng.uniform(0.005, 0.02)  # after the last verifier: the environment stops
    scale = (hi - lo).total_seconds() / (sum(map(sum, shares)) + teardown)
    t, steps, spans = lo, [], []
    for (name, ctx, reward, exc), parts in zip(drawn, shares, strict=True):
        cache = int(ctx["n_input_tokens"] * rng.uniform(0.2, 0.8))  # input counts the cached
        ctx["n_cache_tokens"] = cache
        for usage in (ctx.get("model_usage") or {}).values():
            usage["n_cache_tokens"] = cache
        marks = []
        for share in parts:
            t = min(hi, t + timedelta(seconds=share * scale))
            marks.append(t)
        agent, verifier = (marks[0], marks[1]), (marks[2], marks[3])
        spans.append((agent, verifier))
        steps.append(
            {
                "step_name": name,
                "agent_result": ctx,
                "verifier_result": {"rewards": {"reward": reward}},
                "exception_info": _exception(exc, agent[1], version, "multi_step.py", 184)
                if exc
                else None,
                "agent_execution": _span(agent),
                "verifier": _span(verifier),
            }
        )
    return steps, spans


def _span(times: Span | None) -> dict | None:
    """Harbor's ``TimingInfo`` of a stage (null: the stage did not run)."""
    return {"started_at": _utc(times[0]), "finished_at": _utc(times[1])} if times else None


def _seconds(times: Span | None) -> float | None:
    return (times[1] - times[0]).total_seconds() if times else None


def harbor_result(
    rng: random.Random,
    variant: str,
    task: str,
    start: datetime,
    stage_rng: random.Random | None = None,
    end_by: datetime | None = None,
) -> tuple[str, dict]:
    """One ``result.json`` text shaped exactly as Harbor's ``TrialResult.model_dump_json(indent=4)``
    (field order, nulls, computed fields last) and what a reader must take from it.

    ``variant``: ``0.1.45`` (no schema_version, no policy, a naive ``occurred_at``),
    ``0.26`` (single step), ``0.26-multi`` (``step_results``: the agent, its tokens and
    the verifier on each step, the top level's null), ``0.26-context`` (the verifier ran
    after a context overflow and its reward counts), ``0.26-invalid`` (a reward Harbor
    declares invalid). What a reader must take includes ``stages``: the trial's stage
    seconds and cached tokens (a multi-step trial's agent and verifier: sums over steps)."""
    version = "0.1.45" if variant == "0.1.45" else "0.26"
    name = make_trial_name(rng, task)
    end = start + timedelta(seconds=rng.randint(60, 900))
    if end_by is not None:
        end = max(start + timedelta(seconds=60), min(end, end_by))
    turns = rng.randint(1, 9)
    reward: float | None = rng.choice((0.0, 1.0, 1.0, 0.5))
    exc: str | None = None
    obj: dict = {}
    if version != "0.1.45":
        obj["schema_version"] = 1
    obj.update(
        {
            "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            "task_name": task,
            "trial_name": name,
            "trial_uri": f"file:///jobs/real/{name}",
            "task_id": {"path": f"datasets/terminal-bench/{task}"},
            "source": "terminal-bench",
            "task_checksum": f"{rng.getrandbits(256):064x}",
            "config": {
                "task": {"path": f"datasets/terminal-bench/{task}", "git_url": None},
                "trial_name": name,
                "trials_dir": "/jobs/real",
                "timeout_multiplier": 1.0,
                "agent": {"name": "terminus-2", "model_name": "hosted_vllm/Qwen3-8B", "kwargs": {}},
                "environment": {"type": "daytona", "force_build": False, "delete": True},
                "verifier": {"override_timeout_sec": None},
                "job_id": "5d3c1e2a-0000-4000-8000-000000000001",
            },
            "agent_info": {
                "name": "terminus-2",
                "version": "2.0.0",
                "model_info": {"name": "Qwen3-8B", "provider": "hosted_vllm"},
            },
        }
    )
    drawn: list[tuple[str, dict, float, str | None]] = []  # each step's (name, agent, reward, exc)
    n_in = n_out = 0
    if variant == "0.26-multi":
        turns = 0
        for k, step_name in enumerate(("setup-repo", "fix-bug")):
            st_turns = rng.randint(1, 5)
            ctx, a, b = _agent(rng, st_turns, version)
            n_in, n_out, turns = n_in + a, n_out + b, turns + st_turns
            r = rng.choice((0.0, 1.0))
            st_exc = "AgentTimeoutError" if k == 1 and rng.random() < 0.5 else None
            exc = exc or st_exc
            drawn.append((step_name, ctx, r, st_exc))
        reward = sum(d[2] for d in drawn) / len(drawn)  # Harbor's aggregate: the mean over steps
        agent = None
    else:
        agent, n_in, n_out = _agent(rng, turns, version)
        if variant == "0.26-context":
            exc = "ContextLengthExceededError"
        elif variant == "0.26-invalid":
            exc = "VerifierTimeoutError"
        elif rng.random() < 0.3:
            exc = "AgentTimeoutError"
    obj["agent_result"] = agent
    obj["verifier_result"] = {"rewards": {"reward": reward}} if reward is not None else None
    if version != "0.1.45":
        obj["verifier_environment_mode"] = None if drawn else "shared"
    obj["exception_info"] = _exception(exc, end, version) if exc and not drawn else None
    obj["started_at"] = _utc(start)
    obj["finished_at"] = _utc(end)
    if stage_rng is None:
        spans: dict[str, Span | None] = dict.fromkeys(
            _STAGES, (start, start + timedelta(seconds=5))
        )
    else:
        spans = stage_times(stage_rng, start, end, exc, True)
    steps = None
    exec_s, verifier_s = _seconds(spans["agent_execution"]), _seconds(spans["verifier"])
    cache_tokens = agent["n_cache_tokens"] if agent else 0
    if drawn:
        # Each step's agent and verifier, after the trial's agent setup (trial/multi_step.py);
        # from a generator of the trial's own, so that the other trials stay as they were.
        setup, last = spans["agent_setup"], spans["verifier"] if stage_rng is not None else None
        lo, hi = setup[1] if setup else start, last[1] if last else end
        steps, timed = _steps(random.Random(obj["id"]), drawn, lo, hi, version)
        spans["agent_execution"] = spans["verifier"] = None  # Harbor sets them on the steps
        # what a reader must find: the sums over the steps
        exec_s = sum((a[1] - a[0]).total_seconds() for a, _ in timed)
        verifier_s = sum((v[1] - v[0]).total_seconds() for _, v in timed)
        cache_tokens = sum(ctx["n_cache_tokens"] for _, ctx, _, _ in drawn)
    for stage, times in spans.items():
        obj[stage] = _span(times)
    if version != "0.1.45":
        obj["step_results"] = steps
        valid = obj["verifier_result"] is not None and (not exc or _POLICY[exc][2])
        obj["reward_valid"] = valid
        if not valid:
            reward = None  # Harbor says it does not count
    stages = {
        "env_setup_s": _seconds(spans["environment_setup"]),
        "agent_setup_s": _seconds(spans["agent_setup"]),
        "agent_exec_s": exec_s,
        "verifier_s": verifier_s,
        "cache_tokens": cache_tokens,
    }
    seen = {
        "exception": exc,
        "reward": reward,
        "turns": turns,
        "input_tokens": n_in,
        "output_tokens": n_out,
        "duration_s": (end - start).total_seconds(),
        "stages": stages,
    }
    return json.dumps(obj, indent=4, ensure_ascii=False), seen


HARBOR_VARIANTS = ("0.1.45", "0.26", "0.26-multi", "0.26-context", "0.26-invalid")


def write_harbor_trials(
    root: Path,
    rel: str,
    n: int,
    seed: int,
    windows: Sequence[Window] = (),
) -> TrialsTruth:
    """``n`` trials in Harbor 0.1.45's and 0.26's own shapes, cycling through the variants.

    ``windows`` as for :func:`sitegen.synth.trials.write_trials`: the trials spread over
    the job's steps with stage timestamps (from a generator of their own); without, they
    all start at one time with five-second stages."""
    rng = random.Random(seed)
    trng = random.Random(seed + 0x5EED) if windows else None
    truth = TrialsTruth(rel)
    start = datetime(2026, 5, 12, 8, 0)
    tasks = ["fix-git", "hello-world", "sqlite-with-gcov", "crack-7z-hash"]
    for i in range(n):
        at, end_by = start, None
        if trng is not None:
            at, end_by = place(trng, windows[i * len(windows) // n], 30)
        text, seen = harbor_result(
            rng,
            HARBOR_VARIANTS[i % len(HARBOR_VARIANTS)],
            tasks[i % len(tasks)],
            at,
            stage_rng=trng,
            end_by=end_by,
        )
        d = root / json.loads(text)["trial_name"]
        d.mkdir(parents=True, exist_ok=True)
        (d / "result.json").write_text(text)
        task = tasks[i % len(tasks)]
        record_truth(
            truth, seen["exception"], seen["reward"], seen["turns"], task, step_of(windows, at)
        )
        truth.per_trial_stages.append({"duration_s": seen["duration_s"], **seen["stages"]})
    return truth
