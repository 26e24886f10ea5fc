"""Hand-written snippets of every log variant of docs/formats.md §2–§5."""

import io
import math
import pprint

import pytest

from sitegen.cache.codec import decode
from sitegen.cache.logs import state_bytes
from sitegen.jsonio import dumps
from sitegen.read.lines import iter_raw_lines
from sitegen.read.logparse import LogParser
from sitegen.read.logstate import ParserState
from sitegen.redact import Redactor

P = "(skyrl_entrypoint pid=4242) "
E = "(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1) "


def lg(msg: str, t: str = "2026-02-08 00:56:50.123") -> str:
    return f"{P}{t} | INFO     | skyrl_train.trainer:train:1 - {msg}"


def block(step: int, d: dict, prefix: str = P) -> list[str]:
    return [lg(f"Step {step}: ")] + [prefix + x for x in pprint.pformat(d).splitlines()]


def parse(lines: list[str] | bytes, mtime: float = 0.0):
    data = lines if isinstance(lines, bytes) else ("\n".join(lines) + "\n").encode()
    p = LogParser("job.out", Redactor(), year_hint=2026)
    for n, raw, trunc in iter_raw_lines(io.BytesIO(data)):
        p.feed_raw(n, raw, trunc)
    return p.finish(len(data), mtime)


METRICS = {
    "async/staleness_max": 1,
    "async/staleness_mean": "0.2500",
    "reward/avg_raw_reward": "0.3125",
    "timing/step": "812.3456",
    "trainer/epoch": 0,
    "trainer/global_step": 48,
    "zz/after": "nan",
}


def test_console_block_any_key_order_nan_kept_non_finite():
    log = parse(block(48, METRICS))
    assert log.metric_form == "console"
    (b,) = log.blocks
    assert b.step == 48 and b.metrics["reward/avg_raw_reward"] == 0.3125
    assert b.metrics["trainer/global_step"] == 48 and math.isnan(b.metrics["zz/after"])


def test_sync_trainer_without_async_keys_and_split_timing_merged():
    main = {"reward/avg_raw_reward": "0.5000", "trainer/global_step": 3}
    timing = {"timing/step": "10.0000", "timing/run_training": "4.0000"}
    log = parse(block(3, main) + block(3, timing) + block(4, {**main, "trainer/global_step": 4}))
    assert [b.step for b in log.blocks] == [3, 4]
    assert (
        log.blocks[0].metrics["timing/step"] == 10.0
        and log.blocks[0].metrics["reward/avg_raw_reward"] == 0.5
    )


def test_mirror_preferred_when_both_forms_present():
    lines = block(5, {"reward/avg_raw_reward": "0.1235"}) + [
        lg(
            'WANDB_MIRROR kind=train step=5 metrics={"reward/avg_raw_reward": 0.123456789, "x": NaN, "y": Infinity}'
        ),
        lg('WANDB_MIRROR kind=eval step=5 metrics={"eval/score": 0.7}'),
    ]
    log = parse(lines)
    assert log.metric_form == "mirror"
    assert log.blocks[0].metrics["reward/avg_raw_reward"] == 0.123456789
    assert math.isnan(log.blocks[0].metrics["x"]) and math.isinf(log.blocks[0].metrics["y"])
    assert log.eval_blocks[0].metrics == {"eval/score": 0.7}


def test_markers_inside_model_text_are_ignored():
    lines = [
        P + "Example generated: Step 3: {'reward/avg_raw_reward': '9.9999'} Training done!",
        P + "Step 7: ",
        P + "{'reward/avg_raw_reward': '9.9999'}",
        "Training done!",
    ] + block(1, {"reward/avg_raw_reward": "0.5000"})
    log = parse(lines)
    assert [b.step for b in log.blocks] == [1]
    assert log.end_marker is None


def test_interleaved_lines_from_other_processes_do_not_break_a_block():
    b = block(2, METRICS)
    lines = b[:3] + [E + "chatter {'x': 1}", "tqdm 50%|#####"] + b[3:]
    log = parse(lines)
    assert [x.step for x in log.blocks] == [2]
    assert len(log.blocks[0].metrics) == len(METRICS)


