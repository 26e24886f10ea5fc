"""Write one synthetic SkyRL SLURM log and record what it wrote.

:class:`JobSpec` says what the job does (steps, form, end state, vLLM shape);
:func:`write_log` writes the log line by line (streaming, any size) and
returns the ground truth: exactly the values a correct parser must find.
"""

from __future__ import annotations

import json
import math
import pprint
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import BinaryIO

import yaml

CYAN, RESET, GREEN = "\x1b[36m", "\x1b[0m", "\x1b[32m"
BATCH_TYPES = (
    "InvalidChatHistory",
    "AgentTimeoutError",
    "DaytonaError",
    "ContextLengthExceededError",
    "AgentSetupTimeoutError",
    "VerifierTimeoutError",
)


@dataclass(frozen=True)
class JobSpec:
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
    ckpt_root: str = "/checkpoints/run"
    start: datetime = datetime(2026, 2, 8, 0, 0, 0)
    pad_bytes: int = 0
    long_line_bytes: int = 0
    junk: bool = True
    trailing_batches: bool = False  # batches of a step that never logged its block
    job_id: int = 561773
    eval_interval: int = 0
    n_samples: int = 8
    groups: int = 4
    payload: str = ""  # planted in the config and a batch exception label (injection tests)
    # formats.md §8 shapes (all off: the scenario's original jobs stay byte for byte)
    real: bool = False  # driver without Ray prefix, records glued after tqdm bars, skyrl.train
    # module names, every vLLM prefix form and the V0 line, a negative batch count, the
    # synchronous trainer's timers, the final global_step_{last+1} checkpoint
    text_only: bool = False  # wandb-only logger: values only in Finished:/reward/status lines
    mid_run: bool = False  # a notebook's tail: no preamble, config, start or resume line
    headerless_mirror: bool = False  # WANDB_MIRROR lines with a Ray prefix only, null/str values
    oom: bool = False  # ends with an oom_kill event and a plain CANCELLED
    planned_steps: int | None = None  # the progress bar's total (real jobs)


@dataclass
class LogTruth:
    path: str
    end: str
    first_step: int | None
    last_step: int | None
    steps: list[int] = field(default_factory=list)
    metrics: dict[int, dict] = field(
        default_factory=dict
    )  # step -> values as a parser must read them
    resumed_from: int | None = None
    checkpoints: list[int] = field(default_factory=list)
    batches: Counter = field(default_factory=Counter)
    batch_exceptions: Counter = field(default_factory=Counter)
    batches_per_step: dict[int, Counter] = field(default_factory=dict)
    eval_batches: int = 0
    vllm_samples: int = 0
    vllm_engines: set = field(default_factory=set)
    vllm_sums: Counter = field(default_factory=Counter)
    vllm_waiting_max: float = 0.0
    vllm_aggregated: int = 0
    vllm_suppressed: int = 0
    vllm_step_stats: dict[int, dict] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    run_name: str | None = ""
    model: str | None = ""
    n_samples: int | None = 8
    vllm_prefix_samples: int | None = None  # samples with a prefix hit rate (None: all)
    metric_form: str = "console"
    mid_run: bool = False
    final_checkpoint: int | None = None
    planned_steps: int | None = None
    status_detail: str | None = None

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "end": self.end,
            "first_step": self.first_step,
            "last_step": self.last_step,
            "steps": self.steps,
            "metrics": {
                str(k): {m: _jsonable(v) for m, v in d.items()} for k, d in self.metrics.items()
            },
            "resumed_from": self.resumed_from,
            "checkpoints": self.checkpoints,
            "batches": dict(self.batches),
            "batch_exceptions": dict(self.batch_exceptions),
            "batches_per_step": {str(k): dict(v) for k, v in sorted(self.batches_per_step.items())},
            "eval_batches": self.eval_batches,
            "vllm": {
                "samples": self.vllm_samples,
                "engines": sorted(self.vllm_engines),
                "sums": dict(self.vllm_sums),
                "waiting_max": self.vllm_waiting_max,
                "aggregated": self.vllm_aggregated,
                "suppressed": self.vllm_suppressed,
                "step_stats": {str(k): v for k, v in self.vllm_step_stats.items()},
                **(
                    {"prefix_samples": self.vllm_prefix_samples}
                    if self.vllm_prefix_samples is not None
                    else {}
                ),
            },
            "secrets": self.secrets,
            "run_name": self.run_name,
            "model": self.model,
            "n_samples": self.n_samples,
            "metric_form": self.metric_form,
            "mid_run": self.mid_run,
            "final_checkpoint": self.final_checkpoint,
            "planned_steps": self.planned_steps,
            "status_detail": self.status_detail,
        }


