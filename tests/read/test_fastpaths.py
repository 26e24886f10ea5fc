"""The log reader's fast paths give exactly what the plain, line-by-line paths give.

Each fast path is checked against a slow reference on the input it must get
right: ``\\r`` redraws (also at chunk boundaries), and bad lines (NUL, invalid
UTF-8) in the middle of a block, before a marker, with their warnings' lines.
"""

from __future__ import annotations

import ast
import io
import pprint
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.read import lines
from sitegen.read.lines import (
    CR_PREFIX_RE,
    CrBreaks,
    Line,
    _cr_breaks,
    iter_blocks,
    iter_raw_lines,
    known_prefix,
    split_line,
)
from sitegen.read.logparse import LogParser
from sitegen.read.markers import LOGURU_HINT, Markers
from sitegen.read.metricblocks import flat_dict
from sitegen.redact import Redactor


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
    b"\x1b[2m\x1b[36m(skyrl_entrypoint pid=4242)\x1b[0m ",  # Ray's own: dim, then cyan
    b"\x1b[2m",
    b"(EngineCore_DP0 pid=9) ",
    b"(pid=3) ",
    b"2026-01-01T00:00:00.5Z ",
    b"Processing prompts:  20%|##  | 20/100 [00:20<00:30, 3.5it/s]",
)
chunks = st.lists(st.sampled_from(CR_ATOMS), max_size=14).map(b"".join)


@settings(max_examples=200, deadline=None)
@given(
    chunk=chunks,
    carried=st.one_of(st.none(), chunks),
    long_line=st.booleans(),
)
def test_cr_breaks_one_pass_per_line_equals_one_step_per_cr(chunk, carried, long_line):
    if long_line:  # a prefix whose line is longer than the 400 bytes looked at
        chunk = b"(actor pid=1) " + b"y" * 450 + chunk
    assert _cr_breaks(chunk, carried) == _cr_breaks_per_cr(_crlf(chunk), carried)


@settings(max_examples=200, deadline=None)
@given(chunk=chunks, carried=st.one_of(st.none(), chunks))
def test_cr_breaks_pieces_hold_every_lone_cr(chunk, carried):
    """The pieces hold a break for every \r but a \r\n's and the chunk's last, and the
    last entry counts those two kinds."""
    pieces: list = []
    out = _cr_breaks(chunk, carried, pieces)
    not_lone = pieces.pop()[3]
    last = len(chunk) - 1
    lone = sum(1 for i, c in enumerate(chunk) if c == 13 and i < last and chunk[i + 1] != 10)
    assert chunk.count(b"\r") - not_lone == lone
    assert CrBreaks(chunk, out, pieces, lone).before(len(out) - 1) == lone


@settings(max_examples=200, deadline=None)
@given(chunk=chunks, carried=st.one_of(st.none(), chunks), data=st.data())
def test_cr_breaks_asked_in_any_order_count_as_asked_alone(chunk, carried, data):
    """``CrBreaks.before`` counts on from the last position asked; asked at a position
    before it (a dict's lines looked at again), it counts again from the start: each
    answer is what a fresh counter gives for that position alone."""
    pieces: list = []
    out = _cr_breaks(chunk, carried, pieces)
    lone = chunk.count(b"\r") - pieces.pop()[3]
    positions = data.draw(st.lists(st.integers(0, len(out)), max_size=8))
    asked = CrBreaks(chunk, out, pieces, lone)
    for pos in [*positions, *sorted(positions, reverse=True)]:
        assert asked.before(pos) == CrBreaks(chunk, out, pieces, lone).before(pos)


