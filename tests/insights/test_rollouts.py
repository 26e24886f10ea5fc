import pytest
from msgspec.structs import replace

from sitegen.insights.attribution import attribute
from sitegen.insights.rollouts import analyse_rollouts
from tests.insights.helpers import T0, blocks, trial
from tests.present.helpers import rows


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


def test_exception_kinds_follow_harbors_own_policy_where_the_file_has_one():
    # as the trials table counts them: Harbor's exception_info.policy decides, the
    # exception's name only without one
    from msgspec.structs import replace

    bs = blocks(1)
    ts = [
        replace(
            trial("a", 1, None, "RuntimeError", duration_s=50), exception_kind="infrastructure"
        ),
        replace(trial("a", 1, None, "DaytonaError", duration_s=70), exception_kind="other"),
        trial("b", 1, None, "DaytonaError", duration_s=90),
    ]
    ra = analyse_rollouts(ts, attribute(ts, bs, T0))
    assert {k.kind: (k.anatomy.trials, k.anatomy.duration_mean_s) for k in ra.by_kind} == {
        "infrastructure": (2, 70.0),
        "other": (1, 70.0),
    }


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
    env = [r for r in rows(spec) if r["part"] == "environment setup"]
    assert len(env) == 34 <= MAX_BARS and env[0]["x"] == 1 and env[1]["x"] == 4  # 101 steps / 3
    assert env[0]["value"] == pytest.approx((1 + 2 + 8 + 3) / 4)
    assert "bins of 3" in str(spec)


# -- the column path against the per-trial one --------------------------------------------
# analyse_rollouts gathers columns by index; this is the straightforward per-trial version
# it replaced (a dict of components per trial, every group's anatomy read from those),
# kept as the oracle: the two must give equal analyses, to the last bit of every mean.


def _reference_components(t, wait):
    stages = (t.env_setup_s, t.agent_setup_s, t.agent_exec_s, t.verifier_s)
    if t.duration_s is None or all(s is None for s in stages):
        return None
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


def _reference_anatomy(items):
    import math

    from sitegen.insights.rollouts import Anatomy

    def mean(xs):
        return math.fsum(xs) / len(xs) if xs else None

    timed = [c for _, c in items if c is not None]
    durs = [t.duration_s for t, _ in items if t.duration_s is not None and t.duration_s >= 0]

    def m(key):
        return mean([c[key] for c in timed if key in c])

    return Anatomy(
        len(items),
        len(timed),
        mean(durs),
        m("env_setup"),
        m("agent_setup"),
        m("agent_exec"),
        m("verifier"),
        m("overhead"),
        m("wait_for_step"),
    )


def _reference(trials, attr):
    import bisect
    import math
    from collections import defaultdict
    from datetime import timedelta

    from sitegen.insights.rollouts import (
        SLOWEST_TASKS,
        KindAnatomy,
        RolloutAnalysis,
        SlowTask,
        StepAnatomy,
        Tokens,
    )
    from sitegen.insights.tasks import task_slug
    from sitegen.model.vocabulary import COMPONENTS, exception_kind

    def mean(xs):
        return math.fsum(xs) / len(xs) if xs else None

    times = [b[1] for b in attr.boundaries]
    comps = []
    for t in trials:
        wait = None
        if t.started_at is not None and t.duration_s is not None and times:
            end = t.started_at + timedelta(seconds=t.duration_s + attr.offset_s)
            i = bisect.bisect_left(times, end)
            if i < len(times):
                wait = (times[i] - end).total_seconds()
        comps.append(_reference_components(t, wait))
    items = list(zip(trials, comps, strict=True))
    totals = {k: math.fsum(c[k] for c in comps if c is not None and k in c) for k in COMPONENTS}
    whole = math.fsum(totals.values())
    shares = {k: (totals[k] / whole if whole > 0 else None) for k in COMPONENTS}
    by_step = defaultdict(list)
    for i, s in enumerate(attr.steps):
        if s is not None:
            by_step[s].append(i)
    per_step = tuple(
        StepAnatomy(
            s,
            _reference_anatomy([items[i] for i in idx]),
            sum(trials[i].input_tokens or 0 for i in idx),
            sum(trials[i].output_tokens or 0 for i in idx),
            sum(trials[i].cache_tokens or 0 for i in idx),
        )
        for s, idx in sorted(by_step.items())
    )
    by_kind_idx = defaultdict(list)
    for i, t in enumerate(trials):
        by_kind_idx[exception_kind(t.exception)].append(i)
    by_kind = tuple(
        KindAnatomy(k, _reference_anatomy([items[i] for i in by_kind_idx[k]]))
        for k in ("none", "infrastructure", "model", "other")
        if by_kind_idx.get(k)
    )
    by_task = defaultdict(list)
    for i, t in enumerate(trials):
        if t.duration_s is not None and t.duration_s >= 0:
            by_task[t.task or "(no task name)"].append(i)
    all_time = math.fsum(t.duration_s for t in trials if t.duration_s and t.duration_s > 0)
    slow = []
    for name, idx in by_task.items():
        tot = math.fsum(trials[i].duration_s or 0.0 for i in idx)
        a = _reference_anatomy([items[i] for i in idx])
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
        input_mean=mean([t.input_tokens for t in trials if t.input_tokens is not None]),
        output_mean=mean([t.output_tokens for t in trials if t.output_tokens is not None]),
        cache_mean=mean([t.cache_tokens for t in trials if t.cache_tokens is not None]),
        input_total=sum(t.input_tokens or 0 for t in trials),
        output_total=sum(t.output_tokens or 0 for t in trials),
        cache_total=sum(t.cache_tokens or 0 for t in trials),
    )
    overall = _reference_anatomy(items)
    return RolloutAnalysis(overall, shares, per_step, by_kind, tuple(slow[:SLOWEST_TASKS]), tokens)


