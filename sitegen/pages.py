"""One object per page: the data contract (docs/schemas/) that pages render.

Each function returns the exact dict written to ``data/...json``; the HTML
templates render the same dict, so the JSON cannot drift from the page.
"""

from __future__ import annotations

import math
from pathlib import Path

from sitegen import analyse
from sitegen.errors import BuildWarning
from sitegen.model.parsed import Discovery, Job, Run
from sitegen.redact import Redactor

JOB_SCHEMA = "sitegen/job@1"
RUN_SCHEMA = "sitegen/run@1"
INDEX_SCHEMA = "sitegen/index@1"
JOB_ROW_KEYS = (
    "id",
    "url",
    "data",
    "run",
    "log",
    "status",
    "status_detail",
    "first_step",
    "last_step",
    "metric_blocks",
    "reward_mean",
    "reward_max",
    "reward_last",
    "total_time_s",
    "headline",
    "started_at",
    "last_activity",
    "trial_success_rate",
    "trial_error_rate",
    "reward_spark",
)


def job_url(job_id: str) -> str:
    return f"jobs/{job_id}/"


def run_url(run_id: str) -> str:
    return f"runs/{run_id}/"


def job_data_path(job_id: str) -> str:
    return f"data/jobs/{job_id}.json"


def run_data_path(run_id: str) -> str:
    return f"data/runs/{run_id}.json"


def _config_get(cfg: dict | None, *path: str) -> object:
    cur: object = cfg
    for p in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(p)
    return cur


def job_summary(job: Job) -> dict:
    """The fields a job has in ``index.json`` (and at the top of its own file)."""
    blocks = job.log.blocks if job.log else ()
    h = analyse.headline(blocks)
    log = job.log
    return {
        "id": job.id,
        "url": job_url(job.id),
        "data": job_data_path(job.id),
        "run": job.run_id,
        "log": job.source.log,
        "status": job.status,
        "status_detail": log.end_detail if log else None,
        "first_step": h["first_step"],
        "last_step": h["last_step"],
        "metric_blocks": len(blocks),
        "reward_mean": h["reward_mean"],
        "reward_max": h["reward_max"],
        "reward_last": h["reward_last"],
        "total_time_s": h["total_time_s"],
        "headline": h,
        "started_at": log.first_time.isoformat() if log and log.first_time else None,
        "last_activity": log.last_time.isoformat() if log and log.last_time else None,
        "trial_success_rate": None,
        "trial_error_rate": None,
        "reward_spark": _spark([b.metrics.get(analyse.REWARD) for b in blocks]),
    }


def job_row(page: dict) -> dict:
    """A job's row in ``index.json``: the summary fields of its page (computed once, there)."""
    return {k: page[k] for k in JOB_ROW_KEYS}