def _crlf(chunk: bytes) -> bytes:
    """The reference's ``\r\n``: one break, replaced before the ``\r`` are looked at."""
    return chunk.replace(b"\r\n", b"\n")


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
        got = _lines_read(data, size)
        with monkeypatch.context() as m:
            m.setattr(lines, "_cr_breaks", lambda c, k, _p=None: _cr_breaks_per_cr(_crlf(c), k))
            want = _lines_read(data, size)
        assert got == want, size


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from((b"\r", b"\n", b"\r\n", b"x", b"\r\r", b"(a pid=1) ")), max_size=12),
    st.sampled_from((1, 2, 3, 5, 64)),
)
def test_crlf_is_one_break_at_any_chunk_size(atoms, size):
    data = b"".join(atoms)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(lines, "_cr_breaks", lambda c, k, _p=None: _cr_breaks_per_cr(_crlf(c), k))
        ref = _lines_read(data, size)
    assert _lines_read(data, size) == ref
    # each line is named by the file's own line: the \n lines before it, plus one
    numbers = [n for n, _, _ in iter_raw_lines(io.BytesIO(data), chunk_size=size)]
    assert numbers == _file_lines(data)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from((b"\r", b"\n", b"\r\n", b"x", b"x" * 12, b"\r\r", b"(a pid=1) ")),
        max_size=20,
    ),
    st.sampled_from((1, 2, 3, 7, 64)),
    st.sampled_from((8, 16)),
)
def test_lines_are_named_by_the_file_line_also_when_cut(atoms, size, longest):
    # lines longer than the longest kept are cut, and a block holding one is read line by line
    data = b"".join(atoms)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(lines, "MAX_LINE_BYTES", longest)
        numbers = [n for n, _, _ in iter_raw_lines(io.BytesIO(data), chunk_size=size)]
    assert numbers == _file_lines(data)


def _lines_read(data: bytes, size: int) -> list[tuple[bytes, bool]]:
    """The lines iter_raw_lines reads (their numbers are checked apart: _file_lines)."""
    return [(raw, cut) for _, raw, cut in iter_raw_lines(io.BytesIO(data), chunk_size=size)]


def _file_lines(data: bytes) -> list[int]:
    """The reference: for each line read (ended by \n, \r\n or a lone \r, and a last
    unended one), the number of the \n-terminated line of the file it lies in."""
    out, line, i, start = [], 1, 0, 0
    while i < len(data):
        c = data[i : i + 1]
        if c == b"\n" or (c == b"\r" and data[i + 1 : i + 2] != b"\n"):
            out.append(line)
            line += c == b"\n"
            start = i + 1
        i += 1
    if start < len(data):
        out.append(line)
    return out


def test_a_cr_line_whose_prefix_straddles_a_chunk_boundary_keeps_it():
    head = b"x" * 30 + b"\n"
    data = head + b"(skyrl_entrypoint pid=4242) 10%|#| 1/9 [00:01]\r 'after': 'a bar',\n"
    want = [raw for _, raw, _ in iter_raw_lines(io.BytesIO(data))]
    assert want[2] == b"(skyrl_entrypoint pid=4242)  'after': 'a bar',"
    # chunks that end inside the prefix, or right after the \r
    for size in range(len(head) + 1, len(head) + 28):
        got = [raw for _, raw, _ in iter_raw_lines(io.BytesIO(data), chunk_size=size)]
        assert got == want, size


@pytest.mark.parametrize(
    "pfx",
    [
        b"(w pid=7) ",
        b"\x1b[36m(w pid=7, ip=10.0.0.2)\x1b[0m ",
        b"\x1b[2m\x1b[36m(w pid=7, ip=10.0.0.2)\x1b[0m ",
    ],
)
def test_a_cr_that_ends_a_chunk_gives_its_lines_prefix_to_what_follows(pfx):
    data = b"x\n" + pfx + b"10%|#| 1/9 [00:01]\r20%|#| 2/9 [00:02]\rrecord\r\r\nnext\r\n"
    want = [raw for _, raw, _ in iter_raw_lines(io.BytesIO(data))]
    assert want[1:5] == [
        pfx + b"10%|#| 1/9 [00:01]",
        pfx + b"20%|#| 2/9 [00:02]",
        pfx + b"record",
        pfx,
    ]
    for size in range(1, len(data) + 1):
        got = list(iter_raw_lines(io.BytesIO(data), chunk_size=size))
        assert [raw for _, raw, _ in got] == want, size
        assert [n for n, _, _ in got] == [1, 2, 2, 2, 2, 3], size


# -- unclean blocks: clean runs by the marker finder, bad lines one by one ---------------

P = b"(skyrl_entrypoint pid=4242) "
DIM_P = b"\x1b[2m\x1b[36m(skyrl_entrypoint pid=4242)\x1b[0m "  # as Ray writes it
ENGINE = b"(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1) "


