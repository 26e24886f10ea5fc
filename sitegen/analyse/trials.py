"""Trial figures (Harbor ``result.json``): turns, exceptions by type and kind, rewards."""

from __future__ import annotations

import math
import statistics
from collections import Counter

from sitegen.analyse.steps import summarize
from sitegen.model.parsed import TrialSet
from sitegen.model.vocabulary import exception_kind, is_finite


def _turn_stats(xs: list[int]) -> dict:
    if not xs:
        return {"mean": None, "median": None, "count": 0}
    return {
        "mean": math.fsum(xs) / len(xs),
        "median": float(statistics.median(xs)),
        "count": len(xs),
    }


def trial_stats(ts: TrialSet) -> dict:
    """Turns, exceptions (by type and kind), rewards, turns by exception and outcome."""
    res = ts.results
    exceptions = Counter(r.exception or "none" for r in res)
    kinds = Counter(r.kind for r in res)
    # Harbor's own classification where the files carry it (the first trial's, per type)
    kind_of: dict[str, str] = {}
    for r in res:
        if r.exception and r.exception_kind:
            kind_of.setdefault(r.exception, r.exception_kind)
    turns = [r.turns for r in res if r.turns is not None]
    rewards = [r.reward for r in res if is_finite(r.reward)]
    success = sum(1 for x in rewards if x > 0)
    by_exc: dict[str, list[int]] = {}
    by_outcome: dict[str, list[int]] = {"success": [], "failure": []}
    for r in res:
        if r.turns is None:
            continue
        by_exc.setdefault(r.exception or "none", []).append(r.turns)
        if is_finite(r.reward):
            by_outcome["success" if r.reward > 0 else "failure"].append(r.turns)
    tstats = summarize(turns)
    return {
        "path": ts.path,
        "total": len(res),
        "malformed": ts.malformed,
        "missing": ts.missing,
        "eval": ts.eval_count,
        "archives": ts.archives,
        "exceptions": dict(sorted(exceptions.items(), key=lambda kv: (-kv[1], kv[0]))),
        "exception_kinds": {
            k: kinds.get(k, 0) for k in ("none", "infrastructure", "model", "other")
        },
        "exception_kind_of": {
            e: kind_of.get(e) or exception_kind(None if e == "none" else e) for e in exceptions
        },
        "turns": {
            "mean": tstats["mean"],
            "median": float(statistics.median(turns)) if turns else None,
            "std": tstats["std"],
            "min": tstats["min"],
            "max": tstats["max"],
            "count": tstats["count"],
        },
        "turn_histogram": {str(k): v for k, v in sorted(Counter(turns).items())},
        "reward": {
            "mean": math.fsum(rewards) / len(rewards) if rewards else None,
            "success_rate": success / len(rewards) if rewards else None,
            "count": len(rewards),
            "success": success,
            "failure": len(rewards) - success,
        },
        "error_rate": (len(res) - exceptions.get("none", 0)) / len(res) if res else None,
        "turns_by_exception": {
            k: _turn_stats(v)
            for k, v in sorted(by_exc.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        },
        "turns_by_outcome": {k: _turn_stats(v) for k, v in by_outcome.items()},
    }
