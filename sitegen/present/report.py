"""``report.md``: one job's figures as Markdown tables, in the layout of the script it
replaces, with the numbers that script got wrong corrected (docs/formats.md §7).
"""

from __future__ import annotations

from sitegen.pages.objects import JobPage
from sitegen.pages.sections import Stats, TrialSummary
from sitegen.present.formatting import fmt_pct as _pct
from sitegen.present.formatting import md_cell as _cell
from sitegen.present.formatting import text_fixed as _f
from sitegen.present.formatting import text_sig as _g


def job_report(page: JobPage) -> str:
    """The job's report.md: overview, metric families, per-step table, timers, vLLM, trials."""
    h = page.headline
    out = [f"# SkyRL training report: {_cell(page.id)}", ""]
    out += [
        "## Overview",
        "",
        "| Job | Status | First step | Last step | Metric blocks | Reward mean | Reward max | Reward last | Total time (s) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
        f"| {_cell(page.id)} | {page.status} | {_f(h.first_step)} | {_f(h.last_step)} | "
        f"{page.metric_blocks} | {_f(h.reward_mean)} | {_f(h.reward_max)} | {_f(h.reward_last)} | "
        f"{_f(h.total_time_s, 1)} |",
        "",
    ]
    out += _findings(page)
    out += _learning(page)
    fams: dict[str, dict[str, Stats]] = page.families()
    if page.batches and page.batches.summary:
        fams["batch_errors"] = page.batches.summary
    for fam, rows in fams.items():
        out += [
            f"## {fam.capitalize()} metrics",
            "",
            "| Metric | Mean | Std | Min | Max | Count |",
            "|:---|---:|---:|---:|---:|---:|",
        ]
        out += [
            f"| {_cell(n)} | {_g(s.mean)} | {_g(s.std)} | {_g(s.min)} | {_g(s.max)} | {s.count} |"
            for n, s in rows.items()
        ]
        out.append("")
    out += [
        "## Training progression",
        "",
        f"| Step | Reward | {h.pass_label.capitalize()} | KL | Loss | Step time (s) | Gen wait (s) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    out += [
        f"| {r.step} | {_f(r.reward)} | {_f(r.pass_at_k)} | {_f(r.kl, 6)} | {_f(r.loss)} | "
        f"{_f(r.step_time, 1)} | {_f(r.gen_wait, 1)} |"
        for r in page.progression()
    ]
    out.append("")
    timers = page.timing.rows()
    if timers:
        out += [
            "## Timing breakdown",
            "",
            "Timers nest; a child's share is part of its parent's. `(rest)` is parent time no child covers.",
            "",
            "| Timer | Total (s) | Mean (s) | Share of parent | Share of step (time-weighted) | Mean per-step share |",
            "|:---|---:|---:|---:|---:|---:|",
        ]
        for row in timers:
            t = row.node
            out.append(
                f"| {'&nbsp;&nbsp;' * row.depth}{t.name} | {_f(t.total_s, 1)} | {_f(t.mean_s, 2)} | "
                f"{_pct(t.share_of_parent)} | {_pct(t.share_of_step)} | {_pct(t.mean_step_share)} |"
            )
        for o in page.timing.outside_step:
            out.append(
                f"| {o.name} (outside step) | {_f(o.total_s, 1)} | {_f(o.mean_s, 2)} | – | "
                f"{_pct(o.share_of_step)} | {_pct(o.mean_step_share)} |"
            )
        out.append("")
    v = page.vllm
    if v and v.samples:
        out += [
            "## vLLM inference engines",
            "",
            f"{v.samples} per-engine stat lines from {v.engines} engines "
            f"({v.suppressed_copies} more copies suppressed by Ray's log deduplication).",
            "",
            f"- Running requests/engine: mean {_f(v.running_mean, 1)}, max {_f(v.running_max, 0)}",
            f"- Waiting requests/engine: mean {_f(v.waiting_mean, 1)}, max {_f(v.waiting_max, 0)}",
            f"- Generation throughput/engine: mean {_f(v.gen_throughput_mean, 1)} tok/s, max {_f(v.gen_throughput_max, 1)} tok/s",
            f"- KV cache usage: mean {_f(v.kv_cache_pct_mean, 1)}%",
            f"- Prefix cache hit rate: mean {_f(v.prefix_hit_pct_mean, 1)}%",
            *(
                [f"- Preemptions: {_f(v.preemptions_total, 0)} in all"]
                if v.preemptions_total is not None
                else []
            ),
            f"- Verdict: **{v.verdict}**: {v.verdict_reason}",
            "",
            "| Engine | Lines | Running mean | Waiting mean | Waiting max | Gen tok/s mean | Gen tok/s max | KV % | Prefix hit % |",
            "|:---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for e in v.per_engine:
            out.append(
                f"| {_cell(e.engine)} | {e.samples} | {_f(e.running_mean, 1)} | {_f(e.waiting_mean, 1)} | "
                f"{_f(e.waiting_max, 0)} | {_f(e.gen_throughput_mean, 1)} | {_f(e.gen_throughput_max, 1)} | "
                f"{_f(e.kv_cache_pct_mean, 1)} | {_f(e.prefix_hit_pct_mean, 1)} |"
            )
        out.append("")
    tr = page.trials
    if tr:
        out += trial_report(tr)
    return "\n".join(out) + "\n"


def trial_report(tr: TrialSummary) -> list[str]:
    """The report's trials section (docs/formats.md §6: turns, exceptions, rewards)."""
    t = tr.turns
    out = [
        "## Trials (result.json)",
        "",
        f"Trials parsed: {tr.total} (malformed {tr.malformed}, without result.json {tr.missing}, "
        f"eval trials {tr.eval})",
        "",
        "### Turns",
        "",
        "| Mean | Median | Std | Min | Max | Count |",
        "|---:|---:|---:|---:|---:|---:|",
        f"| {_f(t.mean, 2)} | {_f(t.median, 1)} | {_f(t.std, 2)} | {_g(t.min)} | {_g(t.max)} | {t.count} |",
        "",
        "### Exceptions",
        "",
        "| Exception | Kind | Count | % |",
        "|:---|:---|---:|---:|",
    ]
    for exc, n in tr.exceptions.items():
        out.append(
            f"| {_cell(exc)} | {tr.exception_kind_of[exc]} | {n} | {_pct(n / tr.total if tr.total else None)} |"
        )
    for by, groups in (("exception", tr.turns_by_exception), ("outcome", tr.turns_by_outcome)):
        out += [
            "",
            f"### Turns by {by}",
            "",
            f"| {by.capitalize()} | Mean turns | Median turns | Count |",
            "|:---|---:|---:|---:|",
        ]
        for k, st in groups.items():
            out.append(f"| {_cell(k)} | {_f(st.mean, 2)} | {_f(st.median, 1)} | {st.count} |")
    r = tr.reward
    out += [
        "",
        "### Reward",
        "",
        f"- Mean reward: {_f(r.mean)}",
        f"- Success rate (reward > 0): {_pct(r.success_rate)} ({r.success} of {r.count}; failures, reward ≤ 0: {r.failure})",
        f"- Trials with a reward: {r.count}",
        "",
    ]
    return out


def _findings(page: JobPage) -> list[str]:
    """The findings (sitegen/insights/findings.py), most severe first, right after the overview."""
    if not page.findings:
        return []
    out = ["## Findings", ""]
    out += [f"- **{f.severity}** {_cell(f.title)}: {_cell(f.detail)}" for f in page.findings]
    return out + [""]


def _learning(page: JobPage) -> list[str]:
    """Is it learning? (sitegen/insights/learning.py): the verdict with its interval."""
    v = page.learning.verdict if page.learning else None
    if v is None:
        return []
    if v.source == "trials":
        change = (
            f"success rate {_pct(v.early_value)} (steps {v.early[0]}–{v.early[1]}) → "
            f"{_pct(v.late_value)} (steps {v.late[0]}–{v.late[1]}): {_f(100 * v.change, 1)} "
            f"points, 95 % interval {_f(100 * v.lo, 1)} to {_f(100 * v.hi, 1)}, {v.units} tasks"
        )
    else:
        change = (
            f"reward {_f(v.early_value)} (steps {v.early[0]}–{v.early[1]}) → {_f(v.late_value)} "
            f"(steps {v.late[0]}–{v.late[1]}): {_f(v.change)}, 95 % interval {_f(v.lo)} to "
            f"{_f(v.hi)}"
        )
    return ["## Is it learning?", "", f"**{v.verdict}**: {change}. How: {_cell(v.method)}.", ""]
