"""Site weight: what a built site's bytes are made of, and a warning past GitHub Pages' limit.

Past GitHub Pages' 1 GB the build warns, naming the kinds of file that weigh most, so the
fix is obvious.
"""

from __future__ import annotations

from sitegen.errors import BuildWarning

PAGES_LIMIT_BYTES = 10**9  # GitHub Pages: "published sites may be no larger than 1 GB"
PAGE_FOLDERS = ("jobs", "runs")


def kind_of(rel: str) -> str:
    """A site file's kind: its path with the per-page folder or file name made a ``*``
    (``jobs/*/trials.csv.gz``, ``data/jobs/*.json``), other files as themselves."""
    parts = rel.split("/")
    if parts[0] in PAGE_FOLDERS and len(parts) >= 3:
        return "/".join([parts[0], "*", *parts[2:]])
    if parts[0] == "data" and len(parts) == 3:
        ext = parts[2].rsplit(".", 1)[-1]
        return f"data/{parts[1]}/*.{ext}"
    return rel


def by_kind(sizes: dict[str, int]) -> list[tuple[str, int, int]]:
    """``(kind, bytes, files)`` for each kind of file, heaviest first."""
    totals: dict[str, list[int]] = {}
    for rel, n in sizes.items():
        t = totals.setdefault(kind_of(rel), [0, 0])
        t[0] += n
        t[1] += 1
    return sorted(((k, b, f) for k, (b, f) in totals.items()), key=lambda r: (-r[1], r[0]))


def mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def over_limit(sizes: dict[str, int], limit: int = PAGES_LIMIT_BYTES) -> BuildWarning | None:
    """A warning when the site is larger than ``limit`` bytes, naming what weighs most."""
    total = sum(sizes.values())
    if total <= limit:
        return None
    top = ", ".join(
        f"{k} {mb(b)} ({f:,} file{'' if f == 1 else 's'})" for k, b, f in by_kind(sizes)[:3]
    )
    biggest = max(sizes, key=lambda r: sizes[r])
    return BuildWarning(
        "(site)",
        None,
        f"the site is {mb(total)}, over GitHub Pages' limit of {mb(limit)}; "
        f"heaviest: {top}; largest file {biggest} ({mb(sizes[biggest])})",
    )
