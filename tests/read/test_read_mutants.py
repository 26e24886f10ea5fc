"""Cases the mutation runs of the read stage's parsers showed missing (docs/testing.md
"## Mutation score"): each fails against a mutant of its module that the other tests let
live."""

import io
import json
from datetime import date, datetime

import pytest
import simdjson

from sitegen.read import configdump, harbor, metricblocks
from sitegen.read.lines import iter_raw_lines, split_line
from sitegen.read.logparse import LogParser
from sitegen.read.metricblocks import printed_dict
from sitegen.read.vllm import VllmAccumulator
from sitegen.redact import Redactor
from tests.read.test_logparse import METRICS, E, P, block, lg, parse
from tests.read.test_vllm import _v0_rate


def _warned(log) -> list[tuple[int | None, str]]:
    return [(w.line, w.message) for w in log.warnings]


# -- sitegen/read/metricblocks.py ------------------------------------------------------------


def test_a_signed_value_keeps_its_sign_and_a_signed_non_number_only_its_key_out():
    text = "{'a': +0.5, 'b': -tensor(2), 'c': -'x', 'd': -None, 'e': 1}"
    assert printed_dict(text) == ({"a": 0.5, "b": -2, "e": 1}, ["c", "d"])


def test_a_call_on_another_module_than_numpy_or_torch_is_no_scalar():
    text = "{'a': mylib.Size(3), 'b': mylib.sub.Thing(4), 'c': mylib.True_, 'd': 0.5}"
    assert printed_dict(text) == ({"d": 0.5}, ["a", "b", "c"])


def test_values_left_out_are_named_and_their_kind_is_counted():
    lines = [lg("Step 1: "), P + "{'a': x.Y(1), 'b': x.Z(2), 'c': 1}"]
    for step in range(2, 13):
        lines += [lg(f"Step {step}: "), P + "{'a': x.Y(1), 'c': 1}"]
    log = parse(lines)
    assert [b.metrics for b in log.blocks] == [{"c": 1}] * 12
    assert _warned(log) == [
        (1, "metric 'a' (and 1 more) is not a value we can read: left out"),
        *((n, "metric 'a' is not a value we can read: left out") for n in range(3, 20, 2)),
        (None, "2 more warnings like the above (value)"),
    ]


def test_a_dict_cut_off_says_where_and_its_kind_is_counted():
    lines = []
    for step in range(1, 13):
        lines += block(step, METRICS)[:3]  # the next header cuts each
    log = parse(lines)
    assert log.blocks == ()
    cuts = [
        (3 * s - 2, f"metrics dict of step {s} is cut off at line {3 * s + 1}: block skipped")
        for s in range(1, 11)
    ]
    assert _warned(log) == [*cuts, (None, "2 more warnings like the above (cut)")]
    log = parse(block(1, METRICS)[:3])
    assert _warned(log) == [(1, "metrics dict of step 1 is cut off at end of file: block skipped")]


def test_a_dict_cut_by_a_record_of_its_own_process_stays_cut():
    lines = block(1, METRICS)
    log = parse([*lines[:3], lg("Checking the weights"), *lines[3:]])
    assert log.blocks == ()
    assert _warned(log) == [(1, "metrics dict of step 1 is cut off at line 4: block skipped")]


def test_dicts_that_never_close_are_warned_about_by_kind(monkeypatch):
    monkeypatch.setattr(metricblocks, "MAX_BLOCK_LINES", 1)
    lines = []
    for step in range(1, 12):
        lines += block(step, METRICS)[:3]
    log = parse(lines)
    assert log.blocks == ()
    closes = [
        (3 * s - 2, f"metrics dict of step {s} never closes: block skipped") for s in range(1, 11)
    ]
    assert _warned(log) == [*closes, (None, "1 more warnings like the above (block)")]


def test_an_eval_only_block_with_its_timer_is_an_eval_and_one_in_a_step_is_both():
    # eval_before_train at the resumed step, then an in-loop eval (docs/formats.md §3)
    lines = block(5, {"eval/all/pass_at_1": "0.5000", "timing/eval": "3.0000"})
    log = parse(lines + block(6, {**METRICS, "eval/all/pass_at_1": "0.2500"}))
    assert [(b.step, b.line) for b in log.blocks] == [(6, 3)]
    assert [(b.step, b.line, b.metrics) for b in log.eval_blocks] == [
        (5, 1, {"eval/all/pass_at_1": 0.5, "timing/eval": 3.0}),
        (6, 3, {"eval/all/pass_at_1": 0.25}),
    ]


def _mirror(kind: str, step: int, metrics: str) -> str:
    return f"{P}WANDB_MIRROR kind={kind} step={step} metrics={metrics}"


