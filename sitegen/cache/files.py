"""The build cache's files: plain JSON, versioned, every field checked as it is read.

The cache lives beside the output folder, which may lie inside an archive
that others can write to (``-o ARCHIVE/site``), so nothing here is ever
executed or unpickled: a file is read only if it is a regular file of sane
size, parsed as JSON and rebuilt field by field; anything else raises
:class:`CacheFileError` and :class:`~sitegen.cache.state.BuildState` ignores
the file with a warning.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import operator
import os
import stat
import typing
import zlib
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec
import orjson

from sitegen.errors import BuildWarning
from sitegen.model.parsed import TrialResult, TrialSet

CACHE_VERSION = 9  # bump when the layout of any cache file changes
MAX_CACHE_FILE = 1 << 30  # a cache file larger than this is not read (a planted giant)

Fingerprint = tuple[tuple[str, int, int], ...]
FileRecord = tuple[int, int]  # (size, mtime_ns)
Known = dict[str, tuple[int, int, Any]]  # a trials folder's outcomes (see sitegen.read.trials)


class CacheFileError(ValueError):
    """A cache file that is not what sitegen writes: damaged, truncated or planted."""


def read_file(path: Path) -> bytes:
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


def atomic(path: Path, data: bytes) -> None:
    """Write a cache file whole or not at all (a crash leaves the old one or none)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def dumps(obj: object) -> bytes:
    try:
        return orjson.dumps(obj)
    except TypeError:
        # An integer beyond 64 bits (a hostile log can hold one): orjson cannot write it and
        # would read it back as a float, so the standard library writes this file, and the
        # leading space (plain JSON whitespace) tells loads to read it with the same.
        return b" " + json.dumps(obj, allow_nan=False, separators=(",", ":")).encode()


def loads(data: bytes) -> Any:
    try:
        if data[:1] == b" ":
            return json.loads(data, parse_constant=_no_constant)
        return orjson.loads(data)
    except (ValueError, RecursionError) as exc:  # orjson's JSONDecodeError is a ValueError
        raise CacheFileError(f"not JSON: {exc}") from None


def _no_constant(name: str) -> float:
    raise CacheFileError(f"{name} is not JSON")


def entry_bytes(kind: str, name: str, body: Any, shape: str | None = None) -> bytes:
    """The bytes of the cache file that holds ``body`` under ``kind/name``: what it is
    (the version of the files, its kind and name, the shape of the type it was written
    for, if any: :func:`~sitegen.cache.codec.shape`) beside it."""
    head = {"version": CACHE_VERSION, "kind": kind, "name": name}
    return dumps({**head, "shape": shape, "body": body} if shape else {**head, "body": body})


# The kinds whose bodies are msgpack of typed values (sitegen.cache.codec): a log's three and
# the run records. Their files hold the same head as the others and the body's CRC-32, as a
# msgpack array: msgspec fills a field missing from a damaged body with its default, so
# damage is told by the checksum. (msgspec is imported where they are read or written: a
# build that finds nothing changed needs none.)
PACKED = frozenset({"log", "logstate", "logsum", "pages"})


def packed_entry_bytes(kind: str, name: str, body: bytes, shape: str) -> bytes:
    """:func:`entry_bytes` for a body already encoded as msgpack (a kind of :data:`PACKED`)."""
    import msgspec

    head = (CACHE_VERSION, kind, name, shape, zlib.crc32(body))
    return msgspec.msgpack.encode((*head, msgspec.Raw(body)))


def packed_entry(data: bytes) -> tuple[tuple[int, str, str, str], Any]:
    """The head and body (a ``msgspec.Raw``) of what :func:`packed_entry_bytes` wrote;
    CacheFileError otherwise."""
    import msgspec

    try:
        version, kind, name, shape, crc, body = _packed_head().decode(data)
    except msgspec.DecodeError as exc:
        raise CacheFileError(f"not a sitegen cache file: {exc}") from None
    except RecursionError:  # (msgspec walks a body it only keeps raw: a planted deep one)
        raise CacheFileError("not a sitegen cache file: nested too deeply") from None
    check(zlib.crc32(body) == crc, "damaged: its checksum differs")
    return (version, kind, name, shape), body


@functools.cache
def _packed_head() -> Any:
    import msgspec

    return msgspec.msgpack.Decoder(tuple[int, str, str, str, int, msgspec.Raw])


