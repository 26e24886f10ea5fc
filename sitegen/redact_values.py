"""Where a value that a name says is secret ends: after a key (``WANDB_API_KEY=…``, ``api_key:``
then a YAML block, ``+logger.wandb.key=…``) or beside a name field (``{"name": "HF_TOKEN",
"value": …}``).

Rules of :mod:`sitegen.redact_rules` (``secret-assignment``, ``secret-env-pair``): each yields
the spans of whole values, a quoted string to its quote, a list to its bracket, a YAML block
to its end, else the rest of the line. Every look is bounded or done once, so a rule takes
time linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sitegen.redact_names import is_secret_key, names_a_service

MASK = "[REDACTED]"

# A key and its separator: NAME=, NAME:, "NAME": , NAME =>, NAME :=. The name may be two
# words ("API key: …", as notes put it) and closed by Markdown or HTML markup
# ("**api key**: …", "<code>HF_TOKEN</code>: …"), or a quoted subscript (Python's
# ``os.environ['HF_TOKEN'] = …``, as a traceback quotes the line), or Python's bytes
# (``{b'x-api-key': b'…'}``, an HTTP library's headers). It may start with digits,
# dots or one dash ("-api_key=", "1-api_key=", after a letter outside ASCII); "--flag=" is the
# CLI rule's.
_ASSIGN_RE = re.compile(
    r"(?<![A-Za-z0-9_\-])(?<![A-Za-z0-9_\-]\.)(?:b(?=\\?[\"']))?(?P<q>\\?[\"']|)"
    r"(?P<key>(?:(?!--)[0-9\-][0-9.\-]*+)?[A-Za-z_][A-Za-z0-9_.\-]*+(?: [A-Za-z][A-Za-z0-9_\-]*+)?)(?P=q)"
    r"(?:(?<=[\"'])\])?"
    r"(?:[*`]{1,3}|</(?:code|b|strong|em|i|kbd|span)>)?"
    r"[ \t]*(?P<sep>:=|=>|=(?!=)|:(?![:/]))[ \t]*"
)
# "Invalid API key: X": an error quoting what it refused, the error-secret rule's (one word)
_ERROR_BEFORE_RE = re.compile(
    r"(?i:invalid|incorrect|wrong|bad|expired|revoked|malformed|unknown|unauthori[sz]ed) $"
)
# A query parameter that holds an API key by its plain name (Google's and many APIs' ?key=…)
_QUERY_KEYS = frozenset({"key", "apikey", "api-key"})
# Values that say there is none (quotes around nothing and a YAML "~" hold no letter or
# digit: is_masked passes them).
_EMPTY_VALUES = frozenset({"None", "null", "NULL"})
# A name in lower-case words joined by "_", digits at its end (im_start_token123456, a
# config's key): a model's token or a setting, as a sentence names one.
IDENTIFIER_RE = re.compile(r"[a-z]++(?:_[a-z]++)++[0-9]*+")
# Words before "token" that make it a model's token, not a credential: "next token =
# im_start_token123456", "the EOS token: end_of_text_token2".
_MODEL_TOKEN_WORDS = frozenset(
    {"next", "first", "last", "new", "added", "previous", "prev", "current", "generated"}
    | {"sampled", "predicted", "special", "stop", "start", "end", "eos", "bos", "pad", "unk"}
    | {"sep", "cls", "mask", "think", "thinking"}
)


def names_a_model_token(words: str, value: str) -> bool:
    """Whether ``words`` (``next token``, ``eos token``) name a model's token and ``value``
    is its name (:data:`IDENTIFIER_RE`), not a credential: with no digit after any word
    before "token" but a service's (``eot token: end_of_turn``, ``image token: image_pad``;
    not ``API token``), with one only after a word of :data:`_MODEL_TOKEN_WORDS` (``next
    token = im_start_token123456``).

    A value of lower-case words joined by "_" is shown after a secret's name only here: with
    a digit it is a credential anywhere else (``token is my_secret_token_value_abc123``,
    ``password was hunter2_prod_2024``), for a made-up secret often reads so, and a name in
    a sentence about where a secret is (``config_file_path``, ``secrets_manager``) has none.
    """
    w = words.lower().split()
    return (
        len(w) == 2
        and w[1] == "token"
        and IDENTIFIER_RE.fullmatch(value) is not None
        and (
            w[0] in _MODEL_TOKEN_WORDS
            or not (names_a_service(w[0]) or any(c.isdigit() for c in value))
        )
    )


_FIRST_WORD_RE = re.compile(r"(?:None|null|NULL)[,;.)]")
_ESCAPES_RE = re.compile(r"\\(?:[nrtbf\"\\/]|u[0-9a-fA-F]{4})")
_ALNUM_RE = re.compile(r"[A-Za-z0-9]")
_TAG_RE = re.compile(r"</?[A-Za-z][^<>]*>")
_QUOTE_ENTITY_END_RE = re.compile(r"&(?:quot|apos|#34|#39|#x27);\Z")
_ENTITY_RE = re.compile(r"&(?:[A-Za-z]{2,8}|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});?")


# What Redactor.name puts where a secret was in a path or name (a URL must stay stable, so
# a hash of the secret instead of MASK): as hidden as MASK.
_NAME_MASK_RE = re.compile(r"redacted-[0-9a-f]{6}(?![0-9A-Za-z])")
# A transcript's mask names the kind of what it hides: ``[REDACTED:hf-token]``.
KIND_MASK_RE = re.compile(r"\[REDACTED:[a-z0-9.:\-]{1,40}\]")


def is_masked(value: str) -> bool:
    """Whether ``value`` holds nothing but masks (and quotes, brackets, escapes): already hidden.

    A mask is :data:`MASK`, a transcript's ``[REDACTED:kind]`` or a name's ``redacted-3f2a9c``
    (:data:`_NAME_MASK_RE`).

    ``["[REDACTED]", "[REDACTED]"]``, ``[REDACTED]\\n`` (a mask followed by a JSON
    escape), ``[REDACTED]&quot;`` (an HTML entity) or ``[REDACTED]</code>`` is clean, so
    redacted text, and the JSON and HTML made from it, scan clean.
    """
    rest = _TAG_RE.sub(" ", _ENTITY_RE.sub(" ", _ESCAPES_RE.sub(" ", value))).replace(MASK, "")
    if "[REDACTED:" in rest:
        rest = KIND_MASK_RE.sub(" ", rest)
    return not _ALNUM_RE.search(_NAME_MASK_RE.sub(" ", rest))


_CLOSE = {"[": "]", "{": "}", "(": ")"}
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
    stack = [_CLOSE[text[i]]]
    j = i + 1
    while j < len(text) and stack:
        c = text[j]
        if c in "\"'":
            j = _quoted_end(text, j)
        elif c in _CLOSE:
            stack.append(_CLOSE[c])
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
# Where a bare value ends: its line, its HTML element, an escaped line break (JSON)
_VALUE_STOPS = ("\n", "</", "\\n", "\\r")


def _stops(text: str) -> dict[str, Next]:
    return {s: Next(text, s) for s in _VALUE_STOPS}


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


def _value_span(
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
    ``stops`` (:func:`_stops`, one for a text's values in order) finds where a bare value's
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
        if not _CONCAT_RE.match(text, j + 1):
            return (i + 1, j) if j > i + 1 else None
        joined = j + 1
    # A quoted value inside a JSON string (\"…\") or escaped HTML (&quot;…&quot;, &#34;…&#34;).
    for q in _ESCAPED_QUOTES:
        if text.startswith(q, i):
            close = text.find(q, i + len(q))
            j = close if close >= 0 else _line_end(text, i)
            if close < 0 or not _CONCAT_RE.match(text, close + len(q)):
                return (i + len(q), j) if j > i + len(q) else None
            joined = close + len(q)
            break
    # (a quoted string joined to more by "+" is one part of the value: the bare value below)
    if c in _CLOSE:
        return i, _bracket_end(text, i)
    if in_query:  # ?token=abc&x=1: the value ends at the next parameter
        m = re.compile(r"[^&#\s\"'<>]+").match(text, i)
        return (i, m.end()) if m else None
    # A bare value runs to the end of the line (``password = a b``, ``Basic <b64>``), and on
    # over a backslash line continuation.
    stops = stops or _stops(text)
    end = line_end = stops["\n"].after(i)
    while end < len(text) and _ends_in_backslash(text, i, end):
        end = _line_end(text, end + 1)
    # its HTML element ends, an escaped line break (JSON; not a Windows path's "\\new")
    path = WINDOWS_PATH_RE.match(text, i)
    escaped_from = path.end() if path else i
    end = min(end, stops["</"].after(i), *(stops[s].after(escaped_from) for s in _VALUE_STOPS[2:]))
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
        and text[i:end].strip() not in _EMPTY_VALUES
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


def assignment_spans(text: str) -> Iterator[tuple[int, int]]:
    covered = 0  # the end of the last value looked at: a key inside it is part of it
    parents: dict[int, str | None] = {}
    stops = _stops(text)
    for m in _ASSIGN_RE.finditer(text):
        if m.start() < covered:
            continue
        key = m.group("key")
        # (";" ends a query's parameter, or a page's quote: &quot;api_key: is no query)
        in_query = (
            m.start() > 0
            and text[m.start() - 1] in "?&;"
            and _QUOTE_ENTITY_END_RE.search(text, max(0, m.start() - 8), m.start()) is None
        )
        if (
            not is_secret_key(key)
            and not (in_query and key.lower() in _QUERY_KEYS)
            and not _nested_secret(text, m.start(), key, parents)
        ):
            continue
        if " " in key and _ERROR_BEFORE_RE.search(text, max(0, m.start() - 16), m.start()):
            continue
        sep = m.group("sep")
        shell = sep == "=" and m.end() == m.end("sep") and text[m.start("sep") - 1] not in " \t"
        span = _value_after(text, m.start(), m.end(), in_query, sep == ":", shell, stops)
        if span is None:
            continue
        covered = span[1]
        value = text[span[0] : span[1]].strip()
        first = _FIRST_WORD_RE.match(value)  # "None, retrying": no value, and words after it
        if value.strip("\"'") in _EMPTY_VALUES or first is not None or is_masked(value):
            continue
        if names_a_model_token(key, value):
            continue  # prose about a model's tokens: "next token = im_start_token123456"
        if _NAME_MASK_RE.match(value):
            # A name's secret, hashed (Redactor.name): a bare value runs to the end of the
            # line, over whatever follows the name in a table or a JSON document.
            continue
        yield span


def _value_after(
    text: str,
    key_start: int,
    i: int,
    in_query: bool,
    yaml: bool = False,
    shell: bool = False,
    stops: dict[str, Next] | None = None,
) -> tuple[int, int] | None:
    """:func:`_value_span` of the value after a key's separator at ``text[i]``."""
    # Text inside a JSON string: an escaped line break before the value is white space.
    while text.startswith(("\\n", "\\r", "\\t"), i):
        i += 2
        while i < len(text) and text[i] in " \t":
            i += 1
    return _value_span(text, key_start, i, in_query, yaml, shell, stops)


