"""Runs and pages the last build made that this one keeps as they are.

A run is the unit of reuse: its *key* hashes everything its pages are made from, taken
from stats and tokens before anything is analysed. A run analysed again still has each
page carried over when the page's *signature* (a hash of what it shows) is unchanged.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from sitegen.jsonio import dumps as page_json

if TYPE_CHECKING:
    from sitegen.cache.sources import Sources
    from sitegen.cache.state import BuildState
    from sitegen.errors import BuildWarning
    from sitegen.model.parsed import Run
    from sitegen.pages.kept import JobEntry, RunEntry, RunRecord
    from sitegen.pages.objects import JobPage, RunPage
    from sitegen.write.site import SiteWriter


class PageReuse:
    """Which runs (each with its jobs' pages) and pages stay as the last build made them.

    A run whose *key* (its jobs' sources, stats of logs and notes, statuses, warnings, trial
    tokens, discovery's warnings, templates and the options pages print) equals the last
    build's, its files intact, is neither analysed nor rendered: the listings take its rows
    from its record (:mod:`sitegen.pages.kept`). A page of a run made again is carried over
    when its *signature* holds (:meth:`carry_over`).
    """

    def __init__(self, state: BuildState, sources: Sources, writer: SiteWriter) -> None:
        from sitegen.pages import kept  # the page model: only past the no-change check

        self._kept = kept
        self.previous = state.pages
        self.last_records = state.run_records()
        self.tokens = state.trial_tokens
        self.sources = sources
        self.writer = writer
        self.signatures: dict[str, str] = {}
        self.kept: dict[str, RunRecord] = {}  # runs taken whole from the last build
        opts = sources.opts
        self._base = hashlib.sha1(sources.assets.encode())
        self._base.update(repr((opts.title, opts.base_url, opts.transcripts_wanted())).encode())
        self._inputs = self._base.copy()
        self._inputs.update(repr(sources.disc.warnings).encode())

    # -- whole runs ------------------------------------------------------------------------------
    def key(self, run: Run, warnings: dict[str, list[BuildWarning]]) -> str | None:
        """What the run's pages are made from, hashed from stats and tokens; None when a part
        has no token (an unreadable log, a trials folder without one): always made again."""
        h = self._inputs.copy()
        parts: list[object] = [run.id]
        if run.trials is not None:
            parts.append(self._trials_token(run.jobs[0].source.group))
        for job in run.jobs:
            if job.log is None and job.source.log is not None:
                return None
            own = [(w.path, w.line, w.message) for w in warnings.get(job.id, ())]
            token = self._trials_token(job.source.group) if job.trials is not None else ""
            parts.append(
                (job.source, self.sources.logs[job.id], job.status, job.run_id, token, own)
            )
        if None in parts:
            return None
        h.update(repr(parts).encode())
        return h.hexdigest()

    def _trials_token(self, group: str) -> str | None:
        """The content of a group's trial sets (each folder's, :meth:`BuildState.keep_trial_set`)."""
        tokens = [self.tokens.get(d) for d in self.sources.disc.trials_dirs.get(group, ())]
        return None if not tokens or None in tokens else repr(tokens)

    def reuse(self, run: Run, key: str | None) -> RunRecord | None:
        """The last build's record of ``run`` when its key is unchanged and every file of its
        pages is still as written: those files are kept, and the run is not analysed again."""
        rec = self.last_records.get(run.id)
        if key is None or rec is None or rec.key != key:
            return None
        pages: list[tuple[str, JobEntry | RunEntry]] = [(f"run:{rec.run.id}", rec.run)]
        pages += [(f"job:{j.id}", j) for j in rec.jobs]
        found = []
        for _, e in pages:  # (each file stat'ed once: the run is kept only if all are intact)
            files = self.writer.intact([e.url, e.data])
            if files is None:
                return None
            found.append(files)
        for (name, e), files in zip(pages, found, strict=True):
            self.writer.keep(files)
            self.signatures[name] = e.signature
        self.kept[run.id] = rec
        return rec

    def records_for_next(
        self, made: list[tuple[str | None, RunPage, list[JobPage]]]
    ) -> dict[str, RunRecord]:
        """Every run's record for the next build: those kept, and those made now (``made``:
        key, run page and job pages, once rendered, so that their signatures are known)."""
        from sitegen.pages.make import compare_item

        k = self._kept
        out = dict(self.kept)
        for key, run, jobs in made:
            if key is None:
                continue
            cfg = {j.id: j.config for j in jobs}
            out[run.id] = k.RunRecord(
                key=key,
                run=k.RunEntry(
                    row=run.row(),
                    compare=compare_item("run", run),
                    config=cfg.get(run.jobs[-1]) if run.jobs else None,
                    signature=self.signatures[f"run:{run.id}"],
                ),
                jobs=tuple(
                    k.JobEntry(
                        row=j.row(),
                        compare=compare_item("job", j),
                        config=j.config,
                        signature=self.signatures[f"job:{j.id}"],
                    )
                    for j in jobs
                ),
            )
        return out

    # -- single pages ------------------------------------------------------------------------------
    def carry_over(self, key: str, parts: tuple, files: list[str]) -> bool:
        """Record the page's signature; True when its files were kept as they are."""
        sig = self.signatures[key] = self._signature(parts)
        return self.previous.get(key) == sig and self.writer.carry_over(files)

    def shows_the_same(self, key: str, parts: tuple) -> bool:
        """Whether the page would show what the last build's showed (nothing recorded, no file
        looked at); a page the last build did not make is not hashed."""
        last = self.previous.get(key)
        return last is not None and last == self._signature(parts)

    def _signature(self, parts: tuple) -> str:
        h = self._base.copy()
        for part in parts:
            h.update(page_json(part))
        return h.hexdigest()
