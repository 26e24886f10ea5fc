"""``sitegen serve``: build, serve on localhost with live reload, rebuild what changed.

Three parts that never wait for one another: the site (:class:`SiteApp`, a WSGI app on a
few threads: each file as written, an HTML page with the reload snippet and, after a failed
rebuild, the error banner); the reload socket (:mod:`sitegen.commands.live`: a rebuild that
changed the site reloads every open page, and a page served before it reloads at its
handshake); the watcher (:mod:`sitegen.commands.watch`), which runs each rebuild.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import mimetypes
import re
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import msgspec
from markupsafe import escape
from tornado.httpserver import HTTPServer

from sitegen.commands.build import BuildReport, LastBuild, build
from sitegen.commands.live import Hosts, ReloadHub, ServeError, application, listen
from sitegen.commands.watch import Inputs, Watcher
from sitegen.discover.safeio import read_bytes
from sitegen.errors import SitegenError
from sitegen.options import BuildOptions
from sitegen.present.assets import package_dir

MAX_FILE_BYTES = 1 << 30  # serve any file sitegen writes; never a FIFO, never endless
HEAD_END = re.compile(rb"</head\s*>", re.IGNORECASE)
HEAD_START = re.compile(rb"<head(\s[^>]*)?>", re.IGNORECASE)
# livereload's snippet, with the page's version: the script's address carries it into the
# handshake (``snipver``), and the port is the page's own (a tunnelled port too).
SNIPPET = (
    '<script>(function(){{var s=document.createElement("script"),'
    'p=location.port||(location.protocol=="https:"?443:80);'
    's.src="/livereload.js?port="+p+"&snipver={version}";'
    "document.head.appendChild(s)}})()</script>"
)


def _version() -> int:
    """A new site version: milliseconds, so a restarted server's pages differ too (never 0)."""
    return time.time_ns() // 1_000_000


@dataclass
class SiteApp:
    """A WSGI app serving the built site, with the last rebuild error as a banner.

    ``version`` changes with each rebuild that changed the site (with ``live``, in each page's
    reload snippet); ``base_url``: the public address the site was built for, if any.
    """

    root: Path
    error: str | None = None
    builds: list[str] = field(default_factory=list)
    version: int = field(default_factory=_version)
    live: bool = False
    base_url: str | None = None

    def __call__(self, environ: dict, start_response) -> list[bytes]:
        body = self._get(environ, start_response)
        if environ.get("REQUEST_METHOD") == "HEAD":
            return [b""]  # (the headers say how long the body is)
        return body

    def _get(self, environ: dict, start_response) -> list[bytes]:
        if environ.get("REQUEST_METHOD", "GET") not in ("GET", "HEAD"):
            return _send(start_response, "405 Method Not Allowed", "text/plain", b"read only")
        version = self.version  # before the file: a page is never newer than its version
        raw = environ.get("PATH_INFO", "/")
        try:
            # PATH_INFO is decoded already (once, by the server), as bytes in a latin-1 str
            path = raw.encode("latin-1").decode("utf-8")
        except UnicodeEncodeError:  # not from a WSGI server: taken as it is
            path = raw
        except UnicodeDecodeError:  # not UTF-8: no file of the site has such a name
            return self._missing(start_response, version)
        root = self.root.resolve()
        try:
            target = (self.root / path.lstrip("/")).resolve()
            if "\0" in path:
                raise ValueError("NUL in path")
        except (ValueError, OSError):  # a NUL byte, a link loop: not a page
            return _send(start_response, "403 Forbidden", "text/plain", b"forbidden")
        if not target.is_relative_to(root):
            return _send(start_response, "403 Forbidden", "text/plain", b"forbidden")
        if target.is_dir():
            if not path.endswith("/"):
                # From the folder's place in the site, never the request ("//evil.example/..").
                inside = target.relative_to(root).as_posix()
                location = "/" if inside == "." else f"/{quote(inside)}/"
                start_response("301 Moved Permanently", [("Location", location)])
                return [b""]
            target = target / "index.html"
        try:
            body = read_bytes(target, root, MAX_FILE_BYTES)
        except OSError:
            return self._missing(start_response, version)
        ctype, encoding = mimetypes.guess_type(target.name)
        if encoding is not None:  # trials.csv.gz is gzip data, as GitHub Pages serves it
            ctype = "application/gzip" if encoding == "gzip" else None
        ctype = ctype or "application/octet-stream"
        if ctype == "text/html":
            return _send(
                start_response, "200 OK", "text/html; charset=utf-8", self._page(body, version)
            )
        return _send(start_response, "200 OK", ctype, body)

    def _missing(self, start_response, version: int) -> list[bytes]:
        root = self.root.resolve()
        try:
            body = read_bytes(root / "404.html", root, MAX_FILE_BYTES)
        except OSError:
            body = b"not found"
        else:
            body = self._from_root(body)
        return _send(
            start_response, "404 Not Found", "text/html; charset=utf-8", self._page(body, version)
        )

    def _from_root(self, body: bytes) -> bytes:
        """The 404 page as served for any missing path: its links from the site's root
        (``<base href="/">``), those to the public address brought to this server."""
        if self.base_url:
            public = str(escape(self.base_url.rstrip("/") + "/")).encode()
            body = body.replace(public, b"/")
        head = HEAD_START.search(body)
        if head is None:
            return body
        return body[: head.end()] + b'<base href="/">' + body[head.end() :]

    def _page(self, body: bytes, version: int) -> bytes:
        """An HTML page as served: the reload snippet ending its head, the error banner."""
        if self.live:
            end = HEAD_END.search(body)
            if end:
                at = end.start()
                body = body[:at] + SNIPPET.format(version=version).encode() + body[at:]
        if not self.error:
            return body
        note = (
            '<div role="alert" style="position:fixed;bottom:0;left:0;right:0;z-index:99;background:#c0392b;'
            'color:#fff;padding:.6rem 1rem;font:14px system-ui;white-space:pre-wrap">'
            f"Rebuild failed (showing the last good site): {html.escape(self.error)}</div>"
        ).encode()
        return body.replace(b"</body>", note + b"</body>", 1)