def _lg(msg: str, colour: bytes = b"") -> bytes:
    """A loguru line; ``colour`` is a colour code put right before the first " | "."""
    return P + b"2026-02-08 00:56:50.123" + colour + f" | INFO     | m:f:1 - {msg}".encode()


def _dict(step: int) -> list[bytes]:
    return [
        _lg(f"Step {step}: "),
        P + f"{{'reward/avg_raw_reward': '0.{step:04d}',".encode(),
        P + f" 'trainer/global_step': {step}}}".encode(),
    ]


def _glued_dict(step: int, glue: bytes) -> list[bytes]:
    """A dict whose header was glued after a bar the driver wrote (``glue``: what comes
    between the line's start and the header: the bar, its redraws, the header's prefix)."""
    head, *body = _dict(step)
    return [glue + head[len(P) :], *body]


def _after_own_bar(step: int) -> list[bytes]:
    head, *body = _dict(step)
    return [
        DIM_P + TRAIN_BAR + b"\r" + TRAIN_BAR + b"\r" + head[len(P) :],
        ENGINE + b"WARNING 02-08 00:56:55 [serving.py:1] Request truncated",
        *(DIM_P + x[len(P) :] for x in body),
    ]


TRAIN_BAR = b"Training Batches Processed:  50%|#####     | 4/9 [00:20<00:30, 5.00s/it]"

LINE_KINDS = {
    "noise": lambda i: [b"(pid=3) Processing prompts:  20%|##  | 20/100 [00:20<00:30]"],
    "model_text": lambda i: [P + b"generated: Step 3: Training done! slurmstepd"],
    "step": lambda i: _dict(i),
    "glued_step": lambda i: _glued_dict(i, TRAIN_BAR),
    "glued_step_redraws": lambda i: _glued_dict(i, b"\r" + TRAIN_BAR + b"\r" + TRAIN_BAR),
    "glued_step_cr": lambda i: _glued_dict(i, TRAIN_BAR + b"\r"),
    "glued_step_own_prefix": lambda i: _glued_dict(i, TRAIN_BAR + P),
    # the actor's own bar redrawn on its line (Ray's prefix), another process's line, the dict
    "step_after_own_bar": lambda i: _after_own_bar(i),
    "vllm": lambda i: [
        ENGINE
        + f"INFO 02-08 00:56:{i % 60:02d} [loggers.py:127] Engine 000: Avg prompt "
        f"throughput: 1.0 tokens/s, Avg generation throughput: {i}.0 tokens/s, Running: 3 reqs, "
        "Waiting: 1 reqs, GPU KV cache usage: 5.0%, Prefix cache hit rate: 2.0%".encode()
    ],
    "engine_noise": lambda i: [ENGINE + b"WARNING 02-08 00:56:55 [serving.py:1] Request truncated"],
    # a colour code too long for a 12-byte look-back before the loguru separator
    # (a resume three steps back: after steps it is a restart within the job, which drops them)
    "long_colour": lambda i: [
        _lg(f"Resumed training from global_step {max(i - 3, 1)}", b"\x1b[38;5;214;1;4m")
    ],
    "batch": lambda i: [
        _lg("Batch generation complete: 7/8 successful, 1 failed instances, 0 masked")
    ],
    "nul": lambda i: [P + b"binary\x00junk"],
    "utf8": lambda i: [P + b"bad \xff\xfe bytes"],
    "nul_marker": lambda i: [_lg(f"Resumed training from global_step {i}") + b"\x00"],
    "utf8_marker": lambda i: [b"\xc3(" + _lg("Training done!")],
    "cut_utf8": lambda i: [P + b"cut \xe2\x82"],
    "slurm": lambda i: [b"slurmstepd: error: Detected 1 oom_kill event in StepId=5.0"],
}


def _log(kinds: list[str]) -> bytes:
    return b"".join(x + b"\n" for i, k in enumerate(kinds, 1) for x in LINE_KINDS[k](i))


def _by_line(data: bytes):
    """The reference: every line through feed_raw (the slow path)."""
    p = LogParser("x.out", Redactor(), year_hint=2026)
    for n, raw, trunc in iter_raw_lines(io.BytesIO(data), chunk_size=97):
        p.feed_raw(n, raw, trunc)
    return p.finish(len(data), 0.0)


def _by_block(data: bytes, chunk: int):
    p = LogParser("x.out", Redactor(), year_hint=2026)
    for read in iter_blocks(io.BytesIO(data), chunk_size=chunk):
        p.feed_read(*read)
    return p.finish(len(data), 0.0)


