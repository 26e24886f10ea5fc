"""The log reader's fast paths give exactly what the plain, line-by-line paths give.

Each fast path is checked against a slow reference on the input it must get
right: ``\\r`` redraws (also at chunk boundaries), and bad lines (NUL, invalid
UTF-8) in the middle of a block, before a marker, with their warnings' lines.
"""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.read import lines
from sitegen.read.lines import CR_PREFIX_RE, _cr_breaks, iter_raw_lines


def _cr_breaks_per_cr(chunk: bytes, carried: bytes | None) -> bytes:
    """The reference: one step per ``\\r`` (the reader before issue 11)."""
    out = bytearray()
    pos, last = 0, len(chunk) - 1
    while True:
        i = chunk.find(b"\r", pos)
        if i < 0:
            return bytes(out + chunk[pos:])
        start = chunk.rfind(b"\n", 0, i) + 1
        head = carried if start == 0 and carried is not None else chunk[start : start + 400]
        m = CR_PREFIX_RE.match(head) if i < last else None
        out += chunk[pos:i] + b"\n" + (m.group(0) if m else b"")
        pos = i + 1


CR_ATOMS = (
    b"\r",
    b"\n",
    b"x",
    b"(",
    b"1",
    b"\x1b",
    b"(skyrl_entrypoint pid=4242) ",
    b"\x1b[36m(AsyncVLLMInferenceEngine pid=2, ip=10.0.0.1)\x1b[0m ",
    b"(EngineCore_DP0 pid=9) ",
    b"(pid=3) ",
    b"2026-01-01T00:00:00.5Z ",
    b"Processing prompts:  20%|##  | 20/100 [00:20<00:30, 3.5it/s]",
)
chunks = st.lists(st.sampled_from(CR_ATOMS), max_size=14).map(b"".join)


@settings(max_examples=400, deadline=None)
@given(
    chunk=chunks,
    carried=st.one_of(st.none(), chunks),
    long_line=st.booleans(),
)
def test_cr_breaks_one_pass_per_line_equals_one_step_per_cr(chunk, carried, long_line):
    if long_line:  # a prefix whose line is longer than the 400 bytes looked at
        chunk = b"(actor pid=1) " + b"y" * 450 + chunk
    assert _cr_breaks(chunk, carried) == _cr_breaks_per_cr(chunk, carried)


def test_cr_at_chunk_boundaries_reads_as_the_per_cr_reference(monkeypatch):
    data = b"(w pid=7) 10%|#| 1/9 [00:01]\r(w pid=7) 20%\r\r\n(v pid=8) a\rb\r\nend\rtail\r"
    whole = [raw for _, raw, _ in iter_raw_lines(io.BytesIO(data), chunk_size=1 << 10)]
    assert whole == [
        b"(w pid=7) 10%|#| 1/9 [00:01]",
        b"(w pid=7) (w pid=7) 20%",
        b"(w pid=7) ",
        b"(v pid=8) a",
        b"(v pid=8) b",
        b"end",
        b"tail",
    ]
    for size in (1, 2, 3, 5, 7, 11, 13, 64):
        got = list(iter_raw_lines(io.BytesIO(data), chunk_size=size))
        with monkeypatch.context() as m:
            m.setattr(lines, "_cr_breaks", _cr_breaks_per_cr)
            want = list(iter_raw_lines(io.BytesIO(data), chunk_size=size))
        assert got == want, size
