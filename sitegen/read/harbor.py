"""One Harbor trial ``result.json`` as a :class:`TrialResult` (docs/formats.md §6).

The shapes Harbor has written over its versions: single- and multi-step trials,
token totals or per-model ``model_usage``, ``reward_valid``, stage timings. Pure
functions of the file's bytes; finding and caching the files is :mod:`sitegen.read.trials`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from datetime import datetime
from functools import cache
from typing import Any, TypeVar

import orjson
import simdjson

from sitegen.model.parsed import TrialResult
from sitegen.model.vocabulary import is_finite, policy_kind


class TrialFormatError(ValueError):
    """A damaged ``result.json``; ``line`` is where the JSON broke, when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


_N = TypeVar("_N", int, float)

Notes = list[tuple[str, int | None]]
"""What was read around in a file that was still read (message, line): the build warns."""


def decode_result(
    data: bytes, name: str, is_eval: bool, notes: Notes | None = None
) -> TrialResult | None:
    """Read one ``result.json``; ``None`` for a job-level summary, :class:`TrialFormatError`
    when damaged. A file read in spite of a problem (bytes that are not UTF-8, a reward that
    is not a finite number) adds what it was to ``notes``."""
    if not data or data.isspace():  # (isspace stops at the first other byte; strip copies)
        raise TrialFormatError("empty result.json")
    obj = read_fields(data)
    if obj is None:
        obj = read_whole(data, notes)
    return decode_fields(obj, name, is_eval, notes)


def read_whole(data: bytes, notes: Notes | None = None) -> dict:
    """The whole ``result.json`` as Python objects; :class:`TrialFormatError` when damaged.

    The reference reading: orjson, then the standard library, which accepts ``NaN`` and
    says on which line the JSON broke. Bytes that are not UTF-8 are read as U+FFFD, noted.
    """
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            text = data.decode("utf-8", errors="replace")
            if notes is not None:
                line = data.count(b"\n", 0, exc.start) + 1
                notes.append(("invalid UTF-8: read with replacement characters", line))
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TrialFormatError(f"malformed JSON ({exc.msg})", exc.lineno) from None
        except RecursionError:
            raise TrialFormatError("malformed JSON (nested too deeply)") from None
    if not isinstance(obj, dict):
        raise TrialFormatError(f"result.json holds a {type(obj).__name__}, not an object")
    return obj


# -- only the fields read, with simdjson ---------------------------------------------------------
#
# A result.json is ~60 KB, nearly all chat history: simdjson builds Python objects only for
# the fields below, which decode_fields reads exactly as orjson's whole dict. A file simdjson
# would read otherwise goes the reference way (read_whole): what simdjson refuses (damaged
# JSON, NaN, integers past 64 bits), a byte-order mark (simdjson skips it, orjson refuses
# it), a repeated key read from (simdjson finds the first, orjson keeps the last), a
# container where a plain value is read, text that is not UTF-8. The small objects (Entire)
# are taken whole by simdjson's as_dict, which gives what orjson gives for the same bytes.


class Entire(dict):
    """A shape in :data:`FIELDS` whose object is taken whole (its keys name what is read)."""


