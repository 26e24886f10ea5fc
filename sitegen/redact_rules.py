"""The rule table behind :class:`sitegen.redact.Redactor`: secret names and secret shapes.

Split from ``redact.py`` so the rules (what counts as a secret) read apart from
the mechanism (finding, masking, hashing names); both the build's redaction and
the publish gate use exactly these rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from ahocorasick_rs import AhoCorasick

from sitegen.model.frozen import frozen
from sitegen.redact_names import is_secret_key

MASK = "[REDACTED]"


# --- rules -----------------------------------------------------------------------------------

Spans = Callable[[str], Iterator[tuple[int, int]]]


@frozen
class Rule:
    """One kind of secret: ``spans(text)`` yields where it is."""

    kind: str
    spans: Spans


def _regex_rule(
    kind: str, pattern: str, flags: int = 0, keep: Callable[[re.Match], bool] | None = None
) -> Rule:
    """A rule from a regex: the secret is the group ``s`` if the pattern has one, else the match."""
    rx = re.compile(pattern, flags)
    group = "s" if "s" in rx.groupindex else 0

    def spans(text: str) -> Iterator[tuple[int, int]]:
        for m in rx.finditer(text):
            start, end = m.span(group)
            if start < 0 or end <= start or is_masked(m.group(group)):
                continue
            if keep is not None and not keep(m):
                continue
            yield start, end

    return Rule(kind, spans)


def _secret_name(m: re.Match) -> bool:
    return is_secret_key(m.group("key"))


_PLAIN_USER_RE = re.compile(r"[a-z_][a-z0-9_.\-]{0,15}")

_SHAPES: tuple[tuple[str, str], ...] = (
    ("github-token", r"github_pat_(?<![A-Za-z0-9]github_pat_)[A-Za-z0-9_]{20,}"),
    ("github-token", r"gh(?<![A-Za-z0-9]gh)[pousr]_[A-Za-z0-9]{30,}"),
    ("gitlab-token", r"glpat-(?<![A-Za-z0-9]glpat-)[A-Za-z0-9_\-]{20,}"),
    ("hf-token", r"hf_(?<![A-Za-z0-9]hf_)[A-Za-z0-9]{20,}"),
    ("openai-key", r"sk-(?<![A-Za-z0-9]sk-)(?:proj-|ant-|or-)?[A-Za-z0-9_\-]{20,}"),
    ("stripe-key", r"[spr](?<![A-Za-z0-9][spr])k_(?:live|test)_[A-Za-z0-9]{10,}"),
    ("google-api-key", r"AIza(?<![A-Za-z0-9]AIza)[0-9A-Za-z_\-]{30,}"),
    ("google-oauth-token", r"ya29\.(?<![A-Za-z0-9]ya29\.)[0-9A-Za-z_\-]{20,}"),
    ("jwt", r"eyJ(?<![A-Za-z0-9_\-]eyJ)[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"),
    ("aws-access-key-id", r"A(?<![A-Z0-9]A)(?:KIA|SIA)[0-9A-Z]{16}(?![A-Z0-9])"),
    ("daytona-key", r"dtn_(?<![A-Za-z0-9]dtn_)[A-Za-z0-9]{20,}"),
    ("npm-token", r"npm_(?<![A-Za-z0-9]npm_)[A-Za-z0-9]{30,}"),
    ("slack-token", r"xox(?<![A-Za-z0-9]xox)[abposr]-[A-Za-z0-9\-]{10,}"),
    # providers an agent's LLM or tools call (Groq, Perplexity, Tavily, LangSmith, Replicate)
    ("groq-key", r"gsk_(?<![A-Za-z0-9]gsk_)[A-Za-z0-9]{20,}"),
    ("perplexity-key", r"pplx-(?<![A-Za-z0-9]pplx-)[A-Za-z0-9]{20,}"),
    ("tavily-key", r"tvly-(?<![A-Za-z0-9]tvly-)[A-Za-z0-9_\-]{16,}"),
    ("langsmith-key", r"lsv2_(?<![A-Za-z0-9]lsv2_)(?:pt|sk)_[A-Za-z0-9_]{20,}"),
    ("replicate-token", r"r8_(?<![A-Za-z0-9]r8_)[A-Za-z0-9]{20,}"),
    (
        "discord-webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_\-]+",
    ),
    (
        "slack-webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]+",
    ),
    ("bearer-token", r"[bB](?<!\w[bB])(?i:earer)\s+(?P<s>[A-Za-z0-9._~+/\-]{16,}=*)"),
)


def _private_key_rule() -> Rule:
    """PEM private-key blocks, under any key or none; an unterminated block runs to the end."""
    return _regex_rule(
        "private-key",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----"
        r"(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|.*)",
        re.S,
    )


# The user part of a URL's userinfo (before ":"), and a piece of a password or token: both
# stop at white space, a quote, a tag or a backslash (a JSON escape); a password may hold
# "/" and ":", never "://" (a second URL). Possessive, and each ends where the next starts,
# so the search takes time linear in the text whatever it holds.
_URL_USER = r"[^\s:/?#\"'<>\\]*+"
_URL_PASSWORD = r"(?:[^\s@\"'<>\\:]|:(?!//)|\\(?![nrt]))++"
_URL_HOSTLESS = r"[^\s:/@?#\"'<>\\]++"

_URL_RULES: tuple[Rule, ...] = (
    # scheme://user:password@host, the password up to the last "@" before the host (it may
    # hold "@"; the user may be empty: redis://:pw@host; the password may hold "/");
    # host:port/path@x is not one (the "password" would be a port).
    _regex_rule(
        "url-password",
        rf"://(?<=[A-Za-z0-9+.\-]://){_URL_USER}:"
        rf"(?P<s>(?!\d+(?:[/?#\s]|$)|/){_URL_PASSWORD}(?:@{_URL_HOSTLESS}(?=@))*+)@",
    ),
    # https://TOKEN@host: a user part that is not a plain short user name (git@, ubuntu@).
    _regex_rule(
        "url-token",
        rf"://(?<=[A-Za-z0-9+.\-]://)(?P<s>{_URL_HOSTLESS}(?:@{_URL_HOSTLESS}(?=@))*+)@",
        keep=lambda m: not _PLAIN_USER_RE.fullmatch(m.group("s")),
    ),
)

# (Where a rule's look-behind would come first, it comes after the literal or the first
# letters it guards, reading the same character: the same matches, and the regex engine
# skips to where the literal is instead of trying the whole pattern at every character.)

# A command-line value: up to white space, a quote, a tag, or an escaped line break (text
# inside a JSON string: "--token X\\nnext" holds the value X).
_TOKEN = r"(?:[^\s\"'<\\]|\\(?![nrt]))+"

_CLI_RULES: tuple[Rule, ...] = (
    # --token X, --api-key=X, --hf_token "X"
    _regex_rule(
        "cli-secret",
        r"--(?<![\w\-]--)(?P<key>[A-Za-z][A-Za-z0-9_\-]*)(?:=|[ \t]+)"
        rf"(?P<s>\"[^\"\n]*\"|'[^'\n]*'|{_TOKEN})",
        keep=_secret_name,
    ),
    # argv lists: ["--wandb-api-key", "X"] (JSON, Python), [--token, X] (YAML flow) and
    # "- --token" then "- X" (a YAML block list): the item after a secret-named flag
    _regex_rule(
        "cli-secret",
        r"--(?<![\w\-]--)(?P<key>[A-Za-z][A-Za-z0-9_\-]*)(?:\\?[\"'])?[ \t]*"
        r"(?:,[ \t]*(?:\r?\n[ \t]*)?|\r?\n[ \t]*-[ \t]*)(?:\\?[\"'])?"
        r"(?P<s>(?!-)(?:[^\s\"',\[\]{}<\\]|\\(?![nrt\"']))+)",
        keep=_secret_name,
    ),
    # curl -u admin:pw / --user admin:pw
    _regex_rule(
        "cli-password", rf"-(?<!\S-)(?:u|-user|-proxy-user)[ \t]*[\"']?[^\s:\"']*:(?P<s>{_TOKEN})"
    ),
    # aws configure set aws_secret_access_key X; setenv HF_TOKEN X
    _regex_rule(
        "cli-secret",
        rf"set(?<!\wset)(?:env)?[ \t]+(?P<key>[A-Za-z_][A-Za-z0-9_.\-]*)[ \t]+(?P<s>{_TOKEN})",
        keep=_secret_name,
    ),
    # wandb login [--relogin] KEY
    _regex_rule(
        "wandb-key", rf"wandb(?<!\wwandb)[ \t]+login(?:[ \t]+--\w+)*[ \t]+(?P<s>(?!-){_TOKEN})"
    ),
    # .netrc: machine api.wandb.ai login user password KEY
    _regex_rule(
        "netrc-password", rf"login(?<!\wlogin)[ \t]+\S+[ \t]+password[ \t]+(?P<s>{_TOKEN})"
    ),
)

# A key and its separator: NAME=, NAME:, "NAME": , NAME =>, NAME :=
_ASSIGN_RE = re.compile(
    r"(?<![A-Za-z0-9_\-])(?<![A-Za-z0-9_\-]\.)(?P<q>[\"']?)(?P<key>[A-Za-z_][A-Za-z0-9_.\-]*+)(?P=q)"
    r"[ \t]*(?::=|=>|=(?!=)|:(?![:/]))[ \t]*"
)
_EMPTY_VALUES = frozenset({"", "None", "null", "NULL", "~"})
_ESCAPES_RE = re.compile(r"\\(?:[nrtbf\"\\/]|u[0-9a-fA-F]{4})")
_ALNUM_RE = re.compile(r"[A-Za-z0-9]")
_TAG_RE = re.compile(r"</?[A-Za-z][^<>]*>")


# What Redactor.name puts where a secret was in a path or name (a URL must stay stable, so
# a hash of the secret instead of MASK): as hidden as MASK.
_NAME_MASK_RE = re.compile(r"redacted-[0-9a-f]{6}(?![0-9A-Za-z])")


def is_masked(value: str) -> bool:
    """Whether ``value`` holds nothing but masks (and quotes, brackets, escapes): already hidden.

    A mask is :data:`MASK` or a name's ``redacted-3f2a9c`` (:data:`_NAME_MASK_RE`).

    ``["[REDACTED]", "[REDACTED]"]``, ``[REDACTED]\\n`` (a mask followed by a JSON
    escape) or ``[REDACTED]</code>`` is clean, so redacted text, and the JSON and HTML
    made from it, scan clean.
    """
    rest = _TAG_RE.sub(" ", _ESCAPES_RE.sub(" ", value)).replace(MASK, "")
    return not _ALNUM_RE.search(_NAME_MASK_RE.sub(" ", rest))


_CLOSE = {"[": "]", "{": "}", "(": ")"}
_ESCAPED_QUOTES = ('\\"', "\\'", "&quot;", "&#34;", "&#39;", "&#x27;")


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
    return j


def _line_end(text: str, i: int) -> int:
    j = text.find("\n", i)
    return len(text) if j < 0 else j


def _value_span(text: str, key_start: int, i: int, in_query: bool) -> tuple[int, int] | None:
    """Where the value that starts at ``text[i]`` ends: the whole value, not its first word."""
    if i >= len(text) or text[i] in "\r\n":
        # Nothing on the line: a YAML block value (lines indented deeper than the key's line,
        # or "- item" lines) is the value.
        line_start = text.rfind("\n", 0, key_start) + 1
        indent = len(text[line_start:key_start]) - len(text[line_start:key_start].lstrip())
        j = _line_end(text, i)
        start = end = j
        while j < len(text):
            nxt = _line_end(text, j + 1)
            line = text[j + 1 : nxt]
            body = line.lstrip()
            depth = len(line) - len(body)
            # deeper lines, and "- item" lines at any depth (a list may sit at the key's indent,
            # and hiding a sibling list is better than showing this one)
            if body and (depth > indent or body.startswith("- ")):
                end = nxt
                j = nxt
            else:
                break
        return (start + 1, end) if end > start else None
    c = text[i]
    if c in "\"'":
        j = _quoted_end(text, i)
        return (i + 1, j) if j > i + 1 else None
    # A quoted value inside a JSON string (\"…\") or escaped HTML (&quot;…&quot;, &#34;…&#34;).
    for q in _ESCAPED_QUOTES:
        if text.startswith(q, i):
            close = text.find(q, i + len(q))
            j = close if close >= 0 else _line_end(text, i)
            return (i + len(q), j) if j > i + len(q) else None
    if c in _CLOSE:
        return i, _bracket_end(text, i)
    if in_query:  # ?token=abc&x=1: the value ends at the next parameter
        m = re.compile(r"[^&#\s\"'<>]+").match(text, i)
        return (i, m.end()) if m else None
    # A bare value runs to the end of the line (``password = a b``, ``Basic <b64>``), and on
    # over a backslash line continuation.
    end = _line_end(text, i)
    while end < len(text) and _ends_in_backslash(text, i, end):
        end = _line_end(text, end + 1)
    for stop in ("</", "\\n", "\\r"):  # its HTML element ends, an escaped line break (JSON)
        at = text.find(stop, i, end)
        if at >= 0:
            end = at
    while end > i and text[end - 1] in " \t\r":
        end -= 1
    return (i, end) if end > i else None


def _ends_in_backslash(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]``, trailing white space aside, ends in a backslash."""
    while end > start and text[end - 1] in " \t\r":
        end -= 1
    return end > start and text[end - 1] == "\\"


