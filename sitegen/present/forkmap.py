"""Map a function over items with about half of them computed in a forked child process.

The render stage runs after the parse stage's worker pool has closed, on one core
while the others idle. Pages are independent: a forked child renders every other
one (it inherits the page objects, templates and tables, so nothing is pickled on
the way in) and sends back only the finished files. Results equal a serial map:
each item is computed by the same function, and they come back in item order.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def can_fork() -> bool:
    """Whether forking is safe here: Linux, and no other thread that could hold a lock.

    A fork copies only the calling thread; a lock another thread held (logging's,
    an allocator's) would stay locked in the child forever. macOS's system
    libraries are not fork-safe either (why multiprocessing stopped forking there).
    """
    return (
        sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1
    )


def split(n: int, cost: Sequence[float] | None = None) -> tuple[list[int], list[int]]:
    """Item indices for (this process, the child): every other item, or with ``cost`` each
    item, largest first, to the side with less so far (ties to the child, whose results
    this process must still unpickle). Each list in item order."""
    if cost is None:
        return list(range(0, n, 2)), list(range(1, n, 2))
    here: list[int] = []
    there: list[int] = []
    load_here = load_there = 0.0
    for i in sorted(range(n), key=lambda i: -cost[i]):
        if load_there <= load_here:
            there.append(i)
            load_there += cost[i]
        else:
            here.append(i)
            load_here += cost[i]
    return sorted(here), sorted(there)


def fork_map(
    fn: Callable[[T], R],
    items: Sequence[T],
    parallel: bool = True,
    cost: Sequence[float] | None = None,
) -> list[R]:
    """``[fn(x) for x in items]``, about half of the items computed in a forked child
    (:func:`split`: every other one, or by ``cost``, an estimate per item).

    Serial when ``parallel`` is False, when there are fewer than two items or
    when forking is not safe (:func:`can_fork`). If the child fails for any reason
    (an exception, a signal, a result that cannot be pickled), its items are
    computed here after all, so an error surfaces in this process with its
    own traceback, as in a serial map.
    """
    if not parallel or len(items) < 2 or not can_fork():
        return [fn(x) for x in items]
    here, there = split(len(items), cost)
    theirs = [items[i] for i in there]
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(r)
        os.close(w)
        return [fn(x) for x in items]
    if pid == 0:  # the child: compute its share, send it, and leave without cleaning up
        code = 1
        try:
            os.close(r)
            data = pickle.dumps([fn(x) for x in theirs], protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(w, "wb") as sink:
                sink.write(data)
            code = 0
        finally:
            # os._exit: no atexit hooks, no finally blocks of the caller (the build's lock,
            # its staging folder): they are the parent's.
            os._exit(code)
    os.close(w)
    data = b""
    try:
        mine = [fn(items[i]) for i in here]
        with os.fdopen(r, "rb") as src:
            r = -1
            data = src.read()
    finally:
        if r != -1:
            os.close(r)  # this process failed: the child gets EPIPE instead of blocking
        _, status = os.waitpid(pid, 0)
    done: list[R] | None = None
    if os.waitstatus_to_exitcode(status) == 0:
        try:
            done = pickle.loads(data)
        except Exception:  # noqa: BLE001 - a damaged result: computed here below
            done = None
    if done is None or len(done) != len(theirs):
        done = [fn(x) for x in theirs]
    out: list[R | None] = [None] * len(items)
    for i, v in zip(here, mine, strict=True):
        out[i] = v
    for i, v in zip(there, done, strict=True):
        out[i] = v
    return out  # type: ignore[return-value]  # every slot was filled
