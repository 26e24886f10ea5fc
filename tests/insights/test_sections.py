"""The insights of a run: made from its stitched steps only."""

from msgspec.structs import replace

from sitegen.assemble.runs import stitch
from sitegen.insights.sections import run_insights
from sitegen.model.parsed import BatchCounts, Run
from tests.assemble.test_runs import job, log


def _batches(steps, burst=()):
    """16 rollouts a step; at a ``burst`` step 8 of them lost to the sandbox provider."""
    return {
        s: BatchCounts(2, 16, 8, 8, 0, {"DaytonaError": 8})
        if s in burst
        else BatchCounts(2, 16, 16, 0, 0, {})
        for s in steps
    }


def test_a_discarded_steps_batches_are_not_the_runs():
    # job 1 logs steps 1-6 (step 6: an infrastructure burst) and is cut back to step 3;
    # job 2 resumes from 3 and logs 4-5 only: step 6 is no step of the run, so its
    # batches are not, and the burst is not the run's
    a = job(1, replace(log(range(1, 7), saved=(3,)), batches_per_step=_batches(range(1, 7), {6})))
    b = job(2, replace(log(range(4, 6), resumed=3), batches_per_step=_batches(range(4, 6))))
    alone = run_insights(Run("r", (a,), a.log.blocks, (), (), (), None))
    assert [f.steps for f in alone.findings if f.id == "infra_burst"] == [(6,)]
    run = Run("r", (a, b), *stitch([a, b]), None)
    assert [x.step for x in run.blocks] == [1, 2, 3, 4, 5]
    assert not [f for f in run_insights(run).findings if f.id == "infra_burst"]


def test_a_step_logged_again_takes_the_later_jobs_batches():
    # job 2 logs steps 4-8 again: its batches of those steps are the run's, the burst of
    # job 1's step 6 is gone, job 2's own burst at step 7 is found
    a = job(1, replace(log(range(1, 7), saved=(3,)), batches_per_step=_batches(range(1, 7), {6})))
    b = job(2, replace(log(range(4, 9), resumed=3), batches_per_step=_batches(range(4, 9), {7})))
    run = Run("r", (a, b), *stitch([a, b]), None)
    assert [f.steps for f in run_insights(run).findings if f.id == "infra_burst"] == [(7,)]


def test_the_step_still_being_generated_fires_no_batch_finding():
    # a job cancelled while generating step 7 (steps 1-6 logged): 8 of that step's 16
    # rollouts lost to the sandbox provider so far. The step is cut short and logged no
    # metrics: no infrastructure burst, no rising error rate (as its batches are left out of
    # the batch_errors statistics); the same burst at a logged step is found
    from sitegen.insights.sections import job_insights

    cut = job(1, replace(log(range(1, 7)), batches_per_step=_batches(range(1, 8), {7})))
    assert [f.id for f in job_insights(cut).findings] == []
    done = job(1, replace(log(range(1, 8)), batches_per_step=_batches(range(1, 8), {7})))
    assert [(f.id, f.steps) for f in job_insights(done).findings if f.id == "infra_burst"] == [
        ("infra_burst", (7,))
    ]


def test_batches_of_a_job_without_metrics_fire_no_finding():
    # batch lines but no metric block: no step was logged, so no step's outcome is judged;
    # the same batches with their steps' metrics show the error rate rising (0 % to 100 %)
    from sitegen.insights.sections import job_insights

    lost = BatchCounts(2, 16, 0, 16, 0, {"DaytonaError": 16})
    batches = {s: lost if s > 3 else _batches([s])[s] for s in range(1, 8)}
    none = job(1, replace(log(()), batches_per_step=batches))
    assert job_insights(none).findings == ()
    some = job(1, replace(log(range(1, 8)), batches_per_step=batches))
    assert [(f.id, f.steps) for f in job_insights(some).findings] == [("error_rate_rising", (7, 6))]


def test_a_resumed_job_that_logged_no_step_adds_no_batches_to_its_run():
    # job 2 resumes from step 6 and is cancelled while generating its first step: its
    # batches (the reader files a log's batches without a metric block under the step
    # after its resume, 7) are a step cut short, no step of the run; steps 1-6 show no burst
    a = job(1, replace(log(range(1, 7), saved=(6,)), batches_per_step=_batches(range(1, 7))))
    cut = {7: BatchCounts(2, 16, 8, 8, 0, {"DaytonaError": 8})}
    b = job(2, replace(log((), resumed=6), batches_per_step=cut))
    run = Run("r", (a, b), *stitch([a, b]), None)
    assert [x.step for x in run.blocks] == [1, 2, 3, 4, 5, 6]
    assert [f.id for f in run_insights(run).findings] == []


def test_a_step_cut_short_is_not_the_step_a_later_job_logs():
    # job 1 is cancelled while generating step 7 (8 of its 16 rollouts lost so far); job 2
    # resumes from 6 and logs steps 7-12, its batch lines of step 7 lost. Job 1's batches
    # of its step 7 are not the run's step 7: no burst there
    a = job(1, replace(log(range(1, 7), saved=(6,)), batches_per_step=_batches(range(1, 8), {7})))
    b = job(2, replace(log(range(7, 13), resumed=6), batches_per_step=_batches(range(8, 13))))
    run = Run("r", (a, b), *stitch([a, b]), None)
    assert [x.step for x in run.blocks] == list(range(1, 13))
    assert not [f for f in run_insights(run).findings if f.id == "infra_burst"]
