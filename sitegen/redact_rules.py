"""The rule table behind :class:`sitegen.redact.Redactor`: secret shapes and what names them.

Split from ``redact.py`` so the rules (what counts as a secret) read apart from
the mechanism (finding, masking, hashing names); both the build's redaction and
the publish gate use exactly these rules. What names a secret is
:mod:`sitegen.redact_names`; where a named value ends, :mod:`sitegen.redact_values`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from itertools import pairwise

import msgspec
from ahocorasick_rs import AhoCorasick

from sitegen.redact_names import is_secret_key, names_a_service
from sitegen.redact_values import (
    IDENTIFIER_RE,
    KIND_MASK_RE,
    MASK,
    WINDOWS_PATH,
    Next,
    assignment_spans,
    is_masked,
    names_a_model_token,
    pair_spans,
)

# --- rules -----------------------------------------------------------------------------------

Spans = Callable[[str], Iterator[tuple[int, int]]]


class Rule(msgspec.Struct, frozen=True):
    """One kind of secret: ``spans(text)`` yields where it is."""

    kind: str
    spans: Spans


def _regex_rule(kind: str, pattern: str, keep: Callable[[re.Match], bool] | None = None) -> Rule:
    """A rule from a regex: the secret is the group ``s`` if the pattern has one, else the match."""
    rx = re.compile(pattern)
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
    # (a flag that says where the secret is read from takes no value: --password-stdin)
    key = m.group("key")
    return is_secret_key(key) and not key.lower().endswith("stdin")


def _secret_flag(m: re.Match) -> bool:
    """A secret-named flag, not glued after a mask (``[REDACTED]--token ""cd``: a second
    pass would read what the first left as the glued flag's value); after any other ``]``
    (``[INFO]--password X``, a log's bracketed prefix) it is a flag."""
    text, at = m.string, m.start()
    if at and text[at - 1] == "]":
        opened = text.rfind("[", max(0, at - 64), at)
        if opened >= 0 and (
            text[opened:at] == MASK or KIND_MASK_RE.fullmatch(text, opened, at) is not None
        ):
            return False
    return _secret_name(m)


_PLAIN_USER_RE = re.compile(r"[a-z_][a-z0-9_.\-]{0,15}")

# A key's body, not a word after a short prefix (fw_checkpointing, as-SUBSCRIBED): letters of
# both cases, or letters and digits.
_NOT_ONE_CASE = r"(?![a-z]++(?![A-Za-z0-9]))(?![A-Z]++(?![A-Za-z0-9]))"

_SHAPES: tuple[tuple[str, str], ...] = (
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

# A command-line value: up to white space, a quote (or a page's entity for one: the HTML made
# of redacted text scans as the text does), a tag, or an escaped line break (text inside a
# JSON string: "--token X\\nnext" holds the value X). Not at &#x22;, &#034; or &apos;: a value
# they open and close is read whole as quoted (below), one they open and leave open reads
# on to the next blank.
_TOKEN = r"(?:[^\s\"'<\\&]|&(?!quot;|#34;|#39;|#x27;)|\\(?![nrt]))+"

# A value in quotes written as a page's entities: &quot;X&quot;, &#39;X&#39; (and &#34;,
# &#034;, &#x22;, &#x27;, &apos;: the quotes a named value's are), up to the same entity.
_ENTITY_QUOTED = r"(?P<eq>&(?:quot|#0?34|#39|#x2[27]|apos);)(?:(?!(?P=eq))[^\n])*+(?P=eq)"

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


# A line's end, or a JSON or Python string's closing quote before it, whatever follows on
# its line ("...\npassword KEY", "x": 1}), escaped itself (JSON in JSON) or as a page's
# entity, and not opening a quoted word (password reset "ok"), maybe after a carriage
# return, itself escaped ("...\npassword KEY\r"}): where a .netrc's own line ends in
# escaped text
_LINE_END = r"[ \t]*+(?:\\r|\r)?(?:(?:\\?[\"']|&(?:quot|#34|#39|#x27);)(?!\w)[^\n]*+)?$"


def _no_mask(m: re.Match) -> bool:
    """A value holding no mask: one holding what another rule hid, the character that ended
    the value there gone with it (C:\\x, "<", a quote), reads to its line's end only once hidden."""
    return "[REDACTED" not in m.group("s")


# A .netrc's password: a quote glued inside it, before a word's character, is part of it
# (password KEY"1); one before anything else closes the string the file is written in
_NETRC_VALUE = rf"{_TOKEN}(?:[\"'](?=\w){_TOKEN})*+"
_CLI_RULES: tuple[Rule, ...] = (
    # --token X, --api-key=X, --hf_token "X", --wandb.key X; quoted in a page's entities,
    # --token &quot;X&quot; (the HTML made of redacted text scans as the text does); a word
    # glued after the quotes is the value's, as the shell reads it (--token "ab"cd)
    _regex_rule(
        "cli-secret",
        rf"{_FLAG}(?:=|[ \t]+)(?P<s>(?:\"[^\"\n]*\"|'[^'\n]*'|{_ENTITY_QUOTED})"
        rf"(?:(?=[\w\-]){_TOKEN})?|{_TOKEN})",
        keep=_secret_flag,
    ),
    # argv lists: ["--wandb-api-key", "X"] (JSON, Python), [--token, X] (YAML flow) and
    # "- --token" then "- X" (a YAML block list): the item after a secret-named flag
    _regex_rule(
        "cli-secret",
        rf"{_FLAG}(?:\\?[\"'])?[ \t]*"
        r"(?:,[ \t]*(?:\r?\n[ \t]*)?|\r?\n[ \t]*-[ \t]*)(?:\\?[\"'])?"
        r"(?P<s>(?!-)(?:[^\s\"',\[\]{}<\\]|\\(?![nrt\"']))+)",
        keep=_secret_flag,
    ),
    # curl -u admin:pw / --user admin:pw
    _regex_rule(
        "cli-password", rf"-(?<!\S-)(?:u|-user|-proxy-user)[ \t]*[\"']?[^\s:\"']*:(?P<s>{_TOKEN})"
    ),
    # docker login -u me -p X (podman, helm registry, …): -p is a password only after "login"
    # on its line (in JSON, an escaped line break ends it)
    _regex_rule(
        "cli-password",
        rf"[ \t]login(?:[ \t]+(?!-p\b)(?:[^\s\\]|\\(?![nrt]))++){{0,8}}[ \t]+-p(?:[ \t]+|=)"
        rf"(?P<s>(?!-){_TOKEN})",
    ),
    # aws configure set aws_secret_access_key X; setenv HF_TOKEN X; fish's set -gx HF_TOKEN X;
    # a Dockerfile's ENV HF_TOKEN X (as docker build echoes it)
    _regex_rule(
        "cli-secret",
        r"(?:s(?<!\ws)et(?:env)?(?:[ \t]+-[A-Za-z]+)*+|E(?<!\wE)NV)[ \t]+"
        rf"(?P<key>[A-Za-z_][A-Za-z0-9_.\-]*)[ \t]+(?P<s>{_TOKEN})",
        keep=_secret_name,
    ),
    # wandb login [--relogin] [--host URL] KEY (the flags that take a value, by name)
    _regex_rule(
        "wandb-key",
        r"wandb(?<!\wwandb)[ \t]+login"
        r"(?:[ \t]+--(?:host|base-url|anonymously)(?:=|[ \t]+)\S+|[ \t]+--[\w\-]+(?:=\S+)?)*"
        rf"[ \t]+(?P<s>(?!-){_TOKEN})",
    ),
    # ... as an argv list: ['wandb', 'login', KEY], as subprocess's CalledProcessError quotes it
    _regex_rule(
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
        _regex_rule(
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
    _regex_rule(
        "piped-secret",
        r"login(?<=[ \t]login)(?![\w\-])(?:[^|\n;&<\\]|\\(?![nr])){0,200}?<<<[ \t]*"
        r"(?:\\?[\"'])?(?P<s>[^\s\"'<\\|]+)",
        keep=lambda m: "$" not in m.group("s"),
    ),
    # a login call's secret: login('KEY') (huggingface_hub's token, a notebook's wandb key),
    # the second of two: smtp.login('user', 'PASSWORD'). One argument is a secret only with a
    # credential's look, letters and digits (logger.login("user"), login('hello') name one).
    _regex_rule(
        "login-secret",
        r"login\((?<![A-Za-z0-9]login\()[ \t]*(?P<user>b?(?P<q>\\?[\"'])(?:(?!(?P=q))[^\n])*+(?P=q)[ \t]*,[ \t]*)?"
        r"b?(?P<q2>\\?[\"'])(?P<s>(?:(?!(?P=q2))[^\n])++)(?P=q2)",
        keep=lambda m: m.group("user") is not None or _letters_and_digits(m),
    ),
    # a terminal's answer to a command that prints a secret-named variable: the line after
    # "echo $WANDB_API_KEY", "printenv HF_TOKEN", "aws configure get aws_secret_access_key"
    # (one rule a command: each starts with its literal, for the regex engine to skip to)
    *(
        _regex_rule("printed-secret", command + _PRINTED, keep=_printed_secret)
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
    _regex_rule(
        "netrc-password",
        rf"login(?<!\wlogin)[ \t]+(?:[^\s\\]|\\(?![nrt]))++[ \t]+password[ \t]+(?P<s>{_NETRC_VALUE})",
    ),
    _regex_rule(
        "netrc-password",
        rf"(?m)^[ \t]*password[ \t]+(?!(?:is|was){_LINE_END})(?P<s>{_NETRC_VALUE}){_LINE_END}",
        keep=_no_mask,
    ),
)

# The secret access key written after an AWS key id ("AKIA… wJalrXUtnFEMI/K7MDENG/…"): the
# id alone is not the secret. A word of 30 or more base64 characters, mixed in kind.
_AWS_PAIR = (
    r"A(?<![A-Z0-9]A)(?:KIA|SIA)[0-9A-Z]{16}(?:\\?[\"'`]|[ \t,:;=|\r\n]|\\[nt]){1,6}"
    r"(?P<s>[A-Za-z0-9/+]{30,}={0,2})(?![A-Za-z0-9/+=])"
)

# ... and one written before its key id (a CSV of keys with the secret first, a dump in no
# set order): found from each id, in the few characters before it.
_AWS_ID_RE = re.compile(r"A(?<![A-Z0-9]A)(?:KIA|SIA)[0-9A-Z]{16}(?![A-Z0-9])")
_AWS_SECRET_BEFORE_RE = re.compile(
    r"(?<![A-Za-z0-9/+=])(?P<s>[A-Za-z0-9/+]{30,}={0,2})(?:\\?[\"'`]|[ \t,:;=|\r\n]|\\[nt]){1,6}\Z"
)


def _aws_secret_before_spans(text: str) -> Iterator[tuple[int, int]]:
    for m in _AWS_ID_RE.finditer(text):
        b = _AWS_SECRET_BEFORE_RE.search(text, max(0, m.start() - 96), m.start())
        if b is not None and _mixed(b) and not is_masked(b.group("s")):
            yield b.span("s")


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
    return _looks_like_credential(m.group("s"), 0)


# Where a credential's word ends in a sentence: not at "/", "+" or a "." inside a name
# (model.layers.0, a path), but at a full stop before a space, a closer or the end.
_WORD_END = r"(?![/+]|\.[^\s\"'`)\]>*,;:])"


def _credential_word(m: re.Match) -> bool:
    """Letters and digits, and not an identifier's name (:data:`IDENTIFIER_RE`)."""
    return _letters_and_digits(m) and IDENTIFIER_RE.fullmatch(m.group("s")) is None


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
        rf"[\"'`]?(?P<s>[A-Za-z0-9_\-]{{16,}}+){_WORD_END}",
        keep=_credential_word,
    ),
)


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
# digits, "_" and "-" ending as a word does (:data:`_WORD_END`), or base64 (16 or more of
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
_PROSE_WORD_RE = re.compile(rf"[A-Za-z0-9_\-]{{6,}}+{_WORD_END}")
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
    if opener == '\\"':  # (escaped, inside a JSON string: its run ends at the backslash)
        return m.end() - 1 if text.startswith(opener, m.end() - 1) else None
    return m.end() if text.startswith(_CLOSING_QUOTE[opener], m.end()) else None


# A number, maybe with an exponent and a unit, or a few joined by "/" (a ratio, a rate); a
# unit from a list, not any letters: 123qwe and 123abc are common passwords
_UNIT = r"(?:%|[munµμ]?s|min|[mkKMGT]?(?:Wh?|Hz|i?B)|[kKMGT]b|m?V|m?A|C|dB|it|tok|fps|rpm)"
_NUMBER = r"[-+]?(?:\d++\.?\d*+|\.\d++)(?:[eE][-+]?\d++)?"
_METRIC_RE = re.compile(rf"{_NUMBER}{_UNIT}?(?:/(?:{_NUMBER})?{_UNIT}?)*+")


def _prose_value(word: str, value: str, svc: str | None) -> bool:
    """Whether ``value``, after ``word`` and a connective, is a secret.

    After "key", "token" or "secret" a credential's word (16 or more letters and digits); a
    password's, 6 or more characters with a digit (hunter2), or in quotes a few words
    (``"correct horse battery"``: a passphrase; a quoted sentence is not one). Lower-case words joined by "_"
    are such a value too when they hold a digit (my_secret_token_value_abc123): a name a
    sentence gives, of where a secret is, has none (config_file_path, secrets_manager); only
    a model's token named as one keeps its name (next token = im_start_token123456,
    :func:`names_a_model_token`).
    """
    if _password_word(word):
        if any(c in value for c in " \t\n"):  # (only a quoted value holds a blank)
            words = value.lower().split()
            return (
                len(words) <= _PASSPHRASE_WORDS
                and not _STATE_WORDS.issuperset(words)
                and "[redacted" not in value.lower()  # (what was hidden in it is no phrase's)
            )
        # (after "pw" or "pwd" a letter too, and no number with an exponent or a unit:
        # pw: 0.123456, pw: 3.4e-05, pw: 1.5GiB, pw: 250W/300W are a metric's)
        letter = word.startswith("pass") or (
            any(c.isalpha() for c in value) and _METRIC_RE.fullmatch(value) is None
        )
        return len(value) >= 6 and any(c.isdigit() for c in value) and letter
    return _looks_like_credential(value) and not (
        svc is not None and names_a_model_token(f"{svc} {word}", value)
    )


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
        # (a password's word only with a connective: "login user password X" is .netrc's)
        said = m.group("conn") is not None or (service and not _password_word(word))
        span = _prose_value_span(text, m, word) if named and said else None
        value = text[span[0] : span[1]] if span is not None else ""
        conn = m.group("conn")
        worded = conn is None or conn.split(":")[0].strip().lower() in ("is", "was")
        if worded and m.group("q") is None and _STATE_RE.fullmatch(value):
            span = None  # (a state, not a value: "HF_TOKEN was rotated_2024_05")
        if word in ("pw", "pwd") and (conn or "").strip() == "=" and m.group("q") is None:
            span = None  # (code: pw = torch.randn(4, 4); a quoted value is a password's)
        if span is not None and _prose_value(word, value, svc) and not is_masked(value):
            yield span
        else:  # (the run may be the next sentence's word: "secret -\npassword was X")
            pos = m.start("s") if m.group("q") is None else m.start("q") + 1


_PROSE_RULE = Rule("prose-secret", _prose_spans)


# A password said before its name: "hunter22 is the password", "hunter22 was my old pwd",
# '"correct horse" is the passphrase'. Found from each name (a word alone, not db_password),
# the value and "is" or "was", with up to three words between, looked for in the
# _BEFORE_REACH characters before it; the name ends its clause (the password file, hash, …
# is no password).
_PASSWORD_NAME_RE = re.compile(r"(?<![\w\-])(?i:passw(?:or)?d|passphrase|pwd)(?![\w\-])")
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
_AFTER_NAME_RE = re.compile(r"[ \t]++(?P<w>[A-Za-z]++)")
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


_PROSE_BEFORE_RULE = Rule("prose-secret", _prose_before_spans)


# A table's row that names a secret in one cell and holds it in the next, as notes list a
# run's settings: Markdown (| WANDB_API_KEY | X |), HTML (<td>HF_TOKEN</td><td>X</td>) or
# columns of spaces. The name may be in code or bold, in up to five words (Weights & Biases
# API key);
# the value is the next cell, whole.
_CELL_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.&]*+(?: [A-Za-z&][A-Za-z0-9_&]*+){0,4}")
_CELL_MARKUP = "`* \t\r"
# Values (in lower case) that say there is none, or whether a setting is set, never what
_CELL_EMPTY = frozenset(
    {"none", "null", "-", "n/a", "yes", "no", "true", "false", "required", "optional"}
    | {"set", "unset", "\u2713", "\u2717", "\u2014"}
)
_PASSWORD_WORDS = ("pass", "pwd")


def _looks_like_credential(value: str, shortest: int = 16) -> bool:
    """``shortest`` or more characters, letters and digits both, as a key or token is."""
    return (
        len(value) >= shortest
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
    )


# A value that names where the secret is, not the secret: $HF_TOKEN, ${HF_TOKEN},
# ${{ secrets.HF_TOKEN }}, Windows' %HF_TOKEN% (a variable's name in capitals).
_REFERENCE_RE = re.compile(r"\$\{\{.*\}\}|\$\{?[A-Z_][A-Z0-9_]*+\}?|%[A-Z_][A-Z0-9_]*+%")


_PROSE_PUNCTUATION = ",.;:()!?"


def _cell_secret(key: str, value: str, where: str = "row") -> bool:
    """Whether a cell named ``key`` holds a secret ``value`` (both without markup), in a
    table's ``row``, its ``header`` (the row above ``|---|``) or ``other`` text with "|"
    (a shell's pipes: ``env | grep TOKEN | cut -d= -f1``).

    Notes' tables name secrets they do not hold: a header (``| Token | Reward |``), a
    description (``| HF_TOKEN | Download Llama3 weights |``), a reference (``$HF_TOKEN``,
    ``${{ secrets.HF_TOKEN }}``). So:

    * under an environment variable's name (``HF_TOKEN``, ``DB_PASSWORD``), in a row or a
      header (a key-value table often has no header of its own), any value is one;
    * under plain words (``Token``, ``wandb key``) only a credential's look is (16 or more
      letters and digits; a password's, 6), and in other text only a credential's look of 16;
    * a value with a space is a description unless its first word looks like a credential,
      or it is a password's in a row, of a few words and no punctuation (a passphrase:
      ``correct horse battery staple``; ``not set, runs use sqlite`` describes);
    * in a header, a value with a digit (a column's name has none).
    """
    value = html.unescape(value)  # (judged as shown: a page escapes the text)
    if not is_secret_key(key) or value.lower() in _CELL_EMPTY or _REFERENCE_RE.fullmatch(value):
        return False
    password = any(w in key.lower() for w in _PASSWORD_WORDS)
    if any(c in value for c in " \t"):
        first = value.split(None, 1)[0].strip("`*")
        passphrase = (
            password
            and where == "row"
            and len(value.split()) <= 6
            and not any(c in value for c in _PROSE_PUNCTUATION)
        )
        return passphrase or _looks_like_credential(first)
    if where == "other":
        return _looks_like_credential(value)
    if where == "header":  # a column's name (base_url, Description) has no digit
        return any(c.isdigit() for c in value)
    if "_" in key or key.isupper():
        return True
    return _looks_like_credential(value, 6 if password else 16)


def _cell_key(cell: str) -> str | None:
    """The setting a cell names (``**W&B API key**``, `` `HF_TOKEN` ``), or None."""
    m = _CELL_KEY_RE.fullmatch(cell.strip(_CELL_MARKUP).replace("&amp;", "&"))
    return m.group(0) if m else None


# A Markdown table's row: a line that starts and ends with "|" (after spaces); and the
# delimiter row under its header row. A line ends at a line break, or at an escaped one
# (a table inside a JSON string).
_DELIMITER_CHARS = frozenset("|-: \t\r")
_BREAKS = ("\n", "\\r\\n", "\\n", "\\r")
# A row inside a JSON string, at its start or end: {"notes": "| a | b |"} or "| a | b |",
_JSON_EDGES_RE = re.compile(r'^[^|]*"(?=[ \t]*+\|)|(?<=\|)[ \t]*+"[ \t,}\]]*+$')


def _table_row_spans(text: str) -> Iterator[tuple[int, int]]:
    """Values of the cells after a cell naming a secret, on each line holding "|"
    (:func:`_cell_secret` decides, by where the line is: a row, a header, other text)."""
    nexts = [Next(text, b) for b in _BREAKS]

    def line_end(pos: int) -> tuple[int, int]:  # where the line from pos ends, its break's size
        ends = [n.after(pos) for n in nexts]
        e = min(ends)
        return e, len(_BREAKS[ends.index(e)])

    lo = 0
    i = text.find("|")
    while i >= 0:
        start = lo  # just after the last break before the "|" (none since the last line)
        for b in _BREAKS:
            j = text.rfind(b, lo, i)
            if j >= 0:
                start = max(start, j + len(b))
        end, size = line_end(i)
        line = text[start:end].rstrip()  # (any white space: a no-break space, a form feed)
        body = _JSON_EDGES_RE.sub("", line.lstrip())
        where = "other"
        if len(body) > 1 and body[0] == "|" and body[-1] == "|":
            below_end, _ = line_end(end + size) if end < len(text) else (end, 0)
            # (only these characters: its blanks and a CRLF line's "\r" are among them)
            below = text[end + size : below_end]
            header = "-" in below and "|" in below and set(below) <= _DELIMITER_CHARS
            where = "header" if header else "row"
        cells, pos = [], start
        for cell in line.split("|"):
            cells.append((pos, cell))
            pos += len(cell) + 1
        for (_, key_cell), (at, value_cell) in pairwise(cells):
            key = _cell_key(key_cell)
            value = value_cell.strip(_CELL_MARKUP)
            if key is None or not value or is_masked(value):
                continue
            if _cell_secret(key, value, where):
                yield at + len(value_cell) - len(value_cell.lstrip()), at + len(value_cell.rstrip())
        lo = end
        i = text.find("|", end)


# An HTML cell's markup around a name or value: <b>, <code>, <span class="x">
_HTML_MARKUP = r"(?:<(?i:/?(?:b|strong|code|em|i|kbd|span))(?:[ \t][^<>]*+)?>[ \t]*+)*+"


def _html_cell_secret(m: re.Match) -> bool:
    key = _cell_key(m.group("key"))
    return key is not None and _cell_secret(key, m.group("s").strip(_CELL_MARKUP))


def _html_one_cell_secret(m: re.Match) -> bool:
    """A cell holding a secret's name and its value (<td>password hunter22</td>): the name
    in up to four words before the value, the value with a credential's look (a password's,
    6 letters and digits; another's, 16), so a description (password reset) stays."""
    key = _cell_key(m.group("key"))
    if key is None or not is_secret_key(key):  # (its words, whatever joins them)
        return False
    password = any(w in key.lower() for w in _PASSWORD_WORDS)
    return _looks_like_credential(html.unescape(m.group("s")), 6 if password else 16)


_TABLE_RULES: tuple[Rule, ...] = (
    Rule("secret-table-cell", _table_row_spans),
    # (tag names in either case: <TD> as old editors write it)
    _regex_rule(
        "secret-table-cell",
        rf"<(?i:t[dh])(?:[ \t][^<>]*+)?>[ \t]*+{_HTML_MARKUP}(?P<key>[^<>\n]*+){_HTML_MARKUP}"
        rf"</(?i:t[dh])>\s*+<(?i:td)(?:[ \t][^<>]*+)?>[ \t]*+{_HTML_MARKUP}(?P<s>[^<\n]*[^<\s])",
        keep=_html_cell_secret,
    ),
    # ... or in one cell, its name before it: <td>password hunter22</td>
    _regex_rule(
        "secret-table-cell",
        rf"<(?i:t[dh])(?:[ \t][^<>]*+)?>[ \t]*+{_HTML_MARKUP}"
        r"(?P<key>[A-Za-z_][A-Za-z0-9_.&]*+(?:[ \t]++[A-Za-z&][A-Za-z0-9_&]*+){0,3})"
        rf"[ \t]*+{_HTML_MARKUP}(?<=[ \t>])(?P<s>[^\s<]++)[ \t]*+{_HTML_MARKUP}</(?i:t[dh])>",
        keep=_html_one_cell_secret,
    ),
    # columns lined up with spaces (notes, a tool's listing): an environment variable's name
    # (in either case) starting a line, then a credential's word (letters and digits, 16 or more)
    _regex_rule(
        "secret-table-cell",
        r"(?m)^[ \t]*+(?:[-*][ \t]+)?(?P<key>[A-Za-z][A-Za-z0-9]*+(?:_[A-Za-z0-9]++)++)[ \t]+[\"'`]?"
        r"(?P<s>[A-Za-z0-9_\-+/=.]{16,}+)(?![^\s\"'`])",
        keep=lambda m: is_secret_key(m.group("key")) and _letters_and_digits(m),
    ),
)


# Something every built-in rule needs to find anything. Text holding none of these (most
# trial and metric names) skips the rules: plain substring tests cost a microsecond, the
# rules fifty. tests/test_redact.py checks each shape gets through; tests/test_redact_rules.py
# that each trigger is needed. (A URL's "://", curl's "-u user:pw" and a Discord webhook hold
# ":", a PEM block's "-----BEGIN" holds "--".)
_TRIGGERS = (
    *("hf_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "k_live_"),
    *("k_test_", "AIza", "ya29.", "eyJ", "AKIA", "ASIA", "dtn_", "npm_", "xox"),
    *("gsk_", "pplx-", "tvly-", "lsv2_", "r8_", "api_org_", "wandb_v1_", "nvapi-"),
    *("tgp_v1_", "xai-", "fw_", "csk-", "pcsk_", "e2b_", "rpa_", "dapi", "sntry", "GOCSPX-"),
    *("ls__", "pypi-AgE", "dckr_", "IQoJb3JpZ2luX2Vj", "FwoGZXIvYXdzE", "tskey-", "local-"),
    *("SG.",),
    *("eC1hY2Nlc3MtdG9rZW46",),  # (a git extraheader's base64 "x-access-token:")
    *("--", "set ", "set\t", "setenv", "ENV ", "ENV\t", "login ", "login\t"),
    *("login(", "|", "'login", '"login', "echo", "printf", "printenv", "configure"),
    *("=", ":"),
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
    # (pwd and pw as words, after a blank, a line break or "(": DB_PWD's value has triggers
    # of its own)
    *(" pw", "\tpw", "\npw", "(pw"),
    "<td",
)


def may_hold_secret(text: str) -> bool:
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
    return any(t in low for t in _LOWER_TRIGGERS)


BUILTIN_RULES: tuple[Rule, ...] = (
    *(_regex_rule(kind, p) for kind, p in _SHAPES),
    _regex_rule("aws-secret-key", _AWS_PAIR, keep=_mixed),
    Rule("aws-secret-key", _aws_secret_before_spans),
    *_URL_RULES,
    *_CLI_RULES,
    *_ERROR_RULES,
    *_TABLE_RULES,
    Rule("secret-assignment", assignment_spans),
    Rule("secret-env-pair", pair_spans),
    _PROSE_RULE,
    _PROSE_BEFORE_RULE,
)


# --- what a transcript adds ---------------------------------------------------------------
#
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
    # a URL on a private network (RFC 1918, carrier-grade NAT, private DNS names)
    _regex_rule(
        "private-address",
        r"://(?<=[A-Za-z0-9+.\-]://)(?:[^\s/@\"'<>]*+@)?(?P<s>(?P<host>[A-Za-z0-9.\-]++)(?::\d++)?)",
        keep=_private_host,
    ),
    Rule("private-address", _api_base_spans),
)
_TRANSCRIPT_TRIGGERS = ("/home/", "/Users/", "\\Users\\", "://")


def may_hold_transcript_secret(text: str) -> bool:
    """:func:`may_hold_secret`, or a trigger of :data:`TRANSCRIPT_RULES`."""
    return may_hold_secret(text) or any(t in text for t in _TRANSCRIPT_TRIGGERS)


# --- text inside a JSON string ---------------------------------------------------------------
#
# A log line or a config value may hold a command or prose as a JSON string, its line breaks
# written as the two characters "\\" "n": ``{"cmd": "set -e\\necho KEY | docker login …"}``.
# The rules that read a line's start, or the character before a word, see none there. So they
# also read the text with each such escape as the break or blank it stands for, in as many
# characters (a span found there is a span of the text): ``\\n`` as " \\n", ``\\r\\n`` as
# "  \\r\\n", ``\\t`` as two blanks; escaped again (JSON inside a JSON string: ``\\\\n``) or
# as a code point (``\\u000a``) too. A Windows path after its drive (``C:\\new\\table``)
# holds folders, not breaks.
_ESCAPE_RE = re.compile(
    rf"{WINDOWS_PATH}"
    r"|(?<!\\)\\++(?:r\\++n|[nrt]|u000[aAdD9])"  # (from a run's first backslash)
)


def _as_break(m: re.Match) -> str:
    """The escape ``m`` as the break or blank it stands for, in as many characters."""
    esc = m.group(0)
    if esc[0] != "\\":  # a Windows path
        return esc
    last = esc[-1].lower()
    brk = (
        "\r\n"
        if "r" in esc and last == "n"
        else {"n": "\n", "a": "\n", "r": "\r", "d": "\r"}.get(last, "")
    )
    return " " * (len(esc) - len(brk)) + brk


# A text up to this long is read a second time whole; in a longer one (a built page, a
# vendored script whose strings hold "\\n"), only within _VIEW_REACH of each escape, each
# window's edges moved out to a blank: what an escape changes is read within a line or two of it.
VIEW_WHOLE = 1 << 16
_VIEW_REACH = 4096
_EDGE_REACH = 256  # how much further out a window's edge looks for a blank


def escape_windows(text: str) -> list[tuple[int, int]]:
    """Where to read :func:`escapes_as_breaks` of ``text``: the whole text, or (longer than
    :data:`VIEW_WHOLE`) windows around its escapes, in order and apart."""
    if len(text) <= VIEW_WHOLE:
        return [(0, len(text))]
    out: list[tuple[int, int]] = []
    for m in _ESCAPE_RE.finditer(text):
        if m.group(0)[0] != "\\":  # (a Windows path: no escape)
            continue
        lo, hi = max(0, m.start() - _VIEW_REACH), min(len(text), m.end() + _VIEW_REACH)
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return [(_blank_before(text, lo), _blank_after(text, hi)) for lo, hi in out]


def _blank_before(text: str, i: int) -> int:
    """Just after the last blank in the :data:`_EDGE_REACH` characters before ``text[i]``
    (``i`` if there is none): a window starts where no word was cut."""
    if i == 0:
        return 0
    j = max(text.rfind(c, max(0, i - _EDGE_REACH), i) for c in " \t\n")
    return j + 1 if j >= 0 else i


def _blank_after(text: str, i: int) -> int:
    """At the first blank in the :data:`_EDGE_REACH` characters from ``text[i]``."""
    found = [j for c in " \t\n" if (j := text.find(c, i, i + _EDGE_REACH)) >= 0]
    return min(found) if found else i


def escapes_as_breaks(text: str) -> str:
    """``text`` with each escaped line break or tab outside a Windows path made the break or
    blank it stands for, each in as many characters (``text`` itself when it holds none)."""
    if "\\" not in text:
        return text
    return _ESCAPE_RE.sub(_as_break, text)


def literal_rule(kind: str, values: tuple[str, ...]) -> Rule:
    """Every occurrence of one of ``values`` (a trial's own secrets, known by their names in
    its config or in the build's environment), whatever it looks like.

    Every occurrence, a word of prose or part of a longer word too, not only where the value
    stands as one (after "=", ":", a quote or a flag): an agent that says its password in a
    sentence ("I will try correcthorse") says the secret, and nothing tells that sentence from
    one using a plain word apart. A common word hidden by mistake costs the reader a word; a
    secret shown costs a rotation. (Values shorter than 8 characters are never literals.)"""
    ac = AhoCorasick(list(values))

    def spans(text: str) -> Iterator[tuple[int, int]]:
        try:
            found = ac.find_matches_as_indexes(text, overlapping=True)
        except UnicodeEncodeError:  # a lone surrogate: one value at a time
            found = [
                (i, m.start(), m.end())
                for i, v in enumerate(values)
                for m in re.finditer(re.escape(v), text)
            ]
        for _, start, end in found:
            yield start, end

    return Rule(kind, spans)


def user_rule(n: int, pattern: str) -> Rule:
    """The user's ``n``-th pattern (1-based), compiled alone so it cannot break the others."""
    rx = re.compile(pattern)

    def spans(text: str) -> Iterator[tuple[int, int]]:
        for m in rx.finditer(text):
            if m.end() > m.start() and m.group(0) != MASK:
                yield m.span()

    return Rule(f"user-pattern:{n}", spans)
