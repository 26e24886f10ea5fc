"""Cards: 1200×630 palette PNGs under 100 KB, painted on threads in a fixed order."""

from __future__ import annotations

import io
import json
import struct

import pytest

from sitegen.present import cards, charts

pytest.importorskip("vl_convert")
Image = pytest.importorskip("PIL.Image")
from PIL import ImageChops, ImageStat  # noqa: E402

SERIES = {"step": list(range(1, 201)), "r": [0.3 + 0.001 * i + (i % 9) / 50 for i in range(200)]}
FIGURES = [("status", "complete"), ("steps", "1–200"), ("reward mean", "0.4321")]


def _spec(title: str = "Job exp.a_1") -> dict:
    return charts.card(title, "site", FIGURES, SERIES, "r")


def _ihdr(png: bytes) -> tuple[int, int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", png[16:24])
    return w, h, png[25]  # colour type 3 = palette


def test_a_card_is_a_small_palette_png_that_looks_the_same():
    import vl_convert as vlc

    png = cards.paint(_spec())
    assert _ihdr(png) == (1200, 630, 3)
    assert len(png) <= 100_000
    # against a straight rasterisation: same picture, colours within a few levels
    full = Image.open(io.BytesIO(vlc.vegalite_to_png(_spec(), scale=1))).convert("RGB")
    got = Image.open(io.BytesIO(png)).convert("RGB").crop((0, 0, *full.size))
    diff = ImageChops.difference(full, got)
    assert max(ImageStat.Stat(diff).mean) < 1.5
    assert max(hi for _, hi in diff.getextrema()) < 80


def test_a_wide_card_is_cropped_to_1200x630():
    png = cards.paint(_spec("J" * 200))  # a title far wider than the card
    assert _ihdr(png)[:2] == (1200, 630)


def test_painter_keeps_the_order_asked_and_matches_serial_painting():
    specs = {f"jobs/j{i}/card.png": _spec(f"Job j{i}") for i in range(3)}
    painter = cards.CardPainter(2)
    for rel, spec in specs.items():
        painter.submit(rel, spec)
    got = painter.finish()
    assert [rel for rel, _ in got] == list(specs)
    assert [png for _, png in got] == [cards.paint(s) for s in specs.values()]
    assert cards.CardPainter(2).finish() == []


def test_only_changed_pages_get_a_new_card(tmp_path, monkeypatch):
    """A rebuild paints the cards of the pages that changed, and carries the others over."""
    from sitegen.build import build
    from sitegen.options import BuildOptions
    from sitegen.synth import synth
    from tests.scenarios.test_incremental import STEP, _append

    painted: list[str] = []

    def fake_paint(spec: dict) -> bytes:  # vl-convert is slow; what matters is who is painted
        painted.append(spec["title"]["text"])
        return b"\x89PNG fake " + spec["title"]["text"].encode()

    monkeypatch.setattr(cards, "paint", fake_paint)
    archive, out = tmp_path / "a", tmp_path / "site"
    synth(archive, seed=5, steps=8, trials_per_step=2)
    opts = BuildOptions(archive=archive, out=out, workers=2, now=0.0, base_url="https://x.io/r/")
    first = build(opts)
    index = json.loads((out / "data" / "index.json").read_text())
    shared = [r for r in index["runs"] if len(r["jobs"]) == 1]
    # every job has a card; a run of one job shows its job's
    assert shared and len(painted) == first.jobs + first.runs - len(shared)
    before = {p: p.read_bytes() for p in out.rglob("card.png")}
    assert len(before) == len(painted)
    for run in shared:
        assert not (out / run["url"] / "card.png").exists()
        page = (out / run["url"] / "index.html").read_text()
        job_url = next(j["url"] for j in index["jobs"] if j["id"] == run["jobs"][0])
        assert f'"og:image" content="https://x.io/r/{job_url}card.png"' in page
    painted.clear()
    log = archive / "flat/stale/train_600150.out"
    _append(log, STEP.format(n=100))
    build(opts)
    assert painted == ["Job flat.stale.train_600150"]  # a run of one job: its card is the job's
    assert {p: p.read_bytes() for p in out.rglob("card.png")} == before
