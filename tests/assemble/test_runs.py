from datetime import datetime

from sitegen.assemble.runs import job_status, stitch
from sitegen.model.parsed import (
    BatchCounts,
    Checkpoint,
    Job,
    JobSource,
    MetricBlock,
    ParsedLog,
    VllmStats,
)


def log(steps, resumed=None, saved=(), end=None, mtime=0.0, first_time=None):
    return ParsedLog(
        "x",
        tuple(
            MetricBlock(s, {"reward/avg_raw_reward": s / 100, "timing/step": 10.0}, s)
            for s in steps
        ),
        (),
        "console",
        end,
        None,
        resumed,
        None,
        False,
        tuple(Checkpoint(s, f"/c/global_step_{s}") for s in saved),
        None,
        BatchCounts(),
        {},
        BatchCounts(),
        VllmStats((), (), 0, 0, 0, {}),
        first_time,
        None,
        0,
        0,
        mtime,
        (),
    )


def job(i, lg):
    return Job(
        JobSource(f"j{i}", f"j{i}.out", "g", "experiment", ("g", i, "")), lg, "complete", "r", None
    )


def test_resumed_job_wins_and_rolled_back_steps_are_discarded():
    a = job(1, log(range(1, 11), saved=(4, 8)))
    b = job(2, log(range(9, 15), resumed=8))
    blocks, discarded, resumed, restarts = stitch([a, b])
    assert [x.step for x in blocks] == list(range(1, 15))
    assert [x.step for x in discarded] == [9, 10]
    assert blocks[8] is b.log.blocks[0]
    assert resumed == (8,) and restarts[0].discarded_time_s == 20.0


def test_resume_before_recomputation_point_discards_what_was_rolled_back():
    a = job(1, log(range(1, 11)))
    b = job(2, log(range(7, 8), resumed=6))
    blocks, discarded, _, _ = stitch([a, b])
    assert [x.step for x in blocks] == list(range(1, 8))
    assert [x.step for x in discarded] == [7, 8, 9, 10]


def test_status():
    assert job_status(log([1], end="complete"), 1e9) == "complete"
    assert job_status(log([1], mtime=1000.0), 1000.0 + 60) == "running"
    assert job_status(log([1], mtime=1000.0), 1000.0 + 16 * 60) == "incomplete"
    assert job_status(None, 0) == "incomplete"


def test_experiment_chain_order_without_slurm_ids():
    from datetime import datetime

    from sitegen.assemble.runs import group_runs
    from sitegen.model.parsed import Discovery

    late = JobSource("b", "exp/logs/first-try.out", "exp", "experiment", ("exp", 0, "first-try"))
    early = JobSource("a", "exp/logs/zz-resume.out", "exp", "experiment", ("exp", 0, "zz-resume"))
    logs = {
        "a": log([1], first_time=datetime(2026, 1, 1)),
        "b": log([5], first_time=datetime(2026, 1, 3)),
    }
    runs = group_runs(Discovery((late, early), {}, (), ()), logs)
    assert [s.id for s in runs[0][1]] == ["a", "b"]  # by start time, not by name
    with_ids = [
        JobSource("x", "e/logs/r_20.out", "e", "experiment", ("e", 20, "r_20")),
        JobSource("y", "e/logs/r_3.out", "e", "experiment", ("e", 3, "r_3")),
    ]
    assert [s.id for s in group_runs(Discovery(tuple(with_ids), {}, (), ()), {})[0][1]] == [
        "y",
        "x",
    ]


def test_a_step_the_resumed_job_logs_again_is_its_restarts_discard():
    # resumed from 8, yet its log holds step 8 again: its value wins, and the restart
    # that replaced the first attempt's step 8 lists it with its time
    a = job(1, log(range(1, 11), saved=(8,)))
    b = job(2, log(range(8, 15), resumed=8))
    blocks, discarded, _, restarts = stitch([a, b])
    assert [x.step for x in blocks] == list(range(1, 15))
    assert blocks[7] is b.log.blocks[0]
    assert [x.step for x in discarded] == [8, 9, 10]
    assert restarts[0].cut_at == 8 and restarts[0].discarded_steps == (8, 9, 10)
    assert restarts[0].discarded_time_s == 30.0


