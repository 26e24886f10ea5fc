"""Rules for secrets known by their shape: credential prefixes (``hf_…``, ``ghp_…``), URL
credentials, an AWS secret key beside its key id, a provider's error quoting a key.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sitegen.redact.assign import IDENTIFIER_RE
from sitegen.redact.rule import Rule, regex_rule
from sitegen.redact.values import is_masked

_PLAIN_USER_RE = re.compile(r"[a-z_][a-z0-9_.\-]{0,15}")

# A key's body, not a word after a short prefix (fw_checkpointing, as-SUBSCRIBED): letters of
# both cases, or letters and digits.
_NOT_ONE_CASE = r"(?![a-z]++(?![A-Za-z0-9]))(?![A-Z]++(?![A-Za-z0-9]))"

SHAPES: tuple[tuple[str, str], ...] = (
    # PEM private-key blocks, under any key or none; an unterminated block runs to the end
    (
        "private-key",
        r"(?s)-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----"
        r"(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|.*)",
    ),
    ("github-token", r"github_pat_(?<![A-Za-z0-9]github_pat_)[A-Za-z0-9_]{20,}"),
    ("github-token", r"gh(?<![A-Za-z0-9]gh)[pousr]_[A-Za-z0-9]{30,}"),
    ("gitlab-token", r"glpat-(?<![A-Za-z0-9]glpat-)[A-Za-z0-9_\-]{20,}"),
    ("hf-token", r"hf_(?<![A-Za-z0-9]hf_)[A-Za-z0-9]{20,}"),
    ("hf-token", r"api_org_(?<![A-Za-z0-9]api_org_)[A-Za-z0-9]{20,}"),  # an organisation's
    ("wandb-key", r"wandb_v1_(?<![A-Za-z0-9]wandb_v1_)[A-Za-z0-9_]{20,}"),  # 86 characters
    ("nvidia-key", r"nvapi-(?<![A-Za-z0-9]nvapi-)[A-Za-z0-9_\-]{20,}"),
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
    # inference and sandbox providers an agent runs on: Together's keys since 2025, xAI,
    # Fireworks, Cerebras, Pinecone, E2B, RunPod, Databricks, Modal's token id and secret
    ("together-key", r"tgp_v1_(?<![A-Za-z0-9]tgp_v1_)[A-Za-z0-9_\-]{20,}"),
    ("xai-key", r"xai-(?<![A-Za-z0-9]xai-)[A-Za-z0-9]{40,}"),
    ("fireworks-key", rf"fw_(?<![A-Za-z0-9]fw_){_NOT_ONE_CASE}[A-Za-z0-9]{{20,}}"),
    ("cerebras-key", r"csk-(?<![A-Za-z0-9]csk-)[A-Za-z0-9]{20,}"),
    ("pinecone-key", r"pcsk_(?<![A-Za-z0-9]pcsk_)[A-Za-z0-9_]{20,}"),
    ("e2b-key", r"e2b_(?<![A-Za-z0-9]e2b_)[A-Za-z0-9]{20,}"),
    ("runpod-key", r"rpa_(?<![A-Za-z0-9]rpa_)[A-Za-z0-9]{20,}"),
    ("databricks-token", r"dapi(?<![A-Za-z0-9]dapi)[0-9a-f]{32}(?![A-Za-z0-9])"),
    (
        "modal-token",
        rf"a(?<![A-Za-z0-9]a)[ks]-{_NOT_ONE_CASE}[A-Za-z0-9]{{20,30}}(?![A-Za-z0-9])",
    ),
    # Sentry's organisation and user tokens, Google's OAuth client secrets, LangSmith's old keys
    ("sentry-token", r"sntry(?<![A-Za-z0-9]sntry)[su]_[A-Za-z0-9+/=_]{20,}"),
    ("google-client-secret", r"GOCSPX-(?<![A-Za-z0-9]GOCSPX-)[A-Za-z0-9_\-]{20,}"),
    ("langsmith-key", r"ls__(?<![A-Za-z0-9]ls__)[0-9a-f]{32}(?![A-Za-z0-9])"),
    # what a cluster's tooling holds: PyPI and Docker Hub tokens, an AWS STS session token
    # (its base64 starts the same whatever the token), a Tailscale auth key, a W&B key of a
    # self-hosted server (local- and 40 hex), a SendGrid key
    ("pypi-token", r"pypi-AgE(?<![A-Za-z0-9]pypi-AgE)[A-Za-z0-9_\-]{50,}"),
    ("docker-token", r"dckr_(?<![A-Za-z0-9]dckr_)(?:pat|oat)_[A-Za-z0-9_\-]{20,}"),
    ("aws-session-token", r"IQoJb3JpZ2luX2Vj[A-Za-z0-9/+=]{20,}"),
    ("aws-session-token", r"FwoGZXIvYXdzE[A-Za-z0-9/+=]{20,}"),
    (
        "tailscale-key",
        r"tskey-(?<![A-Za-z0-9]tskey-)(?:auth|api|client|scim|webhook)-[A-Za-z0-9\-]{20,}",
    ),
    ("wandb-key", r"local-(?<![A-Za-z0-9]local-)[0-9a-f]{40}(?![A-Za-z0-9])"),
    ("sendgrid-key", r"SG\.(?<![A-Za-z0-9]SG\.)[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}"),
    # git's http.extraheader "AUTHORIZATION: basic <base64 of x-access-token:TOKEN>" (GitHub
    # Actions' checkout): the base64 text starts the same whatever the token
    ("git-access-token", r"eC1hY2Nlc3MtdG9rZW46[A-Za-z0-9+/]{8,}={0,2}"),
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


# The user part of a URL's userinfo (before ":"), and a piece of a password or token: both
# stop at white space, a quote, a tag or a backslash (a JSON escape); a password may hold
# "/" and ":", never "://" (a second URL). Possessive, and each ends where the next starts,
# so the search takes time linear in the text whatever it holds.
_URL_USER = r"[^\s:/?#\"'<>\\]*+"
_URL_PASSWORD = r"(?:[^\s@\"'<>\\:]|:(?!//)|\\(?![nrt]))++"
_URL_HOSTLESS = r"[^\s:/@?#\"'<>\\]++"

URL_RULES: tuple[Rule, ...] = (
    # scheme://user:password@host, the password up to the last "@" before the host (it may
    # hold "@"; the user may be empty: redis://:pw@host; the password may hold "/");
    # host:port/path@x is not one (the "password" would be a port).
    regex_rule(
        "url-password",
        rf"://(?<=[A-Za-z0-9+.\-]://){_URL_USER}:"
        rf"(?P<s>(?!\d+(?:[/?#\s]|$)|/){_URL_PASSWORD}(?:@{_URL_HOSTLESS}(?=@))*+)@",
    ),
    # https://TOKEN@host: a user part that is not a plain short user name (git@, ubuntu@).
    regex_rule(
        "url-token",
        rf"://(?<=[A-Za-z0-9+.\-]://)(?P<s>{_URL_HOSTLESS}(?:@{_URL_HOSTLESS}(?=@))*+)@",
        keep=lambda m: not _PLAIN_USER_RE.fullmatch(m.group("s")),
    ),
)

# The secret access key written after an AWS key id ("AKIA… wJalrXUtnFEMI/K7MDENG/…"): the
# id alone is not the secret. A word of 30 or more base64 characters, mixed in kind.
AWS_PAIR = (
    r"A(?<![A-Z0-9]A)(?:KIA|SIA)[0-9A-Z]{16}(?:\\?[\"'`]|[ \t,:;=|\r\n]|\\[nt]){1,6}"
    r"(?P<s>[A-Za-z0-9/+]{30,}={0,2})(?![A-Za-z0-9/+=])"
)

# ... and one written before its key id (a CSV of keys with the secret first, a dump in no
# set order): found from each id, in the few characters before it.
_AWS_ID_RE = re.compile(r"A(?<![A-Z0-9]A)(?:KIA|SIA)[0-9A-Z]{16}(?![A-Z0-9])")
_AWS_SECRET_BEFORE_RE = re.compile(
    r"(?<![A-Za-z0-9/+=])(?P<s>[A-Za-z0-9/+]{30,}={0,2})(?:\\?[\"'`]|[ \t,:;=|\r\n]|\\[nt]){1,6}\Z"
)


def aws_secret_before_spans(text: str) -> Iterator[tuple[int, int]]:
    for m in _AWS_ID_RE.finditer(text):
        b = _AWS_SECRET_BEFORE_RE.search(text, max(0, m.start() - 96), m.start())
        if b is not None and mixed_case(b) and not is_masked(b.group("s")):
            yield b.span("s")


def mixed_case(m: re.Match) -> bool:
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


def letters_and_digits(m: re.Match) -> bool:
    return looks_like_credential(m.group("s"), 0)


# Where a credential's word ends in a sentence: not at "/", "+" or a "." inside a name
# (model.layers.0, a path), but at a full stop before a space, a closer or the end.
WORD_END = r"(?![/+]|\.[^\s\"'`)\]>*,;:])"


def _credential_word(m: re.Match) -> bool:
    """Letters and digits, and not an identifier's name (:data:`IDENTIFIER_RE`)."""
    return letters_and_digits(m) and IDENTIFIER_RE.fullmatch(m.group("s")) is None


