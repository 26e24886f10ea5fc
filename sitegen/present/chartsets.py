"""Which charts each page shows, built from its page object (see :mod:`sitegen.present.charts`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sitegen.model.vocabulary import (
    CLIP_RATIO_RE,
    GRAD_NORM_KEYS,
    POLICY_ENTROPY,
    POLICY_KL,
    POLICY_KL_RE,
    STALENESS,
    STALENESS_MAX,
    STEP_TIME,
    TOKENS,
    gen_wait_key,
    is_finite,
)
from sitegen.pages.objects import JobPage, RunPage
from sitegen.pages.sections import Series, Stats, TimerNode, Timing, TrialSummary
from sitegen.present import charts
from sitegen.present.insight_charts import insight_charts
from sitegen.present.learning_charts import reward_chart, reward_names, success_chart
from sitegen.present.transcripts import heatmap_links

Charts = dict[str, dict | None]  # chart name -> Vega-Lite spec (None: nothing to draw)


def step_charts(series: Series, metrics: Mapping[str, Stats], timing: Timing) -> Charts:
    """The charts a job page and a run page both draw from their steps alone (series,
    statistics, timing tree): reward, step time, the timing stack, the policy charts. Apart,
    so that a run of one job takes its job page's (``PageFiles``) instead of drawing them."""
    step_lines = {STEP_TIME: "step time (s)", gen_wait_key(series): "generation wait (s)"}
    policy = policy_keys(metrics)  # a line chart of each policy-health metric the page has
    return {
        "reward": charts.progression(series, reward_names(metrics)),
        "step_time": charts.lines(series, step_lines, y_title="seconds"),
        "timing_stack": timing_stack(series, timing),
        **{
            chart: charts.lines(series, {policy[chart]: label}, y_title=label)
            for chart, label in POLICY_CHARTS
            if chart in policy
        },
    }


def job_charts(page: JobPage, steps: Charts | None = None) -> Charts:
    """A job page's charts; ``steps``: its :func:`step_charts`, if made already."""
    s = page.series
    out: Charts = {
        **(steps if steps is not None else step_charts(s, page.metrics, page.timing)),
        "success": success_chart(page.learning),
        "tokens": charts.lines(s, {TOKENS: "avg generated tokens"}, y_title="tokens"),
        "staleness": charts.lines(
            s,
            {STALENESS: "staleness mean", STALENESS_MAX: "staleness max"},
            y_title="steps behind",
        ),
    }
    if trials_reward := reward_chart(s, page.metrics, page.learning):
        out["reward"] = trials_reward
    ev = page.eval_series
    # eval runs every few steps: points mark where a value was logged
    out["eval"] = charts.lines(
        ev, {k: k.removeprefix("eval/") for k in ev if k != "step"}, y_title="score", points=True
    )
    v = page.vllm
    if v and v.samples:
        tl = v.timeline.columns()
        tl["minute"] = [t / 60 for t in tl["t_s"]]
        tps = {"gen_throughput_mean": "generation tok/s per engine"}
        # the band: each minute's slowest and fastest engine line, so dips and spikes show
        band = {"gen_throughput_mean": ("gen_throughput_min", "gen_throughput_max")}
        out["vllm_throughput"] = _over_time(tl, tps, "tokens/s", band) if tl["minute"] else None
        out["vllm_queue"] = _over_time(
            tl, {"running_mean": "running", "waiting_mean": "waiting"}, "requests per engine"
        )
        out["vllm_cache"] = _over_time(
            tl, {"kv_cache_pct_mean": "KV cache %", "prefix_hit_pct_mean": "prefix hit %"}, "%"
        )
    bs = page.batch_series
    rows = [
        {"x": step, "part": t, "value": bs[t][i]}
        for t in bs
        if t not in ("step", "failed", "masked")
        for i, step in enumerate(bs["step"])
        if bs[t][i]
    ]
    out["batch_errors"] = charts.stacked_bars(rows, "step", "errors", step_width=1, count=True)
    if page.trials:
        out.update(trial_charts(page.trials))
    out.update(insight_charts(page.tasks, page.rollouts, heatmap_links(page)))
    return out


# The policy-health charts, in the order the page shows them: (chart, label). One chart a
# metric: their scales differ by orders of magnitude (KL ~0.001, entropy ~1, a gradient
# norm ~10-1000), so on one axis all but one would be a flat line at 0.
POLICY_CHARTS = (
    ("policy_kl", "KL divergence"),
    ("policy_entropy", "entropy"),
    ("policy_grad_norm", "gradient norm"),
    ("policy_clip_ratio", "clip ratio"),
)


def policy_keys(metrics: Iterable[str]) -> dict[str, str]:
    """The metric each policy-health chart draws, of those a page has: ``{chart: metric}``.

    KL: ``policy/policy_kl`` (else the first ``policy/kl*``); entropy:
    ``policy/policy_entropy``; gradient norm: ``policy/raw_grad_norm`` (else
    ``policy/grad_norm``); clip ratio: the first ``policy/*clip_ratio`` or ``*clipfrac``.
    """
    names = sorted(metrics)
    have = set(names)
    kl = POLICY_KL if POLICY_KL in have else next((n for n in names if POLICY_KL_RE.match(n)), None)
    grad = next((k for k in GRAD_NORM_KEYS if k in have), None)
    picks = {
        "policy_kl": kl,
        "policy_entropy": POLICY_ENTROPY if POLICY_ENTROPY in have else None,
        "policy_grad_norm": grad,
        "policy_clip_ratio": next((n for n in names if CLIP_RATIO_RE.match(n)), None),
    }
    return {chart: key for chart, key in picks.items() if key is not None}