def _assignment_spans(text: str) -> Iterator[tuple[int, int]]:
    covered = 0  # the end of the last value looked at: a key inside it is part of it
    parents: dict[int, str | None] = {}
    for m in _ASSIGN_RE.finditer(text):
        if m.start() < covered:
            continue
        key = m.group("key")
        if not is_secret_key(key) and not _nested_secret(text, m.start(), key, parents):
            continue
        in_query = m.start() > 0 and text[m.start() - 1] in "?&;"
        span = _value_after(text, m.start(), m.end(), in_query)
        if span is None:
            continue
        covered = span[1]
        value = text[span[0] : span[1]].strip()
        if value.strip("\"'") in _EMPTY_VALUES or is_masked(value):
            continue
        if _NAME_MASK_RE.match(value):
            # A name's secret, hashed (Redactor.name): a bare value runs to the end of the
            # line, over whatever follows the name in a table or a JSON document.
            continue
        yield span


def _value_after(text: str, key_start: int, i: int, in_query: bool) -> tuple[int, int] | None:
    """:func:`_value_span` of the value after a key's separator at ``text[i]``."""
    # Text inside a JSON string: an escaped line break before the value is white space.
    while text.startswith(("\\n", "\\r", "\\t"), i):
        i += 2
        while i < len(text) and text[i] in " \t":
            i += 1
    return _value_span(text, key_start, i, in_query)


