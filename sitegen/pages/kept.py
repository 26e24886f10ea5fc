"""Pages carried over: what the rest of the site needs of a page that is not made again.

A run whose inputs did not change since the last build is neither analysed nor rendered
again, but the index, the runs list and the comparison page still list its pages, from its
:class:`RunRecord` (kept by the build's cache), with the signature its files were made with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from sitegen.pages.objects import CompareItem, JobRow, RunRow


class _Kept:
    """What the renderer asks of any page in its lists (its id and files), from its row."""

    __slots__ = ()  # (its Structs keep no __dict__)

    if TYPE_CHECKING:
        row: JobRow | RunRow

    @property
    def id(self) -> str:
        return self.row.id

    @property
    def url(self) -> str:
        return self.row.url

    @property
    def data(self) -> str:
        return self.row.data


class JobEntry(msgspec.Struct, _Kept, frozen=True):
    """A job page an earlier build analysed and rendered (kept whole)."""

    row: JobRow
    compare: CompareItem  # its ``config`` empty: configs are compared across all pages each build
    config: dict[str, Any] | None
    signature: str  # what the page showed, hashed, when its files were made

    @property
    def run(self) -> str:
        return self.row.run


class RunEntry(msgspec.Struct, _Kept, frozen=True):
    """The same for a run page (``config``: its last job's, as the comparison page takes it)."""

    row: RunRow
    compare: CompareItem
    config: dict[str, Any] | None
    signature: str

    @property
    def jobs(self) -> list[str]:
        return self.row.jobs


class RunRecord(msgspec.Struct, frozen=True):
    """A run and its jobs as a build made them, and the key of what they were made from."""

    key: str
    run: RunEntry
    jobs: tuple[JobEntry, ...]
