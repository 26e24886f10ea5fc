"""The metrics of each step: ``Step N:`` dicts and ``WANDB_MIRROR`` lines (formats.md §3, §8).

A ``Step N:`` marker opens a pretty-printed dict that is collected line by line
until it closes; a mirror line carries its dict as JSON. At the end the blocks
of the form the log has are split into train steps and evals.
"""

from __future__ import annotations

import ast
import json

from sitegen.model.parsed import MetricBlock
from sitegen.read.lines import Line
from sitegen.read.logstate import MAX_BLOCK_LINES, ParserCore, _PendingBlock
from sitegen.read.markers import MIRROR_RE


class MetricBlocks(ParserCore):
    """The parser's metric-dict collector (a part of :class:`~sitegen.read.logparse.LogParser`)."""

    def _continue_block(self, pend: _PendingBlock, ln: Line) -> bool:
        text = ln.message
        stripped = text.rstrip()
        if not pend.text:
            if not stripped.startswith("{"):
                self.warn(
                    pend.line,
                    "block",
                    f"'Step {pend.step}:' is not followed by a metrics dict: block skipped",
                )
                del self.pending[ln.source]
                return False
        elif stripped[:1] not in (" ", "\t"):  # pformat indents every continuation line
            self._cut_block(pend, ln.number)
            return False
        pend.text.append(stripped)
        if stripped.endswith("}"):
            del self.pending[ln.source]
            self._close_block(pend)
        elif len(pend.text) > MAX_BLOCK_LINES:
            del self.pending[ln.source]
            self.warn(
                pend.line, "block", f"metrics dict of step {pend.step} never closes: block skipped"
            )
        return True

    def _cut_block(self, pend: _PendingBlock, at: int | None) -> None:
        self.pending.pop(pend.source, None)
        where = f"at line {at}" if at else "at end of file"
        self.warn(
            pend.line, "cut", f"metrics dict of step {pend.step} is cut off {where}: block skipped"
        )

    def _close_block(self, pend: _PendingBlock) -> None:
        try:
            d = ast.literal_eval("\n".join(pend.text))
            if not isinstance(d, dict):
                raise ValueError("not a dict")
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            self.warn(
                pend.line, "block", f"unreadable metrics dict of step {pend.step}: block skipped"
            )
            return
        self._store(
            self.console, self.console_lines, pend.step, self._numbers(pend.line, d), pend.line
        )

    def _mirror_line(self, ln: Line, msg: str) -> None:
        m = MIRROR_RE.match(msg)
        if not m:
            self.warn(ln.number, "mirror", "unreadable WANDB_MIRROR line: ignored")
            return
        kind, step = m.group(1), int(m.group(2))
        try:
            d = json.loads(m.group(3))
            if not isinstance(d, dict):
                raise ValueError("not an object")
        except (ValueError, RecursionError):
            self.warn(
                ln.number, "mirror", f"unreadable WANDB_MIRROR metrics of step {step}: skipped"
            )
            return
        if kind == "train":
            self._marker(step)
            if ln.time is not None:
                self.block_times.setdefault(step, ln.time)
            self._store(
                self.mirror, self.mirror_lines, step, self._numbers(ln.number, d), ln.number
            )
        elif kind == "eval":
            self._store(self.evals, self.eval_lines, step, self._numbers(ln.number, d), ln.number)
        else:
            self.warn(ln.number, "mirror", f"WANDB_MIRROR kind={kind} not known: ignored")

    def _metric_blocks(self) -> tuple[str, list[MetricBlock], tuple[MetricBlock, ...]]:
        """The metric form the log has, its train steps, and its evals (by step)."""
        if self.mirror:
            form, source, lines = "mirror", self.mirror, self.mirror_lines
        elif self.console:
            form, source, lines = "console", self.console, self.console_lines
        elif self.text_steps:
            # No metric dict anywhere (wandb-only logger): what the text lines said.
            form, source, lines = "text", self.text_steps, self.text_lines
        else:
            form, source, lines = "", {}, {}
        blocks: list[MetricBlock] = []
        eval_src: dict[int, MetricBlock] = {
            s: MetricBlock(s, self.evals[s], self.eval_lines[s]) for s in self.evals
        }
        for s in sorted(source):
            metrics = source[s]
            evals = {k: v for k, v in metrics.items() if k.startswith("eval/")}
            if evals and len(evals) + ("timing/eval" in metrics) == len(metrics):
                # An eval-only block (eval_before_train at the resumed step K, §8): not a step.
                eval_src.setdefault(s, MetricBlock(s, metrics, lines[s]))
                continue
            if evals:  # in-loop eval riding in the train block (synchronous trainer)
                eval_src.setdefault(s, MetricBlock(s, evals, lines[s]))
            blocks.append(MetricBlock(s, metrics, lines[s], self.block_times.get(s)))
        evals_out = tuple(eval_src[s] for s in sorted(eval_src))
        return form, blocks, evals_out
