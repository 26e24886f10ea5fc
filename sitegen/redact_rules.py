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

MASK = "[REDACTED]"


# --- secret names --------------------------------------------------------------------------


def _words(spaced: str) -> frozenset[str]:
    return frozenset(spaced.split())


_WORD_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# Any key holding one of these words names a secret.
_SECRET_WORDS = _words(
    "secret secrets password passwords passwd pwd passphrase credential credentials creds"
    " apikey apikeys secretkey accesskey privatekey passkey authtoken accesstoken"
)
# These name a secret when they are the key's last word (``Authorization``, ``X-Amz-Signature``).
_SECRET_LAST_WORDS = _words("auth authorization signature sig cookie cookies")
# Words that, before ``key``/``tokens``, make it a credential (``api_key``, ``hf_tokens``).
_CREDENTIAL_QUALIFIERS = _words(
    "api secret access private ssh signing encryption license auth master client service"
    " account deploy gpg pgp rsa hmac jwt session app bot webhook admin consumer refresh"
    " bearer oauth personal csrf xsrf user wandb openai anthropic hf huggingface aws gcp"
    " azure stripe daytona modal together fireworks gemini google github gh gitlab slack"
    " sentry pinecone cohere mistral groq tavily serper e2b langsmith langchain nvidia ngc"
    " replicate deepseek xai openrouter perplexity runpod"
)
# Words that, beside a singular ``token``, make it a count or a setting (``pad_token_id``).
_TOKEN_SETTING_WORDS = _words(
    "id ids idx index indices level type types pad eos bos unk sep cls mask count counts len"
    " length lengths limit limits budget max min num n per total usage entropy logprob"
    " logprobs prob probs ratio rate frac fraction mean avg sum stop start end special vocab"
    " embedding embeddings position positions window kl loss reward rewards weight weights"
    " time latency throughput tps think thinking chat template text str k p"
)
# Upper-case ``*_KEY`` variables are secrets unless one of these says what kind of key it is.
_HARMLESS_KEY_QUALIFIERS = _words(
    "sort primary foreign cache partition hash dict map lookup group shard join index row"
    " column col unique rng prng random seed metric sample order public pub routing dedup"
    " idempotency object"
)


def is_secret_key(key: str) -> bool:
    """A name such as ``WANDB_API_KEY``, ``hf_tokens`` or ``db_pass``; ``max_tokens`` is not one.

    The last dotted component is split into words (``_``, ``-``, camelCase);
    a word must *be* a secret word, so ``sort_key``, ``monkey``, ``tokenizer``
    and ``author`` stay visible.
    """
    tail = key.rsplit(".", 1)[-1]
    raw = _WORD_RE.findall(tail)
    words = [w.lower() for w in raw]
    if not words:
        return False
    if any(w in _SECRET_WORDS for w in words) or words[-1] in _SECRET_LAST_WORDS:
        return True
    if len(words) > 1 and words[-1] == "pass":  # db_pass, SMTP_PASS (not pass_k)
        return True
    for i, w in enumerate(words):
        before = words[:i]
        qualified = bool(before) and before[-1] in _CREDENTIAL_QUALIFIERS
        if w == "token" and not (set(words) & _TOKEN_SETTING_WORDS):
            return True
        if w in ("tokens", "keys") and qualified:
            return True
        if w == "key":
            if qualified:
                return True
            # WANDB_KEY, FOO_SERVICE_KEY: an upper-case variable ending in KEY is a secret
            # unless it says it is some other kind of key (SORT_KEY, PRNG_KEY).
            if before and i == len(words) - 1 and raw[i].isupper() and raw[i - 1].isupper():
                return before[-1] not in _HARMLESS_KEY_QUALIFIERS
        for suffix in ("keys", "key", "tokens", "token"):  # apikey, hftoken as one word
            if w.endswith(suffix) and w[: -len(suffix)] in _CREDENTIAL_QUALIFIERS:
                return True
        # PGPASSWORD, MYSQL_ROOTPASSWORD, CLIENTSECRET: a secret word at a one-word name's end
        if w.endswith(_SECRET_SUFFIXES):
            return True
        # DBPASS, SMTPPASS (not bypass, compass): "pass" after a service's name
        if w.endswith("pass") and w[:-4] in _PASS_QUALIFIERS:
            return True
    return False


