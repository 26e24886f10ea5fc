"""Painting a card with Pillow: text, a reward chart with nice axes, a palette PNG.

The picture is drawn straight onto pixels (no Vega, no SVG): see :mod:`sitegen.present.cards`
for why. Everything here is a pure function of the card's figures, so the same card gives
the same bytes.
"""

from __future__ import annotations

import functools
import io
import math
import threading
import unicodedata
from collections.abc import Sequence

from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT = 1200, 630  # what chat unfurlers expect (og:image:width/height say so)

# the colours (the curve is the charts' first series colour, sitegen.present.charts.PALETTE)
WHITE = (255, 255, 255)
INK = (29, 33, 38)  # titles and figures
MUTED = (102, 102, 102)  # labels
GRID = (226, 226, 226)
AXIS = (136, 136, 136)
CURVE = (76, 120, 168)
INKS = (INK, MUTED, GRID, AXIS, CURVE)

# the layout, in pixels
MARGIN = 40
PLOT = (110, 170, 700, 525)  # left, top, right, bottom of the chart's frame
KEY_X, VALUE_X = 760, 935  # the figures' two columns
ROW_TOP, ROW_STEP = 165, 62
CURVE_WIDTH = 5
# Pillow draws lines without anti-aliasing: the curve is drawn 3x larger and shrunk
# (4x looks the same and costs more)
SUPERSAMPLE = 3

# Aileron (Pillow's built-in font) covers ASCII and a few signs; what it lacks is spelled
# with what it has rather than drawn as a box. The en dash (step ranges, missing values) is
# drawn: a hyphen stretched to twice its width.
EN_DASH = "\u2013"
_SPELLED = {
    "\u2014": EN_DASH,
    "\u2212": "-",  # minus sign
    "\u2010": "-",
    "\u2011": "-",
    "\u221e": "inf",
    "\u00d7": "x",
    "\u00a0": " ",
}

_local = threading.local()


def font(size: int) -> ImageFont.FreeTypeFont:
    """Pillow's built-in Aileron (FreeType) at ``size`` px, laid out without Raqm so the
    pixels do not depend on which shaping libraries the machine has. One per thread: a
    FreeType face is not to be used by two threads at once."""
    fonts: dict[int, ImageFont.FreeTypeFont] = _local.__dict__.setdefault("fonts", {})
    if size not in fonts:
        f = ImageFont.load_default(size)
        if not isinstance(f, ImageFont.FreeTypeFont):  # Pillow built without FreeType
            raise RuntimeError("cards need Pillow with FreeType")
        f.layout_engine = ImageFont.Layout.BASIC
        fonts[size] = f
    return fonts[size]


@functools.cache
def _has_glyph(ch: str) -> bool:
    """Whether Aileron draws ``ch`` (rather than its missing-glyph box)."""
    f = ImageFont.load_default(20)
    return ch.isspace() or bytes(f.getmask(ch)) != bytes(f.getmask("\ue000"))


def _drawable(ch: str) -> bool:
    return ch.isascii() or ch == EN_DASH or _has_glyph(ch)


def spell(text: str) -> str:
    """``text`` in characters the font has: accents dropped, dashes as hyphens, else ``?``."""
    out = []
    for ch in text:
        if _drawable(ch):
            out.append(ch)
            continue
        alt = _SPELLED.get(ch) or "".join(
            c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c)
        )
        out.append(alt if alt and all(_drawable(c) for c in alt) else "?")
    return "".join(out)


# a bold face: Aileron comes in one weight, so bold strokes each glyph's outline and
# spaces the glyphs by the stroke so they do not run together
BOLD_STROKE, BOLD_SPACING = 1, 1.5
SUBPIXEL = 4  # glyphs are placed to a quarter pixel


def advance(ch: str, size: int, bold: bool) -> float:
    """How far the pen moves past ``ch``."""
    widths: dict = _local.__dict__.setdefault("advances", {})
    key = (ch, size, bold)
    got = widths.get(key)
    if got is None:
        f = font(size)
        pen = 2 * f.getlength("-") if ch == EN_DASH and not _has_glyph(ch) else f.getlength(ch)
        got = widths[key] = pen + (BOLD_SPACING if bold else 0)
    return got


def measure(text: str, size: int, bold: bool = False) -> float:
    """The width of ``text`` in px."""
    return sum(advance(ch, size, bold) for ch in text) - (BOLD_SPACING if bold and text else 0)


def fit(text: str, size: int, width: float, bold: bool = False) -> str:
    """``text`` cut with an ellipsis to fit ``width`` px."""
    if measure(text, size, bold) <= width:
        return text
    while text and measure(text + "…", size, bold) > width:
        text = text[:-1]
    return text + "…"


