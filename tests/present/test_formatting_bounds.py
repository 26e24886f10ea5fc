"""present/formatting at the edges of each unit and notation: the value a unit starts at,
the one just below, counts of one and more, notes cleaned of what a page must not run."""

from __future__ import annotations

import math

import pytest

from sitegen.present.formatting import (
    DASH,
    dur_unit,
    fmt_count,
    fmt_dur,
    fmt_dur_in,
    fmt_num,
    fmt_size,
    md_cell,
    md_to_html,
    notes_tags,
    text_fixed,
)


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (119.94, "119.9 s"),
        (119.96, "120.0 s"),  # still seconds: the unit is chosen before rounding
        (120, "2.0 min"),
        (7199.0, "120.0 min"),
        (7200, "2.00 h"),
        (-3.0, "-3.0 s"),
    ],
)
def test_fmt_dur_changes_unit_at_two_minutes_and_two_hours(seconds, shown):
    assert fmt_dur(seconds) == shown


@pytest.mark.parametrize(
    ("top", "unit"),
    [(119.9, "s"), (120.0, "min"), (35999.0, "min"), (36000.0, "h"), (None, "s")],
)
def test_a_columns_unit_follows_its_largest_value(top, unit):
    assert dur_unit([1.0, top, math.nan, "x"]) == unit
    assert dur_unit([]) == "s"


def test_a_duration_too_small_for_its_unit_says_so():
    assert fmt_dur_in(0.04, "s") == "< 0.1"
    assert fmt_dur_in(0.05, "s") == "0.1"  # half the least step rounds up to it
    assert fmt_dur_in(0.2, "min") == "< 0.01"  # 0.0033 min
    assert fmt_dur_in(0.3, "min") == "0.01"  # 0.005 min
    assert fmt_dur_in(17.0, "h") == "< 0.01" and fmt_dur_in(18.0, "h") == "0.01"
    assert fmt_dur_in(0, "s") == "0.0" and fmt_dur_in(-1, "min") == "-0.02"
    assert fmt_dur_in(math.inf, "h") == DASH


@pytest.mark.parametrize(
    ("n", "shown"),
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KiB"),
        (1024**2 - 1, "1,024.0 KiB"),
        (1024**2, "1.00 MiB"),
        (1024**3 - 1, "1,024.00 MiB"),
        (1024**3, "1.00 GiB"),
        (-1, DASH),
        (math.nan, DASH),
    ],
)
def test_fmt_size_changes_unit_at_each_power_of_1024(n, shown):
    assert fmt_size(n) == shown


def test_fmt_count_says_the_noun_in_the_number_it_needs():
    assert fmt_count(1, "step") == "1 step"
    assert fmt_count(0, "step") == "0 steps"
    assert fmt_count(2, "batch", "batches") == "2 batches"
    assert fmt_count(1, "batch", "batches") == "1 batch"
    assert fmt_count(1200, "trial") == "1,200 trials"


@pytest.mark.parametrize(
    ("v", "digits", "shown"),
    [
        (1e-4, 4, "0.0001"),  # 10**-digits itself is fixed
        (9.9e-5, 4, "9.900e-05"),
        (999_999_999.0, 4, "999,999,999.0000"),
        (1e9, 4, "1.000e+09"),
        (-1e9, 2, "-1.00e+09"),  # (never fewer than 2 decimals)
        (math.inf, 4, "∞"),
        (-math.inf, 4, "−∞"),
        (math.nan, 4, "nan"),
        (0.0, 4, "0.0000"),
        (True, 4, DASH),
        (7, 4, "7"),
    ],
)
def test_fmt_num_switches_to_scientific_notation_at_its_bounds(v, digits, shown):
    assert fmt_num(v, digits) == shown


def test_text_fixed_writes_floats_without_separators():
    assert text_fixed(12345.678, 1) == "12345.7"
    assert text_fixed(12345, 1) == "12345"
    assert (text_fixed(math.nan), text_fixed(None), text_fixed(True)) == ("nan", DASH, DASH)


def test_md_cell_escapes_each_markup_character_alone():
    assert md_cell("a<b") == "a&lt;b"
    assert md_cell("a>b") == "a&gt;b"
    assert md_cell("a&b") == "a&amp;b"
    assert md_cell("a|b\nc") == "a\\|b c"


def test_notes_are_cleaned_of_scripts_images_and_unsafe_links():
    assert "img" not in notes_tags() and {"a", "p", "table"} <= notes_tags()
    html = md_to_html(
        "# T\n\n<script>x()</script> ![p](p.png) [ok](https://a.b) [no](javascript:alert(1))"
        " [mail](mailto:a@b)\n"
    )
    assert "<script" not in html and "<img" not in html and "javascript:" not in html
    assert '<a href="https://a.b" rel="noopener noreferrer nofollow">ok</a>' in html
    assert 'href="mailto:a@b"' in html and "<h1>T</h1>" in html


def test_markdown_signature_follows_the_librarys_version_files(tmp_path, monkeypatch):
    import importlib.util
    import os
    from types import SimpleNamespace

    from sitegen.present import formatting

    package = tmp_path / "markdown"
    package.mkdir()
    (package / "__init__.py").write_text("x = 1\n")
    (package / "__meta__.py").write_text("__version__ = '3.5'\n")
    (package / "other.py").write_text("")
    os.utime(package / "__init__.py", ns=(1, 1_000))
    os.utime(package / "__meta__.py", ns=(1, 2_000))
    spec = SimpleNamespace(origin=str(package / "__init__.py"))
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: spec if name == "markdown" else None
    )
    assert formatting.markdown_signature() == "__init__.py:6:1000;__meta__.py:20:2000"
    (package / "__init__.py").unlink()  # a file gone: the ones after it still sign it
    assert formatting.markdown_signature() == "__meta__.py:20:2000"
    (package / "__init__.py").write_text("x = 1\n")
    os.utime(package / "__init__.py", ns=(1, 1_000))
    (package / "__meta__.py").unlink()
    assert formatting.markdown_signature() == "__init__.py:6:1000"
    spec.origin = None
    assert formatting.markdown_signature() == ""
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert formatting.markdown_signature() == ""


def test_notes_html_is_html_and_links_keep_only_http_https_and_mailto():
    from sitegen.present.formatting import markdown_html, sanitized

    # HTML, not XHTML: no "<br />" or "<hr />"
    assert markdown_html("a  \nb\n\n---\n") == "<p>a<br>\nb</p>\n<hr>"
    rel = 'rel="noopener noreferrer nofollow"'
    links = (
        '<a href="ftp://x.org/y">f</a> <a href="http://a.b/">h</a> '
        '<a href="HTTP://c.d/">H</a> <a href="https://e.f/">s</a> <a href="mailto:a@b.c">m</a>'
    )
    assert sanitized(links) == (
        f'<a {rel}>f</a> <a href="http://a.b/" {rel}>h</a> <a href="HTTP://c.d/" {rel}>H</a> '
        f'<a href="https://e.f/" {rel}>s</a> <a href="mailto:a@b.c" {rel}>m</a>'
    )