def test_mirror_lines_read_say_their_lines_and_the_unread_are_warned_about_by_kind():
    lines = [
        _mirror("train", 1, '{"timing/step": -1.0, "loss": 0.5}'),
        _mirror("eval", 1, '{"eval/x/pass_at_1": 0.25, "timing/eval": -2.0}'),
        P + "WANDB_MIRROR kind=train step=x metrics={}",
        _mirror("train", 2, '{"loss": }'),
        _mirror("train", 3, '{"a": 1} {"b": 2}'),
        _mirror("test", 4, "{}"),
        *(P + "WANDB_MIRROR step=5" for _ in range(8)),
    ]
    log = parse(lines)
    assert [(b.step, b.line, b.metrics) for b in log.blocks] == [
        (1, 1, {"timing/step": -1.0, "loss": 0.5})
    ]
    assert [(b.step, b.line) for b in log.eval_blocks] == [(1, 2)]
    assert _warned(log) == [
        (1, "timer timing/step is -1.0: left out of timing sums and means"),
        (2, "timer timing/eval is -2.0: left out of timing sums and means"),
        (3, "unreadable WANDB_MIRROR line: ignored"),
        (4, "unreadable WANDB_MIRROR metrics of step 2: skipped"),
        (5, "unreadable WANDB_MIRROR metrics of step 3: skipped"),
        (6, "WANDB_MIRROR kind=test not known: ignored"),
        *((n, "unreadable WANDB_MIRROR line: ignored") for n in range(7, 13)),
        (None, "2 more warnings like the above (mirror)"),
    ]


def test_a_record_right_after_a_header_it_cannot_adopt_is_read_as_itself():
    # a header with no Ray prefix (glued after the driver's bar) waits for its "{" line;
    # another line of a process with one is read as what it is
    header = "2026-02-08 00:56:50.123 | INFO     | skyrl_train.trainer:train:1 - Step 1: "
    log = parse([header, _mirror("train", 1, '{"loss": 0.5}')])
    assert log.metric_form == "mirror"
    assert [(b.step, b.metrics) for b in log.blocks] == [(1, {"loss": 0.5})]


def _by_block(lines: list[str]):
    """The parse of ``lines`` fed as one block (the path that takes a dict's run of lines
    at once), which must equal the line-by-line parse."""
    data = ("\n".join(lines) + "\n").encode()
    p = LogParser("job.out", Redactor(), year_hint=2026)
    p.feed_block(1, data)
    got = p.finish(len(data), 0.0)
    assert got == parse(data)
    return got


def test_a_dict_line_closing_before_trailing_blanks_closes_the_dict_in_a_run_too():
    lines = [lg("Step 1: "), P + "{'a': 1,", P + " 'b': 2}   ", E + "chatter"]
    log = _by_block([*lines, lg("Step 2: "), P + "{'c': 3}"])
    assert [(b.step, b.metrics) for b in log.blocks] == [(1, {"a": 1, "b": 2}), (2, {"c": 3})]
    assert log.warnings == ()


def test_a_run_of_a_dicts_lines_stops_at_a_line_with_a_nul():
    lines = [lg("Step 1: "), P + "{'a': 1,", P + " 'b': 2,\x00", P + " 'c': 3}"]
    log = _by_block(lines)
    assert [(b.step, b.metrics) for b in log.blocks] == [(1, {"a": 1, "b": 2, "c": 3})]
    assert _warned(log) == [(3, "NUL bytes in line (binary data?): removed")]


# -- sitegen/read/vllm.py ----------------------------------------------------------------------


def _engine(pid: int, minute: int, r: int, w: int, g: int, pre: int | None = None) -> bytes:
    """One V1 stats line of engine 000 of process ``pid`` at 00:``minute``."""
    preempt = f"Preemptions: {pre}, " if pre is not None else ""
    return (
        f"(AsyncVLLMInferenceEngine pid={pid}, ip=10.0.0.1) INFO 02-08 00:{minute:02}:00 "
        f"[loggers.py:1] Engine 000: Avg prompt throughput: {r + w}.0 tokens/s, "
        f"Avg generation throughput: {g}.0 tokens/s, Running: {r} reqs, Waiting: {w} reqs, "
        f"{preempt}GPU KV cache usage: {10 * r}.0%, Prefix cache hit rate: {5 * g}.0%"
    ).encode()


def _v0_warning(pid: int, count: int) -> bytes:
    return (
        f"(AsyncVLLMInferenceEngine pid={pid}, ip=10.0.0.1) WARNING 02-08 00:01:00 "
        "[scheduler.py:1] Sequence group 12 is preempted by PreemptionMode.RECOMPUTE mode "
        f"because there is not enough KV cache space. total_num_cumulative_preemption={count}"
    ).encode()


def _v0_sample(pid: int) -> bytes:
    return (
        f"(AsyncVLLMInferenceEngine pid={pid}, ip=10.0.0.1) INFO 02-08 00:01:00 "
        "[metrics.py:1] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 2.0 "
        "tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 1.0%, "
        "CPU KV cache usage: 0.0%."
    ).encode()


def _fed(acc: VllmAccumulator, lines: list[bytes]) -> VllmAccumulator:
    for n, raw in enumerate(lines, 1):
        ln = split_line(n, raw)
        acc.feed(ln, datetime(2026, 2, 8, 0, int(ln.vllm_time[9:11])) if ln.vllm_time else None)
    return acc


