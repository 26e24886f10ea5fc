"""The table of built-in rules (:data:`BUILTIN_RULES`), and the triggers that say a text
may hold what any of them finds.
"""

from __future__ import annotations

import re

from ahocorasick_rs import AhoCorasick

from sitegen.redact.assign import assignment_spans, pair_spans
from sitegen.redact.escapes import escapes_as_breaks
from sitegen.redact.programs import COMMAND_RULES, WRITTEN_RULES
from sitegen.redact.prose import PROSE_BEFORE_RULE, PROSE_RULE
from sitegen.redact.rule import Rule, regex_rule
from sitegen.redact.shapes import (
    AWS_PAIR,
    ERROR_RULES,
    SHAPES,
    URL_RULES,
    aws_secret_before_spans,
    mixed_case,
)
from sitegen.redact.shell import CLI_RULES
from sitegen.redact.sourcecode import SOURCE_RULES
from sitegen.redact.tables import COLUMNS, TABLE_RULES

# Something every built-in rule needs to find anything. Text holding none of these (most
# trial and metric names) skips the rules: plain substring tests cost a microsecond, the
# rules fifty. tests/redact/test_redact.py checks each shape gets through;
# tests/redact/test_redact_rules.py that each trigger is needed. (A URL's "://", curl's
# "-u user:pw" and a Discord webhook hold ":", a PEM block's "-----BEGIN" holds "--".)
_TRIGGERS = (
    *("hf_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "k_live_"),
    *("k_test_", "AIza", "ya29.", "eyJ", "AKIA", "ASIA", "dtn_", "npm_", "xox"),
    *("gsk_", "pplx-", "tvly-", "lsv2_", "r8_", "api_org_", "wandb_v1_", "nvapi-"),
    *("tgp_v1_", "xai-", "fw_", "csk-", "pcsk_", "e2b_", "rpa_", "dapi", "sntry", "GOCSPX-"),
    *("ls__", "pypi-AgE", "dckr_", "IQoJb3JpZ2luX2Vj", "FwoGZXIvYXdzE", "tskey-", "local-"),
    *("SG.",),
    *("eC1hY2Nlc3MtdG9rZW46",),  # (a git extraheader's base64 "x-access-token:")
    *("--", "set ", "set\t", "setenv", "setx", "ENV ", "ENV\t", "login ", "login\t"),
    *("SET ", "SET\t", "SETX", "Setx", "Setenv"),  # (cmd's set in capitals; not "Set ")
    *("login(", "|", "'login", '"login', "echo", "printf", "printenv", "configure"),
    *("=", ":"),
    # (the commands that take a password by a flag of their own: mysql -pX, mysqldump,
    # mariadb, sshpass -p X, redis-cli -a X, ssh-keygen -N X; htpasswd holds "passw")
    *("mysql", "mariadb", "sshpass", "redis-cli", "ssh-keygen"),
    *("BasicAuth(", "DigestAuth("),  # (a basic-auth call's password: HTTPBasicAuth("u", "X"))
)
# "sk-" not after a letter or digit (not task-…). The literal first, the look back after it:
# a pattern that starts with the look-behind has no literal prefix to search for, so the
# regex engine tries it at every character (of a folder's trial names joined, where every
# "task-" holds an "sk-"). The same matches: the look-behind sees exactly the character
# before the "sk-".
_SK_RE = re.compile(r"sk-(?<![A-Za-z0-9]sk-)")
# Modal's "ak-"/"as-" alike: not after a letter or digit (has-, break-).
_MODAL_RE = re.compile(r"a[ks]-(?<![A-Za-z0-9]a[ks]-)")
# All the triggers in one automaton: one pass over the text instead of one substring test
# per trigger, for the tens of thousands of names, tasks and exception types of a large
# archive's trials. Any trigger in the text gives a match.
_TRIGGER_AC = AhoCorasick(list(_TRIGGERS))
# Triggers of the rules that ignore case (a bearer token, "token X" in an error message).
# ("_key" holds "api_key"; "<td" as <TD> too)
_LOWER_TRIGGERS = (
    *("bearer", "token", " key", "_key", "api-key", "apikey", "secret", "passw", "passphrase"),
    # (pw and pwd, which prose reads as a password's name wherever they are: after a blank,
    # a quote or a bracket, and glued after a value, "X7pwd is Y")
    "pw",
    "<td",
)
# What every name of a secret holds (names.is_secret_key: a pwd, a token, a db_pass, an
# X-Auth, a signature, a cookie, a key, a credential): with a one-dash flag (Go's -password
# X), a name and a value lined up in columns (DB_PASS<tab>X) or an element's end tag
# (<db_pass>X</db_pass>), where no trigger above is
_NAME_PARTS = ("pass", "auth", "cred", "key", "token", "secret", "pw", "sig", "cookie")
# A key's name glued to what it is for (privateKey, hfkey: no " key" or "_key"), then what
# prose says before its value where no trigger above is ("is", "was", an arrow, a dash),
# the name's closing markup between (a few characters that are no blank)
_KEY_SAID_RE = re.compile(r"key\S{0,16}?(?:[ \t]+(?:is|was)|[ \t]*(?:->|\u2014|\u2013|-)\s)")
_ONE_DASH_RE = re.compile(r"-(?<![\w\-]-)([A-Za-z][\w.\-]*+)")
_COLUMNS_RE = re.compile(COLUMNS)  # (tables.py's rule of lined-up columns, less its end)
# An element's end tag: named as a secret's holds a part of its name (</db_pass>, </auth>)
_END_TAG_RE = re.compile(r"</([A-Za-z][\w.\-:]*+)>")


def may_hold_secret(text: str) -> bool:
    """Whether a rule may find a secret in ``text``: a quick screen, so that a text with none
    of the triggers is not read by every rule. The rules also read a text with its escaped
    breaks as breaks (``"\\nsk-…"``, ``"\\npwd is …"``): so does the screen."""
    if _screen(text):
        return True
    return "\\" in text and _screen(escapes_as_breaks(text))


def _screen(text: str) -> bool:
    try:
        if _TRIGGER_AC.find_matches_as_indexes(text):
            return True
    except UnicodeEncodeError:  # a lone surrogate (a file name that is not UTF-8): one by one
        if any(t in text for t in _TRIGGERS):
            return True
    if "sk-" in text and _SK_RE.search(text) is not None:
        return True
    if ("ak-" in text or "as-" in text) and _MODAL_RE.search(text) is not None:
        return True
    low = text.lower()
    if any(t in low for t in _LOWER_TRIGGERS):
        return True
    if not any(p in low for p in _NAME_PARTS):
        return False
    if "key" in low and _KEY_SAID_RE.search(low) is not None:
        return True  # (prose's glued key: "privateKey is X", "hfkey - X")
    if "-" in text and any(_names_part(m) for m in _ONE_DASH_RE.finditer(text)):
        return True
    if "</" in text and any(_names_part(m) for m in _END_TAG_RE.finditer(text)):
        return True
    return "_" in text and any(_names_part(m) for m in _COLUMNS_RE.finditer(text))


def _names_part(m: re.Match) -> bool:
    """Whether the name ``m`` found (its group 1) holds a part of a secret's name."""
    name = m.group(1).lower()
    return any(p in name for p in _NAME_PARTS)


BUILTIN_RULES: tuple[Rule, ...] = (
    *(regex_rule(kind, p) for kind, p in SHAPES),
    regex_rule("aws-secret-key", AWS_PAIR, keep=mixed_case),
    Rule("aws-secret-key", aws_secret_before_spans),
    *URL_RULES,
    *CLI_RULES,
    *COMMAND_RULES,
    *WRITTEN_RULES,
    *SOURCE_RULES,
    *ERROR_RULES,
    *TABLE_RULES,
    Rule("secret-assignment", assignment_spans),
    Rule("secret-env-pair", pair_spans),
    PROSE_RULE,
    PROSE_BEFORE_RULE,
)