# -- codecs: each field checked as it is read -------------------------------------------------------


def check(ok: bool, what: str) -> None:
    if not ok:
        raise CacheFileError(what)


def integer(v: Any, what: str) -> int:
    check(type(v) is int, f"{what} is not an integer")
    return v


def _opt_int(v: Any, what: str) -> int | None:
    if isinstance(v, str) and v.lstrip("-").isdigit():
        return int(v)  # beyond 64 bits: written as digits (see _int_to_json)
    return None if v is None else integer(v, what)


def _int_to_json(v: int | None) -> int | str | None:
    """An integer; as a string of digits beyond 64 bits (which orjson reads back as a float)."""
    return v if v is None or -(2**63) <= v < 2**63 else str(v)


def string(v: Any, what: str) -> str:
    check(isinstance(v, str), f"{what} is not a string")
    return v


def _opt_str(v: Any, what: str) -> str | None:
    return None if v is None else string(v, what)


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
    check(type(v) in (int, float), f"{what} is not a number")
    return float(v)


def _bool(v: Any, what: str) -> bool:
    check(isinstance(v, bool), f"{what} is not a boolean")
    return v


def _opt_datetime(v: Any, what: str) -> datetime | None:
    if v is None:
        return None
    try:
        return datetime.fromisoformat(string(v, what))
    except ValueError:
        raise CacheFileError(f"{what} is not a date-time") from None


def _field_codec(tp: Any) -> tuple[Callable[[Any], Any], Callable[[Any, str], Any]]:
    """(encode, decode) for one field type of :class:`TrialResult`."""
    if tp is str:
        return (lambda v: v), string
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
# and field names would double the file. Derived from the class, so a new field is
# cached too; the field list is part of the cache key (a new shape starts afresh).
_TRIAL_HINTS = typing.get_type_hints(TrialResult)  # once: each call evaluates every annotation
_TRIAL_TYPES = [(name, _TRIAL_HINTS[name]) for name in TrialResult.__struct_fields__]
_TRIAL_FIELDS = [(name, *_field_codec(tp)) for name, tp in _TRIAL_TYPES]
TRIAL_SHAPE = ",".join(name for name, _, _ in _TRIAL_FIELDS)


def _trial_to_json(r: TrialResult) -> list:
    """A trial as the list :func:`_trial_from_json` reads, each field through its encoder."""
    return [enc(getattr(r, name)) for name, enc, _ in _TRIAL_FIELDS]


def _trials_to_json(trials: list[TrialResult]) -> list[list]:
    return [_trial_to_json(r) for r in trials]


# The date-time fields, decoded a column at a time (trials_from_json).
_DATES = tuple(i for i, (_, tp) in enumerate(_TRIAL_TYPES) if tp == datetime | None)


class TrialLists:
    """Each trial's list, by the trial's identity: a trial is in two cache files, its
    folder's outcomes and its trial set, and :class:`~sitegen.cache.state.BuildState`
    encodes it once for both (the set holds the outcomes' own objects: both are
    redacted when read). A trial read from the cache keeps the list it was read
    from (:meth:`add`), so a rebuild encodes only the trials it read anew."""

    def __init__(self) -> None:
        self._by_id: dict[int, list] = {}
        self._kept: list[TrialResult] = []  # every trial in _by_id: no id is reused meanwhile

    def add(self, trials: list[TrialResult], lists: list[list]) -> None:
        """Take ``lists`` as the lists of ``trials`` (read from them by :func:`trials_from_json`).

        A list read is written back as it was read. That is what encoding the trial
        gives for every list sitegen writes; for a hand-made one it may not be (``3``
        for ``3.0``), which costs no more than a differing token (the run is analysed
        again), never a wrong page: the list still reads back as the same trial.
        """
        self._kept += trials
        self._by_id.update(zip(map(id, trials), lists, strict=True))

    def of(self, trials: list[TrialResult]) -> list[list]:
        """The trials' lists, those not made yet made now (for all of them at once)."""
        lists = list(map(self._by_id.get, map(id, trials)))
        new = list(itertools.compress(trials, map(operator.not_, lists)))  # a list is never []
        if not new:
            return typing.cast(list[list], lists)  # (no None: every one was there)
        self._kept += new
        self._by_id.update(zip(map(id, new), _trials_to_json(new), strict=True))
        return list(map(self._by_id.__getitem__, map(id, trials)))


