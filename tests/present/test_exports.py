"""The CSV downloads: blanks for missing values, nan/inf as logged, one row per trial, no formulas."""

from __future__ import annotations

import csv
import io
import math

from sitegen.model.parsed import TrialResult, TrialSet
from sitegen.model.vocabulary import exception_kind
from sitegen.present.exports import TRIAL_COLUMNS, csv_safe, series_csv, trials_csv


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_series_csv_columns_and_blanks():
    """A step that did not log a metric is blank; one that logged NaN or an infinity says so,
    in the words ``float`` (and numpy, and pandas) read back as those floats."""
    series = {"step": [1, 2, 3], "a": [1, None, 3], "b": [0.5, math.nan, -math.inf]}
    rows = _rows(series_csv(series))
    assert rows == [["step", "a", "b"], ["1", "1", "0.5"], ["2", "", "nan"], ["3", "3", "-inf"]]
    assert series_csv({"step": []}) == "step\n"
    assert math.isnan(float(rows[2][2])) and float(rows[3][2]) == -math.inf


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


def test_a_reward_that_is_no_finite_number_has_no_outcome():
    # NaN and ±inf rewards are kept (the reward column says nan, inf, -inf) but every
    # analysis counts them as no reward: neither a success nor a failure, as on the page
    rs = (_trial("n", math.nan, None), _trial("p", math.inf, None), _trial("m", -math.inf, None))
    ts = TrialSet("trace_jobs", (*rs, _trial("ok", 0.5, None)), 0, 0, 0, 0, ())
    by = {r[0]: r for r in _rows(trials_csv(ts))[1:]}
    assert {k: (r[2], r[3]) for k, r in by.items()} == {
        "n": ("nan", ""),
        "p": ("inf", ""),
        "m": ("-inf", ""),
        "ok": ("0.5", "success"),
    }


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


def _blank(v: object) -> object:
    return "" if v is None else v


def _slow_series_csv(series: dict) -> str:
    """Row by row, every cell through csv_safe, None blank: what the column path must equal."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    names = list(series)
    w.writerow([csv_safe(n) for n in names])
    for i in range(len(series.get("step", []))):
        w.writerow([csv_safe(_blank(series[k][i])) for k in names])
    return buf.getvalue()


def _slow_trials_csv(trials: TrialSet) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(TRIAL_COLUMNS)
    for r in trials.results:
        graded = r.reward is not None and math.isfinite(r.reward)
        outcome = ("success" if r.reward > 0 else "failure") if graded else ""
        cells = [r.name, r.task, _blank(r.reward), outcome, r.exception or ""]
        cells += [r.exception_kind or exception_kind(r.exception)]
        cells += [_blank(v) for v in (r.turns, r.input_tokens, r.output_tokens, r.duration_s)]
        w.writerow([csv_safe(c) for c in cells])
    return buf.getvalue()


ODD = [None, math.nan, -math.inf, 0, -3, 2.5, -0.25, 1e-9, True, "=x", "-1", "\rx", "a,b", 'q"']


def test_column_csvs_equal_the_row_by_row_ones():
    series = {"step": list(range(len(ODD))), "m": ODD, "=evil": ODD[::-1], "c": [1.0] * len(ODD)}
    assert series_csv(series) == _slow_series_csv(series)
    assert series_csv({"step": [], "x": []}) == _slow_series_csv({"step": [], "x": []})
    assert series_csv({}) == _slow_series_csv({})
    trials = [
        _trial(f"t{i}", r, exc, task=f"=task{i}" if i % 3 else "task")
        for i, (r, exc) in enumerate(
            [(1.0, None), (0.0, "AgentTimeoutError"), (None, "=cmd"), (math.nan, None), (-1.0, "")]
        )
    ]
    ts = TrialSet("trace_jobs", tuple(trials), 0, 0, 0, 0, ())
    assert trials_csv(ts) == _slow_trials_csv(ts)
    empty = TrialSet("trace_jobs", (), 0, 0, 0, 0, ())
    assert trials_csv(empty) == _slow_trials_csv(empty)


# Cells the writer writes as they are (no quoting), of every kind the columns hold.
PLAIN = [None, 0, -3, 2**70, 2.5, -0.0, 1e-9, 1e22, math.nan, math.inf, True, False, "", "x y",
         "ünï ✓", "-1", "-x", "=x", "+x", "@x", "\tx", " lead", "trail ", "'q", "a;b", "tab\tin"]  # fmt: skip
QUOTED = ["a,b", 'q"', "line\nbreak", "cr\rx", "\r\nx", "nul\0x"]


def test_unquoted_rows_equal_the_writers():
    """The writer-free path (taken when no field needs quoting) writes what csv.writer does,
    and steps aside (None) whenever one field would be quoted."""
    import random

    from sitegen.present.exports import _unquoted_rows

    rnd = random.Random(7)
    for k in range(200):
        pool = PLAIN + (QUOTED if k % 2 else [])
        n = rnd.randrange(0, 12)
        series = {"step": list(range(n))}
        for j in range(rnd.randrange(1, 5)):
            kind = rnd.choice(["mixed", "names", "floats"])
            col = (
                [rnd.choice(pool) for _ in range(n)]
                if kind == "mixed"
                else [f"task-{rnd.randrange(9)}__{i}" for i in range(n)]
                if kind == "names"
                else [rnd.random() for _ in range(n)]
            )
            series[f"c{j}"] = col
        assert series_csv(series) == _slow_series_csv(series), series
    # the fast path is taken on plain cells and refused on each quoted one
    cols = [list(range(len(PLAIN))), PLAIN]
    assert _unquoted_rows(cols) is not None
    for q in QUOTED:
        assert _unquoted_rows([[1, 2], ["ok", q]]) is None, q
    assert _unquoted_rows([[1, 2], [1]]) is None  # not as long: the writer raises
    assert _unquoted_rows([["", ""]]) is None  # one column: the writer quotes an empty row
    assert _unquoted_rows([[], []]) is None


def test_trials_csv_of_plain_names_equals_the_row_by_row_one():
    trials = [
        _trial(f"task-{i % 4}__{i}", r, exc, task=f"task-{i % 4}")
        for i, (r, exc) in enumerate(
            [(1.0, None), (0.0, "AgentTimeoutError"), (None, "DaytonaError"), (math.nan, None)] * 5
        )
    ]
    ts = TrialSet("trace_jobs", tuple(trials), 0, 0, 0, 0, ())
    assert trials_csv(ts) == _slow_trials_csv(ts)
