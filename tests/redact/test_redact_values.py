"""Where a named secret's value ends (sitegen/redact/values.py, sitegen/redact/assign.py), to
the character: the whole value is hidden and nothing after it. Each case is the text and its
redaction, written out."""

from __future__ import annotations

import pytest

from sitegen.redact import MASK, Redactor, assign

M = MASK
HIDDEN_TO_THE_END = [
    # a shell value whose quote closes before the operator ends there; one still open runs on
    (
        "export WANDB_API_KEY=$'abc123def' && python t.py",
        f"export WANDB_API_KEY={M} && python t.py",
    ),
    ("export DB_PASSWORD=$'hunter2 && sword9' && x", f"export DB_PASSWORD={M}"),
    # escaped characters and balanced quotes before the operator: the command is shown
    ("KEY_TOKEN=abcd1234efgh5678 sed 's/a\\/b/' f && python t.py", f"KEY_TOKEN={M} && python t.py"),
    ('password=hunter22 echo "C:\\dir" && python t.py', f"password={M} && python t.py"),
    # a page's "&&" (as the HTML made of redacted text writes it) ends the value the same
    ("HF_TOKEN=ab12cd &amp;&amp; python t.py", f"HF_TOKEN={M} &amp;&amp; python t.py"),
    # an escaped quote inside: the quote may still be open, so the value runs on
    ("export DB_PASSWORD=$'a\\'b && s3cr3tVal9' && x", f"export DB_PASSWORD={M}"),
    ('export DB_PASSWORD=x"a\\"b && s3cr3tVal9" && y', f"export DB_PASSWORD={M}"),
    # a Markdown link's text ends at "](", a relative path after "secret is" is a place
    (
        "see [the password is hunter22](https://x.io/a)",
        f"see [the password is {M}](https://x.io/a)",
    ),
    ("the secret is data/train/v2/part0001/shard", "the secret is data/train/v2/part0001/shard"),
    # ... but a run of 16 or more hex characters is no folder's name: hex joined by "/" is a
    # secret, in either case
    ("the secret is 9f8e7d6c5b4a39281706/a1b2c3d4e5f60718", f"the secret is {M}"),
    ("The Secret Is 9F8E7D6C5B4A39281706/A1B2C3D4E5F60718.", f"The Secret Is {M}."),
    ("my wandb key was\tab/9f8e7d6c5b4a3928", f"my wandb key was\t{M}"),
    ("the token is `runs/0123456789abcdef0123/x`", f"the token is `{M}`"),
    ("the secret is 9f8e7d6c5b4a3928.a1b2c3d4e5f60718.", f"the secret is {M}."),
    ("the token is 9F8E7D6C5B4A3928:A1B2C3D4E5F60718", f"the token is {M}"),
    ("the key is model.layers.0123456789abcdef", "the key is model.layers.0123456789abcdef"),
    ("the key is runs/step_100/0123456789abcdef/x", "the key is runs/step_100/0123456789abcdef/x"),
    ("the key is data/2024/0123456789012345678", "the key is data/2024/0123456789012345678"),
    # a secret's name then what was done to it is prose, a date after it too; after ":" or
    # "=" whatever follows is the value
    ("HF_TOKEN was rotated_2024_05", "HF_TOKEN was rotated_2024_05"),
    (
        "the WANDB_API_KEY was revoked_on_2024_05_01.",
        "the WANDB_API_KEY was revoked_on_2024_05_01.",
    ),
    ("my token is expired_20240501 (ask ops)", "my token is expired_20240501 (ask ops)"),
    # ... a state's word in lower case, a date joined by "_", unquoted: else a password
    ("DB_PASSWORD was Changed-2024-05-01", f"DB_PASSWORD was {M}"),
    *(
        (f"{a} {b}", f"{a} {M}")
        for a, b in (
            ("password is", "Expired_2024"),
            ("password was", "Updated-2023"),
            ("password is", "Set-1234"),
            ("the password is", "Missing_42"),
            ("password is", "invalid.99"),
            ("password is", "Reset_on_2024"),
            ("the wifi password is", "Reset.2024"),
            ("password is", "rotated-2024/05/01"),
            ("the password is", "set_1234"),
        )
    ),
    ('password is "rotated_2024_05"', f'password is "{M}"'),
    ("password is `rotated_2024_05`", f"password is `{M}`"),
    ("the token was reset_on_2024_05_01", "the token was reset_on_2024_05_01"),
    (
        "HF_TOKEN is set; HF_TOKEN expired; the secret was rotated",
        "HF_TOKEN is set; HF_TOKEN expired; the secret was rotated",
    ),
    ("HF_TOKEN was rotated_2024_05_x9", f"HF_TOKEN was {M}"),
    ("HF_TOKEN: rotated_2024_05_01", f"HF_TOKEN: {M}"),
    ("my token: expired_20240501", f"my token: {M}"),
    ("the password - changed_2024", f"the password - {M}"),
    ("the token is rotated_2024_05_01_ab", f"the token is {M}"),
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
    # … or, in a shell's NAME=value, to the operator that ends the command: only the value goes
    (
        "export HF_TOKEN=$K && python train.py --x 1",
        f"export HF_TOKEN={M} && python train.py --x 1",
    ),
    ("export HF_TOKEN=ab12cd; python train.py", f"export HF_TOKEN={M}; python train.py"),
    ("WANDB_API_KEY=ab12cd || exit 1", f"WANDB_API_KEY={M} || exit 1"),
    ("OPENAI_API_KEY=ab12cd | tee env.txt", f"OPENAI_API_KEY={M} | tee env.txt"),
    ("DB_PASSWORD=a1\tb2;\tc", f"DB_PASSWORD={M};\tc"),  # (a JSON string's tab)
    ("A_TOKEN=ab12cd  &&  make\nnext", f"A_TOKEN={M}  &&  make\nnext"),
    ("A_TOKEN=ab12cd;", f"A_TOKEN={M};"),
    ("A_TOKEN=ab12cd ; echo ok", f"A_TOKEN={M} ; echo ok"),
    ("set -a; A_TOKEN=x1 && B=2 && cmd", f"set -a; A_TOKEN={M} && B=2 && cmd"),
    # (an operator inside the value is part of it: a&&b, a|b, a;b; and not a shell's
    # assignment, NAME = value or NAME: value, the value runs to its line's end)
    ("A_TOKEN=ab&&cd|ef;gh x", f"A_TOKEN={M}"),
    ("password = a && b", f"password = {M}"),
    ("password: a; b | c", f"password: {M}"),
    ("password:a; b", f"password:{M}"),
    ("password =a && b", f"password ={M}"),
    ("password= a && b", f"password= {M}"),
    ("GITHUB_TOKEN_PREFIX=ab12 && make", f"GITHUB_TOKEN_PREFIX={M} && make"),
    # (a quote in the value before the operator may hold it: to the line's end)
    ("export DB_PASSWORD=$'hunter2 && swordfish9' && python x.py", f"export DB_PASSWORD={M}"),
    ('A_TOKEN=ab"c ; d" ; echo ok\r\nnext', f"A_TOKEN={M}\r\nnext"),
    ("A_TOKEN=pre'x\t|| y' || exit 1\nnext", f"A_TOKEN={M}\nnext"),
    ('{"c": "DB_PASSWORD=a\'b && c\' && x\\nnext"}', f'{{"c": "DB_PASSWORD={M}\\nnext"}}'),
    ("A_TOKEN=ab12 && echo 'x'", f"A_TOKEN={M} && echo 'x'"),
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
    # a name in lower-case words is a model's token only after what says so (next, eos, …)
    ("my token = my_secret_token_value_abc123", f"my token = {M}"),
    ("eos token = end_of_text_token2", "eos token = end_of_text_token2"),
    # ... or, with no digit, after any word before "token" (a tokenizer's token by its name)
    ("eot token: end_of_turn", "eot token: end_of_turn"),
    (
        "image token: image_pad\r\ntool token:\ttool_call",
        "image token: image_pad\r\ntool token:\ttool_call",
    ),
    (
        'EOT token = eot_id\n{"Assistant token": "im_start"}',
        'EOT token = eot_id\n{"Assistant token": "im_start"}',
    ),
    ("<td>vision token: vision_start</td>", "<td>vision token: vision_start</td>"),
    ("eot token: end_of_turn2", f"eot token: {M}"),
    ("my token = my_secret_value", "my token = my_secret_value"),
    ("my token = my_secret_value_2", f"my token = {M}"),
    ("the API token = my_secret_value", f"the API token = {M}"),
    ("GitHub token: my_secret_value", f"GitHub token: {M}"),
    # a quoted string joined to more by "+" (code a transcript shows): the whole right-hand
    # side, to where a bare value ends (its line, its element, an escaped line break)
    ('password = "hun" + "ter22"', f"password = {M}"),
    ("token = 'hf_' + 'abcdefghij'\nx = 1", f"token = {M}\nx = 1"),
    ('f(password="hun" + suffix, user="x")', f"f(password={M}"),
    (
        '{"code": "password = \\"hun\\" + \\"ter22\\"\\nprint(1)"}',
        f'{{"code": "password = {M}\\nprint(1)"}}',
    ),
    ("<code>password = &quot;hun&quot;+&quot;ter22&quot;</code>", f"<code>password = {M}</code>"),
    # ... not a string with "+" inside it, or after it past a comment, or "+=" or "++"
    ('x = {"password": "a+b"}', f'x = {{"password": "{M}"}}'),
    ('password = "hunter22"  # a + b', f'password = "{M}"  # a + b'),
    ('password = "hunter22" += x', f'password = "{M}" += x'),
    # a flag's value in quotes, plain or a page's entities, to its closing quote
    ("--token &quot;abcdef123456xyz&quot; --x 1", f"--token {M} --x 1"),
    ("--token &#39;a b&#39; --x &#39;1&#39;", f"--token {M} --x &#39;1&#39;"),
    ('--token "a b" --x "1"', f'--token {M} --x "1"'),
    # ... and a word glued after them, as the shell reads it (hidden at once: twice = once)
    ('--token "ab"cd --x 1', f"--token {M} --x 1"),
    ("--token &quot;ab&quot;cd --x 1", f"--token {M} --x 1"),
    ("['--token 'ab', 'x']", f"['--token {M}, 'x']"),
    # a password in a sentence ends before the sentence's closing punctuation or quote
    ("the password is hunter2!x9.", f"the password is {M}."),
    ("(my password was Tr0ub4dor&3), rotate", f"(my password was {M}), rotate"),
    ("the password is &quot;P@ssw0rd&quot;.", f"the password is &quot;{M}&quot;."),
    ("password was 'P@ss:w0rd;'; next", f"password was '{M}'; next"),
    ("the secret is Xy9+abcDEF1234567890ghijKLMN==, then", f"the secret is {M}, then"),
    # a quoted value after a password's word is the value, blanks included, to its closing
    # quote on the line: prose, a dash, key: value, JSON-escaped or a page's quotes
    ('the password is "hunter 22" for now', f'the password is "{M}" for now'),
    ("my Password was 'correct horse battery'.", f"my Password was '{M}'."),
    ("PASSWORD IS `hunter 22`", f"PASSWORD IS `{M}`"),
    ("passphrase - \u201chunter 22\u201d; next", f"passphrase - \u201c{M}\u201d; next"),
    ("the password is\t&quot;hunter 22&quot; ok", f"the password is\t&quot;{M}&quot; ok"),
    ("the password is &#39;hunter 22&#39;", f"the password is &#39;{M}&#39;"),
    ('{"msg": "the password is \\"hunter 22\\" ok"}', f'{{"msg": "the password is \\"{M}\\" ok"}}'),
    ('the password is "hunter 22"\r\nnext', f'the password is "{M}"\r\nnext'),
    ("password: 'correct horse battery'", f"password: '{M}'"),
    ('db_password = "hunter 22" # x', f'db_password = "{M}" # x'),
    ("- **password**: 'correct horse battery'", f"- **password**: '{M}'"),
    # ... an escaped quote inside it is the value's; a quote left open runs to the line's end
    ('the password is "hunt\\"er 22" ok', f'the password is "{M}" ok'),
    # (... unless the next line closes it: a passphrase broken over two lines)
    ('the password is "hunter 22\nnext" line', f'the password is "{M}" line'),
    ("my password is 'hunter 22 \r\nnext", f"my password is '{M} \r\nnext"),
    # ... in bold, struck out or in an inline element, a passphrase too
    ("the password is **correct horse battery**", f"the password is **{M}**"),
    # ... a word in emphasis, to its closing emphasis before a sentence's closer
    ("the password is *hunter22*.", f"the password is *{M}*."),
    ("the password is _hunter22_, ok", f"the password is _{M}_, ok"),
    ("the passphrase is ~~correct horse~~", f"the passphrase is ~~{M}~~"),
    ("the password is <code>correct horse</code>.", f"the password is <code>{M}</code>."),
    ('the password is <a href="x">hunter22</a>', f'the password is <a href="x">{M}</a>'),
    (
        "the password is <span class='x'>correct horse</span>",
        f"the password is <span class='x'>{M}</span>",
    ),
    ("the password is \\`hunter22\\`", f"the password is \\`{M}\\`"),
    (
        "the password is &lt;span title=&quot;a&gt;b&quot;&gt;hunter22&lt;/span&gt;",
        f"the password is &lt;span title=&quot;a&gt;b&quot;&gt;{M}&lt;/span&gt;",
    ),
    ("the wandb key is **0123456789abcdef0123**.", f"the wandb key is **{M}**."),
    # a Windows path's folders are no escaped breaks: a value holding one runs on past them;
    # in JSON (its backslashes doubled) a single backslash after it is an escape again
    ("api_key: C:\\new\\table\\tx lr", f"api_key: {M}"),
    ('"api_key: C:\\\\keys\\\\new.txt\\nlr: 1"', f'"api_key: {M}\\nlr: 1"'),
    (
        '{"m": "C:\\\\x\\nHF_TOKEN was abcdef0123456789abcdef"}',
        f'{{"m": "C:\\\\x\\nHF_TOKEN was {M}"}}',
    ),
    # a key after a page's quote entity is no query's parameter: its value runs on
    ("&quot;api_key: echo api_key: x", f"&quot;api_key: {M}"),
    ("GET /v1?a=1&amp;api_key=s3cret&amp;b=2", f"GET /v1?a=1&amp;api_key={M}&amp;b=2"),
    # a line "password is" (or was) is prose before its value, not .netrc's password "is"
    ("password is\nhunter22", f"password is\n{M}"),
    ("  password was  \r\nnext", "  password was  \r\nnext"),
    ('"password is\\nhunter22"', f'"password is\\n{M}"'),
    # an element's text that holds a mask is no passphrase: hiding again hides nothing more
    (
        'password is\\u000a<code>x**api_key: <span title="a>b">echo </code>',
        f"password is\\u000a<code>x**api_key: {M} </code>",
    ),
    # Markdown's and HTML's wrappers around a prose value, and around the name before it:
    # strikethrough, escaped emphasis, an attribute holding ">", a tag over two lines, a tag
    # as a page escapes it
    ("the password is ~~hunter22~~.", f"the password is ~~{M}~~."),
    ("the wandb key is ~~0123456789abcdef0123~~", f"the wandb key is ~~{M}~~"),
    ("the password is \\*hunter22\\*", f"the password is \\*{M}\\*"),
    ("PASSWORD IS \\_\\_hunter22\\_\\_", f"PASSWORD IS \\_\\_{M}\\_\\_"),
    (
        'the password is <span title="a>b">hunter22</span>',
        f'the password is <span title="a>b">{M}</span>',
    ),
    (
        "the password is <SPAN\n  class='x'>hunter22</SPAN>",
        f"the password is <SPAN\n  class='x'>{M}</SPAN>",
    ),
    ("the password is <code>\r\nhunter22\r\n</code>", f"the password is <code>\r\n{M}\r\n</code>"),
    (
        "the token is &lt;code&gt;abcdef0123456789abcd&lt;/code&gt;",
        f"the token is &lt;code&gt;{M}&lt;/code&gt;",
    ),
    ("the password is &lt;b&gt;hunter22&lt;/b&gt;", f"the password is &lt;b&gt;{M}&lt;/b&gt;"),
    ("the `HF_TOKEN` is `AbCdEf0123456789xyzW`", f"the `HF_TOKEN` is `{M}`"),
    ("the **DB_PASSWORD** was hunter22", f"the **DB_PASSWORD** was {M}"),
    (
        "my ~~old~~ <code>hf_token</code> is AbCdEf0123456789xyzW",
        f"my ~~old~~ <code>hf_token</code> is {M}",
    ),
    (
        '{"notes": "the \\"password\\" is \\"hunter 22\\""}',
        f'{{"notes": "the \\"password\\" is \\"{M}\\""}}',
    ),
]


