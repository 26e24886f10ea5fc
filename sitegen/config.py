"""``sitegen.toml``: the few settings a team keeps beside its archive."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from .errors import ConfigError

CONFIG_KEYS = {"title", "base_url", "redact_patterns", "workers"}


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
