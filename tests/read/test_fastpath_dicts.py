"""A metrics dict's run of lines taken in one go reads exactly as line by line.

``MetricBlocks._take_run`` takes the lines of an open ``Step N:`` dict from one
process up to its ``}`` at once. The reference here is the slow path: every
line through ``feed_raw`` (the full ``split_line``). Generated logs mix dicts of
several processes and prefixes with interleaved lines, cuts, odd continuation
lines, bad bytes, ``\\r`` redraws and block boundaries anywhere; the result, the
line numbers and the resumable state at every block end must be the same.
"""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.cache.logs import state_bytes
from sitegen.read import logparse, metricblocks
from sitegen.read.lines import iter_blocks
from sitegen.read.logparse import LogParser
from sitegen.redact import Redactor

P = b"(skyrl_entrypoint pid=4242) "
PREFIXES = (
    P,
    b"\x1b[36m(skyrl_entrypoint pid=4242)\x1b[0m ",  # same process, other bytes
    b"2026-01-01T00:00:00.5Z (skyrl_entrypoint pid=4242) ",
    b"(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1) ",
    b"(pid=3) (EngineCore_DP0 pid=9) ",
    b"",  # the driver's own output
)
# What a dict's continuation line may hold instead of a plain item: lines that close
# early (a "}" before other whitespace), cut the dict (blank, a "{"), or that the run
# must leave to the line-by-line path (escape, "]", dedup suffix).
ODD = (
    b" 'a': 1} ",
    b" 'a': 1}\t",
    b" 'a': 1}\xc2\xa0",
    b" 'a': 1}\xe3\x80\x80",
    b" ",
    b"\t",
    b"{'z': 2,",
    b"\t'tab': 3,",
    b" 'r': '[x]',",
    b" 'e': 5\x1b[0m,",  # split_line strips the colour code: the value reads 5
    b" 'd': 4, [repeated 3x across cluster]",
    b" 'u': '\xc3\xa9',",
    b" 'x': '}',",
    b" }",
)
NOISE = (
    b"(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1) WARNING 02-08 00:56:55 [s.py:1] Request",
    b"(skyrl_entrypoint pid=4242) Example generated: Step 3: {'x': 1}",
    b"(skyrl_entrypoint pid=4242)  'looks': 'like a dict line',",
    b"slurmstepd: error: Detected 1 oom_kill event in StepId=5.0",
    b"(skyrl_entrypoint pid=4242) bad \xff\xfe bytes",
    b"(skyrl_entrypoint pid=4242)  'nul': 1,\x00",
    b"(skyrl_entrypoint pid=4242) 20%|##  | 20/100 [00:20<00:30]\r 'after': 'a bar',",
    b"\r",
)


def _header(pfx: bytes, step: int) -> bytes:
    return pfx + f"2026-02-08 00:56:{step % 60:02d}.123 | INFO     | m:f:1 - Step {step}: ".encode()


BAR = b"Training Batches Processed:  50%|#####     | 4/9 [00:20<00:30, 5.00s/it]"
# What a header may lose its own prefix to, and its dict lines keep theirs (docs/formats.md §2.4):
# a bar the driver wrote, maybe after \r redraws, or the bar then the header's own prefix.
GLUED = (None, b"", BAR, b"\r" + BAR + b"\r" + BAR, BAR + b"\r", BAR + P)


