"""The site's one rounding rule, and the sentences of the findings printed by it."""

from __future__ import annotations

import pytest

from sitegen.insights import findings as F
from sitegen.model.numbers import fixed, pct, sci, sig
from sitegen.present.formatting import fmt_num, fmt_pct
from tests.insights.helpers import blocks


@pytest.mark.parametrize(
    ("v", "digits", "text"),
    [(0.37075, 4, "0.3708"), (0.125, 2, "0.13"), (2.5, 0, "3"), (-2.5, 0, "-3"),
     (-0.00004, 4, "0.0000"), (1234.5, 1, "1,234.5"), (1.005, 2, "1.01")],
)  # fmt: skip
def test_fixed_rounds_the_shortest_decimal_half_away_from_zero(v, digits, text):
    assert fixed(v, digits) == text


def test_pct_sig_and_sci_follow_the_same_rule():
    assert pct(0.125) == "13%" and pct(0.8345, 1) == "83.5%"
    assert fmt_pct(0.8345) == pct(0.8345, 1)  # the pages' percentage is the sentences'
    assert sig(0.3125, 3) == "0.313" and sig(2.675, 3) == "2.68"  # ("g" gives 0.312, 2.67)
    assert sig(1.0, 3) == "1" and sig(0.5, 3) == "0.5" and sig(123456, 3) == "1.23e+05"
    assert sig(0.0, 3) == "0" and sig(-0.00025, 2) == "-0.00025"
    assert sci(1.2345e-7, 3) == "1.235e-07" and sci(9.9996, 3) == "1.000e+01"
    assert fmt_num(0.37075) == fixed(0.37075, 4)


def test_a_findings_sentence_rounds_as_the_tables_do():
    """82.5 % of step time waits: Python's own "%" format prints 82 % (the binary value of
    0.825 lies just below), the tables and the sentence 83 %."""
    step = {"timing/step": 100.0, "timing/wait_for_generation_buffer": 82.5}
    f = F.gen_wait(blocks(5, lambda k: step), has_trials=True)
    assert f"{0.825:.0%}" == "82%"
    assert f is not None and f.title.startswith("83% of step time") and "82.5%" in f.detail
    assert fmt_pct(0.825, 0) == "83%"
