"""Where the time of a rollout goes, from each trial's Harbor timestamps.

A trial's wall time splits into Harbor's four stages (environment setup, agent setup,
agent execution, verifier), **overhead** (its time outside them: sandbox queueing,
uploads, teardown) and then the **wait for the step**: from its end to the next metric
block, the first step that could consume it. Per step, by exception kind, the slowest
tasks, and the tokens in/out/cached."""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Sequence
from datetime import timedelta
from operator import itemgetter

import msgspec

from sitegen.insights.attribution import Attribution
from sitegen.insights.tasks import task_slug
from sitegen.model.parsed import TrialResult
from sitegen.model.vocabulary import COMPONENTS

SLOWEST_TASKS = 10


class Anatomy(msgspec.Struct, frozen=True):
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


class StepAnatomy(msgspec.Struct, frozen=True):
    """One step's rollout time anatomy and token totals."""

    step: int
    anatomy: Anatomy
    input_tokens: int
    output_tokens: int
    cache_tokens: int


class KindAnatomy(msgspec.Struct, frozen=True):
    """The rollout time anatomy of the trials of one exception kind."""

    kind: str  # none | infrastructure | model | other
    anatomy: Anatomy


class SlowTask(msgspec.Struct, frozen=True):
    """A task among the slowest: its trials' mean duration and share of the wall time."""

    name: str
    slug: str  # its row in the tasks table (``#task-<slug>``)
    trials: int
    duration_mean_s: float
    time_share: float | None  # of all trials' wall time
    env_setup_s: float | None
    agent_exec_s: float | None


class Tokens(msgspec.Struct, frozen=True):
    """Token counts over the trials that report them: means and totals."""

    trials: int  # trials with token counts
    input_mean: float | None
    output_mean: float | None
    cache_mean: float | None
    input_total: int
    output_total: int
    cache_total: int


class RolloutAnalysis(msgspec.Struct, frozen=True):
    """Where a job's or run's rollout time went: overall, per step, per exception kind, per task."""

    overall: Anatomy
    shares: dict[str, float | None]  # component -> share of the summed component time
    per_step: tuple[StepAnatomy, ...]
    by_kind: tuple[KindAnatomy, ...]
    slowest_tasks: tuple[SlowTask, ...]
    tokens: Tokens


def _mean(xs: Sequence[float]) -> float | None:
    return math.fsum(xs) / len(xs) if xs else None


# A trial's stage columns, in Anatomy's order after the duration (wait_for_step is apart:
# a timed trial may have no step after it).
_STAGES = ("env_setup", "agent_setup", "agent_exec", "verifier", "overhead")


class _Columns:
    """The per-trial numbers of one trial set as columns (``None``: not there): each group
    (all trials, a step, an exception kind, a task) is summed by gathering its indices
    (:func:`operator.itemgetter`), not by a dict per trial looked up per component; a test
    holds this path to the per-trial one.

    ``stages[k][i]``: the trial's seconds in stage ``k`` of :data:`_STAGES` (``None`` for a
    trial without a duration or any of the four stages); ``wait[i]``: its wait for the step
    (``None`` also when not timed); ``dur[i]``: its duration when known and not negative.
    Means are ``math.fsum`` over a group: exactly rounded, whatever the gathering order."""

    def __init__(self, trials: Sequence[TrialResult], attr: Attribution) -> None:
        d_ = [t.duration_s for t in trials]
        e_ = [t.env_setup_s for t in trials]
        a_ = [t.agent_setup_s for t in trials]
        x_ = [t.agent_exec_s for t in trials]
        v_ = [t.verifier_s for t in trials]
        # timed: a duration and at least one of the four stages
        timed = [
            d is not None and not (e is None and a is None and x is None and v is None)
            for d, e, a, x, v in zip(d_, e_, a_, x_, v_, strict=True)
        ]
        # A stage that did not run (verifier after a setup failure) took no time.
        env, ag, ex, ver = (
            [(s or 0.0) if k else None for s, k in zip(col, timed, strict=True)]
            for col in (e_, a_, x_, v_)
        )
        # overhead: the trial's time outside the four stages
        over = [
            max(0.0, d - (e + a + x + v)) if k else None  # type: ignore[operator]
            for d, e, a, x, v, k in zip(d_, env, ag, ex, ver, timed, strict=True)
        ]
        self.stages = (env, ag, ex, ver, over)
        self.wait = self._waits(trials, d_, timed, attr)
        self.dur = [d if d is not None and d >= 0 else None for d in d_]

    @staticmethod
    def _waits(
        trials: Sequence[TrialResult], durs: list, timed: list[bool], attr: Attribution
    ) -> list[float | None]:
        """Each timed trial's wait from its end to the next block (None past the last)."""
        times = [b[1] for b in attr.boundaries]
        if not times:
            return [None] * len(durs)
        n, off, bisect_left, td = len(times), attr.offset_s, bisect.bisect_left, timedelta
        return [
            (times[i] - end).total_seconds()
            # (timedelta's seconds given by position: a keyword costs more, once a trial)
            if k and s is not None and (i := bisect_left(times, end := s + td(0, d + off))) < n
            else None
            for s, d, k in zip((t.started_at for t in trials), durs, timed, strict=True)
        ]

    def summed(self, idx: Sequence[int] | None) -> tuple[Anatomy, list[float]]:
        """The anatomy of the trials at ``idx`` (``None``: all) and the sum of each component
        (:data:`~sitegen.model.vocabulary.COMPONENTS`' order) its means were made of."""
        env = self.stages[0]
        known = [_known(col, idx) for col in (self.dur, *self.stages, self.wait)]
        sums = [math.fsum(k) for k in known]
        means = [s / len(k) if k else None for s, k in zip(sums, known, strict=True)]
        n = len(env) if idx is None else len(idx)
        return Anatomy(n, len(known[1]), *means), sums[1:]