@st.composite
def logs(draw) -> bytes:
    """Dicts of random processes and sizes, then lines put in, replaced and moved."""
    out: list[bytes] = []
    for step in range(1, draw(st.integers(1, 5)) + 1):
        pfx = draw(st.sampled_from(PREFIXES))
        items = [f"'k/{i}': '0.{step:02d}{i:02d}'" for i in range(draw(st.integers(0, 6)))]
        items.append(f"'trainer/global_step': {step}")
        text = "{" + ",\n ".join(items) + "}"  # pformat's layout: an item a line
        glued = draw(st.sampled_from(GLUED))
        out.append(_header(pfx if glued is None else glued, step))
        out += [pfx + line.encode() for line in text.split("\n")]
        if draw(st.booleans()):  # what looks like more of it after its "}"
            out.append(pfx + draw(st.sampled_from((b" 'after': 1,", b" 'after': 2}", b"\t}"))))
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(out)))
        kind = draw(st.sampled_from(("noise", "odd", "prefix", "header", "drop")))
        if kind == "noise":
            out.insert(i, draw(st.sampled_from(NOISE)))
        elif i < len(out) and kind == "odd":
            out[i] = draw(st.sampled_from(PREFIXES)) + draw(st.sampled_from(ODD))
        elif i < len(out) and kind == "prefix":  # the same text from another process
            line = out[i]
            for p in sorted(PREFIXES, key=len, reverse=True):
                if p and line.startswith(p):
                    line = line[len(p) :]
                    break
            out[i] = draw(st.sampled_from(PREFIXES)) + line
        elif kind == "header":  # a dict cut by a new header
            out.insert(i, _header(draw(st.sampled_from(PREFIXES)), 90 + i))
        elif i < len(out):
            del out[i]
    return b"".join(line + b"\n" for line in out)


def _by_line(data: bytes, chunk: int) -> tuple[object, list[tuple[int, bytes | None]]]:
    """The reference: every line through feed_raw; the state after each line.

    The lines are read in chunks of the same size as the reader's: a ``\r`` that ends a
    chunk is a plain line break (it may be half of a ``\r\n``), so the lines themselves
    depend on the chunk size; what is compared here is what the parser makes of them.
    """
    p = LogParser("x.out", Redactor(), year_hint=2026)
    states = [(0, state_bytes(p.state()))]
    for block, line, trunc, brk in iter_blocks(io.BytesIO(data), chunk_size=chunk):
        # numbered as feed_read numbers them: as read, named by the file's own line
        if brk is not None:
            p.cr_lines += brk.before
        pieces = [(line, trunc, 0)] if block is None else []
        at = 0
        for piece in block[:-1].split(b"\n") if block is not None else ():
            pieces.append((piece, False, brk.within(at) if brk is not None else 0))
            at += len(piece) + 1
        for raw, cut, made in pieces:
            p.feed_raw(p.lines + 1, raw, cut, p.lines + 1 - p.cr_lines - made)
            states.append((p.lines, state_bytes(p.state())))
        if block is not None and brk is not None:
            p.cr_lines += brk.within(len(block))
            states[-1] = (p.lines, state_bytes(p.state()))
    return p.finish(len(data), 0.0), states


def _by_block(data: bytes, chunk: int) -> tuple[object, list[tuple[int, bytes | None]]]:
    """The reader's path (feed_block); the state after each block."""
    p = LogParser("x.out", Redactor(), year_hint=2026)
    states = []
    for read in iter_blocks(io.BytesIO(data), chunk_size=chunk):
        p.feed_read(*read)
        states.append((p.lines, state_bytes(p.state())))
    return p.finish(len(data), 0.0), states


def _same_as_line_by_line(data: bytes, chunk: int) -> None:
    got, got_states = _by_block(data, chunk)
    want, want_states = _by_line(data, chunk)
    assert got == want
    by_lines = dict(want_states)
    for lines, state in got_states:
        assert state == by_lines[lines], lines  # pending dicts, lines, warnings


@settings(max_examples=150, deadline=None)
@given(data=logs(), chunk=st.integers(40, 1 << 12), limit=st.sampled_from((5000, 3, 6)))
def test_dict_runs_read_as_line_by_line(data, chunk, limit):
    with pytest.MonkeyPatch.context() as m:
        m.setattr(metricblocks, "MAX_BLOCK_LINES", limit)  # a dict too long at any size
        _same_as_line_by_line(data, chunk)


