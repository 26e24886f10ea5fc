"""The one redaction step every text from a log or config passes through.

Two rules: the value of a key named like a secret is hidden whatever it is,
and any string shaped like a known credential is hidden wherever it appears.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

MASK = "[REDACTED]"

SECRET_KEY_RE = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)", re.I)

# Shapes of credentials, each matched as a whole token.
CREDENTIAL_PATTERNS: tuple[str, ...] = (
    r"hf_[A-Za-z0-9]{20,}",  # Hugging Face
    r"sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}",  # OpenAI / Anthropic style
    r"(?<![0-9a-f])[0-9a-f]{40}(?![0-9a-f])",  # W&B API key (40 hex)
    r"(?:AKIA|ASIA)[0-9A-Z]{16}",  # AWS access key id
    r"dtn_[A-Za-z0-9]{20,}",  # Daytona
    r"(?i:bearer)\s+[A-Za-z0-9._~+/\-]{16,}=*",  # bearer tokens
    r"gh[pousr]_[A-Za-z0-9]{30,}",  # GitHub tokens
    r"xox[abposr]-[A-Za-z0-9-]{10,}",  # Slack tokens
)
# scheme://user:password@host -> keep the user and host, hide the password
URL_PASSWORD_RE = re.compile(r"(?P<head>[a-z][a-z0-9+.\-]*://[^\s:/@]+:)[^\s@/]+(?P<tail>@)", re.I)
# NAME=value / NAME: value / "NAME": "value" where NAME looks secret
ASSIGN_RE = re.compile(
    r"(?P<key>[\"']?[A-Za-z_][A-Za-z0-9_.\-]*[\"']?)(?P<sep>\s*[=:]\s*)(?P<val>\"[^\"]*\"|'[^']*'|[^\s,;}]+)"
)


@dataclass(frozen=True)
class Redactor:
    """Hides secrets in text and nested config values.

    ``extra_patterns`` are regular expressions a user adds in the config.
    """

    extra_patterns: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        patterns = CREDENTIAL_PATTERNS + tuple(self.extra_patterns)
        object.__setattr__(self, "_shapes", re.compile("|".join(f"(?:{p})" for p in patterns)))

    def text(self, s: str) -> str:
        """Redact one free-form string."""
        if not s:
            return s
        s = URL_PASSWORD_RE.sub(lambda m: m.group("head") + MASK + m.group("tail"), s)
        s = self._shapes.sub(MASK, s)  # type: ignore[attr-defined]
        return ASSIGN_RE.sub(self._assignment, s)

    def _assignment(self, m: re.Match) -> str:
        key = m.group("key").strip("\"'")
        if is_secret_key(key) and m.group("val").strip("\"'") != MASK:
            return f"{m.group('key')}{m.group('sep')}{MASK}"
        return m.group(0)

    def value(self, key: str | None, value: object) -> object:
        """Redact a config value found under ``key`` (recursing into containers)."""
        if isinstance(value, dict):
            return {k: self.value(str(k), v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(key, v) for v in value]
        if key is not None and is_secret_key(key) and value not in (None, "", False):
            return MASK
        if isinstance(value, str):
            return self.text(value)
        return value

    def lines(self, lines: Iterable[str]) -> list[str]:
        return [self.text(x) for x in lines]


BENIGN_KEY_RE = re.compile(
    r"TOKENS(?![A-Za-z])|TOKENIZER|TOKEN_LEVEL|TOKEN_IDS?(?![A-Za-z])|KEYS(?![A-Za-z])|AUTHOR(?!I)|KEY_?FRAME",
    re.I,
)


def is_secret_key(key: str) -> bool:
    """A key such as ``WANDB_API_KEY`` or ``hf_token``; ``max_tokens`` is not one."""
    tail = key.rsplit(".", 1)[-1]
    return bool(SECRET_KEY_RE.search(tail)) and not BENIGN_KEY_RE.search(tail)