# A provider's error message quoting the credential it refused: "AuthenticationError: Invalid
# API key: X", "Incorrect API key provided: X", "invalid token X".
ERROR_RULES: tuple[Rule, ...] = (
    regex_rule(
        "error-secret",
        r"[iIwWbBeErRmMuU](?<![A-Za-z0-9_].)(?i:(?:(?<=i)nvalid|(?<=i)ncorrect|(?<=w)rong|(?<=b)ad"
        r"|(?<=e)xpired|(?<=r)evoked|(?<=m)alformed|(?<=u)nknown|(?<=u)nauthori[sz]ed)"
        r"[ \t]+(?:[a-z0-9]+[ \t_\-]){0,2}?(?:key|token|secret|password|credentials?)"
        r"(?:[ \t]+provided)?)[ \t]*[:=][ \t]*[\"'`]?(?P<s>[^\s\"'`,;<\\]{8,}+)",
        keep=_credential_like,
    ),
    regex_rule(
        "error-secret",
        r"[tTaA](?<![A-Za-z0-9_].)(?i:(?:(?<=t)oken|(?<=a)pi[ _\-]?key)[ \t]+)"
        rf"[\"'`]?(?P<s>[A-Za-z0-9_\-]{{16,}}+){WORD_END}",
        keep=_credential_word,
    ),
)


def looks_like_credential(value: str, shortest: int = 16) -> bool:
    """``shortest`` or more characters, letters and digits both, as a key or token is."""
    return (
        len(value) >= shortest
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
    )