# A key named only with what it belongs to (``wandb:`` then ``  key: X``; ``"hf": {"tokens":``)
_QUALIFIED = frozenset({"key", "keys", "tokens"})
_PARENT_LOOKBACK = 2048  # how far back a nested key's parent is looked for
_YAML_PARENT_RE = re.compile(
    r"[ \t]*(?:-[ \t]+)?[\"']?(?P<key>[A-Za-z_][\w.\-]*)[\"']?[ \t]*:[ \t]*"
)
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _nested_secret(text: str, key_start: int, key: str, memo: dict[int, str | None]) -> bool:
    """Whether a key such as ``key`` names a secret by the mapping it is in (``wandb:`` on a
    line above, indented less; or ``"wandb": {`` before it, on its line or above), as
    ``wandb.key`` would.

    ``memo`` keeps the parent found for each line (and each brace), so that siblings share
    one look back; every look back is bounded, so a long line costs no more than a short one.
    """
    if key.lower() not in _QUALIFIED:
        return False
    lo = max(0, key_start - _PARENT_LOOKBACK)
    line_start = text.rfind("\n", lo, key_start) + 1
    parent = None
    if (line_start > 0 or lo == 0) and text[line_start:key_start].strip(" \t-") == "":
        parent = _yaml_parent(text, line_start, key_start, memo)
    if parent is None:  # (also a key starting a line of pretty-printed JSON or a call's repr)
        brace = max(text.rfind("{", lo, key_start), text.rfind("(", lo, key_start))
        if brace < 0 or text.find(_CLOSE[text[brace]], brace, key_start) >= 0:
            return False
        if -1 - brace not in memo:
            memo[-1 - brace] = (_key_before if text[brace] == "{" else _call_parent)(text, brace)
        parent = memo[-1 - brace]
    # (a call's arguments belong to its class and to the key it is assigned to: "a|b")
    return parent is not None and any(is_secret_key(f"{p}.{key}") for p in parent.split("|"))


