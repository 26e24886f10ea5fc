"""The writer: in place, file by file; only files it made are replaced or removed; one build at a time."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from sitegen.errors import OutputError
from sitegen.write import lock as lock_mod
from sitegen.write.lock import OutputLock
from sitegen.write.site import MARKER, PLACEHOLDER_PAGE, SitePaths, SiteWriter, read_manifest


def _build(out: Path, files: dict[str, str], previous=None) -> dict:
    """One build's writing: lock, write ``files``, publish; returns the file records."""
    paths = SitePaths.of(out)
    with OutputLock(paths):
        w = SiteWriter(paths, previous)
        for rel, text in files.items():
            w.write(rel, text)
        return w.publish()


def test_publish_writes_files_and_the_manifest(tmp_path):
    out = tmp_path / "site"
    records = _build(out, {"a.html": "one", "sub/b.html": "two"})
    assert (out / "sub/b.html").read_text() == "two"
    assert read_manifest(out) == {"a.html", "sub/b.html"} == set(records)
    assert json.loads((out / MARKER).read_text())["files"] == ["a.html", "sub/b.html"]
    assert records["a.html"][0] == 3
    assert [p.name for p in tmp_path.iterdir() if ".staging" in p.name or ".lock" in p.name] == []


def test_stale_files_go_and_the_users_files_stay(tmp_path):
    out = tmp_path / "site"
    _build(out, {"a.html": "one", "sub/b.html": "two", "old/c.html": "three"})
    (out / "CNAME").write_text("runs.example.org\n")
    (out / "about.html").write_text("<p>ours, not sitegen's</p>")
    (out / ".git").mkdir()
    (out / ".git" / "HEAD").write_text("ref: refs/heads/gh-pages\n")
    (out / "sub" / "mine.txt").write_text("a user's file in a folder sitegen made")
    _build(out, {"a.html": "new"})
    assert (out / "a.html").read_text() == "new"
    assert not (out / "old").exists()  # a folder sitegen emptied is removed
    assert not (out / "sub" / "b.html").exists()
    assert (out / "sub" / "mine.txt").exists()  # ... and one still holding a user's file stays
    assert (out / "CNAME").read_text() == "runs.example.org\n"
    assert (out / "about.html").exists() and (out / ".git" / "HEAD").exists()
    assert read_manifest(out) == {"a.html"}


def test_an_unchanged_file_is_not_touched(tmp_path):
    out = tmp_path / "site"
    _build(out, {"a.html": "same", "b.html": "old"})
    before = os.stat(out / "a.html")
    os.utime(out / "a.html", ns=(before.st_atime_ns, before.st_mtime_ns - 10**9))
    before = os.stat(out / "a.html")
    _build(out, {"a.html": "same", "b.html": "new"})
    after = os.stat(out / "a.html")
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert (out / "b.html").read_text() == "new"


def test_a_failed_render_leaves_the_site_as_it_was(tmp_path):
    out = tmp_path / "site"
    _build(out, {"a.html": "old"})
    paths = SitePaths.of(out)
    with OutputLock(paths):
        w = SiteWriter(paths)
        w.write("a.html", "half")
        w.write("new.html", "x")
        w.abort()  # what an exception while rendering does
    assert (out / "a.html").read_text() == "old" and not (out / "new.html").exists()
    assert not paths.staging.exists()


