"""One synthetic step's metric values (a consistent timer tree) and the job's config dump."""

from __future__ import annotations

import math
import random

from sitegen.synth.jobspec import N_SAMPLES, JobSpec


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
            # the synchronous trainer's in-loop eval rides in the normal Step N: block
            # (docs/formats.md §3)
            m["eval/all/avg_score"] = rng.uniform(0.3, 0.7)
            m["timing/eval"] = rng.uniform(20, 60)
    return m


def _sync_timers(rng: random.Random, m: dict, ckpt: bool) -> None:
    """The synchronous trainer's timer tree (docs/formats.md §3) in place of the async one."""
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


def job_config(spec: JobSpec, secrets: dict[str, str]) -> dict:
    return {
        "data": {"train_data": ["/data/train.parquet"], "val_data": ["/data/val.parquet"]},
        "trainer": {
            "run_name": spec.run_name,
            "ckpt_path": spec.ckpt,
            "ckpt_interval": spec.ckpt_interval,
            "logger": "console" if spec.form == "console" else "wandb",
            "policy": {"model": {"path": "Qwen/Qwen3-8B"}, "optimizer_config": {"lr": 1e-6}},
            "epochs": 2,
            "wandb_api_key": secrets["WANDB_API_KEY"],
        },
        "generator": {
            "n_samples_per_prompt": N_SAMPLES,
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
