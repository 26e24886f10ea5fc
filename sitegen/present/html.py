"""Render page objects to HTML (Jinja, autoescape, strict), with their charts and downloads.

Writes through a :class:`~sitegen.write.site.SiteWriter` and computes no figure: every
number comes from a page object (:mod:`sitegen.pages.objects`).
"""

from __future__ import annotations

import functools
import operator
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import jinja2
import msgspec

from sitegen import __version__
from sitegen.errors import BuildWarning
from sitegen.jsonio import dumps, script_json
from sitegen.model.parsed import TrialSet
from sitegen.pages.forkmap import fork_map
from sitegen.pages.kept import JobEntry, RunEntry
from sitegen.pages.objects import ComparePage, IndexPage, JobPage, RunPage
from sitegen.present import cards, charts, listing, transcripts
from sitegen.present.assets import package_dir
from sitegen.present.contexts import CompareContext, IndexContext, RunsContext
from sitegen.present.formatting import (
    dur_unit,
    fmt_breakable,
    fmt_count,
    fmt_dur,
    fmt_dur_in,
    fmt_num,
    fmt_pct,
    fmt_score,
    fmt_size,
)
from sitegen.present.pagefiles import (
    Files,
    PageFiles,
    Prepared,
    card_address,
    content,
    script_data,
)
from sitegen.present.sitefiles import copy_static, sitemap_xml
from sitegen.present.yamltext import to_yaml
from sitegen.redact import SECRETS_ADVICE, SECRETS_HIDDEN

if TYPE_CHECKING:
    from sitegen.insights.tasks import TaskAnalysis
    from sitegen.options import BuildOptions
    from sitegen.present.cards import Card
    from sitegen.write.site import SiteWriter


# A page's files made ahead (Renderer.premake), with the arguments they were made with.
Premade = tuple[tuple, Files]
# Whether a page may stay as the last build wrote it: (its key, what it shows, its files) ->
# True when those files are kept as they are (the page is then not made).
CarryOver = Callable[[str, tuple, list[str]], bool]
# Whether a page shows what the last build's showed: (its key, what it shows) -> bool.
ShowsTheSame = Callable[[str, tuple], bool]


def _job_shows(page: JobPage, run: RunPage | None, trials: TrialSet | None) -> tuple:
    """What a job page shows, its signature's parts: the page, what it shows of its run."""
    shown_of_run = ("id", "url", "jobs", "trials", "trial_success_rate")
    run_part = {f: getattr(run, f) for f in shown_of_run} if run else None
    return (page, run_part, trials is not None)


