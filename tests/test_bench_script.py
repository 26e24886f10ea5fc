"""benchmarks/run.py's guard: a publish build that painted no card is not measured."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run_module():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "benchmarks" / "run.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _page(site: Path, job: str, card: bool) -> None:
    folder = site / "jobs" / job
    folder.mkdir(parents=True)
    (folder / "index.html").write_text("<html></html>")
    if card:
        (folder / "card.png").write_bytes(b"\x89PNG")


def test_every_job_page_with_its_card_passes(tmp_path: Path) -> None:
    _page(tmp_path, "a", card=True)
    _page(tmp_path, "b", card=True)
    _run_module().painted_cards(tmp_path, "old")


def test_a_job_page_without_its_card_stops_the_benchmark(tmp_path: Path) -> None:
    _page(tmp_path, "a", card=True)
    _page(tmp_path, "b", card=False)
    with pytest.raises(SystemExit, match=r"old: .* no card for 1 of 2 job pages \(first: b\)"):
        _run_module().painted_cards(tmp_path, "old")