def test_the_vllm_lines_of_two_files_merged_add_up_as_read_from_one():
    # a log's .out and .err (docs/formats.md §1): an engine whose lines reach both is one
    first = [
        _engine(7, 0, r=5, w=1, g=10, pre=1),
        _engine(7, 1, r=2, w=0, g=4, pre=3),
        _engine(8, 0, r=1, w=1, g=6),
        _engine(6, 2, r=1, w=0, g=2, pre=4),
        _v0_sample(9),
        _v0_warning(9, 51),
        b"vLLM Stats (step 3): engines=2, running(peak/med)=10/5",
        b"(AsyncVLLMInferenceEngine pid=7) 4 Engines Aggregated: Avg generation throughput: 1.0",
    ]
    second = [
        _engine(7, 0, r=3, w=4, g=20),
        _engine(8, 2, r=2, w=3, g=8, pre=0),
        _engine(6, 2, r=2, w=0, g=3, pre=1),
        _engine(5, 3, r=1, w=0, g=1, pre=2),
        _v0_warning(9, 1),
        b"vLLM Stats (step 4): engines=2, running(peak/med)=8/4",
        b"vLLM Stats (step 5): engines=2, running(peak/med)=6/3",
        b"(AsyncVLLMInferenceEngine pid=7) 2 Engines Aggregated: Avg generation throughput: 1.0",
    ]
    merged = _fed(VllmAccumulator("job.out"), first)
    merged.merge(_fed(VllmAccumulator("job.err"), second))
    got = merged.freeze(None, 0)
    assert got == _fed(VllmAccumulator("job.out"), first + second).freeze(None, 0)
    assert (got.aggregated_lines, got.step_lines, sorted(got.step_stats)) == (2, 3, [3, 4, 5])
    eng = {e.engine: e for e in got.engines}
    seven = eng["7@10.0.0.1"]
    assert (seven.samples, seven.running_sum, seven.running_max) == (3, 10.0, 5.0)
    assert (seven.waiting_sum, seven.waiting_max, seven.gen_tps_sum, seven.gen_tps_max) == (
        5.0,
        4.0,
        34.0,
        20.0,
    )
    assert (seven.prompt_tps_sum, seven.kv_pct_sum) == (15.0, 100.0)
    assert (seven.prefix_pct_sum, seven.prefix_samples) == (170.0, 3)
    assert (seven.preemptions_max, seven.preemptions_total) == (3.0, 4.0)
    preempted = {k: (e.preemptions_max, e.preemptions_total) for k, e in eng.items()}
    assert preempted == {
        "5@10.0.0.1": (2.0, 2.0),
        "6@10.0.0.1": (4.0, 5.0),
        "7@10.0.0.1": (3.0, 4.0),
        "8@10.0.0.1": (0.0, 0.0),
        "9@10.0.0.1": (None, 51.0),
    }
    assert [(b.t_s, b.samples, b.gen_tps_min, b.gen_tps_max) for b in got.timeline] == [
        (0.0, 3, 6.0, 20.0),
        (60.0, 2, 2.0, 4.0),
        (120.0, 3, 2.0, 8.0),
        (180.0, 1, 1.0, 1.0),
    ]


def test_each_v0_hit_rate_counts_a_rate_of_zero_too():
    pfx = "(AsyncVLLMInferenceEngine pid=9, ip=10.0.0.1) "
    lines = [_v0_sample(9), _v0_rate("30.00", pfx).encode()]
    lines += [_v0_sample(9), _v0_rate("0.00", pfx).encode()]
    got = _fed(VllmAccumulator("job.out"), lines).freeze(None, 0)
    (engine,) = got.engines
    assert (engine.samples, engine.prefix_samples, engine.prefix_pct_sum) == (2, 2, 30.0)
    (bucket,) = got.timeline
    assert bucket.prefix_pct_mean == 15.0


def test_copies_of_lines_that_are_no_engine_sample_are_not_counted():
    rep = " [repeated {}x across cluster]"
    stats = (
        "Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, "
        "Running: 3 reqs, Waiting: 0 reqs"
    )
    messages = [
        f"4 Engines Aggregated: {stats}{rep.format(3)}",  # cluster totals
        f"Engine 000:{rep.format(2)}",  # a stats line cut right after its engine
        f"Engine 000: MFU: 12.3 TF/s/GPU 456.7 GB/s/GPU{rep.format(4)}",
        f"vLLM Stats (step 3): engines=2, running(peak/med)=10/5{rep.format(5)}",
    ]
    lines = [f"{E}INFO 02-08 00:56:5{i} [loggers.py:1] {m}" for i, m in enumerate(messages)]
    log = parse([lg("start"), *lines])
    vllm = log.vllm
    assert (vllm.suppressed_copies, vllm.aggregated_lines, vllm.step_lines) == (0, 1, 1)
    assert vllm.engines == ()
    assert _warned(log) == [(3, "vLLM stats line without throughput/running/waiting: ignored")]


def test_a_stats_line_of_only_the_needed_fields_is_a_sample():
    message = (
        "Engine 000: Avg generation throughput: 2.0 tokens/s, Running: 3 reqs, Waiting: 1 reqs"
    )
    log = parse([lg("start"), f"{E}INFO 02-08 00:56:50 [loggers.py:1] {message}"])
    (e,) = log.vllm.engines
    assert (e.samples, e.gen_tps_sum, e.running_sum, e.waiting_sum) == (1, 2.0, 3.0, 1.0)
    assert log.warnings == ()