def test_cut_off_final_block_is_dropped_with_warning_and_earlier_kept():
    b = block(2, METRICS)
    data = ("\n".join(block(1, METRICS) + b[:4]) + "\n" + P + " 'timing/st").encode()
    log = parse(data)
    assert [x.step for x in log.blocks] == [1]
    assert any("cut off" in w.message and w.line is not None for w in log.warnings)


def test_batches_go_to_the_step_whose_metrics_follow():
    done = "Batch generation complete: {}/8 successful, {} failed instances, {} masked (excluded from baseline)"
    lines = (
        [
            lg("Starting batch generation for 8 trials (mode=training)"),
            lg("Exception breakdown: {'AgentTimeoutError': 2, 'InvalidChatHistory': 1}"),
            lg(done.format(5, 2, 1)),
        ]
        + block(1, {"reward/avg_raw_reward": "0.5000"})
        + [
            lg("Starting batch generation for 8 trials (mode=eval, session=x)"),
            lg(done.format(8, 0, 0)),
            lg("Starting batch generation for 8 trials (mode=training)"),
            lg(done.format(8, 0, 0)),
        ]
        + block(2, {"reward/avg_raw_reward": "0.5000"})
        + [lg("Starting batch generation for 8 trials (mode=training)"), lg(done.format(7, 1, 0))]
    )
    log = parse(lines)
    assert log.batches_per_step[1].batches == 1 and log.batches_per_step[1].exceptions == {
        "AgentTimeoutError": 2,
        "InvalidChatHistory": 1,
    }
    assert log.batches_per_step[2].batches == 1 and log.batches_per_step[2].failed == 0
    assert log.batches_per_step[3].failed == 1  # after the last block: the step being generated
    assert log.batches.batches == 3 and log.eval_batches.batches == 1


@pytest.mark.parametrize(
    ("before", "step"),
    [
        ([], 1),  # a fresh job cut off while generating its first step
        ([lg("Resumed training from global_step 6")], 7),
        (["Training Step Progress:  30%|###       | 3/10 [01:00<02:20, 20.0s/it]"], 4),
    ],
)
def test_batches_of_a_log_without_a_step_are_the_step_being_generated(before, step):
    # no metric block at all: the batches are the step after the resume or the bar's last
    # step, or the first, never a step 0 no job has
    done = "Batch generation complete: {}/8 successful, {} failed instances, {} masked (excluded from baseline)"
    lines = [
        *before,
        lg("Starting batch generation for 8 trials (mode=training)"),
        lg(done.format(6, 2, 0)),
    ]
    log = parse(lines)
    assert list(log.batches_per_step) == [step]
    assert log.batches_per_step[step].failed == 2 and log.batches.batches == 1


def test_vllm_line_shapes():
    old = (
        E
        + "INFO 02-08 00:56:50 [loggers.py:127] Engine 000: Avg prompt throughput: 23.1 tokens/s, "
        "Avg generation throughput: 470.2 tokens/s, Running: 11 reqs, Waiting: 7 reqs, GPU KV cache usage: 48.0%, "
        "Prefix cache hit rate: 84.3%"
    )
    new = (
        "(AsyncVLLMInferenceEngine pid=8) (EngineCore_DP0 pid=9) INFO 02-08 00:57:50 [loggers.py:215] Engine 000: "
        "Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 100.0 tokens/s, Running: 1 reqs, "
        "Waiting: 3 reqs, Deferred: 2 reqs, Preemptions: 4, GPU KV cache usage: 10.0%, Prefix cache hit rate: 50.0%, "
        "Corrupted: 0 reqs, External prefix cache hit rate: 0.0%, MM cache hit rate: 0.0% [repeated 3x across cluster]"
    )
    agg = (
        E
        + "INFO 02-08 00:57:50 [loggers.py:215] 4 Engines Aggregated: Avg prompt throughput: 1.0 tokens/s, "
        "Avg generation throughput: 9999.0 tokens/s, Running: 99 reqs, Waiting: 99 reqs"
    )
    step = (
        E
        + "INFO 02-08 00:57:50 [skyrl.py:1] vLLM Stats (step 3): engines=4, running(peak/med)=10/5"
    )
    log = parse([lg("start"), old, new, agg, step])
    eng = {e.engine: e for e in log.vllm.engines}
    assert set(eng) == {"7@10.0.0.1", "8@driver"}
    assert eng["7@10.0.0.1"].gen_tps_sum == 470.2 and eng["8@driver"].waiting_sum == 3
    assert (eng["8@driver"].preemptions_max, eng["8@driver"].preemptions_total) == (4, 4)
    # the older line reports no preemptions: unknown, not 0
    assert (eng["7@10.0.0.1"].preemptions_max, eng["7@10.0.0.1"].preemptions_total) == (None, None)
    assert (
        log.vllm.aggregated_lines == 1
        and log.vllm.suppressed_copies == 3
        and log.vllm.step_lines == 1
    )
    assert sum(b.samples for b in log.vllm.timeline) == 2


