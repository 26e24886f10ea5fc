"""What the agent did in one Harbor trial: its transcript, read from the trial's folder.

Read only for the trials a page samples (:mod:`sitegen.insights.sampling`), from the
first of these that the folder holds (docs/formats.md, "Transcripts"):

1. ``agent/trajectory.json`` in ATIF (``ATIF-v1.0`` … ``v1.8``, Harbor's
   ``models/trajectories``), continued in ``trajectory.cont-N.json`` (whose first steps,
   ``is_copied_context``, repeat the last segment's);
2. ``result.json`` → ``agent_result.metadata.all_messages`` (Terminus-2 with
   ``store_all_messages``): alternating user and assistant messages;
3. ``agent/episode-N/prompt.txt`` and ``response.txt``, N in numeric order.

A multi-step trial is read step by step, each from its ``steps/<step_name>/`` as above.
Beside them, the tail of ``verifier/test-stdout.txt`` and the trial's exception. Never read:
``debug.json``, ``rollout_details``, token ids, logprobs, ``.cast`` and ``.pane`` recordings.
Every text is cleaned, redacted and cut here (:mod:`sitegen.read.transcript_text`): what
leaves this module may be published.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec
import orjson
import simdjson

from sitegen.discover.safeio import open_regular, read_bytes
from sitegen.read.harbor import TrialFormatError, read_whole
from sitegen.read.transcript_text import (
    COMMAND_HEAD,
    COMMAND_TAIL,
    OUTPUT_HEAD,
    OUTPUT_TAIL,
    PROMPT_HEAD,
    PROMPT_TAIL,
    REASONING_HEAD,
    REASONING_TAIL,
    REPLY_HEAD,
    REPLY_TAIL,
    Shaped,
    Shaper,
    parse_reply,
)
from sitegen.redact import MASK, Redactor, is_secret_key

MAX_JSON_BYTES = 64 << 20  # as a result.json: larger is reported, not read
MAX_EPISODE_BYTES = 4 << 20  # each prompt.txt / response.txt
MAX_EPISODES = 2000
MAX_STEPS = 2000  # a multi-step trial's steps read (real ones have a handful)
TAIL_BYTES = 64 << 10  # read of the end of verifier/test-stdout.txt
VERIFIER_TAIL = 2000
EXCEPTION_MESSAGE, EXCEPTION_TAIL = 1000, 2000

# Terminus-2's first prompt: its template (the same for every trial) around the task's
# instruction and the terminal's first screen (harbor/agents/terminus_2/templates).
_TASK_MARK = "Task Description:\n"
_SCREEN_MARK = "\n\nCurrent terminal state:\n"
_EPISODE_RE = re.compile(r"episode-(\d{1,9})")
_CONT_RE = re.compile(r"trajectory\.cont-(\d{1,9})\.json")


class Turn(msgspec.Struct, frozen=True):
    """One turn: what the agent wrote and sent, and what the terminal answered. ``event``
    marks a step that is not the agent's (``summary``: the context was handed over)."""

    text: Shaped
    reasoning: Shaped
    commands: tuple[Shaped, ...]
    output: Shaped
    done: bool = False
    tokens: tuple[int | None, int | None] = (None, None)  # prompt, completion
    at: str | None = None
    event: str | None = None


class Prompt(msgspec.Struct, frozen=True):
    """The first prompt: Terminus-2's template and the task's instruction (each shared by
    many transcripts: stored once), and the terminal's first screen; or the whole text.
    Another agent's system prompt (ATIF ``system`` steps, ``system`` messages before the
    first prompt) is its template."""

    template: Shaped | None
    instruction: Shaped | None
    screen: Shaped | None
    text: Shaped | None  # a first prompt of another shape, whole


class Transcript(msgspec.Struct, frozen=True):
    """A trial's transcript, every text cleaned, redacted and cut."""

    form: str  # "atif", "messages", "episodes" or "" (none found)
    source: str  # the file(s) read, relative to the trial folder
    prompt: Prompt | None
    turns: tuple[Turn, ...]
    summarized: int  # times the context was summarized (earlier turns replaced)
    verifier: Shaped | None  # the end of verifier/test-stdout.txt
    exception: tuple[str, Shaped, Shaped] | None  # type, message, end of the traceback
    notes: tuple[str, ...]  # what could not be read, and what was read instead
    hidden: tuple[str, ...]  # the kinds of secret hidden, in order (never the values)

    @property
    def agent_turns(self) -> int:
        return sum(1 for t in self.turns if t.event is None)


