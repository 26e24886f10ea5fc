"""safeio: only regular files inside the root are opened, and reads are bounded."""

import os
import threading

import pytest

from sitegen.safeio import UnsafeInput, open_regular, read_bytes, read_text, root_of


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "archive"
    (root / "sub").mkdir(parents=True)
    (root / "sub/a.txt").write_text("inside")
    (tmp_path / "outside.txt").write_text("secret")
    return root


def test_regular_file_inside(tree):
    assert read_text(tree / "sub/a.txt", tree, 100) == "inside"
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


def test_root_of():
    assert str(root_of("/a/b/c/d.out", "c/d.out")) == "/a/b"
    assert str(root_of("/a/b/d.out", "d.out")) == "/a/b"


def test_long_notes_are_cut_at_a_whole_line_before_redaction(tmp_path):
    from sitegen.pages import NOTES_MAX_BYTES, read_notes
    from sitegen.redact import Redactor

    token = "hf_" + "Z" * 30
    head = "x" * (NOTES_MAX_BYTES - 11) + "\n"  # the token straddles the limit
    (tmp_path / "notes.md").write_text(head + token + "\n" + "tail\n" * 10)
    text = read_notes(tmp_path, "notes.md")
    assert len(text.encode()) <= NOTES_MAX_BYTES
    assert "hf_ZZZ" not in Redactor().text(text)  # no cut token's head left to show