def glyph(ch: str, size: int, bold: bool, frac: int) -> tuple[Image.Image, int, int]:
    """``ch``'s coverage mask drawn ``frac``/4 px right of a whole pixel, and where its top
    left sits from the pen (on the baseline). Drawn once per thread: a card is mostly digits
    and the same few words, and FreeType (the stroker above all) is the slow part."""
    cache: dict = _local.__dict__.setdefault("glyphs", {})
    key = (ch, size, bold, frac)
    got = cache.get(key)
    if got is None and ch == EN_DASH and not _has_glyph(ch):
        # the hyphen's ink made longer by one hyphen's advance (the en dash's advance is
        # two hyphens'), its side bearings kept
        hyphen, left, top = glyph("-", size, bold, frac)
        ink = hyphen.getbbox() or (0, 0, hyphen.width, hyphen.height)
        longer = round(advance("-", size, False))
        mask = Image.new("L", (hyphen.width + longer, hyphen.height), 0)
        mask.paste(hyphen.crop((0, 0, ink[0], hyphen.height)), (0, 0))
        bar = hyphen.crop((ink[0], 0, ink[2], hyphen.height))
        mask.paste(bar.resize((ink[2] - ink[0] + longer, hyphen.height)), (ink[0], 0))
        got = cache[key] = (mask, left, top)
    elif got is None:
        f, stroke = font(size), BOLD_STROKE if bold else 0
        box = f.getbbox(ch, anchor="ls", stroke_width=stroke)
        # a pixel of room all round (the quarter-pixel shift)
        left, top = math.floor(box[0]) - 1, math.floor(box[1]) - 1
        mask = Image.new("L", (math.ceil(box[2]) - left + 2, math.ceil(box[3]) - top + 2), 0)
        ImageDraw.Draw(mask).text(
            (frac / SUBPIXEL - left, -top), ch, 255, f, anchor="ls", stroke_width=stroke
        )
        got = cache[key] = (mask, left, top)
    return got


def text(
    im: Image.Image,
    xy: tuple[float, float],
    s: str,
    size: int,
    fill: tuple[int, int, int],
    bold: bool = False,
    anchor: str = "ls",
) -> None:
    """Draw ``s`` with its baseline at ``xy[1]``, starting (``l``), centred on (``m``) or
    ending (``r``) at ``xy[0]``; glyph by glyph from the cache (no kerning: Aileron's is
    slight)."""
    x, y = xy
    if anchor != "ls":
        x -= measure(s, size, bold) * {"l": 0, "m": 0.5, "r": 1}[anchor[0]]
        f = font(size)
        ascent, descent = f.getmetrics()
        y += {"s": 0, "a": ascent, "m": (ascent - descent) / 2, "d": -descent}[anchor[1]]
    base = round(y)
    for ch in s:
        whole = math.floor(x)
        frac = min(SUBPIXEL - 1, round((x - whole) * SUBPIXEL))
        if not ch.isspace():
            mask, left, top = glyph(ch, size, bold, frac)
            im.paste(fill, (whole + left, base + top), mask)
        x += advance(ch, size, bold)


# -- axes ------------------------------------------------------------------------------------------


def tick_step(lo: float, hi: float, count: int) -> float:
    """d3's tick step: 1, 2 or 5 times a power of ten, about ``count`` ticks over [lo, hi]."""
    raw = (hi - lo) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    error = raw / power
    if error >= math.sqrt(50):
        return power * 10
    if error >= math.sqrt(10):
        return power * 5
    if error >= math.sqrt(2):
        return power * 2
    return power


def ticks(lo: float, hi: float, step: float) -> list[float]:
    """The multiples of ``step`` in [lo, hi] (computed from integers: no drift)."""
    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    return [i * step for i in range(first, last + 1)]


def decimals(step: float) -> int:
    """Decimals that tell ticks ``step`` apart (0.05 -> 2, 0.2 -> 1, 5 -> 0)."""
    return max(0, -math.floor(math.log10(step) + 1e-9))


def y_domain(ys: Sequence[float]) -> tuple[float, float, float]:
    """The reward axis: the values' range widened to whole ticks, and the tick step."""
    lo, hi = min(ys), max(ys)
    if hi - lo < 1e-12:  # a flat curve sits in the middle
        pad = max(abs(lo), 1.0) * 0.1
        lo, hi = lo - pad, hi + pad
    step = tick_step(lo, hi, 8)
    # min/max: a multiple of a binary fraction can land a hair inside the value
    nice_lo, nice_hi = math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step
    return min(nice_lo, lo), max(nice_hi, hi), step


def x_domain(xs: Sequence[float]) -> tuple[float, float, float]:
    """The step axis: first to last step (the curve spans the width), whole-step ticks."""
    lo, hi = min(xs), max(xs)
    if hi - lo < 1:
        lo, hi = lo - 1, hi + 1
    return lo, hi, max(1.0, tick_step(lo, hi, 8))


def label(v: float, dec: int) -> str:
    """A tick label: ``dec`` decimals, no ``-0``."""
    s = f"{v:.{dec}f}"
    return s[1:] if s.startswith("-") and float(s) == 0 else s


# -- the picture -----------------------------------------------------------------------------------


