"""Cache file codecs: trials and their outcomes as plain JSON, back equal, checked."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from unittest.mock import ANY

import pytest
from msgspec.structs import replace

from sitegen.cache import files as cachefile
from sitegen.cache.files import (
    CacheFileError,
    TrialLists,
    _trial_from_json,
    _trial_to_json,
    _trials_to_json,
    dumps,
    known_from_json,
    known_to_json,
    loads,
    trial_set_to_json,
    trials_from_json,
)
from sitegen.model.parsed import TrialResult, TrialSet

PLAIN = TrialResult(
    name="task-a__x1",
    task="task-a",
    reward=0.0,
    exception=None,
    turns=1,
    input_tokens=377_578,
    output_tokens=19_568,
    duration_s=1373.0,
    eval=False,
    started_at=datetime(2026, 2, 11, 1, 16, 57, 131000),
    env_setup_s=105.031061,
    agent_setup_s=52.386258,
    agent_exec_s=1051.865852,
    verifier_s=48.985774,
    cache_tokens=0,
    exception_kind=None,
)


class _F(float):
    pass


ODD = [
    replace(PLAIN, reward=math.nan),
    replace(PLAIN, reward=math.inf, duration_s=-math.inf),
    replace(PLAIN, reward=-0.0, env_setup_s=-0.0),
    replace(PLAIN, turns=2**63 - 1),  # the largest 64-bit integer: written as it is
    replace(PLAIN, turns=2**63),  # one past: written as digits
    replace(PLAIN, input_tokens=-(2**63)),
    replace(PLAIN, output_tokens=2**70, cache_tokens=-(2**70)),
    replace(PLAIN, reward=10**400),  # an int too large for a float, in a float field
    replace(PLAIN, reward=3, duration_s=True),  # an int and a bool where floats go
    replace(PLAIN, reward=_F(0.5)),  # a float subclass
    replace(PLAIN, reward=1e308, duration_s=1e308),  # finite, with a sum that is not
    replace(PLAIN, started_at=None, turns=None, reward=None, duration_s=None),
    replace(PLAIN, started_at=datetime(2026, 1, 1)),  # no microseconds
    replace(PLAIN, started_at=datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=2)))),
    replace(PLAIN, exception="AgentTimeoutError", exception_kind="model", eval=True),
]


def _typed(v: object) -> object:
    """A value with each leaf's type beside it: -0.0 is not 0.0, nor 3 3.0, nor _F a float."""
    if isinstance(v, list):
        return [_typed(x) for x in v]
    return (type(v).__name__, repr(v))


def test_plain_trials_come_back_equal():
    batch = [replace(PLAIN, name=f"t{i}", turns=i, reward=i / 7) for i in range(50)]
    lists = _trials_to_json(batch)
    assert _typed(lists) == [_typed(_trial_to_json(r)) for r in batch]
    assert all(type(v[9]) is str for v in lists)  # the date-times, converted
    assert [_trial_from_json(v) for v in loads(dumps(lists))] == batch


# (not those whose values the reader never makes: a huge int, a subclass, a bool in a float)
READABLE = [t for t in ODD if type(t.reward) in (float, type(None)) and t.duration_s is not True]


@pytest.mark.parametrize("trial", READABLE, ids=range(len(READABLE)))
def test_odd_values_come_back_equal(trial):
    back = _trial_from_json(loads(dumps(_trials_to_json([PLAIN, trial])))[1])
    assert repr(back) == repr(trial)  # (repr: nan is not equal to itself)


def test_a_value_of_another_type_is_refused():
    bad = replace(PLAIN, reward="1.5")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _trial_to_json(bad)
    with pytest.raises(TypeError):
        _trials_to_json([PLAIN, bad])


def test_a_trial_is_encoded_once_for_both_files(monkeypatch):
    trials = [replace(PLAIN, name=f"t{i}") for i in range(3)]
    known = {
        "t/t0/result.json": (10, 1, ("ok", trials[0])),
        "t/e/result.json": (9, 2, ("eval",)),
        "t/bad/result.json": (0, 3, ("bad", "empty result.json", None)),
        "t/trials_step1_a.tar": (4096, 4, [("x/t1/result.json", ("ok", trials[1]))]),
        "t/t2/result.json": (11, 5, ("ok", trials[2])),
    }
    # the trial set holds the same objects, except one that redaction replaced
    redacted = replace(trials[2], task="[redacted]")
    ts = TrialSet("t", (trials[0], trials[1], redacted), 1, 1, 0, 1, ())
    plain_known, plain_set = dumps(known_to_json(known)), dumps(trial_set_to_json(ts))

    encoded: list[list[TrialResult]] = []
    real = cachefile._trials_to_json
    monkeypatch.setattr(
        cachefile, "_trials_to_json", lambda rs: encoded.append(list(rs)) or real(rs)
    )
    lists = TrialLists()
    body = known_to_json(known, lists)
    set_body = trial_set_to_json(ts, lists)
    # each trial once (the files' first, then the archives'); the redacted one on its own
    assert encoded == [[trials[0], trials[2], trials[1]], [redacted]]
    assert set_body["results"][0] is body["trials"][0]
    assert body["outcomes"] == [None, ["eval"], ["bad", "empty result.json", None], ANY, None]
    assert len(body["trials"]) == 2 and body["trials"][1][0] == "t2"
    assert set_body["results"][1] is body["outcomes"][3]["tar"][0][1][1]
    # the bytes are those each file has when made alone
    assert dumps(body) == plain_known and dumps(set_body) == plain_set


def test_trials_read_at_once_equal_those_read_one_by_one():
    rows = loads(dumps(_trials_to_json([PLAIN, *READABLE, replace(PLAIN, started_at=None)])))
    assert repr(trials_from_json(rows)) == repr([_trial_from_json(v) for v in rows])
    assert trials_from_json([]) == []


@pytest.mark.parametrize(
    "bad",
    [
        {4: "seven"},  # a string (not of digits) where an integer goes
        {1: None},  # no task
        {9: "not a date"},
        {9: 5},
        {8: 0},  # not a boolean
        {0: None},
        {2: [1.0]},
        "short",
        "not a list",
    ],
    ids=str,
)
def test_a_bad_trial_list_fails_read_at_once_as_one_by_one(bad):
    good = loads(dumps(_trials_to_json([PLAIN])))[0]
    row: object
    if bad == "short":
        row = good[:-1]
    elif bad == "not a list":
        row = {"name": "x"}
    else:
        row = list(good)
        for i, v in bad.items():
            row[i] = v
    with pytest.raises(CacheFileError):
        _trial_from_json(row)
    with pytest.raises(CacheFileError):
        trials_from_json([good, row])


def test_outcomes_with_notes_come_back_equal():
    import json

    note = (("invalid UTF-8: read with replacement characters", 3),)
    known = {
        "t/t0/result.json": (10, 1, ("ok", PLAIN, note)),
        "t/t1/result.json": (10, 1, ("ok", replace(PLAIN, name="t1"))),
        "t/trials_step1_a.tar": (
            4096,
            4,
            [("x/t2/result.json", ("ok", replace(PLAIN, name="t2"), (("reward is nan", None),)))],
        ),
    }
    assert known_from_json(json.loads(json.dumps(known_to_json(known)))) == known
    body = known_to_json(known)
    body["outcomes"][0] = {"notes": [["x", "not a line"]]}
    with pytest.raises(cachefile.CacheFileError):
        known_from_json(json.loads(json.dumps(body)))