def test_bad_lines_in_a_block_warn_at_their_lines_and_the_rest_is_read():
    kinds = ["step", "noise", "nul", "step", "utf8_marker", "vllm", "noise", "utf8"]
    kinds += ["nul_marker", "step", "cut_utf8", "long_colour", "slurm"]
    data = _log(kinds)
    got = _by_block(data, 1 << 20)  # one block
    assert got == _by_line(data)
    lines = {k: i for i, k in enumerate((x for k in kinds for x in [k] * len(LINE_KINDS[k](0))), 1)}
    where = [(w.line, w.message.split(" ")[0]) for w in got.warnings]
    assert where == [
        (lines["nul"], "NUL"),
        (lines["utf8_marker"], "invalid"),
        (lines["utf8"], "invalid"),
        (lines["nul_marker"], "NUL"),
        (lines["cut_utf8"], "invalid"),
        (lines["long_colour"], "training"),  # the restart it reads
    ]
    # markers on, right after and after bad lines are all read: the long colour code's
    # resume to step 9 (a restart within the job) drops step 10
    assert [b.step for b in got.blocks] == [1, 4]
    assert got.end_marker == "failed"  # the oom line, after the end line on a bad line
    assert got.lines == len(data.split(b"\n")) - 1


@pytest.mark.parametrize("chunk", [64, 97, 1 << 20])
def test_headers_glued_after_the_drivers_bars_read_alike_in_blocks(chunk):
    kinds = ["glued_step", "noise", "glued_step_redraws", "vllm", "glued_step_cr"]
    kinds += ["glued_step_own_prefix", "step", "step_after_own_bar"]
    data = _log(kinds)
    got = _by_block(data, chunk)
    assert got == _by_line(data)
    assert [b.step for b in got.blocks] == [1, 3, 5, 6, 7, 8] and not got.warnings


@settings(max_examples=150, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(sorted(LINE_KINDS)), max_size=30),
    chunk=st.integers(48, 2048),
)
def test_unclean_blocks_read_as_line_by_line(kinds, chunk):
    data = _log(kinds)
    assert _by_block(data, chunk) == _by_line(data)


# -- the marker finder: one automaton pass equals a find per literal and a hint regex ----


def _first_hit_by_finds(block: bytes, pos: int) -> int:
    """The reference: the first literal by one ``find`` each, or a LOGURU_HINT's " | "."""
    lits = [i for lit in Markers.LITERALS if (i := block.find(lit, pos)) >= 0]
    best = min(lits, default=-1)
    for m in re.finditer(rb" \| ", block[pos:]):
        i = pos + m.start()
        if best >= 0 and i > best:
            break
        line_start = block.rfind(b"\n", 0, i) + 1
        if LOGURU_HINT.search(block, line_start, i + 3):
            return i
    return best


def _line_of(block: bytes, i: int) -> int:
    """The start of the line holding offset ``i``, or -1 for no hit."""
    return -1 if i < 0 else block.rfind(b"\n", 0, i) + 1


MARKER_ATOMS = (
    *Markers.LITERALS,
    b"Engine 000: ",
    b"Engines Aggregated: Engine 0",
    b"WANDB_MIRRORlines truncated",
    b"vLLM Statslurmstepd",  # the one overlap of two literals: "slurmstepd" hides in the match
    b"Engine 0 | ",  # a hint hidden in a literal's match
    b"Engine",
    b"\n",
    b"\n",
    b" | ",
    b"7 | ",
    b"| ",
    b"5",
    b"\x1b[38;5;214;1;4m | ",
    b"\x1b[0m\x1b[32m | ",
    b"\x1b[0m",
    b"2026-02-08 00:56:50.123 ",
    b"m | ",
    b"m",
    b"text ",
)


@settings(max_examples=250, deadline=None)
@given(atoms=st.lists(st.sampled_from(MARKER_ATOMS), max_size=40))
def test_marker_finder_equals_a_find_per_literal(atoms):
    block = b"".join(atoms) + b"\n"
    m = Markers(block)
    line_starts = [0] + [i + 1 for i, c in enumerate(block) if c == 10][:-1]
    for pos in line_starts:  # as LogParser asks: line starts, in order
        got = m.find(pos)
        assert _line_of(block, got) == _line_of(block, _first_hit_by_finds(block, pos)), pos
        assert got < 0 or got >= pos


