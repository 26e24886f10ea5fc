"""The build cache of one output folder: what the last build left, and what this one may reuse.

Each artifact is kept by the fingerprint of what it was made from: the site by the sources
signature, a log by its files' fingerprint, a trials folder by its watch, runs and pages by
their keys, notes by their Markdown. It lives in ``.<out>.cache/`` as checked JSON and
msgpack; a damaged or planted file is ignored with a warning (docs/design.md, "The cache").
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import stat
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from sitegen import __version__
from sitegen.cache.codec import (
    Outcomes,
    decode,
    encode,
    known_bytes,
    known_from_bytes,
    log_body,
    log_body_bytes,
    shape,
    trial_summary,
    trial_summary_bytes,
)
from sitegen.cache.files import (
    CACHE_VERSION,
    PACKED,
    CacheFileError,
    FileRecord,
    Fingerprint,
    Known,
    LastBuild,
    Watch,
    atomic,
    check,
    dumps,
    entry_bytes,
    loads,
    packed_entry,
    packed_entry_bytes,
    read_file,
)
from sitegen.cache.sources import Listing, Sources, code_signature, watch_holds
from sitegen.errors import BuildWarning
from sitegen.model.parsed import Discovery, ParsedLog, Run, TrialSet
from sitegen.redact import Redactor, rules_signature
from sitegen.write.site import MARKER, write_error

if TYPE_CHECKING:
    from collections.abc import Callable

    from sitegen.options import BuildOptions
    from sitegen.pages.kept import RunRecord
    from sitegen.read.logfile import LogState
    from sitegen.read.logstate import ParserState
    from sitegen.read.parse import FolderRead

# sitegen.read is imported where it is used: a build that finds nothing changed needs none of it.

# A folder's outcomes are kept as a base and, beside it, what was added since (trialsadd):
# a running job's folder gains a few trials a build and may hold tens of thousands. The base
# is written anew when the additions outgrow it (1/DELTA_SHARE of it, and DELTA_MIN) or a
# file it holds is gone.
DELTA_SHARE = 8
DELTA_MIN = 64

# The file a cache folder holds: build() has discovery pass over any folder holding it, so
# a cache moved into the archive or renamed is never read as input.
CACHE_MARKER = ".sitegen-cache"
_MARKER_TEXT = b"A sitegen build cache: sitegen reads no input from this folder.\n"
_KINDS = (PACKED - {"pages"}) | {"notes", "transcripts"}  # the folders save_site sweeps


@functools.cache
def _shape(kind: str) -> str | None:
    """The shape of the type a kind of entry is written for (:func:`~sitegen.cache.codec.shape`);
    None for the kinds whose files are laid out by hand."""
    if kind not in PACKED:
        return None
    from sitegen.pages.kept import RunRecord
    from sitegen.read.logstate import ParserState

    types = {"log": ParsedLog, "logsum": ParsedLog, "logstate": ParserState, "pages": RunRecord}
    return shape(types.get(kind) or (Outcomes if kind in ("trials", "trialsadd") else TrialSet))


class _Stale(Exception):
    """An entry written for another shape of its type: passed over, as if absent."""


class BuildState:
    """The build cache of one output folder: read at the start of a build, saved as it goes.

    ``warnings``: the cache files ignored (damaged or not sitegen's), said on the command line.
    """

    def __init__(self, cache_dir: Path, opts: BuildOptions) -> None:
        self.dir = cache_dir
        self.opts = opts
        self.warnings: list[str] = []
        self._used: set[tuple[str, str]] = set()  # entries this build looked up or kept
        self.key = {
            "version": CACHE_VERSION,
            "sitegen": __version__,
            "code": code_signature(),  # (an editable install changes code within a version)
            "redact_patterns": list(opts.redact_patterns),
            "redact_rules": rules_signature(),  # (what was hidden is redone when they change)
        }
        self.last: LastBuild | None = None  # what the last build published
        # per trials folder, a hash of its trial set as kept (what pages made from it depend on)
        self.trial_tokens: dict[str, str] = {}
        self._summarised: set[str] = set()  # logs handed out as their summary (cached_log)
        # trials folders handed out as their summary (unchanged_trials): their result counts
        self._trials_summarised: dict[str, int] = {}
        # per trials folder: the outcomes its base file held as read, and that file's hash
        self._outcomes_base: dict[str, tuple[Known, str]] = {}
        # per trials folder, its watch when unchanged; else what this build read of it
        self._watch_kept: dict[str, Watch] = {}
        self._folders_read: dict[str, tuple[Known, Listing]] = {}
        # run id -> (record, its msgpack as read)
        self._records_read: dict[str, tuple[RunRecord, Any]] = {}
        self._open(fresh=opts.clean)
        self.last = self._decoded("site", "site", LastBuild.from_json)

    @property
    def pages(self) -> dict[str, str]:
        """The last build's page signatures."""
        return self.last.pages if self.last else {}

    @property
    def files(self) -> dict[str, FileRecord]:
        """The last build's files, with the size and mtime each was written with."""
        return self.last.files if self.last else {}

    def reported_before(self) -> frozenset[BuildWarning]:
        """The warnings the last build of this output reported (none after ``--clean``)."""
        if self.last is None:
            return frozenset()
        return frozenset(BuildWarning(*w) for w in self.last.summary.warnings)

    # -- the files ---------------------------------------------------------------------------------
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
        if valid and (self.dir / CACHE_MARKER).is_file():
            return
        shutil.rmtree(self.dir, ignore_errors=True)  # never follows links inside
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            # the mark discovery knows the folder by, wherever it is moved and however named
            atomic(self.dir / CACHE_MARKER, _MARKER_TEXT)
            atomic(meta_path, dumps(self.key))
        except OSError as exc:
            raise write_error(self.dir, exc) from None

    def _path(self, kind: str, name: str) -> Path:
        self._used.add((kind, name))
        digest = hashlib.sha1(name.encode("utf-8", "surrogateescape")).hexdigest()[:20]
        if kind == "site":
            return self.dir / "site.json"
        return self.dir / kind / f"{digest}.{'msgpack' if kind in PACKED else 'json'}"

    def _ignored(self, path: Path, exc: Exception) -> None:
        self.warnings.append(f"cache file {path} ignored ({exc}): its input is read again")

    def _load(self, kind: str, name: str, raw: list[bytes] | None = None) -> Any | None:
        """The body stored under ``kind/name`` (its bytes appended to ``raw``); None when
        absent, stale, damaged or not sitegen's (a warning for the last two)."""
        path = self._path(kind, name)
        try:
            data = read_file(path)
            head: tuple[Any, ...]
            if kind in PACKED:
                head, body = packed_entry(data)
            else:
                doc = loads(data)
                check(isinstance(doc, dict), "not a sitegen cache file")
                head = tuple(doc.get(k) for k in ("version", "kind", "name", "shape"))
                body = doc.get("body")
            check(
                head[:3] == (CACHE_VERSION, kind, name), "not a sitegen cache file of this version"
            )
            if head[3] != _shape(kind):
                raise _Stale
            if raw is not None:
                raw.append(data)
            return body
        except (FileNotFoundError, _Stale):
            return None
        except (CacheFileError, OSError, ValueError) as exc:
            self._ignored(path, exc)
            return None

    def _decoded(
        self, kind: str, name: str, decode: Callable[[Any], Any], raw: list[bytes] | None = None
    ) -> Any | None:
        """``decode`` of the body stored under ``kind/name``; None when absent, stale, or when
        the file or its decoding fails (a warning for those)."""
        body = self._load(kind, name, raw)
        if body is None:
            return None
        try:
            return decode(body)
        except (CacheFileError, KeyError, TypeError, ValueError, IndexError, RecursionError) as exc:
            self._ignored(self._path(kind, name), exc)
            return None

    def _save(self, kind: str, name: str, body: Any) -> bytes:
        """Store ``body`` (encoded already for a kind of :data:`PACKED`); the file's bytes."""
        if kind in PACKED:
            data = packed_entry_bytes(kind, name, body, typing.cast(str, _shape(kind)))
        else:
            data = entry_bytes(kind, name, body, _shape(kind))
        self._write(self._path(kind, name), data)
        return data

    def _forget(self, kind: str, name: str) -> None:
        """Remove the entry under ``kind/name``, if any."""
        with contextlib.suppress(OSError):
            self._path(kind, name).unlink()

    def _write(self, path: Path, data: bytes) -> None:
        try:
            atomic(path, data)
        except OSError as exc:
            raise write_error(path, exc) from None

    # -- logs ------------------------------------------------------------------------------------
    def cached_log(
        self, rel: str, fp: Fingerprint
    ) -> tuple[ParsedLog | None, LogState[ParserState] | None]:
        """The parse of log ``rel`` when its files are as ``fp`` says (as its *summary* when
        one is kept: :meth:`complete` takes it whole for a run made again); else the state to
        read on from, when kept."""

        summary, changed = self._log_summary(rel, fp)
        if summary is not None:
            self._summarised.add(rel)
            self._used.update((("log", rel), ("logstate", rel)))
            return summary, None
        if not changed:  # no summary to tell: the whole entry, if its fingerprint still holds

            def whole_of(body: bytes) -> tuple[Fingerprint, ParsedLog] | None:
                got, parsed = log_body(body)
                return None if got != fp else (got, decode(parsed, ParsedLog))

            got = self._decoded("log", rel, whole_of)
            if got is not None:
                self._keep_summary(rel, *got)  # (it was missing)
                return got[1], None
        # Changed: only the parser state is needed, to read on if the log grew.
        return None, self._log_state(rel)

    def _log_summary(self, rel: str, fp: Fingerprint) -> tuple[ParsedLog | None, bool]:
        """The log's summary when its fingerprint holds; and whether a summary said it changed."""

        def summary_of(body: bytes) -> tuple[ParsedLog | None, bool]:
            got, summary = log_body(body)
            return (None, True) if got != fp else (decode(summary, ParsedLog), False)

        return self._decoded("logsum", rel, summary_of) or (None, False)

    def _log_state(self, rel: str) -> LogState[ParserState] | None:
        """Where the last parse of a log stopped (kept apart: a grown log reads only this)."""
        from sitegen.cache.logs import log_state_from_bytes

        return self._decoded("logstate", rel, log_state_from_bytes)

    def whole_log(self, rel: str) -> ParsedLog | None:
        """The whole parse of a log :meth:`cached_log` gave as its summary; None if unreadable."""
        return self._decoded("log", rel, lambda body: decode(log_body(body)[1], ParsedLog))

    def keep_log(self, name: str, entries: list[tuple[str, bytes]]) -> None:
        """Store a log's entries, encoded where it was read (:func:`~sitegen.cache.logs.read_log`)."""
        for kind, data in entries:
            self._write(self._path(kind, name), data)

    def _keep_summary(self, rel: str, fingerprint: Fingerprint, parsed: ParsedLog) -> None:
        from sitegen.cache.logs import log_summary

        with contextlib.suppress(ValueError):  # (what msgpack cannot hold is not kept)
            self._save("logsum", rel, log_body_bytes(fingerprint, log_summary(parsed)))

    # -- trials ----------------------------------------------------------------------------------
    def trial_outcomes(self, trials_dir: str) -> Known:
        """What the last build read in a trials folder: ``{file: (size, mtime_ns, outcome)}``,
        the base's and over them those added to this very base since."""
        raw: list[bytes] = []
        known = self._decoded("trials", trials_dir, known_from_bytes, raw)
        if known is None:
            return {}
        digest = hashlib.sha1(raw[0]).hexdigest()
        self._outcomes_base[trials_dir] = (known, digest)

        def added_to_base(body: Any) -> Known | None:
            base, outcomes = decode(body, tuple[str, msgspec.Raw])
            if base != digest:
                return None  # added to an older base: those files are read again
            return known_from_bytes(outcomes)

        added = self._decoded("trialsadd", trials_dir, added_to_base)
        return known if added is None else {**known, **added}

    def unchanged_trials(self, trials_dir: str) -> tuple[TrialSet, int] | None:
        """The last build's trial set of a folder its watch says is unchanged (as its *summary*,
        without results, when one is kept), and its number of training trials."""
        watch = self.last.watch.get(trials_dir) if self.last else None
        if watch is None or not watch_holds(self.opts.archive, watch):
            return None
        self._used.update((kind, trials_dir) for kind in ("trials", "trialsadd", "trialset"))
        found = self._trial_summary(trials_dir)
        if found is None:
            ts = self.whole_trials(trials_dir)
            if ts is None:
                return None
            self._keep_trial_summary(trials_dir, ts)  # (it was missing)
            found = ts, len(ts.results)
        self._watch_kept[trials_dir] = watch
        return found

    def _trial_summary(self, trials_dir: str) -> tuple[TrialSet, int] | None:
        got = self._decoded("trialsum", trials_dir, trial_summary)
        if got is None:
            return None
        token, results, ts = got
        self.trial_tokens[trials_dir] = token
        self._trials_summarised[trials_dir] = results
        return ts, results

    def whole_trials(self, trials_dir: str) -> TrialSet | None:
        """A folder's whole trial set as kept; None when its entry cannot be read."""
        raw: list[bytes] = []
        ts = self._decoded("trialset", trials_dir, lambda body: decode(body, TrialSet), raw)
        if ts is None:
            return None
        self.trial_tokens[trials_dir] = hashlib.sha1(raw[0]).hexdigest()
        self._trials_summarised.pop(trials_dir, None)
        return ts

    def keep_trials(self, read: FolderRead, old: Known) -> None:
        """Keep what a build read of a trials folder: its outcomes (when any changed since
        ``old``), its trial set and summary, and what its next watch is made from."""
        d, known = read.folder, read.known
        if read.taken != len(known) or len(known) != len(old):
            self.keep_trial_outcomes(d, known)
        self._folders_read[d] = (known, Listing(read.files, read.tars, read.dirs))
        self.keep_trial_set(d, read.trials)

    def keep_trial_set(self, trials_dir: str, ts: TrialSet) -> None:
        """Keep a folder's trial set; its token is a hash of the bytes kept (equal sets, equal
        tokens)."""
        try:
            data = self._save("trialset", trials_dir, encode(ts, TrialSet))
        except ValueError:  # what msgpack cannot hold (a name that was not UTF-8): not kept
            self._forget("trialset", trials_dir)
            data = repr(ts).encode("utf-8", "surrogateescape")  # (the set's pages, its token)
        self.trial_tokens[trials_dir] = hashlib.sha1(data).hexdigest()
        self._keep_trial_summary(trials_dir, ts)

    def _keep_trial_summary(self, trials_dir: str, ts: TrialSet) -> None:
        """Beside the set: its token, result count and the set without results (a few KB)."""
        try:
            body = trial_summary_bytes(self.trial_tokens[trials_dir], len(ts.results), ts)
        except ValueError:  # (as keep_trial_set)
            self._forget("trialsum", trials_dir)
            return
        self._save("trialsum", trials_dir, body)

    def keep_trial_outcomes(self, trials_dir: str, known: Known) -> None:
        """Keep a folder's outcomes: those not in its base (by identity: an outcome taken
        from the cache is the very entry read) beside it, or all of them as a new base."""
        base = self._outcomes_base.get(trials_dir)
        if base is not None:
            held, digest = base
            added = {rel: e for rel, e in known.items() if held.get(rel) is not e}
            if (
                len(added) <= max(DELTA_MIN, len(held) // DELTA_SHARE)
                and known.keys() >= held.keys()
            ):
                body = encode((digest, msgspec.Raw(known_bytes(added))), tuple[str, Any])
                self._save("trialsadd", trials_dir, body)
                return
        data = self._save("trials", trials_dir, known_bytes(known))
        self._outcomes_base[trials_dir] = (known, hashlib.sha1(data).hexdigest())
        self._forget("trialsadd", trials_dir)  # (what it held is in the base now)

    def watch(self, sources: Sources) -> dict[str, Watch]:
        """Each trials folder's watch for the next build: the one that held, or one made from
        what this build read."""
        made = {
            d: sources.watch_of(d, known, listing)
            for d, (known, listing) in self._folders_read.items()
        }
        return {**self._watch_kept, **made}

    # -- runs made again -------------------------------------------------------------------------
    def complete(
        self,
        logs: dict[str, ParsedLog | None],
        trials: dict[str, TrialSet],
        runs: list[Run],
        disc: Discovery,
    ) -> bool:
        """Put the whole logs and trial sets of ``runs`` (made again) in place of the summaries
        given; True when any was. A damaged whole entry is read again from the archive."""
        from sitegen.assemble.runs import trial_groups
        from sitegen.read.parse import merge_trial_sets, read_log
        from sitegen.read.trials import parse_trials

        archive, patterns = self.opts.archive, self.opts.redact_patterns
        taken = False
        for run in runs:
            for job in run.jobs:
                rel = job.source.log
                if rel is None or rel not in self._summarised:
                    continue
                log = self.whole_log(rel)
                if log is None:
                    infra = tuple(disc.real(x) for x in job.source.infra_logs)
                    res = read_log(str(archive), disc.real(rel), infra, patterns, None)
                    log = res[0] if isinstance(res, tuple) else None
                logs[job.id] = log
                self._summarised.discard(rel)
                taken = True
            for group in trial_groups(run):
                dirs = disc.trials_dirs.get(group, [])
                if not any(d in self._trials_summarised for d in dirs):
                    continue
                sets = []
                for d in dirs:  # each folder whole, merged as the parse merges them
                    ts = self.whole_trials(d)
                    if ts is None:
                        root = archive / disc.real(d)
                        known = self.trial_outcomes(d)
                        ts = parse_trials(root, archive, known, None, Redactor(patterns))[0]
                        self._trials_summarised.pop(d, None)
                    sets.append(ts)
                trials[group] = merge_trial_sets(sets)
                taken = True
        return taken

    # -- runs ------------------------------------------------------------------------------------
    def run_records(self) -> dict[str, RunRecord]:
        """What the last build made of each run; empty when unusable."""
        from sitegen.pages.kept import RunRecord

        def records_of(body: bytes) -> tuple[dict[str, RunRecord], dict[str, msgspec.Raw]]:
            raws = decode(body, dict[str, msgspec.Raw])
            return {rid: decode(rec, RunRecord) for rid, rec in raws.items()}, raws

        got = self._decoded("pages", "runs", records_of)
        if got is None:
            return {}
        records, body = got
        self._records_read = {rid: (records[rid], rec) for rid, rec in body.items()}
        return records

    def keep_run_records(self, records: dict[str, RunRecord]) -> None:
        """Keep every run's record (one read and kept as the same object: its bytes as read);
        one msgpack cannot hold is not kept, so its run is made again."""
        from sitegen.pages.kept import RunRecord

        body = {}
        for rid, r in records.items():
            read = self._records_read.get(rid)
            if read is not None and read[0] is r:
                body[rid] = read[1]
            else:
                with contextlib.suppress(ValueError):
                    body[rid] = msgspec.Raw(encode(r, RunRecord))
        self._save("pages", "runs", encode(body, dict[str, msgspec.Raw]))

    # -- notes -----------------------------------------------------------------------------------
    def notes_html(self, md: str, convert: Callable[[str], str], version: str) -> str:
        """``convert(md)``: a job's notes as HTML, kept by the Markdown and ``version`` (the
        Markdown library's files). It may have been planted: the caller sanitizes it."""
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
        key = f"{version}\n{md}"
        return hashlib.sha1(key.encode("utf-8", "surrogateescape")).hexdigest()

    # -- transcripts -----------------------------------------------------------------------------
    def transcript_stamps(self, secrets: str) -> dict[str, str]:
        """What the last build made each transcript data file from, when it hid the same
        secrets (``secrets``: their hash); else none."""
        body = self._load("transcripts", "stamps")
        if not isinstance(body, dict) or body.get("secrets") != secrets:
            return {}
        stamps = body.get("stamps")
        if not isinstance(stamps, dict):
            return {}
        return {k: v for k, v in stamps.items() if isinstance(k, str) and isinstance(v, str)}

    def keep_transcript_stamps(self, secrets: str, stamps: dict[str, str]) -> None:
        """Record what this build's transcript data files were made from."""
        self._save("transcripts", "stamps", {"secrets": secrets, "stamps": stamps})

    # -- the site --------------------------------------------------------------------------------
    def site_is_current(self, sources: Sources, out: Path) -> bool:
        """Whether the site in ``out`` is what this build would write: every input as the last
        build saw it (by stats alone) and every file it wrote still as written."""
        last = self.last
        if last is None or not last.files or not (out / MARKER).is_file():
            return False
        if sources.changed_since(last) is not None:
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
        """Record what this build published, and remove the entries it did not use (inputs
        gone or renamed), so the cache does not grow forever."""
        self.last = last
        self._save("site", "site", last.to_json())
        used = {self._path(kind, name) for kind, name in list(self._used)}
        for kind in _KINDS:
            for path in (self.dir / kind).glob("*.*"):
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
    """Where Jinja keeps compiled templates: the user's own cache folder, never beside the
    output (it is code Jinja runs); None when that folder is not the user's alone."""
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
