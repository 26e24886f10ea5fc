"""Property tests: no input makes the parsers raise, and valid records survive damage around them."""

from __future__ import annotations

import contextlib
import io
import json
import pprint

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitegen.read.lines import iter_raw_lines
from sitegen.read.logparse import LogParser
from sitegen.read.trials import TrialFormatError, decode_result
from sitegen.redact import Redactor

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _lg(pid: int, msg: str) -> bytes:
    return (
        f"(skyrl_entrypoint pid={pid}) 2026-02-08 00:56:50.123 | INFO     | m:f:1 - {msg}".encode()
    )


def _block(pid: int, step: int) -> list[bytes]:
    d = {
        "reward/avg_raw_reward": f"{step / 100:.4f}",
        "timing/step": "10.0000",
        "trainer/global_step": step,
    }
    return [_lg(pid, f"Step {step}: ")] + [
        f"(skyrl_entrypoint pid={pid}) {x}".encode() for x in pprint.pformat(d).splitlines()
    ]


def parse(data: bytes):
    p = LogParser("x.out", Redactor(), year_hint=2026)
    for n, raw, trunc in iter_raw_lines(io.BytesIO(data), chunk_size=97):
        p.feed_raw(n, raw, trunc)
    return p.finish(len(data), 0.0)


@SETTINGS
@given(st.binary(max_size=4000))
def test_arbitrary_bytes_never_raise(data):
    parse(data)


JUNK = st.one_of(
    st.binary(max_size=300).map(lambda b: b.replace(b"\n", b" ").replace(b"\r", b" ")),
    st.sampled_from(
        [
            b"Step 9: ",
            b"{'a': ",
            b" 'b': 1}",
            b"\x00\xff\xfe",
            b"Training done!",
            b"(x pid=1) {",
            b"WANDB_MIRROR kind=train step=9 metrics={bad",
            b"slurmstepd: error",
        ]
    ),
)


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 5), JUNK), max_size=8))
def test_junk_lines_between_blocks_lose_no_block(insertions):
    lines = [x for s in range(1, 6) for x in _block(4242, s)]
    # junk goes only between blocks (inside a block it would rightly cut that block)
    starts = [i for i, ln in enumerate(lines) if b"Step " in ln] + [len(lines)]
    for slot, junk in sorted(insertions, key=lambda t: -t[0]):
        lines.insert(starts[slot], junk)
    log = parse(b"\n".join(lines) + b"\n")
    assert [b.step for b in log.blocks] == [1, 2, 3, 4, 5]


@SETTINGS
@given(st.integers(0, 10_000))
def test_truncation_at_any_point_keeps_every_complete_block(cut):
    data = b"\n".join(x for s in range(1, 6) for x in _block(4242, s)) + b"\n"
    cut = cut % (len(data) + 1)
    log = parse(data[:cut])
    complete = [
        s for s in range(1, 6) if data.find(f"'trainer/global_step': {s}}}\n".encode()) + 30 <= cut
    ]
    got = [b.step for b in log.blocks]
    assert got[: len(complete)] == complete and len(got) <= len(complete) + 1


@SETTINGS
@given(st.lists(st.booleans(), min_size=60, max_size=60))
def test_interleaved_processes(order):
    a = [x for s in (1, 2, 3) for x in _block(1, s)]
    b = [
        f"(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1) chatter {i} {{'x': 1}}".encode()
        for i in range(30)
    ]
    merged, ia, ib = [], 0, 0
    for pick_a in order:
        if pick_a and ia < len(a):
            merged.append(a[ia])
            ia += 1
        elif ib < len(b):
            merged.append(b[ib])
            ib += 1
    merged += a[ia:] + b[ib:]
    log = parse(b"\n".join(merged) + b"\n")
    assert [x.step for x in log.blocks] == [1, 2, 3]


@SETTINGS
@given(st.integers(1, 3_000_000))
def test_huge_lines(size):
    data = b"\n".join(_block(1, 1) + [b"x" * size] + _block(1, 2)) + b"\n"
    assert [b.step for b in parse(data).blocks] == [1, 2]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=30,
)


@SETTINGS
@given(JSON)
def test_trial_decoder_on_any_json(obj):
    with contextlib.suppress(TrialFormatError):
        decode_result(json.dumps(obj).encode(), "t", False)


