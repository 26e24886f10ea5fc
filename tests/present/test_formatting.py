"""Numbers as pages and text outputs print them; notes made safe."""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from sitegen.model.vocabulary import is_finite
from sitegen.pages.sections import Headline
from sitegen.present.formatting import (
    DETAIL_CHARS,
    chain_phrase,
    dur_unit,
    fixed,
    fmt_breakable,
    fmt_dur,
    fmt_dur_in,
    fmt_num,
    fmt_pct,
    headline_sentence,
    md_cell,
    md_to_html,
    sci,
    text_fixed,
    text_sig,
)


def _ref_round(q: Fraction, digits: int, group: bool = True) -> str:
    """An exact number with ``digits`` decimals, half away from zero, a zero unsigned."""
    n = math.floor(abs(q) * 10**digits + Fraction(1, 2))
    s = str(n).rjust(digits + 1, "0")
    whole, frac = (s[:-digits], s[-digits:]) if digits else (s, "")
    head = f"{int(whole):,}" if group else whole
    return ("-" if q < 0 and n else "") + head + ("." + frac if digits else "")


def _ref_fixed(v: float, digits: int, group: bool = True) -> str:
    """The rounding rule written apart, in exact fractions: the shortest decimal (repr)."""
    return _ref_round(Fraction(repr(v)), digits, group)


def _ref_sci(v: float, digits: int) -> str:
    q = Fraction(repr(v))
    guess = math.floor(math.log10(abs(q)))
    for e in (guess - 1, guess, guess + 1):  # (log10 of a float may miss by one)
        m = _ref_round(q / Fraction(10) ** e, digits)
        if 1 <= abs(Fraction(m)) < 10:
            return f"{m}e{e:+03d}"
    raise AssertionError(v)


