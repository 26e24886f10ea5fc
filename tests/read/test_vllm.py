"""vLLM stats lines: the one-match fast path reads exactly what the part-by-part reader reads."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.read.vllm import is_stats_like, parse_parts, parse_stats

num = st.floats(0, 5000, allow_nan=False).map(lambda x: round(x, 1))
count = st.integers(0, 999)


@settings(max_examples=200, deadline=None)
@given(num, num, count, count, num, num, st.sampled_from(("", " ", "  ")))
def test_fast_path_equals_part_reader(p, g, r, w, kv, pre, tail):
    text = (
        f"Avg prompt throughput: {p} tokens/s, Avg generation throughput: {g} tokens/s, "
        f"Running: {r} reqs, Waiting: {w} reqs, GPU KV cache usage: {kv}%, "
        f"Prefix cache hit rate: {pre}%{tail}"
    )
    fast = parse_stats(text)
    assert fast == parse_parts(text)
    assert fast["gen_tps"] == g and fast["waiting"] == w and fast["prefix_pct"] == pre


def test_other_shapes_take_the_part_reader():
    newer = (
        "Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, "
        "Running: 3 reqs, Waiting: 4 reqs, Preemptions: 0, GPU KV cache usage: 5.0%, "
        "Prefix cache hit rate: 6.0%, MM cache hit rate: 0.0%"
    )
    assert parse_stats(newer) == parse_parts(newer)
    assert parse_stats(newer)["preemptions"] == 0 and parse_stats(newer)["prefix_pct"] == 6.0


def test_only_stats_messages_are_stats_like():
    assert is_stats_like("Engine 000: Avg prompt throughput: 1.0 tokens/s")
    assert is_stats_like("4 Engines Aggregated: Avg prompt throughput: 1.0 tokens/s")
    assert is_stats_like("Avg prompt throughput: 0.0 tokens/s, Running: 1 reqs")
    assert is_stats_like("vLLM Stats (step 3): engines=2")
    assert not is_stats_like("Request truncated: prompt too long (AsyncVLLMInferenceEngine)")
    assert not is_stats_like("Added request chatcmpl-1.")


def test_the_engine_actor_name_is_not_a_marker():
    """Every line an engine writes carries "AsyncVLLMInferenceEngine": only stats are markers."""
    from sitegen.read.markers import Markers as _Markers

    noise = b"(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1) WARNING 02-08 00:56:55 [serving.py:1] Request truncated\n"
    stats = (
        b"(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1) INFO 02-08 00:56:56 [loggers.py:127] "
        b"Engine 000: Avg prompt throughput: 1.0 tokens/s\n"
    )
    assert _Markers(noise * 50).find(0) == -1
    block = noise * 50 + stats
    assert _Markers(block).find(0) == block.index(b"Engine 000")
