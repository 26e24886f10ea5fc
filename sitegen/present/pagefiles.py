"""The files of one job or run page, in the order they are written: its data JSON,
downloads, comparison curves, per-task tables, HTML and card. Pure functions of the page
objects, made in forked children (pages/forkmap.py); the main process writes them.
"""

from __future__ import annotations

import gzip
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from markupsafe import Markup, escape

from sitegen.insights.sections import TASKS_SCRIPT_FILE, TASKS_TABLE_FILE, brief
from sitegen.jsonio import clean, dumps, script_json
from sitegen.pages.make import series_curves
from sitegen.pages.objects import JobPage, RunPage
from sitegen.present import cards
from sitegen.present.chartsets import (
    Charts,
    job_charts,
    policy_captions,
    run_charts,
    step_charts,
)
from sitegen.present.exports import series_csv, trials_csv
from sitegen.present.formatting import chain_phrase, fmt_num, headline_sentence, md_to_html
from sitegen.present.report import job_report
from sitegen.present.transcripts import FOLDER as TRANSCRIPTS_FOLDER
from sitegen.present.transcripts import task_links, transcript_summary

if TYPE_CHECKING:
    from sitegen.insights.tasks import TaskAnalysis
    from sitegen.model.parsed import TrialSet
    from sitegen.pages.sections import ProgressionRow
    from sitegen.present.cards import Card
    from sitegen.present.contexts import JobContext, RunContext

R = TypeVar("R")
# (site path, content) of each file a page makes, in order (a TableSlot: made elsewhere, for now)
Files = list[tuple[str, "str | bytes | TableSlot"]]
# A page's index.html from (template, page folder, context, meta): its site path and text.
Html = Callable[[str, str, Mapping[str, Any], dict], tuple[str, str]]

# Per-trial rows gzip'ed: CSV compresses well, and at 40 k trials a job the table is most of a
# site's bytes (GitHub Pages allows 1 GB). mtime=0 keeps the bytes deterministic.
TRIALS_FILE = "trials.csv.gz"
CARD_FILE = "card.png"  # a published page's OpenGraph card, beside it


def card_address(card: Card | None, at: str = "") -> str | None:
    """The address a page gives its card (``at``: the card's folder, ``/jobs/…/`` from the
    site's root; else beside the page), with the card's version (:func:`cards.version`)."""
    return f"{at}{CARD_FILE}?v={cards.version(card)}" if card else None


def gzip_text(text: str) -> bytes:
    """``text`` as UTF-8, gzip'ed with fixed bytes (no timestamp). Level 7, not 9: a few
    per cent larger in a third of the time, which counts as every rebuild of a running job
    gzips its run's whole table again (docs/benchmarks.md)."""
    return gzip.compress(text.encode("utf-8"), compresslevel=7, mtime=0)


def trials_table(trials: TrialSet) -> bytes:
    """A trial set's ``trials.csv.gz``: one row per trial (:func:`~sitegen.present.exports.trials_csv`)."""
    return gzip_text(trials_csv(trials))


class TableSlot(msgspec.Struct, frozen=True):
    """The placeholder of a file made in another process (a run's trial table, apart from
    its analysis: :func:`~sitegen.commands.analyse.site_pages`) until :func:`resolve`."""

    key: int


class Prepared(msgspec.Struct, frozen=True):
    """What a run's page files take made outside its analysis: ``tables``, by ``id`` of a
    trial set, the slot of its table; ``notes``, by their Markdown, notes as sanitized HTML
    (kept between builds, so that a rebuild need not import the Markdown library)."""

    tables: Mapping[int, TableSlot] = msgspec.field(default_factory=dict)
    notes: Mapping[str, str] = msgspec.field(default_factory=dict)


def resolve(files: Files, made: Sequence[bytes]) -> Files:
    """``files`` with each :class:`TableSlot` content replaced by what was made for its key."""
    return [(path, made[c.key] if isinstance(c, TableSlot) else c) for path, c in files]


def content(data: str | bytes | TableSlot) -> str | bytes:
    """A file's content to write; a :class:`TableSlot` never filled in is a bug, not a file."""
    if isinstance(data, TableSlot):
        raise TypeError(f"trial table {data.key} was never made")
    return data


def script_data(name: str, value: object) -> str:
    """JSON data as a script that hands it to ``sitegen.data(name, value)`` (static/site.js):
    browsers refuse ``fetch`` from ``file://`` pages but run ``<script src>``."""
    return f"sitegen.data({script_json(name)}, {script_json(value)});\n"


