"""Reading one log file: in blocks, on from where the last build stopped, with its infra logs
and, for a job whose stderr went to a file of its own, its ``.err``.

:class:`~sitegen.read.logparse.LogParser` is the state machine; this module feeds
it from disk and keeps the state that lets a grown log be read on.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, Generic, TypeVar

import msgspec
from msgspec.structs import replace

from sitegen.discover.archive import ERR_SUFFIX
from sitegen.discover.safeio import open_regular, root_of
from sitegen.model.parsed import ParsedLog
from sitegen.read.logparse import LogParser, ParserState
from sitegen.read.scrub import scrub_log
from sitegen.read.streams import combine_streams
from sitegen.read.vllm import VllmAccumulator
from sitegen.redact import Redactor

S = TypeVar("S")
CHECKED = 256  # the bytes at each end of what was read that a state keeps, to check them


class LogState(msgspec.Struct, Generic[S], frozen=True):
    """Where a parse stopped, so that a grown log is read on from there.

    ``parser``: the parser's state after the first ``offset`` bytes (ending in a newline),
    or what :func:`parse_log`'s ``snapshot`` made of it. ``tail`` and ``head`` stand for the
    bytes before ``offset`` and the file's first (:func:`window`: a digest, as the bytes can
    hold a secret), checked with ``size`` and ``mtime_ns`` to tell a file appended to from
    one rewritten (a file of the same size with another mtime was rewritten in place).
    ``errs``: the same for each ``.err`` of a split log.
    """

    offset: int
    tail: bytes
    parser: S
    head: bytes = b""
    size: int = -1
    mtime_ns: int = -1
    errs: dict[str, LogState[S]] = msgspec.field(default_factory=dict)

    @property
    def read(self) -> int:
        """The bytes read already, of the log and its ``.err`` files."""
        return self.offset + sum(e.offset for e in self.errs.values())


def window(data: bytes) -> bytes:
    """What a state keeps of ``data``, some bytes of a log: their length (2 bytes) and a
    digest of them, enough to tell whether the file still holds them."""
    return len(data).to_bytes(2, "big") + hashlib.blake2b(data, digest_size=16).digest()


def window_len(kept: bytes) -> int:
    """How many bytes of the log a :func:`window` stands for."""
    return int.from_bytes(kept[:2], "big")


def _holds(fh: BinaryIO, at: int, kept: bytes) -> bool:
    """Whether ``fh`` holds at ``at`` the bytes ``kept`` (:func:`window`) stands for."""
    fh.seek(at)
    return window(fh.read(window_len(kept))) == kept


def copy_state(state: ParserState) -> ParserState:
    """A copy of a parser's state that the parser no longer changes: :func:`parse_log`'s
    snapshot when the caller names none."""
    return pickle.loads(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))


class _Limited:
    """A read-only view of ``fh`` that stops after ``n`` bytes."""

    def __init__(self, fh: BinaryIO, n: int) -> None:
        self.fh, self.left = fh, n

    def read(self, size: int) -> bytes:
        if self.left <= 0:
            return b""
        data = self.fh.read(min(size, self.left))
        self.left -= len(data)
        return data


def _complete_end(fh: BinaryIO, start: int, size: int, block: int = 1 << 16) -> int:
    """The offset just after the last ``\n`` in ``[start, size)``, or ``start`` if there is none."""
    pos = size
    while pos > start:
        lo = max(start, pos - block)
        fh.seek(lo)
        chunk = fh.read(pos - lo)
        i = chunk.rfind(b"\n")
        if i >= 0:
            return lo + i + 1
        pos = lo
    return start


def parse_log(
    path: Path,
    rel: str,
    redactor: Redactor,
    extra_logs: tuple[tuple[Path, str], ...] = (),
    state: LogState[ParserState] | None = None,
    snapshot: Callable[[ParserState], Any] = copy_state,
) -> tuple[ParsedLog, LogState[Any]]:
    """Parse one job log, with its ``infra-*.log`` files and the ``.err`` of a log split in
    two. With ``state`` from an earlier parse, only what was appended since is read (the
    state is taken over). Returns the result and the state to read on from next time, each
    parser's part as ``snapshot`` makes it: whatever it keeps must not share the parser's
    containers, which go on changing as it reads the last line and finishes.
    """
    root = root_of(path, rel)  # links may not lead out of the archive
    errs, unread = _read_errs(extra_logs, root, redactor, state.errs if state else {}, snapshot)
    # vLLM prints no year: the .out's lines take it from the .err's first loguru time when
    # the .out has none of its own (its vLLM lines and prints only, docs/formats.md §1)
    hint = min((e.first_time for e, _, _ in errs if e.first_time is not None), default=None)
    with open_regular(path, root) as fh:
        st = os.fstat(fh.fileno())
        parser, new_state = _read_on(fh, st, rel, redactor, state, snapshot, hint)
    for extra, extra_rel in extra_logs:
        if extra_rel.endswith(ERR_SUFFIX):
            continue
        try:
            with open_regular(extra, root) as xfh:
                # bounded by its size now: a log still growing is read up to here
                xst = os.fstat(xfh.fileno())
                parser.read_engine_log(extra_rel, _Limited(xfh, xst.st_size))
        except OSError as exc:
            parser.file_warning(extra_rel, f"cannot read: {exc.strerror}")
    for extra_rel, why in unread:
        parser.file_warning(extra_rel, why)
    streams = [_finish_err(parser, own, xst) for own, xst, _ in errs]
    parsed = scrub_log(
        parser.finish(size_bytes=st.st_size, mtime=st.st_mtime), redactor, parser.secrets
    )
    for err in streams:
        parsed = combine_streams(parsed, err)
    new_state = replace(new_state, errs={own.rel: kept for own, _, kept in errs})
    return parsed, new_state


def _read_on(
    fh: BinaryIO,
    st: os.stat_result,
    rel: str,
    redactor: Redactor,
    state: LogState[ParserState] | None,
    snapshot: Callable[[ParserState], Any],
    time_hint: datetime | None = None,
) -> tuple[LogParser, LogState[Any]]:
    """A parser that has read all of ``fh`` (up to its size ``st`` now), and its state after
    the last complete line. It reads on from ``state`` when the file was only appended to
    and the state was read with the hints a fresh parser would take now (the mtime's year,
    which dates vLLM's year-less lines, and ``time_hint``)."""
    year = datetime.fromtimestamp(st.st_mtime).year
    if (
        state is not None
        and 0 < state.offset <= st.st_size
        and (state.parser.year_hint, state.parser.time_hint) == (year, time_hint)
        and not (st.st_size == state.size and st.st_mtime_ns != state.mtime_ns)
        and _holds(fh, state.offset - window_len(state.tail), state.tail)
        and _holds(fh, 0, state.head)
    ):
        parser = LogParser.resume(state.parser, rel, redactor)
        start = state.offset
    else:
        parser, start = LogParser(rel, redactor, year_hint=year), 0
        parser.time_hint = time_hint
    end = _complete_end(fh, start, st.st_size)
    fh.seek(start)
    parser.feed_stream(_Limited(fh, end - start))
    fh.seek(max(0, end - CHECKED))
    tail = window(fh.read(end - max(0, end - CHECKED)))
    fh.seek(0)
    head = window(fh.read(min(end, CHECKED)))
    kept = LogState(end, tail, snapshot(parser.state()), head, st.st_size, st.st_mtime_ns)
    fh.seek(end)
    # The last, unterminated line (a job still writing) is read but not kept in the state.
    parser.feed_stream(_Limited(fh, st.st_size - end))
    return parser, kept


def _read_errs(
    extra_logs: tuple[tuple[Path, str], ...],
    root: Path,
    redactor: Redactor,
    states: dict[str, LogState[ParserState]],
    snapshot: Callable[[ParserState], Any],
) -> tuple[list[tuple[LogParser, os.stat_result, LogState[Any]]], list[tuple[str, str]]]:
    """Each ``.err`` of a log split in two (docs/formats.md §1), read by a parser of its own
    (its line order is not the log's), on from its state in ``states`` (:func:`_read_on`):
    the parser, the file's stat and its next state; and the ones not opened, with why."""
    read, unread = [], []
    for extra, extra_rel in extra_logs:
        if not extra_rel.endswith(ERR_SUFFIX):
            continue
        try:
            with open_regular(extra, root) as xfh:
                xst = os.fstat(xfh.fileno())
                own, kept = _read_on(xfh, xst, extra_rel, redactor, states.get(extra_rel), snapshot)
                read.append((own, xst, kept))
        except OSError as exc:
            unread.append((extra_rel, f"cannot read: {exc.strerror}"))
    return read, unread


def _finish_err(parser: LogParser, own: LogParser, st: os.stat_result) -> ParsedLog:
    """The ``.err``'s parse ``own`` finished, for :func:`combine_streams`. Its vLLM lines go
    to ``parser``'s (an engine whose lines reach both files is one), and its times widen
    the log's, which the vLLM timeline starts from."""
    parser.vllm.merge(own.vllm)
    parser.suppressed += own.suppressed
    own.vllm, own.suppressed = VllmAccumulator(own.rel), 0
    if own.first_time is not None:
        first = parser.first_time
        parser.first_time = own.first_time if first is None else min(first, own.first_time)
    parsed = own.finish(size_bytes=st.st_size, mtime=st.st_mtime)
    return scrub_log(parsed, parser.redactor, own.secrets)
