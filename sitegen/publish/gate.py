"""The publish gate: the last look at a finished site before it leaves the machine.

Every byte of every file the site folder would publish is scanned with the redactor's rules
(one definition of a secret for the gate and the build), and GitHub's size limits are
checked, in MB (10^6 bytes: a little before GitHub's MiB, and the number the user compares).
Any finding stops the publish; the report names ``path:line: kind``, the value masked.
:mod:`sitegen.publish.scan` reads each file; this module walks the folder, checks sizes and
links, spreads big sites over processes and remembers clean files. A false positive is let
through by a ``publish_allow`` pattern matching the whole value (no blanket pattern).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from sitegen import __version__, redact
from sitegen.discover import safeio
from sitegen.errors import printable
from sitegen.options import compile_allow
from sitegen.progress import counted
from sitegen.publish import scan
from sitegen.publish.scan import HTML_SUFFIXES, MB, Leak, ScanResult, SiteFile, blob_id, scan_file
from sitegen.redact import Redactor
from sitegen.write.site import MARKER

# GitHub rejects a pushed file over 100 MiB and warns over 50 MiB: MB is 10**6 bytes, so
# these stay a little below its limits.
FILE_LIMIT_BYTES = 100 * MB
FILE_WARN_BYTES = 50 * MB
SITE_LIMIT_BYTES = 1000 * MB  # GitHub Pages: "no larger than 1 GB"
_PARALLEL_BYTES = 16 * MB  # below this, starting worker processes costs more than it saves


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
        out += [f"blocked: {printable(b)}" for b in self.blocked]
        out += [f"warning: {printable(w)}" for w in self.warnings]
        return out

    def summary(self) -> str:
        verdict = "ok" if self.ok else "BLOCKED"
        extra = f", {self.allowed} allowed by publish_allow" if self.allowed else ""
        if self.known_clean:
            extra += f", {counted(self.known_clean, 'file')} unchanged since a clean scan"
        return (
            f"publish gate {verdict}: {counted(len(self.files), 'file')}, "
            f"{size(self.total_bytes)}, {counted(len(self.leaks), 'secret')} found{extra}, "
            f"{counted(len(self.blocked), 'other problem')}, "
            f"{counted(len(self.warnings), 'warning')}"
        )


def size(n: float) -> str:
    """``n`` bytes for a reader, in MB (10^6 bytes, as GitHub states its limits), kB or bytes."""
    if n >= MB:
        return f"{n / MB:,.1f} MB"
    return f"{n / 1000:,.1f} kB" if n >= 1000 else counted(int(n), "byte")


def site_files(site: Path) -> list[str]:
    """The files of ``site`` that get published, ``/``-separated and sorted: the user's too,
    but no ``.git`` (folder or file) and not sitegen's manifest."""
    out = []
    for dirpath, dirnames, filenames in os.walk(site):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        base = Path(dirpath).relative_to(site)
        for name in filenames:
            rel = (base / name).as_posix()
            if name == ".git" or rel == MARKER:
                continue
            out.append(rel)
        # Links to folders are listed too (os.walk does not follow them): the gate refuses them.
        out.extend(
            (base / d).as_posix() for d in dirnames if os.path.islink(os.path.join(dirpath, d))
        )
    return sorted(out)


def not_a_site(site: Path) -> str | None:
    """Why ``site`` is no built site, or None: ``check-site`` on a folder without
    ``index.html`` (a CI job that forgot to build) must not pass."""
    if not site.is_dir():
        return f"{site}: not a folder"
    if not (site / "index.html").is_file():
        return (
            f"{site} has no index.html: not a built site "
            f"(build it first: sitegen build ARCHIVE -o {site})"
        )
    return None


