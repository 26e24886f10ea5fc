"""The YAML config dump at a job's start (formats.md §2): collected, parsed, redacted."""

from __future__ import annotations

import yaml

from sitegen.read.lines import TQDM_TAIL_RE
from sitegen.read.logstate import ParserCore
from sitegen.read.markers import YAML_TOP_RE


class ConfigDump(ParserCore):
    """The parser's config-dump reader (a part of :class:`~sitegen.read.logparse.LogParser`)."""

    # -- config ------------------------------------------------------------------
    @staticmethod
    def _yamlish(msg: str) -> bool:
        return (
            bool(msg)
            and (msg[0] in " -\t" or YAML_TOP_RE.match(msg) is not None)
            and TQDM_TAIL_RE.search(msg) is None  # a progress bar redrawn inside the dump
        )

    def _finish_config(self) -> None:
        self.config_done = True
        lines, self.config_lines = self.config_lines or [], None
        try:
            data = yaml.safe_load("\n".join(lines))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            at = self.config_line + mark.line if mark is not None else self.config_line
            self.warn(at, "config", "config dump is not valid YAML: config not shown")
            return
        if isinstance(data, dict):
            self.config = self.redactor.value(None, data)  # type: ignore[assignment]
