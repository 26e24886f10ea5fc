"""The redactor: finds and hides the rules' secrets in text, names, paths and configs."""

from __future__ import annotations

import bisect
import hashlib
import html
import re
from collections.abc import Callable, Iterable, Iterator

import msgspec

from sitegen.redact.escapes import escape_windows, escapes_as_breaks
from sitegen.redact.names import is_secret_key
from sitegen.redact.rule import literal_rule, user_rule
from sitegen.redact.rules import BUILTIN_RULES, may_hold_secret
from sitegen.redact.transcript import TRANSCRIPT_RULES, may_hold_transcript_secret
from sitegen.redact.values import MASK

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


# UTF-16 surrogates: a JSON or Python escape ("\\ud800") makes one that no UTF-8 holds
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def valid_unicode(s: str) -> str:
    """``s`` as UTF-8 can hold it: a pair of surrogate escapes (``"\\ud83d\\ude00"``, as
    some JSON writers escape an emoji) joined into its character, a lone one (a string cut
    in half, a file name's undecodable byte) replaced by U+FFFD. Written as it was, such a
    text ends the build when a page or a JSON file is encoded."""
    if s.isascii() or _SURROGATE_RE.search(s) is None:
        return s
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


# A Markdown backslash escape: the punctuation after it is shown without the backslash.
_MD_ESCAPE_RE = re.compile(r"\\([!-/:-@\[-`{-~])")


class Finding(msgspec.Struct, frozen=True):
    """A secret in a text: what kind, and where (``text[start:end]``)."""

    kind: str
    start: int
    end: int


# --- the redactor ----------------------------------------------------------------------------

_MEMO_MAX_LEN = 256  # short strings (metric names, trial names) repeat: remember their redaction
_MEMO_MAX_ITEMS = 100_000


MAX_DEPTH = 100  # containers nested deeper than this in a config are hidden whole


