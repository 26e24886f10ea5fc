"""vLLM stats lines: the one-match fast path reads exactly what the part-by-part reader reads."""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.read.vllm import VllmAccumulator, is_stats_like, parse_stats
from tests.read.test_logparse import E, lg, parse

num = st.floats(0, 5000, allow_nan=False).map(lambda x: round(x, 1))
count = st.integers(0, 999)


@settings(max_examples=200, deadline=None)
@given(num, num, count, count, num, num, st.sampled_from(("", " ", "  ")))
def test_the_standard_shape_is_read_field_by_field(p, g, r, w, kv, pre, tail):
    text = (
        f"Avg prompt throughput: {p} tokens/s, Avg generation throughput: {g} tokens/s, "
        f"Running: {r} reqs, Waiting: {w} reqs, GPU KV cache usage: {kv}%, "
        f"Prefix cache hit rate: {pre}%{tail}"
    )
    got = parse_stats(text)
    want = {"prompt_tps": p, "gen_tps": g, "running": r, "waiting": w, "kv_pct": kv}
    assert got == {**want, "prefix_pct": pre}


def test_other_field_sets_are_read_too():
    newer = (
        "Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, "
        "Running: 3 reqs, Waiting: 4 reqs, Preemptions: 0, GPU KV cache usage: 5.0%, "
        "Prefix cache hit rate: 6.0%, MM cache hit rate: 0.0%"
    )
    assert parse_stats(newer) == {
        "prompt_tps": 1.0,
        "gen_tps": 2.0,
        "running": 3.0,
        "waiting": 4.0,
        "preemptions": 0.0,
        "kv_pct": 5.0,
        "prefix_pct": 6.0,
        "mm_pct": 0.0,
    }


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


# -- a sample added with each value read once equals the field-by-field reference ----------


def _add_reference(acc, pid, ip, index, vals, when) -> None:
    """VllmAccumulator.add as it was written first: max/min calls, vals read per field."""
    from pathlib import PurePosixPath

    from sitegen.read.vllm import BUCKET_S, _Bucket, _Engine

    if pid:
        engine = f"{pid}@{ip}#{index}" if ip else f"{pid}@driver#{index}"
    else:
        engine = f"{PurePosixPath(acc.source_name).name}:engine{index}#{index}"
    e = acc.engines.setdefault(engine, _Engine())
    e.samples += 1
    e.running_sum += vals["running"]
    e.running_max = max(e.running_max, vals["running"])
    e.waiting_sum += vals["waiting"]
    e.waiting_max = max(e.waiting_max, vals["waiting"])
    e.gen_sum += vals["gen_tps"]
    e.gen_max = max(e.gen_max, vals["gen_tps"])
    e.prompt_sum += vals.get("prompt_tps", 0.0)
    e.kv_sum += vals.get("kv_pct", 0.0)
    if "preemptions" in vals:
        e.preempt_sum += vals["preemptions"]
        e.preempt_max = (
            vals["preemptions"]
            if e.preempt_max is None
            else max(e.preempt_max, vals["preemptions"])
        )
    if "prefix_pct" in vals:
        e.prefix_sum += vals["prefix_pct"]
        e.prefix_n += 1
    if when is not None:
        one = _Bucket(
            1,
            vals["gen_tps"],
            vals["gen_tps"],
            vals["gen_tps"],
            vals["running"],
            vals["waiting"],
            vals.get("kv_pct", 0.0),
            vals.get("prefix_pct", 0.0),
            1 if "prefix_pct" in vals else 0,
        )
        acc.buckets.setdefault(int(when.timestamp()) // BUCKET_S, _Bucket()).merge(one)


_odd_floats = st.sampled_from(
    [0.0, -0.0, 1.0, -1.0, 2.5, float("nan"), float("inf"), -float("inf")]
)
_samples = st.fixed_dictionaries(
    {"running": _odd_floats, "waiting": _odd_floats, "gen_tps": _odd_floats},
    optional={
        "prompt_tps": _odd_floats,
        "kv_pct": _odd_floats,
        "preemptions": _odd_floats,
        "prefix_pct": _odd_floats,
    },
)


def _same_floats(a, b) -> bool:
    """Equal field by field, a NaN equal to a NaN and -0.0 told from 0.0."""
    return repr(a) == repr(b)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([("1", "10.0.0.1"), ("2", None), (None, None)]),
            st.sampled_from(["0", "1"]),
            _samples,
            st.sampled_from([None, datetime(2026, 3, 2, 0, 8, 51), datetime(2026, 3, 2, 0, 9, 5)]),
        ),
        max_size=8,
    )
)
def test_add_equals_the_field_by_field_reference(samples):
    fast, ref = VllmAccumulator("logs/x.out"), VllmAccumulator("logs/x.out")
    for (pid, ip), index, vals, when in samples:
        fast.add(pid, ip, index, vals, when)
        _add_reference(ref, pid, ip, index, vals, when)
    assert _same_floats(fast.engines, ref.engines)
    assert _same_floats(fast.buckets, ref.buckets)


