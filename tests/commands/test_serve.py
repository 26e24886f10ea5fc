"""sitegen serve: the WSGI app, the error banner, rebuilds that survive failures, and a real
server on an ephemeral port: files served byte for byte, the reload snippet in HTML pages
only, who may ask (Host, the socket's origin), paths decoded once, a template error named
by file and line, serving never waiting for the watcher or a rebuild."""

from __future__ import annotations

import gzip
import http.client
import json
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from sitegen.commands.serve import HEAD_END, SiteApp, describe, rebuild, serving
from sitegen.commands.watch import SETTLE_S, Watcher
from sitegen.options import BuildOptions
from sitegen.synth import synth
from tests.conftest import BASE_URL
from tests.scenarios.conftest import golden_site  # noqa: F401 (a fixture)
from tests.scenarios.test_incremental import STEP, _archive

CHAIN_B = "flat/chain-b/train_600301.out"  # a job of the small archive: steps are appended to it
# A failure line quoting a proxy's error page: `</head>` reaches the JSON data files.
FAILED = (
    "(skyrl_entrypoint pid=4242) 2026-03-01 00:00:00.000 | ERROR    | x:y:1 - Training failed "
    "at step 102: HTTPError: <html><head><title>502</title></head></html>\n"
)


def call(app, path):
    got = {}

    def start_response(status, headers):
        got["status"], got["headers"] = status, dict(headers)

    body = b"".join(app({"PATH_INFO": path}, start_response))
    return got["status"], body


class QuickWatcher(Watcher):
    """The serve command's watcher as the tests run it (tests/commands/conftest.py): looking
    every 50 ms rather than every half second (an option of ``Watcher``; a burst still
    settles for as long as the command's), and counting its looks, so that a test waits for
    the looks it needs (``wait_looks``) instead of sleeping for as many intervals."""

    def __init__(self, inputs, build, poll_s: float = 0.05, settle_s: float = SETTLE_S) -> None:
        super().__init__(inputs, build, poll_s, settle_s)
        self.looks = 0
        look = inputs.look

        def counted() -> str | None:
            try:
                return look()
            finally:
                self.looks += 1

        inputs.look = counted

    def wait_looks(self, n: int, timeout: float = 10) -> bool:
        """Whether ``n`` more looks than now ended within ``timeout`` seconds."""
        until = self.looks + n
        return wait_until(lambda: self.looks >= until, timeout, every=0.01)


def small_archive(tmp_path: Path, keep: tuple[str, ...] | None = None) -> Path:
    """synth's archive; with ``keep``, only those of its folders (test_incremental's
    ``FOLDERS``): a test of serving's or watching's mechanics, whose checks hold for any job,
    builds the one or two it touches, each build costing what those cost."""
    archive = tmp_path / "a"
    if keep is not None:
        return _archive(archive, keep, seed=6, steps=4, trials_per_step=1, real=False)
    synth(archive, seed=6, steps=4, trials_per_step=1, real=False)
    return archive


ONE_JOB = ("flat/chain-b",)  # the folder of CHAIN_B


