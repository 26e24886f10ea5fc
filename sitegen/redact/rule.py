"""One rule of the redactor: a kind of secret and where it is in a text, and the ways to make
one (a regex, a list of known values, a user's pattern).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import msgspec
from ahocorasick_rs import AhoCorasick

from sitegen.redact.values import MASK, is_masked

Spans = Callable[[str], Iterator[tuple[int, int]]]


class Rule(msgspec.Struct, frozen=True):
    """One kind of secret: ``spans(text)`` yields where it is."""

    kind: str
    spans: Spans


def regex_rule(kind: str, pattern: str, keep: Callable[[re.Match], bool] | None = None) -> Rule:
    """A rule from a regex: the secret is the group ``s`` if the pattern has one, else the match."""
    rx = re.compile(pattern)
    group = "s" if "s" in rx.groupindex else 0

    def spans(text: str) -> Iterator[tuple[int, int]]:
        for m in rx.finditer(text):
            start, end = m.span(group)
            if start < 0 or end <= start or is_masked(m.group(group)):
                continue
            if keep is not None and not keep(m):
                continue
            yield start, end

    return Rule(kind, spans)


def literal_rule(kind: str, values: tuple[str, ...]) -> Rule:
    """Every occurrence of one of ``values`` (a trial's own secrets, known by their names in
    its config or in the build's environment), whatever it looks like.

    Every occurrence, a word of prose or part of a longer word too, not only where the value
    stands as one (after "=", ":", a quote or a flag): an agent that says its password in a
    sentence ("I will try correcthorse") says the secret, and nothing tells that sentence from
    one using a plain word apart. A common word hidden by mistake costs the reader a word; a
    secret shown costs a rotation. (Values shorter than 8 characters are never literals.)"""
    ac = AhoCorasick(list(values))

    def spans(text: str) -> Iterator[tuple[int, int]]:
        try:
            found = ac.find_matches_as_indexes(text, overlapping=True)
        except UnicodeEncodeError:  # a lone surrogate: one value at a time
            found = [
                (i, m.start(), m.end())
                for i, v in enumerate(values)
                for m in re.finditer(re.escape(v), text)
            ]
        for _, start, end in found:
            yield start, end

    return Rule(kind, spans)


def user_rule(n: int, pattern: str) -> Rule:
    """The user's ``n``-th pattern (1-based), compiled alone so it cannot break the others."""
    rx = re.compile(pattern)

    def spans(text: str) -> Iterator[tuple[int, int]]:
        for m in rx.finditer(text):
            if m.end() > m.start() and m.group(0) != MASK:
                yield m.span()

    return Rule(f"user-pattern:{n}", spans)
