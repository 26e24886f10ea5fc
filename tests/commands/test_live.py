"""sitegen serve's HTTP side: only this server's names are answered (DNS rebinding), the
reload socket only from the page's own origin, and livereload's handshake with a reload for
a page served before the last rebuild. Through a real server on an ephemeral port."""

from __future__ import annotations

import asyncio
import json

import pytest

from sitegen.commands.live import Hosts
from sitegen.commands.serve import serving
from sitegen.options import BuildOptions
from tests.commands.test_serve import get, small_archive


def test_hosts_are_this_server_s_names_localhost_and_ip_addresses():
    local = Hosts.of("127.0.0.1")
    for ok in (
        "127.0.0.1",
        "127.0.0.1:8000",
        "LOCALHOST:1",
        "localhost.",
        "a.localhost",
        "[::1]:80",
        "10.1.2.3",
        None,
    ):
        assert local.allow(ok), ok
    for bad in (
        "evil.example",
        "evil.example:8000",
        "127.0.0.1.nip.io",
        "localhost.evil.example",
        "",
        ":80",
        "[::1",
        "a b",
    ):
        assert not local.allow(bad), bad
    assert Hosts.of("node7.cluster").allow("NODE7.cluster:8000")
    assert not Hosts.of("node7.cluster").allow("node8.cluster")
    import socket

    assert Hosts.of("0.0.0.0").allow(f"{socket.gethostname()}:8000")


def test_only_this_server_s_names_are_answered(tmp_path):
    """DNS rebinding: a name that is not the address served gets nothing, on every route."""
    archive = small_archive(tmp_path)
    with serving(BuildOptions(archive=archive, out=tmp_path / "site", workers=1)) as site:
        port = site.port
        for path in ("", "data/index.json", "livereload.js", "livereload", "jobs/"):
            for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", "x"):
                status, _, body = get(site.url + path, host=host)
                assert status == 403 and b"<html" not in body, (path, host)
        for host in (
            f"127.0.0.1:{port}",
            f"localhost:{port}",
            "localhost",
            f"[::1]:{port}",
            "app.localhost:9000",
        ):
            assert get(site.url, host=host)[0] == 200, host
        assert get(site.url + "livereload.js")[2].startswith(b"(function")


def _socket(url: str, origin: str | None, snipver: int) -> list[dict]:
    """Open the reload socket as a page of ``origin`` would; the messages it gets in 0.3 s."""
    from tornado import httpclient, websocket

    async def talk() -> list[dict]:
        headers = {"Origin": origin} if origin else {}
        req = httpclient.HTTPRequest(url.replace("http", "ws") + "livereload", headers=headers)
        conn = await websocket.websocket_connect(req)
        hello = {"command": "hello", "protocols": ["http://livereload.com/protocols/official-7"]}
        await conn.write_message(json.dumps({**hello, "snipver": snipver}))
        got = []
        try:
            while True:
                msg = await asyncio.wait_for(conn.read_message(), 0.3)
                if msg is None:
                    break
                got.append(json.loads(msg))
        except TimeoutError:
            pass
        conn.close()
        return got

    return asyncio.run(talk())


def test_the_reload_socket_takes_only_the_served_origin(tmp_path):
    from tornado import httpclient

    archive = small_archive(tmp_path)
    with serving(BuildOptions(archive=archive, out=tmp_path / "site", workers=1)) as site:
        own = site.url.rstrip("/")
        version = site.app.version
        for origin in ("http://evil.example", f"http://evil.example:{site.port}", "null", None):
            with pytest.raises(httpclient.HTTPClientError) as refused:
                _socket(site.url, origin, version)
            assert refused.value.code == 403, origin
        # the page's own origin: the handshake, and a reload only for a page older than the site
        assert [m["command"] for m in _socket(site.url, own, version)] == ["hello"]
        got = _socket(site.url, own, version - 1)
        assert [m["command"] for m in got] == ["hello", "reload"] and got[1]["path"] == "*"