def wait_until(cond, timeout: float, every: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(every)
    return bool(cond())


def get(
    url: str, host: str | None = None, timeout: float = 5, method: str = "GET"
) -> tuple[int, dict, bytes]:
    """A request through a real HTTP client (``host``: the Host header sent instead of the URL's)."""
    parts = urllib.request.urlparse(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.putrequest(method, parts.path or "/", skip_host=host is not None)
        if host is not None:
            conn.putheader("Host", host)
        conn.endheaders()
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        conn.close()


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


class _Links(HTMLParser):
    """The ``href``/``src`` of a page's elements, and its ``<base href>``."""

    def __init__(self) -> None:
        super().__init__()
        self.base: str | None = None
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "base" and self.base is None:
            self.base = a.get("href")
        self.links += [v for k, v in attrs if k in ("href", "src") and v and tag != "base"]


def _served_404_links(app: SiteApp, at: str) -> list[str]:
    """Where each link of the 404 page served at ``at`` leads: a path of this server, or
    the address it leaves for."""
    status, body = call(app, at)
    assert status == "404 Not Found"
    page = _Links()
    page.feed(body.decode())
    here = urljoin("http://127.0.0.1:8000" + at, page.base or "")
    out = []
    for link in page.links:
        to = urlsplit(urljoin(here, link))
        out.append(to.path if to.netloc == "127.0.0.1:8000" else to.geturl())
    return out


def test_the_404_page_links_into_the_served_site_at_any_depth(site, golden_site):  # noqa: F811
    """A mistyped address deep in the site (``/jobs/gone/``) gets the 404 page styled, and
    its links back to the index work: they lead to files of the site served here, not to
    ``/jobs/gone/static/style.css``, nor to the public address of a build with a base URL
    (``sitegen serve`` with the team's sitegen.toml)."""
    golden = golden_site[0]
    for root, base_url in ((golden, None), (site, BASE_URL)):
        app = SiteApp(root, base_url=base_url)
        for at in ("/nope", "/jobs/gone/", "/jobs/gone/transcripts/t/index.html"):
            links = _served_404_links(app, at)
            assert "/static/style.css" in links and "/index.html" in links, (root, at, links)
            for path in links:
                assert path.startswith("/"), (root, at, path)
                assert call(app, path)[0] == "200 OK", (root, at, path)


def test_failed_rebuild_keeps_last_good_site(tmp_path):
    archive = small_archive(tmp_path, ONE_JOB)
    out = tmp_path / "site"
    app = SiteApp(out)
    opts = BuildOptions(archive=archive, out=out, workers=1)
    assert rebuild(opts, app) and app.error is None
    shutil.rmtree(archive)
    assert not rebuild(opts, app)
    assert "not found" in app.error
    assert (out / "index.html").exists()


def test_serve_command_rebuilds_on_change(tmp_path):
    archive = small_archive(tmp_path, ONE_JOB)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = [sys.executable, "-m", "sitegen", "serve", str(archive), "-o", str(tmp_path / "site")]
    proc = subprocess.Popen(
        [*argv, "--port", str(port), "--workers", "1"], stderr=subprocess.PIPE, text=True
    )
    try:
        page = None

        def served() -> bool:
            nonlocal page
            try:
                page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).read()
            except OSError:
                return False
            return True

        assert wait_until(served, 60, every=0.2)
        assert page and b"/livereload.js" in page  # the reload snippet
        before = (tmp_path / "site" / "index.html").stat().st_ino
        with open(archive / CHAIN_B, "a") as fh:
            fh.write(STEP.format(n=101))
        assert wait_until(lambda: (tmp_path / "site/index.html").stat().st_ino != before, 30)
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
    assert call(app, "/\0")[0] == "403 Forbidden"  # no traceback on a NUL byte


def test_a_fifo_in_the_site_does_not_hang_the_server(tmp_path):
    import os

    os.mkfifo(tmp_path / "pipe.html")
    app = SiteApp(tmp_path)
    out = []
    t = threading.Thread(target=lambda: out.append(call(app, "/pipe.html")), daemon=True)
    t.start()
    t.join(5)
    assert out and out[0][0] == "404 Not Found"


def test_every_file_is_served_as_written_and_pages_get_the_snippet_in_their_head(tmp_path):
    """The reload script goes into HTML pages, at the end of their own <head>; JSON and
    scripts are served byte for byte, even when their text holds a `</head>`."""
    archive = small_archive(tmp_path)
    with open(archive / CHAIN_B, "a") as fh:
        fh.write(FAILED)
    out = tmp_path / "site"
    with serving(BuildOptions(archive=archive, out=out, workers=1)) as site:
        assert b"</head>" in (out / "data/index.json").read_bytes()  # what used to break it
        files = sorted(p for p in out.rglob("*") if p.is_file() and p.name != ".sitegen-site")
        pages = 0
        for path in files:
            rel = path.relative_to(out).as_posix()
            status, headers, body = get(site.url + rel)
            assert status == 200, rel
            on_disk = path.read_bytes()
            if path.suffix != ".html":
                assert body == on_disk, rel
                continue
            pages += 1
            at = HEAD_END.search(on_disk).start()
            assert body[:at] == on_disk[:at] and body.endswith(on_disk[at:]), rel
            snippet = body[at : len(body) - len(on_disk) + at]
            assert snippet.startswith(b"<script>") and b"/livereload.js" in snippet, rel
            assert int(headers["Content-Length"]) == len(body)
        assert pages >= 10 and len(files) > pages
        status, _, body = get(site.url + "data/index.json")
        assert any(
            "HTTPError: <html><head>" in (j["status_detail"] or "")
            for j in json.loads(body)["jobs"]
        )
        assert (
            get(site.url + "static/vendor/vega-bundle.js")[2]
            == (out / "static/vendor/vega-bundle.js").read_bytes()
        )
        status, headers, body = get(site.url, method="HEAD")
        assert status == 200 and body == b"" and int(headers["Content-Length"]) > 1000
        assert get(site.url, method="POST")[0] == 405  # the site is read only
        # a page missing from the site: the 404 page, live too
        status, _, body = get(site.url + "jobs/nope/")
        assert status == 404 and b"/livereload.js" in body and b"Not found" in body


def test_compressed_files_are_labelled_as_what_they_are(tmp_path):
    """trials.csv.gz is gzip data (as GitHub Pages labels it), not a CSV whose bytes the
    browser would show as text; its bytes are served as written."""
    (tmp_path / "t.csv.gz").write_bytes(gzip.compress(b"a,b\n"))
    (tmp_path / "t.json.bz2").write_bytes(b"BZh")
    got = {}

    def start_response(status, headers):
        got[status] = dict(headers)

    app = SiteApp(tmp_path)
    assert b"".join(app({"PATH_INFO": "/t.csv.gz"}, start_response)) == gzip.compress(b"a,b\n")
    assert got.pop("200 OK")["Content-Type"] == "application/gzip"
    app({"PATH_INFO": "/t.json.bz2"}, start_response)
    assert got.pop("200 OK")["Content-Type"] == "application/octet-stream"


def test_paths_are_decoded_once(tmp_path):
    archive = small_archive(tmp_path, ONE_JOB)
    out = tmp_path / "site"
    with serving(BuildOptions(archive=archive, out=out, workers=1)) as site:
        (out / "x%41.txt").write_bytes(b"literal percent")  # a file of the user's
        (out / "xA.txt").write_bytes(b"decoded twice")
        assert get(site.url + "x%2541.txt")[2] == b"literal percent"
        assert get(site.url + "x%41.txt")[2] == b"decoded twice"  # (%41 is A, decoded once)
        for path in ("%252e%252e/%252e%252e/etc/passwd", "%2e%2e/%2e%2e/etc/passwd"):
            status, _, body = get(site.url + path)
            assert status in (403, 404) and b"root:" not in body, path


def test_a_template_error_names_its_file_and_line(tmp_path, monkeypatch):
    """The banner of a failed rebuild says where a template went wrong: a syntax error
    (Jinja keeps the place on the exception) and an error while rendering (only in the
    traceback's template frames)."""
    import sitegen.cache.sources
    import sitegen.commands.serve
    import sitegen.present.html

    templates = tmp_path / "templates"
    shutil.copytree(sitegen.commands.serve.package_dir("templates"), templates)
    static = sitegen.commands.serve.package_dir("static")

    def package_dir(name: str) -> Path:
        return templates if name == "templates" else static

    for module in (sitegen.present.html, sitegen.commands.serve, sitegen.cache.sources):
        monkeypatch.setattr(module, "package_dir", package_dir)
    archive = small_archive(tmp_path, ONE_JOB)
    job = templates / "job.html"
    lines = job.read_text().splitlines(keepends=True)
    with serving(BuildOptions(archive=archive, out=tmp_path / "site", workers=1)) as site:
        for broken, kind in (
            ("{% if %}", "TemplateSyntaxError"),
            ("{{ nosuch.x }}", "UndefinedError"),
        ):
            job.write_text("".join(lines[:5]) + broken + "\n" + "".join(lines[5:]))
            assert wait_until(lambda kind=kind: kind in (site.app.error or ""), 10)
            assert site.app.error.startswith(f"{job}:6: {kind}: "), site.app.error
            status, _, body = get(site.url)
            assert status == 200 and f"{job}:6: {kind}".encode() in body  # the banner
    assert describe(ValueError("plain")) == "ValueError: plain"


def test_serving_never_waits_for_the_watcher_or_a_rebuild(tmp_path, monkeypatch):
    """A look at the inputs and a rebuild run on the watcher's thread: while each is held
    (until the test lets it go), pages are answered."""
    import sitegen.commands.serve
    import sitegen.commands.watch

    archive = small_archive(tmp_path, ONE_JOB)
    hold = threading.Event()  # the watcher's look and the rebuild wait while it is set
    entered = {"look": threading.Event(), "build": threading.Event()}
    go = {"look": threading.Event(), "build": threading.Event()}
    real = {"look": sitegen.commands.watch.find_jobs, "build": sitegen.commands.serve.build}

    def held(step: str):
        def call(*args, **kwargs):
            if hold.is_set():
                entered[step].set()
                go[step].wait(10)
            return real[step](*args, **kwargs)

        return call

    monkeypatch.setattr(sitegen.commands.watch, "find_jobs", held("look"))
    monkeypatch.setattr(sitegen.commands.serve, "build", held("build"))
    with serving(BuildOptions(archive=archive, out=tmp_path / "site", workers=1)) as site:
        builds = len(site.app.builds)
        hold.set()
        with open(archive / CHAIN_B, "a") as fh:
            fh.write(STEP.format(n=101))
        for step in ("look", "build"):
            assert entered[step].wait(10), step
            # (were the server waiting for the watcher's thread, this would time out)
            assert get(site.url + "data/index.json", timeout=2)[0] == 200, step
            assert get(site.url, timeout=2)[0] == 200, step
            go[step].set()
        assert wait_until(lambda: len(site.app.builds) > builds, 10)
        hold.clear()
