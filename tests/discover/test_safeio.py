"""safeio: only regular files inside the root are opened, and reads are bounded."""

import os
import stat
import threading

import pytest

from sitegen.discover import safeio
from sitegen.discover.safeio import Root, UnsafeInput, open_regular, read_bytes, root_of


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "archive"
    (root / "sub").mkdir(parents=True)
    (root / "sub/a.txt").write_text("inside")
    (tmp_path / "outside.txt").write_text("secret")
    return root


def test_regular_file_inside(tree):
    assert read_bytes(tree / "sub/a.txt", tree, 100) == b"inside"
    with open_regular(tree / "sub/a.txt", tree) as fh:
        assert fh.read() == b"inside"


def test_link_inside_is_followed_link_outside_is_not(tree):
    os.symlink(tree / "sub/a.txt", tree / "in.txt")
    os.symlink(tree.parent / "outside.txt", tree / "out.txt")
    assert read_bytes(tree / "in.txt", tree, 100) == b"inside"
    with pytest.raises(UnsafeInput, match="outside the archive") as e:
        read_bytes(tree / "out.txt", tree, 100)
    assert isinstance(e.value, OSError) and "outside" in e.value.strerror


def test_parent_folder_link_leading_out_is_caught(tree):
    # discovery never follows folder links, but a folder swapped for one later is caught too
    (tree.parent / "elsewhere").mkdir()
    (tree.parent / "elsewhere/x.txt").write_text("secret")
    os.symlink(tree.parent / "elsewhere", tree / "linked")
    with pytest.raises(UnsafeInput):
        read_bytes(tree / "linked/x.txt", tree, 100)


def test_fifo_is_never_opened(tree):
    os.mkfifo(tree / "pipe")
    done = []

    def attempt():
        with pytest.raises(UnsafeInput, match="FIFO"):
            read_bytes(tree / "pipe", tree, 100)
        done.append(True)

    t = threading.Thread(target=attempt, daemon=True)
    t.start()
    t.join(5)
    assert done, "reading a FIFO blocked"


def test_devices_and_links_to_them_are_refused(tree):
    os.symlink("/dev/zero", tree / "zero")
    with pytest.raises(UnsafeInput):
        read_bytes(tree / "zero", tree, 100)
    with pytest.raises(UnsafeInput, match="device"):
        read_bytes("/dev/zero", None, 100)
    with pytest.raises(UnsafeInput, match="directory"):
        read_bytes(tree / "sub", tree, 100)


def test_reads_are_bounded(tree):
    (tree / "big").write_bytes(b"x" * 1000)
    with pytest.raises(UnsafeInput, match="larger than"):
        read_bytes(tree / "big", tree, 999)
    assert read_bytes(tree / "big", tree, 10, cut=True) == b"x" * 10


def test_limit_boundaries_and_empty_files(tree):
    (tree / "empty").write_bytes(b"")
    (tree / "ten").write_bytes(b"0123456789")
    assert read_bytes(tree / "empty", tree, 0) == b""
    assert read_bytes(tree / "ten", tree, 10) == b"0123456789"
    with pytest.raises(UnsafeInput, match="larger than 9 bytes"):
        read_bytes(tree / "ten", tree, 9)
    assert read_bytes(tree / "ten", tree, 9, cut=True) == b"012345678"
    assert read_bytes(tree / "ten", tree, 0, cut=True) == b""


def _lying_fstat(monkeypatch, size):
    """Make fstat report ``size`` bytes: a file that grew (or shrank) after it was measured."""
    real = os.fstat

    def fstat(fd):
        st = list(real(fd))
        st[stat.ST_SIZE] = size
        return os.stat_result(st)

    monkeypatch.setattr(safeio.os, "fstat", fstat)


@pytest.mark.parametrize("reported", [0, 1, 5])
def test_a_file_is_read_to_its_end_whatever_fstat_said(tree, monkeypatch, reported):
    (tree / "grew").write_bytes(b"x" * 3000)
    _lying_fstat(monkeypatch, reported)
    assert read_bytes(tree / "grew", tree, 3000) == b"x" * 3000
    with pytest.raises(UnsafeInput, match="larger than"):
        read_bytes(tree / "grew", tree, 2999)
    assert read_bytes(tree / "grew", tree, 100, cut=True) == b"x" * 100
    monkeypatch.setattr(safeio, "_CHUNK", 7)  # grown past one read: read on in chunks
    assert read_bytes(tree / "grew", tree, 3000) == b"x" * 3000


