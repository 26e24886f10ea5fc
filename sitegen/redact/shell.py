"""Rules for a command line: a secret-named flag's value, ``export``/``set``/``ENV`` lines, a
value piped into a login, printed variables, a ``.netrc`` line.
"""

from __future__ import annotations

import re

from sitegen.redact.names import is_secret_key
from sitegen.redact.rule import Rule, regex_rule
from sitegen.redact.shapes import letters_and_digits
from sitegen.redact.values import WINDOWS_PATH, after_mask


def _secret_name(m: re.Match) -> bool:
    # (a flag that says where the secret is read from takes no value: --password-stdin)
    key = m.group("key")
    return is_secret_key(key) and not key.lower().endswith("stdin")


def _set_secret(m: re.Match) -> bool:
    """A secret-named setting's value, not a switch (npm's //host/:always-auth true)."""
    return _secret_name(m) and m.group("s").strip("\"'").lower() not in ("true", "false")


def _secret_flag(m: re.Match) -> bool:
    """A secret-named flag, not glued after a mask (``[REDACTED]--token ""cd``: a second
    pass would read what the first left as the glued flag's value, :func:`after_mask`).
    A flag named ``pw`` is a password's (``--pw X``, ``plink -pw X``): as a flag it is a
    name, where ``pw`` in a key (``pw_ratio: 0.5``) or in prose may be a metric's; not
    before a weight or another flag (``--pw 0.5``, ``perl -pw -e``), nor ``-Pw`` (grep's,
    rg's, sdiff's bundled options; ``--Pw`` is a name)."""
    if after_mask(m.string, m.start()):
        return False
    key = m.group("key")
    if key.lower() == "pw" and (key in ("pw", "PW") or m.start("key") - m.start() == 2):
        return _PW_NOT_A_VALUE_RE.match(m.group("s")) is None
    return _secret_name(m)


# What follows a flag named pw that is no password: a flag, a weight (a number, but an
# integer of six digits or more: a PIN's), a truth value
_PW_NOT_A_VALUE_RE = re.compile(
    r"-|\\?[\"']?(?:[-+]?(?:\d{1,5}+|\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][-+]?\d+)?"
    r"|(?i:true|false|none|null))\\?[\"']?\Z"
)


# (Where a rule's look-behind would come first, it comes after the literal or the first
# letters it guards, reading the same character: the same matches, and the regex engine
# skips to where the literal is instead of trying the whole pattern at every character.)

# A command-line value: up to white space, a quote (or a page's entity for one: the HTML made
# of redacted text scans as the text does), a tag (or a page's "&lt;"), or an escaped line
# break (text inside a JSON string: "--token X\\nnext" holds the value X). Not at &#x22;,
# &#034; or &apos;: a value they open and close is read whole as quoted (below), one they
# open and leave open reads on to the next blank.
TOKEN = r"(?:[^\s\"'<\\&]|&(?!quot;|#34;|#39;|#x27;|lt;)|\\(?![nrt\"']))+"

# A value in quotes written as a page's entities: &quot;X&quot;, &#39;X&#39; (and &#34;,
# &#034;, &#x22;, &#x27;, &apos;: the quotes a named value's are), up to the same entity.
_ENTITY_QUOTED = r"(?P<eq>&(?:quot|#0?34|#39|#x2[27]|apos);)(?:(?!(?P=eq))[^\n])*+(?P=eq)"

# What a JSON string's escaped quote opens (after the \") up to the \" that closes it on its
# line: an escaped character but \", \n and \r is the value's (\\ a backslash, \t a blank);
# not across a flag (--token \"X --password \"Y: X left open, the next \" opens Y); over one
# escaped line break, a passphrase broken over two lines (--token \"correct\nhorse\")
_ESCAPED_PART = r'(?:(?![ \t]--?[A-Za-z])[^"\\\n]|\\[^"nr\n])++'
_ESCAPED_QUOTED = rf"(?<=\\\"){_ESCAPED_PART}(?:(?:\\r)?\\n{_ESCAPED_PART})?(?=\\\")"

