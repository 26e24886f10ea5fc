"""Build progress on stderr: a one-line counter on a terminal, quiet otherwise."""

from __future__ import annotations

import time
from typing import TextIO


class Progress:
    """Callable that takes one message per finished item (a log, a trials directory)."""

    def __init__(self, stream: TextIO, min_interval_s: float = 0.1) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.count = 0
        self.last = 0.0
        self.min_interval_s = min_interval_s

    def __call__(self, message: str) -> None:
        self.count += 1
        if not self.tty:
            return
        now = time.monotonic()
        if now - self.last >= self.min_interval_s:
            self.last = now
            self.stream.write(f"\r\x1b[2Kparsed {self.count}: {message[:100]}")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.tty and self.count:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