class Redactor(msgspec.Struct, frozen=True, dict=True):
    """Finds and hides secrets in text, paths and nested config values.

    ``extra_patterns`` are regular expressions a user adds in the config; each
    is compiled alone (a pattern's flags or groups cannot break another).
    ``transcripts``: also hide what an agent's terminal shows of where it ran
    (:data:`~sitegen.redact.transcript.TRANSCRIPT_RULES`); ``literals``: ``(kind, value)`` pairs,
    values hidden wherever they appear (a trial's own secrets, named in its config).
    """

    extra_patterns: tuple[str, ...] = ()
    transcripts: bool = False
    literals: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        # (dict=True: the compiled rules and the memo are kept beside the fields)
        put = msgspec.structs.force_setattr
        put(self, "extra_patterns", tuple(self.extra_patterns))
        put(self, "literals", tuple(self.literals))
        user = tuple(user_rule(i, p) for i, p in enumerate(self.extra_patterns, 1))
        kinds: dict[str, list[str]] = {}
        for kind, value in self.literals:
            kinds.setdefault(kind, []).append(value)
        # (always looked for, as user patterns are: a value holds no trigger to wait for; and
        # first, so a span a rule finds too is named by what is known of it: trial-secret)
        known = tuple(literal_rule(k, tuple(vs)) for k, vs in kinds.items())
        extra = TRANSCRIPT_RULES if self.transcripts else ()
        put(self, "_rules", known + BUILTIN_RULES + extra + user)
        put(self, "_user_rules", known + user)
        # (the built-in rules also read the text with its escaped breaks as breaks; a known
        # value or a user's pattern is found in the text as it is)
        put(self, "_view_rules", range(len(known), len(known) + len(BUILTIN_RULES) + len(extra)))
        put(self, "_may_hold", may_hold_transcript_secret if self.transcripts else may_hold_secret)
        put(self, "_memo", {})

    def __reduce__(self) -> tuple:
        # Workers and the log-state cache get the patterns, not the compiled rules or the memo.
        return (Redactor, (self.extra_patterns, self.transcripts, self.literals))

    def findings(self, text: str) -> Iterator[Finding]:
        """The secrets in ``text``, in order and not overlapping (overlaps are merged).

        Exactly these spans are what :meth:`text` replaces, so
        ``findings(text(s))`` is always empty: the text is read again with what was found
        masked, and what that reading finds (a value a mask leaves without the quote, tag or
        entity that ended it reads on) is found too, until a reading finds nothing more (at
        most :data:`_REREADS` readings after the first: each one is linear in the text). A
        text with no secret is read once; one with a secret at least twice, the price of
        idempotence.
        """
        found = self._merged(self._spans(text))
        for _ in range(_REREADS):
            if not found:
                break
            masked, back = _masked_map(text, found)
            more = self._spans(masked)
            if not more:
                break
            found = self._merged(
                [(f.start, -f.end, -1, f.kind) for f in found]
                + [
                    (back(start, False), -back(-neg_end, True), order, kind)
                    for start, neg_end, order, kind in more
                ]
            )
        yield from found

    def _spans(self, text: str) -> list[tuple[int, int, int, str]]:
        """Every rule's spans in ``text`` as ``(start, -end, rule's order, kind)``, unmerged."""
        found: list[tuple[int, int, int, str]] = []
        may_hold = self._may_hold(text)  # type: ignore[attr-defined]
        rules = self._rules if may_hold else self._user_rules  # type: ignore[attr-defined]
        for order, rule in enumerate(rules):  # (a span two rules find: the first rule's kind)
            for start, end in rule.spans(text):
                found.append((start, -end, order, rule.kind))
        view = escapes_as_breaks(text) if may_hold else text
        if view is not text:  # text inside a JSON string: read again, its escapes as breaks
            for lo, hi in escape_windows(text):
                found += self._view_findings(text, view, rules, lo, hi)
        return found

    @staticmethod
    def _merged(found: list[tuple[int, int, int, str]]) -> list[Finding]:
        """``found`` (:meth:`_spans`) in order, overlapping spans merged (the first's kind)."""
        found.sort()
        out: list[Finding] = []
        cur: list | None = None
        for start, neg_end, _, kind in found:
            end = -neg_end
            if cur is not None and start < cur[2]:
                cur[2] = max(cur[2], end)
                continue
            if cur is not None:
                out.append(Finding(cur[0], cur[1], cur[2]))
            cur = [kind, start, end]
        if cur is not None:
            out.append(Finding(cur[0], cur[1], cur[2]))
        return out

    def _view_findings(
        self, text: str, view: str, rules: tuple, lo: int, hi: int
    ) -> Iterator[tuple[int, int, int, str]]:
        """The built-in rules' spans in ``view[lo:hi]`` (``view``: :func:`escapes_as_breaks` of
        ``text``), as :meth:`findings` collects them. A span that runs to a window's edge
        inside the text runs on to the end of its line: the window cut it, not its value."""
        window = view[lo:hi]
        for order in self._view_rules:  # type: ignore[attr-defined]
            rule = rules[order]
            for a, b in rule.spans(window):
                start, end = lo + a, lo + b
                if end == hi < len(view):
                    nl = view.find("\n", hi)
                    end = len(view) if nl < 0 else nl
                # (a break's stand-in or a blank at either end is no part of the secret)
                while start < end and (view[start] != text[start] or view[start].isspace()):
                    start += 1
                while end > start and (view[end - 1] != text[end - 1] or text[end - 1].isspace()):
                    end -= 1
                if end > start:
                    yield start, -end, order, rule.kind

    def text(self, s: str) -> str:
        """``s`` with every finding replaced by :data:`MASK` (and made :func:`valid_unicode`:
        every text from the archive passes through here)."""
        if not s:
            return s
        s = valid_unicode(s)
        if not self._user_rules and not self._may_hold(s):  # type: ignore[attr-defined]
            return s  # the common case (names, numbers): nothing to look for
        memo: dict[str, str] = self._memo  # type: ignore[attr-defined]
        hit = memo.get(s)
        if hit is not None:
            return hit
        out = _replaced(s, self.findings(s), lambda f: MASK)
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
        Bytes that are not UTF-8 are shown as :func:`undecodable_shown` says, and any other
        surrogate (an escape in a JSON string) as :func:`valid_unicode` says.
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
            s = valid_unicode(undecodable_shown(s))
        out = _replaced(s, self.findings(s), lambda f: f"redacted-{_digest(s[f.start : f.end])}")
        if len(raw) <= _MEMO_MAX_LEN and len(memo) < _MEMO_MAX_ITEMS:
            memo[key] = out
        return out

    def path(self, rel: str) -> str:
        """A ``/``-separated path with each segment passed through :meth:`name`."""
        return "/".join(self.name(seg) for seg in rel.split("/"))

    def masked(self, s: str) -> tuple[str, list[str]]:
        """``s`` with each finding replaced by ``[REDACTED:kind]`` (a transcript's masks say
        what they hide), and the kinds, in order."""
        if not s or (not self._user_rules and not self._may_hold(s)):  # type: ignore[attr-defined]
            return s, []
        found = list(self.findings(s))
        return _replaced(s, found, lambda f: f"[REDACTED:{f.kind}]"), [f.kind for f in found]

    def hide(self, s: str) -> tuple[str, list[str]]:
        """:meth:`text` of ``s``, and the kind of each secret it hid, in order: what a
        report may say of them (never the values)."""
        out = self.text(s)
        return out, ([] if out == s else [f.kind for f in self.findings(s)])

    def lines_hidden(self, s: str, markdown: bool = False) -> list[tuple[int, str]]:
        """``(line, kind)`` of each secret :meth:`text` (or :meth:`markdown`) hides in ``s``
        (lines from 1)."""
        if markdown:
            shown = html.unescape(_MD_ESCAPE_RE.sub(r"\1", s))
            if shown != s and next(self.findings(shown), None) is not None:
                s = shown  # what markdown() redacts
        if not s or self.text(s) == s:
            return []
        out, line, pos = [], 1, 0
        for f in self.findings(s):
            line += s.count("\n", pos, f.start)
            pos = f.start
            out.append((line, f.kind))
        return out

    def value(
        self,
        key: str | None,
        value: object,
        parent: str | None = None,
        *,
        keys: bool = True,
        depth: int = 0,
    ) -> object:
        """Redact a config value found under ``key`` (recursing into containers; keys too,
        unless ``keys`` is False: then a mapping keeps its keys as they are, one for one).

        Besides a key named like a secret (``wandb_api_key``, or ``key`` under ``wandb``),
        two shapes say what a value holds by what stands beside it: a mapping whose
        ``name`` (or ``key``) names a secret hides its ``value`` (the container env shape
        ``{name: WANDB_API_KEY, value: …}``), in a list the item after a secret-named
        flag is hidden (an argv list ``[…, --wandb-api-key, …]``, and the key after
        ``wandb, login``), and a pair whose first item names a secret hides its second
        (``[WANDB_API_KEY, …]``). A container nested deeper than :data:`MAX_DEPTH` is
        hidden whole: a JSON document can nest past Python's recursion limit.
        """
        named = key is not None and is_secret_key(f"{parent}.{key}" if parent else key)
        if named and value not in (None, "", False, [], {}):
            return MASK  # the whole value, a list or mapping too
        if depth > MAX_DEPTH and isinstance(value, dict | list | tuple):
            return MASK
        if isinstance(value, dict):
            hide = _names_a_secret(value)
            return {
                (self.text(str(k)) if keys else k): MASK
                if hide and k in _VALUE_FIELDS and v not in (None, "")
                else self.value(str(k), v, key, keys=keys, depth=depth + 1)
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            if _is_secret_pair(value):  # [WANDB_API_KEY, X]: a name and its value, as a pair
                return [value[0], MASK]
            out: list[object] = []
            after_flag = False
            key_next = host_next = False  # after wandb login (and --host URL): the key
            for i, v in enumerate(value):
                hide = after_flag or (key_next and not host_next)
                if hide and v not in (None, "") and not _is_flag(v):
                    out.append(MASK)
                    key_next = False
                else:
                    out.append(self.value(None, v, keys=keys, depth=depth + 1))
                after_flag = _is_flag(v) and is_secret_key(str(v).lstrip("-"))
                host_next = key_next and v in ("--host", "--base-url")
                key_next = key_next or (v == "login" and i > 0 and value[i - 1] == "wandb")
            return out
        if isinstance(value, str):
            return self.text(value)
        return value


# How many times findings() reads a text again with what it found masked (a second reading
# that finds more than the first is rare: a few fuzzed texts in ten thousand)
_REREADS = 4


def _masked_map(text: str, found: list[Finding]) -> tuple[str, Callable[[int, bool], int]]:
    """``text`` with ``found`` replaced by :data:`MASK`, and the map from a position in it
    back to ``text`` (a position inside a mask: the hidden span's start, or its end for a
    span's end)."""
    parts: list[str] = []
    marks: list[int] = []  # each mask's start in the masked text
    spans: list[tuple[int, int, int]] = []  # ... its end there, and its span in the text
    pos = shift = 0
    for f in found:
        parts += (text[pos : f.start], MASK)
        at = f.start + shift
        marks.append(at)
        spans.append((at + len(MASK), f.start, f.end))
        shift += len(MASK) - (f.end - f.start)
        pos = f.end
    parts.append(text[pos:])

    def back(i: int, end: bool) -> int:
        k = bisect.bisect_right(marks, i - 1 if end else i) - 1
        if k < 0:
            return i
        stop, start, hidden_end = spans[k]
        if i < stop or (end and i == stop):
            return hidden_end if end else start
        return hidden_end + (i - stop)

    return "".join(parts), back


def _replaced(s: str, findings: Iterable[Finding], mask: Callable[[Finding], str]) -> str:
    """``s`` with each of ``findings`` (in order, apart) replaced by ``mask(finding)``."""
    parts: list[str] = []
    pos = 0
    for f in findings:
        parts += (s[pos : f.start], mask(f))
        pos = f.end
    return "".join(parts) + s[pos:] if parts else s


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).hexdigest()[:6]


# A mapping's fields that name what its value field holds (the container env shape).
_NAME_FIELDS = ("name", "Name", "NAME", "key", "Key", "KEY")
_VALUE_FIELDS = frozenset({"value", "Value", "VALUE"})
_FLAG_RE = re.compile(r"--[A-Za-z][A-Za-z0-9_.\-]*")


def _names_a_secret(d: dict) -> bool:
    return any(isinstance(d.get(f), str) and is_secret_key(d[f]) for f in _NAME_FIELDS)


def _is_secret_pair(v: list | tuple) -> bool:
    return (
        len(v) == 2
        and isinstance(v[0], str)
        and isinstance(v[1], str)
        and v[1] != ""
        and is_secret_key(v[0])
    )


def _is_flag(v: object) -> bool:
    return isinstance(v, str) and _FLAG_RE.fullmatch(v) is not None
