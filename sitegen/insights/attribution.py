"""Which training step each trial belongs to (docs/data.md, "Trial attribution").

A step's metric block is logged when the step ends, so the block times cut the
log into intervals: a trial *started* in ``(end of step N−1, end of step N]``
belongs to step N — the same rule the log's batch lines follow. Start time, not
finish time, because the ``n_samples_per_prompt`` trials of one prompt group
start together but finish apart: by start they stay one group.

Times are compared as wall-clock readings: loguru writes naive local time and
newer Harbor writes UTC with ``Z``. When the two clocks disagree (a cluster not
on UTC) most trials fall outside the log's span; then a whole quarter-hour shift
that brings most of them inside is taken as the time-zone difference, applied,
and said on the page (:func:`clock_offset`). Trials that still fall outside (a
folder holding an earlier job's trials too) are counted apart, not guessed at."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from datetime import datetime, timedelta

import msgspec

from sitegen.model.parsed import MetricBlock, TrialResult

# Trials may start a little before the first log line we hold (the log's clock
# and the sandbox host's drift apart); beyond this they are outside the log.
START_SLACK = timedelta(minutes=10)
# Clock offsets tried when most trials fall outside the log's span: time zones are whole
# quarter hours apart, at most 14 h.
OFFSET_STEP = timedelta(minutes=15)
MAX_OFFSET = timedelta(hours=14)


class Attribution(msgspec.Struct, frozen=True):
    """The step of every trial (``None``: not attributed), in the trial set's order."""

    method: str  # "time" or "none"
    reason: str  # one sentence for the page when method is "none", else ""
    steps: tuple[int | None, ...]
    boundaries: tuple[tuple[int, datetime], ...]  # (step, time its block was logged)
    attributed: int
    undated: int  # trials without a start time
    before: int  # started before the log began
    after: int  # started after the last step's block (still in flight, or never trained)
    offset_s: float = 0.0  # added to trial times to read them on the log's clock


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


def _inside(starts: list[datetime], lo: datetime, hi: datetime, shift: timedelta) -> int:
    """How many of the sorted ``starts`` fall in [lo, hi] once ``shift`` is added."""
    return bisect.bisect_right(starts, hi - shift) - bisect.bisect_left(starts, lo - shift)


def clock_offset(starts: list[datetime], lo: datetime, hi: datetime) -> timedelta:
    """The shift that puts the trials on the log's clock: zero unless most trials fall
    outside [lo, hi] as written and a whole quarter-hour shift (a time zone) puts at least
    twice as many, and at least half of them, inside."""
    n = len(starts)
    base = _inside(starts, lo, hi, timedelta(0))
    if not n or 2 * base >= n:
        return timedelta(0)
    best, best_n = timedelta(0), base
    k = int(MAX_OFFSET / OFFSET_STEP)
    for j in sorted(range(-k, k + 1), key=abs):  # the smallest shift wins a tie
        shift = j * OFFSET_STEP
        m = _inside(starts, lo, hi, shift)
        if m > best_n:
            best, best_n = shift, m
    return best if best_n >= 2 * base and 2 * best_n >= n else timedelta(0)


def attribute(
    trials: Sequence[TrialResult],
    blocks: Sequence[MetricBlock],
    log_start: datetime | None,
) -> Attribution:
    """Attribute trials to the steps of ``blocks`` (see the module docstring)."""
    bounds = boundaries(blocks)
    undated = sum(1 for t in trials if t.started_at is None)
    nowhere = (None,) * len(trials)
    if not bounds:
        reason = "the log has no timed metric blocks to attribute trials to"
        return Attribution("none", reason, nowhere, (), 0, undated, 0, 0)
    times = [t for _, t in bounds]
    start = (log_start or times[0]) - START_SLACK
    dated_starts = sorted(t.started_at for t in trials if t.started_at is not None)
    shift = clock_offset(dated_starts, start, times[-1])
    steps: list[int | None] = []
    before = after = 0
    for tr in trials:
        if tr.started_at is None:
            steps.append(None)
            continue
        t = tr.started_at + shift
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
    if dated and not attributed:
        reason = f"none of the {dated} trials started within the log's time span"
        return Attribution("none", reason, nowhere, tuple(bounds), 0, undated, before, after)
    hours = shift.total_seconds() / 3600
    reason = (
        f"trial times read {abs(hours):g} h {'behind' if hours > 0 else 'ahead of'} the log's "
        f"clock (a time-zone difference) and were shifted by {hours:+g} h"
        if shift
        else ""
    )
    counts = (attributed, undated, before, after)
    return Attribution("time", reason, tuple(steps), tuple(bounds), *counts, shift.total_seconds())