def test_marker_finder_lines_skipped_and_hidden_matches():
    block = b"x vLLM Statslurmstepd\nEngine 0 | a\n\x1b[0m | bar\n7\x1b[1m | y\n"
    a, b, c, d = [0] + [i + 1 for i, ch in enumerate(block) if ch == 10][:-1]
    m = Markers(block)
    # the colour code's " | " after no digit is no hint: that line is passed over
    assert [_line_of(block, m.find(p)) for p in (a, b, c, d)] == [a, b, d, d]
    assert Markers(block).find(c) == block.index(b"m | ", d)  # asked first past the start
    assert Markers(b"a | b\n" * 3).find(0) == -1  # tqdm's " | " after a space


# -- a metrics dict's lines without the full split ---------------------------------------

PREFIX_ATOMS = (
    b"(skyrl_entrypoint pid=4242) ",
    b"\x1b[36m(skyrl_entrypoint pid=4242)\x1b[0m ",
    b"\x1b[2m\x1b[36m(skyrl_entrypoint pid=4242)\x1b[0m ",
    b"\x1b[2m",
    b"(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1) ",
    b"(pid=3) ",
    b"(EngineCore_DP0 pid=9) ",
    b"(autoscaler +1m2s) ",
    b"2026-01-01T00:00:00.5Z ",
    b"2026-01-01T00:00:00Z",  # a container time whose space would be the line's
    b"(x) [repeated",
    b"\x1b[",
    b"(a pid=1)",
)
REST_ATOMS = (
    b" ",
    b"{",
    b"\t",
    b"'policy/loss': '0.0026',",
    b" 3x across cluster]",
    b"[repeated 2x across cluster]",
    b"\x1b[0m",
    b"1m",
    b"(b) ",
    b"2026-02-08 00:56:50.123 | INFO     | m:f:1 - Step 3: ",
    b"INFO 02-08 00:56:50 [x.py:1] Engine 000: y",
    b"x",
    b"\xc3\xa9",
)


@settings(max_examples=200, deadline=None)
@given(
    prefix=st.lists(st.sampled_from(PREFIX_ATOMS), max_size=4).map(b"".join),
    rest=st.lists(st.sampled_from(REST_ATOMS), max_size=5).map(b"".join),
)
def test_a_checked_prefix_is_exactly_what_split_line_strips(prefix, rest):
    """What the line fast paths rely on: for a line starting with a prefix that
    known_prefix accepts and a clean pformat rest, split_line strips that prefix alone."""
    raw = prefix + rest
    m = CR_PREFIX_RE.match(raw)
    if m is None:
        return
    pfx, rest = m.group(0), raw[m.end() :]
    if rest[:1] not in (b" ", b"\t", b"{") or b"\x1b" in rest or b"]" in rest:
        return
    known = known_prefix({}, pfx)
    if known is not None:
        assert split_line(7, raw) == Line(7, *known, 0, "", None, None, "", rest.decode())


def test_known_prefix_checks_each_prefix_once():
    coloured = b"\x1b[36m(skyrl_entrypoint pid=4242)\x1b[0m "
    known: dict = {}
    for pfx in (coloured, coloured, DIM_P):
        assert known_prefix(known, pfx) == ("skyrl_entrypoint 4242", "4242", None)
    assert list(known) == [coloured, DIM_P]
    assert known_prefix(known, b"(x) [repeated 2x across cluster] ") is None


