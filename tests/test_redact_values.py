"""Where a named secret's value ends (sitegen/redact_values.py), to the character: the whole
value is hidden and nothing after it. Each case is the text and its redaction, written out."""

from __future__ import annotations

import pytest

from sitegen.redact import MASK, Redactor

M = MASK
HIDDEN_TO_THE_END = [
    # a quoted value to its closing quote, escapes inside it
    ('password = "a \\" b" rest', f'password = "{M}" rest'),
    ("token: 'x y' and more", f"token: '{M}' and more"),
    ('api_key: "" next', 'api_key: "" next'),  # nothing to hide
    ('api_key: "unclosed, to the end', f'api_key: "{M}'),
    # a bracketed value to its bracket, nested, a bracket inside a quote skipped
    ('secret: [a, [b, "c]"], d] tail', f"secret: {M} tail"),
    ("creds: {u: 1, p: [2]} tail", f"creds: {M} tail"),
    # a YAML block: the lines deeper than the key's, or "- " lines
    ("api_key:\n  - one1\n  - two2\nlr: 3", f"api_key:\n{M}\nlr: 3"),
    ("a:\n  password:\n    x: 1\n    y: 2\n  other: 3", f"a:\n  password:\n{M}\n  other: 3"),
    ("password:\nlr: 3", "password:\nlr: 3"),  # no block: no value
    ("password:", "password:"),
    # a quoted value inside a JSON string or escaped HTML
    ('{\\"token\\": \\"abc def\\", \\"x\\": 1}', f'{{\\"token\\": \\"{M}\\", \\"x\\": 1}}'),
    ("token: &quot;abc def&quot; more", f"token: &quot;{M}&quot; more"),
    ("token: &quot;abc def", f"token: &quot;{M}"),
    ("token: &quot;&quot; x", "token: &quot;&quot; x"),
    # a query parameter to the next one
    ("https://x.io/p?a=1&token=abc#frag", f"https://x.io/p?a=1&token={M}#frag"),
    ("https://x.io/p;token=abc&page=2", f"https://x.io/p;token={M}&page=2"),
    ("https://x.io/p?token=&page=2", "https://x.io/p?token=&page=2"),
    # a bare value to the end of its line, trailing blanks left, over a continuation
    ("password = two words   \nnext", f"password = {M}   \nnext"),
    ("A_TOKEN=ab \\\n  cd \\\n  ef\nnext", f"A_TOKEN={M}\nnext"),
    ("A_TOKEN=ab \\", f"A_TOKEN={M}"),
    # … or to where its HTML element or its JSON string's escaped line ends
    ("<td>api_key: s3cret</td><td>x</td>", f"<td>api_key: {M}</td><td>x</td>"),
    ("api_key: s3cret\\nlr: 1", f"api_key: {M}\\nlr: 1"),
    ("api_key: s3cret\\r\\nlr: 1", f"api_key: {M}\\r\\nlr: 1"),
    ("api_key:\\n  s3cret\\nlr", f"api_key:\\n  {M}\\nlr"),
    ("api_key:\\t\\ts3cret", f"api_key:\\t\\t{M}"),
    # what says there is no value, or that it is hidden already
    ("api_key: None", "api_key: None"),
    ("api_key: 'null'", "api_key: 'null'"),
    ("API_KEY=NULL", "API_KEY=NULL"),
    ("api_key: [REDACTED]", "api_key: [REDACTED]"),
    ('api_key: ["[REDACTED]", "[REDACTED]"]', 'api_key: ["[REDACTED]", "[REDACTED]"]'),
    ("api_key: redacted-1a2b3c and text", "api_key: redacted-1a2b3c and text"),
    # a key inside a value already hidden is part of it
    ('password: "x token: y" then', f'password: "{M}" then'),
    ("password: a token: b", f"password: {M}"),
]


@pytest.mark.parametrize(("text", "want"), HIDDEN_TO_THE_END)
def test_a_named_value_is_hidden_to_its_end_and_no_further(text, want):
    r = Redactor()
    assert r.text(text) == want
    assert list(r.findings(want)) == []


