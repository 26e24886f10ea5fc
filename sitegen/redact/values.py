"""Where a value that a name says is secret ends, and what is already hidden (a mask).

The ends the rules of :mod:`sitegen.redact.assign` read: a quoted string to its quote, a
list to its bracket, a YAML block to its end, else the rest of the line. Every look is
bounded or done once, so a rule takes time linear in the text.
"""

from __future__ import annotations

import re

MASK = "[REDACTED]"

# Values that say there is none (quotes around nothing and a YAML "~" hold no letter or
# digit: is_masked passes them).
EMPTY_VALUES = frozenset({"None", "null", "NULL"})

_ESCAPES_RE = re.compile(r"\\(?:[nrtbf\"\\/]|u[0-9a-fA-F]{4})")
_ALNUM_RE = re.compile(r"[A-Za-z0-9]")
_TAG_RE = re.compile(r"</?[A-Za-z][^<>]*>")
# A page's entity ending just before a key (&quot;api_key:, &gt;api_key=): its ";" ends no query
# parameter, as an "&" does (the one a page writes between parameters: &amp;, &#38;, &#x26;)
ENTITY_END_RE = re.compile(
    r"&(?!(?i:amp);|#0*38;|#[xX]0*26;)(?:[A-Za-z]{2,8}|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});\Z"
)
_ENTITY_RE = re.compile(r"&(?:[A-Za-z]{2,8}|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});?")

# What Redactor.name puts where a secret was in a path or name (a URL must stay stable, so
# a hash of the secret instead of MASK): as hidden as MASK.
NAME_MASK_RE = re.compile(r"redacted-[0-9a-f]{6}(?![0-9A-Za-z])")
# A transcript's mask names the kind of what it hides: ``[REDACTED:hf-token]``.
KIND_MASK_RE = re.compile(r"\[REDACTED:[a-z0-9.:\-]{1,40}\]")


def is_masked(value: str) -> bool:
    """Whether ``value`` holds nothing but masks (and quotes, brackets, escapes): already hidden.

    A mask is :data:`MASK`, a transcript's ``[REDACTED:kind]`` or a name's ``redacted-3f2a9c``
    (:data:`NAME_MASK_RE`).

    ``["[REDACTED]", "[REDACTED]"]``, ``[REDACTED]\\n`` (a mask followed by a JSON
    escape), ``[REDACTED]&quot;`` (an HTML entity) or ``[REDACTED]</code>`` is clean, so
    redacted text, and the JSON and HTML made from it, scan clean.
    """
    rest = _TAG_RE.sub(" ", _ENTITY_RE.sub(" ", _ESCAPES_RE.sub(" ", value))).replace(MASK, "")
    if "[REDACTED:" in rest:
        rest = KIND_MASK_RE.sub(" ", rest)
    return not _ALNUM_RE.search(NAME_MASK_RE.sub(" ", rest))


def after_mask(text: str, at: int) -> bool:
    """Whether ``text[at]`` is glued right after a mask (``[REDACTED]--token``): what a mask
    ends was glued to the secret it hid (``hf_…12--token ""cd``), no flag of its own, so a
    second hiding finds no more than the first; after any other ``]`` (``[INFO]``, a log's
    bracketed prefix) it stands alone."""
    if not at or text[at - 1] != "]":
        return False
    opened = text.rfind("[", max(0, at - 64), at)
    return opened >= 0 and (
        text[opened:at] == MASK or KIND_MASK_RE.fullmatch(text, opened, at) is not None
    )


CLOSE = {"[": "]", "{": "}", "(": ")"}
_ESCAPED_QUOTES = ('\\"', "\\'", "&quot;", "&#34;", "&#39;", "&#x27;", "&#x22;", "&#034;", "&apos;")


def _quoted_end(text: str, i: int) -> int:
    """Index of the quote closing the string opened at ``text[i]`` (``len(text)`` if none)."""
    q = text[i]
    j = i + 1
    while j < len(text):
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == q:
            return j
        j += 1
    return len(text)


def _bracket_end(text: str, i: int) -> int:
    """Index just past the bracket closing ``text[i]`` (nesting and quotes respected)."""
    stack = [CLOSE[text[i]]]
    j = i + 1
    while j < len(text) and stack:
        c = text[j]
        if c in "\"'":
            j = _quoted_end(text, j)
        elif c in CLOSE:
            stack.append(CLOSE[c])
        elif c == stack[-1]:
            stack.pop()
        j += 1
    return min(j, len(text))  # (a quote left open inside runs to the end, not past it)


def _line_end(text: str, i: int) -> int:
    j = text.find("\n", i)
    return len(text) if j < 0 else j


class Next:
    """The first ``needle`` at or after a position (``len(text)`` if none). Asked for
    positions that grow, each search reads on from the last one's answer, so the answers
    for every value on a long line cost one pass over it, not one pass each."""

    def __init__(self, text: str, needle: str) -> None:
        self.text, self.needle, self.lo, self.at = text, needle, 0, -1

    def after(self, pos: int) -> int:
        if not self.lo <= pos <= self.at:  # (no needle between lo and at)
            j = self.text.find(self.needle, pos)
            self.lo, self.at = pos, j if j >= 0 else len(self.text)
        return self.at