def _clean_log(prefix: bytes = P) -> bytes:
    lines = [_header(prefix, 7), b"{'a/x': '0.5000',", b" 'b/y': 3,", b" 'trainer/global_step': 7}"]
    return b"".join((ln if ln.startswith(prefix) else prefix + ln) + b"\n" for ln in lines)


@pytest.mark.parametrize("prefix", [P, PREFIXES[1], b""])
def test_a_clean_dict_is_one_run_without_the_line_path(prefix, monkeypatch):
    calls: list[int] = []
    take = metricblocks.MetricBlocks._take_run

    def counted(self, block, pos, end):
        got = take(self, block, pos, end)
        calls.append(got[0])
        return got

    feed_raw = logparse.LogParser.feed_raw

    def no_line_path(self, *args):
        assert not self.pending, "a dict line took the line-by-line path"
        return feed_raw(self, *args)

    monkeypatch.setattr(metricblocks.MetricBlocks, "_take_run", counted)
    monkeypatch.setattr(logparse.LogParser, "feed_raw", no_line_path)
    data = _clean_log(prefix) * 2
    got, _ = _by_block(data, 1 << 20)
    assert calls == [3, 3]  # each dict's three lines in one go
    assert [(b.step, b.metrics, b.line) for b in got.blocks] == [
        (7, {"a/x": 0.5, "b/y": 3, "trainer/global_step": 7}, 1)
    ]
    assert got.lines == 8 and got.warnings == ()


def test_an_interleaved_line_splits_the_run_and_the_dict_is_kept():
    other = b"(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1) chatter {'x': 1}\n"
    lines = _clean_log().splitlines(keepends=True)
    data = b"".join(lines[:2]) + other + b"".join(lines[2:])
    p = LogParser("x.out", Redactor(), year_hint=2026)
    p.feed_block(1, data)
    got = p.finish()
    assert [(b.step, b.metrics["b/y"]) for b in got.blocks] == [(7, 3)]
    assert got.lines == 5 and got.warnings == ()
    _same_as_line_by_line(data, 1 << 20)


@pytest.mark.parametrize(
    "odd",
    [b" 'b/y': 3} ", b" ", b"\t", b" 'b/y': '[3]',", b" 'b/y': 3}\xc2\xa0"],
)
def test_a_run_that_would_close_early_or_cut_is_declined_unchanged(odd):
    data = _header(P, 7) + b"\n" + P + b"{'a/x': 1,\n" + P + odd + b"\n" + P + b" 'c': 2}\n"
    p = LogParser("x.out", Redactor(), year_hint=2026)
    p.feed_raw(1, data.split(b"\n")[0], False)
    before = state_bytes(p.state())
    start = data.index(b"\n") + 1
    taken, _ = p._take_run(data, start, len(data))
    assert taken == 0 and state_bytes(p.state()) == before
    _same_as_line_by_line(data, 1 << 20)


def test_a_dict_line_after_the_close_is_not_the_dicts():
    data = _clean_log() + P + b" 'after': 1,\n" + P + b" 'more': 2}\n"
    p = LogParser("x.out", Redactor(), year_hint=2026)
    p.feed_block(1, data)
    got = p.finish()
    assert [(b.step, sorted(b.metrics)) for b in got.blocks] == [
        (7, ["a/x", "b/y", "trainer/global_step"])
    ]
    assert got.lines == 6 and got.warnings == ()
    _same_as_line_by_line(data, 1 << 20)


def test_a_dict_past_the_line_limit_is_skipped_as_line_by_line(monkeypatch):
    monkeypatch.setattr(metricblocks, "MAX_BLOCK_LINES", 1)  # 3 lines: cut at the 2nd
    data = _clean_log()
    got, _ = _by_block(data, 1 << 20)
    assert got.blocks == () and "never closes" in got.warnings[0].message
    _same_as_line_by_line(data, 1 << 20)
