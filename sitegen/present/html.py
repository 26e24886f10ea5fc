"""Render page objects to HTML (Jinja, autoescape, strict), charts, CSV, report.md.

The renderer writes through a :class:`~sitegen.write.SiteWriter`; it never
parses. Templates and static files are package data.
"""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import jinja2
import yaml

from sitegen import __version__
from sitegen.analyse import (
    REWARD,
    families,
    flatten_tree,
    pass_at_key,
)
from sitegen.assets import package_dir
from sitegen.errors import BuildWarning
from sitegen.incremental import tree_signature
from sitegen.jsonio import clean, dumps, script_json
from sitegen.model.parsed import TrialSet
from sitegen.model.vocabulary import exception_kind
from sitegen.options import BuildOptions
from sitegen.present import charts
from sitegen.present.chartsets import job_charts, run_charts
from sitegen.present.exports import headline_text, progression_rows, series_csv, trials_csv
from sitegen.present.formatting import fmt_dur, fmt_num, fmt_pct, md_to_html
from sitegen.present.report import job_report

if TYPE_CHECKING:
    from sitegen.write import SiteWriter

# Per-trial rows gzip'ed: CSV compresses ~5x, and at 40 k trials a job the table is most of a
# site's bytes (GitHub Pages allows 1 GB). mtime=0 keeps the bytes deterministic.
TRIALS_FILE = "trials.csv.gz"


