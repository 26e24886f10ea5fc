"""One headless Chromium for the browser tests (Debian's ``/usr/bin/chromium``, driven by
Playwright), shared by the tests that run one after another, however many modules they span."""

from __future__ import annotations

import shutil
from typing import Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
)


class SharedChromium:
    """Started by the first browser test, closed before the next test that is not one (and at
    the end of the session). It cannot stay open longer: between Playwright's sync calls its
    event loop counts as running in this thread, where ``asyncio.run`` would then refuse to
    start."""

    def __init__(self) -> None:
        self._playwright: Any = None
        self._browser: Any = None
        self._contexts: dict[tuple[int, int], Any] = {}

    def get(self) -> Any:
        if self._browser is None:
            from playwright.sync_api import sync_playwright

            self._playwright = sync_playwright().start()
            self._browser = self._playwright.chromium.launch(
                executable_path=CHROMIUM, args=list(ARGS)
            )
        return self._browser

    def page(self, width: int = 1400, height: int = 1000) -> Any:
        """A new page in a browser context of that viewport, the context kept for the next
        test that asks for the same (the caller closes the page). A context costs Chromium
        more than a page; the tests lose no isolation by sharing one, as the pages keep
        nothing in it: the site stores nothing (no cookie, no web storage) and a test that
        serves a site of its own serves it at an address of its own."""
        context = self._contexts.get((width, height))
        if context is None:
            context = self.get().new_context(viewport={"width": width, "height": height})
            self._contexts[(width, height)] = context
        return context.new_page()

    def close(self) -> None:
        self._contexts.clear()  # (closed with the browser)
        if self._playwright is None:
            return
        try:
            if self._browser is not None:
                self._browser.close()
        finally:
            self._playwright.stop()
            self._browser = self._playwright = None