def test_a_v0_line_with_its_hit_rate_takes_no_second_one_and_a_time_is_not_needed():
    pfx = "(AsyncVLLMInferenceEngine pid=9, ip=10.0.0.1) "
    with_rate = _v0_sample(9).replace(b"CPU KV", b"Prefix cache hit rate: 10.0%, CPU KV")
    acc = VllmAccumulator("job.out")
    for n, raw in enumerate([with_rate, _v0_rate("30.00", pfx).encode(), _v0_sample(9)], 1):
        acc.feed(split_line(n, raw), None)
    acc.feed(split_line(4, _v0_rate("50.00", pfx).encode()), None)
    got = acc.freeze(None, 0)
    (engine,) = got.engines
    assert (engine.samples, engine.prefix_samples, engine.prefix_pct_sum) == (2, 2, 60.0)
    assert got.timeline == ()


def test_a_first_preemption_warning_gives_its_count():
    acc = _fed(VllmAccumulator("job.out"), [_v0_sample(9), _v0_warning(9, 1)])
    (engine,) = acc.freeze(None, 0).engines
    assert (engine.preemptions_max, engine.preemptions_total) == (None, 1.0)


def test_the_vllm_timeline_counts_from_the_logs_start():
    acc = _fed(VllmAccumulator("job.out"), [_engine(7, 2, r=1, w=0, g=2)])
    (bucket,) = acc.freeze(datetime(2026, 2, 8, 0, 0, 30), 0).timeline
    assert bucket.t_s == 90.0


def test_an_engine_logs_processes_on_two_nodes_stay_apart():
    lines = [_engine(7, 0, r=1, w=0, g=2), _engine(7, 0, r=2, w=0, g=3).replace(b"0.1)", b"0.2)")]
    acc = _fed(VllmAccumulator("logs/infra-1.log", engine_log=True), lines)
    assert [e.engine for e in acc.freeze(None, 0).engines] == [
        "infra-1.log:7@10.0.0.1",
        "infra-1.log:7@10.0.0.2",
    ]


def test_an_aggregated_stats_line_cut_after_its_label_is_warned_as_an_engines():
    """``4 Engines Aggregated:`` with nothing after it (its Ray suffix taken off) is a stats
    line cut short, warned as ``Engine 000:`` alone is, not passed over."""
    cut = (
        f"{E}INFO 02-08 00:56:50 [loggers.py:1] 4 Engines Aggregated: [repeated 2x across cluster]"
    )
    log = parse([lg("start"), cut])
    said = [(w.line, w.message) for w in log.warnings]
    assert said == [(2, "vLLM stats line without throughput/running/waiting: ignored")]


# -- sitegen/read/harbor.py --------------------------------------------------------------------


def _noted(data: bytes) -> list[tuple[str, int | None]]:
    notes: list[tuple[str, int | None]] = []
    harbor.decode_result(data, "d", False, notes)
    return notes


def test_bytes_that_are_not_utf8_are_noted_at_their_line_counted_from_the_first():
    data = b'\n{"trial_name": "t",\n "task_name": "t\xff"}'
    assert _noted(data) == [("invalid UTF-8: read with replacement characters", 3)]


def test_what_is_no_object_or_nested_too_deeply_says_so():
    for data, said in (
        (b"[1, 2]", "result.json holds a list, not an object"),
        (b"[" * 5000 + b"]" * 5000, "malformed JSON (nested too deeply)"),
    ):
        with pytest.raises(harbor.TrialFormatError) as caught:
            harbor.decode_result(data, "d", False)
        assert (str(caught.value), caught.value.line) == (said, None)


def _fields_afresh(data: bytes):
    """``read_fields`` with the taker of FIELDS made again (it is made once and kept: the
    mutation run's clean pass would keep the unmutated one)."""
    harbor._fields_taker.cache_clear()
    try:
        return harbor.read_fields(data)
    finally:
        harbor._fields_taker.cache_clear()


def test_the_fields_taken_are_those_read_each_as_orjson_gives_it():
    span = {"started_at": "2026-05-12T08:00:00Z", "finished_at": "2026-05-12T08:01:00Z"}
    agent = {"n_input_tokens": 3, "metadata": {"n_episodes": 2, "all_messages": [1]}, "x": [1]}
    doc = {
        "x": {"a": [1]},
        "trial_name": "t__1",
        "verifier_result": {"rewards": {"reward": 1.0, "b": [2]}, "other": {"c": 1}},
        "agent_result": agent,
        "step_results": [{"agent_result": agent, "verifier": span, "y": 1}, 3, None],
        "exception_info": {"exception_type": "E", "policy": {"should_retry": True}, "z": 1},
        "environment_setup": span,
        "n_total_trials": 4,
    }
    assert _fields_afresh(json.dumps(doc).encode()) == {
        "trial_name": "t__1",
        "verifier_result": doc["verifier_result"],  # taken whole
        "agent_result": {"n_input_tokens": 3, "metadata": {"n_episodes": 2}},
        "step_results": [
            {
                "agent_result": {"n_input_tokens": 3, "metadata": {"n_episodes": 2}},
                "verifier": span,
            },
            3,
            None,
        ],
        "exception_info": doc["exception_info"],
        "environment_setup": span,
        "n_total_trials": 4,
    }


