"""Where the templates and static files are: package data, or the repository in an editable install."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def package_dir(name: str) -> Path:
    """``templates``/``static`` inside the installed package, else beside it (editable install)."""
    pkg = resources.files("sitegen") / name
    if pkg.is_dir():
        return Path(str(pkg))
    return Path(__file__).resolve().parent.parent / name
