"""Render page objects to HTML (Jinja, autoescape, strict), with their charts and downloads.

The renderer writes through a :class:`~sitegen.write.SiteWriter`; it never
parses and computes no figure: every number comes from a page object
(:mod:`sitegen.model.pages`). Templates and static files are package data.
"""

from __future__ import annotations

import functools
import gzip
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

import jinja2
import yaml

from sitegen import __version__
from sitegen.assets import package_dir
from sitegen.errors import BuildWarning
from sitegen.insights import to_json
from sitegen.insights.sections import TASKS_SCRIPT_FILE, TASKS_TABLE_FILE, brief
from sitegen.insights.tasks import TaskAnalysis
from sitegen.jsonio import clean, dumps, script_json
from sitegen.model.kept import JobEntry, RunEntry
from sitegen.model.pages import ComparePage, IndexPage, JobPage, RunPage
from sitegen.model.parsed import TrialSet
from sitegen.pages import compare_curves, compare_page
from sitegen.present import cards, charts, listing
from sitegen.present.chartsets import job_charts, run_charts
from sitegen.present.contexts import (
    CompareContext,
    IndexContext,
    JobContext,
    RunContext,
    RunsContext,
)
from sitegen.present.exports import series_csv, trials_csv
from sitegen.present.forkmap import fork_map
from sitegen.present.formatting import fmt_dur, fmt_num, fmt_pct, headline_sentence, md_to_html
from sitegen.present.report import job_report
from sitegen.present.sitefiles import copy_static, sitemap_xml

if TYPE_CHECKING:
    from sitegen.incremental import PageReuse
    from sitegen.options import BuildOptions
    from sitegen.write import SiteWriter

P = TypeVar("P", JobPage, RunPage)
Files = list[tuple[str, str | bytes]]  # (site path, content) of each file a page makes, in order

# Per-trial rows gzip'ed: CSV compresses ~5x, and at 40 k trials a job the table is most of a
# site's bytes (GitHub Pages allows 1 GB). mtime=0 keeps the bytes deterministic.
TRIALS_FILE = "trials.csv.gz"
CARD_FILE = "card.png"  # a published page's OpenGraph card, beside it


def _gzip(text: str) -> bytes:
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def _call(make: Callable[[], Files]) -> Files:
    return make()


def _script_data(name: str, value: object) -> str:
    """JSON data as a script that hands it to ``sitegen.data(name, value)`` (static/site.js).

    Browsers refuse ``fetch`` from ``file://`` pages but run ``<script src>``, and the site
    must work from a folder too; the JSON is the script's only argument.
    """
    return f"sitegen.data({script_json(name)}, {script_json(value)});\n"


