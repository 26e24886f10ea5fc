from datetime import timedelta

import pytest

from sitegen.insights.attribution import attribute
from sitegen.insights.tasks import analyse_tasks, task_slug, wasted_rollouts
from tests.insights.helpers import T0, blocks, trial


def _run(steps: int = 9):
    """Four tasks over 9 steps, two trials each per step, one of every category."""
    ts = []
    for s in range(1, steps + 1):
        late = s > steps // 2
        ts += [trial("learn", s, 1.0 if late else 0.0, offset_s=o) for o in (1, 2)]
        ts += [trial("forget", s, 0.0 if late else 1.0, offset_s=o) for o in (1, 2)]
        ts += [trial("always", s, 1.0, offset_s=o) for o in (1, 2)]
        ts += [trial("never", s, 0.0, offset_s=o) for o in (1, 2)]
        # a mixed task with one success and one failure in every step
        ts += [trial("mixed", s, 1.0, offset_s=1), trial("mixed", s, 0.0, offset_s=2)]
    return ts, blocks(steps)


def test_categories_lists_and_shares():
    ts, bs = _run()
    ta = analyse_tasks(ts, attribute(ts, bs, T0))
    cat = {r.name: r.category for r in ta.tasks}
    assert cat == {
        "learn": "learned",
        "forget": "forgotten",
        "always": "always",
        "never": "never",
        "mixed": "mixed",
    }
    lists = {x.category: x for x in ta.lists}
    assert lists["learned"].tasks == ("learn",)
    assert lists["learned"].trials == 18
    assert lists["learned"].share_of_rollouts == pytest.approx(18 / 90)
    assert ta.early_window == (1, 3) and ta.late_window == (7, 9)


def test_rows_sorted_by_first_solved_step_and_counts():
    ts, bs = _run()
    ta = analyse_tasks(ts, attribute(ts, bs, T0))
    assert [r.name for r in ta.tasks] == ["always", "forget", "mixed", "learn", "never"]
    learn = next(r for r in ta.tasks if r.name == "learn")
    assert learn.first_solved_step == 5 and learn.last_solved_step == 9
    assert learn.successes == 10 and learn.graded == 18
    assert learn.success_rate == pytest.approx(10 / 18)
    assert learn.early_rate == 0 and learn.late_rate == 1
    assert [(c.step, c.trials, c.successes) for c in learn.steps][:5] == [
        (1, 2, 0),
        (2, 2, 0),
        (3, 2, 0),
        (4, 2, 0),
        (5, 2, 2),
    ]


def test_top_exception_turns_and_ungraded_trials():
    bs = blocks(2)
    ts = [
        trial("t", 1, None, "AgentSetupTimeoutError", turns=None),
        trial("t", 1, 0.0, "AgentTimeoutError", turns=4),
        trial("t", 2, 1.0, "AgentTimeoutError", turns=2),
    ]
    row = analyse_tasks(ts, attribute(ts, bs, T0)).tasks[0]
    assert (row.trials, row.graded, row.successes) == (3, 2, 1)
    assert row.top_exception == "AgentTimeoutError" and row.top_exception_count == 2
    assert row.turns_mean == 3.0
    assert row.reward_mean == 0.5


def test_wasted_groups_all_equal_per_step():
    bs = blocks(2)
    ts = [
        # step 1: group a all 1 (wasted), group b mixed, group c one graded trial (no group)
        trial("a", 1, 1.0, offset_s=1),
        trial("a", 1, 1.0, offset_s=2),
        trial("b", 1, 1.0, offset_s=1),
        trial("b", 1, 0.0, offset_s=2),
        trial("c", 1, 1.0, offset_s=1),
        trial("c", 1, None, "DaytonaError", offset_s=2),
        # step 2: group a all 0 (wasted), -1 and 0 differ (not wasted)
        trial("a", 2, 0.0, offset_s=1),
        trial("a", 2, 0.0, offset_s=2),
        trial("b", 2, -1.0, offset_s=1),
        trial("b", 2, 0.0, offset_s=2),
    ]
    w = wasted_rollouts(ts, attribute(ts, bs, T0))
    assert [(s.step, s.groups, s.all_equal, s.all_solved, s.all_failed) for s in w.steps] == [
        (1, 2, 1, 1, 0),
        (2, 2, 1, 0, 1),
    ]
    assert w.share == 0.5 and w.rollouts == 8 and w.rollouts_wasted == 4


def test_wasted_groups_count_each_all_solved_and_all_failed_group():
    bs = blocks(1)
    ts = [
        trial(task, 1, reward, offset_s=off)
        for task, reward in (("a", 1.0), ("b", 1.0), ("c", 0.0), ("d", 0.0), ("e", 0.0))
        for off in (1, 2)
    ]
    w = wasted_rollouts(ts, attribute(ts, bs, T0))
    assert [(s.groups, s.all_equal, s.all_solved, s.all_failed) for s in w.steps] == [(5, 5, 2, 3)]


def test_without_attribution_only_totals_and_always_never():
    ts, bs = _run(3)
    nobs = [b.__class__(b.step, b.metrics, b.line, None) for b in bs]
    ta = analyse_tasks(ts, attribute(ts, nobs, T0))
    assert ta.attribution == "none" and ta.steps == ()
    cat = {r.name: r.category for r in ta.tasks}
    assert cat["learn"] == "mixed" and cat["always"] == "always" and cat["never"] == "never"
    assert ta.wasted.groups == 0 and ta.wasted.share is None


