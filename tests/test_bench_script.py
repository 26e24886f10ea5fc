"""benchmarks/run.py: its guard (a publish build that painted no card is not measured) and the
steps its rebuild cases append."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from sitegen.commands.build import build
from sitegen.options import BuildOptions

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


def _steps(site: Path) -> dict[str, tuple[int, int | None]]:
    index = json.loads((site / "data" / "index.json").read_text())
    return {j["id"]: (j["metric_blocks"], j.get("last_step")) for j in index["jobs"]}


def test_the_appended_steps_are_steps_the_rebuild_reads(archive: Path, tmp_path: Path) -> None:
    """The one-job and running-job cases time a rebuild that has a real step to read: the
    chain's log (a step is its dict) and the async log (a step is its WANDB_MIRROR line)."""
    root = tmp_path / "archive"
    shutil.copytree(archive, root)
    out = tmp_path / "site"
    first = build(BuildOptions(archive=root, out=out, workers=1))
    before = _steps(out)
    bench = _run_module()
    chain = bench.append_step(root / "flat/chain-b/train_600301.out")
    run = bench.append_step(max((root / "exp-async" / "logs").glob("*.out")))
    again = build(BuildOptions(archive=root, out=out, workers=1))
    after = _steps(out)
    for job, step in (("flat.chain-b.train_600301", chain), ("exp-async.async-run_561774", run)):
        blocks, last = before[job]
        assert last is not None and step == last + 1
        assert after[job] == (blocks + 1, step)
    assert len(again.warnings) == len(first.warnings)  # nothing in them to warn about
    assert again.parse is not None and again.parse.logs_resumed == 2  # read on, not again


def test_what_the_rebuild_cases_add_is_taken_back(archive: Path, tmp_path: Path) -> None:
    """Each run measures the same archive: the steps and trials its rebuild cases add are
    removed after them, byte for byte."""
    root = tmp_path / "archive"
    shutil.copytree(archive, root)
    bench = _run_module()

    def tree() -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    before = tree()
    sizes = bench.grown_files(root)
    assert sorted(str(p.relative_to(root)) for p in sizes) == [
        "exp-async/logs/async-run_561773.out",
        "exp-async/logs/async-run_561774.out",
        "flat/chain-b/train_600301.out",
    ]
    bench.grow_one_job(root)
    bench.grow_running_job(root)
    assert tree() != before
    bench.restore(root, sizes)
    assert tree() == before


def test_a_listing_extrapolated_from_a_small_site_gets_no_verdict() -> None:
    """Without the team case, a listing's size at 500 jobs is the small site's in proportion
    to its jobs, which overstates a page not made of rows alone: it is given, not judged; the
    team case's measured size is judged."""
    run = _run_module()
    row = {
        "cold_s": 4.0, "floor_s": 1.0, "publish_s": 4.0, "nochange_s": 0.1, "onejob_s": 0.3,
        "rss_mb": 200.0, "page_kb": 100.0, "listing": "index.html", "listing_team_kb": 1193.0,
        "team_gb": 0.9,
    }  # fmt: skip
    guessed = next(v for v in run.verdicts(row) if v.startswith("index.html at 500 jobs"))
    assert (
        guessed
        == "index.html at 500 jobs ≈ 1193 KB (extrapolated, at most: `--sizes team` measures it)"
    )
    team = {"listing": "compare/items.js", "listing_kb": 620.0}
    measured = next(v for v in run.verdicts(row, team) if "at 500 jobs" in v)
    assert measured == "compare/items.js at 500 jobs (measured) 620 KB (missed)"
