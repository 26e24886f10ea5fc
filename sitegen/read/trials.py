"""Harbor trial ``result.json`` files (docs/formats.md §1, §6).

Every direct child directory of a trials directory is one trial. A trials
directory may also hold a job-level ``result.json`` (not a trial),
``eval_sessions/`` (eval trials, counted apart) and ``trials_step<N>_*.tar[.gz]``
archives of older trials, which are read member by member.
"""

from __future__ import annotations

import operator
import os
import re
import tarfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal, Self, cast

from sitegen.discover.safeio import Root, UnsafeInput, open_regular, read_bytes_stat
from sitegen.errors import BuildWarning
from sitegen.model.parsed import TrialResult, TrialSet
from sitegen.read.harbor import Notes, TrialFormatError, decode_result
from sitegen.read.scrub import scrub_trial
from sitegen.redact import Redactor, SecretTally, undecodable_shown

MAX_RESULT_BYTES = 64 << 20  # a result.json larger than this is reported, not read
MAX_WARNINGS = 20
MAX_TAR_UNPACKED = 16 << 30  # a trials archive that unpacks to more is read up to there
# A kept outcome's note that a secret of this kind was hidden in the trial (never the value)
_SECRET_NOTE = "\0secret hidden: "
TAR_RE = re.compile(r"^trials_step\d+_.*\.tar(\.gz)?$")
# The folders Harbor writes in a trial folder (harbor/models/trial/paths.py), and in each
# steps/<step>/ of a multi-step one: a result.json below one is the agent's, the verifier's
# or an artifact's, not a trial's
_IN_TRIAL = frozenset({"agent", "verifier", "artifacts", "user-agent"})
_IN_STEP = frozenset({"agent", "verifier", "artifacts"})
# Written in each trial folder (harbor/trial/): lock.json first, trial.log, config.json, then
# the result.json last
_TRIAL_ONLY = frozenset({"config.json", "trial.log", "lock.json"})
_TRIAL_FILES = _TRIAL_ONLY | {"result.json"}
_TRIAL_LOG, _OWN_OR_JOBS = frozenset({"trial.log"}), frozenset({"result.json", "lock.json"})
_JOB_FILES = frozenset({"job.log"})  # a Harbor job folder's (beside its config, lock, result)
# TrialPaths.mkdir() makes both in each trial folder: a folder holding them is a trial's
_TRIAL_DIRS = frozenset({"agent", "verifier"})
_FOLDER_FILES = _TRIAL_FILES | _JOB_FILES
# What Harbor writes in a trial's folder
_CUT_SHORT = _TRIAL_ONLY | _IN_TRIAL | {"exception.txt", "steps"}
_TOOL_DIRS = frozenset({"__pycache__", "node_modules"})  # (and hidden ones: _a_tools)

# ("ok", TrialResult: redacted, see _Collector.scrubbed[, notes: ((message, line), ...)])
# | ("eval",) | ("job",) | ("bad", message, line); an "ok" has notes when the file was read in
# spite of a problem (harbor.decode_result), which the build warns about at every build.
Outcome = tuple
# rel path -> (size, mtime_ns, outcome), or for a tar archive (size, mtime_ns, [(member, outcome)])
Known = dict[str, tuple[int, int, Any]]


