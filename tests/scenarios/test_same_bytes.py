"""Every file of the sample site and of four synthesized sites, byte for byte as recorded.

Each site's files are listed with their SHA-256 in ``tests/golden/sites/<name>.json``. A
change to how the build is organised (its cache, its stages) must leave every published
byte as it was; a change that means to alter the output refreshes the lists with
``make golden`` (SITEGEN_UPDATE_GOLDEN=1) and says why in its commit.

Inputs are copied and given one fixed mtime, and the build one fixed ``now``: a job's
status ("running" or not) and a year-less vLLM time read against the file's year are
then the same on any day the suite runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from sitegen.commands.build import build
from sitegen.options import BuildOptions
from sitegen.synth import synth

SITES = Path(__file__).resolve().parents[1] / "golden" / "sites"
SAMPLE = Path(__file__).resolve().parents[2] / "sample" / "archive"
MTIME = 1_772_323_200  # 2026-03-01 00:00 UTC: every input file's
NOW = MTIME + 10 * 86400  # the build's clock: ten days later


def _fix_mtimes(root: Path) -> None:
    for folder, dirs, files in os.walk(root):
        for name in files + dirs:
            os.utime(Path(folder) / name, (MTIME, MTIME), follow_symlinks=False)
    os.utime(root, (MTIME, MTIME))


def _manifest(site: Path) -> dict[str, str]:
    """Each file of the site (the manifest of sitegen's files included): its SHA-256."""
    out = {}
    for folder, _, files in os.walk(site):
        for name in files:
            path = Path(folder) / name
            out[path.relative_to(site).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return dict(sorted(out.items()))


def _archive(name: str, root: Path) -> Path:
    archive = root / "archive"
    if name == "sample":
        shutil.copytree(SAMPLE, archive, symlinks=True)
    else:
        synth(archive, seed=int(name.removeprefix("seed")), steps=6, trials_per_step=2)
    _fix_mtimes(archive)
    return archive


@pytest.mark.parametrize("name", ["sample", "seed0", "seed1", "seed2", "seed3"])
def test_site_bytes_as_recorded(name: str, tmp_path: Path) -> None:
    archive = _archive(name, tmp_path)
    out = tmp_path / "site"
    build(BuildOptions(archive=archive, out=out, workers=1, now=NOW))
    got = _manifest(out)
    recorded = SITES / f"{name}.json"
    if os.environ.get("SITEGEN_UPDATE_GOLDEN"):
        recorded.parent.mkdir(parents=True, exist_ok=True)
        recorded.write_text(json.dumps(got, indent=1) + "\n")
    want = json.loads(recorded.read_text())
    differ = sorted(k for k in want.keys() | got.keys() if want.get(k) != got.get(k))
    assert not differ, f"{len(differ)} files differ from {recorded.name}: {differ[:10]}"


def test_the_card_painters_code_as_recorded() -> None:
    """The card painter's source is part of every card's address (``card.png?v=…``, through
    ``cards._painter``): a change to it, even to a comment, gives every page of a published
    site another ``og:image`` and makes chat apps fetch every preview again. The sites above
    are built without ``--base-url`` (no cards), so its bytes are recorded here."""
    from sitegen.present import cardpaint

    got = {"cardpaint.py": hashlib.sha256(Path(cardpaint.__file__).read_bytes()).hexdigest()}
    recorded = SITES / "painter.json"
    if os.environ.get("SITEGEN_UPDATE_GOLDEN"):
        recorded.write_text(json.dumps(got, indent=1) + "\n")
    assert got == json.loads(recorded.read_text())
