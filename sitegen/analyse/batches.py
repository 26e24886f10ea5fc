"""Batch-generation figures: totals, per step, and the old report's ``batch_errors/*`` stats."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from sitegen.analyse.steps import summarize
from sitegen.model.parsed import BatchCounts, MetricBlock, ParsedLog


def batch_summary(log: ParsedLog) -> dict:
    """Totals, per step, and the old report's ``batch_errors/*`` statistics over the steps
    the job logged."""
    per_step = {str(s): b.to_json() for s, b in log.batches_per_step.items()}
    rows: dict[str, list[float]] = {}
    for b in logged_batches(log.batches_per_step, log.blocks).values():
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


def logged_batches(
    per_step: Mapping[int, BatchCounts], blocks: Sequence[MetricBlock]
) -> dict[int, BatchCounts]:
    """The batches of the steps the blocks logged: not those of the step still being
    generated when the log ends (after the last block: shown per step, but cut short), and
    none of a log without a metric block (it logged no step)."""
    if not blocks:
        return {}
    last = blocks[-1].step
    return {s: b for s, b in per_step.items() if s <= last}


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
