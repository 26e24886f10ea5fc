"""Page objects: the published JSON is exactly their ``to_json()``, rows are their pages' fields."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from sitegen.analyse.curves import downsample, smooth
from sitegen.errors import BuildWarning
from sitegen.jsonio import dumps
from sitegen.model.vocabulary import REWARD, STEP_TIME, TOKENS
from sitegen.pages.make import COMPARE_POINTS, compare_item, compare_page_of, series_curves, spark
from sitegen.pages.objects import IndexPage, JobRow
from sitegen.pages.sections import Headline, Stats, Timing
from tests.conftest import schema


def _raw(site: Path, page) -> bytes:
    return (site / page.data).read_bytes()


def test_published_files_are_the_page_objects_bytes(site, job_pages, run_pages):
    """Reading a data file into its type and writing it back gives the same bytes (key order too)."""
    for page in [*job_pages.values(), *run_pages.values()]:
        assert dumps(page) == _raw(site, page)
        assert dumps(page.to_json()) == _raw(site, page)
    page = job_pages["exp-async.async-run_561773"]
    assert isinstance(page.headline, Headline)
    assert isinstance(page.metrics[REWARD], Stats)
    assert isinstance(page.timing, Timing)
    assert page.vllm is not None and page.vllm.per_engine[0].samples > 0
    assert all(isinstance(w, BuildWarning) for w in page.warnings)


def test_index_rows_are_the_pages_summary_fields(site, index, job_pages, run_pages):
    idx = IndexPage.from_json(index)
    assert dumps(idx) == (site / "data" / "index.json").read_bytes()
    for row in idx.jobs:
        page = job_pages[row.id]
        assert row == page.row()
        assert type(page.row()) is JobRow  # not the whole page
    for row in idx.runs:
        assert row == run_pages[row.id].row()
    assert idx.totals.steps == sum(r.steps for r in idx.runs)
    assert [j.id for j in idx.jobs_by_run()["exp-async"]] == [
        "exp-async.async-run_561773",
        "exp-async.async-run_561774",
    ]


def test_to_json_validates_against_the_schemas(job_pages, run_pages, index):
    for page in job_pages.values():
        schema("job").validate(page.to_json())
    for page in run_pages.values():
        schema("run").validate(page.to_json())
    schema("index").validate(IndexPage.from_json(index).to_json())


def test_run_page_links_restarts_and_discarded_steps(run_pages):
    run = run_pages["exp-async"]
    assert run.jobs == ["exp-async.async-run_561773", "exp-async.async-run_561774"]
    assert [j.id for j in run.job_rows] == run.jobs
    assert run.discarded_steps == len(run.discarded) == 2
    restart = run.restart_of("exp-async.async-run_561774")
    assert restart is not None and restart.discarded_steps == [d.step for d in run.discarded]
    assert run.restart_of("exp-async.async-run_561773") is None
    assert run.discarded_time_s == pytest.approx(math.fsum(d.time_s or 0 for d in run.discarded))
    assert run.last_activity == max(j.last_activity for j in run.job_rows if j.last_activity)


def test_progression_and_timing_rows(job_pages):
    page = job_pages["exp-async.async-run_561773"]
    rows = page.progression()
    assert [r.step for r in rows] == page.series["step"]
    assert [r.reward for r in rows] == page.series[REWARD]
    assert [r.pass_at_k for r in rows] == page.series["reward/avg_pass_at_8"]
    assert rows[2].kl is None  # not logged at that step
    timers = page.timing.rows()
    assert timers[0].depth == 0 and timers[0].node.name == "step"
    names = [(r.depth, r.node.name) for r in timers]
    assert names.index((1, "run_training")) < names.index((2, "train_critic_and_policy"))
    assert sorted(page.families()) == [
        "async",
        "generate",
        "loss",
        "policy",
        "reward",
        "system",
        "timing",
        "trainer",
        "util",
    ]


def test_spark_keeps_short_series_and_buckets_long_ones():
    assert spark([1, math.nan, None, 2.5]) == [1, None, None, 2.5]
    long = spark(list(range(400)), n=40)
    assert len(long) == 40
    assert long[0] == pytest.approx(4.5)  # mean of 0..9
    assert spark([math.nan] * 100, n=10) == [None] * 10


def test_compare_page_items(job_pages, run_pages):
    runs = list(run_pages.values())
    jobs = list(job_pages.values())
    cmp = compare_page_of(
        [(compare_item("run", r), None) for r in runs]
        + [(compare_item("job", j), None) for j in jobs]
    )
    assert [(i.kind, i.id) for i in cmp.items] == [("run", r.id) for r in runs] + [
        ("job", j.id) for j in jobs
    ]
    item = next(i for i in cmp.items if i.id == "exp-async.async-run_561773")
    page = job_pages[item.id]
    assert item.headline == page.headline and item.url == page.url


def test_series_curves_of_a_page(job_pages):
    page = job_pages["exp-async.async-run_561773"]
    curves = series_curves(page.series, page.metrics)
    assert set(curves) == {
        "reward",
        "pass@k",
        "step time (s)",
        "generation wait (s)",
        "avg tokens",
        "staleness",
        "policy KL",
        "policy entropy",
        "gradient norm",
    }
    # the gradient norm is the one the log has (SkyRL's raw_grad_norm here)
    pts = downsample(page.series["step"], page.series["policy/raw_grad_norm"], COMPARE_POINTS)
    assert [y for _, y in curves["gradient norm"]] == [
        round(v, 5) for v in smooth([p["y"] for p in pts])
    ]
    pts = downsample(page.series["step"], page.series[REWARD], COMPARE_POINTS)
    want = smooth([p["y"] for p in pts])
    assert [x for x, _ in curves["reward"]] == page.series["step"]
    assert [y for _, y in curves["reward"]] == [round(v, 5) for v in want]


def test_series_curves_smoothed_per_metric():
    page = SimpleNamespace(
        series={"step": [1, 2, 3, 4], REWARD: [1.0, 2.0, None, 4.0], STEP_TIME: [2.0] * 4},
        metrics={REWARD: None, STEP_TIME: None, TOKENS: None, "reward/avg_pass_at_4": None},
    )
    curves = series_curves(page.series, page.metrics)
    # the missing value is left out, the rest smoothed over a window of 3
    assert curves["reward"] == [[1, 1.5], [2, 2.33333], [4, 3.0]]
    assert curves["step time (s)"] == [[1, 2.0], [2, 2.0], [3, 2.0], [4, 2.0]]
    assert curves["avg tokens"] == [] and curves["pass@k"] == []  # named but never logged
    assert "staleness" not in curves


def test_metric_stats_are_what_from_json_builds():
    """pages._metrics builds each Stats directly: the same objects Stats.from_json builds
    (nan-free JSON compared), and a summary key that drifts from the fields fails."""
    from sitegen import analyse
    from sitegen.model.parsed import MetricBlock
    from sitegen.pages.make import _metrics

    blocks = [
        MetricBlock(1, {"a": 1.0, "b": math.nan, "c": True}, 1),
        MetricBlock(2, {"a": 3, "b": math.inf, "d": None}, 2),
        MetricBlock(3, {"a": -0.5}, 3),
    ]
    want = {k: Stats.from_json(v) for k, v in analyse.metric_summary(blocks).items()}
    assert dumps(_metrics(blocks)) == dumps(want) and list(_metrics(blocks)) == list(want)
    assert all(type(s) is Stats for s in _metrics(blocks).values())
    with pytest.raises(TypeError):
        Stats(**{**analyse.summarize([1.0]), "median": 1.0})


def test_run_page_from_its_jobs_page_equals_the_one_made_anew(archive, tmp_path, monkeypatch):
    """A one-job run's page takes its job page's figures (run_page's ``job``): the same bytes
    as made from the run's own blocks; a run whose steps are not one job's own ignores it."""
    import sitegen.commands.build
    from sitegen.commands.build import build
    from sitegen.insights.sections import job_insights, run_insights
    from sitegen.options import BuildOptions
    from sitegen.pages.make import job_page, run_page, steps_are_the_jobs
    from sitegen.redact import Redactor

    seen = {}

    def capture(opts, disc, jobs, runs, *args, **kwargs):
        seen["runs"] = runs
        raise SystemExit  # (the model is all this test needs)

    monkeypatch.setattr(sitegen.commands.build, "site_pages", capture)
    with pytest.raises(SystemExit):
        build(BuildOptions(archive=archive, out=tmp_path / "site", workers=1, now=0.0))
    kinds = set()
    for run in seen["runs"]:
        pages = [job_page(j, [], Redactor(()), None, job_insights(j)) for j in run.jobs]
        rows = {p.id: p.row() for p in pages}
        ins = run_insights(run)
        anew = run_page(run, rows, ins)
        shared = run_page(run, rows, ins, pages[0] if pages else None)
        assert dumps(shared) == dumps(anew)
        assert (shared.series is pages[0].series) == steps_are_the_jobs(run)
        kinds.add(steps_are_the_jobs(run))
    assert kinds == {True, False}  # both ways taken


def test_batch_summary_is_what_from_json_builds(archive, tmp_path, monkeypatch):
    """pages._batches builds each section directly: the same objects as from_json."""
    import sitegen.commands.build
    from sitegen import analyse
    from sitegen.commands.build import build
    from sitegen.options import BuildOptions
    from sitegen.pages.make import _batches
    from sitegen.pages.sections import BatchSummary

    seen = {}

    def capture(opts, disc, jobs, runs, *args, **kwargs):
        seen["jobs"] = jobs
        raise SystemExit

    monkeypatch.setattr(sitegen.commands.build, "site_pages", capture)
    with pytest.raises(SystemExit):
        build(BuildOptions(archive=archive, out=tmp_path / "site", workers=1, now=0.0))
    logs = [j.log for j in seen["jobs"] if j.log is not None and j.log.batches_per_step]
    assert logs
    for log in logs:
        want = BatchSummary.from_json(analyse.batch_summary(log))
        assert repr(_batches(log)) == repr(want)  # (nan, for steps of no batches, included)
