"""The CSV downloads of a page: per-step values and one row per trial."""

from __future__ import annotations

import csv
import io

from sitegen.model.parsed import TrialSet
from sitegen.model.sections import Series
from sitegen.model.vocabulary import exception_kind
from sitegen.present.formatting import csv_value


def series_csv(series: Series) -> str:
    """``steps.csv``: one column per metric, one row per step, blank where not logged or not finite."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    names = list(series)
    w.writerow(names)
    n = len(series.get("step", []))
    for i in range(n):
        w.writerow([csv_value(series[k][i]) for k in names])
    return buf.getvalue()


def _csv_safe(v: object) -> object:
    """Neutralise spreadsheet formulas in text taken from inputs (CSV injection)."""
    if isinstance(v, str) and v[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + v
    return v


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
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(TRIAL_COLUMNS)
    for r in trials.results:
        outcome = "" if r.reward is None else ("success" if r.reward > 0 else "failure")
        w.writerow(
            [
                _csv_safe(r.name),
                _csv_safe(r.task),
                csv_value(r.reward),
                outcome,
                r.exception or "",
                exception_kind(r.exception),
                csv_value(r.turns),
                csv_value(r.input_tokens),
                csv_value(r.output_tokens),
                csv_value(r.duration_s),
            ]
        )
    return buf.getvalue()
