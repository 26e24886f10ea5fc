import pytest

from sitegen.errors import OutputError
from sitegen.write import MARKER, SiteWriter


def test_swap_replaces_old_site_whole(tmp_path):
    out = tmp_path / "site"
    w = SiteWriter(out)
    w.write("a.html", "one")
    w.write("sub/b.html", "two")
    w.commit()
    assert (out / MARKER).exists() and (out / "sub/b.html").read_text() == "two"
    w = SiteWriter(out)
    w.write("a.html", "new")
    w.commit()
    assert (out / "a.html").read_text() == "new" and not (out / "sub").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.staging")] == []


def test_killed_build_leaves_old_site(tmp_path):
    out = tmp_path / "site"
    w = SiteWriter(out)
    w.write("a.html", "old")
    w.commit()
    w = SiteWriter(out)
    w.write("a.html", "half")
    w.abort()  # what an exception mid-build does
    assert (out / "a.html").read_text() == "old"


def test_second_concurrent_build_is_refused(tmp_path):
    out = tmp_path / "site"
    first = SiteWriter(out)
    with pytest.raises(OutputError, match="another sitegen build"):
        SiteWriter(out)
    first.abort()
    SiteWriter(out).abort()  # free again


def test_refuses_foreign_folder_and_paths_outside(tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    with pytest.raises(OutputError, match="not made by sitegen"):
        SiteWriter(out)
    w = SiteWriter(tmp_path / "ok")
    with pytest.raises(OutputError):
        w.write("../escape.html", "x")
    w.abort()


def test_restores_site_after_crash_between_renames(tmp_path):
    out = tmp_path / "site"
    w = SiteWriter(out)
    w.write("a.html", "old")
    w.commit()
    out.rename(tmp_path / ".site.old")  # the crash window: old moved away, new not yet in
    SiteWriter(out).abort()
    assert (out / "a.html").read_text() == "old"
