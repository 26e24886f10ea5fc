"""Which charts a page shows, and that their data is the page's (chart shapes: test_charts.py)."""

from __future__ import annotations

import math
from collections import defaultdict

import pytest

from sitegen.model.vocabulary import REWARD, STEP_TIME
from sitegen.present import charts
from sitegen.present.chartsets import job_charts, run_charts, timing_stack, trial_charts
from tests.present.helpers import rows

JOB = "exp-async.async-run_561773"


def _values(spec: dict) -> list[dict]:
    """Every data row of a spec (its layers' data too)."""
    return rows(spec)


def test_job_charts_follow_what_the_log_has(job_pages):
    page = job_pages[JOB]
    specs = job_charts(page)
    drawn = {k for k, v in specs.items() if v}
    assert {"reward", "step_time", "timing_stack", "tokens", "staleness"} <= drawn
    assert {"vllm_throughput", "vllm_queue", "vllm_cache", "batch_errors"} <= drawn
    assert "trial_exceptions" not in specs  # the run owns this job's trials
    assert specs["eval"] is None  # no eval metrics in this log
    labels = {r.get("metric") for r in _values(specs["reward"])}
    assert {"reward", "pass@8"} <= labels  # named as the cards and tables name it


def test_eval_chart_marks_each_logged_value(job_pages):
    page = next(p for p in job_pages.values() if len(p.eval_series) > 1)
    spec = job_charts(page)["eval"]
    line = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "line")
    assert line["mark"]["point"] is True
    steps = {r["x"] for r in _values(spec)}
    assert steps == set(page.eval_series["step"])


def test_timing_stack_adds_up_to_the_step_time(job_pages):
    page = job_pages[JOB]
    spec = timing_stack(page.series, page.timing)
    assert spec is not None
    per_step: dict[int, float] = defaultdict(float)
    for r in _values(spec):
        per_step[r["x"]] += r["value"]
    steps = page.series["step"]
    for step, t in zip(steps, page.series[STEP_TIME], strict=True):
        assert per_step[step] == pytest.approx(t, rel=1e-9), step


def _part_colours(spec: dict) -> dict[str, str]:
    """A stacked chart's colour of each part: its sorted domain against its range."""
    scale = next(
        layer["encoding"]["color"]["scale"]
        for layer in spec.get("layer", [spec])
        if "color" in layer.get("encoding", {})
    )
    parts = sorted({r["part"] for r in _values(spec)})
    return dict(zip(parts, scale["range"], strict=False))


def test_a_timer_has_its_own_colour_on_every_timing_chart(job_pages, run_pages):
    """The colour of a SkyRL timer is the same on every page (not given by the order of the
    timers a page has), and no two parts of one chart share a colour."""
    from sitegen.present.chartsets import TIMER_COLOURS

    seen: dict[str, set[str]] = defaultdict(set)
    for page in [*job_pages.values(), *run_pages.values()]:
        spec = timing_stack(page.series, page.timing)
        if spec is None:
            continue
        colours = _part_colours(spec)
        assert len(set(colours.values())) == len(colours), page.id
        for part, colour in colours.items():
            seen[part].add(colour)
    known = {p for p in seen if p in TIMER_COLOURS}
    assert len(known) >= 3  # (the fixture logs time several)
    for part in known:
        assert seen[part] == {TIMER_COLOURS[part]}, part


def test_part_colours_fix_the_named_and_share_out_the_rest():
    fixed = {"b": charts.PALETTE[0], "z": charts.PALETTE[1]}
    free = [c for c in charts.PALETTE_20 if c not in fixed.values()]
    assert charts.part_colours(["a", "b", "c"], fixed) == [free[0], charts.PALETTE[0], free[1]]
    many = [f"t{i:02d}" for i in range(25)]
    got = charts.part_colours(many, fixed)
    assert got[:18] == free and got[18:] == free[:7]  # past the free colours: again


