"""Where the time of a rollout goes, from each trial's Harbor timestamps.

A trial's wall time splits into environment setup, agent setup, agent execution
and verifier (Harbor's four stages), **overhead** (the trial's time outside
those stages: queueing for a sandbox, uploads, teardown) and, after it ends,
the **wait for the step**: from the trial's end to the next metric block — the
first training step that could consume it. Per step (means per trial), by
exception kind, the slowest tasks, and the tokens in/out/cached.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Sequence
from datetime import timedelta

from sitegen.insights.attribution import Attribution
from sitegen.insights.tasks import task_slug
from sitegen.model.frozen import frozen
from sitegen.model.parsed import TrialResult
from sitegen.model.vocabulary import COMPONENTS, exception_kind

SLOWEST_TASKS = 10


@frozen
class Anatomy:
    """Mean seconds per trial of each component over ``trials`` trials (``timed`` had stages)."""

    trials: int
    timed: int
    duration_mean_s: float | None
    env_setup_s: float | None
    agent_setup_s: float | None
    agent_exec_s: float | None
    verifier_s: float | None
    overhead_s: float | None
    wait_for_step_s: float | None


@frozen
class StepAnatomy:
    step: int
    anatomy: Anatomy
    input_tokens: int
    output_tokens: int
    cache_tokens: int


@frozen
class KindAnatomy:
    kind: str  # none | infrastructure | model | other
    anatomy: Anatomy


@frozen
class SlowTask:
    name: str
    slug: str  # its row in the tasks table (``#task-<slug>``)
    trials: int
    duration_mean_s: float
    time_share: float | None  # of all trials' wall time
    env_setup_s: float | None
    agent_exec_s: float | None


@frozen
class Tokens:
    trials: int  # trials with token counts
    input_mean: float | None
    output_mean: float | None
    cache_mean: float | None
    input_total: int
    output_total: int
    cache_total: int


@frozen
class RolloutAnalysis:
    overall: Anatomy
    shares: dict[str, float | None]  # component -> share of the summed component time
    per_step: tuple[StepAnatomy, ...]
    by_kind: tuple[KindAnatomy, ...]
    slowest_tasks: tuple[SlowTask, ...]
    tokens: Tokens


def _mean(xs: list[float]) -> float | None:
    return math.fsum(xs) / len(xs) if xs else None


def _components(t: TrialResult, wait: float | None) -> dict[str, float] | None:
    """Seconds per component for one trial; None without the four stages."""
    stages = (t.env_setup_s, t.agent_setup_s, t.agent_exec_s, t.verifier_s)
    if t.duration_s is None or all(s is None for s in stages):
        return None
    # A stage that did not run (verifier after a setup failure) took no time.
    env, ag, ex, ver = (s or 0.0 for s in stages)
    out = {
        "env_setup": env,
        "agent_setup": ag,
        "agent_exec": ex,
        "verifier": ver,
        "overhead": max(0.0, t.duration_s - (env + ag + ex + ver)),
    }
    if wait is not None:
        out["wait_for_step"] = wait
    return out


def _anatomy(items: list[tuple[TrialResult, dict[str, float] | None]]) -> Anatomy:
    timed = [c for _, c in items if c is not None]
    durs = [t.duration_s for t, _ in items if t.duration_s is not None and t.duration_s >= 0]

    def m(key: str) -> float | None:
        return _mean([c[key] for c in timed if key in c])

    return Anatomy(
        trials=len(items),
        timed=len(timed),
        duration_mean_s=_mean(durs),
        env_setup_s=m("env_setup"),
        agent_setup_s=m("agent_setup"),
        agent_exec_s=m("agent_exec"),
        verifier_s=m("verifier"),
        overhead_s=m("overhead"),
        wait_for_step_s=m("wait_for_step"),
    )


def analyse_rollouts(trials: Sequence[TrialResult], attr: Attribution) -> RolloutAnalysis:
    """The rollout-time anatomy of one trial set."""
    times = [b[1] for b in attr.boundaries]
    comps: list[dict[str, float] | None] = []
    for t in trials:
        wait = None
        if t.started_at is not None and t.duration_s is not None and times:
            end = t.started_at + timedelta(seconds=t.duration_s + attr.offset_s)
            i = bisect.bisect_left(times, end)
            if i < len(times):
                wait = (times[i] - end).total_seconds()
        comps.append(_components(t, wait))
    items = list(zip(trials, comps, strict=True))
    overall = _anatomy(items)
    totals = {k: math.fsum(c[k] for c in comps if c is not None and k in c) for k in COMPONENTS}
    whole = math.fsum(totals.values())
    shares = {k: (totals[k] / whole if whole > 0 else None) for k in COMPONENTS}

    by_step: dict[int, list[int]] = defaultdict(list)
    for i, s in enumerate(attr.steps):
        if s is not None:
            by_step[s].append(i)
    per_step = tuple(
        StepAnatomy(
            s,
            _anatomy([items[i] for i in idx]),
            sum(trials[i].input_tokens or 0 for i in idx),
            sum(trials[i].output_tokens or 0 for i in idx),
            sum(trials[i].cache_tokens or 0 for i in idx),
        )
        for s, idx in sorted(by_step.items())
    )
    by_kind_idx: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(trials):
        by_kind_idx[exception_kind(t.exception)].append(i)
    by_kind = tuple(
        KindAnatomy(k, _anatomy([items[i] for i in by_kind_idx[k]]))
        for k in ("none", "infrastructure", "model", "other")
        if by_kind_idx.get(k)
    )
    by_task: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(trials):
        if t.duration_s is not None and t.duration_s >= 0:
            by_task[t.task or "(no task name)"].append(i)
    all_time = math.fsum(t.duration_s for t in trials if t.duration_s and t.duration_s > 0)
    slow = []
    for name, idx in by_task.items():
        tot = math.fsum(trials[i].duration_s or 0.0 for i in idx)
        a = _anatomy([items[i] for i in idx])
        slow.append(
            SlowTask(
                name,
                task_slug(name),
                len(idx),
                tot / len(idx),
                tot / all_time if all_time > 0 else None,
                a.env_setup_s,
                a.agent_exec_s,
            )
        )
    slow.sort(key=lambda s: (-s.duration_mean_s, s.name))
    with_tokens = [t for t in trials if t.input_tokens is not None or t.output_tokens is not None]
    tokens = Tokens(
        trials=len(with_tokens),
        input_mean=_mean([t.input_tokens for t in trials if t.input_tokens is not None]),
        output_mean=_mean([t.output_tokens for t in trials if t.output_tokens is not None]),
        cache_mean=_mean([t.cache_tokens for t in trials if t.cache_tokens is not None]),
        input_total=sum(t.input_tokens or 0 for t in trials),
        output_total=sum(t.output_tokens or 0 for t in trials),
        cache_total=sum(t.cache_tokens or 0 for t in trials),
    )
    return RolloutAnalysis(overall, shares, per_step, by_kind, tuple(slow[:SLOWEST_TASKS]), tokens)