@pytest.mark.parametrize(("text", "want"), HIDDEN_TO_THE_END)
def test_a_named_value_is_hidden_to_its_end_and_no_further(text, want):
    r = Redactor()
    assert r.text(text) == want
    assert r.text(want) == want  # (hiding twice hides nothing more)
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
    ('{"1.wandb": {"key": "K1"}}', '{"1.wandb": {"key": "K1"}}'),
    # a flag's JSON value; a closed mapping earlier in the text
    ('--wandb={"key": "K1"}', f'--wandb={{"key": "{M}"}}'),
    ('{"a": {}}, "wandb": {"key": "K1"}', f'{{"a": {{}}}}, "wandb": {{"key": "{M}"}}'),
    # text before a key on its line: no YAML parent ("X" is no indent)
    ("wandb:\n- X\tkey: K1", "wandb:\n- X\tkey: K1"),
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
    # a secret's name after another's, after one without a value field
    (
        "- name: LR\n  value: 3\n- name: HF_TOKEN\n  value: V1",
        f"- name: LR\n  value: 3\n- name: HF_TOKEN\n  value: {M}",
    ),
    (
        '[{"name": "HF_TOKEN"}, {"name": "WANDB_API_KEY", "value": "V2"}]',
        f'[{{"name": "HF_TOKEN"}}, {{"name": "WANDB_API_KEY", "value": "{M}"}}]',
    ),
    # the value field first in the text; a bare value to its line's end; a block under it
    ("value: V1, name: HF_TOKEN", f"value: {M}"),
    ("- name: HF_TOKEN\n  value: two words", f"- name: HF_TOKEN\n  value: {M}"),
    ("- name: HF_TOKEN\n  value: ab12 && make", f"- name: HF_TOKEN\n  value: {M}"),
    ("- name: HF_TOKEN\n  value:\n   V1\n    x: 1", f"- name: HF_TOKEN\n  value:\n{M}"),
    # a value field more than 400 characters after its name is not its
    (
        '{"name": "HF_TOKEN", "x": "' + "a" * 440 + '", "value": "V1"}',
        '{"name": "HF_TOKEN", "x": "' + "a" * 440 + '", "value": "V1"}',
    ),
    # a name and its value as a pair, quoted or bare
    ("('WANDB_API_KEY', 'abc1')", f"('WANDB_API_KEY', '{M}')"),
    ("[HF_TOKEN, abc123]", f"[HF_TOKEN, {M}]"),
    (
        '{\\"name\\": \\"HF_TOKEN\\", \\"value\\": \\"V1\\"}',
        f'{{\\"name\\": \\"HF_TOKEN\\", \\"value\\": \\"{M}\\"}}',
    ),
]


