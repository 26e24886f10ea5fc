"""OpenGraph cards: a 1200×630 PNG of a page's headline figures and reward curve.

Drawn with vl-convert from a Vega-Lite spec (:func:`sitegen.present.charts.card`);
the site builds without the PNGs when vl-convert is missing. Three choices, measured:

* Vega's SVG is wrapped in a 1200×630 SVG and rasterised once (rasterising the chart,
  then the padded picture again, gave byte-identical PNGs 22 % slower).
* The PNG is reduced to a 256-colour palette with Pillow (no dithering): a card is a few
  flat colours plus anti-aliasing, 25–35 KB instead of 140–310 KB, the bulk of a
  published site otherwise. With the single rasterisation a card still costs less CPU
  than before (0.13 s against 0.165 s).
* Cards are painted on threads while the main thread renders pages: vl-convert and
  Pillow release the GIL, and threads share the one JavaScript runtime vl-convert starts
  (a process pool would start one per worker and hold its memory).
"""

from __future__ import annotations

import importlib.util
import io
from concurrent.futures import Future, ThreadPoolExecutor

from sitegen.jsonio import clean
from sitegen.model.pages import JobPage, RunPage
from sitegen.model.vocabulary import REWARD
from sitegen.present import charts
from sitegen.present.formatting import fmt_dur, fmt_num

WIDTH, HEIGHT = 1200, 630  # what chat unfurlers expect
COLOURS = 256


def available() -> bool:
    """Whether cards can be drawn here (vl-convert and Pillow importable)."""
    return all(importlib.util.find_spec(m) is not None for m in ("vl_convert", "PIL"))


def card_spec(page: JobPage | RunPage, title: str, site_title: str) -> dict:
    """The card's Vega-Lite spec: the reward curve and six headline figures."""
    h = page.headline
    figures = [
        ("status", str(page.status)),
        ("steps", f"{h.first_step}–{h.last_step}" if h.first_step is not None else "–"),
        ("reward mean", fmt_num(h.reward_mean)),
        ("reward last", fmt_num(h.reward_last)),
        (h.pass_label, fmt_num(h.pass_at_k_mean)),
        ("step time", fmt_dur(h.step_time_mean_s)),
    ]
    return charts.card(title, site_title, figures, clean(page.series), REWARD)


def paint(spec: dict) -> bytes:
    """The card as a 1200×630 palette PNG (cropped at the right and bottom, padded white)."""
    import vl_convert as vlc
    from PIL import Image

    svg = vlc.vegalite_to_svg(spec)
    framed = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}">'
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>{svg}</svg>'
    )
    rgba = Image.open(io.BytesIO(vlc.svg_to_png(framed, scale=1)))
    # the fast octree and zlib's default level: 0.02 s a card; median cut or level 9 cost
    # 2-4x that for 10 % fewer bytes
    small = rgba.convert("RGB").quantize(
        COLOURS, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE
    )
    out = io.BytesIO()
    small.save(out, "PNG", compress_level=6)
    return out.getvalue()


class CardPainter:
    """Paints cards on ``workers`` threads; :meth:`finish` hands back ``(path, png)`` in the
    order they were asked for (so the output does not depend on timing)."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)
        self._pool: ThreadPoolExecutor | None = None
        self._jobs: list[tuple[str, Future[bytes]]] = []

    def submit(self, rel: str, spec: dict) -> None:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="card")
        self._jobs.append((rel, self._pool.submit(paint, spec)))

    def finish(self) -> list[tuple[str, bytes]]:
        try:
            return [(rel, f.result()) for rel, f in self._jobs]
        finally:
            self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._jobs = []
