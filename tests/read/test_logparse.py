"""Hand-written snippets of every log variant of formats.md §2–5."""

import io
import math
import pprint

from sitegen.read.lines import iter_raw_lines
from sitegen.read.logparse import LogParser
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
    assert eng["8@driver"].preemptions_max == 4
    assert (
        log.vllm.aggregated_lines == 1
        and log.vllm.suppressed_copies == 3
        and log.vllm.step_lines == 1
    )
    assert sum(b.samples for b in log.vllm.timeline) == 2


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
