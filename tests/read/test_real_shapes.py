"""Every real line shape of docs/formats.md §2–§5, as SkyRL, vLLM, SLURM and Ray write them."""

from __future__ import annotations

import math
import pprint

import pytest

from tests.read.test_logparse import METRICS, E, P, block, lg, parse

BAR = "Training Batches Processed:  89%|\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2589 | 208/233 [1:15:34<08:27, 20.30s/it]"
STATS = (
    "Engine 000: Avg prompt throughput: 23.1 tokens/s, Avg generation throughput: 470.2 tokens/s, "
    "Running: 11 reqs, Waiting: 7 reqs, GPU KV cache usage: 48.0%, Prefix cache hit rate: 84.3%"
)


def colour_lg(msg: str, t: str = "2025-11-28 05:09:52.754") -> str:
    return (
        f"\x1b[32m{t}\x1b[0m | \x1b[1mINFO    \x1b[0m | "
        f"\x1b[36mskyrl_train.utils.tracking\x1b[0m:\x1b[36mlog\x1b[0m:\x1b[36m108\x1b[0m - \x1b[1m{msg}\x1b[0m"
    )


def test_step_block_glued_after_a_bar_is_read():
    clean = block(208, METRICS, prefix="")
    clean[0] = colour_lg("Step 208: ")
    glued = [BAR + clean[0], *clean[1:]]
    log = parse(glued)
    (b,) = log.blocks
    assert b.step == 208 and b.metrics["reward/avg_raw_reward"] == 0.3125
    assert b.line == 1 and not log.warnings


# Ray's prefixes as print_worker_logs writes them: dim, then the colour (docs/formats.md §2.2),
# which can itself be two codes (bright yellow); and the older one-code and plain forms.
RAY_PREFIXES = (
    "\x1b[2m\x1b[36m(skyrl_entrypoint pid=4242)\x1b[0m ",
    "\x1b[2m\x1b[36m(skyrl_entrypoint pid=4242, ip=10.0.0.3)\x1b[0m ",
    "\x1b[2m\x1b[1m\x1b[33m(skyrl_entrypoint pid=4242)\x1b[0m\x1b[2m ",
    "\x1b[36m(skyrl_entrypoint pid=4242)\x1b[0m ",
    "(skyrl_entrypoint pid=4242) ",
)
DIM_ENGINE = "\x1b[2m\x1b[36m(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1)\x1b[0m "


def _by_blocks(lines: list[str] | bytes):
    """The parse through the block reader (iter_blocks and its fast paths)."""
    import io

    from sitegen.read.logparse import LogParser
    from sitegen.redact import Redactor

    data = lines if isinstance(lines, bytes) else ("\n".join(lines) + "\n").encode()
    p = LogParser("job.out", Redactor(), year_hint=2026)
    p.feed_stream(io.BytesIO(data))
    return p.finish(len(data), 0.0)


@pytest.mark.parametrize("redraws", [1, 3])
@pytest.mark.parametrize("pfx", RAY_PREFIXES)
def test_a_step_after_the_bars_cr_on_its_process_line_keeps_the_process(pfx, redraws):
    """The trainer's own bar, redrawn with \\r on its Ray-prefixed line, then its Step header:
    the header is that line's process's, so its dict is read across another process's line."""
    import pprint

    dict_lines = [pfx + x for x in pprint.pformat(METRICS).splitlines()]
    dict_lines[-1] += "\x1b[0m"  # loguru closes the message's colour after its last line
    lines = [
        pfx + colour_lg("started"),
        pfx + (BAR + "\r") * redraws + colour_lg("Step 48: "),
        DIM_ENGINE + "WARNING 02-08 00:56:55 [serving.py:1] Request truncated",
        *dict_lines,
    ]
    for log in (parse(lines), _by_blocks(lines)):
        (b,) = log.blocks
        assert b.step == 48 and b.line == 2 and b.metrics["reward/avg_raw_reward"] == 0.3125
        assert not log.warnings


@pytest.mark.parametrize("pfx", [DIM_ENGINE, "\x1b[2m\x1b[36m(APIServer pid=1)\x1b[0m "])
def test_a_stats_line_after_a_cr_on_its_engine_line_keeps_the_engine(pfx):
    engine = "7@10.0.0.1" if "pid=7" in pfx else "1@driver"
    lines = [
        lg("start"),
        pfx + "Processed prompts:  50%|#####     | 4/8 [00:02<00:02, 2.0it/s]\r"
        f"INFO 02-08 00:56:55 [loggers.py:127] {STATS}",
        f"{pfx}INFO 02-08 00:57:05 [loggers.py:127] {STATS}",
    ]
    for log in (parse(lines), _by_blocks(lines)):
        (e,) = log.vllm.engines
        assert (e.engine, e.samples) == (engine, 2)


def test_a_loguru_header_coloured_with_several_codes_is_a_marker_in_a_block():
    """The block reader finds marker lines by their " | " after a time: also when a run of
    colour codes stands between them (a loguru format with nested tags)."""
    head = "\x1b[32m\x1b[1m2026-02-08 00:56:50.123\x1b[0m\x1b[32m\x1b[0m | INFO     | m:f:1 - "
    lines = [*block(1, METRICS), *["(pid=3) noise"] * 3, RAY_PREFIXES[0] + head + "Training done!"]
    assert _by_blocks(lines).end_marker == parse(lines).end_marker == "complete"