NESTED = [
    # a key named only with its mapping's name (wandb: then key:)
    (
        "wandb:\n  project: p\n  key: K1\n  entity: e",
        f"wandb:\n  project: p\n  key: {M}\n  entity: e",
    ),
    ("wandb:\n  # the key\n\n  key: K1", f"wandb:\n  # the key\n\n  key: {M}"),
    ("wandb:\n  key: K1\n  keys: [K2]", f"wandb:\n  key: {M}\n  keys: {M}"),
    ("logger:\n  wandb:\n    key: K1", f"logger:\n  wandb:\n    key: {M}"),
    ("- wandb:\n    key: K1", f"- wandb:\n    key: {M}"),
    ("sort:\nkey: K1", "sort:\nkey: K1"),  # the line above at its indent is no parent
    ("sort:\n  key: K1\nwandb:\n  key: K2", f"sort:\n  key: K1\nwandb:\n  key: {M}"),
    ("  key: K1", "  key: K1"),  # nothing above
    # JSON or an override: the key before the opening brace
    (
        '{"wandb": {"key": "K1"}, "sort": {"key": "s"}}',
        f'{{"wandb": {{"key": "{M}"}}, "sort": {{"key": "s"}}}}',
    ),
    ('{"wandb": {"a": 1}, "key": "K1"}', '{"wandb": {"a": 1}, "key": "K1"}'),  # brace closed
    ("cfg = wandb={key=K1, x=2}", f"cfg = wandb={{key={M}"),
    ('{"wandb" :  {"tokens": ["T1"]}}', f'{{"wandb" :  {{"tokens": {M}}}}}'),
    ('{ {"key": "K1"}}', '{ {"key": "K1"}}'),  # a brace with no key before it
    ('{"9x": {"key": "K1"}}', '{"9x": {"key": "K1"}}'),  # no name: a number
]


@pytest.mark.parametrize(("text", "want"), NESTED)
def test_a_key_named_by_its_mapping(text, want):
    assert Redactor().text(text) == want


PAIRS = [
    # the container env shape: a value beside a name that names a secret
    (
        "- name: HF_TOKEN\n  value: V1\n- name: LR\n  value: 3",
        f"- name: HF_TOKEN\n  value: {M}\n- name: LR\n  value: 3",
    ),
    ('[{"value": "V1", "name": "HF_TOKEN"}]', f'[{{"value": "{M}", "name": "HF_TOKEN"}}]'),
    (
        '[{"name": "HF_TOKEN"}, {"name": "LR", "value": "3"}]',
        '[{"name": "HF_TOKEN"}, {"name": "LR", "value": "3"}]',
    ),
    ("name: HF_TOKEN\n\nvalue: V1", "name: HF_TOKEN\n\nvalue: V1"),  # a blank line ends it
    (
        "- value: V0\n- name: HF_TOKEN\n  x: 1",
        "- value: V0\n- name: HF_TOKEN\n  x: 1",
    ),  # another item's
    ("Key: HF_TOKEN\nValue: V1", f"Key: HF_TOKEN\nValue: {M}"),
    ("KEY=HF_TOKEN VALUE=V1", f"KEY=HF_TOKEN VALUE={M}"),
    ('{"name": "HF_TOKEN", "value": "[REDACTED]"}', '{"name": "HF_TOKEN", "value": "[REDACTED]"}'),
    (
        '{\\"name\\": \\"HF_TOKEN\\", \\"value\\": \\"V1\\"}',
        f'{{\\"name\\": \\"HF_TOKEN\\", \\"value\\": \\"{M}\\"}}',
    ),
]


@pytest.mark.parametrize(("text", "want"), PAIRS)
def test_a_value_named_by_the_name_beside_it(text, want):
    assert Redactor().text(text) == want


def test_is_masked_sees_only_masks_quotes_brackets_escapes_and_tags():
    from sitegen.redact_values import is_masked

    for clean in (
        '["[REDACTED]", "[REDACTED]"]',
        "[REDACTED]\\n",
        "[REDACTED]</code>",
        "redacted-0a1b2c",
        "''",
        "~",
    ):
        assert is_masked(clean), clean
    for secret in ("[REDACTED]x", "redacted-0a1b2cd", "<b>x</b>", "\\x41", "a"):
        assert not is_masked(secret), secret
