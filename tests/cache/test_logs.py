"""A log's cache entries: where its read stopped, kept as plain JSON and checked when read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sitegen.cache.logs import log_state_from_json, log_state_to_json
from sitegen.read.logfile import parse_log
from sitegen.redact import Redactor
from sitegen.synth import synth


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("synth-logs")
    synth(root, seed=5, steps=8)
    return max(root.rglob("*.out"), key=lambda p: p.stat().st_size)


def _good(log: Path) -> dict:
    return log_state_to_json(parse_log(log, "a.out", Redactor())[1])


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d.pop("tail"),
        lambda d: d.update(format=99),
        lambda d: d.update(offset=-1),
        lambda d: d.update(offset=True),
        lambda d: d.update(tail="not base64!"),
        lambda d: d.update(tail="AAAA", offset=2),  # a tail longer than what was read
        lambda d: d.update(parser=[]),
        lambda d: d["parser"].update(format=0),
        lambda d: d["parser"].pop("console"),
        lambda d: d["parser"].update(evil=1),
        lambda d: d["parser"].update(lines="12"),
        lambda d: d["parser"].update(console={"x": {}}),
        lambda d: d["parser"].update(console={"1": {"a": "1.5"}}),
        lambda d: d["parser"].update(first_time="yesterday"),
        lambda d: d["parser"]["vllm"].update(engines={"e": {"samples": 1}}),
        lambda d: d["parser"].update(warnings=[{"path": 1, "line": None, "message": ""}]),
        lambda d: d["parser"].update(fresh_start=0),
    ],
)
def test_malformed_state_is_refused(log, damage):
    d = _good(log)
    damage(d)
    with pytest.raises(ValueError):
        log_state_from_json(d)


def test_state_is_plain_json_with_every_parser_field(log):
    d = _good(log)
    text = json.dumps(d, allow_nan=False)  # raises on NaN/Infinity
    assert isinstance(d["parser"]["console"], dict) and d["offset"] == log.stat().st_size
    assert log_state_to_json(log_state_from_json(json.loads(text))) == d