def _gzip(text: str) -> bytes:
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


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
        previous: dict[str, str] | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        self.opts = opts
        self.writer = writer
        self.pages = 0
        self.reused = 0
        self.previous = previous or {}  # page key -> signature, from the last build
        self.signatures: dict[str, str] = {}
        self.assets = tree_signature(package_dir("templates"), package_dir("static"))
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
        self.env.globals.update(
            version=__version__,
            title=opts.title,
            sparkline=charts.sparkline,
            exception_kind=exception_kind,
        )
        self.base_url = opts.base_url.rstrip("/") + "/" if opts.base_url else None
        self.urls: list[str] = []

    # -- helpers ---------------------------------------------------------------------------------
    def page(self, template: str, rel_dir: str, ctx: dict, meta: dict) -> None:
        depth = rel_dir.count("/") if rel_dir else 0
        root = "../" * depth
        url_path = rel_dir
        html = self.env.get_template(template).render(
            root=root, meta=self._meta(url_path, meta), **ctx
        )
        self.writer.write(f"{rel_dir}index.html" if rel_dir else "index.html", html)
        self.pages += 1
        self.urls.append(url_path)

    def _meta(self, url_path: str, meta: dict) -> dict:
        m = {
            "title": meta["title"],
            "description": meta["description"],
            "canonical": None,
            "image": None,
        }
        if self.base_url:
            m["canonical"] = self.base_url + url_path
            if meta.get("image"):
                m["image"] = self.base_url + url_path + meta["image"]
        return m

    def chart_files(
        self, rel_dir: str, make: Callable[[dict], dict[str, dict | None]], page: dict
    ) -> dict[str, dict]:
        """Build a page's charts. The page embeds them; its "Vega-Lite spec" links are made in
        the browser from those (static/site.js), so the site carries no second copy."""
        return {k: v for k, v in make(page).items() if v}

    # -- the site --------------------------------------------------------------------------------
    def site(
        self,
        index: dict,
        run_pages: list[tuple[dict, TrialSet | None]],
        job_pages: list[tuple[dict, TrialSet | None]],
        warnings: list[BuildWarning],
    ) -> None:
        """Write every file of the site; pages come with the trial set they own (for CSVs)."""
        self.static()
        self.writer.write("data/index.json", dumps(index))
        self.writer.write("data/warnings.json", dumps([w.to_json() for w in warnings]))
        runs_by_id = {r["id"]: r for r, _ in run_pages}
        # a run whose trials are a job's (a flat folder's jobs, all in the run) links to that
        # job's table instead of carrying the same trials twice
        trial_owner = {id(t): p["url"] for p, t in job_pages if t is not None}
        for page, trials in job_pages:
            self.job(page, runs_by_id.get(page["run"]), trials)
        for page, trials in run_pages:
            owner = trial_owner.get(id(trials)) if trials is not None else None
            self.run(page, trials, owner)
        self.index(index, warnings)
        self.compare(index, [p for p, _ in run_pages], [p for p, _ in job_pages])
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
            urls = "".join(f"  <url><loc>{self.base_url}{u}</loc></url>\n" for u in self.urls)
            self.writer.write(
                "sitemap.xml",
                '<?xml version="1.0" encoding="UTF-8"?>\n'
                '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
                + urls
                + "</urlset>\n",
            )

    def static(self) -> None:
        root = package_dir("static")
        for path in sorted(root.rglob("*")):
            if path.is_file():
                self.writer.copy("static/" + path.relative_to(root).as_posix(), path)

    def index(self, index: dict, warnings: list[BuildWarning]) -> None:
        runs = index["runs"]
        jobs_by_run: dict[str, list[dict]] = {}
        for j in index["jobs"]:
            jobs_by_run.setdefault(j["run"], []).append(j)
        t = index["totals"]
        desc = f"{t['runs']} runs, {t['jobs']} jobs, {t['steps']} steps, {t['trials']} trials"
        self.page(
            "index.html",
            "",
            {
                "index": index,
                "runs": runs,
                "jobs_by_run": jobs_by_run,
                "warnings": [w.to_json() for w in warnings[:500]],
                "nav": "index",
            },
            {"title": self.opts.title, "description": desc},
        )
        self.page(
            "runs.html",
            "runs/",
            {"index": index, "runs": runs, "jobs_by_run": jobs_by_run, "nav": "runs"},
            {"title": f"Runs · {self.opts.title}", "description": desc},
        )

    def _unchanged(self, key: str, parts: tuple, files: list[str]) -> bool:
        """Carry a page's files over from the last site when what it shows is the same."""
        h = hashlib.sha1(self.assets.encode())
        h.update(repr((self.opts.title, self.opts.base_url)).encode())
        for part in parts:
            h.update(dumps(part))
        sig = self.signatures[key] = h.hexdigest()
        if self.previous.get(key) == sig and self.writer.carry_over(files):
            self.pages += 1
            self.reused += 1
            self.urls.append(files[0])
            return True
        return False

    def job(self, page: dict, run: dict | None, trials: TrialSet | None) -> None:
        rel = page["url"]
        run_part = (
            {k: run.get(k) for k in ("id", "url", "jobs", "trials", "trial_success_rate")}
            if run
            else None
        )
        if self._unchanged(
            f"job:{page['id']}", (page, run_part, trials is not None), [rel, page["data"]]
        ):
            return
        self.writer.write(page["data"], dumps(page))
        specs = self.chart_files(rel, job_charts, page)
        self.writer.write(f"{rel}report.md", job_report(page))
        self.writer.write(f"{rel}steps.csv", series_csv(page["series"]))
        if trials is not None:
            self.writer.write(f"{rel}{TRIALS_FILE}", _gzip(trials_csv(trials)))
        self.curves("job", page)
        image = self.card(rel, page, f"Job {page['id']}") if self.base_url else None
        ctx = {
            "job": clean(page),
            "run": clean(run) if run else None,
            "charts": specs,
            "charts_json": script_json(specs),
            "trials_href": TRIALS_FILE,
            "families": families(clean(page["metrics"])),
            "timing_rows": flatten_tree(clean(page["timing"])["tree"]),
            "notes_html": md_to_html(page["notes_md"]) if page["notes_md"] else None,
            "pass_key": pass_at_key(page["metrics"]),
            "nav": "job",
            "progression_rows": progression_rows(page),
        }
        self.page(
            "job.html",
            rel,
            ctx,
            {
                "title": f"{page['id']} · {page['status']}",
                "description": headline_text(page),
                "image": image,
            },
        )

    def run(self, page: dict, trials: TrialSet | None, trials_owner: str | None = None) -> None:
        """A run page; ``trials_owner``: the url of the job whose trials table is the run's."""
        rel = page["url"]
        if self._unchanged(
            f"run:{page['id']}", (page, trials is not None, trials_owner), [rel, page["data"]]
        ):
            return
        self.writer.write(page["data"], dumps(page))
        specs = self.chart_files(rel, run_charts, page)
        self.writer.write(f"{rel}steps.csv", series_csv(page["series"]))
        if trials is not None and trials_owner is None:
            self.writer.write(f"{rel}{TRIALS_FILE}", _gzip(trials_csv(trials)))
        self.curves("run", page)
        image = self.card(rel, page, f"Run {page['id']}") if self.base_url else None
        ctx = {
            "run": clean(page),
            "charts": specs,
            "charts_json": script_json(specs),
            "trials_href": "../" * rel.count("/") + trials_owner + TRIALS_FILE
            if trials_owner
            else TRIALS_FILE,
            "nav": "run",
            "timing_rows": flatten_tree(clean(page["timing"])["tree"]),
            "families": families(clean(page["metrics"])),
        }
        self.page(
            "run.html",
            rel,
            ctx,
            {"title": f"Run {page['id']}", "description": headline_text(page), "image": image},
        )

    def curves(self, kind: str, page: dict) -> None:
        """The page's comparison curves in its own folder, loaded by the comparison page only
        when picked (and carried over with the page when it is unchanged)."""
        curves = charts.overlay_curves(page["series"], compare_curves(page["metrics"]))
        self.writer.write(
            f"{page['url']}curves.js", _script_data(f"curves:{kind}:{page['id']}", curves)
        )

    def compare(self, index: dict, run_pages: list[dict], job_pages: list[dict]) -> None:
        """The comparison page: every run and job's headline (``compare/items.js``); each one's
        smoothed curves come from its own folder (:meth:`curves`) when it is picked."""
        items = []
        for kind, pages in (("run", run_pages), ("job", job_pages)):
            for p in pages:
                items.append(
                    {
                        "kind": kind,
                        "id": p["id"],
                        "url": p["url"],
                        "status": p["status"],
                        "headline": clean(p["headline"]),
                        "trial_success_rate": clean(p.get("trial_success_rate")),
                        "trial_error_rate": clean(p.get("trial_error_rate")),
                    }
                )
        spec = charts.overlay([])
        # loaded by a <script> tag, not embedded: the page stays small with hundreds of runs
        self.writer.write("compare/items.js", _script_data("compare-items", items))
        self.page(
            "compare.html",
            "compare/",
            {
                "overlay_json": script_json(spec),
                "nav": "compare",
            },
            {
                "title": f"Compare · {self.opts.title}",
                "description": "Compare runs and jobs side by side",
            },
        )

    def card(self, rel: str, page: dict, title: str) -> str | None:
        """Render the 1200×630 OpenGraph card PNG; None when vl-convert is unavailable."""
        try:
            import vl_convert as vlc
        except ImportError:  # pragma: no cover - a dependency, but the site still builds without it
            return None
        h = page["headline"]
        figures = [
            ("status", str(page["status"])),
            (
                "steps",
                f"{h['first_step']}–{h['last_step']}" if h["first_step"] is not None else "–",
            ),
            ("reward mean", fmt_num(h["reward_mean"])),
            ("reward last", fmt_num(h["reward_last"])),
            (
                f"pass@{h['pass_at_k']}" if h["pass_at_k"] else "pass@k",
                fmt_num(h["pass_at_k_mean"]),
            ),
            ("step time", fmt_dur(h["step_time_mean_s"])),
        ]
        spec = charts.card(title, self.opts.title, figures, clean(page["series"]), REWARD)
        png = vlc.vegalite_to_png(spec, scale=1)
        png = _fit_png(png)
        self.writer.write(f"{rel}card.png", png)
        return "card.png"