def test_a_container_of_another_kind_than_the_fields_is_none_and_a_plain_value_stays():
    doc = {
        "agent_result": [1],  # an object read: a list is none
        "step_results": {"a": 1},  # a list read: an object is none
        "exception_info": [2],  # an object taken whole: a list is none
        "environment_setup": 5,
        "agent_setup": "x",
        "verifier": None,
    }
    assert _fields_afresh(json.dumps(doc).encode()) == {
        **doc,
        "agent_result": None,
        "step_results": None,
        "exception_info": None,
    }
    doc = {"agent_result": 7, "step_results": 3, "exception_info": {"exception_type": "E"}}
    assert _fields_afresh(json.dumps(doc).encode()) == doc


def test_a_repeated_key_read_or_a_container_for_a_plain_value_goes_the_whole_way():
    for data in (
        b'{"trial_name": "a", "trial_name": "b"}',
        b'{"trial_name": ["a"]}',
        b'{"trial_name": {"a": 1}}',
        b'{"agent_result": {"n_input_tokens": [1]}}',
    ):
        assert _fields_afresh(data) is None, data
    # a key not read may repeat
    assert _fields_afresh(b'{"x": 1, "x": [2], "trial_name": "a"}') == {"trial_name": "a"}


def test_a_shape_of_every_key_takes_each_keys_parts():
    """``"*"`` outside an object taken whole (FIELDS has it only inside them today)."""
    take = harbor._compile({"m": {"*": {"n": None}}, "k": None})

    def taken(data: bytes):
        return take(simdjson.Parser().parse(data))

    got = taken(b'{"m": {"a": {"n": 1, "o": 2}, "b": [3], "c": 4}, "k": 5}')
    assert got == {"m": {"a": {"n": 1}, "b": None, "c": 4}, "k": 5}
    assert taken(b'{"m": [1]}') == {"m": None}
    assert taken(b'{"m": 6}') == {"m": 6}
    with pytest.raises(harbor._Whole):  # which of a repeated key's values counts: orjson's rule
        taken(b'{"m": {"a": {"n": 1}, "a": {"n": 2}}}')


def _trial(doc: dict, is_eval: bool = False, notes: list | None = None):
    return harbor.decode_result(json.dumps(doc).encode(), "folder", is_eval, notes)


def test_a_trial_without_its_name_is_named_by_its_folder_and_flagged_eval_as_asked():
    t = _trial({"task_name": None}, is_eval=True)
    assert (t.name, t.task, t.eval) == ("folder", "", True)
    assert _trial({"trial_name": "t__1", "n_total_trials": 1}).name == "t__1"
    assert _trial({}).eval is False


def test_what_the_top_level_of_a_multi_step_trial_states_wins_over_its_steps():
    steps = [
        {
            "agent_result": {
                "n_input_tokens": 10,
                "n_output_tokens": 1,
                "n_cache_tokens": 4,
                "metadata": {"n_episodes": 2},
            },
            "exception_info": {"exception_type": "StepError"},
        },
        {"agent_result": {"n_input_tokens": 20, "n_output_tokens": 2, "metadata": {}}},
    ]
    t = _trial({"trial_name": "m", "step_results": steps})
    assert (t.exception, t.turns, t.input_tokens, t.output_tokens) == ("StepError", 2, 30, 3)
    top = {"n_input_tokens": 5, "n_output_tokens": None, "n_cache_tokens": 1}
    doc = {
        "trial_name": "m",
        "agent_result": top,
        "step_results": steps,
        "exception_info": {"exception_type": "TrialError"},
    }
    t = _trial(doc)
    assert (t.exception, t.input_tokens, t.output_tokens, t.cache_tokens) == (
        "TrialError",
        5,
        None,
        1,
    )


def test_an_exception_info_without_a_type_has_no_kind():
    policy = {"should_retry": False, "should_grade": True, "has_valid_reward": True}
    t = _trial({"trial_name": "t", "exception_info": {"exception_type": None, "policy": policy}})
    assert (t.exception, t.exception_kind) == (None, None)


def test_a_stage_under_a_second_or_of_none_is_timed():
    span = {"started_at": "2026-05-12T08:00:00Z", "finished_at": "2026-05-12T08:00:00.5Z"}
    assert _trial({"trial_name": "t", "verifier": span}).verifier_s == 0.5
    span["finished_at"] = span["started_at"]  # (a stage that took no time is timed: 0)
    assert _trial({"trial_name": "t", "verifier": span}).verifier_s == 0.0


