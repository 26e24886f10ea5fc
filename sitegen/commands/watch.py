"""What ``sitegen serve`` watches, and when it builds: the inputs as the build sees them.

The watcher asks the build's own questions on a thread of its own: discovery, then
:func:`~sitegen.commands.build.inputs_changed` since the last build's record. So it reacts to
what a build would rebuild for and nothing else (not the site it writes), and a look costs a
build's "nothing changed?" check; discovery follows no directory link, so no link can make it
loop. It polls: on cluster file systems (NFS, Lustre, GPFS) what a compute node writes
raises no inotify event on the login node, and a recursive watch would need one watch per
trial folder.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from sitegen.commands.build import find_jobs, inputs_changed
from sitegen.errors import SitegenError
from sitegen.redact import Redactor

if TYPE_CHECKING:
    from sitegen.commands.build import LastBuild
    from sitegen.options import BuildOptions

POLL_S = 0.5  # between two looks at the inputs, at least
SETTLE_S = 0.3  # the changes that arrive within this window after the first make one build
LOOK_SHARE = 0.1  # a look may take this share of the time at most (a huge archive polls slower)


class Inputs:
    """The inputs of one site, looked at as its build looks at them."""

    def __init__(self, opts: BuildOptions) -> None:
        self.opts = opts
        self.redactor = Redactor(opts.redact_patterns)
        self.last: LastBuild | None = None  # the record of the last build that succeeded

    def look(self) -> str | None:
        """None when every input is as the last build saw it; else a token that changes with
        any change (a burst is told from quiet; a failed build is not tried again until then)."""
        opts = self.opts
        try:
            disc = find_jobs(opts, self.redactor)
        except (SitegenError, OSError) as exc:  # the archive gone: the build will say so
            return f"archive: {exc}"
        return inputs_changed(opts, disc, self.last)  # (the output is not looked at)


class Watcher:
    """Looks at the inputs on a thread of its own and builds when they changed (``build``: the
    site's record, None when it failed); what changed during a build is built next."""

    def __init__(
        self,
        inputs: Inputs,
        build: Callable[[], LastBuild | None],
        poll_s: float = POLL_S,
        settle_s: float = SETTLE_S,
    ) -> None:
        self.inputs = inputs
        self.build = build
        self.poll_s = poll_s
        self.settle_s = settle_s
        self.tried: str | None = None  # the inputs' token when the last build started
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sitegen-watch", daemon=True)

    def build_now(self) -> bool:
        """Build the inputs as they are (the first build, before serving); whether it worked."""
        self.tried = self.inputs.look()
        record = self.build()
        if record is not None:
            self.inputs.last = record
        return record is not None

    def start(self) -> None:
        self._thread.start()

    def stop(self, wait: bool = True) -> None:
        """Stop looking; with ``wait``, after the build under way (if any) has finished."""
        self._stop.set()
        if wait and self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.perf_counter()
            try:
                token = self.inputs.look()
                if token is not None and token != self.tried:
                    if self._stop.wait(self.settle_s):  # the rest of a burst joins this build
                        return
                    self.build_now()
                    continue
            except Exception as exc:  # noqa: BLE001 - the watcher must outlive any failure
                print(
                    f"sitegen serve: watching failed: {type(exc).__name__}: {exc}", file=sys.stderr
                )
            took = time.perf_counter() - started
            self._stop.wait(max(self.poll_s, took / LOOK_SHARE))
