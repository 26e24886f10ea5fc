"""Incremental builds, in one place: what the last build left, and what this one may reuse.

In the spirit of Lektor's builder, each artifact depends on sources with
fingerprints: a log's parse on the log and its infra logs (path, size,
mtime), a trial outcome on its ``result.json``, a page on a signature of
what it shows, the whole site on the signature of every input.
:class:`BuildState` owns all of it:

* **Is anything to do at all?** The sources signature (:class:`~sitegen.cache.sources.Sources`)
  hashes the options, the templates, what discovery found, the fingerprint of every
  log, infra log and notes file, each trials folder's *watch* (the mtimes of its
  folders and the stat of each trial still without a complete ``result.json``: a
  complete one never changes), and each open job's time-dependent status (a
  "running" job turns "incomplete" with time alone). Equal to the last build's, and
  every file the last build wrote still there as written: the build stops before
  parsing anything, having only stat'ed files.
* **Parsed logs** with the parser's state after the last complete line, so a
  grown log is read on from there.
* **Trial outcomes** per trials folder: size, mtime and outcome of each
  ``result.json`` (a complete one is never read again), as a base file and
  the outcomes added since (:data:`DELTA_SHARE`), so that a few new trials
  cost a few entries written, not the folder's.
* **Page signatures** (:class:`PageReuse`): a job or run page whose signature is
  unchanged and whose files are intact is left as it is.

It lives in ``.<out>.cache/`` beside the output folder, as checked JSON
(:mod:`sitegen.cache.files`): a damaged or planted file is ignored with a warning
and its input parsed again. A change of sitegen's version, of the redaction
patterns or rules or of the cached data's shape starts it afresh; ``--clean`` ignores it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from sitegen import __version__
from sitegen.cache.codec import PARSED_FORMAT, from_json, parsed_from_json, parsed_to_json, to_json
from sitegen.cache.files import (
    TRIAL_SHAPE,
    CacheFileError,
    FileRecord,
    Fingerprint,
    Known,
    LastBuild,
    TrialLists,
    Watch,
    atomic,
    check,
    dumps,
    fingerprint_from_json,
    integer,
    known_from_json,
    known_to_json,
    loads,
    read_file,
    string,
    trial_set_from_json,
    trial_set_to_json,
)
from sitegen.cache.sources import Sources, code_signature, watch_holds
from sitegen.jsonio import dumps as page_json
from sitegen.model.parsed import VllmStats
from sitegen.redact import rules_signature
from sitegen.write.site import MARKER, SiteWriter, write_error

if TYPE_CHECKING:
    from collections.abc import Callable

    from sitegen.errors import BuildWarning
    from sitegen.model.parsed import ParsedLog, Run, TrialSet
    from sitegen.options import BuildOptions
    from sitegen.pages.kept import JobEntry, RunEntry, RunRecord
    from sitegen.pages.objects import JobPage, RunPage
    from sitegen.read.logfile import LogState

# sitegen.read is imported where it is used: a build that finds nothing changed needs none of it.

CACHE_VERSION = 7  # bump when the layout of any cache file changes

# A folder's trial outcomes are kept in two files: a base, and beside it what changed
# since (trialsadd). A rebuild that read a few new trials writes only those (with the
# others added since the base), not the whole folder's again: a running job's folder
# gains a few trials a build and holds ~13 k. The base is written anew when what is
# added outgrows it (more than 1/DELTA_SHARE of it, and DELTA_MIN entries) or a file
# it holds is gone.
DELTA_SHARE = 8
DELTA_MIN = 64


def log_summary(log: ParsedLog) -> ParsedLog:
    """What assembling jobs into runs and keying them needs of a parsed log, and no more.

    Its status (end marker, mtime), resume links (resume step and path, fresh
    start, checkpoints, first step, first time) and warnings stay; the per-step
    blocks past the first, eval blocks, config, per-step batches and vLLM
    statistics go. A summary is never analysed: a run made again takes its logs
    whole (``build._whole_logs``, which checks it).
    """
    return replace(
        log,
        blocks=log.blocks[:1],
        eval_blocks=(),
        config=None,
        batches_per_step={},
        vllm=VllmStats((), (), 0, 0, 0, {}),
    )


class PageReuse:
    """Which runs (each with its jobs' pages) and pages stay as the last build made them.

    Two levels. A run whose *key* — a hash of everything its pages are made
    from: each job's source, the stats of its log, infra logs and notes, its
    status and warnings, the content of its trials and the run's, the chain,
    discovery's warnings, the templates and the options pages print — equals
    the last build's, and whose files are all still as written, is neither
    analysed nor rendered again: the index and the comparison page take its
    rows from its record (:mod:`sitegen.pages.kept`). A run analysed again
    still has each page carried over when the page's *signature* (a hash of
    what it shows) is unchanged (:meth:`carry_over`).
    """

    def __init__(self, state: BuildState, sources: Sources, writer: SiteWriter) -> None:
        from sitegen.pages import kept  # the page model: only past the no-change check

        self._kept = kept
        self.previous = state.pages
        self.last_records = state.run_records()
        self.tokens = state.trial_tokens
        self.sources = sources
        self.writer = writer
        self.signatures: dict[str, str] = {}
        self.kept: dict[str, RunRecord] = {}  # runs taken whole from the last build
        opts = sources.opts
        self._base = hashlib.sha1(sources.assets.encode())
        self._base.update(repr((opts.title, opts.base_url)).encode())
        self._inputs = self._base.copy()
        self._inputs.update(repr(sources.disc.warnings).encode())

    # -- whole runs ------------------------------------------------------------------------------
    def key(self, run: Run, warnings: dict[str, list[BuildWarning]]) -> str | None:
        """What the run's pages are made from, hashed from stats and tokens (no page is built).

        None when something is not known by a token (a log that could not be read,
        a trials folder without one): the run is then always analysed again.
        """
        h = self._inputs.copy()
        parts: list[object] = [run.id]
        if run.trials is not None:
            parts.append(self._trials_token(run.jobs[0].source.group))
        for job in run.jobs:
            if job.log is None and job.source.log is not None:
                return None
            own = [(w.path, w.line, w.message) for w in warnings.get(job.id, ())]
            token = self._trials_token(job.source.group) if job.trials is not None else ""
            parts.append(
                (job.source, self.sources.logs[job.id], job.status, job.run_id, token, own)
            )
        if None in parts:
            return None
        h.update(repr(parts).encode())
        return h.hexdigest()

    def _trials_token(self, group: str) -> str | None:
        """The content of a group's trial sets (each folder's, :meth:`BuildState.keep_trial_set`)."""
        tokens = [self.tokens.get(d) for d in self.sources.disc.trials_dirs.get(group, ())]
        return None if not tokens or None in tokens else repr(tokens)

    def reuse(self, run: Run, key: str | None) -> RunRecord | None:
        """The last build's record of ``run`` when its key is unchanged and every file of its
        pages is still as written: those files are kept, and the run is not analysed again."""
        rec = self.last_records.get(run.id)
        if key is None or rec is None or rec.key != key:
            return None
        pages: list[tuple[str, JobEntry | RunEntry]] = [(f"run:{rec.run.id}", rec.run)]
        pages += [(f"job:{j.id}", j) for j in rec.jobs]
        found = []
        for _, e in pages:  # (each file stat'ed once: the run is kept only if all are intact)
            files = self.writer.intact([e.url, e.data])
            if files is None:
                return None
            found.append(files)
        for (name, e), files in zip(pages, found, strict=True):
            self.writer.keep(files)
            self.signatures[name] = e.signature
        self.kept[run.id] = rec
        return rec

    def records_for_next(
        self, made: list[tuple[str | None, RunPage, list[JobPage]]]
    ) -> dict[str, RunRecord]:
        """Every run's record for the next build: those kept, and those made now (``made``:
        key, run page and job pages, once rendered, so that their signatures are known)."""
        from sitegen.pages.make import compare_item

        k = self._kept
        out = dict(self.kept)
        for key, run, jobs in made:
            if key is None:
                continue
            cfg = {j.id: j.config for j in jobs}
            out[run.id] = k.RunRecord(
                key=key,
                run=k.RunEntry(
                    row=run.row(),
                    compare=compare_item("run", run),
                    config=cfg.get(run.jobs[-1]) if run.jobs else None,
                    signature=self.signatures[f"run:{run.id}"],
                ),
                jobs=tuple(
                    k.JobEntry(
                        row=j.row(),
                        compare=compare_item("job", j),
                        config=j.config,
                        signature=self.signatures[f"job:{j.id}"],
                    )
                    for j in jobs
                ),
            )
        return out

    # -- single pages ------------------------------------------------------------------------------
    def carry_over(self, key: str, parts: tuple, files: list[str]) -> bool:
        """Record the page's signature; True when its files were kept as they are."""
        sig = self.signatures[key] = self._signature(parts)
        return self.previous.get(key) == sig and self.writer.carry_over(files)

    def shows_the_same(self, key: str, parts: tuple) -> bool:
        """Whether the page would show what the last build's showed (nothing recorded, no file
        looked at): a page made ahead of :meth:`carry_over` need not be made then. A page
        the last build did not make is not hashed (a cold build hashes each page once)."""
        last = self.previous.get(key)
        return last is not None and last == self._signature(parts)

    def _signature(self, parts: tuple) -> str:
        h = self._base.copy()
        for part in parts:
            h.update(page_json(part))
        return h.hexdigest()


