"""The worker pool of the read stage: processes started on first use, dying with their parent.

It runs plain functions of picklable arguments (a log to parse, a shard of
``result.json`` files to decode) and knows nothing of what they read or of
the build cache. With one worker, or too little work to pay for starting
processes, everything runs in this process, with the same results.
:class:`RayPool` runs the same functions on a Ray cluster (``--executor ray``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from sitegen.errors import ConfigError

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

T = TypeVar("T")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class Pending(Protocol[R_co]):
    """A started task: a Future of the process pool or of Ray, or one run here (:class:`Done`)."""

    def result(self) -> R_co: ...


class Done(Generic[R]):
    """A task run in this process: its value, or its error raised by :meth:`result` (not a
    ``concurrent.futures.Future``: importing that costs a one-job rebuild a share)."""

    __slots__ = ("_value", "_error")

    def __init__(self, value: R | None, error: Exception | None = None) -> None:
        self._value, self._error = value, error

    def result(self) -> R:
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]  # set when there is no error


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _die_with_parent(parent: int) -> None:
    """Worker start-up: ask the kernel to kill this worker when the build process dies
    (else after a ``kill -9`` the forked workers wait forever holding the build lock, and
    every later build is refused). If the parent died before this ran, exit now."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def _run_here(fn: Callable[..., R], args: tuple) -> Done[R]:
    try:
        return Done(fn(*args))
    except Exception as exc:  # noqa: BLE001 - handed to the caller through result()
        return Done(None, exc)


class WorkerPool:
    """A process pool for one build, started on the first task that needs it; leaving it
    as a context manager waits for the workers and stops them."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # imported here: a rebuild that parses one log in this process needs none of it
            from concurrent.futures import ProcessPoolExecutor

            self._pool = ProcessPoolExecutor(
                max_workers=self.workers, initializer=_die_with_parent, initargs=(os.getpid(),)
            )
        return self._pool

    def submit_all(self, fn: Callable[..., R], argsets: Sequence[tuple]) -> list[Pending[R]]:
        """Start ``fn(*args)`` for each of ``argsets``: in the workers when there are several
        tasks and workers, else here and now."""
        if self.workers < 2 or len(argsets) < 2:
            return [_run_here(fn, args) for args in argsets]
        pool = self._executor()
        return [pool.submit(fn, *args) for args in argsets]

    def start_shards(
        self, fn: Callable[[str, list[T]], list[R]], arg: str, items: Sequence[T], min_items: int
    ) -> Callable[[], list[R]]:
        """``fn(arg, items)``, in shards across the workers when there are ``min_items`` or
        more (else here and now), without waiting: call what it returns for the results.
        ``fn`` maps a list to a list of the same length; the results come in ``items``'
        order. The shards queue behind the tasks already submitted."""
        if self.workers < 2 or len(items) < min_items:
            done = fn(arg, list(items))
            return lambda: done
        n = self.workers * 4  # several shards per worker: an uneven shard does not hold up the rest
        pool = self._executor()
        futures = [pool.submit(fn, arg, list(items[i::n])) for i in range(n)]
        return lambda: _interleave([f.result() for f in futures], len(items))

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class RayPool:
    """The same tasks on a Ray cluster (``--executor ray``); ``address``: an existing
    cluster's, else a local instance is started for the build. The results equal the local
    pool's; the archive must be at the same path on every node, and sitegen installed
    there."""

    def __init__(self, workers: int, address: str | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise ConfigError(
                "--executor ray needs Ray: pip install 'sitegen[ray]' (or use the local pool)"
            ) from None
        self._ray = ray
        self.workers = max(1, workers)
        self._started = not ray.is_initialized()
        if self._started:
            try:
                ray.init(
                    address=address,
                    # a local instance gets the --workers CPUs; a cluster has its own
                    num_cpus=None if address else self.workers,
                    include_dashboard=False,
                    log_to_driver=False,
                    configure_logging=False,
                )
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ConfigError(
                    f"cannot reach the Ray cluster at {address or 'a new local instance'}: {exc}"
                ) from None
        self._remote: dict[Callable, Any] = {}

    def _task(self, fn: Callable) -> Any:
        if fn not in self._remote:
            self._remote[fn] = self._ray.remote(num_cpus=1)(fn)
        return self._remote[fn]

    def submit_all(self, fn: Callable[..., R], argsets: Sequence[tuple]) -> list[Pending[R]]:
        """Start ``fn(*args)`` for each of ``argsets`` as Ray tasks."""
        task = self._task(fn)
        return [task.remote(*args).future() for args in argsets]

    def start_shards(
        self, fn: Callable[[str, list[T]], list[R]], arg: str, items: Sequence[T], min_items: int
    ) -> Callable[[], list[R]]:
        """As :meth:`WorkerPool.start_shards`, the shards as Ray tasks."""
        if len(items) < min_items:
            done = fn(arg, list(items))
            return lambda: done
        n = self.workers * 4
        task = self._task(fn)
        refs = [task.remote(arg, list(items[i::n])) for i in range(n)]
        return lambda: _interleave(self._ray.get(refs), len(items))

    def __enter__(self) -> RayPool:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._started:
            self._ray.shutdown()


def _interleave(parts: list[list[R]], total: int) -> list[R]:
    """The results of shards ``items[i::n]`` back in the order of ``items``."""
    out: list[Any] = [None] * total
    n = len(parts)
    for i, part in enumerate(parts):
        out[i::n] = part
    return out


def open_pool(
    workers: int, executor: str = "local", address: str | None = None
) -> WorkerPool | RayPool:
    """The pool of the parse stage: local processes (the default) or a Ray cluster."""
    if executor == "ray":
        return RayPool(workers, address)
    return WorkerPool(workers)