def _jsonable(v: float | int) -> float | int | str:
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)  # "nan", "inf"
    return v


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


class _Out:
    """Line writer with the Ray prefix and loguru/vLLM headers of formats.md §2."""

    def __init__(self, fh: BinaryIO, spec: JobSpec) -> None:
        self.fh = fh
        self.spec = spec
        self.bytes = 0

    def raw(self, text: str | bytes) -> None:
        data = text if isinstance(text, bytes) else text.encode("utf-8")
        self.fh.write(data)
        self.bytes += len(data)

    def prefix(self, actor: str, pid: int, ip: str | None) -> str:
        if actor == "skyrl_entrypoint" and self.spec.real:
            return ""  # formats.md §8: the driver's own output, not forwarded by Ray
        p = f"({actor} pid={pid}, ip={ip})" if ip else f"({actor} pid={pid})"
        return f"{CYAN}{p}{RESET} " if self.spec.colour else f"{p} "

    def glue(self, text: str) -> None:
        """A tqdm bar that lost its line break: the next record lands after it (§8)."""
        self.raw(text)

    def loguru(
        self, t: datetime, msg: str, where: str = "skyrl_train.trainer:train:310", pid: int = 4242
    ) -> None:
        if self.spec.real:
            where = where.replace("skyrl_train.", "skyrl.train.")  # upstream's 2026 rename
        ts = t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}"
        if self.spec.colour:
            head = f"\x1b[32m{ts}\x1b[0m | \x1b[1mINFO    \x1b[0m | \x1b[36m{where}\x1b[0m - \x1b[1m{msg}\x1b[0m"
        else:
            head = f"{ts} | INFO     | {where} - {msg}"
        self.raw(f"{self.prefix('skyrl_entrypoint', pid, None)}{head}\n")

    def entry(self, text: str, pid: int = 4242) -> None:
        self.raw(f"{self.prefix('skyrl_entrypoint', pid, None)}{text}\n")


def _round4(v: float) -> float:
    return float(f"{v:.4f}")


def _fmt4(v: float | int) -> str | int:
    if isinstance(v, int):
        return v
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.4f}"


def step_metrics(
    rng: random.Random, step: int, spec: JobSpec, ckpt: bool
) -> dict[str, float | int]:
    """One step's metrics, with a consistent timer tree."""
    reward = min(1.0, max(0.0, 0.35 + 0.004 * step + rng.gauss(0, 0.06)))
    wait = rng.uniform(300, 900) if spec.async_trainer else rng.uniform(100, 300)
    convert = rng.uniform(0.8, 4.4)
    fwd = rng.uniform(8.4, 16.8)
    kl = rng.uniform(0.01, 0.05)
    adv = rng.uniform(0.017, 0.37)
    policy = rng.uniform(54, 101)
    critic = 0.0
    tcp = policy + critic + rng.uniform(0.05, 0.2)
    run_training = fwd + kl + adv + tcp + rng.uniform(0.1, 0.5)
    sync = rng.uniform(17.6, 27.0)
    step_t = wait + convert + run_training + sync + rng.uniform(0.1, 1.0)
    m: dict[str, float | int] = {}
    if spec.async_trainer:
        st_max = rng.randint(0, 9)
        m.update(
            {
                "async/discard_rate": 0.0,
                "async/discarded_count": 0,
                "async/effective_batch_groups": 64,
                "async/effective_batch_samples": 512,
                "async/staleness_max": st_max,
                "async/staleness_mean": rng.uniform(0, st_max or 1),
                "async/staleness_min": 0,
                "async/staleness_ratio": rng.uniform(0.6, 1.0),
            }
        )
    m.update(
        {
            "generate/avg_num_tokens": rng.uniform(1419, 1972),
            "generate/max_num_tokens": rng.randint(4339, 31942),
            "generate/min_num_tokens": rng.randint(1, 792),
            "generate/std_num_tokens": rng.uniform(474, 2683),
            "loss/avg_final_rewards": reward,
            "loss/avg_raw_advantages": rng.gauss(0, 0.015),
            "policy/policy_entropy": rng.uniform(0.18, 0.24),
            "policy/policy_loss": -abs(rng.gauss(0, 0.003)),
            "policy/policy_kl": math.nan if step % 7 == 3 else rng.uniform(0, 1e-3),
            "policy/raw_grad_norm": rng.uniform(0.02, 0.13),
            "policy/log_ratio_abs_pos50": 0.0,
            "reward/avg_pass_at_8": min(1.0, reward + rng.uniform(0.15, 0.3)),
            "reward/avg_raw_reward": reward,
            "system/process_rss_gb": rng.uniform(3.9, 15.7),
            "system/ram_percent": rng.uniform(27.4, 32.2),
            "timing/wait_for_generation_buffer": wait,
            "timing/convert_to_training_input": convert,
            "timing/fwd_logprobs_values_reward": fwd,
            "timing/apply_reward_kl_penalty": kl,
            "timing/compute_advantages_and_returns": adv,
            "timing/policy_train": policy,
            "timing/train_critic_and_policy": tcp,
            "timing/run_training": run_training,
            "timing/sync_weights": sync,
            "timing/step": step_t,
            "trainer/epoch": 0 if step < 40 else 1,
            "trainer/global_step": step,
            "util/gpu_mem_gb": rng.uniform(60, 79),  # a family that sorts after trainer/
        }
    )
    if ckpt:
        m["timing/save_checkpoints"] = rng.uniform(7.9, 19.2)
        m["timing/cleanup_old_checkpoints"] = rng.uniform(0.005, 0.5)
    if step == spec.first_step + 1:
        m["system/inf_probe"] = math.inf  # a non-finite value that must stay out of statistics
    if spec.real and not spec.async_trainer:
        _sync_timers(rng, m, ckpt)
        if step % 4 == 0 and not spec.text_only:
            # §8: the synchronous trainer's in-loop eval rides in the normal Step N: block
            m["eval/all/avg_score"] = rng.uniform(0.3, 0.7)
            m["timing/eval"] = rng.uniform(20, 60)
    return m


