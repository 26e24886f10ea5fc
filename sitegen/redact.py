"""The one redaction step every text from the archive passes through.

One table of rules (:data:`BUILTIN_RULES` plus the user's ``redact_patterns``)
serves both uses: :meth:`Redactor.findings` lists where secrets are (the
publish gate scans built files with it) and :meth:`Redactor.text` replaces
exactly those spans with :data:`MASK`. Three kinds of rule:

* **shapes**: strings shaped like a known credential (``hf_…``, ``ghp_…``,
  ``AIza…``, JWTs, PEM private-key blocks, …), hidden wherever they appear;
* **secret names**: the value after a key, flag or header named like a secret
  (``WANDB_API_KEY=…``, ``--token …``, ``Authorization: Basic …``), hidden to
  the end of the value — a quoted string to its closing quote, a bracketed
  list to its closing bracket, an indented YAML block, else the rest of the line;
* **URL credentials**: ``scheme://user:password@host`` and ``https://TOKEN@host``.

Redacted text contains no findings, so redacting twice changes nothing and a
built site scans clean. Harmless look-alikes stay: a git SHA (40 hex
characters alone), ``sort_key``, ``max_tokens``, ``monkey``.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterator, Sequence

from sitegen.model.frozen import frozen
from sitegen.redact_rules import BUILTIN_RULES, MASK, is_secret_key, may_hold_secret, user_rule

__all__ = ["MASK", "Finding", "Redactor", "is_secret_key"]

# The bytes of a file name that are not UTF-8, as Python reads them (os.fsdecode)
_SURROGATES_RE = re.compile("[\udc80-\udcff]+")


def undecodable_shown(name: str) -> str:
    """``name`` as a page may show it: each run of bytes that are not UTF-8 (a file name
    read with ``surrogateescape``) becomes U+FFFD and the bytes' hex (``train_\\xe9.out`` →
    ``train_�e9.out``), so two such names stay two and the extension stays last."""
    if not _SURROGATES_RE.search(name):
        return name
    return _SURROGATES_RE.sub(
        lambda m: "\ufffd" + m.group(0).encode("utf-8", "surrogateescape").hex(), name
    )


# A Markdown backslash escape: the punctuation after it is shown without the backslash.
_MD_ESCAPE_RE = re.compile(r"\\([!-/:-@\[-`{-~])")


@frozen
class Finding:
    """A secret in a text: what kind, and where (``text[start:end]``)."""

    kind: str
    start: int
    end: int


# --- the redactor ----------------------------------------------------------------------------

_MEMO_MAX_LEN = 256  # short strings (metric names, trial names) repeat: remember their redaction
_MEMO_MAX_ITEMS = 100_000


@frozen
class Redactor:
    """Finds and hides secrets in text, paths and nested config values.

    ``extra_patterns`` are regular expressions a user adds in the config; each
    is compiled alone (a pattern's flags or groups cannot break another).
    """

    extra_patterns: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra_patterns", tuple(self.extra_patterns))
        user = tuple(user_rule(i, p) for i, p in enumerate(self.extra_patterns, 1))
        object.__setattr__(self, "_rules", BUILTIN_RULES + user)
        object.__setattr__(self, "_user_rules", user)
        object.__setattr__(self, "_memo", {})

    def __reduce__(self) -> tuple:
        # Workers and the log-state cache get the patterns, not the compiled rules or the memo.
        return (Redactor, (self.extra_patterns,))

    def findings(self, text: str) -> Iterator[Finding]:
        """The secrets in ``text``, in order and not overlapping (overlaps are merged).

        Exactly these spans are what :meth:`text` replaces, so
        ``findings(text(s))`` is always empty.
        """
        found: list[tuple[int, int, str]] = []
        rules = self._rules if may_hold_secret(text) else self._user_rules  # type: ignore[attr-defined]
        for rule in rules:
            for start, end in rule.spans(text):
                found.append((start, -end, rule.kind))
        found.sort()
        cur: list | None = None
        for start, neg_end, kind in found:
            end = -neg_end
            if cur is not None and start < cur[2]:
                cur[2] = max(cur[2], end)
                continue
            if cur is not None:
                yield Finding(cur[0], cur[1], cur[2])
            cur = [kind, start, end]
        if cur is not None:
            yield Finding(cur[0], cur[1], cur[2])

    def leaves_alone(self, texts: Sequence[str]) -> bool:
        """True when :meth:`text` would return each of ``texts`` as it is, told in one pass.

        Without user rules a text is looked at only when it holds a trigger
        (:func:`~sitegen.redact_rules.may_hold_secret`); ``texts`` joined by newlines, which
        no trigger holds, hold every trigger any of them holds (and at most a few more,
        across a join: then False, and the caller asks text by text). One pass of the
        trigger automaton over a folder's trial names instead of ~3 calls a trial.
        """
        return not self._user_rules and not may_hold_secret("\n".join(texts))  # type: ignore[attr-defined]

    def text(self, s: str) -> str:
        """``s`` with every finding replaced by :data:`MASK`."""
        if not s:
            return s
        if not self._user_rules and not may_hold_secret(s):  # type: ignore[attr-defined]
            return s  # the common case (names, numbers): nothing to look for
        memo: dict[str, str] = self._memo  # type: ignore[attr-defined]
        hit = memo.get(s)
        if hit is not None:
            return hit
        parts, pos = [], 0
        for f in self.findings(s):
            parts.append(s[pos : f.start])
            parts.append(MASK)
            pos = f.end
        out = "".join(parts) + s[pos:] if parts else s
        if len(s) <= _MEMO_MAX_LEN and len(memo) < _MEMO_MAX_ITEMS:
            memo[s] = out
        return out

    def markdown(self, s: str) -> str:
        """Markdown source (a ``notes.md``) redacted as it will read once rendered.

        Markdown hides a backslash before punctuation and HTML turns entities into
        characters, so ``hf\\_AbC…`` or ``sk&#45;…`` show a secret whose source has none of
        the shapes. When the text as rendered (escapes and entities undone) holds a finding,
        that text, redacted, is the source from then on: its escapes are lost, as nothing is
        safer; otherwise it is :meth:`text` of the source.
        """
        if not s:
            return s
        shown = html.unescape(_MD_ESCAPE_RE.sub(r"\1", s))
        if shown != s and next(self.findings(shown), None) is not None:
            return self.text(shown)
        return self.text(s)

    def name(self, s: str) -> str:
        """A name that becomes part of a path, id or URL: secrets become a stable hash.

        ``exp-hf_…`` becomes ``exp-redacted-3f2a9c``: the same secret always gives
        the same name (a URL made from it stays put) and two secrets give two names.
        Bytes that are not UTF-8 are shown as :func:`undecodable_shown` says.
        """
        if not s:
            return s
        memo: dict[str, str] = self._memo  # type: ignore[attr-defined]
        key = "\0name\0" + s  # (no text holds a NUL after reading: it cannot meet a text() key)
        hit = memo.get(key)
        if hit is not None:
            return hit
        raw = s
        if not s.isascii():
            s = undecodable_shown(s)
        parts, pos = [], 0
        for f in self.findings(s):
            digest = hashlib.sha256(s[f.start : f.end].encode("utf-8", "surrogateescape"))
            parts.append(s[pos : f.start])
            parts.append(f"redacted-{digest.hexdigest()[:6]}")
            pos = f.end
        out = "".join(parts) + s[pos:] if parts else s
        if len(raw) <= _MEMO_MAX_LEN and len(memo) < _MEMO_MAX_ITEMS:
            memo[key] = out
        return out

    def path(self, rel: str) -> str:
        """A ``/``-separated path with each segment passed through :meth:`name`."""
        return "/".join(self.name(seg) for seg in rel.split("/"))

    def value(self, key: str | None, value: object) -> object:
        """Redact a config value found under ``key`` (recursing into containers; keys too)."""
        if key is not None and is_secret_key(key) and value not in (None, "", False, [], {}):
            return MASK  # the whole value, a list or mapping too
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(str(k), v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(None, v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value
