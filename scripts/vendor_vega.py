"""Refresh static/vendor/vega-bundle.js (Vega, Vega-Lite, vega-embed) from vl-convert-python.

The bundle is vendored once and pinned: the site must work offline and from
file://, so no CDN. vl-convert-python is not a dependency of sitegen (the cards are drawn
with Pillow): `pip install vl-convert-python`, then run python scripts/vendor_vega.py
"""

from pathlib import Path

import vl_convert as vlc

VL_VERSION = "6.4"  # matches the Vega-Lite schema Altair 6 emits

js = vlc.javascript_bundle(vl_version=VL_VERSION)
head = (
    f"/* Vega {vlc.get_vega_version()}, Vega-Lite {VL_VERSION}, vega-embed {vlc.get_vega_embed_version()}: "
    f"bundled by vl-convert-python {vlc.__version__} (scripts/vendor_vega.py). BSD-3-Clause licensed. */\n"
)
out = Path(__file__).resolve().parent.parent / "static" / "vendor" / "vega-bundle.js"
out.write_text(head + js)
print(f"wrote {out} ({out.stat().st_size} bytes)")
