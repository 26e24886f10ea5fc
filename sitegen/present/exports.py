"""The CSV downloads of a page: per-step values and one row per trial."""

from __future__ import annotations

import csv
import io
import math
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

    def writecolumns(self, columns: list[list[object]]) -> None:
        """Rows given column by column (all as long), each cell made a CSV value
        (:func:`~sitegen.present.formatting.csv_value`) and safe: a column at a time is a
        few times faster than a row at a time through Python."""
        cells = [_cells(c) for c in columns]
        self._w.writerows(zip(*cells, strict=True) if cells else ())


def _cells(values: list[object]) -> list[object]:
    """``csv_safe(csv_value(v))`` of each value, floats and None (nearly all of them: a step
    that did not log a metric has None) tested inline."""
    isfinite = math.isfinite
    return [
        (v if isfinite(v) else "")
        if type(v) is float
        else ("" if v is None else csv_safe(csv_value(v)))
        for v in values
    ]


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
    cols = [series[k][:n] for k in names]
    if any(len(c) != n for c in cols):
        raise IndexError(f"a series column is shorter than its {n} steps")
    w.writecolumns(cols)
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
    rs = trials.results
    w.writecolumns(
        [
            [r.name for r in rs],
            [r.task for r in rs],
            [r.reward for r in rs],
            ["" if r.reward is None else ("success" if r.reward > 0 else "failure") for r in rs],
            [r.exception or "" for r in rs],
            [r.exception_kind or exception_kind(r.exception) for r in rs],
            [r.turns for r in rs],
            [r.input_tokens for r in rs],
            [r.output_tokens for r in rs],
            [r.duration_s for r in rs],
        ]
    )
    return buf.getvalue()
