"""``sitegen check-site``: a folder that is no built site fails, and the report counts in words
that agree with their numbers."""

from __future__ import annotations

from pathlib import Path

from sitegen.commands.cli import main
from sitegen.publish.gate import GateReport, check_site, not_a_site
from sitegen.publish.scan import Leak, SiteFile


def test_an_empty_folder_is_no_site_and_check_site_fails(tmp_path: Path, capsys, monkeypatch):
    """A CI job that forgot to build must not go green."""
    monkeypatch.chdir(tmp_path)  # (no sitegen.toml of the caller's)
    empty = tmp_path / "site"
    empty.mkdir()
    assert "has no index.html" in (not_a_site(empty) or "")
    assert "not a folder" in (not_a_site(tmp_path / "nope") or "")
    assert main(["check-site", str(empty)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{empty} has no index.html" in err
    assert "sitegen build ARCHIVE -o" in err and "Traceback" not in err

    (empty / "index.html").write_text("<p>hi</p>\n")
    assert not_a_site(empty) is None
    assert main(["check-site", str(empty)]) == 0
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        "publish gate ok: 1 file, 10 bytes, 0 secrets found, 0 other problems, 0 warnings"
    )


def test_counts_are_singular_and_plural_as_they_need():
    one = GateReport(
        Path("s"),
        files=[SiteFile("a.html", 1, "")],
        leaks=[Leak("a.html", 1, "github-token", "x")],
        blocked=["b: a symbolic link"],
        warnings=["c: big"],
        known_clean=1,
    )
    assert one.summary() == (
        "publish gate BLOCKED: 1 file, 1 byte, 1 secret found, 1 file unchanged since a clean "
        "scan, 1 other problem, 1 warning"
    )
    two = GateReport(Path("s"), files=[SiteFile("a", 1000, ""), SiteFile("b", 1000, "")])
    two.leaks = one.leaks * 2
    two.blocked, two.warnings = one.blocked * 2, one.warnings * 2
    assert two.summary() == (
        "publish gate BLOCKED: 2 files, 2.0 kB, 2 secrets found, 2 other problems, 2 warnings"
    )


def test_the_library_gate_still_scans_any_folder(tmp_path: Path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "a.txt").write_text("plain\n")
    assert check_site(tmp_path / "s").ok  # (the CLI refuses it: not_a_site)
