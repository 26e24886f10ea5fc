"""A trials folder's outcomes and trial set as msgpack: back equal, checked, what msgpack
cannot hold left out."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import msgspec
import pytest
from msgspec.structs import replace

from sitegen.cache.codec import (
    decode,
    encode,
    known_bytes,
    known_from_bytes,
    trial_summary,
    trial_summary_bytes,
)
from sitegen.errors import BuildWarning
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


# The values the reader makes (read/harbor.py): floats or None where floats go, counts
# within 64 bits, date-times without their zone.
ODD = [
    replace(PLAIN, reward=math.nan),
    replace(PLAIN, reward=math.inf, duration_s=-math.inf),
    replace(PLAIN, reward=-0.0, env_setup_s=-0.0),
    replace(PLAIN, turns=2**63 - 1),  # the largest 64-bit integer
    replace(PLAIN, input_tokens=-(2**63)),
    replace(PLAIN, reward=1e308, duration_s=1e308),  # finite, with a sum that is not
    replace(PLAIN, started_at=None, turns=None, reward=None, duration_s=None),
    replace(PLAIN, started_at=datetime(2026, 1, 1)),  # no microseconds
    replace(PLAIN, exception="AgentTimeoutError", exception_kind="model", eval=True),
    replace(PLAIN, name="名前 ✓", task=""),
]


def _known(trials: list[TrialResult]) -> dict:
    return {f"t/p{i}/result.json": (100 + i, i, ("ok", t)) for i, t in enumerate(trials)}


def test_odd_values_come_back_equal():
    known = _known(ODD)
    back = known_from_bytes(known_bytes(known))
    assert repr(back) == repr(known)  # (repr: nan is not equal to itself; -0.0 shows)
    assert all(type(e[2][1]) is TrialResult for e in back.values())


def test_values_the_reader_does_not_make_come_back_equal_or_are_left_out():
    aware = datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=2)))
    fine = {
        "b": replace(PLAIN, reward=3),  # an int where a float goes: the float
        "c": replace(PLAIN, started_at=aware),  # the same instant (in UTC)
    }
    known = {rel: (1, 2, ("ok", t)) for rel, t in fine.items()}
    back = known_from_bytes(known_bytes(known))
    assert back == known and type(back["b"][2][1].reward) is float
    huge = {
        "a": (1, 2, ("ok", replace(PLAIN, reward=_F(0.5)))),  # a float subclass
        "d": (1, 2, ("ok", replace(PLAIN, output_tokens=2**70))),
        "t/\udcff/result.json": (1, 2, ("eval",)),  # a file name that was not UTF-8
        "e": (1, 2, ("bad", "m \udcff", 3)),
        "f": (1, 2, [("x/\udcff/result.json", ("job",))]),
    }
    back = known_from_bytes(known_bytes({**known, **huge}))
    assert back == known  # the others kept: only those are read again


def test_outcomes_of_every_kind_come_back_equal():
    note = (("invalid UTF-8: read with replacement characters", 3),)
    known = {
        "t/t0/result.json": (10, 1, ("ok", PLAIN, note)),
        "t/t1/result.json": (10, 1, ("ok", replace(PLAIN, name="t1"))),
        "t/e/result.json": (9, 2, ("eval",)),
        "t/j/result.json": (9, 2, ("job",)),
        "t/m/result.json": (9, 2, ("missing",)),
        "t/bad/result.json": (0, 3, ("bad", "empty result.json", None)),
        "t/trials_step1_a.tar": (
            4096,
            4,
            [
                ("x/t2/result.json", ("ok", replace(PLAIN, name="t2"), (("reward is nan", None),))),
                ("x/t3/result.json", ("ok", replace(PLAIN, name="t3"))),
                ("x/t4/result.json", ("bad", "m", 7)),
            ],
        ),
        "t/t5/result.json": (11, 5, ("ok", replace(PLAIN, name="t5"))),
        "t/empty.tar": (10, 5, []),
    }
    assert known_from_bytes(known_bytes(known)) == known
    assert known_from_bytes(known_bytes({})) == {}


def _body(**change) -> bytes:
    good = {
        "paths": ["a", "b"],
        "sizes": [1, 2],
        "mtimes": [3, 4],
        "outcomes": [None, ["eval"]],
        "trials": [list(msgspec.structs.astuple(PLAIN))],
    }
    return msgspec.msgpack.encode(list({**good, **change}.values()))


@pytest.mark.parametrize(
    "change",
    [
        {"sizes": [1]},  # uneven columns
        {"paths": ["a", 5]},
        {"sizes": [1, "2"]},
        {"trials": []},  # fewer trials than outcomes
        {"trials": [list(msgspec.structs.astuple(PLAIN))] * 2},  # more
        {"trials": [list(msgspec.structs.astuple(PLAIN))[:1]]},  # a trial cut short
        {"trials": [[*msgspec.structs.astuple(PLAIN)[:2], "1.5"]]},  # a reward as text
        {"trials": [[*msgspec.structs.astuple(PLAIN)[:9], "not a date"]]},
        {"outcomes": [None, ["exec", "os.system"]]},
        {"outcomes": [None, []]},
        {"outcomes": [None, ["bad", 5, None]]},
        {"outcomes": [None, ["bad", "m", "line 3"]]},
        {"outcomes": [["ok", [["x", "not a line"]]], ["eval"]]},
        {"outcomes": [["ok", []], ["eval"]]},
        {"outcomes": [None, ["tar", [["m"]]]]},
        {"outcomes": [None, ["tar", [[5, ["eval"]]]]]},
        {"outcomes": [None, ["tar", [["m", "eval"]]]]},
        {"outcomes": [None, {"tar": []}]},
    ],
    ids=str,
)
def test_a_bad_body_is_refused(change):
    assert known_from_bytes(_body()) == {
        "a": (1, 3, ("ok", PLAIN)),
        "b": (2, 4, ("eval",)),
    }
    with pytest.raises(ValueError):
        known_from_bytes(_body(**change))


def test_a_body_nested_too_deeply_is_refused():
    enc = msgspec.msgpack.encode
    row = list(msgspec.structs.astuple(PLAIN))
    deep = b"\x91" * 100_000 + b"\xc0"  # an array of one, 100 000 deep: [[[...None...]]]
    planted = b"\x95" + enc(["a", "b"]) + enc([1, 2]) + enc([3, 4]) + b"\x92\xc0" + deep
    with pytest.raises(ValueError):
        known_from_bytes(planted + enc([row]))


def test_trial_sets_and_their_summaries_come_back_equal():
    ts = TrialSet(
        "t",
        tuple(ODD),
        3,
        1,
        2,
        1,
        (BuildWarning("t/x/result.json", 4, "bad"), BuildWarning("t", None, "odd")),
        5,
    )
    assert repr(decode(encode(ts, TrialSet), TrialSet)) == repr(ts)
    token, results, summary = trial_summary(trial_summary_bytes("abc", len(ts.results), ts))
    assert (token, results, summary) == ("abc", len(ODD), replace(ts, results=()))
    with pytest.raises(ValueError):
        encode(replace(ts, path="t/\udcff"), TrialSet)
    with pytest.raises(ValueError):
        decode(encode(ts, TrialSet)[:-3], TrialSet)