CONFIG_DUMP = [  # OmegaConf.to_yaml / yaml.dump of SkyRL's config: data first
    "data:",
    "  train_data:",
    "  - /data/train.parquet",
    "  val_data: ['/data/val.parquet']",
    "environment:",
    "  env_class: harbor",
    "generator:",
    "  n_samples_per_prompt: 8",
    "trainer:",
    "  policy:",
    "    model:",
    "      path: Qwen/Qwen3-8B",
    "  run_name: r1",
]


@pytest.mark.parametrize("pfx", ["", *RAY_PREFIXES[::2]])
@pytest.mark.parametrize("coloured", [False, True])
def test_a_config_dump_logged_as_one_record_is_read_from_its_first_key(pfx, coloured):
    """SkyRL's main_base logs the dump with one ``logger.info(yaml_text)``: its first key is
    the loguru record's message, the other lines follow with the same process's prefix,
    then the blank line of the text's own line break (docs/formats.md §4.1)."""
    first, *rest = CONFIG_DUMP
    where = "skyrl_train.entrypoints.main_base:_setup_trainer:288"
    if coloured:
        head = colour_lg(first).replace("skyrl_train.utils.tracking", where)
        rest[-1] += "\x1b[0m"
    else:
        head = f"2026-02-08 00:56:50.123 | INFO     | {where} - {first}"
    step = block(1, METRICS, prefix=pfx)
    step[0] = pfx + step[0][len(P) :]  # the header from the same process
    lines = [pfx + head, *(pfx + x for x in rest), pfx, *step]
    for log in (parse(lines), _by_blocks(lines)):
        cfg = log.config
        assert list(cfg) == ["data", "environment", "generator", "trainer"]
        assert cfg["data"] == {
            "train_data": ["/data/train.parquet"],
            "val_data": ["/data/val.parquet"],
        }
        assert cfg["generator"]["n_samples_per_prompt"] == 8
        assert cfg["trainer"] == {"policy": {"model": {"path": "Qwen/Qwen3-8B"}}, "run_name": "r1"}
        assert [b.step for b in log.blocks] == [1] and not log.warnings


def test_a_config_key_logged_after_the_first_marker_is_no_dump():
    lines = [*block(1, METRICS), lg("data:"), P + "  train_data: [x]"]
    assert parse(lines).config is None


def test_slurm_cancel_glued_after_a_bar():
    log = parse(
        [
            BAR
            + "slurmstepd: error: *** JOB 42210 ON node7 CANCELLED AT 2025-11-28T07:00:01 DUE TO TIME LIMIT ***"
        ]
    )
    assert (log.end_marker, log.end_detail) == ("cancelled", "TIME LIMIT")


