"""Site weight: kinds of file, and the warning past GitHub Pages' 1 GB."""

from __future__ import annotations

from pathlib import Path

import msgspec

from sitegen.commands.build import build
from sitegen.options import BuildOptions
from sitegen.synth import synth
from sitegen.write import weight


def test_kinds_collapse_page_folders():
    assert weight.kind_of("jobs/a.b_1/trials.csv.gz") == "jobs/*/trials.csv.gz"
    assert weight.kind_of("runs/r/index.html") == "runs/*/index.html"
    assert weight.kind_of("data/jobs/a.b_1.json") == "data/jobs/*.json"
    assert weight.kind_of("static/vendor/vega-bundle.js") == "static/vendor/vega-bundle.js"
    assert weight.kind_of("index.html") == "index.html"
    sizes = {"jobs/a/card.png": 30, "jobs/b/card.png": 40, "index.html": 50, "jobs/a/index.html": 5}
    assert weight.by_kind(sizes) == [
        ("jobs/*/card.png", 70, 2),
        ("index.html", 50, 1),
        ("jobs/*/index.html", 5, 1),
    ]


def test_over_limit_names_the_heaviest():
    sizes = {"jobs/a/trials.csv.gz": 600, "jobs/b/trials.csv.gz": 500, "index.html": 10}
    assert weight.over_limit(sizes, limit=1110) is None
    w = weight.over_limit(sizes, limit=1000)
    assert w is not None and w.path == "(site)"
    assert "over GitHub Pages' limit" in w.message
    assert "jobs/*/trials.csv.gz 0.0 MB (2 files)" in w.message
    assert "largest file jobs/a/trials.csv.gz" in w.message


def test_build_warns_past_the_limit(tmp_path: Path, monkeypatch):
    synth(tmp_path / "a", seed=3, steps=4, trials_per_step=2)
    opts = BuildOptions(archive=tmp_path / "a", out=tmp_path / "site", workers=1, now=0.0)
    report = build(opts)
    assert not [w for w in report.warnings if w.path == "(site)"]
    on_disk = sum(p.stat().st_size for p in (tmp_path / "site").rglob("*") if p.is_file())
    assert on_disk == report.bytes  # every file counted, the manifest (.sitegen-site) too
    monkeypatch.setattr(weight, "PAGES_LIMIT_BYTES", report.bytes - 1)
    report = build(msgspec.structs.replace(opts, clean=True))
    (w,) = [w for w in report.warnings if w.path == "(site)"]
    assert "static/vendor/vega-bundle.js" in w.message
