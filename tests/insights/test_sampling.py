"""Which trials a page shows as transcripts: in the documented order, deterministic, in budget."""

from msgspec.structs import replace

from sitegen.insights.attribution import attribute
from sitegen.insights.sampling import pick_trials
from sitegen.insights.tasks import analyse_tasks
from tests.insights.helpers import T0, blocks, trial


def _trials():
    """Over 9 steps: a learned, a forgotten, a mixed and a never-solved task, exceptions, and
    durations that put the slowest rollouts late in the run."""
    ts = []
    for s in range(1, 10):
        late = s > 4
        ts += [trial("learn", s, 1.0 if late else 0.0, offset_s=o) for o in (1, 2)]
        ts += [trial("forget", s, 0.0 if late else 1.0, offset_s=o) for o in (3, 4)]
        ts += [
            trial("mixed", s, 0.5 if s % 3 else 0.0, offset_s=5),
            trial("mixed", s, 1.0, offset_s=6),
        ]
        ts.append(
            trial(
                "never",
                s,
                0.0,
                exception="AgentTimeoutError" if s % 2 else None,
                offset_s=7,
                duration_s=200.0 + s,
            )
        )
    ts.append(trial("setup", 3, None, exception="DaytonaError", offset_s=8, duration_s=900.0))
    return ts


def _picks(ts, budget=48):
    attr = attribute(ts, blocks(9), T0)
    return [
        (ts[p.index].name, p.reasons)
        for p in pick_trials(ts, attr, analyse_tasks(ts, attr), budget)
    ]


def test_picks_come_in_the_documented_order_with_their_reasons():
    got = _picks(_trials(), budget=11)
    names = [n for n, _ in got]
    assert names[:2] == ["learn__5_1", "learn__4_2"]  # first success; the failure before
    assert names[2:4] == ["forget__4_4", "forget__5_3"]  # last success; first failure after
    # (each also among the slowest: a reason more, no second place)
    assert got[4] == ("never__9_7", ("most recent AgentTimeoutError", "among the slowest rollouts"))
    assert got[5] == ("setup__3_8", ("most recent DaytonaError", "among the slowest rollouts"))
    # mixed: best (reward 1, first by name), worst (reward 0, first by name)
    assert got[6] == ("mixed__1_6", ("best trial of a mixed task",))
    assert got[7] == ("mixed__3_5", ("worst trial of a mixed task",))
    # then the slowest rollouts: setup (900 s, picked already: one more reason), never at 9, 8, 7
    assert got[8:] == [
        ("never__8_7", ("among the slowest rollouts",)),
        ("never__7_7", ("among the slowest rollouts",)),
        ("never__6_7", ("among the slowest rollouts",)),
    ]


def test_the_budget_stops_the_filling_anywhere():
    ts = _trials()
    full = _picks(ts)
    for budget in (0, 1, 3, 8, 20):
        got = _picks(ts, budget)
        assert len(got) == min(budget, len(ts))
        assert [n for n, _ in got] == [n for n, _ in full][:budget]
    assert len(ts) == 64 and len(full) == 48


def test_ties_go_by_trial_name_whatever_the_order_of_the_trials():
    ts = _trials()
    ts = [replace(t, duration_s=120.0) for t in ts]  # every rollout equally slow
    forward = _picks(ts)
    backward = _picks(list(reversed(ts)))
    assert forward == backward
    slow = [n for n, why in forward if why == ("among the slowest rollouts",)]
    assert slow == sorted(slow)


def test_undated_trials_are_never_the_most_recent():
    ts = _trials()
    ts.append(
        replace(trial("undated", None, 0.0, exception="AgentTimeoutError"), name="zz-undated")
    )
    got = dict(_picks(ts))
    assert "most recent AgentTimeoutError" in got["never__9_7"]
    assert "zz-undated" not in got or "most recent AgentTimeoutError" not in got["zz-undated"]


def _evidence_picks(findings, budget=48):
    ts = _trials()
    attr = attribute(ts, blocks(9), T0)
    picks = pick_trials(ts, attr, analyse_tasks(ts, attr), budget, findings)
    return [(ts[p.index].name, p.reasons) for p in picks]


def test_each_finding_gets_a_trial_at_the_first_of_its_steps_that_shows_it():
    from sitegen.insights.rulebase import Finding

    def f(id_, steps):
        return Finding(id_, "warning", "t", "d", "rollouts", steps=steps)

    got = _evidence_picks(
        [
            f("infra_burst", (5, 3)),  # no infrastructure failure at 5: step 3's
            f("error_rate_rising", (8, 7)),  # no exception at 8 (even steps): step 7's
            f("step_time_outlier", (6,)),  # step 6's slowest: never (206 s)
            f("reward_trend", (4,)),  # not a finding a transcript shows
        ]
    )
    reasons = dict(got)
    assert "an infrastructure failure of the burst at step 3" in reasons["setup__3_8"]
    assert "an exception at step 7, as the error rate rose" in reasons["never__7_7"]
    assert "the slowest rollout of slow step 6" in reasons["never__6_7"]
    assert not any("step 4" in w for why in reasons.values() for w in why)
    # they come after the exception types and before the mixed tasks
    names = [n for n, _ in got]
    assert names.index("never__7_7") < names.index("mixed__1_6")
    assert names.index("never__6_7") < names.index("mixed__1_6")


def test_a_finding_no_trial_shows_picks_nothing_for_it():
    from sitegen.insights.rulebase import Finding

    none = Finding("infra_burst", "warning", "t", "d", "rollouts", steps=(1, 2))
    assert _evidence_picks([none]) == _evidence_picks([])
