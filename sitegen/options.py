"""Build options: the CLI's flags and ``sitegen.toml``, merged into one value.

Python callers use :func:`load_options` exactly as the CLI does, so a config
file works from a script as well as from the command line.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from sitegen.errors import ConfigError

DEFAULT_TITLE = "SkyRL run archive"
CONFIG_KEYS = {"title", "base_url", "redact_patterns", "workers"}


@dataclass(frozen=True)
class BuildOptions:
    """What to build and how: the CLI's options (and ``sitegen.toml``), as one value."""

    archive: Path
    out: Path = Path("site")
    title: str = DEFAULT_TITLE
    base_url: str | None = None
    workers: int = 0  # 0: the CPU count
    redact_patterns: tuple[str, ...] = ()
    strict: bool = False
    clean: bool = False  # ignore (and wipe) the build cache
    now: float | None = None  # for tests: the time "running" is judged against


def load_config(path: Path | None) -> dict:
    """Read a ``sitegen.toml``; unknown keys are an error naming the key."""
    if path is None:
        return {}
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config {path} is not valid TOML: {exc}") from None
    unknown = set(data) - CONFIG_KEYS
    if unknown:
        raise ConfigError(
            f"config {path}: unknown key {sorted(unknown)[0]!r} (known: {', '.join(sorted(CONFIG_KEYS))})"
        )
    pats = data.get("redact_patterns", [])
    if not isinstance(pats, list) or not all(isinstance(p, str) for p in pats):
        raise ConfigError(f"config {path}: redact_patterns must be a list of regular expressions")
    for p in pats:
        try:
            re.compile(p)
        except re.error as exc:
            raise ConfigError(f"config {path}: redact pattern {p!r} is invalid: {exc}") from None
    return data


def load_options(config_path: Path | None = None, **overrides: Any) -> BuildOptions:
    """Options from ``sitegen.toml`` (if given) with ``overrides`` on top.

    An override of ``None`` (or ``0`` for ``workers``, an empty title) means
    "not given": the config file's value, else the default, applies. That is
    the CLI's rule, so ``sitegen build`` and a Python caller agree.
    """
    known = {f.name for f in fields(BuildOptions)}
    unknown = set(overrides) - known
    if unknown:
        raise ConfigError(f"unknown build option {sorted(unknown)[0]!r}")
    if overrides.get("archive") is None:
        raise ConfigError("an archive folder is required")
    cfg = load_config(config_path)
    given = {k: v for k, v in overrides.items() if v not in (None, "", 0)}
    merged: dict[str, Any] = {
        "title": cfg.get("title") or DEFAULT_TITLE,
        "base_url": cfg.get("base_url"),
        "workers": int(cfg.get("workers", 0)),
        "redact_patterns": tuple(cfg.get("redact_patterns", ())),
    }
    merged.update(given)
    for flag in ("strict", "clean"):
        merged[flag] = bool(overrides.get(flag, False))
    merged["archive"] = Path(merged["archive"])
    if "out" in merged:
        merged["out"] = Path(merged["out"])
    return BuildOptions(**merged)