def _key_before(text: str, brace: int) -> str | None:
    """The key of ``"KEY": {`` (or ``KEY={``) whose brace is ``text[brace]``."""
    j = brace - 1
    while j >= 0 and text[j] in " \t":
        j -= 1
    if j < 0 or text[j] not in ":=":
        return None
    j -= 1
    while j >= 0 and text[j] in " \t":
        j -= 1
    if j >= 0 and text[j] in "\"'":
        j -= 1
    end, stop = j + 1, max(-1, j - 128)
    while j > stop and text[j] in _KEY_CHARS:
        j -= 1
    key = text[j + 1 : end].lstrip("-")  # (a flag's: --wandb={"key": …})
    return key if key[:1].isalpha() or key[:1] == "_" else None


# What a config class's name adds to what it configures: WandbConfig, HfArgs, LoggerSettings
_CLASS_SUFFIX_RE = re.compile(r"(?:Config|Conf|Cfg|Settings|Args|Arguments|Options|Params)$")


def _call_parent(text: str, paren: int) -> str | None:
    """What the arguments of a call or a dataclass's repr at ``text[paren]`` belong to, as
    ``a|b``: ``logger=WandbConfig(`` is ``logger|Wandb``, ``WandbConfig(`` alone ``Wandb``,
    ``wandb.login(`` ``login|wandb``."""
    j, stop = paren - 1, max(-1, paren - 129)
    while j > stop and text[j] in _KEY_CHARS:
        j -= 1
    called = text[j + 1 : paren].split(".")
    name = _CLASS_SUFFIX_RE.sub("", called[-1])
    # (a module's function belongs to the module too: wandb.login(key=…) is wandb's key)
    module = called[0] if len(called) > 1 else None
    found = "|".join(x for x in (_key_before(text, j + 1), name, module) if x)
    return found or None