# The JSON types each field takes as they are (no conversion): most values of most trials,
# checked by one set lookup instead of a call (a rebuild decodes a changed folder's trials).
_AS_IS: dict[Any, frozenset[type]] = {
    str: frozenset({str}),
    bool: frozenset({bool}),
    int | None: frozenset({int, type(None)}),
    float | None: frozenset({float, type(None)}),
    str | None: frozenset({str, type(None)}),
    datetime | None: frozenset({type(None)}),
}
_TRIAL_DECODE = [(name, dec, _AS_IS[_TRIAL_HINTS[name]]) for name, _, dec in _TRIAL_FIELDS]


def _trial_from_json(v: Any) -> TrialResult:
    check(isinstance(v, list) and len(v) == len(_TRIAL_DECODE), "a trial has other fields")
    return TrialResult(
        *[
            x if type(x) in as_is else dec(x, name)
            for (name, dec, as_is), x in zip(_TRIAL_DECODE, v, strict=True)
        ]
    )


_DATE_TYPES = frozenset({str, type(None)})
_FROM_ISO = datetime.fromisoformat


def trials_from_json(v: Any) -> list[TrialResult]:
    """Trials from their lists: each equal to :func:`_trial_from_json` of its list, made faster.

    The checks go column by column (a column of the types its field takes as they
    are needs no other look; any other goes value by value through the field's
    decoder), and each trial is made from its row of the columns.
    """
    check(type(v) is list, "the trials are not a list")
    if not v:
        return []
    check(set(map(type, v)) == {list}, "a trial is not a list")
    check(set(map(len, v)) == {len(_TRIAL_DECODE)}, "a trial has other fields")
    cols = list(zip(*v, strict=True))
    for i, ((name, dec, as_is), col) in enumerate(zip(_TRIAL_DECODE, cols, strict=True)):
        types = set(map(type, col))
        if types <= as_is:
            continue
        if i in _DATES and types <= _DATE_TYPES:  # (every trial has one: no call per value)
            try:
                cols[i] = tuple(None if x is None else _FROM_ISO(x) for x in col)
                continue
            except ValueError:
                pass  # (the decoder below says which)
        cols[i] = tuple(x if type(x) in as_is else dec(x, name) for x in col)
    return list(itertools.starmap(TrialResult, zip(*cols, strict=True)))


def _outcome_to_json(o: tuple, lists: dict[int, list]) -> list:
    if o[0] == "ok":
        return ["ok", lists[id(o[1])], *([[list(n) for n in o[2]]] if len(o) > 2 else [])]
    return list(o)


def _notes_from_json(v: Any) -> tuple:
    """An "ok" outcome's notes: ``[[message, line or null], ...]``."""
    check(type(v) is list and bool(v), "an outcome's notes are not a list")
    out = []
    for n in v:
        check(type(n) is list and len(n) == 2, "a bad note")
        out.append((string(n[0], "note"), _opt_int(n[1], "line")))
    return tuple(out)


def _outcome_from_json(v: Any) -> tuple:
    check(isinstance(v, list) and bool(v), "an outcome is not a list")
    kind = v[0]
    if kind == "ok" and len(v) == 2:
        return ("ok", _trial_from_json(v[1]))
    if kind == "ok" and len(v) == 3:
        return ("ok", _trial_from_json(v[1]), _notes_from_json(v[2]))
    if kind in ("eval", "job", "missing") and len(v) == 1:
        return (kind,)
    if kind == "bad" and len(v) == 3:
        return ("bad", string(v[1], "message"), _opt_int(v[2], "line"))
    raise CacheFileError(f"unknown outcome {str(kind)[:40]!r}")


# A folder's outcomes, as columns: its files' paths, sizes, mtimes and outcomes, an "ok"
# as None for the next list of "trials" (with notes: {"notes": [[message, line]...]}; the
# others as lists; a tar archive's as
# {"tar": [[member, outcome]...]}, each "ok" with its trial's list inline). Columns: a
# rebuild reads all of them, and a column is checked at once (its set of types).


