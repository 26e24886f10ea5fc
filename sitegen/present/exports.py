"""The CSV downloads of a page: per-step values and one row per trial."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable

from sitegen.model.parsed import TrialSet
from sitegen.model.vocabulary import is_finite
from sitegen.pages.sections import Series


def _csv(header: Iterable[object], columns: list[list[object]]) -> str:
    """A CSV file of ``header`` and the rows given column by column (all as long), None blank
    and every cell a spreadsheet would run as a formula neutralised, headers too, so no
    column is forgotten (CSV injection: ``=HYPERLINK(…)`` in a metric name or an exception
    type). A column at a time keeps the per-cell work in C rather than a Python call a cell."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([csv_safe(c) for c in header])
    text = _unquoted_rows(columns)
    if text is not None:
        buf.write(text)
    else:
        cells = [_cells(c) for c in columns]
        w.writerows(zip(*cells, strict=True) if cells else ())
    return buf.getvalue()


def _cells(values: list[object]) -> list[object]:
    """``csv_safe`` of each value, None blank; floats and None (nearly all of them: a step
    that did not log a metric has None) tested inline."""
    return [v if type(v) is float else ("" if v is None else csv_safe(v)) for v in values]


# What makes the csv writer quote a field: its quote character and line ends (its
# delimiter is counted apart); NUL, which it may refuse, is left to it too.
_NEEDS_QUOTES = ('"', "\n", "\r", "\0")


def _unquoted_rows(columns: list[list[object]]) -> str | None:
    """The rows the csv writer would write for the columns' :func:`_cells`, made without it
    (column by column, for a large ``trials.csv``) when no field needs quoting. None when a
    field needs quoting, when the columns are not all as long (the writer raises) or fewer
    than two (it quotes a row of one empty field), or when there are no rows: the writer then
    writes them. A test holds the two paths to the same text.
    """
    if len(columns) < 2:
        return None
    fields = []
    for col in columns:
        strs = _texts(col)
        joined = ",".join(strs)
        if joined.count(",") != len(strs) - 1 or any(c in joined for c in _NEEDS_QUOTES):
            return None
        fields.append(strs)
    n = len(fields[0])
    if n == 0 or any(len(f) != n for f in fields):
        return None
    return "\n".join(map(",".join, zip(*fields, strict=True))) + "\n"


def _texts(values: list[object]) -> list[str]:
    """The text the csv writer writes for each of ``_cells(values)``: ``str`` of the cell,
    "" for None. A column of names that :func:`csv_safe` leaves as they are is taken whole
    (:func:`_plain_text`); in others, floats, ints and None are told inline."""
    if _plain_text(values):
        return values  # type: ignore[return-value]  # (all str)
    return [
        str(v) if (tv := type(v)) is float or tv is int else ("" if v is None else str(csv_safe(v)))
        for v in values
    ]


# Where csv_safe would change a text cell: a formula's first character after a line start
# (the cells joined by "\n" and one put first), or a CR anywhere.
_CHANGED_AT = tuple("\n" + c for c in "=+-@\t") + ("\r",)


def _plain_text(values: list[object]) -> bool:
    """True when every value is text that :func:`csv_safe` leaves as it is: none starts with
    a formula's character, none holds a CR. Told for the whole column at once (a join and
    six searches in C): most columns of ``trials.csv`` are names. A false alarm (a line
    break before such a character, a ``-1``) only sends the column cell by cell."""
    try:
        text = "\n" + "\n".join(values)  # type: ignore[arg-type]
    except TypeError:  # not all text
        return False
    return not any(c in text for c in _CHANGED_AT)


_NUMBER_RE = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def csv_safe(v: object) -> object:
    """``v``, with a ``'`` before text starting with ``= + - @``, tab or CR (a formula's
    start); a CR inside text becomes a line break (which the writer quotes). Numbers stay
    numbers: ``-0.5`` is a value, not a formula."""
    if not isinstance(v, str):
        return v
    # A lone CR is not quoted by the csv module (the line ends in LF): it would split the row.
    v = v.replace("\r\n", "\n").replace("\r", "\n")
    if v[:1] in FORMULA_STARTS and not _NUMBER_RE.fullmatch(v):
        return "'" + v
    return v


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def series_csv(series: Series) -> str:
    """``steps.csv``: one column per metric, one row per step, blank where not logged, and
    ``nan``, ``inf``, ``-inf`` where the value logged was one (pandas and numpy read them
    back as those floats): a diverged loss is not a missing one."""
    n = len(series.get("step", []))
    cols = [series[k][:n] for k in series]
    if any(len(c) != n for c in cols):
        raise IndexError(f"a series column is shorter than its {n} steps")
    return _csv(series, cols)


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
    rs = trials.results
    return _csv(
        TRIAL_COLUMNS,
        [
            [r.name for r in rs],
            [r.task for r in rs],
            [r.reward for r in rs],
            # (a NaN or infinite reward is no reward: neither, as every analysis counts it)
            [_outcome(r.reward) for r in rs],
            [r.exception or "" for r in rs],
            [r.kind for r in rs],
            [r.turns for r in rs],
            [r.input_tokens for r in rs],
            [r.output_tokens for r in rs],
            [r.duration_s for r in rs],
        ],
    )


def _outcome(reward: float | None) -> str:
    """A trial's outcome as the pages count it: success when its reward is above 0,
    failure at or below, none without a finite reward."""
    if reward is None or not is_finite(reward):
        return ""
    return "success" if reward > 0 else "failure"