def _yaml_parent(
    text: str, line_start: int, key_start: int, memo: dict[int, str | None]
) -> str | None:
    """The key of the block mapping the YAML line at ``line_start`` is in, if near above."""
    indent = len(text[line_start:key_start]) - len(text[line_start:key_start].lstrip(" \t-"))
    lo = max(0, line_start - _PARENT_LOOKBACK)
    end = line_start - 1
    found: str | None = None
    while end > lo:
        start = text.rfind("\n", lo, end) + 1
        line = text[start:end].removesuffix("\r")  # (a CRLF text's line)
        body = line.lstrip()
        depth = len(line) - len(body)
        if body and not body.startswith("#"):
            if depth == indent and start in memo:  # a sibling's parent is this line's
                found = memo[start]
                break
            if depth < indent:
                m = _YAML_PARENT_RE.fullmatch(line)
                found = m.group("key") if m else None
                break
        end = start - 1
    memo[line_start] = found
    return found


# --- a secret's name beside its value ------------------------------------------------------

# The container env shape (Kubernetes, SLURM launchers): {"name": "WANDB_API_KEY", "value": X}
# in JSON, or "- name: WANDB_API_KEY" then "  value: X" in YAML. The name field (``name`` or
# ``key``) says what the ``value`` field beside it holds.
_NAME_FIELD_RE = re.compile(
    r"[nNkK](?<![\w\-].)(?:(?<=[nN])ame|(?<=N)AME|(?<=[kK])ey|(?<=K)EY)(?:\\?[\"'])?[ \t]*[:=][ \t]*"
    r"(?:\\?[\"'])?(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*+)"
)
_VALUE_FIELD_RE = re.compile(
    r"(?<![\w\-])(?P<q>\\?[\"']?)(?:value|Value|VALUE)(?P=q)[ \t]*[:=][ \t]*"
)
_PAIR_REACH = 400  # how far from the name field its value field may be
# Where a mapping ends, looking on from its name field: a closing brace, the next list item
# or name field, a blank line.
_PAIR_END_RE = re.compile(
    r"\}|\n[ \t]*-[ \t]|\n[ \t]*\n|(?<![\w\-])[\"']?(?:name|Name|NAME)[\"']?[ \t]*:"
)
# Where it starts, looking back from it: an opening brace, or its list item's "- ".
_PAIR_START_RE = re.compile(r".*(?:\{|(?:^|\n)[ \t]*-[ \t])", re.S)


