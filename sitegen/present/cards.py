"""OpenGraph cards: a 1200×630 PNG of a page's headline figures and reward curve.

Drawn with vl-convert from a Vega-Lite spec (:func:`sitegen.present.charts.card`);
the site builds without the PNGs when vl-convert is missing.
"""

from __future__ import annotations

import base64
import struct

from sitegen.jsonio import clean
from sitegen.model.pages import JobPage, RunPage
from sitegen.model.vocabulary import REWARD
from sitegen.present import charts
from sitegen.present.formatting import fmt_dur, fmt_num

WIDTH, HEIGHT = 1200, 630  # what chat unfurlers expect


def card_png(page: JobPage | RunPage, title: str, site_title: str) -> bytes | None:
    """Render the card PNG; None when vl-convert is unavailable."""
    try:
        import vl_convert as vlc
    except ImportError:  # pragma: no cover - a dependency, but the site still builds without it
        return None
    h = page.headline
    figures = [
        ("status", str(page.status)),
        ("steps", f"{h.first_step}–{h.last_step}" if h.first_step is not None else "–"),
        ("reward mean", fmt_num(h.reward_mean)),
        ("reward last", fmt_num(h.reward_last)),
        (h.pass_label, fmt_num(h.pass_at_k_mean)),
        ("step time", fmt_dur(h.step_time_mean_s)),
    ]
    spec = charts.card(title, site_title, figures, clean(page.series), REWARD)
    png = vlc.vegalite_to_png(spec, scale=1)
    return _fit_png(png)


def _fit_png(png: bytes) -> bytes:
    """Pad/crop the rendered card to exactly 1200×630."""
    try:
        import vl_convert as vlc
    except ImportError:  # pragma: no cover
        return png
    w, h = struct.unpack(">II", png[16:24])
    if (w, h) == (WIDTH, HEIGHT):
        return png
    uri = "data:image/png;base64," + base64.b64encode(png).decode()
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="{WIDTH}" height="{HEIGHT}">'
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>'
        f'<image x="0" y="0" width="{min(w, WIDTH)}" height="{min(h, HEIGHT)}" preserveAspectRatio="xMinYMin slice" xlink:href="{uri}"/></svg>'
    )
    return vlc.svg_to_png(svg, scale=1)
