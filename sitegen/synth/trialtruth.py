"""Ground truth of the synthetic Harbor trials (what a correct reader must count), and trial names."""

from __future__ import annotations

import random
import string
from collections import Counter
from dataclasses import dataclass, field


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