def _sync_timers(rng: random.Random, m: dict, ckpt: bool) -> None:
    """The synchronous trainer's timer tree (formats.md §8) in place of the async one."""
    for k in [k for k in m if k.startswith("timing/")]:
        del m[k]
    t = {
        "generate": rng.uniform(200, 600),
        "postprocess_generator_output": rng.uniform(0.5, 3.0),
        "convert_to_training_input": rng.uniform(0.8, 4.4),
        "fwd_logprobs_values_reward": rng.uniform(8.4, 16.8),
        "compute_advantages_and_returns": rng.uniform(0.02, 0.4),
        "policy_train": rng.uniform(54, 101),
        "sync_weights": rng.uniform(17.6, 27.0),
    }
    t["train_critic_and_policy"] = t["policy_train"] + rng.uniform(0.05, 0.2)
    if ckpt:
        t["cleanup_old_checkpoints"] = rng.uniform(0.005, 0.5)
        t["save_checkpoints"] = t["cleanup_old_checkpoints"] + rng.uniform(7.9, 19.2)
    inside = [k for k in t if k not in ("policy_train", "cleanup_old_checkpoints")]
    t["step"] = math.fsum(t[k] for k in inside) + rng.uniform(0.1, 1.0)
    m.update({f"timing/{k}": v for k, v in t.items()})


def _config(spec: JobSpec, secrets: dict[str, str]) -> dict:
    return {
        "data": {"train_data": ["/data/train.parquet"], "val_data": ["/data/val.parquet"]},
        "trainer": {
            "run_name": spec.run_name,
            "ckpt_path": spec.ckpt_root,
            "ckpt_interval": spec.ckpt_interval,
            "logger": "console" if spec.form == "console" else "wandb",
            "policy": {"model": {"path": "Qwen/Qwen3-8B"}, "optimizer_config": {"lr": 1e-6}},
            "epochs": 2,
            "wandb_api_key": secrets["WANDB_API_KEY"],
        },
        "generator": {
            "n_samples_per_prompt": spec.n_samples,
            "max_tokens": 4096,
            "backend": "vllm",
            "num_inference_engines": spec.engines,
            "api_base": f"https://admin:{secrets['DB_PASSWORD']}@inference.internal/v1",
        },
        "environment": {
            "env_class": "harbor",
            "env_vars": {
                "HF_TOKEN": secrets["HF_TOKEN"],
                "DAYTONA_API_KEY": secrets["DAYTONA_API_KEY"],
            },
            "notes": f"fallback key {secrets['OPENAI_API_KEY']}",
        },
        **({"project_note": spec.payload} if spec.payload else {}),
    }