COMPARE_METRICS = {
    "reward": REWARD,
    "step time (s)": "timing/step",
    "generation wait (s)": "timing/wait_for_generation_buffer",
    "avg tokens": "generate/avg_num_tokens",
    "staleness": "async/staleness_mean",
}


def compare_curves(metrics: dict) -> dict[str, str]:
    """The metrics the comparison page can overlay, for a page that has them (pass@k included)."""
    out = {label: key for label, key in COMPARE_METRICS.items() if key in metrics}
    pk = pass_at_key(metrics)
    if pk:
        out["pass@k"] = pk
    return out


def _fit_png(png: bytes) -> bytes:
    """Pad/crop the rendered card to exactly 1200×630 (what chat unfurlers expect)."""
    try:
        import vl_convert as vlc
    except ImportError:  # pragma: no cover
        return png
    import base64
    import struct

    w, h = struct.unpack(">II", png[16:24])
    if (w, h) == (1200, 630):
        return png
    uri = "data:image/png;base64," + base64.b64encode(png).decode()
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="1200" height="630">'
        f'<rect width="1200" height="630" fill="#ffffff"/>'
        f'<image x="0" y="0" width="{min(w, 1200)}" height="{min(h, 630)}" preserveAspectRatio="xMinYMin slice" xlink:href="{uri}"/></svg>'
    )
    return vlc.svg_to_png(svg, scale=1)
