"""Write synthetic Harbor trial directories (formats.md §6) and their ground truth."""

from __future__ import annotations

import io
import json
import random
import string
import tarfile
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

# (exception type, weight, verifier runs?, turns recorded?)
EXCEPTIONS = (
    (None, 800, True, True),
    ("AgentTimeoutError", 110, True, True),
    ("AgentSetupTimeoutError", 10, False, False),
    ("VerifierTimeoutError", 6, False, True),
    ("DaytonaError", 6, False, False),
    ("ContextLengthExceededError", 5, False, True),
    ("DaytonaAuthenticationError", 3, False, False),
    ("RuntimeError", 2, False, True),
    ("Timeout", 2, True, True),
)
FILLER_WORDS = (
    "the",
    "file",
    "test",
    "run",
    "ls",
    "cat",
    "grep",
    "python",
    "error",
    "fixed",
    "patch",
    "diff",
)


@dataclass
class TrialsTruth:
    path: str
    total: int = 0
    malformed: int = 0
    missing: int = 0
    eval: int = 0
    exceptions: Counter = field(default_factory=Counter)
    turns: list[int] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    turns_by_exception: dict[str, list[int]] = field(default_factory=dict)
    turns_by_outcome: dict[str, list[int]] = field(
        default_factory=lambda: {"success": [], "failure": []}
    )
    task_names: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "total": self.total,
            "malformed": self.malformed,
            "missing": self.missing,
            "eval": self.eval,
            "exceptions": dict(self.exceptions),
            "turns": self.turns,
            "rewards": self.rewards,
            "turns_by_exception": self.turns_by_exception,
            "turns_by_outcome": self.turns_by_outcome,
        }


def _name(rng: random.Random, task: str) -> str:
    return f"{task[:32]}__{''.join(rng.choice(string.ascii_letters + string.digits) for _ in range(7))}"


_POOL: list[dict] = []


def _filler(rng: random.Random, size: int) -> list[dict]:
    """Chat history of about ``size`` bytes, drawn from a fixed pool (fast at archive scale)."""
    if not _POOL:
        pool_rng = random.Random(0)
        for _ in range(256):
            text = " ".join(pool_rng.choice(FILLER_WORDS) for _ in range(60))
            _POOL.append({"role": pool_rng.choice(("user", "assistant")), "content": text})
    msgs, n = [], 0
    while n < size:
        m = _POOL[rng.randrange(len(_POOL))]
        msgs.append(m)
        n += len(m["content"]) + 40
    return msgs


def trial_record(
    rng: random.Random,
    task: str,
    start: datetime,
    size: int,
    old_reward: bool = False,
    payload: str = "",
) -> tuple[dict, str | None, float | None, int | None]:
    """A result.json object and what a reader must take from it: (obj, exception, reward, turns)."""
    exc, _w, verified, has_turns = rng.choices(EXCEPTIONS, weights=[e[1] for e in EXCEPTIONS])[0]
    turns = rng.choice((1, 1, 2, 2, 2, 3, 3, 4, 6, 18)) if has_turns else 0
    reward = None
    verifier: dict | None = None
    if verified:
        reward = rng.choice((1.0, 1.0, 0.0, 0.0, 0.5, -1.0))
        verifier = {"reward": reward} if old_reward else {"rewards": {"reward": reward}}
    meta: dict = {
        "api_request_times_msec": [rng.randint(200, 9000) for _ in range(turns)],
        "summarization_count": 0,
        "all_messages": _filler(rng, size),
    }
    drop_turns = rng.random() < 0.03
    if not drop_turns:
        meta["n_episodes"] = turns
    seen_turns = None if drop_turns or (turns == 0 and exc) else turns
    end = start + timedelta(seconds=rng.randint(30, 1800))
    obj = {
        "id": f"{rng.getrandbits(64):016x}",
        "task_name": task,
        "trial_name": _name(rng, task),
        "trial_uri": f"file:///trials/{task}",
        "task_id": {"path": f"tasks/{task}"},
        "source": None,
        "task_checksum": f"{rng.getrandbits(128):032x}",
        "config": {"agent": {"name": "terminus-2"}, "timeout_sec": 1800},
        "agent_info": {
            "name": "terminus-2",
            "version": "0.3.1",
            "model_info": {"name": "Qwen3-8B"},
        },
        "agent_result": {
            "n_input_tokens": rng.randint(1000, 900000),
            "n_cache_tokens": 0,
            "n_output_tokens": rng.randint(100, 30000),
            "cost_usd": None,
            "rollout_details": None,
            "metadata": meta,
        },
        "verifier_result": verifier,
        "exception_info": None
        if exc is None
        else {
            "exception_type": exc,
            "exception_message": f"{exc} while running {payload}",
            "exception_traceback": "Traceback (most recent call last): ...",
            "occurred_at": end.isoformat() + "Z",
        },
        "started_at": start.isoformat() + "Z",
        "finished_at": end.isoformat() + "Z",
    }
    return obj, exc, reward, seen_turns