class _Collector:
    def __init__(self, rel: str, known: Known | None, redactor: Redactor) -> None:
        self.rel = rel
        self.redactor = redactor  # names enter the model redacted (read/scrub.py)
        self.known = known or {}
        self.entries: Known = {}
        self.results: list[TrialResult] = []
        self.eval = 0
        self.malformed = 0
        self.missing = 0
        self.archives = 0
        self.job_level = 0
        self.warnings: list[BuildWarning] = []
        self.nwarn = 0
        self.secrets = SecretTally()  # secrets hidden in trial names, tasks, exception types
        # A trial read twice (its folder and an archive both hold it: archiving stopped before
        # the folders were removed, or two archives overlap) counts once, as first read
        # (folders before archives; Harbor names a trial's folder after the trial). A copy
        # with no readable result.json gives way to a whole one read after it.
        self.folders: set[str] = set()  # the trial folders' names read
        self.again: dict[str, list[str]] = {}  # per archive, the trials it held again
        self.damaged: dict[str, tuple[str, int | None]] = {}  # folder: kind, warning's index
        # per archive, the trials it held whole whose folder's copy was missing or damaged
        self.recovered: dict[str, list[str]] = {}
        self.dropped: set[int] = set()  # warnings of copies that gave way

    def warn(self, path: str, line: int | None, msg: str) -> int | None:
        """Report a problem with ``path``; the warning's index (None past the cap)."""
        self.nwarn += 1
        shown = self.redactor.path(path)
        if shown != path:  # a secret in a trial's folder or file name: reported, as any other
            where = self.redactor.path(path.removeprefix(self.rel + "/"))
            self.secrets.add(self.redactor.hide(path)[1], where)
        if self.nwarn <= MAX_WARNINGS:
            self.warnings.append(BuildWarning(shown, line, self.redactor.text(msg)))
            return len(self.warnings) - 1
        return None

    def cached(self, rel: str, st: os.stat_result) -> Any:
        """The outcome recorded for this file when its size and mtime are unchanged."""
        hit = self.known.get(rel)
        if hit is not None and hit[0] == st.st_size and hit[1] == st.st_mtime_ns:
            self.entries[rel] = hit
            return hit[2]
        return None

    @staticmethod
    def decode(data: bytes, name: str, is_eval: bool) -> Outcome:
        notes: Notes = []
        try:
            r = decode_result(data, name, is_eval, notes)
        except TrialFormatError as exc:
            return ("bad", str(exc), exc.line)
        if r is None:
            return ("job",)
        if is_eval:
            return ("eval",)
        return ("ok", r, tuple(notes)) if notes else ("ok", r)

    def scrubbed(self, outcome: Outcome) -> Outcome:
        """A decoded outcome as it is kept: its trial redacted once, when read (the redaction
        patterns are part of the build cache's key)."""
        if outcome[0] != "ok":
            return outcome
        r = scrub_trial(outcome[1], self.redactor)
        hidden: tuple[tuple[str, None], ...] = ()
        if r is not outcome[1]:  # a secret hidden: reported at every build, as notes are
            t = outcome[1]
            texts = (t.name, t.task, t.exception or "")
            hidden = tuple(
                (_SECRET_NOTE + k, None) for x in texts for k in self.redactor.hide(x)[1]
            )
        if len(outcome) > 2 or hidden:
            # its notes quote the file (a reward's text): redacted as well
            notes = tuple((self.redactor.text(m), line) for m, line in _notes(outcome))
            return ("ok", r, notes + hidden)
        return outcome if r is outcome[1] else ("ok", r)

    def apply(self, path: str, outcome: Outcome, folder: str, source: str | None = None) -> None:
        """Count one file's outcome: the result.json of trial folder ``folder``, in the
        archive ``source`` when it is a member of one."""
        kind = outcome[0]
        if kind in ("ok", "eval", "bad", "missing") and folder in self.folders:
            # a copy of a trial read whole already: counted once (a damaged copy too)
            self.again.setdefault(source or path, []).append(folder)
            return
        if kind in ("ok", "eval"):
            gave_way = self.damaged.pop(folder, None)
            if gave_way is not None:  # its earlier copy held no readable result.json
                if gave_way[0] == "bad":
                    self.malformed -= 1
                else:
                    self.missing -= 1
                if gave_way[1] is not None:
                    self.dropped.add(gave_way[1])
                self.recovered.setdefault(source or path, []).append(folder)
            self.folders.add(folder)
            if kind == "eval":
                self.eval += 1
                return
            self.results.append(outcome[1])  # (redacted when it was read: scrubbed)
            for message, line in _notes(outcome):
                if message.startswith(_SECRET_NOTE):
                    where = self.redactor.path(path.removeprefix(self.rel + "/"))
                    self.secrets.add([message.removeprefix(_SECRET_NOTE)], where)
                else:
                    self.warn(path, line, message)
        elif kind == "job":
            self.job_level += 1
            self.warn(path, None, "job-level result.json inside a trial directory: not a trial")
        elif folder in self.damaged:  # a second damaged copy: the trial is counted once
            self.again.setdefault(source or path, []).append(folder)
        elif kind == "bad":
            self.malformed += 1
            self.damaged[folder] = ("bad", self.warn(path, outcome[2], outcome[1]))
        elif kind == "missing":
            self.missing += 1
            self.damaged[folder] = ("missing", None)

    def freeze(self) -> TrialSet:
        shown = self.redactor.path(self.rel)
        if self.nwarn > MAX_WARNINGS:
            more = f"{self.nwarn - MAX_WARNINGS} more trial warnings not shown"
            self.warnings.append(BuildWarning(shown, None, more))
        if self.dropped:
            self.warnings = [w for i, w in enumerate(self.warnings) if i not in self.dropped]
        for by_source, said in (
            (self.again, "read twice: counted once"),
            (self.recovered, "read from here: no readable result.json in the folder"),
        ):
            for source, names in by_source.items():
                message = f"{_trials(names, self.redactor)} {said}"
                self.warnings.append(BuildWarning(self.redactor.path(source), None, message))
        hidden = self.secrets.warning(shown)
        if hidden is not None:
            self.warnings.append(hidden)
        # Sorted by name so a sharded (parallel) read gives the same order.
        return TrialSet(
            shown,
            tuple(sorted(self.results, key=lambda r: r.name)),
            self.eval,
            self.malformed,
            self.missing,
            self.archives,
            tuple(self.warnings),
            self.job_level,
        )


def _trials(names: list[str], redactor: Redactor) -> str:
    """``3 trials (t0, …)``: how many, naming the first."""
    n = len(names)
    return f"{n} trial{'s' if n > 1 else ''} ({redactor.text(names[0])}{', …' if n > 1 else ''})"


def _notes(outcome: Outcome) -> tuple[tuple[str, int | None], ...]:
    return outcome[2] if len(outcome) > 2 else ()


def list_trial_dirs(
    top: list[os.DirEntry], walked: list[tuple[str, int]] | None = None
) -> Iterator[tuple[str, str, bool]]:
    """Every trial directory under a trials dir whose own directories are ``top``
    (:func:`scan_trials_dir`), sorted, as ``(path below it, name, is_eval)`` (strings: Paths
    for tens of thousands of trials cost more than the listing). ``walked``
    gets each folder listed inside a session to tell a trial's own from a trial (path
    below the trials dir, mtime before its listing), to be watched."""
    for entry in top:
        if entry.name == "eval_sessions":
            for session in _sorted_dirs(entry.path):
                trials = _sorted_dirs(session.path)
                rel = f"eval_sessions/{session.name}"
                own = _a_trials_own(session.path, trials, rel, walked)
                for trial in trials:
                    if trial.name not in own:
                        yield f"{rel}/{trial.name}", trial.name, True
        else:
            yield entry.name, entry.name, False


def _a_trials_own(
    session: str, dirs: list[os.DirEntry], rel: str, walked: list[tuple[str, int]] | None
) -> set[str]:
    """The ``agent/``, ``verifier/``, … of an ``eval_sessions/<session>/`` that is itself an
    eval trial's folder, told as an archive's members are (``_TarSeen._is_trial``): all of
    them when the folder is surely a trial's; when it only holds another trial file and no
    ``job.log``, those holding no trial files of their own (each looked into goes into
    ``walked``: a file added there changes what it is)."""
    inner = {e.name: e.path for e in dirs if e.name in _IN_TRIAL}
    if not inner:
        return set()
    names = _file_names(session)
    job = "job.log" in names  # (a Harbor job's folder: its result.json, lock.json are its own)
    if "trial.log" in names or (names & _OWN_OR_JOBS and not job) or inner.keys() >= _TRIAL_DIRS:
        return set(inner)
    if not names & _TRIAL_FILES or job:
        return set()
    own = set()
    for d, path in inner.items():
        try:
            mtime = os.stat(path, follow_symlinks=False).st_mtime_ns
        except OSError:
            own.add(d)  # (gone since the session was listed: no trial there either)
            continue
        if walked is not None:
            walked.append((f"{rel}/{d}", mtime))
        if not _file_names(path) & _TRIAL_ONLY:
            own.add(d)
    return own