_LEAF = None  # a plain value, read as it is
_SPAN = Entire({"started_at": _LEAF, "finished_at": _LEAF})
_POLICY = {"should_retry": _LEAF, "should_grade": _LEAF, "has_valid_reward": _LEAF}
_EXCEPTION = Entire({"exception_type": _LEAF, "policy": _POLICY})
_AGENT = {
    "n_input_tokens": _LEAF,
    "n_output_tokens": _LEAF,
    "n_cache_tokens": _LEAF,
    "metadata": {"n_episodes": _LEAF},
    "model_usage": Entire({"*": {"n_input_tokens": _LEAF, "n_output_tokens": _LEAF}}),
}
FIELDS: dict[str, Any] = {
    "trial_name": _LEAF,
    "task_name": _LEAF,
    "n_total_trials": _LEAF,
    "reward_valid": _LEAF,
    "started_at": _LEAF,
    "finished_at": _LEAF,
    "agent_result": _AGENT,
    "verifier_result": Entire({"rewards": {"*": _LEAF}, "reward": _LEAF}),
    "exception_info": _EXCEPTION,
    "step_results": [
        {
            "agent_result": _AGENT,
            "exception_info": _EXCEPTION,
            "agent_execution": _SPAN,
            "verifier": _SPAN,
        }
    ],
    "environment_setup": _SPAN,
    "agent_setup": _SPAN,
    "agent_execution": _SPAN,
    "verifier": _SPAN,
}
"""Every field :func:`decode_fields` reads (``"*"``: every key; a list: every item; an
:class:`Entire`: all of that object)."""

_BOM = b"\xef\xbb\xbf"
_UNREAD: Any = object()  # a key decode_fields does not read


class _Whole(Exception):
    """This file is read the reference way (:func:`read_whole`)."""


def read_fields(data: bytes) -> dict | None:
    """The :data:`FIELDS` of a ``result.json`` as orjson would give them; ``None`` when the
    file must be read whole instead (see above). Never raises."""
    if data.startswith(_BOM):
        return None
    try:
        # A parser per file (as cheap as reusing one): a parser cannot take the next file
        # while anything of the last one is still referenced.
        doc = simdjson.Parser().parse(data)
        if type(doc) is not simdjson.Object:
            return None  # the reference path names what the file holds
        return _fields_taker()(doc)
    except (_Whole, ValueError, RuntimeError, UnicodeDecodeError):
        return None


Taker = Callable[[Any], Any]


@cache
def _fields_taker() -> Taker:
    taker = _compile(FIELDS)
    assert taker is not None  # FIELDS is a dict, never a leaf
    return taker


def _compile(shape: Any) -> Taker | None:
    """A function taking the parts ``shape`` names out of a simdjson value; None for a leaf.
    A container of another kind than the shape's comes out as None."""
    obj_t, arr_t = simdjson.Object, simdjson.Array
    if shape is _LEAF:
        return None
    if type(shape) is Entire:

        def entire(v: Any) -> Any:
            if type(v) is obj_t:
                return v.as_dict()
            return None if type(v) is arr_t else v

        return entire
    if isinstance(shape, list):
        item = _compile(shape[0])
        assert item is not None  # a list of objects

        def each(v: Any) -> Any:
            if type(v) is arr_t:
                return [item(x) for x in v]
            return None if type(v) is obj_t else v

        return each
    if "*" in shape:
        value = _compile(shape["*"])
        assert value is not None

        def every(v: Any) -> Any:
            if type(v) is not obj_t:
                return None if type(v) is arr_t else v
            keys = list(v.keys())
            if len(set(keys)) != len(keys):
                raise _Whole  # which of a repeated key's values counts: orjson's rule
            return {k: value(v[k]) for k in keys}

        return every
    parts: dict[str, Any] = {k: _compile(sub) for k, sub in shape.items()}

    def some(v: Any) -> Any:
        if type(v) is not obj_t:
            return None if type(v) is arr_t else v
        out = {}
        for k in v:  # its keys, in order, repeats included
            part = parts.get(k, _UNREAD)
            if part is _UNREAD:
                continue  # (repeated or not: never read)
            if k in out:
                raise _Whole  # a repeated key that is read: orjson keeps the last
            x = v[k]
            if part is not None:
                out[k] = part(x)
            elif type(x) is obj_t or type(x) is arr_t:
                raise _Whole  # a container where a plain value is read: as orjson gives it
            else:
                out[k] = x
        return out

    return some


