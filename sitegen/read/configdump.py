"""The YAML config dump at a job's start (docs/formats.md §4): collected, parsed, redacted."""

from __future__ import annotations

import datetime
from functools import cache
from typing import TYPE_CHECKING

from sitegen.read.lines import TQDM_TAIL_RE, Line
from sitegen.read.logstate import INT64, MAX_CONFIG_LINES, ParserCore
from sitegen.read.markers import CONFIG_ROOTS, YAML_TOP_RE

if TYPE_CHECKING:
    import yaml

# PyYAML is imported where a dump is read: a rebuild that reads on from where a grown log
# stopped meets no config dump, and pages show configs without it (present/yamltext.py).

# How many of a dump's blank lines are tried as its end when the whole is not YAML.
CONFIG_CUT_TRIES = 4


class ConfigDump(ParserCore):
    """The parser's config-dump reader (a part of :class:`~sitegen.read.logparse.LogParser`)."""

    def _start_config(self, ln: Line) -> bool:
        """Start collecting the dump at ``ln`` if it is its first line: a top-level key of
        SkyRL's config alone, ending in ``:``, header-less, or as the message of the loguru
        record that logs the whole dump (upstream's ``logger.info`` of the YAML text)."""
        msg = ln.message
        key = msg.rstrip(" ")  # (blanks after the colon; a tab is no YAML the dump writes)
        if not key.endswith(":") or key[:-1] not in CONFIG_ROOTS:
            return False  # (``trainer: resuming from:`` is a message, not the dump)
        self.config_lines = [msg]
        self.config_source = ln.source
        self.config_line = ln.number
        return True

    def _config_line(self, msg: str) -> bool:
        """Take a plain line of the process whose dump is open; False: the dump ended before it.

        A blank line is held: ``yaml.dump`` writes a string holding line breaks over several
        lines, a blank line for each break, and goes on indented; anything else after a
        blank line (the next record, a top-level key) means it was the dump's end.
        """
        if not msg:
            self.config_blanks += 1
            return True
        if not self._yamlish(msg) or (self.config_blanks and msg[0] not in " \t"):
            return False
        lines = self.config_lines
        assert lines is not None
        if self.config_blanks:
            self.config_cuts.append(len(lines))
            lines.extend([""] * min(self.config_blanks, MAX_CONFIG_LINES - len(lines)))
            self.config_blanks = 0
        if len(lines) < MAX_CONFIG_LINES:
            lines.append(msg)
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
        cuts, self.config_cuts, self.config_blanks = self.config_cuts, [], 0
        text = "\n".join(lines)
        problems: list[tuple[int, str]] = []
        try:
            try:
                data = load_config(text, problems)
            except yaml.YAMLError as exc:
                # An indented line after a blank one was no string's: the dump had ended at
                # that blank line. Tried: up to the last blank line before where YAML failed
                # (those before may be a multi-line string's), the few before that, at last
                # the first: a bounded number of tries, however many blank lines.
                mark = getattr(exc, "problem_mark", None)
                at = line_of(text, mark) if mark is not None else len(lines)
                tries = [c for c in cuts if c <= at][-CONFIG_CUT_TRIES:]
                if cuts and cuts[0] not in tries:
                    tries.insert(0, cuts[0])  # the first blank line last: never worse than it
                for i, cut in enumerate(reversed(tries), 1):
                    text, problems = "\n".join(lines[:cut]), []
                    try:
                        data = load_config(text, problems)
                        break
                    except yaml.YAMLError:
                        if i == len(tries):
                            raise
                else:
                    raise
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            at = self.config_line + (line_of(text, mark) if mark is not None else 0)
            self.warn(at, "config", "config dump is not valid YAML: config not shown")
            return
        except ConfigTooBig as exc:
            self.warn(self.config_line, "config", f"config dump {exc}: config not shown")
            return
        except Exception as exc:  # whatever else a dump holds: never the build's end
            self.warn(
                self.config_line,
                "config",
                f"config dump could not be read ({type(exc).__name__}): config not shown",
            )
            return
        for at, problem in problems:
            self.warn(self.config_line + at, "config", f"config dump: {problem}")
        if isinstance(data, dict):
            self.config = self.redactor.value(None, data)  # type: ignore[assignment]
            for at, kind in self.redactor.lines_hidden(text):
                self.note_secrets(self.config_line + at - 1, [kind])


# What a config dump may hold once its aliases are expanded: SkyRL's config is a few hundred
# values a few levels deep. A hostile or broken dump (YAML aliases can make a few lines
# stand for millions of values, or for a list that holds itself) is refused, not shown.
MAX_CONFIG_NODES = 100_000
MAX_CONFIG_DEPTH = 64  # (the JSON writer refuses past 255 levels; Python's stack nearer 300)


class ConfigTooBig(ValueError):
    """A config dump past :data:`MAX_CONFIG_NODES` or :data:`MAX_CONFIG_DEPTH`, or holding itself."""


def load_config(text: str, problems: list[tuple[int, str]] | None = None) -> object:
    """The config dump's YAML as plain JSON-able values (``yaml.safe_load``, bounded: the
    node graph is measured, aliases expanded, before anything is built, :class:`ConfigTooBig`
    past the bounds; ``yaml.YAMLError`` for text that is not YAML). A value YAML cannot build
    (a date that is no day, a huge integer, an unknown tag) is kept as written, and
    ``problems`` gets its line (from 0) and what it is."""
    loader = _loader_class()(text)
    loader.problems = problems if problems is not None else []
    loader.text = text
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


def line_of(text: str, mark: yaml.Mark) -> int:
    """The line (from 0) of ``text`` where a YAML mark is: counted in line feeds, as the log
    counts them (YAML also breaks lines at U+0085, U+2028 and U+2029)."""
    return text.count("\n", 0, mark.index)


@cache
def _loader_class() -> type:
    """A safe loader that keeps, as written, any scalar it cannot build (made on first use:
    PyYAML is imported where a dump is read)."""
    import yaml

    class DumpLoader(yaml.SafeLoader):
        problems: list[tuple[int, str]]
        text: str

        def construct_object(self, node: yaml.Node, deep: bool = False) -> object:
            if not isinstance(node, yaml.ScalarNode):
                return super().construct_object(node, deep)
            saved = self.deep_construct
            try:
                return super().construct_object(node, deep)
            except Exception as exc:  # a scalar's constructor: a pure function of its text
                self.recursive_objects.pop(node, None)
                self.deep_construct = saved
                self.constructed_objects[node] = node.value
                what = "tag" if isinstance(exc, yaml.constructor.ConstructorError) else "value"
                tag = node.tag.rsplit(":", 1)[-1]
                problem = f"a {what} YAML cannot read ({tag}): shown as written"
                self.problems.append((line_of(self.text, node.start_mark), problem))
                return node.value

    def plain_node(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> object:
        # A tag no safe loader knows (``!foo``, ``!!python/object:…``): its data, untagged.
        if isinstance(node, yaml.ScalarNode):
            return loader.construct_scalar(node)
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node, deep=True)
        return loader.construct_sequence(node, deep=True)  # type: ignore[arg-type]

    DumpLoader.add_multi_constructor("", plain_node)
    return DumpLoader


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
        return value if -INT64 <= value < INT64 else str(value)
    if isinstance(value, dict):
        return {plain(k) if not isinstance(k, str) else k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((plain(v) for v in value), key=repr)
    if isinstance(value, bytes):
        return f"(binary data, {len(value)} bytes)"
    return str(value)