@pytest.mark.parametrize(("text", "want"), PAIRS)
def test_a_value_named_by_the_name_beside_it(text, want):
    assert Redactor().text(text) == want


def test_is_masked_sees_only_masks_quotes_brackets_escapes_and_tags():
    from sitegen.redact.values import is_masked

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


# Each value's end at the edges of the scan: escapes before the closing quote, a bracket or
# a quote never closed, a continuation after blanks, YAML lines that end a plain scalar.
EDGES = [
    # an escaped quote just before the closing one
    ('token: "ab\\"" then', f'token: "{M}" then'),
    # a bracket never closed runs to the end; a letter is no quote inside it
    ("secret: [ab, cd", f"secret: {M}"),
    ("secret: [aXb] tail", f"secret: {M} tail"),
    # a one-character quoted value; values starting with a capital X (no quote, no line end)
    ('password: "7" rest', f'password: "{M}" rest'),
    ("password: Xab Xcd", f"password: {M}"),
    # a continuation: blanks after the backslash, or none; a letter after it is no blank
    ("A_TOKEN=ab \\ \n  cd\nnext", f"A_TOKEN={M}\nnext"),
    ("A_TOKEN=ab \\\t\t\n  cd\nnext", f"A_TOKEN={M}\nnext"),
    ("A_TOKEN=ab\\X\nnext", f"A_TOKEN={M}\nnext"),
    # a plain YAML scalar goes on over deeper lines, up to one holding ": " or ending in ":"
    ("password: abc\n  def\n  lr: 1", f"password: {M}\n  lr: 1"),
    ("password: abc\n  sub:\r\n  x", f"password: {M}\n  sub:\r\n  x"),
    ("password: abc\n  sub:\t\n  x", f"password: {M}\n  sub:\t\n  x"),
    # a YAML block: "- item" lines at the key's indent, lines deeper than the key's line
    ("api_key:\n- one1\n- two2\nlr: 3", f"api_key:\n{M}\nlr: 3"),
    ("x\ny\n  password:\n    v1\n  lr: 3", f"x\ny\n  password:\n{M}\n  lr: 3"),
    ("\n  password:\n   v1\n  lr: 3", f"\n  password:\n{M}\n  lr: 3"),
    ("- password:\n    v1\nlr: 3", f"- password:\n{M}\nlr: 3"),
    ("+X password: abc\n  def", f"+X password: {M}\n  def"),  # a key not first on its line
    ("-X password: abc\n  def", f"-X password: {M}"),  # (a dash starts the key: first)
    # a continuation onto a blank line ends there; an HTML end tag on the next line is not
    # this value's
    ("A_TOKEN=ab \\\n\nnext", f"A_TOKEN={M}\nnext"),
    ("password = ab\nx</td>", f"password = {M}\nx</td>"),
    # JSON-escaped line breaks and blanks before the value, none after the separator
    ("api_key:\\r\\n  s3cret", f"api_key:\\r\\n  {M}"),
    ("api_key:\\n s3cret", f"api_key:\\n {M}"),
    ("api_key:\\nXab", f"api_key:\\n{M}"),
    ("api_key:\\n", "api_key:\\n"),
    # a query parameter first in the text; a text ending in ";" is no query
    ("?token=abc def", f"?token={M} def"),
    ("token=abc def;", f"token={M};"),
    # a key passed over (an error quoting it, no value, none, a mask) ends no scan
    (
        "Invalid API key: abcdefghijkl\npassword: hunter2",
        f"Invalid API key: abcdefghijkl\npassword: {M}",
    ),
    ("password:\nlr: 3\ntoken: abc", f"password:\nlr: 3\ntoken: {M}"),
    ("api_key: None\ntoken: abc", f"api_key: None\ntoken: {M}"),
    ("api_key: [REDACTED]\ntoken: abc", f"api_key: [REDACTED]\ntoken: {M}"),
    ("api_key: redacted-1a2b3c\ntoken: abc", f"api_key: redacted-1a2b3c\ntoken: {M}"),
    (
        "api_key: redacted-1a2b3c and text\ntoken: abc",
        f"api_key: redacted-1a2b3c and text\ntoken: {M}",
    ),
    # "None" then words, a quoted none on the line below; X around a none is a value
    ("api_key: None, retrying in 5 s", "api_key: None, retrying in 5 s"),
    ('api_key:\n  "null"', 'api_key:\n  "null"'),
    ("api_key: XnullX", f"api_key: {M}"),
]


