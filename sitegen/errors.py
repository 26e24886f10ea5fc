"""Errors (they stop the build, one line on the command line) and build warnings (damaged
input the build reads around, reported with a location)."""

from __future__ import annotations

import re

import msgspec

# What a terminal acts on instead of showing: C0 and C1 controls (a line break, an escape
# sequence), DEL, the Unicode line and paragraph separators and the bidirectional controls.
_CONTROLS_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: each control character escaped (``\\n``,
    ``\\x1b``, ``\\u202e``), so a file name cannot split a line, move the cursor or recolour
    what follows. A backslash before one is escaped too, so the two stay apart."""
    if not _CONTROLS_RE.search(text):
        return text
    return _CONTROLS_RE.sub(_escaped, text.replace("\\", "\\\\"))


def _escaped(m: re.Match[str]) -> str:
    c = m.group(0)
    short = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c)
    return short or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


class SitegenError(Exception):
    """Base class of every error sitegen reports to the user as one line."""


class ArchiveError(SitegenError):
    """The archive is missing, unreadable or holds no jobs."""


class ConfigError(SitegenError):
    """A configuration file or option is invalid."""


class OutputError(SitegenError):
    """The output folder cannot be written safely."""


class BuildWarning(msgspec.Struct, frozen=True):
    """Damaged or surprising input: where (``path`` in the archive, ``/``-separated; ``line``
    1-based, None for the whole file) and what was done about it."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return printable(f"{where}: {self.message}")

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "message": self.message}
