"""Where the templates and static files are: package data, or the repository in an editable install."""

from __future__ import annotations

from pathlib import Path


def package_dir(name: str) -> Path:
    """``templates``/``static`` inside the installed package, else beside it (editable install).

    Found from the package's own folder, not through ``importlib.resources``: its first
    call imports its readers and ``zipfile``, paid by every build (a no-change one
    included), and sitegen reads its package data as files anyway (it is not zip-safe).
    """
    package = Path(__file__).resolve().parents[1]  # sitegen/
    inside = package / name
    return inside if inside.is_dir() else package.parent / name
