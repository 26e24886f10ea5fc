"""Build progress on stderr: a bar on a terminal; otherwise a quiet line at each quarter of a
long build. And the counts of the lines a command prints (:func:`counted`, :func:`archive_counts`)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, TextIO

from sitegen.errors import printable

BAR = 24


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """A count with its noun in the number it needs: "1 run", "13 runs", "2 trials without
    result.json" (``plural`` for a noun that takes more, or other, than an "s")."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def archive_counts(c: Mapping[str, Any]) -> str:
    """An archive's counts (a build report's or synth's truth, by name) as both commands print
    them: "15 jobs in 13 runs, 355 training trials, 6 eval trials, 2 unreadable result.json"
    (a kind of damage there is none of is left out)."""
    unreadable, job_level, missing = c["unreadable"], c["job_level"], c["missing"]
    out = [
        f"{counted(c['jobs'], 'job')} in {counted(c['runs'], 'run')}",
        counted(c["trials"], "training trial"),
        counted(c["eval_trials"], "eval trial"),
    ]
    if unreadable:
        out.append(f"{unreadable} unreadable result.json")
    if job_level:
        out.append(
            f"{job_level} job-level result.json (not {'a trial' if job_level == 1 else 'trials'})"
        )
    if missing:
        out.append(counted(missing, "trial without result.json", "trials without result.json"))
    return ", ".join(out)


class Progress:
    """Callable taking one message per finished item; the build sets ``total`` once known."""

    def __init__(self, stream: TextIO, min_interval_s: float = 0.1) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.count = 0
        self.total = 0
        self.last = 0.0
        self.min_interval_s = min_interval_s

    def __call__(self, message: str) -> None:
        self.count += 1
        message = printable(message)  # (a file name: no line break or escape sequence)
        if not self.tty:
            # Logs of CI jobs: one plain line per quarter, only for builds with many items.
            if (
                self.total >= 8
                and self.count * 4 // self.total != (self.count - 1) * 4 // self.total
            ):
                self.stream.write(f"progress: {self.count}/{self.total} parsed ({message[:80]})\n")
            return
        now = time.monotonic()
        if now - self.last >= self.min_interval_s or self.count == self.total:
            self.last = now
            self.stream.write("\r\x1b[2K" + self.line(message))
            self.stream.flush()

    def line(self, message: str) -> str:
        if self.total:
            done = min(self.count, self.total)
            fill = BAR * done // self.total
            return f"[{'#' * fill}{'.' * (BAR - fill)}] {done}/{self.total} {message[:80]}"
        return f"parsed {self.count}: {message[:80]}"

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.tty and self.count:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
