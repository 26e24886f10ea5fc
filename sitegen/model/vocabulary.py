"""The domain vocabulary: rules about metrics and trials that every stage shares.

One home for each rule, so the read stage, the analyses and the pages cannot
disagree (an exception counted as infrastructure on one page and "other" on
another would be a wrong number).
"""

from __future__ import annotations

# formats.md §6: sandbox and setup failures are infrastructure, the agent's
# own timeouts and overflows are the model's. Verifier and reward-file
# problems come from the grading harness, so they count as infrastructure;
# an LLM request ``Timeout`` is the serving stack's. Anything else is "other".
INFRA_EXCEPTIONS = frozenset(
    {
        "AgentSetupTimeoutError",
        "EnvironmentStartTimeoutError",
        "VerifierTimeoutError",
        "RewardFileNotFoundError",
        "RewardFileEmptyError",
        "VerifierOutputParseError",
        "Timeout",
    }
)
MODEL_EXCEPTIONS = frozenset(
    {
        "AgentTimeoutError",
        "ContextLengthExceededError",
        "OutputLengthExceededError",
    }
)


def exception_kind(name: str | None) -> str:
    """``none``, ``infrastructure``, ``model`` or ``other`` for an exception type."""
    if not name:
        return "none"
    if name.startswith("Daytona") or name in INFRA_EXCEPTIONS:
        return "infrastructure"
    if name in MODEL_EXCEPTIONS:
        return "model"
    return "other"
