"""Rules for a password a command takes by a flag of its own (``mysql -pX``, ``sshpass -p
X``): the flag names a password only after that command, as ``-p`` is a port or a path after
others (``ssh -p 22``, ``mkdir -p``); and for a secret a command writes into a file that
holds one (``echo X > ~/.cache/huggingface/token``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sitegen.redact.rule import Rule, regex_rule
from sitegen.redact.shell import OPEN_QUOTE, OPENED, VALUE
from sitegen.redact.values import is_masked

# What the command line says before a flag: up to a command separator or a line break (in
# JSON, an escaped one; a page's entity but &amp; is none), bounded; from the command's
# name, or from the value before
_REST = r"[ \t](?:(?:[^\n;|&\\]|\\(?![nr])|&(?!amp;)#?\w{2,8};){0,256}?[ \t])??"
# How far after the command's name its flags are looked for (a search from each name reads
# a bounded part of its line)
_REACH = 512
# A flag's value: in quotes, bare, or a quote left open (its first word)
_VALUES = (
    rf"(?P<s>(?!-)(?:{VALUE}))",
    rf"(?P<q>{OPEN_QUOTE})(?P<s>{OPENED}|(?={OPEN_QUOTE}))",
)

# Each command, and what stands after it before its password: mysql's (mysqldump's,
# mariadb's …) -p glued to it (-p alone asks for it; a word after it is the database);
# sshpass's -p among its own options (after them, -p is the command's: sshpass -f file ssh
# -p 22); redis-cli's -a (or --pass); ssh-keygen's old and new passphrases, -P and -N
_BEFORE = {
    "mysql": rf"{_REST}-p",
    "sshpass": r"(?:[ \t]+-(?:[fdP][ \t]*+[^\s\-]\S*+|[ehvV]))*+[ \t]+-p[ \t]*",
    "redis-cli": rf"{_REST}(?:-a|--pass)(?:[ \t]+|=)",
    "ssh-keygen": rf"{_REST}-[NP][ \t]*",
}
_FLAG_RES = {c: tuple(re.compile(before + v) for v in _VALUES) for c, before in _BEFORE.items()}
_NAMES = {
    "mysql": ("mysql", "mysqldump", "mysqladmin", "mariadb", "mariadb-dump"),
    **{c: (c,) for c in ("sshpass", "redis-cli", "ssh-keygen", "htpasswd")},
}
_COMMAND_OF = {name: c for c, names in _NAMES.items() for name in names}
# A command's name, not the end of a longer word (a folder's path before it is its) nor the
# start of one (each look back after the name's first letter, for the regex engine to skip
# to it)
_COMMAND_RE = re.compile(
    "|".join(
        rf"{n[0]}(?<![\w\-.]{n[0]}){re.escape(n[1:])}(?![\w\-])"
        for n in sorted(_COMMAND_OF, key=len, reverse=True)
    )
)
# htpasswd's options (-C and -r take a number), then the words before the password: the
# file and the user (-n names no file, -b gives the password on the line)
_HTPASSWD_FLAGS_RE = re.compile(r"(?:[ \t]+-[A-Za-z]++(?:[ \t]+[0-9]++)?)++")
_HTPASSWD_VALUE_RES = tuple(re.compile(rf"[ \t]+{v}") for v in _VALUES)
_BLANKS_RE = re.compile(r"[ \t]++(?!-)")

# A page's entities for a double quote (a backslash before one escapes it, as in the
# shell's "a\"b") and for a single quote
_DOUBLE_ENTITIES = ("&quot;", "&#34;", "&#034;", "&#x22;")
_SINGLE_ENTITIES = ("&#39;", "&#039;", "&#x27;", "&apos;")
# What stands after a quote that opens a part, not after one that closes a JSON or Python
# string (-pX", "next": …; a page's &quot;, &quot;next&quot;)
_OPENS = r"(?![\s,:}\])])"
# A word as the shell reads it, its parts glued: bare characters, a part in quotes (JSON's
# escaped ones, a page's entities for them), an expansion (${…}, $(…), `…`), an escaped
# character (a JSON string's "\\ " is the shell's "\ "), a quote never closed (the rest of
# its word); up to a blank or a command separator (;, |, &&, a page's &amp;&amp;) outside
# them. A quote opens a part only where :data:`_OPENS` says.
_SHELL_WORD_RE = re.compile(
    r"(?:[^\s\"'<\\&;|$`]++"
    r"|\\\"(?:[^\"\\\n]|\\\\\\\"|\\[^\"\n])*+\\\""
    r"|\"" + _OPENS + r"(?:[^\"\\\n]|\\[^\n])*+\""
    r"|'"
    + _OPENS
    + r"[^'\n]*+'"
    + "".join(rf"|{e}{_OPENS}(?:\\{e}|(?!{e})[^\n])*+{e}" for e in _DOUBLE_ENTITIES)
    + "".join(rf"|{e}{_OPENS}(?:(?!{e})[^\n])*+{e}" for e in _SINGLE_ENTITIES)
    + r"|\$'(?:[^'\\\n]|\\.)*+'"
    r"|\$\{[^{}\n]*+\}|\$\([^()\n]*+\)|`[^`\n]*+`|\$(?![{('])"
    r"|\\\\(?:[ \t;|]|&(?!#?\w{2,8};))"
    r"|\\(?:&(?:[A-Za-z]{2,8}|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});|[^nrt\n])"
    r"|&(?!&|amp;&|(?:quot|#0?34|#x22|#0?39|#x27|apos|lt);)"
    r"(?:[A-Za-z]{2,8};|#[0-9]{1,7};|#[xX][0-9a-fA-F]{1,6};)?"
    r"|[\"']" + _OPENS + r"[^\s\"'<\\]*+)++"
)
_SEPARATOR_RE = re.compile(r"[;|]|&&|&amp;&amp;")
# An empty quoted part: the shell's, or the doubled quote YAML's single-quoted strings, CSV
# and SQL write for one (sshpass -p ''a;b'' in 'run: ...'): which it is cannot be told, so
# a separator after one ends nothing (the safe side)
_DOUBLED_RE = re.compile(r"''|\"\"")
_QUOTE_RE = re.compile(r"\\?[\"']|&(?:quot|#0?34|#x22|#0?39|#x27|apos);")


def _word_end(text: str, at: int) -> int:
    """Where the shell's word at ``at`` ends, read up to :data:`_REACH` characters."""
    word = _SHELL_WORD_RE.match(text, at, at + _REACH)
    return at if word is None else word.end()