def test_a_checkpoint_folder_with_spaces_is_read_whole():
    """A checkpoint folder holding a space (Colab's "/content/drive/My Drive/…"): the resume
    step is read from its last part, the paths are shown whole."""
    drive = "/content/drive/My Drive/ckpts"
    lines = [
        lg(f"Loading checkpoint from: {drive}/global_step_47 "),
        lg(f"Successfully saved checkpoint for global_step_50 to: {drive}/global_step_50"),
    ]
    log = parse(lines)
    assert (log.resumed_from, log.resume_path) == (47, f"{drive}/global_step_47")
    assert [(c.step, c.path) for c in log.checkpoints] == [(50, f"{drive}/global_step_50")]


def test_resume_checkpoint_and_end_states():
    lines = [
        lg("Loading checkpoint from: /ckpt/run/global_step_47"),
        lg("Resumed training from global_step 47"),
        lg("Successfully saved checkpoint for global_step_50 to: /ckpt/run/global_step_50"),
    ]
    log = parse(lines + [lg("Training done!")])
    assert (log.resumed_from, log.resume_path, log.end_marker) == (
        47,
        "/ckpt/run/global_step_47",
        "complete",
    )
    assert [c.step for c in log.checkpoints] == [50]
    log = parse(
        lines
        + [
            "slurmstepd: error: *** JOB 561773 ON gpu-1 CANCELLED AT 2026-02-08T10:00:00 DUE TO TIME LIMIT ***"
        ]
    )
    assert (log.end_marker, log.end_detail) == ("cancelled", "TIME LIMIT")
    log = parse(["slurmstepd: error: *** JOB 5 ON n CANCELLED AT 2026-02-08T10:00:00 ***"])
    assert log.end_marker == "cancelled"
    log = parse(
        [
            lg(
                "Train loop failed at global_step 12: RuntimeError: boom token=hf_abcdefghijklmnopqrstuvwx"
            )
        ]
    )
    assert log.end_marker == "failed" and "hf_abc" not in log.end_detail
    log = parse([lg("Training failed at step 3 with ValueError")])
    assert log.end_marker == "failed"
    assert parse([lg("No checkpoint found, starting training from scratch")]).fresh_start


def test_config_dump_parsed_and_redacted():
    cfg = [
        "data:",
        "  train_data: [a]",
        "trainer:",
        "  run_name: r1",
        "  ckpt_path: /ckpt/r1",
        "  wandb_api_key: 0123456789abcdef0123456789abcdef01234567",
        "generator:",
        "  n_samples_per_prompt: 8",
        "  api_base: https://u:hunter2@host/v1",
    ]
    log = parse([P + x for x in cfg] + [lg("go")])
    assert log.config["trainer"]["run_name"] == "r1"
    assert log.config["generator"]["n_samples_per_prompt"] == 8
    assert log.config["trainer"]["wandb_api_key"] == "[REDACTED]"
    assert "hunter2" not in log.config["generator"]["api_base"]


