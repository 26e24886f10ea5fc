import math

from sitegen.model.vocabulary import (
    REWARD,
    exception_kind,
    finite_or_none,
    is_finite,
    metric_family,
    pass_at_k,
    pass_at_key,
    pass_at_label,
)


def test_exception_kinds():
    assert exception_kind("DaytonaAuthenticationError") == "infrastructure"
    assert exception_kind("AgentSetupTimeoutError") == "infrastructure"
    assert exception_kind("AgentTimeoutError") == "model"
    assert exception_kind("ContextLengthExceededError") == "model"
    assert exception_kind("RuntimeError") == "other"
    assert exception_kind(None) == "none"


def test_is_finite_is_the_one_number_test():
    assert is_finite(1) and is_finite(0.5) and is_finite(-1e300)
    assert not is_finite(math.nan) and not is_finite(math.inf) and not is_finite(-math.inf)
    assert not is_finite(None) and not is_finite("1.0")
    assert not is_finite(True)  # a flag is not a number
    assert finite_or_none(3) == 3.0 and isinstance(finite_or_none(3), float)
    assert finite_or_none(math.nan) is None


def test_pass_at_k_names_and_label():
    names = ["reward/avg_pass_at_4", "reward/avg_pass_at_16", "reward/avg_pass_at_8x", REWARD]
    assert pass_at_key(names) == "reward/avg_pass_at_16"
    assert pass_at_key([REWARD]) is None
    assert pass_at_k("reward/avg_pass_at_16") == 16
    assert pass_at_k(None) is None and pass_at_k(REWARD) is None
    assert pass_at_label(16) == "pass@16"
    assert pass_at_label(None) == "pass@k"


def test_metric_family():
    assert metric_family("timing/step") == "timing"
    assert metric_family("policy/a/b") == "policy"
    assert metric_family("loss") == "other"
