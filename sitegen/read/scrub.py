"""Where read text enters the model: every string of a parsed log or trial, redacted once.

:func:`scrub_log` and :func:`scrub_trial` run on each parsed log and trial, so every later
stage sees only clean text: metric names, ``Exception breakdown`` labels, ``vLLM Stats``
keys, engine names, the failure line, checkpoint and resume paths, warnings, a trial's
name, task and exception type. Paths are hashed (:meth:`Redactor.path`), not masked, so
ids made from them stay distinct. Redaction is idempotent: a cached result scrubs alike.
"""

from __future__ import annotations

from msgspec.structs import replace

from sitegen.errors import BuildWarning
from sitegen.model.parsed import BatchCounts, MetricBlock, ParsedLog, TrialResult, VllmStats
from sitegen.redact import Redactor, SecretTally


def scrub_warning(w: BuildWarning, r: Redactor) -> BuildWarning:
    """A warning with its path hashed and its message redacted."""
    path, message = r.path(w.path), r.text(w.message)
    return w if (path, message) == (w.path, w.message) else BuildWarning(path, w.line, message)


def _names(d: dict, r: Redactor, tally: SecretTally, line: int | None = None) -> dict:
    """``d`` with its keys redacted (values summed when two keys become one)."""
    if all(r.text(k) == k for k in d):
        return d
    out: dict = {}
    for k, v in d.items():
        k2, kinds = r.hide(k)
        tally.add(kinds, line)
        out[k2] = out[k2] + v if k2 in out and isinstance(v, int | float) else v
    return out


def _blocks(
    blocks: tuple[MetricBlock, ...], r: Redactor, tally: SecretTally
) -> tuple[MetricBlock, ...]:
    names = {k for b in blocks for k in b.metrics}
    if all(r.text(k) == k for k in names):
        return blocks
    return tuple(replace(b, metrics=_names(b.metrics, r, tally, b.line)) for b in blocks)


def _batches(b: BatchCounts, r: Redactor, tally: SecretTally) -> BatchCounts:
    exc = _names(b.exceptions, r, tally)
    return b if exc is b.exceptions else replace(b, exceptions=exc)


def _vllm(v: VllmStats, r: Redactor, tally: SecretTally) -> VllmStats:
    def engine(name: str) -> str:
        shown, kinds = r.hide(name)
        tally.add(kinds)
        return shown

    engines = tuple(
        e if r.text(e.engine) == e.engine else replace(e, engine=engine(e.engine))
        for e in v.engines
    )
    steps = {s: _names(d, r, tally) for s, d in v.step_stats.items()}
    return replace(v, engines=engines, step_stats=steps)


def scrub_log(
    log: ParsedLog, r: Redactor, secrets: dict[str, list[int]] | None = None
) -> ParsedLog:
    """``log`` with every string in it redacted; the secrets hidden (here, and as the parser
    read: ``secrets``, kind -> first line and count) in one warning, never their values."""
    tally = SecretTally()
    for kind, (line, n) in (secrets or {}).items():
        tally.kinds[kind] = (line, n)

    def text(s: str | None) -> str | None:
        return r.text(s) if s else s

    # (each step's counts are part of the log's: counted once, in the log's totals)
    counted = SecretTally()
    log = replace(
        log,
        path=r.path(log.path),
        blocks=_blocks(log.blocks, r, tally),
        eval_blocks=_blocks(log.eval_blocks, r, tally),
        end_detail=text(log.end_detail),
        resume_path=text(log.resume_path),
        checkpoints=tuple(replace(c, path=r.text(c.path)) for c in log.checkpoints),
        config=r.value(None, log.config) if log.config is not None else None,  # type: ignore[arg-type]
        batches=_batches(log.batches, r, tally),
        batches_per_step={s: _batches(b, r, counted) for s, b in log.batches_per_step.items()},
        eval_batches=_batches(log.eval_batches, r, tally),
        vllm=_vllm(log.vllm, r, tally),
        warnings=tuple(scrub_warning(w, r) for w in log.warnings),
    )
    found = tally.warning(log.path)
    return log if found is None else replace(log, warnings=(*log.warnings, found))


def scrub_trial(t: TrialResult, r: Redactor) -> TrialResult:
    """A trial with its name, task and exception type redacted."""
    name, task = r.text(t.name), r.text(t.task)
    exc = r.text(t.exception) if t.exception else t.exception
    if (name, task, exc) == (t.name, t.task, t.exception):
        return t
    return replace(t, name=name, task=task, exception=exc)
