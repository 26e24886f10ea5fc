"""The redactor's edges: spans that touch, the report of what was hidden (kinds, lines, files,
counts), lines hidden in Markdown, paths with spaces, and the signature of its rules."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sitegen import redact, redact_names, redact_rules, redact_values
from sitegen.redact import MASK, Finding, Redactor, SecretTally

HF = "hf_" + "AbCdEfGhIjKlMnOpQrStUv12"


def test_touching_spans_stay_two_findings_overlapping_ones_merge():
    r = Redactor(("aaa", "bbb", "abba"))
    assert list(r.findings("aaabbb")) == [
        Finding("user-pattern:1", 0, 3),
        Finding("user-pattern:2", 3, 6),
    ]
    assert list(r.findings("aaabba")) == [Finding("user-pattern:1", 0, 6)]  # aaa, abba overlap
    assert r.text("aaabbb") == MASK + MASK


def test_the_patterns_are_kept_as_a_tuple():
    r = Redactor(["x+"])  # type: ignore[arg-type]
    assert r.extra_patterns == ("x+",) and type(r.extra_patterns) is tuple


def test_a_path_keeps_its_spaces_and_hashes_only_its_secret_segments():
    r = Redactor()
    assert r.path("my runs/a b.out") == "my runs/a b.out"
    got = r.path(f"my runs/{HF} x/a.out")
    assert got.startswith("my runs/redacted-") and got.endswith(" x/a.out") and "hf_" not in got


def test_the_tally_reports_lines_first_in_their_order_then_the_rest_by_kind():
    t = SecretTally()
    t.add(["github-token"], "trials/t1/result.json")
    t.add(["hf-token", "hf-token"], 9)
    t.add(["jwt"], None)
    t.add(["url-password"], 4)
    t.add(["url-password"], 2)  # later, at an earlier line: the first one found is reported
    t.add(["openai-key"], "trials/t2/result.json")
    t.add(["openai-key"], "trials/t3/result.json")
    w = t.warning("x.out")
    assert (w.path, w.line) == ("x.out", 4)
    assert w.message == (
        "secrets in the archive, hidden on the site: url-password 2 times (first on line 4), "
        "hf-token 2 times (first on line 9), github-token (in trials/t1/result.json), jwt, "
        "openai-key 2 times (first in trials/t2/result.json); rotate them, then remove them "
        "from the archive"
    )
    only_files = SecretTally()
    only_files.add(["jwt"], "a.json")
    assert only_files.warning("d").line is None
    unknown = SecretTally()
    unknown.add(["jwt", "jwt"])
    assert unknown.warning("d").message.startswith(
        "secrets in the archive, hidden on the site: jwt 2 times; rotate"
    )


def test_lines_hidden_in_markdown_read_the_text_as_it_will_show():
    r = Redactor()
    escaped = "# notes\n\nkey hf\\_" + HF[3:] + " here\n"
    assert r.lines_hidden(escaped) == []  # as plain text the escape hides the shape
    assert r.lines_hidden(escaped, markdown=True) == [(3, "hf-token")]
    plain = f"# notes\nkey {HF}\n"
    assert r.lines_hidden(plain, markdown=True) == r.lines_hidden(plain) == [(2, "hf-token")]
    assert r.lines_hidden("", markdown=True) == []


def test_the_rules_signature_is_the_rule_modules_bytes(tmp_path, monkeypatch):
    modules = (redact, redact_rules, redact_names, redact_values)
    h = hashlib.sha256()
    for m in modules:
        h.update(Path(m.__file__).read_bytes())
    assert redact.rules_signature() == h.hexdigest()
    edited = tmp_path / "redact_names.py"
    edited.write_bytes(Path(redact_names.__file__).read_bytes() + b"\n# another word\n")
    monkeypatch.setattr(redact_names, "__file__", str(edited))
    assert redact.rules_signature() != h.hexdigest()


def test_what_looks_like_a_credential_beside_an_error_or_an_aws_key_id():
    r = Redactor()
    # an error quoting a credential: a digit or mixed case, not a word of the message
    for value, hidden in (
        ("abcdefghijkl", False),
        ("ABCDEFGHIJKL", False),
        ("AbcdefGhijkl", True),
        ("abcdefgh1234", True),
        ("12345678", True),
    ):
        text = f"Invalid API key: {value}"
        assert (value not in r.text(text)) == hidden, value
    # "token X": letters and digits both
    for value, hidden in (
        ("abcdefghijklmnop1", True),
        ("abcdefghijklmnopq", False),
        ("12345678901234567", False),
    ):
        assert (value not in r.text(f"refresh failed: token {value} expired")) == hidden, value
    # the secret after an AWS key id: two of lower case, upper case and digits
    key_id = "AKIAQWERTYUIOPASDFGH"
    for value, hidden in (
        ("wjalrxutnfemik7mdengbpxrficyexamplekey", True),
        ("WJALRXUTNFEMIK7MDENGBPXRFICYEXAMPLEKEY", True),
        ("wJalrXUtnFEMIKMDENGbPxRfiCYEXAMPLEKEY", True),
        ("wjalrxutnfemikmdengbpxrficyexamplekey", False),
        ("012345678901234567890123456789012", False),
    ):
        assert (value not in r.text(f"{key_id} {value}")) == hidden, value