# A command-line value: in quotes (or a page's entities for them) whole, a word glued after
# them the value's too, as the shell reads it (--token "ab"cd); a Windows path whole
# (--token C:\\new\\table: its "\\n" is a folder's, no line break); else a bare word
VALUE = (
    rf"(?:\"[^\"\n]*\"|'[^'\n]*'|{_ENTITY_QUOTED})(?:(?=[\w\-]){TOKEN})?"
    rf"|{WINDOWS_PATH}(?:{TOKEN})?|{TOKEN}"
)
# ... or one a quote (or its entity, maybe escaped in JSON) opens and leaves open: what
# follows the quote, its first word (in a JSON string's escaped quotes, to the closing \")
OPEN_QUOTE = r"(?:\\?[\"']|&(?:quot|#34|#39|#x27);)"
OPENED = rf"{_ESCAPED_QUOTED}|{WINDOWS_PATH}(?:{TOKEN})?|{TOKEN}"

# A flag's name: --wandb-api-key, --hf_token, tyro's or jsonargparse's dotted --wandb.key, and
# Go's single-dash long flags (-password X, -token=X)
# (each "." or "-" inside it before a letter, digit or "_": a run such as --a.--a. is many
# flags, not one read to its end from each; one glued after a mask is refused by
# _secret_flag, so hiding twice finds no flag that hiding once did not)
_FLAG = r"-(?<![\w\-]-)-?(?P<key>[A-Za-z][A-Za-z0-9_]*+(?:[.\-][A-Za-z0-9_]++)*+)"

# The variables a command prints (echo $WANDB_API_KEY $HF_TOKEN, up to nine: a bound keeps
# the search linear; printf "$HF_TOKEN\n", an escape before the quote), maybe a short command
# after it (; echo, && echo, | cat, | tr -d ' ', as a terminal passes the value on), then the
# line the terminal answers with: the value (one word; the others empty).
_PRINTED = (
    r"(?P<key>[A-Za-z_][A-Za-z0-9_.\-]*+\}?(?:\\[nrt])*+[\"']?"
    r"(?:[ \t]+[\"']?\$?\{?[A-Za-z_][A-Za-z0-9_.\-]*+\}?(?:\\[nrt])*+[\"']?){0,8}+)"
    r"[ \t]*(?:(?:;|&&|\|)[^\n]{0,80}+)?\r?\n[ \t]*"
    r"(?P<s>[^\s]{8,}+)[ \t]*\r?(?=\n|$)"
)
_PRINTED_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*+")


def _printed_secret(m: re.Match) -> bool:
    """One of the variables printed is named like a secret."""
    return any(is_secret_key(name) for name in _PRINTED_NAME_RE.findall(m.group("key")))


# Commands that read what is piped into them as text: a login after one is its pattern
# or file (echo hello | grep login), not where the secret goes.
_TEXT_FILTERS = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ag", "sed", "awk", "gawk", "tee", "cut", "head", "tail"}
    | {"sort", "uniq", "wc", "tr", "less", "more", "jq"}
)
# A pipeline's stage: up to its "|", a command separator or a line break (in JSON, an escaped
# one), a quoted word whole, however long ('\n' and "\r\n" are tr's argument, not a line
# break; "|" inside one is no pipe; quotes as a page's entities too: a mask shortening a
# quoted value leaves the stage read as it was); up to 200 words and quoted words, so a
# search from each "echo" reads its stages once. (Atomic: a run of \" would otherwise be
# read both as quotes and as escapes, every way.)
_STAGE = (
    r"(?>\"[^\"\n]*+\"|[^|\n;&\\']|\\[^nr]|'[^'\n]*+'"
    r"|&(?:quot|#34);[^&\n]*+&(?:quot|#34);|&(?:#39|#x27);[^&\n]*+&(?:#39|#x27);){0,200}"
)
# What reads a secret from its input at the pipeline's end: a login (docker, podman, helm
# registry, huggingface-cli, wandb, gh auth, az acr, vault …), --password-stdin,
# --with-token, passwd --stdin, chpasswd; the last stage's command is not a text filter.
_READS_SECRET = (
    rf"(?!(?:{'|'.join(sorted(_TEXT_FILTERS))})(?![\w.\-]))"
    rf"{_STAGE}?(?:(?:[\"']|&(?:quot|#34|#39|#x27);)(?:[^\"'\n|&]|&(?!(?:quot|#34|#39|#x27);)){{0,200}}?)?(?:[ \t]login(?![\w\-])|--password-stdin|--with-token"
    r"|(?<![\w\-])passwd[ \t]+--stdin|chpasswd)"
)
# After the value's "|": any stages, each ended by a "|" (not "||": "a || b" pipes nothing),
# up to one that reads the secret (a bound on the stages keeps the search linear).
_PIPED_INTO = rf"\|(?!\|)[ \t]*+(?=(?:{_STAGE}+\|(?!\|)[ \t]*+){{0,8}}?{_READS_SECRET})"


