"""The output folder, end to end: the user's files stay, deleted files come back, a killed build
leaves no worker and no lock behind, and odd output paths (a symlink, ``.``) just work."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sitegen.commands.build import build
from sitegen.commands.cli import main
from sitegen.errors import ArchiveError
from sitegen.options import BuildOptions
from sitegen.synth import synth
from sitegen.write.site import MARKER, read_manifest
from tests.scenarios.test_incremental import _archive


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("small")
    synth(root, seed=31, steps=6, trials_per_step=1)
    return root


@pytest.fixture(scope="module")
def one_job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``small`` with only its flat/chain-b job: for the tests of how the output folder is
    taken (a link, ``.``, a page in the way, a full disk, the collector), which hold for any
    job, so that each build costs one job's."""
    return _archive(
        tmp_path_factory.mktemp("one-job"), ("flat/chain-b",), seed=31, steps=6, trials_per_step=1
    )


def _opts(archive: Path, out: Path, **kw) -> BuildOptions:
    return BuildOptions(archive=archive, out=out, workers=1, now=0.0, **kw)


def _files(site: Path) -> dict[str, bytes]:
    return {
        p.relative_to(site).as_posix(): p.read_bytes()
        for p in site.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(site).parts
    }


def test_users_files_survive_every_build_and_deleted_files_come_back(small, tmp_path):
    out = tmp_path / "site"
    build(_opts(small, out))
    made = read_manifest(out)
    assert made and "index.html" in made and MARKER not in made
    (out / "CNAME").write_text("runs.example.org\n")
    (out / "about.html").write_text("<h1>About</h1>")
    (out / ".git").mkdir()
    (out / ".git" / "config").write_text("[core]\n")
    job_page = next(p for p in sorted(made) if p.startswith("jobs/") and p.endswith("index.html"))
    (out / job_page).unlink()  # the user deletes a file sitegen made
    (out / MARKER).unlink()  # ... even the manifest

    r = build(_opts(small, out))
    assert not r.unchanged  # "nothing changed" must not leave the deleted file missing
    assert (out / job_page).exists() and read_manifest(out) == made
    # rendered again: the index, the runs list, the comparison and the page that lost a file
    assert r.pages_reused == r.pages - 4
    assert (out / "CNAME").read_text() == "runs.example.org\n"
    assert (out / "about.html").exists() and (out / ".git" / "config").exists()

    assert build(_opts(small, out)).unchanged
    build(_opts(small, out, clean=True))  # a clean build keeps them too
    assert (out / "CNAME").exists() and (out / ".git" / "config").exists()
    fresh = tmp_path / "fresh"
    build(_opts(small, fresh, clean=True))
    assert {k: v for k, v in _files(out).items() if k not in ("CNAME", "about.html")} == _files(
        fresh
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_gh_pages_worktree_flow(small, tmp_path):
    """publishing.md's second way: build into a worktree of the gh-pages branch, commit, build again."""

    def git(*args: str, cwd: Path) -> str:
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@e",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@e",
        }
        return subprocess.run(
            ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
        ).stdout

    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    git("commit", "-q", "--allow-empty", "-m", "init", cwd=repo)
    # an empty gh-pages branch with no history (what `git worktree add --orphan` does in git 2.42+)
    empty = git("hash-object", "-t", "tree", "/dev/null", cwd=repo).strip()
    git("branch", "gh-pages", git("commit-tree", empty, "-m", "pages", cwd=repo).strip(), cwd=repo)
    git("worktree", "add", "-q", str(tmp_path / "site"), "gh-pages", cwd=repo)
    site = tmp_path / "site"
    (site / "CNAME").write_text("runs.example.org\n")
    build(_opts(small, site))
    git("add", "-A", cwd=site)
    git("commit", "-q", "-m", "site", cwd=site)
    assert (site / ".git").is_file()  # a worktree's .git is a file pointing at the repository
    tracked = set(git("ls-files", cwd=site).split())
    assert {"CNAME", "index.html", MARKER} <= tracked
    assert not any(".cache" in t or ".lock" in t or ".staging" in t for t in tracked)

    # the archive grows: a rebuild changes only what it must, the worktree stays a worktree
    notes = small / "flat" / "stale" / "notes.md"
    before = notes.read_text() if notes.exists() else None
    notes.write_text("new notes\n")
    try:
        build(_opts(small, site))
    finally:
        notes.unlink() if before is None else notes.write_text(before)
    changed = git("status", "--porcelain", cwd=site).split("\n")
    assert changed and all("CNAME" not in c and ".git" not in c for c in changed)
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=site).strip() == "gh-pages"


