"""Property tests: whatever the input, the parsers count it, keep every record it holds whole
and name a line of it for each problem; a result.json is a trial holding what it states."""

from __future__ import annotations

import io
import json
import math
import pprint

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitegen.read.lines import iter_raw_lines
from sitegen.read.logparse import LogParser
from sitegen.read.trials import TrialFormatError, decode_result
from sitegen.redact import Redactor

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


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


def _batch(step: int) -> list[bytes]:
    """The batch lines of step ``step``: ``step + 2`` trials, ``step`` of them failed."""
    n = step + 2
    return [
        _lg(4242, f"Starting batch generation for {n} trials (mode=training)"),
        _lg(4242, f"Exception breakdown: {{'AgentTimeoutError': {step}}}"),
        _lg(
            4242, f"Batch generation complete: 2/{n} successful, {step} failed instances, 0 masked"
        ),
    ]


def parse(data: bytes):
    p = LogParser("x.out", Redactor(), year_hint=2026)
    for n, raw, trunc in iter_raw_lines(io.BytesIO(data), chunk_size=97):
        p.feed_raw(n, raw, trunc)
    return p.finish(len(data), 0.0)


def _lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def _holds_together(log, data: bytes) -> None:
    """What every parse of ``data`` must hold: its size and lines counted, every warning and
    block at a line of the file, one block a step in order, batch totals the sum of the steps'."""
    assert log.size_bytes == len(data)
    assert log.lines == _lines(data)
    for w in log.warnings:
        assert w.path == "x.out"
        assert w.line is None or 1 <= w.line <= log.lines, w
    steps = [b.step for b in log.blocks]
    assert steps == sorted(set(steps))
    assert all(1 <= b.line <= log.lines for b in (*log.blocks, *log.eval_blocks))
    per_step = log.batches_per_step.values()
    for field in ("batches", "instances", "successful", "failed", "masked"):
        assert sum(getattr(b, field) for b in per_step) <= getattr(log.batches, field)


@SETTINGS
@given(st.binary(max_size=4000))
def test_arbitrary_bytes_are_counted_and_what_follows_them_is_read(data):
    """Whatever bytes come first, the parse counts them and a block after them is read whole."""
    _holds_together(parse(data), data)
    after = b"\n".join(_block(4242, 424242)) + b"\n"
    both = data + b"\n" + after
    log = parse(both)
    _holds_together(log, both)
    last = log.blocks[-1]
    assert last.step == 424242
    assert last.line == _lines(data + b"\n") + 1
    assert last.metrics == {
        "reward/avg_raw_reward": 4242.42,
        "timing/step": 10.0,
        "trainer/global_step": 424242,
    }


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
    lines = [x for s in range(1, 6) for x in _batch(s) + _block(4242, s)]
    # junk goes only between steps (inside a block it would rightly cut that block)
    starts = [i for i, ln in enumerate(lines) if b"Starting batch" in ln] + [len(lines)]
    for slot, junk in sorted(insertions, key=lambda t: -t[0]):
        lines.insert(starts[slot], junk)
    data = b"\n".join(lines) + b"\n"
    log = parse(data)
    _holds_together(log, data)
    assert [b.step for b in log.blocks] == [1, 2, 3, 4, 5]
    assert [b.metrics["reward/avg_raw_reward"] for b in log.blocks] == [
        0.01,
        0.02,
        0.03,
        0.04,
        0.05,
    ]
    # each step's batch (s + 2 trials, s failed) counted at its step, the totals their sum
    for s in range(1, 6):
        b = log.batches_per_step[s]
        assert (b.batches, b.instances, b.successful, b.failed) == (1, s + 2, 2, s), s
        assert b.exceptions == {"AgentTimeoutError": s}
    t = log.batches
    assert (t.batches, t.instances, t.successful, t.failed, t.masked) == (5, 25, 10, 15, 0)
    assert t.exceptions == {"AgentTimeoutError": 15}


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


def _stated_reward(obj: dict) -> float | None:
    """The reward a result.json states (docs/formats.md §6): ``verifier_result.rewards.reward``, or
    an older file's ``verifier_result.reward``; a number only, voided by ``reward_valid: false``."""
    v = obj.get("verifier_result")
    if not isinstance(v, dict) or obj.get("reward_valid") is False:
        return None
    r = v["rewards"].get("reward") if isinstance(v.get("rewards"), dict) else v.get("reward")
    if isinstance(r, bool) or not isinstance(r, int | float):
        return None
    try:
        return float(r)
    except OverflowError:  # an integer no float holds reads as infinite
        return math.inf if r > 0 else -math.inf


