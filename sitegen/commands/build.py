"""``build()``: archive in, website out. Reads top to bottom.

discover → up to date? → parse (logs and trials, in parallel) → assemble jobs and runs →
analyse into page objects → render pages and charts → publish.

The stages know nothing of the last build: this module asks the build cache for each
stage's result by its inputs' fingerprint, runs the stage for what it does not hold, and
hands the cache what came out.
"""

from __future__ import annotations

import contextlib
import gc
import os
import stat
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sitegen import SYNTH_TRUTH, __version__, collect_less
from sitegen.assemble.runs import assemble, warnings_by_job
from sitegen.cache.files import SUMMARY_COUNTS, FileRecord, LastBuild, Summary
from sitegen.cache.reuse import PageReuse
from sitegen.cache.sources import Sources, assets_signature, fingerprint
from sitegen.cache.state import CACHE_MARKER, BuildState, compiled_templates_dir
from sitegen.commands.analyse import Notes, SitePages, site_pages
from sitegen.discover.archive import MARKER, discover, drop_non_jobs
from sitegen.errors import ArchiveError, BuildWarning
from sitegen.model.parsed import Discovery, Job, ParsedLog, Run, TrialSet
from sitegen.options import BuildOptions, check_output
from sitegen.progress import archive_counts, counted
from sitegen.redact import SECRETS_HIDDEN, Redactor, SecretTally, build_secrets, secrets_token
from sitegen.write import budget as site_budget
from sitegen.write import weight
from sitegen.write.lock import OutputLock
from sitegen.write.site import SitePaths, SiteWriter, disk_full_is_an_error

if TYPE_CHECKING:
    from sitegen.pages.kept import RunRecord
    from sitegen.present.html import Renderer
    from sitegen.present.transcripts import TranscriptMaker

# The parse, page and render stages are imported by the helpers that run them: a build that
# finds nothing changed (the common case under `serve` and in CI) imports none of them.


@dataclass
class ParseStats:
    """What the parse read and what it took from the build cache. Trial files are
    ``result.json`` files (a trial archive's members each one), trials or not; read and cached
    add up to the same total on every build of the same archive."""

    logs_parsed: int = 0
    logs_resumed: int = 0
    logs_cached: int = 0
    trial_files_read: int = 0
    trial_files_cached: int = 0


@dataclass
class Parsed:
    """What the parse hands on: logs by job id, trial sets by group, their warnings, counts."""

    logs: dict[str, ParsedLog | None]
    trials: dict[str, TrialSet] = field(default_factory=dict)
    warnings: list[BuildWarning] = field(default_factory=list)
    stats: ParseStats = field(default_factory=ParseStats)
    trial_count: int = 0  # training trials (those of sets the cache gave as summaries too)


