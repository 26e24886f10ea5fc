"""harbor: reading only the needed fields (simdjson) gives what reading the whole file gives."""

import json
import math
import random
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.read import harbor
from sitegen.read.harbor import (
    FIELDS,
    TrialFormatError,
    decode_fields,
    decode_result,
    read_fields,
    read_whole,
)
from sitegen.synth.trials import harbor_result

VARIANTS = ["0.1.45", "0.26", "0.26-multi", "0.26-context", "0.26-invalid"]


def reference(data: bytes):
    """The slow path: the whole file through orjson/json, then the same field rules."""
    try:
        if not data.strip():
            raise TrialFormatError("empty result.json")
        return decode_fields(read_whole(data), "n", False)
    except TrialFormatError as exc:
        return ("bad", str(exc), exc.line)


def fast(data: bytes):
    try:
        return decode_result(data, "n", False)
    except TrialFormatError as exc:
        return ("bad", str(exc), exc.line)


def harbor_files():
    rng = random.Random(11)
    for variant in VARIANTS:
        for _ in range(4):
            text, _seen = harbor_result(rng, variant, "fix-git", datetime(2026, 5, 12, 8))
            yield variant, text.encode()


@pytest.mark.parametrize(("variant", "data"), list(harbor_files()))
def test_harbor_files_take_the_fast_path_with_equal_results(variant, data):
    assert read_fields(data) is not None, "a plain Harbor file went the slow way"
    r = fast(data)
    assert r == reference(data) and r is not None and not isinstance(r, tuple)


def test_every_key_the_decoder_reads_is_among_the_fields_taken():
    """Read every Harbor shape with dicts that note each key asked for: all lie in FIELDS."""
    asked: set[tuple[str, ...]] = set()

    class Noting(dict):
        path: tuple[str, ...] = ()

        def _note(self, key):
            asked.add((*self.path, key))

        def get(self, key, default=None):
            self._note(key)
            return super().get(key, default)

        def __getitem__(self, key):
            self._note(key)
            return super().__getitem__(key)

        def __contains__(self, key):
            self._note(key)
            return super().__contains__(key)

    def noting(value, path=()):
        if isinstance(value, dict):
            d = Noting({k: noting(v, (*path, k)) for k, v in value.items()})
            d.path = path
            return d
        if isinstance(value, list):
            return [noting(v, (*path, "[]")) for v in value]
        return value

    multi = {"trial_name": "m", "step_results": [{"agent_result": {"metadata": {}}}]}
    usage = {"agent_result": {"model_usage": {"m1": {"n_input_tokens": 1}}}}
    old = {"verifier_result": {"reward": 1.0}}  # a reward without "rewards" (very old files)
    for _v, data in harbor_files():
        decode_fields(noting(json.loads(data)), "n", False)
    for doc in (multi, usage, old):
        decode_fields(noting(doc), "n", False)

    def covered(path, shape):
        if not path:
            return True
        head, rest = path[0], path[1:]
        if isinstance(shape, list):
            return head == "[]" and covered(rest, shape[0])
        if not isinstance(shape, dict):
            return False
        sub = shape.get(head, shape.get("*"))
        return (head in shape or "*" in shape) and (sub is None and not rest or covered(rest, sub))

    assert asked and all(covered(p, FIELDS) for p in asked), sorted(
        p for p in asked if not covered(p, FIELDS)
    )


def _doc(**fields) -> bytes:
    base = {
        "trial_name": "t__1",
        "task_name": "t",
        "agent_result": {"n_input_tokens": 3, "metadata": {"n_episodes": 2}},
        "verifier_result": {"rewards": {"reward": 1.0}},
        "started_at": "2026-01-01T00:00:00Z",
        "finished_at": "2026-01-01T00:00:09Z",
    }
    base.update(fields)
    return json.dumps(base).encode()