# -- a flat metrics dict without literal_eval -------------------------------------
def _literal(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return "unreadable"


def _same(a, b) -> bool:
    """Equal with the same key order and value types (1 == 1.0 == True is not enough)."""
    return (
        isinstance(a, dict)
        and isinstance(b, dict)
        and list(a) == list(b)
        and all(type(a[k]) is type(b[k]) and repr(a[k]) == repr(b[k]) for k in a)
    )


# Near-valid dicts: pformat's own parts (and other valid spellings), with at most one
# part replaced by something odd, so that most examples are one step from the common shape.
DICT_KEYS = ("'policy/loss'", "'a'", "''", "'é: 1, '")
DICT_COLONS = (": ", ":", " : ", ":\n ")
DICT_VALUES = ("0", "-3", "2" * 23, "1.5", "-0.0", "01.5", "1e-05", "1E400", "'nan'", "'0.1'", "''")
DICT_SEPS = (",\n ", ", ", ",", " ,")
DICT_ODD = (
    *("'x\\'y'", '"d"', "1", "'a' 'b'", ":\t", "", "00", "064", "- 3", "+3", "--3", "1" * 40),
    *("1e", "1.", ".5", "1_0", "1j", "nan", "inf", "True", "None", "[1]", "{}", "'a\\nb'"),
    *("'a\x01'", "1 # c", "\n", ",,", ", \\\n", " {", "(", "}\n ", "} x", "}}", "\t"),
)


@st.composite
def dict_texts(draw):
    parts = [draw(st.sampled_from(("{", "{\n")))]
    for i in range(draw(st.integers(0, 4))):
        if i:
            parts.append(draw(st.sampled_from(DICT_SEPS)))
        parts += [draw(st.sampled_from(kind)) for kind in (DICT_KEYS, DICT_COLONS, DICT_VALUES)]
    parts.append(draw(st.sampled_from(("}", ",}", " }"))))
    if draw(st.booleans()):
        parts[draw(st.integers(0, len(parts) - 1))] = draw(st.sampled_from(DICT_ODD))
    return "".join(parts)


@settings(max_examples=400, deadline=None)
@given(dict_texts())
def test_flat_dict_is_literal_eval_or_declines(text):
    got = flat_dict(text)
    assert got is None or _same(got, _literal(text))


metric_values = st.one_of(
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: f"{f:.4f}"),
    st.sampled_from(["nan", "inf", "-inf", ""]),
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(min_size=0, max_size=12), metric_values, max_size=8))
def test_flat_dict_reads_pformat_dicts_as_literal_eval_does(d):
    text = pprint.pformat(d, width=40)
    want = ast.literal_eval(text)
    got = flat_dict(text)
    if all(k.isprintable() and "'" not in k and "\\" not in k for k in d) and all(
        isinstance(v, int | float) or ("'" not in v and "\\" not in v) for v in d.values()
    ):
        assert got is not None  # the common shape takes the fast path
    assert got is None or _same(got, want)


def test_flat_dict_repeated_keys_tabs_and_bare_nan():
    text = "{'a': 1,\n 'b': '2',\n 'a': 3.0}"
    assert _same(flat_dict(text), ast.literal_eval(text))  # first place, last value
    assert flat_dict("{'a': nan}") is None  # literal_eval refuses it: the block warns
    assert flat_dict("{'a':\t1}") is None
    assert flat_dict("{}") == {} and flat_dict("{'a': 1,}") == {"a": 1}
    assert flat_dict("{,}") is None and flat_dict("{'a': 1} x") is None