def test_junk_is_reported_with_line_and_valid_records_kept():
    data = (
        b"\n".join([b"\xff\xfe\x00junk", *(x.encode() for x in block(1, METRICS)), b"\x00\x00"])
        + b"\n"
    )
    log = parse(data)
    assert [b.step for b in log.blocks] == [1]
    lines_warned = {w.line for w in log.warnings}
    assert 1 in lines_warned


def test_pformat_wrapped_long_value_stays_in_its_block():
    d = {"a/x": "0.5000", "b/name": "word " * 30, "trainer/global_step": 3}
    lines = block(3, d)
    assert len(lines) > 4  # pprint wrapped the long string over several lines
    log = parse(lines + block(4, {"a/x": "0.2500"}))
    assert [b.step for b in log.blocks] == [3, 4]
    assert log.blocks[0].metrics == {"a/x": 0.5, "trainer/global_step": 3}


def test_status_dict_warning_names_its_line_number():
    # The policy's status dict (text-only logs) with a negative timer: the warning
    # carries the line as a number, like every other warning (it carried the Line once).
    log = parse([lg("Started: 'step'"), lg("{'timing/sync': -1.0, 'policy_loss': 0.5}")])
    assert [(w.line, "timing/sync" in w.message) for w in log.warnings] == [(2, True)]


BIG = str(1 << 64)  # one past what a 64-bit integer (and so JSON tools) can hold


def test_numbers_past_64_bits_are_warned_about_not_read():
    lines = [
        lg(f"Step {BIG}: "),
        P + "{'trainer/global_step': 1}",
        lg(f"Batch generation complete: {BIG}/8 successful, 1 failed instances, 0 masked"),
        lg(f"Exception breakdown: {{'AgentTimeoutError': {BIG}}}"),
        lg(f"Successfully saved checkpoint for global_step_{BIG} to: /ckpt/global_step_{BIG}"),
        lg(f"Resumed training from global_step {BIG}"),
        lg(f"WANDB_MIRROR kind=train step={BIG} metrics={{}}"),
        P + f"INFO 02-08 00:56:50 [loggers.py:1] Engine 000: x [repeated {BIG}x across cluster]",
        *block(2, {"reward/avg_raw_reward": "0.5000", "trainer/global_step": 2}),
    ]
    log = parse(lines)
    assert [b.step for b in log.blocks] == [2]  # the readable step, and only it
    warned = {w.line: w.message for w in log.warnings}
    assert "unreadable 'Step N:' marker" in warned[1]
    assert "unreadable 'Batch generation complete'" in warned[3]
    assert "unreadable 'Exception breakdown'" in warned[4]
    assert log.resumed_from is None and not log.checkpoints
    assert log.vllm.suppressed_copies < 1 << 63
    from sitegen.cache.codec import encode
    from sitegen.model.parsed import ParsedLog

    encode(log, ParsedLog)  # nothing the cache's writer refuses


def test_config_dumps_that_expand_nest_or_hold_odd_types_are_refused_or_made_plain():
    def config(*body: str):
        return parse([P + x for x in ["trainer:", *body]] + [lg("go")])

    bomb = ["  a: &a [x, x, x, x, x, x, x, x, x, x]"] + [
        f"  {c}: &{c} [{', '.join(['*' + p] * 10)}]"
        for p, c in zip("abcdef", "bcdefg", strict=True)
    ]
    for body, why in (
        (bomb, "more than 100000 values"),
        (["  loop: &r [1, *r]"], "holds itself"),
        (["  deep: " + "[" * 300 + "]" * 300], "nested more than 64 levels"),
        (["  deep: " + "[" * 5000 + "]" * 5000], "nested more than 64 levels"),
    ):
        log = config(*body)
        assert log.config is None
        assert any(why in w.message and w.line == 1 for w in log.warnings), why
    log = config(
        "  blob: !!binary aGVsbG8=",
        f"  seed: {BIG}",
        "  tags: !!set {a: null, b: null}",
        "  when: 2026-02-08",
        "  1: an int key",
        "  run_name: r1",
    )
    t = log.config["trainer"]
    assert t["blob"] == "(binary data, 5 bytes)" and t["seed"] == BIG
    assert t["tags"] == ["a", "b"] and t["run_name"] == "r1" and t["1"] == "an int key"
    assert dumps(log.config)  # JSON holds all of it