ODD = {
    "empty": b"",
    "blank": b" \n\t ",
    "truncated": b'{"trial_name": "t", \n "agent_result": {',
    "trailing comma": b'{"trial_name": "t",\n}',
    "trailing garbage": b'{"trial_name": "t"} x',
    "nul after": b'{"trial_name": "t"}\x00',
    "array": b"[1, 2]",
    "number": b"42",
    "string": b'"x"',
    "null": b"null",
    "deep": b"[" * 5000 + b"]" * 5000,
    "deep inside": b'{"trial_name": "t", "x": ' + b"[" * 3000 + b"]" * 3000 + b"}",
    "byte-order mark": b"\xef\xbb\xbf" + _doc(),
    "NaN count": _doc().replace(b'"n_input_tokens": 3', b'"n_input_tokens": NaN'),
    "Infinity reward": _doc().replace(b'"reward": 1.0', b'"reward": Infinity'),
    "huge int": _doc().replace(b'"n_input_tokens": 3', b'"n_input_tokens": ' + b"9" * 30),
    "uint64 max": _doc().replace(b'"n_input_tokens": 3', b'"n_input_tokens": 18446744073709551615'),
    "beyond int64": _doc().replace(
        b'"n_input_tokens": 3', b'"n_input_tokens": -9223372036854775809'
    ),
    "1e400": _doc().replace(b'"reward": 1.0', b'"reward": 1e400'),
    "tiny float": _doc().replace(b'"reward": 1.0', b'"reward": 1e-400'),
    "minus zero": _doc().replace(b'"reward": 1.0', b'"reward": -0.0'),
    "int reward": _doc().replace(b'"reward": 1.0', b'"reward": 1'),
    "bool reward": _doc().replace(b'"reward": 1.0', b'"reward": true'),
    "old reward form": _doc(verifier_result={"reward": 0.25}),
    "repeated top key": _doc()[:-1] + b', "trial_name": "second"}',
    "repeated unread key": _doc()[:-1] + b', "id": 1, "id": 2}',
    "repeated nested key": _doc().replace(b'"n_episodes": 2', b'"n_episodes": 2, "n_episodes": 5'),
    "repeated model": _doc(agent_result={"model_usage": {"m": {"n_input_tokens": 1}}}).replace(
        b'{"m": {"n_input_tokens": 1}}', b'{"m": {"n_input_tokens": 1}, "m": {"n_input_tokens": 7}}'
    ),
    "invalid utf-8 read": _doc(task_name="AAAA").replace(b"AAAA", b"\xff\xfe"),
    "invalid utf-8 unread": _doc(notes="AAAA").replace(b"AAAA", b"a\xffb\xe2\x82"),
    "lone surrogate": _doc(task_name="AAAA").replace(b"AAAA", b"\\ud800"),
    "control char": _doc(task_name="AAAA").replace(b"AAAA", b"a\x01b"),
    "escaped nul": _doc(task_name="a\x00b"),
    "object name": _doc(trial_name={"a": 1}),
    "list task": _doc(task_name=[1, 2]),
    "empty name": _doc(trial_name=""),
    "object exception type": _doc(exception_info={"exception_type": {"x": 1}}),
    "list agent": _doc(agent_result=[1, 2]),
    "string agent": _doc(agent_result="x"),
    "list verifier": _doc(verifier_result=[{"rewards": {"reward": 1}}]),
    "steps object": _doc(step_results={"agent_result": {}}),
    "steps of odd items": _doc(
        step_results=[None, 3, [1], {"exception_info": {"exception_type": "E"}}]
    ),
    "steps empty": _doc(step_results=[]),
    "job summary": json.dumps({"n_total_trials": 5, "stats": {}}).encode(),
    "job summary with name": json.dumps({"n_total_trials": 5, "trial_name": "x"}).encode(),
    "null trial name": _doc(trial_name=None),
    "model usage list": _doc(agent_result={"model_usage": [1]}),
    "model usage odd values": _doc(
        agent_result={"model_usage": {"a": 1, "b": {"n_output_tokens": 2}, "c": []}}
    ),
    "naive and zulu times": _doc(
        started_at="2026-01-01T00:00:00", finished_at="2026-01-01T00:00:09Z"
    ),
    "bad time": _doc(started_at="yesterday", agent_setup={"started_at": 5, "finished_at": []}),
    "reward_valid false": _doc(reward_valid=False),
    "reward_valid object": _doc(reward_valid={"x": 1}),
    # the objects taken whole (harbor.Entire): what orjson makes of them, whatever they hold
    "repeated span key": _doc(
        agent_setup={"started_at": "2026-01-01T00:00:00Z", "finished_at": "x"}
    ).replace(b'"finished_at": "x"', b'"finished_at": "x", "finished_at": "2026-01-01T00:00:04Z"'),
    "container in a span": _doc(verifier={"started_at": [1], "finished_at": {"a": [2, 3]}}),
    "big unread part of a span": _doc(environment_setup={"log": ["x" * 50] * 20, "started_at": 1}),
    "repeated exception type": _doc(exception_info={"exception_type": "A"}).replace(
        b'"exception_type": "A"', b'"exception_type": "A", "exception_type": "AgentTimeoutError"'
    ),
    "object exception type with repeats": _doc(exception_info={"exception_type": "AAAA"}).replace(
        b'"AAAA"', b'{"k": 1, "k": [2.5, null], "j": {"z": true}}'
    ),
    "policy repeated and odd": _doc(
        exception_info={
            "exception_type": "E",
            "policy": {"should_retry": True, "should_grade": [False], "has_valid_reward": 1},
        }
    ).replace(b'"should_retry": true', b'"should_retry": false, "should_retry": true'),
    "repeated reward": _doc().replace(b'"reward": 1.0', b'"reward": 1.0, "reward": 0.5'),
    "repeated rewards": _doc().replace(
        b'"rewards": {"reward": 1.0}', b'"rewards": {"reward": 1.0}, "rewards": {"reward": 0}'
    ),
    "repeated model usage": _doc(
        agent_result={"model_usage": {"m": {"n_output_tokens": 1}}}
    ).replace(b'"n_output_tokens": 1', b'"n_output_tokens": 1, "n_output_tokens": 3'),
    "model usage scalar": _doc(agent_result={"model_usage": 5}),
    "spans of every kind": _doc(
        environment_setup=[], agent_setup="x", agent_execution=None, verifier=3
    ),
}