@pytest.mark.parametrize(("text", "want"), EDGES)
def test_a_value_ends_where_its_shape_ends(text, want):
    assert Redactor().text(text) == want


# The mapping a key belongs to, at the edges of the look back: where the parent's name
# starts and ends, what may stand between it and its brace or parenthesis, how far back it
# is looked for, and which lines above a YAML key are its parent's.
_PARENT_BOUND = 128  # a parent's name is read back this many characters at most
PARENTS = [
    # a mapping opened after its key's separator and blanks only; a Python dict with spaces
    ('wandb = {"key": "K1"}', f'wandb = {{"key": "{M}"}}'),
    ('wandb: {"key": "K1"} ok', f'wandb: {{"key": "{M}"}} ok'),
    ('wandb: X{"key": "K1"}', 'wandb: X{"key": "K1"}'),
    ('wandbX{"key": "K1"}', 'wandbX{"key": "K1"}'),
    ('wandb,{"key": "K1"}', 'wandb,{"key": "K1"}'),
    ('wandbX: {"key": "K1"}', 'wandbX: {"key": "K1"}'),
    ('Xwandb: {"key": "K1"}', 'Xwandb: {"key": "K1"}'),  # one word, "xwandb"
    # a name starting with a letter or "_", whatever follows
    ('x_wandb: {"key": "K1"}', f'x_wandb: {{"key": "{M}"}}'),
    ('_wandb: {"key": "K1"}', f'_wandb: {{"key": "{M}"}}'),
    # a call's class and what it is assigned to, at the start of the text
    ('WandbConfig(key="K1") ok', f'WandbConfig(key="{M}") ok'),
    ('WandbConfig(project="p", key="K1")', f'WandbConfig(project="p", key="{M}")'),
    ('A (KEY="K1")', 'A (KEY="K1")'),  # the word before a space is no class name
    # read back so far and no further
    ("hf" + "_" * 126 + ': {"key": "K1"}', "hf" + "_" * 126 + f': {{"key": "{M}"}}'),
    ("hf" + "_" * 127 + ': {"key": "K1"}', "hf" + "_" * 127 + ': {"key": "K1"}'),
    ("hf" + "_" * 126 + '(key="K1")', "hf" + "_" * 126 + f'(key="{M}")'),
    ("hf" + "_" * 127 + '(key="K1")', "hf" + "_" * 127 + '(key="K1")'),
    # YAML: a list item's mapping, comments above, a deeper sibling, "X" is no indent
    ("wandb:\n- key: K1", f"wandb:\n- key: {M}"),
    ("wandb:\n# note\n  key: K1", f"wandb:\n# note\n  key: {M}"),
    ("wandb:\n  x:\n    key: K1\n  keys: K2", f"wandb:\n  x:\n    key: K1\n  keys: {M}"),
    ("wandb:\nXX: 1\n  key: K1", "wandb:\nXX: 1\n  key: K1"),
]


