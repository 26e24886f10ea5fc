"""Reading a log file from disk, and reading on from a saved state (encoded and decoded, as
the build cache keeps it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from msgspec.structs import replace

from sitegen.cache.codec import encode
from sitegen.cache.logs import log_state_bytes, log_state_from_bytes
from sitegen.model.parsed import ParsedLog
from sitegen.read.logfile import parse_log
from sitegen.redact import Redactor
from sitegen.synth import synth


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("synth-logfile")
    synth(root, seed=5, steps=8)
    return sorted(p for p in root.rglob("*.out") if p.stat().st_size > 0)


def _bytes(log: ParsedLog) -> bytes:
    return encode(log, ParsedLog)


def test_resume_from_an_encoded_state_equals_full_parse(logs, tmp_path):
    assert len(logs) >= 5
    for src in logs:
        data = src.read_bytes()
        for cut_at in (len(data) // 3, (2 * len(data)) // 3):
            cut = data.rfind(b"\n", 0, cut_at) + 1
            path = tmp_path / src.name
            path.write_bytes(data[:cut] + data[cut : cut + 7])  # a partial last line too
            _first, state = parse_log(path, "x.out", Redactor())
            restored = log_state_from_bytes(log_state_bytes((), state))
            assert log_state_bytes((), restored) == log_state_bytes((), state)
            full, _ = parse_log(src, "x.out", Redactor())
            # Blank what the state says was read (all but its checked tail): a resumed
            # parse must not look at it, so it still equals the full parse.
            keep = cut - len(restored.tail)
            path.write_bytes(b"\n" * keep + data[keep:])
            resumed, _ = parse_log(path, "x.out", Redactor(), state=restored)
            resumed = replace(resumed, mtime=full.mtime)
            assert _bytes(resumed) == _bytes(full), src.name
            assert resumed.lines == full.lines and len(resumed.blocks) == len(full.blocks) > 0


def test_rewritten_file_is_read_from_the_start(logs, tmp_path):
    path = tmp_path / "a.out"
    path.write_bytes(logs[0].read_bytes())
    _, state = parse_log(path, "a.out", Redactor())
    path.write_bytes(b"X" * 10 + logs[0].read_bytes()[10:])
    again, _ = parse_log(path, "a.out", Redactor(), state=state)
    full, _ = parse_log(path, "a.out", Redactor())
    assert _bytes(again) == _bytes(full)
