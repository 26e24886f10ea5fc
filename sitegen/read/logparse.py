"""Streaming parser of a SkyRL SLURM ``.out`` log (docs/formats.md §2–§5).

It reads the file in fixed-size chunks and keeps only what the site needs: one dict per
step, counters, and a vLLM bucket per minute of wall time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields

from sitegen.errors import BuildWarning
from sitegen.model.parsed import Checkpoint, MetricBlock, ParsedLog
from sitegen.read.configdump import ConfigDump
from sitegen.read.evidence import config_evidence, line_evidence
from sitegen.read.lines import SLURMSTEPD_RE, Breaks, Line, iter_blocks, iter_raw_lines, split_line
from sitegen.read.logstate import MAX_WARNINGS_PER_KIND, BatchTally, ParserState, PendingBlock
from sitegen.read.markers import (
    BATCH_DONE_RE,
    BATCH_EXC_RE,
    BATCH_START_RE,
    CKPT_STEP_RE,
    FAILED_RE,
    FRESH_STARTS,
    GLUED_STEP_RE,
    LOAD_CKPT_RE,
    LOGURU_HINT,
    RESUME_RE,
    SAVED_RE,
    SRUN_ERROR,
    STARTED_STEP,
    STEP_LIKE_RE,
    STEP_RE,
    TOTAL_STEPS_RE,
    TRUNCATED_RE,
    Markers,
)
from sitegen.read.metricblocks import MetricBlocks
from sitegen.read.statuslines import StatusLines
from sitegen.read.textsteps import TextSteps
from sitegen.read.vllm import VllmAccumulator, is_stats_like
from sitegen.redact import Redactor

_STATE_FIELDS = tuple(f.name for f in fields(ParserState))


class LogParser(MetricBlocks, TextSteps, StatusLines, ConfigDump):
    """Feed it :class:`~sitegen.read.lines.Line` objects in order; ``finish()`` returns the
    result. Its :class:`ParserState` is taken with :meth:`state`, taken up with :meth:`resume`."""

    def state(self) -> ParserState:
        """The parse so far: the parser's own containers, which it goes on changing as it
        reads: copy or encode what must outlive that."""
        return ParserState(**{name: getattr(self, name) for name in _STATE_FIELDS})

    @classmethod
    def resume(cls, state: ParserState, rel_path: str, redactor: Redactor) -> LogParser:
        """A parser that goes on from ``state``, taking its containers over."""
        parser = cls(rel_path, redactor)
        for name in _STATE_FIELDS:
            setattr(parser, name, getattr(state, name))
        parser.vllm.source_name = rel_path
        return parser

    # The \r breaks of the block being fed (from iter_blocks), or None: not part of the state.
    _brk: Breaks | None = None

    def feed_stream(self, fh, chunk_size: int = 1 << 20) -> None:
        """Read a binary stream to its end, numbering lines on from :attr:`lines` (as read: a
        ``\r`` makes lines of one); each is named by the file's own line (:attr:`cr_lines`)."""
        for read in iter_blocks(fh, chunk_size):
            self.feed_read(*read)

    def feed_read(
        self, block: bytes | None, line: bytes, truncated: bool, brk: Breaks | None
    ) -> None:
        """Take one of :func:`~sitegen.read.lines.iter_blocks`'s yields: a block or a line."""
        if brk is not None:
            self.cr_lines += brk.before
        if block is None:
            self.feed_raw(self.lines + 1, line, truncated)
            return
        self._brk = brk if brk is not None and brk.cr is not None else None
        try:
            self.feed_block(self.lines + 1, block)
        finally:
            if self._brk is not None:
                self.cr_lines += self._brk.within(len(block))
                self._brk = None

    def _at(self, number: int, offset: int) -> int:
        """The file's own line number of line ``number`` (as read), at ``offset`` in the block."""
        brk = self._brk
        return number - self.cr_lines - (brk.within(offset) if brk is not None else 0)

    def read_engine_log(self, rel: str, fh) -> None:
        """Add the vLLM lines of an ``infra-*.log`` (docs/formats.md §5), not counted as the
        log's lines; nothing if reading fails."""
        sub = VllmAccumulator(rel, engine_log=True)
        for number, raw, _truncated in iter_raw_lines(fh):
            ln = split_line(number, raw)
            if ln.emitter == "vllm" and is_stats_like(ln.message):
                sub.feed(ln, self._vllm_time(ln.vllm_time))  # (no Ray there: no copies held back)
        self.vllm.merge(sub)

    def file_warning(self, rel: str, message: str) -> None:
        """A warning about another file read with this log (an infra log)."""
        self.warnings.append(BuildWarning(rel, None, message))

    # -- the per-line dispatch ---------------------------------------------
    def feed_raw(self, number: int, raw: bytes, truncated: bool, at: int | None = None) -> None:
        """Take line ``number`` (as read; ``at``: the file's own number, when the caller knows
        it). Lines that cannot matter skip the full split."""
        self.lines = number
        if at is None:
            at = number - self.cr_lines
        if truncated:
            self.warn(at, "long", "line longer than 1 MiB: read its first 1 MiB only")
        if b"\x00" in raw:
            self.warn(at, "nul", "NUL bytes in line (binary data?): removed")
        if not raw.isascii():
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                self.warn(at, "utf8", "invalid UTF-8: decoded with replacement characters")
        if (
            self.pending
            or self.config_lines is not None
            or any(lit in raw for lit in Markers.LITERALS)
            or (b" | " in raw and LOGURU_HINT.search(raw) is not None)
            or (not self.config_done and b":" in raw)
            or (self.evidence is None and (b":" in raw or b"(" in raw))  # (read/evidence.py)
        ):
            self.feed(split_line(at, raw))

    def steady(self) -> bool:
        """No metrics dict open, the config dump behind us and the log known to be a job's:
        only marker lines matter (before a sign of a job, every line may be one)."""
        return (
            not self.pending
            and self.config_lines is None
            and self.config_done
            and self.evidence is not None
        )

    def feed_block(self, first: int, block: bytes) -> None:
        """Take a block of complete lines numbered from ``first``: a line holding a NUL or
        invalid UTF-8 through :meth:`feed_raw`, which warns, the clean runs through
        :meth:`_feed_clean`."""
        markers = Markers(block)
        pos, number, end = 0, first, len(block)
        while pos < end:
            bad = _first_bad(block, pos, end)
            start = block.rfind(b"\n", pos, bad) + 1 if bad < end else end
            if start < pos:  # the bad byte is on the line starting at pos
                start = pos
            number = self._feed_clean(markers, block, pos, start, number)
            if start >= end:
                break
            stop = block.find(b"\n", start)
            self.feed_raw(number, block[start:stop], False, self._at(number, start))
            number += 1
            pos = stop + 1
        self.lines = number - 1

    def _feed_clean(self, markers: Markers, block: bytes, pos: int, end: int, number: int) -> int:
        """Take the clean lines of ``block[pos:end]``; the number of the line at ``end``. In
        the steady state only the lines ``markers`` finds reach Python; while a dict or a
        config dump is open, lines are taken one by one."""
        skip = pos  # _take_run declined the run before this offset: no second look
        while pos < end:
            if self.steady():
                hit = markers.find(pos)
                if hit < 0 or hit >= end:
                    return number + block.count(b"\n", pos, end)
                nl = block.rfind(b"\n", pos, hit)
                start = nl + 1 if nl >= 0 else pos  # pos is always a line start
                number += block.count(b"\n", pos, start)
                stop = block.find(b"\n", hit)
                self.lines = number
                raw = block[start:stop]
                # a standard vLLM engine stats line (the most common kind) is taken
                # without the split (see vllm_stats_line)
                if not self.vllm_stats_line(number, raw):  # (which names no line)
                    at = number - self.cr_lines if self._brk is None else self._at(number, start)
                    self.feed(split_line(at, raw))
            else:
                if self.pending and pos >= skip:
                    # An open dict's lines in one go (a run of them between markers).
                    n, skip = self._take_run(block, pos, end)
                    if n:
                        number += n
                        self.lines = number - 1
                        pos = skip
                        continue
                stop = block.find(b"\n", pos)
                at = number - self.cr_lines if self._brk is None else self._at(number, pos)
                self.feed_raw(number, block[pos:stop], False, at)
            number += 1
            pos = stop + 1
        return number

    def feed(self, ln: Line) -> None:
        if self.evidence is None:
            self.evidence = line_evidence(ln)
        if ln.before:
            self._bar(ln.before)  # a progress bar that a record was glued onto
        if ln.time is not None:
            if self.first_time is None:
                self.first_time = ln.time
            self.last_time = ln.time

        pend = self.pending.get(ln.source)
        if pend is not None and ln.emitter == "":
            if self._continue_block(pend, ln):
                return
        elif pend is not None:
            # Another header from the same process: the dict never closed.
            self._cut_block(pend, ln.number)
        if ln.source and ln.emitter == "" and "" in self.pending and self._adopt(ln):
            return

        if self.config_lines is not None and not self.config_done:
            if (
                ln.source == self.config_source
                and ln.emitter == ""
                and self._config_line(ln.message)
            ):
                return
            if ln.source == self.config_source:
                self._finish_config()

        if ln.emitter == "loguru":
            self._loguru(ln)
        elif ln.emitter == "vllm":
            self._vllm(ln)
        else:
            self._plain(ln)

    def _loguru(self, ln: Line) -> None:
        msg = ln.message
        if not self.config_done and self.config_lines is None and self._start_config(ln):
            return  # the config dump logged as one record: its first key is the message
        c = msg[:1]
        if c == "S":
            m = STEP_RE.match(msg)
            if m:
                step = int(m.group(1))
                self._marker(step)
                if ln.time is not None:
                    self.block_times.setdefault(step, ln.time)
                self.pending[ln.source] = PendingBlock(step, ln.source, ln.number)
                return
            if msg.startswith(STARTED_STEP):
                self._text_start(ln.number)
                return
            m = SAVED_RE.match(msg)
            if m:
                step = int(m.group(1))
                self.checkpoints[step] = self.redact(ln.number, m.group(2))
                return
            if msg.startswith("Saved final checkpoint."):
                self._final_save(ln.number)
                return
            m = BATCH_START_RE.match(msg)
            if m:
                self._batch_start(m.group(2))
                return
            if STEP_LIKE_RE.match(msg):
                self.warn(ln.number, "marker", "unreadable 'Step N:' marker: ignored")
                return
        elif c == "F":
            if msg.startswith("Finished: '"):
                self._timer(ln, msg)
                return
        elif c == "r":
            if msg.startswith("reward/") and self.text_open is not None:
                self._reward_line(ln, msg)
                return
        elif c == "{":
            if self.text_open is not None:
                self._status_dict(ln, msg)
                return
        elif c == "W":
            if msg.startswith("WANDB_MIRROR"):
                self._mirror_line(ln, msg)
                return
        elif c == "B":
            if msg.startswith("Batch generation complete"):
                m = BATCH_DONE_RE.match(msg)
                if m:
                    self._batch_done(ln, m)
                else:
                    self.warn(
                        ln.number, "batch", "unreadable 'Batch generation complete' line: ignored"
                    )
                return
        elif c == "E":
            m = BATCH_EXC_RE.match(msg)
            if m:
                self._exception_breakdown(ln, m.group(1))
                return
        elif c == "L":
            m = LOAD_CKPT_RE.match(msg)
            if m:
                own = not self._restarting()  # the job's own start, not a restart within it
                path = self.redact(ln.number, m.group(1))
                if own:
                    self.resume_path = path
                s = CKPT_STEP_RE.search(m.group(1))
                if s:
                    if own:
                        self.resumed_from = int(s.group(1))
                    self._start_from(int(s.group(1)), ln.number)
                return
        elif c == "R":
            m = RESUME_RE.match(msg)
            if m:
                step = int(m.group(1))
                if self._restarting():
                    pass  # a restart within the job: the job's own start stays as it was
                elif step == 0:
                    # The fully-async trainer logs "Resumed training from global_step 0" after
                    # "No checkpoint found": a start from scratch, not a resume.
                    self.fresh_start = True
                else:
                    self.resumed_from = step
                self._start_from(step, ln.number)
                return
        elif c == "N" or c == "C":
            if msg.startswith(FRESH_STARTS):
                if not self._restarting():
                    self.fresh_start = True
                self._start_from(0, ln.number)
                return
        elif c == "v":
            if self.vllm.feed_step_line(msg):
                return
        elif c == "T":
            if msg.strip() == "Training done!":
                self.end_marker, self.end_detail = "complete", None
                self.done_then_failed = False
                return
            m = FAILED_RE.match(msg)
            if m:
                self.end_marker = "failed"
                self.end_detail = self.redact(ln.number, msg)[:300]  # redact, then cut
                return
            m = TOTAL_STEPS_RE.match(msg)
            if m:
                self.planned_steps = int(m.group(1))
                return

    def _restarting(self) -> bool:
        """Whether the start line being read restarts training within the job (after a step):
        the job's ``resumed_from``, ``resume_path`` and ``fresh_start`` stay the first
        attempt's, as the run's resume chain is stitched by them. Latched: a restart that
        drops every step logged is a restart still."""
        if not self.restarted and (self.console or self.mirror or self.text_steps):
            self.restarted = True
        return self.restarted

    def _start_from(self, step: int, line: int) -> None:
        """Training (re)starts after ``step`` (a resume from it, or 0 from scratch).

        Steps past it already logged are an attempt's that died within the job
        (docs/formats.md §4.7): they are dropped with a warning, the next attempt's count;
        the earlier's end is not the job's, and its batches stay in the job's totals only."""
        self.last_done = step
        self._text_flush()  # a timed step of the earlier attempt, if it was still open
        self.batch_pending = BatchTally()
        self.end_marker = self.end_detail = self.side_failure = None
        gone = sorted(
            {s for store in (self.console, self.mirror, self.text_steps) for s in store if s > step}
        )
        if not gone:
            return
        for store, lines in (
            (self.console, self.console_lines),
            (self.mirror, self.mirror_lines),
            (self.text_steps, self.text_lines),
            (self.evals, self.eval_lines),
        ):
            for s in [s for s in store if s > step]:
                del store[s], lines[s]
        for per_step in (self.block_times, self.batches_per_step):
            for s in [s for s in per_step if s > step]:
                del per_step[s]
        self.boundary = min(self.boundary, step)
        self.warn(
            line,
            "restart",
            f"training starts again after step {step} with steps {gone[0]}\u2013{gone[-1]} "
            "logged already (an earlier attempt in this job): the steps logged from here count",
        )

    def _plain(self, ln: Line) -> None:
        msg = ln.message
        if msg.startswith("slurmstepd") and SLURMSTEPD_RE.match(msg):
            if not ln.source:
                self._slurm(ln, msg)
            return
        if msg.startswith(SRUN_ERROR):
            if not ln.source:
                self._srun(ln, msg)
            return
        c = msg[:1]
        if c == "W" and msg.startswith("WANDB_MIRROR "):
            self._mirror_line(ln, msg)  # docs/formats.md §3: it can come with no loguru header
            return
        if c == "T" and self._bar(msg):
            return
        if (
            ("Engine 0" in msg or "Avg prompt throughput: " in msg) and "throughput: " in msg
        ) or "WANDB_MIRROR kind=" in msg:
            # a marker in a line whose header was not found (damaged, or after unknown text)
            self.warn(
                ln.number,
                "vllm",
                "vLLM stats or WANDB_MIRROR line without a readable header: ignored",
            )
            return
        if " - Step " in msg and GLUED_STEP_RE.search(msg):
            # A tracking header after other text (two processes' output interleaved): its
            # dict follows as plain lines and is not read. Said, not lost in silence.
            self.warn(
                ln.number,
                "marker",
                "'Step N:' header after other text on its line: its metrics dict is not read",
            )
            return
        if ("truncated" in msg) and TRUNCATED_RE.match(msg):
            if self.truncated_at is None:
                self.truncated_at = ln.number
            return
        if not self.config_done and self.config_lines is None:
            self._start_config(ln)

    # -- the result ----------------------------------------------------------------
    def finish(self, size_bytes: int = 0, mtime: float = 0.0) -> ParsedLog:
        for pend in list(self.pending.values()):
            self._cut_block(pend, None)
        if self.config_lines is not None and not self.config_done:
            self._finish_config()
        if self.batch_pending.batches:
            # Batches after the last metrics dict belong to the step being generated: the one
            # after the boundary (the last step logged), else after last_done (the resume or
            # the bar's last step), else the first (step 1: SkyRL counts from 1).
            after = self.boundary if self.boundary >= 0 else self.last_done or 0
            self._flush_batches(after + 1)
        self._text_flush()
        form, blocks, evals_out = self._metric_blocks()
        mid_run = first_step_gap(blocks, self.resumed_from, self.fresh_start, self.config)
        if self.truncated_at is not None:
            mid_run = f"the log says its output was truncated (line {self.truncated_at})"
        final = self.final_checkpoint
        for kind, n in self.warn_counts.items():
            if n > MAX_WARNINGS_PER_KIND:
                more = f"{n - MAX_WARNINGS_PER_KIND} more warnings like the above ({kind})"
                self.warnings.append(BuildWarning(self.rel, None, more))
        return ParsedLog(
            path=self.rel,
            blocks=tuple(blocks),
            eval_blocks=evals_out,
            metric_form=form,
            end_marker=self.end_marker,
            end_detail=self.end_detail,
            resumed_from=self.resumed_from,
            resume_path=self.resume_path,
            fresh_start=self.fresh_start,
            checkpoints=tuple(
                Checkpoint(s, p, s == final) for s, p in sorted(self.checkpoints.items())
            ),
            config=self.config,
            batches=self.batches.freeze(),
            batches_per_step={s: b.freeze() for s, b in sorted(self.batches_per_step.items())},
            eval_batches=self.eval_batches.freeze(),
            vllm=self.vllm.freeze(self.first_time, self.suppressed),
            first_time=self.first_time,
            last_time=self.last_time,
            lines=self.lines - self.cr_lines,  # the file's own lines
            size_bytes=size_bytes,
            mtime=mtime,
            warnings=tuple(self.warnings),
            mid_run=mid_run,
            planned_steps=self.planned_steps,
            evidence=self.evidence or config_evidence(self.config),
        )


def first_step_gap(
    blocks: Sequence[MetricBlock], resumed_from: int | None, fresh_start: bool, config: dict | None
) -> str | None:
    """Why a log seems to start mid-run (docs/formats.md §4.5), else None."""
    if (
        blocks
        and blocks[0].step > 1
        and resumed_from is None
        and not fresh_start
        and config is None  # a config dump is printed at the job's start
    ):
        return f"first step {blocks[0].step}, with no start or resume line"
    return None


def _first_bad(block: bytes, pos: int, end: int) -> int:
    """The offset of the first NUL or invalid UTF-8 byte in ``block[pos:end]``, else ``end``
    (checked without a copy: a block's scans add up to one pass)."""
    nul = block.find(b"\x00", pos, end)
    limit = end if nul < 0 else nul
    try:
        str(memoryview(block)[pos:limit], "utf-8")
    except UnicodeDecodeError as exc:
        return pos + exc.start
    return limit