@dataclass
class BuildReport:
    """What a build did: counts, warnings, time per stage."""

    jobs: int = 0
    runs: int = 0
    trials: int = 0  # training trials (with a result.json read as a trial)
    eval_trials: int = 0
    unreadable: int = 0  # result.json files that could not be read as a trial
    job_level: int = 0  # job-level result.json files in trial folders (not trials)
    missing: int = 0  # trial folders without a result.json
    logs: int = 0  # logs read now or taken from the last build
    trial_files: int = 0  # result.json files, read now or taken from the last build
    pages: int = 0
    files: int = 0
    bytes: int = 0
    skipped: int = 0
    warnings: list[BuildWarning] = field(default_factory=list)
    cache_warnings: list[str] = field(default_factory=list)  # told on stderr, not published
    # the last build's warnings: printed then, summed up in one line now (warning_lines)
    reported_before: frozenset[BuildWarning] = frozenset()
    left_out: str | None = None  # the jobs whose bulk data the site budget left out (summary)
    synthetic: bool = False  # the archive holds SYNTH_TRUTH: its damage is planted on purpose
    stage_s: dict[str, float] = field(default_factory=dict)
    parse: ParseStats | None = None  # None when nothing was parsed (nothing changed)
    unchanged: bool = False  # nothing changed since the last build: the output was not touched
    pages_reused: int = 0
    runs_kept: int = 0  # runs neither analysed nor rendered again (their inputs unchanged)
    # what the next build compares its inputs with (``serve``'s watcher does too); None: failed
    record: LastBuild | None = None
    _clock: float = field(default_factory=time.perf_counter, repr=False)

    def stage(self, name: str) -> None:
        """Close the stage that just ran: its time goes under ``name``."""
        now = time.perf_counter()
        self.stage_s[name] = self.stage_s.get(name, 0.0) + now - self._clock
        self._clock = now

    def headline(self) -> str:
        """What the site shows: jobs, runs, trials of each kind, warnings, skipped inputs."""
        what = (
            "nothing changed since the last build"
            if self.unchanged
            else f"built {counted(self.pages, 'page')} ({self.pages_reused} carried over)"
        )
        line = f"{what}: {archive_counts(vars(self))}, {counted(len(self.warnings), 'warning')}, "
        line += counted(self.skipped, "skipped input")
        secrets = sum(w.message.startswith(SECRETS_HIDDEN) for w in self.warnings)
        if secrets:  # each of these inputs holds secrets: someone must rotate them
            line += (
                f"; secrets hidden in {counted(secrets, 'input')}: rotate them (see the warnings)"
            )
        return line

    def inputs(self) -> str:
        """What was read and what came from the last build; the time per stage."""
        stages = ", ".join(f"{k} {v:.2f}s" for k, v in self.stage_s.items())
        logs, files = counted(self.logs, "log"), counted(self.trial_files, "result.json file")
        p = self.parse
        if p is None:
            return f"inputs: {logs} and {files}, all unchanged (none read); {stages}"
        resumed = f", {p.logs_resumed} of them resumed" if p.logs_resumed else ""
        return (
            f"inputs: {logs} ({p.logs_parsed} read{resumed}; {p.logs_cached} from the last build), "
            f"{files} ({p.trial_files_read} read, {p.trial_files_cached} from the last build); "
            f"{stages}"
        )

    def summary(self) -> str:
        """The closing lines as one: :meth:`headline` and :meth:`inputs`."""
        return f"{self.headline()}; {self.inputs()}"

    def strict_failure(self) -> str:
        """Why ``--strict`` fails the build: its warnings, those already reported included."""
        old = sum(1 for w in self.warnings if w in self.reported_before)
        some = "all" if old == len(self.warnings) else f"{old} of them"
        again = f" ({some} already reported by the last build)" if old else ""
        return f"{counted(len(self.warnings), 'warning')}{again}"


