"""What each template receives besides ``root``, ``meta`` and the globals.

Typed, so mypy checks that a page object reaches its template with the types the
template reads (:mod:`sitegen.present.html` builds these).
"""

from __future__ import annotations

from typing import TypedDict

from sitegen.errors import BuildWarning
from sitegen.model.pages import IndexPage, JobPage, JobRow, RunPage
from sitegen.model.sections import ProgressionRow, Stats, TimerRow


class JobContext(TypedDict):
    job: JobPage
    run: RunPage | None
    charts: dict[str, dict]
    charts_json: str
    trials_href: str
    families: dict[str, dict[str, Stats]]
    timing_rows: list[TimerRow]
    notes_html: str | None
    nav: str
    progression_rows: list[ProgressionRow]


class RunContext(TypedDict):
    run: RunPage
    charts: dict[str, dict]
    charts_json: str
    trials_href: str
    nav: str
    timing_rows: list[TimerRow]
    families: dict[str, dict[str, Stats]]


class IndexContext(TypedDict):
    index: IndexPage
    runs: tuple
    jobs_by_run: dict[str, list[JobRow]]
    warnings: list[BuildWarning]
    nav: str


class CompareContext(TypedDict):
    overlay_json: str
    nav: str
