"""A command's own password flag (sitegen/redact/programs.py) read as bash reads its line:
the words before the password and the password itself are the shell's words, quoted
parts glued (plain, in a JSON string's escaped quotes, in a page's quote entities), and a
";", "|" or "&&" outside quotes ends the command, its next one shown."""

from __future__ import annotations

import pytest

from sitegen.redact import MASK, Redactor

M = MASK


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # htpasswd's file or user word quoted: one word, the password after them found
        (
            '{"cmd": "htpasswd -b \\"f\\" u \\"Hunter22\\""}',
            f'{{"cmd": "htpasswd -b \\"f\\" u \\"{M}\\""}}',
        ),
        ("htpasswd -b f &quot;u&quot; Hunter22", f"htpasswd -b f &quot;u&quot; {M}"),
        ('htpasswd -b "my file" u Hunter22', f'htpasswd -b "my file" u {M}'),
        ('{"cmd": "htpasswd -nb \\"u\\" Hunter22"}', f'{{"cmd": "htpasswd -nb \\"u\\" {M}"}}'),
        ('htpasswd -b a"b c"d u Hunter22', f'htpasswd -b a"b c"d u {M}'),
        ("htpasswd -b 'a;b'c u Hunter22", f"htpasswd -b 'a;b'c u {M}"),
        ("htpasswd -nb &#x27;u v&#x27; Hunter22", f"htpasswd -nb &#x27;u v&#x27; {M}"),
        ("htpasswd -b f\\ g u Hunter22", f"htpasswd -b f\\ g u {M}"),
        ('{"cmd": "htpasswd -b f\\\\ g u Hunter22"}', f'{{"cmd": "htpasswd -b f\\\\ g u {M}"}}'),
        ('htpasswd -b "a\\"b" u Hunter22', f'htpasswd -b "a\\"b" u {M}'),
        (
            '{"cmd": "htpasswd -b \\"a\\\\\\"b\\" u Hunter22"}',
            f'{{"cmd": "htpasswd -b \\"a\\\\\\"b\\" u {M}"}}',
        ),
        (
            "htpasswd -b &quot;a\\&quot;b&quot; u Hunter22",
            f"htpasswd -b &quot;a\\&quot;b&quot; u {M}",
        ),
        ("htpasswd -b $HOME/f ${U} Hunter22", f"htpasswd -b $HOME/f ${{U}} {M}"),
        # a password of an empty quoted part and a word glued after it, in JSON
        ('{"cmd": "htpasswd -b f u \\"\\"Hunter22"}', f'{{"cmd": "htpasswd -b f u \\"\\"{M}"}}'),
        # a part glued after a mid-word quote is the password's (bash's argv: -pabc;de)
        ('mysql -pab"c;d"e', f"mysql -p{M}"),
        ('mysql -u root -pab"c;d"e db; ls', f"mysql -u root -p{M} db; ls"),
        ("ssh-keygen -N ab'c;d'e -f k", f"ssh-keygen -N {M} -f k"),
        ('redis-cli -a ab"c|d"e ping', f"redis-cli -a {M} ping"),
        ('sshpass -p ab"c&&d"e ssh h', f"sshpass -p {M} ssh h"),
        ('htpasswd -b f u ab"c;d"e', f"htpasswd -b f u {M}"),
        ("mysql -pab&quot;c;d&quot;e db", f"mysql -p{M} db"),
        ('{"cmd": "mysql -pab\\"c;d\\"e db"}', f'{{"cmd": "mysql -p{M} db"}}'),
        # ... and after JSON's escaped quotes, the quotes kept; the next flag read past them
        ('{"cmd": "sshpass -p \\"ab\\"cd ssh h"}', f'{{"cmd": "sshpass -p \\"{M}\\"{M} ssh h"}}'),
        (
            '{"cmd": "ssh-keygen -P \\"ab\\" -N \\"cd\\""}',
            f'{{"cmd": "ssh-keygen -P \\"{M}\\" -N \\"{M}\\""}}',
        ),
        # a page's quote entity before the flag ends no command
        ("mysql -u &#x27;root&#x27; -pHunter22 db", f"mysql -u &#x27;root&#x27; -p{M} db"),
        ("redis-cli -h &quot;h&quot; -a Hunter22", f"redis-cli -h &quot;h&quot; -a {M}"),
        # JSON shown in a page: JSON's escaped backslash, then a page's entity, is the word's
        (
            "{&quot;cmd&quot;: &quot;sshpass -p Pass\\\\&amp;word ssh h&quot;}",
            f"{{&quot;cmd&quot;: &quot;sshpass -p {M} ssh h&quot;}}",
        ),
        ("mysql -uroot -pPass\\\\&gt;word db", f"mysql -uroot -p{M} db"),
        # the doubled quote YAML's single-quoted strings, CSV and SQL write for one: which
        # it is cannot be told, so a separator after it ends nothing
        ("run: 'sshpass -p ''Pa;ssword'' ssh h'", f"run: 'sshpass -p {M}'' ssh h'"),
        ('"mysql -p""Pa;ssword"" db",x', f'"mysql -p{M}"" db",x'),
        # bash's ANSI-C quotes, a quote escaped in them
        ("ssh-keygen -N $'it\\'s;Hunter22' -f k", f"ssh-keygen -N {M} -f k"),
        ("htpasswd -nb $'u\\'v' Hunter22", f"htpasswd -nb $'u\\'v' {M}"),
    ],
)
def test_a_commands_password_is_read_as_the_shells_word(text, shown):
    assert Redactor().text(text) == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # a separator after a quoted part ends the command: the next one is shown
        ('htpasswd -b f u "a"b;echo x', f"htpasswd -b f u {M};echo x"),
        ("mysql -p'a;b'c|head", f"mysql -p{M}|head"),
        ("redis-cli -a &quot;a&quot;b&amp;&amp;echo x", f"redis-cli -a {M}&amp;&amp;echo x"),
        ("mysql -pHunter22&amp;&amp;echo x", f"mysql -p{M}&amp;&amp;echo x"),
        ("sshpass -p ${PW:-a;b};echo x", f"sshpass -p {M};echo x"),
        ('{"cmd": "sshpass -p \\"a\\"b;echo x"}', f'{{"cmd": "sshpass -p \\"{M}\\"{M};echo x"}}'),
        # after a ";" the next command's flags are its own, not ssh-keygen's
        ("ssh-keygen -N A;scp -P 2222 f h:", f"ssh-keygen -N {M};scp -P 2222 f h:"),
        ("mysql -pHunter22;ls -p22", f"mysql -p{M};ls -p22"),
        # a page's entity that closes a JSON string opens no quoted part: what follows stays
        (
            "{&quot;cmd&quot;: &quot;mysql -u root -pHunter22&quot;, &quot;exit_code&quot;: 0}",
            f"{{&quot;cmd&quot;: &quot;mysql -u root -p{M}&quot;, &quot;exit_code&quot;: 0}}",
        ),
        (
            "He ran &quot;sshpass -p Hunter22&quot; and then &quot;ls -la /srv&quot; twice.",
            f"He ran &quot;sshpass -p {M}&quot; and then &quot;ls -la /srv&quot; twice.",
        ),
    ],
)
def test_the_next_command_after_a_password_stays_shown(text, shown):
    assert Redactor().text(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        # what a quote or an expansion holds is the password's, whatever separator it holds
        "mysql -u root -p${PW:-Hun;ter22}x",
        "sshpass -p $(printf${IFS}Hun;ter22) ssh h",
        "redis-cli -a `printf Hun;printf ter22`",
        "htpasswd -b f u it&apos;s;Hunter22",  # (a quote entity left open: hidden whole)
        'htpasswd -b f u "Hun;ter22',
        'mysql -pab"Hun;ter22',
    ],
)
def test_a_separator_a_quote_or_an_expansion_holds_ends_nothing(text):
    assert "ter22" not in Redactor().text(text)


def test_hiding_a_commands_password_twice_hides_nothing_more():
    r = Redactor()
    for text in ('{"cmd": "sshpass -p \\"a\\"b;echo x"}', 'htpasswd -b f u "a"b;echo x'):
        once = r.text(text)
        assert r.text(once) == once