def test_a_step_header_that_cannot_be_read_is_warned_about():
    lines = [
        P + "W0213 partial stderr write" + lg("Step 3: ")[len(P) :],  # output interleaved
        P + "{'trainer/global_step': 3}",
        lg("Step -4: "),
        lg("Step 5a: "),
        lg("Step : "),
        lg("Step 5 took 3.2 s"),  # an ordinary message: nothing to say
        *block(6, {"trainer/global_step": 6}),
    ]
    log = parse(lines)
    assert [b.step for b in log.blocks] == [6]
    lines_warned = sorted(w.line for w in log.warnings)
    assert lines_warned == [1, 3, 4, 5]
    assert "after other text" in log.warnings[0].message


def _read(data: bytes, chunk: int, state=None):
    p = LogParser("job.out", Redactor(), year_hint=2026) if state is None else state
    p.feed_stream(io.BytesIO(data), chunk_size=chunk)
    return p


def test_lines_are_named_by_the_file_line_whatever_tqdm_redraws():
    bar = "".join(f"Training Step Progress: {k}0%|#| {k}/9 [00:0{k}<00:09]\r" for k in range(1, 9))
    lines = [
        lg("go"),  # 1
        P + bar + lg("Started: 'step'")[len(P) :],  # 2: a bar redrawn 8 times, then a record
        P + "\x00 binary",  # 3
        *block(7, {"trainer/global_step": 7}),  # 4, 5
        P + bar,  # 6
        lg("Step 8: "),  # 7
        P + "{'trainer/global_step': 8,",  # 8: cut off at the end of the file
    ]
    data = ("\n".join(lines) + "\n").encode()
    for chunk in (7, 64, 200, 1 << 20):
        log = _read(data, chunk).finish(len(data), 0.0)
        assert [(b.step, b.line) for b in log.blocks] == [(7, 4)], chunk
        assert sorted({w.line for w in log.warnings}) == [3, 7], chunk
        assert log.lines == 8, chunk
    # read on from a saved state (a grown log): the same numbers
    cut = data.index(b"\n", data.index(b"binary")) + 1
    first = _read(data[:cut], 64)
    again = LogParser.resume(decode(state_bytes(first.state()), ParserState), "job.out", Redactor())
    log = _read(data[cut:], 64, again).finish(len(data), 0.0)
    assert [(b.step, b.line) for b in log.blocks] == [(7, 4)]
    assert sorted({w.line for w in log.warnings}) == [3, 7] and log.lines == 8


def test_vllm_preemptions_are_summed_over_the_logging_intervals():
    """vLLM's logger counts the requests preempted since its last line (it zeroes the count
    after each line): an engine's total is the sum of its lines, its worst interval the max.
    The standard six-field line (read by the fast path) reports none."""

    def line(t: str, n: int) -> str:
        return (
            f"(AsyncVLLMInferenceEngine pid=8) INFO 02-08 00:5{t} [loggers.py:215] Engine 000: "
            "Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 100.0 tokens/s, "
            f"Running: 1 reqs, Waiting: 0 reqs, Preemptions: {n}, GPU KV cache usage: 10.0%, "
            "Prefix cache hit rate: 50.0%"
        )

    six = (
        "(AsyncVLLMInferenceEngine pid=9) INFO 02-08 00:59:00 [loggers.py:127] Engine 000: "
        "Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 100.0 tokens/s, "
        "Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 10.0%, Prefix cache hit rate: 50.0%"
    )
    log = parse([lg("start"), line("6:00", 4), line("6:10", 0), line("6:20", 3), six])
    eng = {e.engine: e for e in log.vllm.engines}
    assert (eng["8@driver"].preemptions_total, eng["8@driver"].preemptions_max) == (7, 4)
    assert (eng["9@driver"].preemptions_total, eng["9@driver"].preemptions_max) == (None, None)