# -- a vLLM time takes its year from the loguru time before it ------------------------------


@pytest.mark.parametrize(
    ("ref", "hint", "mdhms", "want"),
    [
        ((2026, 3, 2, 0, 8, 50), None, "03-02 00:08:51", (2026, 3, 2, 0, 8, 51)),
        ((2025, 12, 31, 23, 59), None, "01-01 00:00:01", (2026, 1, 1, 0, 0, 1)),  # new year
        ((2026, 1, 1, 0, 0, 5), None, "12-31 23:59:59", (2025, 12, 31, 23, 59, 59)),  # before it
        (None, 2024, "02-29 10:00:00", (2024, 2, 29, 10, 0, 0)),  # no loguru time: the hint
        (None, 2026, "02-29 10:00:00", None),  # not a leap year
        ((2024, 2, 1), 2026, "02-29 10:00:00", (2024, 2, 29, 10, 0, 0)),  # loguru before hint
        (None, None, "03-02 00:08:51", None),  # no year at all
        ((2026, 3, 2), 2026, "", None),
    ],
)
def test_vllm_time_takes_its_year_from_the_last_loguru_time(ref, hint, mdhms, want):
    from sitegen.read.logparse import LogParser
    from sitegen.redact import Redactor

    p = LogParser("x.out", Redactor(), year_hint=hint)
    p.last_time = None if ref is None else datetime(*ref)
    assert p._vllm_time(mdhms) == (None if want is None else datetime(*want))


# vLLM's other messages under an engine's "Engine NNN: ", as loggers.py writes them.
OTHER_ENGINE_MESSAGES = (
    "Engine 000: vllm cache_config_info with initialization after num_gpu_blocks is: 31406",
    "Engine 001: MFU: 12.3 TF/s/GPU 456.7 GB/s/GPU",
)


@pytest.mark.parametrize("message", OTHER_ENGINE_MESSAGES)
def test_other_engine_messages_are_no_stats_and_no_warning(message):
    stats = (
        "Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 200.0 "
        "tokens/s, Running: 3 reqs, Waiting: 1 reqs, GPU KV cache usage: 5.0%, "
        "Prefix cache hit rate: 50.0%"
    )
    lines = [lg("start")] + [
        f"{E}INFO 02-08 00:5{i}:50 [loggers.py:127] {m}" for i, m in enumerate([message, stats])
    ]
    log = parse(lines)
    assert not log.warnings
    (e,) = log.vllm.engines
    assert (e.samples, e.gen_tps_sum, e.waiting_sum) == (1, 200.0, 1.0)


@pytest.mark.parametrize(
    "message",
    (
        "Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throu",  # cut short
        "Engine 000: Running: 3 reqs, Waiting: 1 reqs, GPU KV cache usage: 5.0%",
        "Engine 000: Avg",
        "Engine 000: Av",
        "Engine 000: ",
    ),
)
def test_a_stats_line_missing_a_needed_field_is_still_warned_about(message):
    log = parse([lg("start"), f"{E}INFO 02-08 00:56:50 [loggers.py:127] {message}"])
    assert [(w.line, w.message) for w in log.warnings] == [
        (2, "vLLM stats line without throughput/running/waiting: ignored")
    ]
    assert not log.vllm.engines


