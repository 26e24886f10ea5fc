"""What each template receives besides ``root``, ``meta`` and the globals, typed so mypy
checks what :mod:`sitegen.present.html` hands each template.
"""

from __future__ import annotations

from typing import TypedDict

from markupsafe import Markup

from sitegen.errors import BuildWarning
from sitegen.pages.objects import IndexPage, JobPage, JobRow, RunPage
from sitegen.pages.sections import ProgressionRow, Stats, TimerRow
from sitegen.present.listing import ListingGroup


class _PageContext(TypedDict):
    """What a job page and a run page both receive."""

    charts: dict[str, dict]
    charts_json: str
    trials_href: str
    families: dict[str, dict[str, Stats]]
    timing_rows: list[TimerRow]
    nav: str
    policy: list[tuple[str, str]]  # (chart, caption) of each policy chart drawn


class JobContext(_PageContext):
    job: JobPage
    run: RunPage | None
    notes_html: str | None
    progression_rows: list[ProgressionRow]
    progression_tbody: Markup  # their table's rows (pagefiles.progression_tbody)


class RunContext(_PageContext):
    run: RunPage


class IndexContext(TypedDict):
    index: IndexPage
    groups: list[ListingGroup]  # the newest runs' rows (listing.first_groups)
    step_unit: str  # the step time column's unit, over every row (listing.step_time_unit)
    rows_file: str  # every run's rows (listing.ROWS_FILE), loaded by static/site.js
    secrets: list[BuildWarning]  # one per input that held secrets: where, which kinds
    warnings: list[BuildWarning]  # every other warning (damaged input), the first 500
    nav: str


class RunsContext(TypedDict):
    index: IndexPage
    groups: list[ListingGroup]  # every run, newest first (listing.listing_groups)
    jobs_by_run: dict[str, list[JobRow]]
    nav: str


class CompareContext(TypedDict):
    overlay_json: str
    nav: str
