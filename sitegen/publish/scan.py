"""How one file of a site is read and scanned: the bytes as a reader gets them.

* **Text** (valid UTF-8) is scanned as it is; HTML, XML and SVG with their character
  references decoded (the build writes ``'`` as ``&#39;``, and ``&#39;[REDACTED]&#39;`` is
  a masked value, not a finding), except those that decode to a line break (so line
  numbers stay true).
* **gzip** files (every member) are scanned decompressed.
* **Binary** (not UTF-8, or a NUL byte in the first 8000 bytes, git's test) is scanned as
  its runs of 8 or more printable ASCII characters, joined by NULs: a credential is ASCII
  and at least that long, and decoding the bytes as Latin-1 would find the same strings
  but run every rule over random bytes. Text drawn into a PNG's pixels cannot be read; it
  comes from the redacted model that the pages show, which are scanned.

Each finding is a :class:`Leak`: ``path:line: kind: excerpt``, the excerpt being the
finding's line with every finding on it masked, so the report never shows the value.
"""

from __future__ import annotations

import hashlib
import html
import re
import zlib
from bisect import bisect_right
from pathlib import Path

from sitegen.errors import printable
from sitegen.frozen import frozen
from sitegen.redact import Redactor

MB = 10**6
GZIP_MAX_BYTES = 2000 * MB  # a gzip that inflates past this is not scanned: it stops the gate
HTML_SUFFIXES = (".html", ".htm", ".xml", ".svg", ".xhtml")
_PRINTABLE_RUN = re.compile(rb"[\t\n\r\x20-\x7e]{8,}")
_CHAR_REF = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_EXCERPT_CHARS = 40


@frozen
class Leak:
    """A secret found in a site file: where, what kind, and its line with the secret masked.

    ``line`` is None for a secret in the file's *name* (a URL of the site); ``path`` is
    then the name with the secret masked.
    """

    path: str
    line: int | None
    kind: str
    excerpt: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return printable(f"{where}: {self.kind}: {self.excerpt}")


@frozen
class SiteFile:
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
    payload = data
    if data[:2] == b"\x1f\x8b":
        try:
            payload = _gunzip(data)
        except (zlib.error, ValueError) as exc:
            return scanned, [], 0, f"{where}: a gzip file that cannot be read ({exc}): not checked"
        where = f"{where} (decompressed)"
    leaks, allowed = _scan_bytes(payload, where, rel, redactor, allow)
    return scanned, leaks, allowed, None


def _gunzip(data: bytes) -> bytes:
    """Every member of a gzip file, decompressed; past ``GZIP_MAX_BYTES`` a ValueError."""
    out: list[bytes] = []
    size = 0
    while data:
        d = zlib.decompressobj(wbits=31)
        while True:
            chunk = d.decompress(data, 1 << 24)
            out.append(chunk)
            size += len(chunk)
            if size > GZIP_MAX_BYTES:
                raise ValueError(f"it inflates past {GZIP_MAX_BYTES / MB:,.0f} MB")
            data = d.unconsumed_tail
            if d.eof or not data:
                break
        data = d.unused_data if d.eof else b""
        if data.strip(b"\0") == b"":
            break
    return b"".join(out)


def _scan_bytes(
    data: bytes,
    where: str,
    rel: str,
    redactor: Redactor,
    allow: tuple[re.Pattern[str], ...],
) -> tuple[list[Leak], int]:
    # git's own test for binary content: a NUL byte in the first 8000 bytes.
    if b"\0" in data[:8000]:
        return _scan_binary(data, where, redactor, allow)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _scan_binary(data, where, redactor, allow)
    if rel.lower().endswith(HTML_SUFFIXES):
        text = _unescape(text)
    return _leaks(text, where, redactor, allow, line_of=lambda i: text.count("\n", 0, i) + 1)


def _unescape(text: str) -> str:
    """Character references decoded, except those that decode to a line break (lines stay put)."""

    def one(m: re.Match[str]) -> str:
        s = html.unescape(m.group(0))
        return m.group(0) if "\n" in s or "\r" in s else s

    return _CHAR_REF.sub(one, text)


def _scan_binary(
    data: bytes, where: str, redactor: Redactor, allow: tuple[re.Pattern[str], ...]
) -> tuple[list[Leak], int]:
    runs = list(_PRINTABLE_RUN.finditer(data))
    if not runs:
        return [], 0
    # The runs joined by NUL (no rule matches across it); a position in the joined text maps
    # back to a byte offset in the file, and the line is the count of newline bytes before it.
    starts, offsets, parts, pos = [], [], [], 0
    for m in runs:
        starts.append(pos)
        offsets.append(m.start())
        parts.append(m.group(0).decode("ascii"))
        pos += len(parts[-1]) + 1
    text = "\0".join(parts)

    def line_of(i: int) -> int:
        k = bisect_right(starts, i) - 1
        return data.count(b"\n", 0, offsets[k] + (i - starts[k])) + 1

    return _leaks(text, where, redactor, allow, line_of)


def _leaks(
    text: str, where: str, redactor: Redactor, allow: tuple[re.Pattern[str], ...], line_of
) -> tuple[list[Leak], int]:
    found = list(redactor.findings(text))
    leaks: list[Leak] = []
    allowed = 0
    for f in found:
        value = text[f.start : f.end]
        if any(rx.fullmatch(value) for rx in allow):
            allowed += 1
            continue
        leaks.append(Leak(where, line_of(f.start), f.kind, _excerpt(text, f.start, f.end, found)))
    return leaks, allowed


def _excerpt(text: str, start: int, end: int, found: list) -> str:
    """The finding's line around it, every finding on it masked, shortened and printable."""
    a = max(text.rfind("\n", 0, start) + 1, text.rfind("\0", 0, start) + 1, start - _EXCERPT_CHARS)
    stops = [i for i in (text.find("\n", end), text.find("\0", end)) if i >= 0]
    b = min([*stops, end + _EXCERPT_CHARS, len(text)])
    parts, pos = [], a
    for f in found:
        if f.end <= a or f.start >= b:
            continue
        parts.append(text[pos : max(pos, f.start)])
        parts.append("[REDACTED]")
        pos = max(pos, f.end)
    parts.append(text[pos:b] if pos < b else "")
    out = "".join(parts)
    out = "".join(c if c.isprintable() else "." for c in out).strip()
    cut_before = a > 0 and text[a - 1] not in "\n\0"
    cut_after = b < len(text) and text[b] not in "\n\0"
    return ("…" if cut_before else "") + out + ("…" if cut_after else "")
