"""The YAML config dump at a job's start (formats.md §2): collected, parsed, redacted."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

from sitegen.read.lines import TQDM_TAIL_RE, Line
from sitegen.read.logstate import ParserCore
from sitegen.read.markers import CONFIG_ROOTS, YAML_TOP_RE

if TYPE_CHECKING:
    import yaml

# PyYAML is imported where a dump is read (~10 ms): a rebuild that reads on from where a
# grown log stopped meets no config dump, and pages show configs without it
# (present/yamltext.py).


class ConfigDump(ParserCore):
    """The parser's config-dump reader (a part of :class:`~sitegen.read.logparse.LogParser`)."""

    # -- config ------------------------------------------------------------------
    def _start_config(self, ln: Line) -> bool:
        """Start collecting the dump at ``ln`` if it is its first line: a top-level key of
        SkyRL's config ending in ``:``, header-less, or as the message of the loguru record
        that logs the whole dump (upstream's ``logger.info`` of the YAML text)."""
        msg = ln.message
        if msg.split(":", 1)[0] not in CONFIG_ROOTS or not msg.rstrip().endswith(":"):
            return False
        if YAML_TOP_RE.match(msg) is None:
            return False
        self.config_lines = [msg]
        self.config_source = ln.source
        self.config_line = ln.number
        return True

    @staticmethod
    def _yamlish(msg: str) -> bool:
        return (
            bool(msg)
            and (msg[0] in " -\t" or YAML_TOP_RE.match(msg) is not None)
            and TQDM_TAIL_RE.search(msg) is None  # a progress bar redrawn inside the dump
        )

    def _finish_config(self) -> None:
        import yaml

        self.config_done = True
        lines, self.config_lines = self.config_lines or [], None
        try:
            data = load_config("\n".join(lines))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            at = self.config_line + mark.line if mark is not None else self.config_line
            self.warn(at, "config", "config dump is not valid YAML: config not shown")
            return
        except ConfigTooBig as exc:
            self.warn(self.config_line, "config", f"config dump {exc}: config not shown")
            return
        if isinstance(data, dict):
            self.config = self.redactor.value(None, data)  # type: ignore[assignment]


# What a config dump may hold once its aliases are expanded: SkyRL's config is a few hundred
# values a few levels deep. A hostile or broken dump (YAML aliases can make a few lines
# stand for millions of values, or for a list that holds itself) is refused, not shown.
MAX_CONFIG_NODES = 100_000
MAX_CONFIG_DEPTH = 64  # (the JSON writer refuses past 255 levels; Python's stack nearer 300)
_INT64 = 1 << 63


class ConfigTooBig(ValueError):
    """A config dump past :data:`MAX_CONFIG_NODES` or :data:`MAX_CONFIG_DEPTH`, or holding itself."""


def load_config(text: str) -> object:
    """The config dump's YAML as plain JSON-able values (``yaml.safe_load``, bounded).

    The document's node graph is measured, aliases expanded, before anything is built
    (:class:`ConfigTooBig` past the bounds); then what JSON cannot hold is made plain by
    :func:`plain`. ``yaml.YAMLError`` for text that is not YAML.
    """
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise ConfigTooBig(f"nested more than {MAX_CONFIG_DEPTH} levels deep") from None
        if node is None:
            return None
        _measure(node)
        return plain(loader.construct_document(node))
    finally:
        loader.dispose()


def _measure(root: yaml.Node) -> None:
    """Raise :class:`ConfigTooBig` if ``root`` expands past the bounds or holds itself."""
    import yaml

    seen = 0
    stack: list[tuple[yaml.Node, int, frozenset[int]]] = [(root, 0, frozenset())]
    while stack:
        node, depth, path = stack.pop()
        seen += 1
        if seen > MAX_CONFIG_NODES:
            raise ConfigTooBig(f"holds more than {MAX_CONFIG_NODES} values (YAML aliases?)")
        if depth > MAX_CONFIG_DEPTH:
            raise ConfigTooBig(f"nested more than {MAX_CONFIG_DEPTH} levels deep")
        if isinstance(node, yaml.ScalarNode):
            continue
        if id(node) in path:
            raise ConfigTooBig("holds itself (a recursive YAML alias)")
        inner = path | {id(node)}
        children = (
            [x for pair in node.value for x in pair]
            if isinstance(node, yaml.MappingNode)
            else node.value
        )
        stack.extend((child, depth + 1, inner) for child in children)


def plain(value: object) -> object:
    """``value`` with what JSON cannot hold made plain: an integer past 64 bits as its digits,
    binary data (``!!binary``) as a note of its size, a set as a list, any other object
    as its text. Dicts, lists, text, numbers, booleans, None, dates and times pass."""
    if value is None or isinstance(value, bool | float | str | datetime.date):
        return value
    if isinstance(value, int):
        return value if -_INT64 <= value < _INT64 else str(value)
    if isinstance(value, dict):
        return {plain(k) if not isinstance(k, str) else k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((plain(v) for v in value), key=repr)
    if isinstance(value, bytes):
        return f"(binary data, {len(value)} bytes)"
    return str(value)