def _file_names(path: str) -> set[str]:
    """The names of what the folder at ``path`` holds that is no folder (an archive's file
    members, told from its folder members)."""
    try:
        with os.scandir(path) as it:
            return {e.name for e in it if not e.is_dir(follow_symlinks=False)}
    except OSError:
        return set()


_NAME = operator.attrgetter("name")


def _sorted_dirs(path: str) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return sorted((e for e in it if _is_trial_dir(e)), key=_NAME)
    except OSError:
        return []


def _is_trial_dir(entry: os.DirEntry) -> bool:
    """A folder that can be a trial's (or a session's): not a link, not a tool's."""
    return not _a_tools(entry.name) and entry.is_dir(follow_symlinks=False)


def _a_tools(name: str) -> bool:
    """A folder a tool makes beside the trials, never a trial's (``<task>__<7 chars>``): a
    hidden one (``.git``, as discovery skips them), ``__pycache__``, ``node_modules``."""
    return name.startswith(".") or name in _TOOL_DIRS


def scan_trials_dir(
    path: str, links: list[os.DirEntry] | None = None
) -> tuple[list[os.DirEntry], list[str], str | None]:
    """A trials dir listed once: its directories and the names of its trial archives (not
    directories, links followed), sorted, and why it cannot be listed, if so. Links to
    folders are not trials: ``links`` (when given) gets them, sorted, to be reported."""
    try:
        with os.scandir(path) as it:
            entries = list(it)
    except OSError as exc:
        return [], [], exc.strerror
    dirs = sorted((e for e in entries if _is_trial_dir(e)), key=_NAME)
    tars = sorted(e.name for e in entries if TAR_RE.match(e.name) and not _is_dir(e))
    if links is not None:
        links += sorted((e for e in entries if e.is_symlink() and _is_dir(e)), key=_NAME)
    return dirs, tars, None


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


# What decode_files gives for each file: (size, mtime_ns, outcome) from its fstat; size -1
# when the outcome is not kept (a file missing, unreadable or too large is looked at again).
Decoded = tuple[int, int, Outcome]
DecodeMap = Callable[[list[tuple[str, str, bool]]], list[Decoded]]


def decode_files(archive_root: str, items: list[tuple[str, str, bool]]) -> list[Decoded]:
    """Read and decode ``result.json`` files: ``(rel path, trial name, is_eval)`` →
    :data:`Decoded`, the size and mtime kept from the opened file's ``fstat``. A plain
    function of picklable arguments, for a pool's shards."""
    root = Root.of(archive_root)  # its real path worked out once, not per file
    out: list[Decoded] = []
    for rel, name, is_eval in items:
        try:
            # no link out, no FIFO
            data, st = read_bytes_stat(os.path.join(archive_root, rel), root, MAX_RESULT_BYTES)
        except FileNotFoundError:
            out.append((-1, -1, ("missing",)))
            continue
        except OSError as exc:
            out.append((-1, -1, ("bad", f"cannot read: {exc.strerror}", None)))
            continue
        if data is None:
            out.append((-1, -1, _too_large(max(st.st_size, MAX_RESULT_BYTES + 1))))
            continue
        out.append((st.st_size, st.st_mtime_ns, _Collector.decode(data, name, is_eval)))
    return out


def _too_large(size: int) -> Outcome:
    over = f"{size >> 20} MiB is over the {MAX_RESULT_BYTES >> 20} MiB limit"
    return ("bad", f"result.json of {over}: not read", None)


def parse_trials(
    root: Path,
    archive_root: Path,
    known: Known | None = None,
    decode_map: DecodeMap | None = None,
    redactor: Redactor | None = None,
) -> tuple[TrialSet, Known]:
    """Parse a trials directory: the trial set and the outcomes to keep for the next build.

    An outcome ``known`` from an earlier build is taken (a complete ``result.json`` never
    changes; a damaged one is re-read when its size or mtime changed); the rest are read
    through ``decode_map``. The build runs :func:`plan_trials` and :meth:`TrialPlan.finish`
    apart, decoding on its pool between."""
    plan = plan_trials(root, archive_root, known, redactor)
    decode = decode_map or (lambda items: decode_files(str(archive_root), items))
    return plan.finish(decode(plan.todo) if plan.todo else [], decode)


