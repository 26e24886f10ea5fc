"""The jobs ``sitegen synth`` writes the way real SkyRL, vLLM and SLURM output looks.

Their shapes: docs/formats.md §2–§6.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sitegen.synth.jobspec import JobSpec

REAL_TRIALS_OWNER = "real/sync-glued"
NOTEBOOK_CHAIN = "real/notebook-chain"  # two jobs: one run, the second resumed from the first


def real_specs(steps: int, c: int, t0: datetime) -> list[JobSpec]:
    """Jobs written as real SkyRL, vLLM and SLURM output looks (docs/formats.md §2–§6)."""
    day = timedelta(days=1)
    half = max(4, steps // 2)
    chain_last = next(n for n in range(steps + 1, steps + c + 2) if n % c)  # not a save step
    return [
        # The synchronous trainer's console log from a driver outside Ray: records glued
        # after tqdm bars, every vLLM prefix form and the V0 line, two engines logged by one
        # API server, a negative batch count, skyrl.train module names, the final
        # global_step_{last+1} checkpoint; Harbor trials.
        JobSpec(
            f"{REAL_TRIALS_OWNER}/train_700100.out",
            "sync-glued",
            1,
            steps,
            "complete",
            real=True,
            async_trainer=False,
            engines=4,
            ckpt_interval=c,
            job_id=700100,
            start=t0 + 40 * day,
            planned_steps=steps,
        ),
        # upstream's default (wandb-only) logger, kept as a notebook's last lines: values
        # only in text lines, first step > 1 with no start line; requeued, glued to a bar
        JobSpec(
            "real/wandb-only/train_700200.out",
            "wandb-only",
            steps // 2 + 1,
            steps,
            "cancelled",
            "JOB REQUEUE",
            real=True,
            text_only=True,
            mid_run=True,
            async_trainer=False,
            engines=1,
            job_id=700200,
            start=t0 + 42 * day,
            planned_steps=steps + 4,
        ),
        # WANDB_MIRROR without a loguru header (null and string values), vLLM dates
        # across New Year, killed by the OOM killer
        JobSpec(
            "real/mirror-newyear/train_700300.out",
            "mirror-newyear",
            1,
            max(4, steps // 2),
            "failed",
            form="mirror",
            headerless_mirror=True,
            oom=True,
            engines=2,
            job_id=700300,
            start=datetime(2025, 12, 31, 23, 20),
        ),
        # The trainer in a Ray actor, its records glued after the driver's bars (most losing
        # their Ray prefix, the dict lines after them keeping theirs), skyrl_train names of
        # 2025; the final save after the loop as global_step_{last+1} ...
        JobSpec(
            f"{NOTEBOOK_CHAIN}/train_700400.out",
            "notebook-chain",
            1,
            half,
            "complete",
            real=True,
            ray_entrypoint=True,
            skyrl_train_names=True,
            async_trainer=False,
            engines=1,
            ckpt_interval=c,
            job_id=700400,
            start=t0 + 44 * day,
        ),
        # ... and a job resumed from that final save: its first step is last + 2 (no step
        # is named after the final save), no colour, skyrl.train names, the newer trainer's
        # final save, named after its last step
        JobSpec(
            f"{NOTEBOOK_CHAIN}/train_700401.out",
            "notebook-chain",
            half + 2,
            chain_last,
            "complete",
            real=True,
            ray_entrypoint=True,
            final_at_last=True,
            colour=False,
            async_trainer=False,
            engines=1,
            resume_from=half + 1,
            ckpt_interval=c,
            job_id=700401,
            start=t0 + 45 * day,
        ),
    ]
