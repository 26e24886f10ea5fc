from sitegen.model.vocabulary import exception_kind


def test_exception_kinds():
    assert exception_kind("DaytonaAuthenticationError") == "infrastructure"
    assert exception_kind("AgentSetupTimeoutError") == "infrastructure"
    assert exception_kind("AgentTimeoutError") == "model"
    assert exception_kind("ContextLengthExceededError") == "model"
    assert exception_kind("RuntimeError") == "other"
    assert exception_kind(None) == "none"