_SECRET_SUFFIXES = ("password", "passwords", "passwd", "passphrase", "secret", "secrets")
_PASS_QUALIFIERS = _CREDENTIAL_QUALIFIERS | _words(
    "db pg postgres mysql sql mongo redis smtp ftp sftp ldap root proxy mail"
)


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
    ("github-token", r"(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{20,}"),
    ("github-token", r"(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{30,}"),
    ("gitlab-token", r"(?<![A-Za-z0-9])glpat-[A-Za-z0-9_\-]{20,}"),
    ("hf-token", r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{20,}"),
    ("openai-key", r"(?<![A-Za-z0-9])sk-(?:proj-|ant-|or-)?[A-Za-z0-9_\-]{20,}"),
    ("stripe-key", r"(?<![A-Za-z0-9])[spr]k_(?:live|test)_[A-Za-z0-9]{10,}"),
    ("google-api-key", r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{30,}"),
    ("google-oauth-token", r"(?<![A-Za-z0-9])ya29\.[0-9A-Za-z_\-]{20,}"),
    ("jwt", r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"),
    ("aws-access-key-id", r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])"),
    ("daytona-key", r"(?<![A-Za-z0-9])dtn_[A-Za-z0-9]{20,}"),
    ("npm-token", r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{30,}"),
    ("slack-token", r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9\-]{10,}"),
    # providers an agent's LLM or tools call (Groq, Perplexity, Tavily, LangSmith, Replicate)
    ("groq-key", r"(?<![A-Za-z0-9])gsk_[A-Za-z0-9]{20,}"),
    ("perplexity-key", r"(?<![A-Za-z0-9])pplx-[A-Za-z0-9]{20,}"),
    ("tavily-key", r"(?<![A-Za-z0-9])tvly-[A-Za-z0-9_\-]{16,}"),
    ("langsmith-key", r"(?<![A-Za-z0-9])lsv2_(?:pt|sk)_[A-Za-z0-9_]{20,}"),
    ("replicate-token", r"(?<![A-Za-z0-9])r8_[A-Za-z0-9]{20,}"),
    (
        "discord-webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_\-]+",
    ),
    (
        "slack-webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]+",
    ),
    ("bearer-token", r"(?i:\bbearer)\s+(?P<s>[A-Za-z0-9._~+/\-]{16,}=*)"),
)


def _private_key_rule() -> Rule:
    """PEM private-key blocks, under any key or none; an unterminated block runs to the end."""
    return _regex_rule(
        "private-key",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----"
        r"(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|.*)",
        re.S,
    )


_URL_RULES: tuple[Rule, ...] = (
    # scheme://user:password@host (the user may be empty: redis://:pw@host; the password may
    # hold "/"); host:port/path@x is not one (the "password" would be a port).
    _regex_rule(
        "url-password",
        r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@?#\"'<>\\]*:"
        r"(?P<s>(?!\d+(?:[/?#\s]|$)|/)(?:[^\s@\"'<>\\]|\\(?![nrt]))+)@",
    ),
    # https://TOKEN@host: a user part that is not a plain short user name (git@, ubuntu@).
    _regex_rule(
        "url-token",
        r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://(?P<s>[^\s:/@?#\"'<>\\]+)@",
        keep=lambda m: not _PLAIN_USER_RE.fullmatch(m.group("s")),
    ),
)

# A command-line value: up to white space, a quote, a tag, or an escaped line break (text
# inside a JSON string: "--token X\\nnext" holds the value X).
_TOKEN = r"(?:[^\s\"'<\\]|\\(?![nrt]))+"

_CLI_RULES: tuple[Rule, ...] = (
    # --token X, --api-key=X, --hf_token "X"
    _regex_rule(
        "cli-secret",
        r"(?<![\w\-])--(?P<key>[A-Za-z][A-Za-z0-9_\-]*)(?:=|[ \t]+)"
        rf"(?P<s>\"[^\"\n]*\"|'[^'\n]*'|{_TOKEN})",
        keep=_secret_name,
    ),
    # curl -u admin:pw / --user admin:pw
    _regex_rule(
        "cli-password", rf"(?<!\S)(?:-u|--user|--proxy-user)[ \t]*[\"']?[^\s:\"']*:(?P<s>{_TOKEN})"
    ),
    # aws configure set aws_secret_access_key X; setenv HF_TOKEN X
    _regex_rule(
        "cli-secret",
        rf"\b(?:set|setenv)[ \t]+(?P<key>[A-Za-z_][A-Za-z0-9_.\-]*)[ \t]+(?P<s>{_TOKEN})",
        keep=_secret_name,
    ),
    # wandb login [--relogin] KEY
    _regex_rule("wandb-key", rf"\bwandb[ \t]+login(?:[ \t]+--\w+)*[ \t]+(?P<s>(?!-){_TOKEN})"),
    # .netrc: machine api.wandb.ai login user password KEY
    _regex_rule("netrc-password", rf"\blogin[ \t]+\S+[ \t]+password[ \t]+(?P<s>{_TOKEN})"),
)

# A key and its separator: NAME=, NAME:, "NAME": , NAME =>, NAME :=
_ASSIGN_RE = re.compile(
    r"(?<![A-Za-z0-9_\-])(?P<q>[\"']?)(?P<key>[A-Za-z_][A-Za-z0-9_.\-]*)(?P=q)"
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
    while end < len(text) and text[i:end].rstrip().endswith("\\"):
        end = _line_end(text, end + 1)
    for stop in ("</", "\\n", "\\r"):  # its HTML element ends, an escaped line break (JSON)
        at = text.find(stop, i, end)
        if at >= 0:
            end = at
    while end > i and text[end - 1] in " \t\r":
        end -= 1
    return (i, end) if end > i else None


def _assignment_spans(text: str) -> Iterator[tuple[int, int]]:
    for m in _ASSIGN_RE.finditer(text):
        if not is_secret_key(m.group("key")):
            continue
        in_query = m.start() > 0 and text[m.start() - 1] in "?&;"
        i = m.end()
        # Text inside a JSON string: an escaped line break before the value is white space.
        while text.startswith(("\\n", "\\r", "\\t"), i):
            i += 2
            while i < len(text) and text[i] in " \t":
                i += 1
        span = _value_span(text, m.start(), i, in_query)
        if span is None:
            continue
        value = text[span[0] : span[1]].strip()
        if value.strip("\"'") in _EMPTY_VALUES or is_masked(value):
            continue
        if _NAME_MASK_RE.match(value):
            # A name's secret, hashed (Redactor.name): a bare value runs to the end of the
            # line, over whatever follows the name in a table or a JSON document.
            continue
        yield span


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


def may_hold_secret(text: str) -> bool:
    try:
        if _TRIGGER_AC.find_matches_as_indexes(text):
            return True
    except UnicodeEncodeError:  # a lone surrogate (a file name that is not UTF-8): one by one
        if any(t in text for t in _TRIGGERS):
            return True
    return ("sk-" in text and _SK_RE.search(text) is not None) or "bearer" in text.lower()


BUILTIN_RULES: tuple[Rule, ...] = (
    _private_key_rule(),
    *(_regex_rule(kind, p) for kind, p in _SHAPES),
    *_URL_RULES,
    *_CLI_RULES,
    Rule("secret-assignment", _assignment_spans),
)


def user_rule(n: int, pattern: str) -> Rule:
    """The user's ``n``-th pattern (1-based), compiled alone so it cannot break the others."""
    rx = re.compile(pattern)

    def spans(text: str) -> Iterator[tuple[int, int]]:
        for m in rx.finditer(text):
            if m.end() > m.start() and m.group(0) != MASK:
                yield m.span()

    return Rule(f"user-pattern:{n}", spans)
