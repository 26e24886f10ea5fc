"""What a transcript hides besides credentials: where the agent ran (a home folder, a
private inference server).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sitegen.redact.rule import Rule, regex_rule
from sitegen.redact.rules import may_hold_secret
from sitegen.redact.values import is_masked

# An agent's terminal shows where it runs: the user's home folder (a person's name) and the
# cluster's own inference servers (``api_base: http://10.0.3.17:8000/v1``). Not credentials,
# so not hidden from logs and configs (a checkpoint path under /home stays on a job page),
# but a transcript is published text nobody reviewed: a Redactor made with ``transcripts``
# hides these as well, and the publish gate scans transcripts with the same table.

# Home folders of shared images, which name no person.
_GENERIC_HOMES = frozenset(
    {"user", "users", "ubuntu", "runner", "app", "agent", "node", "jovyan", "vscode", "coder"}
    | {"admin", "root", "guest", "shared"}
)
_PRIVATE_IP_RE = re.compile(
    r"(?:10\.\d{1,3}|172\.(?:1[6-9]|2\d|3[01])|192\.168|100\.(?:6[4-9]|[7-9]\d|1[01]\d|12[0-7]))"
    r"\.\d{1,3}\.\d{1,3}"
)
_PRIVATE_SUFFIXES = (".internal", ".local", ".lan", ".intranet", ".corp", ".svc")


def _private_host(m: re.Match) -> bool:
    """A host on a private network: RFC 1918 or carrier-grade NAT, or a private DNS name."""
    host = m.group("host").lower().rstrip(".")
    return _PRIVATE_IP_RE.fullmatch(host) is not None or host.endswith(_PRIVATE_SUFFIXES)


# A home folder's name after its parent (the parents found by plain substring search: a
# pattern starting with an alternation has no literal for the regex engine to skip to).
_HOME_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._\-]*+")
_HOMES = ("/home/", "/Users/", "\\Users\\")


def _home_spans(text: str) -> Iterator[tuple[int, int]]:
    for parent in _HOMES:
        i = text.find(parent)
        while i >= 0:
            m = _HOME_NAME_RE.match(text, i + len(parent))
            if m and m.group(0).lower() not in _GENERIC_HOMES and not is_masked(m.group(0)):
                yield m.span()
            i = text.find(parent, i + len(parent))


# An API base on a host with no domain (``api_base: http://gpu-node-12:8000/v1``): found at its
# "://" (a literal), the key looked for just before it.
_API_KEY_BEFORE = re.compile(
    r"(?i:api[_\-]?base|base[_\-]?url|api[_\-]?url|endpoint)[\"']?[ \t]*[:=][ \t]*[\"']?https?\Z"
)
_BARE_HOST_RE = re.compile(r"(?!localhost\b)[A-Za-z][A-Za-z0-9\-]*+(?::\d++)?(?=[/\"'\s\\]|\Z)")


def _api_base_spans(text: str) -> Iterator[tuple[int, int]]:
    i = text.find("://")
    while i >= 0:
        if _API_KEY_BEFORE.search(text[max(0, i - 48) : i]):
            m = _BARE_HOST_RE.match(text, i + 3)
            if m:
                yield m.span()
        i = text.find("://", i + 3)


TRANSCRIPT_RULES: tuple[Rule, ...] = (
    Rule("home-path", _home_spans),
    # a URL on a private network (RFC 1918, carrier-grade NAT, private DNS names), after
    # its userinfo, an "@" in the password too
    regex_rule(
        "private-address",
        r"://(?<=[A-Za-z0-9+.\-]://)(?:[^\s/@\"'<>]*+@)*+(?P<s>(?P<host>[A-Za-z0-9.\-]++)(?::\d++)?)",
        keep=_private_host,
    ),
    Rule("private-address", _api_base_spans),
)
_TRANSCRIPT_TRIGGERS = ("/home/", "/Users/", "\\Users\\", "://")


def may_hold_transcript_secret(text: str) -> bool:
    """:func:`may_hold_secret`, or a trigger of :data:`TRANSCRIPT_RULES`."""
    return may_hold_secret(text) or any(t in text for t in _TRANSCRIPT_TRIGGERS)
