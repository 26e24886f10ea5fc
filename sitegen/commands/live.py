"""The HTTP side of ``sitegen serve``: who may ask, the site's routes, the reload socket.

livereload's browser script and protocol are kept, not its server (it injected its script
into every response, dropped close reloads, watched on the serving thread and took a socket
from any origin). Only requests naming this server are answered (:class:`Hosts`), the socket
only from the page's own origin: a rebound DNS name can neither read the site nor hold it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import socket
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import msgspec
from tornado import netutil, web, websocket
from tornado.wsgi import WSGIContainer

from sitegen.errors import SitegenError

PROTOCOL = "http://livereload.com/protocols/official-7"
RELOAD = json.dumps({"command": "reload", "path": "*", "liveCSS": False, "liveImg": False})


class ServeError(SitegenError):
    """The server cannot start (the port is taken, the host unknown)."""


class Hosts(msgspec.Struct, frozen=True):
    """The names a request may give in ``Host``: the address served (on every interface, this
    machine's names), ``localhost`` and its subdomains, and IP addresses: none that DNS could
    rebind. The port is not checked: a tunnel changes it.
    """

    names: frozenset[str]

    @classmethod
    def of(cls, host: str) -> Hosts:
        names = {host.lower().strip("[]")}
        if host in ("", "0.0.0.0", "::"):
            names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
        return cls(frozenset(names))

    def allow(self, header: str | None) -> bool:
        if header is None:  # HTTP/1.0 without one: no name to have been rebound
            return True
        try:
            name = (urlsplit(f"//{header}").hostname or "").rstrip(".")
        except ValueError:
            return False
        if not name:
            return False
        if name in self.names or name == "localhost" or name.endswith(".localhost"):
            return True
        try:
            ipaddress.ip_address(name)
        except ValueError:
            return False
        return True


@dataclass
class ReloadHub:
    """The open pages' sockets; :meth:`reload` tells them all (from any thread). A page whose
    snippet carries another ``version`` than now's reloads as soon as its socket says hello."""

    version: Callable[[], int]
    loop: asyncio.AbstractEventLoop | None = None
    sockets: set[ReloadSocket] = field(default_factory=set)
    reloads: int = 0  # reloads sent, each to every open page

    def reload(self) -> None:
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self._send)

    def _send(self) -> None:
        self.reloads += 1
        for s in list(self.sockets):
            with contextlib.suppress(websocket.WebSocketClosedError):
                s.write_message(RELOAD)


class _Guarded(web.RequestHandler):
    """Refuses, before anything else, a request whose ``Host`` is not this server's."""

    hosts: Hosts

    def prepare(self):
        if not self.hosts.allow(self.request.headers.get("Host")):
            self._refuse("this server does not answer to that host name")
            return None
        return super().prepare()

    def _refuse(self, why: str) -> None:
        self.set_status(403)
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish(f"forbidden: {why}\n")


class _SiteHandler(_Guarded, web.FallbackHandler):
    def initialize(self, fallback, hosts: Hosts) -> None:  # type: ignore[override]
        super().initialize(fallback)
        self.hosts = hosts


class _ScriptHandler(_Guarded):
    """livereload's browser script, as the livereload package ships it."""

    def initialize(self, script: bytes, hosts: Hosts) -> None:
        self.script, self.hosts = script, hosts

    def get(self) -> None:
        self.set_header("Content-Type", "application/javascript")
        self.set_header("Cache-Control", "no-store")
        self.write(self.script)


class ReloadSocket(_Guarded, websocket.WebSocketHandler):
    """livereload's socket: the handshake, then a reload each time the site changed."""

    def initialize(self, hub: ReloadHub, hosts: Hosts) -> None:
        self.hub, self.hosts = hub, hosts

    def prepare(self):
        # Only the page's own origin (its scheme aside): Tornado lets a client that sends
        # no Origin in, and a page whose name was rebound has it equal to its Host.
        origin, host = self.request.headers.get("Origin"), self.request.headers.get("Host")
        if origin is None or host is None or urlsplit(origin).netloc.lower() != host.lower():
            self._refuse("the reload socket is for this server's own pages")
            return None
        return super().prepare()

    def check_origin(self, origin: str) -> bool:
        return False  # any origin other than the page's own (prepare let only that through)

    def on_message(self, message: str | bytes) -> None:
        try:
            command = json.loads(message)
        except ValueError:
            self.close()
            return
        if not isinstance(command, dict) or command.get("command") != "hello":
            return  # ("info": what the page is; nothing to answer)
        self.write_message(json.dumps({"command": "hello", "protocols": [PROTOCOL]}))
        self.hub.sockets.add(self)
        if command.get("snipver") != self.hub.version():  # built again since it was served
            self.write_message(RELOAD)

    def on_close(self) -> None:
        self.hub.sockets.discard(self)


class _Site(WSGIContainer):
    def _log(self, status_code, request) -> None:
        pass  # no line per request (as log_function below): a page and its data are dozens


def application(site, pool: Executor, hub: ReloadHub, hosts: Hosts) -> web.Application:
    """The routes: livereload's socket and script, and the site (a WSGI app run on ``pool``)."""
    guard = {"hosts": hosts}
    return web.Application(
        [
            (r"/livereload", ReloadSocket, {"hub": hub, **guard}),
            (r"/livereload\.js", _ScriptHandler, {"script": _script(), **guard}),
            (r".*", _SiteHandler, {"fallback": _Site(site, executor=pool), **guard}),
        ],
        log_function=lambda _: None,
    )


def _script() -> bytes:
    import livereload

    return (Path(livereload.__file__).parent / "vendors" / "livereload.js").read_bytes()


def listen(host: str, port: int) -> list[socket.socket]:
    """The listening sockets, or one line saying why not (busy, privileged, unknown host)."""
    try:
        return netutil.bind_sockets(port, host)
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ServeError(
            f"cannot listen on {host}:{port} ({reason}): pick another with --port or --host"
        ) from None
