"""Write synthetic Harbor trial directories (docs/formats.md §6) and their ground truth
(:mod:`sitegen.synth.trialtruth`); Harbor's own 0.1.45/0.26 shapes: :mod:`sitegen.synth.harbor`."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

from sitegen.synth.harbor import harbor_result as harbor_result  # (tests import it from here)
from sitegen.synth.harbor import stage_times
from sitegen.synth.jobspec import JobSpec, LogTruth
from sitegen.synth.trialtruth import (
    TrialsTruth,
    Window,
    make_trial_name,
    place,
    record_truth,
    step_of,
    write_archive,
)

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
    "the", "file", "test", "run", "ls", "cat", "grep", "python", "error", "fixed", "patch", "diff",
)  # fmt: skip

_POOL: list[dict] = []


def _filler(rng: random.Random, size: int) -> list[dict]:
    """Chat history of about ``size`` bytes, drawn from a fixed pool (fast at archive scale)."""
    if not _POOL:
        pool_rng = random.Random(0)
        for _ in range(256):
            text = " ".join(pool_rng.choice(FILLER_WORDS) for _ in range(60))
            _POOL.append({"role": pool_rng.choice(("user", "assistant")), "content": text})
    msgs: list[dict] = []
    n = 0
    while n < size:
        m = _POOL[rng.randrange(len(_POOL))]
        # Terminus alternates: the prompt or terminal output, then the agent's reply
        msgs.append({"role": ("user", "assistant")[len(msgs) % 2], "content": m["content"]})
        n += len(m["content"]) + 40
    return msgs


def trial_record(
    rng: random.Random,
    task: str,
    start: datetime,
    size: int,
    old_reward: bool = False,
    payload: str = "",
    stage_rng: random.Random | None = None,
    end_by: datetime | None = None,
) -> tuple[dict, str | None, float | None, int | None]:
    """A result.json object and what a reader must take from it: (obj, exception, reward, turns).

    With ``stage_rng`` the record carries Harbor's four stage timestamps (drawn from that
    generator, so the rest of the record is the same with or without them). ``end_by``
    caps the finish time (at least 30 s after the start)."""
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
    if end_by is not None:
        end = max(start + timedelta(seconds=30), min(end, end_by))
    obj = {
        "id": f"{rng.getrandbits(64):016x}",
        "task_name": task,
        "trial_name": make_trial_name(rng, task),
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
    if stage_rng is not None:
        for stage, times in stage_times(stage_rng, start, end, exc, verified).items():
            obj[stage] = (
                {
                    "started_at": times[0].isoformat() + "Z",
                    "finished_at": times[1].isoformat() + "Z",
                }
                if times
                else None
            )
    return obj, exc, reward, seen_turns


def write_trials(
    root: Path,
    rel: str,
    n: int,
    seed: int,
    size: int,
    variants: bool = True,
    payload: str = "",
    windows: Sequence[Window] = (),
) -> TrialsTruth:
    """Write ``n`` training trials (plus, with ``variants``, every odd case) under ``root``.

    ``windows`` are the steps' time windows (end of the previous metric block, end of this
    one] of the jobs that trained on these trials, each with the time its trials must end
    by and its step: the trials are spread over them in order, each starting inside its window
    (so attribution puts it on that step), with Harbor's stage timestamps. Without windows
    they start a second apart and carry no stages (older Harbor)."""
    rng = random.Random(seed)
    # Times and stages come from their own generator: the rest of each record (and the
    # ground truth) is the same whether or not the trials are placed in windows.
    trng = random.Random(seed + 0x5EED) if windows else None
    truth = TrialsTruth(rel)
    root.mkdir(parents=True, exist_ok=True)
    start = datetime(2026, 2, 8, 0, 30)
    tasks = [
        f"task-{rng.getrandbits(40):010x}-{w}"
        for w in ("fix-build", "parse-logs", "sql-join", "regex", "git-merge")
    ]
    if payload:
        tasks.append(f"{payload}-task")
    for i in range(n):
        task = rng.choice(tasks)
        at, end_by = start + timedelta(seconds=i), None
        if trng is not None:
            at, end_by = place(trng, windows[i * len(windows) // n], 90)
        obj, exc, reward, turns = trial_record(
            rng,
            task,
            at,
            size,
            old_reward=variants and i % 50 == 7,
            payload=payload,
            stage_rng=trng,
            end_by=end_by,
        )
        d = root / obj["trial_name"].replace("/", "_")
        d.mkdir(exist_ok=True)
        (d / "result.json").write_bytes(json.dumps(obj).encode())
        record_truth(truth, exc, reward, turns, task, step_of(windows, at))
    if payload:
        # A hostile exception type: it is shown on pages, so it must arrive escaped.
        obj, *_ = trial_record(rng, tasks[-1], start, 500, payload=payload)
        obj["exception_info"] = {"exception_type": payload, "exception_message": payload}
        obj["verifier_result"] = None
        d = root / obj["trial_name"].replace("/", "_")
        d.mkdir(exist_ok=True)
        (d / "result.json").write_text(json.dumps(obj))
        turns = obj["agent_result"]["metadata"].get("n_episodes")
        record_truth(truth, payload, None, turns, tasks[-1], step_of(windows, start))
    if not variants:
        return truth
    # A trial killed mid-run: its folder holds Harbor's trial log but no result.json.
    d = root / make_trial_name(rng, tasks[0])
    d.mkdir()
    (d / "trial.log").write_text("Starting trial\n")
    truth.missing += 1
    # Empty and truncated result.json files.
    d = root / make_trial_name(rng, tasks[1])
    d.mkdir()
    (d / "result.json").write_bytes(b"")
    d = root / make_trial_name(rng, tasks[2])
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
    archived = []
    for _ in range(4):
        obj, exc, reward, turns = trial_record(rng, tasks[4], start, 500)
        archived.append(obj)
        record_truth(truth, exc, reward, turns, tasks[4], step_of(windows, start))
    write_archive(root / "trials_step2_20260208T013000.tar.gz", archived)
    return truth


def step_windows(spec: JobSpec, truth: LogTruth, last: int | None = None) -> list[Window]:
    """The window of each step the job logged up to ``last``: (end of the previous block or
    the job's start, end of its block], where a trial started is the step's
    (sitegen.insights.attribution), the time its trials end by (the window's end for the
    synchronous trainer, which generates inside the step; the last kept block's for the
    async one: a trial still running then would wait for the next job, days later), and
    the step."""

    def logged(t: datetime) -> datetime:
        return t.replace(microsecond=t.microsecond // 1000 * 1000)  # loguru writes ms

    steps = [s for s in truth.steps if last is None or s <= last]
    out, lo = [], spec.start
    for step in steps:
        hi = logged(truth.block_times[step])
        end_by = hi if not spec.async_trainer else logged(truth.block_times[steps[-1]])
        out.append((lo, hi, end_by, step))
        lo = hi
    return out
