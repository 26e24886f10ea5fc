"""sitegen serve: the WSGI app serving the site, the error banner, and rebuild that survives failures."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request

from sitegen.options import BuildOptions
from sitegen.serve import SiteApp, rebuild
from sitegen.synth import synth


def call(app, path):
    got = {}

    def start_response(status, headers):
        got["status"], got["headers"] = status, dict(headers)

    body = b"".join(app({"PATH_INFO": path}, start_response))
    return got["status"], body


def test_app_serves_site_and_shows_rebuild_errors(tmp_path):
    (tmp_path / "jobs" / "x").mkdir(parents=True)
    (tmp_path / "index.html").write_text("<html><body>hi</body></html>")
    (tmp_path / "jobs" / "x" / "index.html").write_text("<html><body>job</body></html>")
    (tmp_path / "404.html").write_text("<html><body>nope</body></html>")
    app = SiteApp(tmp_path)
    assert call(app, "/")[0] == "200 OK"
    assert call(app, "/jobs/x/")[1].startswith(b"<html><body>job")
    assert call(app, "/jobs/x")[0].startswith("301")
    assert call(app, "/missing")[0] == "404 Not Found"
    assert call(app, "/../../etc/passwd")[0] in ("403 Forbidden", "404 Not Found")
    app.error = "archive vanished <b>"
    status, body = call(app, "/")
    assert b"Rebuild failed" in body and b"&lt;b&gt;" in body


def test_failed_rebuild_keeps_last_good_site(tmp_path):
    archive = tmp_path / "a"
    synth(archive, seed=4, steps=8, trials_per_step=1)
    out = tmp_path / "site"
    app = SiteApp(out)
    opts = BuildOptions(archive=archive, out=out, workers=1)
    assert rebuild(opts, app) and app.error is None
    shutil.rmtree(archive)
    assert not rebuild(opts, app)
    assert "not found" in app.error
    assert (out / "index.html").exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_command_rebuilds_on_change(tmp_path):
    archive = tmp_path / "a"
    synth(archive, seed=6, steps=8, trials_per_step=1)
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sitegen",
            "serve",
            str(archive),
            "-o",
            str(tmp_path / "site"),
            "--port",
            str(port),
            "--workers",
            "1",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 60
        page = None
        while time.time() < deadline:
            try:
                page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).read()
                break
            except OSError:
                time.sleep(0.3)
        assert page and b"livereload" in page  # the reload script is injected
        before = (tmp_path / "site" / "index.html").stat().st_ino
        log = archive / "flat/chain-b/train_600301.out"
        with open(log, "a") as fh:
            fh.write(
                "(skyrl_entrypoint pid=4242) 2026-03-01 00:00:00.000 | INFO     | x:y:1 - Training done!\n"
            )
        while time.time() < deadline and (tmp_path / "site" / "index.html").stat().st_ino == before:
            time.sleep(0.3)
        assert (tmp_path / "site" / "index.html").stat().st_ino != before
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_redirects_stay_inside_the_site(tmp_path):
    (tmp_path / "jobs/x").mkdir(parents=True)
    (tmp_path / "jobs/x/index.html").write_text("<html><body>job</body></html>")
    app = SiteApp(tmp_path)
    for path in ("//evil.example/..", "//evil.example/../jobs/x", "/\\evil.example/.."):
        got = {}

        def start_response(status, headers, got=got):
            got["status"], got["headers"] = status, dict(headers)

        b"".join(app({"PATH_INFO": path}, start_response))
        loc = got["headers"].get("Location")
        if loc is not None:
            assert loc.startswith("/") and not loc.startswith("//") and "evil" not in loc, loc
    got = {}
    b"".join(app({"PATH_INFO": "/jobs/x"}, lambda s, h: got.update(s=s, h=dict(h))))
    assert got["h"]["Location"] == "/jobs/x/"
    assert call(app, "/%00")[0] == "403 Forbidden"  # no traceback on a NUL byte


def test_a_fifo_in_the_site_does_not_hang_the_server(tmp_path):
    import os
    import threading

    os.mkfifo(tmp_path / "pipe.html")
    app = SiteApp(tmp_path)
    out = []
    t = threading.Thread(target=lambda: out.append(call(app, "/pipe.html")), daemon=True)
    t.start()
    t.join(5)
    assert out and out[0][0] == "404 Not Found"