# What a transcript says when its trial's result.json cannot be read: the secrets its config
# holds are what the transcript hides wherever they appear, so without them nothing is shown.
UNKNOWN_SECRETS = "no readable result.json, so the trial's own secrets are unknown: not shown"


class _Bad(ValueError):
    """A source that exists but cannot be read: the next form is tried."""


def read_transcript(
    folder: Path,
    archive: Path,
    redactor: Redactor | None = None,
    build_secrets: Mapping[str, str] | None = None,
) -> Transcript:
    """The transcript of the trial in ``folder`` (inside ``archive``); a damaged source is a
    note, and the next form is read. ``build_secrets``: the build's environment's
    sensitive-named variables, whose values are hidden wherever they appear."""
    notes: list[str] = []
    result = _result(folder, archive, notes)
    literals = _literals(result.get("config"), build_secrets or {})
    base = redactor or Redactor()
    shaper = Shaper(Redactor(base.extra_patterns, transcripts=True, literals=literals))
    if "config" not in result:  # no readable result.json: the trial's own secrets unknown
        notes.append(UNKNOWN_SECRETS)
        return Transcript(
            "", "", None, (), 0, None, None, tuple(shaper.whole(n) for n in notes), ()
        )
    steps = result.get("steps")
    verified = folder
    if steps:
        form, got, verified = _steps(folder, archive, steps, shaper, notes)
    else:
        form, got = _forms(folder, archive, result, shaper, notes)
    source, prompt, turns, summarized = got or ("", None, [], 0)
    exception = result.get("exception_info")
    if not _exception_type(exception):
        # a multi-step trial's are its steps' (the trial reader's rule, read/harbor.py)
        exception = next(
            (e for st in steps or () if _exception_type(e := st.get("exception_info"))), None
        )
    return Transcript(
        form=form,
        source=source,
        prompt=prompt,
        turns=tuple(turns),
        summarized=summarized,
        verifier=_verifier(verified, archive, shaper, notes),
        exception=_exception(exception, shaper),
        notes=tuple(shaper.whole(n) for n in notes),
        hidden=tuple(shaper.hidden),
    )


def _forms(
    folder: Path, archive: Path, result: dict, shaper: Shaper, notes: list[str]
) -> tuple[str, _Got]:
    """The first of the three forms the folder holds: its name and what it gave."""
    for name, reader in (("atif", _atif), ("messages", _messages), ("episodes", _episodes)):
        try:
            got = reader(folder, archive, result, shaper, notes)
        except _Bad as exc:
            notes.append(str(exc))
            continue
        if got is not None:
            return name, got
    return "", None


_NOT_A_FOLDER_RE = re.compile(r"[/\\\x00-\x1f]")


def _steps(
    folder: Path, archive: Path, steps: list[dict], shaper: Shaper, notes: list[str]
) -> tuple[str, _Got, Path]:
    """A multi-step trial (docs/formats.md §6.5): each step read from ``steps/<name>/`` as a
    trial's folder, led by a marker; a later step's prompt is shown as the user's message.
    Also the folder whose verifier output is shown: the last step's that has one."""
    form, sources, prompt = "", [], None
    turns: list[Turn] = []
    summarized = 0
    verified = folder
    agent_spoke = False  # an agent's turn read already: a later step's prompt is the user's
    if len(steps) > MAX_STEPS:
        notes.append(f"{len(steps):,} steps; the first {MAX_STEPS:,} are shown")
    for i, step in enumerate(steps[:MAX_STEPS], 1):
        name = step.get("name")
        if not isinstance(name, str) or not name.strip() or name in (".", ".."):
            name = None
        if name is None or _NOT_A_FOLDER_RE.search(name):
            notes.append(f"step {i}: its name {step.get('name')!r} is not a folder's: not read")
            continue
        sub = folder / "steps" / name
        if os.path.isfile(sub / "verifier" / "test-stdout.txt"):
            verified = sub
        said: list[str] = []
        kind, got = _forms(sub, archive, step, shaper, said)
        notes.extend(f"step {name}: {n}" for n in said)
        turns.append(_event(f"Step {i} of {len(steps)}: {name}", "step", shaper))
        if got is None:
            continue
        source, first, more, times = got
        form = form or kind
        # (the messages are the step's in result.json; the other forms its folder's)
        sources.append(
            f"result.json, step {name} (all_messages)"
            if kind == "messages"
            else f"steps/{name}/{source}"
        )
        if prompt is None and not agent_spoke:
            prompt = first
        elif first is not None:
            asked = first.instruction or first.text or Shaped("", 0)
            turns.append(Turn(asked, Shaped("", 0), (), Shaped("", 0), event="user"))
        turns.extend(more)
        agent_spoke = agent_spoke or any(t.event is None for t in more)
        summarized += times
    # (the source names the steps: redacted as every text shown)
    got = (shaper.whole("; ".join(sources)), prompt, turns, summarized) if sources else None
    return form, got, verified


