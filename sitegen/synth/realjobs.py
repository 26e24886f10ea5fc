"""The jobs ``sitegen synth`` writes the way real SkyRL, vLLM and SLURM output looks
(docs/formats.md §2–§6)."""

from __future__ import annotations

from datetime import datetime, timedelta

from sitegen.synth.jobspec import JobSpec, numbered

REAL_TRIALS_OWNER = "real/sync-glued"
NOTEBOOK_CHAIN = "real/notebook-chain"  # two jobs: one run, the second resumed from the first


def real_specs(steps: int, c: int, t0: datetime) -> list[JobSpec]:
    """Jobs written as real SkyRL, vLLM and SLURM output looks (docs/formats.md §2–§6)."""
    day = timedelta(days=1)
    half = max(4, steps // 2)
    chain_last = next(n for n in range(steps + 1, steps + c + 2) if n % c)  # not a save step
    # fmt: off
    return [
        # The synchronous trainer's console log from a driver outside Ray: records glued
        # after tqdm bars, every vLLM prefix form and the V0 line, two engines logged by one
        # API server, a negative batch count, skyrl.train module names, the final
        # global_step_{last+1} checkpoint; Harbor trials.
        numbered(
            f"{REAL_TRIALS_OWNER}/train_700100.out", "sync-glued", 1, steps, "complete",
            t0 + 40 * day, real=True, async_trainer=False, engines=4, ckpt_interval=c,
            planned_steps=steps,
        ),
        # upstream's default (wandb-only) logger, kept as a notebook's last lines: values
        # only in text lines, first step > 1 with no start line; requeued, glued to a bar
        numbered(
            "real/wandb-only/train_700200.out", "wandb-only", steps // 2 + 1, steps, "cancelled",
            t0 + 42 * day, cancel_reason="JOB REQUEUE", real=True, text_only=True, mid_run=True,
            async_trainer=False, engines=1, planned_steps=steps + 4,
        ),
        # WANDB_MIRROR without a loguru header (null and string values), vLLM dates
        # across New Year, killed by the OOM killer
        numbered(
            "real/mirror-newyear/train_700300.out", "mirror-newyear", 1, max(4, steps // 2),
            "failed", datetime(2025, 12, 31, 23, 20), form="mirror", headerless_mirror=True,
            oom=True, engines=2,
        ),
        # The trainer in a Ray actor, its records glued after the driver's bars (most losing
        # their Ray prefix, the dict lines after them keeping theirs), skyrl_train names of
        # 2025; the final save after the loop as global_step_{last+1} ...
        numbered(
            f"{NOTEBOOK_CHAIN}/train_700400.out", "notebook-chain", 1, half, "complete",
            t0 + 44 * day, real=True, ray_entrypoint=True, skyrl_train_names=True,
            async_trainer=False, engines=1, ckpt_interval=c,
        ),
        # ... and a job resumed from that final save: its first step is last + 2 (no step
        # is named after the final save), no colour, skyrl.train names, the newer trainer's
        # final save, named after its last step
        numbered(
            f"{NOTEBOOK_CHAIN}/train_700401.out", "notebook-chain", half + 2, chain_last,
            "complete", t0 + 45 * day, real=True, ray_entrypoint=True, final_at_last=True,
            colour=False, async_trainer=False, engines=1, resume_from=half + 1, ckpt_interval=c,
        ),
    ]
    # fmt: on
