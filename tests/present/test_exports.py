"""The CSV downloads: blanks for missing and non-finite values, one row per trial, no formulas."""

from __future__ import annotations

import csv
import io
import math

from sitegen.model.parsed import TrialResult, TrialSet
from sitegen.present.exports import TRIAL_COLUMNS, series_csv, trials_csv


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_series_csv_columns_and_blanks():
    series = {"step": [1, 2, 3], "a": [1, None, 3], "b": [0.5, math.nan, -math.inf]}
    rows = _rows(series_csv(series))
    assert rows == [["step", "a", "b"], ["1", "1", "0.5"], ["2", "", ""], ["3", "3", ""]]
    assert series_csv({"step": []}) == "step\n"


def test_series_csv_of_a_job_matches_its_series(job_pages):
    page = job_pages["exp-async.async-run_561773"]
    rows = _rows(series_csv(page.series))
    assert rows[0] == list(page.series)
    assert [int(r[0]) for r in rows[1:]] == page.series["step"]
    col = rows[0].index("reward/avg_raw_reward")
    assert [float(r[col]) for r in rows[1:]] == page.series["reward/avg_raw_reward"]


def _trial(name: str, reward: float | None, exception: str | None, **kw) -> TrialResult:
    return TrialResult(
        name=name,
        task=kw.get("task", "t"),
        reward=reward,
        exception=exception,
        turns=kw.get("turns"),
        input_tokens=None,
        output_tokens=None,
        duration_s=kw.get("duration_s"),
        eval=False,
    )


def test_trials_csv_rows():
    ts = TrialSet(
        "trace_jobs",
        (
            _trial("a", 1.0, None, turns=3, duration_s=12.5),
            _trial("b", 0.0, "AgentTimeoutError", turns=0),
            _trial("c", -1.0, "DaytonaError"),
            _trial("=HYPERLINK(1)", None, "Weird", task="@cmd"),
        ),
        0,
        0,
        0,
        0,
        (),
    )
    rows = _rows(trials_csv(ts))
    assert tuple(rows[0]) == TRIAL_COLUMNS
    by = {r[0]: dict(zip(TRIAL_COLUMNS, r, strict=True)) for r in rows[1:]}
    assert by["a"]["outcome"] == "success" and by["a"]["exception_kind"] == "none"
    assert by["a"]["turns"] == "3" and by["a"]["duration_s"] == "12.5"
    assert by["b"]["outcome"] == "failure" and by["b"]["exception_kind"] == "model"
    assert by["c"]["outcome"] == "failure" and by["c"]["exception_kind"] == "infrastructure"
    # a spreadsheet must not run text taken from the archive as a formula
    weird = by["'=HYPERLINK(1)"]
    assert weird["task"] == "'@cmd" and weird["reward"] == "" and weird["outcome"] == ""
    assert weird["exception_kind"] == "other"


def test_every_csv_column_is_neutralised_numbers_stay():
    evil = ['=HYPERLINK("http://x")', "+1+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx"]
    series = {"step": [1], **{name: [-0.5] for name in evil}}
    rows = _rows(series_csv(series))
    # headers (metric names) neutralised; a CR becomes a (quoted) line break
    assert rows[0][1:] == ["'" + e for e in evil[:5]] + ["\nx"]
    assert rows[1] == ["1"] + ["-0.5"] * len(evil)  # negative numbers are values, not formulas
    ts = TrialSet(
        "trace_jobs",
        tuple(_trial(e, -1.0, e, task=e) for e in evil),
        0, 0, 0, 0, (),
    )  # fmt: skip
    for row in _rows(trials_csv(ts))[1:]:
        for cell in row:
            assert cell[:1] not in ("=", "+", "@", "\t", "\r"), row
            assert not cell.startswith("-") or cell == "-1.0", row