@pytest.mark.parametrize(("text", "want"), PARENTS)
def test_a_keys_mapping_is_read_as_far_as_it_goes(text, want):
    assert len("hf" + "_" * 126) == _PARENT_BOUND
    assert Redactor().text(text) == want


def test_a_yaml_parent_is_looked_for_2048_characters_back():
    def text(before: str, key_line: int) -> str:
        """``before``, "wandb:", one sibling line, then the key's line at ``key_line``."""
        head = before + "wandb:\n"
        return head + "  " + "y" * (key_line - len(head) - 3) + "\n  key: K1"

    # the look back reaches the character 2048 before the key's line; "wandb:\n" ends at 6
    assert Redactor().text(text("", 2053)).endswith(f"key: {M}")
    assert Redactor().text(text("", 2054)).endswith("key: K1")
    # a parent line cut by the bound is not read: "a: 1\n" before it, "wandb:" at 5 to 11
    assert Redactor().text(text("a: 1\n", 2052)).endswith(f"key: {M}")
    assert Redactor().text(text("a: 1\n", 2054)).endswith("key: K1")


def test_a_yaml_block_goes_on_over_blank_lines_and_crlf_line_ends():
    r = Redactor()
    # YAML reads a block (a list, a literal scalar) across blank lines
    assert r.text("api_key:\n  - one1\n\n  - two2\nlr: 3") == f"api_key:\n{M}\nlr: 3"
    assert r.text("ssh_key: |\n  aaa\n\n  bbb\nx: 1") == f"ssh_key: {M}\nx: 1"
    assert r.text("password:\n  s3cret\n\n\nlr: 3") == f"password:\n{M}\n\n\nlr: 3"
    assert r.text("password:\n  s3cret\n\nlr: 3") == f"password:\n{M}\n\nlr: 3"
    # a line of other white space (a form feed, a no-break space) is as blank
    assert r.text("wandb:\n\x0c\n  key: K1") == f"wandb:\n\x0c\n  key: {M}"
    assert r.text("wandb:\n\xa0\n  key: K1") == f"wandb:\n\xa0\n  key: {M}"
    # a file written with CRLF line ends: the parent line ends in "\r", blank lines are "\r"
    assert r.text("wandb:\r\n  key: K1\r\n") == f"wandb:\r\n  key: {M}\r\n"
    assert r.text("wandb:\r\n\r\n  key: K1") == f"wandb:\r\n\r\n  key: {M}"


