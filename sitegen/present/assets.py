"""Where the templates and static files are: package data, or the repository in an editable install."""

from __future__ import annotations

from pathlib import Path


def package_dir(name: str) -> Path:
    """``templates``/``static`` inside the installed package, else beside it (editable
    install). Not through ``importlib.resources``, whose first call imports its readers and
    ``zipfile`` on every build; sitegen is not zip-safe anyway."""
    package = Path(__file__).resolve().parents[1]  # sitegen/
    inside = package / name
    return inside if inside.is_dir() else package.parent / name
