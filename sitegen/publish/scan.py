"""How one file of a site is read and scanned: the bytes as a reader gets them.

* **Text** (valid UTF-8) as it is; HTML, XML and SVG with their character references
  decoded (``&#39;[REDACTED]&#39;`` is a masked value), except line breaks (lines stay true).
* **gzip**, bzip2 and xz decompressed (every member or stream; a gzip member's header
  fields, its stored name among them, as runs of text), a **zip** member by member, its
  list of names, and every other byte of it as runs of text (headers' extra fields and
  comments, bytes between and after members); a piece packed itself unpacked in turn (to
  eight levels). A zip member its directory does not list stops the gate: it would go out
  unread.
* **UTF-16** and UTF-32 (by byte-order mark or NULs in every other byte) decoded, and as
  runs of ASCII too (ASCII after a byte-order mark); JSON whose writer escapes ``/`` as
  ``\\/`` with those undone.
* **Transcripts' data scripts** decoded, with the transcript rules too.
* **Binary** (not UTF-8, or a NUL in the first 8000 bytes, git's test) as its runs of 8 or
  more printable ASCII characters, in bytes or in UTF-16 (``strings`` and ``strings -el``),
  joined by NULs: a credential is ASCII and that long. Text drawn into a PNG cannot be
  read; it comes from the pages, which are scanned.

Each finding is a :class:`Leak` whose excerpt masks every finding on its line.
"""

from __future__ import annotations

import bz2
import functools
import hashlib
import html
import io
import lzma
import re
import zipfile
import zlib
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import orjson

from sitegen.errors import printable
from sitegen.redact import Redactor

MB = 10**6
GZIP_MAX_BYTES = 2000 * MB  # a gzip that inflates past this is not scanned: it stops the gate
HTML_SUFFIXES = (".html", ".htm", ".xml", ".svg", ".xhtml")
_PRINTABLE_RUN = re.compile(rb"[\t\n\r\x20-\x7e]{8,}")
_WIDE_RUN = re.compile(rb"(?:[\t\n\r\x20-\x7e]\x00){8,}")
_CHAR_REF = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_EXCERPT_CHARS = 40


class Leak(msgspec.Struct, frozen=True):
    """A secret found in a site file: where, what kind, and its line with the secret masked
    (``line`` None: in the file's name, ``path`` masked)."""

    path: str
    line: int | None
    kind: str
    excerpt: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return printable(f"{where}: {self.kind}: {self.excerpt}")


class SiteFile(msgspec.Struct, frozen=True):
    """One file the site publishes: its path, size and git blob id (of the bytes scanned)."""

    rel: str
    size: int
    blob: str


ScanResult = tuple[SiteFile | None, list[Leak], int, str | None]


def blob_id(data: bytes) -> str:
    """The id git gives a file with these bytes (``git hash-object``)."""
    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def scan_file(
    site: Path, rel: str, redactor: Redactor, allow: tuple[re.Pattern[str], ...]
) -> ScanResult:
    where = redactor.text(rel)  # a file's name in the report: a secret in it is masked
    try:
        data = (site / rel).read_bytes()
    except OSError as exc:
        return None, [], 0, f"{where}: cannot read it ({exc.strerror}), so it cannot be checked"
    scanned = SiteFile(rel, len(data), blob_id(data))
    if data.startswith(TRANSCRIPT_SCRIPT):
        return _scan_transcript(data, scanned, where, redactor, allow)
    try:
        payloads = _unpacked(data, where, rel, redactor)
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError, zipfile.BadZipFile) as exc:
        what = next((kind for magic, kind in _PACKED if data.startswith(magic)), "zip")
        why = printable(redactor.text(str(exc)))  # (zipfile's quote a header's name)
        return scanned, [], 0, f"{where}: {_a(what)} file that cannot be read ({why}): not checked"
    leaks: list[Leak] = []
    allowed = 0
    for payload, shown, name, runs in payloads:
        if runs:
            found, n = _scan_binary(payload, shown, redactor, allow)
        else:
            found, n = _scan_bytes(payload, shown, name, redactor, allow)
        leaks += found
        allowed += n
    return scanned, leaks, allowed, None