def chart(
    im: Image.Image, draw: ImageDraw.ImageDraw, xs: Sequence[float], ys: Sequence[float]
) -> None:
    """The reward curve in :data:`PLOT`, with grid, axes and their labels."""
    left, top, right, bottom = PLOT
    text(im, (left, top - 14), "reward", 20, MUTED, anchor="ld")
    text(im, ((left + right) / 2, bottom + 40), "step", 20, MUTED, anchor="ma")
    if not xs:
        draw.line([(left, bottom), (right, bottom)], fill=AXIS, width=1)
        middle = ((left + right) / 2, (top + bottom) / 2)
        text(im, middle, "no reward logged", 24, MUTED, anchor="mm")
        return
    x_lo, x_hi, x_step = x_domain(xs)
    y_lo, y_hi, y_step = y_domain(ys)

    def px(x: float) -> float:
        return left + (x - x_lo) / (x_hi - x_lo) * (right - left)

    def py(y: float) -> float:
        return bottom - (y - y_lo) / (y_hi - y_lo) * (bottom - top)

    dec = decimals(y_step)
    for v in ticks(y_lo, y_hi, y_step):
        y = round(py(v))
        draw.line([(left, y), (right, y)], fill=GRID, width=1)
        text(im, (left - 12, y), label(v, dec), 18, MUTED, anchor="rm")
    for v in ticks(x_lo, x_hi, x_step):
        x = round(px(v))
        draw.line([(x, top), (x, bottom)], fill=GRID, width=1)
        draw.line([(x, bottom), (x, bottom + 6)], fill=AXIS, width=1)
        text(im, (x, bottom + 10), label(v, 0), 18, MUTED, anchor="ma")
    draw.line([(left, top), (left, bottom)], fill=AXIS, width=1)
    draw.line([(left, bottom), (right, bottom)], fill=AXIS, width=1)
    curve(im, [(px(x), py(y)) for x, y in zip(xs, ys, strict=True)])


def curve(im: Image.Image, pts: list[tuple[float, float]]) -> None:
    """The line through ``pts``, smoothed: drawn into a larger mask, shrunk, and used to paint
    (Pillow's ``paste`` blends the colour in by the mask, over the grid)."""
    pad = CURVE_WIDTH
    left, top, right, bottom = PLOT
    box = (left - pad, top - pad, right + pad, bottom + pad)
    k = SUPERSAMPLE
    mask = Image.new("L", ((box[2] - box[0]) * k, (box[3] - box[1]) * k), 0)
    d = ImageDraw.Draw(mask)
    big = [((x - box[0]) * k, (y - box[1]) * k) for x, y in pts]
    if len(big) == 1:
        (x, y), r = big[0], CURVE_WIDTH * k
        d.ellipse([x - r, y - r, x + r, y + r], fill=255)
    else:
        d.line(big, fill=255, width=CURVE_WIDTH * k, joint="curve")
    im.paste(CURVE, box, mask.reduce(k))


def draw_card(
    title: str,
    subtitle: str,
    figures: Sequence[tuple[str, str]],
    xs: Sequence[float],
    ys: Sequence[float],
) -> Image.Image:
    """The card as an RGB picture."""
    im = Image.new("RGB", (WIDTH, HEIGHT), WHITE)
    draw = ImageDraw.Draw(im)
    width = WIDTH - 2 * MARGIN
    text(im, (MARGIN, 34), fit(spell(title), 44, width, True), 44, INK, True, "la")
    text(im, (MARGIN, 92), fit(spell(subtitle), 24, width), 24, MUTED, anchor="la")
    chart(im, draw, xs, ys)
    for i, (key, value) in enumerate(figures):
        y = ROW_TOP + ROW_STEP * i + ROW_STEP / 2
        text(im, (KEY_X, y), fit(spell(key), 24, VALUE_X - KEY_X - 12), 24, MUTED, anchor="ls")
        shown = fit(spell(value), 34, WIDTH - MARGIN - VALUE_X, True)
        text(im, (VALUE_X, y), shown, 34, INK, True, anchor="ls")
    return im


# shades of each colour over white: 32 look as smooth as 48, and 5 x 32 + white fit a
# palette well within 256 colours
LEVELS = 32


# zlib level 3: a card a few KB larger than at level 6, well within its weight budget, in
# about half the time (docs/benchmarks.md)
COMPRESS_LEVEL = 3


@functools.cache
def palette() -> Image.Image:
    """The cards' fixed palette: white, and each colour blended over white in even steps
    (everything a card shows is one of them, or anti-aliasing between one and white)."""
    entries = list(WHITE)
    for ink in INKS:
        for k in range(1, LEVELS + 1):
            entries += [round(255 + (c - 255) * k / LEVELS) for c in ink]
    pal = Image.new("P", (1, 1))
    pal.putpalette(entries)
    return pal


def png(im: Image.Image) -> bytes:
    """``im`` as a palette PNG: each pixel the nearest colour of :func:`palette`."""
    small = im.quantize(palette=palette(), dither=Image.Dither.NONE)
    out = io.BytesIO()
    small.save(out, "PNG", compress_level=COMPRESS_LEVEL)
    return out.getvalue()
