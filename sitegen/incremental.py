"""Incremental builds, in one place: what the last build left, and what this one may reuse.

In the spirit of Lektor's builder, each artifact depends on sources with
fingerprints: a log's parse on the log and its infra logs (path, size,
mtime), a trial outcome on its ``result.json``, a page on a signature of
what it shows, the whole site on the input signature. :class:`BuildState`
owns all of it:

* **Parsed logs** with the parser's state after the last complete line, so a
  grown log is read on from there (``LogState``).
* **Trial outcomes** per trials folder: size, mtime and outcome of each
  ``result.json`` (a complete one is written once and never re-read).
* **The site**: the input signature, each job and run page's signature and
  the size and mtime of every file the last build wrote — the build is skipped
  when the inputs are the same *and* every file is still there as written.

It lives in ``.<out>.cache/`` beside the output folder. That folder may lie
inside a shared archive (``-o ARCHIVE/site``) where others can write, so the
cache holds plain JSON only, each file versioned and checked field by field
as it is read: a damaged or planted file is ignored with a warning and its
input parsed again. Nothing in it is ever executed or unpickled.
A change of sitegen's version or of the redaction patterns starts it afresh;
``--clean`` ignores it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import shutil
import stat
import typing
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from sitegen import __version__
from sitegen.jsonio import dumps
from sitegen.model.codec import PARSED_FORMAT, parsed_from_json, parsed_to_json
from sitegen.model.parsed import TrialResult
from sitegen.read.logfile import LogState
from sitegen.write import MARKER, FileRecord, SiteWriter, write_error

if TYPE_CHECKING:
    from sitegen.model.parsed import Discovery, Job, ParsedLog
    from sitegen.options import BuildOptions

CACHE_VERSION = 2  # bump when the layout of any cache file changes
MAX_CACHE_FILE = 1 << 30  # a cache file larger than this is not read (a planted giant)

Fingerprint = tuple[tuple[str, int, int], ...]


class CacheFileError(ValueError):
    """A cache file that is not what sitegen writes: damaged, truncated or planted."""


# -- fingerprints and signatures -----------------------------------------------------------------


def fingerprint(paths: Iterable[Path]) -> Fingerprint:
    """(name, size, mtime_ns) of each path; (name, -1, -1) when it cannot be read."""
    out = []
    for p in paths:
        try:
            st = p.stat()
            out.append((str(p), st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((str(p), -1, -1))
    return tuple(out)


def tree_signature(*roots: Path) -> str:
    """A hash of every file's name, size and mtime under ``roots`` (templates, static)."""
    h = hashlib.sha1()
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.is_file():
                st = p.stat()
                h.update(f"{p.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def input_signature(
    opts: BuildOptions,
    disc: Discovery,
    jobs: list[Job],
    fingerprints: dict[str, object],
    n_warnings: int,
    assets: str,
) -> str:
    """Everything a page can show, hashed: equal to the last build's, the site is up to date.

    A job's status is in it because a "running" job turns "incomplete" with
    time alone; ``assets`` is the templates' and static files' signature.
    """
    h = hashlib.sha1()
    h.update(
        repr((__version__, opts.title, opts.base_url, opts.redact_patterns, n_warnings)).encode()
    )
    h.update(assets.encode())
    h.update(repr(disc.skipped).encode())
    for job in jobs:
        notes = job.source.notes and fingerprint([opts.archive / disc.real(job.source.notes)])
        h.update(repr((job.id, job.source.log, job.status, job.run_id, notes)).encode())
    h.update(repr(sorted(fingerprints.items(), key=lambda kv: kv[0])).encode())
    return h.hexdigest()


class PageReuse:
    """Which job and run pages stay as the last build wrote them; this build's page signatures.

    A page's signature hashes what it shows (its page object and the parts of
    other pages it quotes), the templates and static files, and the options
    every page prints. Equal to the last build's and with every file still as
    written (:meth:`SiteWriter.carry_over`), the page is not rendered again.
    """

    def __init__(
        self, previous: dict[str, str], assets: str, opts: BuildOptions, writer: SiteWriter
    ) -> None:
        self.previous = previous
        self.writer = writer
        self.signatures: dict[str, str] = {}
        self._base = hashlib.sha1(assets.encode())
        self._base.update(repr((opts.title, opts.base_url)).encode())

    def carry_over(self, key: str, parts: tuple, files: list[str]) -> bool:
        """Record the page's signature; True when its files were kept as they are."""
        h = self._base.copy()
        for part in parts:
            h.update(dumps(part))
        sig = self.signatures[key] = h.hexdigest()
        return self.previous.get(key) == sig and self.writer.carry_over(files)