def _value_end(text: str, start: int, end: int) -> int:
    """Where the value at ``start`` (matched to ``end``) ends: where the shell's word holding
    it ends (``ab"c;d"e`` is one word, ``${PW:-a;b}`` too), at a ";", "|" or "&&" outside
    quotes (``"a"b;ls``); else never short of the value as matched (``it&apos;s;X``, a
    quote left open: one value, hidden whole, on the safe side)."""
    word = _word_end(text, start)
    if _SEPARATOR_RE.match(text, word) and not _DOUBLED_RE.search(text, start, word):
        return word
    return max(end, word)


def _value_spans(text: str, m: re.Match, opened: bool) -> tuple[list[tuple[int, int]], int]:
    """The spans of the password ``m`` read, and where its word ends: in quotes opened before
    it (JSON's ``\\"…``, a quote never closed) what they hold, and a part glued after their
    closing quote (``\\"a\\"b``: the shell's word ``ab``) apart, so the quotes stay; else the
    value. Each maybe empty or hidden already (see :func:`_shown`)."""
    start, end = m.start("s"), m.end("s")
    if not opened:
        end = _value_end(text, start, end)
        return [(start, end)], end
    word = _word_end(text, m.start("q"))
    close = _QUOTE_RE.match(text, end) if word > end else None
    if close is None or close.end() >= word:
        return [(start, end)], max(end, word)
    return [(start, end), (close.end(), word)], word