@dataclass
class TrialPlan:
    """A trials directory listed and stat'ed: what is known, and the files to decode (``todo``)."""

    root: Path
    archive_root: Path
    col: _Collector
    plan: list[tuple[str, str, Any]]  # (rel path, trial folder, outcome or index into todo)
    todo: list[tuple[str, str, bool]]  # (rel path, trial name, is_eval): for decode_files
    # What the listing found (every trial's result.json, the trial archives): the build's
    # watch of the folder is made from it (sources.Sources.watch), so the folder is listed
    # once a build.
    files: list[str] = field(default_factory=list)
    tars: list[str] = field(default_factory=list)
    unlisted: str | None = None  # why the folder could not be listed
    # The folders walked for a Harbor job's trials and an eval session's own looked into
    # (path in the archive, mtime before their listing): watched as the trials folder is.
    dirs: list[tuple[str, int]] = field(default_factory=list)

    def finish(
        self, decoded: list[Decoded], decode_map: DecodeMap | None = None
    ) -> tuple[TrialSet, Known]:
        """The trial set and outcomes to keep, given what :func:`decode_files` gave for
        ``todo``; the files found below a Harbor job's folder are read through ``decode_map``."""
        col = self.col
        outcomes: list[Outcome | None] = []
        for (frel, _name, is_eval), (size, mtime_ns, read) in zip(self.todo, decoded, strict=True):
            outcome = col.scrubbed(read)
            if size >= 0:
                col.entries[frel] = (size, mtime_ns, outcome)
            # an eval trial without its result.json is not counted (a trial's is "missing")
            outcomes.append(None if is_eval and outcome[0] == "missing" else outcome)
        decode = decode_map or (lambda items: decode_files(str(self.archive_root), items))
        for frel, name, what in self.plan:
            o = outcomes[what] if isinstance(what, int) else what
            if o is None:
                continue
            if (
                o[0] in _NO_TRIAL
                and "/" not in name
                and not (o[0] == "missing" and self._running(name, frel))
                and self._read_below(name, frel, o, decode)
            ):
                continue  # a Harbor job's folder, or a folder holding one: its trials read
            col.apply(frel, o, name)
        if self.unlisted is not None:
            col.warn(col.rel, None, f"cannot list trials directory: {self.unlisted}")
        for name in self.tars:
            col.archives += 1
            _read_tar(col, self.root / name, self.archive_root)
        return col.freeze(), col.entries

    def _running(self, name: str, frel: str) -> bool:
        """Whether the subfolder ``name`` (``frel``: its result.json's path), without its
        result.json, is a trial still running (or killed), told without a walk (thousands of
        running trials are not walked at every build): a trial.log; or a lock.json, or
        agent/ and verifier/ (a Harbor job's folder holds those too), with no job.log and no
        folder but a trial's. A folder of jobs may look so too, so it is watched. Not
        config.json: Harbor writes it after the others, and a sweep's folder may hold one."""
        top = os.path.join(self.root, name, "")
        if os.path.exists(f"{top}trial.log"):
            return True
        if not (
            os.path.exists(f"{top}lock.json")
            or all(os.path.isdir(f"{top}{d}") for d in _TRIAL_DIRS)
        ) or os.path.exists(f"{top}job.log"):  # (a Harbor job's folder holds both)
            return False
        try:
            mtime = os.stat(top, follow_symlinks=False).st_mtime_ns
        except OSError:
            return False
        if not all(e.name in _IN_TRIAL or e.name == "steps" for e in _sorted_dirs(top)):
            return False
        self.dirs.append((frel[: -len("/result.json")], mtime))
        return True

    def _read_below(self, name: str, frel: str, outcome: Outcome, decode: DecodeMap) -> bool:
        """Read the trials below the subfolder ``name``, whose own result.json is a job's
        summary, unreadable or missing (``outcome``), as an archive's members are
        (:class:`_TarSeen`); a trial running below it counts missing. False when it holds no
        trial and is a trial's folder cut short (:func:`_cut_short`): then it counts as one."""
        col = self.col
        seen = _TarSeen()
        walked: list[tuple[str, int]] = []
        found = [
            sub
            for sub in _files_below(os.path.join(self.root, name), name, seen, walked)
            if not _eval_misplaced(sub.split("/"))
        ]
        prefix = frel[: -len(f"{name}/result.json")]  # (the trials folder's, in the archive)
        got: dict[str, Outcome] = {}
        todo: list[tuple[str, str, bool]] = []
        for sub in found:
            o = _reused(col, prefix + sub, os.path.join(self.root, sub))
            if o is not None:
                got[sub] = o
            else:
                todo.append((prefix + sub, sub.rsplit("/", 2)[-2], "eval_sessions" in sub))
        for (rel, _, _), (size, mtime_ns, read) in zip(todo, decode(todo), strict=True):
            got[rel[len(prefix) :]] = o = col.scrubbed(read)
            if size >= 0:
                col.entries[rel] = (size, mtime_ns, o)
        if outcome[0] == "job":
            seen.jobs.add(name)
        seen.jobs.update(sub[: -len("/result.json")] for sub, o in got.items() if o[0] == "job")
        seen.ended.update(
            sub[: -len("/result.json")] for sub, o in got.items() if o[0] in _COMPLETE
        )
        trials: list[tuple[str, Outcome]] = []
        for sub in found:
            parts = sub.split("/")
            inside = _inside(parts)
            if inside or _steps_at(parts):
                seen.held.append((sub, parts, inside, got[sub]))
            else:
                trials.append((sub, got[sub]))
        trials += seen.trials()
        running = seen.running({sub[: -len("/result.json")] for sub, _ in trials})
        # the folders holding trials and jobs, not a trial's own: a job or trial added there
        # changes one (a trial's own folder changes as it runs: its result.json is watched),
        # watched even when none is found yet (a job before its first trial ends)
        owned = {sub[: -len("/result.json")] for sub, o in trials if o[0] != "job"}
        owned.update(running)
        if running == [name]:
            running = []  # (the folder itself: a trial running, counted as one missing)
        self.dirs += [
            (prefix + d, mtime)
            for d, mtime in walked
            if not any("/".join(d.split("/")[:i]) in owned for i in range(1, d.count("/") + 2))
        ]
        if not trials and not running:
            # a Harbor job's folder (its job.log), or a folder holding one, before its first
            # trial starts, or a folder holding nothing Harbor writes in a trial's: no
            # trial, none missing (its folders are watched all the same); else a trial
            # cut short
            return outcome[0] == "missing" and (
                seen.holds_a_job() or not _cut_short(_names(self.root / name))
            )
        if outcome[0] != "missing":  # (a folder holding a job's: no trial cut short)
            col.apply(frel, outcome, name)
        for sub, o in trials:
            col.apply(prefix + sub, o, _key(sub))
        for d in running:  # a trial still running (or killed) below a job's folder
            col.apply(f"{prefix}{d}/result.json", ("missing",), _key(f"{d}/result.json"))
        # (watched as the folder's trials are; a running one's to be, as at the top)
        self.files += [prefix + sub for sub in found] + [
            f"{prefix}{d}/result.json" for d in running
        ]
        return True


def _names(path: Path) -> set[str]:
    try:
        return set(os.listdir(path))
    except OSError:
        return set()


def _cut_short(names: set[str]) -> bool:
    """Whether a subfolder of a trials folder holding ``names``, none a ``result.json``,
    is a trial's folder cut short: empty (killed before its first file), or holding what
    Harbor writes in a trial's. One holding only other things is no trial's."""
    return not names or bool(names & _CUT_SHORT)


