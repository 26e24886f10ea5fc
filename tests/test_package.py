"""The wheel carries the templates and static files (they live at the top of the repo)."""

import importlib
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_contains_templates_and_static(tmp_path, monkeypatch):
    # The backend pyproject.toml names, called as pip calls it (PEP 517's build_wheel, in the
    # project's folder); it is installed with the test extras, so nothing is fetched, and in
    # this process no pip or interpreter starts.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    backend = importlib.import_module(config["build-system"]["build-backend"])
    monkeypatch.chdir(ROOT)
    built = backend.build_wheel(str(tmp_path))
    (wheel,) = tmp_path.glob("sitegen-*.whl")
    assert wheel.name == built
    names = set(zipfile.ZipFile(wheel).namelist())
    for t in (ROOT / "templates").iterdir():
        assert f"sitegen/templates/{t.name}" in names
    assert "sitegen/static/site.js" in names and "sitegen/static/vendor/vega-bundle.js" in names
    skeletons = ROOT / "sitegen" / "present" / "skeletons"
    assert {f"sitegen/present/skeletons/{p.name}" for p in skeletons.glob("*.json")} <= names
