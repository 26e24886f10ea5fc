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
        self._kept: dict[tuple[int, int, bool], Any] = {}  # a page handed back, by its kind
        self._kinds: dict[int, tuple[int, int, bool]] = {}  # id(page): its kind

    def get(self) -> Any:
        if self._browser is None:
            from playwright.sync_api import sync_playwright

            self._playwright = sync_playwright().start()
            self._browser = self._playwright.chromium.launch(
                executable_path=CHROMIUM, args=list(ARGS)
            )
        return self._browser

    def page(self, width: int = 1400, height: int = 1000, charts: bool = True) -> Any:
        """A page of that viewport in a browser context kept for the next test that asks for
        the same, the page itself handed back with :meth:`release` and kept too. A context
        costs Chromium more than a page, and a new page several times what loading another
        document in a kept one costs; the tests lose no isolation by sharing them, as the
        pages keep nothing in them: the site stores nothing (no cookie, no web storage), a
        test that serves a site of its own serves it at an address of its own, and a page
        handed back is left as a new one is (:meth:`release`). Without ``charts``, the page
        draws none (``without_charts``)."""
        kind = (width, height, charts)
        page = self._kept.pop(kind, None)
        if page is not None:
            page.bring_to_front()  # (as a new page is: shown, its animation frames not held)
            return page
        context = self._contexts.get((width, height))
        if context is None:
            context = self.get().new_context(viewport={"width": width, "height": height})
            self._contexts[(width, height)] = context
        page = context.new_page()
        if not charts:
            without_charts(page)
        self._kinds[id(page)] = kind
        return page

    def release(self, page: Any) -> None:
        """Take back a page :meth:`page` gave, for the next test that asks for the same
        kind, left as a new page is: on a blank document (the test's own document gone with
        its scripts and timers), at its viewport, in the light colour scheme (a test may
        emulate the dark one: ``page.emulate_media``), the mouse at the corner, with no route
        but ``without_charts``'s. (A listener the test added stays: ``Watched.stop`` removes
        its own.) A page that is closed, or on which that fails, is closed instead."""
        kind = self._kinds.pop(id(page), None)
        if kind is None or page.is_closed() or kind in self._kept:  # (one of its kind kept already)
            page.close()
            return
        width, height, charts = kind
        try:
            page.unroute_all(behavior="ignoreErrors")
            page.goto("about:blank")
            if page.viewport_size != {"width": width, "height": height}:
                page.set_viewport_size({"width": width, "height": height})
            page.emulate_media(color_scheme="light")  # (a new context's scheme)
            page.mouse.move(0, 0)
            if not charts:
                without_charts(page)
        except Exception:
            page.close()
            raise
        self._kinds[id(page)] = kind
        self._kept[kind] = page

    def close(self) -> None:
        self._contexts.clear()  # (closed with the browser, and their pages)
        self._kept.clear()
        self._kinds.clear()
        if self._playwright is None:
            return
        try:
            if self._browser is not None:
                self._browser.close()
        finally:
            self._playwright.stop()
            self._browser = self._playwright = None