@SETTINGS
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "trial_name",
                "agent_result",
                "verifier_result",
                "exception_info",
                "started_at",
                "finished_at",
                "step_results",
                "n_total_trials",
            ]
        ),
        JSON,
    )
)
def test_trial_decoder_on_result_shaped_json(obj):
    with contextlib.suppress(TrialFormatError):
        decode_result(json.dumps(obj).encode(), "t", False)


@SETTINGS
@given(st.binary(max_size=2000))
def test_trial_decoder_on_bytes(data):
    with contextlib.suppress(TrialFormatError):
        decode_result(data, "t", False)


# -- the block scanner reads exactly what the line-by-line path reads ------------------------------

CYAN, RESET = "\x1b[36m", "\x1b[0m"


def _coloured(pid: int, msg: str) -> bytes:
    return (
        f"{CYAN}(skyrl_entrypoint pid={pid}){RESET} \x1b[32m2026-02-08 00:56:50.123\x1b[0m | "
        f"\x1b[1mINFO    \x1b[0m | \x1b[36mm:f:1\x1b[0m - \x1b[1m{msg}\x1b[0m"
    ).encode()


PIECES = st.sampled_from(
    [
        "block",
        "coloured_block",
        "vllm",
        "vllm_dedup",
        "batch",
        "noise",
        "tqdm",
        "config",
        "resume",
        "saved",
        "slurm",
        "mirror",
        "junk",
        "nul",
    ]
)


def _piece(kind: str, i: int) -> list[bytes]:
    if kind == "block":
        return _block(4242, i)
    if kind == "coloured_block":
        d = {"reward/avg_raw_reward": "0.5000", "trainer/global_step": i}
        return [_coloured(4242, f"Step {i}: ")] + [
            f"{CYAN}(skyrl_entrypoint pid=4242){RESET} {x}".encode()
            for x in pprint.pformat(d).splitlines()
        ]
    if kind in ("vllm", "vllm_dedup"):
        tail = " [repeated 3x across cluster]" if kind == "vllm_dedup" else ""
        return [
            (
                f"(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1) INFO 02-08 00:56:{i % 60:02d} [loggers.py:127] "
                f"Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: {i}.0 tokens/s, "
                f"Running: 3 reqs, Waiting: {i % 5} reqs, GPU KV cache usage: 5.0%{tail}"
            ).encode()
        ]
    if kind == "batch":
        return [
            _lg(4242, "Starting batch generation for 8 trials (mode=training)"),
            _lg(4242, "Exception breakdown: {'AgentTimeoutError': 1}"),
            _lg(4242, "Batch generation complete: 7/8 successful, 1 failed instances, 0 masked"),
        ]
    if kind == "noise":
        return [b"(skyrl_entrypoint pid=4242) Example generated: Step 3: {'a': 1} Training done!"]
    if kind == "tqdm":
        return [b"Processing:  50%|#####     | 5/10 [00:01<00:01, 3.5it/s]"]
    if kind == "config":
        return [
            b"(skyrl_entrypoint pid=4242) trainer:",
            b"(skyrl_entrypoint pid=4242)   run_name: x",
        ]
    if kind == "resume":
        return [_lg(4242, f"Resumed training from global_step {i}")]
    if kind == "saved":
        return [
            _lg(4242, f"Successfully saved checkpoint for global_step_{i} to: /c/global_step_{i}")
        ]
    if kind == "slurm":
        return [
            b"slurmstepd: error: *** JOB 5 ON n CANCELLED AT 2026-02-08T10:00:00 DUE TO TIME LIMIT ***"
        ]
    if kind == "mirror":
        return [_lg(4242, f'WANDB_MIRROR kind=eval step={i} metrics={{"eval/x": 0.5}}')]
    if kind == "junk":
        return [b"\xff\xfe bad bytes"]
    return [b"nul\x00byte"]


@settings(max_examples=120, deadline=None)
@given(st.lists(PIECES, max_size=40), st.integers(64, 4096))
def test_block_scanner_equals_line_by_line(kinds, chunk):
    from sitegen.read.lines import iter_blocks

    lines = [x for i, k in enumerate(kinds, 1) for x in _piece(k, i)]
    data = b"\n".join(lines) + b"\n"
    by_line = parse(data)
    p = LogParser("x.out", Redactor(), year_hint=2026)
    for read in iter_blocks(io.BytesIO(data), chunk_size=chunk):
        p.feed_read(*read)
    by_block = p.finish(len(data), 0.0)
    assert by_block == by_line
