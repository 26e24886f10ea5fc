"""The text of an agent transcript as it is published: terminal codes removed, secrets hidden,
long outputs cut head and tail.

* :func:`clean` drops ANSI escape sequences and other control characters, and shows what a
  terminal shows of a line that ``\\r`` rewrote.
* :func:`parse_reply` reads an assistant message as Terminus-2 writes it: JSON
  (``{"analysis", "plan", "commands": [{"keystrokes", "duration"}], "task_complete"}``), its
  XML variant, or free text, any of them after ``<think>…</think>``.
* :class:`Shaper` hides secrets (``[REDACTED:kind]``) *before* it cuts, scanning a window
  around each kept part: a cut never falls inside a hidden span.
"""

from __future__ import annotations

import re

import msgspec
import orjson

from sitegen.redact import Finding, Redactor

# What a turn keeps of each text, head and tail, in characters (docs/design.md, "Transcripts").
OUTPUT_HEAD, OUTPUT_TAIL = 1000, 1000
REPLY_HEAD, REPLY_TAIL = 2000, 1000
REASONING_HEAD, REASONING_TAIL = 1000, 1000
COMMAND_HEAD, COMMAND_TAIL = 1000, 500
PROMPT_HEAD, PROMPT_TAIL = 12000, 4000  # the task's instruction and the agent's prompt template
# Scanned beyond a cut: every secret shape is shorter (a private-key block is handled apart).
MARGIN = 1024

_ANSI_RE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: window titles, links
    r"|\x1b[P^_][^\x1b]*(?:\x1b\\)?"  # DCS, PM, APC strings
    r"|\x1b[@-Z\\-_]|\x1b.?"  # two-character escapes, a lone ESC
    r"|\x9b[0-?]*[ -/]*[@-~]"  # an 8-bit CSI
)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_END_KEY_RE = re.compile(r"-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----")
_BEGIN_KEY = "-----BEGIN"


def clean(text: str) -> str:
    """``text`` without terminal escape sequences or control characters (tabs and line breaks
    stay); a line rewritten after a ``\\r`` (a progress bar) shows its last version."""
    if "\x1b" in text or "\x9b" in text:
        text = _ANSI_RE.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\r" in text:
            text = "\n".join(
                line.rstrip("\r").rsplit("\r", 1)[-1] if "\r" in line else line
                for line in text.split("\n")
            )
    text = _CONTROL_RE.sub("", text)
    if _SURROGATE_RE.search(text):  # (JSON's "\\ud800" alone: no UTF-8 can hold it)
        text = _SURROGATE_RE.sub("\ufffd", text)
    return text


_MARK = 32  # about the length of an omitted() mark: a text no longer than that is kept whole


def omitted(n: int) -> str:
    """The mark left where ``n`` bytes of a text were cut out."""
    return f"\n[… {n:,} bytes omitted …]\n"


class Shaped(msgspec.Struct, frozen=True):
    """A text as published: hidden and cut; ``bytes`` is the size of the text as written."""

    text: str
    bytes: int
    kinds: tuple[str, ...] = ()  # what was hidden in it, in order


class Shaper(msgspec.Struct, frozen=True):
    """Cleans, redacts and cuts the texts of one trial's transcript; ``redactor`` is made
    with ``transcripts=True`` and the trial's own secrets as literals."""

    redactor: Redactor
    hidden: list[str] = msgspec.field(default_factory=list)  # every kind hidden, in order

    def shape(self, text: str | None, head: int, tail: int = 0) -> Shaped:
        """``text`` cleaned and redacted, cut to its first ``head`` and last ``tail``
        characters with the :func:`omitted` mark between (``head`` 0: the tail alone)."""
        if not text:
            return Shaped("", 0)
        size = len(text.encode("utf-8", "replace"))
        text = clean(text)
        n = len(text)
        if n <= head + tail + _MARK:
            masked, found = self.redactor.masked(text)
            self.hidden.extend(found)
            return Shaped(masked, size, tuple(found))
        if n <= head + tail + 2 * MARGIN:  # small enough: look at all of it
            spans = list(self.redactor.findings(text))
            hc, tc = _head_cut(spans, head), _tail_cut(spans, n - tail)
            hc, tc = (hc, tc) if hc < tc else (n, n)
            first = _mask(text, 0, hc, spans)
            last = _mask(text, tc, n, spans)
        else:  # only a window around each part kept
            hspans = list(self.redactor.findings(text[: head + MARGIN])) if head else []
            lo = n - tail - MARGIN
            tspans: list[Finding] = []
            if tail:
                window = text[lo:]
                skip = len(_key_body_text(window))
                if skip:
                    tspans.append(Finding("private-key", lo, lo + skip))
                tspans += [
                    Finding(f.kind, f.start + lo + skip, f.end + lo + skip)
                    for f in self.redactor.findings(window[skip:])
                ]
            hc = _head_cut(hspans, head)
            tc = max(_tail_cut(tspans, n - tail), hc) if tail else n
            first = _mask(text, 0, hc, hspans)
            last = _mask(text, tc, n, tspans)
        cut = len(text[first.end : last.start].encode("utf-8"))
        kinds = first.kinds + last.kinds
        self.hidden.extend(kinds)
        body = first.text + (omitted(cut) if cut else "") + last.text
        return Shaped(body, size, kinds)

    def whole(self, text: str | None) -> str:
        """``text`` cleaned and redacted, not cut (a short label: a function name, a type)."""
        return self.shape(text, 1 << 30).text