@pytest.mark.parametrize("name", list(ODD))
def test_odd_files_read_as_the_reference_reads_them(name):
    data = ODD[name]
    assert fast(data) == reference(data)


def test_the_odd_files_cover_both_paths():
    """Some odd files are read by simdjson, others are passed on: both paths are exercised."""
    taken = {name for name, data in ODD.items() if read_fields(data) is not None}
    assert {"tiny float", "repeated unread key", "list agent", "steps of odd items"} <= taken
    assert not taken & {"byte-order mark", "repeated top key", "repeated nested key", "NaN count"}
    assert not taken & {"huge int", "object name", "invalid utf-8 unread", "truncated"}


def test_malformed_files_keep_their_line_numbers():
    r = fast(b'{\n  "trial_name": "t",\n  "agent_result": {\n    "n_input_tokens": ,\n')
    assert r[0] == "bad" and r[1].startswith("malformed JSON") and r[2] == 4


_key = st.sampled_from(
    [
        "trial_name",
        "task_name",
        "n_total_trials",
        "reward_valid",
        "started_at",
        "finished_at",
        "agent_result",
        "verifier_result",
        "rewards",
        "reward",
        "exception_info",
        "exception_type",
        "policy",
        "step_results",
        "metadata",
        "n_episodes",
        "model_usage",
        "n_input_tokens",
        "n_output_tokens",
        "n_cache_tokens",
        "environment_setup",
        "agent_setup",
        "agent_execution",
        "verifier",
        "should_retry",
        "has_valid_reward",
        "x",
    ]
)
_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(
        ["", "t__1", "AgentTimeoutError", "2026-01-01T00:00:00Z", "2026-01-01T00:01:00"]
    ),
)
_value = st.recursive(
    _scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(st.tuples(_key, inner), max_size=5),  # pairs: an object, keys may repeat
    ),
    max_leaves=30,
)