def build(opts: BuildOptions, progress: Callable[[str], None] | None = None) -> BuildReport:
    """Build the site for ``opts.archive`` into ``opts.out``; return what was done.

    Unchanged inputs come from the build cache; when nothing changed and the site is intact,
    the output is not touched; otherwise only the pages whose data changed are rendered."""
    report = BuildReport()
    check_output(opts.out, opts.archive)  # before the lock and the cache are made beside it
    site = SitePaths.of(opts.out)
    with OutputLock(site), disk_full_is_an_error(), _fewer_collections(), _one_blas_thread():
        disc = _discover(opts, report)
        report.stage("discover")
        cache = BuildState(site.cache, opts)
        report.reported_before = cache.reported_before()
        report.synthetic = _synthetic(opts)
        now = _now(opts)  # one clock for the whole build: what "running" is judged against
        sources = Sources.take(opts, disc, _assets(opts), now)  # stats only, before any parse
        report.unchanged = cache.site_is_current(sources, site.out)
        report.stage("check")
        if report.unchanged:
            return _as_last_reported(report, cache)
        parsed = _parse(disc, opts, cache, progress)
        disc = _jobs_only(disc, parsed, report, opts.archive)
        report.stage("parse")
        jobs, runs = assemble(disc, parsed.logs, parsed.trials, now)
        writer = SiteWriter(site, cache.files)
        reuse = PageReuse(cache, sources, writer)
        _count(report, parsed, jobs, runs)
        notes = _read_notes(opts, disc)
        report.warnings.extend(_notes_secrets(opts, notes))
        budget = site_budget.SiteBudget(opts, jobs, runs, cache.files, site.out)
        kept = _keep(jobs, runs, report, reuse, budget)
        made = [run for run in runs if kept[run.id][1] is None]
        if cache.complete(parsed.logs, parsed.trials, made, disc):  # (summaries made whole)
            jobs, runs = assemble(disc, parsed.logs, parsed.trials, now)
        renderer = _renderer(opts, writer, reuse)
        notes_html = _notes_html(opts, runs, kept, notes, cache)
        maker = _transcripts(opts, disc, cache, site, budget.left_out)
        # (each analysed run's page files are made with its analysis: Renderer.premake)
        pages = site_pages(
            opts,
            disc,
            jobs,
            runs,
            report.warnings,
            report.trials,
            kept,
            Notes(notes, notes_html),
            renderer.premake,
            maker,
        )
        budget.mark(pages)
        if maker is not None:
            report.warnings.extend(maker.publish(pages.transcripts, writer))
            report.warnings.extend(maker.finish(pages.transcripts, writer))
        report.stage("analyse")
        report.cache_warnings.extend(cache.warnings)  # every cache file read by now
        _render(renderer, writer, reuse, pages, report)
        shared = maker.shared_of if maker is not None else {}
        if budget.fit(writer, kept, shared):  # still over: the oldest jobs made now, made again
            budget.mark(pages)
            _render(_renderer(opts, writer, reuse), writer, reuse, pages, report)
        report.left_out = budget.summary()
        pages.made = budget.rekey(pages.made)
        report.stage("render")
        files = writer.publish()
        _keep_stamps(cache, maker, pages.transcripts, files)
        report.files, report.bytes = writer.files, writer.bytes
        too_big = weight.over_limit(writer.sizes, weight.PAGES_LIMIT_BYTES)
        if too_big:
            report.warnings.append(too_big)
        cache.keep_run_records(reuse.records_for_next(pages.made))
        report.record = _record(sources, parsed, cache, reuse, files, report)
        cache.save_site(report.record)
        report.stage("write")
    return report


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """Run the cyclic garbage collector less often during the build: its millions of
    containers are freed by reference counting or live to the end. The old thresholds come
    back after (``serve`` builds again in the same process)."""
    old = gc.get_threshold()
    collect_less()
    try:
        yield
    finally:
        gc.set_threshold(*old)


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """Have OpenBLAS start no threads when the analysis imports numpy (the statistics never
    use BLAS); a number the user set stays, and the environment is restored after."""
    old = os.environ.get(_BLAS_THREADS)
    os.environ.setdefault(_BLAS_THREADS, "1")
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(_BLAS_THREADS, None)


_BLAS_THREADS = "OPENBLAS_NUM_THREADS"


def _synthetic(opts: BuildOptions) -> bool:
    """Whether ``sitegen synth`` wrote the archive: its damage is planted on purpose."""
    try:
        return stat.S_ISREG(os.lstat(opts.archive / SYNTH_TRUTH).st_mode)
    except OSError:
        return False


def find_jobs(opts: BuildOptions, redactor: Redactor) -> Discovery:
    """The archive's jobs as a build reads them (and ``serve`` watches them): the site, its
    cache and lock passed over where they lie inside the archive (``-o ARCHIVE/site``), and
    any other site or cache sitegen wrote, known by its manifest or marker."""
    own = SitePaths.of(opts.out).own()
    return discover(opts.archive, own, redactor, markers=(MARKER, CACHE_MARKER))


def _discover(opts: BuildOptions, report: BuildReport) -> Discovery:
    disc = find_jobs(opts, Redactor(opts.redact_patterns))
    if not disc.jobs:
        raise ArchiveError(
            f"no jobs found in {opts.archive}: expected *.out/*.log files or trace_jobs/ folders"
        )
    report.warnings.extend(disc.warnings)
    report.skipped = len(disc.skipped)
    return disc