# -- the state ---------------------------------------------------------------------------------


def encode_entry(kind: str, name: str, body: Any) -> bytes:
    """The bytes of the cache file holding ``body`` under ``kind/name``."""
    return dumps({"version": CACHE_VERSION, "kind": kind, "name": name, "body": body})


def log_entries(
    rel: str, fp: Fingerprint, parsed: ParsedLog, state: LogState
) -> list[tuple[str, bytes]]:
    """A parsed log's cache entries, encoded: its parse, where to read on, its summary.

    A pure function, so the parse worker that read the log encodes them: it sends back
    these bytes instead of the parser's state (a few hundred KB of objects a log, which
    cost the main process more to unpickle than to write), and the main process only
    writes them (:meth:`BuildState.keep_encoded`).
    """
    fingerprint = [list(x) for x in fp]
    summary = parsed_to_json(log_summary(parsed))
    return [
        (
            "log",
            encode_entry(
                "log", rel, {"fingerprint": fingerprint, "parsed": parsed_to_json(parsed)}
            ),
        ),
        (
            "logstate",
            encode_entry("logstate", rel, {"fingerprint": fingerprint, "state": state.to_json()}),
        ),
        ("logsum", encode_entry("logsum", rel, {"fingerprint": fingerprint, "summary": summary})),
    ]


