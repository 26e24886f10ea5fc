"""Which training step each trial belongs to (docs/design.md, "Trial attribution").

A step's metric block is logged when the step ends, so the block times cut the
log into intervals: a trial *started* in ``(end of step N−1, end of step N]``
belongs to step N — the same rule the log's batch lines follow. Start time, not
finish time, because the ``n_samples_per_prompt`` trials of one prompt group
start together but finish apart: by start they stay one group.

Times are compared as wall-clock readings: loguru writes naive local time and
newer Harbor writes UTC with ``Z``; when the two clocks disagree (a cluster not
on UTC) most trials fall outside the log's span, and the attribution is
declined rather than guessed (``method = "none"``).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sitegen.model.parsed import MetricBlock, TrialResult

# Trials may start a little before the first log line we hold (the log's clock
# and the sandbox host's drift apart); beyond this they are outside the log.
START_SLACK = timedelta(minutes=10)
# If more than this share of dated trials lies outside the log's span, the two
# clocks do not agree: no attribution at all rather than a wrong one.
MAX_OUTSIDE_SHARE = 0.5


@dataclass(frozen=True)
class Attribution:
    """The step of every trial (``None``: not attributed), in the trial set's order."""

    method: str  # "time" or "none"
    reason: str  # one sentence for the page when method is "none", else ""
    steps: tuple[int | None, ...]
    boundaries: tuple[tuple[int, datetime], ...]  # (step, time its block was logged)
    attributed: int
    undated: int  # trials without a start time
    before: int  # started before the log began
    after: int  # started after the last step's block (still in flight, or never trained)


def boundaries(blocks: Sequence[MetricBlock]) -> list[tuple[int, datetime]]:
    """(step, block time) in step order, keeping only times that move forward."""
    out: list[tuple[int, datetime]] = []
    for b in sorted(blocks, key=lambda b: b.step):
        if b.time is None:
            continue
        if out and b.time < out[-1][1]:
            continue  # a clock that runs backwards: skip, the neighbours still bound it
        out.append((b.step, b.time))
    return out


def attribute(
    trials: Sequence[TrialResult],
    blocks: Sequence[MetricBlock],
    log_start: datetime | None,
) -> Attribution:
    """Attribute trials to the steps of ``blocks`` (see the module docstring)."""
    bounds = boundaries(blocks)
    undated = sum(1 for t in trials if t.started_at is None)
    if not bounds:
        return Attribution(
            "none",
            "the log has no timed metric blocks to attribute trials to",
            tuple(None for _ in trials),
            (),
            0,
            undated,
            0,
            0,
        )
    times = [t for _, t in bounds]
    start = (log_start or times[0]) - START_SLACK
    steps: list[int | None] = []
    before = after = 0
    for tr in trials:
        t = tr.started_at
        if t is None:
            steps.append(None)
            continue
        if t < start:
            before += 1
            steps.append(None)
            continue
        i = bisect.bisect_left(times, t)
        if i == len(times):
            after += 1
            steps.append(None)
            continue
        steps.append(bounds[i][0])
    dated = len(trials) - undated
    attributed = dated - before - after
    if dated and (before + after) / dated > MAX_OUTSIDE_SHARE:
        return Attribution(
            "none",
            f"{before + after} of {dated} trials started outside the log's time span "
            "(a time-zone difference between the log and the trials?): not attributed to steps",
            tuple(None for _ in trials),
            tuple(bounds),
            0,
            undated,
            before,
            after,
        )
    return Attribution("time", "", tuple(steps), tuple(bounds), attributed, undated, before, after)
