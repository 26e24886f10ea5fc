"""The analyse stage: pure functions from the model to JSON-ready dicts, which
:mod:`sitegen.pages.make` turns into page sections, one module per subject (per-step
``steps``, ``batches``, ``vllm``, ``trials``). Non-finite values are left out of every
statistic (``count`` says how many values were finite)."""

from __future__ import annotations

from sitegen.analyse.batches import batch_series, batch_summary
from sitegen.analyse.steps import (
    finite,
    headline,
    metric_summary,
    series,
    summarize,
    timer_tree_of,
    timing_tree,
)
from sitegen.analyse.trials import trial_stats
from sitegen.analyse.vllm import verdict, vllm_summary

__all__ = [
    "batch_series",
    "batch_summary",
    "finite",
    "headline",
    "metric_summary",
    "series",
    "summarize",
    "timer_tree_of",
    "timing_tree",
    "trial_stats",
    "verdict",
    "vllm_summary",
]