def test_a_rewards_names_or_value_are_shown_whole_up_to_their_bound():
    def said(verifier: dict) -> list[str]:
        notes: list = []
        _trial({"trial_name": "t", "verifier_result": verifier}, notes=notes)
        return [m for m, _ in notes]

    a, b = "a" * 29, "b" * 29  # "a…, b…": 60 characters
    assert said({"rewards": {a: 1, b: 0}}) == [
        f"rewards {a}, {b}: none is named reward: counted as no reward"
    ]
    assert said({"rewards": {a + "a": 1, b: 0}}) == [
        "rewards of 2 keys: none is named reward: counted as no reward"
    ]
    for text, shown in (
        ("x" * 38, '"' + "x" * 38 + '"'),  # 40 characters in JSON
        ("x" * 39, "(a str of 41 characters in JSON)"),
        ("é", '"é"'),
    ):
        assert said({"reward": text}) == [f"reward {shown} is not a number: counted as no reward"]


def test_a_count_written_as_a_float_is_read_within_64_bits_only():
    for v, want in (
        (-(2.0**63), -(2**63)),
        (2.0**63, None),
        (-(2.0**64), None),
        (2.0**64, None),
        (1e19, None),
        (-1e19, None),
    ):
        assert harbor._int(v) == want, v


def test_a_file_read_whole_past_the_standard_librarys_depth_is_read_by_orjson():
    # (a repeated key that is read sends it the whole way; orjson reads 1,024 levels, json
    # 999 of them)
    deep = "[" * 1000 + "]" * 1000
    data = f'{{"trial_name": "a", "trial_name": "t", "x": {deep}}}'.encode()
    assert harbor.decode_result(data, "d", False).name == "t"


# -- sitegen/read/statuslines.py ---------------------------------------------------------------

_CANCEL = "slurmstepd: error: *** JOB 7 ON gpu-17 CANCELLED AT 2026-02-08T10:00:00 ***"


def test_a_failure_warned_after_training_done_is_no_end_once_training_is_done_again():
    """Side failures after 'Training done!' are only warned: another 'Training done!' and a
    plain cancel later leave no failure to take up."""
    for failure in (
        "slurmstepd: error: Detected 1 oom_kill event in StepId=7.0. Some of the step tasks "
        "have been OOM Killed.",
        "srun: error: gpu-17: task 0: Out Of Memory",
        "slurmstepd: error: *** STEP 7.0 ON gpu-17 FAILED (non-zero exit code) ***",
    ):
        done = lg("Training done!")
        log = parse([*block(1, METRICS), done, failure, done, _CANCEL])
        assert (log.end_marker, log.end_detail) == ("cancelled", "CANCELLED"), failure


def test_slurm_lines_not_understood_are_warned_at_their_lines_under_one_kind():
    odd_cancel = (
        "slurmstepd: error: *** JOB 7 ON n1 CANCELLED AT 2026-01-01T00:00:00 DUE TO a rule ***"
    )
    odd = "slurmstepd: error: something else"
    lines = [lg("start"), *[odd_cancel] * 6, *[odd] * 6]
    assert _warned(parse(lines)) == [
        *((n, "SLURM's cancel with words not known: read as a cancel") for n in range(2, 8)),
        *((n, "slurmstepd line not understood: ignored") for n in range(8, 12)),
        (None, "2 more warnings like the above (slurm)"),
    ]


def test_a_final_save_with_no_save_at_all_is_warned_under_its_kind():
    lines = [*block(1, METRICS), *[lg("Saved final checkpoint.")] * 11]
    n = len(block(1, METRICS))
    said = "'Saved final checkpoint.' with no save line for it: the final checkpoint is not known"
    assert _warned(parse(lines)) == [
        *((n + i, said) for i in range(1, 11)),
        (None, "1 more warnings like the above (checkpoint)"),
    ]


def test_exception_breakdowns_read_as_python_writes_them_within_64_bits():
    done = lg(
        "Batch generation complete: 0/8 successful, 0 failed instances, 0 masked (excluded "
        "from baseline)"
    )

    def breakdown(text: str):
        log = parse([lg("start"), lg(f"Exception breakdown: {text}"), done])
        return log.batches.exceptions, _warned(log)

    assert breakdown('{"A": 2, "B": -1}') == ({"A": 2, "B": -1}, [])  # (no flat dict: eval'd)
    assert breakdown(f"{{'A': {-(2**63)}, 'B': {2**63 - 1}}}") == (
        {"A": -(2**63), "B": 2**63 - 1},
        [],
    )
    for past in (2**63, -(2**63) - 1, 2**64, -(2**64)):
        assert breakdown(f"{{'A': {past}}}") == (
            {},
            [(2, "unreadable 'Exception breakdown' dict: ignored")],
        )


def test_unreadable_exception_breakdowns_and_negative_counts_are_warned_under_their_kinds():
    done = (
        "Batch generation complete: {}/8 successful, {} failed instances, 0 masked (excluded "
        "from baseline)"
    )
    lines = [lg("start")]
    for _ in range(11):
        lines += [lg("Exception breakdown: {'A': x}"), lg(done.format(-1, 0))]
    said = [(w.line, w.message) for w in parse(lines).warnings]
    assert said == [
        *(
            (n, m)
            for k in range(10)
            for n, m in (
                (2 + 2 * k, "unreadable 'Exception breakdown' dict: ignored"),
                (
                    3 + 2 * k,
                    "negative count in batch line (-1/8 successful, 0 failed; the generator "
                    "subtracts exception counts): read as written",
                ),
            )
        ),
        (None, "1 more warnings like the above (exc)"),
        (None, "1 more warnings like the above (negative)"),
    ]
    assert parse([lg("start"), lg(done.format(0, 0))]).warnings == ()  # none below 0