def _piped_into_login(m: re.Match) -> bool:
    return "$" not in m.group("s")


# What stands before a value in the rules below that read one as a flag's (each said there,
# a rule for a value in quotes or bare, one for a value a quote opens and leaves open)
_LOGIN_P = r"[ \t]login(?:[ \t]+(?!-p\b)(?:[^\s\\]|\\(?![nrt]))++){0,8}[ \t]+-p(?:[ \t]+|=)"
_SET = (
    r"(?:(?:s(?<!\ws)et(?:env|x)?|S(?<!\wS)(?:ET(?:ENV|X)?|et(?:env|x)))(?:[ \t]+[-/][A-Za-z]+)*+"
    r"|E(?<!\wE)NV)"
    r"[ \t]+"
    r"(?P<kq>[\"']?)(?://[^\s\"']*?:)?(?P<key>[A-Za-z_][A-Za-z0-9_.\-]*)(?P=kq)[ \t]+"
)
# (possessive: a flag read one way is not read again the other, --host URL as --host then a
# key, which was exponential in a run of --host; --anonymously is a switch, no value's)
_WANDB_LOGIN = (
    r"wandb(?<!\wwandb)[ \t]+login"
    r"(?:[ \t]+--(?:host|base-url)(?:=|[ \t]+)\S+|[ \t]+--[\w\-]+(?:=\S+)?)*+[ \t]+"
)


# A line's end, or a JSON or Python string's closing quote before it, whatever follows on
# its line ("...\npassword KEY", "x": 1}), escaped itself (JSON in JSON) or as a page's
# entity, and not opening a quoted word (password reset "ok"; nor a mask, where a quoted
# word was: hiding twice finds no more), maybe after a carriage return, itself escaped
# ("...\npassword KEY\r"}): where a .netrc's own line ends in escaped text
_LINE_END = r"[ \t]*+(?:\\r|\r)?(?:(?:\\?[\"']|&(?:quot|#34|#39|#x27);)(?!\w|\[REDACTED)[^\n]*+)?$"


def _no_mask(m: re.Match) -> bool:
    """A value holding no mask: one holding what another rule hid, the character that ended
    the value there gone with it (C:\\x, "<", a quote), reads to its line's end only once hidden."""
    return "[REDACTED" not in m.group("s")


