"""Fixtures of the insight scenarios: an archive holding only the planted jobs, and its site."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from sitegen.build import build
from sitegen.options import BuildOptions
from sitegen.synth.plants import write_plants


@pytest.fixture(scope="session")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """(site folder, ground truth) of a build of the planted jobs (sitegen/synth/plants.py)."""
    root = tmp_path_factory.mktemp("planted")
    truth = write_plants(root)
    (root / "truth.json").write_text(json.dumps(truth))
    out = tmp_path_factory.mktemp("planted-out") / "site"
    build(BuildOptions(archive=root, out=out, workers=1, now=time.time()))
    return out, truth