def test_ray_s_copies_of_stats_lines_taken_whole_add_up():
    raw = (
        b"(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1) INFO 02-08 00:01:00 [loggers.py:1] "
        b"Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 "
        b"tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, Prefix cache "
        b"hit rate: 5.0% [repeated 3x across cluster]"
    )
    p = LogParser("logs/x.out", Redactor(), 2026)
    p.feed_raw(1, lg("started").encode(), False)
    p.config_done = True
    assert p.vllm_stats_line(2, raw) and p.vllm_stats_line(3, raw)
    assert p.suppressed == 6


# -- sitegen/read/configdump.py ----------------------------------------------------------------


def test_a_config_dump_is_read_up_to_its_bounds_and_refused_past_them(monkeypatch):
    monkeypatch.setattr(configdump, "MAX_CONFIG_NODES", 5)
    assert configdump.load_config("[1, 2, 3, 4]") == [1, 2, 3, 4]  # 5 values with the list
    with pytest.raises(configdump.ConfigTooBig):
        configdump.load_config("[1, 2, 3, 4, 5]")
    monkeypatch.setattr(configdump, "MAX_CONFIG_DEPTH", 2)
    assert configdump.load_config("[[1]]") == [[1]]  # the 1 at depth 2
    with pytest.raises(configdump.ConfigTooBig):
        configdump.load_config("[[[1]]]")


def test_a_value_yaml_cannot_build_is_kept_when_no_list_of_problems_is_given():
    assert configdump.load_config("a: 2026-02-30") == {"a": "2026-02-30"}


def test_a_config_value_json_holds_is_kept_and_an_integer_past_64_bits_is_its_digits():
    loaded = configdump.load_config("a: 0.5\nb: 2026-01-02\nc: true\nd: x\ne: ~")
    assert loaded == {"a": 0.5, "b": date(2026, 1, 2), "c": True, "d": "x", "e": None}
    assert type(loaded["a"]) is float and type(loaded["b"]) is date
    low, high = -(2**63), 2**63
    assert configdump.load_config(f"[{low}, {high - 1}, {low - 1}, {high}]") == [
        *(low, high - 1),
        *(str(low - 1), str(high)),
    ]


def test_a_config_key_json_cannot_hold_and_a_set_are_made_plain():
    assert configdump.load_config("? !!binary aGk=\n: x") == {"(binary data, 2 bytes)": "x"}
    assert configdump.load_config("!!set {10: null, 9: null}") == [10, 9]  # in repr's order


def test_a_dump_that_holds_itself_says_so():
    _, log = _dumped("data:\n  x: &a [*a]")
    assert log.config is None
    assert _warned(log) == [
        (1, "config dump holds itself (a recursive YAML alias): config not shown")
    ]


def _dumped(dump: str, after: tuple[str, ...] = ("",), first_line: int = 1):
    """The parser and the log of a log whose config dump is ``dump`` (its first line a loguru
    record's message at ``first_line``, the rest with the Ray prefix), then the lines
    ``after`` (the dump's own blank line, by default), then a step."""
    head, *rest = dump.split("\n")
    lines = [
        *(lg(f"starting {i}") for i in range(1, first_line)),
        lg(head),
        *(P + x for x in rest),
        *(P + x for x in after),
        lg("No checkpoint found, starting training from scratch"),
        *block(1, {"reward/avg_raw_reward": "0.5000", "trainer/global_step": 1}),
    ]
    data = ("\n".join(lines) + "\n").encode()
    p = LogParser("job.out", Redactor(), year_hint=2026)
    for n, raw, trunc in iter_raw_lines(io.BytesIO(data)):
        p.feed_raw(n, raw, trunc)
    log = p.finish(len(data), 0.0)
    assert [b.step for b in log.blocks] == [1]  # the steps are read whatever the dump holds
    return p, log


NOT_YAML = "config dump is not valid YAML: config not shown"


def test_a_dump_that_is_not_yaml_is_warned_at_the_line_yaml_fails_on():
    _, log = _dumped("data:\n  x: 1\ntrainer:\n  run_name: [r\n  y: 2", first_line=3)
    assert log.config is None and _warned(log) == [(7, NOT_YAML)]
    # (a character YAML refuses anywhere: no line to name, the dump's first)
    _, log = _dumped("data:\n  x: \x01\ntrainer:\n  run_name: r", first_line=3)
    assert log.config is None and _warned(log) == [(3, NOT_YAML)]
    # a dump whose every cut fails too: the line the last one tried fails on
    _, log = _dumped("data:\n  x: [1,\n\n  y: \x01", first_line=3)
    assert log.config is None and _warned(log) == [(4, NOT_YAML)]


