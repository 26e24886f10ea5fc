"""One job's log written as two files (docs/formats.md §1): its stdout and its stderr.

A SLURM script with ``--output=x.out --error=x.err`` sends each stream to a file of its
own. Their line orders are independent, so each file has a parser of its own and the
job's figures are made of both here; but :func:`~sitegen.read.logfile.parse_log` feeds
both files' vLLM lines to one accumulator (an engine in both files is one engine).
"""

from __future__ import annotations

from msgspec.structs import replace

from sitegen.errors import BuildWarning
from sitegen.model.parsed import BatchCounts, Checkpoint, MetricBlock, ParsedLog
from sitegen.read.logparse import first_step_gap
from sitegen.read.markers import PLAIN_CANCEL, is_srun_end
from sitegen.read.statuslines import is_slurm_failure

# The metric forms in the order one file prefers them (metricblocks._metric_blocks).
FORM_RANK = ("mirror", "console", "text", "")
TRUNCATED = "the log says its output was truncated"


def combine_streams(out: ParsedLog, err: ParsedLog) -> ParsedLog:
    """The job's log from its stdout's parse ``out`` and its stderr's ``err``, made of both
    as docs/formats.md §1 ("Split logs") says; ``out``'s step where both have one. Each step
    and warning keeps its own file's line. ``vllm`` is ``out``'s (it holds both files').
    """
    blocks, evals, form = _metric_blocks(out, err)
    ended = next(
        (log for log in (err, out) if log.end_marker and not is_srun_end(log.end_detail)),
        err if err.end_marker is not None else out,
    )
    # Ends that one file of both would read in either line order: a plain cancel and a
    # failure (not srun's report, which stands in neither order) read that failure; SLURM's
    # failure (memory, its FAILED line) and 'Training done!' read complete
    other = out if ended is err else err
    plain_cancel = (ended.end_marker, ended.end_detail) == ("cancelled", PLAIN_CANCEL)
    if (plain_cancel and other.end_marker == "failed" and not is_srun_end(other.end_detail)) or (
        ended.end_marker == "failed"
        and is_slurm_failure(ended.end_detail)
        and other.end_marker == "complete"
    ):
        ended = other
    final = {c.step for c in (*out.checkpoints, *err.checkpoints) if c.final}
    paths = {c.step: c.path for c in (*err.checkpoints, *out.checkpoints)}
    resumed = out if out.resumed_from is not None else err
    config = out.config if out.config is not None else err.config
    fresh = out.fresh_start or err.fresh_start
    mid_run = next((m for m in (out.mid_run, err.mid_run) if m and m.startswith(TRUNCATED)), None)
    if mid_run is None:
        mid_run = first_step_gap(blocks, resumed.resumed_from, fresh, config)
    times = [t for t in (out.first_time, err.first_time) if t is not None]
    ends = [t for t in (out.last_time, err.last_time) if t is not None]
    per_step: dict[int, BatchCounts] = {}
    stranded = []
    for log, other in ((out, err), (err, out)):
        if log.batches_per_step and not log.blocks and other.blocks:
            stranded.append(_stranded(log, other))
            continue
        for s, b in log.batches_per_step.items():
            per_step[s] = _add(per_step[s], b) if s in per_step else b
    return replace(
        out,
        blocks=blocks,
        eval_blocks=evals,
        metric_form=form,
        end_marker=ended.end_marker,
        end_detail=ended.end_detail,
        resumed_from=resumed.resumed_from,
        resume_path=resumed.resume_path,
        fresh_start=fresh,
        checkpoints=tuple(Checkpoint(s, paths[s], s in final) for s in sorted(paths)),
        config=config,
        batches=_add(out.batches, err.batches),
        batches_per_step=dict(sorted(per_step.items())),
        eval_batches=_add(out.eval_batches, err.eval_batches),
        first_time=min(times, default=None),
        last_time=max(ends, default=None),
        lines=out.lines + err.lines,
        size_bytes=out.size_bytes + err.size_bytes,
        mtime=max(out.mtime, err.mtime),
        warnings=(*out.warnings, *err.warnings, *stranded),
        mid_run=mid_run,
        planned_steps=out.planned_steps if out.planned_steps is not None else err.planned_steps,
        evidence=out.evidence or err.evidence,
    )


def _stranded(log: ParsedLog, other: ParsedLog) -> BuildWarning:
    """Why ``log``'s batches are in no step: it logs no step itself, and the two files'
    line orders cannot say which of ``other``'s steps each batch ran for."""
    n = sum(b.batches for b in log.batches_per_step.values())
    return BuildWarning(
        log.path,
        None,
        f"{n} batch{'es' if n != 1 else ''} of this file cannot be given to steps: the steps "
        f"are logged in {other.path}; they count in the job's totals only",
    )


def _metric_blocks(
    out: ParsedLog, err: ParsedLog
) -> tuple[tuple[MetricBlock, ...], tuple[MetricBlock, ...], str]:
    """The steps, evals and metric form of the two files (:func:`combine_streams`)."""
    form = min(out.metric_form, err.metric_form, key=FORM_RANK.index)
    sides = [log for log in (out, err) if log.metric_form == form]
    steps: dict[int, MetricBlock] = {}
    evals: dict[int, MetricBlock] = {}
    for log in sides if form else (out, err):
        for b in log.blocks:
            steps.setdefault(b.step, b)
        for b in log.eval_blocks:
            evals.setdefault(b.step, b)
    return (
        tuple(steps[s] for s in sorted(steps)),
        tuple(evals[s] for s in sorted(evals)),
        form,
    )


def _add(a: BatchCounts, b: BatchCounts) -> BatchCounts:
    exceptions = dict(a.exceptions)
    for k, n in b.exceptions.items():
        exceptions[k] = exceptions.get(k, 0) + n
    return BatchCounts(
        a.batches + b.batches,
        a.instances + b.instances,
        a.successful + b.successful,
        a.failed + b.failed,
        a.masked + b.masked,
        exceptions,
    )
