"""``build()``: archive in, website out. Reads top to bottom.

discover → parse (logs and trials, in parallel) → assemble jobs and runs →
analyse into page objects → render pages and charts → write (atomic swap).
"""

from __future__ import annotations

import os
import sys
import time
import tomllib
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__
from .assemble import assemble
from .discover import discover
from .errors import ArchiveError, BuildWarning, ConfigError
from .logparse import parse_log
from .model import Discovery, ParsedLog, TrialSet
from .pages import index_page, job_page, job_summary, read_notes, run_page, run_summary
from .redact import Redactor
from .render import Renderer
from .trials import merge_trial_sets, parse_trials
from .write import SiteWriter

CONFIG_KEYS = {"title", "base_url", "redact_patterns", "workers"}
TRIAL_SHARD_MIN = 2000  # trials directories larger than this are read in parallel shards


@dataclass(frozen=True)
class BuildOptions:
    archive: Path
    out: Path = Path("site")
    title: str = "SkyRL run archive"
    base_url: str | None = None
    workers: int = 0  # 0: the CPU count
    redact_patterns: tuple[str, ...] = ()
    strict: bool = False
    now: float | None = None  # for tests: the time "running" is judged against


@dataclass
class BuildReport:
    jobs: int = 0
    runs: int = 0
    trials: int = 0
    pages: int = 0
    files: int = 0
    bytes: int = 0
    skipped: int = 0
    warnings: list[BuildWarning] = field(default_factory=list)
    stage_s: dict[str, float] = field(default_factory=dict)

    def summary(self) -> str:
        stages = ", ".join(f"{k} {v:.2f}s" for k, v in self.stage_s.items())
        return (
            f"built {self.pages} pages: {self.runs} runs, {self.jobs} jobs, {self.trials} trials, "
            f"{len(self.warnings)} warnings, {self.skipped} skipped folders ({stages})"
        )


def load_config(path: Path | None) -> dict:
    """Read a ``sitegen.toml``; unknown keys are an error naming the key."""
    if path is None:
        return {}
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config {path} is not valid TOML: {exc}") from None
    unknown = set(data) - CONFIG_KEYS
    if unknown:
        raise ConfigError(
            f"config {path}: unknown key {sorted(unknown)[0]!r} (known: {', '.join(sorted(CONFIG_KEYS))})"
        )
    pats = data.get("redact_patterns", [])
    if not isinstance(pats, list) or not all(isinstance(p, str) for p in pats):
        raise ConfigError(f"config {path}: redact_patterns must be a list of regular expressions")
    import re

    for p in pats:
        try:
            re.compile(p)
        except re.error as exc:
            raise ConfigError(f"config {path}: redact pattern {p!r} is invalid: {exc}") from None
    return data


# -- parse stage -------------------------------------------------------------------------------


def _parse_log_task(
    archive: str, rel: str, infra: tuple[str, ...], patterns: tuple[str, ...]
) -> ParsedLog | BuildWarning:
    root = Path(archive)
    try:
        return parse_log(root / rel, rel, Redactor(patterns), tuple((root / x, x) for x in infra))
    except OSError as exc:
        return BuildWarning(rel, None, f"cannot read log: {exc.strerror}")


def _parse_trials_task(archive: str, rel: str, shard: tuple[int, int] | None) -> TrialSet:
    root = Path(archive)
    return parse_trials(root / rel, root, shard)