def _text(v) -> str:
    if isinstance(v, list) and v and all(isinstance(p, tuple) for p in v):
        return "{" + ", ".join(f"{json.dumps(k)}: {_text(x)}" for k, x in v) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_text(x) for x in v) + "]"
    return json.dumps(v)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_key, _value), max_size=8))
def test_generated_files_read_as_the_reference_reads_them(pairs):
    data = _text(pairs).encode() if pairs else b"{}"
    assert fast(data) == reference(data)


# -- the objects taken whole, and the trial built without __init__ -----------------------------

_span_time = st.sampled_from(
    [
        "2026-01-01T00:00:00Z",
        "2026-01-01T00:00:07.5Z",
        "2026-01-01T00:01:00Z",
        "2026-01-01T00:02:00.25Z",
        "2026-01-01T00:00:09",
        "",
    ]
)
_entire = st.one_of(
    # a span with a repeated key (which value counts is orjson's rule: the last)
    st.tuples(
        _span_time, _span_time, st.sampled_from(["started_at", "finished_at"]), _span_time
    ).map(lambda t: [("started_at", t[0]), ("finished_at", t[1]), (t[2], t[3])]),
    st.fixed_dictionaries({"started_at": _span_time, "finished_at": _span_time}),
    st.recursive(  # anything simdjson reads (so the file is not passed on to orjson whole)
        st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), _span_time),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.lists(st.tuples(_key, inner), max_size=4)
        ),
        max_leaves=12,
    ),
)


@settings(max_examples=150, deadline=None)
@given(
    st.fixed_dictionaries(
        {
            k: _entire
            for k in (
                "environment_setup",
                "agent_setup",
                "agent_execution",
                "verifier",
                "verifier_result",
                "exception_info",
            )
        }
    ),
    _entire,
)
def test_objects_taken_whole_read_as_the_reference_reads_them(parts, usage):
    """Harbor's shape with anything (repeated keys, containers, scalars) in the objects taken whole."""
    agent = '{"n_input_tokens": null, "model_usage": ' + _text(usage) + "}"
    head = '{"trial_name": "t__1", "started_at": "2026-01-01T00:00:00Z", "agent_result": ' + agent
    data = (
        head + "".join(f", {json.dumps(k)}: {_text(v)}" for k, v in parts.items()) + "}"
    ).encode()
    assert read_fields(data) is not None  # the fast path is the one tested
    assert fast(data) == reference(data)


def _old_int(v):
    """decode_fields' count rule before its int fast path (the reference)."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if not -(1 << 63) <= v < 1 << 63:
        return None
    return int(v)


@given(
    st.one_of(
        st.integers(min_value=-(2**70), max_value=2**70),
        st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, True, False, None, "3"]),
        st.floats(),
    )
)
def test_counts_read_as_before(v):
    got, want = harbor._int(v), _old_int(v)
    assert got == want and type(got) is type(want)


def _old_time(v):
    """harbor._time before it stopped copying naive times (the reference)."""
    if not isinstance(v, str):
        return None
    try:
        t = datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t.replace(tzinfo=None) if t.tzinfo is None else t


@given(
    st.one_of(
        st.datetimes().map(lambda d: d.isoformat()),
        st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()),
        st.datetimes().map(lambda d: d.isoformat() + "Z"),
        st.text(alphabet="0123456789-T:.Z+ ", max_size=30),
    )
)
def test_times_read_as_before(v):
    got, want = harbor._time(v), _old_time(v)
    assert got == want and (got is None or (got.tzinfo, got.fold) == (want.tzinfo, want.fold))


def test_a_result_of_several_mb_is_never_made_whole(monkeypatch):
    """Token ids (rollout_details, ~6 MB of them here) and the chat stay in simdjson's tape:
    the trial table's reader builds Python objects only for the fields it reads."""
    rng = random.Random(5)
    text, _seen = harbor_result(rng, "0.26", "fix-git", datetime(2026, 5, 12, 8))
    obj = json.loads(text)
    ids = [987654321 + i % 1000 for i in range(600_000)]
    obj["agent_result"]["rollout_details"] = [
        {"prompt_token_ids": [ids], "completion_token_ids": [ids], "logprobs": [[-0.5] * 1000]}
    ]
    obj["agent_result"].setdefault("metadata", {})["all_messages"] = [
        {"role": "user", "content": "x" * 100_000}
    ] * 20
    data = json.dumps(obj).encode()
    assert len(data) > 6_000_000
    want = reference(json.dumps(json.loads(text)).encode())

    def whole(*a, **k):
        raise AssertionError("the whole result.json was decoded")

    monkeypatch.setattr(harbor, "read_whole", whole)
    monkeypatch.setattr(harbor.orjson, "loads", whole)
    assert decode_result(data, "n", False) == want


