"""``report.md``: the old script's report layout for one job, numbers corrected.

Corrections against the old script (formats.md §7): the reward row is the
step mean (not a "final" reward), timers are a tree (children are not added
to their parents), batch lines go to the step they preceded, negative
rewards are failures, and vLLM figures are means over every engine's lines.
"""

from __future__ import annotations

import math

from sitegen.analyse import flatten_tree, pass_at_key


def _f(v: object, digits: int = 4) -> str:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return "–"
    if isinstance(v, float) and not math.isfinite(v):
        return "nan"
    if isinstance(v, int):
        return str(v)
    return f"{v:.{digits}f}"


def _g(v: object) -> str:
    if (
        isinstance(v, bool)
        or not isinstance(v, int | float)
        or (isinstance(v, float) and not math.isfinite(v))
    ):
        return "–"
    return f"{v:.6g}"


def _cell(s: object) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def job_report(page: dict) -> str:
    h = page["headline"]
    out = [f"# SkyRL training report: {_cell(page['id'])}", ""]
    out += [
        "## Overview",
        "",
        "| Job | Status | First step | Last step | Metric blocks | Reward mean | Reward max | Reward last | Total time (s) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
        f"| {_cell(page['id'])} | {page['status']} | {_f(h['first_step'])} | {_f(h['last_step'])} | "
        f"{page['metric_blocks']} | {_f(h['reward_mean'])} | {_f(h['reward_max'])} | {_f(h['reward_last'])} | "
        f"{_f(h['total_time_s'], 1)} |",
        "",
    ]
    fams: dict[str, list[tuple[str, dict]]] = {}
    for name, st in page["metrics"].items():
        fams.setdefault(name.split("/", 1)[0] if "/" in name else "other", []).append((name, st))
    if page.get("batches") and page["batches"]["summary"]:
        fams["batch_errors"] = list(page["batches"]["summary"].items())
    for fam, rows in fams.items():
        out += [
            f"## {fam.capitalize()} metrics",
            "",
            "| Metric | Mean | Std | Min | Max | Count |",
            "|:---|---:|---:|---:|---:|---:|",
        ]
        out += [
            f"| {_cell(n)} | {_g(s['mean'])} | {_g(s['std'])} | {_g(s['min'])} | {_g(s['max'])} | {s['count']} |"
            for n, s in rows
        ]
        out.append("")
    pk = pass_at_key(page["metrics"])
    k = pk.rsplit("_", 1)[-1] if pk else "k"
    s = page["series"]
    out += [
        "## Training progression",
        "",
        f"| Step | Reward | Pass@{k} | KL | Loss | Step time (s) | Gen wait (s) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for i, step in enumerate(s["step"]):

        def col(key: str | None, digits: int = 4, i: int = i) -> str:
            c = s.get(key) if key else None
            return _f(c[i], digits) if c else "–"

        out.append(
            f"| {step} | {col('reward/avg_raw_reward')} | {col(pk)} | {col('policy/policy_kl', 6)} | "
            f"{col('policy/policy_loss')} | {col('timing/step', 1)} | {col('timing/wait_for_generation_buffer', 1)} |"
        )
    out.append("")
    timers = flatten_tree(page["timing"]["tree"])
    if timers:
        out += [
            "## Timing breakdown",
            "",
            "Timers nest; a child's share is part of its parent's. `(rest)` is parent time no child covers.",
            "",
            "| Timer | Total (s) | Mean (s) | Share of parent | Share of step (time-weighted) | Mean per-step share |",
            "|:---|---:|---:|---:|---:|---:|",
        ]
        for r in timers:
            out.append(
                f"| {'&nbsp;&nbsp;' * r['depth']}{r['name']} | {_f(r['total_s'], 1)} | {_f(r['mean_s'], 2)} | "
                f"{_pct(r['share_of_parent'])} | {_pct(r['share_of_step'])} | {_pct(r['mean_step_share'])} |"
            )
        for r in page["timing"]["outside_step"]:
            out.append(
                f"| {r['name']} (outside step) | {_f(r['total_s'], 1)} | {_f(r['mean_s'], 2)} | – | "
                f"{_pct(r['share_of_step'])} | – |"
            )
        out.append("")
    v = page.get("vllm")
    if v and v["samples"]:
        out += [
            "## vLLM inference engines",
            "",
            f"{v['samples']} per-engine stat lines from {v['engines']} engines "
            f"({v['suppressed_copies']} more copies suppressed by Ray's log deduplication).",
            "",
            f"- Running requests/engine: mean {_f(v['running_mean'], 1)}, max {_f(v['running_max'], 0)}",
            f"- Waiting requests/engine: mean {_f(v['waiting_mean'], 1)}, max {_f(v['waiting_max'], 0)}",
            f"- Generation throughput/engine: mean {_f(v['gen_throughput_mean'], 1)} tok/s, max {_f(v['gen_throughput_max'], 1)} tok/s",
            f"- KV cache usage: mean {_f(v['kv_cache_pct_mean'], 1)}%",
            f"- Prefix cache hit rate: mean {_f(v['prefix_hit_pct_mean'], 1)}%",
            f"- Verdict: **{v['verdict']}**: {v['verdict_reason']}",
            "",
            "| Engine | Lines | Running mean | Waiting mean | Waiting max | Gen tok/s mean | Gen tok/s max | KV % | Prefix hit % |",
            "|:---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for e in v["per_engine"]:
            out.append(
                f"| {_cell(e['engine'])} | {e['samples']} | {_f(e['running_mean'], 1)} | {_f(e['waiting_mean'], 1)} | "
                f"{_f(e['waiting_max'], 0)} | {_f(e['gen_throughput_mean'], 1)} | {_f(e['gen_throughput_max'], 1)} | "
                f"{_f(e['kv_cache_pct_mean'], 1)} | {_f(e['prefix_hit_pct_mean'], 1)} |"
            )
        out.append("")
    tr = page.get("trials")
    if tr:
        out += trial_report(tr)
    return "\n".join(out) + "\n"


def _pct(v: object) -> str:
    return f"{100 * v:.1f}%" if isinstance(v, int | float) and math.isfinite(v) else "–"


def trial_report(tr: dict) -> list[str]:
    t = tr["turns"]
    out = [
        "## Trials (result.json)",
        "",
        f"Trials parsed: {tr['total']} (malformed {tr['malformed']}, without result.json {tr['missing']}, "
        f"eval trials {tr['eval']})",
        "",
        "### Turns",
        "",
        "| Mean | Median | Std | Min | Max | Count |",
        "|---:|---:|---:|---:|---:|---:|",
        f"| {_f(t['mean'], 2)} | {_f(t['median'], 1)} | {_f(t['std'], 2)} | {_g(t['min'])} | {_g(t['max'])} | {t['count']} |",
        "",
        "### Exceptions",
        "",
        "| Exception | Kind | Count | % |",
        "|:---|:---|---:|---:|",
    ]
    for exc, n in tr["exceptions"].items():
        out.append(
            f"| {_cell(exc)} | {tr['exception_kind_of'][exc]} | {n} | {_pct(n / tr['total'] if tr['total'] else None)} |"
        )
    out += [
        "",
        "### Turns by exception",
        "",
        "| Exception | Mean turns | Median turns | Count |",
        "|:---|---:|---:|---:|",
    ]
    for exc, st in tr["turns_by_exception"].items():
        out.append(
            f"| {_cell(exc)} | {_f(st['mean'], 2)} | {_f(st['median'], 1)} | {st['count']} |"
        )
    out += [
        "",
        "### Turns by outcome",
        "",
        "| Outcome | Mean turns | Median turns | Count |",
        "|:---|---:|---:|---:|",
    ]
    for k, st in tr["turns_by_outcome"].items():
        out.append(f"| {k} | {_f(st['mean'], 2)} | {_f(st['median'], 1)} | {st['count']} |")
    r = tr["reward"]
    out += [
        "",
        "### Reward",
        "",
        f"- Mean reward: {_f(r['mean'])}",
        f"- Success rate (reward > 0): {_pct(r['success_rate'])} ({r['success']} of {r['count']}; failures, reward ≤ 0: {r['failure']})",
        f"- Trials with a reward: {r['count']}",
        "",
    ]
    return out