# A key named only with what it belongs to (``wandb:`` then ``  key: X``; ``"hf": {"tokens":``)
_QUALIFIED = frozenset({"key", "keys", "tokens"})
_PARENT_LOOKBACK = 2048  # how far back a nested key's parent is looked for
_YAML_PARENT_RE = re.compile(
    r"[ \t]*(?:-[ \t]+)?[\"']?(?P<key>[A-Za-z_][\w.\-]*)[\"']?[ \t]*:[ \t]*"
)
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _nested_secret(text: str, key_start: int, key: str, memo: dict[int, str | None]) -> bool:
    """Whether a key such as ``key`` names a secret by the mapping it is in (``wandb:`` on a
    line above, indented less; or ``"wandb": {`` before it), as ``wandb.key`` would.

    ``memo`` keeps the parent found for each line (and each brace), so that siblings share
    one look back; every look back is bounded, so a long line costs no more than a short one.
    """
    if key.lower() not in _QUALIFIED:
        return False
    lo = max(0, key_start - _PARENT_LOOKBACK)
    line_start = text.rfind("\n", lo, key_start) + 1
    if (line_start > 0 or lo == 0) and text[line_start:key_start].strip(" \t-") == "":
        parent = _yaml_parent(text, line_start, key_start, memo)
    else:
        brace = text.rfind("{", lo, key_start)
        if brace < 0 or text.find("}", brace, key_start) >= 0:
            return False
        if -1 - brace not in memo:
            memo[-1 - brace] = _key_before(text, brace)
        parent = memo[-1 - brace]
    return parent is not None and is_secret_key(f"{parent}.{key}")


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
    key = text[j + 1 : end]
    return key if key[:1].isalpha() or key[:1] == "_" else None


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
        line = text[start:end]
        body = line.lstrip(" \t")
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


