import pytest

from sitegen.insights.attribution import attribute
from sitegen.insights.rollouts import analyse_rollouts
from sitegen.present import charts
from tests.insights.helpers import T0, blocks, trial


def test_components_per_trial_and_step():
    bs = blocks(2)  # blocks at 600 s and 1200 s
    ts = [
        # starts at 10 s, runs 120 s: stages 5+2+100+3 = 110, overhead 10, ends at 130 → waits 470
        trial("a", 1, offset_s=10),
        # step 2: slow setup 60 s, runs 200 s from 610 s → ends 810 → waits 390
        trial("b", 2, offset_s=10, stages=(60, 2, 100, 3), duration_s=200),
    ]
    ra = analyse_rollouts(ts, attribute(ts, bs, T0))
    s1, s2 = ra.per_step
    assert s1.step == 1 and s1.anatomy.env_setup_s == 5 and s1.anatomy.overhead_s == 10
    assert s1.anatomy.wait_for_step_s == pytest.approx(470)
    assert s2.anatomy.env_setup_s == 60 and s2.anatomy.overhead_s == 35
    assert s2.anatomy.wait_for_step_s == pytest.approx(390)
    assert ra.overall.duration_mean_s == 160
    assert ra.overall.agent_exec_s == 100
    total = 110 + 10 + 470 + 165 + 35 + 390
    assert ra.shares["agent_exec"] == pytest.approx(200 / total)
    assert sum(ra.shares.values()) == pytest.approx(1.0)
    assert s1.input_tokens == 1000 and s2.cache_tokens == 10


def test_missing_stages_and_exception_kinds():
    bs = blocks(1)
    ts = [
        trial("a", 1, None, "DaytonaError", stages=(30, None, None, None), duration_s=40),
        trial("a", 1, 1.0, stages=None),  # no stage data: counted, not timed
        trial("b", 1, 0.0, "AgentTimeoutError"),
    ]
    ra = analyse_rollouts(ts, attribute(ts, bs, T0))
    kinds = {k.kind: k.anatomy for k in ra.by_kind}
    assert set(kinds) == {"infrastructure", "none", "model"}
    infra = kinds["infrastructure"]
    assert infra.env_setup_s == 30 and infra.agent_exec_s == 0 and infra.overhead_s == 10
    assert kinds["none"].timed == 0 and kinds["none"].trials == 1
    assert ra.overall.timed == 2 and ra.overall.trials == 3


def test_slowest_tasks_and_tokens():
    bs = blocks(1)
    ts = [
        trial("slow", 1, duration_s=1000, tokens=(10, 1, 0)),
        trial("slow", 1, duration_s=800, tokens=(20, 3, 4)),
        trial("fast", 1, duration_s=200, tokens=None),
    ]
    ra = analyse_rollouts(ts, attribute(ts, bs, T0))
    assert [s.name for s in ra.slowest_tasks] == ["slow", "fast"]
    assert ra.slowest_tasks[0].duration_mean_s == 900
    assert ra.slowest_tasks[0].time_share == pytest.approx(0.9)
    tk = ra.tokens
    assert (tk.trials, tk.input_mean, tk.output_mean, tk.cache_mean) == (2, 15, 2, 2)
    assert (tk.input_total, tk.output_total, tk.cache_total) == (30, 4, 4)


def test_per_step_chart_bins_long_runs_by_trial_weighted_means():
    from sitegen.present.insight_charts import MAX_BARS, rollout_steps

    n = 2 * MAX_BARS + 1
    bs = blocks(n)
    ts = [trial("a", s, stages=(float(s), 0, 0, 0)) for s in range(1, n + 1)]
    ts.append(trial("a", 2, stages=(8.0, 0, 0, 0)))  # step 2 weighs twice
    spec = rollout_steps(analyse_rollouts(ts, attribute(ts, bs, T0)))
    env = [r for r in charts.rows(spec) if r["part"] == "environment setup"]
    assert len(env) == 34 <= MAX_BARS and env[0]["x"] == 1 and env[1]["x"] == 4  # 101 steps / 3
    assert env[0]["value"] == pytest.approx((1 + 2 + 8 + 3) / 4)
    assert "bins of 3" in str(spec)
