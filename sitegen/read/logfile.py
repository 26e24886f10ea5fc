"""Reading one log file: in blocks, on from where the last build stopped, with its infra logs.

:class:`~sitegen.read.logparse.LogParser` is the state machine; this module feeds
it from disk and keeps the state that lets a grown log be read on.
"""

from __future__ import annotations

import base64
import contextlib
import os
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from sitegen.discover.safeio import open_regular, root_of
from sitegen.frozen import frozen
from sitegen.model.parsed import ParsedLog
from sitegen.read.logparse import LogParser
from sitegen.read.scrub import scrub_log
from sitegen.redact import Redactor

STATE_FORMAT = 1  # the LogState wrapper; the parser's own state carries its own format


@frozen
class LogState:
    """Where a parse stopped, so a grown log is read on from there (incremental builds).

    ``parser`` is the parser's state after the first ``offset`` bytes (which
    end with a newline), as plain JSON (:meth:`LogParser.state_json`); ``tail``
    holds the bytes just before ``offset``, checked to make sure the file was
    appended to, not rewritten.
    """

    offset: int
    tail: bytes
    parser: dict

    def to_json(self) -> dict:
        """Plain JSON (strict: no NaN, string keys), versioned."""
        return {
            "format": STATE_FORMAT,
            "offset": self.offset,
            "tail": base64.b64encode(self.tail).decode("ascii"),
            "parser": self.parser,
        }

    @classmethod
    def from_json(cls, d: dict) -> LogState:
        """The state :meth:`to_json` wrote. ValueError on anything malformed (all of it is checked)."""
        if not isinstance(d, dict) or set(d) != {"format", "offset", "tail", "parser"}:
            raise ValueError("not a log state")
        if d["format"] != STATE_FORMAT:
            raise ValueError(f"log state format {d['format']!r}, expected {STATE_FORMAT}")
        offset, tail = d["offset"], d["tail"]
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise ValueError("log state: bad offset")
        if not isinstance(tail, str):
            raise ValueError("log state: bad tail")
        try:
            raw = base64.b64decode(tail.encode("ascii"), validate=True)
        except (ValueError, UnicodeEncodeError):
            raise ValueError("log state: bad tail") from None
        if len(raw) > offset:
            raise ValueError("log state: tail longer than offset")
        # Decode once to check every field; parse_log decodes a fresh parser each time.
        LogParser.from_state_json(d["parser"], "", Redactor())
        return cls(offset, raw, d["parser"])


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
    root = root_of(path, rel)  # links may not lead out of the archive
    with open_regular(path, root) as fh:
        st = os.fstat(fh.fileno())
        parser: LogParser | None = None
        start = 0
        if state is not None and 0 < state.offset <= st.st_size:
            fh.seek(state.offset - len(state.tail))
            if fh.read(len(state.tail)) == state.tail:
                with contextlib.suppress(ValueError):  # a state of another format: read it all
                    parser = LogParser.from_state_json(state.parser, rel, redactor)
                    start = state.offset
        if parser is None:
            parser = LogParser(rel, redactor, year_hint=datetime.fromtimestamp(st.st_mtime).year)
        end = _complete_end(fh, start, st.st_size)
        fh.seek(start)
        parser.feed_stream(_Limited(fh, end - start))
        fh.seek(max(0, end - 256))
        new_state = LogState(end, fh.read(end - max(0, end - 256)), parser.state_json())
        # The last, unterminated line (a job still writing) is read but not kept in the state.
        parser.feed_stream(_Limited(fh, st.st_size - end))
    for extra, extra_rel in extra_logs:
        try:
            with open_regular(extra, root) as xfh:
                # bounded by its size now: a log still growing is read up to here
                parser.read_engine_log(extra_rel, _Limited(xfh, os.fstat(xfh.fileno()).st_size))
        except OSError as exc:
            parser.file_warning(extra_rel, f"cannot read: {exc.strerror}")
    parsed = parser.finish(size_bytes=st.st_size, mtime=st.st_mtime)
    return scrub_log(parsed, redactor, parser.secrets), new_state