# -- the state -------------------------------------------------------------------------------------


class BuildState:
    """The build cache of one output folder: read at the start of a build, saved as it goes.

    ``warnings`` collects the cache files that were ignored (damaged or not
    sitegen's); they are reported on the command line, not published.
    """

    def __init__(self, cache_dir: Path, opts: BuildOptions) -> None:
        self.dir = cache_dir
        self.warnings: list[str] = []
        self.key = {
            "version": CACHE_VERSION,
            "sitegen": __version__,
            "redact_patterns": list(opts.redact_patterns),
            "parsed_format": PARSED_FORMAT,
            "trial_fields": TRIAL_SHAPE,
        }
        self.inputs: str | None = None  # the last build's input signature
        self.pages: dict[str, str] = {}  # page key -> signature, of the last build
        self.files: dict[str, FileRecord] = {}  # file -> (size, mtime_ns), of the last build
        self._open(fresh=opts.clean)
        site = self._load("site", "site")
        if site is not None:
            try:
                self.inputs, self.pages, self.files = _site_from_json(site)
            except (CacheFileError, TypeError, ValueError) as exc:
                self._ignored(self._path("site", "site"), exc)

    # -- the folder ------------------------------------------------------------------------------
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
                valid = _loads(_read_file(meta_path)) == self.key
            except (CacheFileError, OSError, ValueError) as exc:
                self._ignored(meta_path, exc)
        if valid:
            return
        shutil.rmtree(self.dir, ignore_errors=True)  # never follows links inside
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            _atomic(meta_path, orjson.dumps(self.key))
        except OSError as exc:
            raise write_error(self.dir, exc) from None

    def _path(self, kind: str, name: str) -> Path:
        digest = hashlib.sha1(name.encode("utf-8", "surrogateescape")).hexdigest()[:20]
        return self.dir / kind / f"{digest}.json" if kind != "site" else self.dir / "site.json"

    def _ignored(self, path: Path, exc: Exception) -> None:
        self.warnings.append(f"cache file {path} ignored ({exc}): its input is read again")

    def _load(self, kind: str, name: str) -> Any | None:
        """The body stored under ``kind/name``; None when absent, damaged or not sitegen's."""
        path = self._path(kind, name)
        try:
            doc = _loads(_read_file(path))
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

    def _save(self, kind: str, name: str, body: Any) -> None:
        doc = {"version": CACHE_VERSION, "kind": kind, "name": name, "body": body}
        path = self._path(kind, name)
        try:
            _atomic(path, _dumps(doc))
        except OSError as exc:
            raise write_error(path, exc) from None

    # -- logs ------------------------------------------------------------------------------------
    def cached_log(self, rel: str, fp: Fingerprint) -> tuple[ParsedLog | None, LogState | None]:
        """The parse of log ``rel`` when its inputs are unchanged; else the state to read on from."""
        body = self._load("log", rel)
        if body is None:
            return None, None
        path = self._path("log", rel)
        try:
            _check(isinstance(body, dict), "a log entry is not an object")
            if _fingerprint_from_json(body["fingerprint"]) == fp:
                return parsed_from_json(body["parsed"]), None
            # Changed: only the parser state is needed, to read on if the log grew.
            return None, LogState.from_json(body["state"])
        except (CacheFileError, KeyError, TypeError, ValueError, RecursionError) as exc:
            self._ignored(path, exc)
            return None, None

    def keep_log(self, rel: str, fp: Fingerprint, parsed: ParsedLog, state: LogState) -> None:
        """Keep a log's parse, the fingerprint it was made from and where to read on."""
        self._save(
            "log",
            rel,
            {
                "fingerprint": [list(x) for x in fp],
                "parsed": parsed_to_json(parsed),
                "state": state.to_json(),
            },
        )

    # -- trials ----------------------------------------------------------------------------------
    def trial_outcomes(self, trials_dir: str) -> dict[str, tuple[int, int, Any]]:
        """What the last build read in a trials folder: ``{file: (size, mtime_ns, outcome)}``."""
        body = self._load("trials", trials_dir)
        if body is None:
            return {}
        try:
            return _known_from_json(body)
        except (CacheFileError, TypeError, ValueError, IndexError, KeyError) as exc:
            self._ignored(self._path("trials", trials_dir), exc)
            return {}

    def keep_trial_outcomes(self, trials_dir: str, known: dict[str, tuple[int, int, Any]]) -> None:
        self._save("trials", trials_dir, _known_to_json(known))

    # -- the site --------------------------------------------------------------------------------
    def site_is_current(self, inputs: str, out: Path) -> bool:
        """Whether the site in ``out`` is what this build would write: skip the build then.

        The inputs must match the last build's, and every file it wrote must be
        there as it wrote it: a file the user deleted is written again.
        """
        if inputs != self.inputs or not self.files or not (out / MARKER).is_file():
            return False
        for rel, record in self.files.items():
            try:
                st = os.stat(out / rel, follow_symlinks=False)
            except OSError:
                return False
            if (st.st_size, st.st_mtime_ns) != record:
                return False
        return True

    def save_site(self, inputs: str, pages: dict[str, str], files: dict[str, FileRecord]) -> None:
        """Record what this build wrote (after it was published)."""
        self.inputs, self.pages, self.files = inputs, pages, files
        self._save(
            "site",
            "site",
            {"inputs": inputs, "pages": pages, "files": {k: list(v) for k, v in files.items()}},
        )