def test_a_dump_broken_before_blank_lines_is_cut_at_the_last_blank_line_before_the_fault():
    """The blank lines after where YAML fails are not tried (all hold the fault) and do not
    push out of the bounded tries the ones before it."""
    dump = "data:\n  a: 1\n\n  b: 2\n\n  c: 3\n    d: 4" + "".join(
        f"\n\n  e{i}: 5" for i in range(4)
    )
    _, log = _dumped(dump)
    assert log.config == {"data": {"a": 1, "b": 2}} and not log.warnings


def test_a_dump_cut_tries_its_first_blank_line_after_all_the_others():
    # the blank lines inside the string fail as cuts (the quote left open); the one before it
    # is the last that reads, tried before the first
    dump = "data:\n  x: 1\n\n  y: 2\n\n  s: 'p\n\n  q\n\n  r\n\n  t'\n  bad: ["
    _, log = _dumped(dump)
    assert log.config == {"data": {"x": 1, "y": 2}} and not log.warnings


def test_a_cut_dumps_values_yaml_cannot_build_are_warned_at_their_lines():
    after = ("", '  File "x.py", line 3, in <module>: bad: [', "ValueError: x")
    _, log = _dumped("data:\n  x: 1\n  d: 2026-02-30", after=after)
    assert log.config == {"data": {"x": 1, "d": "2026-02-30"}}
    assert _warned(log) == [
        (3, "config dump: a value YAML cannot read (timestamp): shown as written")
    ]


def test_a_dumps_problems_past_the_warnings_bound_are_counted_under_their_kind():
    _, log = _dumped("data:" + "".join(f"\n  d{i}: 2026-02-30" for i in range(12)))
    assert _warned(log)[-1] == (None, "2 more warnings like the above (config)")


def test_a_dump_that_cannot_be_read_otherwise_names_the_error_at_its_first_line(monkeypatch):
    def broken(text, problems=None):
        raise KeyError(text)

    monkeypatch.setattr(configdump, "load_config", broken)
    _, log = _dumped("data:\n  x: 1", first_line=3)
    assert log.config is None
    assert _warned(log) == [(3, "config dump could not be read (KeyError): config not shown")]


def test_a_secret_hidden_in_a_dump_is_counted_at_its_line():
    dump = "data:\n  x: 1\ntrainer:\n  api_key: sk-live-Zk3v9QmW1aB7cD9eF2gH4"
    p, log = _dumped(dump, first_line=3)
    assert "Zk3v9QmW1" not in json.dumps(log.config)
    assert list(p.secrets.values()) == [[6, 1]]


def test_a_dump_indented_by_one_blank_goes_on_after_a_blank_line():
    _, log = _dumped("data:\n x: 'a\n\n b'\ntrainer:\n run_name: r")
    assert log.config == {"data": {"x": "a\nb"}, "trainer": {"run_name": "r"}}
    assert not log.warnings


def test_what_follows_a_dump_that_is_no_yaml_ends_it():
    # a plain line right after the dump (no blank line between)
    _, log = _dumped("data:\n  x: 1", after=("Xformers not available",))
    assert log.config == {"data": {"x": 1}} and not log.warnings
    # a top-level key after the dump's own blank line
    _, log = _dumped("data:\n  x: 1", after=("", "XLA_FLAGS: --xla_gpu_autotune"))
    assert log.config == {"data": {"x": 1}} and not log.warnings


def test_a_dump_keeps_its_lines_bound_blank_lines_too(monkeypatch):
    monkeypatch.setattr(configdump, "MAX_CONFIG_LINES", 6)
    texts = []
    real = configdump.load_config
    monkeypatch.setattr(configdump, "load_config", lambda *a: texts.append(a[0]) or real(*a))
    dump = "data:\n  a: 1\n  b: 2\n  c: 3\n\n\n\n  d: 4\n\n\n\n  e: 5\n\n\n\n  f: 6"
    _, log = _dumped(dump)
    assert log.config == {"data": {"a": 1, "b": 2, "c": 3}}
    assert [t.count("\n") for t in texts] == [5]  # the 6 lines kept


def test_a_message_that_starts_with_a_config_key_and_ends_in_a_colon_starts_no_dump():
    # (a dump started there would not be YAML, and the real one after it would go unread)
    lines = [lg("trainer: resuming from:"), lg("data:"), P + "  x: 1", P]
    log = parse([*lines, *block(1, {"reward/avg_raw_reward": "0.5000", "trainer/global_step": 1})])
    assert log.config == {"data": {"x": 1}} and not log.warnings


def test_a_dumps_first_key_with_blanks_after_its_colon_starts_it():
    _, log = _dumped("data:  \n  x: 1")
    assert log.config == {"data": {"x": 1}} and not log.warnings


def test_a_first_key_with_a_tab_after_its_colon_starts_no_dump_yaml_would_refuse():
    # ("data:\t" is no YAML yaml.dump writes; the dump is read from its next top-level key)
    _, log = _dumped("data:\t\n  x: 1\ntrainer:\n  y: 2")
    assert log.config == {"trainer": {"y": 2}} and not log.warnings


def test_a_key_with_more_after_its_colon_starts_no_dump():
    _, log = _dumped("trainer:X\n  x: 1\ndata:\n  y: 2")
    assert log.config == {"data": {"y": 2}} and not log.warnings