# What each policy chart's caption says the metric shows (after its name and key).
_POLICY_READING = {
    "policy_kl": "how far each update moved the policy",
    "policy_entropy": "a fall toward 0 is a policy collapsing onto one answer",
    "policy_grad_norm": "spikes mark unstable updates",
    "policy_clip_ratio": "the share of tokens whose probability ratio PPO clipped",
}


def policy_captions(page: JobPage | RunPage, drawn: Mapping[str, object]) -> list[tuple[str, str]]:
    """``(chart, caption)`` of each policy chart in ``drawn``, in :data:`POLICY_CHARTS` order:
    ``"KL divergence (policy/policy_kl): how far each update moved the policy"``."""
    keys = policy_keys(page.metrics)
    return [
        (chart, f"{label[0].upper()}{label[1:]} ({keys[chart]}): {_POLICY_READING[chart]}")
        for chart, label in POLICY_CHARTS
        if chart in drawn and chart in keys
    ]


def trial_charts(tr: TrialSummary) -> Charts:
    exc_rows = [
        {"label": k, "value": n, "kind": tr.exception_kind_of[k]} for k, n in tr.exceptions.items()
    ]
    hist = [{"label": k, "value": n} for k, n in _turn_bins(tr.turn_histogram).items()]
    return {
        "trial_exceptions": charts.bars(
            exc_rows, "exception", "trials", "kind", "kinds", horizontal=True
        ),
        "turns_hist": charts.bars(hist, "turns", "trials"),
    }


MAX_TURN_BARS = 200


def _turn_bins(hist: dict[str, int]) -> dict[str, int]:
    """The turn histogram with each missing turn count between the least and the most as 0,
    so the bars (an ordinal axis) show the gap; past :data:`MAX_TURN_BARS` bars, as it is."""
    turns = [int(k) for k in hist if k.lstrip("-").isdigit()]
    if len(turns) != len(hist) or not turns or max(turns) - min(turns) >= MAX_TURN_BARS:
        return hist
    return {str(t): hist.get(str(t), 0) for t in range(min(turns), max(turns) + 1)}


def _over_time(
    tl: dict, names: dict[str, str], y_title: str, bands: dict[str, tuple[str, str]] | None = None
) -> dict | None:
    """A vLLM timeline chart: per-minute values against minutes since the job started."""
    return charts.lines(
        tl, names, x="minute", x_title="minutes since start", y_title=y_title, bands=bands
    )


# SkyRL's step timers (its trainers' ``Timer(...)`` names), each with its own colour on
# every timing chart, so a timer is found by colour from one page to the next. The first ten
# palette colours go to the timers that take most of a step; other timers and the "(rest)"
# parts take the ten others (charts.part_colours).
TIMER_COLOURS = dict(
    zip(
        (
            "generate",
            "wait_for_generation_buffer",
            "policy_train",
            "fwd_logprobs_values_reward",
            "sync_weights",
            "convert_to_training_input",
            "compute_advantages_and_returns",
            "critic_train",
            "apply_reward_kl_penalty",
            "postprocess_generator_output",
        ),
        charts.PALETTE,
        strict=True,
    )
)


def timing_stack(s: Series, timing: Timing) -> dict | None:
    """Stacked leaf timers per step: together they make up ``timing/step``."""
    tree = timing.tree
    if not tree:
        return None
    steps = s["step"]
    none = [None] * len(steps)
    # each leaf's (label, column, None) or, for a "(rest)" leaf (analyse.steps.UNACCOUNTED),
    # (label, its parent's column, its siblings' columns): the parent's time they leave over
    leaves: list[tuple[str, list, list[list] | None]] = []

    def walk(node: TimerNode, parent: TimerNode | None) -> None:
        if not node.children and parent is not None and node.name == "(rest)":
            others = [s.get(f"timing/{c.name}", none) for c in parent.children if c is not node]
            leaves.append((f"{parent.name} (rest)", s.get(f"timing/{parent.name}", none), others))
        elif not node.children:
            leaves.append((node.name, s.get(f"timing/{node.name}", none), None))
        for k in node.children:
            walk(k, node)

    walk(tree, None)
    rows = []
    stride = max(1, len(steps) // 300)
    for i in range(0, len(steps), stride):
        step = steps[i]
        for label, col, minus in leaves:
            v = col[i]
            if minus is not None:
                if v is None:
                    continue
                v = v - sum((c[i] or 0) for c in minus)
            if is_finite(v):
                rows.append({"x": step, "part": label, "value": max(0.0, v)})
    return charts.stacked_bars(rows, "step", "seconds", step_width=stride, fixed=TIMER_COLOURS)


def run_charts(page: RunPage, steps: Charts | None = None) -> Charts:
    """A run page's charts; ``steps``: its :func:`step_charts`, if made already."""
    s = page.series
    rules = [
        {"x": r.cut_at + 0.5, "label": f"{r.job} resumed from step {r.cut_at}"}
        for r in page.restarts
    ]
    marks = [
        {"x": d.step, "y": d.reward, "label": f"step {d.step} as first logged (discarded)"}
        for d in page.discarded
        if is_finite(d.reward)
    ]
    out: Charts = dict(steps if steps is not None else step_charts(s, page.metrics, page.timing))
    # (in its place: the first chart)
    if trials_reward := reward_chart(s, page.metrics, page.learning, rules, marks):
        out["reward"] = trials_reward
    elif rules or marks:
        out["reward"] = charts.progression(s, reward_names(page.metrics), rules=rules, marks=marks)
    out["success"] = success_chart(page.learning)
    if page.trials:
        out.update(trial_charts(page.trials))
    out.update(insight_charts(page.tasks, page.rollouts, heatmap_links(page)))
    return out