def _jobs_only(disc: Discovery, parsed: Parsed, report: BuildReport, archive: Path) -> Discovery:
    """Discovery and the parse without the logs that are not a job's (skipped instead)."""
    disc, dropped = drop_non_jobs(disc, parsed.logs)
    if not dropped:
        return disc
    if not disc.jobs:
        n = len(dropped)
        names = ", ".join(sorted(dropped)[:3]) + (", …" if n > 3 else "")
        raise ArchiveError(
            f"no jobs found in {archive}: "
            + (f"its log {names} holds" if n == 1 else f"its {n} logs ({names}) hold")
            + " nothing of SkyRL, Ray, vLLM or a SLURM status"
        )
    parsed.logs = {j.id: parsed.logs.get(j.id) if j.log else None for j in disc.jobs}
    parsed.warnings = [w for w in parsed.warnings if w.path not in dropped]
    report.skipped = len(disc.skipped)
    return disc


def _parse(
    disc: Discovery, opts: BuildOptions, cache: BuildState, progress: Callable[[str], None] | None
) -> Parsed:
    """Every log and trials folder: what the cache holds for their stats, the rest read in
    parallel and kept in the cache as it comes (a grown log read on from where it stopped)."""
    from sitegen.cache.logs import read_log
    from sitegen.read.parse import (
        FolderRead,
        LogTask,
        merge_trial_sets,
        read_all,
        result_files,
        warnings_in_archive_order,
    )

    out = Parsed(logs={j.id: None for j in disc.jobs})
    stats = out.stats
    tasks = []
    for j in disc.jobs:
        if j.log is None:
            continue
        # disc.real: the file on disk of a path shown with a secret hashed (discover/archive.py)
        fp = fingerprint([opts.archive / disc.real(x) for x in (j.log, *j.infra_logs)])
        log, resume = cache.cached_log(j.log, fp)
        if log is not None:
            out.logs[j.id] = log
            stats.logs_cached += 1
            continue
        stats.logs_resumed += resume is not None
        tasks.append(LogTask(j, fp, resume))
    folders = [d for dirs in disc.trials_dirs.values() for d in dirs]
    if progress is not None and hasattr(progress, "total"):
        progress.total = len(tasks) + len(folders)
    sets: dict[str, TrialSet] = {}
    for d in folders:  # a folder whose watch holds is neither listed nor read
        hit = cache.unchanged_trials(d)
        if hit is not None:
            sets[d], results = hit
            stats.trial_files_cached += result_files(sets[d], results)
            out.trial_count += results
            if progress:
                progress(f"trials {d}: {results} (unchanged)")
    old: dict[str, dict] = {}

    def known(d: str) -> dict:
        old[d] = cache.trial_outcomes(d)
        return old[d]

    unreadable: dict[str, BuildWarning] = {}
    to_read = [d for d in folders if d not in sets]
    for done in read_all(disc, opts, tasks, to_read, known, progress, read_log):
        if isinstance(done, FolderRead):
            cache.keep_trials(done, old.pop(done.folder))
            sets[done.folder] = done.trials
            stats.trial_files_cached += done.taken
            stats.trial_files_read += result_files(done.trials) - done.taken
            out.trial_count += len(done.trials.results)
        elif done.log is not None:
            out.logs[done.task.job.id] = done.log
            stats.logs_parsed += 1
            cache.keep_log(done.log.path, done.extra)
        elif done.warning is not None:
            unreadable[done.task.job.id] = done.warning
    out.trials = {g: merge_trial_sets([sets[d] for d in ds]) for g, ds in disc.trials_dirs.items()}
    out.warnings = warnings_in_archive_order(disc, out.logs, out.trials, unreadable)
    return out


def _now(opts: BuildOptions) -> float:
    return opts.now if opts.now is not None else time.time()


def inputs_changed(opts: BuildOptions, disc: Discovery, last: LastBuild | None) -> str | None:
    """None when every input of ``disc`` is as the build that left ``last`` saw it (by stats,
    as a build asks: ``serve``'s watcher); else a token that changes with any change."""
    return Sources.take(opts, disc, _assets(opts), _now(opts)).changed_since(last)


def _count(report: BuildReport, parsed: Parsed, jobs: list[Job], runs: list[Run]) -> None:
    report.warnings.extend(parsed.warnings)
    report.parse = stats = parsed.stats
    report.jobs, report.runs = len(jobs), len(runs)
    report.logs = stats.logs_parsed + stats.logs_cached
    report.trial_files = stats.trial_files_read + stats.trial_files_cached
    sets = parsed.trials.values()
    report.eval_trials = sum(t.eval_count for t in sets)
    report.unreadable = sum(t.malformed for t in sets)
    report.job_level = sum(t.job_level for t in sets)
    report.missing = sum(t.missing for t in sets)
    report.trials = parsed.trial_count