# How a transcript's data script starts (sitegen.present.transcripts.encode), after its stamp.
TRANSCRIPT_SCRIPT = b"sitegen.transcript("


@functools.lru_cache(maxsize=8)
def _for_transcripts(redactor: Redactor) -> Redactor:
    """The build's redactor with the transcript rules: what a transcript was redacted by."""
    return Redactor(redactor.extra_patterns, transcripts=True)


def _scan_transcript(
    data: bytes,
    scanned: SiteFile,
    where: str,
    redactor: Redactor,
    allow: tuple[re.Pattern[str], ...],
) -> ScanResult:
    """A transcript's data script, decoded: its record's text scanned with the transcript
    rules. One that cannot be decoded is a problem: it is not checked, so not published."""
    from sitegen.present.transcripts import decode  # (a site without transcripts: no import)

    got = decode(data)
    if got is None:
        return scanned, [], 0, f"{where}: a transcript script that cannot be read: not checked"
    text = orjson.dumps(got[1]).decode("utf-8")
    found = f"{where} (decompressed)"
    leaks, allowed = _leaks(text, found, _for_transcripts(redactor), allow, line_of=lambda i: 1)
    return scanned, leaks, allowed, None


# Files whose bytes are not what a reader gets (scanned unpacked): magic numbers, names.
_PACKED = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"PK\x03\x04", "zip"),
)
# A compressed stream's decompressor, by its kind.
_DECOMPRESSOR: dict[str, Callable[[], Any]] = {
    "gzip": lambda: zlib.decompressobj(wbits=31),
    "bzip2": bz2.BZ2Decompressor,
    "xz": lzma.LZMADecompressor,
}


# What a reader of a file gets, a piece at a time: its bytes, where they are in the report,
# the name they are read under (HTML is unescaped), and whether they are read as their runs of
# printable text whatever they look like (header fields: one must not decide how another is
# decoded, as a byte-order mark would).
Payload = tuple[bytes, str, str, bool]


def _unpacked(
    data: bytes,
    where: str,
    rel: str,
    redactor: Redactor,
    left: list[int] | None = None,
    depth: int = 0,
) -> list[Payload]:
    """The pieces of what a reader of the file gets: the file; a gzip, bzip2 or xz file
    decompressed, with each gzip member's header fields; a zip's names, its members and
    every byte outside its members' data; a piece that is packed itself, unpacked in turn
    (a jar's ``.gz``, a zip of logs). ``left``: the bytes that may still be unpacked, over
    every level. Past :data:`GZIP_MAX_BYTES` in all, or packed more than :data:`_DEPTH`
    deep (a zip that holds itself never ends), a ValueError: the file stops the gate."""
    left = [GZIP_MAX_BYTES] if left is None else left
    packed = any(data.startswith(magic) for magic, _ in _PACKED)
    if packed and depth == _DEPTH:
        raise ValueError(f"it is packed more than {_DEPTH} deep")
    for magic, kind in _PACKED:
        if kind in _DECOMPRESSOR and data.startswith(magic):
            body, starts = _inflate(_DECOMPRESSOR[kind], data, left)
            out = _unpacked(body, f"{where} (decompressed)", rel, redactor, left, depth + 1)
            if kind == "gzip" and (fields := b"\0".join(_gzip_fields(data, starts))):
                out.append((fields, f"{where} (its header fields)", rel, True))
            return out
    if data.startswith(b"PK\x03\x04"):
        return _unzipped(data, where, rel, redactor, left, depth)
    return [(data, where, rel, False)]


_DEPTH = 8  # archives in archives: the most levels read