def check_site(
    site: Path,
    redactor: Redactor | None = None,
    allow: Sequence[str] = (),
    workers: int = 0,
    clean_cache: Path | None = None,
) -> GateReport:
    """Scan every file ``site`` would publish. ``clean_cache`` (a JSON file in the build cache)
    remembers the blob ids that scanned clean under exactly these rules, so a redeploy scans
    only what changed."""
    redactor = redactor or Redactor()
    allow_rx = compile_allow(allow)
    report = GateReport(site)
    if not site.is_dir():
        report.blocked.append(f"{site}: not a folder")
        return report
    todo: list[tuple[str, int]] = []
    too_big = False
    for rel in site_files(site):
        # A name is published too (a URL), and a user's file's is not redacted by the build.
        shown = redactor.text(rel)
        for f in redactor.findings(rel):
            if not any(rx.fullmatch(rel[f.start : f.end]) for rx in allow_rx):
                report.leaks.append(Leak(shown, None, f.kind, "in the file name"))
        try:
            st = os.lstat(site / rel)
        except OSError as exc:
            report.blocked.append(
                f"{shown}: cannot read it ({exc.strerror}), so it cannot be checked"
            )
            continue
        if "\n" in rel or "\r" in rel:
            # git reads the names to store one a line; such a name is a mistake anyway
            report.blocked.append(f"{shown!r}: a line break in a file name: rename it")
        elif stat.S_ISLNK(st.st_mode):
            report.blocked.append(
                f"{shown}: a symbolic link (GitHub Pages does not serve links: copy the file in)"
            )
        elif not stat.S_ISREG(st.st_mode):
            report.blocked.append(f"{shown}: not a regular file")
        elif st.st_size > FILE_LIMIT_BYTES:
            report.blocked.append(
                f"{shown}: {size(st.st_size)}, over GitHub's limit of "
                f"{size(FILE_LIMIT_BYTES)} a file"
            )
            report.files.append(SiteFile(rel, st.st_size, ""))  # counted, never read
            too_big = True
        else:
            if st.st_size > FILE_WARN_BYTES:
                report.warnings.append(
                    f"{shown}: {size(st.st_size)} (GitHub warns from {size(FILE_WARN_BYTES)}; "
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
    if report.total_bytes > SITE_LIMIT_BYTES or too_big:
        biggest = sorted(report.files, key=lambda f: -f.size)[:5]
        line = "largest files: " + ", ".join(
            f"{redactor.text(f.rel)} ({size(f.size)})" for f in biggest
        )
        if report.total_bytes > SITE_LIMIT_BYTES:
            line = (
                f"the site is {size(report.total_bytes)}, over GitHub Pages' limit of "
                f"{size(SITE_LIMIT_BYTES)}; {line}"
            )
        report.blocked.append(line)
    return report


def _rules_key(redactor: Redactor) -> str:
    """Changes whenever what the scan finds could change: the code of the rules and of the
    reading, sitegen's version, the user's patterns."""
    h = hashlib.sha256(__version__.encode())
    h.update(redact.rules_signature().encode())
    for module in (scan, sys.modules[__name__]):
        h.update(Path(module.__file__ or "").read_bytes())
    h.update(json.dumps(list(redactor.extra_patterns)).encode())
    return h.hexdigest()


def _clean_key(rel: str, blob: str) -> str:
    # HTML is read unescaped: the same bytes under another name are read differently.
    return f"{blob}:{'html' if rel.lower().endswith(HTML_SUFFIXES) else 'raw'}"


def _load_clean(path: Path, rules: str) -> set[str]:
    try:
        # Others may write beside the output: a planted FIFO or huge file must not hang us.
        doc = json.loads(safeio.read_bytes(path, None, 64 << 20))
    except (OSError, ValueError, safeio.UnsafeInput):
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
) -> Iterable[ScanResult]:
    total = sum(n for _, n in todo)
    workers = workers or (os.cpu_count() or 1)
    if workers <= 1 or total < _PARALLEL_BYTES or len(todo) < 2:
        for rel, _ in todo:
            yield scan_file(site, rel, redactor, allow)
        return
    # Big sites: the regexes are the cost, so the files are spread over processes (the
    # redactor and allow patterns pickled as their sources).
    allow_src = tuple(rx.pattern for rx in allow)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [
            pool.submit(_scan_file_worker, str(site), rel, redactor.extra_patterns, allow_src)
            for rel, _ in sorted(todo, key=lambda t: -t[1])
        ]
        for fut in futures:
            yield fut.result()


def _scan_file_worker(site: str, rel: str, patterns: tuple[str, ...], allow: tuple[str, ...]):
    return scan_file(Path(site), rel, Redactor(patterns), tuple(re.compile(p) for p in allow))