# slurmstepd names itself after its node where slurmd runs several per host (SLURM's
# slurmstepd.c: "slurmstepd-%s"); seen in real job outputs of several clusters.
@pytest.mark.parametrize(
    ("lines", "marker", "detail"),
    [
        (
            [
                "slurmstepd-erc-hpc-comp001: error: *** JOB 56749 ON erc-hpc-comp001 "
                "CANCELLED AT 2022-05-09T14:41:14 DUE TO TIME LIMIT ***"
            ],
            "cancelled",
            "TIME LIMIT",
        ),
        (
            [
                "slurmstepd-irene1112: error: *** STEP 8466589.0 ON irene1112 CANCELLED AT 2023-02-22T05:15:11 ***"
            ],
            "cancelled",
            "CANCELLED",
        ),
        (
            [
                "slurmstepd-gpu-6000ada-1: error: Detected 1 oom_kill event in StepId=123.0. "
                "Some of the step tasks have been OOM Killed.",
                "slurmstepd-gpu-6000ada-1: error: *** JOB 123 ON gpu-6000ada-1 CANCELLED AT 2026-01-01T00:00:00 ***",
            ],
            "failed",
            "out of memory (oom_kill)",
        ),
        (
            [
                BAR + "slurmstepd-n001.cluster: error: *** JOB 115104 ON n001 "
                "CANCELLED AT 2024-06-04T20:55:20 DUE TO TIME LIMIT ***"
            ],
            "cancelled",
            "TIME LIMIT",
        ),
        # SLURM's req.c words a node failure with a pointer to the controller's log, and a
        # failed job without a time; versions before "ON <node>" leave it out
        (
            [
                "slurmstepd: error: *** JOB 7 ON gpu-3 CANCELLED AT 2026-05-09T14:41:14 DUE TO "
                "NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***"
            ],
            "cancelled",
            "NODE FAILURE",
        ),
        (
            [
                "slurmstepd: error: *** JOB 7 ON gpu-3 FAILED (non-zero exit code or other failure mode) ***"
            ],
            "failed",
            "SLURM: non-zero exit code or other failure mode",
        ),
        (
            ["slurmstepd: error: *** JOB 7 CANCELLED AT 2026-05-09T14:41:14 DUE TO TIME LIMIT ***"],
            "cancelled",
            "TIME LIMIT",
        ),
        # a node's memory failed under the job
        (
            [
                "slurmstepd: error: *** JOB 7 ON gpu-3 UNCORRECTABLE MEMORY ERROR AT "
                "2026-05-09T14:41:14 ***"
            ],
            "failed",
            "uncorrectable memory error",
        ),
        # a memory failure, then a plain CANCELLED: the job died of the memory failure
        (
            [
                "slurmstepd: error: *** JOB 7 ON gpu-3 UNCORRECTABLE MEMORY ERROR AT "
                "2026-05-09T14:41:14 ***",
                "slurmstepd: error: *** JOB 7 ON gpu-3 CANCELLED AT 2026-05-09T14:41:15 ***",
            ],
            "failed",
            "uncorrectable memory error",
        ),
        # SLURM's "FAILED" comes after the cause: the cause read before it stays the job's end
        (
            [
                lg("Train loop failed at global_step 2: RuntimeError: CUDA error: out of memory"),
                "slurmstepd: error: *** JOB 7 ON gpu-3 FAILED (non-zero exit code or other failure mode) ***",
            ],
            "failed",
            "Train loop failed at global_step 2: RuntimeError: CUDA error: out of memory",
        ),
        (
            [
                "slurmstepd: error: Detected 1 oom_kill event in StepId=7.0. Some of the step "
                "tasks have been OOM Killed.",
                "slurmstepd: error: *** JOB 7 ON gpu-3 FAILED (non-zero exit code or other failure mode) ***",
            ],
            "failed",
            "out of memory (oom_kill)",
        ),
        (
            [
                "slurmstepd: error: *** JOB 5 ON n1 CANCELLED AT 2026-01-01T00:00:00 DUE TO JOB REQUEUE ***"
            ],
            "cancelled",
            "JOB REQUEUE",
        ),
        (
            [
                "slurmstepd: error: Detected 1 oom_kill event in StepId=5.batch. Some of the step tasks have been OOM Killed.",
                "slurmstepd: error: *** JOB 5 ON n1 CANCELLED AT 2026-01-01T00:00:00 ***",
            ],
            "failed",
            "out of memory (oom_kill)",
        ),
    ],
)
def test_slurm_end_lines_as_slurmstepd_writes_them(lines, marker, detail):
    log = parse([lg("start"), *lines])
    assert (log.end_marker, log.end_detail) == (marker, detail)
    assert not log.warnings


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (
            "slurmstepd: error: *** JOB 7 ON gpu-3 FAILED (non-zero exit code or other failure mode) ***",
            "failed (non-zero exit code",
        ),
        (
            "slurmstepd: error: *** JOB 7 ON gpu-3 UNCORRECTABLE MEMORY ERROR AT 2026-05-09T14:41:14 ***",
            "failed (uncorrectable memory error)",
        ),
        (
            "slurmstepd: error: Detected 1 oom_kill event in StepId=7.0. Some of the step tasks "
            "have been OOM Killed.",
            "failed (out of memory (oom_kill))",
        ),
    ],
)
def test_slurm_failing_a_job_whose_training_completed_keeps_it_complete_with_a_warning(line, said):
    log = parse([lg("start"), lg("Training done!"), line])
    assert (log.end_marker, log.end_detail) == ("complete", None)
    (w,) = log.warnings
    assert w.line == 3 and said in w.message


def test_model_text_that_looks_like_a_header_is_not_a_marker():
    log = parse(
        [
            lg("Example generated: see"),
            "the model says 2026-01-01 00:00:00.000 | INFO | m:f:1 - Step 3: ",
        ]
    )
    assert log.blocks == () and log.metric_form == ""


@pytest.mark.parametrize(
    ("prefix", "engine"),
    [
        ("2026-05-12T08:01:39.331095044Z (APIServer pid=1) ", "1@driver"),
        ("(pid=1234) ", "1234@driver"),
        (
            "(VllmAsyncGenerationWorker pid=5, ip=10.0.0.2) (EngineCore_DP0 pid=6) (RayWorkerWrapper pid=7) ",
            "5@10.0.0.2",
        ),
        ("\x1b[36m(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1)\x1b[0m ", "7@10.0.0.1"),
    ],
)
def test_every_prefix_form_reads_the_engine(prefix, engine):
    log = parse([lg("start"), f"{prefix}INFO 02-08 00:56:55 [loggers.py:271] {STATS}"])
    (e,) = log.vllm.engines
    assert e.engine == engine and e.samples == 1 and e.prefix_samples == 1


def _stats(index: str, gen: float, first: str = "Engine") -> str:
    head = f"{first} {index}:" if first == "Engine" else f"{index} Engines Aggregated:"
    return (
        f"INFO 02-08 00:56:55 [loggers.py:127] {head} Avg prompt throughput: 1.0 tokens/s, "
        f"Avg generation throughput: {gen} tokens/s, Running: 3 reqs, Waiting: 0 reqs, "
        "GPU KV cache usage: 5.0%, Prefix cache hit rate: 2.0%"
    )


