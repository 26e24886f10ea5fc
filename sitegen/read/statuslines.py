"""Lines about the job rather than a step: SLURM's end lines, the final save, batch counts,
vLLM stats (docs/formats.md §4, §5)."""

from __future__ import annotations

import ast
import re
from collections import Counter

from sitegen.model.vocabulary import is_finite
from sitegen.read.lines import CR_PREFIX_RE, Line, known_prefix
from sitegen.read.logstate import BatchTally, ParserCore
from sitegen.read.markers import (
    NODE_FAILURE,
    PLAIN_CANCEL,
    SLURM_CANCEL_ANY_RE,
    SLURM_CANCEL_RE,
    SLURM_FAILED_RE,
    SLURM_MEM_LIMIT_RE,
    SLURM_MEM_PEAK_RE,
    SLURM_MEMORY_RE,
    SLURM_OOM_RE,
    SLURM_REASON_RE,
    SLURM_STEPD_END_RE,
    SRUN_DETAIL,
    SRUN_OOM,
    SRUN_TASK_RE,
    TASK_FAILURE,
    is_signalled_end,
    is_srun_end,
)
from sitegen.read.metricblocks import flat_dict
from sitegen.read.vllm import is_stats_like

# A whole vLLM engine stats record of vLLM 0.8 - 0.11.0's one fixed shape after the Ray
# prefix, as bytes: VLLM_RE's header, then ENGINE_RE and a message of those versions' six
# fields in their order, as vllm.PART_RE reads each (ASCII digits only; anything else takes
# the full split).
_STATS_LINE_RE = re.compile(
    rb"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) ([0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2})"
    rb"(?:\.[0-9]+)? \[[^\]]+\] Engine ([0-9]+): "
    rb"Avg prompt throughput: (-?[0-9]+(?:\.[0-9]+)?) tokens/s, "
    rb"Avg generation throughput: (-?[0-9]+(?:\.[0-9]+)?) tokens/s, "
    rb"Running: (-?[0-9]+) reqs, Waiting: (-?[0-9]+) reqs, "
    rb"GPU KV cache usage: (-?[0-9]+(?:\.[0-9]+)?)%, "
    rb"Prefix cache hit rate: (-?[0-9]+(?:\.[0-9]+)?)%\s*"
    # Ray's dedup suffix (split_line: colour codes out, then DEDUP_RE): as Ray prints it,
    # green from its space on (\x1b[32m [repeated 3x across cluster]\x1b[0m), uncoloured,
    # or green from its "[" on
    rb"((?:\x1b\[[0-9;]*m)? ?(?:\x1b\[[0-9;]*m)?\[repeated ([0-9]{1,18})x across cluster\]"
    rb"(?:\x1b\[[0-9;]*m)?)?"
)
# The Ray prefixes (group 1) and that record in one match. It matches exactly when
# CR_PREFIX_RE.match and then _STATS_LINE_RE.fullmatch of the rest both do, with the same
# prefix: CR_PREFIX_RE takes as much as it can, and every shorter prefix would leave a rest
# starting with "(" or an escape, where the record's level must start.
_PREFIXED_STATS_RE = re.compile(rb"(" + CR_PREFIX_RE.pattern + rb")" + _STATS_LINE_RE.pattern)


# How SLURM tells that a job's memory failed (its end detail).
OOM_KILL = "out of memory (oom_kill)"
MEMORY_ERROR = "uncorrectable memory error"
MEMORY_LIMIT = "out of memory (memory limit)"
VIRTUAL_MEMORY_LIMIT = "out of memory (virtual memory limit)"
SRUN_AFTER_DONE = "srun"  # the warning kind of srun's task ends after 'Training done!'
FAILED_AFTER_DONE = "slurm-after-done"  # ... and of SLURM's failures after it
SLURM_SAYS = "SLURM: "  # how the detail of SLURM's own FAILED line starts


def is_slurm_failure(detail: str | None) -> bool:
    """Whether a failed end's detail is SLURM's (a memory failure, its FAILED line): after
    'Training done!' the job stays complete, and 'Training done!' after it is the end."""
    return detail is not None and (
        detail.startswith(SLURM_SAYS)
        or detail in (OOM_KILL, MEMORY_ERROR, MEMORY_LIMIT, VIRTUAL_MEMORY_LIMIT)
    )


