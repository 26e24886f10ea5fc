"""Batch-generation figures: totals, per step, and the old report's ``batch_errors/*`` stats."""

from __future__ import annotations

import math

from sitegen.analyse.steps import summarize
from sitegen.model.parsed import BatchCounts, ParsedLog


def batch_summary(log: ParsedLog) -> dict:
    """Totals, per step, and the old report's ``batch_errors/*`` statistics over the steps
    the job logged."""
    per_step = {str(s): b.to_json() for s, b in log.batches_per_step.items()}
    # The statistics are over the steps the job logged: the step still being generated when
    # the log ends (batches after the last block) is shown per step, but cut short.
    last = log.blocks[-1].step if log.blocks else None
    rows: dict[str, list[float]] = {}
    for s, b in log.batches_per_step.items():
        if last is not None and s > last:
            continue
        for field in ("batches", "instances", "successful", "failed", "masked"):
            rows.setdefault(f"batch_errors/total_{field}", []).append(getattr(b, field))
        for exc, n in b.exceptions.items():
            rows.setdefault(f"batch_errors/avg_{exc}", []).append(
                n / b.batches if b.batches else math.nan
            )
            rows.setdefault(f"batch_errors/total_{exc}", []).append(n)
    return {
        **log.batches.to_json(),
        "per_step": per_step,
        "eval": log.eval_batches.to_json(),
        "summary": {k: summarize(v) for k, v in rows.items()},
    }


def batch_series(per_step: dict[int, BatchCounts]) -> dict[str, list]:
    """Columnar per-step batch errors for charts: one column per exception type."""
    steps = sorted(per_step)
    types = sorted({t for b in per_step.values() for t in b.exceptions})
    out: dict[str, list] = {
        "step": steps,
        "failed": [per_step[s].failed for s in steps],
        "masked": [per_step[s].masked for s in steps],
    }
    for t in types:
        out[t] = [per_step[s].exceptions.get(t, 0) for s in steps]
    return out