class _Part(msgspec.Struct, frozen=True):
    text: str
    start: int
    end: int
    kinds: tuple[str, ...]


def _head_cut(spans: list[Finding], at: int) -> int:
    """Where a head of ``at`` characters ends: later, when a hidden span runs over ``at``."""
    for f in spans:
        if f.start < at < f.end:
            return f.end
    return at


def _tail_cut(spans: list[Finding], at: int) -> int:
    """Where a tail from ``at`` starts: earlier, when a hidden span runs over ``at``."""
    for f in spans:
        if f.start < at < f.end:
            return f.start
    return at


def _mask(text: str, start: int, end: int, spans: list[Finding]) -> _Part:
    """``text[start:end]`` with each of ``spans`` inside it replaced by ``[REDACTED:kind]``."""
    parts, kinds, pos = [], [], start
    for f in spans:
        if f.end <= start or f.start >= end:
            continue
        parts.append(text[pos : max(pos, f.start)])
        parts.append(f"[REDACTED:{f.kind}]")
        kinds.append(f.kind)
        pos = max(pos, min(f.end, end))
    parts.append(text[pos:end])
    return _Part("".join(parts), start, end, tuple(kinds))


def _key_body_text(window: str) -> str:
    """The start of ``window`` up to a private key's END line when the window opens inside the
    key (its BEGIN line lies before the window: a key longer than the margin)."""
    m = _END_KEY_RE.search(window)
    if m is None or _BEGIN_KEY in window[: m.start()]:
        return ""
    return window[: m.end()]


# -- an assistant's reply ----------------------------------------------------------------------


class Reply(msgspec.Struct, frozen=True):
    """What an assistant message says: its text, reasoning, the commands it sends, whether it
    marks the task complete, and how it was written (``json``, ``xml``, ``text``)."""

    text: str
    reasoning: str
    commands: tuple[str, ...]
    done: bool
    form: str


_THINK_RE = re.compile(r"<think>(.*?)(?:</think>|\Z)", re.S)
_XML_SECTION = {k: re.compile(rf"<{k}>(.*?)</{k}>", re.S) for k in ("analysis", "plan")}
_XML_KEYS_RE = re.compile(r"<keystrokes(?:\s[^>]*)?>(.*?)</keystrokes>", re.S)
_XML_DONE_RE = re.compile(r"<task_complete>\s*true\s*</task_complete>", re.I)
_REPLY_KEYS = ("analysis", "plan", "commands", "task_complete")


def parse_reply(content: str) -> Reply:
    """Read an assistant message in any of Terminus-2's forms (see the module docstring)."""
    thoughts: list[str] = []
    body = content
    if "</think>" in body and "<think>" not in body.split("</think>", 1)[0]:
        # a chat template that opens the block itself: the text starts inside it
        head, body = body.split("</think>", 1)
        thoughts.append(head)
    if "<think>" in body:
        thoughts += [m.group(1) for m in _THINK_RE.finditer(body)]
        body = _THINK_RE.sub("", body)
    reasoning = "\n\n".join(t.strip() for t in thoughts if t.strip())
    body = body.strip()
    reply = _json_reply(body) or _xml_reply(body)
    if reply is None:
        return Reply(body, reasoning, (), False, "text")
    text, commands, done, form = reply
    return Reply(text, reasoning, commands, done, form)


def _labelled(analysis: object, plan: object) -> str:
    """Analysis and plan as Harbor's trajectory writes them (``Analysis: …\\nPlan: …``)."""
    parts = []
    if analysis:
        parts.append(f"Analysis: {_str(analysis)}")
    if plan:
        parts.append(f"Plan: {_str(plan)}")
    return "\n".join(parts)


def _str(v: object) -> str:
    return v if isinstance(v, str) else orjson.dumps(v).decode()


def _json_reply(body: str) -> tuple[str, tuple[str, ...], bool, str] | None:
    i, j = body.find("{"), body.rfind("}")
    if i < 0 or j <= i:
        return None
    try:
        obj = orjson.loads(body[i : j + 1])
    except orjson.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or not any(k in obj for k in _REPLY_KEYS):
        return None
    cmds = obj.get("commands")
    commands = tuple(
        _str(c.get("keystrokes", "")) if isinstance(c, dict) else _str(c)
        for c in (cmds if isinstance(cmds, list) else [])
    )
    text = _labelled(obj.get("analysis"), obj.get("plan"))
    extra = (body[:i] + body[j + 1 :]).strip()
    if extra:  # Terminus tolerates text around the JSON (with a warning): keep it
        text = f"{text}\n\n{extra}" if text else extra
    return text, commands, obj.get("task_complete") is True, "json"


def _xml_reply(body: str) -> tuple[str, tuple[str, ...], bool, str] | None:
    if "<response>" not in body and "<commands>" not in body and "<analysis>" not in body:
        return None
    found = {k: rx.search(body) for k, rx in _XML_SECTION.items()}
    text = _labelled(*(m.group(1).strip() if m else "" for m in found.values()))
    commands = tuple(m.group(1) for m in _XML_KEYS_RE.finditer(body))
    return text, commands, _XML_DONE_RE.search(body) is not None, "xml"
