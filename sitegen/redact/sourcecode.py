"""Rules for a secret in source text or a config file: an XML element named as a secret
(``<password>X</password>``), a password given by position to a basic-auth call
(``HTTPBasicAuth("u", "X")``).
"""

from __future__ import annotations

import re

from sitegen.redact.names import is_secret_key
from sitegen.redact.rule import Rule, regex_rule

# An element's name as the secret's: <password>, <apiKey>, <db:token> (its namespace aside)
_ELEMENT_NAME_RE = re.compile(r"(?:[\w.\-]*+:)?([A-Za-z][\w.\-]*+)")


def _secret_element(m: re.Match) -> bool:
    name = _ELEMENT_NAME_RE.fullmatch(m.group("tag"))
    return name is not None and is_secret_key(name.group(1))


SOURCE_RULES: tuple[Rule, ...] = (
    # <password>X</password>, <token>X</token>, <apiKey>X</apiKey> (attributes aside; blanks
    # around the value, a line break too, are not its)
    regex_rule(
        "secret-element",
        r"<(?P<tag>[A-Za-z][\w.\-:]*+)(?:[ \t][^<>\n]*+)?>[ \t\r\n]*+"
        r"(?P<s>[^<\s]++(?:[ \t]++[^<\s]++)*+)[ \t\r\n]*+</(?P=tag)>",
        keep=_secret_element,
    ),
    # requests' HTTPBasicAuth("u", "X") (HTTPDigestAuth, aiohttp's and httpx's BasicAuth,
    # DigestAuth): the second argument, a quoted literal (a variable there shows nothing;
    # password="X" is named)
    regex_rule(
        "basic-auth-password",
        r"(?:Basic|Digest)Auth\([ \t]*[^,()\n]{1,200}?,[ \t]*"
        r"b?(?P<q>\\?[\"'])(?P<s>(?:(?!(?P=q))[^\n])++)(?P=q)",
    ),
)
