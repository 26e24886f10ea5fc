"""Small hand-made models for the insight tests."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import numpy as np

from sitegen.model.parsed import MetricBlock, TrialResult

T0 = datetime(2026, 3, 1, 12, 0, 0)
STEP_S = 600.0


def blocks(n: int, metrics=None, start: datetime = T0, step_s: float = STEP_S) -> list[MetricBlock]:
    """Steps 1..n, step k's block logged at start + k * step_s."""
    out = []
    for k in range(1, n + 1):
        m = dict(metrics(k)) if metrics else {}
        out.append(MetricBlock(k, m, k, start + timedelta(seconds=k * step_s)))
    return out


def ar1(rng: np.random.Generator, reps: int, n: int, phi: float) -> np.ndarray:
    """``reps`` stationary AR(1) series of ``n`` steps (a step keeps ``phi`` of the last
    one's noise), unit innovations: noise that carries over from step to step."""
    x = np.empty((reps, n))
    x[:, 0] = rng.normal(0, 1 / math.sqrt(1 - phi * phi), reps)
    shocks = rng.normal(0, 1, (reps, n))
    for i in range(1, n):
        x[:, i] = phi * x[:, i - 1] + shocks[:, i]
    return x


def trial(
    task: str,
    step: int | None = None,
    reward: float | None = 1.0,
    exception: str | None = None,
    turns: int | None = 3,
    offset_s: float = 10.0,
    stages: tuple[float | None, float | None, float | None, float | None] | None = (5, 2, 100, 3),
    duration_s: float | None = 120.0,
    tokens: tuple[int, int, int] | None = (1000, 100, 10),
    start: datetime | None = None,
) -> TrialResult:
    """A trial started ``offset_s`` into step ``step`` (after step−1's block)."""
    if start is None and step is not None:
        start = T0 + timedelta(seconds=(step - 1) * STEP_S + offset_s)
    env, ag, ex, ver = stages if stages else (None, None, None, None)
    return TrialResult(
        name=f"{task}__{step}_{offset_s}",
        task=task,
        reward=reward,
        exception=exception,
        turns=turns,
        input_tokens=tokens[0] if tokens else None,
        output_tokens=tokens[1] if tokens else None,
        duration_s=duration_s,
        eval=False,
        started_at=start,
        env_setup_s=env,
        agent_setup_s=ag,
        agent_exec_s=ex,
        verifier_s=ver,
        cache_tokens=tokens[2] if tokens else None,
    )