def _gather(col: list, idx: Sequence[int] | None) -> Sequence:
    """``col``'s items at ``idx`` (all of ``col`` when None)."""
    if idx is None:
        return col
    if len(idx) == 1:
        return (col[idx[0]],)
    return itemgetter(*idx)(col) if idx else ()


def _known(col: list, idx: Sequence[int] | None) -> Sequence[float]:
    """``col``'s items at ``idx`` that are not None."""
    vals = _gather(col, idx)
    return vals if None not in vals else [v for v in vals if v is not None]


def analyse_rollouts(trials: Sequence[TrialResult], attr: Attribution) -> RolloutAnalysis:
    """The rollout-time anatomy of one trial set."""
    cols = _Columns(trials, attr)
    overall, sums = cols.summed(None)
    totals = dict(zip(COMPONENTS, sums, strict=True))
    whole = math.fsum(totals.values())
    shares = {k: (totals[k] / whole if whole > 0 else None) for k in COMPONENTS}

    by_step: dict[int, list[int]] = defaultdict(list)
    for i, s in enumerate(attr.steps):
        if s is not None:
            by_step[s].append(i)
    tin = [t.input_tokens or 0 for t in trials]
    tout = [t.output_tokens or 0 for t in trials]
    tcache = [t.cache_tokens or 0 for t in trials]
    per_step = tuple(
        StepAnatomy(s, cols.summed(idx)[0], *(sum(_gather(c, idx)) for c in (tin, tout, tcache)))
        for s, idx in sorted(by_step.items())
    )
    by_kind_idx: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(trials):
        by_kind_idx[t.kind].append(i)
    by_kind = tuple(
        KindAnatomy(k, cols.summed(by_kind_idx[k])[0])
        for k in ("none", "infrastructure", "model", "other")
        if by_kind_idx.get(k)
    )
    by_task: dict[str, list[int]] = defaultdict(list)
    for i, (t, d) in enumerate(zip(trials, cols.dur, strict=True)):
        if d is not None:
            by_task[t.task or "(no task name)"].append(i)
    all_time = math.fsum(d for d in cols.dur if d)  # (a positive duration: dur keeps >= 0)
    # (total, mean) of every task; the stage means only of those shown
    ranked = []
    for name, idx in by_task.items():
        tot = math.fsum(_gather(cols.dur, idx))
        ranked.append((-(tot / len(idx)), name, tot, idx))
    ranked.sort(key=lambda r: (r[0], r[1]))
    env_col, _, exec_col = cols.stages[:3]
    slow = [
        SlowTask(
            name,
            task_slug(name),
            len(idx),
            -neg_mean,
            tot / all_time if all_time > 0 else None,
            _mean(_known(env_col, idx)),
            _mean(_known(exec_col, idx)),
        )
        for neg_mean, name, tot, idx in ranked[:SLOWEST_TASKS]
    ]
    tokens = Tokens(
        trials=sum(t.input_tokens is not None or t.output_tokens is not None for t in trials),
        input_mean=_mean([t.input_tokens for t in trials if t.input_tokens is not None]),
        output_mean=_mean([t.output_tokens for t in trials if t.output_tokens is not None]),
        cache_mean=_mean([t.cache_tokens for t in trials if t.cache_tokens is not None]),
        input_total=sum(tin),
        output_total=sum(tout),
        cache_total=sum(tcache),
    )
    return RolloutAnalysis(overall, shares, per_step, by_kind, tuple(slow), tokens)