# A quoted string joined to what follows ("hun" + "ter22", 'hf_' + suffix): the value is the
# whole expression, to where a bare value ends
_CONCAT_RE = re.compile(r"[ \t]*+\+(?![+=])")

# A Windows path after its drive: its folders' backslashes separate, escape nothing
# (C:\\new\\table; in JSON C:\\\\new, where a single backslash after it is an escape again)
WINDOWS_PATH = r"(?<![A-Za-z0-9])[A-Za-z]:(?:(?:\\\\[^\s\"'<>|\\]*+)++|(?:\\[^\s\"'<>|\\]*+)++)"
WINDOWS_PATH_RE = re.compile(WINDOWS_PATH)
# Where a bare value ends: its line, its HTML element (its end tag, maybe as a page escapes it),
# an escaped line break (JSON)
_VALUE_STOPS = ("\n", "</", "&lt;/", "\\n", "\\r")


def value_stops(text: str) -> dict[str, Next]:
    return {s: Next(text, s) for s in (*_VALUE_STOPS, '\\"', "\\'")}


# A quote no backslash escapes: a JSON (or Python) string's own closing quote
_UNESCAPED_RE = {q: re.compile(rf"(?<!\\){q}") for q in "\"'"}


def _escaped_close(start: int, q: str, stops: dict[str, Next]) -> int:
    """Where the escaped quote ``q`` (``\\"``) that opened a value at ``text[start]`` closes
    it: the next ``q`` on its line (-1 if none: no JSON string holds a line break)."""
    close = stops[q].after(start)
    return close if close < stops["\n"].after(start) else -1


def _open_escaped_end(text: str, start: int, q: str, stops: dict[str, Next]) -> int:
    """Where a value an escaped quote ``q`` opened and left open at ``text[start]`` ends: as a
    bare value does (its line, element or escaped break), or at the quote closing the string
    it is written in (``{"a": "password: \\"X\\nnext"}``: X)."""
    end = min(stops[s].after(start) for s in _VALUE_STOPS)
    quote = _UNESCAPED_RE[q[1]].search(text, start, end)
    return quote.start() if quote is not None else end


def _deeper_lines_end(text: str, j: int, indent: int, items: bool, plain: bool = False) -> int:
    """The end of the lines after the line that ends at ``text[j]`` indented deeper than
    ``indent`` (and, with ``items``, "- item" lines at any depth); ``j`` if there are none.
    Blank lines between such lines are theirs, as YAML reads a block. With ``plain`` (a
    plain scalar's continuation, which YAML says holds no ": ") a line holding one ends
    them."""
    end = j
    while j < len(text):
        nxt = _line_end(text, j + 1)
        line = text[j + 1 : nxt]
        body = line.lstrip()
        depth = len(line) - len(body)
        if not body:
            j = nxt
            continue
        if plain and (": " in body or body.rstrip().endswith(":")):
            break
        if depth > indent or (items and body.startswith("- ")):
            end = nxt
            j = nxt
        else:
            break
    return end


# A YAML block scalar's header: "|", ">-", "|2+", a comment after it
_BLOCK_HEADER_RE = re.compile(r"[|>][0-9+\-]*[ \t]*(?:#.*)?")


# A shell's control operator after a NAME=value, standing apart from the value ("K && x",
# "K; x", "K || x", "K | x"): the command, and the value, end there.
# (&amp;&amp;: a page's "&&", as the HTML made of redacted text writes it)
_SHELL_END_RE = re.compile(r"(?<=[ \t])(?:&&|&amp;&amp;|\|\|?)(?=[ \t\r]|$)|;(?=[ \t\r]|$)")
# A page's entity ending just before a ";" (&quot; + &quot;…): the ";" closes it, no command
_ENTITY_BEFORE_RE = re.compile(r"&(?:[A-Za-z]{2,8}|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6})\Z")


def _shell_end(text: str, i: int, end: int) -> re.Match | None:
    """The first control operator in ``text[i:end]`` (:data:`_SHELL_END_RE`) that is no
    entity's closing ";"."""
    pos = i
    while (op := _SHELL_END_RE.search(text, pos, end)) is not None:
        if op.group() != ";" or not _ENTITY_BEFORE_RE.search(
            text, max(i, op.start() - 10), op.start()
        ):
            return op
        pos = op.end()
    return None