def decode_fields(
    obj: dict, name: str, is_eval: bool, notes: Notes | None = None
) -> TrialResult | None:
    """The trial in a decoded ``result.json`` (whole, or its :data:`FIELDS`); ``None`` for a
    job summary. A reward that is not a finite number is no reward, noted."""
    if "trial_name" not in obj and "n_total_trials" in obj:
        return None
    agent = _dict(obj.get("agent_result"))
    meta = _dict(agent.get("metadata"))
    exc_info = _dict(obj.get("exception_info"))
    reward = _reward(obj.get("verifier_result"), notes)
    turns = _int(meta.get("n_episodes"))
    tokens_in, tokens_out = _tokens(agent)
    steps = obj.get("step_results")
    steps = [_dict(st) for st in steps] if isinstance(steps, list) else []
    if steps:
        # Multi-step tasks (docs/formats.md §6): Harbor leaves the top-level exception null and
        # records failures on the steps (its recorded_exceptions(): trial first, then steps
        # in order); the top-level reward is Harbor's own aggregate (mean or final step), so
        # it is read as the file states it. Tokens and turns add up over the steps.
        if not exc_info.get("exception_type"):
            exc_info = next(
                (e for st in steps if (e := _dict(st.get("exception_info"))).get("exception_type")),
                {},
            )
        if turns is None:
            ts = [
                _int(_dict(_dict(st.get("agent_result")).get("metadata")).get("n_episodes"))
                for st in steps
            ]
            if any(t is not None for t in ts):
                turns = sum(t or 0 for t in ts)
        if tokens_in is None and tokens_out is None:
            pairs = [_tokens(_dict(st.get("agent_result"))) for st in steps]
            tokens_in = _sum_known(p[0] for p in pairs)
            tokens_out = _sum_known(p[1] for p in pairs)
    exception = exc_info.get("exception_type") or None
    if obj.get("reward_valid") is False:
        # Harbor 0.26 says the reward does not count (no verifier, or an exception whose
        # policy voids it): no reward, neither success nor failure.
        reward = None
    if turns == 0 and exception:
        turns = None  # older Harbor recorded 0 turns when the agent loop raised
    start = _time(obj.get("started_at"))  # (read once: the duration and the insights need it)
    return TrialResult(
        name=str(obj.get("trial_name") or name),
        task=str(obj.get("task_name") or ""),
        reward=reward,
        exception=str(exception) if exception else None,
        turns=turns,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        duration_s=_between(start, _time(obj.get("finished_at"))),
        eval=is_eval,
        **_insight_fields(obj, agent, start, steps),
        exception_kind=policy_kind(exc_info.get("policy")) if exception else None,
    )


def _tokens(agent: dict) -> tuple[int | None, int | None]:
    """Input and output tokens of one agent context; from ``model_usage`` (0.26) when the totals are absent."""
    n_in, n_out = _int(agent.get("n_input_tokens")), _int(agent.get("n_output_tokens"))
    usage = agent.get("model_usage")
    if isinstance(usage, dict) and usage and n_in is None and n_out is None:
        models = [_dict(u) for u in usage.values()]
        n_in = _sum_known(_int(u.get("n_input_tokens")) for u in models)
        n_out = _sum_known(_int(u.get("n_output_tokens")) for u in models)
    return n_in, n_out


def _sum_known(values: Iterable[_N | None]) -> _N | None:
    xs = [v for v in values if v is not None]
    return sum(xs[1:], xs[0]) if xs else None


_STAGES = (
    ("environment_setup", "env_setup_s"),
    ("agent_setup", "agent_setup_s"),
    ("agent_execution", "agent_exec_s"),
    ("verifier", "verifier_s"),
)
_STEP_STAGES = ("agent_execution", "verifier")  # the stages a step of a multi-step trial times


