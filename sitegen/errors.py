"""Exceptions and build warnings.

Errors stop the build and become one line on the command line; warnings are
damage in the input that the build reads around and reports with a location.
"""

from __future__ import annotations

from sitegen.model.frozen import frozen


class SitegenError(Exception):
    """Base class of every error sitegen reports to the user as one line."""


class ArchiveError(SitegenError):
    """The archive is missing, unreadable or holds no jobs."""


class ConfigError(SitegenError):
    """A configuration file or option is invalid."""


class OutputError(SitegenError):
    """The output folder cannot be written safely."""


@frozen
class BuildWarning:
    """Damaged or surprising input: where it is and what was done about it.

    ``path`` is relative to the archive root (``/`` separated); ``line`` is
    1-based or ``None`` when the problem concerns the whole file.
    """

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.message}"

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "message": self.message}