NOISE_TEXT = (
    "Example generated: Let me think. Step 3: open the file {'reward/avg_raw_reward': '9.9999'} "
    "then run the tests. Training done! <done>",
    "WARNING 02-08 00:00:00 [tokenizer.py:88] Token indices sequence length is longer than the specified maximum",
    "/usr/lib/python3.11/site-packages/torch/distributed/fsdp.py:690: FutureWarning: FSDP.state_dict_type() is deprecated",
    "[harbor] sandbox ready in 3.2s; uploading task files",
)


def _noise(out: _Out, rng: random.Random, pid: int) -> None:
    kind = rng.randrange(4)
    if kind == 0:
        bar = "".join(
            f"\rProcessing prompts: {p:3d}%|{'█' * (p // 10):<10}| {p}/100 [00:{p % 60:02d}<00:30, 3.5it/s]"
            for p in range(0, 101, 20)
        )
        out.raw(bar + "\n")
    elif kind == 1:
        out.entry(NOISE_TEXT[0], pid)
        out.entry("Step 99: ", pid)  # model text: no loguru header, must not start a block
    else:
        out.entry(NOISE_TEXT[kind], pid)


def write_log(fh: BinaryIO, spec: JobSpec, seed: int) -> LogTruth:
    """Write the job's log to ``fh``; return the ground truth of what it holds."""
    rng = random.Random(seed)
    out = _Out(fh, spec)
    secrets = fake_secrets(rng)
    truth = LogTruth(
        spec.path,
        spec.end,
        None,
        None,
        run_name=spec.run_name,
        model="Qwen/Qwen3-8B",
        n_samples=spec.n_samples,
    )
    truth.secrets = list(secrets.values())
    t = spec.start
    truth.metric_form = (
        "text" if spec.text_only else "mirror" if spec.form in ("mirror", "both") else "console"
    )
    truth.mid_run = spec.mid_run
    truth.planned_steps = spec.planned_steps
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
        for line in yaml.safe_dump(_config(spec, secrets), sort_keys=False).splitlines():
            out.entry(line)
        out.loguru(t, f"Starting training run {spec.run_name}")
        if spec.resume_from is not None:
            out.loguru(
                t, f"Loading checkpoint from: {spec.ckpt_root}/global_step_{spec.resume_from}"
            )
            out.loguru(t, f"Resumed training from global_step {spec.resume_from}")
            truth.resumed_from = spec.resume_from
        else:
            out.loguru(t, "No checkpoint found, starting training from scratch")
    done = spec.first_step - 1  # the progress bar's count

    def bar() -> str:
        total = spec.planned_steps or spec.last_step
        pct = 100 * done // max(total, 1)
        return (
            f"Training Batches Processed: {pct:3d}%|{'#' * (pct // 10):<10}| {done}/{total} "
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
        for _ in range(spec.groups):
            n = spec.n_samples
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
                out.loguru(
                    t,
                    f"Exception breakdown: {dict(exc)}",
                    "skyrl_train.generators.harbor:generate:171",
                )
            failed = min(n, sum(exc.values()) - exc.get("InvalidChatHistory", 0))
            masked = exc.get("InvalidChatHistory", 0)
            ok = n - failed - masked
            if spec.real and step_key == spec.first_step and mode == "training" and not negative:
                # §8: the generator subtracts exception counts, which can exceed the batch
                exc = Counter({"AgentTimeoutError": n + 1})
                out.loguru(
                    t,
                    f"Exception breakdown: {dict(exc)}",
                    "skyrl_train.generators.harbor:generate:171",
                )
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

    def vllm(step_t: float) -> None:
        nonlocal t
        samples = max(2, int(step_t // 60))
        for k in range(samples):
            tt = t + timedelta(seconds=step_t * (k + 0.5) / samples)
            for e, (pid, ip) in enumerate(engines):
                gen = round(rng.uniform(150, 990), 1)
                run = rng.randint(0, 24)
                wait = rng.choice((0, 0, rng.randint(0, 40), rng.randint(0, 380)))
                kv = round(rng.uniform(5, 95), 1)
                pre = round(rng.uniform(70, 95), 1)
                parts = [
                    f"Avg prompt throughput: {round(rng.uniform(5, 60), 1)} tokens/s",
                    f"Avg generation throughput: {gen} tokens/s",
                    f"Running: {run} reqs",
                    f"Waiting: {wait} reqs",
                ]
                if spec.vllm_shape == "new":
                    if k % 3 == 0:
                        parts.append(f"Deferred: {rng.randint(0, 3)} reqs")
                    parts.append(f"Preemptions: {rng.randint(0, 2)}")
                parts += [f"GPU KV cache usage: {kv}%", f"Prefix cache hit rate: {pre}%"]
                if spec.vllm_shape == "new":
                    parts += [
                        "Corrupted: 0 reqs",
                        "External prefix cache hit rate: 0.0%",
                        "MM cache hit rate: 0.0%",
                    ]
                head = f"INFO {tt.strftime('%m-%d %H:%M:%S')} [loggers.py:{127 if spec.vllm_shape == 'old' else 215}] "
                pre_ = out.prefix("AsyncVLLMInferenceEngine", pid, ip)
                if spec.vllm_shape == "new":
                    pre_ += f"(EngineCore_DP0 pid={pid + 1}) "
                name = f"{pid}@{ip or 'driver'}"
                text = f"Engine 000: {', '.join(parts)}"
                if spec.real:
                    # §8: every prefix form; engine 2 is a V0 engine (another line shape)
                    form = e % 3
                    if form == 0:
                        stamp = tt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{331095044 + k:09d}Z"
                        pre_, name = f"{stamp} (APIServer pid=1) ", "1@driver"
                    elif form == 1:
                        pre_ = (
                            f"(VllmAsyncGenerationWorker pid={pid}, ip={ip}) "
                            f"(EngineCore_DP0 pid={pid + 1}) (RayWorkerWrapper pid={pid + 2}) "
                        )
                    else:
                        pre_, name = f"(pid={pid}) ", f"{pid}@driver"
                        head = f"INFO {tt.strftime('%m-%d %H:%M:%S')} [metrics.py:486] "
                        text = (
                            f"{parts[0]}, {parts[1]}, Running: {run} reqs, Swapped: 0 reqs, "
                            f"Pending: {wait} reqs, GPU KV cache usage: {kv}%, CPU KV cache usage: 0.0%."
                        )
                        pre = None  # V0 logs no prefix cache hit rate
                suffix = ""
                if (k + e) % 5 == 4:
                    rep = rng.randint(2, 9)
                    suffix = (
                        f" {GREEN}[repeated {rep}x across cluster]{RESET}"
                        if spec.colour
                        else f" [repeated {rep}x across cluster]"
                    )
                    truth.vllm_suppressed += rep
                out.raw(f"{pre_}{head}{text}{suffix}\n")
                truth.vllm_samples += 1
                truth.vllm_engines.add(name)
                truth.vllm_sums.update({"gen": gen, "running": run, "waiting": wait, "kv": kv})
                if pre is not None:
                    truth.vllm_sums["prefix"] += pre
                    truth.vllm_prefix_samples = (truth.vllm_prefix_samples or 0) + 1
                truth.vllm_waiting_max = max(truth.vllm_waiting_max, wait)
            if k == 0 and spec.vllm_shape == "new":
                out.raw(
                    f"{out.prefix('AsyncVLLMInferenceEngine', engines[0][0], None)}INFO {tt.strftime('%m-%d %H:%M:%S')} "
                    f"[loggers.py:215] {len(engines)} Engines Aggregated: Avg prompt throughput: 90.0 tokens/s, "
                    f"Avg generation throughput: 1800.0 tokens/s, Running: 40 reqs, Waiting: 3 reqs, "
                    f"GPU KV cache usage: 50.0%, Prefix cache hit rate: 80.0%\n"
                )
                truth.vllm_aggregated += 1

    def block(step: int, m: dict) -> None:
        form = spec.form
        console_vals = {k: _fmt4(v) for k, v in m.items()}
        if form in ("console", "both"):
            if spec.split_timing:
                main = {k: v for k, v in console_vals.items() if not k.startswith("timing/")}
                timing = {k: v for k, v in console_vals.items() if k.startswith("timing/")}
                dicts = [main, timing]
            else:
                dicts = [console_vals]
            for d in dicts:
                if spec.real:
                    out.glue(bar())
                out.loguru(t, f"Step {step}: ", "skyrl_train.utils.tracking:log:208")
                lines = pprint.pformat(d).splitlines()
                for i, line in enumerate(lines):
                    out.entry(line)
                    if i == 2 and spec.engines and step % 2 == 0:
                        # another process writes into the middle of the dict
                        out.raw(
                            f"{out.prefix('AsyncVLLMInferenceEngine', 999, '10.0.0.9')}some engine chatter {{'x': 1}}\n"
                        )
        if form in ("mirror", "both") and spec.headerless_mirror:
            # §8: no loguru header, and values that are not numbers (not metrics)
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
        if form == "mirror" or form == "both":
            truth.metrics[step] = dict(m)
        else:
            truth.metrics[step] = {
                k: (_round4(v) if isinstance(v, float) else v) for k, v in m.items()
            }

    def timer_lines(m: dict) -> dict:
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
        out.glue(bar())
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
        # eval_before_train: an eval-only Step block at the step training starts from (§8)
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
        vllm(float(m["timing/step"]))
        for _ in range(3):
            _noise(out, rng, 4242)
        if spec.junk and step == spec.first_step:
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
            _noise(out, rng, 4242)
            written += out.bytes - before
        if spec.real or spec.text_only:
            text_vals = timer_lines(m)
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
            truth.vllm_step_stats[step] = {
                "engines": float(spec.engines),
                "running_peak": float(rp),
                "running_med": float(rm),
                "kv_peak": kp,
                "kv_med": km,
            }
        flush(step)
        if spec.text_only:
            truth.metrics[step] = text_vals
        else:
            block(step, m)
        done = step
        truth.steps.append(step)
        if ckpt:
            out.loguru(
                t,
                f"Successfully saved checkpoint for global_step_{step} to: {spec.ckpt_root}/global_step_{step}",
                "skyrl_train.trainer:save_checkpoints:512",
            )
            truth.checkpoints.append(step)
        if spec.eval_interval and step % spec.eval_interval == 0:
            batches(step, "eval")
            ev = {
                "eval/all/avg_score": _round4(rng.uniform(0.3, 0.7)),
                "eval/all/pass_at_1": _round4(rng.uniform(0.3, 0.7)),
            }
            out.loguru(
                t,
                f"WANDB_MIRROR kind=eval step={step} metrics={json.dumps(ev)}",
                "skyrl_train.utils.tracking:log:230",
            )
    truth.first_step = spec.first_step if truth.steps else None
    truth.last_step = spec.last_step if truth.steps else None
    nxt = spec.last_step + 1
    if spec.trailing_batches or spec.end in ("cancelled", "running"):
        if spec.real or spec.text_only:
            out.loguru(t, "Started: 'step'", "skyrl_train.utils.utils:__enter__:38")
        batches(nxt)
    if spec.end == "running":
        # A block cut off mid-dict: its marker is there, its batches belong to it.
        flush(nxt)
        out.loguru(t, f"Step {nxt}: ", "skyrl_train.utils.tracking:log:208")
        for line in pprint.pformat(
            {k: _fmt4(v) for k, v in step_metrics(rng, nxt, spec, False).items()}
        ).splitlines()[:5]:
            out.entry(line)
        out.raw(
            out.prefix("skyrl_entrypoint", 4242, None) + " 'timing/st"
        )  # no newline: still being written
        return truth
    flush(nxt)
    if spec.end == "complete" and spec.real:
        out.loguru(
            t,
            f"Successfully saved checkpoint for global_step_{nxt} to: {spec.ckpt_root}/global_step_{nxt}",
            "skyrl_train.trainer:save_checkpoints:512",
        )
        out.loguru(t, "Saved final checkpoint.")
        truth.final_checkpoint = nxt  # §8: named after last + 1, not a step
    if spec.end == "complete":
        out.loguru(t, "Training done!")
    elif spec.end == "cancelled":
        out.entry("Training done! (said the model, not the trainer)")
        if spec.real:
            out.glue(bar())
        out.raw(
            f"slurmstepd: error: *** JOB {spec.job_id} ON gpu-017 CANCELLED AT "
            f"{t.strftime('%Y-%m-%dT%H:%M:%S')} DUE TO {spec.cancel_reason} ***\n"
        )
        truth.status_detail = spec.cancel_reason
    elif spec.end == "failed" and spec.oom:
        out.raw(
            f"slurmstepd: error: Detected 1 oom_kill event in StepId={spec.job_id}.batch. "
            "Some of the step tasks have been OOM Killed.\n"
        )
        out.raw(
            f"slurmstepd: error: *** JOB {spec.job_id} ON gpu-017 CANCELLED AT "
            f"{t.strftime('%Y-%m-%dT%H:%M:%S')} ***\n"
        )
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