def _reused(col: _Collector, rel: str, path: str) -> Outcome | None:
    """The outcome known for the ``result.json`` ``rel`` (at ``path``), or None to read it: a
    trial's (never changed) without a look; any other (a job's summary, rewritten as its
    trials end; a damaged one, maybe still being written) if its size and mtime are unchanged."""
    hit = col.known.get(rel)
    if hit is None:
        return None
    if hit[2][0] in _COMPLETE:
        col.entries[rel] = hit
        return hit[2]
    try:
        st = os.stat(path)
    except OSError:
        return None
    return col.cached(rel, st)


def _key(path: str) -> str:
    """What a trial at ``path`` (its result.json's) is counted once by: its folder's name
    (Harbor names it after the trial), an eval trial's path below eval_sessions/, and the
    whole folder path of one inside an agent/, … (many trials hold one)."""
    if "eval_sessions/" in path:
        return path[path.index("eval_sessions/") :].strip("/").rsplit("/", 1)[0]
    parts = path.strip("/").rsplit("/", 2)
    if len(parts) < 2:
        return path
    return path.strip("/").rsplit("/", 1)[0] if parts[-2] in _IN_TRIAL else parts[-2]


def _files_below(top: str, name: str, seen: _TarSeen, walked: list[tuple[str, int]]) -> list[str]:
    """The ``result.json`` files below the folder ``top`` (``name`` in the trials folder),
    sorted, as paths below the trials folder; trial and job files into ``seen``, each
    folder walked with its mtime into ``walked``. Links, tools' folders and the agent/, …
    of a folder surely a trial's are not read."""
    found: list[str] = []
    stack = [(top, name)]
    while stack:
        path, rel = stack.pop()
        try:
            mtime = os.stat(path, follow_symlinks=False).st_mtime_ns
            with os.scandir(path) as it:
                entries = sorted(it, key=_NAME)
        except OSError:
            continue  # (a folder gone or unreadable: no trials found in it)
        walked.append((rel, mtime))
        names = {e.name for e in entries}
        dirs = {e.name for e in entries if e.name in _TRIAL_DIRS and _is_trial_dir(e)}
        if dirs:
            seen.add_dirs(rel, dirs)
        own = (  # a trial's folder: its agent/, steps/, … hold no trial
            "trial.log" in names
            # (a lock.json beside a result.json that may be a job's summary, read later:
            # walked, its files then told as an archive's are)
            or ("lock.json" in names and not names & {"job.log", "result.json"})
            or dirs == _TRIAL_DIRS
        )
        below = []
        for e in entries:
            sub = f"{rel}/{e.name}"
            if _is_trial_dir(e):
                if not (own and (e.name in _IN_TRIAL or e.name == "steps")):
                    below.append((e.path, sub))
            elif e.name in _FOLDER_FILES:
                seen.add_file(sub.split("/"))
                if e.name == "result.json" and rel != name:
                    found.append(sub)
        stack.extend(reversed(below))
    return sorted(found)


_COMPLETE = ("ok", "eval")  # outcomes of a trial's complete result.json: never read again
# outcomes of a trials folder's subfolder that may be no trial's but hold trials below it
_NO_TRIAL = ("job", "bad", "missing")


def plan_trials(
    root: Path, archive_root: Path, known: Known | None = None, redactor: Redactor | None = None
) -> TrialPlan:
    """List a trials directory and stat its files: the first half of :func:`parse_trials`."""
    rel = _rel(root, archive_root)
    col = _Collector(rel, known, redactor or Redactor())
    plan: list[tuple[str, str, Any]] = []  # (rel path, trial folder, outcome or index into todo)
    todo: list[tuple[str, str, bool]] = []
    # Paths by concatenation (``sub`` is relative, the prefixes end with their separator):
    # the strings os.path.join makes, at a fraction of its cost.
    in_archive = f"{rel}/" if rel != "." else ""
    on_disk = os.path.join(root, "")
    known = col.known
    links: list[os.DirEntry] = []
    top, tars, unlisted = scan_trials_dir(str(root), links)
    for link in links:  # skipped, and said so, as discovery says of the links it meets
        outside = not Path(os.path.realpath(link.path)).is_relative_to(archive_root.resolve())
        why = "link points outside the archive" if outside else "directory link"
        col.warn(f"{in_archive}{link.name}", None, f"{why}: not followed (not read as a trial)")
    files: list[str] = []
    walked: list[tuple[str, int]] = []
    for sub, name, is_eval in list_trial_dirs(top, walked):
        frel = f"{in_archive}{sub}/result.json"
        key = sub if is_eval else name  # (an eval trial is its session's: apart from training's)
        files.append(frel)
        hit = known.get(frel)
        if hit is not None and hit[2][0] not in _COMPLETE:
            # read again only if it changed: a damaged one may be a file still being written,
            # a job's summary is rewritten as its trials start and end
            try:
                st = os.stat(f"{on_disk}{sub}/result.json")
            except FileNotFoundError:
                if not is_eval:
                    plan.append((frel, key, ("missing",)))
                continue
            except OSError as exc:
                plan.append((frel, key, ("bad", f"cannot read: {exc.strerror}", None)))
                continue
            if (hit[0], hit[1]) != (st.st_size, st.st_mtime_ns):
                if st.st_size > MAX_RESULT_BYTES:
                    plan.append((frel, key, _too_large(st.st_size)))
                    continue
                hit = None
        if hit is not None:  # a trial's complete result.json never changes: not even stat'ed
            col.entries[frel] = hit
            plan.append((frel, key, hit[2]))
        else:  # decode_files opens it (its fstat is what is kept)
            plan.append((frel, key, len(todo)))
            todo.append((frel, name, is_eval))
    dirs = [(f"{in_archive}{d}", mtime) for d, mtime in walked]
    return TrialPlan(root, archive_root, col, plan, todo, files, tars, unlisted, dirs)