class Renderer:
    """Writes every page of the site for one build.

    A page is made unless ``carry_over`` says its files stay as they are; a page is not
    made ahead (:meth:`premake`) when ``shows_the_same`` says it shows what it showed last
    time. ``static_kept``: the package's static files did not change since the last build.
    """

    def __init__(
        self,
        opts: BuildOptions,
        writer: SiteWriter,
        cache_dir: Path | None,
        carry_over: CarryOver,
        shows_the_same: ShowsTheSame,
        static_kept: bool,
    ) -> None:
        self.opts = opts
        self.writer = writer
        self.pages = 0
        self.reused = 0
        self.carry_over = carry_over
        self.shows_the_same = shows_the_same
        self.static_kept = static_kept
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(package_dir("templates"))),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            # compiled templates kept in the user's cache: a rebuild skips compiling them
            bytecode_cache=jinja2.FileSystemBytecodeCache(str(cache_dir)) if cache_dir else None,
        )
        self.env.filters.update(
            num=fmt_num,
            score=fmt_score,
            count=fmt_count,
            pct=fmt_pct,
            dur=fmt_dur,
            dur_unit=dur_unit,
            dur_in=fmt_dur_in,
            size=fmt_size,
            breakable=fmt_breakable,
            urlq=lambda s: quote(str(s), safe=""),
            yaml=to_yaml,  # (not PyYAML: see present/yamltext.py)
        )
        self.env.globals.update(
            version=__version__,
            title=opts.title,
            tx_links=transcripts.task_links,  # (a page's own, or its run's: from the root)
            finding_links=transcripts.finding_links,
            exception_links=transcripts.exception_links,
        )
        self.base_url = opts.base_url.rstrip("/") + "/" if opts.base_url else None
        # published pages have an OpenGraph card, painted with the page's other files
        self.cards = bool(self.base_url) and cards.available()
        self.urls: list[str] = []
        self.files = PageFiles(self._html, {})  # job and run pages' files (task tables: site())
        self.later: list[Callable[[], Files] | Files] | None = None  # pages made in site()
        self.premade: dict[str, Premade] = {}  # by page url: made where its run was analysed

    # -- helpers ---------------------------------------------------------------------------------
    def page(self, template: str, rel_dir: str, ctx: Mapping[str, Any], meta: dict) -> None:
        self.writer.write(*self._html(template, rel_dir, ctx, meta))
        self._count(rel_dir)

    def _count(self, url: str, reused: bool = False) -> None:
        self.pages += 1
        self.reused += reused
        self.urls.append(url)

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

    def card(self, page: JobPage | RunPage, title: str) -> Card | None:
        """The page's OpenGraph card (published sites only), painted with its files."""
        return cards.card_for(page, title, self.opts.title) if self.cards else None

    def job_card(self, run: RunPage, job_url: str) -> str | None:
        """The address of the card a run of one job shows: its job's (published sites only),
        versioned by what it shows, which is what the run shows (the same curve and figures).
        """
        return card_address(self.card(run, f"Job {run.jobs[0]}"), f"/{job_url}")

    # -- the site --------------------------------------------------------------------------------
    def site(
        self,
        index: IndexPage,
        run_pages: list[tuple[RunPage | RunEntry, TrialSet | None]],
        job_pages: list[tuple[JobPage | JobEntry, TrialSet | None]],
        warnings: list[BuildWarning],
        task_tables: Mapping[str, TaskAnalysis],
        compare: ComparePage,
    ) -> None:
        """Write every file of the site; pages come with the trial set they own (for CSVs)
        and, by page url, their full per-task tables (written beside the page). A page
        carried over with its run (not a :class:`JobPage` or :class:`RunPage`) is only counted."""
        self.files.task_tables = task_tables
        # kept as they are when the package's and still as written (copying reads ~0.9 MB)
        if not (self.static_kept and self.writer.carry_over(["static/"])):
            copy_static(self.writer, self.opts.transcripts_wanted() > 0)
        # the index counts the warnings it lists: those of the transcripts too, which come
        # in after the index's rows were made
        index = msgspec.structs.replace(
            index, totals=msgspec.structs.replace(index.totals, warnings=len(warnings))
        )
        self.writer.write("data/index.json", dumps(index))
        self.writer.write("data/warnings.json", dumps(warnings))
        runs_by_id = {r.id: r for r, _ in run_pages}
        # a run whose trials are a job's (a flat folder's jobs, all in the run) links to that
        # job's table instead of carrying the same trials twice
        trial_owner = {id(t): p.url for p, t in job_pages if t is not None}
        job_urls = {p.id: p.url for p, _ in job_pages}
        self.later = []
        for page, trials in job_pages:
            if isinstance(page, JobEntry):  # carried over with its run
                self._count(page.url, reused=True)
                continue
            run = runs_by_id.get(page.run)
            assert not isinstance(run, RunEntry)  # a run kept whole keeps its jobs whole
            self.job(page, run, trials)
        for run, trials in run_pages:
            if isinstance(run, RunEntry):
                self._count(run.url, reused=True)
                continue
            owner = trial_owner.get(id(trials)) if trials is not None else None
            # a run of one job shows that job's card (same curve and figures): painted once
            one = run.jobs[0] if len(run.jobs) == 1 else None
            card = self.job_card(run, job_urls[one]) if one in job_urls else None
            self.run(run, trials, owner, card)
        # The pages' files not made already (premake), made in one process per core
        # (forkmap.py), all written in page order.
        processes = self.opts.workers or os.cpu_count() or 1
        later, self.later = self.later, None
        made = iter(fork_map(operator.call, [m for m in later if callable(m)], processes))
        for m in later:
            for rel, data in next(made) if callable(m) else m:
                self.writer.write(rel, content(data))
        self.premade = {}
        self.index(index, warnings)
        self.compare(compare, index)
        self.writer.write(".nojekyll", "")
        # GitHub Pages serves 404.html at any depth: only an absolute root works there.
        meta = self._meta("404.html", {"title": "Not found", "description": "Page not found"})
        not_found = self.env.get_template("404.html")
        self.writer.write(
            "404.html", not_found.render(root=self.base_url or "", nav="404", meta=meta)
        )
        if self.base_url:
            self.writer.write("sitemap.xml", sitemap_xml(self.base_url, self.urls))

    def index(self, index: IndexPage, warnings: list[BuildWarning]) -> None:
        """The index (the newest runs' rows; every row in :data:`listing.ROWS_FILE`) and the
        runs list (every run and job, no script needed): both stay under the page budget at
        team scale (docs/design.md, "Listings")."""
        t = index.totals
        counts = (t.runs, t.jobs, t.steps, t.trials)
        desc = ", ".join(map(fmt_count, counts, ("run", "job", "step", "trial")))
        unit = listing.step_time_unit(index)
        groups = listing.listing_groups(index, unit)
        rows = listing.rows_data(groups, unit)
        self.writer.write(listing.ROWS_FILE, script_data("index-rows", rows))
        ctx: IndexContext = {
            "index": index,
            "groups": listing.first_groups(groups, listing.INDEX_ROWS),
            "step_unit": unit,
            "rows_file": listing.ROWS_FILE,
            "secrets": [_kinds_hidden(w) for w in warnings if w.message.startswith(SECRETS_HIDDEN)],
            "warnings": [w for w in warnings if not w.message.startswith(SECRETS_HIDDEN)][:500],
            "nav": "index",
        }
        self.page("index.html", "", ctx, {"title": self.opts.title, "description": desc})
        runs_ctx: RunsContext = {
            "index": index,
            "groups": groups,
            "jobs_by_run": index.jobs_by_run(),
            "nav": "runs",
        }
        meta = {"title": f"Runs · {self.opts.title}", "description": desc}
        self.page("runs.html", "runs/", runs_ctx, meta)

    def _make(self, rel: str, make: Callable[[], Files] | Files) -> None:
        """Count page ``rel`` and write its files (``make``: made already, or what makes them):
        now, or inside :meth:`site` with the other pages' (made in one process per core when
        that is safe), in this same page order."""
        self._count(rel)
        if self.later is None:
            for name, data in make() if callable(make) else make:
                self.writer.write(name, content(data))
        else:
            self.later.append(make)

    def _unchanged(self, key: str, parts: tuple, files: list[str]) -> bool:
        """Carry a page's files over from the last site when what it shows is the same."""
        if self.carry_over(key, parts, files):
            self._count(files[0], reused=True)
            return True
        return False

    def _job_parts(
        self, page: JobPage, run: RunPage | None, trials: TrialSet | None
    ) -> tuple[tuple, tuple]:
        """What a job page's files depend on besides the page as it was analysed (its run's
        page by id; whether bulk data was left out of the site since: write/budget.py), and
        the arguments that make them (:meth:`PageFiles.job`)."""
        card = self.card(page, f"Job {page.id}")
        left_out = (page.left_out, run.left_out if run else None)
        args = ("job", run.id if run else None, trials is not None, card is not None, *left_out)
        return args, (page, run, trials, card)

    def _run_parts(
        self, page: RunPage, trials: TrialSet | None, owner: str | None, job_card: str | None
    ) -> tuple[tuple, tuple]:
        """The same for a run page (:meth:`PageFiles.run`), which shows its one job's card
        (``job_card``) or its own."""
        card = None if job_card else self.card(page, f"Run {page.id}")
        image = job_card or card_address(card)
        args = ("run", trials is not None, owner, image, card is not None, page.left_out)
        return args, (page, trials, owner, image, card)

    def job(self, page: JobPage, run: RunPage | None, trials: TrialSet | None) -> None:
        rel = page.url
        if self._unchanged(f"job:{page.id}", _job_shows(page, run, trials), [rel, page.data]):
            return
        args, parts = self._job_parts(page, run, trials)
        self._make(rel, self._take_premade(rel, args) or functools.partial(self.files.job, *parts))

    def run(
        self, page: RunPage, trials: TrialSet | None, trials_owner: str | None, job_card: str | None
    ) -> None:
        """A run page; ``trials_owner``: the url of the job whose trials table is the run's;
        ``job_card``: the site path (``/jobs/…/card.png?v=…``) of the card it shares with its
        job."""
        rel = page.url
        if self._unchanged(
            f"run:{page.id}", (page, trials is not None, trials_owner, job_card), [rel, page.data]
        ):
            return
        args, parts = self._run_parts(page, trials, trials_owner, job_card)
        self._make(rel, self._take_premade(rel, args) or functools.partial(self.files.run, *parts))

    def premake(
        self,
        run: RunPage,
        jobs: list[tuple[JobPage, TrialSet | None]],
        trials: TrialSet | None,
        tables: Mapping[str, TaskAnalysis],
        prepared: Prepared | None = None,
    ) -> dict[str, Premade]:
        """The files of an analysed run's pages, made where it was analysed (a forked child of
        :func:`~sitegen.commands.analyse.site_pages`), each with the arguments it was made
        with; :meth:`job` and :meth:`run` take them only when their own arguments are the
        same. ``prepared``: what was made apart from the analysis
        (:class:`~sitegen.present.pagefiles.Prepared`)."""
        files = PageFiles(self._html, tables, prepared)
        out: dict[str, Premade] = {}
        for page, own in jobs:
            # a job of a chain whose later job moved on: its page most likely stays as it was
            # (carried over by job()), so it is not made ahead for nothing
            if self.shows_the_same(f"job:{page.id}", _job_shows(page, run, own)):
                continue
            args, parts = self._job_parts(page, run, own)
            out[page.url] = (args, files.job(*parts))
        # as _site: the run's trials shown by the job that owns the same set, and a run of one
        # job shows that job's card
        owner = next((p.url for p, own in jobs if own is not None and own is trials), None)
        job_card = self.job_card(run, jobs[0][0].url) if len(jobs) == 1 else None
        args, parts = self._run_parts(run, trials, owner, job_card)
        out[run.url] = (args, files.run(*parts))
        return out

    def _take_premade(self, rel: str, args: tuple) -> Files | None:
        made = self.premade.pop(rel, None)
        return made[1] if made is not None and made[0] == args else None

    def compare(self, page: ComparePage, index: IndexPage) -> None:
        """The comparison page: every run and job's figures (``compare/items.js``, listed in
        the index's order); each one's smoothed curves come from its own folder
        (:meth:`PageFiles.curves`) when it is picked."""
        spec = charts.overlay([])
        # loaded by a <script> tag, not embedded: the page stays small with hundreds of runs
        items = listing.compare_items(page.items, listing.picker_chains(index))
        self.writer.write("compare/items.js", script_data("compare-items", items))
        ctx: CompareContext = {"overlay_json": script_json(spec), "nav": "compare"}
        title = f"Compare · {self.opts.title}"
        meta = {"title": title, "description": "Compare runs and jobs side by side"}
        self.page("compare.html", "compare/", ctx, meta)


def _kinds_hidden(warning: BuildWarning) -> BuildWarning:
    """A secrets warning as the index lists it, under a heading that already says what they
    are and what to do: the kinds and lines alone."""
    kinds = warning.message.removeprefix(f"{SECRETS_HIDDEN}: ").removesuffix(f"; {SECRETS_ADVICE}")
    return BuildWarning(warning.path, warning.line, kinds)