@pytest.mark.parametrize(
    ("prefix", "process"),
    [
        ("2026-05-12T08:01:39.331095044Z (APIServer pid=1) ", "1@driver"),
        (DIM_ENGINE, "7@10.0.0.1"),
        ("(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1) (EngineCore_DP0 pid=9) ", "7@10.0.0.1"),
    ],
)
def test_engines_logged_by_one_process_are_told_apart_by_their_index(prefix, process):
    """vLLM's data parallelism in one process (or an API server in front of several engine
    cores) logs Engine 000, Engine 001, … from one process: each is an engine of its own,
    named by the process and its index; the aggregated line stays cluster totals."""
    lines = [lg("start")]
    for k in range(3):
        lines += [prefix + _stats("000", 100.0 + k), prefix + _stats("001", 200.0 + k)]
    lines.append(prefix + _stats("2", 600.0, first="Aggregated"))
    lines.append(prefix + _stats("001", 203.0) + "\x1b[32m [repeated 2x across cluster]\x1b[0m")
    for log in (parse(lines), _by_blocks(lines)):
        got = {e.engine: (e.samples, e.gen_tps_sum) for e in log.vllm.engines}
        assert got == {
            f"{process}:engine000": (3, pytest.approx(303.0)),
            f"{process}:engine001": (4, pytest.approx(806.0)),
        }
        assert log.vllm.aggregated_lines == 1 and log.vllm.suppressed_copies == 2


def test_one_engine_a_process_is_named_by_the_process_alone():
    lines = [lg("start"), E + _stats("000", 1.0), P + _stats("000", 2.0), _stats("000", 3.0)]
    lines.append(_stats("001", 4.0))  # no prefix: this log's engines, by index as before
    for log in (parse(lines), _by_blocks(lines)):
        assert [e.engine for e in log.vllm.engines] == [
            "4242@driver",
            "7@10.0.0.1",
            "job.out:engine000",
            "job.out:engine001",
        ]


def test_dedup_suffix_after_the_last_field_keeps_the_field():
    line = f"(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1) INFO 02-08 00:56:55 [loggers.py:127] {STATS}\x1b[32m [repeated 3x across cluster]\x1b[0m"
    log = parse([lg("start"), line])
    (e,) = log.vllm.engines
    assert e.prefix_samples == 1 and e.prefix_pct_sum == pytest.approx(84.3)
    assert log.vllm.suppressed_copies == 3


def test_v0_engine_line():
    v0 = (
        "INFO 03-18 10:12:01 [metrics.py:486] Avg prompt throughput: 0.0 tokens/s, Avg generation "
        "throughput: 29.9 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 2 reqs, GPU KV cache "
        "usage: 0.4%, CPU KV cache usage: 0.0%."
    )
    log = parse([lg("start", "2026-03-18 10:12:00.000"), v0])
    (e,) = log.vllm.engines
    assert e.engine == "job.out:engine" and e.gen_tps_sum == 29.9 and e.waiting_sum == 2
    assert e.kv_pct_sum == 0.4 and log.vllm.timeline[0].samples == 1


def test_negative_batch_counts_are_read_as_written_with_a_note():
    log = parse(
        [
            lg("Starting batch generation for 8 trials (mode=training)"),
            lg("Exception breakdown: {'AgentTimeoutError': 9}"),
            lg(
                "Batch generation complete: -1/8 successful, 8 failed instances, 0 masked (excluded from baseline)"
            ),
        ]
    )
    assert (log.batches.batches, log.batches.successful, log.batches.failed) == (1, -1, 8)
    assert log.batches.exceptions == {"AgentTimeoutError": 9}
    assert any("negative" in w.message and w.line == 3 for w in log.warnings)


def test_mirror_without_header_and_with_null_and_string_values():
    log = parse(
        [
            P
            + 'WANDB_MIRROR kind=train step=3 metrics={"a": null, "b": "x", "c": "0.5", "reward/avg_raw_reward": 0.25, "big": 100000000000000000000000}',
        ]
    )
    assert log.metric_form == "mirror"
    (b,) = log.blocks
    assert b.metrics == {"c": 0.5, "reward/avg_raw_reward": 0.25, "big": 1e23}


def test_huge_values_are_warnings_not_tracebacks():
    log = parse(
        [
            lg('WANDB_MIRROR kind=train step=1 metrics={"ok": 1, "huge": ' + "9" * 400 + "}"),
            lg("Exception breakdown: {'X': 1e400}"),
            lg("Batch generation complete: 1/1 successful, 0 failed instances, 0 masked"),
        ]
    )
    assert log.blocks[0].metrics == {"ok": 1}
    msgs = [w.message for w in log.warnings]
    assert any("'huge'" in m for m in msgs) and any("Exception breakdown" in m for m in msgs)
    assert log.batches.exceptions == {}


def test_new_module_names_read_alike():
    line = f"{P}2026-02-08 00:56:50.123 | INFO     | skyrl.train.utils.tracking:log:208 - Step 4: "
    log = parse([line, P + "{'reward/avg_raw_reward': '0.5000', 'trainer/global_step': 4}"])
    assert [b.step for b in log.blocks] == [4]


SAVED = "Successfully saved checkpoint for global_step_{0} to: /ck/global_step_{0}"