def _read_tar(col: _Collector, path: Path, archive_root: Path) -> None:
    rel = _rel(path, archive_root)
    try:
        st = path.stat()
        fh = open_regular(path, archive_root)  # no link out of the archive, no FIFO
    except OSError as exc:
        col.warn(rel, None, f"cannot read: {exc.strerror}")
        return
    with fh:
        members = col.cached(rel, st)
        if members is None:
            members = []
            seen = _TarSeen()
            damage = note = None
            try:
                note = _tar_pass(col, fh, members, seen)
            except UnsafeInput as exc:
                damage = f"trials archive {exc.strerror}"
            except (tarfile.TarError, OSError, EOFError) as exc:
                damage = f"damaged trials archive ({exc}): read up to the damage"
            # (what was seen before damage too: the trials held back so far are counted)
            members += [(name, col.scrubbed(outcome)) for name, outcome in seen.trials()]
            # trials still running or killed (no result.json), counted missing as in a folder
            counted = {"/".join(_parts(name)[:-1]) for name, _ in members}
            running = seen.running(counted)
            members += [(f"{d}/result.json", ("missing",)) for d in running]
            if damage is None:  # (else its files may lie past the damage)
                # a trial's folder cut short at the top, as in a folder
                cut = seen.bare(counted, running)
                members += [(f"{d}/result.json", ("missing",)) for d in cut]
            if note is not None:  # (not kept: said again by every build until it is mended)
                col.warn(rel, None, note)
            elif damage is None:
                col.entries[rel] = (st.st_size, st.st_mtime_ns, members)
            if damage is not None:
                # counted for want of the files that would say they are a trial's own: those
                # may lie past the damage, so they are named
                unsure = seen.unsure()
                if unsure:
                    what = f"{len(unsure)} trial{'s' if len(unsure) > 1 else ''}"
                    damage += (
                        f"; {what} ({unsure[0]}{', …' if len(unsure) > 1 else ''}) counted from"
                        " inside an agent/, artifacts/, … folder whose trial's own files, if any,"
                        " lie past the damage"
                    )
                col.warn(rel, None, damage)
    for name, outcome in members:
        col.apply(f"{rel}:{name}", outcome, _key(name), rel)


class _TarSeen:
    """What one read of a trials archive saw that decides the ``result.json`` files inside
    an ``agent/``, ``steps/<step>/verifier/``, … (:func:`_inside`), known only once every
    member is seen (they come in any order). Such a file is no trial's when the folder
    holding that ``agent/``, … is surely a trial's (:meth:`_surely_a_trials`); else it is a
    trial's when its own folder holds a file written in each trial folder, or when no
    folder holding such an ``agent/``, … holds trial files and is no job's."""

    def __init__(self) -> None:
        # (member name, its parts, the folders holding an agent/, … above it, its outcome)
        self.held: list[tuple[str, list[str], list[int], Outcome]] = []
        self.files: dict[str, set[str]] = {}  # folder -> the trial and job files it holds
        self.jobs: set[str] = set()  # folders whose result.json read as a job's summary
        self.ended: set[str] = set()  # folders whose result.json read as a trial's
        self.dirs: dict[str, set[str]] = {}  # folder -> which of agent/, verifier/ it holds
        # the folders at the archive's top -> the names each holds
        self.below: dict[str, set[str]] = {}

    def add_file(self, parts: list[str]) -> None:
        if len(parts) >= 2 and parts[-1] in _FOLDER_FILES:
            self.files.setdefault("/".join(parts[:-1]), set()).add(parts[-1])

    def add_dirs(self, folder: str, names: set[str]) -> None:
        self.dirs.setdefault(folder, set()).update(names)

    def add_path(self, parts: list[str]) -> None:
        """The agent/ and verifier/ folders a member's path goes through."""
        for i in range(1, len(parts)):
            if parts[i] in _TRIAL_DIRS:
                self.add_dirs("/".join(parts[:i]), {parts[i]})

    def trials(self) -> list[tuple[str, Outcome]]:
        """The held ``result.json`` files that are trials', in the archive's order."""
        return [(name, o) for name, parts, inside, o in self.held if self._is_trial(parts, inside)]

    def unsure(self) -> list[str]:
        """The held trials' ``result.json`` counted only because no file seen says they are a
        trial's own (their own folder holds no ``config.json``, …)."""
        return [
            "/".join(parts)
            for _, parts, inside, o in self.held
            if o[0] in ("ok", "eval")
            and not self._holds(parts, len(parts) - 1, _TRIAL_ONLY)
            and self._is_trial(parts, inside)
        ]

    def running(self, counted: set[str]) -> list[str]:
        """Trials still running, or killed, sorted: the folders surely a trial's (a
        ``steps/<step>/`` by more than its ``agent/`` and ``verifier/``) with no
        ``result.json``, none inside another trial's ``agent/``, …, and none holding a folder
        of ``counted`` (a trial's or a job's) or another such."""
        maybe = []
        for folder in set(self.files) | set(self.dirs):
            parts = folder.split("/")
            n = len(parts)
            names = self.files.get(folder, set())
            if (
                "result.json" not in names
                # (a Harbor job's folder holds a job.log, a trial's a trial.log)
                and ("job.log" not in names or "trial.log" in names)
                # (an eval trial without its result.json is not counted; a tool's, none)
                and "eval_sessions" not in parts
                and not any(_a_tools(p) for p in parts)
                and self._surely_a_trials(parts, n)
                and not any(self._surely_a_trials(parts, i) for i in _inside([*parts, ""]))
                and not self._in_steps([*parts, ""])
                # a step's folder (steps/<step>/) holds agent/ and verifier/ as well
                and not (parts[-2:-1] == ["steps"] and folder not in self.files)
            ):
                maybe.append(folder)
        # a job summary's shape among a trial's own files (its artifacts/: a file collected
        # from the sandbox) is no job's folder: the trial around it is still running
        jobs = [
            job
            for job in self.jobs
            for parts in [[*job.split("/"), "result.json"]]
            if not any(self._surely_a_trials(parts, i) for i in _inside(parts))
        ]
        above = {
            "/".join(parts[:i])
            for folder in [*counted, *jobs, *maybe]
            for parts in [folder.split("/")]
            for i in range(1, len(parts))
        }
        return sorted(f for f in maybe if f not in above)

    def bare(self, counted: set[str], running: list[str]) -> list[str]:
        """The folders at the archive's top with no ``result.json``, holding no trial, job,
        running trial or ``job.log``, that are trials' folders cut short (:func:`_cut_short`),
        sorted: counted missing, as a folder read from disk counts them."""
        full = [*counted, *running, *(d for d, n in self.files.items() if "job.log" in n)]
        taken = {d.split("/", 1)[0] for d in full}
        return sorted(
            top
            for top, names in self.below.items()
            if top not in taken
            and top != "eval_sessions"
            and not _a_tools(top)
            and "result.json" not in self.files.get(top, ())
            and _cut_short(names)
        )

    def _is_trial(self, parts: list[str], inside: list[int]) -> bool:
        own = len(parts) - 1  # (its own folder: parts[:own])
        if any(self._surely_a_trials(parts, i) for i in inside) or self._in_steps(parts):
            # inside a trial's own agent/, artifacts/, …, even beside a trial.log there (a
            # folder walk reads no such folder of a trial's either)
            return False
        if self._holds(parts, own, _TRIAL_LOG):
            return True  # beside its own trial.log, below no other
        return self._holds(parts, own, _TRIAL_ONLY) or not any(
            self._holds(parts, i, _TRIAL_FILES) and not self._a_jobs(parts, i) for i in inside
        )

    def _in_steps(self, parts: list[str]) -> bool:
        """Whether the member at ``parts`` lies in the ``steps/`` of a multi-step trial's
        folder, all of it the trial's own: a folder with a ``trial.log``, a ``result.json``
        read as a trial's, a ``lock.json`` and neither ``job.log`` nor ``result.json`` (a
        damaged one may be a job's, whose ``steps/`` hold trials), or agent/ and verifier/."""
        for i in _steps_at(parts):
            folder = "/".join(parts[:i])
            names = self.files.get(folder, set())
            if (
                "trial.log" in names
                or folder in self.ended
                or ("lock.json" in names and not names & {"job.log", "result.json"})
                or self.dirs.get("/".join(parts[:i])) == _TRIAL_DIRS
            ):
                return True
        return False

    def holds_a_job(self) -> bool:
        """Whether a folder seen holds a Harbor job's ``job.log``, not below a folder surely a
        trial's (there it is the trial's own file)."""
        return any(
            "job.log" in names
            and not any(self._surely_a_trials(parts, i) for i in range(1, len(parts)))
            for folder, names in self.files.items()
            for parts in (folder.split("/"),)
        )

    def _holds(self, parts: list[str], upto: int, names: frozenset[str]) -> bool:
        return bool(names & self.files.get("/".join(parts[:upto]), set()))

    def _a_jobs(self, parts: list[str], upto: int) -> bool:
        """Whether the folder ``parts[:upto]`` is a Harbor job's: its job.log, its summary."""
        return self._holds(parts, upto, _JOB_FILES) or "/".join(parts[:upto]) in self.jobs

    def _surely_a_trials(self, parts: list[str], upto: int) -> bool:
        """A trial's folder: a trial.log, its agent/ and verifier/ (TrialPaths.mkdir()), or
        a result.json or lock.json of no job's."""
        return (
            self._holds(parts, upto, _TRIAL_LOG)
            or self.dirs.get("/".join(parts[:upto])) == _TRIAL_DIRS
            or (self._holds(parts, upto, _OWN_OR_JOBS) and not self._a_jobs(parts, upto))
        )


