"""Numbers, shares and durations as people read them; markdown notes made safe.

One formatter per output: ``fmt_*`` for HTML pages (Jinja filters), ``text_*`` and
``md_*`` for report.md. Each asks :func:`is_finite` whether a value is a number to print, and
rounds with :func:`~sitegen.model.numbers.fixed` (or ``sci``): the site's one rounding rule.
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import Iterable

import nh3
from markupsafe import Markup, escape

from sitegen.model.numbers import fixed, pct, sci, sig
from sitegen.model.vocabulary import is_finite
from sitegen.pages.sections import Headline

DASH = "–"  # a missing value, in every output

# Below 10**-digits a number is printed in scientific notation (the float JavaScript's
# parseFloat("1e-" + digits) gives too).
_TINY = {d: float(f"1e-{d}") for d in range(16)}


def fmt_num(v: object, digits: int = 4) -> str:
    """A number for a table: an int with separators, a float with ``digits`` decimals
    (an integral float too: ``725.0000`` beside ``433.0127`` in a column, not ``725``);
    past 1e9 or below ``10**-digits`` in scientific notation (``1.234e-05``)."""
    # A finite float (nearly every table cell) skips the checks of the other kinds.
    if type(v) is not float or not math.isfinite(v):
        if isinstance(v, bool) or not isinstance(v, int | float):
            return DASH
        if not is_finite(v):
            return "nan" if v != v else ("∞" if v > 0 else "−∞")
        if isinstance(v, int):
            return f"{int(v):,}"
    a = abs(v)
    if a != 0 and (a < _TINY[digits] or a >= 1e9):
        return sci(v, max(2, digits - 1))
    return fixed(v, digits)


def fmt_score(v: object) -> str:
    """A reward or pass@k: four decimals, also when whole (``1.0000``, not ``1`` beside
    ``0.4425``) or given as an int."""
    return fmt_num(float(v) if type(v) is int else v)


def fmt_pct(v: object, digits: int = 1) -> str:
    """A fraction as a percentage (``0.5`` → ``50.0%``)."""
    return pct(v, digits) if is_finite(v) else DASH


def fmt_dur(v: object) -> str:
    """Seconds in the unit a reader takes in at a glance (s, min, h)."""
    if not is_finite(v):
        return DASH
    s = float(v)
    if s < 120:
        return fixed(s, 1) + " s"
    if s < 7200:
        return fixed(s / 60, 1) + " min"
    return fixed(s / 3600, 2) + " h"


# name: (seconds in one, decimals)
_DUR_UNITS = {"s": (1.0, 1), "min": (60.0, 2), "h": (3600.0, 2)}


def dur_unit(values: Iterable[object]) -> str:
    """The one unit a column of durations is printed in (:func:`fmt_dur_in`), from its
    largest value: s below 2 min, min below 10 h, h from there ("45.0 s" beside "14.3 min"
    misleads at a glance). Hours only past 10 h: a timer of a few minutes would be "0.04"."""
    top = max((float(v) for v in values if is_finite(v)), default=0.0)  # type: ignore[arg-type]
    return "s" if top < 120 else "min" if top < 36000 else "h"


def fmt_dur_in(v: object, unit: str) -> str:
    """Seconds as a bare number in ``unit`` (s, min, h: the column's, :func:`dur_unit`);
    a value too small to show in it is "< 0.1" (or "< 0.01" in min and h), not a zero."""
    if not is_finite(v):
        return DASH
    per, decimals = _DUR_UNITS[unit]
    x = float(v) / per  # type: ignore[arg-type]
    least = 10.0**-decimals
    if 0 < x < least / 2:
        return f"< {least:.{decimals}f}"
    return fixed(x, decimals)


def fmt_count(n: object, noun: str, plural: str | None = None) -> str:
    """A count with its noun in the number it needs: "1 discarded step", "3 discarded steps",
    "1 training batch" (``plural`` for nouns that take more than an "s")."""
    return f"{fmt_num(n)} {noun if n == 1 else plural or noun + 's'}"


def fmt_size(n: object) -> str:
    """A byte count in the unit that keeps it readable (B, KiB, MiB, GiB): a 25-line log
    is "2.1 KiB", not "0.0 MiB"."""
    if not is_finite(n) or n < 0:
        return DASH
    b = float(n)
    if b < 1024:
        return f"{int(b)} B"
    if b < 1024**2:
        return fixed(b / 1024, 1) + " KiB"
    if b < 1024**3:
        return fixed(b / 1024**2, 2) + " MiB"
    return fixed(b / 1024**3, 2) + " GiB"


def fmt_breakable(name: object) -> Markup:
    """A run or job id, escaped, with a ``<wbr>`` after each dot: ids have no spaces, and a
    narrow column would break them mid-number; ``<wbr>`` adds no text, so copying and
    searching see the id. static/site.js does the same for the rows it makes."""
    return Markup(".<wbr>").join(escape(part) for part in str(name).split("."))


# The longest end detail a page's description quotes (a traceback's last line can run long).
DETAIL_CHARS = 120


def headline_sentence(
    status: str,
    h: Headline,
    trial_success_rate: float | None,
    detail: str | None = None,
    chain: str | None = None,
) -> str:
    """One sentence with a page's headline numbers (its description and OpenGraph preview):
    how the job ended and why (``detail``: the time limit, the error a failed job died of),
    a run's jobs (``chain``: :func:`chain_phrase`), then its steps, reward and times."""
    facts = [chain] if chain else []
    if h.first_step is not None:
        facts.append(f"steps {h.first_step}–{h.last_step}")
    if h.reward_mean is not None:
        facts.append(
            f"reward mean {fmt_score(h.reward_mean)} (max {fmt_score(h.reward_max)}, last {fmt_score(h.reward_last)})"
        )
    if h.pass_at_k_mean is not None:
        facts.append(f"{h.pass_label} {fmt_score(h.pass_at_k_mean)}")
    if h.step_time_mean_s is not None:
        facts.append(f"step time {fmt_dur(h.step_time_mean_s)}")
    if trial_success_rate is not None:
        facts.append(f"trial success {fmt_pct(trial_success_rate)}")
    if not detail:
        return ", ".join([status, *facts])
    why = detail if len(detail) <= DETAIL_CHARS else detail[: DETAIL_CHARS - 1].rstrip() + "…"
    return f"{status}: {why}" + (f" · {', '.join(facts)}" if facts else "")


def chain_phrase(jobs: int, resumed_from: list[int]) -> str | None:
    """A run's jobs in a few words, for a run of several (``2 jobs, resumed from step 6``),
    as the run page's lead says it."""
    if jobs < 2:
        return None
    if not resumed_from:
        return f"{jobs} jobs"
    steps = "step" if len(resumed_from) == 1 else "steps"
    return f"{jobs} jobs, resumed from {steps} {', '.join(map(str, resumed_from))}"


# -- text outputs: report.md and CSV ------------------------------------------------------------


def text_fixed(v: object, digits: int = 4) -> str:
    """A number with fixed decimals (ints as they are), rounded as the pages round
    (:func:`fixed`); a value logged as NaN or an infinity as ``nan``, ``inf`` or ``-inf``,
    as the CSV files write it."""
    if type(v) is float and math.isfinite(v):  # (nearly every cell: the checks below skipped)
        return fixed(v, digits, group=False)
    if isinstance(v, bool) or not isinstance(v, int | float):
        return DASH
    if not is_finite(v):
        return "nan" if v != v else ("inf" if v > 0 else "-inf")
    if isinstance(v, int):
        return str(v)
    return fixed(v, digits, group=False)


def text_sig(v: object) -> str:
    """A statistic with six significant digits (``1.23457e+06``), rounded as the pages round."""
    return sig(v, 6) if is_finite(v) else DASH


def md_cell(s: object) -> str:
    """Text safe inside a markdown table cell (or line): no column or line break, and no
    raw HTML (a viewer that renders a report's HTML would run a planted ``<script>``)."""
    text = str(s)
    if "<" in text or ">" in text or "&" in text:
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("|", "\\|").replace("\n", " ")


# -- notes -----------------------------------------------------------------------------------------


def notes_tags() -> set[str]:
    """The tags notes keep: nh3's safe set less images (a notes.md's pictures are not
    copied into the site)."""
    return set(nh3.ALLOWED_TAGS) - {"img"}


def md_to_html(text: str) -> str:
    """Markdown notes to sanitized HTML: no raw HTML, only http(s)/mailto links."""
    return sanitized(markdown_html(text))


def markdown_html(text: str) -> str:
    """Markdown notes as the Markdown library writes them: raw HTML passed through, not
    safe to publish until :func:`sanitized` (what the build cache keeps of notes)."""
    # imported here: only a page with notes needs it, and a rebuild often makes none
    import markdown
    from markdown.extensions.fenced_code import FencedCodeExtension
    from markdown.extensions.tables import TableExtension

    # Extensions as instances: a name is looked up among every installed package's entry
    # points, which costs more than converting any notes file.
    return markdown.markdown(
        text, extensions=[TableExtension(), FencedCodeExtension()], output_format="html"
    )


def markdown_signature() -> str:
    """The installed Markdown library, by the size and mtime of the files that hold its
    version, found without importing it: the build keeps what :func:`markdown_html` writes
    by it, so an upgrade makes the notes again."""
    spec = importlib.util.find_spec("markdown")
    if spec is None or spec.origin is None:
        return ""
    package = os.path.dirname(spec.origin)
    parts = []
    for name in ("__init__.py", "__meta__.py"):
        try:
            st = os.stat(os.path.join(package, name))
        except OSError:
            continue
        parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return ";".join(parts)


def sanitized(html: str) -> str:
    """HTML as notes may show it: nh3's safe tags less images, only http(s)/mailto links,
    each link ``noopener noreferrer nofollow``."""
    return nh3.clean(
        html,
        tags=notes_tags(),
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
