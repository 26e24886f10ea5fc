"""Numbers, shares and durations as people read them; markdown notes made safe."""

from __future__ import annotations

import math

import markdown
import nh3


def fmt_num(v: object, digits: int = 4) -> str:
    """A number for a table: ints with separators, floats with ``digits`` decimals.

    With the default ``digits`` an integral float (a count, a step) prints as an integer.
    """
    if isinstance(v, bool) or not isinstance(v, int | float):
        return "–"
    if not math.isfinite(v):
        return "nan" if math.isnan(v) else ("∞" if v > 0 else "−∞")
    if isinstance(v, int) or (
        float(v).is_integer() and abs(v) < 1e12 and digits == 4 and abs(v) >= 1
    ):
        return f"{int(v):,}"
    a = abs(v)
    if a != 0 and (a < 10**-digits or a >= 1e9):
        return f"{v:.{max(2, digits - 1)}e}"
    return f"{v:,.{digits}f}"


def fmt_pct(v: object, digits: int = 1) -> str:
    if not isinstance(v, int | float) or not math.isfinite(v):
        return "–"
    return f"{100 * v:.{digits}f}%"


def fmt_dur(v: object) -> str:
    if not isinstance(v, int | float) or not math.isfinite(v):
        return "–"
    s = float(v)
    if s < 120:
        return f"{s:,.1f} s"
    if s < 7200:
        return f"{s / 60:,.1f} min"
    return f"{s / 3600:,.2f} h"


# Images are left out: a notes.md's pictures are not copied into the site.
NOTES_TAGS = set(nh3.ALLOWED_TAGS) - {"img"}


def md_to_html(text: str) -> str:
    """Markdown notes to sanitized HTML: no raw HTML, only http(s)/mailto links."""
    html = markdown.markdown(text, extensions=["tables", "fenced_code"], output_format="html")
    return nh3.clean(
        html,
        tags=NOTES_TAGS,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
