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

# What a page loads in place of the Vega bundle (static/vendor/vega-bundle.js) when a test
# asks for no charts: a ``vegaEmbed`` that draws nothing. The page's own script runs as it
# does with the real one (site.js builds each spec, makes its "Vega-Lite spec" link, and
# marks the chart ``data-rendered`` when the embed resolves); only Vega's drawing is left
# out, so a test that counts marks (``Watched.charts_with_marks``) finds none. A call
# without a chart's element or spec fails as it would with Vega (the page's error).
NO_CHARTS_BUNDLE = """window.vegaEmbed = function (el, spec, opts) {
  if (!(el instanceof Element) || !spec || typeof spec !== "object") {
    return Promise.reject(new Error("vegaEmbed: no chart element or spec"));
  }
  return Promise.resolve({ view: null, spec: spec, embedOptions: opts, finalize: function () {} });
};
"""


def without_charts(page: Any) -> None:
    """Serve ``page`` NO_CHARTS_BUNDLE for the Vega bundle, over HTTP and from file:// alike:
    a job or run page then costs Chromium a fraction of the CPU drawing its charts takes."""
    page.route(
        "**/static/vendor/vega-bundle.js",
        lambda route: route.fulfill(body=NO_CHARTS_BUNDLE, content_type="text/javascript"),
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

    def page(self, width: int = 1400, height: int = 1000, charts: bool = True) -> Any:
        """A new page in a browser context of that viewport, the context kept for the next
        test that asks for the same (the caller closes the page). A context costs Chromium
        more than a page; the tests lose no isolation by sharing one, as the pages keep
        nothing in it: the site stores nothing (no cookie, no web storage) and a test that
        serves a site of its own serves it at an address of its own. Without ``charts``,
        the page draws none (``without_charts``)."""
        context = self._contexts.get((width, height))
        if context is None:
            context = self.get().new_context(viewport={"width": width, "height": height})
            self._contexts[(width, height)] = context
        page = context.new_page()
        if not charts:
            without_charts(page)
        return page

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