def test_a_key_on_its_own_line_belongs_to_the_brace_above_it():
    r = Redactor()
    # pretty-printed JSON, a Python dict and a dataclass's repr over several lines
    assert r.text('{\n  "wandb": {\n    "key": "K1"\n  }\n}') == (
        f'{{\n  "wandb": {{\n    "key": "{M}"\n  }}\n}}'
    )
    assert r.text('wandb = {\n    "key": "K1",\n}') == f'wandb = {{\n    "key": "{M}",\n}}'
    assert r.text("WandbConfig(\n    project='p',\n    key='K1',\n)") == (
        f"WandbConfig(\n    project='p',\n    key='{M}',\n)"
    )
    assert r.text('{"wandb": {\n"key": "K1"}}') == f'{{"wandb": {{\n"key": "{M}"}}}}'
    # a brace closed before the key, or none: nothing to belong to
    assert r.text('{"wandb": {}}\n  key: K1') == '{"wandb": {}}\n  key: K1'
    assert r.text('sort = {\n    "key": "step",\n}') == 'sort = {\n    "key": "step",\n}'


def test_a_keys_line_or_brace_is_looked_for_2048_characters_back():
    r = Redactor()
    far = '"x": 1, ' * 260  # 2080 characters
    assert r.text('{"wandb": {' + far + '"key": "K1"}}').endswith('"key": "K1"}}')
    assert r.text('{"wandb": {' + far[:2000] + '"key": "K1"}}').endswith(f'"key": "{M}"}}}}')
    assert r.text("WandbConfig(" + far + 'key="K1")').endswith('key="K1")')
    assert r.text("WandbConfig(" + far[:2000] + 'key="K1")').endswith(f'key="{M}")')
    # a line of blanks longer than that before the key: its start is not seen
    assert r.text("wandb:\n" + " " * 2100 + "key: K1").endswith("key: K1")
    assert r.text("wandb:\n" + " " * 2000 + "key: K1").endswith(f"key: {M}")