# -- files -----------------------------------------------------------------------------------------


def _read_file(path: Path) -> bytes:
    """A cache file's bytes; only a regular file of sane size (never a FIFO, device or link)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CacheFileError("not a regular file")
        if st.st_size > MAX_CACHE_FILE:
            raise CacheFileError(f"{st.st_size >> 20} MiB is more than a cache file holds")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read()
    finally:
        os.close(fd)


def _atomic(path: Path, data: bytes) -> None:
    """Write a cache file whole or not at all (a crash leaves the old one or none)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _dumps(obj: object) -> bytes:
    try:
        return orjson.dumps(obj)
    except TypeError:
        # An integer beyond 64 bits (a hostile log can hold one): orjson cannot write it and
        # would read it back as a float, so the standard library writes this file, and the
        # leading space (plain JSON whitespace) tells _loads to read it with the same.
        return b" " + json.dumps(obj, allow_nan=False, separators=(",", ":")).encode()


def _loads(data: bytes) -> Any:
    try:
        if data[:1] == b" ":
            return json.loads(data, parse_constant=_no_constant)
        return orjson.loads(data)
    except (ValueError, RecursionError) as exc:  # orjson's JSONDecodeError is a ValueError
        raise CacheFileError(f"not JSON: {exc}") from None


def _no_constant(name: str) -> float:
    raise CacheFileError(f"{name} is not JSON")


# -- codecs: each field checked as it is read -------------------------------------------------------


def _check(ok: bool, what: str) -> None:
    if not ok:
        raise CacheFileError(what)


def _int(v: Any, what: str) -> int:
    _check(type(v) is int, f"{what} is not an integer")
    return v


def _opt_int(v: Any, what: str) -> int | None:
    if isinstance(v, str) and v.lstrip("-").isdigit():
        return int(v)  # beyond 64 bits: written as digits (see _int_to_json)
    return None if v is None else _int(v, what)


def _int_to_json(v: int | None) -> int | str | None:
    """An integer; as a string of digits beyond 64 bits (which orjson reads back as a float)."""
    return v if v is None or -(2**63) <= v < 2**63 else str(v)


def _str(v: Any, what: str) -> str:
    _check(isinstance(v, str), f"{what} is not a string")
    return v


def _opt_str(v: Any, what: str) -> str | None:
    return None if v is None else _str(v, what)


_SPECIAL = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _num_to_json(v: float | None) -> float | str | None:
    """A float, with nan/inf as strings (JSON has no such numbers)."""
    if v is None or math.isfinite(v):
        return v
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def _opt_num(v: Any, what: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, str) and v in _SPECIAL:
        return _SPECIAL[v]
    _check(type(v) in (int, float), f"{what} is not a number")
    return float(v)


def _bool(v: Any, what: str) -> bool:
    _check(isinstance(v, bool), f"{what} is not a boolean")
    return v


def _opt_datetime(v: Any, what: str) -> datetime | None:
    if v is None:
        return None
    try:
        return datetime.fromisoformat(_str(v, what))
    except ValueError:
        raise CacheFileError(f"{what} is not a date-time") from None


