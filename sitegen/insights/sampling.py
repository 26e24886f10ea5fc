"""Which trials of a job to show as transcripts, and why each was picked.

Deterministic and within a budget (``transcripts`` per job, default 48), filled in this
order, each pick labelled with every reason it has:

1. per learned task (by name): its first success, and the failure just before it;
2. per forgotten task: its last success, and the first failure after it;
3. per exception type (by name): its most recent trial;
4. per finding that points at steps (an infrastructure burst, a rising error rate, a slow
   step), a trial that shows it at the first of its steps that has one: the most recent
   infrastructure failure, the most recent exception, the slowest rollout;
5. per mixed task: its best and its worst trial (by reward);
6. the slowest rollouts, slowest first.

"First", "last" and "recent" go by start time (then step, then name); every tie is broken
by trial name, so two builds of the same trials pick the same ones. A trial already picked
gets the later reasons too, without taking another place, until the budget is full."""

from __future__ import annotations

import operator
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import msgspec

from sitegen.model.vocabulary import is_finite

if TYPE_CHECKING:  # (pages name the section below: this module is imported by every build)
    from sitegen.insights.attribution import Attribution
    from sitegen.insights.rulebase import Finding
    from sitegen.insights.tasks import TaskAnalysis
    from sitegen.model.parsed import TrialResult

DEFAULT_PICKS = 48


def _timed(t: TrialResult) -> bool:
    return t.duration_s is not None and t.duration_s >= 0


# A learned and a forgotten task's picks' reasons (the page links a finding to the second).
LEARNED_FIRST = "first success of a learned task"
LEARNED_BEFORE = "the failure just before a learned task's first success"
FORGOTTEN_LAST = "last success of a forgotten task"
FORGOTTEN_AFTER = "the first failure after a forgotten task's last success"

# The findings a transcript shows, by id: the reason of the pick at one of the finding's
# steps (each ``{step}``), which trials at that step show it, and which of them is taken.
EVIDENCE: dict[str, tuple[str, Callable[[TrialResult], bool], str]] = {
    "infra_burst": (
        "an infrastructure failure of the burst at step {step}",
        lambda t: t.kind == "infrastructure",
        "last",
    ),
    "error_rate_rising": (
        "an exception at step {step}, as the error rate rose",
        lambda t: t.exception is not None,
        "last",
    ),
    "step_time_outlier": (
        "the slowest rollout of slow step {step}",
        _timed,
        "slowest",
    ),
}


class Pick(msgspec.Struct, frozen=True):
    """A trial picked for its transcript: its index in the trial set and why it was picked."""

    index: int
    reasons: tuple[str, ...]


def pick_trials(
    trials: Sequence[TrialResult],
    attr: Attribution,
    tasks: TaskAnalysis,
    budget: int = DEFAULT_PICKS,
    findings: Sequence[Finding] = (),
) -> tuple[Pick, ...]:
    """At most ``budget`` trials, in the order above, each with its reasons; ``findings``:
    the page's, most severe first."""
    if budget <= 0 or not trials:
        return ()
    order = _Order(trials, attr)
    picked: dict[int, list[str]] = {}
    for i, reason in _candidates(trials, tasks, order, attr, findings):
        if len(picked) >= budget:
            break
        reasons = picked.setdefault(i, [])
        if reason not in reasons:
            reasons.append(reason)
    return tuple(Pick(i, tuple(rs)) for i, rs in picked.items())


class _Order:
    """Each trial's place in time: (start, step, name); undated trials after the dated ones."""

    def __init__(self, trials: Sequence[TrialResult], attr: Attribution) -> None:
        steps = attr.steps
        twins = _twin_ranks(trials)
        self.key = [
            (
                t.started_at is None,
                t.started_at or datetime.min,
                s if (s := steps[i] if i < len(steps) else None) is not None else -1,
                t.name,
                twins.get(i, 0),  # (two trials of one name: told apart by what they hold)
            )
            for i, t in enumerate(trials)
        ]

    def first(self, idx: Sequence[int]) -> int | None:
        return min(idx, key=self.key.__getitem__) if idx else None

    def last(self, idx: Sequence[int]) -> int | None:
        """The latest (a dated trial before any undated one); at one time, the first by name."""
        return min(idx, key=self._latest_first) if idx else None

    def _latest_first(self, i: int) -> tuple:
        undated, at, step, name, full = self.key[i]
        return (undated, -(at - datetime.min).total_seconds(), -step, name, full)


def _twin_ranks(trials: Sequence[TrialResult]) -> dict[int, int]:
    """For trials that share a name (a copied folder), their order by content: what tells
    them apart is what they hold, not where they were read (only these few are compared)."""
    seen: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(trials):
        seen[t.name].append(i)
    out: dict[int, int] = {}
    for idx in seen.values():
        if len(idx) > 1:
            out.update(
                (i, rank) for rank, i in enumerate(sorted(idx, key=lambda i: repr(trials[i])))
            )
    return out


def _success(t: TrialResult) -> bool:
    return is_finite(t.reward) and t.reward > 0  # type: ignore[operator]


def _failure(t: TrialResult) -> bool:
    return is_finite(t.reward) and t.reward <= 0  # type: ignore[operator]