@pytest.mark.parametrize(
    ("saves", "final"),
    [
        # the older synchronous trainer and the fully-async one: last + 1, saved always
        ([232, 234], 234),
        ([230, 233, 234], 234),  # the last step saved on its interval too
        # the newer synchronous trainer: named after the last step, unless it was saved
        ([232, 233], 233),
    ],
)
def test_every_checkpoint_is_listed_and_the_final_save_marked(saves, final):
    lines = [*block(232, {"trainer/global_step": 232})]
    lines += [lg(SAVED.format(s)) for s in saves if s <= 232]
    lines += [*block(233, {"trainer/global_step": 233})]
    lines += [f"{P}Training Batches Processed: 100%|##########| 233/233 [1:15:34<00:00, 20.30s/it]"]
    lines += [lg(SAVED.format(s)) for s in saves if s > 232]
    lines += [lg("Saved final checkpoint."), lg("Training done!")]
    log = parse(lines)
    assert [(c.step, c.final) for c in log.checkpoints] == [(s, s == final) for s in saves]
    assert [b.step for b in log.blocks] == [232, 233] and not log.warnings


def test_a_final_save_whose_save_line_is_lost_marks_no_checkpoint():
    log = parse(
        [
            *block(230, {"trainer/global_step": 230}),
            lg(SAVED.format(230)),
            *block(233, {"trainer/global_step": 233}),
            lg("Saved final checkpoint."),
        ]
    )
    assert [(c.step, c.final) for c in log.checkpoints] == [(230, False)]
    assert [w.line for w in log.warnings] == [6] and "final checkpoint" in log.warnings[0].message
    plain = parse([*block(233, {"trainer/global_step": 233}), lg(SAVED.format(233))])
    assert [(c.step, c.final) for c in plain.checkpoints] == [(233, False)]


@pytest.mark.parametrize(
    ("loguru", "vllm", "year"),
    [
        ("2026-01-01 00:00:05.000", "12-31 23:59:59", 2025),
        ("2025-12-31 23:59:00.000", "01-01 00:00:30", 2026),
    ],
)
def test_vllm_dates_across_new_year(loguru, vllm, year):
    log = parse([lg("x", loguru), f"INFO {vllm} [loggers.py:127] {STATS}"])
    (bucket,) = log.vllm.timeline
    # A wrong year would put the sample a year away from the loguru time.
    assert abs(bucket.t_s) < 120 and log.first_time.year == int(loguru[:4])


@pytest.mark.parametrize(
    ("line", "word"),
    [
        (lg("Step 12: {'a': 1} trailing"), "Step N:"),
        (lg("WANDB_MIRROR kind=train step=x metrics={}"), "WANDB_MIRROR"),
        (lg("WANDB_MIRROR kind=train step=3 metrics={broken"), "WANDB_MIRROR"),
        (lg("Batch generation complete: many/8 successful"), "Batch generation complete"),
        (lg("Finished: 'step', time cost: soon"), "Finished:"),
        ("Engine 000: Avg prompt throughput: 1.0 tokens/s, Running: 1 reqs", "vLLM stats"),
        (
            "INFO 02-08 00:56:55 [loggers.py:127] Engine 000: Avg prompt throughput: 1.0 tokens/s",
            "vLLM stats",
        ),
        (
            "slurmstepd: error: *** JOB 5 STEPD TERMINATED ON n1 AT 2026 DUE TO JOB NOT ENDING ***",
            "slurmstepd",
        ),
    ],
)
def test_an_unreadable_marker_line_is_a_warning_with_its_line(line, word):
    log = parse([lg("start"), line])
    assert [w.line for w in log.warnings] == [2], log.warnings
    assert word.split()[0].lower() in log.warnings[0].message.lower()


def _timed_step(n_bar: int | None, total: int, reward: float, step_s: float) -> list[str]:
    out = [
        lg("Started: 'step'"),
        lg("Started: 'generate'"),
        lg(f"Finished: 'generate', time cost: {step_s / 2:.2f}s"),
        lg(
            f"reward/avg_pass_at_5: 0.6533, reward/avg_raw_reward: {reward}, reward/mean_positive_reward: 0.9"
        ),
        lg(f"Finished: 'fwd_logprobs_values_reward', time cost: {step_s / 4:.2f}s"),
        lg("Finished: 'dump_data_batch', time cost: 1.00s"),
        lg(f"Finished: 'step', time cost: {step_s:.2f}s"),
        lg("{'policy_loss': -0.0123, 'policy_lr': 9.99e-07, 'raw_grad_norm': 0.5}"),
    ]
    if n_bar is not None:
        out.append(
            f"{P}Training Batches Processed:  50%|#####     | {n_bar}/{total} [00:10<00:10, 5.00s/it]"
        )
    return out


def test_log_without_metric_dicts_reads_values_from_text():
    lines = [lg("No checkpoint found, starting training from scratch")]
    lines += _timed_step(1, 7, 0.25, 100.0) + _timed_step(2, 7, 0.5, 80.0)
    log = parse(lines)
    assert log.metric_form == "text" and log.planned_steps == 7
    assert [b.step for b in log.blocks] == [1, 2]
    m = log.blocks[1].metrics
    assert m["timing/step"] == 80.0 and m["timing/generate"] == 40.0
    assert m["timing/fwd_logprobs_values_reward"] == 20.0 and "timing/dump_data_batch" not in m
    assert m["reward/avg_raw_reward"] == 0.5 and m["reward/avg_pass_at_5"] == 0.6533
    assert m["policy/policy_lr"] == 9.99e-07  # full precision (the console block says '0.0000')
    assert log.mid_run is None