def known_to_json(known: Known, lists: TrialLists | None = None) -> dict:
    """A trials folder's outcomes; its trials' lists are made through ``lists``."""
    trials: list[TrialResult] = []  # the files' "ok" trials first (in order), then tar members'
    members: list[TrialResult] = []
    outcomes: list[Any] = []
    tars: list[tuple[int, list]] = []
    entries = list(known.values())
    for _, _, what in entries:
        if isinstance(what, list):  # a tar archive: (member, outcome) pairs
            members += [o[1] for _, o in what if o[0] == "ok"]
            tars.append((len(outcomes), what))
            outcomes.append(None)  # (replaced below)
        elif what[0] == "ok":
            trials.append(what[1])
            outcomes.append({"notes": [list(n) for n in what[2]]} if len(what) > 2 else None)
        else:
            outcomes.append(list(what))
    made = (TrialLists() if lists is None else lists).of(trials + members)
    by_id = dict(zip(map(id, members), made[len(trials) :], strict=True))
    for i, what in tars:
        outcomes[i] = {"tar": [[m, _outcome_to_json(o, by_id)] for m, o in what]}
    return {
        "paths": list(known),
        "sizes": [e[0] for e in entries],
        "mtimes": [e[1] for e in entries],
        "outcomes": outcomes,
        "trials": made[: len(trials)],
    }


def known_from_json(body: Any, lists: TrialLists | None = None) -> Known:
    """The outcomes :func:`known_to_json` wrote; the lists their trials were read from go
    to ``lists`` (written back as they are)."""
    check(isinstance(body, dict), "trial outcomes are not an object")
    paths, sizes, mtimes = body["paths"], body["sizes"], body["mtimes"]
    outcomes, rows = body["outcomes"], body["trials"]
    check(all(type(c) is list for c in (paths, sizes, mtimes, outcomes)), "bad outcome columns")
    check(len(paths) == len(sizes) == len(mtimes) == len(outcomes), "uneven outcome columns")
    check(set(map(type, paths)) <= {str}, "a path is not a string")
    check(set(map(type, sizes)) <= {int} and set(map(type, mtimes)) <= {int}, "bad size or mtime")
    trials = trials_from_json(rows)
    if lists is not None:
        lists.add(trials, rows)
    oks = iter(trials)
    out: list[Any] = []
    for o in outcomes:
        if o is None or (type(o) is dict and "notes" in o):
            t = next(oks, None)
            check(t is not None, "fewer trials than outcomes")
            out.append(("ok", t) if o is None else ("ok", t, _notes_from_json(o["notes"])))
        elif type(o) is dict and "tar" in o:
            tar = o["tar"]
            check(type(tar) is list, "tar members are not a list")
            members = []
            for m in tar:
                check(isinstance(m, list) and len(m) == 2, "bad tar member")
                members.append((string(m[0], "member"), _outcome_from_json(m[1])))
            out.append(members)
        else:
            out.append(_outcome_from_json(o))
    check(next(oks, None) is None, "more trials than outcomes")
    return dict(zip(paths, zip(sizes, mtimes, out, strict=True), strict=True))


def fingerprint_from_json(v: Any) -> Fingerprint:
    check(isinstance(v, list), "a fingerprint is not a list")
    out = []
    for x in v:
        check(isinstance(x, list) and len(x) == 3, "bad fingerprint entry")
        out.append((string(x[0], "path"), integer(x[1], "size"), integer(x[2], "mtime")))
    return tuple(out)


def record_from_json(v: Any) -> FileRecord:
    check(isinstance(v, list) and len(v) == 2, "bad file record")
    return (integer(v[0], "size"), integer(v[1], "mtime"))


# -- the last build's record ----------------------------------------------------------------------

Watch = tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int, int], ...]]  # (dirs, files)


class Summary(msgspec.Struct, frozen=True):
    """What the last build reported, for the report of a build that finds nothing changed."""

    jobs: int
    runs: int
    trials: int  # training trials
    logs: int
    trial_files: int  # result.json files (parse.ParseStats)
    eval_trials: int
    unreadable: int  # result.json files that could not be read as a trial
    job_level: int  # job-level result.json files in trial folders (not trials)
    missing: int  # trial folders without a result.json
    warnings: tuple[tuple[str, int | None, str], ...]  # (path, line, message)
    skipped: int = 0  # folders and logs skipped (discovery's, and logs that are no job's)


# Summary's counts: every field but the warnings.
SUMMARY_COUNTS = tuple(name for name in Summary.__struct_fields__ if name != "warnings")