def _counting_reads(monkeypatch) -> list[int]:
    """Note the size asked of every os.read safeio makes."""
    asked: list[int] = []
    real = os.read

    def read(fd, n):
        asked.append(n)
        return real(fd, n)

    monkeypatch.setattr(safeio.os, "read", read)
    return asked


@pytest.mark.parametrize("size", [1, 10, 4096, 70_000])
def test_a_file_of_the_size_fstat_gives_costs_one_read(tree, monkeypatch, size):
    (tree / "f").write_bytes(b"y" * size)
    asked = _counting_reads(monkeypatch)
    assert read_bytes(tree / "f", tree, 1 << 20) == b"y" * size
    assert asked == [size + 1]  # no second read to see the end: the first one ended short
    asked.clear()
    assert read_bytes(tree / "f", tree, size) == b"y" * size  # exactly at the limit
    assert asked == [size + 1]


@pytest.mark.parametrize("reported", [0, 2, 5])
def test_a_read_that_ends_at_another_size_than_fstat_said_reads_on(tree, monkeypatch, reported):
    # grew (fstat said less) or shrank (more): reading goes on to the end, as before
    (tree / "f").write_bytes(b"z" * 4)
    asked = _counting_reads(monkeypatch)
    _lying_fstat(monkeypatch, reported)
    assert read_bytes(tree / "f", tree, 100) == b"z" * 4
    assert len(asked) >= 2


def test_a_file_that_shrank_gives_what_is_there(tree, monkeypatch):
    (tree / "shrank").write_bytes(b"abc")
    _lying_fstat(monkeypatch, 50)
    assert read_bytes(tree / "shrank", tree, 100) == b"abc"


def test_over_the_limit_is_refused_without_reading(tree, monkeypatch):
    (tree / "big").write_bytes(b"x" * 1000)

    def no_read(*a):
        raise AssertionError("read a file its size already refuses")

    monkeypatch.setattr(safeio.os, "read", no_read)
    with pytest.raises(UnsafeInput, match="larger than"):
        read_bytes(tree / "big", tree, 999)


@pytest.mark.skipif(not os.path.isfile("/proc/self/status"), reason="needs Linux /proc")
def test_a_file_whose_size_says_zero_is_read_whole():
    # /proc files report size 0: the size from fstat only sizes the first read
    assert b"Pid:" in read_bytes("/proc/self/status", None, 1 << 20)


def test_file_swapped_while_opening_is_refused(tree, monkeypatch):
    (tree / "other.txt").write_text("swapped in")
    real_open = os.open

    def swapping_open(path, flags, *a, **k):
        if (tree / "other.txt").exists():  # after the lstat, before the (first) open
            os.replace(tree / "other.txt", tree / "sub/a.txt")
        return real_open(path, flags, *a, **k)

    monkeypatch.setattr(safeio.os, "open", swapping_open)
    with pytest.raises(UnsafeInput, match="changed while being opened"):
        read_bytes(tree / "sub/a.txt", tree, 100)


def _outcome(path, root, limit):
    try:
        return read_bytes(path, root, limit)
    except UnsafeInput as exc:
        return ("refused", exc.strerror)


def test_a_root_object_reads_as_a_path_root_does(tree):
    """Root.of (its real path taken once) refuses and reads exactly what a plain root does."""
    os.symlink(tree / "sub/a.txt", tree / "in.txt")
    os.symlink(tree.parent / "outside.txt", tree / "out.txt")
    (tree.parent / "elsewhere").mkdir()
    (tree.parent / "elsewhere/x.txt").write_text("secret")
    os.symlink(tree.parent / "elsewhere", tree / "linked")
    os.symlink("/dev/zero", tree / "zero")
    os.mkfifo(tree / "pipe")
    (tree / "big").write_bytes(b"x" * 1000)
    (tree / "empty").write_bytes(b"")
    names = [
        "sub/a.txt",
        "in.txt",
        "out.txt",
        "linked/x.txt",
        "zero",
        "pipe",
        "big",
        "empty",
        "sub",
    ]
    root = Root.of(tree)
    for name in names:
        for limit in (0, 6, 999):
            slow = _outcome(tree / name, tree, limit)
            assert _outcome(str(tree / name), root, limit) == slow, name
    assert _outcome(tree / "out.txt", root, 99)[0] == "refused"


