"""The insights' charts: plain functions from page sections to Vega-Lite dicts, as in
:mod:`sitegen.present.charts` (the heatmap's shape: :mod:`sitegen.present.insight_shapes`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import msgspec

from sitegen.insights.sections import TasksSection
from sitegen.model.vocabulary import COMPONENT_LABELS, COMPONENTS
from sitegen.present import charts

if TYPE_CHECKING:  # (imported where trials are analysed: insights.sections._insights)
    from sitegen.insights.rollouts import RolloutAnalysis

HEATMAP_ROW_PX = 16
MAX_BARS = 50  # the per-step anatomy chart bins longer runs


def task_heatmap(
    t: TasksSection | None, links: dict[str, list[tuple[int | None, str]]]
) -> dict | None:
    """Success rate per task and step (bin), rows sorted by when a task was first solved.
    ``links`` (:func:`~sitegen.present.transcripts.heatmap_links`): a cell opens a sampled
    transcript of one of its bin's steps, else the task's first."""
    if t is None or not t.heatmap:
        return None
    width = t.heatmap_bin_steps

    def href(task: str, step: int) -> str | None:
        picks = links.get(task)
        if not picks:
            return None
        inside = [h for s, h in picks if s is not None and step <= s < step + width]
        return inside[0] if inside else picks[0][1]

    records = [{**msgspec.structs.asdict(c), "href": href(c.task, c.step)} for c in t.heatmap]
    x_title = "step" if width == 1 else f"step (bins of {width})"
    height = max(60, HEATMAP_ROW_PX * t.heatmap_tasks)
    return charts._chart("heatmap", {"records": records}, x_title=x_title, height=height)


def wasted_share(t: TasksSection | None) -> dict | None:
    """Share of prompt groups with all-equal rewards (zero advantage), per step (a line needs
    two steps; one step's share is the section's headline card)."""
    if t is None or len(t.wasted.steps) < 2:
        return None
    if not any(w.share for w in t.wasted.steps):
        return None  # no step wasted a group: a flat line at 0 says what the card says
    series = {
        "step": [w.step for w in t.wasted.steps],
        "share": [100 * w.share if w.share is not None else None for w in t.wasted.steps],
    }
    return charts.lines(series, {"share": "all-equal groups"}, y_title="% of prompt groups")


def _parts(anatomy) -> list[tuple[str, float | None]]:
    return [(COMPONENT_LABELS[k], getattr(anatomy, f"{k}_s")) for k in COMPONENTS]


def rollout_steps(r: RolloutAnalysis | None) -> dict | None:
    """Mean seconds per trial in each stage, stacked, per step (binned past MAX_BARS steps:
    the trial-weighted mean of the bin's steps, labelled by its first step)."""
    if r is None or not r.per_step:
        return None
    width = math.ceil(len(r.per_step) / MAX_BARS)
    rows = []
    for i in range(0, len(r.per_step), width):
        chunk = r.per_step[i : i + width]
        for label, key in ((COMPONENT_LABELS[k], f"{k}_s") for k in COMPONENTS):
            pairs = [
                (getattr(s.anatomy, key), s.anatomy.timed)
                for s in chunk
                if getattr(s.anatomy, key) is not None and s.anatomy.timed
            ]
            n = sum(w for _, w in pairs)
            if n:
                rows.append(
                    {"x": chunk[0].step, "part": label, "value": sum(v * w for v, w in pairs) / n}
                )
    x_title = "step" if width == 1 else f"step (bins of {width})"
    return charts.stacked_bars(rows, x_title, "seconds per trial (mean)", step_width=width)


def rollout_kinds(r: RolloutAnalysis | None) -> dict | None:
    """Mean seconds per trial in each stage, stacked, by exception kind."""
    if r is None or not r.by_kind:
        return None
    rows = [
        {"x": k.kind, "part": label, "value": v}
        for k in r.by_kind
        for label, v in _parts(k.anatomy)
        if v is not None
    ]
    return charts.stacked_bars(rows, "exception kind", "seconds per trial (mean)")


def _token_series(r: RolloutAnalysis) -> dict[str, list]:
    return {
        "step": [s.step for s in r.per_step],
        "in": [s.input_tokens for s in r.per_step],
        "out": [s.output_tokens for s in r.per_step],
        "cache": [s.cache_tokens for s in r.per_step],
    }


def tokens_steps(r: RolloutAnalysis | None) -> dict | None:
    """Prompt-side tokens (input and cached) summed over each step's trials (two steps at
    least). Output tokens have their own chart: an agent's context is sent again every
    turn, so input runs ~20-100 times output, which on one axis lay flat on zero."""
    if r is None or len(r.per_step) < 2:
        return None
    names = {"in": "input", "cache": "cached"}
    return charts.lines(_token_series(r), names, y_title="prompt tokens per step")


def output_tokens_steps(r: RolloutAnalysis | None) -> dict | None:
    """Output tokens summed over each step's trials (two steps at least)."""
    if r is None or len(r.per_step) < 2:
        return None
    return charts.lines(_token_series(r), {"out": "output"}, y_title="output tokens per step")


def insight_charts(
    tasks: TasksSection | None,
    rollouts: RolloutAnalysis | None,
    links: dict[str, list[tuple[int | None, str]]],
) -> dict:
    """The insight charts of a job or run page, by name (None: nothing to draw); ``links``:
    the page's transcripts by task (the heatmap's cells open them)."""
    return {
        "task_heatmap": task_heatmap(tasks, links),
        "wasted": wasted_share(tasks),
        "rollout_steps": rollout_steps(rollouts),
        "rollout_kinds": rollout_kinds(rollouts),
        "tokens_steps": tokens_steps(rollouts),
        "output_tokens_steps": output_tokens_steps(rollouts),
    }
