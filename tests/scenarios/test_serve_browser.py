"""sitegen serve in headless Chromium: an open page follows every change of a live run, two
changes 1.2 s apart included (each shown within 2 s of the rebuild that made it)."""

from __future__ import annotations

import re
import time

import pytest

import sitegen.commands.serve
from sitegen.commands.serve import serving
from sitegen.options import BuildOptions
from tests.commands.test_serve import CHAIN_B, QuickWatcher, small_archive, wait_until
from tests.scenarios.test_browser import Watched  # (skips without chromium)
from tests.scenarios.test_incremental import STEP

pytestmark = pytest.mark.browser

STEPS_RE = re.compile(r"Per-step table \((\d+) steps\)")


def _steps_shown(page) -> int | None:
    """The step count the open page shows (None while it reloads)."""
    try:
        m = STEPS_RE.search(page.inner_text("body", timeout=200))
    except Exception:  # noqa: BLE001 - the page is between two documents
        return None
    return int(m.group(1)) if m else None


@pytest.mark.no_charts  # (what is checked is the page's text, not its charts)
def test_every_change_reaches_the_open_page(tmp_path, browser_page, monkeypatch):
    monkeypatch.setattr(sitegen.commands.serve, "Watcher", QuickWatcher)  # (a change is
    # built sooner; the changes stay 1.2 s apart)
    archive = small_archive(tmp_path)
    with serving(BuildOptions(archive=archive, out=tmp_path / "site", workers=1)) as site:
        tab = Watched(browser_page)
        try:
            tab.page.goto(site.url + "jobs/flat.chain-b.train_600301/")
            assert wait_until(lambda: len(site.hub.sockets) == 1, 10)  # the page's reload socket
            assert wait_until(lambda: _steps_shown(tab.page) == 5, 5)  # (None while unread)
            started = time.monotonic()
            for n, shown in ((101, 6), (102, 7)):
                time.sleep(max(0.0, started + 1.2 * (n - 101) - time.monotonic()))  # 1.2 s apart
                builds = len(site.app.builds)
                with open(archive / CHAIN_B, "a") as fh:
                    fh.write(STEP.format(n=n))
                assert wait_until(lambda builds=builds: len(site.app.builds) > builds, 10)
                built = time.monotonic()
                assert wait_until(lambda shown=shown: _steps_shown(tab.page) == shown, 2.0), n
                assert time.monotonic() - built < 2.0
            assert site.hub.reloads == 2  # one a rebuild, and the page connects again after each
            assert wait_until(lambda: len(site.hub.sockets) == 1, 5)
            # (a request cut short by a reload is no error: the page it was for is gone)
            assert [e for e in tab.errors if not e.startswith("failed request")] == []
        finally:  # (the page goes on to the next test: no listener of this one left)
            tab.stop()
            tab.page.goto("about:blank")  # (its reload socket closed while the site is served)