# A name and its value as a pair: ('WANDB_API_KEY', X) as Python prints environ.items()
# (or an HTTP library its headers, as bytes: (b'x-api-key', b'X')),
# ["HF_TOKEN", X] in JSON, [HF_TOKEN, X] in YAML; only a pair (the bracket closes after the
# value), not a list of names.
_PAIR_TUPLE_RE = re.compile(
    r"[(\[][ \t]*b?(?P<q>\\?[\"']|)(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*+)(?P=q)[ \t]*,[ \t]*"
    r"(?:b?(?P<q2>\\?[\"'])(?P<s>(?:(?!(?P=q2))[^\n])++)(?P=q2)|(?P<bare>[^\s,()\[\]{}\"']++))"
    r"[ \t]*[)\]]"
)


def pair_spans(text: str) -> Iterator[tuple[int, int]]:
    stops = _stops(text)
    for m in _PAIR_TUPLE_RE.finditer(text):
        group = "s" if m.group("q2") else "bare"
        if is_secret_key(m.group("name")) and not is_masked(m.group(group)):
            yield m.span(group)
    covered = 0  # the end of the last value: a name field inside it is part of it
    for m in _NAME_FIELD_RE.finditer(text):
        if m.start() < covered or not is_secret_key(m.group("name")):
            continue
        # the value field after the name in the same mapping, or before it
        stop = m.end() + _PAIR_REACH
        end = _PAIR_END_RE.search(text, m.end(), stop)
        v = _VALUE_FIELD_RE.search(text, m.end(), end.start() if end else stop)
        if v is None:
            lo = max(0, m.start() - _PAIR_REACH)
            start = _PAIR_START_RE.match(text, lo, m.start())
            found = list(_VALUE_FIELD_RE.finditer(text, start.end() if start else lo, m.start()))
            v = found[-1] if found else None
        if v is None:
            continue
        span = _value_after(text, v.start(), v.end(), False, stops=stops)
        covered = max(covered, span[1]) if span is not None else covered
        if span is not None and not is_masked(text[span[0] : span[1]]):
            yield span
