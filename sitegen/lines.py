"""Anatomy of one line of a SLURM ``.out`` log (formats.md §2).

A physical line may carry a Ray prefix, an emitter header (loguru or vLLM) and
a message. :func:`split_line` peels those layers off; nothing here keeps state.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# (skyrl_entrypoint pid=12345) / (AsyncVLLMInferenceEngine pid=1, ip=10.0.0.1)
# (raylet) / (autoscaler +1m2s) / (EngineCore_DP0 pid=9)
RAY_PREFIX_RE = re.compile(
    r"^\((?P<actor>[A-Za-z_][\w.\-]*)"
    r"(?: pid=(?P<pid>\d+)(?:, ip=(?P<ip>[0-9A-Fa-f.:]+))?| \+[\w.]+)?\) "
)
DEDUP_RE = re.compile(r" \[repeated (\d+)x across cluster\]\s*$")

LOGURU_RE = re.compile(
    r"^(?P<ts>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?) \| (?P<level>[A-Z]+)\s*\| "
    r"(?P<where>[^ ]+) - (?P<msg>.*)$"
)
VLLM_RE = re.compile(
    r"^(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<ts>\d{2}-\d{2} \d{2}:\d{2}:\d{2})"
    r"(?:\.\d+)? \[(?P<where>[^\]]+)\] (?P<msg>.*)$"
)

# Longest line kept whole; the rest of a longer line is dropped (and reported).
MAX_LINE_BYTES = 1 << 20


@dataclass(frozen=True)
class Line:
    """One logical line with its layers separated.

    ``source`` identifies the emitting process (``actor pid ip``) or is ``""``
    for lines written straight to the SLURM file. ``emitter`` is ``"loguru"``,
    ``"vllm"`` or ``""``; ``time`` is set for loguru lines only (vLLM headers
    carry no year), ``vllm_time`` holds the vLLM ``MM-DD HH:MM:SS`` text.
    """

    number: int
    source: str
    pid: str | None
    ip: str | None
    repeated: int
    emitter: str
    time: datetime | None
    vllm_time: str | None
    where: str
    message: str


def iter_raw_lines(
    fh, chunk_size: int = 1 << 20, first: int = 1
) -> Iterator[tuple[int, bytes, bool]]:
    """Yield ``(line_number, bytes, truncated)`` from a binary stream (anything with ``read(n)``).

    Reads in fixed chunks, so memory stays bounded whatever a line's length:
    a line longer than :data:`MAX_LINE_BYTES` is cut there and flagged.
    ``\r`` counts as a line break (tqdm bars), ``\r\n`` as one break.
    """
    number = first - 1
    buf = bytearray()
    overflow = False
    pending_cr = False
    while True:
        chunk = fh.read(chunk_size)
        if not chunk:
            break
        if pending_cr and chunk[:1] == b"\n":
            chunk = chunk[1:]
        pending_cr = chunk[-1:] == b"\r"
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        pieces = chunk.split(b"\n")
        for piece in pieces[:-1]:
            if buf or overflow:
                room = MAX_LINE_BYTES - len(buf)
                if len(piece) > room:
                    piece, overflow = piece[: max(room, 0)], True
                piece = bytes(buf) + piece
                buf.clear()
            elif len(piece) > MAX_LINE_BYTES:
                piece, overflow = piece[:MAX_LINE_BYTES], True
            number += 1
            yield number, piece, overflow
            overflow = False
        rest = pieces[-1]
        room = MAX_LINE_BYTES - len(buf)
        if len(rest) > room:
            buf += rest[: max(room, 0)]
            overflow = True
        else:
            buf += rest
    if buf or overflow:
        number += 1
        yield number, bytes(buf), overflow


def split_line(number: int, raw: bytes) -> Line:
    """Decode one physical line and separate Ray prefix, header and message."""
    text = raw.decode("utf-8", errors="replace")
    if "\x1b" in text:
        text = ANSI_RE.sub("", text)
    text = text.replace("\x00", "")
    repeated = 0
    m = DEDUP_RE.search(text)
    if m:
        repeated = int(m.group(1))
        text = text[: m.start()]
    source = ""
    pid = ip = None
    # Up to two prefixes: the Ray actor, then vLLM >= 0.10's EngineCore group.
    for depth in range(2):
        m = RAY_PREFIX_RE.match(text)
        if not m:
            break
        if depth == 0:
            pid, ip = m.group("pid"), m.group("ip")
            source = f"{m.group('actor')} {pid or ''} {ip or ''}".strip()
        text = text[m.end() :]
    text = text.rstrip("\n")
    if text[:2].isdigit() or text[:1] in "DIWEC":
        m = LOGURU_RE.match(text)
        if m:
            return Line(
                number,
                source,
                pid,
                ip,
                repeated,
                "loguru",
                _loguru_time(m.group("ts")),
                None,
                m.group("where"),
                m.group("msg"),
            )
        m = VLLM_RE.match(text)
        if m:
            return Line(
                number,
                source,
                pid,
                ip,
                repeated,
                "vllm",
                None,
                m.group("ts"),
                m.group("where"),
                m.group("msg"),
            )
    return Line(number, source, pid, ip, repeated, "", None, None, "", text)


def _loguru_time(ts: str) -> datetime | None:
    try:
        return datetime.fromisoformat(ts)
    except ValueError:
        return None
