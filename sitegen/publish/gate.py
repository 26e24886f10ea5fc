"""The publish gate: the last look at a finished site before it leaves the machine.

Every byte of every file the site folder would publish is scanned with the
redactor's rules (:meth:`sitegen.redact.Redactor.findings`: one source of
truth for what a secret is, so the gate and the build can never disagree),
and GitHub's size limits are checked. Any finding stops the publish; the
report names ``path:line: kind`` with the value masked.

How the bytes are read (the scan must see what a reader or a crawler would):

* **Text** (valid UTF-8) is scanned as it is; HTML, XML and SVG are scanned
  with their character references decoded (``&#39;`` is a quote), because the
  build escapes what it writes into pages and a secret is a secret however
  it is spelled, while ``key: &#39;[REDACTED]&#39;`` is an already masked value.
* **gzip** files (``trials.csv.gz``) are scanned decompressed: their content is
  what a reader downloads.
* **Binary** files (not UTF-8, or a NUL byte in the first 8000 bytes, git's
  test; the PNG cards) are scanned as their runs of printable
  ASCII of 8 characters or more, which is where a credential stored in the
  clear lives (a PNG text chunk, a file misnamed ``.png``). Scanning random
  bytes as latin-1 text finds the same strings but takes ten times as long.
  Text drawn *into* the pixels cannot be read back; it comes from the same
  redacted model the pages show, and those are scanned.

Sizes: GitHub refuses a pushed file over 100 MiB and warns from 50 MiB;
Pages publishes sites of at most 1 GB. The gate counts in MB (10^6 bytes),
which stops a file a little before GitHub would (100 MB < 100 MiB): on the
safe side, and the number the user reads is the number they compare.

A false positive is allowed by a regular expression in ``publish_allow``
(``sitegen.toml``) that matches the whole flagged value; a pattern that would
allow anything (it matches an empty value or an arbitrary token) is refused,
so there is no blanket switch.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import stat
import sys
import zlib
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from sitegen import __version__, redact
from sitegen.errors import ConfigError
from sitegen.redact import Redactor
from sitegen.write import MARKER

MB = 10**6
FILE_LIMIT_BYTES = 100 * MB  # GitHub rejects a pushed file over 100 MiB
FILE_WARN_BYTES = 50 * MB  # GitHub warns about a file over 50 MiB
SITE_LIMIT_BYTES = 1000 * MB  # GitHub Pages: "no larger than 1 GB"
_GZIP_MAX_BYTES = 2 * SITE_LIMIT_BYTES  # a gzip that inflates past this is not scanned: stop
_PARALLEL_BYTES = 16 * MB  # below this, starting worker processes costs more than it saves
_HTML_SUFFIXES = (".html", ".htm", ".xml", ".svg", ".xhtml")
_PRINTABLE_RUN = re.compile(rb"[\t\n\r\x20-\x7e]{8,}")
_CHAR_REF = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_EXCERPT_CHARS = 40

# Values no allow pattern may match: one that does would wave through any secret.
_BLANKET_PROBES = (
    "",
    "x",
    "hunter2",
    "Zq8vK3mT9wXbR2pL6nYc4dF7gH1jS5aE",
    "ghp_Zq8vK3mT9wXbR2pL6nYc4dF7gH1jS5aE0uI2",
)


@dataclass(frozen=True)
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
        return f"{where}: {self.kind}: {self.excerpt}"


@dataclass(frozen=True)
class SiteFile:
    """One file the site publishes: its path, size and git blob id (of the bytes scanned)."""

    rel: str
    size: int
    blob: str


@dataclass
class GateReport:
    """What the gate found. ``ok`` is False when anything must stop the publish."""

    site: Path
    files: list[SiteFile] = field(default_factory=list)
    leaks: list[Leak] = field(default_factory=list)
    allowed: int = 0  # findings waved through by publish_allow
    known_clean: int = 0  # files whose exact bytes scanned clean under these rules before
    blocked: list[str] = field(default_factory=list)  # size limits, links, unreadable files
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.leaks and not self.blocked

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def lines(self) -> list[str]:
        """The report, one problem a line: what stops the publish first, then warnings."""
        out = [f"leak: {leak}" for leak in self.leaks]
        out += [f"blocked: {b}" for b in self.blocked]
        out += [f"warning: {w}" for w in self.warnings]
        return out

    def summary(self) -> str:
        verdict = "ok" if self.ok else "BLOCKED"
        extra = f", {self.allowed} allowed by publish_allow" if self.allowed else ""
        if self.known_clean:
            extra += f", {self.known_clean} files unchanged since a clean scan"
        return (
            f"publish gate {verdict}: {len(self.files)} files, {size(self.total_bytes)}, "
            f"{len(self.leaks)} secrets found{extra}, {len(self.blocked)} other problems, "
            f"{len(self.warnings)} warnings"
        )


def size(n: float) -> str:
    """``n`` bytes for a reader, in MB (10^6 bytes, as GitHub states its limits), kB or bytes."""
    if n >= MB:
        return f"{n / MB:,.1f} MB"
    return f"{n / 1000:,.1f} kB" if n >= 1000 else f"{int(n)} bytes"


def compile_allow(patterns: Iterable[str]) -> tuple[re.Pattern[str], ...]:
    """The ``publish_allow`` patterns, compiled; a broken or blanket pattern is a ConfigError."""
    out = []
    for p in patterns:
        if not isinstance(p, str):
            raise ConfigError(f"publish_allow: {p!r} is not a string")
        try:
            rx = re.compile(p)
        except re.error as exc:
            raise ConfigError(f"publish_allow: pattern {p!r} is invalid: {exc}") from None
        probe = next((s for s in _BLANKET_PROBES if rx.fullmatch(s)), None)
        if probe is not None:
            raise ConfigError(
                f"publish_allow: pattern {p!r} would allow any value (it matches {probe!r}); "
                "write one that matches only the flagged value"
            )
        out.append(rx)
    return tuple(out)


def site_files(site: Path) -> list[str]:
    """The files of ``site`` that get published, ``/``-separated and sorted.

    Everything in the folder (the user's own files too: the gate exists for
    them) except a ``.git`` (a ``gh-pages`` worktree's, folder or file) and
    sitegen's manifest, which is bookkeeping and not part of the site.
    """
    out = []
    for dirpath, dirnames, filenames in os.walk(site):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        base = Path(dirpath).relative_to(site)
        for name in filenames:
            rel = (base / name).as_posix()
            if name == ".git" or rel == MARKER:
                continue
            out.append(rel)
        # Links to folders are listed with the files: os.walk does not follow them, and
        # the gate refuses every link.
        out.extend(
            (base / d).as_posix() for d in dirnames if os.path.islink(os.path.join(dirpath, d))
        )
    return sorted(out)


def check_site(
    site: Path,
    redactor: Redactor | None = None,
    allow: Sequence[str] = (),
    workers: int = 0,
    clean_cache: Path | None = None,
) -> GateReport:
    """Scan every file ``site`` would publish; see the module docstring for what stops it.

    ``clean_cache`` (a JSON file beside the site, in its build cache) remembers the blob
    ids of files that scanned clean under exactly these rules (the redactor's and the
    gate's source, the user's patterns): a redeploy of a large site scans only what changed.
    """
    redactor = redactor or Redactor()
    allow_rx = compile_allow(allow)
    report = GateReport(site)
    if not site.is_dir():
        report.blocked.append(f"{site}: not a folder")
        return report
    rels = site_files(site)
    todo: list[tuple[str, int]] = []
    for rel in rels:
        # A name is published too (it is a URL): the build makes names with Redactor.path,
        # a user's file may not have been.
        for f in redactor.findings(rel):
            if not any(rx.fullmatch(rel[f.start : f.end]) for rx in allow_rx):
                report.leaks.append(Leak(redactor.text(rel), None, f.kind, "in the file name"))
        st = os.lstat(site / rel)
        if "\n" in rel or "\r" in rel:
            # git reads the names to store one a line; such a name is a mistake anyway
            report.blocked.append(f"{rel!r}: a line break in a file name: rename it")
        elif stat.S_ISLNK(st.st_mode):
            report.blocked.append(
                f"{rel}: a symbolic link (GitHub Pages does not serve links: copy the file in)"
            )
        elif not stat.S_ISREG(st.st_mode):
            report.blocked.append(f"{rel}: not a regular file")
        elif st.st_size > FILE_LIMIT_BYTES:
            report.blocked.append(
                f"{rel}: {size(st.st_size)}, over GitHub's limit of {size(FILE_LIMIT_BYTES)} a file"
            )
            report.files.append(SiteFile(rel, st.st_size, ""))  # counted, never read
        else:
            if st.st_size > FILE_WARN_BYTES:
                report.warnings.append(
                    f"{rel}: {size(st.st_size)} (GitHub warns from {size(FILE_WARN_BYTES)}; "
                    "pushes get slow)"
                )
            todo.append((rel, st.st_size))
    rules = _rules_key(redactor)
    known = _load_clean(clean_cache, rules) if clean_cache else set()
    if known:
        todo = _drop_known(site, todo, known, report)
    clean: set[str] = set()
    for scanned, leaks, allowed, problem in _scan_all(site, todo, redactor, allow_rx, workers):
        if problem:
            report.blocked.append(problem)
        if scanned is not None:
            report.files.append(scanned)
            if not (leaks or allowed or problem):
                clean.add(_clean_key(scanned.rel, scanned.blob))
        report.leaks.extend(leaks)
        report.allowed += allowed
    if clean_cache is not None:
        current = {_clean_key(f.rel, f.blob) for f in report.files}
        _save_clean(clean_cache, rules, (clean | known) & current)
    report.files.sort(key=lambda f: f.rel)
    report.leaks.sort(key=lambda x: (x.path, x.line or 0))  # workers finish in any order
    if report.total_bytes > SITE_LIMIT_BYTES:
        biggest = sorted(report.files, key=lambda f: -f.size)[:5]
        report.blocked.append(
            f"the site is {size(report.total_bytes)}, over GitHub Pages' limit of "
            f"{size(SITE_LIMIT_BYTES)}; largest files: "
            + ", ".join(f"{f.rel} ({size(f.size)})" for f in biggest)
        )
    elif any("over GitHub's limit" in b for b in report.blocked):
        biggest = sorted(report.files, key=lambda f: -f.size)[:5]
        report.blocked.append(
            "largest files: " + ", ".join(f"{f.rel} ({size(f.size)})" for f in biggest)
        )
    return report


_Result = tuple[SiteFile | None, list[Leak], int, str | None]


def _rules_key(redactor: Redactor) -> str:
    """Changes whenever what the scan finds could change: the code of the rules and of the
    reading, sitegen's version, the user's patterns."""
    h = hashlib.sha256(__version__.encode())
    for module in (redact, sys.modules[__name__]):
        h.update(Path(module.__file__ or "").read_bytes())
    h.update(json.dumps(list(redactor.extra_patterns)).encode())
    return h.hexdigest()


def _clean_key(rel: str, blob: str) -> str:
    # HTML is read unescaped: the same bytes under another name are read differently.
    return f"{blob}:{'html' if rel.lower().endswith(_HTML_SUFFIXES) else 'raw'}"


def _load_clean(path: Path, rules: str) -> set[str]:
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return set()
    if not isinstance(doc, dict) or doc.get("rules") != rules:
        return set()
    ids = doc.get("clean")
    return {k for k in ids if isinstance(k, str)} if isinstance(ids, list) else set()


def _save_clean(path: Path, rules: str, clean: set[str]) -> None:
    """Best effort: a cache that cannot be written only costs the next deploy a full scan."""
    body = json.dumps({"rules": rules, "clean": sorted(clean)}).encode()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(body)
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)


def _drop_known(
    site: Path, todo: list[tuple[str, int]], known: set[str], report: GateReport
) -> list[tuple[str, int]]:
    """The files still to scan: those whose bytes did not scan clean before."""
    rest = []
    for rel, size in todo:
        try:
            data = (site / rel).read_bytes()
        except OSError:
            rest.append((rel, size))
            continue
        blob = blob_id(data)
        if _clean_key(rel, blob) in known:
            report.files.append(SiteFile(rel, len(data), blob))
            report.known_clean += 1
        else:
            rest.append((rel, size))
    return rest


def _scan_all(
    site: Path,
    todo: list[tuple[str, int]],
    redactor: Redactor,
    allow: tuple[re.Pattern[str], ...],
    workers: int,
) -> Iterable[_Result]:
    total = sum(n for _, n in todo)
    workers = workers or (os.cpu_count() or 1)
    if workers <= 1 or total < _PARALLEL_BYTES or len(todo) < 2:
        for rel, _ in todo:
            yield _scan_file(site, rel, redactor, allow)
        return
    # Big sites: the regexes are the cost (a few MB/s), so spread the files over processes.
    # The redactor pickles as its patterns, the compiled allow patterns as their sources.
    allow_src = tuple(rx.pattern for rx in allow)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [
            pool.submit(_scan_file_worker, str(site), rel, redactor.extra_patterns, allow_src)
            for rel, _ in sorted(todo, key=lambda t: -t[1])
        ]
        for fut in futures:
            yield fut.result()


def _scan_file_worker(site: str, rel: str, patterns: tuple[str, ...], allow: tuple[str, ...]):
    return _scan_file(Path(site), rel, Redactor(patterns), tuple(re.compile(p) for p in allow))


def blob_id(data: bytes) -> str:
    """The id git gives a file with these bytes (``git hash-object``)."""
    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def _scan_file(
    site: Path, rel: str, redactor: Redactor, allow: tuple[re.Pattern[str], ...]
) -> _Result:
    try:
        data = (site / rel).read_bytes()
    except OSError as exc:
        return None, [], 0, f"{rel}: cannot read it ({exc.strerror}), so it cannot be checked"
    scanned = SiteFile(rel, len(data), blob_id(data))
    where = rel
    payload = data
    if data[:2] == b"\x1f\x8b":
        try:
            payload = _gunzip(data)
        except (zlib.error, ValueError) as exc:
            return scanned, [], 0, f"{rel}: a gzip file that cannot be read ({exc}): not checked"
        where = f"{rel} (decompressed)"
    leaks, allowed = _scan_bytes(payload, where, rel, redactor, allow)
    return scanned, leaks, allowed, None


def _gunzip(data: bytes) -> bytes:
    """Every member of a gzip file, decompressed; past ``_GZIP_MAX_BYTES`` a ValueError."""
    out: list[bytes] = []
    size = 0
    while data:
        d = zlib.decompressobj(wbits=31)
        while True:
            chunk = d.decompress(data, 1 << 24)
            out.append(chunk)
            size += len(chunk)
            if size > _GZIP_MAX_BYTES:
                raise ValueError(f"it inflates past {size(_GZIP_MAX_BYTES)}")
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
    if rel.lower().endswith(_HTML_SUFFIXES):
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