def _record(truth: TrialsTruth, exc: str | None, reward: float | None, turns: int | None) -> None:
    truth.total += 1
    key = exc or "none"
    truth.exceptions[key] += 1
    if reward is not None:
        truth.rewards.append(reward)
    if turns is not None:
        truth.turns.append(turns)
        truth.turns_by_exception.setdefault(key, []).append(turns)
        if reward is not None:
            truth.turns_by_outcome["success" if reward > 0 else "failure"].append(turns)


def write_trials(
    root: Path, rel: str, n: int, seed: int, size: int, variants: bool = True, payload: str = ""
) -> TrialsTruth:
    """Write ``n`` training trials (plus, with ``variants``, every odd case) under ``root``."""
    rng = random.Random(seed)
    truth = TrialsTruth(rel)
    root.mkdir(parents=True, exist_ok=True)
    start = datetime(2026, 2, 8, 0, 30)
    tasks = [
        f"task-{rng.getrandbits(40):010x}-{w}"
        for w in ("fix-build", "parse-logs", "sql-join", "regex", "git-merge")
    ]
    if payload:
        tasks.append(f"{payload}-task")
    truth.task_names = tasks
    for i in range(n):
        task = rng.choice(tasks)
        obj, exc, reward, turns = trial_record(
            rng,
            task,
            start + timedelta(seconds=i),
            size,
            old_reward=variants and i % 50 == 7,
            payload=payload,
        )
        d = root / obj["trial_name"].replace("/", "_")
        d.mkdir(exist_ok=True)
        (d / "result.json").write_bytes(json.dumps(obj).encode())
        _record(truth, exc, reward, turns)
    if payload:
        # A hostile exception type: it is shown on pages, so it must arrive escaped.
        obj, *_ = trial_record(rng, tasks[-1], start, 500, payload=payload)
        obj["exception_info"] = {"exception_type": payload, "exception_message": payload}
        obj["verifier_result"] = None
        d = root / obj["trial_name"].replace("/", "_")
        d.mkdir(exist_ok=True)
        (d / "result.json").write_text(json.dumps(obj))
        _record(truth, payload, None, obj["agent_result"]["metadata"].get("n_episodes"))
    if not variants:
        return truth
    # A trial killed mid-run: directory without result.json.
    (root / _name(rng, tasks[0])).mkdir()
    truth.missing += 1
    # Empty and truncated result.json files.
    d = root / _name(rng, tasks[1])
    d.mkdir()
    (d / "result.json").write_bytes(b"")
    d = root / _name(rng, tasks[2])
    d.mkdir()
    obj, *_ = trial_record(rng, tasks[2], start, 2000)
    (d / "result.json").write_bytes(json.dumps(obj, indent=2).encode()[:700])
    truth.malformed += 2
    # The job-level summary: not a trial.
    (root / "result.json").write_text(json.dumps({"id": "job", "n_total_trials": n, "stats": {}}))
    # Eval trials.
    for s in range(2):
        sess = root / "eval_sessions" / f"session_{s:02d}"
        for _ in range(3):
            obj, *_ = trial_record(rng, tasks[3], start, 500)
            d = sess / obj["trial_name"]
            d.mkdir(parents=True)
            (d / "result.json").write_text(json.dumps(obj))
            truth.eval += 1
    # An archive of older trials.
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for _ in range(4):
            obj, exc, reward, turns = trial_record(rng, tasks[4], start, 500)
            data = json.dumps(obj).encode()
            info = tarfile.TarInfo(f"{obj['trial_name']}/result.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
            _record(truth, exc, reward, turns)
    (root / "trials_step2_20260208T013000.tar.gz").write_bytes(buf.getvalue())
    return truth


# -- Harbor's own shapes (formats.md §8), as its pydantic models serialize them -----------------

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


def _exception(kind: str, at: datetime, version: str) -> dict:
    info = {
        "exception_type": kind,
        "exception_message": f"{kind}: the trial did not finish",
        "exception_traceback": f'Traceback (most recent call last):\n  File "harbor/trial/trial.py", line 310\n{kind}\n',
        # 0.1.x wrote datetime.now(): naive, beside UTC "Z" times in the same file
        "occurred_at": at.isoformat(timespec="microseconds") if version == "0.1.45" else _utc(at),
    }
    if version != "0.1.45":
        retry, grade, valid = _POLICY[kind]
        info["policy"] = {"should_retry": retry, "should_grade": grade, "has_valid_reward": valid}
    return info


def _agent(rng: random.Random, turns: int, version: str) -> tuple[dict, int, int]:
    n_in, n_out = rng.randint(1000, 90000), rng.randint(100, 9000)
    ctx: dict = {
        "n_input_tokens": n_in,
        "n_cache_tokens": 0,
        "n_output_tokens": n_out,
        "cost_usd": None,
    }
    if version != "0.1.45":
        ctx["model_usage"] = {
            "hosted_vllm/Qwen3-8B": {
                "n_input_tokens": n_in,
                "n_cache_tokens": 0,
                "n_output_tokens": n_out,
                "cost_usd": None,
            }
        }
    ctx["rollout_details"] = None
    ctx["metadata"] = {"n_episodes": turns, "api_request_times_msec": [900] * turns}
    return ctx, n_in, n_out


def harbor_result(rng: random.Random, variant: str, task: str, start: datetime) -> tuple[str, dict]:
    """One ``result.json`` text shaped exactly as Harbor's ``TrialResult.model_dump_json(indent=4)``
    (field order, nulls, computed fields last) and what a reader must take from it.

    ``variant``: ``0.1.45`` (no schema_version, no policy, a naive ``occurred_at``),
    ``0.26`` (single step), ``0.26-multi`` (``step_results``), ``0.26-context`` (the
    verifier ran after a context overflow and its reward counts), ``0.26-invalid``
    (a reward Harbor declares invalid).
    """
    version = "0.1.45" if variant == "0.1.45" else "0.26"
    name = _name(rng, task)
    end = start + timedelta(seconds=rng.randint(60, 900))
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
    steps = None
    n_in = n_out = 0
    if variant == "0.26-multi":
        steps, rewards = [], []
        n_in = n_out = 0
        turns = 0
        for k, step_name in enumerate(("setup-repo", "fix-bug")):
            st_turns = rng.randint(1, 5)
            ctx, a, b = _agent(rng, st_turns, version)
            n_in, n_out, turns = n_in + a, n_out + b, turns + st_turns
            r = rng.choice((0.0, 1.0))
            rewards.append(r)
            st_exc = "AgentTimeoutError" if k == 1 and rng.random() < 0.5 else None
            exc = exc or st_exc
            steps.append(
                {
                    "step_name": step_name,
                    "agent_result": ctx,
                    "verifier_result": {"rewards": {"reward": r}},
                    "exception_info": _exception(st_exc, end, version) if st_exc else None,
                    "agent_execution": {"started_at": _utc(start), "finished_at": _utc(end)},
                    "verifier": {"started_at": _utc(end), "finished_at": _utc(end)},
                }
            )
        reward = sum(rewards) / len(rewards)  # Harbor's aggregate: the mean over steps
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
        obj["verifier_environment_mode"] = None if steps else "shared"
    obj["exception_info"] = _exception(exc, end, version) if exc and not steps else None
    obj["started_at"] = _utc(start)
    obj["finished_at"] = _utc(end)
    for stage in ("environment_setup", "agent_setup", "agent_execution", "verifier"):
        obj[stage] = {"started_at": _utc(start), "finished_at": _utc(start + timedelta(seconds=5))}
    if version != "0.1.45":
        obj["step_results"] = steps
        valid = obj["verifier_result"] is not None and all(
            _POLICY[e][2] for e in ([exc] if exc else [])
        )
        obj["reward_valid"] = valid
        if not valid:
            reward = None  # Harbor says it does not count
    seen = {
        "exception": exc,
        "reward": reward,
        "turns": turns,
        "input_tokens": n_in,
        "output_tokens": n_out,
        "duration_s": (end - start).total_seconds(),
    }
    return json.dumps(obj, indent=4, ensure_ascii=False), seen


HARBOR_VARIANTS = ("0.1.45", "0.26", "0.26-multi", "0.26-context", "0.26-invalid")


def write_harbor_trials(root: Path, rel: str, n: int, seed: int) -> TrialsTruth:
    """``n`` trials in Harbor 0.1.45's and 0.26's own shapes, cycling through the variants."""
    rng = random.Random(seed)
    truth = TrialsTruth(rel)
    start = datetime(2026, 5, 12, 8, 0)
    tasks = ["fix-git", "hello-world", "sqlite-with-gcov", "crack-7z-hash"]
    truth.task_names = tasks
    for i in range(n):
        text, seen = harbor_result(
            rng, HARBOR_VARIANTS[i % len(HARBOR_VARIANTS)], tasks[i % len(tasks)], start
        )
        d = root / json.loads(text)["trial_name"]
        d.mkdir(parents=True, exist_ok=True)
        (d / "result.json").write_text(text)
        _record(truth, seen["exception"], seen["reward"], seen["turns"])
    return truth