def parse_all(
    disc: Discovery, opts: BuildOptions, progress: Callable[[str], None] | None = None
) -> tuple[dict[str, ParsedLog | None], dict[str, TrialSet], list[BuildWarning]]:
    """Parse every log and trials directory, across ``opts.workers`` processes."""
    archive = str(opts.archive)
    workers = opts.workers or os.cpu_count() or 1
    warnings: list[BuildWarning] = []
    log_jobs = [j for j in disc.jobs if j.log]
    trial_tasks: list[tuple[str, str, tuple[int, int] | None]] = []
    for group, dirs in disc.trials_dirs.items():
        for d in dirs:
            n = _count_dirs(opts.archive / d)
            shards = min(workers, max(1, n // TRIAL_SHARD_MIN)) if workers > 1 else 1
            for i in range(shards):
                trial_tasks.append((group, d, (i, shards) if shards > 1 else None))
    logs: dict[str, ParsedLog | None] = {j.id: None for j in disc.jobs}
    trial_parts: dict[str, dict[str, list[TrialSet]]] = {}
    if workers > 1 and len(log_jobs) + len(trial_tasks) > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            lf = {
                j.id: pool.submit(
                    _parse_log_task, archive, j.log, j.infra_logs, opts.redact_patterns
                )
                for j in log_jobs
            }
            tf = [(g, d, pool.submit(_parse_trials_task, archive, d, s)) for g, d, s in trial_tasks]
            for jid, fut in lf.items():
                _take_log(logs, warnings, jid, fut.result(), progress)
            for g, d, fut in tf:
                trial_parts.setdefault(g, {}).setdefault(d, []).append(fut.result())
    else:
        for j in log_jobs:
            _take_log(
                logs,
                warnings,
                j.id,
                _parse_log_task(archive, j.log, j.infra_logs, opts.redact_patterns),
                progress,
            )  # type: ignore[arg-type]
        for g, d, s in trial_tasks:
            trial_parts.setdefault(g, {}).setdefault(d, []).append(
                _parse_trials_task(archive, d, s)
            )
    trials: dict[str, TrialSet] = {}
    for group, by_dir in trial_parts.items():
        sets = [merge_trial_sets(parts) for _, parts in sorted(by_dir.items())]
        merged = sets[0] if len(sets) == 1 else merge_trial_sets(sets)
        trials[group] = merged
        warnings.extend(merged.warnings)
        if progress:
            progress(f"trials {merged.path}: {len(merged.results)}")
    return logs, trials, warnings


def _take_log(
    logs: dict, warnings: list, jid: str, res: ParsedLog | BuildWarning, progress
) -> None:
    if isinstance(res, BuildWarning):
        warnings.append(res)
        return
    logs[jid] = res
    warnings.extend(res.warnings)
    if progress:
        progress(f"log {res.path}: {len(res.blocks)} steps")


def _count_dirs(path: Path) -> int:
    try:
        with os.scandir(path) as it:
            return sum(1 for e in it if e.is_dir(follow_symlinks=False))
    except OSError:
        return 0


# -- the build ---------------------------------------------------------------------------------


def build(opts: BuildOptions, progress: Callable[[str], None] | None = None) -> BuildReport:
    """Build the site for ``opts.archive`` into ``opts.out``; return what was done."""
    report = BuildReport()
    clock = time.perf_counter()

    def stage(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        report.stage_s[name] = report.stage_s.get(name, 0.0) + now - clock
        clock = now

    archive = opts.archive
    disc = discover(archive)
    if not disc.jobs:
        raise ArchiveError(
            f"no jobs found in {archive}: expected *.out/*.log files or trace_jobs/ folders"
        )
    report.warnings.extend(disc.warnings)
    report.skipped = len(disc.skipped)
    stage("discover")

    logs, trials, parse_warnings = parse_all(disc, opts, progress)
    report.warnings.extend(parse_warnings)
    stage("parse")

    now = opts.now if opts.now is not None else time.time()
    jobs, runs = assemble(disc, logs, trials, now)
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
        row = job_summary(job)
        row["trial_success_rate"] = page["trial_success_rate"]
        row["trial_error_rate"] = page["trial_error_rate"]
        job_rows[job.id] = row
    run_pages = [(run_page(run, job_rows), run.trials) for run in runs]
    trials_total = sum(len(t.results) for t in trials.values())
    index = index_page(
        list(job_rows.values()),
        [run_summary(p) for p, _ in run_pages],
        disc,
        len(report.warnings),
        trials_total,
        opts.title,
    )
    stage("analyse")

    writer = SiteWriter(opts.out)
    try:
        renderer = Renderer(opts, writer)
        renderer.site(index, run_pages, job_pages, report.warnings)
        stage("render")
        writer.commit()
    except BaseException:
        writer.abort()
        raise
    stage("write")
    report.jobs, report.runs, report.trials = len(jobs), len(runs), trials_total
    report.pages = renderer.pages
    report.files, report.bytes = writer.files, writer.bytes
    return report


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


__all__ = ["BuildOptions", "BuildReport", "build", "load_config", "__version__"]