def _field_codec(tp: Any) -> tuple[Callable[[Any], Any], Callable[[Any, str], Any]]:
    """(encode, decode) for one field type of :class:`TrialResult`."""
    if tp is str:
        return (lambda v: v), _str
    if tp is bool:
        return (lambda v: v), _bool
    if tp == int | None:
        return _int_to_json, _opt_int
    if tp == float | None:
        return _num_to_json, _opt_num
    if tp == str | None:
        return (lambda v: v), _opt_str
    if tp == datetime | None:
        return (lambda v: None if v is None else v.isoformat()), _opt_datetime
    raise TypeError(f"no cache encoding for a trial field of type {tp!r}")  # caught by the tests


# Positional, in field order: a trials folder's outcomes hold tens of thousands of trials,
# and field names would double the file. Derived from the dataclass, so a new field is
# cached too; the field list is part of the cache key (a new shape starts afresh).
_TRIAL_FIELDS = [
    (f.name, *_field_codec(typing.get_type_hints(TrialResult)[f.name]))
    for f in dataclasses.fields(TrialResult)
]
TRIAL_SHAPE = ",".join(name for name, _, _ in _TRIAL_FIELDS)


def _trial_to_json(r: TrialResult) -> list:
    return [enc(getattr(r, name)) for name, enc, _ in _TRIAL_FIELDS]


def _trial_from_json(v: Any) -> TrialResult:
    _check(isinstance(v, list) and len(v) == len(_TRIAL_FIELDS), "a trial has other fields")
    return TrialResult(
        **{name: dec(x, name) for (name, _, dec), x in zip(_TRIAL_FIELDS, v, strict=True)}
    )


def _outcome_to_json(o: tuple) -> list:
    if o[0] == "ok":
        return ["ok", _trial_to_json(o[1])]
    return list(o)


def _outcome_from_json(v: Any) -> tuple:
    _check(isinstance(v, list) and bool(v), "an outcome is not a list")
    kind = v[0]
    if kind == "ok" and len(v) == 2:
        return ("ok", _trial_from_json(v[1]))
    if kind in ("eval", "job", "missing") and len(v) == 1:
        return (kind,)
    if kind == "bad" and len(v) == 3:
        return ("bad", _str(v[1], "message"), _opt_int(v[2], "line"))
    raise CacheFileError(f"unknown outcome {str(kind)[:40]!r}")


def _known_to_json(known: dict[str, tuple[int, int, Any]]) -> dict:
    out = {}
    for rel, (size, mtime, what) in known.items():
        if isinstance(what, list):  # a tar archive: (member, outcome) pairs
            out[rel] = [size, mtime, {"tar": [[m, _outcome_to_json(o)] for m, o in what]}]
        else:
            out[rel] = [size, mtime, {"file": _outcome_to_json(what)}]
    return out


def _known_from_json(body: Any) -> dict[str, tuple[int, int, Any]]:
    _check(isinstance(body, dict), "trial outcomes are not an object")
    known: dict[str, tuple[int, int, Any]] = {}
    for rel, v in body.items():
        _check(isinstance(v, list) and len(v) == 3 and isinstance(v[2], dict), "bad entry")
        size, mtime = _int(v[0], "size"), _int(v[1], "mtime")
        what = v[2]
        if "tar" in what:
            _check(isinstance(what["tar"], list), "tar members are not a list")
            members = []
            for m in what["tar"]:
                _check(isinstance(m, list) and len(m) == 2, "bad tar member")
                members.append((_str(m[0], "member"), _outcome_from_json(m[1])))
            known[rel] = (size, mtime, members)
        else:
            known[rel] = (size, mtime, _outcome_from_json(what.get("file")))
    return known


def _fingerprint_from_json(v: Any) -> Fingerprint:
    _check(isinstance(v, list), "a fingerprint is not a list")
    out = []
    for x in v:
        _check(isinstance(x, list) and len(x) == 3, "bad fingerprint entry")
        out.append((_str(x[0], "path"), _int(x[1], "size"), _int(x[2], "mtime")))
    return tuple(out)


def _site_from_json(body: Any) -> tuple[str, dict[str, str], dict[str, FileRecord]]:
    _check(isinstance(body, dict), "the site record is not an object")
    inputs = _str(body["inputs"], "input signature")
    pages = body["pages"]
    _check(isinstance(pages, dict), "page signatures are not an object")
    files = body["files"]
    _check(isinstance(files, dict), "file records are not an object")
    return (
        inputs,
        {_str(k, "page"): _str(v, "signature") for k, v in pages.items()},
        {_str(k, "file"): _record_from_json(v) for k, v in files.items()},
    )


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


def _record_from_json(v: Any) -> FileRecord:
    _check(isinstance(v, list) and len(v) == 2, "bad file record")
    return (_int(v[0], "size"), _int(v[1], "mtime"))
