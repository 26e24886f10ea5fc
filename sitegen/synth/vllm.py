"""Synthetic vLLM engine stat lines with their ground truth: the shapes of
docs/formats.md §5, every prefix form of docs/formats.md §2, newer SkyRL's infra-*.log."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from sitegen.synth.jobspec import JobSpec, LogTruth
from sitegen.synth.lines import GREEN, RESET, LogOut

DEDUP_NOTE = (
    " (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log deduplication, "
    "or see https://docs.ray.io/en/master/ray-observability/user-guides/configure-logging.html"
    "#log-deduplication for more options.)"
)


def write_vllm(
    out: LogOut,
    rng: random.Random,
    spec: JobSpec,
    truth: LogTruth,
    engines: list[tuple[int, str | None]],
    t: datetime,
    step_t: float,
) -> None:
    """One step's vLLM engine stat lines (docs/formats.md §2, §5), tallied into ``truth``."""
    samples = max(2, int(step_t // 60))
    for k in range(samples):
        tt = t + timedelta(seconds=step_t * (k + 0.5) / samples)
        for e, (pid, ip) in enumerate(engines):
            gen = round(rng.uniform(150, 990), 1)
            run = rng.randint(0, 24)
            wait = rng.choice((0, 0, rng.randint(0, 40), rng.randint(0, 380)))
            kv = round(rng.uniform(5, 95), 1)
            pre: float | None = round(rng.uniform(70, 95), 1)
            parts = [
                f"Avg prompt throughput: {round(rng.uniform(5, 60), 1)} tokens/s",
                f"Avg generation throughput: {gen} tokens/s",
                f"Running: {run} reqs",
                f"Waiting: {wait} reqs",
            ]
            if spec.vllm_shape == "new":
                if k % 3 == 0:
                    parts.append(f"Deferred: {rng.randint(0, 3)} reqs")
                # (vLLM writes the part only for an interval that preempted any)
                preempted = rng.randint(0, 2)
                if preempted:
                    parts.append(f"Preemptions: {preempted}")
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
                # every prefix form; engine 2 is a V0 engine (docs/formats.md §2, §5)
                form = e % 3
                if form == 0:
                    # one API server in front of every third engine, each its own index
                    # (docs/formats.md §5.5): named by the process alone when it has one
                    stamp = tt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{331095044 + k:09d}Z"
                    index, served = e // 3, len(range(0, len(engines), 3))
                    pre_ = f"{stamp} (APIServer pid=1) "
                    name = f"1@driver:engine{index:03d}" if served > 1 else "1@driver"
                    text = f"Engine {index:03d}: {', '.join(parts)}"
                elif form == 1:
                    pre_ = (  # Ray's own prefix in its colours, vLLM's behind it
                        f"{out.prefix('VllmAsyncGenerationWorker', pid, ip)}"
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
                suffix = f" [repeated {rep}x across cluster]"
                if spec.real:
                    # as Ray prints it (LogDeduplicator): green from the space on, the first
                    # time in a job with its note
                    if not out.dedup_noted:
                        suffix += DEDUP_NOTE
                        out.dedup_noted = True
                    suffix = f"{GREEN}{suffix}{RESET}" if spec.colour else suffix
                elif spec.colour:
                    suffix = f" {GREEN}[repeated {rep}x across cluster]{RESET}"
                truth.vllm.suppressed += rep
            out.raw(f"{pre_}{head}{text}{suffix}\n")
            truth.vllm.samples += 1
            truth.vllm.engines.add(name)
            truth.vllm.sums.update({"gen": gen, "running": run, "waiting": wait, "kv": kv})
            if "Preemptions: " in text:
                truth.vllm.sums.update({"preemptions": preempted})
            if pre is not None:
                truth.vllm.sums.update({"prefix": pre})  # adds, as += would
                truth.vllm.prefix_samples = (truth.vllm.prefix_samples or 0) + 1
            truth.vllm.waiting_max = max(truth.vllm.waiting_max, wait)
        if k == 0 and spec.vllm_shape == "new":
            out.raw(
                f"{out.prefix('AsyncVLLMInferenceEngine', engines[0][0], None)}INFO {tt.strftime('%m-%d %H:%M:%S')} "
                f"[loggers.py:215] {len(engines)} Engines Aggregated: Avg prompt throughput: 90.0 tokens/s, "
                f"Avg generation throughput: 1800.0 tokens/s, Running: 40 reqs, Waiting: 3 reqs, "
                f"GPU KV cache usage: 50.0%, Prefix cache hit rate: 80.0%\n"
            )
            truth.vllm.aggregated += 1


def write_infra(path: Path, seed: int, start: datetime, samples: int, truth: LogTruth) -> None:
    """Engine output of newer SkyRL: an ``infra-*.log`` without Ray prefixes."""
    rng = random.Random(seed)
    with open(path, "w") as fh:
        for k in range(samples):
            t = start + timedelta(seconds=5 * k)
            gen = round(rng.uniform(200, 900), 1)
            run, wait = rng.randint(1, 20), rng.randint(0, 12)
            kv, pre = round(rng.uniform(10, 90), 1), round(rng.uniform(60, 90), 1)
            fh.write(
                f"INFO {t.strftime('%m-%d %H:%M:%S')} [loggers.py:215] Engine 000: Avg prompt throughput: "
                f"12.0 tokens/s, Avg generation throughput: {gen} tokens/s, Running: {run} reqs, Waiting: "
                f"{wait} reqs, GPU KV cache usage: {kv}%, Prefix cache hit rate: {pre}%\n"
            )
            truth.vllm.samples += 1
            truth.vllm.engines.add(f"{path.name}:engine000")
            truth.vllm.sums.update(
                {"gen": gen, "running": run, "waiting": wait, "kv": kv, "prefix": pre}
            )
            truth.vllm.waiting_max = max(truth.vllm.waiting_max, wait)
