"""The wheel carries the templates and static files (they live at the top of the repo)."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_contains_templates_and_static(tmp_path):
    # the backend is installed with the test extras: no isolated environment to make first
    pip = [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-q"]
    r = subprocess.run(
        [*pip, "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    (wheel,) = tmp_path.glob("sitegen-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for t in (ROOT / "templates").iterdir():
        assert f"sitegen/templates/{t.name}" in names
    assert "sitegen/static/site.js" in names and "sitegen/static/vendor/vega-bundle.js" in names
    skeletons = ROOT / "sitegen" / "present" / "skeletons"
    assert {f"sitegen/present/skeletons/{p.name}" for p in skeletons.glob("*.json")} <= names