def _send(start_response, status: str, ctype: str, body: bytes) -> list[bytes]:
    headers = [("Content-Type", ctype), ("Content-Length", str(len(body)))]
    start_response(status, [*headers, ("Cache-Control", "no-store")])
    return [body]


def rebuild(opts: BuildOptions, app: SiteApp) -> BuildReport | None:
    """One incremental build; on failure keep the old site and record the error for the banner."""
    started = time.perf_counter()
    try:
        report = build(opts)
    except Exception as exc:  # noqa: BLE001 - any failure must keep the server alive
        app.error = describe(exc)
    else:
        app.error = None
        app.builds.append(report.summary())
        print(f"[{time.strftime('%H:%M:%S')}] {report.summary()}", file=sys.stderr)
        return report
    print(
        f"[{time.strftime('%H:%M:%S')}] rebuild failed after {time.perf_counter() - started:.1f}s: {app.error}",
        file=sys.stderr,
    )
    return None


def describe(exc: BaseException) -> str:
    """A failed build in one line; an error in a template names the template's file and line
    (Jinja puts a syntax error's on the exception, a rendering error's in the traceback)."""
    if isinstance(exc, SitegenError):
        return str(exc)
    what = f"{type(exc).__name__}: {exc}"
    filename, line = getattr(exc, "filename", None), getattr(exc, "lineno", None)
    if not (isinstance(filename, str) and filename.endswith(".html")):
        templates = str(package_dir("templates"))
        frames = [
            f for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith(".html")
        ]
        inside = [f for f in frames if f.filename.startswith(templates)] or frames
        if not inside:
            return what
        filename, line = inside[-1].filename, inside[-1].lineno
    return f"{filename}:{line}: {what}"


class LiveSite:
    """A site served with live reload: its sockets bound at once, served by :meth:`run`."""

    def __init__(self, opts: BuildOptions, host: str = "127.0.0.1", port: int = 8000) -> None:
        self.opts = opts
        self.hosts = Hosts.of(host)
        self.sockets = listen(host, port)
        self.port = self.sockets[0].getsockname()[1]
        self.url = f"http://{'[' + host + ']' if ':' in host else host}:{self.port}/"
        self.app = SiteApp(opts.out, live=True, base_url=opts.base_url)
        self.hub = ReloadHub(lambda: self.app.version)
        self.watcher = Watcher(Inputs(opts), self._rebuild)
        self.ready = threading.Event()  # serving
        self._stopped: asyncio.Event | None = None
        self._first = True

    def _rebuild(self) -> LastBuild | None:
        """A build, and a reload when it changed the site. After the first: no ``--clean``, and
        a local parse in this process (a fork would copy a lock another thread holds)."""
        opts = self.opts
        if not self._first:
            local = opts.executor == "local"
            opts = msgspec.structs.replace(opts, clean=False, workers=1 if local else opts.workers)
        self._first = False
        report = rebuild(opts, self.app)
        if report is not None and not report.unchanged:
            self.app.version = max(self.app.version + 1, _version())
            self.hub.reload()
        return report.record if report is not None else None

    def first_build(self) -> None:
        """Build before any other thread exists (its workers may fork); :class:`ServeError`
        when it failed and there is no earlier site to show."""
        if not self.watcher.build_now() and not self.opts.out.exists():
            raise ServeError(f"first build failed: {self.app.error}")

    def run(self) -> None:
        """Serve (and watch) until :meth:`stop` or Ctrl-C."""
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._stopped = asyncio.Event()
        self.hub.loop = asyncio.get_running_loop()
        with ThreadPoolExecutor(8, thread_name_prefix="sitegen-serve") as pool:
            server = HTTPServer(application(self.app, pool, self.hub, self.hosts))
            server.add_sockets(self.sockets)
            self.watcher.start()
            self.ready.set()
            try:
                await self._stopped.wait()
            finally:
                self.watcher.stop(wait=False)
                server.stop()
                await server.close_all_connections()

    def stop(self) -> None:
        """Stop serving and watching (from any thread); the build under way finishes."""
        loop, stopped = self.hub.loop, self._stopped
        if loop is not None and stopped is not None:
            loop.call_soon_threadsafe(stopped.set)
        self.watcher.stop()


@contextlib.contextmanager
def serving(opts: BuildOptions) -> Iterator[LiveSite]:
    """Build, then serve on a free local port with live reload, on a thread of its own,
    while the block runs."""
    site = LiveSite(opts, "127.0.0.1", 0)
    site.first_build()
    thread = threading.Thread(target=site.run, name="sitegen-serve", daemon=True)
    thread.start()
    site.ready.wait(30)
    try:
        yield site
    finally:
        site.stop()
        thread.join()


def serve(opts: BuildOptions, host: str = "127.0.0.1", port: int = 8000) -> int:
    """Build once, then serve and rebuild on change until interrupted."""
    site = LiveSite(opts, host, port)  # bound first: a busy port is one line, at once
    site.first_build()
    print(
        f"serving {opts.out} on {site.url} (watching {opts.archive}); Ctrl-C stops", file=sys.stderr
    )
    site.run()
    return 0