def _random_trials(seed: int, n: int):
    """Trials with every odd case mixed in: no duration, a negative one, no stages, some
    stages, a stage of 0, no start (no step), starts before the log (an early offset in step
    1) and after its last step (step 6 of 5), no
    tokens, exceptions of each kind, tasks of one trial and tied slowest tasks."""
    import random

    rnd = random.Random(seed)
    excs = [None, None, None, "DaytonaError", "AgentTimeoutError", "SomethingElse", ""]
    out = []
    for k in range(n):
        step = rnd.choice([1, 2, 3, 4, 5, 6, None])
        roll = rnd.random()
        stages = (
            None
            if roll < 0.1
            else (rnd.uniform(0, 90), None, rnd.uniform(0, 500), 0)
            if roll < 0.2
            else tuple(rnd.choice([None, 0, rnd.uniform(0, 300)]) for _ in range(4))
            if roll < 0.3
            else (rnd.uniform(1, 60), rnd.uniform(0, 9), rnd.uniform(10, 900), rnd.uniform(0, 30))
        )
        dur = rnd.choice([None, -5.0, 0.0, 300.0, rnd.uniform(0, 2000), rnd.uniform(0, 2000)])
        t = trial(
            f"task-{rnd.randrange(12)}" if k % 17 else f"lone-{k}",
            step,
            rnd.choice([None, 0.0, 1.0, -1.0]),
            rnd.choice(excs),
            offset_s=rnd.uniform(-900, 900),
            stages=stages,
            duration_s=dur,
            tokens=None
            if rnd.random() < 0.1
            else (rnd.randrange(10**6), rnd.randrange(10**4), rnd.randrange(10**3)),
        )
        out.append(t)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_columns_equal_the_per_trial_path(seed):

    ts = _random_trials(seed, 400)
    bs = blocks(5)
    attrs = [attribute(ts, bs, T0), attribute(ts, [], T0)]
    shifted = attribute(ts, bs, T0)
    attrs.append(replace(shifted, offset_s=3600.0))  # a clock offset moves the waits
    for attr in attrs:
        assert analyse_rollouts(ts, attr) == _reference(ts, attr)


def test_columns_equal_the_per_trial_path_on_small_sets():
    bs = blocks(2)
    for ts in ([], [trial("a", 1)], [trial("a", 1, stages=None, duration_s=None)]):
        attr = attribute(ts, bs, T0)
        assert analyse_rollouts(ts, attr) == _reference(ts, attr)


def test_trials_shorter_than_a_second_have_shares_and_a_task_without_a_name_a_row():
    bs = blocks(1)
    # 0.4 s and 0.2 s, all of it in their stages, each ending as the step's block is logged
    # (at 600 s): 0.6 s of rollout time in all, no overhead and no wait
    ts = [
        trial(None, 1, offset_s=599.6, stages=(0.1,) * 4, duration_s=0.4, tokens=None),
        trial("b", 1, offset_s=599.8, stages=(0.05,) * 4, duration_s=0.2, tokens=None),
    ]
    ra = analyse_rollouts(ts, attribute(ts, bs, T0))
    assert ra.shares["agent_exec"] == pytest.approx(0.15 / 0.6)
    assert ra.shares["wait_for_step"] == pytest.approx(0.0, abs=1e-9)
    assert sum(ra.shares.values()) == pytest.approx(1.0)
    assert [(s.name, s.time_share) for s in ra.slowest_tasks] == [
        ("(no task name)", pytest.approx(0.4 / 0.6)),
        ("b", pytest.approx(0.2 / 0.6)),
    ]


def test_trials_of_no_time_have_no_share_and_tokens_of_one_side_count():
    bs = blocks(1)
    ts = [trial("a", 1, stages=None, duration_s=0.0, tokens=None)]
    ts.append(replace(ts[0], input_tokens=7))
    ra = analyse_rollouts(ts, attribute(ts, bs, T0))
    assert [(s.name, s.time_share) for s in ra.slowest_tasks] == [("a", None)]
    assert (ra.tokens.trials, ra.tokens.input_mean, ra.tokens.output_mean) == (1, 7, None)
