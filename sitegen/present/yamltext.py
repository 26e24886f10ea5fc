"""A config dump shown as YAML: plain block YAML of JSON-like values, without PyYAML.

PyYAML is slow to import and emit, and its C emitter writes other bytes (docs/benchmarks.md).
The values are what :func:`sitegen.read.configdump.plain` leaves (dicts, lists, text,
numbers, booleans, None, dates), so a small emitter does: scalars plain where YAML reads
them back as the same text, else double-quoted (a JSON string is a valid YAML one).
``tests/present/test_yamltext.py`` holds ``yaml.safe_load(to_yaml(v)) == v``.
"""

from __future__ import annotations

import datetime
import json
import math
import re

# Text YAML reads back as itself, unquoted: starts with a letter, ``_`` or ``/`` (not an
# indicator, a digit or a sign: no number, date or flow collection), holds no ``:`` or ``#``
# (no key, no comment), and ends in no space.
_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./@+() -]*")
# ... and is none of YAML 1.1's booleans and nulls in any case (PyYAML's resolver reads
# "Yes", "OFF", "null"...; "y" and "n" some other readers do): those are quoted
_RESERVED = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null"})


def to_yaml(value: object) -> str:
    """``value`` as block YAML ending in a newline (``{}``, ``[]`` or a scalar alone)."""
    lines = _block(value, 0)
    return _scalar(value) + "\n" if lines is None else "".join(lines)


def _block(v: object, indent: int) -> list[str] | None:
    """The lines of a non-empty mapping or sequence at ``indent``; None for anything written
    on one line (a scalar, ``{}``, ``[]``)."""
    if isinstance(v, dict) and v:
        return _mapping(v, indent)
    if isinstance(v, list) and v:
        return _sequence(v, indent)
    return None


def _mapping(d: dict, indent: int) -> list[str]:
    pad = " " * indent
    out = []
    for k, v in d.items():
        inner = _block(v, indent + 2)
        if inner is None:
            out.append(f"{pad}{_scalar(k)}: {_scalar(v)}\n")
        else:
            out.append(f"{pad}{_scalar(k)}:\n")
            out += inner
    return out


def _sequence(items: list, indent: int) -> list[str]:
    pad = " " * indent
    out = []
    for v in items:
        inner = _block(v, indent + 2)
        if inner is None:
            out.append(f"{pad}- {_scalar(v)}\n")
        elif isinstance(v, dict):  # "- first: 1" then the other keys under the first one
            out.append(f"{pad}- {inner[0][indent + 2 :]}")
            out += inner[1:]
        else:
            out.append(f"{pad}-\n")
            out += inner
    return out


def _scalar(v: object) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, datetime.date):  # (a datetime too) read back by YAML's timestamp rule
        return v.isoformat()
    if isinstance(v, dict):
        return "{}"  # (an empty one: a full one is a block)
    if isinstance(v, list):
        return "[]"
    text = str(v)
    if _PLAIN.fullmatch(text) and not text.endswith(" ") and text.lower() not in _RESERVED:
        return text
    if text.isprintable():  # (nearly always) JSON's quoting is YAML's: only " and \\ escaped
        return json.dumps(text, ensure_ascii=False)
    return _escaped(text)


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escaped(text: str) -> str:
    """``text`` double-quoted, each character Python does not call printable (controls,
    format characters, unassigned ones, lone surrogates) escaped by its code point: as
    ``\\xXX``, ``\\uXXXX`` or ``\\UXXXXXXXX`` (one escape, not a UTF-16 pair, which PyYAML
    would read back as two lone surrogates)."""
    out = ['"']
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        else:
            o = ord(ch)
            out.append(
                f"\\x{o:02x}" if o <= 0xFF else f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}"
            )
    out.append('"')
    return "".join(out)


def _float(v: float) -> str:
    """As PyYAML writes a float: ``.inf``, ``-.inf``, ``.nan``, and an exponent only
    with a ``.`` before it (YAML 1.1 reads ``1e-06`` as text, ``1.0e-06`` as a float)."""
    if math.isnan(v):
        return ".nan"
    if math.isinf(v):
        return ".inf" if v > 0 else "-.inf"
    text = repr(v).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text