def test_metric_dict_wins_over_text():
    lines = _timed_step(1, 7, 0.25, 100.0) + block(
        1, {"reward/avg_raw_reward": "0.1250", "timing/step": "99.0000"}
    )
    log = parse([lg("No checkpoint found, starting training from scratch"), *lines])
    assert log.metric_form == "console" and log.blocks[0].metrics["reward/avg_raw_reward"] == 0.125


def test_text_steps_numbered_from_the_bar_in_a_log_that_starts_mid_run():
    log = parse(_timed_step(182, 233, 0.1, 10.0) + _timed_step(183, 233, 0.2, 10.0))
    assert [b.step for b in log.blocks] == [182, 183]
    assert log.mid_run is not None and "182" in log.mid_run


def test_log_starting_mid_run_is_flagged_and_a_normal_resume_is_not():
    mid = parse(block(182, METRICS) + block(183, METRICS))
    assert mid.mid_run == "first step 182, with no start or resume line"
    resumed = parse([lg("Resuming from global_step: 181"), *block(182, METRICS)])
    assert resumed.mid_run is None
    banner = parse(
        [
            "Output is truncated. View as a scrollable element or open in a text editor.",
            *block(1, METRICS),
        ]
    )
    assert banner.mid_run is not None and "line 1" in banner.mid_run


def test_eval_only_block_at_the_resumed_step_is_not_a_step():
    log = parse(
        [
            lg("Resuming from global_step: 47"),
            *block(47, {"eval/all/avg_score": "0.4000"}),
            *block(48, {**METRICS, "eval/all/avg_score": "0.5000", "timing/eval": "12.0000"}),
        ]
    )
    assert [b.step for b in log.blocks] == [48]
    assert [(b.step, b.metrics["eval/all/avg_score"]) for b in log.eval_blocks] == [
        (47, 0.4),
        (48, 0.5),
    ]
    assert not math.isnan(log.blocks[0].metrics["timing/eval"])


SINGLE_LINE_MARKERS = [
    lg(
        "Batch generation complete: 6/8 successful, 2 failed instances, 0 masked (excluded from baseline)"
    ),
    lg(
        'WANDB_MIRROR kind=train step=3 metrics={"reward/avg_raw_reward": 0.5, "timing/step": 10.0}'
    ),
    lg("Finished: 'step', time cost: 812.35s"),
    "(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1) INFO 02-08 00:56:55 [loggers.py:127] " + STATS,
    "slurmstepd: error: *** JOB 5 ON n1 CANCELLED AT 2026-01-01T00:00:00 DUE TO TIME LIMIT ***",
]
MARKER_WORDS = (
    "Batch generation complete",
    "WANDB_MIRROR",
    "Finished: '",
    "Engine 000:",
    "slurmstepd:",
)


def _summary(log) -> tuple:
    return (
        [(b.step, sorted(b.metrics.items())) for b in log.blocks],
        log.batches,
        sum(e.samples for e in log.vllm.engines),
        log.end_marker,
    )


@pytest.mark.parametrize("index", range(len(SINGLE_LINE_MARKERS)))
def test_a_damaged_marker_line_is_read_or_warned_never_lost(index):
    """Cut a marker line anywhere after its marker word: the value survives or a warning names the line."""
    line = SINGLE_LINE_MARKERS[index]
    start = line.index(MARKER_WORDS[index]) + len(MARKER_WORDS[index])
    whole = parse([lg("Starting batch generation for 8 trials (mode=training)"), line])
    for cut in range(start, len(line)):
        log = parse([lg("Starting batch generation for 8 trials (mode=training)"), line[:cut]])
        warned = any(w.line == 2 for w in log.warnings)
        assert warned or _summary(log) == _summary(whole), (cut, line[:cut])


@pytest.mark.parametrize(
    "lines",
    [
        # the fully-async trainer: load_checkpoints finds none, then it logs its step anyway
        [
            "No checkpoint found, starting training from scratch",
            "Resumed training from global_step 0",
        ],
        # the synchronous trainer with trainer.resume_mode: none
        ["Checkpoint resumption disabled, starting training from scratch"],
    ],
)
def test_a_start_from_scratch_is_no_resume(lines):
    log = parse([*map(lg, lines), *block(1, METRICS)])
    assert (log.fresh_start, log.resumed_from, log.resume_path) == (True, None, None)
    assert [b.step for b in log.blocks] == [1] and log.mid_run is None


def test_a_resume_from_a_checkpoint_is_still_one():
    log = parse(
        [
            lg("Loading checkpoint from: /ck/global_step_4"),
            lg("Resumed training from global_step 4"),
            *block(5, METRICS),
        ]
    )
    assert (log.fresh_start, log.resumed_from) == (False, 4)


def _attempt(steps: range, reward: str, hour: int, ok: int) -> list[str]:
    """One attempt's steps, each after a generation batch of 8 with ``ok`` successes."""
    out = []
    for s in steps:
        t = f"2026-02-08 {hour:02d}:{s:02d}:00.000"
        out += [
            lg("Starting batch generation for 8 trials (mode=training)", t),
            lg(
                f"Batch generation complete: {ok}/8 successful, {8 - ok} failed instances, 0 masked",
                t,
            ),
            lg(f"Step {s}: ", t),
            *(
                P + x
                for x in pprint.pformat({**METRICS, "reward/avg_raw_reward": reward}).splitlines()
            ),
        ]
    return out


