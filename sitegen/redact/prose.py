"""Rules for notes' prose: a secret said after its name ("my wandb key is X") or before it
("hunter22 is the password").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sitegen.redact.assign import names_a_model_token
from sitegen.redact.names import is_secret_key, names_a_service
from sitegen.redact.rule import Rule
from sitegen.redact.shapes import WORD_END, looks_like_credential
from sitegen.redact.values import is_masked

# Notes' prose: "my wandb key is X", "W&B key: X", "OpenAI key - X", "the api key is X",
# "token was X", "password was X", "the DB_PASSWORD is X". A plain "key" names a secret after a
# service's name or "API" (not "cache key X"), a name glued before the word when the whole
# name is a secret's (hf_token, DB_PASSWORD; not monkey, sort_key); "token" and "secret" name
# one alone; the value follows "is", "was", ":", "=" or a dash (or, after a service's name,
# a blank), on the same line or the next. (Kept last: a span another rule finds too is
# reported as that rule's.)
# (Found from each word, the words before it looked at apart: a pattern that starts with an
# optional word is tried at every character.)
# A quoted attribute's value in a tag as a page escapes it (&lt;span title=&quot;a&gt;b&quot;&gt;)
_ENTITY_ATTRIBUTE = r"&quot;(?:(?!&quot;)[^\n]){0,100}+&quot;|&#39;(?:(?!&#39;)[^\n]){0,100}+&#39;"
# An element's attributes: up to 16 runs and quoted values (a value may hold ">")
_ATTRIBUTES = r"(?:\s(?:[^<>\"']++|\"[^\"]{0,100}+\"|'[^']{0,100}+'){0,16}+)?"
# Inline HTML elements that may wrap a value in prose, or the name before it
_INLINE_TAGS = (
    r"(?i:code|b|strong|kbd|em|tt|samp|i|mark|span|s|del|a|u|q|var|small|ins|sub|sup|abbr"
    r"|cite|font)"
)
# A quote as a page's entity, by name or number, in either case where HTML allows it
# (&quot;, &QUOT;, &apos;, &#34;, &#034;, &#x22;, &#X22;, &#39;, &#x27;)
_QUOTE_ENTITY = r"&(?:quot|QUOT|apos|#0*3[49]|#[xX]0*2[27]);"
# A quoted value in prose: in quotes, curly quotes, backticks, a page's entities, a JSON
# string's escaped quotes, bold or an inline element; up to 200 characters, a backslash
# escaping the next one. A quote left open runs to the line's end.
_PROSE_QUOTED = (
    r"\"(?:[^\"\\\n]|\\[^\n]){1,200}+\"|'(?:[^'\\\n]|\\[^\n]){1,200}+'|`[^`\n]{1,200}+`"
    r"|\\\"(?:[^\"\\\n]|\\\\|\\[^\"\n]){1,200}+\\\"|\u201c[^\u201d\n]{1,200}+\u201d"
    rf"|\u2018[^\u2019\n]{{1,200}}+\u2019|(?P<eq>{_QUOTE_ENTITY})"
    rf"(?:(?!{_QUOTE_ENTITY})[^\n]){{1,200}}+(?P=eq)"
    r"|\*\*[^*<`\n]{1,200}+\*\*|~~[^~<`\n]{1,200}+~~"
    rf"|(?P<qo><(?P<qt>{_INLINE_TAGS}){_ATTRIBUTES}>)[^<\n]{{1,200}}+</(?P=qt)>"
    r"|(?P<open>\\?[\"'\u201c])[^\"'\n\u201d]{1,200}+(?=\r?\n|\r?\Z)"
)
# What opens a value in quotes, not in emphasis, code or an element: a quote, plain, escaped,
# curly or as a page's entity
_REAL_QUOTE_RE = re.compile(rf"\\?[\"'\u201c\u2018]|{_QUOTE_ENTITY}")
# The delimiters around a quoted value (group 1 and 3; the value, 2)
_QUOTED_EDGES_RE = re.compile(r"(\\\"|\*\*|~~|&#?\w+;|.)(.*?)(\\\"|\*\*|~~|&#?\w+;|.)", re.S)
_PROSE_RE = re.compile(
    r"(?i:(?P<word>key|token|secret|passw(?:or)?d|passphrase|pwd|pw))"
    # (the name's closing markup: `HF_TOKEN` is, **password** was, <code>key</code> is)
    rf"(?:[*`~]{{1,3}}|\\?[\"']|</{_INLINE_TAGS}>|&lt;/{_INLINE_TAGS}&gt;)?"
    r"(?P<conn>[ \t]+(?i:is|was)[ \t]*:?|[ \t]*(?::|=>|->|=|\u2014|\u2013|-))?"
    r"(?P<gap>[ \t]+|[ \t]*\r?\n[ \t]*)"
    # a quoted value, blanks and escaped quotes included, to its closing quote on the line
    rf"(?:(?P<q>{_PROSE_QUOTED})"
    # (a quote, Markdown's emphasis, plain or escaped, or an inline HTML element, its
    # attributes' quoted values holding ">" or its tag over lines, or as a page escapes it,
    # may wrap the value)
    rf"|(?:[\"'`]|{_QUOTE_ENTITY}|(?P<em>\*{{1,3}}|_{{1,2}}|~~)|(?:\\[*_~`]){{1,3}}"
    rf"|<{_INLINE_TAGS}{_ATTRIBUTES}>\s{{0,4}}+"
    rf"|&lt;{_INLINE_TAGS}(?:\s(?:[^&\n]++|{_ENTITY_ATTRIBUTE}|&(?!gt;)){{0,16}}+)?&gt;){{0,4}}"
    r"(?P<s>[^\s\"'`<>\\]{6,}+))"
)
# What a value after the word is: a password's, any non-blank characters less a sentence's
# closing punctuation (and a quote's entity); a key's, token's or secret's, a word of letters,
# digits, "_" and "-" ending as a word does (:data:`WORD_END`), or base64 (16 or more of
# letters and digits, "/", "+", "=": an AWS secret key, a client secret)
_PROSE_CLOSERS = ".,;:)"
_PROSE_RUN_RE = re.compile(r"[^\s\"'`<>\\]{6,}+")
_PASSPHRASE_WORDS = 6  # words a quoted password may hold (more: a sentence quoted)
# Words that, all a quoted phrase holds, say whether a password is set, never what it is
_STATE_WORDS = frozenset(
    {"not", "no", "set", "unset", "required", "optional", "empty", "none", "null", "needed"}
    | {"given", "known", "shown", "changed", "the", "same", "yet", "any", "-", "n/a"}
)
_PROSE_QUOTE_RE = re.compile(rf"{_QUOTE_ENTITY}|&lt;")  # (and an escaped tag's "<")
_PROSE_QUOTE_AT_RE = re.compile(rf"[\"'`]|{_QUOTE_ENTITY}")
_PROSE_WORD_RE = re.compile(rf"[A-Za-z0-9_\-]{{6,}}+{WORD_END}")
_PROSE_BASE64_RE = re.compile(r"[A-Za-z0-9/+]{16,}+={0,2}")
# a path, a variable or a URL: where the secret is, not the secret
_PROSE_PLACES = ("/", "~", "$", "http")
# a relative path (data/train/v2/part0001): lower-case parts, where base64 mixes cases
_RELATIVE_PATH_RE = re.compile(r"[a-z0-9]++(?:/[a-z0-9]++)++")
# ... of which none is 16 or more hex characters, letters and digits both: no folder's name
# reads so, a secret's hex parts joined by "/" do (9f8e7d6c5b4a39281706/a1b2c3d4e5f60718)
_HEX_PART_RE = re.compile(r"(?<![^/])(?=[0-9]*+[a-f])(?=[a-f]*+[0-9])[0-9a-f]{16,}+(?![^/])")


# Runs of 16 or more hex characters joined by "." or ":" (9f8e…3928.a1b2…0718)
_HEX_JOINED_RE = re.compile(r"[0-9a-fA-F]{16,}+(?:[.:][0-9a-fA-F]{16,}+)++")


def _relative_path(run: str) -> bool:
    return _RELATIVE_PATH_RE.fullmatch(run) is not None and _HEX_PART_RE.search(run) is None


# What was done to a secret, not its value: "HF_TOKEN was rotated_2024_05", "my token is
# expired_20240501" (a state's word in lower case, maybe a date after it joined by "_"),
# after "is" or "was", unquoted (after ":" or "=" whatever follows is the value). A
# capital, "-", "." or a number that is no date reads as a password: Changed-2024, Set_42.
_STATE_RE = re.compile(
    r"(?:rotated|revoked|expired|changed|updated|reset|renewed|regenerated|removed|deleted"
    r"|replaced|disabled|enabled|created|issued|set|unset|missing|invalid|required)"
    r"(?:_(?:on|at|in|since|until))?(?:_(?:19|20)[0-9]{2}(?:_[0-9]{2}){0,2}|_(?:19|20)[0-9]{6})?"
)
# One quoted word after "password is" that says what the password is like, not what it is
# (the password is "wrong"): a state, a judgement, a truth value
_NO_PASSWORD_RE = re.compile(
    rf"(?:{_STATE_RE.pattern})|(?:in)?correct|(?:in)?valid|wrong|weak|strong|too|short|long"
    r"|true|false|yes|no|on|off|ok|none|null|empty|blank|default|hidden|secret|hashed"
    r"|encrypted|plain(?:text)?|unknown|same|different|mismatch(?:ed)?|accepted|rejected"
)
_PROSE_BEFORE_RE = re.compile(
    r"(?:(?<![A-Za-z&])(?P<svc>[A-Za-z][A-Za-z&]*+)[ \t]+)?(?P<api>(?i:api)[ _\-]?)?\Z"
)
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_GLUED_REACH = 48  # how far back a name glued before the word is read


def _glued_name(text: str, start: int, end: int) -> str:
    """The name ending at ``text[end]`` that runs back over word characters from ``start``."""
    j, lo = start, max(0, start - _GLUED_REACH)
    while j > lo and text[j - 1] in _WORD_CHARS:
        j -= 1
    return text[j:end]


def _password_word(word: str) -> bool:
    """Whether ``word`` (lower case) names a password: password, passwd, pwd, pw, passphrase."""
    return word.startswith("pass") or word in ("pwd", "pw")


# A quote inside a password, before a word's character (hunter"22): no closing quote
_GLUED_QUOTE_RE = re.compile(r"(?:[\"'](?=\w)[^\s\"'`<>\\]{1,200}+){1,4}+")
# A quoted passphrase broken over a line: the next line, up to the quote closing it
_NEXT_LINE_RE = re.compile(r"\r?\n[ \t]*+[^\"'\n\u201d]{1,200}+")
_CLOSING_QUOTE = {'"': '"', "'": "'", "\u201c": "\u201d"}


def _wrapped_quote_end(text: str, opener: str, i: int) -> int | None:
    """Where a quote ``opener`` left open at the line's end ``text[i]`` closes at the end of
    the next line's run of characters that are no quote (None if it does not). A "'"
    between a word's characters is an apostrophe (the user's), no closing quote."""
    m = _NEXT_LINE_RE.match(text, i)
    if m is None or (
        opener == "'"
        and text[m.end() - 1 : m.end()].isalnum()
        and text[m.end() + 1 : m.end() + 2].isalnum()
    ):
        return None
    if opener in ('\\"', "\\'"):  # (escaped, in a JSON string or a repr: its run ends at the "\\")
        return m.end() - 1 if text.startswith(opener, m.end() - 1) else None
    return m.end() if text.startswith(_CLOSING_QUOTE[opener], m.end()) else None


# A number, maybe with an exponent and a unit, or a few joined by "/" (a ratio, a rate); a
# unit from a list, not any letters: 123qwe and 123abc are common passwords
_UNIT = r"(?:%|[munµμ]?s|min|[mkKMGT]?(?:Wh?|Hz|i?B)|[kKMGT]b|m?V|m?A|C|dB|it|tok|fps|rpm)"
_NUMBER = r"[-+]?(?:\d++\.?\d*+|\.\d++)(?:[eE][-+]?\d++)?"
_METRIC_RE = re.compile(rf"{_NUMBER}{_UNIT}?(?:/(?:{_NUMBER})?{_UNIT}?)*+")


def _prose_value(word: str, value: str, svc: str | None, quoted: bool = False) -> bool:
    """Whether ``value``, after ``word`` and a connective, is a secret.

    After "key", "token" or "secret" a credential's word (16 or more letters and digits); a
    password's, 6 or more characters with a digit (hunter2), or in quotes a few words
    (``"correct horse battery"``: a passphrase; a quoted sentence is not one); with
    ``quoted`` (in quotes, not emphasis or code), one word too (``"correcthorse"``), but a
    state's (``"expired"``). Lower-case
    words joined by "_" are such a value too when they hold a digit
    (my_secret_token_value_abc123): a name a
    sentence gives, of where a secret is, has none (config_file_path, secrets_manager); only
    a model's token named as one keeps its name (next token = im_start_token123456,
    :func:`names_a_model_token`).
    """
    if _password_word(word):
        words = value.lower().split()
        if len(words) > 1 or (quoted and words and not _NO_PASSWORD_RE.fullmatch(words[0])):
            return (
                len(words) <= _PASSPHRASE_WORDS
                and not _STATE_WORDS.issuperset(words)
                and "[redacted" not in value.lower()  # (what was hidden in it is no phrase's)
                and any(c.isalnum() for c in value)
            )
        # (after "pw" or "pwd" a letter too, and no number with an exponent or a unit:
        # pw: 0.123456, pw: 3.4e-05, pw: 1.5GiB, pw: 250W/300W are a metric's)
        letter = word.startswith("pass") or (
            any(c.isalpha() for c in value) and _METRIC_RE.fullmatch(value) is None
        )
        return len(value) >= 6 and any(c.isdigit() for c in value) and letter
    return looks_like_credential(value) and not (
        svc is not None and names_a_model_token(f"{svc} {word}", value)
    )


# A password's name inside a bare value (hunter22,password is Y; X-passwd: Y)
_NAME_IN_RUN_RE = re.compile(r"(?i:passw(?:or)?d|passphrase|pwd|pw)")


def _before_next_name(text: str, start: int, run: str) -> str:
    """``run`` (a bare password at ``text[start]``) up to a password's name in it said with
    its connective (``pw = hunter22,password is Y``: ``hunter22``, a "," or ";" before the
    name dropped), so the name and its own value are read next, not swallowed."""
    for n in _NAME_IN_RUN_RE.finditer(run, 1):
        if _said_name_at(text, start + n.start()):
            return run[: n.start()].rstrip(",;")
    return run


# A password's name, after any "," or ";" a cut before it dropped
_NAME_AFTER_RE = re.compile(r"[,;]*+(?=(?i:passw(?:or)?d|passphrase|pwd|pw))")


def _said_name_at(text: str, i: int) -> bool:
    """Whether a password's name said with its connective starts at ``text[i]`` (after any
    "," or ";")."""
    name = _NAME_AFTER_RE.match(text, i)
    said = _PROSE_RE.match(text, name.end()) if name is not None else None
    return said is not None and said.group("conn") is not None


def _prose_value_span(text: str, m: re.Match, word: str) -> tuple[int, int] | None:
    """Where the value in ``m``'s run of non-blank characters ends, by the ``word`` before it
    (:data:`_PROSE_BASE64_RE`); None when the run is a place, or no value. A quoted value
    (``m``'s group ``q``) is a password's whole, another word's first run."""
    if (quoted := m.group("q")) is not None:
        # (a quote left open: to the line's end)
        start, end = m.start("q") + len(m.group("open") or " "), m.end("q")
        if m.group("qt") is not None:  # (an element: its tags, however long, are the edges)
            start, end = m.end("qo"), m.end("q") - len(m.group("qt")) - 3
        elif m.group("open") is None and (e := _QUOTED_EDGES_RE.fullmatch(quoted)) is not None:
            start, end = m.start("q") + e.end(1), m.start("q") + e.start(3)
        if (opener := m.group("open")) is not None and _password_word(word):
            end = _wrapped_quote_end(text, opener, m.end("q")) or end
        while end > start and text[end - 1] in " \t\r":
            end -= 1
        if text.startswith(_PROSE_PLACES, start):
            return None
        if _password_word(word):
            return start, end
        first = _PROSE_RUN_RE.match(text, start, end)
        if first is None:
            return None
        start, run = first.start(), first.group(0)
    else:
        start, run = m.start("s"), m.group("s")
    if run.startswith(_PROSE_PLACES):
        return None
    if (q := _PROSE_QUOTE_RE.search(run)) is not None:
        run = run[: q.start()]
    run = run.split("](", 1)[0]  # (a Markdown link's text ends there)
    if _password_word(word):
        run = _before_next_name(text, start, run)
    em = m.group("em")
    if em and (bare := run.rstrip(_PROSE_CLOSERS)).endswith(em):  # (its closing emphasis)
        run = bare[: -len(em)]
    if _password_word(word) and (glued := _GLUED_QUOTE_RE.match(text, start + len(run))):
        run += glued.group(0)  # (a quote inside the password: hunter"22)
    if not _PROSE_QUOTE_AT_RE.match(text, start + len(run)):  # (in quotes, all is the value)
        run = run.rstrip(_PROSE_CLOSERS)
    if _password_word(word):
        return (start, start + len(run)) if run else None
    if _PROSE_BASE64_RE.fullmatch(run) and any(c in run for c in "/+=") and not _relative_path(run):
        return start, start + len(run)
    if _HEX_JOINED_RE.fullmatch(run):  # (hex parts joined by "." or ":": no name's parts)
        return start, start + len(run)
    w = _PROSE_WORD_RE.match(text, start)
    return w.span() if w is not None else None


def _said_value(word: str, value: str, svc: str | None, quoted: bool, loose: bool) -> bool:
    """:func:`_prose_value`, but a password's value in quotes with no connective before it
    (``loose``) starts with a word of a password's look (password "hunter22 x", password
    "Zk3vQ9 mW1x"), or is a passphrase's words: not password "mismatch", nor password
    "must hold a digit", a message's words."""
    if not (loose and _password_word(word)):
        return _prose_value(word, value, svc, quoted)
    if word.startswith("passphrase") and _prose_value(word, value, svc, quoted):
        return True
    first = value.split(maxsplit=1)[:1]
    return bool(first) and _prose_value(word, first[0], svc)


def _prose_spans(text: str) -> Iterator[tuple[int, int]]:
    pos = 0
    while (m := _PROSE_RE.search(text, pos)) is not None:
        pos = m.end()
        word = m.group("word").lower()
        before = _PROSE_BEFORE_RE.search(text, max(0, m.start() - 48), m.start())
        svc, api = (before.group("svc"), before.group("api")) if before else (None, None)
        start = m.start() - len(api or "")
        glued = text[start - 1 : start] in _WORD_CHARS  # (nothing before the text's start)
        if glued and not is_secret_key(_glued_name(text, start, m.end("word"))):
            pos = m.start("s") if m.group("q") is None else m.start("q") + 1
            continue  # monkey, sort_key (hf_token, DB_PASSWORD name one)
        service = svc is not None and (svc.lower() == "w&b" or names_a_service(svc.lower()))
        # (a bare "token X", "api key X" with no service before: the error rule's)
        named = word != "key" or glued or api is not None or service
        # (a password's word only with a connective: "login user password X" is .netrc's; or
        # before a value in quotes on its line: password "hunter22)
        quoted = m.group("q") is not None and _REAL_QUOTE_RE.match(m.group("q")) is not None
        said = (
            m.group("conn") is not None
            or (service and not _password_word(word))
            or (quoted and word.startswith("pass") and "\n" not in m.group("gap"))
        )
        span = _prose_value_span(text, m, word) if named and said else None
        value = text[span[0] : span[1]] if span is not None else ""
        conn = m.group("conn")
        worded = conn is None or conn.split(":")[0].strip().lower() in ("is", "was")
        if worded and m.group("q") is None and _STATE_RE.fullmatch(value):
            span = None  # (a state, not a value: "HF_TOKEN was rotated_2024_05")
        if (
            word in ("pw", "pwd")
            and (conn or "").strip() == "="
            and m.group("q") is None
            and any(c in value for c in _CODE_MARKS)
        ):
            span = None  # (code: pw = torch.randn(4, 4); pw = hunter22 is a password)
        # (a bare password cut before a name said after it is one, however short: Xk9password
        # is Y)
        cut = span is not None and _password_word(word) and _said_name_at(text, span[1])
        if (
            span is not None
            and (cut or _said_value(word, value, svc, quoted, conn is None))
            and not is_masked(value)
        ):
            yield span
            # (read on after the value, not after the run it was cut from: "pw: X&#x22;pw: Y")
            pos = min(pos, span[1])
        else:  # (the run may be the next sentence's word: "secret -\npassword was X")
            pos = m.start("s") if m.group("q") is None else m.start("q") + 1


# What makes a bare value after "pw =" code: a call, an attribute, a subscript
_CODE_MARKS = ".([{"

PROSE_RULE = Rule("prose-secret", _prose_spans)


# A password said before its name: "hunter22 is the password", "hunter22 was my old pwd",
# '"correct horse" is the passphrase'. Found from each name (a word alone, not db_password),
# the value and "is" or "was", with up to three words between, looked for in the
# _BEFORE_REACH characters before it; the name ends its clause (the password file, hash, …
# is no password).
# (or the name closing emphasis written with underscores: _hunter22 is the password_; not
# before a mask: one there, where a word glued by "_" was, would read so on a second hiding)
_PASSWORD_NAME_RE = re.compile(
    r"(?<![\w\-])(?i:passw(?:or)?d|passphrase|pwd)"
    r"(?:(?![\w\-])|(?=_{1,2}(?![\w\-]|\[REDACTED)))"
)
_BEFORE_REACH = 160
# (the value after a blank, "(", "[", an opening quote, a tag's ">" or emphasis, and maybe
# in an element; the name maybe in emphasis, code or an element: hunter22 is the **password**)
_VALUE_BEFORE_RE = re.compile(
    r"(?<![^\s(\[\"'>*_])(?P<s>[^\s\"'`<>\\()\[\]]{6,80}+|\"[^\"\n]{1,100}+\"|'[^'\n]{1,100}+'"
    rf"|`[^`\n]{{1,100}}+`)(?:</{_INLINE_TAGS}>)?[,;:]?[ \t]+(?i:is|was)"
    rf"(?:[ \t]++[A-Za-z]++(?:'s)?){{0,3}}[ \t]++(?:[*_`]{{1,3}}|<{_INLINE_TAGS}>)?\Z"
)
# Words after the name that go on the sentence, not the name (the password for the db); a
# closing mark before them may close the value's own emphasis (*X is the password* he said),
# so it ends the clause: the value is hidden
# (a word: letters alone, so a value there, hunter22, a mask, reads as no sentence going on)
_AFTER_NAME_RE = re.compile(r"[ \t]++(?P<w>[A-Za-z]++)(?![\w\-])")
_AFTER_NAME_WORDS = frozenset(
    {"for", "of", "on", "to", "at", "in", "here", "now", "and", "but", "so", "that", "i", "we"}
    | {"you", "please", "again", "too", "as", "then"}
)


def _prose_before_spans(text: str) -> Iterator[tuple[int, int]]:
    for m in _PASSWORD_NAME_RE.finditer(text):
        after = _AFTER_NAME_RE.match(text, m.end())
        if after is not None and after.group("w").lower() not in _AFTER_NAME_WORDS:
            continue
        v = _VALUE_BEFORE_RE.search(text, max(0, m.start() - _BEFORE_REACH), m.start())
        if v is None:
            continue
        start, end = v.span("s")
        if text[start] in "\"'`":
            start, end = start + 1, end - 1
        else:
            end = start + len(text[start:end].rstrip(_PROSE_CLOSERS))
        value = text[start:end]
        if (
            not value.startswith(_PROSE_PLACES)
            and _prose_value("password", value, None)
            and not is_masked(value)
        ):
            yield start, end


PROSE_BEFORE_RULE = Rule("prose-secret", _prose_before_spans)
