"""``build()``: archive in, website out. Reads top to bottom.

discover → parse (logs and trials, in parallel) → assemble jobs and runs →
analyse into page objects → render pages and charts → write (atomic swap).
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sitegen import __version__, weight
from sitegen.assemble import assemble
from sitegen.assets import package_dir
from sitegen.discover import discover
from sitegen.errors import ArchiveError, BuildWarning
from sitegen.incremental import BuildCache, fingerprint, tree_signature
from sitegen.model.parsed import Discovery
from sitegen.options import BuildOptions
from sitegen.pages import index_page, job_page, job_row, read_notes, run_page, run_summary
from sitegen.parse import ParseStats, parse_all
from sitegen.redact import Redactor
from sitegen.write import MARKER, SiteWriter


@dataclass
class BuildReport:
    """What a build did: counts, warnings, time per stage."""

    jobs: int = 0
    runs: int = 0
    trials: int = 0
    pages: int = 0
    files: int = 0
    bytes: int = 0
    skipped: int = 0
    warnings: list[BuildWarning] = field(default_factory=list)
    stage_s: dict[str, float] = field(default_factory=dict)
    parse: ParseStats | None = None
    unchanged: bool = False  # nothing changed since the last build: the output was not touched
    pages_reused: int = 0

    def summary(self) -> str:
        """The closing line: what was built, what was reused, and the time per stage."""
        stages = ", ".join(f"{k} {v:.2f}s" for k, v in self.stage_s.items())
        p = self.parse
        parsed = (
            f"; logs parsed {p.logs_parsed} (resumed {p.logs_resumed}), cached {p.logs_cached}; "
            f"trial files read {p.trial_files_read}, cached {p.trial_files_cached}"
            if p
            else ""
        )
        what = (
            "nothing changed, site left as it was"
            if self.unchanged
            else f"built {self.pages} pages ({self.pages_reused} carried over)"
        )
        return (
            f"{what}: {self.runs} runs, {self.jobs} jobs, {self.trials} trials, "
            f"{len(self.warnings)} warnings, {self.skipped} skipped folders{parsed} ({stages})"
        )


# -- the build ---------------------------------------------------------------------------------


def build(opts: BuildOptions, progress: Callable[[str], None] | None = None) -> BuildReport:
    """Build the site for ``opts.archive`` into ``opts.out``; return what was done.

    Incremental: inputs whose fingerprint (path, size, mtime) did not change
    come from the cache; when nothing that a page shows changed, the output is
    not touched at all, and otherwise unchanged job and run pages are carried
    over from the previous site instead of being rendered again.
    """
    report = BuildReport()
    clock = time.perf_counter()

    def stage(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        report.stage_s[name] = report.stage_s.get(name, 0.0) + now - clock
        clock = now

    archive = opts.archive
    out = opts.out
    # The site, its staging folders and cache may lie inside the archive (``-o ARCHIVE/site``).
    disc = discover(archive, exclude=(out, out.parent / f".{out.name}.cache"))
    if not disc.jobs:
        raise ArchiveError(
            f"no jobs found in {archive}: expected *.out/*.log files or trace_jobs/ folders"
        )
    report.warnings.extend(disc.warnings)
    report.skipped = len(disc.skipped)
    stage("discover")

    # Check the output folder and take the build lock before any work.
    writer = SiteWriter(opts.out)
    try:
        cache = BuildCache(
            opts.out, {"redact_patterns": list(opts.redact_patterns)}, enabled=not opts.clean
        )
        logs, trials, parse_warnings, report.parse, fps = parse_all(disc, opts, cache, progress)
        report.warnings.extend(parse_warnings)
        stage("parse")

        now = opts.now if opts.now is not None else time.time()
        jobs, runs = assemble(disc, logs, trials, now)
        trials_total = sum(len(t.results) for t in trials.values())
        report.jobs, report.runs, report.trials = len(jobs), len(runs), trials_total
        signature = _signature(opts, disc, jobs, fps, len(report.warnings))
        previous = cache.manifest()
        if previous.get("signature") == signature and (opts.out / MARKER).exists():
            report.unchanged = True
            writer.abort()  # nothing to write: release the lock, leave the site as it is
            stage("analyse")
            return report

        redactor = Redactor(opts.redact_patterns)
        by_file: dict[str, list[BuildWarning]] = {}
        for w in report.warnings:
            by_file.setdefault(w.path, []).append(w)
        job_rows = {}
        job_pages = []
        for job in jobs:
            own = [w for path, ws in by_file.items() for w in ws if _belongs(path, job)]
            page = job_page(job, own, redactor, read_notes(archive, job.source.notes))
            job_pages.append((page, job.trials))
            job_rows[job.id] = job_row(page)
        run_pages = [(run_page(run, job_rows), run.trials) for run in runs]
        index = index_page(
            list(job_rows.values()),
            [run_summary(p) for p, _ in run_pages],
            disc,
            len(report.warnings),
            trials_total,
            opts.title,
        )
        stage("analyse")

        from sitegen.present.html import (
            Renderer,  # Altair is slow to import; a no-change rebuild never needs it
        )

        renderer = Renderer(opts, writer, previous.get("pages", {}), cache.subdir("jinja"))
        renderer.site(index, run_pages, job_pages, report.warnings)
        stage("render")
        writer.commit()
        cache.save_manifest({"signature": signature, "pages": renderer.signatures})
        stage("write")
        report.pages, report.pages_reused = renderer.pages, renderer.reused
        report.files, report.bytes = writer.files, writer.bytes
        too_big = weight.over_limit(writer.sizes, weight.PAGES_LIMIT_BYTES)
        if too_big:
            report.warnings.append(too_big)
        return report
    except BaseException:
        writer.abort()
        raise


def _signature(opts: BuildOptions, disc: Discovery, jobs: list, fps: dict, n_warnings: int) -> str:
    """Everything a page can show, hashed: if it matches the last build's, nothing needs writing."""
    h = hashlib.sha1()
    h.update(
        repr((__version__, opts.title, opts.base_url, opts.redact_patterns, n_warnings)).encode()
    )
    h.update(tree_signature(package_dir("templates"), package_dir("static")).encode())
    h.update(repr(disc.skipped).encode())
    for job in jobs:
        notes = fingerprint([opts.archive / job.source.notes]) if job.source.notes else None
        h.update(repr((job.id, job.source.log, job.status, job.run_id, notes)).encode())
    h.update(repr(sorted(fps.items(), key=lambda kv: kv[0])).encode())
    return h.hexdigest()


def _belongs(path: str, job) -> bool:
    """A warning concerns a job when it is about its log, infra logs or trials."""
    src = job.source
    if path == src.log or path in src.infra_logs:
        return True
    return bool(job.trials and (path == job.trials.path or path.startswith(job.trials.path + "/")))


def print_warnings(report: BuildReport, stream=None, limit: int = 200) -> None:
    """Each warning as ``warning: path:line: message`` (the first ``limit`` of them)."""
    stream = stream or sys.stderr
    for w in report.warnings[:limit]:
        print(f"warning: {w}", file=stream)
    if len(report.warnings) > limit:
        print(
            f"warning: … {len(report.warnings) - limit} more (see data/warnings.json)", file=stream
        )


__all__ = ["BuildOptions", "BuildReport", "build", "__version__"]