# A .netrc's password: a quote glued inside it, before a word's character, is part of it
# (password KEY"1); one before anything else closes the string the file is written in
# (its word reads on over an escaped quote, which a flag's value ends at: the file holds no
# quoting, password \"X is that password)
_NETRC_TOKEN = r"(?:[^\s\"'<\\&]|&(?!quot;|#34;|#39;|#x27;|lt;)|\\(?![nrt]))+"
_NETRC_VALUE = rf"{_NETRC_TOKEN}(?:[\"'](?=\w){_NETRC_TOKEN})*+"
CLI_RULES: tuple[Rule, ...] = (
    # --token X, --api-key=X, --hf_token "X", --wandb.key X; quoted in a page's entities,
    # --token &quot;X&quot; (the HTML made of redacted text scans as the text does); a word
    # glued after the quotes is the value's, as the shell reads it (--token "ab"cd); a
    # Windows path whole (--token C:\new\table: its "\n" is a folder's, no line break)
    regex_rule("cli-secret", rf"{_FLAG}(?:=|[ \t]+)(?P<s>{VALUE})", keep=_secret_flag),
    # ... a value a quote (or a quote's entity, maybe escaped in JSON) opens and leaves open,
    # --token "X rest: its first word, a Windows path whole (one the quote closes is read whole
    # above); in a JSON string's escaped quotes, to the closing \" on its line, the quotes
    # kept (--token \"correct horse\" --x)
    regex_rule("cli-secret", rf"{_FLAG}(?:=|[ \t]+){OPEN_QUOTE}(?P<s>{OPENED})", keep=_secret_flag),
    # argv lists: ["--wandb-api-key", "X"] (JSON, Python), [--token, X] (YAML flow) and
    # "- --token" then "- X" (a YAML block list): the item after a secret-named flag
    regex_rule(
        "cli-secret",
        rf"{_FLAG}(?:\\?[\"'])?[ \t]*"
        r"(?:,[ \t]*(?:\r?\n[ \t]*)?|\r?\n[ \t]*-[ \t]*)(?:\\?[\"'])?"
        r"(?P<s>(?!-)(?:[^\s\"',\[\]{}<\\]|\\(?![nrt\"']))+)",
        keep=_secret_flag,
    ),
    # curl -u admin:pw / --user admin:pw
    regex_rule(
        "cli-password", rf"-(?<!\S-)(?:u|-user|-proxy-user)[ \t]*[\"']?[^\s:\"']*:(?P<s>{TOKEN})"
    ),
    # docker login -u me -p X (podman, helm registry, …): -p is a password only after "login"
    # on its line (in JSON, an escaped line break ends it); in quotes too (-p "X", -p 'X)
    *(
        regex_rule("cli-password", rf"{_LOGIN_P}{value}")
        for value in (rf"(?P<s>(?!-)(?:{VALUE}))", rf"{OPEN_QUOTE}(?P<s>{OPENED})")
    ),
    # aws configure set aws_secret_access_key X; setenv HF_TOKEN X; fish's set -gx HF_TOKEN X;
    # Windows' setx HF_TOKEN X; npm config set //registry.npmjs.org/:_authToken X (a
    # registry's own setting, its key after the registry's address, maybe quoted);
    # a Dockerfile's ENV HF_TOKEN X (as docker build echoes it); in quotes too (set -x
    # HF_TOKEN "X", ENV HF_TOKEN 'X)
    *(
        regex_rule("cli-secret", rf"{_SET}{value}", keep=_set_secret)
        for value in (rf"(?P<s>{VALUE})", rf"{OPEN_QUOTE}(?P<s>{OPENED})")
    ),
    # wandb login [--relogin] [--host URL] KEY (the flags that take a value, by name), "KEY"
    *(
        regex_rule("wandb-key", rf"{_WANDB_LOGIN}{value}")
        for value in (rf"(?P<s>(?!-)(?:{VALUE}))", rf"{OPEN_QUOTE}(?P<s>{OPENED})")
    ),
    # ... as an argv list: ['wandb', 'login', KEY], as subprocess's CalledProcessError quotes it
    regex_rule(
        "wandb-key",
        r"wandb(?<!\wwandb)(?P<q>\\?[\"'])[ \t]*,[ \t]*(?P=q)login(?P=q)"
        r"(?:[ \t]*,[ \t]*(?P=q)--(?:host|base-url)(?P=q)[ \t]*,[ \t]*(?P=q)[^\"'\n]*(?P=q)"
        r"|[ \t]*,[ \t]*(?P=q)--(?!(?:host|base-url)(?P=q))[\w\-]+(?:=[^\"'\n]*)?(?P=q))*"
        r"[ \t]*,[ \t]*(?P=q)(?P<s>(?!-)[^\"'\s,\\]+)(?P=q)",
    ),
    # a secret piped into a login: echo KEY | wandb login, printf '%s' PAT | docker login
    # --password-stdin, cat <<< KEY | wandb login, the login in the same command (not a
    # variable: echo "$CR_PAT" | … shows no secret; not a filter's pattern: echo hello |
    # grep login)
    *(
        regex_rule(
            "piped-secret",
            command + r"(?:\\?[\"'])?(?P<s>[^\s\"'<\\|]+)(?:\\?[\"'])?[ \t]*" + _PIPED_INTO,
            keep=_piped_into_login,
        )
        for command in (
            r"echo(?<![\w\-]echo)(?:[ \t]+-[neE]+)*+[ \t]+",
            r"printf(?<![\w\-]printf)(?:[ \t]+[\"']?%[^\s|]*+)?[ \t]+",
            r"<<<[ \t]*",
        )
    ),
    # ... or given as a here-string: gh auth login --with-token <<< TOKEN
    regex_rule(
        "piped-secret",
        r"login(?<=[ \t]login)(?![\w\-])(?:[^|\n;&<\\]|\\(?![nr])){0,200}?<<<[ \t]*"
        r"(?:\\?[\"'])?(?P<s>[^\s\"'<\\|]+)",
        keep=lambda m: "$" not in m.group("s"),
    ),
    # a login call's secret: login('KEY') (huggingface_hub's token, a notebook's wandb key),
    # the second of two: smtp.login('user', 'PASSWORD'). One argument is a secret only with a
    # credential's look, letters and digits (logger.login("user"), login('hello') name one).
    regex_rule(
        "login-secret",
        r"login\((?<![A-Za-z0-9]login\()[ \t]*(?P<user>b?(?P<q>\\?[\"'])(?:(?!(?P=q))[^\n])*+(?P=q)[ \t]*,[ \t]*)?"
        r"b?(?P<q2>\\?[\"'])(?P<s>(?:(?!(?P=q2))[^\n])++)(?P=q2)",
        keep=lambda m: m.group("user") is not None or letters_and_digits(m),
    ),
    # a terminal's answer to a command that prints a secret-named variable: the line after
    # "echo $WANDB_API_KEY", "printenv HF_TOKEN", "aws configure get aws_secret_access_key"
    # (one rule a command: each starts with its literal, for the regex engine to skip to)
    *(
        regex_rule("printed-secret", command + _PRINTED, keep=_printed_secret)
        for command in (
            r"echo(?<![\w\-]echo)(?:[ \t]+-[neE]+)*[ \t]+[\"']?\$\{?",
            r"printf(?<![\w\-]printf)[ \t]+(?:[\"']?%[^\s]*+[ \t]+)?[\"']?\$\{?",
            r"printenv(?<![\w\-]printenv)[ \t]+",
            r"configure[ \t]+get[ \t]+",
        )
    ),
    # .netrc: machine api.wandb.ai login user password KEY, on one line or on its own
    # ("  password KEY", as wandb and git write it; in JSON, an escaped line break ends it,
    # or the string's closing quote: "...\npassword KEY"})
    regex_rule(
        "netrc-password",
        rf"login(?<!\wlogin)[ \t]+(?:[^\s\\]|\\(?![nrt]))++[ \t]+password[ \t]+(?P<s>{_NETRC_VALUE})",
    ),
    regex_rule(
        "netrc-password",
        rf"(?m)^[ \t]*password[ \t]+(?!(?:is|was){_LINE_END})(?P<s>{_NETRC_VALUE}){_LINE_END}",
        keep=_no_mask,
    ),
    # ... its line starting a JSON string, ended by an escaped break: {"a": "password KEY\r"}
    regex_rule(
        "netrc-password",
        r"password(?<=\"password)[ \t]+(?!(?:is|was)\\[rn])"
        rf"(?P<s>{_NETRC_VALUE})(?=\\[rn])",
        keep=_no_mask,
    ),
)
