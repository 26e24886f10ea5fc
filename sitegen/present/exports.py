"""The CSV downloads of a page: per-step values and one row per trial."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable

from sitegen.model.parsed import TrialSet
from sitegen.model.sections import Series
from sitegen.model.vocabulary import exception_kind
from sitegen.present.formatting import csv_value


class _SafeWriter:
    """A CSV writer that neutralises every cell a spreadsheet would run as a formula.

    Every row goes through it, headers included, so no column is forgotten
    (CSV injection: ``=HYPERLINK(…)`` in a metric name or an exception type).
    """

    def __init__(self, buf: io.StringIO) -> None:
        self._w = csv.writer(buf, lineterminator="\n")

    def writerow(self, cells: Iterable[object]) -> None:
        self._w.writerow([csv_safe(c) for c in cells])


_NUMBER_RE = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def csv_safe(v: object) -> object:
    """``v``, with a ``'`` before text starting with ``= + - @``, tab or CR (a formula's start).

    A CR inside text becomes a line break (which the writer quotes).

    Numbers stay numbers: ``-0.5`` is a value, not a formula.
    """
    if not isinstance(v, str):
        return v
    # A lone CR is not quoted by the csv module (the line ends in LF): it would split the row.
    v = v.replace("\r\n", "\n").replace("\r", "\n")
    if v[:1] in FORMULA_STARTS and not _NUMBER_RE.fullmatch(v):
        return "'" + v
    return v


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def series_csv(series: Series) -> str:
    """``steps.csv``: one column per metric, one row per step, blank where not logged or not finite."""
    buf = io.StringIO()
    w = _SafeWriter(buf)
    names = list(series)
    w.writerow(names)
    n = len(series.get("step", []))
    for i in range(n):
        w.writerow([csv_value(series[k][i]) for k in names])
    return buf.getvalue()


TRIAL_COLUMNS = (
    "trial",
    "task",
    "reward",
    "outcome",
    "exception",
    "exception_kind",
    "turns",
    "input_tokens",
    "output_tokens",
    "duration_s",
)


def trials_csv(trials: TrialSet) -> str:
    """``trials.csv``: one row per training trial."""
    buf = io.StringIO()
    w = _SafeWriter(buf)
    w.writerow(TRIAL_COLUMNS)
    for r in trials.results:
        outcome = "" if r.reward is None else ("success" if r.reward > 0 else "failure")
        w.writerow(
            [
                r.name,
                r.task,
                csv_value(r.reward),
                outcome,
                r.exception or "",
                r.exception_kind or exception_kind(r.exception),
                csv_value(r.turns),
                csv_value(r.input_tokens),
                csv_value(r.output_tokens),
                csv_value(r.duration_s),
            ]
        )
    return buf.getvalue()
