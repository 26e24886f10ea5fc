"""docs/pages-workflow.yml parses, runs the README's build command, gates the site and deploys it."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _readme_build_command() -> list[str]:
    """The `sitegen build` line of the README's "Publishing on GitHub Pages" section."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("### Publishing on GitHub Pages") :]
    line = next(ln for ln in section.splitlines() if ln.startswith("sitegen build "))
    return shlex.split(line)


def _options(argv: list[str]) -> dict[str, str]:
    return {a: argv[i + 1] for i, a in enumerate(argv) if a.startswith("-") and i + 1 < len(argv)}


def test_workflow_runs_the_readme_build_and_the_gate():
    wf = yaml.safe_load((ROOT / "docs" / "pages-workflow.yml").read_text())
    triggers = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` as True
    assert "workflow_dispatch" in triggers
    assert wf["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    build, deploy = wf["jobs"]["build"], wf["jobs"]["deploy"]
    steps = build["steps"]
    runs = [s.get("run", "") for s in steps]
    uses = [s.get("uses", "") for s in steps]

    line = next(ln.strip() for r in runs for ln in r.splitlines() if "sitegen build" in ln)
    argv = shlex.split(line.replace('"${{ steps.pages.outputs.base_url }}/"', "URL"))
    readme = _readme_build_command()
    assert argv[:2] == readme[:2] == ["sitegen", "build"]
    ours, theirs = _options(argv), _options(readme)
    assert ours.keys() == theirs.keys() and ours["-o"] == theirs["-o"] == "site"
    assert ours["--title"] == theirs["--title"]

    gate_at = next(i for i, r in enumerate(runs) if re.search(r"sitegen check-site site\b", r))
    build_at = next(i for i, r in enumerate(runs) if "sitegen build" in r)
    upload_at = next(
        i for i, u in enumerate(uses) if u.startswith("actions/upload-pages-artifact@")
    )
    assert build_at < gate_at < upload_at  # nothing is uploaded before the gate passed
    assert steps[upload_at]["with"]["path"] == "site"
    assert deploy["needs"] == "build"
    assert any(s.get("uses", "").startswith("actions/deploy-pages@") for s in deploy["steps"])


def test_publishing_doc_names_the_three_flows_and_the_workflow():
    doc = (ROOT / "docs" / "publishing.md").read_text()
    for heading in (
        "## 1. `sitegen gh-deploy`",
        "## 2. A `gh-pages` worktree",
        "## 3. GitHub Actions",
    ):
        assert heading in doc
    assert "docs/pages-workflow.yml" in doc and "publish_allow" in doc
