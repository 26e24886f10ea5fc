"""The site's one rounding rule, for every page, text and sentence.

A number is printed from its shortest decimal (its ``repr``: what JSON, the CSV files and
JavaScript's ``String`` print), rounded half away from zero; a result of zero has no sign.
``static/site.js`` implements the same rule for what the browser draws, so a figure reads
the same in a table, a finding's sentence and the compare page (docs/design.md, "Numbers").
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Context, Decimal

# Exact decimal arithmetic wide enough for any float's digits (a float spans ~10^±308).
_EXACT = Context(prec=800, rounding=ROUND_HALF_UP)


def shortest(v: float) -> Decimal:
    """``v``'s shortest decimal (the same digits in Python and JavaScript)."""
    return Decimal(repr(float(v)))


def rounded(d: Decimal, exponent: int) -> Decimal:
    """``d`` rounded half away from zero to a multiple of ``10**exponent``; a zero comes
    out unsigned."""
    r = d.quantize(Decimal((0, (1,), exponent)), context=_EXACT)
    return r if r else r.copy_abs()


def fixed(v: float, digits: int, group: bool = True) -> str:
    """A finite number with ``digits`` decimals (0.37075 → ``0.3708``, 0.125 → ``0.13`` at
    2, 2.5 → ``3`` at 0). ``group``: a comma between thousands."""
    return format(rounded(shortest(v), -digits), ",f" if group else "f")


def sci(v: float, digits: int) -> str:
    """A finite nonzero number in scientific notation with ``digits`` decimals
    (``1.000e-07``)."""
    d = shortest(v)
    e = d.adjusted()
    m = rounded(d.scaleb(-e, context=_EXACT), -digits)
    if abs(m) >= 10:  # 9.9996 → 10.000: one digit more to the left
        e += 1
        m = rounded(d.scaleb(-e, context=_EXACT), -digits)
    return f"{m:f}e{e:+03d}"


def pct(v: float, digits: int = 0) -> str:
    """A fraction as a percentage with ``digits`` decimals (0.125 → ``13%``)."""
    return fixed(100 * v, digits) + "%"


def sig(v: float, digits: int) -> str:
    """A finite number with ``digits`` significant digits, laid out as Python's ``g`` lays
    it out (0.5 → ``0.5``, 0.0012345 at 3 → ``0.00123``, 123456 at 3 → ``1.23e+05``)."""
    d = shortest(v)
    if not d:
        return "0"
    return format(float(rounded(d, d.adjusted() - digits + 1)), f".{digits}g")
