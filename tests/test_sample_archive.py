"""The bundled sample archive is what the README's synth command writes, byte for byte.

A clone holds only what git keeps: a folder left empty by synth would vanish from
``sample/archive`` and the demo would show less than its ground truth says.
"""

from __future__ import annotations

import re
from pathlib import Path

from sitegen.commands.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _readme_synth_args() -> list[str]:
    """The arguments of the README's ``sitegen synth sample/archive …`` command."""
    text = (ROOT / "README.md").read_text()
    found = re.search(r"`sitegen synth sample/archive ([^`]*)`", text)
    assert found, "the README names the command that made sample/archive"
    return found.group(1).split()


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_sample_archive_is_what_synth_writes(tmp_path):
    out = tmp_path / "archive"
    assert main(["synth", str(out), *_readme_synth_args()]) == 0
    made, kept = _tree(out), _tree(ROOT / "sample" / "archive")
    assert sorted(made) == sorted(kept)
    assert [p for p in made if made[p] != kept[p]] == []
    empty = [p for p in out.rglob("*") if p.is_dir() and not any(p.iterdir())]
    assert empty == [], "git keeps no empty folder"