# -- a standard vLLM engine stats line without the split ---------------------------
STATS_PREFIXES = (
    b"\x1b[36m(AsyncVLLMInferenceEngine pid=287311, ip=10.128.26.195)\x1b[0m ",
    b"\x1b[2m\x1b[36m(AsyncVLLMInferenceEngine pid=287311, ip=10.128.26.195)\x1b[0m ",
    b"(AsyncVLLMInferenceEngine pid=7) (EngineCore_DP0 pid=9) ",
    b"2026-03-02T00:00:00.5Z (APIServer pid=3) ",
    b"(x) [repeated 2x across cluster] ",
    b"(a pid=1)",
    b"",
)
STATS_HEADERS = (
    b"INFO 03-02 00:08:51 [loggers.py:127] ",
    b"WARNING 03-02 00:08:51.123 [l.py:1] ",
    b"INFO 13-45 00:08:51 [l] ",  # no such date: no time, still a sample
    b"INFO 03-02 00:08:51 [[repeated 2x across cluster] ",
    b"INFO 03-02 00:08:51 [] ",
    b"2026-03-02 00:08:51.123 | INFO     | m:f:1 - ",
)
STATS_ENGINES = (b"Engine 000: ", b"Engine 12: ", b"4 Engines Aggregated: ", "Engine ٣: ".encode())
STATS_FIELDS = (
    b"Avg prompt throughput: 10.1 tokens/s, Avg generation throughput: 926.7 tokens/s, "
    b"Running: 17 reqs, Waiting: 0 reqs, GPU KV cache usage: 54.4%, Prefix cache hit rate: 84.8%",
    b"Avg prompt throughput: -0.0 tokens/s, Avg generation throughput: 1 tokens/s, "
    b"Running: -3 reqs, Waiting: 12 reqs, GPU KV cache usage: 0%, Prefix cache hit rate: 0.0%",
    b"Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, "
    b"Running: 1 reqs, Waiting: 0 reqs, Preemptions: 0, GPU KV cache usage: 5.0%, "
    b"Prefix cache hit rate: 1.0%",
    b"Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, "
    b"Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 5.0%, Prefix cache hit rate: 1.0%.",
)
RAY_DEDUP = (  # Ray's suffix as it prints it (green from the space on), and uncoloured
    b"\x1b[32m [repeated 3x across cluster]\x1b[0m",
    b" [repeated 3x across cluster]",
)
STATS_TAILS = (
    *RAY_DEDUP,
    b"\x1b[32m [repeated 9x across cluster] (Ray deduplicates logs by default. Set "
    b"RAY_DEDUP_LOGS=0 to disable log deduplication, or see https://docs.ray.io/en/master/"
    b"ray-observability/user-guides/configure-logging.html#log-deduplication for more "
    b"options.)\x1b[0m",  # the first copy of a job, with Ray's note
    b"\x1b[32m[repeated 2x across cluster]\x1b[0m",
    b" \x1b[32m [repeated 4x across cluster]\x1b[0m",
    b"\x1b[32m\x1b[0m [repeated 4x across cluster]",
    b"\x1b[32m [repeated 3x across cluster]\x1b[0m\x1b[0m",
    b"\x1b[32m [repeated 3x across cluster]",
    b" \x1b[32m[repeated 9x across cluster]\x1b[0m",
    b" \x1b[32m[repeated 9x across cluster]\x1b[0m [repeated 2x across cluster]",
    b"  \x1b[32m[repeated 9x across cluster]\x1b[0m",
    b" \x1b[32m[repeated 9x across cluster]",
    b"",
    b"  ",
    b"\x0c",
    b" \x1b[2m[repeated 8x across cluster]\x1b[0m",
    b"\xc2\x85",
    b" x",
)


def _steady_parser() -> LogParser:
    p = LogParser("logs/x.out", Redactor(), 2026)
    p.feed_raw(
        1, b"2026-03-02 00:00:00.000 | INFO     | skyrl_train.trainer:train:1 - started", False
    )
    p.config_done = True
    assert p.steady()
    return p


def _vllm_state(p: LogParser):
    v = p.vllm
    return (v.engines, v.buckets, v.aggregated_lines, p.suppressed, dict(p.warn_counts), p.lines)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(STATS_PREFIXES),
    st.sampled_from(STATS_HEADERS),
    st.sampled_from(STATS_ENGINES),
    st.sampled_from(STATS_FIELDS),
    st.sampled_from(STATS_TAILS),
)
def test_vllm_stats_line_is_feed_of_split_line_or_declines(prefix, header, engine, fields, tail):
    raw = prefix + header + engine + fields + tail
    fast, slow, untouched = _steady_parser(), _steady_parser(), _steady_parser()
    for p in (fast, slow, untouched):
        p.lines = 5
    took = fast.vllm_stats_line(5, raw)
    slow.feed(split_line(5, raw))
    if took:
        assert _vllm_state(fast) == _vllm_state(slow)
        assert slow.vllm.engines  # it was a sample
    else:  # declined: nothing taken, the caller feeds the split line
        assert _vllm_state(fast) == _vllm_state(untouched)


@pytest.mark.parametrize("prefix", STATS_PREFIXES[:2])
@pytest.mark.parametrize("tail", [b"", *RAY_DEDUP])
def test_vllm_stats_line_takes_the_standard_line(prefix, tail):
    raw = prefix + STATS_HEADERS[0] + STATS_ENGINES[0] + STATS_FIELDS[0] + tail
    p = _steady_parser()
    assert p.vllm_stats_line(9, raw)
    (e,) = p.vllm.freeze(None, 0).engines
    assert (e.engine, e.samples) == ("287311@10.128.26.195", 1) and p.vllm.buckets
    assert p.suppressed == (3 if tail else 0)