# A key whose run of name characters starts with a digit, a dash or a dot (a single-dash
# flag, a numbered name) or follows a letter outside ASCII: the key is the whole run.
PREFIXED_KEYS = [
    ("-api_key=abcdefgh12345678", "-api_key=[REDACTED]"),
    ("1-api_key=abcdefgh12345678", "1-api_key=[REDACTED]"),
    ("9api_key=abcdefgh12345678", "9api_key=[REDACTED]"),
    ("x=1.api_key=abcdefgh12345678", "x=1.api_key=[REDACTED]"),
    ("é-api_key=abcdefgh12345678", "é-api_key=[REDACTED]"),
    ("tr\ufffd-password: hunter2hunter2", "tr\ufffd-password: [REDACTED]"),
    # (numbers and times are still no keys)
    ("at 12:30:45 lr=1e-3", "at 12:30:45 lr=1e-3"),
    ("1e-3: abcdefgh12345678", "1e-3: abcdefgh12345678"),
    ("-1.5: abcdefgh12345678", "-1.5: abcdefgh12345678"),
]


@pytest.mark.parametrize(("text", "want"), PREFIXED_KEYS)
def test_a_key_may_start_with_a_digit_a_dash_or_after_a_letter_outside_ascii(text, want):
    assert Redactor().text(text) == want


