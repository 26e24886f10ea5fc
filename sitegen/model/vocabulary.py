"""The domain vocabulary: rules about metrics and trials that every stage shares, each in
one home, so no two stages or pages disagree (an exception "infrastructure" on one page and
"other" on another would be a wrong number).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import TypeGuard

# docs/formats.md §6: sandbox and setup failures are infrastructure, the agent's own timeouts
# and overflows are the model's; verifier and reward-file problems come from the grading
# harness, and an LLM request ``Timeout`` is the serving stack's: infrastructure too. The
# names are Harbor's own table (harbor/models/trial/error_policy.py, 0.26) and the older
# names of docs/formats.md §6 (``Timeout``, the length errors, ...); in Harbor's, each type
# has a policy (should_retry, should_grade, has_valid_reward), grouped by the kind that
# policy means here (see policy_kind).
INFRA_EXCEPTIONS = frozenset(
    {
        # retry, no grade: the sandbox or its setup failed
        "EnvironmentStartTimeoutError",
        "SandboxBuildFailedError",
        "AgentSetupTimeoutError",
        "HealthcheckError",
        "SandboxLikelyOutOfMemoryError",
        "MemoryLimitExceededError",
        "SSHAccessError",
        "GKEExecStreamClosedError",
        "GKEPodNotFoundError",
        "RuntimeRequestError",
        "AddTestsDirError",
        "DownloadVerifierDirError",
        # retry and grade, reward not valid: the model API or network failed
        "ApiError",
        "ApiRateLimitError",
        "ApiInternalServerError",
        "ApiOverloadedError",
        "ApiConnectionClosedError",
        "ApiResponseStalledError",
        "UnknownApiError",
        "NetworkConnectionError",
        "ApiConnectionError",
        "ApiUsageLimitError",
        "RateLimitError",
        "InternalServerError",
        "ServiceUnavailableError",
        "APIConnectionError",
        "APIError",
        "Timeout",
        # no retry, grade, reward not valid: the request or the grading harness failed
        "UnsupportedModelParametersError",
        "BadRequestError",
        "UnprocessableEntityError",
        "UnsupportedParamsError",
        "APIResponseValidationError",
        "BudgetExceededError",
        "VerifierTimeoutError",
        "RewardFileNotFoundError",
        "RewardFileEmptyError",
        "VerifierOutputParseError",
    }
)
MODEL_EXCEPTIONS = frozenset(
    {
        # no retry, grade, the reward stands: the agent or model itself fell short
        "NonZeroAgentExitCodeError",
        "AgentTimeoutError",
        "ContextWindowExceededError",
        "OutputTokenExceededError",
        "ContextLengthExceededError",
        "OutputLengthExceededError",
        "AgentSafetyRefusalError",
        "ContentPolicyViolationError",
    }
)
# The rest of Harbor's table (no retry, no grade: authentication, missing model or extra,
# cancellation) is neither a flaky infrastructure's nor the model's: "other".


def exception_kind(name: str | None) -> str:
    """``none``, ``infrastructure``, ``model`` or ``other`` for an exception type."""
    if not name:
        return "none"
    if name.startswith("Daytona") or name in INFRA_EXCEPTIONS:
        return "infrastructure"
    if name in MODEL_EXCEPTIONS:
        return "model"
    return "other"


def policy_kind(policy: object) -> str | None:
    """The kind Harbor's own ``exception_info.policy`` means, or None when it is not one.
    The reward stands (``has_valid_reward``) and no retry: the model's failure. No valid
    reward but worth a retry or a grade: infrastructure. Harbor's default for a type it does
    not know (retry, grade, valid) and its fatal group (no retry, no grade) are "other".
    """
    if not isinstance(policy, dict):
        return None
    flags = [policy.get(k) for k in ("should_retry", "should_grade", "has_valid_reward")]
    if not all(isinstance(f, bool) for f in flags):
        return None
    retry, grade, valid = flags
    if valid:
        return "other" if retry else "model"
    return "infrastructure" if retry or grade else "other"


# -- numbers -----------------------------------------------------------------------------------


def is_duration(v: object) -> TypeGuard[int | float]:
    """A usable timer value: finite and not negative (a clock step back is no duration;
    every timing sum and mean leaves it out)."""
    return is_finite(v) and v >= 0


def is_finite(v: object) -> TypeGuard[int | float]:
    """True for an int or float that is neither nan nor ±inf (a bool is not a number here):
    the one test of whether a value counts. Non-finite values are kept in the model
    (docs/formats.md §3: logged ``nan`` is data) but left out of every mean, drawn as gaps."""
    t = type(v)
    if t is float or t is int:  # the hot path (charts, statistics): no isinstance chain
        return math.isfinite(v)  # type: ignore[arg-type]
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def finite_or_none(v: object) -> float | None:
    """``v`` as a float when it is a finite number, else None."""
    return float(v) if is_finite(v) else None


# -- metric names (docs/formats.md §3) ---------------------------------------------------------

REWARD = "reward/avg_raw_reward"
STEP_TIME = "timing/step"
GEN_WAIT = "timing/wait_for_generation_buffer"
SYNC_GEN_WAIT = "timing/generate"  # the synchronous trainer's generation wait (docs/formats.md §3)
TOKENS = "generate/avg_num_tokens"
STALENESS = "async/staleness_mean"
STALENESS_MAX = "async/staleness_max"
POLICY_KL = "policy/policy_kl"
POLICY_KL_RE = re.compile(r"^policy/(policy_)?kl")  # any KL the policy logs
POLICY_LOSS = "policy/policy_loss"
POLICY_ENTROPY = "policy/policy_entropy"
# SkyRL's gradient norm before clipping (its trainers log raw_grad_norm; older ones grad_norm)
GRAD_NORM_KEYS = ("policy/raw_grad_norm", "policy/grad_norm")
# the share of tokens whose ratio PPO clipped (SkyRL: ppo_clip_ratio; others: clipfrac)
CLIP_RATIO_RE = re.compile(r"^policy/.*(clip_ratio|clipfrac)")
PASS_AT_RE = re.compile(r"^reward/avg_pass_at_(\d+)$")


def gen_wait_key(names: Iterable[str]) -> str:
    """The generation wait timer: ``wait_for_generation_buffer`` (fully async) or
    ``generate`` (synchronous trainer), whichever the metrics hold (async if both or neither)."""
    names = set(names)
    return SYNC_GEN_WAIT if GEN_WAIT not in names and SYNC_GEN_WAIT in names else GEN_WAIT


def pass_at_key(names: Iterable[str]) -> str | None:
    """The ``reward/avg_pass_at_<n>`` metric with the largest n, if any."""
    best = None
    for name in names:
        m = PASS_AT_RE.match(name)
        if m and (best is None or int(m.group(1)) > best[0]):
            best = (int(m.group(1)), name)
    return best[1] if best else None


def pass_at_k(key: str | None) -> int | None:
    """The n of a ``reward/avg_pass_at_<n>`` metric name (None for no name)."""
    m = PASS_AT_RE.match(key) if key else None
    return int(m.group(1)) if m else None


def pass_at_label(k: int | None) -> str:
    """How pages, cards, charts and reports name the metric: ``pass@8`` (``pass@k`` unknown)."""
    return f"pass@{k}" if k else "pass@k"


def metric_family(name: str) -> str:
    """A metric's family: the prefix before ``/`` (``other`` without one)."""
    return name.split("/", 1)[0] if "/" in name else "other"


def config_value(cfg: Mapping | None, *path: str) -> object:
    """The value at ``path`` in a config dump (``"trainer", "run_name"``), or None if absent."""
    cur: object = cfg
    for p in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(p)
    return cur


# The stages of a trial's time (insights.rollouts.Anatomy has a ``<stage>_s`` field for each),
# in the order the rollout charts stack them, and their labels.
COMPONENTS = ("env_setup", "agent_setup", "agent_exec", "verifier", "overhead", "wait_for_step")
COMPONENT_LABELS = {
    "env_setup": "environment setup",
    "agent_setup": "agent setup",
    "agent_exec": "agent execution",
    "verifier": "verifier",
    "overhead": "other (outside stages)",
    "wait_for_step": "wait for the step",
}