def test_output_folder_given_as_a_symlink(one_job, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "site"
    link.symlink_to(real)
    for _ in range(3):  # the first build used to replace the link, the later ones failed
        assert main(["build", str(one_job), "-o", str(link), "--workers", "1"]) == 0
    assert link.is_symlink() and (real / "index.html").exists()


def test_dot_in_an_empty_folder_is_not_refused(one_job, tmp_path, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    assert main(["build", str(one_job), "-o", ".", "--workers", "1"]) == 0
    assert (here / "index.html").exists() and not list(here.glob(".*.lock"))


def test_a_users_page_in_the_way_is_one_line(one_job, tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "index.html").write_text("my own page")
    assert main(["build", str(one_job), "-o", str(out), "--workers", "1"]) == 2
    (err,) = _not_progress(capsys.readouterr().err)
    assert "index.html" in err and "sitegen did not make" in err
    assert sorted(p.name for p in out.iterdir()) == ["index.html"]


def test_a_cache_moved_into_the_archive_under_another_name_is_no_job(small, tmp_path, capsys):
    """A build cache renamed into the archive (its ``trials/`` folder looks like a job's
    trials) is known by its marker: the same jobs, and not a line about it."""
    archive = tmp_path / "a"
    shutil.copytree(small, archive)

    def jobs(site: Path) -> list[str]:
        return [j["id"] for j in json.loads((site / "data/index.json").read_text())["jobs"]]

    assert main(["build", str(archive), "-o", str(tmp_path / "site"), "--workers", "1"]) == 0
    before = jobs(tmp_path / "site")
    (tmp_path / ".site.cache").rename(archive / "old-cache")
    assert (archive / "old-cache/trials").is_dir()
    capsys.readouterr()
    assert main(["build", str(archive), "-o", str(tmp_path / "again"), "--workers", "1"]) == 0
    assert jobs(tmp_path / "again") == before
    assert [ln for ln in capsys.readouterr().err.splitlines() if "old-cache" in ln] == []


def _not_progress(err: str) -> list[str]:
    return [line for line in err.splitlines() if not line.startswith("progress:")]


def test_disk_full_is_one_line_exit_2(one_job, tmp_path, capsys, monkeypatch):
    def full(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full)
    assert main(["build", str(one_job), "-o", str(tmp_path / "site"), "--workers", "1"]) == 2
    (err,) = _not_progress(capsys.readouterr().err)
    assert err.startswith("sitegen: error: cannot write") and "disk is full" in err


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(
    not Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists(),
    reason="needs Linux /proc with the children list (CONFIG_PROC_CHILDREN)",
)
def test_kill_9_leaves_no_worker_and_an_immediate_rebuild_succeeds(tmp_path):
    archive = tmp_path / "a"
    synth(archive, seed=32, steps=6, trials_per_step=1, pad_mb=8)
    out = tmp_path / "site"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sitegen", "build", str(archive), "-o", str(out), "--workers", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while len(_children(proc.pid)) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGSTOP)  # freeze it with its workers alive ...
        workers = _children(proc.pid)
        assert len(workers) == 2, "the build finished before its workers could be seen"
        os.kill(proc.pid, signal.SIGKILL)  # ... and kill it as `kill -9` would
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.02)
    survivors = [w for w in workers if _alive(w)]
    for w in survivors:  # a failing run must not leave them behind either
        with contextlib.suppress(OSError):
            os.kill(w, signal.SIGKILL)
    assert not survivors, "workers outlived their build"
    report = build(BuildOptions(archive=archive, out=out, workers=2, now=0.0))
    assert report.jobs == 7 and (out / "index.html").exists()
    assert not list(tmp_path.glob(".site.staging-*"))


def test_the_collector_runs_less_often_during_a_build_and_as_before_after(
    one_job, tmp_path, monkeypatch
):
    """build() raises the young generation's threshold while it runs (fewer collections of
    the containers it makes) and puts the caller's thresholds back, on error too. It holds
    OpenBLAS to one thread the same way (numpy is imported for bootstraps, never for BLAS),
    and leaves a thread count the user set as it is."""
    import gc

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    before = gc.get_threshold()
    during: list[tuple[int, ...]] = []
    blas: list[str | None] = []

    def progress(_: str) -> None:
        during.append(gc.get_threshold())
        blas.append(os.environ.get("OPENBLAS_NUM_THREADS"))

    try:
        gc.set_threshold(700, 9, 11)
        build(_opts(one_job, tmp_path / "site"), progress=progress)
        assert during and set(during) == {(50_000, 9, 11)}
        assert set(blas) == {"1"}
        assert gc.get_threshold() == (700, 9, 11)
        assert "OPENBLAS_NUM_THREADS" not in os.environ
        (tmp_path / "empty").mkdir()
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
        with pytest.raises(ArchiveError):
            build(_opts(tmp_path / "empty", tmp_path / "site2"))
        assert gc.get_threshold() == (700, 9, 11)
        assert os.environ["OPENBLAS_NUM_THREADS"] == "3"
    finally:
        gc.set_threshold(*before)


_LINK_RE = re.compile(r'(?:href|src)="([^"#?]*)[^"]*"')
_ROW_URL_RE = re.compile(r'"((?:jobs|runs)/[^"]*/)"')  # the listings' rows (index-rows.js)


def _broken_links(site: Path, read: dict | None = None) -> list[str]:
    """Every internal link of the folder that leads nowhere: ``href``/``src`` of each page,
    and the rows' addresses in the listings' scripts (from the site's root). ``read``: the
    links found in each file by its path and stat, kept between calls (a build moves files
    in by renaming, so a file whose stat is the same holds the same links). A link's target
    is looked up among the files and folders of the walk that found its page: nothing moves
    while it runs."""
    site = Path(os.path.normpath(site))  # (paths below are compared as strings)
    read = {} if read is None else read
    pages, files, folders = [], set(), set()
    for folder, _, names in os.walk(site):
        folders.add(folder)
        for name in names:
            path = os.path.join(folder, name)
            files.add(path)
            if name.endswith((".html", ".js")):
                pages.append((folder, name, path))
    broken = []
    for folder, name, page in pages:
        try:
            st = os.stat(page)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        key = (page, st.st_ino, st.st_size, st.st_mtime_ns)
        if key not in read:
            text = Path(page).read_text(errors="replace")
            if name.endswith(".html"):
                base, urls = folder, _LINK_RE.findall(text)
            else:
                base, urls = str(site), _ROW_URL_RE.findall(text)
            read[key] = [
                (url, os.path.normpath(os.path.join(base, url)))
                for url in urls
                if url and ":" not in url.split("/")[0]  # (https:, mailto:, data:)
            ]
        for url, target in read[key]:
            if url.endswith("/") or target in folders:
                target = os.path.join(target, "index.html")
            if target not in files:
                broken.append(f"{os.path.relpath(page, site)} -> {url}")
    return broken


def test_every_link_resolves_at_every_instant_of_moving_files_in(small, tmp_path, monkeypatch):
    """A reader, a deploy or a ``kill -9`` may come between any two renames of the files a
    build moves in: at each of those instants (as at the start and the end), every internal
    link of the folder leads to a file. A first build, one that adds jobs and one that
    removes them."""
    from sitegen.write.site import SiteWriter

    fewer = tmp_path / "fewer"
    shutil.copytree(small, fewer)
    for job in ("chain-b", "stale"):
        shutil.rmtree(fewer / "flat" / job)
    out = tmp_path / "site"
    out.mkdir()  # (an existing empty folder: every page is new)
    instants = []
    read: dict = {}

    def checked(method):
        def run(self, *args):
            method(self, *args)
            instants.append(_broken_links(self.out, read))

        return run

    monkeypatch.setattr(SiteWriter, "_move_in", checked(SiteWriter._move_in))
    monkeypatch.setattr(SiteWriter, "_remove", checked(SiteWriter._remove))
    for archive, added, removed in ((fewer, 5, 0), (small, 2, 0), (fewer, 0, 2)):
        before = set(read_manifest(out) or ())
        instants.clear()
        build(_opts(archive, out))
        after = set(read_manifest(out))
        assert len({f.split("/")[1] for f in after - before if f.startswith("jobs/")}) == added
        assert len({f.split("/")[1] for f in before - after if f.startswith("jobs/")}) == removed
        assert len(instants) > 10 and [b for b in instants if b] == []
    assert _broken_links(out) == []
