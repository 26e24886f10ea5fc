"""synth's Harbor 0.26 multi-step trials are shaped as Harbor's ``MultiStepTrial`` writes them
(harbor/trial/multi_step.py, harbor/models/trial/result.py), and its truth says what a reader
must take from them."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta

import pytest

from sitegen.synth.harbor import harbor_result

# TrialResult's and StepResult's fields in their order (reward_valid: a computed field, last)
TRIAL_FIELDS = [
    "schema_version",
    "id",
    "task_name",
    "trial_name",
    "trial_uri",
    "task_id",
    "source",
    "task_checksum",
    "config",
    "agent_info",
    "agent_result",
    "verifier_result",
    "verifier_environment_mode",
    "exception_info",
    "started_at",
    "finished_at",
    "environment_setup",
    "agent_setup",
    "agent_execution",
    "verifier",
    "step_results",
    "reward_valid",
]
STEP_FIELDS = [
    "step_name",
    "agent_result",
    "verifier_result",
    "exception_info",
    "agent_execution",
    "verifier",
]
AGENT_FIELDS = [
    "n_input_tokens",
    "n_cache_tokens",
    "n_output_tokens",
    "cost_usd",
    "model_usage",
    "rollout_details",
    "metadata",
]


def _t(s: str) -> datetime:
    return datetime.fromisoformat(s.removesuffix("Z"))


def _s(span: dict) -> float:
    return (_t(span["finished_at"]) - _t(span["started_at"])).total_seconds()


def _multi(staged: bool) -> list[tuple[dict, dict]]:
    """Multi-step trials with their truth: with stage times drawn (a job's trials) or not."""
    rng, stage_rng = random.Random(5), random.Random(6) if staged else None
    out = []
    for i in range(40):
        text, seen = harbor_result(
            rng,
            "0.26-multi",
            "fix-git",
            datetime(2026, 5, 12, 8) + timedelta(minutes=i),
            stage_rng=stage_rng,
        )
        out.append((json.loads(text), seen))
    return out


@pytest.mark.parametrize("staged", [True, False])
def test_a_multi_step_trial_times_its_agent_and_verifier_on_its_steps(staged):
    trials = _multi(staged)
    failed = 0
    for obj, seen in trials:
        assert list(obj) == TRIAL_FIELDS
        # run and timed on the steps: the top level's agent and its times stay null
        assert [obj[k] for k in ("agent_result", "agent_execution", "verifier")] == [None] * 3
        assert obj["verifier_environment_mode"] is None and obj["exception_info"] is None
        steps = obj["step_results"]
        assert [s["step_name"] for s in steps] == ["setup-repo", "fix-bug"]
        # one after the other inside the trial, after its environment and agent setup
        times = [_t(obj["started_at"])]
        if staged:  # (unstaged, both setups take the trial's first five seconds)
            for span in (obj["environment_setup"], obj["agent_setup"]):
                times += [_t(span["started_at"]), _t(span["finished_at"])]
        else:
            times.append(_t(obj["agent_setup"]["finished_at"]))
        for s in steps:
            assert list(s) == STEP_FIELDS and list(s["agent_result"]) == AGENT_FIELDS
            for span in (s["agent_execution"], s["verifier"]):
                times += [_t(span["started_at"]), _t(span["finished_at"])]
            agent = s["agent_result"]
            assert 0 < agent["n_cache_tokens"] < agent["n_input_tokens"]  # input counts cached
            (usage,) = agent["model_usage"].values()
            assert usage["n_cache_tokens"] == agent["n_cache_tokens"]
            if s["exception_info"]:
                failed += 1
                exc = s["exception_info"]
                assert exc["occurred_at"] == s["agent_execution"]["finished_at"]
                assert exc["policy"]["should_grade"] and s["verifier_result"] is not None
                assert "multi_step.py" in exc["exception_traceback"]
        times.append(_t(obj["finished_at"]))
        assert times == sorted(times) and len(set(times)) == len(times)
        # Harbor's aggregate: the mean of the steps' rewards
        rewards = [s["verifier_result"]["rewards"]["reward"] for s in steps]
        assert obj["verifier_result"]["rewards"]["reward"] == sum(rewards) / len(rewards)
        # the truth: what a reader must find, the sums over the steps
        stages = seen["stages"]
        assert stages["env_setup_s"] == _s(obj["environment_setup"])
        assert stages["agent_setup_s"] == _s(obj["agent_setup"])
        assert stages["agent_exec_s"] == sum(_s(s["agent_execution"]) for s in steps)
        assert stages["verifier_s"] == sum(_s(s["verifier"]) for s in steps)
        assert stages["cache_tokens"] == sum(s["agent_result"]["n_cache_tokens"] for s in steps)
        if staged:  # the gaps between the stages: the trial's overhead
            total = sum(v for k, v in stages.items() if k != "cache_tokens")
            assert 0 < total < seen["duration_s"]
    assert 0 < failed < len(trials)


@pytest.mark.parametrize("variant", ["0.1.45", "0.26", "0.26-context", "0.26-invalid"])
def test_a_single_step_trial_times_its_stages_on_the_trial(variant):
    rng, stage_rng = random.Random(variant), random.Random(1)
    for _ in range(10):
        text, seen = harbor_result(
            rng, variant, "fix-git", datetime(2026, 5, 12, 8), stage_rng=stage_rng
        )
        obj, stages = json.loads(text), seen["stages"]
        assert list(obj) == [
            k
            for k in TRIAL_FIELDS
            if variant != "0.1.45"
            or k
            not in ("schema_version", "verifier_environment_mode", "step_results", "reward_valid")
        ]
        assert stages["agent_exec_s"] == _s(obj["agent_execution"])
        assert stages["verifier_s"] == _s(obj["verifier"])
        assert stages["cache_tokens"] == obj["agent_result"]["n_cache_tokens"] == 0