def _v0(gen: float, prefix: str = "") -> str:
    return (
        f"{prefix}INFO 03-18 10:12:01 [metrics.py:486] Avg prompt throughput: 0.0 tokens/s, "
        f"Avg generation throughput: {gen} tokens/s, Running: 1 reqs, Swapped: 0 reqs, "
        "Pending: 0 reqs, GPU KV cache usage: 0.4%, CPU KV cache usage: 0.0%."
    )


def _v0_rate(gpu: str, prefix: str = "") -> str:
    return f"{prefix}INFO 03-18 10:12:01 [metrics.py:502] Prefix cache hit rate: GPU: {gpu}%, CPU: 0.00%"


def test_the_v0_hit_rate_line_gives_its_process_last_sample_its_prefix_rate():
    a, b = "(AsyncVLLMInferenceEngine pid=1) ", "(AsyncVLLMInferenceEngine pid=2) "
    lines = [
        lg("start", "2026-03-18 10:12:00.000"),
        _v0(10.0, a),
        _v0(20.0, b),
        _v0_rate("84.30", a),  # engine 1's, after engine 2's stats line
        _v0_rate("50.00", a),  # a second one for the same sample: not counted again
        _v0_rate("-100.00", b),  # no GPU prefix cache in use: no rate
        _v0(30.0, b),
        _v0_rate("40.00", b),
        _v0_rate("77.00", "(AsyncVLLMInferenceEngine pid=3) "),  # no sample of its engine
    ]
    log = parse(lines)
    assert not log.warnings
    eng = {e.engine: e for e in log.vllm.engines}
    assert (eng["1@driver"].prefix_samples, eng["1@driver"].prefix_pct_sum) == (1, 84.3)
    assert (eng["2@driver"].prefix_samples, eng["2@driver"].prefix_pct_sum) == (1, 40.0)
    assert set(eng) == {"1@driver", "2@driver"} and eng["2@driver"].samples == 2
    (bucket,) = log.vllm.timeline
    assert bucket.samples == 3 and bucket.prefix_pct_mean == pytest.approx((84.3 + 40.0) / 2)


def test_an_unreadable_v0_hit_rate_line_is_warned_about():
    log = parse([lg("start", "2026-03-18 10:12:00.000"), _v0(10.0), _v0_rate("x")])
    assert [(w.line, w.message) for w in log.warnings] == [
        (3, "unreadable vLLM prefix cache hit rate line: ignored")
    ]
    (e,) = log.vllm.engines
    assert e.samples == 1 and e.prefix_samples == 0


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # a fork's format_console_summary: pairs with no names are median/peak, units glued on
        (
            "engines=4, running=10.0/12, waiting=0.0/3, generation=812.3/1200.5 tok/s, "
            "kv_cache=41.0/80.0%, e2e=12.345s",
            {
                "engines": 4.0,
                "running_med": 10.0,
                "running_peak": 12.0,
                "waiting_med": 0.0,
                "waiting_peak": 3.0,
                "generation_med": 812.3,
                "generation_peak": 1200.5,
                "kv_cache_med": 41.0,
                "kv_cache_peak": 80.0,
                "e2e": 12.345,
            },
        ),
        # another's, the pairs named
        (
            "engines=2, running(peak/med)=10/5, kv_cache(peak/med)=80.0/41.0%, "
            "prefill(mean/p90)=0.12/0.50s, decode(mean/p90)=1.25/3.00s",
            {
                "engines": 2.0,
                "running_peak": 10.0,
                "running_med": 5.0,
                "kv_cache_peak": 80.0,
                "kv_cache_med": 41.0,
                "prefill_mean": 0.12,
                "prefill_p90": 0.5,
                "decode_mean": 1.25,
                "decode_p90": 3.0,
            },
        ),
        # milliseconds are made seconds; a value in a unit of another kind (a multiplier, a
        # rate) is left out, not read as a number or split into a pair
        (
            "engines=4, ttft=850ms/1.2s, generation=1.2k/1.5k, throughput=812.3tok/s",
            {"engines": 4.0, "ttft_med": 0.85, "ttft_peak": 1.2},
        ),
    ],
)
def test_step_lines_keep_every_value_of_a_pair_and_values_with_units(text, want):
    log = parse([lg("start"), lg(f"vLLM Stats (step 7): {text}")])
    assert log.vllm.step_stats == {7: want} and not log.warnings


