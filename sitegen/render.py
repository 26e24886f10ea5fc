"""Render page objects to HTML (Jinja, autoescape, strict), charts, CSV, report.md.

The renderer writes through a :class:`~sitegen.write.SiteWriter`; it never
parses. Templates and static files are package data.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import quote

import jinja2
import markdown
import nh3
import yaml
from altair.utils.schemapi import debug_mode as alt_debug_mode

from . import __version__, charts
from .analyse import (
    GEN_WAIT,
    REWARD,
    STALENESS,
    STEP_TIME,
    TOKENS,
    families,
    flatten_tree,
    pass_at_key,
)
from .assets import package_dir
from .cache import tree_signature
from .errors import BuildWarning
from .jsonio import clean, dumps, script_json
from .model import TrialSet
from .report import job_report
from .trials import exception_kind

if TYPE_CHECKING:
    from .build import BuildOptions
    from .write import SiteWriter


# -- formatting filters ---------------------------------------------------------------------------


def fmt_num(v: object, digits: int = 4) -> str:
    """A number for a table: ints with separators, floats with ``digits`` decimals.

    With the default ``digits`` an integral float (a count, a step) prints as an integer.
    """
    if isinstance(v, bool) or not isinstance(v, int | float):
        return "–"
    if not math.isfinite(v):
        return "nan" if math.isnan(v) else ("∞" if v > 0 else "−∞")
    if isinstance(v, int) or (
        float(v).is_integer() and abs(v) < 1e12 and digits == 4 and abs(v) >= 1
    ):
        return f"{int(v):,}"
    a = abs(v)
    if a != 0 and (a < 10**-digits or a >= 1e9):
        return f"{v:.{max(2, digits - 1)}e}"
    return f"{v:,.{digits}f}"


def fmt_pct(v: object, digits: int = 1) -> str:
    if not isinstance(v, int | float) or not math.isfinite(v):
        return "–"
    return f"{100 * v:.{digits}f}%"


def fmt_dur(v: object) -> str:
    if not isinstance(v, int | float) or not math.isfinite(v):
        return "–"
    s = float(v)
    if s < 120:
        return f"{s:,.1f} s"
    if s < 7200:
        return f"{s / 60:,.1f} min"
    return f"{s / 3600:,.2f} h"


# Images are left out: a notes.md's pictures are not copied into the site.
NOTES_TAGS = set(nh3.ALLOWED_TAGS) - {"img"}


def md_to_html(text: str) -> str:
    """Markdown notes to sanitized HTML: no raw HTML, only http(s)/mailto links."""
    html = markdown.markdown(text, extensions=["tables", "fenced_code"], output_format="html")
    return nh3.clean(
        html,
        tags=NOTES_TAGS,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )


class Renderer:
    """Writes every page of the site for one build."""

    def __init__(
        self, opts: BuildOptions, writer: SiteWriter, previous: dict[str, str] | None = None
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
        """Build a page's charts and write each as a standalone ``charts/<name>.vl.json``.

        Altair's debug mode validates every object as it is made; we validate each
        finished spec once instead (:func:`sitegen.charts.validate`).
        """
        with alt_debug_mode(False):
            specs = make(page)
        kept = {k: v for k, v in specs.items() if v}
        for name, spec in kept.items():
            self.writer.write(f"{rel_dir}charts/{name}.vl.json", dumps(spec, indent=True))
        return kept

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
        for page, trials in job_pages:
            self.job(page, runs_by_id.get(page["run"]), trials)
        for page, trials in run_pages:
            self.run(page, trials)
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
            self.writer.write(f"{rel}trials.csv", trials_csv(trials))
        image = self.card(rel, page, f"Job {page['id']}") if self.base_url else None
        ctx = {
            "job": clean(page),
            "run": clean(run) if run else None,
            "charts": specs,
            "charts_json": script_json(specs),
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

    def run(self, page: dict, trials: TrialSet | None) -> None:
        rel = page["url"]
        if self._unchanged(f"run:{page['id']}", (page, trials is not None), [rel, page["data"]]):
            return
        self.writer.write(page["data"], dumps(page))
        specs = self.chart_files(rel, run_charts, page)
        self.writer.write(f"{rel}steps.csv", series_csv(page["series"]))
        if trials is not None:
            self.writer.write(f"{rel}trials.csv", trials_csv(trials))
        image = self.card(rel, page, f"Run {page['id']}") if self.base_url else None
        ctx = {
            "run": clean(page),
            "charts": specs,
            "charts_json": script_json(specs),
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

    def compare(self, index: dict, run_pages: list[dict], job_pages: list[dict]) -> None:
        items = []
        for kind, pages in (("run", run_pages), ("job", job_pages)):
            for p in pages:
                h = p["headline"]
                pts = charts.downsample(
                    p["series"].get("step", []), p["series"].get(REWARD, []) or [], 300
                )
                sm = charts.smooth([x["y"] for x in pts])
                items.append(
                    {
                        "kind": kind,
                        "id": p["id"],
                        "url": p["url"],
                        "status": p["status"],
                        "headline": clean(h),
                        "trial_success_rate": clean(p.get("trial_success_rate")),
                        "trial_error_rate": clean(p.get("trial_error_rate")),
                        "curve": [
                            [x["x"], round(s, 5) if s is not None else None]
                            for x, s in zip(pts, sm, strict=True)
                        ],
                    }
                )
        with alt_debug_mode(False):
            spec = charts.overlay([])
        self.writer.write("compare/charts/overlay.vl.json", dumps(spec, indent=True))
        self.page(
            "compare.html",
            "compare/",
            {
                "items_json": script_json(items),
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
        with alt_debug_mode(False):
            spec = charts.card(title, self.opts.title, figures, clean(page["series"]), REWARD)
        png = vlc.vegalite_to_png(spec, scale=1)
        png = _fit_png(png)
        self.writer.write(f"{rel}card.png", png)
        return "card.png"


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


# -- chart sets ----------------------------------------------------------------------------------


def job_charts(page: dict) -> dict[str, dict | None]:
    s = page["series"]
    pk = pass_at_key(page["metrics"])
    out: dict[str, dict | None] = {
        "reward": charts.progression(
            s, {REWARD: "reward", **({pk: pk.split("/")[-1].replace("avg_", "")} if pk else {})}
        ),
        "step_time": charts.lines(
            s, {STEP_TIME: "step time (s)", GEN_WAIT: "generation wait (s)"}, y_title="seconds"
        ),
        "timing_stack": timing_stack(page),
        "tokens": charts.lines(s, {TOKENS: "avg generated tokens"}, y_title="tokens"),
        "staleness": charts.lines(
            s,
            {STALENESS: "staleness mean", "async/staleness_max": "staleness max"},
            y_title="steps behind",
        ),
    }
    v = page.get("vllm")
    if v and v["samples"]:
        tl = dict(v["timeline"])
        tl["minute"] = [t / 60 for t in tl["t_s"]]
        out["vllm_throughput"] = vllm_throughput(tl)
        out["vllm_queue"] = charts.lines(
            tl,
            {"running_mean": "running", "waiting_mean": "waiting"},
            x="minute",
            x_title="minutes since start",
            y_title="requests per engine",
        )
        out["vllm_cache"] = charts.lines(
            tl,
            {"kv_cache_pct_mean": "KV cache %", "prefix_hit_pct_mean": "prefix hit %"},
            x="minute",
            x_title="minutes since start",
            y_title="%",
        )
    bs = page.get("batch_series") or {"step": []}
    rows = [
        {"x": step, "part": t, "value": bs[t][i]}
        for t in bs
        if t not in ("step", "failed", "masked")
        for i, step in enumerate(bs["step"])
        if bs[t][i]
    ]
    out["batch_errors"] = charts.stacked_bars(rows, "step", "errors")
    tr = page.get("trials")
    if tr:
        out.update(trial_charts(tr))
    return out


def trial_charts(tr: dict) -> dict[str, dict | None]:
    exc_rows = [
        {"label": k, "value": n, "kind": tr["exception_kind_of"][k]}
        for k, n in tr["exceptions"].items()
    ]
    hist = [{"label": k, "value": n} for k, n in tr["turn_histogram"].items()]
    return {
        "trial_exceptions": charts.bars(
            exc_rows, "exception", "trials", "kind", charts.KIND_COLOURS, horizontal=True
        ),
        "turns_hist": charts.bars(hist, "turns", "trials"),
    }


def vllm_throughput(tl: dict) -> dict | None:
    return (
        charts.lines(
            {"minute": tl["minute"], "gen": tl["gen_throughput_mean"]},
            {"gen": "generation tok/s per engine"},
            x="minute",
            x_title="minutes since start",
            y_title="tokens/s",
        )
        if tl["minute"]
        else None
    )


def timing_stack(page: dict) -> dict | None:
    """Stacked leaf timers per step: together they make up ``timing/step``."""
    s = page["series"]
    tree = page["timing"]["tree"]
    if not tree:
        return None
    leaves: list[tuple[str, list[str]]] = []  # (label, [key, minus keys...])

    def walk(node: dict, parent: str | None) -> None:
        kids = node["children"]
        if not kids:
            leaves.append(
                (
                    node["name"] if node["name"] != "(rest)" else f"{parent} (rest)",
                    [node["name"], parent or ""],
                )
            )
        for k in kids:
            walk(k, node["name"])

    walk(tree, None)
    rows = []
    steps = s["step"]
    stride = max(1, len(steps) // 300)
    for i in range(0, len(steps), stride):
        step = steps[i]
        for label, (name, parent) in leaves:
            if name == "(rest)":
                parent_v = s.get(f"timing/{parent}", [None] * len(steps))[i]
                node = _find(tree, parent)
                kids = (
                    [c["name"] for c in node["children"] if c["name"] != "(rest)"] if node else []
                )
                if parent_v is None:
                    continue
                v = parent_v - sum(
                    (s.get(f"timing/{k}", [None] * len(steps))[i] or 0) for k in kids
                )
            else:
                v = s.get(f"timing/{name}", [None] * len(steps))[i]
            if isinstance(v, int | float) and math.isfinite(v):
                rows.append({"x": step, "part": label, "value": max(0.0, v)})
    return charts.stacked_bars(rows, "step", "seconds")


def _find(node: dict, name: str) -> dict | None:
    if node["name"] == name:
        return node
    for c in node["children"]:
        f = _find(c, name)
        if f:
            return f
    return None


def run_charts(page: dict) -> dict[str, dict | None]:
    s = page["series"]
    pk = pass_at_key(page["metrics"])
    rules = [
        {"x": r["cut_at"] + 0.5, "label": f"{r['job']} resumed from step {r['cut_at']}"}
        for r in page["restarts"]
    ]
    marks = [
        {"x": d["step"], "y": None, "label": f"step {d['step']} discarded"}
        for d in page["discarded"]
    ]
    del marks  # discarded values are not in the stitched series; the table lists them
    out: dict[str, dict | None] = {
        "reward": charts.progression(
            s,
            {REWARD: "reward", **({pk: pk.split("/")[-1].replace("avg_", "")} if pk else {})},
            rules=rules,
        ),
        "step_time": charts.lines(
            s, {STEP_TIME: "step time (s)", GEN_WAIT: "generation wait (s)"}, y_title="seconds"
        ),
        "timing_stack": timing_stack(page),
    }
    if page.get("trials"):
        out.update(trial_charts(page["trials"]))
    return out


# -- text outputs ----------------------------------------------------------------------------------


def headline_text(page: dict) -> str:
    """One sentence with the headline numbers (OpenGraph description)."""
    h = page["headline"]
    parts = [f"{page['status']}"]
    if h["first_step"] is not None:
        parts.append(f"steps {h['first_step']}–{h['last_step']}")
    if h["reward_mean"] is not None:
        parts.append(
            f"reward mean {fmt_num(h['reward_mean'])} (max {fmt_num(h['reward_max'])}, last {fmt_num(h['reward_last'])})"
        )
    if h["pass_at_k_mean"] is not None:
        parts.append(f"pass@{h['pass_at_k']} {fmt_num(h['pass_at_k_mean'])}")
    if h["step_time_mean_s"] is not None:
        parts.append(f"step time {fmt_dur(h['step_time_mean_s'])}")
    if page.get("trial_success_rate") is not None:
        parts.append(f"trial success {fmt_pct(page['trial_success_rate'])}")
    return ", ".join(parts)


def progression_rows(page: dict) -> list[dict]:
    """The reference report's per-step table: reward, pass@k, KL, loss, step time, generation wait."""
    s = page["series"]
    pk = pass_at_key(page["metrics"])
    cols = {
        "reward": REWARD,
        "pass": pk,
        "kl": "policy/policy_kl",
        "loss": "policy/policy_loss",
        "step_time": STEP_TIME,
        "gen_wait": GEN_WAIT,
    }
    rows = []
    for i, step in enumerate(s["step"]):
        row = {"step": step}
        for k, key in cols.items():
            col = s.get(key) if key else None
            row[k] = col[i] if col else None
        rows.append(row)
    return rows


def series_csv(series: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    names = list(series)
    w.writerow(names)
    n = len(series.get("step", []))
    for i in range(n):
        w.writerow(
            [
                ""
                if (v := series[k][i]) is None or (isinstance(v, float) and not math.isfinite(v))
                else v
                for k in names
            ]
        )
    return buf.getvalue()


def _csv_safe(v: object) -> object:
    """Neutralise spreadsheet formulas in text taken from inputs (CSV injection)."""
    if isinstance(v, str) and v[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + v
    return v


def trials_csv(trials: TrialSet) -> str:
    """One row per training trial."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
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
        ]
    )
    for r in trials.results:
        outcome = "" if r.reward is None else ("success" if r.reward > 0 else "failure")
        w.writerow(
            [
                _csv_safe(r.name),
                _csv_safe(r.task),
                "" if r.reward is None else r.reward,
                outcome,
                r.exception or "",
                exception_kind(r.exception),
                "" if r.turns is None else r.turns,
                "" if r.input_tokens is None else r.input_tokens,
                "" if r.output_tokens is None else r.output_tokens,
                "" if r.duration_s is None else r.duration_s,
            ]
        )
    return buf.getvalue()