def _exception_type(info: object) -> bool:
    return isinstance(info, dict) and bool(info.get("exception_type"))


# -- result.json ----------------------------------------------------------------------------


def _result(folder: Path, archive: Path, notes: list[str]) -> dict[str, Any]:
    """The parts of ``result.json`` a transcript needs, taken out with simdjson so that the
    token ids of a result of several MB never become Python objects."""
    try:
        data = read_bytes(folder / "result.json", archive, MAX_JSON_BYTES)
    except OSError as exc:
        notes.append(f"result.json: {exc.strerror or exc}")
        return {}
    try:
        doc = simdjson.Parser().parse(data)
        if not isinstance(doc, simdjson.Object):
            return {}
        out: dict[str, Any] = {}
        for key in ("config", "exception_info"):
            v = doc.get(key)
            out[key] = v.as_dict() if isinstance(v, simdjson.Object) else None
        out.update(_agent_part(doc))
        steps = doc.get("step_results")
        if isinstance(steps, simdjson.Array):
            out["steps"] = [_step_part(st) for st in steps if isinstance(st, simdjson.Object)]
        return out
    except (ValueError, RuntimeError, UnicodeDecodeError):
        pass
    try:  # the trial reader's way (NaN, a byte-order mark, integers past 64 bits): whole
        obj = read_whole(data.removeprefix(b"\xef\xbb\xbf"))
    except TrialFormatError as exc:
        notes.append(f"result.json: {exc}")
        return {}
    steps = obj.get("step_results")
    return {
        "config": obj.get("config"),
        "exception_info": obj.get("exception_info"),
        **_agent_dict(obj),
        "steps": [_step_part(st) for st in steps if isinstance(st, dict)]
        if isinstance(steps, list)
        else None,
    }


def _agent_dict(obj: dict) -> dict[str, Any]:
    """``all_messages`` and ``summarization_count`` of a trial or step read whole."""
    meta = _dict(_dict(obj.get("agent_result")).get("metadata"))
    return {k: meta.get(k) for k in ("all_messages", "summarization_count")}


def _agent_part(doc: Any) -> dict[str, Any]:
    """``all_messages`` and ``summarization_count`` of a simdjson trial or step, if any."""
    meta = _at(doc, "agent_result", "metadata")
    if not isinstance(meta, simdjson.Object):
        return {}
    msgs = meta.get("all_messages")
    return {
        "all_messages": msgs.as_list() if isinstance(msgs, simdjson.Array) else msgs,
        "summarization_count": meta.get("summarization_count"),
    }


def _step_part(step: Any) -> dict[str, Any]:
    """A ``step_results`` item's name, exception and messages (simdjson object or dict)."""
    part = _agent_dict(step) if isinstance(step, dict) else _agent_part(step)
    info = step.get("exception_info")
    part["exception_info"] = info.as_dict() if isinstance(info, simdjson.Object) else info
    # (a container as plain Python, as the whole file's reading gives it)
    part["name"] = _plain(step.get("step_name"))
    return part


