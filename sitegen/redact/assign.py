"""A value after a key that a name says is secret (``WANDB_API_KEY=…``, ``api_key:`` then a
YAML block, ``+logger.wandb.key=…``) or beside a name field (``{"name": "HF_TOKEN",
"value": …}``): the ``secret-assignment`` and ``secret-env-pair`` rules.

Each yields the spans of whole values (:mod:`sitegen.redact.values` says where one ends).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sitegen.redact.names import is_secret_key, names_a_service
from sitegen.redact.values import (
    CLOSE,
    EMPTY_VALUES,
    ENTITY_END_RE,
    NAME_MASK_RE,
    Next,
    is_masked,
    value_span,
    value_stops,
)

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


def assignment_spans(text: str) -> Iterator[tuple[int, int]]:
    covered = 0  # the end of the last value looked at: a key inside it is part of it
    parents: dict[int, str | None] = {}
    stops = value_stops(text)
    for m in _ASSIGN_RE.finditer(text):
        if m.start() < covered:
            continue
        key = m.group("key")
        # (";" ends a query's parameter, or a page's entity: &quot;api_key: is no query)
        in_query = (
            m.start() > 0
            and text[m.start() - 1] in "?&;"
            and ENTITY_END_RE.search(text, max(0, m.start() - 12), m.start()) is None
        )
        if (
            not is_secret_key(key)
            and not _variable_after_word(key)
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
        if value.strip("\"'") in EMPTY_VALUES or first is not None or is_masked(value):
            continue
        if names_a_model_token(key, value):
            continue  # prose about a model's tokens: "next token = im_start_token123456"
        if NAME_MASK_RE.match(value):
            # A name's secret, hashed (Redactor.name): a bare value runs to the end of the
            # line, over whatever follows the name in a table or a JSON document.
            continue
        yield span


def _variable_after_word(key: str) -> bool:
    """Whether a key of two words ends in a secret's variable (``x export HF_TOKEN``): a word
    glued before it (a progress bar's, a token's) says nothing of it, and once that word is
    hidden the variable stands alone."""
    last = key.rpartition(" ")[2]
    return last != key and "_" in last and last.isupper() and is_secret_key(last)


def _value_after(
    text: str,
    key_start: int,
    i: int,
    in_query: bool,
    yaml: bool = False,
    shell: bool = False,
    stops: dict[str, Next] | None = None,
) -> tuple[int, int] | None:
    """:func:`value_span` of the value after a key's separator at ``text[i]``."""
    # Text inside a JSON string: an escaped line break before the value is white space.
    while text.startswith(("\\n", "\\r", "\\t"), i):
        i += 2
        while i < len(text) and text[i] in " \t":
            i += 1
    return value_span(text, key_start, i, in_query, yaml, shell, stops)


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
        if brace < 0 or text.find(CLOSE[text[brace]], brace, key_start) >= 0:
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
    stops = value_stops(text)
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