def value_span(
    text: str,
    key_start: int,
    i: int,
    in_query: bool,
    yaml: bool = False,
    shell: bool = False,
    stops: dict[str, Next] | None = None,
) -> tuple[int, int] | None:
    """Where the value that starts at ``text[i]`` ends: the whole value, not its first word.

    With ``yaml`` (the key's separator is a colon) a key that starts its line takes the lines
    indented deeper than it as well: a block scalar (``key: |``) or a plain scalar YAML
    wrapped onto the next lines. With ``shell`` (``NAME=value``, no space around the "="), a
    bare value ends at a control operator standing apart from it (:data:`_SHELL_END_RE`):
    ``export HF_TOKEN=X && python train.py`` hides X, not the command after it. An operator
    glued inside the value (``a&&b``, ``a|b``), or after a quote in it (``$'a && b'``), is
    part of it: a password may hold one.
    ``stops`` (:func:`value_stops`, one for a text's values in order) finds where a bare value's
    line, element or escaped line ends.
    """
    line_start = text.rfind("\n", 0, key_start) + 1
    if i >= len(text) or text[i] in "\r\n":
        # Nothing on the line: a YAML block value (lines indented deeper than the key's line,
        # or "- item" lines: a list may sit at the key's indent, and hiding a sibling list is
        # better than showing this one) is the value.
        indent = len(text[line_start:key_start]) - len(text[line_start:key_start].lstrip())
        start = _line_end(text, i)
        end = _deeper_lines_end(text, start, indent, items=True)
        return (start + 1, end) if end > start else None
    if text.startswith(("b'", 'b"', 'b\\"', "b\\'"), i):  # bytes: b'…'
        i += 1
    c = text[i]
    joined = -1  # where a quoted part joined to more by "+" ends
    if c in "\"'":
        j = _quoted_end(text, i)
        # (a word glued after the closing quote is the value's, as the shell reads "X"y: the
        # whole is read as a bare value, from the opening quote)
        glued = j + 1 < len(text) and (text[j + 1].isalnum() or text[j + 1] == "_")
        if not glued and not _CONCAT_RE.match(text, j + 1):
            return (i + 1, j) if j > i + 1 else None
        joined = j + 1
    # A quoted value inside a JSON string (\"…\") or escaped HTML (&quot;…&quot;,
    # &#34;…&#34;).
    for q in _ESCAPED_QUOTES:
        if text.startswith(q, i):
            stops = stops or value_stops(text)
            if q[0] == "\\":
                close = _escaped_close(i + len(q), q, stops)
            else:
                close = text.find(q, i + len(q))
            j = close if close >= 0 else _line_end(text, i)
            if close < 0 and q[0] == "\\":
                j = _open_escaped_end(text, i + len(q), q, stops)
            if close < 0 or not _CONCAT_RE.match(text, close + len(q)):
                return (i + len(q), j) if j > i + len(q) else None
            joined = close + len(q)
            break
    # (a quoted string joined to more by "+" is one part of the value: the bare value below)
    if c in CLOSE:
        return i, _bracket_end(text, i)
    if in_query:  # ?token=abc&x=1: the value ends at the next parameter
        m = re.compile(r"[^&#\s\"'<>]+").match(text, i)
        return (i, m.end()) if m else None
    # A bare value runs to the end of the line (``password = a b``, ``Basic <b64>``), and on
    # over a backslash line continuation.
    stops = stops or value_stops(text)
    end = line_end = stops["\n"].after(i)
    while end < len(text) and _ends_in_backslash(text, i, end):
        end = _line_end(text, end + 1)
    # its HTML element ends, an escaped line break (JSON; not a Windows path's "\\new")
    path = WINDOWS_PATH_RE.match(text, i)
    escaped_from = path.end() if path else i
    tags = (stops["</"].after(i), stops["&lt;/"].after(i))
    end = min(end, *tags, *(stops[s].after(escaped_from) for s in _VALUE_STOPS[3:]))
    if joined >= 0 and (tick := text.find("`", joined, end)) >= 0:
        end = tick  # (the code span the expression is written in closes: `token = 'a' + b`)
    if (
        shell
        and (op := _shell_end(text, i, end)) is not None
        # (a quote still open there may hold it: $'a && b')
        and not _quote_open(text[i : op.start()])
    ):
        end = op.start()
    if (
        yaml
        and end == line_end
        and not text[line_start:key_start].strip(" \t-")
        and text[i:end].strip() not in EMPTY_VALUES
    ):
        block = _BLOCK_HEADER_RE.fullmatch(text, i, end) is not None
        end = _deeper_lines_end(text, end, key_start - line_start, items=False, plain=not block)
    while end > i and text[end - 1] in " \t\r":
        end -= 1
    return (i, end) if end > i else None


def _quote_open(seg: str) -> bool:
    """Whether a quote is still open at the end of ``seg``: an odd count of one kind, once
    escaped characters are set aside (``$'a\\'b && S'``: open; ``sed 's/a\\/b/' f``: not)."""
    bare = _ESCAPED_RE.sub("", seg)
    return any(bare.count(q) % 2 for q in "'\"")


_ESCAPED_RE = re.compile(r"\\.")


def _ends_in_backslash(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]``, trailing white space aside, ends in a backslash."""
    while end > start and text[end - 1] in " \t\r":
        end -= 1
    return end > start and text[end - 1] == "\\"
