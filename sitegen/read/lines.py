"""Anatomy of one line of a SLURM ``.out`` log (docs/formats.md §2).

A physical line may carry a Ray prefix, an emitter header (loguru or vLLM) and
a message. :func:`split_line` peels those layers off; nothing here keeps state.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import NamedTuple

ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# (skyrl_entrypoint pid=12345) / (AsyncVLLMInferenceEngine pid=1, ip=10.0.0.1)
# (raylet) / (autoscaler +1m2s) / (EngineCore_DP0 pid=9) / (pid=1234) / (APIServer pid=1)
# and Ray's daemons on another node than the driver's: (raylet, ip=10.0.0.3). Ray writes
# "pid=" before a daemon's name but the raylet's and the autoscaler's: (pid=gcs_server),
# (pid=runtime_env, ip=10.0.0.3). A process named by its actor's __repr__ or by Ray Data's
# operators holds brackets, "<>" and "->": (MyActor(index=2) pid=7),
# (ReadRange->MapBatches(<lambda>) pid=9); such a name comes with a pid only.
_IP = r"[0-9A-Fa-f.:]+"
_NAMED = r"[A-Za-z_<][\w.<>\-]*(?:\((?:[^()\n]|\([^()\n]*\))*\)[\w.<>\-]*)*"
RAY_PREFIX_RE = re.compile(
    rf"^\((?:(?P<actor>[A-Za-z_][\w.\-]*)(?: pid=(?P<pid>\d+)| \+[\w.]+)?(?:, ip=(?P<ip>{_IP}))?"
    rf"|(?P<named>{_NAMED}) pid=(?P<npid>\d+)(?:, ip=(?P<nip>{_IP}))?"
    rf"|pid=(?:(?P<bare>\d+)|(?P<daemon>[A-Za-z_]\w*))(?:, ip=(?P<bip>{_IP}))?)\) "
)
MAX_PREFIXES = 3  # (VllmAsyncGenerationWorker …) (EngineCore_DP0 …) (RayWorkerWrapper …)
# A container runtime's RFC 3339 time before everything else (docs/formats.md §2).
CONTAINER_TS_RE = re.compile(
    r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}) "
)
# Ray appends this to any line, right after its last field (maybe before a trailing note).
DEDUP_RE = re.compile(r" ?\[repeated (\d{1,18})x across cluster\]")  # (as markers.STEP_RE)

LOGURU_RE = re.compile(
    r"^(?P<ts>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?) \| (?P<level>[A-Z]+)\s*\| "
    r"(?P<where>[^ ]+) - (?P<msg>.*)$"
)
# vLLM's header: "[file.py:N]" since 0.7.3, "file.py:N]" up to 0.7.2 (docs/formats.md §5.3).
VLLM_RE = re.compile(
    r"^(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<ts>\d{2}-\d{2} \d{2}:\d{2}:\d{2})"
    r"(?:\.\d+)? (?:\[(?P<where>[^\]]+)\]|(?P<old>[^\s\[\]]+:\d+)\]) (?P<msg>.*)$"
)
# SLURM's step daemon names itself "slurmstepd" or, on many clusters, "slurmstepd-<node>"
# (docs/formats.md §4.4): "slurmstepd-gpu-17: error: *** JOB …". A node name is short
# (bounded: a search through a line of them stays linear).
SLURMSTEPD = r"slurmstepd(?:-[\w.\-]{1,64})?:"
SLURMSTEPD_RE = re.compile(SLURMSTEPD)
# Where a record glued after a progress bar may start (docs/formats.md §2: a stream that
# lost the bar's \r puts the next record on the bar's line).
GLUED_START_RE = re.compile(
    r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? \| [A-Z]+\s*\| "
    r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? "
    r"(?:\[|[^\s\[\]]+:\d+\] )"
    rf"|{SLURMSTEPD} |srun: error: |WANDB_MIRROR "
)
# The end of a tqdm bar: "| 208/233 [1:15:34<08:27, 20.30s/it]" or "5it [00:01, 3.2it/s]".
# Only text ending like this may carry a glued record: model text can hold anything. A count
# starts where its run of digits starts (the same matches, each run read once: linear).
_TQDM_TAIL = r"(?<!\d)(?:\d+/\d+|\d+(?:\.\d+)?[kMG]?it) \[[^\[\]]*\]\s*"
TQDM_TAIL_RE = re.compile(_TQDM_TAIL + "$")
# The same, then the glued record's own Ray prefixes: a bar the driver wrote (no prefix,
# no line break), then a worker's line as Ray forwards it.
TQDM_TAIL_PREFIXED_RE = re.compile(_TQDM_TAIL + rf"((?:\([^()]*\) ){{1,{MAX_PREFIXES}}})$")

# Longest line kept whole; the rest of a longer line is dropped (and reported).
MAX_LINE_BYTES = 1 << 20


class Line(NamedTuple):
    """One logical line with its layers separated (a named tuple: cheaper than a dataclass).

    ``source``: the emitting process (``actor pid ip``), ``""`` for the driver's own lines.
    ``emitter``: ``"loguru"``, ``"vllm"`` or ``""``; ``time`` is a loguru line's (vLLM
    headers carry no year: ``vllm_time`` holds their ``MM-DD HH:MM:SS`` text)."""

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
    # the text before a record glued onto a progress bar's line (docs/formats.md §2), else ""
    before: str = ""


class Breaks:
    """The line breaks :func:`iter_blocks` made of lone ``\r`` (tqdm redraws), around one
    yield, which a reader takes off its line count to name the file's own line.
    ``before``: breaks since the previous yield; :meth:`within`: inside a block."""

    __slots__ = ("before", "cr", "base", "_at_base")

    def __init__(self, before: int, cr: CrBreaks | None = None, base: int = 0) -> None:
        self.before = before
        self.cr = cr  # the chunk's breaks, when the block holds some
        self.base = base  # where the block starts in the converted chunk
        self._at_base = cr.before(base) if cr is not None else 0

    def within(self, offset: int) -> int:
        """Breaks made of ``\r`` in the block before ``block[offset]``."""
        if self.cr is None:
            return 0
        return self.cr.before(self.base + offset) - self._at_base


class CrBreaks:
    """Where :func:`_cr_breaks` turned a chunk's lone ``\r`` into line breaks (``total`` in
    all): counted on demand from where the last question stopped, so a chunk is counted
    through at most once."""

    __slots__ = ("chunk", "out", "pieces", "total", "_i", "_pos", "_got")

    def __init__(
        self, chunk: bytes, out: bytes, pieces: list[tuple[int, int, int, int]], total: int
    ) -> None:
        self.chunk, self.out, self.pieces, self.total = chunk, out, pieces, total
        self._i, self._pos, self._got = 0, 0, 0  # breaks below out[_pos], pieces[_i] on

    def before(self, pos: int) -> int:
        """The breaks at offsets below ``pos`` of the converted chunk."""
        if pos >= len(self.out):
            return self.total
        if pos < self._pos:  # asked out of order (rare): count again from the start
            self._i, self._pos, self._got = 0, 0, 0
        i, at, got = self._i, self._pos, self._got
        pieces, n = self.pieces, len(self.pieces)
        while i < n:
            start, end, src, kind = pieces[i]
            if start >= pos:
                break
            a, b = max(start, at), min(end, pos)
            if a < b:
                if kind == BARE:  # \r replaced by \n one for one: count the \r in the source
                    got += self.chunk.count(b"\r", src + a - start, src + b - start)
                else:  # a line's text after its first \r: its every \n is such a break
                    got += self.out.count(b"\n", a, b)
            if end > pos:
                break
            i += 1
        self._i, self._pos, self._got = i, pos, got
        return got


def iter_blocks(
    fh, chunk_size: int = 1 << 20
) -> Iterator[tuple[bytes | None, bytes, bool, Breaks | None]]:
    """Read a binary stream in fixed chunks, in bounded memory.

    Yields ``(block, line, truncated, breaks)``: a block of complete lines (``line``
    empty), or one line (``block`` None) longer than :data:`MAX_LINE_BYTES` (cut there,
    ``truncated``) or the last, unterminated one. ``\r`` is a line break (tqdm bars),
    ``\r\n`` one; ``breaks`` says where such ``\r`` breaks are (None: none).
    """
    buf = bytearray()  # the start of a line that continues in the next chunk
    overflow = False
    pending_cr = False
    cr_prefix = b""  # the Ray prefixes of the line whose \r ended the last chunk
    owed = 0  # \r breaks since the last yield (a chunk's last \r, known lone in the next)
    while True:
        chunk = fh.read(chunk_size)
        if not chunk:
            break
        if pending_cr:
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
            else:
                owed += 1  # the last chunk's final \r was a lone one after all
                chunk = cr_prefix + chunk  # what follows it is that line's process's too
        pending_cr = chunk[-1:] == b"\r"
        if pending_cr:
            cr_prefix = _last_line_prefix(chunk, buf)
        cr: CrBreaks | None = None
        if b"\r" in chunk:
            # The carried line's start, topped up from this chunk: its Ray prefix may
            # straddle the boundary (then the prefix of its \r records was lost).
            carried = bytes(buf[:400]) + chunk[: max(0, 400 - len(buf))] if buf else None
            pieces: list[tuple[int, int, int, int]] = []
            converted = _cr_breaks(chunk, carried, pieces)
            lone = chunk.count(b"\r") - pieces.pop()[3] if pieces else 0  # (a test's stand-in)
            if lone:
                cr = CrBreaks(chunk, converted, pieces, lone)
            chunk = converted
        nl = chunk.find(b"\n")
        if nl < 0:  # no line ends in this chunk
            room = MAX_LINE_BYTES - len(buf)
            if len(chunk) > room:
                buf += chunk[: max(room, 0)]
                overflow = True
            else:
                buf += chunk
            continue
        if buf or overflow:  # finish the line carried over
            room = MAX_LINE_BYTES - len(buf)
            head = chunk[:nl]
            if len(head) > room:
                head, overflow = head[: max(room, 0)], True
            yield None, bytes(buf) + head, overflow, Breaks(owed) if owed else None
            owed = 0
            buf.clear()
            overflow = False
            start = nl + 1
        else:
            start = 0
        if cr is not None and start:
            owed += cr.before(start)  # the break ending the carried line may be a \r's
        last = chunk.rfind(b"\n")
        if last >= start:
            block = chunk[start : last + 1]
            ahead, owed = owed, 0
            brk = Breaks(ahead, cr, start) if ahead or cr is not None else None
            # A block longer than a line may be (\r breaks add prefixes to a chunk)
            # is looked into; the count is needed only then.
            if len(block) <= MAX_LINE_BYTES or (
                block.count(b"\n") * MAX_LINE_BYTES >= len(block) and _no_long_line(block)
            ):
                yield block, b"", False, brk
            else:
                at = seen = 0  # seen: the block's breaks before the last line yielded
                for piece in block[:-1].split(b"\n"):
                    n = ahead if at == 0 else 0
                    if brk is not None and at:
                        upto = brk.within(at)
                        n, seen = upto - seen, upto
                    cut = len(piece) > MAX_LINE_BYTES
                    yield None, piece[:MAX_LINE_BYTES], cut, Breaks(n) if n else None
                    at += len(piece) + 1
                if brk is not None:
                    owed += brk.within(len(block)) - seen
        rest = chunk[last + 1 :]
        if len(rest) > MAX_LINE_BYTES:
            buf += rest[:MAX_LINE_BYTES]
            overflow = True
        else:
            buf += rest
    if buf or overflow:
        yield None, bytes(buf), overflow, Breaks(owed) if owed else None


# The Ray prefixes (and a container time) that start a physical line, as bytes. Ray puts a
# run of colour codes before each (dim, then cyan: \x1b[2m\x1b[36m; the autoscaler's bright
# too) and a reset after it: any run is taken on either side.
_PFX = (
    rb"(?:\x1b\[[0-9;]*m)*\((?:[A-Za-z_][\w.\-]*(?: pid=\d+| \+[\w.]+)?(?:, ip=[0-9A-Fa-f.:]+)?"
    + rb"|"
    + _NAMED.encode()
    + rb" pid=\d+(?:, ip=[0-9A-Fa-f.:]+)?"
    + rb"|pid=(?:\d+|[A-Za-z_]\w*)(?:, ip=[0-9A-Fa-f.:]+)?)\)(?:\x1b\[[0-9;]*m)* "
)
CR_PREFIX_RE = re.compile(rb"(?:\d{4}-\d\d-\d\dT[\d:.]+Z )?(?:" + _PFX + rb"){1,3}")
# The bytes CR_PREFIX_RE can start with: a line starting otherwise needs no match.
_FIRST = frozenset(b"0123456789(\x1b")
# The kinds of :func:`_cr_breaks`'s pieces
BARE, PREFIXED = 0, 1


def _cr_breaks(
    chunk: bytes, carried: bytes | None, pieces: list[tuple[int, int, int, int]] | None = None
) -> bytes:
    """Turn each lone ``\r`` into a line break that keeps its line's Ray prefix.

    Ray prefixes whole ``\n``-terminated lines; a tqdm bar redraws with ``\r`` inside
    one, so a record after a ``\r`` belongs to the same process (docs/formats.md §2).
    ``carried``: the start of a line begun in the previous chunk. A ``\r`` ending the
    chunk may be half of a ``\r\n``: it becomes a plain break. A prefix is matched once per
    physical line (the loop goes on after the line's end: linear in the chunk).

    ``pieces``, when given, gets ``(start, end, source start, kind)`` for each piece of
    the result that may hold breaks made of lone ``\r``: ``BARE``, the source with ``\r``
    replaced one for one; ``PREFIXED``, a line's text after its first ``\r``, whose every
    ``\n`` is such a break; last ``(-1, -1, -1, n)``: the number of ``\r`` not lone.
    """
    out: list[bytes] = []
    olen = 0  # len(b"".join(out))
    pos = 0  # chunk[:pos] is done (in out)
    n = len(chunk)
    find, rfind = chunk.find, chunk.rfind
    not_lone = 1 if chunk[-1:] == b"\r" else 0

    def bulk(a: int, b: int, cr: bytes = b"\n", kind: int = BARE) -> None:
        # chunk[a:b], each \r as cr, a piece of kind. A BARE piece may hold the chunk's last
        # \r (counted in not_lone too): harmless, as the chunk's last \r is never asked about.
        nonlocal olen
        part = chunk[a:b].replace(b"\r", cr)
        if pieces is not None and a < b:
            pieces.append((olen, olen + len(part), a, kind))
        out.append(part)
        olen += len(part)

    end = 0  # the end of the last line looked at: 0 or the index of its \n
    i = find(b"\r")
    while i >= 0:
        start = rfind(b"\n", end, i) + 1
        end = find(b"\n", i)
        if end < 0:
            end = n
        # the line's own text ends before its \r\n's \r, if it has one
        text_end = end - 1 if end < n and chunk[end - 1] == 13 else end
        if start == 0 and carried is not None:
            m = CR_PREFIX_RE.match(carried)
        else:
            m = CR_PREFIX_RE.match(chunk, start, start + 400) if chunk[start] in _FIRST else None
        if m:
            bulk(pos, i)
            cr = b"\n" + m.group(0)
            if end == n and chunk[-1] == 13:  # the chunk's last \r: a plain break
                bulk(i, n - 1, cr, PREFIXED)
                out.append(b"\n")
                olen += 1
            else:
                bulk(i, text_end, cr, PREFIXED)
            pos = end
            not_lone += text_end < end
        elif text_end < end:  # a bare line ending in \r\n (rare)
            bulk(pos, text_end)
            pos = end
            not_lone += 1
        i = find(b"\r", end)
    bulk(pos, n)
    if pieces is not None:
        pieces.append((-1, -1, -1, not_lone))
    return b"".join(out)


def _last_line_prefix(chunk: bytes, buf: bytearray) -> bytes:
    """The Ray prefixes the last line of ``chunk`` starts with, as :func:`_cr_breaks` finds
    them (``buf``: the start of a line carried into ``chunk``)."""
    start = chunk.rfind(b"\n") + 1
    if start == 0 and buf:
        head = bytes(buf[:400]) + chunk[: max(0, 400 - len(buf))]
    else:
        head = chunk[start : start + 400]
    m = CR_PREFIX_RE.match(head)
    return m.group(0) if m else b""


def known_prefix(
    prefixes: dict[bytes, tuple[str, str | None, str | None] | None], pfx: bytes
) -> tuple[str, str | None, str | None] | None:
    """:func:`checked_prefix` of ``pfx``, worked out once per prefix and kept in ``prefixes``."""
    if pfx not in prefixes:
        if len(prefixes) > 4096:  # bounded whatever the log
            prefixes.clear()
        prefixes[pfx] = checked_prefix(pfx)
    return prefixes[pfx]


def checked_prefix(pfx: bytes) -> tuple[str, str | None, str | None] | None:
    """The source split_line gives ``pfx`` + a pformat line, if it strips exactly ``pfx``."""
    if "[repeated" in ANSI_RE.sub("", pfx.decode("utf-8", errors="replace")):
        return None
    got = set()
    for rest in (b"{x", b" x", b"\tx"):
        ln = split_line(0, pfx + rest)
        if ln.message != rest.decode() or ln.emitter or ln.repeated or ln.before:
            return None
        got.add((ln.source, ln.pid, ln.ip))
    return got.pop() if len(got) == 1 else None


def _no_long_line(block: bytes) -> bool:
    pos = 0
    while pos < len(block):
        nl = block.find(b"\n", pos)
        if nl - pos > MAX_LINE_BYTES:
            return False
        pos = nl + 1
    return True


def iter_raw_lines(fh, chunk_size: int = 1 << 20) -> Iterator[tuple[int, bytes, bool]]:
    """Yield ``(line_number, bytes, truncated)`` for every line of a binary stream; the
    lines a ``\r`` makes of one file line share its number."""
    number = 1
    for block, line, truncated, brk in iter_blocks(fh, chunk_size):
        if brk is not None:
            number -= brk.before
        if block is None:
            yield number, line, truncated
            number += 1
        else:
            at = 0
            for piece in block[:-1].split(b"\n"):
                yield number - (brk.within(at) if brk is not None else 0), piece, False
                number += 1
                at += len(piece) + 1
            if brk is not None:
                number -= brk.within(len(block))


def split_line(number: int, raw: bytes) -> Line:
    """Decode one physical line and separate Ray prefix, header and message; a record glued
    after a progress bar (docs/formats.md §2) is read as if it had a line of its own."""
    text = raw.decode("utf-8", errors="replace")
    if "\x1b" in text:
        text = ANSI_RE.sub("", text)
    text = text.replace("\x00", "")
    repeated = 0
    if "[repeated " in text:
        m = DEDUP_RE.search(text)
        if m:
            repeated = int(m.group(1))
            text = text[: m.start()] + text[m.end() :]
    if text[:4].isdigit() and text[10:11] == "T":
        m = CONTAINER_TS_RE.match(text)
        if m:
            text = text[m.end() :]
    source, pid, ip, text = _peel(text)
    text = text.rstrip("\n")
    line = _header(number, source, pid, ip, repeated, text)
    if line is not None:
        return line
    # A bar's tail ends in "]": a line without one cannot be a bar with a record glued on
    # (most lines that reach here, e.g. a metrics dict's, skip the search).
    glued = GLUED_START_RE.search(text, 1) if "]" in text else None
    if glued is not None:
        at = glued.start()
        if TQDM_TAIL_RE.search(text, 0, at):
            return _glued(number, source, pid, ip, repeated, text, at)
        m = TQDM_TAIL_PREFIXED_RE.search(text, 0, at)
        if m is not None:  # the record's own process, named between the bar and it
            own, own_pid, own_ip, left = _peel(m.group(1))
            if not left:  # all of it prefixes
                return _glued(number, own, own_pid, own_ip, repeated, text, at)
    return Line(number, source, pid, ip, repeated, "", None, None, "", text)


def _glued(
    number: int, source: str, pid: str | None, ip: str | None, repeated: int, text: str, at: int
) -> Line:
    """The record that starts at ``text[at]``, glued after a bar: ``before`` is the bar."""
    rest = text[at:]
    line = _header(number, source, pid, ip, repeated, rest) or Line(
        number, source, pid, ip, repeated, "", None, None, "", rest
    )
    return line._replace(before=text[:at])


def _peel(text: str) -> tuple[str, str | None, str | None, str]:
    """The Ray prefixes ``text`` starts with (up to three: the Ray actor, then e.g. vLLM >=
    0.10's EngineCore group): the process the first names, and what follows."""
    source, pid, ip = "", None, None
    for depth in range(MAX_PREFIXES):
        m = RAY_PREFIX_RE.match(text)
        if not m:
            break
        if depth == 0:
            pid = m.group("pid") or m.group("npid") or m.group("bare")
            ip = m.group("ip") or m.group("nip") or m.group("bip")
            name = m.group("actor") or m.group("named") or m.group("daemon")
            source = " ".join(p for p in (name, pid, ip) if p)
        text = text[m.end() :]
    return source, pid, ip, text


def _header(
    number: int, source: str, pid: str | None, ip: str | None, repeated: int, text: str
) -> Line | None:
    """The line as a loguru or vLLM record, if ``text`` starts with either header."""
    if not (text[:2].isdigit() or text[:1] in "DIWEC"):
        return None
    m = LOGURU_RE.match(text)
    if m:
        emitter, time, vllm_time = "loguru", _loguru_time(m["ts"]), None
    else:
        m = VLLM_RE.match(text)
        if m is None:
            return None
        emitter, time, vllm_time = "vllm", None, m["ts"]
    where = m["where"] or m["old"] if emitter == "vllm" else m["where"]
    return Line(number, source, pid, ip, repeated, emitter, time, vllm_time, where, m["msg"])


def _loguru_time(ts: str) -> datetime | None:
    try:
        return datetime.fromisoformat(ts)
    except ValueError:
        return None
