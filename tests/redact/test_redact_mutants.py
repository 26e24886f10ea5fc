"""Cases the mutation run of the redaction (scripts/mutation.py) showed no other test makes:
each pins a branch or a bound of sitegen/redact/ whose change the other tests let pass."""

from __future__ import annotations

import pytest

from sitegen.redact import MASK, Redactor, names
from sitegen.redact.escapes import VIEW_WHOLE, escape_windows

ESC = "\\n"  # an escaped line break, as a JSON string holds it


def test_a_window_edge_moves_out_to_a_blank_only_within_its_reach():
    # a blank at the text's first character, within reach before the edge: just after it
    assert escape_windows(" " + "x" * 4199 + ESC + "x" * 70000)[0][0] == 1
    # no blank, the edge one character in: it stays there
    assert escape_windows("x" * 4097 + ESC + "x" * 70000)[0][0] == 1
    # a blank further back than the reach (256): the edge stays where it fell
    assert escape_windows("a " + "x" * 70000 + ESC + "x" * 70000)[0][0] == 70002 - 4096
    far = "x" * 70000 + ESC + "x" * (4096 + 300) + " " + "x" * 10
    assert escape_windows(far) == [(70000 - 4096, 70002 + 4096)]
    # blanks just outside both edges, among letters of either case: the edges are at them
    text = "X" * 60000 + " " + "X" * (9 + 4096) + ESC + "X" * (4096 + 9) + " " + "X" * 70000
    assert escape_windows(text) == [(60001, 60001 + 9 + 4096 + 2 + 4096 + 9)]


def test_windows_of_escapes_that_touch_or_overlap_are_one_and_a_path_ends_none():
    # (a text of VIEW_WHOLE characters is still read whole)
    whole = "x" * 30000 + ESC + "x" * (VIEW_WHOLE - 30002)
    assert escape_windows(whole) == [(0, VIEW_WHOLE)]
    x = "x" * 70000
    # one escape's window ending just where the next one's starts: one window
    assert escape_windows(x + ESC + "x" * 8192 + ESC + x) == [(70000 - 4096, 70004 + 8192 + 4096)]
    # two escapes close together: one window from the first's reach to the second's
    assert escape_windows(x + ESC + "x" * 100 + ESC + x) == [(70000 - 4096, 70104 + 4096)]
    # a Windows path (no escape) before an escape: the escape still has its window
    text = "C:\\new " + x + ESC + "x" * 10
    assert escape_windows(text) == [(7 + 70000 - 4096, len(text))]


def test_a_shell_value_ends_at_its_operator_whatever_letters_it_holds():
    # (only a quote left open carries a value past the operator: an odd count of "X" is none)
    got = Redactor().text("export DB_PASSWORD=aXb9 && python t.py")
    assert got == f"export DB_PASSWORD={MASK} && python t.py"


def test_a_shell_operator_on_a_later_line_ends_no_value():
    got = Redactor().text("HF_TOKEN=abc123\necho hi && ls")
    assert got == f"HF_TOKEN={MASK}\necho hi && ls"


def test_a_flag_glued_after_a_mask_stays_shown_after_a_bracketed_prefix_too():
    # (the mask is the "[" nearest before the flag, not the log's "[INFO]" before it)
    r = Redactor()
    once = r.text('[INFO] hf_ijklmnopqrstuvwxyz12--token ""cd')
    assert once == f'[INFO] {MASK}--token ""cd'
    assert r.text(once) == once and list(r.findings(once)) == []


def test_a_bytes_value_hides_what_its_quotes_hold_not_the_rest_of_its_line():
    r = Redactor()
    got = r.text("headers={b'x-api-key': b'abcdef123456', b'a': b'x'}")
    assert got == f"headers={{b'x-api-key': b'{MASK}', b'a': b'x'}}"
    # ... inside a JSON string, its quotes escaped
    q = "\\'"
    got = r.text(f'{{"h": "{{b{q}x-api-key{q}: b{q}abcdef123456{q}, b{q}a{q}: b{q}x{q}}}"}}')
    assert got == f'{{"h": "{{b{q}x-api-key{q}: b{q}{MASK}{q}, b{q}a{q}: b{q}x{q}}}"}}'