def _read_notes(opts: BuildOptions, disc: Discovery) -> dict[str, str]:
    """Each job's ``notes.md`` that can be read, by its path as discovery shows it."""
    from sitegen.pages.make import read_notes

    rels = {j.notes for j in disc.jobs if j.notes}
    texts = {rel: read_notes(opts.archive, disc.real(rel)) for rel in rels}
    return {rel: text for rel, text in texts.items() if text is not None}


def _notes_secrets(opts: BuildOptions, notes: dict[str, str]) -> list[BuildWarning]:
    """A warning for each ``notes.md`` that holds secrets (hidden where its page shows it)."""
    redactor = Redactor(opts.redact_patterns)
    out = []
    for rel in sorted(notes):
        tally = SecretTally()
        for line, kind in redactor.lines_hidden(notes[rel], True):
            tally.add([kind], line)
        found = tally.warning(rel)
        if found is not None:
            out.append(found)
    return out


def _keep(
    jobs: list[Job],
    runs: list[Run],
    report: BuildReport,
    reuse: PageReuse,
    budget: site_budget.SiteBudget,
) -> dict[str, tuple[str | None, RunRecord | None]]:
    """Each run's key (with what the site budget leaves out), and its record when kept whole."""
    own = warnings_by_job(jobs, report.warnings)
    out = {}
    for run in runs:
        key = reuse.key(run, own)
        key = budget.key(key, run)
        out[run.id] = (key, reuse.reuse(run, key))
    return out


def _notes_html(
    opts: BuildOptions,
    runs: list[Run],
    kept: dict[str, tuple[str | None, RunRecord | None]],
    notes: dict[str, str],
    cache: BuildState,
) -> dict[str, str]:
    """The notes of the runs made now as HTML by their redacted Markdown, from the cache (so a
    rebuild need not import Markdown) and sanitized every time (an entry may be planted)."""
    from sitegen.present.formatting import markdown_html, markdown_signature, sanitized

    version = markdown_signature()
    redactor = Redactor(opts.redact_patterns)
    html: dict[str, str] = {}
    for run in runs:
        for job in run.jobs:
            text = notes.get(job.source.notes) if job.source.notes else None
            if not text:
                continue
            md = redactor.markdown(text)
            if kept[run.id][1] is not None:
                cache.keep_notes(md, version)
            elif md not in html:
                html[md] = sanitized(cache.notes_html(md, markdown_html, version))
    return html


def _assets(opts: BuildOptions) -> str:
    """What every page is made with besides the inputs: the package's code and templates, and
    for a build that writes transcripts, a hash of the environment's secrets hidden in them."""
    if opts.transcripts_wanted() <= 0:
        return assets_signature()
    return assets_signature() + ":" + secrets_token(build_secrets(os.environ))


def _transcripts(
    opts: BuildOptions,
    disc: Discovery,
    cache: BuildState,
    site: SitePaths,
    left_out: set[str],
) -> TranscriptMaker | None:
    """What samples and makes the transcripts of this build; None when it writes none."""
    if opts.transcripts_wanted() <= 0:
        return None
    from sitegen.present.transcripts import TranscriptMaker

    secrets = build_secrets(os.environ)
    return TranscriptMaker(
        opts.archive,
        disc,
        opts.transcripts_wanted(),
        Redactor(opts.redact_patterns),
        cache.files,
        cache.transcript_stamps(secrets_token(secrets)),
        site.out,
        assets_signature(),
        secrets,
        left_out,
    )


def _keep_stamps(
    cache: BuildState, maker: TranscriptMaker | None, made: list[Any], files: Mapping[str, Any]
) -> None:
    """Keep what each transcript data file of the site was made from (made now or kept)."""
    if maker is None:
        return
    stamps = {**maker.stamps, **{r: st for m in made for r, st in m.stamps.items()}}
    kept = {rel: st for rel, st in sorted(stamps.items()) if rel in files}
    cache.keep_transcript_stamps(secrets_token(maker.secrets), kept)