def test_only_copies_of_samples_count_as_copies_ray_held_back():
    """Ray dedups any line; only copies of an engine's stats lines are copies of samples."""
    from tests.read.test_logparse import _read

    stats = (
        "Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 200.0 "
        "tokens/s, Running: 3 reqs, Waiting: 1 reqs, GPU KV cache usage: 5.0%, "
        "Prefix cache hit rate: 50.0%"
    )
    rep = " [repeated {}x across cluster]"
    lines = [
        lg("start"),
        f"{E}INFO 02-08 00:56:50 [loggers.py:137] {OTHER_ENGINE_MESSAGES[0]}{rep.format(3)}",
        f"{E}INFO 02-08 00:56:55 [loggers.py:271] {OTHER_ENGINE_MESSAGES[1]}{rep.format(2)}",
        f"{E}INFO 02-08 00:56:56 [loggers.py:271] Engine 000: Running: 3 reqs{rep.format(7)}",
        _v0(10.0, E) + rep.format(5),
        _v0_rate("84.30", E) + rep.format(4),
        f"{E}INFO 02-08 00:57:00 [loggers.py:127] {stats}{rep.format(6)}",  # (the fast path's)
        f"{E}INFO 02-08 00:57:05 [loggers.py:127] {stats}\x1b[32m{rep.format(1)}\x1b[0m",
    ]
    data = ("\n".join(lines) + "\n").encode()
    for log in (parse(lines), _read(data, 1 << 20).finish(len(data), 0.0)):
        assert log.vllm.suppressed_copies == 5 + 6 + 1
        assert sum(e.samples for e in log.vllm.engines) == 3
        assert [w.line for w in log.warnings] == [4]


def test_engine_logs_with_the_same_container_pid_stay_apart():
    """vLLM in a container logs "(APIServer pid=1) " in each engine log: one engine a file."""
    import io

    from sitegen.read.logparse import LogParser
    from sitegen.redact import Redactor

    p = LogParser("job.out", Redactor(), year_hint=2026)
    start = lg("start", "2026-05-12 08:00:00.000").encode() + b"\n"
    p.feed_stream(io.BytesIO(start))
    for n, gen in ((0, 100.0), (1, 300.0)):
        lines = [
            f"2026-05-12T08:01:{k:02d}.331095044Z (APIServer pid=1) INFO 05-12 08:01:{k:02d} "
            f"[loggers.py:271] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation "
            f"throughput: {gen} tokens/s, Running: 3 reqs, Waiting: 1 reqs, GPU KV cache usage: "
            "5.0%, Prefix cache hit rate: 50.0%"
            for k in range(0, 50, 10)
        ]
        p.read_engine_log(f"run/infra-{n}.log", io.BytesIO(("\n".join(lines) + "\n").encode()))
    log = p.finish(len(start), 0.0)
    eng = {e.engine: e for e in log.vllm.engines}
    assert set(eng) == {"infra-0.log:1", "infra-1.log:1"}
    assert [(e.samples, e.gen_tps_sum) for e in eng.values()] == [(5, 500.0), (5, 1500.0)]
    (bucket,) = log.vllm.timeline
    assert bucket.samples == 10 and bucket.gen_tps_mean == 200.0


# vLLM up to 0.7.2 wrote its header without brackets: "%(levelname)s %(asctime)s
# %(filename)s:%(lineno)d] %(message)s" (vllm/logger.py), date "%m-%d %H:%M:%S".
OLD_V0 = (
    "INFO 02-12 10:51:27 metrics.py:455] Avg prompt throughput: 0.0 tokens/s, Avg generation "
    "throughput: {gen} tokens/s, Running: 3 reqs, Swapped: 0 reqs, Pending: 2 reqs, GPU KV cache "
    "usage: 4.0%, CPU KV cache usage: 0.0%."
)
OLD_RATE = "INFO 02-12 10:51:27 metrics.py:471] Prefix cache hit rate: GPU: 84.30%, CPU: 0.00%"
# That era's V1 engine (vllm/v1/metrics/loggers.py): no "Engine NNN:", no full stop; its
# first form a trailing space after Waiting.
OLD_V1 = (
    "INFO 02-12 10:51:32 loggers.py:78] Avg prompt throughput: 1.0 tokens/s, Avg generation "
    "throughput: {gen} tokens/s, Running: 5 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.0%, "
    "Prefix cache hit rate: 45.0%"
)
OLD_V1_FIRST = (
    "INFO 02-12 10:51:37 loggers.py:72] Avg prompt throughput: 1.0 tokens/s, Avg generation "
    "throughput: {gen} tokens/s, Running: 5 reqs, Waiting: 0 reqs "
)