class Renderer:
    """Writes every page of the site for one build."""

    def __init__(
        self,
        opts: BuildOptions,
        writer: SiteWriter,
        reuse: PageReuse | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        self.opts = opts
        self.writer = writer
        self.pages = 0
        self.reused = 0
        self.reuse = reuse  # which pages the last build left as they are (incremental.py)
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(package_dir("templates"))),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            # compiled templates kept beside the output: a rebuild skips compiling them
            bytecode_cache=jinja2.FileSystemBytecodeCache(str(cache_dir)) if cache_dir else None,
        )
        self.env.filters.update(
            num=fmt_num,
            pct=fmt_pct,
            dur=fmt_dur,
            urlq=lambda s: quote(str(s), safe=""),
            yaml=lambda d: yaml.safe_dump(d, sort_keys=False, allow_unicode=True, width=120),
        )
        self.env.globals.update(version=__version__, title=opts.title)
        self.base_url = opts.base_url.rstrip("/") + "/" if opts.base_url else None
        # published pages have an OpenGraph card, painted with the page's other files
        self.cards = bool(self.base_url and cards.available())
        self.urls: list[str] = []
        self.task_tables: Mapping[str, TaskAnalysis] = {}  # page url -> table (set by site())
        self.later: list[Callable[[], Files]] | None = None  # pages made together (site())

    # -- helpers ---------------------------------------------------------------------------------
    def page(self, template: str, rel_dir: str, ctx: Mapping[str, Any], meta: dict) -> None:
        self.writer.write(*self._html(template, rel_dir, ctx, meta))
        self.pages += 1
        self.urls.append(rel_dir)

    def _html(
        self, template: str, rel_dir: str, ctx: Mapping[str, Any], meta: dict
    ) -> tuple[str, str]:
        """A page's ``index.html``: its site path and text."""
        depth = rel_dir.count("/") if rel_dir else 0
        html = self.env.get_template(template).render(
            root="../" * depth, meta=self._meta(rel_dir, meta), **ctx
        )
        return (f"{rel_dir}index.html" if rel_dir else "index.html", html)

    def _meta(self, url_path: str, meta: dict) -> dict:
        m = {
            "title": meta["title"],
            "description": meta["description"],
            "canonical": None,
            "image": None,
        }
        if self.base_url:
            m["canonical"] = self.base_url + url_path
            if meta.get("image"):  # beside the page, or from the site's root ("/…")
                image = meta["image"]
                m["image"] = self.base_url + (image[1:] if image[0] == "/" else url_path + image)
        return m

    def chart_files(self, rel_dir: str, make: Callable[[P], dict], page: P) -> dict[str, dict]:
        """Build a page's charts. The page embeds them; its "Vega-Lite spec" links are made in
        the browser from those (static/site.js), so the site carries no second copy."""
        return {k: v for k, v in make(page).items() if v}

    def card(self, page: JobPage | RunPage, title: str) -> cards.Card | None:
        """The page's OpenGraph card (published sites only), painted with its files."""
        return cards.card_for(page, title, self.opts.title) if self.cards else None

    # -- the site --------------------------------------------------------------------------------
    def site(
        self,
        index: IndexPage,
        run_pages: list[tuple[RunPage | RunEntry, TrialSet | None]],
        job_pages: list[tuple[JobPage | JobEntry, TrialSet | None]],
        warnings: list[BuildWarning],
        task_tables: Mapping[str, TaskAnalysis] | None = None,
        compare: ComparePage | None = None,
    ) -> None:
        """Write every file of the site; pages come with the trial set they own (for CSVs)
        and, by page url, their full per-task tables (written beside the page). A page
        taken whole from the last build (``PageReuse.reuse``) is only counted."""
        self.task_tables = task_tables or {}
        self._site(index, run_pages, job_pages, warnings, compare)

    def _site(
        self,
        index: IndexPage,
        run_pages: list[tuple[RunPage | RunEntry, TrialSet | None]],
        job_pages: list[tuple[JobPage | JobEntry, TrialSet | None]],
        warnings: list[BuildWarning],
        compare: ComparePage | None,
    ) -> None:
        copy_static(self.writer)
        self.writer.write("data/index.json", dumps(index))
        self.writer.write("data/warnings.json", dumps(warnings))
        runs_by_id = {r.id: r for r, _ in run_pages}
        # a run whose trials are a job's (a flat folder's jobs, all in the run) links to that
        # job's table instead of carrying the same trials twice
        trial_owner = {id(t): p.url for p, t in job_pages if t is not None}
        job_urls = {p.id: p.url for p, _ in job_pages}
        self.later = []
        for page, trials in job_pages:
            if isinstance(page, JobEntry):
                self._carried(page)
                continue
            run = runs_by_id.get(page.run)
            assert not isinstance(run, RunEntry)  # a run kept whole keeps its jobs whole
            self.job(page, run, trials)
        for run, trials in run_pages:
            if isinstance(run, RunEntry):
                self._carried(run)
                continue
            owner = trial_owner.get(id(trials)) if trials is not None else None
            # a run of one job shows that job's card (same curve and figures): painted once
            one = run.jobs[0] if len(run.jobs) == 1 else None
            card = f"/{job_urls[one]}{CARD_FILE}" if self.cards and one in job_urls else None
            self.run(run, trials, owner, card)
        # The pages' files, made in one process per core (forkmap.py), written in page order.
        processes = self.opts.workers or os.cpu_count() or 1
        made, self.later = fork_map(_call, self.later, processes), None
        for files in made:
            for rel, data in files:
                self.writer.write(rel, data)
        self.index(index, warnings)
        if compare is None:  # (a build passes its own: with kept pages, this needs every page)
            compare = compare_page(
                [p for p, _ in run_pages if isinstance(p, RunPage)],
                [p for p, _ in job_pages if isinstance(p, JobPage)],
            )
        self.compare(compare)
        self.writer.write(".nojekyll", "")
        # GitHub Pages serves 404.html at any depth: only an absolute root works there.
        self.writer.write(
            "404.html",
            self.env.get_template("404.html").render(
                root=self.base_url or "",
                nav="404",
                meta=self._meta(
                    "404.html", {"title": "Not found", "description": "Page not found"}
                ),
            ),
        )
        if self.base_url:
            self.writer.write("sitemap.xml", sitemap_xml(self.base_url, self.urls))

    def index(self, index: IndexPage, warnings: list[BuildWarning]) -> None:
        """The index (the newest runs' rows; every row in :data:`listing.ROWS_FILE`) and the
        runs list (every run and job, no script needed): both stay under the page budget at
        team scale (docs/design.md, "Listings")."""
        t = index.totals
        desc = f"{t.runs} runs, {t.jobs} jobs, {t.steps} steps, {t.trials} trials"
        groups = listing.listing_groups(index)
        self.writer.write(listing.ROWS_FILE, _script_data("index-rows", listing.rows_data(groups)))
        ctx: IndexContext = {
            "index": index,
            "groups": listing.first_groups(groups, listing.INDEX_ROWS),
            "rows_file": listing.ROWS_FILE,
            "warnings": warnings[:500],
            "nav": "index",
        }
        self.page("index.html", "", ctx, {"title": self.opts.title, "description": desc})
        runs_ctx: RunsContext = {
            "index": index,
            "groups": groups,
            "jobs_by_run": index.jobs_by_run(),
            "nav": "runs",
        }
        self.page(
            "runs.html",
            "runs/",
            runs_ctx,
            {"title": f"Runs · {self.opts.title}", "description": desc},
        )

    def _carried(self, page: JobEntry | RunEntry) -> None:
        """A page the last build made, kept whole with its run (incremental.PageReuse.reuse)."""
        self.pages += 1
        self.reused += 1
        self.urls.append(page.url)

    def _make(self, rel: str, make: Callable[[], Files]) -> None:
        """Count page ``rel`` and write its files: now, or inside :meth:`site` with the other
        pages' (made in two processes when that is safe), in this same page order."""
        self.pages += 1
        self.urls.append(rel)
        if self.later is None:
            for name, data in make():
                self.writer.write(name, data)
        else:
            self.later.append(make)

    def _unchanged(self, key: str, parts: tuple, files: list[str]) -> bool:
        """Carry a page's files over from the last site when what it shows is the same."""
        if self.reuse is not None and self.reuse.carry_over(key, parts, files):
            self.pages += 1
            self.reused += 1
            self.urls.append(files[0])
            return True
        return False

    def job(self, page: JobPage, run: RunPage | None, trials: TrialSet | None) -> None:
        rel = page.url
        # what the job page shows of its run
        run_part = (
            {
                "id": run.id,
                "url": run.url,
                "jobs": run.jobs,
                "trials": run.trials,
                "trial_success_rate": run.trial_success_rate,
            }
            if run
            else None
        )
        if self._unchanged(
            f"job:{page.id}", (page, run_part, trials is not None), [rel, page.data]
        ):
            return
        card = self.card(page, f"Job {page.id}")
        self._make(rel, functools.partial(self._job_files, page, run, trials, card))

    def _job_files(
        self, page: JobPage, run: RunPage | None, trials: TrialSet | None, card: cards.Card | None
    ) -> Files:
        """Every file of a job page, in the order they are written."""
        rel = page.url
        files: Files = [(page.data, dumps(page))]
        specs = self.chart_files(rel, job_charts, page)
        files.append((f"{rel}report.md", job_report(page)))
        files.append((f"{rel}steps.csv", series_csv(page.series)))
        if trials is not None:
            files.append((f"{rel}{TRIALS_FILE}", _gzip(trials_csv(trials))))
        files += self.curves("job", page)
        files += self.task_files("job", page)
        shown = clean(page)  # non-finite numbers print as "–" on the page
        ctx: JobContext = {
            "job": shown,
            "run": clean(run) if run else None,
            "charts": specs,
            "charts_json": script_json(specs),
            "trials_href": TRIALS_FILE,
            "families": shown.families(),
            "timing_rows": shown.timing.rows(),
            "notes_html": md_to_html(page.notes_md) if page.notes_md else None,
            "nav": "job",
            "progression_rows": page.progression(),
        }
        meta = {
            "title": f"{page.id} · {page.status}",
            "description": headline_sentence(page.status, page.headline, page.trial_success_rate),
            "image": CARD_FILE if card else None,
        }
        files.append(self._html("job.html", rel, ctx, meta))
        if card:
            files.append((f"{rel}{CARD_FILE}", cards.paint(card)))
        return files

    def run(
        self,
        page: RunPage,
        trials: TrialSet | None,
        trials_owner: str | None = None,
        job_card: str | None = None,
    ) -> None:
        """A run page; ``trials_owner``: the url of the job whose trials table is the run's;
        ``job_card``: the site path (``/jobs/…/card.png``) of the card it shares with its job."""
        rel = page.url
        if self._unchanged(
            f"run:{page.id}", (page, trials is not None, trials_owner, job_card), [rel, page.data]
        ):
            return
        card = None if job_card else self.card(page, f"Run {page.id}")
        image = job_card or (CARD_FILE if card else None)
        self._make(rel, functools.partial(self._run_files, page, trials, trials_owner, image, card))

    def _run_files(
        self,
        page: RunPage,
        trials: TrialSet | None,
        trials_owner: str | None,
        image: str | None,
        card: cards.Card | None,
    ) -> Files:
        """Every file of a run page, in the order they are written."""
        rel = page.url
        files: Files = [(page.data, dumps(page))]
        specs = self.chart_files(rel, run_charts, page)
        files.append((f"{rel}steps.csv", series_csv(page.series)))
        if trials is not None and trials_owner is None:
            files.append((f"{rel}{TRIALS_FILE}", _gzip(trials_csv(trials))))
        files += self.curves("run", page)
        files += self.task_files("run", page)
        shown = clean(page)
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
        }
        meta = {
            "title": f"Run {page.id}",
            "description": headline_sentence(page.status, page.headline, page.trial_success_rate),
            "image": image,
        }
        files.append(self._html("run.html", rel, ctx, meta))
        if card:
            files.append((f"{rel}{CARD_FILE}", cards.paint(card)))
        return files

    def curves(self, kind: str, page: JobPage | RunPage) -> Files:
        """The page's comparison curves (:func:`sitegen.pages.compare_curves`) in its own
        folder, loaded by the comparison page only when picked (and carried over with the
        page when it is unchanged)."""
        data = _script_data(f"curves:{kind}:{page.id}", compare_curves(page))
        return [(f"{page.url}curves.js", data)]

    def task_files(self, kind: str, page: JobPage | RunPage) -> Files:
        """The page's full per-task table: ``tasks.json.gz`` (every row with its per-step
        cells, the download and what the browser fetches over HTTP), ``tasks.js`` (the rows
        the page does not hold, for ``file://``) and ``solved.js`` (the comparison page's
        task-level comparison). Loaded on demand, so a 40 k-trial job's page stays light."""
        table = self.task_tables.get(page.url)
        if page.tasks is None or table is None or page.tasks.table_dir != page.url:
            return []  # no trials, or the table is its job's (written with that page)
        full = {
            "schema": "sitegen/tasks@1",
            "kind": kind,
            "id": page.id,
            "attribution": table.attribution,
            "tasks": to_json(table.tasks),
        }
        files: Files = [(f"{page.url}{TASKS_TABLE_FILE}", _gzip(dumps(full).decode("utf-8")))]
        if page.tasks.tasks_total > len(page.tasks.rows):
            rows = [to_json(brief(r)) for r in table.tasks]
            cols = list(rows[0]) if rows else []
            files.append(
                (
                    f"{page.url}{TASKS_SCRIPT_FILE}",
                    _script_data(
                        f"tasks:{page.url}",
                        {"columns": cols, "rows": [[r[c] for c in cols] for r in rows]},
                    ),
                )
            )
        solved = {
            "tasks": [r.name for r in table.tasks],
            "trials": [r.trials for r in table.tasks],
            "successes": [r.successes for r in table.tasks],
        }
        files.append((f"{page.url}solved.js", _script_data(f"solved:{page.url}", solved)))
        return files

    def compare(self, page: ComparePage) -> None:
        """The comparison page: every run and job's headline (``compare/items.js``); each one's
        smoothed curves come from its own folder (:meth:`curves`) when it is picked."""
        spec = charts.overlay([])
        # loaded by a <script> tag, not embedded: the page stays small with hundreds of runs
        self.writer.write(
            "compare/items.js", _script_data("compare-items", listing.compare_items(page.items))
        )
        ctx: CompareContext = {
            "overlay_json": script_json(spec),
            "nav": "compare",
        }
        self.page(
            "compare.html",
            "compare/",
            ctx,
            {
                "title": f"Compare · {self.opts.title}",
                "description": "Compare runs and jobs side by side",
            },
        )
