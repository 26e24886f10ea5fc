"""Which charts each page shows, built from its page object (see :mod:`sitegen.present.charts`)."""

from __future__ import annotations

import math

from sitegen.analyse import GEN_WAIT, REWARD, STALENESS, STEP_TIME, TOKENS, pass_at_key
from sitegen.present import charts


def job_charts(page: dict) -> dict[str, dict | None]:
    s = page["series"]
    pk = pass_at_key(page["metrics"])
    out: dict[str, dict | None] = {
        "reward": charts.progression(
            s, {REWARD: "reward", **({pk: pk.split("/")[-1].replace("avg_", "")} if pk else {})}
        ),
        "step_time": charts.lines(
            s, {STEP_TIME: "step time (s)", GEN_WAIT: "generation wait (s)"}, y_title="seconds"
        ),
        "timing_stack": timing_stack(page),
        "tokens": charts.lines(s, {TOKENS: "avg generated tokens"}, y_title="tokens"),
        "staleness": charts.lines(
            s,
            {STALENESS: "staleness mean", "async/staleness_max": "staleness max"},
            y_title="steps behind",
        ),
    }
    ev = page.get("eval_series") or {"step": []}
    out["eval"] = charts.lines(
        ev, {k: k.removeprefix("eval/") for k in ev if k != "step"}, y_title="score"
    )
    v = page.get("vllm")
    if v and v["samples"]:
        tl = dict(v["timeline"])
        tl["minute"] = [t / 60 for t in tl["t_s"]]
        out["vllm_throughput"] = vllm_throughput(tl)
        out["vllm_queue"] = _over_time(
            tl, {"running_mean": "running", "waiting_mean": "waiting"}, "requests per engine"
        )
        out["vllm_cache"] = _over_time(
            tl, {"kv_cache_pct_mean": "KV cache %", "prefix_hit_pct_mean": "prefix hit %"}, "%"
        )
    bs = page.get("batch_series") or {"step": []}
    rows = [
        {"x": step, "part": t, "value": bs[t][i]}
        for t in bs
        if t not in ("step", "failed", "masked")
        for i, step in enumerate(bs["step"])
        if bs[t][i]
    ]
    out["batch_errors"] = charts.stacked_bars(rows, "step", "errors")
    tr = page.get("trials")
    if tr:
        out.update(trial_charts(tr))
    return out


def trial_charts(tr: dict) -> dict[str, dict | None]:
    exc_rows = [
        {"label": k, "value": n, "kind": tr["exception_kind_of"][k]}
        for k, n in tr["exceptions"].items()
    ]
    hist = [{"label": k, "value": n} for k, n in tr["turn_histogram"].items()]
    return {
        "trial_exceptions": charts.bars(
            exc_rows, "exception", "trials", "kind", "kinds", horizontal=True
        ),
        "turns_hist": charts.bars(hist, "turns", "trials"),
    }


def _over_time(
    tl: dict, names: dict[str, str], y_title: str, bands: dict[str, tuple[str, str]] | None = None
) -> dict | None:
    """A vLLM timeline chart: per-minute values against minutes since the job started."""
    return charts.lines(
        tl, names, x="minute", x_title="minutes since start", y_title=y_title, bands=bands
    )


def vllm_throughput(tl: dict) -> dict | None:
    if not tl["minute"]:
        return None
    # the band is each minute's slowest and fastest engine line, so dips and spikes show
    return _over_time(
        tl,
        {"gen_throughput_mean": "generation tok/s per engine"},
        "tokens/s",
        bands={"gen_throughput_mean": ("gen_throughput_min", "gen_throughput_max")},
    )


def timing_stack(page: dict) -> dict | None:
    """Stacked leaf timers per step: together they make up ``timing/step``."""
    s = page["series"]
    tree = page["timing"]["tree"]
    if not tree:
        return None
    leaves: list[tuple[str, list[str]]] = []  # (label, [key, minus keys...])

    def walk(node: dict, parent: str | None) -> None:
        kids = node["children"]
        if not kids:
            leaves.append(
                (
                    node["name"] if node["name"] != "(rest)" else f"{parent} (rest)",
                    [node["name"], parent or ""],
                )
            )
        for k in kids:
            walk(k, node["name"])

    walk(tree, None)
    rows = []
    steps = s["step"]
    stride = max(1, len(steps) // 300)
    for i in range(0, len(steps), stride):
        step = steps[i]
        for label, (name, parent) in leaves:
            if name == "(rest)":
                parent_v = s.get(f"timing/{parent}", [None] * len(steps))[i]
                node = _find(tree, parent)
                kids = (
                    [c["name"] for c in node["children"] if c["name"] != "(rest)"] if node else []
                )
                if parent_v is None:
                    continue
                v = parent_v - sum(
                    (s.get(f"timing/{k}", [None] * len(steps))[i] or 0) for k in kids
                )
            else:
                v = s.get(f"timing/{name}", [None] * len(steps))[i]
            if isinstance(v, int | float) and math.isfinite(v):
                rows.append({"x": step, "part": label, "value": max(0.0, v)})
    return charts.stacked_bars(rows, "step", "seconds")


def _find(node: dict, name: str) -> dict | None:
    if node["name"] == name:
        return node
    for c in node["children"]:
        f = _find(c, name)
        if f:
            return f
    return None


def run_charts(page: dict) -> dict[str, dict | None]:
    s = page["series"]
    pk = pass_at_key(page["metrics"])
    rules = [
        {"x": r["cut_at"] + 0.5, "label": f"{r['job']} resumed from step {r['cut_at']}"}
        for r in page["restarts"]
    ]
    marks = [
        {"x": d["step"], "y": d["reward"], "label": f"step {d['step']} as first logged (discarded)"}
        for d in page["discarded"]
        if isinstance(d.get("reward"), int | float) and math.isfinite(d["reward"])
    ]
    out: dict[str, dict | None] = {
        "reward": charts.progression(
            s,
            {REWARD: "reward", **({pk: pk.split("/")[-1].replace("avg_", "")} if pk else {})},
            rules=rules,
            marks=marks,
        ),
        "step_time": charts.lines(
            s, {STEP_TIME: "step time (s)", GEN_WAIT: "generation wait (s)"}, y_title="seconds"
        ),
        "timing_stack": timing_stack(page),
    }
    if page.get("trials"):
        out.update(trial_charts(page["trials"]))
    return out
