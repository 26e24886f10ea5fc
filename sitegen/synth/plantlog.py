"""The log every planted job writes (``sitegen synth --plants``): the mirror form, one
``WANDB_MIRROR`` line per step, starting at :data:`T0`."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import yaml

from sitegen.synth.jobspec import JobSpec, numbered
from sitegen.synth.lines import LogOut

T0 = datetime(2026, 3, 2, 8, 0, 0)
STEP_S = 600.0
SAMPLES = 4  # a prompt group: one task's samples at a step (pass@4)


def utc(t: datetime) -> str:
    return t.isoformat() + "Z"


def plant_log(
    path: Path, spec: JobSpec, config: dict | None, steps: dict[int, dict], end: str
) -> None:
    """A mirror-form log (its folder made): config dump, start line, one ``WANDB_MIRROR`` per
    step, end line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        out = LogOut(fh, spec)
        if config is not None:
            for line in yaml.safe_dump(config, sort_keys=False).splitlines():
                out.entry(line)
            out.loguru(spec.start, f"Starting training run {spec.run_name}")
            out.loguru(spec.start, "No checkpoint found, starting training from scratch")
        t = spec.start
        for step, m in sorted(steps.items()):
            t += timedelta(seconds=float(m["timing/step"]))
            out.entry(f"Finished: 'step', time cost: {m['timing/step']:.2f}s")
            out.loguru(
                t,
                f"WANDB_MIRROR kind=train step={step} metrics={json.dumps(m, sort_keys=True)}",
                "skyrl_train.utils.tracking:log:230",
            )
        if end == "complete":
            out.loguru(t, "Training done!")


def plant_spec(
    rel: str, run: str, first: int, last: int, end: str, start: datetime = T0
) -> JobSpec:
    return numbered(rel, run, first, last, end, start, form="mirror", colour=False)


def plant_config(run: str, **trainer: object) -> dict:
    """A planted job's config dump: the trainer's settings, ``trainer``'s over them."""
    return {
        "trainer": {
            "run_name": run,
            "policy": {"optimizer_config": {"lr": 1e-6}},
            "update_epochs_per_batch": 1,
            "train_batch_size": 20,
            "policy_mini_batch_size": 20,
            **trainer,
        },
        "generator": {"n_samples_per_prompt": SAMPLES},
    }
