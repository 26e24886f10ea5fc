"""The redactor's edges: spans that touch, the report of what was hidden (kinds, lines, files,
counts), lines hidden in Markdown, paths with spaces, and the signature of its rules."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from sitegen import redact
from sitegen.redact import MASK, Finding, Redactor, SecretTally, names

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
    package = Path(redact.__file__).parent
    files = [package / "__init__.py"] + sorted(
        f for f in package.glob("*.py") if f.name != "__init__.py"
    )
    assert len(files) > 10  # (every module of the package, not only the first)
    h = hashlib.sha256()
    for f in files:
        h.update(f.read_bytes())
    assert redact.rules_signature() == h.hexdigest()
    edited = tmp_path / "names.py"
    edited.write_bytes(Path(names.__file__).read_bytes() + b"\n# another word\n")
    monkeypatch.setattr(names, "__file__", str(edited))
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


def test_a_kind_first_seen_nowhere_takes_the_first_place_found_later():
    t = SecretTally()
    t.add(["jwt"])  # where unknown (a value read outside any line)
    t.add(["jwt"], 12)
    t.add(["jwt"], 3)
    assert t.kinds["jwt"] == (12, 3)
    assert t.warning("x.out").message.startswith(
        "secrets in the archive, hidden on the site: jwt 3 times (first on line 12); rotate"
    )


def test_a_secret_spanning_two_segments_of_a_path_hashes_only_its_own_segment():
    r = Redactor()
    # a value runs to the end of its text: a segment's end is the end of its value
    got = r.path("runs/password=hunter22/step_3")
    assert got.startswith("runs/password=redacted-") and got.endswith("/step_3")
    assert got == "runs/" + r.name("password=hunter22") + "/step_3"


def test_lines_hidden_in_markdown_keep_the_source_when_the_shown_text_holds_none():
    r = Redactor()
    # an escaped mask: the source's value is not a mask yet (hidden), as shown it is one
    src = "notes\npassword: &#91;REDACTED&#93;"
    assert r.markdown(src) == f"notes\npassword: {MASK}"
    assert r.lines_hidden(src, markdown=True) == [(2, "secret-assignment")]


def test_lines_hidden_count_a_line_break_on_the_first_character():
    r = Redactor()
    assert r.lines_hidden("\npassword: abcdef") == [(2, "secret-assignment")]
    assert r.lines_hidden("\n\n" + HF) == [(3, "hf-token")]


def test_config_values_that_hold_nothing_stay_under_a_secret_name():
    r = Redactor()
    assert r.value("api_key", "") == ""
    assert r.value("api_key", "XXXX") == MASK
    assert r.value("api_key", False) is False  # "no key"
    assert r.value("api_key", True) == MASK
    assert r.value("api_key", None) is None
    assert r.value("api_key", []) == [] and r.value("api_key", {}) == {}
    # the container env shape with an empty value, a pair with none
    assert r.value(None, {"name": "HF_TOKEN", "value": ""}) == {"name": "HF_TOKEN", "value": ""}
    assert r.value(None, {"name": "HF_TOKEN", "value": "XXXX"}) == {
        "name": "HF_TOKEN",
        "value": MASK,
    }
    assert r.value(None, ["HF_TOKEN", ""]) == ["HF_TOKEN", ""]
    assert r.value(None, ["HF_TOKEN", "XXXX"]) == ["HF_TOKEN", MASK]


def test_an_argv_hides_the_item_after_a_secret_flag_unless_it_is_empty_or_a_flag():
    r = Redactor()
    assert r.value(None, ["run", "--hf-token", ""]) == ["run", "--hf-token", ""]
    assert r.value(None, ["run", "--hf-token", "XXXX"]) == ["run", "--hf-token", MASK]
    # a flag after the secret flag (its value left out) is shown, and what follows it
    assert r.value(None, ["run", "--hf-token", "--verbose", "v"]) == [
        "run",
        "--hf-token",
        "--verbose",
        "v",
    ]
    assert r.value(None, ["run", "--XXpassword", "pw1"]) == ["run", "--XXpassword", MASK]


def test_names_that_are_no_secret_at_the_edges_of_the_word_rules():
    # no word at all; "pass" alone (a pass number); a lower-case key after an upper-case word
    for k in ("_", "-", "pass", "PASS", "DATASET_key", "dataset_KEY", "FOO_bar_KEY"):
        assert not names.is_secret_key(k), k
    # an upper-case KEY after an upper-case word that is no kind of key, wherever it is
    for k in ("RUNNER_KEY", "hydra_RUNNER_KEY", "hftokens", "HFTOKENS", "wandbtokens"):
        assert names.is_secret_key(k), k
    r = Redactor()
    assert r.text("_ = 1\npass: 3") == "_ = 1\npass: 3"
    assert r.text("hftokens: [a1, b2]") == f"hftokens: {MASK}"


def test_the_builds_secrets_are_eight_characters_or_more_and_literals_a_tuple():
    from sitegen.redact import build_secrets

    env = {"HF_TOKEN": " 12345678 ", "A_TOKEN": "1234567", "LR": "123456789"}
    assert build_secrets(env) == {"HF_TOKEN": " 12345678 "}
    r = Redactor(literals=[("hf", "abcdefgh")])  # type: ignore[arg-type]
    assert r.literals == (("hf", "abcdefgh"),) and type(r.literals) is tuple


def test_a_transcript_mask_hides_a_user_pattern_without_a_trigger():
    r = Redactor(("corp-[0-9]{6}",), transcripts=True)
    assert r.masked("id corp-123456 done") == (
        "id [REDACTED:user-pattern:1] done",
        ["user-pattern:1"],
    )
    assert Redactor(transcripts=True).masked("nothing here") == ("nothing here", [])


def test_a_flag_named_by_capitals_hides_the_item_after_it():
    # "--X-KEY": an upper-case KEY after an upper-case word (not "KEY" alone)
    r = Redactor()
    assert r.value(None, ["run", "--X-KEY", "v1"]) == ["run", "--X-KEY", MASK]
    assert r.value(None, ["run", "--KEY", "v1"]) == ["run", "--KEY", "v1"]


def test_a_name_with_a_lone_surrogate_escape_is_hashed_not_a_crash():
    # a JSON escape ("\ud800") in a task name: not UTF-8, so shown as U+FFFD, and a secret
    # beside it hashed as any other (a name from an undecodable file name stays as shown)
    r = Redactor()
    got = r.name("api_key=\ud800abcdefgh12345678")
    assert got.startswith("api_key=redacted-") and "\ud800" not in got
    got.encode("utf-8")  # a page can hold it
    assert r.name("a\ud83d\ude00b") == "a\U0001f600b"  # an escaped pair: its character
    assert r.name("t\ud800x") == "t\ufffdx"
    assert r.name("train_\udce9.out") == "train_\ufffde9.out"


V = "my_hf_token_value_2024"  # a value of words joined by "_", with digits: a credential


@pytest.mark.parametrize(
    ("text", "hidden"),
    [
        # a service's name is looked for in the 48 characters before "key", no further
        ("wandb" + " " * 43 + "key is Zk3v9QmWab12cdEF34", True),
        ("wandb" + " " * 44 + "key is Zk3v9QmWab12cdEF34", False),
        ("wandb key is Zk3v9QmWab12cdEF34", True),  # (at the text's start)
        # "API" before the word, a dash glued after it
        ("the API key- Zk3v9QmWab12cdEF34", True),
        # a name glued before the word, read back 48 characters: the whole name decides
        (f"max_token is {V}", False),
        (f"the max_token is {V}", False),
        (f"in that run hf_token was {V}", True),
        ("max_" + "a" * 43 + f"_token was {V}", False),
        ("max_" + "a" * 44 + f"_token was {V}", True),  # ("ax_aaa…_token": a secret's)
        # a name that is no secret's does not end the search
        (f"sort_key was step_0123456789abcdef; token is {V}", True),
        # a credential's word: 16 or more letters and digits; a password's: 6 and a digit
        ("the token is abcdef0123456789", True),
        ("the token is abcdef012345678", False),
        ("password is abc123", True),
        ("password is ab123", False),
        ("password is abcdefgh", False),
        # after a service's name the value may be on the next line
        ("my wandb key\nZk3v9QmWab12cdEF34", True),
    ],
)
def test_prose_names_its_secret_as_far_as_it_reads(text, hidden):
    out = Redactor().text(text)
    assert (MASK in out) is hidden, out


def test_a_long_text_is_read_again_only_around_its_escapes():
    from sitegen.redact.escapes import VIEW_WHOLE, escape_windows

    r = Redactor()
    filler = "x = f(a, b); " * 6000  # (no escape: read once)
    cmd = '{"cmd": "set -e\\necho hunter2xyz9 | docker login --password-stdin"}'
    text = filler + cmd + filler
    assert len(text) > VIEW_WHOLE
    assert r.text(text) == filler + cmd.replace("hunter2xyz9", MASK) + filler
    [(lo, hi)] = escape_windows(text)  # around the one escape, its edges at blanks
    assert 8192 < hi - lo < 8192 + 600 and text[lo - 1] == " " and text[hi] == " "
    assert escape_windows(cmd) == [(0, len(cmd))]  # (a short text: whole)
    # with no blank near it a window's edge stays where it fell; near the text's start or
    # end it stops there; escapes near each other share one window
    bare = "x" * 70000 + "\\n" + "x" * 70000
    assert escape_windows(bare) == [(70000 - 4096, 70002 + 4096)]
    near = "a \\n" + "y " * 40000 + "\\t" + " " * 5000 + "\\r\\n" + "z" * 100
    assert escape_windows(near) == [(0, 4 + 4096 + 1), (4 + 80000 - 4096, len(near))]
    # a value running past a window's edge is hidden to its line's end, not to the edge
    value = "a1" * 5000
    text = filler + f'"x\\npassword: {value} tail\\nnext"'
    assert r.text(text) == filler + f'"x\\npassword: {MASK}\\nnext"'


# Pieces of the shapes that read escapes as breaks, quotes, wrappers, Windows paths, prose
FRAGMENTS = (
    *("password is ", "the token is ", "HF_TOKEN was ", "api_key: ", ": ", "- ", "x", " "),
    *('"', "'", '\\"', "`", "\\n", "\\r\\n", "\\t", "\n", "\\u000a", "\\\\n", "**", "~~", "\\*"),
    *('<span title="a>b">', "</span>", "<code>", "</code>", "&quot;", "&lt;b&gt;", "&lt;/b&gt;"),
    *("echo ", " | docker login --password-stdin", "hunter 22", "hunter22", "rotated_2024_05"),
    *("abcdef0123456789abcdef", "9f8e7d6c5b4a39281706/a1b2c3d4e5f60718", "C:\\new\\table"),
    *("C:\\\\x", MASK),
    *("&apos;", "&#x22;", "&QUOT;", " is the password", " is my pwd", "pw: ", '" + "', "<td>"),
    *("</td>", "<td>password ", 'hun"ter22', "\\r", "password "),
    # (a flag glued after a secret the mask ends: hf_…12-passwd=""d, hf_…12--token ""cd)
    *("hf_ijklmnopqrstuvwxyz12", "-passwd=", "--token ", '""d', '""cd', "x=", "-password="),
    # (a value after set, a login's -p, wandb login or a flag named pw; a quoted password)
    *("set -x HF_TOKEN ", " login -p ", "wandb login ", "--pw ", "password ", "my password "),
    # (a command's own password flag)
    *("mysql -u root -p", "sshpass -p ", "redis-cli -a ", "ssh-keygen -N ", "htpasswd -b f u "),
    # (an element named as a secret)
    *("<password>", "</password>", "<db_auth a='1'>", "</db_auth>"),
    # (npm's token for a registry)
    *("npm config set //r/:_authToken ", "'//r:1/:_authToken' "),
    # (a secret written into a file)
    *(" > ~/.cache/huggingface/token", " >> .netrc", "| tee ~/.pgpass", "echo x"),
    # (a basic-auth call)
    *("HTTPBasicAuth(", '"u", ', "'hunter 22')"),
)


def test_hiding_twice_hides_nothing_more_in_mixes_of_these_shapes():
    import random

    rng = random.Random(7)
    r = Redactor()
    for _ in range(3000):
        text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 12)))
        once = r.text(text)
        assert r.text(once) == once, text
        assert list(r.findings(once)) == [], text


# Shapes that showed a password, each as the redactor now hides it (M: the mask)
M = MASK
PASSWORD_GAPS = [
    # a .netrc inside a JSON string, its line ended by an escaped carriage return
    ('{"cmd": "machine h\\nlogin u\\npassword hunter22\\r"}', f'{{"cmd": "machine h\\nlogin u\\npassword {M}\\r"}}'),
    ("machine h\r\nlogin u\r\npassword hunter22\r\n", f"machine h\r\nlogin u\r\npassword {M}\r\n"),
    # a quote glued inside the password, before a word's character, is part of it
    ('password hunter22"1', f"password {M}"),
    ('machine h login u password hun"ter22 x', f"machine h login u password {M} x"),
    ('password: hunter22"x', f"password: {M}"),
    ('the password is hunter22"1 ok', f"the password is {M} ok"),
    # ... one closing a string the file is written in is not
    ('{"cmd": "x\\npassword hunter22"}', f'{{"cmd": "x\\npassword {M}"}}'),
    # a quoted password in a page's quote entities, by name or number, in either case
    ("password is &apos;hunter 22&apos;", f"password is &apos;{M}&apos;"),
    ("password is &apos;hunter22&apos; ok", f"password is &apos;{M}&apos; ok"),
    ("password is &#x22;hunter 22&#x22;", f"password is &#x22;{M}&#x22;"),
    ("password is &#X22;hunter 22&#X22;", f"password is &#X22;{M}&#X22;"),
    ("password is &#34;hunter 22&#34;", f"password is &#34;{M}&#34;"),
    ("password is &#034;hunter 22&#034;", f"password is &#034;{M}&#034;"),
    ("password is &QUOT;hunter 22&QUOT;.", f"password is &QUOT;{M}&QUOT;."),
    ("password is &#x27;hunter 22&#x27;", f"password is &#x27;{M}&#x27;"),
    ("my token is &apos;abcdef0123456789abcd&apos; ok", f"my token is &apos;{M}&apos; ok"),
    # a password said before its name
    ("hunter22 is the password", f"{M} is the password"),
    ("hunter22 is my password.", f"{M} is my password."),
    ("hunter22 was the old wifi password for the lab", f"{M} was the old wifi password for the lab"),
    ("it is hunter22, is the pwd", f"it is {M}, is the pwd"),
    ('"correct horse" is the passphrase', f'"{M}" is the passphrase'),
    ('"a b c d e f" is the password', f'"{M}" is the password'),  # (six words: a passphrase)
    ("a password; hunter22 is the pwd", f"a password; {M} is the pwd"),  # (the next name)
    ("Xhunter22 is the password", f"{M} is the password"),
    ('"a" the password is hunter22.', f'"a" the password is {M}.'),
    ('the password is "hunter22X " ok', f'the password is "{M} " ok'),  # (blanks at its end aside)
    # a quoted passphrase broken over a line, closed on the next
    ('the password is "correct horse\nbattery staple"', f'the password is "{M}"'),
    ("the password is 'correct horse\r\nbattery staple' ok", f"the password is '{M}' ok"),
    ("the password is \u201ccorrect horse\nbattery\u201d", f"the password is \u201c{M}\u201d"),
    # ... in a Python repr's escaped quotes (no crash where the quote opens)
    ("password is \\'hunter 22\nabc\\' x", f"password is \\'{M}\\' x"),
    # a password's short names in prose (pw, pwd), with a connective
    ("the pwd is hunter22", f"the pwd is {M}"),
    ("pw: hunter22", f"pw: {M}"),
    ("my PW is hunter22", f"my PW is {M}"),
    ("passwd=hunter22", f"passwd={M}"),
    ("the passwd is hunter22", f"the passwd is {M}"),
    # a password in one table cell after its name
    ("<td>password hunter22</td>", f"<td>password {M}</td>"),
    ("<TD class='x'><b>db password</b> <code>hunter22</code></TD>", f"<TD class='x'><b>db password</b> <code>{M}</code></TD>"),
    ("<td>HF_TOKEN abcdef0123456789abcd</td>", f"<td>HF_TOKEN {M}</td>"),
    ("<td>password abc123</td>", f"<td>password {M}</td>"),  # (6 characters: a password's)
    ("<td>HF_TOKEN abcdef0123456789</td>", f"<td>HF_TOKEN {M}</td>"),  # (16: a token's)
    ("<td>password</td><td>hunter22</td>", f"<td>password</td><td>{M}</td>"),
    ("| password | hunter22 |", f"| password | {M} |"),
    # pw and pwd after a line break, a tab or "(", and before their name after a tab
    ("Login details\nuser bob\npwd is Tr0ub4dor", f"Login details\nuser bob\npwd is {M}"),
    ("x\tpwd is hunter22", f"x\tpwd is {M}"),
    ("x\n(pwd is hunter22)", f"x\n(pwd is {M})"),
    ("hunter22 is the\tpwd", f"{M} is the\tpwd"),
    # ... after "=", quoted (a bare value after "=" is code's: pw = torch.randn(4, 4))
    ('pw = "hunter22"', f'pw = "{M}"'),
    ("self.pwd = 'hunter22'", f"self.pwd = '{M}'"),
    # a password before its name, opening a quoted string, an element or emphasis, or the
    # name in markup
    ('{"msg": "hunter22 is the password"}', f'{{"msg": "{M} is the password"}}'),
    ('RuntimeError: {"detail": "Xq7secret19 is the password"}', f'RuntimeError: {{"detail": "{M} is the password"}}'),
    ("'hunter22 is the password'", f"'{M} is the password'"),
    ("<p>hunter22 is the password</p>", f"<p>{M} is the password</p>"),
    ("<code>hunter22</code> is the password", f"<code>{M}</code> is the password"),
    ('{"m": "**hunter22** is the password"}', f'{{"m": "{M} is the password"}}'),
    ("<i>_hunter22_ is the password</i>", f"<i>{M} is the password</i>"),
    ("hunter22 is the **password**", f"{M} is the **password**"),
    ("hunter22 is the `password`", f"{M} is the `password`"),
    ("hunter22 is the <b>password</b>", f"{M} is the <b>password</b>"),
    ("hunter22 is the password again", f"{M} is the password again"),
    # a closing mark after the name may end the value's own emphasis: the value is hidden
    # (also where the mark is the name's: "**password** file" loses a word, not a secret)
    ("*hunter22 is the password* he said", f"{M} is the password* he said"),
    ("hunter22 is the **password** file", f"{M} is the **password** file"),
    # a flag after a log's bracketed prefix is a flag (after a mask it is not: below)
    ("[INFO]--password hunter2x9", f"[INFO]--password {M}"),
    ("[10:00:01]--password=hunter22", f"[10:00:01]--password={M}"),
    (f"{M} --password hunter2x9", f"{M} --password {M}"),  # (not glued to the mask)
    # a value opened by a quote's entity and not closed reads on to the next blank
    ("--password &#x22;hunter22 x", f"--password {M} x"),
    ("--token &#034;hunter22", f"--token {M}"),
    ("x\npassword hunter2x9&apos;", f"x\npassword {M}"),
    ("password hunter22&#x22;1", f"password {M}"),
    # a number with letters that are no unit: a password (123qwe is a common one)
    ("pw: 123qwe", f"pw: {M}"),
    ("wifi pw: 2024Jan", f"wifi pw: {M}"),
    # (a long quoted value: the look back reaches 160 characters)
    ('"correct horse battery staple forever" is the password', f'"{M}" is the password'),
    # a quoted password joined by "+", its quotes as a page's entities: the whole expression
    ("password=&quot;hun&quot; + &quot;ter22&quot; rest", f"password={M}"),
    ("password=&#x22;hun&#x22; + &#x22;ter22&#x22;", f"password={M}"),
    ("password=&#034;hunter22&#034; x", f"password=&#034;{M}&#034; x"),
    ("password=&apos;hunter22&apos; x", f"password=&apos;{M}&apos; x"),
    # a flag's value in those quotes, as the assignment reads them
    ("--token &apos;abc def&apos; x", f"--token {M} x"),
    ("--password=&#034;hunter 22&#034; x", f"--password={M} x"),
    ("--token &#x22;ab cd&#x22; x", f"--token {M} x"),
    # ... ending where the code span it is written in ends
    ("`token = 'hf_' + suffix` hides the whole", f"`token = {M}` hides the whole"),
    # a passphrase in escaped quotes broken by an escaped line break, in a JSON string
    ('{"a": "the password is \\"correct\\nhorse\\""}', f'{{"a": "the password is \\"{M}\\""}}'),
    # a quote kept inside the password, a quote's entity after it, a token's first run only
    ('password is hunter"2"2 ok', f"password is {M} ok"),
    ("password is hunter22.&quot; ok", f"password is {M}&quot; ok"),
    ('the token is "abcdef0123456789abcdef b\nc" ok', f'the token is "{M} b\nc" ok'),
    # a flag's value opened by a quote (or a page's entity for one) and never closed: its
    # first word
    ("--token &quot;hunter22 x", f"--token &quot;{M} x"),
    ('--token "hunter22 x', f'--token "{M} x'),
    ("--token=&quot;hunter22", f"--token=&quot;{M}"),
    ("--password='hunter22 x", f"--password='{M} x"),
    ("--token &#39;hunter22 x", f"--token &#39;{M} x"),
    ('{"cmd": "run --token \\"hunter22 x"}', f'{{"cmd": "run --token \\"{M} x"}}'),
    # ... one a JSON string's escaped quote opens and closes: to the closing \", kept
    ('{"cmd": "run --token \\"abc123\\" --x"}', f'{{"cmd": "run --token \\"{M}\\" --x"}}'),
    ('{"cmd": "run --token \\"correct horse\\" --x"}', f'{{"cmd": "run --token \\"{M}\\" --x"}}'),
    ('{"cmd": "run --password=\\"a\\\\b c\\" --x"}', f'{{"cmd": "run --password=\\"{M}\\" --x"}}'),
    # (one left open: not closed by the next flag's escaped quote, whose value is its own;
    # closed after one escaped line break, a passphrase broken over two lines, and no more)
    ('{"c": "run --token \\"hunter22 x --password \\"Tr0ub4dor x"}',
     f'{{"c": "run --token \\"{M} x --password \\"{M} x"}}'),
    ('{"c": "--token \\"hunter22 --api-key=\\"AbCdEf123456\\" x"}',
     f'{{"c": "--token \\"{M} --api-key=\\"{M}\\" x"}}'),
    ('{"c": "--token \\"abc\\nxyz\\" x"}', f'{{"c": "--token \\"{M}\\" x"}}'),
    ('{"c": "--token \\"abc\\r\\nxyz\\" x"}', f'{{"c": "--token \\"{M}\\" x"}}'),
    ('{"c": "--token \\"abc\\nxyz\\nmore\\" x"}', f'{{"c": "--token \\"{M}\\nxyz\\nmore\\" x"}}'),
    ('{"c": "--token \\"abc\\nxyz and more"}', f'{{"c": "--token \\"{M}\\nxyz and more"}}'),
    # (a dash that starts no flag is the passphrase's)
    ('{"c": "--token \\"correct - horse\\" x"}', f'{{"c": "--token \\"{M}\\" x"}}'),
    ('{"c": "--token \\"Tr0ub4dor -- x\\" y"}', f'{{"c": "--token \\"{M}\\" y"}}'),
    # pwd or pw starting a text; a bare password after "pw =" (no call, no attribute)
    ("pwd is hunter22", f"pwd is {M}"),
    ("pw: hunter22 ok", f"pw: {M} ok"),
    ("pw = hunter22", f"pw = {M}"),
    ("wifi pw = Tr0ub4dor\nnext", f"wifi pw = {M}\nnext"),
    # ... ending where a password's name said with its connective starts, glued or not
    ("pw = hunter22,password is Tr0ub4dor", f"pw = {M},password is {M}"),
    ("pw = Tr0ub4dor-password is hunter22", f"pw = {M}password is {M}"),
    ("pw = hunter22password is wJalrXUtnFMI/K7MDENG/bPxRfiCYEXAMPLEKEY", f"pw = {M}password is {M}"),
    ("pw: hunter22,password is Tr0ub4dor", f"pw: {M},password is {M}"),
    ("pw = hunter22;passwd was Tr0ub4dor ok", f"pw = {M};passwd was {M} ok"),
    ("pw is hunter22,pwd: Tr0ub4dor ok", f"pw is {M},pwd: {M}"),  # (an assignment: to its end)
    ("pw = self.x,password is Tr0ub4dor", f"pw = self.x,password is {M}"),
    ("pw: xpwd123 ok", f"pw: {M} ok"),  # (a name with no connective is the password's)
    # (a short password before the name: still one, its name said after it)
    ("pw: Xk9password is Tr0ub4dor", f"pw: {M}password is {M}"),
    # (each of a password's names ends it: passphrase, pw)
    ("pw = hunter22,passphrase is Tr0ub4dor", f"pw = {M},passphrase is {M}"),
    ("pw = hunter22,pw = Tr0ub4dor", f"pw = {M},pw = {M}"),
    # (a name with no connective after it is the password's: the run, to its blank)
    ("pw = hunter22,password hunter33x", f"pw = {M} hunter33x"),
    # a password before its name in emphasis written with underscores
    ("_hunter22 is the password_ he said", f"{M} is the password_ he said"),
    ("__hunter22 is the password__ he said", f"{M} is the password__ he said"),
    # (emphasis closing before "[" too, but a mask's: a footnote, a link)
    ("_hunter22 is the password_[^1]", f"{M} is the password_[^1]"),
    ("_hunter22 is the password_[1](#fn1) he said", f"{M} is the password_[1](#fn1) he said"),
    # a word glued after a named value's closing quote is the value's
    ('password: "hunter22"y', f"password: {M}"),
    ("api_key='abc'def ok", f"api_key={M}"),
    ("api_key='abc'_def ok", f"api_key={M}"),
    ('{"password": "hunter22"}', f'{{"password": "{M}"}}'),
    # one Markdown cell holding a name and a value
    ("| password hunter22 |", f"| password {M} |"),
    ("| HF_TOKEN abcdef0123456789abcd |", f"| HF_TOKEN {M} |"),
    # a page's end tag ends a shell value, as the tag itself does
    ("export TOKEN=abc123&lt;/b&gt; more text", f"export TOKEN={M}&lt;/b&gt; more text"),
    ("--token abc123&lt;/b&gt; x", f"--token {M}&lt;/b&gt; x"),
    ("--token C:\\new\\table x", f"--token {M} x"),
    # (a quote left open before a Windows path: the path, and the rest of its word)
    ('--token "C:\\x>y z', f'--token "{M} z'),
    # a page's entity before a key ends no query parameter ("&amp;" does)
    ('&lt;/b&gt;-passwd=hunter22"hunter22', f"&lt;/b&gt;-passwd={M}"),
    ("https://h/x?a=1&amp;key=AbCdEf123456 ok", f"https://h/x?a=1&amp;key={M} ok"),
    # ... nor does "&" by number, in either case, with leading zeros (a query's value then
    # ends at a blank, not at the line's end)
    *(
        (f"https://h/x?a=1{amp}{k}=AbCdEf123456 ok", f"https://h/x?a=1{amp}{k}={M} ok")
        for amp in ("&#38;", "&#x26;", "&#X26;", "&#038;", "&#x0026;", "&AMP;")
        for k in ("key", "sig")
    ),
    # (an entity of ten characters before a key is an entity too)
    ('&#0000034;-passwd=hunter22"hunter22', f"&#0000034;-passwd={M}"),
    ("--token C:\\\\x\\u000ax<b>", f"--token {M}<b>"),  # (and what follows it in the word)
    ("&lt;code&gt;--token abc123&lt;/code&gt; x", f"&lt;code&gt;--token {M}&lt;/code&gt; x"),
    # a .netrc line inside a JSON string, at the string's start, ended by an escaped break
    ('{"a": "password hunter22\\r"}', f'{{"a": "password {M}\\r"}}'),
    ('{"a": "password hunter22\\n"}', f'{{"a": "password {M}\\n"}}'),
    # a quoted value after set, ENV, login -p or wandb login, as a flag's quoted value is
    ('set -x HF_TOKEN "hunter22abc"', f"set -x HF_TOKEN {M}"),
    ("set -gx WANDB_API_KEY 'correct horse' x", f"set -gx WANDB_API_KEY {M} x"),
    ('Step 3/9 : ENV HF_TOKEN "hunter22abc"', f"Step 3/9 : ENV HF_TOKEN {M}"),
    ("ENV HF_TOKEN &quot;hunter22abc&quot;", f"ENV HF_TOKEN {M}"),
    ('docker login -u me -p "hunter22abc" ghcr.io', f"docker login -u me -p {M} ghcr.io"),
    ("docker login -u me -p 'correct horse' ghcr.io", f"docker login -u me -p {M} ghcr.io"),
    ('wandb login "hunter22abc"', f"wandb login {M}"),
    ("wandb login --relogin 'hunter22abc' && x", f"wandb login --relogin {M} && x"),
    ('{"cmd": "set -x HF_TOKEN \\"hunter22abc\\""}', f'{{"cmd": "set -x HF_TOKEN \\"{M}\\""}}'),
    ('{"cmd": "wandb login \\"correct horse\\" && x"}', f'{{"cmd": "wandb login \\"{M}\\" && x"}}'),
    # (... one a quote opens and leaves open: its first word)
    ('set -x HF_TOKEN "hunter22abc x', f'set -x HF_TOKEN "{M} x'),
    ('docker login -u me -p "hunter22abc x', f'docker login -u me -p "{M} x'),
    ("wandb login 'hunter22abc x", f"wandb login '{M} x"),
    # a flag named pw alone
    ("app --pw hunter22 --x 1", f"app --pw {M} --x 1"),
    ("app --pw=hunter22", f"app --pw={M}"),
    ("server -pw hunter22 -port 80", f"server -pw {M} -port 80"),
    ('app --PW "correct horse"', f"app --PW {M}"),
    ('["app", "--pw", "hunter22"]', f'["app", "--pw", "{M}"]'),
    ("plink -pw hunter22 host", f"plink -pw {M} host"),
    ("plink -pw 84120937 host", f"plink -pw {M} host"),  # (a PIN: six digits or more)
    ("app --pw 12345678", f"app --pw {M}"),
    ("app --Pw hunter22", f"app --Pw {M}"),
    # a password in quotes with no connective, a word of its look first, more on the line
    ('password "Zk3vQ9mW1x done', f'password "{M}'),
    ('RUN PASSWORD "Zk3vQ9mW1x && echo ok', f'RUN PASSWORD "{M}'),
    ("password 'Zk3vQ9mW1x; echo ok", f"password '{M}"),
    ('password \\"Zk3vQ9mW1x && echo ok', f'password \\"{M}'),
    ('password "Zk3vQ9mW1x horse"', f'password "{M}"'),
    ('passphrase "correct horse battery staple"', f'passphrase "{M}"'),
    ('DB_PASSWORD "Zk3vQ9 mW1x"', f'DB_PASSWORD "{M}"'),
    # Windows' setx in any case, with /M before the name
    ("SETX HF_TOKEN hunter22abc", f"SETX HF_TOKEN {M}"),
    ("Setx HF_TOKEN hunter22abc", f"Setx HF_TOKEN {M}"),
    ("setx /M HF_TOKEN hunter22abc", f"setx /M HF_TOKEN {M}"),
    ("SET GH_AUTH Zq8xW3vK", f"SET GH_AUTH {M}"),
    ("SETX /M GH_AUTH Zq8xW3vK", f"SETX /M GH_AUTH {M}"),
    ("echo Zq8xW3vK | sudo tee /root/.cache/huggingface/token",
     f"echo {M} | sudo tee /root/.cache/huggingface/token"),
    ('wandb login --host "https://w.example.com" KEYabc123', f'wandb login --host "https://w.example.com" {M}'),
    ("wandb login --anonymously KEYabc123zz", f"wandb login --anonymously {M}"),
    # a .netrc password an escaped quote opens or holds (the file has no quoting)
    ('{"netrc": "machine h login u\\npassword Zk3vQ9\\"mW1x"}', f'{{"netrc": "machine h login u\\npassword {M}"}}'),
    ('{"a": "machine a login u password \\"hunter22abc", "b": 1}', f'{{"a": "machine a login u password {M}", "b": 1}}'),
    ("machine a login u password \\'hunter22abc\\' done", f"machine a login u password {M}' done"),
    # Windows' setx, as set is read
    ("setx HF_TOKEN hunter22abc", f"setx HF_TOKEN {M}"),
    ('setx WANDB_API_KEY "correct horse" /M', f"setx WANDB_API_KEY {M} /M"),
    # a named value an escaped quote opens and leaves open ends where a bare value would, or
    # at the quote closing the string it is written in
    ('{"a": "password: \\"hunter22\\nnext words"}', f'{{"a": "password: \\"{M}\\nnext words"}}'),
    ('{"a": "password: \\"hunter22 x", "b": 1}', f'{{"a": "password: \\"{M}", "b": 1}}'),
    ('{"a": "token: \\"Zk3v9QmW\\r\\nnext"}', f'{{"a": "token: \\"{M}\\r\\nnext"}}'),
    # a password in quotes after its name, with no connective, left open too; one word in
    # quotes after "is" with no digit
    ('password "hunter22', f'password "{M}'),
    ('my password "hunter22" leaked in the log', f'my password "{M}" leaked in the log'),
    ("Invalid password 'Tr0ub4dor' for bob", f"Invalid password '{M}' for bob"),
    ('the password is "correct horse', f'the password is "{M}'),
    ("the password is 'correcthorse", f"the password is '{M}"),
    ('the password is "correcthorse" ok', f'the password is "{M}" ok'),
    ("the password is &quot;admin&quot;.", f"the password is &quot;{M}&quot;."),
    ('{"msg": "the password is \\"correcthorse\\""}', f'{{"msg": "the password is \\"{M}\\""}}'),
    # a bare flag value right before an escaped quote: its backslash is the quote's
    ('{"a": "sh -c \\"run --token abc123\\""}', f'{{"a": "sh -c \\"run --token {M}\\""}}'),
    ("{'a': 'sh -c \\'run -p abc123\\' && docker login -p abc123\\''}",
     f"{{'a': 'sh -c \\'run -p abc123\\' && docker login -p {M}\\''}}"),
    ('{"a": "sh -c \\"wandb login abc123\\""}', f'{{"a": "sh -c \\"wandb login {M}\\""}}'),
    # a password given by a command's own flag: mysql's -p glued (mysqldump's, mariadb's),
    # sshpass's -p among its options, redis-cli's -a, ssh-keygen's -N and -P, htpasswd -b
    ("mysql -pHunter22 db", f"mysql -p{M} db"),
    ("mysql -u root -pHunter22 db", f"mysql -u root -p{M} db"),
    ("mysql --password=Hunter22", f"mysql --password={M}"),
    ("/usr/bin/mysqldump -h h -uroot -p'a b' db > x.sql", f"/usr/bin/mysqldump -h h -uroot -p{M} db > x.sql"),
    ("mariadb -e 'select 1' -pHunter22", f"mariadb -e 'select 1' -p{M}"),
    ('{"cmd": "mysql -u root -p\\"Hunter22\\" db"}', f'{{"cmd": "mysql -u root -p\\"{M}\\" db"}}'),
    ("mysql -u root -p'Hunter22 db", f"mysql -u root -p'{M} db"),
    ("sshpass -p Hunter22 ssh h", f"sshpass -p {M} ssh h"),
    ("sshpass -pHunter22 ssh -p 22 h", f"sshpass -p{M} ssh -p 22 h"),
    ("sshpass -e -p 'a b' scp x h:", f"sshpass -e -p {M} scp x h:"),
    ("redis-cli -h h -p 6379 -a Hunter22 ping", f"redis-cli -h h -p 6379 -a {M} ping"),
    ("redis-cli --pass Hunter22 ping", f"redis-cli --pass {M} ping"),
    ("ssh-keygen -t ed25519 -N Hunter22 -f k", f"ssh-keygen -t ed25519 -N {M} -f k"),
    ("ssh-keygen -p -P 'old pw' -N new1pw -f k", f"ssh-keygen -p -P {M} -N {M} -f k"),
    ("htpasswd -b f user Hunter22", f"htpasswd -b f user {M}"),
    ("htpasswd -cbB -C 10 f user Hunter22", f"htpasswd -cbB -C 10 f user {M}"),
    ("htpasswd -nb user Hunter22 > f", f"htpasswd -nb user {M} > f"),
    ('{"cmd": "htpasswd -b f user \\"Hunter22\\""}', f'{{"cmd": "htpasswd -b f user \\"{M}\\""}}'),
    ("htpasswd -b f user &quot;Hunter22&quot;", f"htpasswd -b f user {M}"),
    ("htpasswd -nb user &#x27;Hunter 22&#x27;", f"htpasswd -nb user {M}"),
    ('htpasswd -b f user "Hunter22 and', f'htpasswd -b f user "{M} and'),
    # (a bare value ends its command at ";" or "|", as the shell reads it)
    ("mysql -u root -pHunter22; ls -p x", f"mysql -u root -p{M}; ls -p x"),
    ("mysql -pHunter22|head", f"mysql -p{M}|head"),
    # an XML element named as a secret (a namespace, attributes, blanks around aside)
    ("<password>Hunter22</password>", f"<password>{M}</password>"),
    ("<token>Hunter22</token>", f"<token>{M}</token>"),
    ("<apiKey>Hunter22</apiKey>", f"<apiKey>{M}</apiKey>"),
    ("<db_pass>Hunter22</db_pass>", f"<db_pass>{M}</db_pass>"),
    ("<ns:Password>correct horse</ns:Password>", f"<ns:Password>{M}</ns:Password>"),
    ('<token id="1">Hunter22</token>', f'<token id="1">{M}</token>'),
    ("<secret>\n  Hunter22\n</secret>", f"<secret>\n  {M}\n</secret>"),
    ("<auth>\n  Hunter22\n</auth>", f"<auth>\n  {M}\n</auth>"),
    ('{"xml": "<password>Hunter22</password>"}', f'{{"xml": "<password>{M}</password>"}}'),
    # npm's token set for a registry, its key after the registry's address (an .npmrc line,
    # _authToken=X, was hidden)
    ("npm config set //registry.npmjs.org/:_authToken Hunter22", f"npm config set //registry.npmjs.org/:_authToken {M}"),
    ("npm set //npm.pkg.github.com/:_authToken 'Hunter22' x", f"npm set //npm.pkg.github.com/:_authToken {M} x"),
    ("npm config set '//registry.npmjs.org/:_authToken' Hunter22", f"npm config set '//registry.npmjs.org/:_authToken' {M}"),
    ('{"c": "npm config set //r.example.com:8080/x/:_password \\"aHVudGVy\\""}', f'{{"c": "npm config set //r.example.com:8080/x/:_password \\"{M}\\""}}'),
    ("//registry.npmjs.org/:_authToken=Hunter22", f"//registry.npmjs.org/:_authToken={M}"),
    # a password given by position to a basic-auth call (auth=("u", "X") was hidden)
    ('HTTPBasicAuth("u", "Hunter22")', f'HTTPBasicAuth("u", "{M}")'),
    ("requests.get(url, auth=HTTPDigestAuth(user, 'correct horse'))", f"requests.get(url, auth={M}"),
    ("a = requests.auth.HTTPBasicAuth('u', 'Hunter22')", f"a = requests.auth.HTTPBasicAuth('u', '{M}')"),
    ('httpx.BasicAuth(os.environ["U"], "Hunter22")', f'httpx.BasicAuth(os.environ["U"], "{M}")'),
    ('{"code": "aiohttp.BasicAuth(\\"u\\", \\"Hunter22\\")"}', f'{{"code": "aiohttp.BasicAuth(\\"u\\", \\"{M}\\")"}}'),
    ('requests.get(url, auth=("u", "Hunter22"))', f"requests.get(url, auth={M})"),
    # a secret echo or printf writes into a file that holds one (a token, credentials,
    # .netrc, .pgpass), by a redirection or through tee: what is written, whole
    ("echo Hunter22 > ~/.cache/huggingface/token", f"echo {M} > ~/.cache/huggingface/token"),
    ('echo -n "hf x Hunter22" >> /root/.cache/huggingface/token && ls', f"echo -n {M} >> /root/.cache/huggingface/token && ls"),
    ("echo machine h login u password Hunter22 > ~/.netrc", f"echo {M} > ~/.netrc"),
    ("printf '%s' Hunter22 > token", f"printf '%s' {M} > token"),
    ("echo h:5432:db:u:Hunter22 | tee -a ~/.pgpass; chmod 600 ~/.pgpass", f"echo {M} | tee -a ~/.pgpass; chmod 600 ~/.pgpass"),
    ("echo Hunter22>~/.aws/credentials", f"echo {M}>~/.aws/credentials"),
    ('{"cmd": "echo \\"Hunter22\\" > ~/.cache/huggingface/token"}', f'{{"cmd": "echo {M} > ~/.cache/huggingface/token"}}'),
]  # fmt: skip


# Shapes a first hiding left for a second to find: the whole found at once
HIDDEN_AT_ONCE = [
    # a secret's variable after a word glued before it (a word a mask would then replace)
    ("hf_AbCdEfGhIjKlMnOpQrSt12export HF_TOKEN=Zk3v9QmW1 x", f"{M} HF_TOKEN={M}"),
    # a password before its name, a value after the name (no word going on with the sentence)
    ("hunter22 is the password hf_ijklmnopqrstuvwxyz12", f"{M} is the password {M}"),
    ("x9y8z7w6 is my password abc123 for now", f"{M} is my password abc123 for now"),
    # a longer name, one word by "_", read the same once what follows its "_" is a mask
    (
        "hunter22 is the password_hf_ijklmnopqrstuvwxyz12 x",
        f"hunter22 is the password_{M} x",
    ),
    # a name and value right after a value cut from a longer run
    (
        "pw: hunter22&#x22;pw: &apos;abcdef0123456789abcdef&lt;/b&gt;",
        f"pw: {M}&#x22;pw: &apos;{M}&lt;/b&gt;",
    ),
    # fuzzed mixes where a mask took the quote, tag or entity that ended a value (the text
    # is read again with what was found masked, until nothing more is found)
    # (the second reading's \" left open ends at the quote closing the string it is in)
    ('-password=\\"" + "-password=&#x22;hunter22`\\"</td>&lt;b&gt;\\*', f'-password=\\"{M}\\"</td>&lt;b&gt;\\*'),
    ("echo -password=- C:\\\\x\\\" | docker login --password-stdin", f"echo {M} | docker login --password-stdin"),
    ('--token "HF_TOKEN was <code>HF_TOKEN was "~~HF_TOKEN was \\"&lt;b&gt;', f'--token {M} was \\"&lt;b&gt;'),
    ("&#x22;api_key:  &#x22;**<td>hunter 22&#x22;&quot; is the password<td>", f"&#x22;api_key:  &#x22;{M}"),
    ("- hun\"ter22hunter 22[REDACTED]password is abcdef0123456789abcdefpw: 9f8e7d6c5b4a39281706/a1b2c3d4e5f60718HF_TOKEN was ", f"- hun\"ter22hunter 22{M}password is {M}pw: {M} was "),
]  # fmt: skip


# A secret's name and its value in one cell of a Markdown row of several cells
TABLE_CELLS = [
    ("| password hunter22 | x |", f"| password {M} | x |"),
    ("| x | password hunter22 | y |", f"| x | password {M} | y |"),
    ("| password hunter22 | x |\n|---|---|", f"| password {M} | x |\n|---|---|"),
    ("| `password` **hunter22** | admin |", f"| `password` **{M}** | admin |"),
    ('{"notes": "| password hunter22 | x |\\n| a | b |"}', f'{{"notes": "| password {M} | x |\\n| a | b |"}}'),
    ("| key | value |\n|---|---|\n| password hunter22 | prod db |", f"| key | value |\n|---|---|\n| password {M} | {M} |"),
    ("| DB_PASSWORD Tr0ub4dor | prod |", f"| DB_PASSWORD {M} | {M} |"),
    ("| HF_TOKEN abcdef0123456789abcd | x |", f"| HF_TOKEN {M} | {M} |"),
    # (a cell hidden after it says nothing of the one before: it is read as it was)
    ("| password min_len8 | 30s |", f"| password min_len8 | {M} |"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "want"), TABLE_CELLS)
def test_a_name_and_value_in_one_cell_of_several_are_a_secret(text, want):
    r = Redactor()
    assert r.text(text) == want
    assert r.text(want) == want and list(r.findings(want)) == []


@pytest.mark.parametrize(("text", "want"), HIDDEN_AT_ONCE)
def test_what_a_second_hiding_would_find_is_found_at_once(text, want):
    r = Redactor()
    assert r.text(text) == want
    assert r.text(want) == want and list(r.findings(want)) == []


def test_a_private_host_after_a_password_holding_an_at_sign_is_hidden():
    r = Redactor(transcripts=True)
    text = "x https://svc:Hun@f19156@inference.internal/v1"
    assert r.text(text) == f"x https://svc:{M}@{M}/v1"


@pytest.mark.parametrize(("text", "want"), PASSWORD_GAPS)
def test_each_shape_that_showed_a_password_hides_it_whole(text, want):
    r = Redactor()
    assert r.text(text) == want
    assert r.text(want) == want and list(r.findings(want)) == []


# Look-alikes of those shapes that hold no secret
PASSWORD_LOOKALIKES = [
    # a quoted word after a password's name that says what it is like, not what it is; with
    # no connective, a phrase or a word without a password's look
    'password "mismatch"',
    'password "incorrect" for user bob',
    'the password is "wrong"',
    'the password is "incorrect"',
    'the password was "true"',
    'Enter password "twice" to confirm',
    'ssh: password "authentication" failed',
    "password 'policy' updated",
    'the password "must contain a digit"',
    "password 'is required'",
    'WARNING: password "too short"',
    # a flag named pw before a number or a flag, and bundled options -Pw
    "grep -Pw 'step \\d+' train.log | tail",
    "rg -Pw needle file",
    "perl -pw -e 's/x/y/' f",
    "sdiff -Pw 80 a b",
    "python train.py --pw 0.5 --lr 1e-3",
    "--pw=0.25 --pw 3e-4 --pw true",
    "--pw 100 --pw 1e5 --pw=-1",
    'setx PATH "%PATH%;C:\\x"',
    # a sentence that starts with "Set" (a command's set is lower case or capitals)
    "Set password to something strong.",
    "Set token expiry in settings",
    "Set secret name and value in the UI",
    "['--pw', '0.5']",
    # wandb login's host in quotes
    "wandb login --host 'https://w.example.com'",
    'wandb login --base-url "https://w.example.com"',
    "$ pwd\n/root/project22",  # the shell's pwd printing a folder
    "pwd\n/home/user/work2",
    "cd $(pwd) - abc123",
    "pw: 0.123456",  # (a metric: after pw or pwd a letter too)
    "the pwd is 12345678",
    '  password reset "ok"',
    "config.yaml is the password file",  # (a word after the name goes on the sentence)
    "secrets_v2.yaml is the password file",
    "hunter22 is the password-protected one",
    "abc is the password",  # (a password's look: 6 or more characters, a digit)
    "step 100 is the password",
    "/etc/pw22 is the pwd",  # (a place)
    '"not set" is the password',
    "<td>password reset</td>",
    "<td>password 12345678</td>",
    "<td>token abc123def</td>",  # (a token's look: 16 or more)
    "<td>HF_TOKEN abcdef012345678</td>",
    "<td>password abc12</td>",
    '"a b c d e f g" is the password',  # (seven words: a sentence)
    "the password is Xylophones",  # (a password's word holds a digit)
    # a number after pw, with an exponent or a unit, or two joined by "/": a metric's
    "step 5 pw: 3.4e-05 loss: 0.1",
    "lr: 1e-4 pw: 2.5e-3 kl: 0.01",
    "step 10 | pw: 12.3ms | loss 0.5",
    "GPU0 pw: 250W/300W",
    "pw: 3.4e-05",
    *("pw: 12.34µs", "pw: 12.34μs", "pw: 3.25it/s", "pw: 1.5GiB", "pw: 40.5%", "pw: 1.234GHz"),
    *("GPU0 pw: 350.5mW", "pw: 1.25min", "pw: 12.34TB", "pw: 123.4Mb/s", "pw: 1234.5fps"),
    "pwd is 10it/s",
    "pw: 12.5A",  # (a current, a temperature: a number with a unit from the list is a metric)
    "pw: 123456C",
    # code: a bare value after "pw =" or "pwd ="
    "pw = torch.randn(4, 4)",
    "self.pw = nn.Linear(d2, d2)",
    "pw = pwm_duty(ch2)",
    "pw = hashlib.sha256(x)",
    "<td>password ab&amp;12</td>",  # (as shown, ab&12: no password's look)
    # an apostrophe on the next line closes no quote left open
    "password is 'not set\nthe user's name is bob",
    # code and prose beside those shapes
    "pw = conv(x2)",
    "pw = self.layer2",
    "pw = x[12]",
    "pw = weights[12]",
    "pw = {k:v2}",
    "pw = 12345678",
    "pwd is /home/bob2",
    "| password reset flow |",
    "| password |",
    "| Token | Reward |",
    "| password abc12 |",
    "| password redacted-3f2a9c |",  # (a name's mask)
    # (a row of more cells: a setting's name, then whether it is on or how much)
    "| Password 2fa_enabled | yes |",
    "| password rotation90d | on |",
    "| password length12 | 8 |",
    "| Password 2fa_enabled | off |\n|---|---|",
    "| Token budget 4096 | x |",
    "| API key v2 | x |",
    # (a .netrc line in a JSON string saying "is" or "was" and no more)
    '{"a": "password is\\n"}',
    '{"a": "password was\\r"}',
    '{"a": "password reset"}',
    "--token &quot;&quot; x",
    '--token "" x',
    '--token " x',
    "export X=1 &lt; 2",
    # pw as a name's part, a metric's, or glued after a word: no flag named pw
    *("run --pw-ratio 0.5 --pw_scale 2", "pw_ratio: 0.5", "kl-pw 0.5", "loss/pw 0.25"),
    # a value set from a variable, or a quoted setting that is no secret's
    'set -gx PATH "$HOME/bin" $PATH; ENV LANG "C.UTF-8"; set -l name \'bob\'',
    # a password's state in quotes, a word in code or emphasis, a quote on the next line
    *("password 'expired'", 'the password is "Expired"', 'password "not set"'),
    *("the password is `secret`", "my password *hunter* x", 'Enter password\n"hello" he said'),
    # -p, -a, -N after other commands (a port, a path, a flag of their own); mysql's -p
    # alone asks for the password, the word after it is the database; an empty passphrase
    *("ssh -p 22 h", "mkdir -p x/y", "python -p x", "pip install -a x", "tar -N 2024 -c x"),
    *("mysql -u root -p db", "mysql -P 3306 -h h", "sshpass -f pw ssh -p 22 h"),
    *("sshpass -e ssh -p 22 h", "ssh-keygen -N '' -f k", 'ssh-keygen -N "" -f k'),
    *("htpasswd -c f user", "htpasswd -B f user", "mysql -h h; ls -p x", "my_mysql -pX1"),
    # an element named as no secret, or holding elements, or nothing
    *("<max_tokens>4096</max_tokens>", "<key>sort</key>", "<td>hunter22</td>"),
    *("<credentials><user>bob</user></credentials>", "<password></password>"),
    "<tokenizer>bpe</tokenizer>",
    # npm's settings for a registry that are no secret, a switch after a secret's name
    *(
        "npm config set //registry.npmjs.org/:always-auth true",
        "npm config set registry https://r/",
    ),
    # a variable written into a token's file; words written into other files
    *('echo "$HF_TOKEN" > ~/.cache/huggingface/token', "echo ${HF_TOKEN} > token"),
    *("echo hello > tokens.txt", "echo x > token.json", "echo done > out.log", "echo > token"),
    # a basic-auth call's password from a variable, or none
    *("HTTPBasicAuth(u, p)", 'BasicAuth("u", "")', 'HTTPBasicAuth(d["u"], d["p"])'),
    "npm config set //registry.npmjs.org/:email me@example.com",
]


# A flag glued after a secret, once the secret is a mask, is no flag: hiding twice finds no
# more than hiding once did
@pytest.mark.parametrize(
    "text",
    [
        'hf_ijklmnopqrstuvwxyz12-passwd=""d',
        'hf_ijklmnopqrstuvwxyz12--token ""cd',
        'x=hf_ijklmnopqrstuvwxyz12-password=""d',
        'hf_ijklmnopqrstuvwxyz12--token "ab"cd',
        # (a .netrc line reads no further through a mask than through what it hid)
        "password x=C:\\new\\table~~<td>x",
        # (a page's quote entity in capitals before a key is no query's ";")
        "&QUOT;hf_ijklmnopqrstuvwxyz12-password=<td>password </td>x",
        # (a mask after a quote opens a quoted word, as what it hid did)
        'password --token "C:\\new\\table',
        "x\npassword --token 'hunter22",
    ],
)
def test_a_flag_or_netrc_line_after_a_mask_hides_nothing_more(text):
    r = Redactor()
    once = r.text(text)
    assert MASK in once and r.text(once) == once and list(r.findings(once)) == []
    # a transcript's masks name their kind, some long (the look back for the mask's "[")
    masked = r.masked(text)[0]
    assert r.masked(masked)[0] == masked


@pytest.mark.parametrize(
    "text",
    [
        "[host=[REDACTED]]--password hunter2x9",
        "see [REDACTED] and ]--password hunter2x9",
        "[REDACTED]x]--password hunter2x9",
    ],
)
def test_a_flag_after_a_bracket_that_ends_no_mask_is_a_flag(text):
    assert Redactor().text(text).endswith(f"--password {MASK}")


@pytest.mark.parametrize("text", PASSWORD_LOOKALIKES)
def test_lookalikes_of_those_shapes_stay_shown(text):
    assert Redactor().text(text) == text


# Words hidden on purpose (docs/redaction.md): telling them from a password would show some
@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("pw = layer4", f"pw = {M}"),  # (a pointwise layer's name, read as a password)
        ("pw = sha256", f"pw = {M}"),
        ("password expired", f"password {M}"),  # (a .netrc line's shape)
        ('{"event": "password expired\\n"}', f'{{"event": "password {M}\\n"}}'),
        ("| password length12 |", f"| password {M} |"),
        ("<td>Password 2fa_enabled</td>", f"<td>Password {M}</td>"),
    ],
)
def test_words_that_could_be_a_password_are_hidden(text, want):
    assert Redactor().text(text) == want


def test_a_run_of_wandb_login_flags_is_read_once():
    """``wandb login --host --host … "``: each flag is read one way (a value after --host, or
    a flag of its own), not both, which would try 2**n readings before giving up. Run in a
    process of its own, given seconds: a linear reading takes milliseconds."""
    import subprocess
    import sys

    code = (
        "from sitegen.redact import Redactor\n"
        "text = 'wandb login' + ' --host' * 40 + ' \"'\n"
        "assert Redactor().text(text) == text\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30)
