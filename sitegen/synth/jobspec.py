"""What a synthetic SkyRL job does (:class:`JobSpec`) and what its log holds (:class:`LogTruth`).

:func:`sitegen.synth.logs.write_log` turns a spec into a log and returns its truth:
exactly the values a correct parser must find."""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

import msgspec

N_SAMPLES = 8  # a prompt group's samples (generator.n_samples_per_prompt)
GROUPS = 4  # prompt groups a step


class JobSpec(msgspec.Struct, frozen=True):
    """One synthesized job: where its log goes, its steps, how it ends and how it is written."""

    path: str  # relative to the archive
    run_name: str
    first_step: int  # first step this job logs
    last_step: int  # last complete block it logs
    end: str  # complete | cancelled | failed | running | incomplete
    cancel_reason: str | None = "TIME LIMIT"
    form: str = "console"  # console | mirror | both
    split_timing: bool = False
    async_trainer: bool = True
    colour: bool = True
    vllm_shape: str = "old"  # old | new
    engines: int = 2
    resume_from: int | None = None  # checkpoint step the job resumes from
    ckpt_interval: int = 4
    ckpt_root: str = ""  # where it saves checkpoints ("": /ckpt/<run_name>)
    start: datetime = datetime(2026, 2, 8, 0, 0, 0)
    pad_bytes: int = 0
    long_line_bytes: int = 0
    job_id: int = 561773
    eval_interval: int = 0
    payload: str = ""  # planted in the config and a batch exception label (injection tests)
    # the real shapes of docs/formats.md §2–§6 (all off: the original jobs stay byte for byte)
    real: bool = False  # driver without Ray prefix, records glued after tqdm bars, skyrl.train
    # module names, every vLLM prefix form and the V0 line, a negative batch count, the
    # synchronous trainer's timers, the final global_step_{last+1} checkpoint
    text_only: bool = False  # wandb-only logger: values only in Finished:/reward/status lines
    mid_run: bool = False  # a notebook's tail: no preamble, config, start or resume line
    headerless_mirror: bool = False  # WANDB_MIRROR lines with a Ray prefix only, null/str values
    oom: bool = False  # ends with an oom_kill event and a plain CANCELLED
    planned_steps: int | None = None  # the progress bar's total (real jobs)
    # real: the trainer runs in a Ray actor (its lines carry a Ray prefix); a record glued
    # after one of the driver's bars loses it, or keeps it after the bar, in turn
    ray_entrypoint: bool = False
    skyrl_train_names: bool = False  # real: the skyrl_train.* module names of 2025
    # real, complete: the newer synchronous trainer's final save, named after the last
    # step (global_step_{last}) and skipped when that step was saved
    final_at_last: bool = False

    @property
    def ckpt(self) -> str:
        return self.ckpt_root or f"/ckpt/{self.run_name}"


@dataclass
class VllmTruth:
    """The vLLM stat lines of one log, as a reader must tally them."""

    samples: int = 0
    engines: set = field(default_factory=set)
    sums: Counter = field(default_factory=Counter)
    waiting_max: float = 0.0
    aggregated: int = 0
    suppressed: int = 0
    step_stats: dict[int, dict] = field(default_factory=dict)
    prefix_samples: int | None = None  # samples with a prefix hit rate (None: all; not written)

    def to_json(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        if self.prefix_samples is None:
            del out["prefix_samples"]
        steps = {str(k): v for k, v in self.step_stats.items()}
        return {
            **out,
            "engines": sorted(self.engines),
            "sums": dict(self.sums),
            "step_stats": steps,
        }


@dataclass
class LogTruth:
    """What the synthesizer wrote in one log: the ground truth tests compare with."""

    path: str
    end: str
    first_step: int | None
    last_step: int | None
    steps: list[int] = field(default_factory=list)
    metrics: dict[int, dict] = field(default_factory=dict)  # step -> values a parser must read
    resumed_from: int | None = None
    checkpoints: list[int] = field(default_factory=list)
    batches: Counter = field(default_factory=Counter)
    batch_exceptions: Counter = field(default_factory=Counter)
    batches_per_step: dict[int, Counter] = field(default_factory=dict)
    eval_batches: int = 0
    vllm: VllmTruth = field(default_factory=VllmTruth)
    secrets: list[str] = field(default_factory=list)
    run_name: str | None = ""
    model: str | None = ""
    n_samples: int | None = N_SAMPLES
    train_data: list[str] | None = None  # the dumped config's data.train_data (None: no dump)
    metric_form: str = "console"
    mid_run: bool = False
    final_checkpoint: int | None = None  # the save after the loop (also in checkpoints)
    planned_steps: int | None = None
    status_detail: str | None = None
    # step -> time its metric block was logged: where synth places the trials of each step
    # (not part of synth-truth.json; the site's attribution is tested against the trials)
    block_times: dict[int, datetime] = field(default_factory=dict, repr=False)

    def to_json(self) -> dict:
        """Every field but ``block_times``, in order, as synth-truth.json holds it."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "block_times"}
        return {
            **out,
            "metrics": {
                str(k): {m: _jsonable(v) for m, v in d.items()} for k, d in self.metrics.items()
            },
            "batches": dict(self.batches),
            "batch_exceptions": dict(self.batch_exceptions),
            "batches_per_step": {str(k): dict(v) for k, v in sorted(self.batches_per_step.items())},
            "vllm": self.vllm.to_json(),
        }


def _jsonable(v: float | int) -> float | int | str:
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)  # "nan", "inf"
    return v


def numbered(
    path: str, run: str, first: int, last: int, end: str, start: datetime, **kw: Any
) -> JobSpec:
    """A job whose id is the number its log's name ends in (``train_600100.out``: 600100)."""
    job_id = int(path.rsplit("_", 1)[1].split(".")[0])
    return JobSpec(path, run, first, last, end, job_id=job_id, start=start, **kw)


def fake_secrets(rng: random.Random) -> dict[str, str]:
    """Credential-shaped strings the site must never publish."""
    alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

    def s(n: int, chars: str = alnum) -> str:
        return "".join(rng.choice(chars) for _ in range(n))

    return {
        "WANDB_API_KEY": s(40, "0123456789abcdef"),
        "HF_TOKEN": "hf_" + s(34),
        "OPENAI_API_KEY": "sk-" + s(40),
        "AWS_ACCESS_KEY_ID": "AKIA" + s(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
        "DAYTONA_API_KEY": "dtn_" + s(32),
        "DB_PASSWORD": "pw" + s(14),
    }