def _unzipped(
    data: bytes, where: str, rel: str, redactor: Redactor, left: list[int], depth: int
) -> list[Payload]:
    """A zip's list of names, each member (a directory's too: it may hold data), and every
    other byte as runs of text: its headers' extra fields and comments, the archive's
    comment, bytes between and after the members (the names, read in the list, are left
    out there). A member the central directory does not list (``zip -FF`` finds it) stops
    the gate: it would go out unread."""
    out: list[Payload] = []
    read = []  # (the spans of bytes read otherwise: data and names)
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
    except NotImplementedError as exc:  # (a version of the format zipfile lacks)
        raise zipfile.BadZipFile(str(exc)) from exc
    central = z.start_dir
    with z:
        infos = z.infolist()
        # (``orig_filename``: the name as stored, past a NUL zipfile cuts it at)
        names = "\n".join(info.orig_filename for info in infos).encode()
        out.append((names, f"{where} (its list of files)", rel, False))
        for info in infos:
            if data[central : central + 4] == b"PK\x01\x02":
                n, m, k = (_le16(data, central + i) for i in (28, 30, 32))
                read.append((central + 46, central + 46 + n))
                central += 46 + n + m + k
            o = info.header_offset
            n, m = _le16(data, o + 26), _le16(data, o + 28)
            read += [(o + 30, o + 30 + n), (o + 30 + n + m, o + 30 + n + m + info.compress_size)]
            try:
                with z.open(info) as fh:
                    body = fh.read(left[0] + 1)
            except (RuntimeError, NotImplementedError) as exc:  # encrypted; an unknown method
                raise zipfile.BadZipFile(str(exc)) from exc
            left[0] -= len(body)
            if left[0] < 0:
                raise ValueError(f"it unpacks past {GZIP_MAX_BYTES / MB:,.0f} MB")
            shown = printable(redactor.text(info.filename))
            out += _unpacked(body, f"{where} ({shown})", info.filename, redactor, left, depth + 1)
    gaps, pos = [], 0
    for a, b in sorted(read):
        gaps.append((pos, a))
        pos = max(pos, b)
    gaps.append((pos, len(data)))
    headers = {info.header_offset for info in infos}
    for a, b in gaps:
        at = data.find(b"PK\x03\x04", a, b)
        while at >= 0:
            if at not in headers:
                raise ValueError("it holds a member its list of files does not name")
            at = data.find(b"PK\x03\x04", at + 4, b)
    rest = b"\0".join(data[a:b] for a, b in gaps if b > a)
    out.append((rest, f"{where} (its headers)", rel, True))
    return out


def _le16(data: bytes, at: int) -> int:
    return int.from_bytes(data[at : at + 2], "little")


def _a(kind: str) -> str:
    return f"an {kind}" if kind == "xz" else f"a {kind}"


_FEED = 1 << 20  # the most input a decompressor is given at a time
_OUT = 1 << 24  # the most output it gives back at a time
_NOT_NUL = re.compile(rb"[^\0]")


def _inflate(
    new: Callable[[], Any], data: bytes, left: list[int] | None = None
) -> tuple[bytes, list[int]]:
    """Every stream of a gzip, bzip2 or xz file (a gzip file's members), decompressed, and
    where each stream starts: what ``gunzip``, ``bunzip2`` and ``xz -d`` print, and more
    where they stop (NULs between and after streams are passed over wherever they stand); a
    last stream cut short gives what it holds. Bytes after a stream that start none are an
    error (they would be published unread), as is more than :data:`GZIP_MAX_BYTES` out in
    all (``left``: what may still be unpacked, shared with the levels around). Each
    stream is given its input in slices that start small and double (up to
    :data:`_FEED`): what a decompressor holds past its stream's end (copied, as
    ``unused_data``) is then at most about what the stream took, so a file of many small
    streams is read in time linear in its size."""
    out: list[bytes] = []
    view, pos = memoryview(data), 0
    left = [GZIP_MAX_BYTES] if left is None else left
    starts: list[int] = []
    while (start := _NOT_NUL.search(data, pos)) is not None:
        d, fed, feed = new(), start.start(), 64
        starts.append(fed)
        while not d.eof:
            waiting = getattr(d, "needs_input", None)  # (bz2, lzma; zlib hands back its tail)
            given = d.unconsumed_tail if waiting is None else b""
            if waiting or (waiting is None and not given):
                if fed == len(data):  # cut short
                    if waiting is None:  # (what zlib holds of the input it took)
                        out.append(d.flush())
                    return b"".join(out), starts
                given = view[fed : fed + feed]
                fed, feed = fed + len(given), min(2 * feed, _FEED)
            try:
                chunk = d.decompress(given, _OUT)
            except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
                if len(starts) > 1 and fed - len(given) == start.start():
                    other = [k for m, k in _PACKED if data.startswith(m, start.start())]
                    what = f"{_a(other[0])} stream" if other else "no stream"
                    raise ValueError(
                        f"bytes after its stream {len(starts) - 1} start {what}"
                    ) from exc
                raise
            out.append(chunk)
            left[0] -= len(chunk)
            if left[0] < 0:
                raise ValueError(f"it inflates past {GZIP_MAX_BYTES / MB:,.0f} MB")
        pos = fed - len(d.unused_data)
    return b"".join(out), starts