def test_run_reward_chart_marks_restarts_and_discarded_steps(run_pages):
    run = run_pages["exp-async"]
    spec = run_charts(run)["reward"]
    records = _values(spec)
    rules = [r for r in records if "resumed from step" in str(r.get("label", ""))]
    assert [r["x"] for r in rules] == [r.cut_at + 0.5 for r in run.restarts]
    marks = [r for r in records if "discarded" in str(r.get("label", ""))]
    assert sorted(m["x"] for m in marks) == sorted(
        d.step for d in run.discarded if d.reward is not None and math.isfinite(d.reward)
    )
    assert {r.get("metric") for r in records if "metric" in r} >= {"reward"}
    assert len(run.series[REWARD]) == run.steps


def test_trial_charts_colour_exceptions_by_kind(run_pages):
    tr = run_pages["exp-async"].trials
    assert tr is not None
    specs = trial_charts(tr)
    bars = {r["label"]: r for r in _values(specs["trial_exceptions"])}
    assert set(bars) == set(tr.exceptions)
    for exc, r in bars.items():
        assert r["value"] == tr.exceptions[exc]
        assert r["kind"] == tr.exception_kind_of[exc]
    hist = {r["label"]: r["value"] for r in _values(specs["turns_hist"])}
    # every turn count from the least to the most has a bar: a gap shows as a 0
    turns = sorted(int(k) for k in tr.turn_histogram)
    assert list(hist) == [str(t) for t in range(turns[0], turns[-1] + 1)]
    assert {k: v for k, v in hist.items() if v} == tr.turn_histogram
    assert any(v == 0 for v in hist.values())  # the sample has gaps


def test_turn_bins_fill_gaps_within_bounds():
    from sitegen.present.chartsets import MAX_TURN_BARS, _turn_bins

    assert _turn_bins({"2": 3, "5": 1}) == {"2": 3, "3": 0, "4": 0, "5": 1}
    wide = {"1": 1, str(1 + MAX_TURN_BARS): 1}
    assert _turn_bins(wide) == wide  # too many bars: as it is
    assert _turn_bins({}) == {}


def test_step_bars_keep_gaps_and_count_in_whole_numbers():
    from sitegen.present import charts

    rows = [{"x": 1, "part": "a", "value": 2}, {"x": 5, "part": "a", "value": 1}]
    spec = charts.stacked_bars(rows, "step", "errors", step_width=1, count=True)
    enc = spec["encoding"]
    assert enc["x"]["field"] == "x_start" and enc["x"]["type"] == "quantitative"
    assert enc["y"]["axis"] == {
        "format": "d",
        "tickCount": {"expr": "min(ceil(height/40),max(1,round(span(domain('y')))))"},
    }
    calc = {t["as"]: t["calculate"] for t in spec["transform"] if "calculate" in t}
    assert calc == {"x_start": "datum.x - 0.45", "x_end": "datum.x + 0.45"}
    # a bin of 20 steps from its first step: 90 % of the bin's width
    spec = charts.stacked_bars(rows, "step (bins of 20)", "s", step_width=20)
    calc = {t["as"]: t["calculate"] for t in spec["transform"] if "calculate" in t}
    assert calc == {"x_start": "datum.x + 0.5", "x_end": "datum.x + 18.5"}
    assert "axis" not in spec["encoding"]["y"]


def test_many_stacked_parts_get_their_own_colours_and_a_wrapping_legend():
    from sitegen.present import charts

    def colour(spec):
        return spec["encoding"]["color"]

    few = [{"x": 1, "part": p, "value": 1.0} for p in ("a", "b", "c")]
    c = colour(charts.stacked_bars(few, "step", "s", step_width=1))
    assert c["scale"]["range"] == charts.PALETTE and c["legend"]["columns"] == 3
    many = [{"x": 1, "part": f"timer_number_{i}", "value": 1.0} for i in range(14)]
    c = colour(charts.stacked_bars(many, "step", "s", step_width=1))
    assert len(set(c["scale"]["range"][:14])) == 14  # no two parts share a colour
    assert c["scale"]["range"][:10] == charts.PALETTE
    assert c["legend"]["columns"] == charts.LEGEND_COLUMNS


