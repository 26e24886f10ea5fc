"""report.md: the old script's sections, its numbers from the page object, markdown kept safe."""

from __future__ import annotations

import math

import msgspec

from sitegen.model.vocabulary import REWARD
from sitegen.present.report import job_report

JOB = "exp-async.async-run_561773"


def _section(text: str, title: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(title)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start:end]


def test_report_sections_and_overview(job_pages):
    page = job_pages[JOB]
    text = job_report(page)
    assert text.startswith(f"# SkyRL training report: {JOB}\n")
    h = page.headline
    overview = _section(text, "## Overview")
    assert overview[4] == (
        f"| {JOB} | {page.status} | {h.first_step} | {h.last_step} | {page.metric_blocks} | "
        f"{h.reward_mean:.4f} | {h.reward_max:.4f} | {h.reward_last:.4f} | {h.total_time_s:.1f} |"
    )
    for fam in page.families():
        assert f"## {fam.capitalize()} metrics" in text
    assert "## Batch_errors metrics" in text  # batch lines, as the old report named them
    assert f"Verdict: **{page.vllm.verdict}**" in text
    assert "## Trials (result.json)" not in text  # the run owns the trials


def test_progression_table_is_the_pages_rows(job_pages):
    page = job_pages[JOB]
    table = _section(job_report(page), "## Training progression")
    assert table[2].startswith(f"| Step | Reward | Pass@{page.headline.pass_at_k} | KL |")
    rows = [line for line in table[4:] if line.startswith("| ")]
    assert len(rows) == len(page.series["step"])
    for line, r in zip(rows, page.progression(), strict=True):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[0] == str(r.step)
        assert cells[1] == f"{r.reward:.4f}"
        assert cells[3] == ("–" if r.kl is None else f"{r.kl:.6f}")


def test_timing_rows_nest(job_pages):
    page = job_pages[JOB]
    table = _section(job_report(page), "## Timing breakdown")
    rows = [line for line in table if line.startswith("| ") and "Timer" not in line]
    assert len(rows) == len(page.timing.rows()) + len(page.timing.outside_step)
    assert rows[0].startswith("| step | ")
    # step > run_training > train_critic_and_policy > policy_train
    assert any(line.startswith("| " + "&nbsp;" * 6 + "policy_train |") for line in rows)


def test_trials_section(run_pages, job_pages):
    # a job page that owns trials: the sync baseline's folder
    page = job_pages["flat.sync-baseline.train_600100"]
    tr = page.trials
    assert tr is not None
    section = _section(job_report(page), "## Trials (result.json)")
    assert f"Trials parsed: {tr.total} " in section[2]
    for exc, n in tr.exceptions.items():
        assert any(
            line.startswith(f"| {exc} | {tr.exception_kind_of[exc]} | {n} |") for line in section
        )
    assert f"- Success rate (reward > 0): {100 * tr.reward.success_rate:.1f}%" in "\n".join(section)


def test_non_finite_values_and_table_cells(job_pages):
    page = job_pages[JOB]
    series = dict(page.series)
    series[REWARD] = [math.nan, *series[REWARD][1:]]
    odd = msgspec.structs.replace(page, id="a|b\nc", series=series)
    text = job_report(odd)
    assert text.startswith("# SkyRL training report: a\\|b c\n")
    first = _section(text, "## Training progression")[4]
    assert first.startswith(f"| {page.series['step'][0]} | nan |")  # logged nan stays visible