def _pair_spans(text: str) -> Iterator[tuple[int, int]]:
    for m in _NAME_FIELD_RE.finditer(text):
        if not is_secret_key(m.group("name")):
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
        span = _value_after(text, v.start(), v.end(), False)
        if span is not None and not is_masked(text[span[0] : span[1]]):
            yield span


# The secret access key written after an AWS key id ("AKIA… wJalrXUtnFEMI/K7MDENG/…"): the
# id alone is not the secret. A word of 30 or more base64 characters, mixed in kind.
_AWS_PAIR = (
    r"A(?<![A-Z0-9]A)(?:KIA|SIA)[0-9A-Z]{16}(?:\\?[\"'`]|[ \t,:;=|]|\\[nt]){1,6}"
    r"(?P<s>[A-Za-z0-9/+]{30,}={0,2})(?![A-Za-z0-9/+=])"
)


def _mixed(m: re.Match) -> bool:
    """A credential's look: at least two of lower case, upper case and digits."""
    s = m.group("s")
    return (
        sum((any(c.islower() for c in s), any(c.isupper() for c in s), any(c.isdigit() for c in s)))
        >= 2
    )


def _credential_like(m: re.Match) -> bool:
    """Not a word of the message ("Invalid token: expired"): a digit, or mixed case."""
    s = m.group("s")
    return any(c.isdigit() for c in s) or (s.lower() != s and s.upper() != s)