def _candidates(
    trials: Sequence[TrialResult],
    ta: TaskAnalysis,
    order: _Order,
    attr: Attribution,
    findings: Sequence[Finding],
) -> Iterator[tuple[int, str]]:
    by_task: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(trials):
        by_task[t.task or "(no task name)"].append(i)
    category = {r.name: r.category for r in ta.tasks}
    names = sorted(by_task)
    key = order.key.__getitem__
    turns = (  # the success that marks the turn, then the failure on its far side
        ("learned", order.first, order.last, operator.lt, LEARNED_FIRST, LEARNED_BEFORE),
        ("forgotten", order.last, order.first, operator.gt, FORGOTTEN_LAST, FORGOTTEN_AFTER),
    )
    for cat, pick, near, side, why, why_near in turns:
        for name in names:
            if category.get(name) != cat:
                continue
            idx = by_task[name]
            mark = pick([i for i in idx if _success(trials[i])])
            if mark is None:
                continue
            yield mark, why
            other = near([i for i in idx if _failure(trials[i]) and side(key(i), key(mark))])
            if other is not None:
                yield other, why_near
    by_exc: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(trials):
        if t.exception:
            by_exc[t.exception].append(i)
    for exc in sorted(by_exc):
        recent = order.last(by_exc[exc])
        assert recent is not None
        yield recent, f"most recent {exc}"
    yield from _evidence(trials, attr.steps, order, findings)
    for name in names:
        if category.get(name) != "mixed":
            continue
        graded = [i for i in by_task[name] if is_finite(trials[i].reward)]
        if not graded:
            continue
        best = min(graded, key=lambda i: (-trials[i].reward, *key(i)[3:]))  # type: ignore[operator]
        worst = min(graded, key=lambda i: (trials[i].reward, *key(i)[3:]))
        yield best, "best trial of a mixed task"
        yield worst, "worst trial of a mixed task"
    timed = [i for i, t in enumerate(trials) if _timed(t)]
    for i in sorted(timed, key=_slowest_first(trials, order)):
        yield i, "among the slowest rollouts"


def _slowest_first(trials: Sequence[TrialResult], order: _Order) -> Callable[[int], tuple]:
    """The sort key of timed trials: the slowest first; at one duration, by name."""
    return lambda i: (-trials[i].duration_s, *order.key[i][3:])  # type: ignore[operator]


def _evidence(
    trials: Sequence[TrialResult],
    steps: Sequence[int | None],
    order: _Order,
    findings: Sequence[Finding],
) -> Iterator[tuple[int, str]]:
    """For each finding of :data:`EVIDENCE`, the trial that shows it at the first of its
    steps (worst first) where one does."""
    for f in findings:
        if f.id not in EVIDENCE or not f.steps:
            continue
        reason, shows, which = EVIDENCE[f.id]
        at: dict[int, list[int]] = defaultdict(list)
        for i, t in enumerate(trials):
            s = steps[i] if i < len(steps) else None
            if s is not None and shows(t):
                at[s].append(i)
        for step in f.steps:
            if step not in at:
                continue
            idx = at[step]
            if which == "slowest":
                best = min(idx, key=_slowest_first(trials, order))
            else:
                best = order.last(idx)  # type: ignore[assignment]
            yield best, reason.format(step=step)
            break


# -- the page section ---------------------------------------------------------------------------


class TranscriptEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One sampled trial as a page lists it and its transcript page's header shows it."""

    trial: str
    slug: str  # its transcript page's folder name (stable: made from the trial name)
    url: str  # that page's site path (``jobs/<id>/transcripts/<slug>/``): its data beside it
    task: str
    task_slug: str  # the task's row in the tasks table (``#task-<slug>``)
    step: int | None  # the step it is attributed to (insights.attribution)
    started_at: str | None
    reward: float | None
    exception: str | None
    exception_kind: str | None  # vocabulary.exception_kind
    turns: int | None  # Harbor's n_episodes
    input_tokens: int | None
    output_tokens: int | None
    duration_s: float | None
    env_setup_s: float | None
    agent_setup_s: float | None
    agent_exec_s: float | None
    verifier_s: float | None
    reasons: tuple[str, ...]  # why it was picked (pick_trials), in the order they apply


class TranscriptsSection(msgspec.Struct, frozen=True, kw_only=True):
    """The sampled transcripts of a job's (or run's) trials: ``present.transcripts``."""

    wanted: int  # the budget per job (the ``transcripts`` option)
    trials: int  # trials sampled from
    dir: str  # the site folder holding them: the page's, or its job's for a run of that job
    entries: tuple[TranscriptEntry, ...]  # in the order they were picked

    def for_task(self) -> dict[str, TranscriptEntry]:
        """Each task's first pick (the tasks table and heatmap link to it)."""
        out: dict[str, TranscriptEntry] = {}
        for e in self.entries:
            out.setdefault(e.task, e)
        return out

    def for_exception(self) -> dict[str, TranscriptEntry]:
        """Each exception type's first pick (the exceptions table links to it)."""
        out: dict[str, TranscriptEntry] = {}
        for e in self.entries:
            if e.exception:
                out.setdefault(e.exception, e)
        return out
