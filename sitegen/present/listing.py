"""The listings that grow with the archive: the index table's rows and the comparison list.

Every page stays under 500 KB with hundreds of runs: the index's HTML holds only the newest
runs (:data:`INDEX_ROWS` rows); every row is in ``index-rows.js``, which ``static/site.js``
loads when the reader sorts, filters or asks for all. Both render the same
:class:`ListingRow`, display strings made here by the page's own formatters, so the script
cannot print a number differently from the template (``tests/scenarios/test_browser.py``).

``compare/items.js`` is written column-wise (:func:`compare_items`): figures as printed but
durations in seconds (``site.js`` prints them in one unit over the picks), each config value
once, and a run of one job's job pointing at the run's entry.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from sitegen.model.vocabulary import is_finite
from sitegen.pages.objects import CompareItem, Headline, IndexPage, JobRow, RunRow
from sitegen.present.formatting import (
    DASH,
    dur_unit,
    fixed,
    fmt_dur_in,
    fmt_num,
    fmt_pct,
    fmt_score,
)

INDEX_ROWS = 100  # table rows (runs and their jobs) the index's HTML holds, newest runs first
ROWS_FILE = "index-rows.js"  # every row, beside index.html (a script: file:// has no fetch)

# Sparkline: one character per point, the point's height in half pixels (0–40) of a
# 24 px-high box drawn in a viewBox 48 units high; "-" is a step without a value. The
# template and the script both turn the code into the same integer polyline.
SPARK_LEVELS = 40
SPARK_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDE"  # SPARK_LEVELS + 1 characters


class ListingRow(msgspec.Struct, frozen=True):
    """One row of the index table, as the reader sees it. ``None`` prints as "–"."""

    kind: str  # "run" or "job"
    id: str
    url: str
    status: str
    discarded: int  # steps discarded by resumes (runs)
    jobs: int  # jobs in the run (0 for a job row)
    job: str | None  # a run of one job: that job's id (its row would repeat the run's)
    job_url: str | None
    steps: str
    first_last: str | None  # "first–last" step
    reward_mean: str | None
    reward_max: str | None
    reward_last: str | None
    pass_at_k: str | None
    pass_k: int | None
    step_time: str | None  # in the column's unit (step_time_unit), bare: "13.90"
    step_time_s: float | None  # its sort key, in seconds ("< 0.01" sorts too)
    gen_wait: str | None
    success: str | None
    error: str | None
    findings: tuple[int, int, int]  # error, warning and info findings
    finding_titles: str  # the findings cell's tooltip
    last_activity: str | None  # ISO time to the second
    last_shown: str | None  # as the index prints it: "YYYY-MM-DD HH:MM"
    spark: str  # sparkline code (SPARK_ALPHABET)
    # its tooltip: each sparkline is drawn on its own scale, so the values it spans
    spark_title: str

    def to_list(self) -> list:
        return list(msgspec.structs.astuple(self))

    @property
    def findings_key(self) -> int:
        """Sort key of the findings column: errors first, then warnings, then infos."""
        e, w, i = self.findings
        return e * 10000 + w * 100 + i

    @property
    def spark_points(self) -> str:
        return spark_points(self.spark)


ROW_COLUMNS = list(ListingRow.__struct_fields__)


def _shown(text: str) -> str | None:
    return None if text == "–" else text


def spark_code(values: Sequence[object]) -> str:
    """The sparkline of ``values`` (bucket means, ``pages.spark``) as one character a point."""
    xs = [float(v) if is_finite(v) else None for v in values]  # type: ignore[arg-type]
    nums = [v for v in xs if v is not None]
    if len(nums) < 2:
        return ""
    lo, hi = min(nums), max(nums)
    span = (hi - lo) or 1.0
    return "".join(
        "-" if v is None else SPARK_ALPHABET[round(SPARK_LEVELS * (v - lo) / span)] for v in xs
    )


def spark_title(values: Sequence[object]) -> str:
    """What a sparkline spans: each is drawn from its own lowest to its highest value, so a
    run that barely moved looks like one that moved a lot; the tooltip says how much."""
    nums = [float(v) for v in values if is_finite(v)]  # type: ignore[arg-type]
    if len(nums) < 2:
        return ""
    return f"reward per step from {fmt_score(min(nums))} to {fmt_score(max(nums))} (own scale)"


def spark_points(code: str) -> str:
    """The polyline of a sparkline code in a ``0 0 100 48`` box, integers only, so that
    ``site.js`` (``sparkPoints``) computes the very same string."""
    n = max(1, len(code) - 1)
    pts = [
        # x rounded half up by integer division; y: level 0 at the bottom (44), 40 at the top (4)
        f"{(200 * i + n) // (2 * n)},{44 - SPARK_ALPHABET.index(c)}"
        for i, c in enumerate(code)
        if c != "-"
    ]
    return " ".join(pts) if len(pts) >= 2 else ""


def _when(iso: str | None) -> str | None:
    """A last activity as the index shows it: ``YYYY-MM-DD HH:MM``, always with its year
    (``01-01 00:50`` beside ``12-31 23:10`` would hide one)."""
    return iso[:16].replace("T", " ") if iso else None


def step_time_unit(index: IndexPage) -> str:
    """The one unit of the index's step time column (:func:`dur_unit`) over every run and job,
    the rows the HTML holds and those the script adds alike."""
    rows: list[RunRow | JobRow] = [*index.runs, *index.jobs]
    return dur_unit(x.headline.step_time_mean_s for x in rows)


def listing_row(r: RunRow | JobRow, unit: str, chain: Sequence[JobRow] = ()) -> ListingRow:
    """A run's row (``chain``: its jobs) or a job's row (no chain), its step time in
    ``unit`` (the column's, :func:`step_time_unit`)."""
    h: Headline = r.headline
    is_run = isinstance(r, RunRow)
    solo = chain[0] if is_run and len(chain) == 1 else None
    fs = [f.severity for f in r.findings]
    return ListingRow(
        kind="run" if is_run else "job",
        id=r.id,
        url=r.url,
        status=r.status,
        discarded=r.discarded_steps if isinstance(r, RunRow) else 0,
        jobs=len(chain),
        job=solo.id if solo else None,
        job_url=solo.url if solo else None,
        steps=fmt_num(h.steps),
        first_last=f"{h.first_step}–{h.last_step}" if h.first_step is not None else None,
        reward_mean=_shown(fmt_score(h.reward_mean)),
        reward_max=_shown(fmt_score(h.reward_max)),
        reward_last=_shown(fmt_score(h.reward_last)),
        pass_at_k=_shown(fmt_score(h.pass_at_k_mean)),
        pass_k=h.pass_at_k,
        step_time=_shown(fmt_dur_in(h.step_time_mean_s, unit)),
        step_time_s=round(h.step_time_mean_s, 1) if is_finite(h.step_time_mean_s) else None,
        gen_wait=_shown(fmt_pct(h.gen_wait_share)),
        success=_shown(fmt_pct(r.trial_success_rate)),
        error=_shown(fmt_pct(r.trial_error_rate)),
        findings=(fs.count("error"), fs.count("warning"), fs.count("info")),
        finding_titles=" · ".join(f.title for f in r.findings) or "no findings",
        last_activity=r.last_activity[:19] if r.last_activity else None,
        last_shown=_when(r.last_activity),
        spark=spark_code(r.reward_spark),
        spark_title=spark_title(r.reward_spark),
    )


class ListingGroup(msgspec.Struct, frozen=True):
    """A run's row and, for a run of several jobs, its jobs' rows (the table's ``tbody``)."""

    run: ListingRow
    jobs: tuple[ListingRow, ...]

    @property
    def search(self) -> str:
        """What the filter box matches: the run's and its jobs' ids and statuses."""
        parts = [f"{r.id.lower()} {r.status}" for r in (self.run, *self.jobs)]
        if self.run.job:  # a run of one job: its job's name finds it too
            parts.append(self.run.job.lower())
        return " ".join(parts)

    @property
    def statuses(self) -> str:
        return " ".join(r.status for r in (self.run, *self.jobs))


def run_order(index: IndexPage) -> list[RunRow]:
    """Every run, newest activity first (runs without a time last; ties in the index's
    order, by a stable sort), as the index and the comparison page's picker list them."""
    dated = [r for r in index.runs if r.last_activity]
    order = sorted(dated, key=lambda r: r.last_activity or "", reverse=True)
    return order + [r for r in index.runs if not r.last_activity]


def listing_groups(index: IndexPage, unit: str) -> list[ListingGroup]:
    """Every run with its jobs, in :func:`run_order`, step times in ``unit``
    (:func:`step_time_unit`)."""
    chains = index.jobs_by_run()
    groups = []
    for r in run_order(index):
        chain = chains.get(r.id, [])
        jobs = tuple(listing_row(j, unit) for j in chain) if len(chain) > 1 else ()
        groups.append(ListingGroup(listing_row(r, unit, chain), jobs))
    return groups


def first_groups(groups: Sequence[ListingGroup], rows: int = INDEX_ROWS) -> list[ListingGroup]:
    """The leading groups holding at most ``rows`` table rows (always at least one group)."""
    out: list[ListingGroup] = []
    n = 0
    for g in groups:
        size = 1 + len(g.jobs)
        if out and n + size > rows:
            break
        out.append(g)
        n += size
    return out


def rows_data(groups: Sequence[ListingGroup], unit: str) -> dict:
    """``index-rows.js``'s value: the columns, the step time's unit, and per run its row
    then its jobs' rows."""
    return {
        "columns": ROW_COLUMNS,
        "step_time_unit": unit,
        "groups": [[g.run.to_list(), [j.to_list() for j in g.jobs]] for g in groups],
    }


# -- compare/items.js ----------------------------------------------------------------------------

ITEM_COLUMNS = ["kind", "id", "url", "status", "cells", "last_activity", "findings", "config",
                "tasks"]  # fmt: skip
# The comparison table's figures, as printed (templates/compare.html's columns after status),
# but for step_time and gen_wait: seconds, printed by site.js in one unit over the picks.
CELL_COLUMNS = ["steps", "reward_mean", "reward_max", "reward_last", "pass_at_k", "step_time",
                "gen_wait", "gen_wait_share", "avg_tokens", "staleness", "success", "error"]  # fmt: skip
# A finding's detail is not listed: it is the tooltip of a picked item's finding, written with
# the item's curves (PageFiles.curves), so that this list stays small with hundreds of runs.
FINDING_COLUMNS = ["id", "severity", "title", "section"]


def compare_cells(it: CompareItem) -> list[str | float | None]:
    """An item's figures in the comparison table (:data:`CELL_COLUMNS`), printed by the page
    formatters as the index prints them. The durations are seconds (``None``: none) instead:
    their unit depends on the picks, so ``site.js`` prints them (``durUnit``, ``durIn``:
    :func:`dur_unit` and :func:`fmt_dur_in` ported; the browser tests hold them equal)."""
    h = it.headline
    stale = fmt_num(h.staleness_mean, 3)
    if is_finite(h.staleness_max):
        stale += f" (max {fixed(h.staleness_max, 0)})"
    return [
        fmt_num(h.steps),
        fmt_score(h.reward_mean),
        fmt_score(h.reward_max),
        fmt_score(h.reward_last),
        DASH
        if not is_finite(h.pass_at_k_mean)
        else f"{fmt_score(h.pass_at_k_mean)} @{h.pass_at_k}",
        _seconds(h.step_time_mean_s),
        _seconds(h.gen_wait_mean_s),
        fmt_pct(h.gen_wait_share),
        fmt_num(h.avg_tokens_mean, 1),
        stale,
        fmt_pct(it.trial_success_rate),
        fmt_pct(it.trial_error_rate),
    ]


def _seconds(v: float | None) -> float | None:
    return v if is_finite(v) else None


def picker_chains(index: IndexPage) -> list[tuple[str, list[str]]]:
    """Each run's id with its jobs' ids, in :func:`run_order`: the picker's groups."""
    jobs = index.jobs_by_run()
    return [(r.id, [j.id for j in jobs.get(r.id, [])]) for r in run_order(index)]


def compare_items(
    items: Sequence[CompareItem], chains: Sequence[tuple[str, Sequence[str]]] = ()
) -> dict:
    """``compare/items.js``'s value, column-wise as docs/data.md describes it; ``groups``
    follow ``chains`` (:func:`picker_chains`)."""
    keys = sorted({k for it in items for k in it.config})
    # each key's values once: most differ between a few settings (a model, a learning rate)
    values: dict[str, dict[str, int]] = {k: {} for k in keys}
    for it in items:
        for k, v in it.config.items():
            values[k].setdefault(v, len(values[k]))
    rows: list[list] = []
    seen: dict[str, int] = {}
    for it in items:
        body = (
            it.status,
            compare_cells(it),
            it.last_activity,
            [[getattr(f, c) for c in FINDING_COLUMNS] for f in it.findings],
            [values[k][it.config[k]] if k in it.config else None for k in keys],
            it.tasks,
        )
        ident = repr(body)
        if ident in seen:
            rows.append([it.kind, it.id, it.url, seen[ident]])
            continue
        seen[ident] = len(rows)
        rows.append([it.kind, it.id, it.url, *body])
    at = {(it.kind, it.id): i for i, it in enumerate(items)}
    groups = [
        [at["run", run], *(at["job", j] for j in jobs if ("job", j) in at)]
        for run, jobs in chains
        if ("run", run) in at
    ]
    return {
        "columns": ITEM_COLUMNS,
        "cell_columns": CELL_COLUMNS,
        "finding_columns": FINDING_COLUMNS,
        "config_keys": keys,
        "config_values": [list(values[k]) for k in keys],
        "rows": rows,
        "groups": groups,
    }