@pytest.mark.parametrize(
    ("restart", "start"),
    [
        (["Loading checkpoint from: /ck/global_step_5", "Resuming from global_step: 5"], 5),
        (["No checkpoint found, starting training from scratch"], 0),
    ],
)
def test_an_attempt_that_died_within_the_job_gives_way_to_the_next(restart, start):
    """A job script that runs the trainer again after a crash: the next attempt resumes (or
    starts over) and logs steps the first one had logged. Its values, times and batches are
    the steps' (the first attempt's were merged in, and timed and counted the steps)."""
    lines = [
        lg("No checkpoint found, starting training from scratch"),
        *_attempt(range(1, 8), "0.1000", 10, 1),
        "Traceback (most recent call last):",
        "RuntimeError: NCCL timeout",
        *(lg(x, "2026-02-08 11:00:00.000") for x in restart),
        *_attempt(range(start + 1, 10), "0.9000", 11, 7),
    ]
    log = parse(lines)
    redone = range(start + 1, 10)
    assert [b.step for b in log.blocks] == list(range(1, 10))
    assert all(
        (b.metrics["reward/avg_raw_reward"] == 0.9) == (b.step in redone) for b in log.blocks
    )
    assert all((b.time.hour == 11) == (b.step in redone) for b in log.blocks)
    assert {s: b.successful for s, b in log.batches_per_step.items()} == {
        s: 7 if s in redone else 1 for s in range(1, 10)
    }
    assert log.batches.batches == 7 + len(redone)  # every batch ran: the totals keep them
    (w,) = log.warnings
    assert w.line == lines.index(lg(restart[0], "2026-02-08 11:00:00.000")) + 1
    assert f"after step {start} " in w.message
    # the job's own start stays its first attempt's (a fresh start: no resume to stitch by)
    assert log.fresh_start and log.resumed_from is None and log.resume_path is None


def _died(end: list[str]) -> list[str]:
    """A job whose first attempt logs steps 1-7, then ``end`` (how it died), then a second
    attempt that resumes from step 5's checkpoint and logs steps 6-9, each after a batch of
    8 with 7 successes; the job still runs."""
    return [
        lg("Loading checkpoint from: /ck/global_step_3"),
        lg("Resuming from global_step: 3"),
        *_attempt(range(4, 8), "0.1000", 10, 1),
        *end,
        lg("Loading checkpoint from: /ck/global_step_5", "2026-02-08 11:00:00.000"),
        lg("Resuming from global_step: 5", "2026-02-08 11:00:00.000"),
        *_attempt(range(6, 10), "0.9000", 11, 7),
    ]


def test_a_restart_within_the_job_leaves_the_job_s_resume_and_end_as_the_next_attempt_makes_them():
    """The first attempt's end (its error) is not the job's, which runs on; its batches after
    its last step belong to no step of the next attempt; and the job's resume is its own
    start's, the one its run's chain is stitched by."""
    batches = [
        lg("Starting batch generation for 8 trials (mode=training)", "2026-02-08 10:59:00.000"),
        lg(
            "Batch generation complete: 0/8 successful, 8 failed instances, 0 masked",
            "2026-02-08 10:59:00.000",
        ),
    ]
    died = [
        lg(
            "Train loop failed at global_step 8: RuntimeError: NCCL timeout",
            "2026-02-08 10:59:30.000",
        )
    ]
    log = parse(_died(batches * 2 + died))
    assert (log.end_marker, log.end_detail) == (None, None)
    per = {s: (b.batches, b.successful, b.failed) for s, b in log.batches_per_step.items()}
    assert per[6] == (1, 7, 1) and per[4] == (1, 1, 7)
    assert log.batches.batches == 4 + 2 + 4  # every batch ran: the totals keep them
    assert (log.resumed_from, log.resume_path) == (3, "/ck/global_step_3")
    assert not log.fresh_start


def test_a_restart_from_an_earlier_checkpoint_keeps_the_job_s_own_resume():
    """The second attempt loads a checkpoint from before the first attempt's own resume: its
    load drops every step logged, and its resume line is a restart's still (the job resumed
    from step 10, and its resume path is step 10's)."""
    lines = [
        lg("Loading checkpoint from: /ck/global_step_10"),
        lg("Resumed training from global_step 10"),
        *_attempt(range(11, 13), "0.1000", 10, 1),
        lg("Loading checkpoint from: /ck/global_step_5", "2026-02-08 11:00:00.000"),
        lg("Resumed training from global_step 5", "2026-02-08 11:00:00.000"),
        *_attempt(range(6, 8), "0.9000", 11, 7),
    ]
    log = parse(lines)
    assert [b.step for b in log.blocks] == [6, 7]
    assert (log.resumed_from, log.resume_path, log.fresh_start) == (10, "/ck/global_step_10", False)