def _shown(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans that hold something not hidden yet."""
    return [(a, b) for a, b in spans if b > a and not is_masked(text[a:b])]


def _spans_from(text: str, at: int, rx: re.Pattern, opened: bool) -> Iterator[tuple[int, int]]:
    """The password values ``rx`` reads from ``at`` on, up to the end of their command."""
    start_at = at
    while at - start_at < _REACH and (m := rx.match(text, at)) is not None:
        spans, end = _value_spans(text, m, opened)
        yield from _shown(text, spans)
        if _SEPARATOR_RE.match(text, end):
            return  # (what follows is another command's)
        at = max(m.end(), end) if opened else m.end()  # (past -P \"a\" to -N \"b\")


def _flag_spans(text: str) -> Iterator[tuple[int, int]]:
    for c in _COMMAND_RE.finditer(text):
        command = _COMMAND_OF[c.group()]
        if command == "htpasswd":
            yield from _htpasswd_spans(text, c.end())
            continue
        for opened, rx in enumerate(_FLAG_RES[command]):  # (bare or quoted; a quote left open)
            yield from _spans_from(text, c.end(), rx, bool(opened))


def _htpasswd_spans(text: str, at: int) -> Iterator[tuple[int, int]]:
    flags = _HTPASSWD_FLAGS_RE.match(text, at)
    if flags is None:
        return
    letters = flags.group().replace("-", "")
    if "b" not in letters:
        return
    at = flags.end()
    for _ in range(1 if "n" in letters else 2):  # (the file, the user: words as the shell's)
        blanks = _BLANKS_RE.match(text, at)
        if blanks is None or (at := _word_end(text, blanks.end())) == blanks.end():
            return
    for opened, rx in enumerate(_HTPASSWD_VALUE_RES):
        if (m := rx.match(text, at)) is not None:
            yield from _shown(text, _value_spans(text, m, bool(opened))[0])


# mysql -u root -pX db, sshpass -p X ssh h, redis-cli -h h -a X, ssh-keygen -N X, htpasswd
# -b file user X
COMMAND_RULES: tuple[Rule, ...] = (Rule("command-password", _flag_spans),)


# What echo or printf writes into a file that holds a secret: a token (huggingface's
# ~/.cache/huggingface/token), credentials (~/.aws/credentials), .netrc, .pgpass, by ">" or
# ">>" or through tee. What is written is hidden whole, up to the redirection (bounded: a
# search from each echo reads a few hundred characters), unless it is a variable alone
# (echo "$HF_TOKEN" > token shows no secret).
_SECRET_FILE = (
    r"[\"']?(?:[^\s\"';|&<>/\\]*+/)*+(?:token|credentials|\.netrc|\.pgpass|\.git-credentials)"
    r"(?![\w.\-/])"
)
_WRITTEN = (
    r"(?P<s>(?:[^\s>|;&\\]|\\(?![nr]))(?:(?:[^\n>|;&\\]|\\(?![nr])){0,400}?"
    r"(?:[^\s>|;&\\]|\\(?![nr])))?)"
    rf"[ \t]*+(?:>>?|\|[ \t]*(?:sudo[ \t]+)?tee(?:[ \t]+-a)?)[ \t]*{_SECRET_FILE}"
)
_VARIABLE_RE = re.compile(r"[\"']?\$\{?\w+\}?[\"']?")

WRITTEN_RULES: tuple[Rule, ...] = tuple(
    regex_rule(
        "written-secret",
        command + _WRITTEN,
        keep=lambda m: _VARIABLE_RE.fullmatch(m.group("s")) is None,
    )
    for command in (
        r"echo(?<![\w\-]echo)(?:[ \t]+-[neE]+)*+[ \t]+",
        r"printf(?<![\w\-]printf)(?:[ \t]+[\"']%[^\s\"']*+[\"'])?[ \t]+",
    )
)