def _letters_and_digits(m: re.Match) -> bool:
    s = m.group("s")
    return any(c.isdigit() for c in s) and any(c.isalpha() for c in s)


# A provider's error message quoting the credential it refused: "AuthenticationError: Invalid
# API key: X", "Incorrect API key provided: X", "invalid token X".
_ERROR_RULES: tuple[Rule, ...] = (
    _regex_rule(
        "error-secret",
        r"[iIwWbBeErRmMuU](?<![A-Za-z0-9_].)(?i:(?:(?<=i)nvalid|(?<=i)ncorrect|(?<=w)rong|(?<=b)ad"
        r"|(?<=e)xpired|(?<=r)evoked|(?<=m)alformed|(?<=u)nknown|(?<=u)nauthori[sz]ed)"
        r"[ \t]+(?:[a-z0-9]+[ \t_\-]){0,2}?(?:key|token|secret|password|credentials?)"
        r"(?:[ \t]+provided)?)[ \t]*[:=][ \t]*[\"'`]?(?P<s>[^\s\"'`,;<\\]{8,}+)",
        keep=_credential_like,
    ),
    _regex_rule(
        "error-secret",
        r"[tTaA](?<![A-Za-z0-9_].)(?i:(?:(?<=t)oken|(?<=a)pi[ _\-]?key)[ \t]+)"
        r"[\"'`]?(?P<s>[A-Za-z0-9_\-]{16,}+)(?![./+])",
        keep=_letters_and_digits,
    ),
)


# Something every built-in rule needs to find anything. Text holding none of these (most
# trial and metric names) skips the rules: plain substring tests cost a microsecond, the
# rules fifty. tests/test_redact.py checks each shape gets through.
_TRIGGERS = (
    *("hf_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "k_live_"),
    *("k_test_", "AIza", "ya29.", "eyJ", "AKIA", "ASIA", "dtn_", "npm_", "xox", "PRIVATE KEY"),
    *("gsk_", "pplx-", "tvly-", "lsv2_", "r8_"),  # (a Discord webhook holds "://")
    *("://", "--", "-u", "set ", "set\t", "setenv", "login ", "login\t", "=", ":"),
)
# "sk-" not after a letter or digit (not task-…). The literal first, the look back after it:
# a pattern that starts with the look-behind has no literal prefix to search for, so the
# regex engine tries it at every character (~0.2 ms for a folder's 256 trial names joined,
# where every "task-" holds an "sk-"; 17 µs this way). The same matches: the look-behind
# sees exactly the character before the "sk-".
_SK_RE = re.compile(r"sk-(?<![A-Za-z0-9]sk-)")
# All the triggers in one automaton: one pass over the text instead of one substring test
# per trigger (~0.2 µs against ~1.2 µs for a trial's name; ~30 k names, tasks and exception
# types in the 1 GB archive's trials alone). Any trigger in the text gives a match.
_TRIGGER_AC = AhoCorasick(list(_TRIGGERS))
# Triggers of the rules that ignore case (a bearer token, "token X" in an error message).
_LOWER_TRIGGERS = ("bearer", "token", "api key", "api-key", "api_key", "apikey")


def may_hold_secret(text: str) -> bool:
    try:
        if _TRIGGER_AC.find_matches_as_indexes(text):
            return True
    except UnicodeEncodeError:  # a lone surrogate (a file name that is not UTF-8): one by one
        if any(t in text for t in _TRIGGERS):
            return True
    if "sk-" in text and _SK_RE.search(text) is not None:
        return True
    low = text.lower()
    return any(t in low for t in _LOWER_TRIGGERS)


BUILTIN_RULES: tuple[Rule, ...] = (
    _private_key_rule(),
    *(_regex_rule(kind, p) for kind, p in _SHAPES),
    _regex_rule("aws-secret-key", _AWS_PAIR, keep=_mixed),
    *_URL_RULES,
    *_CLI_RULES,
    *_ERROR_RULES,
    Rule("secret-assignment", _assignment_spans),
    Rule("secret-env-pair", _pair_spans),
)


def user_rule(n: int, pattern: str) -> Rule:
    """The user's ``n``-th pattern (1-based), compiled alone so it cannot break the others."""
    rx = re.compile(pattern)

    def spans(text: str) -> Iterator[tuple[int, int]]:
        for m in rx.finditer(text):
            if m.end() > m.start() and m.group(0) != MASK:
                yield m.span()

    return Rule(f"user-pattern:{n}", spans)
