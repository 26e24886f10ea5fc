"""Config diff, the way W&B's "diff only" shows it: only the keys whose values differ.

Configs are flattened to dotted keys (``trainer.policy.optimizer_config.lr``); lists are
one value (their JSON text). A string shows as written unless it reads as another JSON
value (``"5"``, ``"true"``, ``"null"``): then quoted, so a YAML ``'5'`` differs from ``5``. A
missing key differs from any value. A long value is cut, ending in a hash of the whole, so
two values alike up to the cut still differ. The configs arrive redacted."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

MAX_VALUE_CHARS = 200  # a long value (a prompt template) is cut in the diff …
CUT_HASH_CHARS = 6  # … ending in "… #" and this many hex digits of its whole text's SHA-1
MISSING = None  # how an absent key shows in a diff row


def flatten(cfg: Mapping | None, prefix: str = "") -> dict[str, str]:
    """Dotted keys to display strings (JSON for scalars and lists)."""
    out: dict[str, str] = {}
    if not isinstance(cfg, Mapping):
        return out
    for k, v in cfg.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping) and v:
            out.update(flatten(v, key + "."))
        else:
            text = _shown(v)
            out[key] = text if len(text) <= MAX_VALUE_CHARS else _cut(text)
    return out


def _shown(v: object) -> str:
    """``v`` as a diff shows it: a string as written unless it would read as another value."""
    if not isinstance(v, str):
        return json.dumps(v, sort_keys=True, default=str)
    try:
        json.loads(v)
    except ValueError:
        return v
    return json.dumps(v)  # "5", "true", "[1]", '"x"': the quotes tell it from the value


def _cut(text: str) -> str:
    """``text`` cut to :data:`MAX_VALUE_CHARS` characters, its end naming the whole text
    (``… #1a2b3c``): two values cut alike are equal only when the whole values are."""
    tag = "… #" + hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:CUT_HASH_CHARS]
    return text[: MAX_VALUE_CHARS - len(tag)] + tag


def varying(configs: Mapping[str, Mapping | None]) -> dict[str, dict[str, str]]:
    """Per id, only the keys whose value is not the same in every config that has one.

    A key that every config holds with one value can never show in a diff, so
    the comparison page ships only the rest (page weight)."""
    flat = {i: flatten(c) for i, c in configs.items() if c}
    keys: set[str] = set().union(*flat.values()) if flat else set()
    # a key differs, or is missing from some config
    keep = {k for k in keys if len({f.get(k) for f in flat.values()}) > 1}
    return {i: {k: v for k, v in sorted(f.items()) if k in keep} for i, f in flat.items()}


def diff(configs: Mapping[str, Mapping | None]) -> list[tuple[str, dict[str, str | None]]]:
    """Rows ``(key, {id: value or None})`` for the keys that differ among these configs."""
    flat = {i: flatten(c) for i, c in configs.items()}
    keys = sorted(set().union(*flat.values())) if flat else []
    rows = [(k, {i: f.get(k, MISSING) for i, f in flat.items()}) for k in keys]
    return [(k, vals) for k, vals in rows if len(set(vals.values())) > 1]