def test_an_integer_reward_past_a_floats_range_is_infinite_and_no_reward():
    """JSON bounds no integer: a reward of 10**400 reads as infinite (counted as no reward,
    and noted), where float() of it would raise and stop the build."""
    from sitegen.read.harbor import decode_result

    for digits, want in ((b"1" + b"0" * 400, math.inf), (b"-1" + b"0" * 400, -math.inf)):
        notes: list = []
        data = b'{"trial_name": "t1", "verifier_result": {"rewards": {"reward": ' + digits + b"}}}"
        r = decode_result(data, "t", False, notes)
        assert r is not None and r.reward == want
        assert notes == [(f"reward is {want}: counted as no reward", None)]


def test_a_multi_step_trial_times_its_stages_on_its_steps():
    """Harbor 0.26's multi-step trial (trial/multi_step.py) runs each step's agent and verifier
    on the step: the top-level ``agent_result``, ``agent_execution`` and ``verifier`` stay null."""

    def span(a: str, b: str) -> dict:
        return {"started_at": f"2026-05-12T08:{a}Z", "finished_at": f"2026-05-12T08:{b}Z"}

    def step(name, execution, verifier, cache):
        return {
            "step_name": name,
            "agent_result": {"n_input_tokens": 100, "n_cache_tokens": cache, "n_output_tokens": 10},
            "verifier_result": {"rewards": {"reward": 1.0}},
            "exception_info": None,
            "agent_execution": execution,
            "verifier": verifier,
        }

    doc = {
        "schema_version": 1,
        "task_name": "fix-git",
        "trial_name": "fix-git__a1B2c3D",
        "agent_result": None,
        "verifier_result": {"rewards": {"reward": 1.0}},
        "exception_info": None,
        "started_at": "2026-05-12T08:00:00.000000Z",
        "finished_at": "2026-05-12T08:20:00.000000Z",
        "environment_setup": span("00:00", "00:30"),
        "agent_setup": span("00:30", "01:00"),
        "agent_execution": None,
        "verifier": None,
        "step_results": [
            step("setup-repo", span("01:00", "05:00"), span("05:00", "05:20"), 40),
            # a step whose verifier did not run, and one whose cached tokens are not known
            step("fix-bug", span("05:20", "15:20"), None, None),
            step("test", span("15:20", "19:00"), span("19:00", "19:30"), 7),
        ],
        "reward_valid": True,
    }
    data = json.dumps(doc, indent=4).encode()
    t = fast(data)
    assert t == reference(data) and read_fields(data) is not None
    assert (t.env_setup_s, t.agent_setup_s) == (30.0, 30.0)
    assert t.agent_exec_s == 240.0 + 600.0 + 220.0
    assert t.verifier_s == 20.0 + 30.0
    assert (t.input_tokens, t.output_tokens, t.cache_tokens) == (300, 30, 47)
    # a stage the top level times is read there, even with steps
    doc["verifier"] = span("19:30", "19:40")
    assert fast(json.dumps(doc).encode()).verifier_s == 10.0