def _at(doc: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(doc, simdjson.Object):
            return None
        doc = doc.get(k)
    return doc


def _dict(v: object) -> dict:
    return v if isinstance(v, dict) else {}


def _literals(config: object, build_secrets: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The values to hide wherever they appear, in prose too: those of sensitive-named
    settings in the trial's own config (``agent.env``, ``agent.kwargs``, …) and the build's
    environment's (:func:`~sitegen.redact.rule.literal_rule` says why)."""
    found: dict[str, str] = {}
    for value in _secret_values(config):
        found.setdefault(value, "trial-secret")
    for value in build_secrets.values():
        if _worth_hiding(value):
            found.setdefault(value, "build-secret")
    # longest first: a value holding another is hidden whole
    return tuple((kind, v) for v, kind in sorted(found.items(), key=lambda kv: -len(kv[0])))


def _secret_values(config: object) -> Iterator[str]:
    """The strings a trial's config holds as secrets: those :meth:`Redactor.value` hides when
    the config is shown, found by walking the config beside its redacted copy (keys kept,
    so the walks stay in step): the two never disagree."""
    shown = Redactor().value(None, config, keys=False)
    stack: list[tuple[object, object, bool]] = [(config, shown, False)]
    while stack:  # (a walk without recursion: a config may nest deep)
        orig, seen, in_list = stack.pop()
        if seen == MASK and orig != MASK:  # hidden whole: every string below it
            if in_list and isinstance(orig, str) and _names_where(orig):
                continue  # a list's item hidden for its neighbour, naming where a secret is
            yield from _strings(orig)
        elif isinstance(orig, dict) and isinstance(seen, dict):
            stack.extend((v, seen[k], False) for k, v in orig.items())
        elif isinstance(orig, list | tuple) and isinstance(seen, list | tuple):
            stack.extend((o, s, True) for o, s in zip(orig, seen, strict=True))
        # (a string the rules changed in part holds a span of a secret's shape: the same
        # rules find it in the transcript)


def _strings(value: object) -> Iterator[str]:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if _worth_hiding(v):
                yield v
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
        elif type(v) in (int, float) and _worth_hiding(str(v)):
            yield str(v)  # a numeric secret (a PIN, an account number)


def _worth_hiding(value: str) -> bool:
    """A value long enough to be a secret and not a placeholder (``${VAR}``, Harbor's
    ``sk-a****xyz`` when it redacted it itself, a mask)."""
    v = value.strip()
    return len(v) >= 8 and not v.startswith("${") and "****" not in v and "[REDACTED" not in v


def _names_where(value: str) -> bool:
    """Whether a list's item, hidden in the config table for the one before it, names where
    a secret is rather than holding it: a variable's name in capitals, a key file's path
    (``--api-key-file credentials.json``)."""
    v = value.strip()
    return bool(_NAME_RE.fullmatch(v) and is_secret_key(v)) or bool(_KEY_FILE_RE.search(v))


_NAME_RE = re.compile(r"[A-Z_][A-Z0-9_]*+")
_KEY_FILE_RE = re.compile(r"(?:^|/)[\w.\-]+\.(?:json|txt|pem|key|env|ya?ml|cfg|ini|toml)$")


# -- 1. ATIF ----------------------------------------------------------------------------------

_Got = tuple[str, Prompt | None, list[Turn], int] | None


def _atif(folder: Path, archive: Path, result: dict, shaper: Shaper, notes: list[str]) -> _Got:
    agent = folder / "agent"
    first = agent / "trajectory.json"
    if not first.is_file():
        return None
    conts = sorted(
        (int(m.group(1)), e.name)
        for e in _entries(agent)
        if (m := _CONT_RE.fullmatch(e.name)) is not None
    )
    names = ["trajectory.json", *(name for _, name in conts)]
    prompt: Prompt | None = None
    system: list[str] = []  # the system prompt: system steps before anything else
    turns: list[Turn] = []
    handovers = 0
    for i, name in enumerate(names):
        steps = _atif_steps(agent / name, archive, f"agent/{name}")
        for step in steps:
            if i and step.get("is_copied_context") is True:
                continue  # a continuation repeats the context it was handed
            source = step.get("source")
            message = _content(step.get("message"))
            if source == "agent":
                turns.append(_atif_turn(step, message, shaper))
            elif prompt is None and not turns and source == "system" and not _is_handover(step):
                system.append(message)
            elif prompt is None and not turns and source == "user":
                prompt = _prompt(message, shaper, system)
            else:
                handover = _is_handover(step)
                handovers += handover
                kind = "summary" if handover else str(source or "note")
                turns.append(_event(message, kind, shaper, _str_or_none(step.get("timestamp"))))
    if prompt is None and system:  # a system prompt and no user prompt before the first turn
        prompt = _prompt("", shaper, system)
    source = "agent/trajectory.json" + (f" (+ {len(conts)} continued)" if conts else "")
    summarized = max(_count(result.get("summarization_count")), len(conts), handovers)
    return source, prompt, turns, summarized


def _atif_steps(path: Path, archive: Path, rel: str) -> list[dict]:
    """The steps of one trajectory file, each as a dict of the fields read (metrics: only
    token counts; never token ids or logprobs)."""
    try:
        data = read_bytes(path, archive, MAX_JSON_BYTES)
    except OSError as exc:
        raise _Bad(f"{rel}: {exc.strerror or exc}; the next source is read instead") from None
    try:
        doc = simdjson.Parser().parse(data)
        steps = doc.get("steps") if isinstance(doc, simdjson.Object) else None
        if isinstance(steps, simdjson.Array):
            return [_atif_step(s) for s in steps if isinstance(s, simdjson.Object)]
    except (ValueError, RuntimeError, UnicodeDecodeError):
        raise _Bad(f"{rel}: malformed JSON; the next source is read instead") from None
    raise _Bad(f"{rel}: no steps; the next source is read instead")


_STEP_FIELDS = ("source", "message", "reasoning_content", "timestamp", "is_copied_context", "extra")


def _atif_step(step: Any) -> dict:
    out: dict[str, Any] = {k: _plain(step.get(k)) for k in _STEP_FIELDS}
    calls = step.get("tool_calls")
    if isinstance(calls, simdjson.Array):
        out["tool_calls"] = [
            {
                "function_name": _plain(c.get("function_name")),
                "arguments": _plain(c.get("arguments")),
            }
            for c in calls
            if isinstance(c, simdjson.Object)
        ]
    obs = _at(step, "observation", "results")
    if isinstance(obs, simdjson.Array):
        out["results"] = [_plain(r.get("content")) for r in obs if isinstance(r, simdjson.Object)]
    metrics = step.get("metrics")
    if isinstance(metrics, simdjson.Object):
        out["tokens"] = (
            _plain(metrics.get("prompt_tokens")),
            _plain(metrics.get("completion_tokens")),
        )
    return out


def _plain(v: Any) -> Any:
    if isinstance(v, simdjson.Object):
        return v.as_dict()
    if isinstance(v, simdjson.Array):
        return v.as_list()
    return v


def _atif_turn(step: dict, message: str, shaper: Shaper) -> Turn:
    calls = step.get("tool_calls") or []
    commands: list[str] = []
    done = False
    for c in calls:
        fn, args = c.get("function_name"), c.get("arguments")
        if fn == "mark_task_complete":
            done = True
        elif fn == "bash_command" and isinstance(args, dict) and "keystrokes" in args:
            commands.append(str(args.get("keystrokes") or ""))
        else:  # another agent's tools: the call as written
            shown = (
                orjson.dumps(args).decode() if isinstance(args, dict | list) else str(args or "")
            )
            commands.append(f"{fn}({shown})")
    reasoning = step.get("reasoning_content")
    if not calls and message:  # raw content (or no tools): the reply as the model wrote it
        reply = parse_reply(message)
        if reply.form != "text" or reply.reasoning:
            message, commands, done = reply.text, list(reply.commands), reply.done
            reasoning = "\n\n".join(
                x for x in (reasoning, reply.reasoning) if isinstance(x, str) and x
            )
    output = "\n".join(_content(r) for r in step.get("results") or [] if r is not None)
    tokens = step.get("tokens") or (None, None)
    return Turn(
        text=shaper.shape(message, REPLY_HEAD, REPLY_TAIL),
        reasoning=shaper.shape(
            reasoning if isinstance(reasoning, str) else "", REASONING_HEAD, REASONING_TAIL
        ),
        commands=tuple(shaper.shape(c, COMMAND_HEAD, COMMAND_TAIL) for c in commands),
        output=shaper.shape(output, OUTPUT_HEAD, OUTPUT_TAIL),
        done=done,
        tokens=(_int(tokens[0]), _int(tokens[1])),
        at=_str_or_none(step.get("timestamp")),
    )


def _is_handover(step: dict) -> bool:
    extra = step.get("extra")
    return isinstance(extra, dict) and isinstance(extra.get("context_management"), dict)


def _content(v: object) -> str:
    """A message or observation: text, or ATIF content parts (text kept, media named)."""
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        parts = []
        for p in v:
            if isinstance(p, dict) and p.get("type") == "text":
                parts.append(str(p.get("text") or ""))
            elif isinstance(p, dict):
                src = p.get("source")
                where = src.get("path") if isinstance(src, dict) else None
                parts.append(f"[{p.get('type', 'part')}{': ' + str(where) if where else ''}]")
        return "\n".join(parts)
    return "" if v is None else str(v)


# -- 2. result.json's all_messages ----------------------------------------------------------------


def _messages(folder: Path, archive: Path, result: dict, shaper: Shaper, notes: list[str]) -> _Got:
    msgs = result.get("all_messages")
    if msgs is None:
        return None
    if not isinstance(msgs, list):
        raise _Bad("result.json: all_messages is not a list; the next source is read instead")
    prompt: Prompt | None = None
    system: list[str] = []
    turns: list[Turn] = []
    pending: Turn | None = None  # an assistant turn waiting for the terminal's answer
    for m in msgs:
        if not isinstance(m, dict):
            continue
        role, content = m.get("role"), _content(m.get("content"))
        first = prompt is None and not turns and pending is None
        if role == "assistant":
            if pending is not None:
                turns.append(pending)
            pending = _reply_turn(content, m.get("reasoning_content"), shaper)
        elif role == "system" and first:
            system.append(content)
        elif role == "user" and first:
            prompt = _prompt(content, shaper, system)
        elif role == "user" and pending is not None:
            turns.append(_with_output(pending, content, shaper))
            pending = None
        else:  # a user or system message with no reply before it
            turns.append(_event(content, str(role or "note"), shaper))
    if pending is not None:
        turns.append(pending)
    if prompt is None and system:
        prompt = _prompt("", shaper, system)
    return "result.json (all_messages)", prompt, turns, _count(result.get("summarization_count"))


def _reply_turn(content: str, reasoning: object, shaper: Shaper) -> Turn:
    reply = parse_reply(content)
    thoughts = "\n\n".join(x for x in (reasoning, reply.reasoning) if isinstance(x, str) and x)
    return Turn(
        text=shaper.shape(reply.text, REPLY_HEAD, REPLY_TAIL),
        reasoning=shaper.shape(thoughts, REASONING_HEAD, REASONING_TAIL),
        commands=tuple(shaper.shape(c, COMMAND_HEAD, COMMAND_TAIL) for c in reply.commands),
        output=Shaped("", 0),
        done=reply.done,
    )


def _with_output(turn: Turn, output: str, shaper: Shaper) -> Turn:
    return msgspec.structs.replace(turn, output=shaper.shape(output, OUTPUT_HEAD, OUTPUT_TAIL))


def _event(text: str, kind: str, shaper: Shaper, at: str | None = None) -> Turn:
    text_shown = shaper.shape(text, REPLY_HEAD, REPLY_TAIL)
    return Turn(text_shown, Shaped("", 0), (), Shaped("", 0), at=at, event=kind)


# -- 3. episode folders ---------------------------------------------------------------------------


def _episodes(folder: Path, archive: Path, result: dict, shaper: Shaper, notes: list[str]) -> _Got:
    agent = folder / "agent"
    found = sorted(
        (int(m.group(1)), e.name)
        for e in _entries(agent)
        if (m := _EPISODE_RE.fullmatch(e.name)) is not None and e.is_dir(follow_symlinks=False)
    )
    if not found:
        return None
    if len(found) > MAX_EPISODES:
        notes.append(f"agent/: {len(found):,} episodes; the first {MAX_EPISODES:,} are shown")
        found = found[:MAX_EPISODES]
    prompt: Prompt | None = None
    turns: list[Turn] = []
    pending: Turn | None = None
    for n, name in found:
        ask = _text_file(folder, f"agent/{name}/prompt.txt", archive, notes)
        answer = _text_file(folder, f"agent/{name}/response.txt", archive, notes)
        if ask is not None:
            if pending is not None:
                turns.append(_with_output(pending, ask, shaper))
                pending = None
            elif n == found[0][0] and prompt is None:
                prompt = _prompt(ask, shaper)
            else:
                turns.append(_event(ask, "user", shaper))
        elif pending is not None:
            turns.append(pending)
            pending = None
        if answer is not None:
            pending = _reply_turn(answer, None, shaper)
    if pending is not None:
        turns.append(pending)
    return (
        f"agent/episode-*/ ({len(found)} episodes)",
        prompt,
        turns,
        _count(result.get("summarization_count")),
    )


def _text_file(folder: Path, rel: str, archive: Path, notes: list[str]) -> str | None:
    try:
        data = read_bytes(folder / rel, archive, MAX_EPISODE_BYTES, cut=True)
        return data.decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        notes.append(f"{rel}: {exc.strerror or exc}")
        return None


def _entries(folder: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError:
        return []


# -- around the turns ---------------------------------------------------------------------------


def _prompt(text: str, shaper: Shaper, system: list[str] | None = None) -> Prompt:
    """The first prompt, split at Terminus-2's marks when it has them. ``system``: another
    agent's system prompt before it, kept as the template (stored once)."""
    head = "\n\n".join(system or ())
    at = text.find(_TASK_MARK)
    end = text.rfind(_SCREEN_MARK)
    if at < 0 or end < at:
        return Prompt(
            shaper.shape(head, PROMPT_HEAD, PROMPT_TAIL) if head else None,
            None,
            None,
            shaper.shape(text, PROMPT_HEAD, PROMPT_TAIL) if text or not head else None,
        )
    cut = at + len(_TASK_MARK)
    return Prompt(
        template=shaper.shape(head + "\n\n" * bool(head) + text[:cut], PROMPT_HEAD, PROMPT_TAIL),
        instruction=shaper.shape(text[cut:end], PROMPT_HEAD, PROMPT_TAIL),
        screen=shaper.shape(text[end + 2 :], OUTPUT_HEAD, OUTPUT_TAIL),
        text=None,
    )


def _verifier(folder: Path, archive: Path, shaper: Shaper, notes: list[str]) -> Shaped | None:
    path = folder / "verifier" / "test-stdout.txt"
    try:
        with open_regular(path, archive) as fh:
            size = os.fstat(fh.fileno()).st_size
            fh.seek(max(0, size - TAIL_BYTES))
            data = fh.read(TAIL_BYTES)
    except FileNotFoundError:
        return None
    except OSError as exc:
        notes.append(f"verifier/test-stdout.txt: {exc.strerror or exc}")
        return None
    text = data.decode("utf-8", "replace")
    if size > TAIL_BYTES:  # (from a line's start)
        text = text[text.find("\n") + 1 :]
    shaped = shaper.shape(text, 0, VERIFIER_TAIL)
    return Shaped(shaped.text, size, shaped.kinds)


def _exception(info: object, shaper: Shaper) -> tuple[str, Shaped, Shaped] | None:
    if not isinstance(info, dict) or not info.get("exception_type"):
        return None
    return (
        shaper.whole(str(info.get("exception_type"))),
        shaper.shape(_str_or_none(info.get("exception_message")) or "", EXCEPTION_MESSAGE, 0),
        shaper.shape(_str_or_none(info.get("exception_traceback")) or "", 0, EXCEPTION_TAIL),
    )


def _str_or_none(v: object) -> str | None:
    return v if isinstance(v, str) else None


def _int(v: object) -> int | None:
    return v if type(v) is int and 0 <= v < 1 << 63 else None


def _count(v: object) -> int:
    return v if type(v) is int and 0 <= v < 1 << 31 else 0
