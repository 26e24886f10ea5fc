"""``sitegen serve``: build, serve on localhost with live reload, rebuild what changed.

Built for watching a live run: the archive, ``templates/`` and ``static/``
are watched (livereload's polling watcher); each change runs an incremental
build (only grown logs are read on, only changed pages are rendered) and
reloads open pages. The writer moves each file in with one rename, so a request
never sees a half-written file. A failed rebuild keeps the last good site and
shows the error in a banner on every page; the server keeps running.
"""

from __future__ import annotations

import html
import mimetypes
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote

from sitegen.assets import package_dir
from sitegen.build import build
from sitegen.errors import SitegenError
from sitegen.options import BuildOptions
from sitegen.safeio import read_bytes

MAX_FILE_BYTES = 1 << 30  # serve any file sitegen writes; never a FIFO, never endless


class ServeError(SitegenError):
    """The server cannot start (the port is taken, the host unknown)."""


@dataclass
class SiteApp:
    """A WSGI app serving the built site, with the last rebuild error as a banner."""

    root: Path
    error: str | None = None
    builds: list[str] = field(default_factory=list)

    def __call__(self, environ: dict, start_response) -> list[bytes]:
        path = unquote(environ.get("PATH_INFO", "/"))
        root = self.root.resolve()
        try:
            target = (self.root / path.lstrip("/")).resolve()
            if "\0" in path:
                raise ValueError("NUL in path")
        except (ValueError, OSError):  # a NUL byte, a link loop: not a page
            return self._send(start_response, "403 Forbidden", "text/plain", b"forbidden")
        if not target.is_relative_to(root):
            return self._send(start_response, "403 Forbidden", "text/plain", b"forbidden")
        if target.is_dir():
            if not path.endswith("/"):
                # The location is rebuilt from the folder's place in the site, never taken from
                # the request: "//evil.example/.." must not send the browser to another host.
                inside = target.relative_to(root).as_posix()
                location = "/" if inside == "." else f"/{quote(inside)}/"
                start_response("301 Moved Permanently", [("Location", location)])
                return [b""]
            target = target / "index.html"
        try:
            body = read_bytes(target, root, MAX_FILE_BYTES)
        except OSError:
            try:
                body = read_bytes(root / "404.html", root, MAX_FILE_BYTES)
            except OSError:
                body = b"not found"
            return self._send(
                start_response, "404 Not Found", "text/html; charset=utf-8", self._banner(body)
            )
        ctype = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if ctype == "text/html":
            ctype = "text/html; charset=utf-8"
            body = self._banner(body)
        return self._send(start_response, "200 OK", ctype, body)

    def _banner(self, body: bytes) -> bytes:
        if not self.error:
            return body
        note = (
            '<div role="alert" style="position:fixed;bottom:0;left:0;right:0;z-index:99;background:#c0392b;'
            'color:#fff;padding:.6rem 1rem;font:14px system-ui">Rebuild failed (showing the last good site): '
            f"{html.escape(self.error)}</div>"
        ).encode()
        return body.replace(b"</body>", note + b"</body>", 1)

    @staticmethod
    def _send(start_response, status: str, ctype: str, body: bytes) -> list[bytes]:
        start_response(
            status,
            [
                ("Content-Type", ctype),
                ("Content-Length", str(len(body))),
                ("Cache-Control", "no-store"),
            ],
        )
        return [body]


def rebuild(opts: BuildOptions, app: SiteApp) -> bool:
    """One incremental build; on failure keep the old site and record the error for the banner."""
    started = time.perf_counter()
    try:
        report = build(opts)
    except SitegenError as exc:
        app.error = str(exc)
    except Exception as exc:  # noqa: BLE001 - any failure must keep the server alive
        app.error = f"{type(exc).__name__}: {exc}"
    else:
        app.error = None
        app.builds.append(report.summary())
        print(f"[{time.strftime('%H:%M:%S')}] {report.summary()}", file=sys.stderr)
        return True
    print(
        f"[{time.strftime('%H:%M:%S')}] rebuild failed after {time.perf_counter() - started:.1f}s: {app.error}",
        file=sys.stderr,
    )
    return False


def _check_port(host: str, port: int) -> None:
    """Refuse, as one line, a port that cannot be listened on (busy, privileged, bad host)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        family, _, _, _, addr = infos[0]
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server will
            s.bind(addr)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ServeError(
            f"cannot listen on {host}:{port} ({reason}): pick another with --port or --host"
        ) from None


def serve(opts: BuildOptions, host: str = "127.0.0.1", port: int = 8000) -> int:
    """Build once, then serve and rebuild on change until interrupted."""
    from livereload import Server

    _check_port(host, port)  # before the first build: a busy port is one line, at once
    app = SiteApp(opts.out)
    if not rebuild(opts, app) and not opts.out.exists():
        print(f"sitegen: error: first build failed: {app.error}", file=sys.stderr)
        return 2
    server = Server(app)

    def on_change() -> None:
        rebuild(opts, app)

    server.watch(str(opts.archive), on_change, delay=1)
    for d in (package_dir("templates"), package_dir("static")):
        server.watch(str(d), on_change, delay=1)
    print(
        f"serving {opts.out} on http://{host}:{port}/ (watching {opts.archive}); Ctrl-C stops",
        file=sys.stderr,
    )
    # debug=False: Tornado's autoreload would restart the process on any code change.
    server.serve(port=port, host=host, debug=False, restart_delay=0)
    return 0
