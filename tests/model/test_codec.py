"""The parsed model as plain JSON: round trip equal, strict JSON, malformed input refused."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from datetime import date, datetime

import pytest

from sitegen.model.codec import parsed_from_json, parsed_to_json
from sitegen.read.logfile import parse_log
from sitegen.redact import Redactor
from sitegen.synth import synth


@pytest.fixture(scope="module")
def parsed(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("synth-codec")
    synth(root, seed=2, steps=6)
    return [parse_log(p, p.name, Redactor())[0] for p in sorted(root.rglob("*.out"))]


def _through_text(d: dict) -> dict:
    return json.loads(json.dumps(d, allow_nan=False))


def test_round_trip_equal(parsed):
    assert any(p.blocks for p in parsed) and any(p.vllm.engines for p in parsed)
    for log in parsed:
        back = parsed_from_json(_through_text(parsed_to_json(log)))
        assert parsed_to_json(back) == parsed_to_json(log)
        # NaN != NaN, so compare directly only where every value is finite
        if all(math.isfinite(v) for b in log.blocks for v in b.metrics.values()):
            assert back == log


def test_odd_values_come_back_equal_and_typed(parsed):
    log = replace(
        parsed[0],
        config={"a": {1: "int key", "$x": [1.5, math.inf]}, "d": date(2026, 1, 2), "t": (1, 2)},
        first_time=datetime(2026, 1, 2, 3, 4, 5, 678901),
        mtime=-math.inf,
    )
    back = parsed_from_json(_through_text(parsed_to_json(log)))
    assert back.config == log.config and isinstance(back.config["t"], tuple)
    assert back.first_time == log.first_time and back.mtime == -math.inf
    steps = [b.step for b in back.blocks]
    assert all(isinstance(s, int) for s in steps)
    assert all(isinstance(k, int) for k in back.batches_per_step)
    assert isinstance(back.blocks, tuple) and isinstance(back.warnings, tuple)


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d.update(format=0),
        lambda d: d["log"].pop("path"),
        lambda d: d["log"].update(lines=1.5),
        lambda d: d["log"].update(blocks={}),
        lambda d: d["log"].update(batches_per_step={"one": d["log"]["batches"]}),
        lambda d: d["log"].update(config={"$f": "lots"}),
        lambda d: d["log"].update(metric_form=None),
        lambda d: d["log"]["batches"].update(batches="3"),
    ],
)
def test_malformed_parsed_log_is_refused(parsed, damage):
    d = _through_text(parsed_to_json(parsed[0]))
    damage(d)
    with pytest.raises(ValueError):
        parsed_from_json(d)