def _spark(values: list, n: int = 40) -> list:
    """At most ``n`` points (bucket means) for an index-row sparkline."""
    xs = [v if isinstance(v, int | float) and math.isfinite(v) else None for v in values]
    if len(xs) <= n:
        return xs
    out = []
    for i in range(n):
        chunk = [v for v in xs[i * len(xs) // n : (i + 1) * len(xs) // n] if v is not None]
        out.append(sum(chunk) / len(chunk) if chunk else None)
    return out


def job_page(
    job: Job, warnings: list[BuildWarning], redactor: Redactor, notes_md: str | None
) -> dict:
    """Everything the job page shows, JSON-ready."""
    out = job_summary(job)
    log = job.log
    blocks = log.blocks if log else ()
    cfg = log.config if log else None
    trials = analyse.trial_stats(job.trials) if job.trials else None
    if trials:
        out["trial_success_rate"] = trials["reward"]["success_rate"]
        out["trial_error_rate"] = trials["error_rate"]
    out.update(
        {
            "schema": JOB_SCHEMA,
            "layout": job.source.layout,
            "group": job.source.group,
            "metric_form": log.metric_form if log else "",
            "resumed_from": log.resumed_from if log else None,
            "fresh_start": log.fresh_start if log else False,
            "checkpoints": [c.step for c in log.checkpoints] if log else [],
            "log_bytes": log.size_bytes if log else 0,
            "log_lines": log.lines if log else 0,
            "run_name": _config_get(cfg, "trainer", "run_name"),
            "model": _config_get(cfg, "trainer", "policy", "model", "path"),
            "ckpt_path": _config_get(cfg, "trainer", "ckpt_path"),
            "n_samples_per_prompt": _config_get(cfg, "generator", "n_samples_per_prompt"),
            "config": cfg,
            "metrics": analyse.metric_summary(blocks),
            "series": analyse.series(blocks),
            "eval_series": analyse.series(log.eval_blocks) if log else {"step": []},
            "timing": analyse.timing_tree(blocks),
            "vllm": analyse.vllm_summary(log.vllm) if log else None,
            "batches": analyse.batch_summary(log) if log else None,
            "batch_series": analyse.batch_series(log.batches_per_step) if log else {"step": []},
            "trials": trials,
            "notes_md": redactor.text(notes_md) if notes_md else None,
            "warnings": [w.to_json() for w in warnings],
        }
    )
    return out


def run_page(run: Run, job_rows: dict[str, dict]) -> dict:
    """The stitched run: series, restarts, discarded steps and their cost."""
    h = analyse.headline(run.blocks)
    discarded_time = math.fsum(
        float(b.metrics[analyse.STEP_TIME])
        for b in run.discarded
        if isinstance(b.metrics.get(analyse.STEP_TIME), int | float)
        and math.isfinite(b.metrics[analyse.STEP_TIME])
    )
    restarts = [
        {
            "job": r.job_id,
            "resumed_from": r.resumed_from,
            "cut_at": r.cut_at,
            "discarded_steps": list(r.discarded_steps),
            "discarded_time_s": r.discarded_time_s,
        }
        for r in run.restarts
    ]
    trials = analyse.trial_stats(run.trials) if run.trials else None
    return {
        "schema": RUN_SCHEMA,
        "id": run.id,
        "url": run_url(run.id),
        "data": run_data_path(run.id),
        "jobs": [j.id for j in run.jobs],
        "job_rows": [job_rows[j.id] for j in run.jobs],
        "status": run.jobs[-1].status if run.jobs else "incomplete",
        "first_step": h["first_step"],
        "last_step": h["last_step"],
        "steps": len(run.blocks),
        "discarded_steps": len(run.discarded),
        "discarded": [
            {
                "step": b.step,
                "time_s": b.metrics.get(analyse.STEP_TIME),
                "reward": b.metrics.get(analyse.REWARD),
            }
            for b in run.discarded
        ],
        "discarded_time_s": discarded_time,
        "resumed_from": list(run.resumed_from),
        "restarts": restarts,
        "reward_mean": h["reward_mean"],
        "reward_max": h["reward_max"],
        "reward_last": h["reward_last"],
        "total_time_s": h["total_time_s"],
        "headline": h,
        "metrics": analyse.metric_summary(run.blocks),
        "series": analyse.series(run.blocks),
        "timing": analyse.timing_tree(run.blocks),
        "trials": trials,
        "trial_success_rate": trials["reward"]["success_rate"] if trials else None,
        "trial_error_rate": trials["error_rate"] if trials else None,
        "reward_spark": _spark([b.metrics.get(analyse.REWARD) for b in run.blocks]),
        "last_activity": max(
            (r["last_activity"] for r in (job_rows[j.id] for j in run.jobs) if r["last_activity"]),
            default=None,
        ),
    }


def run_summary(page: dict) -> dict:
    keep = (
        "id",
        "url",
        "data",
        "jobs",
        "status",
        "first_step",
        "last_step",
        "steps",
        "discarded_steps",
        "resumed_from",
        "reward_mean",
        "reward_max",
        "reward_last",
        "total_time_s",
        "headline",
        "trial_success_rate",
        "trial_error_rate",
        "reward_spark",
        "last_activity",
    )
    return {k: page[k] for k in keep}


def index_page(
    job_rows: list[dict],
    run_rows: list[dict],
    disc: Discovery,
    warnings: int,
    trials_total: int,
    title: str,
) -> dict:
    return {
        "schema": INDEX_SCHEMA,
        "title": title,
        "jobs": job_rows,
        "runs": run_rows,
        "skipped": [{"path": p, "reason": r} for p, r in disc.skipped],
        "totals": {
            "runs": len(run_rows),
            "jobs": len(job_rows),
            "steps": sum(r["steps"] for r in run_rows),
            "trials": trials_total,
            "warnings": warnings,
        },
    }


def read_notes(archive: Path, rel: str | None) -> str | None:
    if not rel:
        return None
    try:
        return (archive / rel).read_text(encoding="utf-8", errors="replace")[:200_000]
    except OSError:
        return None
