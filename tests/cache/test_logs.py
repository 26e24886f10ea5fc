"""A log's cache entries: where its read stopped, kept as msgpack and checked when read."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from sitegen.cache.codec import decode
from sitegen.cache.files import CACHE_VERSION, CacheFileError, packed_entry, packed_entry_bytes
from sitegen.cache.logs import log_state_bytes, log_state_from_bytes
from sitegen.read.logfile import parse_log, window
from sitegen.redact import Redactor
from sitegen.synth import synth

FP = (("a.out", 10, 20),)
SAMPLE_LOG = Path(__file__).parents[2] / "sample/archive/flat/chain-b/train_600301.out"


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("synth-logs")
    synth(root, seed=5, steps=8)
    return max(root.rglob("*.out"), key=lambda p: p.stat().st_size)


def _good(log: Path) -> bytes:
    return log_state_bytes(FP, parse_log(log, "a.out", Redactor())[1])


def _set(i: int, value: object):
    """Set field ``i`` of the log's own file (path, offset, tail, parser, head)."""

    def damage(d: list) -> None:
        d[1][0][i] = value

    return damage


def _parser(**kw: object):
    return lambda d: d[1][0][3].update(kw)


def _err(rel: object):
    """An .err's state beside the log's, a copy of the log's under the path ``rel``."""
    return lambda d: d[1].append([rel, *d[1][0][1:]])


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d.pop(),
        lambda d: d[1][0].pop(),
        lambda d: d[1].clear(),  # no state of the log's own file
        lambda d: d[1].insert(0, ["x.err", *d[1][0][1:]]),  # an .err's before the log's
        _err(""),  # the log's own file twice
        _err(7),
        _set(0, "x.err"),
        _set(1, -1),
        _set(1, True),
        _set(2, "not bytes"),
        _set(1, 2),  # a tail and head longer than what was read
        _set(4, b"x" * (1 << 20)),  # a head longer than what was read
        _set(4, "not bytes"),
        _set(3, []),
        _parser(lines="12"),
        _parser(console={"x": {}}),
        _parser(console={1: {"a": "1.5"}}),
        _parser(first_time="yesterday"),
        lambda d: d[1][0][3]["vllm"].update(engines={"e": {"samples": "1"}}),
        _parser(warnings=[{"path": 1, "line": None, "message": ""}]),
        _parser(fresh_start=0),
        _parser(batch_modes=[1]),
        _parser(warn_counts={"kind": 1.5}),
    ],
)
def test_malformed_state_is_refused(log, damage):
    d = msgspec.msgpack.decode(_good(log))
    damage(d)
    with pytest.raises(ValueError):
        log_state_from_bytes(msgspec.msgpack.encode(d))


def test_state_comes_back_as_it_was_with_every_parser_field(log):
    data = _good(log)
    state = log_state_from_bytes(data)
    assert state.offset == log.stat().st_size and state.parser.console
    assert state.head == window(log.read_bytes()[:256]) and state.errs == {}
    # what it keeps of the log's bytes is a digest: never the bytes, which can hold a secret
    assert log.read_bytes()[:64] not in data and log.read_bytes()[-64:] not in data
    assert (state.size, state.mtime_ns) == (log.stat().st_size, log.stat().st_mtime_ns)
    assert log_state_bytes(FP, state) == data


def test_a_split_logs_state_keeps_each_err_s(log, tmp_path):
    """Each .err's state (its offset, ends and parser) comes back under its path."""
    out, err = tmp_path / "a.out", tmp_path / "a.err"
    out.write_bytes(log.read_bytes())
    err.write_bytes(log.read_bytes() + b"a partial last line")
    _, state = parse_log(out, "a.out", Redactor(), ((err, "a.err"),))
    data = log_state_bytes(FP, state)
    back = log_state_from_bytes(data)
    (kept,) = back.errs.values()
    assert list(back.errs) == ["a.err"] and kept.offset == log.stat().st_size == back.offset
    assert kept.tail == back.tail and kept.head == back.head and kept.parser.console
    assert back.read == 2 * back.offset
    assert log_state_bytes(FP, back) == data


def test_a_damaged_entry_is_refused_by_its_checksum(log):
    """msgspec gives a field missing from a body its default: damage is told by the CRC."""
    body = _good(log)
    data = packed_entry_bytes("logstate", "a.out", body, "shape")
    head, got = packed_entry(data)
    assert head == (CACHE_VERSION, "logstate", "a.out", "shape") and bytes(got) == body
    at = data.index(b"console")
    for bad in (data[:-1], data[:at] + b"C" + data[at + 1 :], data + b"\x00", b"{}"):
        with pytest.raises(CacheFileError):
            packed_entry(bad)


def test_a_planted_entry_nested_past_the_limit_is_refused_not_fatal(log):
    """A body nested 100 000 maps deep with a right checksum (anyone who may write beside
    the output may plant one): msgspec passes over the raw body by recursion, and so does
    the walk of a loosely typed value. Both are refused as damage, never a crash."""
    deep = b"\x81\xa1a" * 100_000 + b"\xc0"
    data = packed_entry_bytes("logstate", "a.out", deep, "shape")
    with pytest.raises(CacheFileError, match="nested too deeply"):
        packed_entry(data)
    for depth in (600, 100_000):  # past Python's limit in our walk, and in msgspec's
        config = b"\x81\xa6config" + b"\x81\xa1a" * depth + b"\xc0"  # {"config": {"a": …}}
        with pytest.raises(ValueError, match="nested too deeply"):
            decode(config, _Holder)


class _Holder(msgspec.Struct, frozen=True):
    """A loosely typed value, as a log's config dump is."""

    config: dict | None = None


def test_a_state_read_in_the_middle_of_a_config_dump_is_not_kept(tmp_path):
    # a job that has just started, its log cut inside the config dump: the dump's lines are
    # kept raw until it is parsed whole (then its secrets are hidden), so no state holding
    # them is written to the cache; the log is read whole next time
    from sitegen.cache.logs import log_entries, state_bytes

    log = tmp_path / "x.out"
    lines = SAMPLE_LOG.read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if b"HF_TOKEN: hf_" in line) + 1
    log.write_bytes(b"".join(lines[:at]))
    parsed, state = parse_log(log, "x.out", Redactor(), snapshot=state_bytes)
    assert state.parser is None
    assert log_entries(parsed.path, FP, parsed, state) == []
    log.write_bytes(b"".join(lines))  # the dump and more: its state is kept, without a secret
    parsed, state = parse_log(log, "x.out", Redactor(), snapshot=state_bytes)
    entries = log_entries(parsed.path, FP, parsed, state)
    assert entries and not any(b"hf_" + b"lHFg4" in data for _, data in entries)
