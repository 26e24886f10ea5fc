"""The analyses of the reference report, computed right: the analyse stage.

Pure functions from the model to JSON-ready dicts, which :mod:`sitegen.pages.make`
turns into page sections (:mod:`sitegen.pages.sections`). One module per subject:

- :mod:`~sitegen.analyse.steps`: metric statistics, per-step columns, the headline,
  the timer tree;
- :mod:`~sitegen.analyse.batches`: batch-generation totals and ``batch_errors/*``;
- :mod:`~sitegen.analyse.vllm`: vLLM engine means and the utilization verdict;
- :mod:`~sitegen.analyse.trials`: trial turns, exceptions and rewards.

Non-finite values are left out of every statistic (``count`` says how many
values were finite).
"""

from __future__ import annotations

from sitegen.analyse.batches import batch_series, batch_summary
from sitegen.analyse.steps import (
    finite,
    headline,
    metric_names,
    metric_summary,
    series,
    summarize,
    timer_tree_of,
    timing_tree,
)
from sitegen.analyse.trials import trial_stats
from sitegen.analyse.vllm import VERDICT_THRESHOLDS, verdict, vllm_summary

__all__ = [
    "VERDICT_THRESHOLDS",
    "batch_series",
    "batch_summary",
    "finite",
    "headline",
    "metric_names",
    "metric_summary",
    "series",
    "summarize",
    "timer_tree_of",
    "timing_tree",
    "trial_stats",
    "verdict",
    "vllm_summary",
]
