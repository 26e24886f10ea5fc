"""Build the page objects (:mod:`sitegen.pages.objects`) from the assembled jobs and runs:
each is both rendered to HTML and written to ``data/...json``. The figures come from
:mod:`sitegen.analyse`; this module decides which a page shows and how pages link.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from sitegen import analyse
from sitegen.analyse.curves import downsample, smooth
from sitegen.discover.safeio import read_bytes
from sitegen.errors import BuildWarning
from sitegen.insights.configdiff import varying
from sitegen.insights.sections import Insights, job_insights, run_insights
from sitegen.model.parsed import Discovery, Job, MetricBlock, ParsedLog, Run, TrialSet
from sitegen.model.vocabulary import (
    GEN_WAIT,
    GRAD_NORM_KEYS,
    POLICY_ENTROPY,
    POLICY_KL,
    REWARD,
    STALENESS,
    STEP_TIME,
    TOKENS,
    config_value,
    gen_wait_key,
    is_duration,
    is_finite,
    pass_at_key,
)
from sitegen.pages.objects import (
    CompareItem,
    ComparePage,
    IndexPage,
    JobPage,
    JobRow,
    RunPage,
    RunRow,
    Skipped,
    Totals,
)
from sitegen.pages.sections import (
    BatchSummary,
    BatchTotals,
    DiscardedStep,
    Headline,
    Restart,
    SavedCheckpoint,
    Series,
    Stats,
    Timing,
    TrialSummary,
    VllmSummary,
)
from sitegen.redact import Redactor


def job_url(job_id: str) -> str:
    return f"jobs/{job_id}/"


def run_url(run_id: str) -> str:
    return f"runs/{run_id}/"


def spark(values: Sequence[object], n: int = 40) -> list[int | float | None]:
    """At most ``n`` points (bucket means) for an index-row sparkline."""
    xs = [v if is_finite(v) else None for v in values]
    if len(xs) <= n:
        return xs
    out: list[int | float | None] = []
    for i in range(n):
        chunk = [v for v in xs[i * len(xs) // n : (i + 1) * len(xs) // n] if v is not None]
        out.append(sum(chunk) / len(chunk) if chunk else None)
    return out


def _metrics(blocks: Sequence[MetricBlock]) -> dict[str, Stats]:
    # Stats(**s), not Stats.from_json(s): its fields are plain numbers, which the hint walk
    # checks at several times the cost; a key that drifts from the analysis fails both ways.
    return {k: Stats(**s) for k, s in analyse.metric_summary(blocks).items()}


def _batches(log: ParsedLog) -> BatchSummary:
    """``BatchSummary.from_json(analyse.batch_summary(log))``, each section built directly, as
    :func:`_metrics` builds its Stats (one BatchTotals a step)."""
    d = analyse.batch_summary(log)
    return BatchSummary(
        **{
            **d,
            "per_step": {k: BatchTotals(**v) for k, v in d["per_step"].items()},
            "eval": BatchTotals(**d["eval"]),
            "summary": {k: Stats(**v) for k, v in d["summary"].items()},
        }
    )


def _trials(ts: TrialSet | None) -> TrialSummary | None:
    return TrialSummary.from_json(analyse.trial_stats(ts)) if ts else None


# The headline's figures a job's or run's row repeats as fields of its own.
_ROW_FIGURES = ("first_step", "last_step", "reward_mean", "reward_max", "reward_last",
                "total_time_s")  # fmt: skip


def _summary(h: Headline, trials: TrialSummary | None) -> dict[str, Any]:
    """The summary fields a job page and a run page both take from their headline and trials."""
    return {
        "headline": h,
        **{f: getattr(h, f) for f in _ROW_FIGURES},
        "trial_success_rate": trials.reward.success_rate if trials else None,
        "trial_error_rate": trials.error_rate if trials else None,
    }


def job_page(
    job: Job,
    warnings: list[BuildWarning],
    redactor: Redactor,
    notes_md: str | None,
    insights: Insights | None = None,
) -> JobPage:
    """Everything the job page shows (``insights``: :func:`job_insights`, computed if not given)."""
    ins = insights or job_insights(job)
    log = job.log
    blocks = log.blocks if log else ()
    cfg = log.config if log else None
    h = Headline.from_json(analyse.headline(blocks))
    trials = _trials(job.trials)
    return JobPage(
        id=job.id,
        url=job_url(job.id),
        data=f"data/jobs/{job.id}.json",
        run=job.run_id,
        log=job.source.log,
        status=job.status,
        status_detail=log.end_detail if log else None,
        **_summary(h, trials),
        metric_blocks=len(blocks),
        started_at=log.first_time.isoformat() if log and log.first_time else None,
        last_activity=log.last_time.isoformat() if log and log.last_time else None,
        reward_spark=spark([b.metrics.get(REWARD) for b in blocks]),
        findings=ins.findings,
        layout=job.source.layout,
        group=job.source.group,
        metric_form=log.metric_form if log else "",
        resumed_from=log.resumed_from if log else None,
        fresh_start=log.fresh_start if log else False,
        checkpoints=[c.step for c in log.checkpoints] if log else [],
        final_checkpoint=next((c.step for c in log.checkpoints if c.final), None) if log else None,
        mid_run=log.mid_run if log else None,
        planned_steps=log.planned_steps if log else None,
        log_bytes=log.size_bytes if log else 0,
        log_lines=log.lines if log else 0,
        run_name=config_value(cfg, "trainer", "run_name"),
        model=config_value(cfg, "trainer", "policy", "model", "path"),
        ckpt_path=config_value(cfg, "trainer", "ckpt_path"),
        n_samples_per_prompt=config_value(cfg, "generator", "n_samples_per_prompt"),
        config=cfg,
        metrics=_metrics(blocks),
        series=analyse.series(blocks),
        eval_series=analyse.series(log.eval_blocks) if log else {"step": []},
        timing=Timing.from_json(analyse.timing_tree(blocks)),
        vllm=VllmSummary.from_json(analyse.vllm_summary(log.vllm)) if log else None,
        batches=_batches(log) if log else None,
        batch_series=analyse.batch_series(log.batches_per_step) if log else {"step": []},
        trials=trials,
        notes_md=redactor.markdown(notes_md) if notes_md else None,
        warnings=tuple(warnings),
        tasks=ins.tasks_section(job_url(job.id)),
        rollouts=ins.rollouts,
        learning=ins.learning,
    )


def run_page(
    run: Run,
    job_rows: dict[str, JobRow],
    insights: Insights | None = None,
    job: JobPage | None = None,
) -> RunPage:
    """The stitched run: series, restarts, discarded steps and their cost, and its insights.
    ``job``: the page of the run's first job, if made: when the run's steps are that job's
    own (:func:`steps_are_the_jobs`), its figures of them are taken as they are (frozen)."""
    ins = insights or run_insights(run)
    if steps_are_the_jobs(run) and job is not None and job.id == run.jobs[0].id:
        h, metrics, series = job.headline, job.metrics, job.series
        timing, spark_ = job.timing, job.reward_spark
        trials = job.trials if run.trials is run.jobs[0].trials else _trials(run.trials)
    else:
        h = Headline.from_json(analyse.headline(run.blocks))
        metrics, series = _metrics(run.blocks), analyse.series(run.blocks)
        timing = Timing.from_json(analyse.timing_tree(run.blocks))
        spark_ = spark([b.metrics.get(REWARD) for b in run.blocks])
        trials = _trials(run.trials)
    discarded_time = math.fsum(
        float(t) for b in run.discarded if is_duration(t := b.metrics.get(STEP_TIME))
    )
    rows = tuple(job_rows[j.id] for j in run.jobs)
    return RunPage(
        id=run.id,
        url=run_url(run.id),
        data=f"data/runs/{run.id}.json",
        jobs=[j.id for j in run.jobs],
        job_rows=rows,
        status=run.jobs[-1].status if run.jobs else "incomplete",
        **_summary(h, trials),
        steps=len(run.blocks),
        discarded_steps=len(run.discarded),
        discarded=tuple(
            DiscardedStep(
                step=b.step, time_s=b.metrics.get(STEP_TIME), reward=b.metrics.get(REWARD)
            )
            for b in run.discarded
        ),
        discarded_time_s=discarded_time,
        resumed_from=list(run.resumed_from),
        restarts=tuple(
            Restart(
                job=r.job_id,
                resumed_from=r.resumed_from,
                cut_at=r.cut_at,
                discarded_steps=list(r.discarded_steps),
                discarded_time_s=r.discarded_time_s,
            )
            for r in run.restarts
        ),
        checkpoints=tuple(
            SavedCheckpoint(job=j.id, step=c.step, final=c.final)
            for j in run.jobs
            if j.log is not None
            for c in j.log.checkpoints
        ),
        metrics=metrics,
        series=series,
        timing=timing,
        trials=trials,
        reward_spark=spark_,
        last_activity=max((r.last_activity for r in rows if r.last_activity), default=None),
        findings=ins.findings,
        # a run of one job whose trials are that job's has the job's table: written once
        tasks=ins.tasks_section(
            run_url(run.id),
            job_url(run.jobs[0].id)
            if len(run.jobs) == 1 and run.trials is not None and run.jobs[0].trials is run.trials
            else None,
        ),
        rollouts=ins.rollouts,
        learning=ins.learning,
    )


def steps_are_the_jobs(run: Run) -> bool:
    """True when a run's steps are its one job's own: the same block objects in the same
    order (a run of one job, which :func:`~sitegen.assemble.runs.stitch` left whole), so that
    any figure made from the one is the figure made from the other."""
    if len(run.jobs) != 1 or run.jobs[0].log is None:
        return False
    own = run.jobs[0].log.blocks
    return len(own) == len(run.blocks) and all(map(operator.is_, own, run.blocks))


def index_page(
    job_rows: list[JobRow],
    run_rows: list[RunRow],
    disc: Discovery,
    warnings: int,
    trials_total: int,
    title: str,
) -> IndexPage:
    return IndexPage(
        title=title,
        jobs=tuple(job_rows),
        runs=tuple(run_rows),
        skipped=tuple(Skipped(path=p, reason=r) for p, r in disc.skipped),
        totals=Totals(
            runs=len(run_rows),
            jobs=len(job_rows),
            steps=sum(r.steps for r in run_rows),
            trials=trials_total,
            warnings=warnings,
        ),
    )


# -- the comparison page ------------------------------------------------------------------------

# What the comparison page can overlay (label -> metric); pass@k is added per page.
# The labels are the options of the metric picker in templates/compare.html.
COMPARE_METRICS = {
    "reward": REWARD,
    "step time (s)": STEP_TIME,
    "generation wait (s)": GEN_WAIT,
    "avg tokens": TOKENS,
    "staleness": STALENESS,
    "policy KL": POLICY_KL,
    "policy entropy": POLICY_ENTROPY,
}
COMPARE_POINTS = 150  # per curve: enough for a smooth line, small enough to embed every run


def compare_metrics(metrics: dict) -> dict[str, str]:
    """The metrics the comparison page can overlay, for a page that has them (pass@k included)."""
    # the generation wait is the trainer's own timer (synchronous: timing/generate)
    keys = {**COMPARE_METRICS, "generation wait (s)": gen_wait_key(metrics)}
    keys["gradient norm"] = next((k for k in GRAD_NORM_KEYS if k in metrics), GRAD_NORM_KEYS[0])
    out = {label: key for label, key in keys.items() if key in metrics}
    pk = pass_at_key(metrics)
    if pk:
        out["pass@k"] = pk
    return out


def series_curves(series: Series, metrics: dict[str, Stats]) -> dict[str, list[list]]:
    """A run or job page's comparison curves, ``{label: [[step, smoothed value], ...]}``,
    rounded (they are only drawn); published beside the page (``curves.js``)."""
    steps = series.get("step", [])
    curves = {}
    for label, key in compare_metrics(metrics).items():
        pts = downsample(steps, series.get(key) or [], COMPARE_POINTS)
        sm = smooth([x["y"] for x in pts])
        curves[label] = [
            [x["x"], round(v, 5) if v is not None else None] for x, v in zip(pts, sm, strict=True)
        ]
    return curves


def compare_item(kind: str, page: JobPage | RunPage) -> CompareItem:
    """A run or job on the comparison page, before the configs are compared (``config`` empty):
    what an incremental build keeps of a page it does not analyse again."""
    tasks = page.tasks.table_dir if page.tasks else None
    shared = [f for f in CompareItem.__struct_fields__ if f not in ("kind", "config", "tasks")]
    return CompareItem(kind=kind, config={}, tasks=tasks, **{f: getattr(page, f) for f in shared})


def compare_page_of(items: Sequence[tuple[CompareItem, dict[str, Any] | None]]) -> ComparePage:
    """The comparison page from its items (runs first, then jobs) and each one's config (a
    run's is its last job's): the config keys that differ go into each item."""
    differing = varying({f"{i.kind}:{i.id}": cfg for i, cfg in items})
    return ComparePage(
        items=tuple(replace(i, config=differing.get(f"{i.kind}:{i.id}", {})) for i, _ in items)
    )


NOTES_MAX_BYTES = 256 << 10


def read_notes(archive: Path, rel: str | None) -> str | None:
    """A job's ``notes.md`` (its first 256 KiB): a regular file inside the archive only. A
    longer file is cut at its last whole line, so the redaction sees every secret whole."""
    if not rel:
        return None
    limit = NOTES_MAX_BYTES
    try:
        data = read_bytes(archive / rel, archive, limit + 1, cut=True)
    except OSError:
        return None
    if len(data) > limit:
        data = data[: data.rfind(b"\n", 0, limit) + 1]
    return data.decode("utf-8", errors="replace")
