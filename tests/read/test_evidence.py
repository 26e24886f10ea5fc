"""Which logs are a training job's: decided as each log is read (read/evidence.py)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from sitegen.read import evidence as ev
from sitegen.read.logfile import parse_log
from sitegen.redact import Redactor

PREP = b"Loading dataset openai/gsm8k\nWrote 7473 rows to /data/gsm8k/train.parquet\n"
TRACEBACK = (
    b"Traceback (most recent call last):\n"
    b'  File "/app/skyrl_train/entrypoints/main_base.py", line 12, in <module>\n'
    b"    import torch\n"
    b"ModuleNotFoundError: No module named 'torch'\n"
)
# A loguru record of another program (a preprocessing script that uses loguru too).
OTHER_LOGURU = b"2025-11-28 04:00:00.123 | INFO     | prep:main:31 - tokenized 7473 rows (pid=12)\n"
# YAML that looks like the start of a config dump but is not SkyRL's.
NOT_SKYRL_YAML = b"data:\n  path: /data/x.parquet\n  rows: 7473\n"

NOT_JOBS = {
    "empty": b"",
    "preprocessing": PREP,
    "traceback": TRACEBACK,
    "other-loguru": PREP + OTHER_LOGURU,
    "yaml": NOT_SKYRL_YAML + PREP,
    "random": random.Random(7).randbytes(300_000),
}

CYAN = b"\x1b[36m"
RESET = b"\x1b[0m"
JOBS = {
    # a job that has only just started: one line of SkyRL, Ray, vLLM or SLURM is enough
    "ray-prefix": (CYAN + b"(skyrl_entrypoint pid=5568)" + RESET + b" starting\n", ev.RAY_PREFIX),
    "ray-bare-pid": (b"(pid=4242) Started worker\n", ev.RAY_PREFIX),
    "raylet": (b"(raylet) [2025-11-28 04:00:01] spilled 3 objects\n", ev.RAY_PREFIX),
    "ray-driver": (
        b"2025-11-28 04:00:00,123\tINFO worker.py:1841 -- Started a local Ray instance.\n",
        ev.RAY_RECORD,
    ),
    "skyrl-loguru": (
        b"\x1b[32m2026-02-08 00:56:50.123\x1b[0m | \x1b[1mINFO    \x1b[0m | "
        b"\x1b[36mskyrl.train.entrypoints.main_base\x1b[0m:\x1b[36mmain\x1b[0m:\x1b[36m40\x1b[0m"
        b" - \x1b[1mstarting\x1b[0m\n",
        ev.SKYRL_RECORD,
    ),
    "step-of-any-module": (
        b"2026-02-08 00:56:50.123 | INFO     | __main__:log:9 - Step 3: \n",
        ev.SKYRL_RECORD,
    ),
    "vllm": (
        b"INFO 02-08 00:56:50 [loggers.py:127] Engine 000: Avg prompt throughput: 1.0 tokens/s, "
        b"Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, "
        b"GPU KV cache usage: 5.0%, Prefix cache hit rate: 1.0%\n",
        ev.VLLM_RECORD,
    ),
    "slurm": (
        b"slurmstepd: error: *** JOB 42210 ON node7 CANCELLED AT 2025-11-28T05:00:00 ***\n",
        ev.SLURM_STATUS,
    ),
    "slurm-node": (
        b"slurmstepd-gpu-6000ada-1: error: Detected 1 oom_kill event in StepId=123.0.\n",
        ev.SLURM_STATUS,
    ),
    "mirror": (b"WANDB_MIRROR kind=train step=1 metrics={}\n", ev.MIRROR),
    "bar": (
        b"Training Step Progress:  14%|\xe2\x96\x88\xe2\x96\x8d   | 1/7 [00:10<01:00, 10.0s/it]\n",
        ev.TRAIN_BAR,
    ),
    "config": (
        b"trainer:\n  epochs: 1\n  policy:\n    model:\n      path: Qwen/Qwen3-8B\n"
        b"generator:\n  n_samples_per_prompt: 5\n",
        ev.CONFIG_DUMP,
    ),
}


def _parse(tmp_path: Path, data: bytes, state=None):
    p = tmp_path / "job.out"
    p.write_bytes(data)
    return parse_log(p, "job.out", Redactor(), state=state)


@pytest.mark.parametrize("name", sorted(NOT_JOBS))
def test_a_log_with_nothing_of_a_job_is_no_jobs(tmp_path, name):
    log, _ = _parse(tmp_path, NOT_JOBS[name])
    assert log.evidence is None


@pytest.mark.parametrize("name", sorted(JOBS))
def test_one_line_of_skyrl_ray_vllm_or_slurm_makes_a_job(tmp_path, name):
    line, sign = JOBS[name]
    # after lines of another program, and after a YAML block that took the parser past the
    # config dump (only marker lines are read from then on, once the log is known a job's)
    log, _ = _parse(tmp_path, line)
    assert log.evidence == sign
    if sign != ev.CONFIG_DUMP:  # (a log has one config dump: the first YAML block)
        log, _ = _parse(tmp_path, NOT_SKYRL_YAML + PREP + line)
        assert log.evidence == sign


def test_a_job_whose_log_is_cut_to_its_steps_is_a_job(tmp_path):
    """A log that starts mid-run (its first lines are a metrics dict's end) is a job's."""
    data = (
        b"  'trainer/global_step': 181}\n"
        b"2026-02-08 00:56:50.123 | INFO     | skyrl_train.utils.tracking:log:208 - Step 182: \n"
        b"{'reward/avg_raw_reward': '0.5000', 'timing/step': '1.0'}\n"
    )
    log, _ = _parse(tmp_path, data)
    assert log.evidence == ev.SKYRL_RECORD and [b.step for b in log.blocks] == [182]


def test_the_decision_follows_a_growing_log(tmp_path):
    """A log that starts as preprocessing and later grows SkyRL lines becomes a job; a job's
    log that grows with lines of any kind stays one (the state carries the decision)."""
    log, state = _parse(tmp_path, PREP)
    assert log.evidence is None and state.offset == len(PREP)
    grown = PREP + JOBS["ray-driver"][0]
    log, state = _parse(tmp_path, grown, state)
    assert log.evidence == ev.RAY_RECORD and state.offset == len(grown)
    log, state = _parse(tmp_path, grown + PREP + TRACEBACK, state)
    assert log.evidence == ev.RAY_RECORD and state.offset == len(grown + PREP + TRACEBACK)
    # and read whole, the same
    assert _parse(tmp_path, grown + PREP + TRACEBACK)[0].evidence == ev.RAY_RECORD


def test_synth_logs_are_jobs(archive, truth):
    """Every log synth writes, the real-shape ones too (a wandb-only log read from its text
    lines that starts mid-run), is a job's: the sign each one gives first."""
    signs = {rel: parse_log(archive / rel, rel, Redactor())[0].evidence for rel in truth["jobs"]}
    assert all(signs.values()), signs
    assert signs["real/wandb-only/train_700200.out"] == ev.SKYRL_RECORD
