"""Lines about the job rather than a step: SLURM's end lines, batch counts, vLLM stats.

formats.md §4 (generation batches), §5 (vLLM) and the SLURM end markers.
"""

from __future__ import annotations

import ast
import re
from collections import Counter

from sitegen.model.vocabulary import is_finite
from sitegen.read.lines import Line
from sitegen.read.logstate import ParserCore, _Batches
from sitegen.read.markers import SLURM_CANCEL_RE, SLURM_OOM_RE
from sitegen.read.metricblocks import flat_dict
from sitegen.read.vllm import V0_PREFIX, is_stats_like


class StatusLines(ParserCore):
    """The parser's job-status handlers (a part of :class:`~sitegen.read.logparse.LogParser`)."""

    def _slurm(self, ln: Line, msg: str) -> None:
        m = SLURM_CANCEL_RE.match(msg)
        if m:
            reason = m.group(2) or "CANCELLED"
            if self.oom_line is not None and not m.group(2):
                # An oom_kill event, then a plain CANCELLED: the job died of memory.
                self.end_marker, self.end_detail = "failed", "out of memory (oom_kill)"
            else:
                self.end_marker, self.end_detail = "cancelled", reason
            return
        m = SLURM_OOM_RE.match(msg)
        if m:
            self.oom_line = ln.number
            self.end_marker, self.end_detail = "failed", "out of memory (oom_kill)"
            return
        self.warn(ln.number, "slurm", "slurmstepd line not understood: ignored")

    # -- batches ---------------------------------------------------------------
    def _exception_breakdown(self, ln: Line, text: str) -> None:
        try:
            d = flat_dict(text)  # 3.8 k of the 5.5 k dicts of the 1 GB archive: no compile
            if d is None:
                d = ast.literal_eval(text)
            if not isinstance(d, dict):
                raise ValueError("not a dict")
            counts: Counter[str] = Counter()
            for k, v in d.items():
                if not is_finite(v):  # a bool is not a count; a huge int overflows: caught below
                    raise ValueError("not a count")
                counts[str(k)] = int(v)
        except (
            ValueError,
            SyntaxError,
            TypeError,
            AttributeError,
            MemoryError,
            RecursionError,
            OverflowError,
        ):
            self.warn(ln.number, "exc", "unreadable 'Exception breakdown' dict: ignored")
            return
        self.batch_exc = counts

    def _batch_done(self, ln: Line, m: re.Match) -> None:
        ok, total, failed, masked = (int(g) for g in m.groups())
        if ok < 0 or failed < 0:
            self.warn(
                ln.number,
                "negative",
                f"negative count in batch line ({ok}/{total} successful, {failed} failed; the "
                "generator subtracts exception counts): read as written",
            )
        mode = self.batch_modes.popleft() if self.batch_modes else "training"
        b = _Batches(1, total, ok, failed, masked, self.batch_exc or Counter())
        self.batch_exc = None
        if mode == "eval":
            self.eval_batches.add(b)
        else:
            self.batches.add(b)
            self.batch_pending.add(b)

    # -- vLLM ------------------------------------------------------------------
    def _vllm(self, ln: Line) -> None:
        if ln.repeated and ln.message.startswith(("Engine ", V0_PREFIX)):
            self.suppressed += ln.repeated  # copies Ray did not print: never seen, never counted
        if not is_stats_like(ln.message):
            return  # most vLLM lines are not stats: no time to read for them
        problem = self.vllm.feed(ln, self._vllm_time(ln.vllm_time))
        if problem:
            self.warn(ln.number, "vllm", problem)