def _fmt_num_ref(v: object, digits: int = 4) -> str:
    """fmt_num's rule, every kind through plain checks and the reference rounding."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return "–"
    if not is_finite(v):
        return "nan" if v != v else ("∞" if v > 0 else "−∞")
    if isinstance(v, int):
        return f"{int(v):,}"
    a = abs(v)
    if a != 0 and (a < 10.0**-digits or a >= 1e9):
        return _ref_sci(float(v), max(2, digits - 1))
    return _ref_fixed(float(v), digits)


def _text_fixed_ref(v: object, digits: int = 4) -> str:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return "–"
    if not is_finite(v):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}[repr(float(v))]
    if isinstance(v, int):
        return str(v)
    return _ref_fixed(float(v), digits, group=False)


class _Float(float):
    pass


# Decimal ties (x.xxxx5), as means of logged 4-decimal values often are.
_TIES = st.builds(
    lambda n, e: float(f"{n}5e-{e}"), st.integers(-(10**7), 10**7), st.integers(1, 12)
)


@given(
    st.one_of(
        st.floats(),
        st.floats(-1e13, 1e13).map(round).map(float),  # integral floats
        st.integers(-(10**15), 10**15),
        _TIES,
        st.booleans(),
        st.none(),
        st.text(max_size=3),
        st.floats().map(_Float),
        st.sampled_from([0.0, -0.0, 1.0, 0.9999, 1e-4, 1e-5, 1e9, 999999999.5, 1e12]),
    ),
    st.sampled_from([0, 1, 2, 4, 6]),
)
def test_fmt_num_and_text_fixed_follow_the_rule(v: object, digits: int) -> None:
    assert fmt_num(v, digits) == _fmt_num_ref(v, digits)
    assert text_fixed(v, digits) == _text_fixed_ref(v, digits)


def test_one_rounding_rule():
    """The shortest decimal, rounded half away from zero: what a reader rounding the value
    the data files and CSVs print gets. Python's format (and JavaScript's toFixed) round the
    binary value: 1.005 is 1.00499999… there, and Python takes ties to even."""
    assert f"{1.005:.2f}" == "1.00" and fixed(1.005, 2) == "1.01"
    assert f"{0.125:.2f}" == "0.12" and fixed(0.125, 2) == "0.13"
    assert fixed(0.37075, 4) == "0.3708" and fixed(0.37074999999999997, 4) == "0.3707"
    assert [fixed(v, 0) for v in (2.5, -2.5, 0.5, 1.5, 0.49999999999999994)] == [
        "3",
        "-3",
        "1",
        "2",
        "0",
    ]
    assert fixed(2.675, 2) == "2.68" and fixed(-1.005, 2) == "-1.01"
    assert fixed(-0.0, 4) == "0.0000" and fixed(-0.00004, 4) == "0.0000"  # no "-0.0000"
    assert fixed(999.99995, 4) == "1,000.0000" and fixed(1234567.891, 1) == "1,234,567.9"
    assert fixed(1234567.891, 1, group=False) == "1234567.9"
    assert sci(1e-7, 3) == "1.000e-07" and sci(9.9996e-5, 3) == "1.000e-04"
    assert sci(-1.23455e-5, 3) == "-1.235e-05" and sci(1.5e300, 2) == "1.50e+300"
    # a float always shows its decimals (725.0000 beside 433.0127), an int is a count
    assert fmt_num(725.0) == "725.0000" and fmt_num(725) == "725"
    assert fmt_num(433.01274) == "433.0127" and fmt_num(12345678901234567890) == (
        "12,345,678,901,234,567,890"
    )
    assert fmt_num(1e-7) == "1.000e-07" and fmt_num(2e9) == "2.000e+09"
    assert fmt_pct(0.0005) == "0.1%" and fmt_pct(-0.0001) == "0.0%" and fmt_pct(0.8125) == "81.3%"
    assert fmt_dur(0.25) == "0.3 s" and fmt_dur(3 * 60 + 15) == "3.3 min"
    assert text_sig(0.1234565) == "0.123457" and text_sig(-0.0) == "0"
    assert text_sig(1234565.0) == "1.23457e+06"


def test_formatting():
    assert fmt_num(0.48321) == "0.4832" and fmt_num(None) == "–" and fmt_num(float("nan")) == "nan"
    assert fmt_num(12345) == "12,345" and fmt_num(3.0) == "3.0000" and fmt_num(3.0, 1) == "3.0"
    assert fmt_num(math.inf) == "∞" and fmt_num(-math.inf) == "−∞" and fmt_num(True) == "–"
    assert fmt_num(0.00001234) == "1.234e-05"
    assert fmt_pct(0.878) == "87.8%" and fmt_pct(math.nan) == "–" and fmt_pct(None) == "–"
    assert (
        fmt_dur(90) == "90.0 s" and fmt_dur(858.476) == "14.3 min" and fmt_dur(40348.4) == "11.21 h"
    )
    assert fmt_dur(math.inf) == "–"
    # a column in one unit: the one its largest value takes
    units = [dur_unit(c) for c in ([1, 90], [1, 858.476], [7902.6], [5, 40348.4], [], [math.nan])]
    assert units == ["s", "min", "min", "h", "s", "s"]
    assert [fmt_dur_in(v, "min") for v in (858.476, 0.2, 0, None)] == [
        "14.31",
        "< 0.01",
        "0.00",
        "–",
    ]
    assert fmt_dur_in(0.04, "s") == "< 0.1" and fmt_dur_in(7902.6, "min") == "131.71"
    assert fmt_dur_in(40348.4, "h") == "11.21" and fmt_dur_in(12, "h") == "< 0.01"


def test_text_outputs():
    # report.md: fixed decimals as the old script printed them, "nan" kept visible, "–" missing
    assert text_fixed(0.123456) == "0.1235" and text_fixed(2.5, 1) == "2.5"
    assert text_fixed(7) == "7" and text_fixed(math.nan) == "nan" and text_fixed(None) == "–"
    # an infinite reward is no NaN: report.md says which, as steps.csv does
    assert text_fixed(math.inf) == "inf" and text_fixed(-math.inf, 1) == "-inf"
    assert text_sig(1234567.0) == "1.23457e+06" and text_sig(math.inf) == "–"
    assert md_cell("a|b\nc") == "a\\|b c"
    # no raw HTML reaches a report (an exception type, a metric name from the log)
    assert md_cell("</script><script>alert(3)</script> & co") == (
        "&lt;/script&gt;&lt;script&gt;alert(3)&lt;/script&gt; &amp; co"
    )


def _headline(**kw) -> Headline:
    base = dict.fromkeys(
        (
            "first_step",
            "last_step",
            "reward_mean",
            "reward_max",
            "reward_last",
            "pass_at_k",
            "pass_at_k_mean",
            "total_time_s",
            "step_time_mean_s",
            "gen_wait_mean_s",
            "gen_wait_share",
            "avg_tokens_mean",
            "staleness_mean",
            "staleness_max",
        )
    )
    return Headline(**{**base, "steps": 0, **kw})


def test_headline_sentence():
    assert headline_sentence("running", _headline(), None) == "running"
    h = _headline(
        steps=8,
        first_step=1,
        last_step=8,
        reward_mean=0.25,
        reward_max=0.5,
        reward_last=0.375,
        pass_at_k=4,
        pass_at_k_mean=0.6,
        step_time_mean_s=90.0,
    )
    assert headline_sentence("complete", h, 0.5) == (
        "complete, steps 1–8, reward mean 0.2500 (max 0.5000, last 0.3750), pass@4 0.6000, "
        "step time 90.0 s, trial success 50.0%"
    )
    # why a job ended leads, as a chat preview shows it; a long reason is cut to its start
    assert headline_sentence("cancelled", h, None, "TIME LIMIT") == (
        "cancelled: TIME LIMIT · steps 1–8, reward mean 0.2500 (max 0.5000, last 0.3750), "
        "pass@4 0.6000, step time 90.0 s"
    )
    assert headline_sentence("failed", _headline(), None, "out of memory (oom_kill)") == (
        "failed: out of memory (oom_kill)"
    )
    long = "Train loop failed at global_step 9: RuntimeError: " + "x" * 200
    cut = headline_sentence("failed", _headline(), None, long)
    assert cut == "failed: " + long[: DETAIL_CHARS - 1] + "…" and len(cut) == 8 + DETAIL_CHARS
    exact = "y" * DETAIL_CHARS  # as long as kept whole: not cut
    assert headline_sentence("failed", _headline(), None, exact) == f"failed: {exact}"
    spaced = " " + "z" * (DETAIL_CHARS - 3) + " tail"  # cut after a space: no space before "…"
    assert headline_sentence("failed", _headline(), None, spaced) == (
        "failed: " + spaced[: DETAIL_CHARS - 2] + "…"
    )


def test_chain_phrase_leads_a_runs_facts():
    assert chain_phrase(1, []) is None  # a run of one job: its page says all
    assert chain_phrase(2, []) == "2 jobs"  # started again, not resumed
    assert chain_phrase(2, [6]) == "2 jobs, resumed from step 6"
    assert chain_phrase(3, [6, 12]) == "3 jobs, resumed from steps 6, 12"
    h = _headline(steps=1, first_step=1, last_step=12, step_time_mean_s=60.0)
    assert headline_sentence("running", h, None, None, "2 jobs, resumed from step 6") == (
        "running, 2 jobs, resumed from step 6, steps 1–12, step time 60.0 s"
    )
    assert headline_sentence("failed", h, None, "out of memory", "2 jobs") == (
        "failed: out of memory · 2 jobs, steps 1–12, step time 60.0 s"
    )


def test_notes_rendered_and_sanitized():
    html = md_to_html(
        "# T\n\n<script>alert(1)</script> [x](javascript:alert(1)) [ok](https://a.b) <img src=x onerror=alert(1)>"
    )
    assert "<script" not in html and "javascript:" not in html and "onerror" not in html
    assert 'href="https://a.b"' in html


def test_notes_extensions_as_named():
    """md_to_html passes its extensions as instances (no entry-point lookup): the HTML is
    what the extensions' names give, tables and fenced code included."""
    import markdown
    import nh3

    from sitegen.present.formatting import notes_tags

    text = (
        "# Run notes\n\nLR *3e-6*, see [log](https://a.b/c).\n\n| k | v |\n|---|--:|\n"
        "| lr | 3e-6 |\n\n```yaml\ntrainer:\n  epochs: 2\n```\n\n- a\n- b\n"
    )
    named = markdown.markdown(text, extensions=["tables", "fenced_code"], output_format="html")
    want = nh3.clean(
        named,
        tags=notes_tags(),
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    got = md_to_html(text)
    assert got == want
    assert "<table>" in got and "<code" in got and "epochs: 2" in got


def test_sizes_in_a_readable_unit():
    from sitegen.present.formatting import fmt_size

    assert fmt_size(0) == "0 B"
    assert fmt_size(1023) == "1023 B"
    assert fmt_size(2150) == "2.1 KiB"
    assert fmt_size(157_286) == "153.6 KiB"
    assert fmt_size(12_845_742) == "12.25 MiB"
    assert fmt_size(3 * 1024**3) == "3.00 GiB"
    assert fmt_size(5 * 1024**4) == "5,120.00 GiB"
    for bad in (None, float("nan"), -1, True, "12"):
        assert fmt_size(bad) == "–"


def test_an_id_may_break_after_its_dots_and_stays_escaped():
    assert fmt_breakable("plants.flat.tasks.train_700100") == (
        "plants.<wbr>flat.<wbr>tasks.<wbr>train_700100"
    )
    assert fmt_breakable("exp-async") == "exp-async"  # no dot: as it is
    assert fmt_breakable("a<b>.c&d") == "a&lt;b&gt;.<wbr>c&amp;d"  # text, never markup


@given(st.text())
def test_a_breakable_id_reads_as_the_id(name: str):
    import html
    import re

    out = str(fmt_breakable(name))
    assert html.unescape(re.sub(r"<wbr>", "", out)) == name
    assert "<" not in out.replace("<wbr>", "")


def test_a_score_keeps_its_four_decimals():
    """A reward or pass@k prints four decimals, also when whole or given as an int (a
    reward of 1 beside 0.5000 read as a count); the rest as fmt_num prints them."""
    from sitegen.present.formatting import fmt_num, fmt_score

    assert fmt_score(1.0) == "1.0000" and fmt_score(0.0) == "0.0000" and fmt_score(1) == "1.0000"
    assert fmt_score(-1.0) == "-1.0000" and fmt_num(1) == "1"
    assert fmt_score(0.4425) == "0.4425" and fmt_score(None) == fmt_num(None)
    assert fmt_score(float("nan")) == "nan" and fmt_score(True) == "–"