@pytest.mark.parametrize(
    ("prefix", "engine"),
    [
        ("", "job.out:engine"),
        ("(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1) ", "7@10.0.0.1"),
        ("\x1b[2m\x1b[36m(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1)\x1b[0m ", "7@10.0.0.1"),
        ("(RayWorkerWrapper pid=5) ", "5@driver"),
    ],
)
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_the_header_without_brackets_of_vllm_up_to_0_7_2_is_read(prefix, engine, eol):
    from tests.read.test_real_shapes import _by_blocks

    lines = [
        lg("start", "2026-02-12 10:51:00.000"),
        prefix + OLD_V0.format(gen=10.0),
        prefix + OLD_RATE,
        prefix + "\x1b[32mINFO\x1b[0m " + OLD_V0.format(gen=20.0)[5:],
        prefix + OLD_V1.format(gen=30.0),
        prefix + OLD_V1_FIRST.format(gen=40.0),
        prefix + "WARNING 02-12 10:51:40 scheduler.py:1560] Sequence group 9 is preempted",
    ]
    data = eol.join(lines).encode() + eol.encode()
    for log in (parse(data), _by_blocks(data)):
        assert not log.warnings
        (e,) = log.vllm.engines
        assert (e.engine, e.samples, e.gen_tps_sum) == (engine, 4, 100.0)
        assert (e.waiting_sum, e.running_sum, e.kv_pct_sum) == (4.0, 16.0, 20.0)
        assert (e.prefix_samples, e.prefix_pct_sum) == (2, pytest.approx(84.3 + 45.0))
        assert log.vllm.timeline[0].samples == 4


def test_an_old_vllm_header_glued_after_a_bar_is_read():
    bar = "Processed prompts:  50%|#####     | 4/8 [00:02<00:02, 2.0it/s]"
    log = parse([lg("start", "2026-02-12 10:51:00.000"), bar + OLD_V0.format(gen=10.0)])
    (e,) = log.vllm.engines
    assert (e.samples, e.gen_tps_sum) == (1, 10.0)


@pytest.mark.parametrize(
    "text",
    [
        "INFO 02-12 10:51:27 metrics.py] no line number",
        "INFO 02-12 10:51:27 metrics.py:455 no bracket",
        "INFO 02-12 10:51:27 a b.py:455] a space in the name",
    ],
)
def test_text_almost_an_old_vllm_header_is_no_record(text):
    from sitegen.read.lines import split_line

    assert split_line(1, text.encode()).emitter == ""


# vLLM V0's scheduler (vllm/core/scheduler.py, _preempt) warns at the 1st, 51st, 101st, …
# preemption of its engine, with the count so far; the docs' older example names it
# total_cumulative_preemption_cnt.
def _preempted(count: int, prefix: str = "", name: str = "total_num_cumulative_preemption") -> str:
    return (
        f"{prefix}WARNING 03-18 10:12:0{count % 10} [scheduler.py:1560] Sequence group 12 is "
        "preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. "
        "This can affect the end-to-end performance. Increase gpu_memory_utilization or "
        f"tensor_parallel_size to provide more KV cache memory. {name}={count}"
    )


def test_v0_preemption_warnings_give_its_engine_the_cumulative_count():
    from tests.read.test_real_shapes import _by_blocks

    a, b = "(AsyncVLLMInferenceEngine pid=1) ", "\x1b[2m\x1b[36m(RayWorkerWrapper pid=2)\x1b[0m "
    lines = [
        lg("start", "2026-03-18 10:12:00.000"),
        _v0(10.0, a),
        _preempted(1, a),
        _v0(10.0, b),
        _preempted(51, a),
        _preempted(1, b, name="total_cumulative_preemption_cnt"),
        _preempted(101, a).replace("[scheduler.py:1560]", "scheduler.py:1560]"),  # ≤ 0.7.2
        _preempted(51, b) + "\x1b[32m [repeated 2x across cluster]\x1b[0m",
        _v0(10.0, a),
    ]
    for log in (parse(lines), _by_blocks(lines)):
        assert not log.warnings
        eng = {e.engine: e for e in log.vllm.engines}
        # the last count said, not a sum; no interval's count is known: no maximum
        assert (eng["1@driver"].preemptions_total, eng["1@driver"].preemptions_max) == (101, None)
        assert (eng["2@driver"].preemptions_total, eng["2@driver"].preemptions_max) == (51, None)
        assert eng["1@driver"].samples == 2 and log.vllm.suppressed_copies == 0