def test_policy_keys_pick_what_the_log_has():
    from sitegen.present.chartsets import policy_keys

    assert policy_keys(["policy/policy_kl", "policy/policy_entropy", "policy/raw_grad_norm"]) == {
        "policy_kl": "policy/policy_kl",
        "policy_entropy": "policy/policy_entropy",
        "policy_grad_norm": "policy/raw_grad_norm",
    }
    # older names: grad_norm, a kl without the policy_ prefix, a clipfrac
    assert policy_keys(["policy/grad_norm", "policy/kl_mean", "policy/pg_clipfrac"]) == {
        "policy_kl": "policy/kl_mean",
        "policy_grad_norm": "policy/grad_norm",
        "policy_clip_ratio": "policy/pg_clipfrac",
    }
    both = policy_keys(["policy/grad_norm", "policy/raw_grad_norm", "policy/ppo_clip_ratio"])
    assert both["policy_grad_norm"] == "policy/raw_grad_norm"
    assert both["policy_clip_ratio"] == "policy/ppo_clip_ratio"
    assert policy_keys(["reward/avg_raw_reward", "policy/policy_loss"]) == {}


def test_policy_charts_draw_each_metric_on_its_own(job_pages, run_pages):
    """One chart a policy metric, its values the page's series of that metric; a page
    without policy metrics has none; the captions name the metric drawn."""
    from sitegen.present.chartsets import POLICY_CHARTS, policy_captions, policy_keys

    names = {c for c, _ in POLICY_CHARTS}
    drew = 0
    for page in [*job_pages.values(), *run_pages.values()]:
        specs = job_charts(page) if page in job_pages.values() else run_charts(page)
        drawn = {k for k, v in specs.items() if v and k in names}
        keys = policy_keys(page.metrics)
        assert drawn == {c for c in keys if any(is_finite(v) for v in page.series[keys[c]])}
        for chart in drawn:
            rows = _values(specs[chart])
            assert {r["metric"] for r in rows} == {dict(POLICY_CHARTS)[chart]}
            col = page.series[keys[chart]]
            want = {(x, v) for x, v in zip(page.series["step"], col, strict=True) if is_finite(v)}
            assert {(r["x"], r["y"]) for r in rows} == want
            drew += 1
        caps = dict(policy_captions(page, {k: specs[k] for k in drawn}))
        assert set(caps) == drawn and all(keys[c] in caps[c] for c in drawn)
    assert drew >= 4


def is_finite(v):
    return isinstance(v, int | float) and math.isfinite(v)


def test_wasted_share_chart_only_when_some_step_wasted_a_group():
    """All shares 0: no chart (a flat line at 0 repeats the card above it); one step with
    a wasted group: the line, in percent."""
    from types import SimpleNamespace as NS

    from sitegen.present.insight_charts import wasted_share

    def section(shares):
        steps = [NS(step=i + 1, share=s) for i, s in enumerate(shares)]
        return NS(wasted=NS(steps=steps))

    assert wasted_share(section([0.0, 0.0, None, 0.0])) is None
    spec = wasted_share(section([0.0, 0.25, 0.0]))
    assert spec is not None
    assert [r["y"] for r in _values(spec)] == [0.0, 25.0, 0.0]


def test_output_tokens_have_their_own_chart(run_pages):
    """Input (and cached) tokens on one chart, output on another: input runs tens of times
    output, and on one axis output lay flat on zero. Each value is its step's sum."""
    from sitegen.present.insight_charts import output_tokens_steps, tokens_steps

    r = run_pages["exp-async"].rollouts
    assert r is not None and len(r.per_step) >= 2
    prompt = {(x["metric"], x["x"]): x["y"] for x in _values(tokens_steps(r))}
    out = {(x["metric"], x["x"]): x["y"] for x in _values(output_tokens_steps(r))}
    assert {m for m, _ in prompt} <= {"input", "cached"} and {m for m, _ in out} == {"output"}
    for s in r.per_step:
        assert prompt[("input", s.step)] == s.input_tokens
        assert out[("output", s.step)] == s.output_tokens