# Ray names its daemons on another node than the driver's with that node's ip
# (print_worker_logs: "(raylet, ip=10.0.0.3) "), coloured like any prefix.
DAEMON_LINES = (
    "(raylet, ip=10.0.0.3) [2026-02-08 00:56:50,200 E 123 456] (raylet) node_manager.cc:3069: "
    "1 Workers (tasks / actors) killed due to memory pressure (OOM)",
    "\x1b[2m\x1b[33m(raylet, ip=10.0.0.3)\x1b[0m [2026-02-08 00:56:50,200 E 123 456] spilled",
    "(autoscaler +1m2s, ip=10.0.0.3) Resized to 8 CPUs.",
)


@pytest.mark.parametrize("daemon", DAEMON_LINES)
def test_a_remote_daemon_line_inside_a_driver_dict_does_not_cut_it(daemon):
    from tests.read.test_logparse import _read

    lines = block(3, METRICS, prefix="")
    lines[0] = lines[0].removeprefix(P)  # the driver's own output: no prefix
    lines.insert(3, daemon)
    data = ("\n".join(lines) + "\n").encode()
    for log in (parse(lines), _read(data, 1 << 20).finish(len(data), 0.0)):
        (b,) = log.blocks
        assert b.step == 3 and b.metrics["reward/avg_raw_reward"] == 0.3125 and not log.warnings


@pytest.mark.parametrize(
    "pfx",
    [
        "\x1b[2m\x1b[36m(pid=1234)\x1b[0m ",
        "\x1b[2m\x1b[36m(pid=1234, ip=10.0.0.1)\x1b[0m ",
        "\x1b[2m\x1b[1m\x1b[33m(pid=1234)\x1b[0m\x1b[2m ",
    ],
)
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
@pytest.mark.parametrize("chunk", [7, 1 << 20])
def test_a_record_after_a_cr_keeps_a_bare_pid_prefix_under_two_colour_codes(pfx, eol, chunk):
    """Ray's prefix for a task (no actor name) after its colour codes: the record a bar's
    ``\\r`` puts on the prefixed line is still that process's."""
    import io

    from sitegen.read.lines import iter_raw_lines, split_line

    bar = "Processed prompts:  50%|#####     | 4/8 [00:02<00:02, 2.0it/s]"
    data = f"{pfx}{bar}\r{bar}\rINFO 02-08 00:56:55 [loggers.py:127] {STATS}{eol}".encode()
    got = [split_line(n, raw) for n, raw, _ in iter_raw_lines(io.BytesIO(data), chunk)]
    assert [(ln.number, ln.pid, ln.emitter) for ln in got] == [
        (1, "1234", ""),
        (1, "1234", ""),
        (1, "1234", "vllm"),
    ]
    ip = "10.0.0.1" if "ip=" in pfx else None
    assert got[-1].ip == ip and got[-1].message == STATS


@pytest.mark.parametrize(
    "suffix",
    [
        "\x1b[32m [repeated 2x across cluster]\x1b[0m",  # green from its space on
        " \x1b[32m[repeated 2x across cluster]\x1b[0m",  # green from its "[" on
        "\x1b[32m[repeated 2x across cluster]\x1b[0m",
        " [repeated 2x across cluster]",
    ],
)
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_a_stats_line_with_either_dedup_suffix_is_one_sample_and_its_copies(suffix, eol):
    lines = [lg("start"), f"{DIM_ENGINE}INFO 02-08 00:56:55 [loggers.py:127] {STATS}{suffix}"]
    data = eol.join(lines).encode() + eol.encode()
    for log in (parse(data), _by_blocks(data)):
        (e,) = log.vllm.engines
        assert (e.engine, e.samples, e.prefix_pct_sum) == ("7@10.0.0.1", 1, pytest.approx(84.3))
        assert log.vllm.suppressed_copies == 2 and not log.warnings


@pytest.mark.parametrize("pfx", ["", RAY_PREFIXES[0]])
def test_a_config_dump_in_crlf_lines_keeps_its_first_section(pfx):
    first, *rest = CONFIG_DUMP
    head = pfx + colour_lg(first).replace("skyrl_train.utils.tracking", "main_base:_setup:288")
    data = "\r\n".join([head, *(pfx + x for x in rest), pfx, lg("Step 1: ")]) + "\r\n"
    for log in (parse(data.encode()), _by_blocks(data.encode())):
        cfg = log.config
        assert list(cfg) == ["data", "environment", "generator", "trainer"]
        assert cfg["data"]["train_data"] == ["/data/train.parquet"]


def test_the_final_save_named_after_the_last_step_as_upstream_logs_it():
    """Upstream's synchronous trainer (skyrl/train/trainer.py) steps back to the last step
    before its final save; save_checkpoints logs its parts, then the save, then the trainer
    says so (and, with hf_save_interval, "Saved final model.")."""
    ck = "/ck/global_step_233"
    lines = [*block(232, {"trainer/global_step": 232}), lg(SAVED.format(232))]
    lines += [*block(233, {"trainer/global_step": 233})]
    lines += [
        lg(f"Saved dataloader state to {ck}/data.pt"),
        lg(f"Saved trainer state to {ck}/trainer_state.pt"),
        lg(SAVED.format(233)),
        lg("Saved final checkpoint."),
        lg("Saved final model."),
    ]
    for log in (parse(lines), _by_blocks(lines)):
        assert [(c.step, c.final) for c in log.checkpoints] == [(232, False), (233, True)]
        assert not log.warnings
