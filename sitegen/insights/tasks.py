"""What a run learned, task by task, and which rollouts taught nothing.

* Per Harbor task (``task_name``): trials, success rate, mean reward, turns, the most
  common exception, and per training step the success rate.
* Lists: **learned** (no success in the early window, some in the late one),
  **forgotten** (the reverse), **always** and **never** solved, with their rollout shares.
* Wasted rollouts: per step, the prompt groups (one task's graded trials at one step)
  whose rewards are all equal: their GRPO advantage is zero.

Success = reward > 0; a trial without a reward is not graded (docs/formats.md §6)."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence

import msgspec

from sitegen.insights.attribution import Attribution
from sitegen.model.parsed import TrialResult
from sitegen.model.vocabulary import is_finite

WINDOW_FRACTION = 1 / 3  # the early and late windows: the attributed steps' first and last third
MIN_WINDOW_STEPS = 3  # fewer steps: no task is learned or forgotten
CATEGORIES = ("learned", "forgotten", "always", "never", "mixed")
_SLUG_RE = re.compile(r"[^a-z0-9]+")


class TaskStep(msgspec.Struct, frozen=True):
    """One task at one step: trials, graded trials, successes."""

    step: int
    trials: int
    graded: int
    successes: int


class TaskRowBrief(msgspec.Struct, frozen=True, kw_only=True):
    """One task's row of the per-task table: its trials, successes and when it was solved
    (a page holds these; the table file holds them with their per-step cells, TaskRow)."""

    name: str
    slug: str  # the row's anchor is ``task-<slug>``
    trials: int
    graded: int
    successes: int
    success_rate: float | None
    reward_mean: float | None
    turns_mean: float | None
    top_exception: str | None
    top_exception_count: int
    first_solved_step: int | None
    last_solved_step: int | None
    early_rate: float | None  # success rate in the early window
    late_rate: float | None
    category: str  # one of CATEGORIES


class TaskRow(TaskRowBrief, frozen=True, kw_only=True):
    """A task's row with its per-step cells."""

    steps: tuple[TaskStep, ...]


class TaskList(msgspec.Struct, frozen=True):
    """One category of tasks (learned, forgotten, always, never) and its share of the rollouts."""

    category: str
    tasks: tuple[str, ...]
    trials: int
    share_of_rollouts: float | None


class WastedStep(msgspec.Struct, frozen=True):
    """One step's prompt groups whose graded trials all scored the same (no learning signal)."""

    step: int
    groups: int  # prompt groups with at least two graded trials
    all_equal: int
    all_solved: int  # all equal and > 0
    all_failed: int  # all equal and ≤ 0
    share: float | None
    rollouts_wasted: int  # trials in all-equal groups


class Wasted(msgspec.Struct, frozen=True):
    """The all-equal prompt groups of every step, and the rollouts they took."""

    steps: tuple[WastedStep, ...]
    groups: int
    all_equal: int
    share: float | None  # over all groups of all steps
    rollouts: int
    rollouts_wasted: int
    rollouts_share: float | None


class TaskAnalysis(msgspec.Struct, frozen=True):
    """The per-task analysis of a job's or run's trials: the table and the lists."""

    attribution: str  # "time" or "none"
    attribution_note: str
    trials: int
    attributed: int
    steps: tuple[int, ...]  # steps with attributed trials
    early_window: tuple[int, int] | None
    late_window: tuple[int, int] | None
    tasks: tuple[TaskRow, ...]  # sorted by first solved step, then name
    lists: tuple[TaskList, ...]
    wasted: Wasted


def task_slug(name: str) -> str:
    return _SLUG_RE.sub("-", name.lower()).strip("-") or "task"


def _success(r: float) -> bool:
    return r > 0


def _rate(s: int, n: int) -> float | None:
    return s / n if n else None


def _windows(steps: Sequence[int]) -> tuple[tuple[int, int], tuple[int, int]] | None:
    if not steps:
        return None
    lo, hi = min(steps), max(steps)
    span = hi - lo + 1
    if span < MIN_WINDOW_STEPS:
        return None
    w = max(1, math.ceil(span * WINDOW_FRACTION))
    return (lo, lo + w - 1), (hi - w + 1, hi)


def _category(
    graded: int, successes: int, early: tuple[int, int] | None, late: tuple[int, int] | None
) -> str:
    if graded and successes == graded:
        return "always"
    if successes == 0:  # a task whose every trial crashed was never solved either
        return "never"
    if early is not None and late is not None:
        eg, es = early
        lg, ls = late
        if eg and lg and es == 0 and ls > 0:
            return "learned"
        if eg and lg and es > 0 and ls == 0:
            return "forgotten"
    return "mixed"


