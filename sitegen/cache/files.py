"""The build cache's files: versioned, every field checked as it is read.

The cache may lie inside an archive others can write to (``-o ARCHIVE/site``), so nothing
here is executed or unpickled: only a regular file of sane size is read, as JSON checked
against its declared type (msgspec) or as checked msgpack (:data:`PACKED`); anything else
raises :class:`CacheFileError`, and the file is ignored with a warning.
"""

from __future__ import annotations

import json
import os
import stat
import zlib
from pathlib import Path
from typing import Any

import msgspec
import orjson

CACHE_VERSION = 12  # bump when the layout of any cache file changes
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
        # An integer beyond 64 bits: orjson cannot write it, so the standard library does, and
        # the leading space (plain JSON whitespace) tells loads to read it with the same.
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
    """The cache file holding ``body`` under ``kind/name``, with the version and the shape of
    the type it was written for (:func:`~sitegen.cache.codec.shape`), if any."""
    head = {"version": CACHE_VERSION, "kind": kind, "name": name}
    return dumps({**head, "shape": shape, "body": body} if shape else {**head, "body": body})


# The kinds whose bodies are msgpack of typed values (sitegen.cache.codec). Their files hold
# the same head as the others and the body's CRC-32, as a msgpack array: msgspec fills a
# field missing from a damaged body with its default, so damage is told by the checksum.
PACKED = frozenset(
    {"log", "logstate", "logsum", "pages", "trials", "trialsadd", "trialset", "trialsum"}
)


def packed_entry_bytes(kind: str, name: str, body: bytes, shape: str) -> bytes:
    """:func:`entry_bytes` for a body already encoded as msgpack (a kind of :data:`PACKED`)."""
    head = (CACHE_VERSION, kind, name, shape, zlib.crc32(body))
    return msgspec.msgpack.encode((*head, msgspec.Raw(body)))


def packed_entry(data: bytes) -> tuple[tuple[int, str, str, str], Any]:
    """The head and body (a ``msgspec.Raw``) of what :func:`packed_entry_bytes` wrote;
    CacheFileError otherwise."""
    try:
        version, kind, name, shape, crc, body = _PACKED_HEAD.decode(data)
    except msgspec.DecodeError as exc:
        raise CacheFileError(f"not a sitegen cache file: {exc}") from None
    except RecursionError:  # (msgspec walks a body it only keeps raw: a planted deep one)
        raise CacheFileError("not a sitegen cache file: nested too deeply") from None
    check(zlib.crc32(body) == crc, "damaged: its checksum differs")
    return (version, kind, name, shape), body


_PACKED_HEAD = msgspec.msgpack.Decoder(tuple[int, str, str, str, int, msgspec.Raw])


def check(ok: bool, what: str) -> None:
    if not ok:
        raise CacheFileError(what)


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
    skipped: int  # folders and logs skipped (discovery's, and logs that are no job's)
    warnings: tuple[tuple[str, int | None, str], ...]  # (path, line, message)


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
        out = msgspec.to_builtins(self)
        out["watch"] = {d: {"dirs": ds, "files": fs} for d, (ds, fs) in out["watch"].items()}
        out["open_jobs"] = sorted(self.open_jobs)  # (a set's order changes between runs)
        return out

    @classmethod
    def from_json(cls, body: Any) -> LastBuild:
        """The record :meth:`to_json` wrote, every field checked against its type; ValueError
        (msgspec's ValidationError is one), KeyError or TypeError otherwise."""
        check(isinstance(body, dict) and isinstance(body["watch"], dict), "bad site record")
        check(all(isinstance(w, dict) for w in body["watch"].values()), "bad watch")
        watch = {d: (w["dirs"], w["files"]) for d, w in body["watch"].items()}
        return msgspec.convert({**body, "watch": watch}, cls)
