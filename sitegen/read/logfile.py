"""Reading one log file: in blocks, on from where the last build stopped, with its infra logs.

:class:`~sitegen.read.logparse.LogParser` is the state machine; this module feeds
it from disk and keeps the state that lets a grown log be read on.
"""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from sitegen.errors import BuildWarning
from sitegen.model.parsed import ParsedLog
from sitegen.read.lines import iter_blocks, iter_raw_lines, split_line
from sitegen.read.logparse import LogParser
from sitegen.read.vllm import VllmAccumulator
from sitegen.redact import Redactor


@dataclass(frozen=True)
class LogState:
    """Where a parse stopped, so a grown log is read on from there (incremental builds).

    ``parser`` is the pickled :class:`LogParser` after the first ``offset``
    bytes (which end with a newline); ``tail`` holds the bytes just before
    ``offset``, checked to make sure the file was appended to, not rewritten.
    """

    offset: int
    tail: bytes
    parser: bytes


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
    state: LogState | None = None,
) -> tuple[ParsedLog, LogState]:
    """Parse one job log (plus any ``infra-*.log`` files holding its engines' output).

    With ``state`` from an earlier parse of the same file, only what was
    appended since is read. Returns the result and the state to keep.
    """
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        parser: LogParser | None = None
        start = 0
        if state is not None and 0 < state.offset <= st.st_size:
            fh.seek(state.offset - len(state.tail))
            if fh.read(len(state.tail)) == state.tail:
                parser = pickle.loads(state.parser)
                start = state.offset
        if parser is None:
            parser = LogParser(rel, redactor, year_hint=datetime.fromtimestamp(st.st_mtime).year)
        end = _complete_end(fh, start, st.st_size)
        fh.seek(start)
        _feed(parser, _Limited(fh, end - start))
        fh.seek(max(0, end - 256))
        new_state = LogState(
            end, fh.read(end - max(0, end - 256)), pickle.dumps(parser, pickle.HIGHEST_PROTOCOL)
        )
        # The last, unterminated line (a job still writing) is read but not kept in the state.
        _feed(parser, _Limited(fh, st.st_size - end))
    lines_main = parser.lines
    for extra, extra_rel in extra_logs:
        sub = VllmAccumulator(extra_rel)
        try:
            with open(extra, "rb") as xfh:
                for number, raw, _truncated in iter_raw_lines(xfh):
                    ln = split_line(number, raw)
                    if ln.emitter == "vllm":
                        sub.feed(ln, parser._vllm_time(ln.vllm_time))
        except OSError as exc:
            parser.warnings.append(BuildWarning(extra_rel, None, f"cannot read: {exc.strerror}"))
            continue
        parser.vllm.merge(sub)
    parser.lines = lines_main
    return parser.finish(size_bytes=st.st_size, mtime=st.st_mtime), new_state


def _feed(parser: LogParser, fh) -> None:
    for number, block, line, truncated in iter_blocks(fh, first=parser.lines + 1):
        if block is None:
            parser.feed_raw(number, line, truncated)
        else:
            parser.feed_block(number, block)