def progression_tbody(rows: list[ProgressionRow]) -> Markup:
    """The job page's per-step ``<tbody>`` rows (step, reward, pass@k, KL, loss, step time,
    generation wait), in one pass rather than a template loop (thousands of cells a job).
    :func:`fmt_num`'s text never needs escaping (a test holds it to that); the step is escaped.
    """
    return Markup(
        "".join(
            f"<tr><td>{escape(r.step)}</td><td>{fmt_num(r.reward)}</td>"
            f"<td>{fmt_num(r.pass_at_k)}</td><td>{fmt_num(r.kl, 6)}</td>"
            f"<td>{fmt_num(r.loss)}</td><td>{fmt_num(r.step_time, 1)}</td>"
            f"<td>{fmt_num(r.gen_wait, 1)}</td></tr>"
            for r in rows
        )
    )


def _drawn(charts: Charts) -> dict[str, dict]:
    """A page's charts with something to draw (its "Vega-Lite spec" links are made from
    them in the browser: static/site.js)."""
    return {k: v for k, v in charts.items() if v}


class PageFiles:
    """Makes the files of job and run pages: HTML through ``html`` (the renderer's Jinja
    environment), per-task tables from ``task_tables`` (page url -> table)."""

    def __init__(
        self,
        html: Html,
        task_tables: Mapping[str, TaskAnalysis],
        prepared: Prepared | None = None,
    ) -> None:
        self.html = html
        self.task_tables = task_tables
        self.prepared = prepared or Prepared()
        # (for each function of _once: the arguments it was last called with, and its result)
        self._last: dict[Callable, tuple[tuple, Any]] = {}

    def _once(self, fn: Callable[..., R], *args: Any) -> R:
        """``fn(*args)``, made once for the same argument objects in a row: a run of one job,
        made right after it, shares its series, statistics and timing tree. Safe because page
        objects are frozen (and held, so an id is not reused meanwhile)."""
        last = self._last.get(fn)
        if last is not None and len(last[0]) == len(args) and all(map(operator.is_, last[0], args)):
            return last[1]
        out = fn(*args)
        self._last[fn] = (args, out)
        return out

    def _step_charts(self, page: JobPage | RunPage) -> Charts:
        """The page's :func:`~sitegen.present.chartsets.step_charts` (see :meth:`_once`)."""
        return self._once(step_charts, page.series, page.metrics, page.timing)

    def trials_file(self, trials: TrialSet) -> bytes | TableSlot:
        """A trial set's ``trials.csv.gz``, or its placeholder when it is made elsewhere."""
        slot = self.prepared.tables.get(id(trials))
        return slot if slot is not None else trials_table(trials)

    def notes_html(self, md: str) -> str:
        """A job's notes as sanitized HTML (:func:`~sitegen.present.formatting.md_to_html`)."""
        html = self.prepared.notes.get(md)
        return html if html is not None else md_to_html(md)

    def job(
        self, page: JobPage, run: RunPage | None, trials: TrialSet | None, card: Card | None
    ) -> Files:
        """Every file of a job page, in the order they are written."""
        rel = page.url
        files: Files = [(page.data, dumps(page))]
        specs = _drawn(job_charts(page, self._step_charts(page)))
        files.append((f"{rel}report.md", job_report(page)))
        files.append((f"{rel}steps.csv", self._once(series_csv, page.series)))
        if trials is not None and not page.left_out:  # (bulk data: write/budget.py)
            files.append((f"{rel}{TRIALS_FILE}", self.trials_file(trials)))
        files += self.curves("job", page)
        files += self.task_files("job", page)
        image = card_address(card)
        files += self.transcript_pages("job", page, image)
        shown = clean(page)  # non-finite numbers print as "–" on the page
        rows = page.progression()
        ctx: JobContext = {
            "job": shown,
            "run": self._once(clean, run) if run else None,
            "charts": specs,
            "charts_json": script_json(specs),
            "trials_href": TRIALS_FILE,
            "families": shown.families(),
            "timing_rows": shown.timing.rows(),
            "notes_html": self.notes_html(page.notes_md) if page.notes_md else None,
            "nav": "job",
            "progression_rows": rows,
            "progression_tbody": progression_tbody(rows),
            "policy": policy_captions(page, specs),
        }
        meta = {
            "title": f"{page.id} · {page.status}",
            "description": headline_sentence(
                page.status, page.headline, page.trial_success_rate, page.status_detail
            ),
            "image": image,
        }
        files.append(self.html("job.html", rel, ctx, meta))
        if card:
            files.append((f"{rel}{CARD_FILE}", cards.paint(card)))
        return files

    def run(
        self,
        page: RunPage,
        trials: TrialSet | None,
        trials_owner: str | None,
        image: str | None,
        card: Card | None,
    ) -> Files:
        """Every file of a run page, in the order they are written."""
        rel = page.url
        files: Files = [(page.data, dumps(page))]
        specs = _drawn(run_charts(page, self._step_charts(page)))
        files.append((f"{rel}steps.csv", self._once(series_csv, page.series)))
        if trials is not None and trials_owner is None and not page.left_out:
            files.append((f"{rel}{TRIALS_FILE}", self.trials_file(trials)))
        files += self.curves("run", page)
        files += self.task_files("run", page)
        files += self.transcript_pages("run", page, image)
        shown = self._once(clean, page)
        ctx: RunContext = {
            "run": shown,
            "charts": specs,
            "charts_json": script_json(specs),
            "trials_href": "../" * rel.count("/") + trials_owner + TRIALS_FILE
            if trials_owner
            else TRIALS_FILE,
            "nav": "run",
            "timing_rows": shown.timing.rows(),
            "families": shown.families(),
            "policy": policy_captions(page, specs),
        }
        meta = {
            "title": f"Run {page.id}",
            "description": headline_sentence(
                page.status,
                page.headline,
                page.trial_success_rate,
                page.job_rows[-1].status_detail if page.job_rows else None,
                chain_phrase(len(page.jobs), page.resumed_from),
            ),
            "image": image,
        }
        files.append(self.html("run.html", rel, ctx, meta))
        if card:
            files.append((f"{rel}{CARD_FILE}", cards.paint(card)))
        return files

    def curves(self, kind: str, page: JobPage | RunPage) -> Files:
        """The page's comparison curves and its findings' details (in the order of
        ``compare/items.js``), in its folder: loaded by the comparison page when picked."""
        curves = self._once(series_curves, page.series, page.metrics)
        data = script_data(f"curves:{kind}:{page.id}", curves)
        data += script_data(f"findings:{kind}:{page.id}", [f.detail for f in page.findings])
        return [(f"{page.url}curves.js", data)]

    def transcript_pages(self, kind: str, page: JobPage | RunPage, image: str | None) -> Files:
        """The page's transcripts: a page per sampled trial (its data is made apart, with
        the analysis: present/transcripts.py) and their list. ``image``: the page's card."""
        sec = page.transcripts
        if sec is None or sec.dir != page.url + TRANSCRIPTS_FOLDER or page.left_out:
            return []  # none, or its job's (written with that page), or left out
        card = f"/{page.url}{image}" if image and not image.startswith("/") else image
        owner = {"kind": kind, "id": page.id, "url": page.url, "tasks": page.tasks is not None}
        title = f"{kind.capitalize()} {page.id}"
        ctx = {"sec": sec, "owner": owner, "nav": "transcripts"}
        meta = {
            "title": f"Transcripts · {title}",
            "description": f"{len(sec.entries)} sampled trial transcripts of "
            f"{sec.trials:,} trials, each with why it was picked",
            "image": card,
        }
        files: Files = [self.html("transcripts.html", sec.dir, ctx, meta)]
        for e in sec.entries:
            ctx = {"e": e, "sec": sec, "owner": owner, "nav": "transcript"}
            meta = {
                "title": f"{e.trial} · {title}",
                "description": transcript_summary(e),
                "image": card,
            }
            files.append(self.html("transcript.html", e.url, ctx, meta))
        return files

    def task_files(self, kind: str, page: JobPage | RunPage) -> Files:
        """The page's full per-task table, loaded on demand: ``tasks.json.gz`` (every row with
        its per-step cells; the download, fetched over HTTP), ``tasks.js`` (the rows the page
        does not hold, for ``file://``) and ``solved.js`` (each task's counts for the comparison
        page: ``insights.paired.solved_counts``, and its sampled transcript)."""
        table = self.task_tables.get(page.url)
        if page.tasks is None or table is None or page.tasks.table_dir != page.url:
            return []  # no trials, or the table is its job's (written with that page)
        from sitegen.insights.paired import solved_counts  # (numpy: where pages are made)

        solved = solved_counts(table)
        links = task_links(page, "")
        if links:  # each task's sampled transcript, from the site's root
            solved["transcripts"] = [links.get(r.name) for r in table.tasks]
        solved_file = (f"{page.url}solved.js", script_data(f"solved:{page.url}", solved))
        if page.left_out:  # the full table is bulk data (write/budget.py); the comparison's stays
            return [solved_file]
        full = {
            "schema": "sitegen/tasks@1",
            "kind": kind,
            "id": page.id,
            "attribution": table.attribution,
            "tasks": table.tasks,
        }
        files: Files = [(f"{page.url}{TASKS_TABLE_FILE}", gzip_text(dumps(full).decode("utf-8")))]
        if page.tasks.tasks_total > len(page.tasks.rows):
            rows = [msgspec.structs.asdict(brief(r)) for r in table.tasks]
            cols = list(rows[0]) if rows else []
            table_rows = {"columns": cols, "rows": [[r[c] for c in cols] for r in rows]}
            files.append(
                (f"{page.url}{TASKS_SCRIPT_FILE}", script_data(f"tasks:{page.url}", table_rows))
            )
        files.append(solved_file)
        return files