def test_a_users_file_is_never_overwritten(tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.html").write_text("the user's own page")
    (out / ".nojekyll").write_text("")
    with pytest.raises(OutputError, match=r"did not make.*index\.html"):
        _build(out, {"a.html": "x", "index.html": "sitegen's", ".nojekyll": ""})
    assert (out / "index.html").read_text() == "the user's own page"
    assert not (out / "a.html").exists() and not (out / MARKER).exists()
    # a file holding exactly what sitegen would write (an empty .nojekyll) is simply taken over
    _build(out, {"a.html": "x", ".nojekyll": ""})
    assert read_manifest(out) == {"a.html", ".nojekyll"}


def test_a_file_where_a_folder_goes_is_named_once(tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    (out / "jobs").write_text("a file of the user's")
    (out / "runs\nx").write_text("")  # (a name the terminal would split)
    files = {f"jobs/j{i}/index.html": "x" for i in range(8)} | {"runs\nx/a.html": "y"}
    with pytest.raises(OutputError) as err:
        _build(out, files)
    message = str(err.value)
    assert message.count("jobs (not a folder)") == 1 and "runs\\nx (not a folder)" in message
    assert "\n" not in message


def test_new_pages_stand_as_placeholders_until_their_own_come(tmp_path, monkeypatch):
    """Each new page is in place (a placeholder linking nowhere) before the first file moves
    in; files move in before the pages, the pages before the listings, the index last; the
    pages that go become placeholders before anything is removed."""
    out = tmp_path / "site"
    _build(
        out, {"index.html": "<a href='jobs/a/'>", "jobs/a/index.html": "a", "old/index.html": "o"}
    )
    moves: list[tuple[str, bool]] = []
    real = SiteWriter._move_in

    def move_in(self, rel, src=None):
        moves.append((rel, src is not None and src.read_bytes() == PLACEHOLDER_PAGE))
        real(self, rel, src)

    monkeypatch.setattr(SiteWriter, "_move_in", move_in)
    _build(
        out,
        {
            "index.html": "<a href='jobs/b/'>",
            "jobs/a/index.html": "a2",
            "jobs/b/index.html": "b",
            "jobs/b/data.csv": "1",
            "runs/index.html": "r",
            "static/site.css": "s",
        },
    )
    assert moves == [
        ("jobs/b/index.html", True),
        ("runs/index.html", True),
        ("jobs/b/data.csv", False),
        ("static/site.css", False),
        ("jobs/a/index.html", False),
        ("jobs/b/index.html", False),
        ("runs/index.html", False),
        ("index.html", False),
        ("old/index.html", True),
    ]
    assert not (out / "old").exists() and (out / "jobs/b/index.html").read_text() == "b"
    assert b"href" not in PLACEHOLDER_PAGE and b"src" not in PLACEHOLDER_PAGE


def test_carry_over_keeps_only_intact_files_of_the_last_build(tmp_path):
    out = tmp_path / "site"
    records = _build(
        out, {"jobs/x/index.html": "page", "jobs/x/steps.csv": "a,b", "data/x.json": "{}"}
    )
    (out / "jobs" / "x" / "notes.txt").write_text("the user's")
    paths = SitePaths.of(out)
    with OutputLock(paths):
        w = SiteWriter(paths, records)
        assert w.carry_over(["jobs/x/", "data/x.json"])
        assert w.files == 3  # the user's notes.txt is not claimed
        w.publish()
    assert (out / "jobs" / "x" / "notes.txt").exists() and (out / "jobs/x/steps.csv").exists()
    (
        out / "jobs" / "x" / "steps.csv"
    ).unlink()  # deleted by the user: the page must be rendered again
    with OutputLock(paths):
        w = SiteWriter(paths, records)
        assert not w.carry_over(["jobs/x/", "data/x.json"])
        assert not w.carry_over(["jobs/y/"])  # never written
        w.abort()


def test_a_file_written_and_carried_over_counts_once_at_its_new_size(tmp_path):
    # a run kept whole whose transcript is made again: the folder is carried over after the
    # file was written (or before): the site holds one file, of the size written now
    out = tmp_path / "site"
    records = _build(out, {"runs/r/index.html": "page", "runs/r/transcripts/t.js": "x" * 100})
    paths = SitePaths.of(out)
    for written_first in (True, False):
        with OutputLock(paths):
            w = SiteWriter(paths, records)
            if written_first:
                w.write("runs/r/transcripts/t.js", "y" * 10)
            assert w.carry_over(["runs/r/"])
            if not written_first:
                w.write("runs/r/transcripts/t.js", "y" * 10)
            assert (w.files, w.bytes) == (2, 14)
            assert w.sizes == {"runs/r/index.html": 4, "runs/r/transcripts/t.js": 10}
            w.abort()


def test_a_page_written_twice_publishes_its_last_version(tmp_path):
    # a page rendered again in one build (the site budget asks for it), its second version
    # the one already published: that one stays, not the first render
    out = tmp_path / "site"
    records = _build(out, {"a.html": "published"})
    paths = SitePaths.of(out)
    with OutputLock(paths):
        w = SiteWriter(paths, records)
        w.write("a.html", "FIRST-RENDER-xx")
        w.write("a.html", "published")
        w.publish()
    assert (out / "a.html").read_text() == "published"


def test_second_concurrent_build_is_refused(tmp_path):
    paths = SitePaths.of(tmp_path / "site")
    with OutputLock(paths), pytest.raises(OutputError, match="another sitegen build"):
        OutputLock(paths).__enter__()
    with OutputLock(paths):  # free again
        pass
    assert not paths.lock.exists()


def test_lock_taken_on_a_file_unlinked_meanwhile_is_taken_again(tmp_path, monkeypatch):
    """The race: the holder unlinks the lock file between our open and our flock."""
    paths = SitePaths.of(tmp_path / "site")
    real_flock = lock_mod.fcntl.flock
    calls = []

    def racing_flock(fd, op):
        if not calls:
            os.unlink(paths.lock)  # the previous holder lets go and removes the file
        calls.append(fd)
        return real_flock(fd, op)

    monkeypatch.setattr(lock_mod.fcntl, "flock", racing_flock)
    with OutputLock(paths) as lock:
        assert len(calls) == 2  # the lock on the vanished file did not count
        held = os.fstat(lock._fd)
        assert os.stat(paths.lock).st_ino == held.st_ino
        monkeypatch.setattr(lock_mod.fcntl, "flock", real_flock)
        with pytest.raises(OutputError, match="another sitegen build"):
            OutputLock(paths).__enter__()


def test_killed_builds_leave_nothing_behind(tmp_path):
    out = tmp_path / "site"
    _build(out, {"a.html": "old"})
    for pid in (4242, 4343):  # staging folders of builds killed before publishing
        stale = tmp_path / f".site.staging-{pid}"
        (stale / "jobs").mkdir(parents=True)
        (stale / "jobs" / "x.html").write_text("half")
    _build(out, {"a.html": "new"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_killed_while_publishing_the_next_build_finishes_the_job(tmp_path, monkeypatch):
    out = tmp_path / "site"
    _build(out, {"a.html": "one", "old.html": "x"})

    def killed(self, rel):
        raise KeyboardInterrupt

    monkeypatch.setattr(SiteWriter, "_remove", killed)
    with pytest.raises(KeyboardInterrupt):
        _build(out, {"a.html": "two", "new.html": "y"})
    # the manifest listed old and new files before anything moved: nothing is orphaned
    assert read_manifest(out) == {"a.html", "old.html", "new.html"}
    monkeypatch.undo()
    _build(out, {"a.html": "two", "new.html": "y"})
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "a.html", "new.html"]


def test_output_given_as_a_symlink_is_written_through(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "site").symlink_to(real)
    for text in ("one", "two", "three"):
        _build(tmp_path / "site", {"a.html": text})
        assert (tmp_path / "site").is_symlink() and (real / "a.html").read_text() == text
    assert SitePaths.of(tmp_path / "site").cache == tmp_path / ".real.cache"


def test_dot_in_an_empty_folder(tmp_path, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    paths = SitePaths.of(Path("."))
    assert paths.out == here and paths.lock == tmp_path / ".here.lock"
    _build(Path("."), {"index.html": "x"})
    _build(Path("."), {"index.html": "y"})
    assert sorted(p.name for p in here.iterdir()) == [MARKER, "index.html"]


def test_refuses_paths_outside_and_a_file_as_output(tmp_path):
    paths = SitePaths.of(tmp_path / "ok")
    with OutputLock(paths):
        w = SiteWriter(paths)
        for bad in ("../escape.html", "/abs.html", "a/../../b", ""):
            with pytest.raises(OutputError, match="outside the site"):
                w.write(bad, "x")
        w.abort()
    (tmp_path / "file").write_text("x")
    paths = SitePaths.of(tmp_path / "file")
    with OutputLock(paths), pytest.raises(OutputError, match="not a folder"):
        SiteWriter(paths)


def test_never_writes_or_deletes_through_a_planted_link(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "b.html").write_text("not sitegen's")
    out = tmp_path / "site"
    _build(out, {"sub/b.html": "x", "a.html": "y"})
    (out / "sub" / "b.html").unlink()
    (out / "sub").rmdir()
    (out / "sub").symlink_to(elsewhere)  # someone who can write the folder plants a link
    with pytest.raises(OutputError, match="sub"):
        _build(out, {"sub/b.html": "new", "a.html": "y"})
    _build(out, {"a.html": "z"})  # sub/b.html is stale now: not deleted through the link
    assert (elsewhere / "b.html").read_text() == "not sitegen's"


def test_a_full_disk_is_one_line(tmp_path, monkeypatch):
    def full(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    paths = SitePaths.of(tmp_path / "site")
    with OutputLock(paths):
        w = SiteWriter(paths)
        monkeypatch.setattr(Path, "write_bytes", full)
        with pytest.raises(OutputError, match="disk is full"):
            w.write("a.html", "x")


def test_files_under_a_folder_by_bisection_equal_a_scan(tmp_path):
    """carry_over finds a page folder's files by bisection: the same files a scan finds."""
    import random

    rng = random.Random(7)
    parts = ["a", "a-b", "a.b", "ab", "a0", "é", "~", "x"]
    names = {"/".join(rng.choice(parts) for _ in range(rng.randint(1, 4))) for _ in range(400)}
    w = SiteWriter(SitePaths.of(tmp_path / "out"), {n: (1, 1) for n in names})
    for folder in {n.rsplit("/", 1)[0] + "/" for n in names if "/" in n} | {"a/", "zz/"}:
        assert w._under(folder) == sorted(n for n in names if n.startswith(folder))


def test_a_planted_cache_record_never_removes_what_is_not_ours(tmp_path):
    """The cache's record of the last build's files is data: a name in it that leads out of
    the site (``../``, an absolute path), or a file of the user's that the manifest does not
    list (it is not as recorded), is neither removed nor replaced by a build; a file of ours
    the record names is, also with the manifest deleted."""
    out = tmp_path / "site"
    records = _build(out, {"a.html": "one", "old.html": "stale", "b.html": "b"})
    outside, absolute = tmp_path / "victim.txt", tmp_path / "victim2.txt"
    outside.write_text("v")
    absolute.write_text("w")
    (out / "CNAME").write_text("example.org\n")
    planted = {**records, "../victim.txt": (1, 1), str(absolute): (1, 1), "CNAME": (5, 1)}
    records = _build(out, {"a.html": "two", "b.html": "b"}, planted)
    assert outside.read_text() == "v" and absolute.read_text() == "w"
    assert (out / "CNAME").read_text() == "example.org\n"
    assert not (out / "old.html").exists()  # ours (listed): removed
    (out / MARKER).unlink()
    records = _build(out, {"a.html": "three"}, {**records, "CNAME": (5, 1)})
    assert not (out / "b.html").exists()  # ours (as recorded): removed without the manifest
    assert (out / "CNAME").read_text() == "example.org\n"
    with pytest.raises(OutputError, match="CNAME"):  # the user's: not replaced either
        _build(out, {"CNAME": "other"}, {**records, "CNAME": (5, 1)})