def _renderer(opts: BuildOptions, writer: SiteWriter, reuse: PageReuse) -> Renderer:
    """The renderer of this build's pages (imported only by a build that renders)."""
    from sitegen.present.html import Renderer

    return Renderer(
        opts,
        writer,
        compiled_templates_dir(),
        carry_over=reuse.carry_over,
        shows_the_same=reuse.shows_the_same,
        static_kept=bool(reuse.kept),  # (a run kept whole: the package's assets are unchanged)
    )


def _render(
    renderer: Renderer, writer: SiteWriter, reuse: PageReuse, pages: SitePages, report: BuildReport
) -> None:
    """Render every page not carried over or made with its analysis (``pages.premade``)."""
    renderer.premade = pages.premade
    try:
        renderer.site(
            pages.index, pages.runs, pages.jobs, report.warnings, pages.task_tables, pages.compare
        )
    except BaseException:
        writer.abort()
        raise
    report.pages, report.pages_reused = renderer.pages, renderer.reused
    report.runs_kept = len(reuse.kept)


def _record(
    sources: Sources,
    parsed: Parsed,
    cache: BuildState,
    reuse: PageReuse,
    files: dict[str, FileRecord],
    report: BuildReport,
) -> LastBuild:
    """What the next build needs to see that nothing changed, and to carry pages over."""
    open_jobs = frozenset(j for j, log in parsed.logs.items() if log and not log.end_marker)
    watch = cache.watch(sources)
    return LastBuild(
        sources=sources.signature(watch, open_jobs),
        pages=reuse.signatures,
        files=files,
        watch=watch,
        open_jobs=open_jobs,
        summary=Summary(
            **{n: getattr(report, n) for n in SUMMARY_COUNTS},
            warnings=tuple((w.path, w.line, w.message) for w in report.warnings),
        ),
    )


def _as_last_reported(report: BuildReport, cache: BuildState) -> BuildReport:
    """A build that found nothing changed reports what the last one did (nothing was parsed)."""
    assert cache.last is not None
    s = cache.last.summary
    for n in SUMMARY_COUNTS:
        setattr(report, n, getattr(s, n))
    report.warnings = [BuildWarning(*w) for w in s.warnings]
    report.cache_warnings.extend(cache.warnings)
    report.record = cache.last
    return report


def warning_lines(
    report: BuildReport, opts: BuildOptions, verbose: bool = False, limit: int = 200
) -> list[str]:
    """The build's warnings as the command line prints them: each the last build did not
    report (the first ``limit``), those it did in one line (``verbose``: each again), every
    cache file ignored, and a note when ``sitegen synth`` planted the damage."""
    lines = [f"warning: {note}" for note in report.cache_warnings]
    before = frozenset() if verbose else report.reported_before
    new = [w for w in report.warnings if w not in before]
    lines += [f"warning: {w}" for w in new[:limit]]
    if len(new) > limit:
        lines.append(f"warning: … {len(new) - limit} more (see {opts.out / 'data/warnings.json'})")
    old = len(report.warnings) - len(new)
    if old:
        inputs = {w.path for w in report.warnings if w in before}
        lines.append(
            f"{counted(old, 'warning')} already reported by the last build (from "
            f"{counted(len(inputs), 'input')}) {'is' if old == 1 else 'are'} not repeated: "
            f"all are in {opts.out / 'index.html'}#warnings, or here with --verbose"
        )
    if new and report.synthetic:
        lines.append(
            f"note: {opts.archive} was written by 'sitegen synth' (it holds {SYNTH_TRUTH}): "
            "its damaged inputs are planted on purpose, and these warnings are expected"
        )
    return lines


def closing_lines(report: BuildReport, opts: BuildOptions) -> list[str]:
    """What was built (or that nothing changed), what was read, and where the site is."""
    index = opts.out / "index.html"
    where = f"site left as it was: {index}" if report.unchanged else f"site written to {index}"
    budget = [report.left_out] if report.left_out else []
    return [report.headline(), report.inputs(), *budget, where]


__all__ = ["BuildOptions", "BuildReport", "LastBuild", "build", "inputs_changed", "__version__"]