def _gzip_fields(data: bytes, starts: list[int]) -> list[bytes]:
    """The extra field, stored file name and comment of each gzip member (RFC 1952's
    FEXTRA, FNAME, FCOMMENT): not part of what is decompressed, but published all the same
    (``gunzip -N`` restores the name, ``file`` prints it, ``strings`` shows all three). A
    field cut short is what the file holds of it."""
    fields = []
    for start in starts:
        flags, pos = data[start + 3 : start + 4], start + 10
        flag = flags[0] if flags else 0
        if flag & 0x04:  # FEXTRA: its length, then that many bytes
            size = int.from_bytes(data[pos : pos + 2], "little")
            fields.append(data[pos + 2 : pos + 2 + size])
            pos += 2 + size
        for bit in (0x08, 0x10):  # FNAME, FCOMMENT: each ends at a NUL
            if flag & bit:
                end = data.find(b"\0", pos)
                end = len(data) if end < 0 else end
                fields.append(data[pos:end])
                pos = end + 1
    return [f for f in fields if f]


def _scan_bytes(
    data: bytes,
    where: str,
    rel: str,
    redactor: Redactor,
    allow: tuple[re.Pattern[str], ...],
) -> tuple[list[Leak], int]:
    text = _utf16(data)
    raw: tuple[list[Leak], int] = ([], 0)
    if text is not None:  # and its bytes as ``strings`` shows them: ASCII after a BOM
        raw = _scan_binary(data, where, redactor, allow, wide=False)
    else:
        # git's own test for binary content: a NUL byte in the first 8000 bytes.
        if b"\0" in data[:8000]:
            return _scan_binary(data, where, redactor, allow)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return _scan_binary(data, where, redactor, allow)
    if rel.lower().endswith(HTML_SUFFIXES):
        text = _unescape(text)
    elif ":\\/\\/" in text:  # JSON whose writer escapes "/" (PHP's, Java's): read as parsed
        text = text.replace("\\/", "/")
    leaks, allowed = _leaks(text, where, redactor, allow, _line_counter(text, "\n"))
    return leaks + raw[0], allowed + raw[1]


def _line_counter(text: Any, newline: Any) -> Callable[[int], int]:
    """The line of each offset it is asked, asked in order (a finding's): counted on from
    the last, so many findings cost one pass over the text."""
    pos, line = 0, 1

    def line_of(i: int) -> int:
        nonlocal pos, line
        line += text.count(newline, pos, i)
        pos = i
        return line

    return line_of