# (is_secret_key remembers its answers: the mutation run imports and tests the module once
# before it switches a mutant on, so a test of names asks with the memory cleared)


def test_pass_as_the_last_of_many_words_names_a_secret_and_in_the_middle_none():
    names.is_secret_key.cache_clear()
    assert names.is_secret_key("MY_SMTP_PASS")
    assert not names.is_secret_key("use_pass_rate")
    r = Redactor()
    assert (
        r.text("MY_SMTP_PASS=zz9q\nuse_pass_rate=0.5") == f"MY_SMTP_PASS={MASK}\nuse_pass_rate=0.5"
    )


def test_an_upper_case_key_alone_names_no_secret():
    # (an upper-case KEY is a secret after a word naming what it is a key of; alone, nothing)
    names.is_secret_key.cache_clear()
    assert not names.is_secret_key("KEY")
    assert Redactor().text("KEY: a1b2") == "KEY: a1b2"


def test_a_settings_state_in_code_or_bold_keeps_the_cell_before_it_shown():
    # (| Password 2fa_enabled | yes | names a setting and says it is on, in markup too)
    r = Redactor()
    for text in ("| Password 2fa_enabled | `yes` |", "| password rotation90d | **on** |"):
        assert r.text(text) == text


def test_a_name_and_a_word_in_one_stage_of_a_shells_pipes_is_no_tables_cell():
    # (only a row of a table, or its header, holds a name and its value in one cell)
    text = "cat a | grep passwd shadow2 | wc -l"
    assert Redactor().text(text) == text


def test_a_cell_holding_a_name_and_a_word_is_read_with_the_cell_after_it_only():
    r = Redactor()
    # a setting's state after it: a setting, whatever the cell before or the rest hold
    text = "| Password 2fa_enabled | yes | note |"
    assert r.text(text) == text
    # a state before it says nothing of it: a password
    got = r.text("| yes | password hunter22 | b |")
    assert got == f"| yes | password {MASK} | b |"
    # a setting skipped, the cells after it are still read
    got = r.text("| Password 2fa_enabled | yes | password hunter22 | x |")
    assert got == f"| Password 2fa_enabled | yes | password {MASK} | x |"


def test_a_netrc_password_holding_a_mask_is_hidden_already():
    # (what another rule hid, the character that ended the value there gone with it: a
    # second pass over redacted text finds no more)
    r = Redactor()
    for text in (f"password ab{MASK}cd", f'{{"a": "password ab{MASK}\\n"}}'):
        assert r.text(text) == text and list(r.findings(text)) == []


def test_a_password_cut_before_a_second_name_drops_only_the_comma_or_semicolon():
    r = Redactor()
    for sep in ",;":
        got = r.text(f"pw = abcd12X{sep}password is hunter33")
        assert got == f"pw = {MASK}{sep}password is {MASK}"
    # (one before the password is its own: hidden with it)
    assert r.text("pw = ,abcd12X;password is hunter33") == f"pw = {MASK};password is {MASK}"


def test_a_quote_left_open_is_closed_on_the_next_line_only_by_a_quote_that_closes_it():
    r = Redactor()
    # a "'" after a word's character and before another is an apostrophe
    assert r.text("password: 'hunter22\na x's") == f"password: {MASK}\na x's"
    # an escaped quote left open is closed only by the same escaped quote
    got = r.text("x = 'password: \\'hunter22\nnext words'")
    assert got == f"x = 'password: \\'{MASK}\nnext words'"