def test_a_root_object_keeps_the_real_path_it_was_made_with(tree, tmp_path):
    root = Root.of(tree)
    moved = tmp_path / "moved"
    tree.rename(moved)
    os.symlink(moved, tree)  # the root is now a link to a folder outside the one checked
    with pytest.raises(UnsafeInput, match="outside the archive"):
        read_bytes(tree / "sub/a.txt", root, 100)
    assert read_bytes(tree / "sub/a.txt", tree, 100) == b"inside"  # a fresh root follows it


def test_root_of():
    assert str(root_of("/a/b/c/d.out", "c/d.out")) == "/a/b"
    assert str(root_of("/a/b/d.out", "d.out")) == "/a/b"


def test_long_notes_are_cut_at_a_whole_line_before_redaction(tmp_path):
    from sitegen.pages.make import NOTES_MAX_BYTES, read_notes
    from sitegen.redact import Redactor

    token = "hf_" + "Z" * 30
    head = "x" * (NOTES_MAX_BYTES - 11) + "\n"  # the token straddles the limit
    (tmp_path / "notes.md").write_text(head + token + "\n" + "tail\n" * 10)
    text = read_notes(tmp_path, "notes.md")
    assert len(text.encode()) <= NOTES_MAX_BYTES
    assert "hf_ZZZ" not in Redactor().text(text)  # no cut token's head left to show


# Each way in or out of the root, through a path root and a Root: what is read or why not.
_OUTCOMES = {
    "sub/a.txt": b"inside",
    "in.txt": b"inside",  # an absolute link inside
    "rel.txt": b"inside",
    "sublink/a.txt": b"inside",  # a folder link inside
    "sub/../sub/a.txt": b"inside",
    "out.txt": ("UnsafeInput", "link points outside the archive: not read"),
    "relout.txt": ("UnsafeInput", "link points outside the archive: not read"),
    "linked/x.txt": ("UnsafeInput", "file lies outside the archive: not read"),
    "rellinked/x.txt": ("UnsafeInput", "file lies outside the archive: not read"),
    "sub/../../outside.txt": ("UnsafeInput", "file lies outside the archive: not read"),
    "pipe": ("UnsafeInput", "a FIFO: not read"),
    "sub": ("UnsafeInput", "a directory: not read"),
    "missing": ("FileNotFoundError", "No such file or directory"),
    "sub/missing": ("FileNotFoundError", "No such file or directory"),
}


def test_links_folders_and_odd_files_in_and_out_of_the_root(tree):
    os.symlink(tree / "sub/a.txt", tree / "in.txt")
    os.symlink("sub/a.txt", tree / "rel.txt")
    os.symlink(tree.parent / "outside.txt", tree / "out.txt")
    os.symlink("../outside.txt", tree / "relout.txt")
    (tree.parent / "elsewhere").mkdir()
    (tree.parent / "elsewhere/x.txt").write_text("secret")
    os.symlink(tree.parent / "elsewhere", tree / "linked")
    os.symlink("../elsewhere", tree / "rellinked")
    os.symlink("sub", tree / "sublink")
    os.mkfifo(tree / "pipe")
    for root in (tree, Root.of(tree)):
        for name, want in _OUTCOMES.items():
            try:
                got = read_bytes(f"{tree}/{name}", root, 100)
            except OSError as exc:
                got = (type(exc).__name__, exc.strerror)
            assert got == want, (name, root)


def test_a_folder_swapped_for_a_link_out_after_the_check_is_refused(tree, monkeypatch):
    """The same file (a hard link) outside: only where it was opened tells them apart."""
    (tree.parent / "elsewhere").mkdir()
    os.link(tree / "sub/a.txt", tree.parent / "elsewhere/a.txt")
    real = safeio._checked

    def swap_after_check(path, root_real):
        got = real(path, root_real)
        os.rename(tree / "sub", tree / "sub-old")
        os.symlink("../elsewhere", tree / "sub")
        return got

    monkeypatch.setattr(safeio, "_checked", swap_after_check)
    with pytest.raises(UnsafeInput, match="outside the archive"):
        read_bytes(tree / "sub/a.txt", Root.of(tree), 100)


def test_a_root_replaced_at_its_path_is_read_where_the_path_leads(tree, tmp_path):
    """A long-lived reader (``serve``) reads the folder now at the root's path."""
    root = Root.of(tree)
    assert read_bytes(tree / "sub/a.txt", root, 100) == b"inside"
    tree.rename(tmp_path / "old-archive")
    (tree / "sub").mkdir(parents=True)
    (tree / "sub/a.txt").write_text("new")
    assert read_bytes(tree / "sub/a.txt", root, 100) == b"new"
    assert read_bytes(tree / "sub/a.txt", root, 100) == b"new"