def test_slugs_are_unique_anchors():
    bs = blocks(1)
    ts = [trial("Fix Build", 1), trial("fix-build", 1), trial("<b>x</b>", 1)]
    rows = analyse_tasks(ts, attribute(ts, bs, T0)).tasks
    assert sorted(r.slug for r in rows) == ["b-x-b", "fix-build", "fix-build-2"]
    assert task_slug("***") == "task"


def test_a_large_job_page_section_stays_bounded():
    """40 k trials of ~1 600 tasks over 200 steps: the page keeps 200 rows and ≤ 30 × 50 cells."""
    from sitegen.insights.sections import (
        HEATMAP_BINS,
        HEATMAP_TASKS,
        INLINE_TASK_ROWS,
        tasks_section,
    )

    bs = blocks(200)
    ts = [
        trial(f"task-{(s * 7 + k) % 4000:04d}", s, float(k % 3 == 0), offset_s=k % 50)
        for s in range(1, 201)
        for k in range(200)
    ]
    attr = attribute(ts, bs, T0)
    section = tasks_section(analyse_tasks(ts, attr), attr)
    assert section.tasks_total == len({t.task for t in ts}) > 1000
    assert len(section.rows) == INLINE_TASK_ROWS
    assert section.heatmap_tasks == HEATMAP_TASKS and section.heatmap_bin_steps == 4
    assert len({c.step for c in section.heatmap}) <= HEATMAP_BINS
    assert len(section.heatmap) <= HEATMAP_TASKS * HEATMAP_BINS


def test_wasted_groups_every_figure_by_hand():
    bs = blocks(2)
    ts = [
        # step 1: a all solved, b all failed (two wasted groups), c mixed
        *(trial("a", 1, 1.0, offset_s=o) for o in (1, 2, 3)),
        *(trial("b", 1, 0.0, offset_s=o) for o in (1, 2)),
        trial("c", 1, 1.0, offset_s=1),
        trial("c", 1, 0.0, offset_s=2),
        # step 2: a differs (0.5 and 1.0), d all failed at -1
        trial("a", 2, 0.5, offset_s=1),
        trial("a", 2, 1.0, offset_s=2),
        *(trial("d", 2, -1.0, offset_s=o) for o in (1, 2, 3, 4)),
    ]
    w = wasted_rollouts(ts, attribute(ts, bs, T0))
    assert [
        (s.step, s.groups, s.all_equal, s.all_solved, s.all_failed, s.share, s.rollouts_wasted)
        for s in w.steps
    ] == [(1, 3, 2, 1, 1, 2 / 3, 5), (2, 2, 1, 0, 1, 0.5, 4)]
    assert (w.groups, w.all_equal, w.share) == (5, 3, 0.6)
    assert (w.rollouts, w.rollouts_wasted, w.rollouts_share) == (13, 9, 9 / 13)


def test_rows_name_slug_exception_and_means_of_odd_tasks():
    bs = blocks(2)
    early = T0 - timedelta(hours=2)  # before the log: not attributed to a step
    ts = [
        trial("", 1, 1.0),  # no task name
        trial("FIX_BUILD", 1, 1.0),
        trial("Fix Build", 1, 1.0),
        trial("fix-build", 1, 1.0),
        trial("t", None, 0.0, "BError", start=early),
        trial("t", 1, None, "BError", turns=None, offset_s=1),
        trial("t", 2, 1.0, "AError", turns=None, offset_s=1),
        trial("t", 2, 1.0, "AError", turns=None, offset_s=2),
        trial("ungraded", 1, None, "DaytonaError", turns=None),
    ]
    ta = analyse_tasks(ts, attribute(ts, bs, T0))
    rows = {r.name: r for r in ta.tasks}
    assert {n: r.slug for n, r in rows.items()} == {
        "(no task name)": "no-task-name",
        "FIX_BUILD": "fix-build",
        "Fix Build": "fix-build-2",
        "fix-build": "fix-build-3",
        "t": "t",
        "ungraded": "ungraded",
    }
    t = rows["t"]
    # BError twice, AError twice: the tie goes to the name first in order
    assert (t.top_exception, t.top_exception_count) == ("AError", 2)
    assert (t.trials, t.graded, t.successes) == (4, 3, 2)
    # the trial before the log is counted, not put at a step; the later ones are
    assert [(c.step, c.trials, c.graded, c.successes) for c in t.steps] == [
        (1, 1, 0, 0),
        (2, 2, 2, 2),
    ]
    assert t.turns_mean == 3.0 and t.reward_mean == pytest.approx(2 / 3)
    u = rows["ungraded"]
    assert (u.reward_mean, u.turns_mean, u.success_rate, u.category) == (None, None, None, "never")
    assert (rows["FIX_BUILD"].top_exception, rows["FIX_BUILD"].top_exception_count) == (None, 0)
    assert (ta.trials, ta.attributed, ta.attribution, ta.attribution_note) == (9, 8, "time", "")
    assert [x.category for x in ta.lists] == ["learned", "forgotten", "always", "never"]
    # solved first at step 1 (by name), then at 2, never solved last
    assert [r.name for r in ta.tasks] == [
        "(no task name)",
        "FIX_BUILD",
        "Fix Build",
        "fix-build",
        "t",
        "ungraded",
    ]


def test_no_trials():
    ta = analyse_tasks([], attribute([], blocks(3), T0))
    assert ta.tasks == () and ta.trials == 0
    assert [(x.trials, x.share_of_rollouts) for x in ta.lists] == [(0, None)] * 4
    assert ta.wasted.share is None and ta.wasted.rollouts_share is None