class LastBuild(msgspec.Struct, frozen=True):
    """What the last build published, and what it takes to see that nothing changed since."""

    sources: str  # the signature of every input (sources.Sources.signature)
    pages: dict[str, str]  # page key -> signature
    files: dict[str, FileRecord]  # every file published -> (size, mtime_ns) as written
    watch: dict[str, Watch]  # per trials folder: what to stat to know it is unchanged
    open_jobs: frozenset[str]  # jobs whose status changes with time alone (no end marker)
    summary: Summary

    def to_json(self) -> dict:
        s = self.summary
        return {
            "sources": self.sources,
            "pages": self.pages,
            "files": {k: list(v) for k, v in self.files.items()},
            "watch": {
                d: {"dirs": [list(x) for x in dirs], "files": [list(x) for x in files]}
                for d, (dirs, files) in self.watch.items()
            },
            "open_jobs": sorted(self.open_jobs),
            "summary": {
                **{n: getattr(s, n) for n in SUMMARY_COUNTS},
                "warnings": [list(w) for w in s.warnings],
            },
        }

    @classmethod
    def from_json(cls, body: Any) -> LastBuild:
        """The record :meth:`to_json` wrote; :class:`CacheFileError` (or KeyError…) otherwise."""
        check(isinstance(body, dict), "the site record is not an object")
        pages, files, watch = body["pages"], body["files"], body["watch"]
        check(all(isinstance(x, dict) for x in (pages, files, watch)), "bad site record")
        summ = body["summary"]
        check(isinstance(summ, dict) and isinstance(summ["warnings"], list), "bad summary")
        check(isinstance(body["open_jobs"], list), "bad open jobs")
        return cls(
            sources=string(body["sources"], "sources signature"),
            pages={string(k, "page"): string(v, "signature") for k, v in pages.items()},
            files={string(k, "file"): record_from_json(v) for k, v in files.items()},
            watch={string(d, "trials folder"): _watch_from_json(w) for d, w in watch.items()},
            open_jobs=frozenset(string(j, "job") for j in body["open_jobs"]),
            summary=Summary(
                **{n: integer(summ[n], n.replace("_", " ")) for n in SUMMARY_COUNTS},
                warnings=tuple(_warning_from_json(w) for w in summ["warnings"]),
            ),
        )


def _watch_from_json(v: Any) -> Watch:
    check(
        isinstance(v, dict) and isinstance(v["dirs"], list) and isinstance(v["files"], list),
        "bad watch",
    )
    dirs = []
    for x in v["dirs"]:
        check(isinstance(x, list) and len(x) == 2, "bad watched folder")
        dirs.append((string(x[0], "folder"), integer(x[1], "mtime")))
    return tuple(dirs), fingerprint_from_json(v["files"])


def _warning_from_json(v: Any) -> tuple[str, int | None, str]:
    check(isinstance(v, list) and len(v) == 3, "bad warning")
    return (string(v[0], "path"), _opt_int(v[1], "line"), string(v[2], "message"))


def trial_set_to_json(ts: TrialSet, lists: TrialLists | None = None) -> dict:
    """A trials folder's parsed (and redacted) trial set; its trials' lists are made through
    ``lists`` (those :func:`known_to_json` made are not made again)."""
    return {
        "path": ts.path,
        "results": (TrialLists() if lists is None else lists).of(list(ts.results)),
        "counts": [ts.eval_count, ts.malformed, ts.missing, ts.archives, ts.job_level],
        "warnings": [[w.path, w.line, w.message] for w in ts.warnings],
    }


def trial_set_from_json(v: Any) -> TrialSet:
    check(isinstance(v, dict), "a trial set is not an object")
    results, counts, warnings = v["results"], v["counts"], v["warnings"]
    check(isinstance(results, list) and isinstance(warnings, list), "bad trial set")
    check(isinstance(counts, list) and len(counts) == 5, "bad trial counts")
    eval_count, malformed, missing, archives, job_level = (integer(c, "count") for c in counts)
    return TrialSet(
        string(v["path"], "path"),
        tuple(trials_from_json(results)),
        eval_count,
        malformed,
        missing,
        archives,
        tuple(BuildWarning(*_warning_from_json(w)) for w in warnings),
        job_level,
    )