def test_a_password_cut_before_a_name_said_one_character_in():
    # (a bare password cut before a name said after it is one, however short)
    r = Redactor()
    assert r.text("my pw is Xpassword is hunter22") == f"my pw is {MASK}password is {MASK}"
    got = r.text("the password was 7password: hunter22")
    assert got == f"the password was {MASK}password: {MASK}"


def test_commands_after_an_htpasswd_without_its_password_are_read_too():
    text = "htpasswd -c f user && mysql -u root -pHunter22 db"
    assert Redactor().text(text) == f"htpasswd -c f user && mysql -u root -p{MASK} db"


def test_a_command_far_into_a_text_has_its_flags_read():
    pad = "x" * 600 + " "
    assert (
        Redactor().text(pad + "mysql -u root -pHunter22 db") == pad + f"mysql -u root -p{MASK} db"
    )


def test_a_commands_flags_are_read_within_its_reach_of_512_characters():
    # the 73rd flag's value ends 512 characters after the command's name (8, then 7 a flag):
    # the last one read; the next starts past the reach (a bound on the work a line costs),
    # and the text read again, its masks longer than the values, reaches no further
    values = ["bbbb"] + [f"q{i:02d}" for i in range(80)]
    shown = Redactor().text("ssh-keygen" + "".join(f" -N {v}" for v in values))
    assert shown.count(MASK) == 73 and f"-N {MASK} -N q72 -N q73" in shown


def test_a_bare_password_ends_at_a_command_separator_within_it_only():
    r = Redactor()
    # whatever letter it starts with
    assert r.text("mysql -pXq7v9;ls") == f"mysql -p{MASK};ls"
    # a separator after the value ends nothing in it: the words between stay shown
    assert r.text("mysql -u root -pHunter22 db; ls") == f"mysql -u root -p{MASK} db; ls"


def test_a_bare_password_ends_at_a_double_ampersand_and_htpasswds_at_a_separator_too():
    r = Redactor()
    assert r.text("mysql -pHunter22&&ls") == f"mysql -p{MASK}&&ls"
    assert r.text("htpasswd -b f user Hunter22;ls") == f"htpasswd -b f user {MASK};ls"
    assert r.text("htpasswd -nb user Hunter22|tee f") == f"htpasswd -nb user {MASK}|tee f"
    assert r.text("htpasswd -b f user 'a;b'") == f"htpasswd -b f user {MASK}"


@pytest.mark.parametrize(
    "text",
    [
        '{"cmd": "mysql -u root -p\\"Hun&&ter22\\" db"}',  # JSON's escaped quotes
        '{"cmd": "sshpass -p \\"Hun;ter22\\" ssh host"}',
        'mysql -u root -p"Hun&&ter22',  # a quote never closed
        "redis-cli -a 'Hun|ter22",
        "ssh-keygen -N &quot;Hun&&ter22",
        "htpasswd -b f user ab\\;Hunter22",  # an escaped separator is the value's
        "htpasswd -nb user Hun\\|ter22",
        "htpasswd -b f user \\;Hunter22",
        "htpasswd -b f user it&apos;s;Hunter22&apos;",  # an entity's ";" is the value's
        "htpasswd -nb user a&#x22;b;Hunter22&#x22;",
        "htpasswd -nb user Pa\\&amp;\\&amp;ss22",
        "mysql -u root -pit&#039;s;Hunter22&#039;",
        "htpasswd -b f u ${PW:-Hun;ter22}",  # an expansion holds it
        'htpasswd -b f user "Hun;ter22',  # a quote left open holds it
        "mysql -u root -p${PW:-Hun&&ter22}",
        "sshpass -p $(printf${IFS}Hun&&printf${IFS}ter22) ssh h",
        "redis-cli -a `printf${IFS}Hun;printf${IFS}ter22`",
    ],
)
def test_a_separator_a_quote_or_a_backslash_gives_the_password_ends_nothing(text):
    assert "ter22" not in Redactor().text(text) and "ss22" not in Redactor().text(text)