def _utf16(data: bytes) -> str | None:
    """The text of a UTF-16 or UTF-32 file (Windows tools' "Unicode", PowerShell's
    redirections), by its byte-order mark or NULs in every other byte; else None."""
    head = data[:8000]
    if head[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"):
        return data.decode("utf-32", errors="replace")
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16", errors="replace")
    if len(head) < 16 or b"\0" not in head:
        return None
    even, odd = head[0::2], head[1::2]
    if odd.count(0) > 0.9 * len(odd) and even.count(0) < 0.1 * len(even):
        return data.decode("utf-16-le", errors="replace")
    if even.count(0) > 0.9 * len(even) and odd.count(0) < 0.1 * len(odd):
        return data.decode("utf-16-be", errors="replace")
    return None


def _unescape(text: str) -> str:
    """Character references decoded, except those that decode to a line break (lines stay put)."""

    def one(m: re.Match[str]) -> str:
        s = html.unescape(m.group(0))
        return m.group(0) if "\n" in s or "\r" in s else s

    return _CHAR_REF.sub(one, text)


def _scan_binary(
    data: bytes,
    where: str,
    redactor: Redactor,
    allow: tuple[re.Pattern[str], ...],
    wide: bool = True,
) -> tuple[list[Leak], int]:
    """The bytes' runs of printable ASCII, and with ``wide`` their runs of it in UTF-16
    (little-endian, Windows' strings: what ``strings -el`` shows) too."""
    runs = [(m, 1) for m in _PRINTABLE_RUN.finditer(data)]
    if wide:  # (an ASCII run and a wide one share a character at most)
        runs = sorted(runs + [(m, 2) for m in _WIDE_RUN.finditer(data)], key=lambda r: r[0].start())
    if not runs:
        return [], 0
    # The runs joined by NUL (most values end there; one a rule reads across is found all
    # the same); a position maps back to a byte offset, and the line is the count of
    # newline bytes before it.
    starts, offsets, widths, parts, pos = [], [], [], [], 0
    for m, width in runs:
        starts.append(pos)
        offsets.append(m.start())
        widths.append(width)
        parts.append(m.group(0).decode("ascii" if width == 1 else "utf-16-le"))
        pos += len(parts[-1]) + 1
    text = "\0".join(parts)

    count = _line_counter(data, b"\n")

    def line_of(i: int) -> int:
        k = bisect_right(starts, i) - 1
        return count(offsets[k] + widths[k] * (i - starts[k]))

    return _leaks(text, where, redactor, allow, line_of)


def _leaks(
    text: str, where: str, redactor: Redactor, allow: tuple[re.Pattern[str], ...], line_of
) -> tuple[list[Leak], int]:
    found = list(redactor.findings(text))  # (in order, none overlapping)
    starts, ends = [f.start for f in found], [f.end for f in found]
    leaks: list[Leak] = []
    allowed = 0
    for f in found:
        value = text[f.start : f.end]
        if any(rx.fullmatch(value) for rx in allow):
            allowed += 1
            continue
        excerpt = _excerpt(text, f.start, f.end, found, starts, ends)
        leaks.append(Leak(where, line_of(f.start), f.kind, excerpt))
    return leaks, allowed


def _excerpt(text: str, start: int, end: int, found: list, starts: list, ends: list) -> str:
    """The finding's line around it, every finding on it masked, shortened and printable.
    (Each search stays within the excerpt's reach: a text of many findings costs linear.)"""
    lo, hi = max(0, start - _EXCERPT_CHARS), end + _EXCERPT_CHARS
    a = max(text.rfind("\n", lo, start) + 1, text.rfind("\0", lo, start) + 1, lo)
    stops = [i for i in (text.find("\n", end, hi), text.find("\0", end, hi)) if i >= 0]
    b = min([*stops, hi, len(text)])
    parts, pos = [], a
    for f in found[bisect_right(ends, a) : bisect_left(starts, b)]:
        parts.append(text[pos : max(pos, f.start)])
        parts.append("[REDACTED]")
        pos = max(pos, f.end)
    parts.append(text[pos:b] if pos < b else "")
    out = "".join(parts)
    out = "".join(c if c.isprintable() else "." for c in out).strip()
    cut_before = a > 0 and text[a - 1] not in "\n\0"
    cut_after = b < len(text) and text[b] not in "\n\0"
    return ("…" if cut_before else "") + out + ("…" if cut_after else "")
