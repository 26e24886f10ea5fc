"""Write one synthetic SkyRL SLURM log, line by line (any size), as its :class:`JobSpec`
says, and return its ground truth: exactly the values a correct parser must find."""

from __future__ import annotations

import json
import pprint
import random
from collections import Counter
from datetime import timedelta
from typing import BinaryIO

import yaml

from sitegen.synth.jobspec import GROUPS, N_SAMPLES, JobSpec, LogTruth, fake_secrets
from sitegen.synth.lines import OWN_BAR, RESET, LogOut, add_noise, fmt4, round4
from sitegen.synth.stepvalues import job_config, step_metrics
from sitegen.synth.vllm import write_vllm

BATCH_TYPES = (
    "InvalidChatHistory",
    "AgentTimeoutError",
    "DaytonaError",
    "ContextLengthExceededError",
    "AgentSetupTimeoutError",
    "VerifierTimeoutError",
)

BREAKDOWN_AT = "skyrl_train.generators.harbor:generate:171"
SAVE_AT = "skyrl_train.trainer:save_checkpoints:512"


def write_log(fh: BinaryIO, spec: JobSpec, seed: int) -> LogTruth:
    """Write the job's log to ``fh``; return the ground truth of what it holds."""
    rng = random.Random(seed)
    out = LogOut(fh, spec)
    secrets = fake_secrets(rng)
    mirror = spec.form in ("mirror", "both")
    metric_form = "text" if spec.text_only else "mirror" if mirror else "console"
    truth = LogTruth(
        spec.path,
        spec.end,
        None,
        None,
        run_name=spec.run_name,
        model="Qwen/Qwen3-8B",
        secrets=list(secrets.values()),
        metric_form=metric_form,
        mid_run=spec.mid_run,
        planned_steps=spec.planned_steps,
    )
    t = spec.start
    if spec.mid_run:
        # A notebook kept only its last lines: no preamble, config, start or resume line,
        # and (VS Code) a banner saying so.
        truth.run_name = truth.model = truth.n_samples = None
        out.raw(
            "Output is truncated. View as a scrollable element or open in a text editor. "
            "Adjust cell output settings...\n"
        )
    else:
        # sbatch preamble: exports with secrets, straight into the SLURM file.
        out.raw(f"+ export WANDB_API_KEY={secrets['WANDB_API_KEY']}\n")
        out.raw(f"export HF_TOKEN={secrets['HF_TOKEN']}\n")
        out.raw(f"export AWS_ACCESS_KEY_ID={secrets['AWS_ACCESS_KEY_ID']}\n")
        out.raw(f"SLURM_JOB_ID={spec.job_id} starting on node gpu-{rng.randint(1, 99):03d}\n")
        config = job_config(spec, secrets)
        dump = yaml.safe_dump(config, sort_keys=False).splitlines()
        if spec.real:
            # upstream logs the dump as one record (main_base: logger.info of the YAML text):
            # its first key rides on the loguru header, and the text's own last line break
            # leaves a blank line after it
            out.loguru(t, dump[0], "skyrl_train.entrypoints.main_base:_setup_trainer:288")
            dump = [*dump[1:], ""]
        for line in dump:
            out.entry(line)
        truth.train_data = config["data"]["train_data"]
        out.loguru(t, f"Starting training run {spec.run_name}")
        if spec.resume_from is not None:
            out.loguru(t, f"Loading checkpoint from: {spec.ckpt}/global_step_{spec.resume_from}")
            out.loguru(t, f"Resumed training from global_step {spec.resume_from}")
            truth.resumed_from = spec.resume_from
        else:
            out.loguru(t, "No checkpoint found, starting training from scratch")
    done = spec.first_step - 1  # the progress bar's count

    block_char = "\u2588" if spec.ray_entrypoint else "#"

    def bar() -> str:
        total = spec.planned_steps or spec.last_step
        pct = 100 * done // max(total, 1)
        return (
            f"Training Batches Processed: {pct:3d}%|{block_char * (pct // 10):<10}| {done}/{total} "
            f"[1:15:34<08:27, 20.30s/it]"
        )

    engines = [
        (
            287294 + 17 * i,
            f"10.128.26.{194 + i}" if not (spec.vllm_shape == "new" and i == 0) else None,
        )
        for i in range(spec.engines)
    ]
    pad_per_step = spec.pad_bytes // max(1, spec.last_step - spec.first_step + 1)
    pending: Counter = Counter()
    pending_exc: Counter = Counter()
    negative: list[int] = []  # the negative batch line is written once

    def batches(step_key: int, mode: str = "training") -> None:
        for _ in range(GROUPS):
            n = N_SAMPLES
            out.loguru(
                t,
                f"Starting batch generation for {n} trials (mode={mode})",
                "skyrl_train.generators.harbor:generate:142",
            )
            exc: Counter = Counter()
            for _k in range(rng.choice((0, 0, 1, 2))):
                exc[rng.choice(BATCH_TYPES)] += 1
            if spec.payload and step_key == spec.first_step and mode == "training":
                exc[spec.payload] += 1
            if exc:
                out.loguru(t, f"Exception breakdown: {dict(exc)}", BREAKDOWN_AT)
            failed = min(n, sum(exc.values()) - exc.get("InvalidChatHistory", 0))
            masked = exc.get("InvalidChatHistory", 0)
            ok = n - failed - masked
            if spec.real and step_key == spec.first_step and mode == "training" and not negative:
                # the generator subtracts exception counts, which can exceed the batch
                # (docs/formats.md §4)
                exc = Counter({"AgentTimeoutError": n + 1})
                out.loguru(t, f"Exception breakdown: {dict(exc)}", BREAKDOWN_AT)
                ok, failed, masked = -1, n + 1, 0
                negative.append(1)
            out.loguru(
                t,
                f"Batch generation complete: {ok}/{n} successful, {failed} failed instances, "
                f"{masked} masked (excluded from baseline)",
                "skyrl_train.generators.harbor:generate:180",
            )
            if mode == "training":
                c = Counter(batches=1, instances=n, successful=ok, failed=failed, masked=masked)
                pending.update(c)
                pending_exc.update(exc)
            else:
                truth.eval_batches += 1

    def flush(step: int) -> None:
        if pending:
            c = truth.batches_per_step.setdefault(step, Counter())
            c.update(pending)
            for k, v in pending_exc.items():
                c["exc:" + k] += v
            truth.batches.update(pending)
            truth.batch_exceptions.update(pending_exc)
            pending.clear()
            pending_exc.clear()

    def saved(step: int) -> None:
        at = f"{spec.ckpt}/global_step_{step}"
        out.loguru(t, f"Successfully saved checkpoint for global_step_{step} to: {at}", SAVE_AT)
        truth.checkpoints.append(step)

    def chatter() -> None:
        out.raw(
            f"{out.prefix('AsyncVLLMInferenceEngine', 999, '10.0.0.9')}some engine chatter {{'x': 1}}\n"
        )

    def block(step: int, m: dict) -> None:
        form = spec.form
        console_vals = {k: fmt4(v) for k, v in m.items()}
        if form in ("console", "both"):
            if spec.split_timing:
                main = {k: v for k, v in console_vals.items() if not k.startswith("timing/")}
                timing = {k: v for k, v in console_vals.items() if k.startswith("timing/")}
                dicts = [main, timing]
            else:
                dicts = [console_vals]
            for d in dicts:
                if spec.real:
                    out.glue(bar(), step)
                out.loguru(t, f"Step {step}: ", "skyrl_train.utils.tracking:log:208")
                if out.turn == OWN_BAR and spec.engines:
                    chatter()  # between the header and its dict: the header's process decides
                lines = pprint.pformat(d).splitlines()
                if spec.ray_entrypoint and spec.colour:
                    # loguru colours the message as one span (docs/formats.md §2.2)
                    lines[-1] += RESET
                for i, line in enumerate(lines):
                    out.entry(line)
                    if i == 2 and spec.engines and step % 2 == 0:
                        chatter()  # another process writes into the middle of the dict
        if form in ("mirror", "both") and spec.headerless_mirror:
            # docs/formats.md §3: no loguru header, and values that are not numbers (not metrics)
            extra = {**m, "note": None, "tag": "warmup"}
            out.entry(
                f"WANDB_MIRROR kind=train step={step} metrics={json.dumps(extra, sort_keys=True)}"
            )
        elif form in ("mirror", "both"):
            out.loguru(
                t,
                f"WANDB_MIRROR kind=train step={step} metrics={json.dumps(m, sort_keys=True)}",
                "skyrl_train.utils.tracking:log:230",
            )
        truth.metrics[step] = (
            dict(m)
            if form in ("mirror", "both")
            else {k: (round4(v) if isinstance(v, float) else v) for k, v in m.items()}
        )

    def timer_lines(step: int, m: dict) -> dict:
        """The step's Finished:, reward and status lines; what a reader takes from them."""
        got: dict[str, float] = {}
        where = "skyrl_train.utils.utils:__exit__:43"
        for k, v in m.items():
            if k.startswith("timing/") and k != "timing/step":
                out.loguru(t, f"Finished: '{k[7:]}', time cost: {v:.2f}s", where)
                got[k] = float(f"{v:.2f}")
        out.loguru(t, "Finished: 'dump_data_batch', time cost: 0.42s", where)  # not a timing/*
        rewards = {
            "reward/avg_pass_at_8": m["reward/avg_pass_at_8"],
            "reward/avg_raw_reward": m["reward/avg_raw_reward"],
            "reward/mean_positive_reward": min(1.0, m["reward/avg_raw_reward"] * 1.7),
        }
        out.loguru(
            t,
            ", ".join(f"{k}: {v}" for k, v in rewards.items()),
            "skyrl_train.trainer:postprocess:1116",
        )
        got.update(rewards)
        out.glue(bar(), step + 1)
        out.loguru(t, f"Finished: 'step', time cost: {m['timing/step']:.2f}s", where)
        got["timing/step"] = float(f"{m['timing/step']:.2f}")
        status = {
            "policy_loss": m["policy/policy_loss"],
            "policy_lr": 9.99e-07,
            "raw_grad_norm": m["policy/raw_grad_norm"],
            "policy_entropy": m["policy/policy_entropy"],
        }
        out.loguru(t, repr(status), "skyrl_train.trainer:train:497")
        got.update({f"policy/{k}": v for k, v in status.items()})
        return got

    if spec.real and spec.form == "console" and not spec.text_only:
        # eval_before_train: an eval-only Step block at the step training starts from
        # (docs/formats.md §3)
        out.loguru(t, f"Step {spec.first_step - 1}: ", "skyrl_train.utils.tracking:log:208")
        for line in pprint.pformat({"eval/all/avg_score": "0.4125"}).splitlines():
            out.entry(line)

    for step in range(spec.first_step, spec.last_step + 1):
        ckpt = step % spec.ckpt_interval == 0
        m = step_metrics(rng, step, spec, ckpt)
        if spec.real or spec.text_only:
            # the synchronous trainer generates inside its 'step' timer
            out.loguru(t, "Started: 'step'", "skyrl_train.utils.utils:__enter__:38")
        batches(step)
        write_vllm(out, rng, spec, truth, engines, t, float(m["timing/step"]))
        for _ in range(3):
            add_noise(out, rng)
        if step == spec.first_step:
            out.raw(b"\xff\xfe\x00\x00garbage \x80\x81 binary\x00 junk\n")
        if spec.long_line_bytes and step == spec.first_step:
            out.raw(
                f"{out.prefix('skyrl_entrypoint', 4242, None)}Example generated: "
                + "x" * spec.long_line_bytes
                + "\n"
            )
        written = 0
        while written < pad_per_step:
            before = out.bytes
            add_noise(out, rng)
            written += out.bytes - before
        if spec.real or spec.text_only:
            text_vals = timer_lines(step, m)
        else:
            out.entry("Started: 'step'")
            out.entry(f"Finished: 'step', time cost: {m['timing/step']:.2f}s")
        t += timedelta(seconds=float(m["timing/step"]))
        if spec.vllm_shape == "new" and spec.engines:
            rp, rm, kp, km = (
                rng.randint(10, 24),
                rng.randint(0, 9),
                round(rng.uniform(50, 95), 1),
                round(rng.uniform(5, 49), 1),
            )
            out.loguru(
                t,
                f"vLLM Stats (step {step}): engines={spec.engines}, running(peak/med)={rp}/{rm}, "
                f"kv(peak/med)={kp}%/{km}%",
                "skyrl_train.inference:log_stats:77",
            )
            truth.vllm.step_stats[step] = {
                "engines": float(spec.engines),
                "running_peak": float(rp),
                "running_med": float(rm),
                "kv_peak": kp,
                "kv_med": km,
            }
        flush(step)
        truth.block_times[step] = t
        if spec.text_only:
            truth.metrics[step] = text_vals
        else:
            block(step, m)
        done = step
        truth.steps.append(step)
        if ckpt:
            saved(step)
        if spec.eval_interval and step % spec.eval_interval == 0:
            batches(step, "eval")
            ev = {
                "eval/all/avg_score": round4(rng.uniform(0.3, 0.7)),
                "eval/all/pass_at_1": round4(rng.uniform(0.3, 0.7)),
            }
            out.loguru(
                t,
                f"WANDB_MIRROR kind=eval step={step} metrics={json.dumps(ev)}",
                "skyrl_train.utils.tracking:log:230",
            )
    truth.first_step = spec.first_step if truth.steps else None
    truth.last_step = spec.last_step if truth.steps else None
    nxt = spec.last_step + 1
    if spec.end in ("cancelled", "running"):
        if spec.real or spec.text_only:
            out.loguru(t, "Started: 'step'", "skyrl_train.utils.utils:__enter__:38")
        batches(nxt)
    if spec.end == "running":
        # A block cut off mid-dict: its marker is there, its batches belong to it.
        flush(nxt)
        out.loguru(t, f"Step {nxt}: ", "skyrl_train.utils.tracking:log:208")
        for line in pprint.pformat(
            {k: fmt4(v) for k, v in step_metrics(rng, nxt, spec, False).items()}
        ).splitlines()[:5]:
            out.entry(line)
        out.raw(out.prefix("skyrl_entrypoint", 4242, None) + " 'timing/st")  # still being written
        return truth
    flush(nxt)
    # The save after the loop (docs/formats.md §4.3): named after last + 1 by the older trainers, after the
    # last step by the newer synchronous one (which skips it when that step was saved).
    final = spec.last_step if spec.final_at_last else nxt
    if spec.end == "complete" and spec.real and final not in truth.checkpoints:
        if spec.ray_entrypoint:
            out.glue(bar(), final)
        saved(final)
        out.loguru(t, "Saved final checkpoint.")
        truth.final_checkpoint = final
    cancelled = (
        f"slurmstepd: error: *** JOB {spec.job_id} ON gpu-017 CANCELLED AT {t:%Y-%m-%dT%H:%M:%S}"
    )
    if spec.end == "complete":
        out.loguru(t, "Training done!")
    elif spec.end == "cancelled":
        out.entry("Training done! (said the model, not the trainer)")
        if spec.real:
            out.glue(bar())
        out.raw(f"{cancelled} DUE TO {spec.cancel_reason} ***\n")
        truth.status_detail = spec.cancel_reason
    elif spec.end == "failed" and spec.oom:
        out.raw(
            f"slurmstepd: error: Detected 1 oom_kill event in StepId={spec.job_id}.batch. "
            "Some of the step tasks have been OOM Killed.\n"
        )
        out.raw(f"{cancelled} ***\n")
        truth.status_detail = "out of memory (oom_kill)"
    elif spec.end == "failed":
        out.loguru(
            t,
            f"Train loop failed at global_step {spec.last_step + 1}: RuntimeError: CUDA error: out of memory",
        )
        out.entry("Traceback (most recent call last):")
        out.entry('  File "/app/skyrl_train/trainer.py", line 310, in train')
        out.entry("RuntimeError: CUDA error: out of memory")
    return truth
