"""The commands' tests serve with the quick watcher (tests/commands/test_serve.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def quick_watcher(monkeypatch: pytest.MonkeyPatch) -> None:
    """``serving`` makes a QuickWatcher: a change is seen within 50 ms, not half a second,
    and a test waits for the watcher's looks, not for as many half-second intervals."""
    import sitegen.commands.serve
    from tests.commands.test_serve import QuickWatcher

    monkeypatch.setattr(sitegen.commands.serve, "Watcher", QuickWatcher)