def test_a_preemption_warning_belongs_to_its_process_only_engine():
    """A process's warning goes to its unindexed engine, else to the one engine it logs;
    a process logging several indexed engines, or none, cannot say whose count it is."""
    one, two, none = (f"(AsyncVLLMInferenceEngine pid={k}) " for k in (1, 2, 3))
    lines = [
        lg("start"),
        f"{one}INFO 02-08 00:56:55 [loggers.py:127] {_engine_stats('000', 4)}",
        _preempted(51, one),
        f"{two}INFO 02-08 00:56:55 [loggers.py:127] {_engine_stats('000', 1)}",
        f"{two}INFO 02-08 00:56:55 [loggers.py:127] {_engine_stats('001', None)}",
        _preempted(1, two),
        _preempted(101, none),  # no statistics of its process
        _preempted(51),  # the driver's own output: this log's one unindexed engine
        _v0(10.0),
    ]
    log = parse(lines)
    assert not log.warnings
    got = {e.engine: (e.preemptions_total, e.preemptions_max) for e in log.vllm.engines}
    assert got == {
        "1@driver": (51, 4),  # the greater of its lines' sum (4) and the warned count
        "2@driver:engine000": (1, 1),
        "2@driver:engine001": (None, None),
        "job.out:engine": (51, None),
    }


def _engine_stats(index: str, preempted: int | None) -> str:
    part = f"Preemptions: {preempted}, " if preempted is not None else ""
    return (
        f"Engine {index}: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: "
        f"2.0 tokens/s, Running: 3 reqs, Waiting: 0 reqs, {part}GPU KV cache usage: 5.0%, "
        "Prefix cache hit rate: 6.0%"
    )


@pytest.mark.parametrize(
    "message",
    [
        "Sequence group 12 is preempted by PreemptionMode.RECOMPUTE mode because there is not en",
        "Sequence group 12 is preempted by PreemptionMode.SWAP mode because there is not enough KV "
        "cache space. total_num_cumulative_preemption=x",
    ],
)
def test_a_preemption_warning_without_its_count_is_warned_about(message):
    lines = [lg("start"), _v0(10.0, E), f"{E}WARNING 03-18 10:12:01 [scheduler.py:1560] {message}"]
    log = parse(lines)
    assert [(w.line, w.message) for w in log.warnings] == [
        (3, "vLLM preemption warning without its count: ignored")
    ]
    (e,) = log.vllm.engines
    assert e.preemptions_total is None


def test_other_sequence_group_messages_are_passed_over():
    message = "Sequence group 7 is ignored: input prompt (9000 tokens) is too long"
    log = parse(
        [lg("start"), _v0(10.0, E), f"{E}WARNING 03-18 10:12:01 [scheduler.py:1] {message}"]
    )
    assert not log.warnings and log.vllm.engines[0].preemptions_total is None


def test_engine_logs_read_preemption_warnings_too():
    import io

    from sitegen.read.logparse import LogParser
    from sitegen.redact import Redactor

    p = LogParser("job.out", Redactor(), year_hint=2026)
    start = lg("start", "2026-03-18 10:12:00.000").encode() + b"\n"
    p.feed_stream(io.BytesIO(start))
    engine = [_v0(10.0, "(APIServer pid=1) "), _preempted(51, "(APIServer pid=1) ")]
    p.read_engine_log("run/infra-0.log", io.BytesIO(("\n".join(engine) + "\n").encode()))
    (e,) = p.finish(len(start), 0.0).vllm.engines
    assert (e.engine, e.preemptions_total, e.preemptions_max) == ("infra-0.log:1", 51, None)
