"""A log's cache entries, each with the fingerprint of its files: ``log/`` the whole parse,
``logstate/`` the parser's state after the last complete line (a grown log reads only this),
``logsum/`` the summary (what a build that finds the log unchanged reads).

The worker that read the log encodes them (:func:`read_log`) and sends back bytes: the
parser's state is a few hundred KB of objects, dearer to unpickle than to write.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec.structs import replace

from sitegen.cache.codec import decode, encode, log_body_bytes, shape
from sitegen.cache.files import Fingerprint, check, packed_entry_bytes
from sitegen.errors import BuildWarning
from sitegen.model.parsed import ParsedLog, VllmStats
from sitegen.read.logfile import LogState, window, window_len
from sitegen.read.logstate import ParserState
from sitegen.read.parse import Stats
from sitegen.read.parse import read_log as read_only


def log_summary(log: ParsedLog) -> ParsedLog:
    """What assembling jobs into runs and keying them needs of a parsed log: its status,
    resume links and warnings stay; blocks past the first, eval blocks, config, batches and
    vLLM statistics go. A summary is never analysed."""
    return replace(
        log,
        blocks=log.blocks[:1],
        eval_blocks=(),
        config=None,
        batches_per_step={},
        vllm=VllmStats((), (), 0, 0, 0, {}),
    )


def state_bytes(state: ParserState) -> bytes | None:
    """The parser's state as msgpack; None when msgpack cannot hold it or it holds a config
    dump still being read (raw lines: its secrets are hidden when parsed whole), so the log is
    read whole next time."""
    if state.config_lines:
        return None
    try:
        return encode(state, ParserState)
    except ValueError:
        return None


# where a file's read stopped: its path (an .err's; the log's own is ""), offset, tail,
# parser, head, size, mtime_ns
_FileBody = tuple[str, int, bytes, msgspec.Raw, bytes, int, int]
_StateBody = tuple[Fingerprint, list[_FileBody]]  # the log's file first, then its .err files


WINDOW_BYTES = len(window(b""))


def log_state_bytes(fingerprint: Fingerprint, state: LogState[Any]) -> bytes:
    """Where a log's read stopped (and its ``.err`` files'), as msgpack, each parser's part
    encoded already (:func:`state_bytes`) or now."""
    files = [("", state)] + sorted(state.errs.items())
    return encode((fingerprint, [(rel, *_file_body(s)) for rel, s in files]), Any)


def _file_body(state: LogState[Any]) -> tuple[int, bytes, msgspec.Raw, bytes, int, int]:
    parser = state.parser
    if isinstance(parser, ParserState):
        parser = state_bytes(parser)
    if not isinstance(parser, bytes):  # (None: a state that is not kept)
        raise ValueError("a parser state msgpack cannot hold")
    return state.offset, state.tail, msgspec.Raw(parser), state.head, state.size, state.mtime_ns


def log_state_from_bytes(data: bytes) -> LogState[ParserState]:
    """The state :func:`log_state_bytes` wrote (a grown log's fingerprint has changed: not
    asked), every field checked; ValueError otherwise."""
    _, files = decode(data, _StateBody)
    states: dict[str, LogState[ParserState]] = {}
    for rel, offset, tail, parser, head, size, mtime_ns in files:
        check(
            len(tail) == len(head) == WINDOW_BYTES
            and window_len(tail) <= offset
            and window_len(head) <= offset <= size,
            "a bad offset, size, tail or head",
        )
        check(rel not in states and (rel == "") == (not states), "a bad list of files")
        states[rel] = LogState(offset, tail, decode(parser, ParserState), head, size, mtime_ns)
    check(bool(states), "no state of the log's own file")
    return replace(states.pop(""), errs=states)


def log_entries(
    rel: str, fp: Fingerprint, parsed: ParsedLog, state: LogState[Any]
) -> list[tuple[str, bytes]]:
    """A parsed log's cache entries, encoded; none when one cannot be (read again next time)."""
    log_shape, state_shape = shape(ParsedLog), shape(ParserState)
    try:
        whole = log_body_bytes(fp, parsed)
        kept = log_state_bytes(fp, state)
        summary = log_body_bytes(fp, log_summary(parsed))
        return [
            ("log", packed_entry_bytes("log", rel, whole, log_shape)),
            ("logstate", packed_entry_bytes("logstate", rel, kept, state_shape)),
            ("logsum", packed_entry_bytes("logsum", rel, summary, log_shape)),
        ]
    except ValueError:
        return []


def read_log(
    archive: str,
    rel: str,
    infra: tuple[str, ...],
    patterns: tuple[str, ...],
    state: LogState[ParserState] | None,
    stats: Stats = (),
) -> tuple[ParsedLog, list[tuple[str, bytes]]] | BuildWarning:
    """:func:`sitegen.read.parse.read_log` in a worker, and the log's cache entries for the
    fingerprint ``stats`` encoded there (none without it): the parse and those bytes."""
    res = read_only(archive, rel, infra, patterns, state, stats, state_bytes)
    if isinstance(res, BuildWarning):
        return res
    parsed, resume = res
    return parsed, log_entries(parsed.path, stats, parsed, resume) if stats else []