def _inside(parts: list[str]) -> list[int]:
    """Where a member's path goes into a folder Harbor writes in a trial folder: each ``i``
    whose ``parts[i]`` is one of :data:`_IN_TRIAL`, or a ``steps/`` with one two levels
    down (``steps/<step>/agent/``), so that ``parts[:i]`` may be the trial's folder. Not at
    the top, nor another ``steps/`` (a job's or a user's folder named so holds trials)."""
    last = len(parts) - 1  # (parts[last]: the file's name)
    return [
        i
        for i in range(1, last)
        if parts[i] in _IN_TRIAL
        or (parts[i] == "steps" and i + 2 < last and parts[i + 2] in _IN_STEP)
    ]


def _tar_pass(col: _Collector, fh: BinaryIO, members: list, seen: _TarSeen) -> str | None:
    """One read of a trials archive as a stream: each ``result.json`` decoded into
    ``members``, or, inside an ``agent/``, … (:func:`_inside`), held in ``seen`` with the
    files that decide it. A gzip is unpacked by :class:`_Gunzip`. The archive ends at its
    end-of-archive block, as GNU tar reads one without ``--ignore-zeros``: what follows is
    not read and is no damage; a second archive right after it is said (the returned note)."""
    gz = fh.read(2) == b"\x1f\x8b"
    fh.seek(0)
    src = _Gunzip(fh) if gz else None
    # (tarfile's "r|*" would read a gzip's first member only)
    stream = cast(BinaryIO, src) if src is not None else fh
    mode: Literal["r|", "r|*"] = "r|" if src is not None else "r|*"
    try:
        with tarfile.open(fileobj=stream, mode=mode, tarinfo=_Header) as tar:
            _read_members(col, tar, members, seen)
            return _archive_after(tar)
    except (tarfile.TarError, EOFError) as exc:
        if src is not None and src.error is not None:  # (the stream ended there: tarfile's
            raise tarfile.ReadError(src.error) from exc  # words say it was cut short)
        raise


