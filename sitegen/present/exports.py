"""Text made from page objects: the preview sentence, per-step rows, CSV downloads."""

from __future__ import annotations

import csv
import io
import math

from sitegen.analyse import GEN_WAIT, REWARD, STEP_TIME, pass_at_key
from sitegen.model.parsed import TrialSet
from sitegen.model.vocabulary import exception_kind
from sitegen.present.formatting import fmt_dur, fmt_num, fmt_pct


def headline_text(page: dict) -> str:
    """One sentence with the headline numbers (OpenGraph description)."""
    h = page["headline"]
    parts = [f"{page['status']}"]
    if h["first_step"] is not None:
        parts.append(f"steps {h['first_step']}–{h['last_step']}")
    if h["reward_mean"] is not None:
        parts.append(
            f"reward mean {fmt_num(h['reward_mean'])} (max {fmt_num(h['reward_max'])}, last {fmt_num(h['reward_last'])})"
        )
    if h["pass_at_k_mean"] is not None:
        parts.append(f"pass@{h['pass_at_k']} {fmt_num(h['pass_at_k_mean'])}")
    if h["step_time_mean_s"] is not None:
        parts.append(f"step time {fmt_dur(h['step_time_mean_s'])}")
    if page.get("trial_success_rate") is not None:
        parts.append(f"trial success {fmt_pct(page['trial_success_rate'])}")
    return ", ".join(parts)


def progression_rows(page: dict) -> list[dict]:
    """The reference report's per-step table: reward, pass@k, KL, loss, step time, generation wait."""
    s = page["series"]
    pk = pass_at_key(page["metrics"])
    cols = {
        "reward": REWARD,
        "pass": pk,
        "kl": "policy/policy_kl",
        "loss": "policy/policy_loss",
        "step_time": STEP_TIME,
        "gen_wait": GEN_WAIT,
    }
    rows = []
    for i, step in enumerate(s["step"]):
        row = {"step": step}
        for k, key in cols.items():
            col = s.get(key) if key else None
            row[k] = col[i] if col else None
        rows.append(row)
    return rows


def series_csv(series: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    names = list(series)
    w.writerow(names)
    n = len(series.get("step", []))
    for i in range(n):
        w.writerow(
            [
                ""
                if (v := series[k][i]) is None or (isinstance(v, float) and not math.isfinite(v))
                else v
                for k in names
            ]
        )
    return buf.getvalue()


def _csv_safe(v: object) -> object:
    """Neutralise spreadsheet formulas in text taken from inputs (CSV injection)."""
    if isinstance(v, str) and v[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + v
    return v


def trials_csv(trials: TrialSet) -> str:
    """One row per training trial."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
            "trial",
            "task",
            "reward",
            "outcome",
            "exception",
            "exception_kind",
            "turns",
            "input_tokens",
            "output_tokens",
            "duration_s",
        ]
    )
    for r in trials.results:
        outcome = "" if r.reward is None else ("success" if r.reward > 0 else "failure")
        w.writerow(
            [
                _csv_safe(r.name),
                _csv_safe(r.task),
                "" if r.reward is None else r.reward,
                outcome,
                r.exception or "",
                exception_kind(r.exception),
                "" if r.turns is None else r.turns,
                "" if r.input_tokens is None else r.input_tokens,
                "" if r.output_tokens is None else r.output_tokens,
                "" if r.duration_s is None else r.duration_s,
            ]
        )
    return buf.getvalue()