def _window(cells: Sequence[TaskStep], w: tuple[int, int] | None) -> tuple[int, int] | None:
    """(graded, successes) of a task inside a step window."""
    if w is None:
        return None
    inside = [c for c in cells if w[0] <= c.step <= w[1]]
    return sum(c.graded for c in inside), sum(c.successes for c in inside)


def analyse_tasks(trials: Sequence[TrialResult], attr: Attribution) -> TaskAnalysis:
    """Per-task statistics, the RL lists and the wasted rollouts of one trial set."""
    by_task: dict[str, list[int]] = defaultdict(list)  # task -> trial indices
    for i, t in enumerate(trials):
        by_task[t.task or "(no task name)"].append(i)
    att_steps = sorted({s for s in attr.steps if s is not None})
    wins = _windows(att_steps)
    early_w, late_w = wins if wins else (None, None)
    rows: list[TaskRow] = []
    used: set[str] = set()
    for name in sorted(by_task):
        idx = by_task[name]
        rewards = [r for i in idx if is_finite(r := trials[i].reward)]
        successes = sum(1 for r in rewards if _success(r))
        turns = [n for i in idx if (n := trials[i].turns) is not None]
        excs = Counter(trials[i].exception for i in idx if trials[i].exception)
        top = min(excs.items(), key=lambda kv: (-kv[1], kv[0])) if excs else None
        cells: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0])
        for i in idx:
            s = attr.steps[i] if i < len(attr.steps) else None
            if s is None:
                continue
            c = cells[s]
            c[0] += 1
            r = trials[i].reward
            if is_finite(r):
                c[1] += 1
                c[2] += int(_success(r))
        per_step = tuple(TaskStep(s, *cells[s]) for s in sorted(cells))
        solved = [c.step for c in per_step if c.successes]

        ew, lw = _window(per_step, early_w), _window(per_step, late_w)
        slug = task_slug(name)
        base, k = slug, 2
        while slug in used:  # two names that slug alike keep distinct anchors
            slug = f"{base}-{k}"
            k += 1
        used.add(slug)
        rows.append(
            TaskRow(
                name=name,
                slug=slug,
                trials=len(idx),
                graded=len(rewards),
                successes=successes,
                success_rate=_rate(successes, len(rewards)),
                reward_mean=math.fsum(rewards) / len(rewards) if rewards else None,
                turns_mean=math.fsum(turns) / len(turns) if turns else None,
                top_exception=top[0] if top else None,
                top_exception_count=top[1] if top else 0,
                first_solved_step=solved[0] if solved else None,
                last_solved_step=solved[-1] if solved else None,
                early_rate=_rate(ew[1], ew[0]) if ew else None,
                late_rate=_rate(lw[1], lw[0]) if lw else None,
                category=_category(len(rewards), successes, ew, lw),
                steps=per_step,
            )
        )
    rows.sort(key=lambda r: (r.first_solved_step is None, r.first_solved_step or 0, r.name))
    total = len(trials)
    lists = []
    for cat in CATEGORIES[:4]:
        members = [r for r in rows if r.category == cat]
        n = sum(r.trials for r in members)
        lists.append(TaskList(cat, tuple(r.name for r in members), n, n / total if total else None))
    return TaskAnalysis(
        attribution=attr.method,
        attribution_note=attr.reason,
        trials=total,
        attributed=attr.attributed,
        steps=tuple(att_steps),
        early_window=early_w,
        late_window=late_w,
        tasks=tuple(rows),
        lists=tuple(lists),
        wasted=wasted_rollouts(trials, attr),
    )


def wasted_rollouts(trials: Sequence[TrialResult], attr: Attribution) -> Wasted:
    """Per step, the share of prompt groups whose graded rewards are all equal.

    A group is the graded trials of one task at one step; it needs two of them to
    have an advantage at all. Ungraded trials (no verifier result) are left out:
    the trainer masks or zeroes them, and which one it does is not in the files."""
    groups: dict[tuple[int, str], list[float]] = defaultdict(list)
    for t, s in zip(trials, attr.steps, strict=False):
        if s is None or not is_finite(t.reward):
            continue
        groups[(s, t.task)].append(t.reward)
    per_step: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    for (s, _task), rs in groups.items():
        if len(rs) < 2:
            continue
        c = per_step[s]
        c[0] += 1
        c[4] += len(rs)
        if all(r == rs[0] for r in rs):
            c[1] += 1
            c[2 if _success(rs[0]) else 3] += 1
            c[5] += len(rs)
    steps = tuple(
        WastedStep(s, c[0], c[1], c[2], c[3], _rate(c[1], c[0]), c[5])
        for s, c in sorted(per_step.items())
    )
    g = sum(x.groups for x in steps)
    e = sum(x.all_equal for x in steps)
    ro = sum(per_step[s][4] for s in per_step)
    rw = sum(x.rollouts_wasted for x in steps)
    return Wasted(steps, g, e, _rate(e, g), ro, rw, _rate(rw, ro))