class BuildState:
    """The build cache of one output folder: read at the start of a build, saved as it goes.

    ``warnings`` collects the cache files that were ignored (damaged or not
    sitegen's); they are reported on the command line, not published.
    """

    def __init__(self, cache_dir: Path, opts: BuildOptions) -> None:
        self.dir = cache_dir
        self.warnings: list[str] = []
        self._used: set[tuple[str, str]] = set()  # entries this build looked up or kept
        self.key = {
            "version": CACHE_VERSION,
            "sitegen": __version__,
            "redact_patterns": list(opts.redact_patterns),
            "redact_rules": rules_signature(),  # (what was hidden is redone when they change)
            "parsed_format": PARSED_FORMAT,
            "trial_fields": TRIAL_SHAPE,
        }
        self.last: LastBuild | None = None  # what the last build published
        # per trials folder, a hash of its trial set as kept (what pages made from it depend on)
        self.trial_tokens: dict[str, str] = {}
        self.summarised: set[str] = set()  # logs handed out as their summary (cached_log)
        # trials folders handed out as their summary (unchanged_trials): their result counts
        self.trials_summarised: dict[str, int] = {}
        self._trial_lists: dict[str, TrialLists] = {}  # per trials folder (keep_trial_outcomes)
        # per trials folder: the outcomes its base file held as read, and that file's hash
        self._outcomes_base: dict[str, tuple[Known, str]] = {}
        self._records_read: dict[str, tuple[RunRecord, Any]] = {}  # run id -> (record, its JSON)
        self._code: str | None = None  # sitegen's code signature (notes_html), when needed
        self._open(fresh=opts.clean)
        body = self._load("site", "site")
        if body is not None:
            try:
                self.last = LastBuild.from_json(body)
            except (CacheFileError, KeyError, TypeError, ValueError) as exc:
                self._ignored(self._path("site", "site"), exc)

    @property
    def pages(self) -> dict[str, str]:
        """The last build's page signatures."""
        return self.last.pages if self.last else {}

    @property
    def files(self) -> dict[str, FileRecord]:
        """The last build's files, with the size and mtime each was written with."""
        return self.last.files if self.last else {}

    def _open(self, fresh: bool) -> None:
        """Use the cache folder when its key matches; otherwise start it afresh."""
        meta_path = self.dir / "meta.json"
        if self.dir.is_symlink() or (self.dir.exists() and not self.dir.is_dir()):
            self.warnings.append(f"{self.dir} is not a folder sitegen made: replaced")
            with contextlib.suppress(OSError):
                self.dir.unlink()
        valid = False
        if not fresh and meta_path.exists():
            try:
                valid = loads(read_file(meta_path)) == self.key
            except (CacheFileError, OSError, ValueError) as exc:
                self._ignored(meta_path, exc)
        if valid:
            return
        shutil.rmtree(self.dir, ignore_errors=True)  # never follows links inside
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            atomic(meta_path, orjson.dumps(self.key))
        except OSError as exc:
            raise write_error(self.dir, exc) from None

    def _path(self, kind: str, name: str) -> Path:
        self._used.add((kind, name))
        digest = hashlib.sha1(name.encode("utf-8", "surrogateescape")).hexdigest()[:20]
        return self.dir / kind / f"{digest}.json" if kind != "site" else self.dir / "site.json"

    def _ignored(self, path: Path, exc: Exception) -> None:
        self.warnings.append(f"cache file {path} ignored ({exc}): its input is read again")

    def _load(self, kind: str, name: str, raw: list[bytes] | None = None) -> Any | None:
        """The body stored under ``kind/name``; None when absent, damaged or not sitegen's.

        ``raw``, when given, receives the file's bytes.
        """
        path = self._path(kind, name)
        try:
            data = read_file(path)
            if raw is not None:
                raw.append(data)
            doc = loads(data)
            if not isinstance(doc, dict) or (
                doc.get("version"),
                doc.get("kind"),
                doc.get("name"),
            ) != (
                CACHE_VERSION,
                kind,
                name,
            ):
                raise CacheFileError("not a sitegen cache file of this version")
            return doc.get("body")
        except FileNotFoundError:
            return None
        except (CacheFileError, OSError, ValueError) as exc:
            self._ignored(path, exc)
            return None

    def _save(self, kind: str, name: str, body: Any) -> bytes:
        """Store ``body`` under ``kind/name``; the file's bytes."""
        path = self._path(kind, name)
        data = encode_entry(kind, name, body)
        try:
            atomic(path, data)
        except OSError as exc:
            raise write_error(path, exc) from None
        return data

    # -- logs ------------------------------------------------------------------------------------
    def cached_log(self, rel: str, fp: Fingerprint) -> tuple[ParsedLog | None, LogState | None]:
        """The parse of log ``rel`` when its inputs are unchanged; else the state to read on from.

        An unchanged log comes as its *summary* (:func:`log_summary`): what assembling
        the runs and deciding which to keep needs. A run that is analysed again takes its
        jobs' logs whole (:meth:`whole_log`); the others never decode theirs.
        """
        summary, changed = self._log_summary(rel, fp)
        if summary is not None:
            self.summarised.add(rel)
            # the whole entry and the state are kept for when they are needed
            self._used.update((("log", rel), ("logstate", rel)))
            return summary, None
        if not changed:  # no summary to tell: the whole entry, if its fingerprint still holds
            body = self._load("log", rel)
            try:
                if body is not None:
                    check(isinstance(body, dict), "a log entry is not an object")
                    if fingerprint_from_json(body["fingerprint"]) == fp:
                        parsed = parsed_from_json(body["parsed"])
                        self._keep_summary(rel, body["fingerprint"], parsed)  # (it was missing)
                        return parsed, None
            except (CacheFileError, KeyError, TypeError, ValueError, RecursionError) as exc:
                self._ignored(self._path("log", rel), exc)
        # Changed: only the parser state is needed, to read on if the log grew.
        return None, self._log_state(rel)

    def _log_summary(self, rel: str, fp: Fingerprint) -> tuple[ParsedLog | None, bool]:
        """The log's summary when its fingerprint holds; and whether a summary said it changed."""
        body = self._load("logsum", rel)
        if body is None:
            return None, False
        try:
            check(isinstance(body, dict), "a log summary is not an object")
            if fingerprint_from_json(body["fingerprint"]) != fp:
                return None, True
            return parsed_from_json(body["summary"]), False
        except (CacheFileError, KeyError, TypeError, ValueError, RecursionError) as exc:
            self._ignored(self._path("logsum", rel), exc)
            return None, False

    def _log_state(self, rel: str) -> LogState | None:
        """Where the last parse of a log stopped (kept apart from its parse: a grown log
        reads only this, ~half of what the two weigh)."""
        from sitegen.read.logfile import LogState

        body = self._load("logstate", rel)
        if body is None:
            return None
        try:
            check(isinstance(body, dict), "a log state entry is not an object")
            return LogState.from_json(body["state"])
        except (CacheFileError, KeyError, TypeError, ValueError, RecursionError) as exc:
            self._ignored(self._path("logstate", rel), exc)
            return None

    def whole_log(self, rel: str) -> ParsedLog | None:
        """The whole parse of a log :meth:`cached_log` gave as its summary; None when its
        entry cannot be read (the caller parses the log again)."""
        body = self._load("log", rel)
        if body is None:
            return None
        try:
            check(isinstance(body, dict), "a log entry is not an object")
            return parsed_from_json(body["parsed"])
        except (CacheFileError, KeyError, TypeError, ValueError, RecursionError) as exc:
            self._ignored(self._path("log", rel), exc)
            return None

    def keep_log(self, rel: str, fp: Fingerprint, parsed: ParsedLog, state: LogState) -> None:
        """Keep a log's parse and the fingerprint it was made from; apart, where to read on
        (read when the log grew) and its summary (read by every build that finds it unchanged)."""
        self.keep_encoded(rel, log_entries(rel, fp, parsed, state))

    def keep_encoded(self, name: str, entries: list[tuple[str, bytes]]) -> None:
        """Store entries encoded elsewhere (:func:`log_entries`, in a parse worker) under
        ``kind/name``, as :meth:`_save` would have."""
        for kind, data in entries:
            path = self._path(kind, name)
            try:
                atomic(path, data)
            except OSError as exc:
                raise write_error(path, exc) from None

    def _keep_summary(self, rel: str, fingerprint: list, parsed: ParsedLog) -> None:
        body = {"fingerprint": fingerprint, "summary": parsed_to_json(log_summary(parsed))}
        self._save("logsum", rel, body)

    # -- trials ----------------------------------------------------------------------------------
    def trial_outcomes(self, trials_dir: str) -> Known:
        """What the last build read in a trials folder: ``{file: (size, mtime_ns, outcome)}``.

        The base file's outcomes, and over them those added since, when they were
        added to this very base (a leftover of an older base is passed over: its
        files are read again).
        """
        lists = self._trial_lists[trials_dir] = TrialLists()  # the lists read, written back
        raw: list[bytes] = []
        body = self._load("trials", trials_dir, raw)
        if body is None:
            return {}
        try:
            known = known_from_json(body, lists)
        except (CacheFileError, TypeError, ValueError, IndexError, KeyError) as exc:
            self._ignored(self._path("trials", trials_dir), exc)
            return {}
        digest = hashlib.sha1(raw[0]).hexdigest()
        self._outcomes_base[trials_dir] = (known, digest)
        added = self._load("trialsadd", trials_dir)
        if added is None:
            return known
        try:
            check(isinstance(added, dict), "added trial outcomes are not an object")
            if added["base"] != digest:
                return known  # added to another base (one written since): its files are read
            return {**known, **known_from_json(added["outcomes"], lists)}
        except (CacheFileError, TypeError, ValueError, IndexError, KeyError) as exc:
            self._ignored(self._path("trialsadd", trials_dir), exc)
            return known

    def unchanged_trials(self, trials_dir: str, archive: Path) -> tuple[TrialSet, Watch] | None:
        """The last build's trial set and watch of a folder its watch says is unchanged.

        The set comes as its *summary* (no results: :meth:`trial_files` counts them) when
        one is kept; a run made again takes it whole (:meth:`whole_trials`).
        """
        watch = self.last.watch.get(trials_dir) if self.last else None
        if watch is None or not watch_holds(archive, watch):
            return None
        # Its outcomes stay too: the day a trial is added, only the new one is read.
        self._used.update((kind, trials_dir) for kind in ("trials", "trialsadd", "trialset"))
        summary = self._trial_summary(trials_dir)
        if summary is not None:
            return summary, watch
        ts = self.whole_trials(trials_dir)
        if ts is None:
            return None
        self._keep_trial_summary(trials_dir, ts)  # (it was missing)
        return ts, watch

    def _trial_summary(self, trials_dir: str) -> TrialSet | None:
        body = self._load("trialsum", trials_dir)
        if body is None:
            return None
        try:
            check(isinstance(body, dict), "a trial summary is not an object")
            token, results = string(body["token"], "token"), integer(body["results"], "results")
            ts = trial_set_from_json(body["summary"])
        except (CacheFileError, KeyError, TypeError, ValueError) as exc:
            self._ignored(self._path("trialsum", trials_dir), exc)
            return None
        self.trial_tokens[trials_dir] = token
        self.trials_summarised[trials_dir] = results
        return ts

    def whole_trials(self, trials_dir: str) -> TrialSet | None:
        """A folder's whole trial set as kept; None when its entry cannot be read."""
        raw: list[bytes] = []
        body = self._load("trialset", trials_dir, raw)
        if body is None:
            return None
        try:
            ts = trial_set_from_json(body)
        except (CacheFileError, KeyError, TypeError, ValueError) as exc:
            self._ignored(self._path("trialset", trials_dir), exc)
            return None
        self.trial_tokens[trials_dir] = hashlib.sha1(raw[0]).hexdigest()
        self.trials_summarised.pop(trials_dir, None)
        return ts

    def trial_files(self, trials_dir: str, ts: TrialSet) -> int:
        """The ``result.json`` files behind a folder's trial set (whole or summary): its
        training and eval trials, the unreadable ones and the job-level ones (not trials)."""
        results = self.trials_summarised.get(trials_dir, len(ts.results))
        return results + ts.eval_count + ts.malformed + ts.job_level

    def keep_trial_set(self, trials_dir: str, ts: TrialSet) -> None:
        """Keep a folder's trial set; its token is a hash of what was kept (equal sets, equal
        bytes: the same token as when the set is taken from the cache unchanged)."""
        lists = self._trial_lists.pop(trials_dir, None)  # (from keep_trial_outcomes)
        data = self._save("trialset", trials_dir, trial_set_to_json(ts, lists))
        self.trial_tokens[trials_dir] = hashlib.sha1(data).hexdigest()
        self._keep_trial_summary(trials_dir, ts)

    def _keep_trial_summary(self, trials_dir: str, ts: TrialSet) -> None:
        """Beside the set, its token, result count and the set without results: what
        assembling, keying and counting need (a few KB instead of ~2 MB at 13 k trials)."""
        body = {
            "token": self.trial_tokens[trials_dir],
            "results": len(ts.results),
            "summary": trial_set_to_json(replace(ts, results=())),
        }
        self._save("trialsum", trials_dir, body)

    # -- runs ------------------------------------------------------------------------------------
    def run_records(self) -> dict[str, RunRecord]:
        """What the last build made of each run (:class:`PageReuse`); empty when unusable."""
        from sitegen.pages.kept import RunRecord

        body = self._load("pages", "runs")
        if body is None:
            return {}
        try:
            check(isinstance(body, dict), "the run records are not an object")
            records = {rid: from_json(rec, RunRecord) for rid, rec in body.items()}
        except (CacheFileError, ValueError, TypeError) as exc:
            self._ignored(self._path("pages", "runs"), exc)
            return {}
        self._records_read = {rid: (records[rid], rec) for rid, rec in body.items()}
        return records

    def keep_run_records(self, records: dict[str, RunRecord]) -> None:
        """Keep every run's record; one read by :meth:`run_records` and kept as it was
        (the same object) is written back as it was read, not encoded again (the codec
        gives those same values: most records of a one-job rebuild)."""
        from sitegen.pages.kept import RunRecord

        body = {}
        for rid, r in records.items():
            read = self._records_read.get(rid)
            body[rid] = read[1] if read is not None and read[0] is r else to_json(r, RunRecord)
        self._save("pages", "runs", body)

    def keep_trial_outcomes(self, trials_dir: str, known: Known) -> None:
        """Keep a folder's outcomes: those not in its base (by identity: an outcome taken
        from the cache is the very entry read) beside it, or all of them as a new base."""
        # Its trials' lists are kept for keep_trial_set, which comes next: each trial is
        # encoded once for both files (and one read from the cache not at all).
        lists = self._trial_lists.setdefault(trials_dir, TrialLists())
        base = self._outcomes_base.get(trials_dir)
        if base is not None:
            held, digest = base
            added = {rel: e for rel, e in known.items() if held.get(rel) is not e}
            if (
                len(added) <= max(DELTA_MIN, len(held) // DELTA_SHARE)
                and known.keys() >= held.keys()
            ):
                body = {"base": digest, "outcomes": known_to_json(added, lists)}
                self._save("trialsadd", trials_dir, body)
                return
        data = self._save("trials", trials_dir, known_to_json(known, lists))
        self._outcomes_base[trials_dir] = (known, hashlib.sha1(data).hexdigest())
        with contextlib.suppress(OSError):  # (what it held is in the base now)
            self._path("trialsadd", trials_dir).unlink()

    # -- notes -----------------------------------------------------------------------------------
    def notes_html(self, md: str, convert: Callable[[str], str], version: str) -> str:
        """``convert(md)``: a job's notes (their Markdown, redacted) as HTML, kept between builds.

        Kept by the Markdown, sitegen's code and ``version`` (the converter's: the Markdown
        library's files), so edited notes, a changed converter or an upgraded library make
        it again; notes of no job of the archive are forgotten (:meth:`save_site`, and
        :meth:`keep_notes` for the jobs of runs kept whole). What comes back may be what
        someone planted in the cache (it lies beside the output, README "Security"): the
        caller sanitizes it before it reaches a page, and HTML that is not text (a lone
        surrogate, which the sanitizer refuses) is made again.
        """
        name = self._notes_name(md, version)
        body = self._load("notes", name)
        html = body.get("html") if isinstance(body, dict) else None
        if isinstance(html, str) and _is_utf8(html):
            return html
        if body is not None:
            self._ignored(self._path("notes", name), CacheFileError("notes are not HTML text"))
        html = convert(md)
        self._save("notes", name, {"html": html})
        return html

    def keep_notes(self, md: str, version: str) -> None:
        """Keep the HTML of notes that a page of a run kept whole shows (not read now)."""
        self._path("notes", self._notes_name(md, version))  # (marks the entry used)

    def _notes_name(self, md: str, version: str) -> str:
        if self._code is None:
            self._code = code_signature()
        key = f"{self._code}\n{version}\n{md}"
        return hashlib.sha1(key.encode("utf-8", "surrogateescape")).hexdigest()

    # -- the site --------------------------------------------------------------------------------
    def site_is_current(self, sources: Sources, out: Path) -> bool:
        """Whether the site in ``out`` is what this build would write: the build stops then.

        Every input must be as the last build saw it (by stats alone: nothing
        is read or decoded), and every file it wrote still there as it wrote
        it: a file the user deleted is written again.
        """
        last = self.last
        if last is None or not last.files or not (out / MARKER).is_file():
            return False
        archive = sources.opts.archive
        if set(sources.folders) != set(last.watch) or not all(
            watch_holds(archive, w) for w in last.watch.values()
        ):
            return False
        if sources.signature(last.watch, last.open_jobs) != last.sources:
            return False
        for rel, record in last.files.items():
            try:
                st = os.stat(out / rel, follow_symlinks=False)
            except OSError:
                return False
            if (st.st_size, st.st_mtime_ns) != record:
                return False
        return True

    def save_site(self, last: LastBuild) -> None:
        """Record what this build published (after it was published), and forget the rest.

        Entries of logs and trials folders this build did not look up (gone from
        the archive, or renamed) are removed, so the cache does not grow forever.
        """
        self.last = last
        self._save("site", "site", last.to_json())
        used = {self._path(kind, name) for kind, name in list(self._used)}
        for kind in (
            "log",
            "logstate",
            "logsum",
            "trials",
            "trialsadd",
            "trialset",
            "trialsum",
            "notes",
        ):
            for path in (self.dir / kind).glob("*.json"):
                if path not in used:
                    with contextlib.suppress(OSError):
                        path.unlink()


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def compiled_templates_dir() -> Path | None:
    """Where Jinja keeps compiled templates between builds: the user's own cache folder.

    Jinja's bytecode cache is marshalled code that it runs, so it never goes
    beside the output (which may be writable by others); a folder that is not
    the user's alone is not used (templates are then compiled each build).
    """
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    path = base / "sitegen" / __version__ / "jinja"
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        return None
    return path
