"""Rules for tables that name a secret in one cell and hold it in the next: Markdown rows,
HTML cells, columns of spaces.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from itertools import pairwise

from sitegen.redact.names import is_secret_key
from sitegen.redact.rule import Rule, regex_rule
from sitegen.redact.shapes import letters_and_digits, looks_like_credential
from sitegen.redact.values import Next, is_masked

# A table's row that names a secret in one cell and holds it in the next, as notes list a
# run's settings: Markdown (| WANDB_API_KEY | X |), HTML (<td>HF_TOKEN</td><td>X</td>) or
# columns of spaces. The name may be in code or bold, in up to five words (Weights & Biases
# API key);
# the value is the next cell, whole.
_CELL_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.&]*+(?: [A-Za-z&][A-Za-z0-9_&]*+){0,4}")
_CELL_MARKUP = "`* \t\r"
# Values (in lower case) that say there is none, or whether a setting is set, never what
_CELL_EMPTY = frozenset(
    {"none", "null", "-", "n/a", "yes", "no", "true", "false", "required", "optional"}
    | {"set", "unset", "\u2713", "\u2717", "\u2014"}
)
_PASSWORD_WORDS = ("pass", "pwd")

# A value that names where the secret is, not the secret: $HF_TOKEN, ${HF_TOKEN},
# ${{ secrets.HF_TOKEN }}, Windows' %HF_TOKEN% (a variable's name in capitals).
_REFERENCE_RE = re.compile(r"\$\{\{.*\}\}|\$\{?[A-Z_][A-Z0-9_]*+\}?|%[A-Z_][A-Z0-9_]*+%")


_PROSE_PUNCTUATION = ",.;:()!?"


def _cell_secret(key: str, value: str, where: str = "row") -> bool:
    """Whether a cell named ``key`` holds a secret ``value`` (both without markup), in a
    table's ``row``, its ``header`` (the row above ``|---|``) or ``other`` text with "|"
    (a shell's pipes: ``env | grep TOKEN | cut -d= -f1``).

    Notes' tables name secrets they do not hold: a header (``| Token | Reward |``), a
    description (``| HF_TOKEN | Download Llama3 weights |``), a reference (``$HF_TOKEN``,
    ``${{ secrets.HF_TOKEN }}``). So:

    * under an environment variable's name (``HF_TOKEN``, ``DB_PASSWORD``), in a row or a
      header (a key-value table often has no header of its own), any value is one;
    * under plain words (``Token``, ``wandb key``) only a credential's look is (16 or more
      letters and digits; a password's, 6), and in other text only a credential's look of 16;
    * a value with a space is a description unless its first word looks like a credential,
      or it is a password's in a row, of a few words and no punctuation (a passphrase:
      ``correct horse battery staple``; ``not set, runs use sqlite`` describes);
    * in a header, a value with a digit (a column's name has none).
    """
    value = html.unescape(value)  # (judged as shown: a page escapes the text)
    if not is_secret_key(key) or value.lower() in _CELL_EMPTY or _REFERENCE_RE.fullmatch(value):
        return False
    password = any(w in key.lower() for w in _PASSWORD_WORDS)
    if any(c in value for c in " \t"):
        first = value.split(None, 1)[0].strip("`*")
        passphrase = (
            password
            and where == "row"
            and len(value.split()) <= 6
            and not any(c in value for c in _PROSE_PUNCTUATION)
        )
        return passphrase or looks_like_credential(first)
    if where == "other":
        return looks_like_credential(value)
    if where == "header":  # a column's name (base_url, Description) has no digit
        return any(c.isdigit() for c in value)
    if "_" in key or key.isupper():
        return True
    return looks_like_credential(value, 6 if password else 16)


def _cell_key(cell: str) -> str | None:
    """The setting a cell names (``**W&B API key**``, `` `HF_TOKEN` ``), or None."""
    m = _CELL_KEY_RE.fullmatch(cell.strip(_CELL_MARKUP).replace("&amp;", "&"))
    return m.group(0) if m else None


# A Markdown table's row: a line that starts and ends with "|" (after spaces); and the
# delimiter row under its header row. A line ends at a line break, or at an escaped one
# (a table inside a JSON string).
_DELIMITER_CHARS = frozenset("|-: \t\r")
_BREAKS = ("\n", "\\r\\n", "\\n", "\\r")
# A row inside a JSON string, at its start or end: {"notes": "| a | b |"} or "| a | b |",
_JSON_EDGES_RE = re.compile(r'^[^|]*"(?=[ \t]*+\|)|(?<=\|)[ \t]*+"[ \t,}\]]*+$')


def _table_row_spans(text: str) -> Iterator[tuple[int, int]]:
    """Values of the cells after a cell naming a secret, on each line holding "|"
    (:func:`_cell_secret` decides, by where the line is: a row, a header, other text)."""
    nexts = [Next(text, b) for b in _BREAKS]

    def line_end(pos: int) -> tuple[int, int]:  # where the line from pos ends, its break's size
        ends = [n.after(pos) for n in nexts]
        e = min(ends)
        return e, len(_BREAKS[ends.index(e)])

    lo = 0
    i = text.find("|")
    while i >= 0:
        start = lo  # just after the last break before the "|" (none since the last line)
        for b in _BREAKS:
            j = text.rfind(b, lo, i)
            if j >= 0:
                start = max(start, j + len(b))
        end, size = line_end(i)
        line = text[start:end].rstrip()  # (any white space: a no-break space, a form feed)
        body = _JSON_EDGES_RE.sub("", line.lstrip())
        where = "other"
        if len(body) > 1 and body[0] == "|" and body[-1] == "|":
            below_end, _ = line_end(end + size) if end < len(text) else (end, 0)
            # (only these characters: its blanks and a CRLF line's "\r" are among them)
            below = text[end + size : below_end]
            header = "-" in below and "|" in below and set(below) <= _DELIMITER_CHARS
            where = "header" if header else "row"
        cells, pos = [], start
        for cell in line.split("|"):
            cells.append((pos, cell))
            pos += len(cell) + 1
        for (_, key_cell), (at, value_cell) in pairwise(cells):
            key = _cell_key(key_cell)
            value = value_cell.strip(_CELL_MARKUP)
            if key is None or not value or is_masked(value):
                continue
            if _cell_secret(key, value, where):
                yield at + len(value_cell) - len(value_cell.lstrip()), at + len(value_cell.rstrip())
        if where != "other":  # a name and its value in one cell: | password hunter22 | x |
            inner = cells[1:-1]
            for k, (at, cell) in enumerate(inner):
                one = _ONE_CELL_RE.fullmatch(cell)
                if one is None or not _one_cell_secret(one.group("key"), one.group("s")):
                    continue
                # (a setting's name and whether it is on: | Password 2fa_enabled | yes |)
                if k + 1 < len(inner) and _setting_state(inner[k + 1][1]):
                    continue
                yield at + one.start("s"), at + one.end("s")
        lo = end
        i = text.find("|", end)


# Cells that say whether a setting is on, or how much of it: the cell before names a setting
_SETTING_STATES = _CELL_EMPTY | {"on", "off", "enabled", "disabled", "default", "auto"}
_NUMBER_RE = re.compile(r"[-+]?[0-9][0-9_,.]*+[A-Za-z%]{0,3}")


def _setting_state(cell: str) -> bool:
    """Whether ``cell`` says a setting's state (yes, off, 8, 30s), not a second value; or is
    hidden (what it held is no longer known: the cell before is read as it was read when the
    cell was there, so hiding twice finds no more)."""
    value = cell.strip(_CELL_MARKUP)
    return (
        value.lower() in _SETTING_STATES
        or _NUMBER_RE.fullmatch(value) is not None
        or (bool(value) and is_masked(value))
    )


# An HTML cell's markup around a name or value: <b>, <code>, <span class="x">
_HTML_MARKUP = r"(?:<(?i:/?(?:b|strong|code|em|i|kbd|span))(?:[ \t][^<>]*+)?>[ \t]*+)*+"


def _html_cell_secret(m: re.Match) -> bool:
    key = _cell_key(m.group("key"))
    return key is not None and _cell_secret(key, m.group("s").strip(_CELL_MARKUP))


def _html_one_cell_secret(m: re.Match) -> bool:
    return _one_cell_secret(m.group("key"), html.unescape(m.group("s")))


def _one_cell_secret(name: str, value: str) -> bool:
    """A cell holding a secret's name and its value (<td>password hunter22</td>, | password
    hunter22 |): the name in up to four words before the value, the value with a
    credential's look (a password's, 6 letters and digits; another's, 16), so a description
    (password reset) stays."""
    key = _cell_key(name)
    if key is None or not is_secret_key(key) or is_masked(value):  # (its words, however joined)
        return False
    password = any(w in key.lower() for w in _PASSWORD_WORDS)
    return looks_like_credential(value, 6 if password else 16)


# A Markdown row's one cell as an HTML one reads: the name, then the value, maybe in code or bold
_ONE_CELL_RE = re.compile(
    r"[ \t]*+[`*]*+(?P<key>[A-Za-z_][A-Za-z0-9_.&]*+(?:[ \t]++[A-Za-z&][A-Za-z0-9_&]*+){0,3})"
    r"[`*]*+[ \t]++[`*]*+(?P<s>[^\s`*|]++)[`*]*+[ \t]*+"
)


# A name and a value lined up in columns, the name starting a line (maybe after a bullet);
# the rule below, and the redactor's quick screen, read it
COLUMNS = (
    r"(?m)^[ \t]*+(?:[-*][ \t]+)?(?P<key>[A-Za-z][A-Za-z0-9]*+(?:_[A-Za-z0-9]++)++)[ \t]+[\"'`]?"
    r"(?P<s>[A-Za-z0-9_\-+/=.]{16,}+)"
)

TABLE_RULES: tuple[Rule, ...] = (
    Rule("secret-table-cell", _table_row_spans),
    # (tag names in either case: <TD> as old editors write it)
    regex_rule(
        "secret-table-cell",
        rf"<(?i:t[dh])(?:[ \t][^<>]*+)?>[ \t]*+{_HTML_MARKUP}(?P<key>[^<>\n]*+){_HTML_MARKUP}"
        rf"</(?i:t[dh])>\s*+<(?i:td)(?:[ \t][^<>]*+)?>[ \t]*+{_HTML_MARKUP}(?P<s>[^<\n]*[^<\s])",
        keep=_html_cell_secret,
    ),
    # ... or in one cell, its name before it: <td>password hunter22</td>
    regex_rule(
        "secret-table-cell",
        rf"<(?i:t[dh])(?:[ \t][^<>]*+)?>[ \t]*+{_HTML_MARKUP}"
        r"(?P<key>[A-Za-z_][A-Za-z0-9_.&]*+(?:[ \t]++[A-Za-z&][A-Za-z0-9_&]*+){0,3})"
        rf"[ \t]*+{_HTML_MARKUP}(?<=[ \t>])(?P<s>[^\s<]++)[ \t]*+{_HTML_MARKUP}</(?i:t[dh])>",
        keep=_html_one_cell_secret,
    ),
    # columns lined up with spaces (notes, a tool's listing): an environment variable's name
    # (in either case) starting a line, then a credential's word (letters and digits, 16 or more)
    regex_rule(
        "secret-table-cell",
        COLUMNS + r"(?![^\s\"'`])",
        keep=lambda m: is_secret_key(m.group("key")) and letters_and_digits(m),
    ),
)