def _read_members(col: _Collector, tar: tarfile.TarFile, members: list, seen: _TarSeen) -> None:
    unpacked = 0
    below = seen.below
    for member in tar:
        unpacked += max(0, member.size)
        if unpacked > MAX_TAR_UNPACKED:  # a compression bomb: stop reading
            raise UnsafeInput(f"unpacks to over {MAX_TAR_UNPACKED >> 30} GiB: read up to there")
        # a member name that is not UTF-8 (tarfile reads it with surrogateescape) is
        # shown as a file name would be; JSON cannot hold it as it is
        name = undecodable_shown(member.name)
        parts = _parts(name)
        if not parts:
            continue
        seen.add_path(parts)
        if len(parts) > 1:
            below.setdefault(parts[0], set()).add(parts[1])
        elif member.isdir():
            below.setdefault(parts[0], set())
        if not member.isfile():
            continue
        seen.add_file(parts)
        if len(parts) < 2 or parts[-1] != "result.json":
            continue  # a job-level result.json at the archive's top; another file
        if any(_a_tools(p) for p in parts[:-1]):
            continue  # a tool's file (a package's in node_modules/), as in a folder
        if _eval_misplaced(parts):
            continue  # an eval trial's own file (its agent/'s), as in a folder
        if member.size > MAX_RESULT_BYTES:
            outcome: Outcome = ("bad", "result.json over the size limit: not read", None)
        else:
            mf = tar.extractfile(member)
            if mf is None:
                continue
            outcome = col.decode(mf.read(), parts[-2], "eval_sessions" in parts)
        if outcome[0] == "job":
            seen.jobs.add("/".join(parts[:-1]))
        elif outcome[0] in _COMPLETE:
            seen.ended.add("/".join(parts[:-1]))
        inside = _inside(parts)
        if inside or _steps_at(parts):
            seen.held.append((name, parts, inside, outcome))
        else:
            members.append((name, col.scrubbed(outcome)))
    # tarfile stops at the end-of-archive block, and as silently where the bytes end: a copy
    # cut between two members, or inside a header. Only the first read a whole block of
    # zeros where the next header would be.
    assert tar.fileobj is not None
    at = tar.fileobj.tell()
    if tar.offset < at < tar.offset + tarfile.BLOCKSIZE:
        raise tarfile.ReadError("it ends inside a member's header")
    if at < tar.offset + tarfile.BLOCKSIZE:
        raise tarfile.ReadError("it ends without its end-of-archive block")


def _archive_after(tar: tarfile.TarFile) -> str | None:
    """A note when a tar header follows the end-of-archive block (``cat a.tar b.tar``): not
    read, as by GNU tar, but not lost in silence. Only a record's padding of zeros is looked
    past: reading on through zeros would be unbounded work on a small compressed file."""
    assert tar.fileobj is not None
    try:
        rest = tar.fileobj.read(tarfile.RECORDSIZE + tarfile.BLOCKSIZE)
    except (tarfile.TarError, OSError, EOFError, zlib.error):
        return None  # (bytes after the end that are no archive: not read, as GNU tar)
    at = (len(rest) - len(rest.lstrip(b"\0"))) // tarfile.BLOCKSIZE * tarfile.BLOCKSIZE
    block = rest[at : at + tarfile.BLOCKSIZE]
    if len(block) < tarfile.BLOCKSIZE:
        return None
    try:
        tarfile.TarInfo.frombuf(block, tarfile.ENCODING, "surrogateescape")
    except tarfile.HeaderError:
        return None
    return (
        "tar data follows this archive's end-of-archive block (a second archive"
        " concatenated?): it is not read; unpack both and pack them as one"
    )


class _Gunzip:
    """A gzip's members one after another, as a file read in order (tarfile's own stream
    unpacks the first member only). Damage ends the data where it is, its cause in
    :attr:`error`: tarfile then reads up to there and nothing unpacked before it is lost."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh
        self.z = zlib.decompressobj(wbits=31)  # a gzip member: header and CRC checked
        self.buf = b""  # read, not yet unpacked
        self.begun = False  # whether the member has had bytes
        self.error: str | None = None
        self.ended = False  # zeros after a member: the padding gzip allows at the end

    def read(self, size: int = -1) -> bytes:
        """The next bytes unpacked (any number; none at the end or at damage)."""
        while self.error is None and not self.ended:
            if not self.buf:
                self.buf = self.fh.read(1 << 16)
                if not self.buf:
                    if self.begun and not self.z.eof:
                        self.error = "its gzip data ends inside a member"
                    break
            after = self.z.eof  # another member starts, or the zeros gzip allows at the end
            if after:
                if self.buf[:1] == b"\0":  # (what follows the zeros is not read: bounded work)
                    self.ended = True
                    break
                self.z = zlib.decompressobj(wbits=31)
            self.begun = True
            try:
                out = self.z.decompress(self.buf, 1 << 16)
            except zlib.error as exc:
                junk = after and self.buf[:2] != b"\x1f\x8b"  # (no gzip's first bytes)
                what = "bytes after a gzip member that are no gzip" if junk else "damaged gzip data"
                self.error = f"{what} ({exc})"
                break
            self.buf = self.z.unused_data if self.z.eof else self.z.unconsumed_tail
            if out:
                return out
        return b""


_INVALID_HEADER: type[Exception] = tarfile.InvalidHeaderError  # type: ignore[attr-defined]


class _Header(tarfile.TarInfo):
    """A member's header as tarfile reads it, but a block that is no header (bytes
    overwritten in a copy) is damage: tarfile alone stops there silently, as at the
    archive's end."""

    __slots__ = ()  # (as TarInfo's: no dict per member)

    @classmethod
    def fromtarfile(cls, tar: tarfile.TarFile) -> Self:
        try:
            return super().fromtarfile(tar)
        except _INVALID_HEADER as exc:
            if tar.offset == 0:
                raise tarfile.ReadError(f"not a tar archive: {exc}") from None
            raise tarfile.ReadError(f"no tar header at byte {tar.offset}: {exc}") from None


def _eval_misplaced(parts: list[str]) -> bool:
    """Whether the ``result.json`` at ``parts`` lies below an ``eval_sessions/`` other than
    as ``eval_sessions/<session>/<trial>/result.json``: one deeper is an eval trial's own."""
    if "eval_sessions" not in parts:
        return False
    at = len(parts) - 1 - parts[::-1].index("eval_sessions")
    return len(parts) - at != 4


def _steps_at(parts: list[str]) -> list[int]:
    """Each ``i`` whose ``parts[i]`` is a ``steps/`` the member lies below (not at the top):
    ``parts[:i]`` may be a multi-step trial's folder."""
    return [i for i in range(1, len(parts) - 2) if parts[i] == "steps"]


def _parts(name: str) -> list[str]:
    """An archive member's path as its folders and name (``./t0/…``: ``t0/…``)."""
    return [p for p in name.split("/") if p not in ("", ".")]


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