def _insight_fields(obj: dict, agent: dict, start: datetime | None, steps: list[dict]) -> dict:
    """Start time, stage durations and cached tokens: the insights' inputs (docs/data.md). A
    multi-step trial (docs/formats.md §6.5) times its agent and verifier, and counts its
    cached tokens, on each step (the top level's stay null; its setups stay the trial's):
    then these are the sums over its steps."""
    stages = {}
    for key, field_name in _STAGES:
        st = obj.get(key)
        if isinstance(st, dict) or not steps or key not in _STEP_STAGES:
            stages[field_name] = _stage(st)
        else:
            stages[field_name] = _sum_known(_stage(step.get(key)) for step in steps)
    cache = _int(agent.get("n_cache_tokens"))
    if cache is None and steps:
        cache = _sum_known(
            _int(_dict(step.get("agent_result")).get("n_cache_tokens")) for step in steps
        )
    return {
        # the wall-clock reading as written: logs are naive local time, and a trial's
        # "Z" is compared against them as a reading (docs/data.md, trial attribution)
        "started_at": start.replace(tzinfo=None) if start is not None else None,
        **stages,
        "cache_tokens": cache,
    }


def _stage(span: object) -> float | None:
    """Seconds one stage took (a ``{started_at, finished_at}`` span), when known and not negative."""
    if not isinstance(span, dict):
        return None
    d = _between(_time(span.get("started_at")), _time(span.get("finished_at")))
    return d if d is not None and d >= 0 else None


def _dict(v: object) -> dict:
    return v if isinstance(v, dict) else {}


def _int(v: object) -> int | None:
    """A count, or None when absent or not a finite number (``NaN``/``Infinity`` occur)."""
    if type(v) is int:  # the common case: no isinstance chain, int(v) is v
        return v if -(1 << 63) <= v < 1 << 63 else None
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    if isinstance(v, float) and not is_finite(v):  # an int is exact: only the range applies
        return None
    if not -(1 << 63) <= v < 1 << 63:
        return None  # no count is that large; it could not be written out as JSON either
    return int(v)


def _reward(v: object, notes: Notes | None = None) -> float | None:
    """The verifier's reward: ``rewards.reward``, else the value of the only key a
    ``reward.json`` wrote. Several keys, none ``reward``, or a value that is no number: none;
    NaN and ±inf stay (every analysis counts only finite rewards); all noted."""
    if not isinstance(v, dict):
        return None
    rewards = v.get("rewards")
    if not isinstance(rewards, dict):
        r = v.get("reward")
    elif "reward" in rewards or len(rewards) != 1:
        r = rewards.get("reward")
        if "reward" not in rewards and len(rewards) > 1 and notes is not None:
            # (the names whole or not at all, as a reward's text below)
            shown = ", ".join(sorted(map(str, rewards)))
            if len(shown) > 60:
                shown = f"of {len(rewards)} keys"
            notes.append((f"rewards {shown}: none is named reward: counted as no reward", None))
    else:
        r = next(iter(rewards.values()))
    if r is None:
        return None
    if isinstance(r, bool) or not isinstance(r, int | float):
        if notes is not None:
            # Shown whole or not at all: the note is redacted later, and a value cut short
            # could cut a secret out of the shape that finds it (a URL's password before "@").
            shown = json.dumps(r, ensure_ascii=False)
            if len(shown) > 40:
                shown = f"(a {type(r).__name__} of {len(shown):,} characters in JSON)"
            notes.append((f"reward {shown} is not a number: counted as no reward", None))
        return None
    try:
        r = float(r)
    except OverflowError:  # an integer past a float's range (JSON sets no bound): infinite
        r = math.inf if r > 0 else -math.inf
    if notes is not None and not is_finite(r):
        notes.append((f"reward is {r}: counted as no reward", None))
    return r


def _time(v: object) -> datetime | None:
    """An ISO 8601 time as written (``Z`` read as UTC); None when not one."""
    if not isinstance(v, str):
        return None
    try:
        return datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None


def _between(ta: datetime | None, tb: datetime | None) -> float | None:
    """Seconds from ``ta`` to ``tb``; None unless both are known and of one kind (naive or not)."""
    if ta is None or tb is None or (ta.tzinfo is None) != (tb.tzinfo is None):
        return None
    return (tb - ta).total_seconds()