def _decoded_as_stated(obj: dict, r) -> None:
    """The trial read from a result.json object holds what the object states."""
    if "trial_name" not in obj and "n_total_trials" in obj:
        assert r is None  # a job's summary, not a trial
        return
    # (a name that is no string is shown as JSON reads it: orjson reads an integer past
    # 64 bits as a float)
    name, task = obj.get("trial_name"), obj.get("task_name")
    assert r.name == (name or "t") if isinstance(name, str) else isinstance(r.name, str)
    assert r.task == (task or "") if isinstance(task, str) else isinstance(r.task, str)
    assert r.eval is False
    want = _stated_reward(obj)
    if want is None:
        assert r.reward is None
    else:
        assert r.reward == want or (math.isnan(want) and math.isnan(r.reward))
    for count in (r.turns, r.input_tokens, r.output_tokens, r.cache_tokens):
        assert count is None or type(count) is int
    for stage in (r.env_setup_s, r.agent_setup_s, r.agent_exec_s, r.verifier_s):
        assert stage is None or stage >= 0
    exc = obj.get("exception_info")
    if isinstance(exc, dict) and isinstance(exc.get("exception_type"), str):
        assert r.exception == (exc["exception_type"] or None)


@SETTINGS
@given(JSON)
def test_trial_decoder_on_any_json(obj):
    """An object is a trial (or a job's summary), never a format error; anything else is one."""
    data = json.dumps(obj).encode()
    if not isinstance(obj, dict):
        with pytest.raises(TrialFormatError, match="not an object"):
            decode_result(data, "t", False)
        return
    _decoded_as_stated(obj, decode_result(data, "t", False))


# Anything else a field may hold instead (small: the shapes above are what is read).
OTHER = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda children: (
        st.lists(children, max_size=2) | st.dictionaries(st.text(max_size=4), children, max_size=2)
    ),
    max_leaves=4,
)

# What a result.json's fields hold, odd values included: numbers past 64 bits and past a
# float's range, NaN and infinities, booleans and strings where numbers belong.
ODD = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([10**400, -(10**400), 2**63, -(2**63) - 1])
    | st.floats()
    | st.text(max_size=6)
)
STAGE = st.fixed_dictionaries(
    {
        "started_at": st.sampled_from(["2026-02-08T00:00:00Z", "2026-02-08T00:00:00", "x"]),
        "finished_at": st.sampled_from(["2026-02-08T00:01:00Z", "2026-02-08T00:00:10", None]),
    }
)
AGENT = st.fixed_dictionaries(
    {},
    optional={
        "n_input_tokens": ODD,
        "n_output_tokens": ODD,
        "n_cache_tokens": ODD,
        "metadata": st.fixed_dictionaries({}, optional={"n_episodes": ODD}) | OTHER,
    },
)
RESULT = st.fixed_dictionaries(
    {},
    optional={
        "trial_name": st.text(max_size=8) | OTHER,
        "task_name": st.text(max_size=8) | OTHER,
        "n_total_trials": ODD,
        "reward_valid": st.booleans() | OTHER,
        "verifier_result": st.fixed_dictionaries(
            {"rewards": st.fixed_dictionaries({"reward": ODD})}
        )
        | st.fixed_dictionaries({"reward": ODD})
        | OTHER,
        "agent_result": AGENT | OTHER,
        "exception_info": st.fixed_dictionaries({"exception_type": ODD}) | OTHER,
        "step_results": st.lists(
            st.fixed_dictionaries({"agent_result": AGENT, "exception_info": OTHER}), max_size=3
        )
        | OTHER,
        "environment_setup": STAGE | OTHER,
        "agent_execution": STAGE | OTHER,
        "started_at": STAGE.map(lambda d: d["started_at"]),
        "finished_at": STAGE.map(lambda d: d["finished_at"]),
    },
)


@SETTINGS
@given(RESULT)
def test_trial_decoder_on_result_shaped_json(obj):
    """Every shape of every field read, odd values in each: a trial holding what it states."""
    _decoded_as_stated(obj, decode_result(json.dumps(obj).encode(), "t", False))


@SETTINGS
@given(
    st.binary(max_size=2000)
    | st.tuples(RESULT, st.integers(0, 4000)).map(
        lambda t: json.dumps(t[0], indent=1).encode()[: t[1]]
    )
)
def test_trial_decoder_on_bytes(data):
    """Bytes are a trial holding what they state, or a format error at a line they have."""
    try:
        r = decode_result(data, "t", False)
    except TrialFormatError as exc:
        assert exc.line is None or 1 <= exc.line <= data.count(b"\n") + 1, exc
        return
    obj = json.loads(data.decode("utf-8", errors="replace"))
    assert isinstance(obj, dict)
    _decoded_as_stated(obj, r)


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
