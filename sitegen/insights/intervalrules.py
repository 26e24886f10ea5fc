"""Finding rules that weigh a difference by its interval before they speak: a task forgotten
(its late success rate below its early one beyond Newcombe's interval, Bonferroni's over the
run's tasks) and pass@k from the trials that disagrees with the logged one beyond its
bootstrap interval. Each quotes the interval it rests on (docs/statistics.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sitegen.insights.rulebase import Finding
from sitegen.insights.verdicts import PassAtKCheck
from sitegen.model.numbers import fixed

if TYPE_CHECKING:
    from sitegen.insights.tasks import TaskAnalysis


def task_forgotten(ta: TaskAnalysis | None) -> Finding | None:
    """Tasks of the *forgotten* list (solved in the early window, never in the late one)
    whose drop's interval (Newcombe's, from the two windows' Wilson intervals) lies below
    zero; the surest one quoted. One finding speaks for every task graded in both windows,
    so the intervals are Bonferroni's: 95 % for all of them at once (a run of 64 tasks that
    never change would otherwise show one "forgotten" in most runs)."""
    if ta is None or ta.early_window is None or ta.late_window is None:
        return None
    from sitegen.analyse import stats  # (numpy: imported where trials are analysed)
    from sitegen.insights.paired import window_counts

    (e0, e1), (l0, l1) = ta.early_window, ta.late_window
    early, late = window_counts(ta, e0, e1), window_counts(ta, l0, l1)
    counts = [
        (row, es, eg, ls, lg)
        for row, (_, eg, es), (_, lg, ls) in zip(ta.tasks, early, late, strict=True)
        if eg and lg
    ]
    z = stats.bonferroni_z(len(counts))
    sure = []
    for row, es, eg, ls, lg in counts:
        if row.category != "forgotten":
            continue
        iv = stats.newcombe(es, eg, ls, lg, z)
        if iv is not None and iv[1] < 0:
            sure.append((iv[1], row.name, es, eg, ls, lg, iv))
    if not sure:
        return None
    sure.sort()
    _, name, es, eg, ls, lg, (lo, hi) = sure[0]
    others = [s[1] for s in sure[1:]]
    more = ""
    if others:
        shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
        more = f" Also forgotten beyond doubt: {shown}."
    jointly = f", jointly for the {len(counts)} tasks graded in both" if len(counts) > 1 else ""
    return Finding(
        "task_forgotten",
        "warning",
        f"Task {name} was forgotten"
        if not others
        else f"{len(sure)} tasks were forgotten, {name} most surely",
        f"{name} succeeded in {es} of {eg} graded trials in steps {e0}–{e1} and in {ls} of "
        f"{lg} in steps {l0}–{l1}: {fixed(100 * (ls / lg - es / eg), 1)} points (95 % interval "
        f"{fixed(100 * lo, 1)} to {fixed(100 * hi, 1)}{jointly}).{more}",
        "tasks",
        tasks=(name, *others),
    )


def pass_at_k_mismatch(check: PassAtKCheck | None) -> Finding | None:
    """The logged pass@k's mean outside the interval of the trials' unbiased estimate over the
    same steps: the trainer grouped or graded rollouts otherwise than these files say."""
    if check is None or check.agrees:
        return None
    return Finding(
        "pass_at_k_mismatch",
        "warning",
        f"Logged pass@{check.k} disagrees with the trials",
        f"{check.key} averages {fixed(check.logged, 3)} over {check.steps} steps; the trials give "
        f"{fixed(check.estimated, 3)} (95 % interval {fixed(check.lo, 3)} to {fixed(check.hi, 3)}; unbiased "
        f"pass@{check.k} from {check.cells} task-steps with {check.k} graded trials or more): "
        "the trainer grouped or graded rollouts otherwise than these trial files say.",
        "progression",
    )
