"""A log's cache entries: its parse, where to read on from, its summary.

Three files a log, each with the fingerprint (path, size, mtime of the log and its
infra logs) it was made from: ``log/`` the whole parse, ``logstate/`` the parser's
state after the last complete line (a grown log reads only this), ``logsum/`` the
parse's summary (what every build that finds the log unchanged reads). They are
encoded by the worker that read the log (:func:`read_log`), which sends back bytes:
the parser's state is a few hundred KB of objects a log, which would cost the main
process more to unpickle than it costs to write.

This module is imported only by a build that reads or decodes a log.
"""

from __future__ import annotations

import base64
from dataclasses import replace
from typing import Any

from sitegen.cache.codec import from_json, parsed_to_json, shape, to_json
from sitegen.cache.files import CacheFileError, Fingerprint, check, entry_bytes, integer
from sitegen.errors import BuildWarning
from sitegen.model.parsed import ParsedLog, VllmStats
from sitegen.read.logfile import LogState
from sitegen.read.logstate import ParserState
from sitegen.read.parse import Stats
from sitegen.read.parse import read_log as read_only


def log_summary(log: ParsedLog) -> ParsedLog:
    """What assembling jobs into runs and keying them needs of a parsed log, and no more.

    Its status (end marker, mtime), resume links (resume step and path, fresh
    start, checkpoints, first step, first time) and warnings stay; the per-step
    blocks past the first, eval blocks, config, per-step batches and vLLM
    statistics go. A summary is never analysed: a run made again takes its logs
    whole (:meth:`~sitegen.cache.state.BuildState.complete`).
    """
    return replace(
        log,
        blocks=log.blocks[:1],
        eval_blocks=(),
        config=None,
        batches_per_step={},
        vllm=VllmStats((), (), 0, 0, 0, {}),
    )


def state_to_json(state: ParserState) -> Any:
    """The parser's state as plain JSON (a copy: the parser may go on changing it)."""
    return to_json(state, ParserState)


def state_from_json(data: Any) -> ParserState:
    """The parser's state :func:`state_to_json` wrote, every field checked; ValueError
    otherwise."""
    return from_json(data, ParserState, "$.parser")


def log_state_to_json(state: LogState[Any]) -> dict:
    """Where a log's read stopped, as plain JSON; its parser's part as it is (plain JSON
    already, made by :func:`state_to_json`), or a :class:`ParserState` encoded now."""
    parser = state_to_json(state.parser) if isinstance(state.parser, ParserState) else state.parser
    tail = base64.b64encode(state.tail).decode("ascii")
    return {"offset": state.offset, "tail": tail, "parser": parser}


def log_state_from_json(body: Any) -> LogState[ParserState]:
    """The state :func:`log_state_to_json` wrote, every field checked; ValueError otherwise."""
    check(isinstance(body, dict) and body.keys() == {"offset", "tail", "parser"}, "not a state")
    offset, tail = integer(body["offset"], "offset"), body["tail"]
    check(offset >= 0 and isinstance(tail, str), "a bad offset or tail")
    try:
        raw = base64.b64decode(tail.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise CacheFileError("a bad tail") from None
    check(len(raw) <= offset, "a tail longer than what was read")
    return LogState(offset, raw, state_from_json(body["parser"]))


def log_entries(
    rel: str, fp: Fingerprint, parsed: ParsedLog, state: LogState[Any]
) -> list[tuple[str, bytes]]:
    """A parsed log's cache entries, encoded (``state``'s parser part as plain JSON)."""
    fingerprint = [list(x) for x in fp]
    log_shape, state_shape = shape(ParsedLog), shape(ParserState)
    kept = log_state_to_json(state)
    summary = parsed_to_json(log_summary(parsed))
    return [
        (
            "log",
            entry_bytes(
                "log",
                rel,
                {"fingerprint": fingerprint, "parsed": parsed_to_json(parsed)},
                log_shape,
            ),
        ),
        (
            "logstate",
            entry_bytes("logstate", rel, {"fingerprint": fingerprint, "state": kept}, state_shape),
        ),
        (
            "logsum",
            entry_bytes("logsum", rel, {"fingerprint": fingerprint, "summary": summary}, log_shape),
        ),
    ]


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
    res = read_only(archive, rel, infra, patterns, state, stats, state_to_json)
    if isinstance(res, BuildWarning):
        return res
    parsed, resume = res
    return parsed, log_entries(parsed.path, stats, parsed, resume) if stats else []