def test_array_jobs_are_ordered_by_job_id_then_task_id():
    # SLURM names an array task's output %A_%a (slurm-561773_2.out): two arrays of a
    # resume chain (--array=0-2%1, then a second array) run array by array, task by task,
    # not by task id across arrays; a task 0 is an id like any other
    from sitegen.assemble.runs import group_runs
    from sitegen.model.parsed import Discovery

    names = ["slurm-561900_0", "slurm-561773_2", "slurm-561773_0", "slurm-561900_1",
             "slurm-561773_1", "slurm-561800"]  # fmt: skip
    srcs = [
        JobSource(n, f"e/logs/{n}.out", "e", "experiment", ("e", int(n.rsplit("_", 1)[-1].rsplit("-", 1)[-1]), n))
        for n in names
    ]  # fmt: skip
    # start times that disagree with the names: the ids decide
    logs = {n: log([1], first_time=datetime(2026, 1, 1 + i)) for i, n in enumerate(names)}
    chain = [s.id for s in group_runs(Discovery(tuple(srcs), {}, (), ()), logs)[0][1]]
    assert chain == ["slurm-561773_0", "slurm-561773_1", "slurm-561773_2", "slurm-561800",
                     "slurm-561900_0", "slurm-561900_1"]  # fmt: skip
    # a date or version before the job id is no array: train_2026_561773 is job 561773
    dated = [
        JobSource(n, f"d/logs/{n}.out", "d", "experiment", ("d", int(n.rsplit("_", 1)[-1]), n))
        for n in ("train_2027_561700", "train_2026_561773")
    ]
    assert [s.id for s in group_runs(Discovery(tuple(dated), {}, (), ()), {})[0][1]] == [
        "train_2027_561700",
        "train_2026_561773",
    ]
    # %A_%a of a job that is no array: SLURM writes its no-value task id, 4294967294
    plain = [
        JobSource(n, f"p/logs/{n}.out", "p", "experiment", ("p", int(n.rsplit("_", 1)[-1]), n))
        for n in ("train-1000003_4294967294", "train-999998_4294967294")
    ]
    assert [s.id for s in group_runs(Discovery(tuple(plain), {}, (), ()), {})[0][1]] == [
        "train-999998_4294967294",
        "train-1000003_4294967294",
    ]


def _flat(i: int, day: int) -> tuple[JobSource, ParsedLog]:
    src = JobSource(f"f.t{i}", f"f/t{i}.out", "f", "flat", ("f", i, f"t{i}"))
    return src, log([1, 2], first_time=datetime(2026, 1, day))


def test_the_run_of_the_job_owning_a_flat_folders_trials_has_them():
    # two unrelated jobs in one flat folder (both start fresh: two runs of one job) and the
    # folder's trials: the latest job owns them, and so does its run, whose row stands for
    # the job on the index (its success rate is the job's, not "–"); the other run has none
    from sitegen.assemble.runs import assemble
    from sitegen.model.parsed import Discovery, TrialSet

    (a, la), (b, lb) = _flat(1, 1), _flat(2, 3)
    ts = TrialSet("f", (), 0, 0, 0, 0, ())
    jobs, runs = assemble(Discovery((a, b), {}, (), ()), {a.id: la, b.id: lb}, {"f": ts}, 0.0)
    assert [(j.id, j.trials) for j in jobs] == [("f.t1", None), ("f.t2", ts)]
    assert {r.id: r.trials for r in runs} == {"f.t1": None, "f.t2": ts}
    assert next(r for r in runs if r.id == "f.t2").trials is jobs[1].trials


def test_a_run_of_a_flat_folders_jobs_has_its_trials_whoever_owns_them():
    # a chain in one flat folder (the second job resumes from the first's checkpoint) holds
    # every job of the folder: its run has the folder's trials, its last job owns them
    from msgspec.structs import replace

    from sitegen.assemble.runs import assemble
    from sitegen.model.parsed import Discovery, TrialSet

    (a, la), (b, lb) = _flat(1, 1), _flat(2, 3)
    la = replace(la, checkpoints=(Checkpoint(2, "/c/global_step_2"),))
    lb = replace(lb, resumed_from=2, blocks=tuple(MetricBlock(3, {}, 3) for _ in [0]))
    ts = TrialSet("f", (), 0, 0, 0, 0, ())
    jobs, runs = assemble(Discovery((a, b), {}, (), ()), {a.id: la, b.id: lb}, {"f": ts}, 0.0)
    assert [(r.id, [j.id for j in r.jobs], r.trials) for r in runs] == [
        ("f.t1", ["f.t1", "f.t2"], ts)
    ]
    assert [j.trials for j in jobs] == [None, ts]


def test_a_discarded_step_whose_clock_stepped_back_costs_no_time():
    # job 1's steps 9 and 10 are discarded; step 10 logged timing/step -5 (a clock step
    # back: the reader warns and every timing sum leaves it out), so the time lost is
    # step 9's 10 s, not 5 s
    from msgspec.structs import replace

    from sitegen.model.parsed import Run
    from sitegen.pages.make import job_page, run_page
    from sitegen.redact import Redactor

    a = job(1, log(range(1, 11), saved=(8,)))
    bad = replace(a.log.blocks[9], metrics={**a.log.blocks[9].metrics, "timing/step": -5.0})
    a = replace(a, log=replace(a.log, blocks=(*a.log.blocks[:9], bad)))
    b = job(2, log(range(9, 12), resumed=8))
    blocks, discarded, resumed, restarts = stitch([a, b])
    assert [x.step for x in discarded] == [9, 10]
    assert restarts[0].discarded_time_s == 10.0
    rows = {j.id: job_page(j, [], Redactor(), None).row() for j in (a, b)}
    page = run_page(Run("r", (a, b), blocks, discarded, resumed, restarts, None), rows)
    assert page.discarded_time_s == 10.0
