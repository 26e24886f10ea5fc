"""Rules for a password a command takes by a flag of its own (``mysql -pX``, ``sshpass -p
X``): the flag names a password only after that command, as ``-p`` is a port or a path after
others (``ssh -p 22``, ``mkdir -p``); and for a secret a command writes into a file that
holds one (``echo X > ~/.cache/huggingface/token``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sitegen.redact.rule import Rule, regex_rule
from sitegen.redact.shell import OPEN_QUOTE, OPENED, TOKEN, VALUE
from sitegen.redact.values import is_masked

# What the command line says before a flag: up to a command separator or a line break (in
# JSON, an escaped one), bounded; from the command's name, or from the value before
_REST = r"[ \t](?:(?:[^\n;|&\\]|\\(?![nr])){0,256}?[ \t])??"
# How far after the command's name its flags are looked for (a search from each name reads
# a bounded part of its line)
_REACH = 512
# A flag's value: in quotes, bare, or a quote left open (its first word)
_VALUES = (rf"(?P<s>(?!-)(?:{VALUE}))", rf"{OPEN_QUOTE}(?P<s>{OPENED})")

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
_WORD = rf"(?:\"[^\"\n]*+\"|'[^'\n]*+'|{TOKEN})"
_HTPASSWD_RES = {
    n: tuple(re.compile(rf"(?:[ \t]+(?!-){_WORD}){{{n}}}[ \t]+{v}") for v in _VALUES)
    for n in (1, 2)
}


# What ends a command in its bare value (mysql -pX; ls, -pX|head, -pX&&ls); not one the
# shell takes as a character of the value (-pX\;Y)
_ENDS_COMMAND_RE = re.compile(r"(?<!\\)(?:[;|]|&&)")
# Before it, what may open a quote or an expansion that holds it (a quote, a page's entity
# for one, ${…}, $(…), `…`)
_MAY_QUOTE_RE = re.compile(r"[\"'&$`]")


def _value_end(text: str, start: int, end: int, opened: bool) -> int:
    """Where the value at ``start`` ends: a bare one at the first ";", "|" or "&&" in it (the
    shell ends the command there) with no quote, entity or expansion before it; one in
    quotes (or in a page's quote entities), one a quote opened before ``start``
    (``opened``: JSON's ``\\"…``, a quote never closed), or one a quote or an expansion may
    hold, at ``end``: the shell passes what a quote holds whole."""
    if opened or text[start] in "\"'&":
        return end
    cut = _ENDS_COMMAND_RE.search(text, start, end)
    if cut is None or _MAY_QUOTE_RE.search(text, start, cut.start()):
        return end  # (it&apos;s;X&apos; is one value: whole, on the safe side)
    return cut.start()


def _flag_spans(text: str) -> Iterator[tuple[int, int]]:
    for c in _COMMAND_RE.finditer(text):
        command = _COMMAND_OF[c.group()]
        if command == "htpasswd":
            yield from _htpasswd_spans(text, c.end())
            continue
        for opened, rx in enumerate(_FLAG_RES[command]):  # (bare or quoted; a quote left open)
            at = c.end()
            while at - c.end() < _REACH and (m := rx.match(text, at)) is not None:
                start = m.start("s")
                end = _value_end(text, start, m.end("s"), bool(opened))
                if end > start and not is_masked(text[start:end]):
                    yield start, end
                at = m.end()


def _htpasswd_spans(text: str, at: int) -> Iterator[tuple[int, int]]:
    flags = _HTPASSWD_FLAGS_RE.match(text, at)
    if flags is None:
        return
    letters = flags.group().replace("-", "")
    if "b" in letters:
        for opened, rx in enumerate(_HTPASSWD_RES[1 if "n" in letters else 2]):
            if (m := rx.match(text, flags.end())) is not None:
                start = m.start("s")
                end = _value_end(text, start, m.end("s"), bool(opened))
                if end > start and not is_masked(text[start:end]):
                    yield start, end


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
