"""Ground truth of the synthetic Harbor trials (what a correct reader must count), and trial names."""

from __future__ import annotations

import gzip
import io
import json
import random
import string
import tarfile
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from pathlib import Path


@dataclass
class TrialsTruth:
    """What the synthesizer wrote in one trials folder: the ground truth tests compare with."""

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
    # Each training trial written: (task, the step whose window it started in, reward); the
    # step is None outside every window (or without windows).
    per_trial: list[tuple[str, int | None, float | None]] = field(default_factory=list)
    # Each Harbor-shaped trial's duration, stage seconds and cached tokens as a reader must
    # find them (a multi-step trial's agent and verifier times and cached tokens: the sums
    # over its steps), in ``per_trial``'s order; empty from the other writers.
    per_trial_stages: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        """Every field, in order, as synth-truth.json holds it."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        return {
            **out,
            "exceptions": dict(self.exceptions),
            "per_trial": list(map(list, self.per_trial)),
        }


def make_trial_name(rng: random.Random, task: str) -> str:
    return f"{task[:32]}__{''.join(rng.choice(string.ascii_letters + string.digits) for _ in range(7))}"


# What a step's window is (sitegen.insights.attribution): a trial that started in (end of
# step N-1, end of step N] is step N's; the first step's window opens 10 minutes before the
# log's first line.
WINDOW_SLACK = timedelta(minutes=10)

Window = tuple[datetime, datetime, datetime, int]
"""(start of a step's window, its end: the step's block, the time its trials end by, the step)."""


def step_of(windows: Sequence[Window], at: datetime) -> int | None:
    """The step whose window ``at`` falls in (``windows`` in order), or None."""
    if not windows or at < windows[0][0] - WINDOW_SLACK:
        return None
    i = bisect_left([w[1] for w in windows], at)
    return windows[i][3] if i < len(windows) else None


def place(rng: random.Random, window: Window, slack_s: int) -> tuple[datetime, datetime]:
    """When a trial of ``window``'s step starts (in the window's first half when it must end in
    the window too) and the time it ends by: up to ``slack_s`` seconds before the block that
    consumes it, not on it."""
    lo, hi, end_by, _ = window
    span = (hi - lo).total_seconds()
    at = lo + timedelta(seconds=rng.randint(1, max(1, int(span / 2 if end_by == hi else span))))
    return at, end_by - timedelta(seconds=rng.randint(5, slack_s))


def write_archive(path: Path, results: Sequence[dict]) -> None:
    """``results`` as a .tar.gz of ``<trial_name>/result.json`` members, its gzip header's time
    fixed so that a seed gives the same bytes."""
    buf = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w") as tar,
    ):
        for obj in results:
            data = json.dumps(obj).encode()
            info = tarfile.TarInfo(f"{obj['trial_name']}/result.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(buf.getvalue())


def record_truth(
    truth: TrialsTruth,
    exc: str | None,
    reward: float | None,
    turns: int | None,
    task: str,
    step: int | None,
) -> None:
    truth.per_trial.append((task, step, reward))
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