def test_a_trial_name_with_a_json_escape_keeps_no_secret():
    # a lone surrogate escape before a key: shown as U+FFFD, the key still read
    r = Redactor()
    assert r.text("tr\ud800-api_key=abcdefgh12345678") == "tr\ufffd-api_key=[REDACTED]"
    assert "abcdefgh12345678" not in r.name("tr\ud800-api_key=abcdefgh12345678")


def test_a_list_left_open_with_a_quote_left_open_ends_at_the_texts_end():
    # (past it, the second reading of a JSON string's escapes indexed beyond the text)
    r = Redactor()
    assert r.text('a\\n token=[ "abc') == "a\\n token=[REDACTED]"
    assert list(assign.assignment_spans('token=[ "abc')) == [(6, 12)]


def test_next_finds_the_first_needle_at_or_after_any_position_asked():
    """Asked in growing order it reads on from its last answer; asked before where it last
    looked (a value's continuation line read first), it searches again."""
    from sitegen.redact.values import Next

    text = "a\nbb\nccc\n"
    n = Next(text, "\n")
    assert [n.after(p) for p in (0, 1, 2, 5, 9)] == [1, 1, 4, 8, 9]
    assert n.after(0) == 1 and n.after(3) == 4 and Next("abc", "\n").after(1) == 3