class StatusLines(ParserCore):
    """The parser's job-status handlers (a part of :class:`~sitegen.read.logparse.LogParser`)."""

    def _slurm(self, ln: Line, msg: str) -> None:
        m = SLURM_CANCEL_RE.match(msg)
        if m:
            # (a signal's name, a user's: a plain cancel)
            self._cancel(NODE_FAILURE if m["node_failure"] else m["reason"])
            return
        if SLURM_CANCEL_ANY_RE.match(msg):
            self.warn(ln.number, "slurm", "SLURM's cancel with words not known: read as a cancel")
            self._cancel(None)
            return
        if SLURM_REASON_RE.match(msg) or SLURM_STEPD_END_RE.match(msg):
            return  # after the line that sent SLURM's signal: that line said the end
        if SLURM_OOM_RE.match(msg):
            failure: str | None = OOM_KILL
        elif m := SLURM_MEM_LIMIT_RE.match(msg):
            failure = VIRTUAL_MEMORY_LIMIT if m.group(1) else MEMORY_LIMIT
        elif SLURM_MEMORY_RE.match(msg):
            failure = MEMORY_ERROR
        elif SLURM_MEM_PEAK_RE.match(msg):
            return  # the limit was reached and the job went on: no end, nothing to warn of
        else:
            failure = None
        if failure is not None:
            if self.end_marker != "complete":  # (after 'Training done!' only a warning)
                self.side_failure = failure
            self._slurm_failed(ln, failure)
            return
        m = SLURM_FAILED_RE.match(msg)
        if m:
            # SLURM says so after the cause: a trainer's error or a memory failure read before
            # stays the job's end; a task's end srun reported gives way to SLURM's word. A
            # step's FAILED may be a step run beside training, as srun's end may: more
            # training undoes it, a plain cancel after it keeps it (a cancel's step is
            # CANCELLED, not FAILED)
            if self.end_marker != "failed" or is_srun_end(self.end_detail):
                detail = f"{SLURM_SAYS}{m.group(1)}"
                if self.end_marker == "failed":  # srun's exit code or signal stays said
                    detail = f"{detail}; {self.end_detail}"
                if "*** STEP " in msg and self.end_marker != "complete":
                    self.side_failure = detail
                self._slurm_failed(ln, detail)
            if "*** JOB " in msg:
                self.side_failure = None  # (the job's own end: more training does not undo it)
            return
        self.warn(ln.number, "slurm", "slurmstepd line not understood: ignored")

    def _cancel(self, reason: str | None) -> None:
        """SLURM cancelled the job or a step, for ``reason`` (None: a plain cancel, a signal).

        A plain cancel, or a step's for its task's failure, keeps a failure read before it
        and a completed job whose failure came after its training (a step beside it)."""
        plain = reason is None or reason == TASK_FAILURE
        if plain and self.end_marker == "complete" and self.done_then_failed:
            # training completed, a step beside it failed, the step or the script's end
            # was cancelled: the job's work was done (as its warning said)
            pass
        elif self.side_failure is not None and plain:
            # The job's memory or a step failed, then a plain CANCELLED: the job died of that.
            self.end_marker, self.end_detail = "failed", self.side_failure
        elif (
            plain
            and self.end_marker == "failed"
            and (reason == TASK_FAILURE or not is_signalled_end(self.end_detail))
        ):
            # a plain cancel after a failure (the trainer's, a task's) ends what failed:
            # srun cancels the step after a task's failure (--kill-on-bad-exit; SLURM 25.05
            # says TASK FAILURE), the batch script's end cancels what is left. A task SLURM
            # signalled is the cancel's.
            pass
        else:
            self.end_marker, self.end_detail = "cancelled", reason or PLAIN_CANCEL
        self.side_failure = None  # (the cancel ended it: more training does not undo it)

    def _srun(self, ln: Line, msg: str) -> None:
        """srun's report of a task's end, read as docs/formats.md §4.4 says (srun reports
        after the cause: an exit code or a signal is the end only when nothing said one
        before). Only srun's own line, whole, and not where the log's time has gone back
        before its first (a copy of an older log). Other srun errors say nothing of the end."""
        m = SRUN_TASK_RE.fullmatch(msg)
        if m is None:
            return
        first, latest = self.first_time, self.last_time
        if first is not None and latest is not None and latest < first:
            # the log's time went back before its own start: a copy of an older job's log
            # printed after this one's began (``cat old.out`` in the batch script)
            return
        tasks, what = m.groups()
        if what == SRUN_OOM:
            if self.end_marker != "complete":
                self.side_failure = OOM_KILL
            self._slurm_failed(ln, OOM_KILL)
        elif self.end_marker == "complete":
            # SLURM ends the steps run beside training (ray workers) with the job: said once
            self.done_then_failed = True
            if not self.warn_counts[SRUN_AFTER_DONE]:
                self.warn(
                    ln.number,
                    SRUN_AFTER_DONE,
                    f"srun reported a task's end after training completed ({tasks}: {what}): a "
                    "step run beside training, ended with the job; the job stays complete",
                )
        elif self.end_marker is None:
            self._slurm_failed(ln, f"{SRUN_DETAIL}{tasks}: {what}")

    def _slurm_failed(self, ln: Line, detail: str) -> None:
        """SLURM says the job failed: its end, unless its training completed before (then
        complete all the same, with a warning: the failure came after the work was done)."""
        if self.end_marker == "complete":
            self.done_then_failed = True
            self.warn(
                ln.number,
                FAILED_AFTER_DONE,
                f"SLURM ended the job as failed ({detail.removeprefix(SLURM_SAYS)}) after its training "
                "completed",
            )
        else:
            self.end_marker, self.end_detail = "failed", detail

    def _final_save(self, number: int) -> None:
        """``Saved final checkpoint.``: the save just before it is the one after the loop
        (docs/formats.md §4.3), named after the last step or the one after it: never before
        the last step known done (a lost save line leaves an earlier checkpoint the latest:
        not the final)."""
        latest = max(self.checkpoints, default=None)
        if latest is not None and (self.last_done is None or latest >= self.last_done):
            self.final_checkpoint = latest
        else:
            self.warn(
                number,
                "checkpoint",
                "'Saved final checkpoint.' with no save line for it: the final checkpoint is not known",
            )

    # -- batches ---------------------------------------------------------------
    def _exception_breakdown(self, ln: Line, text: str) -> None:
        try:
            d = flat_dict(text)  # most of them: no compile
            if d is None:
                d = ast.literal_eval(text)
            if not isinstance(d, dict):
                raise ValueError("not a dict")
            counts: Counter[str] = Counter()
            for k, v in d.items():
                if not is_finite(v):  # a bool is not a count; a huge int overflows: caught below
                    raise ValueError("not a count")
                n = int(v)
                if not -(1 << 63) <= n < 1 << 63:  # (sums of these go to JSON: 64 bits)
                    raise ValueError("not a count")
                counts[str(k)] = n
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

    def _batch_start(self, mode: str) -> None:
        """``Starting batch generation for N trials (mode=…)``: the generator runs a batch,
        of training or eval, so the trainer goes on (as its metrics say)."""
        self._training_goes_on()
        self.batch_modes.append(mode)

    def _batch_done(self, ln: Line, m: re.Match) -> None:
        self._training_goes_on()  # (a batch ended: the trainer went on, as at its start)
        ok, total, failed, masked = (int(g) for g in m.groups())
        if ok < 0 or failed < 0:
            self.warn(
                ln.number,
                "negative",
                f"negative count in batch line ({ok}/{total} successful, {failed} failed; the "
                "generator subtracts exception counts): read as written",
            )
        mode = self.batch_modes.popleft() if self.batch_modes else "training"
        b = BatchTally(1, total, ok, failed, masked, self.batch_exc or Counter())
        self.batch_exc = None
        if mode == "eval":
            self.eval_batches.add(b)
        else:
            self.batches.add(b)
            self.batch_pending.add(b)

    # -- vLLM ------------------------------------------------------------------
    def vllm_stats_line(self, number: int, raw: bytes) -> bool:
        """``feed(split_line(number, raw))`` without the split and the dispatch, in the steady
        state, for the standard engine stats line of vLLM 0.8 - 0.11.0 (a known prefix, its
        six fields, maybe Ray's dedup suffix, no other escape); False: not one."""
        if b"] Engine " not in raw:  # most lines that reach here: no regex at all
            return False
        h = _PREFIXED_STATS_RE.fullmatch(raw)
        if h is None:
            return False
        pfx, ts, index, p, g, r, w, kv, pre, suffix, repeated = h.groups()
        # the record without the dedup suffix holds no other escape and no "[repeated "
        end = h.start(10) if suffix is not None else len(raw)
        if raw.find(b"\x1b", h.end(1), end) >= 0 or raw.find(b"[repeated ", h.end(1), end) >= 0:
            return False
        known = known_prefix(self.prefixes, pfx)
        if known is None:
            return False
        if repeated is not None:
            self.suppressed += int(repeated)  # as _vllm counts Ray's unprinted copies
        v = self.vllm
        # VllmAccumulator.add of what parse_stats reads of the six fields, passed as read
        v.add_sample(
            v.engine_key(known[1], known[2], index.decode()),
            float(r),
            float(w),
            float(g),
            float(p),
            float(kv),
            None,  # (the six fields hold no preemption count)
            float(pre),
            self._vllm_time(ts.decode()),
        )
        return True

    def _vllm(self, ln: Line) -> None:
        if not is_stats_like(ln.message):
            return  # most vLLM lines are not stats: no time to read for them
        sample, problem = self.vllm.feed(ln, self._vllm_time(ln.vllm_time))
        if sample:
            self.suppressed += ln.repeated  # copies Ray did not print: never seen, never counted
        if problem:
            self.warn(ln.number, "vllm", problem)
