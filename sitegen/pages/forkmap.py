"""Map a function over items with their share computed in forked children, one per core.

Pages are independent: each forked child inherits the page objects, templates and tables
(nothing is pickled on the way in) and sends back only its results, in item order, so the
results equal a serial map.
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
    """Whether forking is safe here: Linux (macOS's system libraries are not fork-safe), and
    no other thread, whose locks (logging's, an allocator's) would stay held in the child."""
    return (
        sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1
    )


# What a child's item costs on top of its work, as a share of it: its results are pickled,
# sent through a pipe and unpickled here, so a parent that gave its child an equal share
# waits that long after finishing its own (measured on the large benchmark archive).
SEND_BACK = 0.08


def split(
    n: int, cost: Sequence[float] | None = None, parts: int = 2, send_back: float = 0.0
) -> list[list[int]]:
    """Item indices for each of ``parts`` processes (the first is this one), in item order.
    Without ``cost``, round robin. With ``cost`` (an estimate per item), largest first, each
    to the least loaded process (ties: the last), an item costing a child ``1 + send_back``
    times its cost. An item costlier than all the others together is this process's own.
    """
    parts = max(1, parts)
    if cost is None:
        return [list(range(i, n, parts)) for i in range(parts)]
    share: list[list[int]] = [[] for _ in range(parts)]
    load = [0.0] * parts
    order = sorted(range(n), key=lambda i: -cost[i])
    if order and cost[order[0]] > sum(cost) - cost[order[0]]:
        # One item outweighs all the others together: it stays here, so its results, the
        # largest, are not sent back (a running job's rebuild gains most from this).
        share[0].append(order.pop(0))
        load[0] += cost[share[0][0]]
    for i in order:
        p = min(range(parts - 1, -1, -1), key=load.__getitem__)  # least loaded, last on ties
        share[p].append(i)
        load[p] += cost[i] * (1 + send_back if p else 1)
    return [sorted(s) for s in share]


def fork_map(
    fn: Callable[[T], R],
    items: Sequence[T],
    processes: int = 2,
    cost: Sequence[float] | None = None,
) -> list[R]:
    """``[fn(x) for x in items]`` computed by this process and ``processes - 1`` forked
    children, each given its share by :func:`split`; serial for fewer than two processes or
    items, or when forking is not safe (:func:`can_fork`). A child that fails for any reason
    has its items computed here, so an error surfaces with its traceback, as in a serial map.
    """
    processes = min(processes, len(items))
    if processes < 2 or not can_fork():
        return [fn(x) for x in items]
    shares = split(len(items), cost, processes, SEND_BACK)
    children: list[tuple[int, int, list[int]]] = []  # (pid, read end, share)
    try:
        for share in shares[1:]:
            child = _fork_child(fn, [items[i] for i in share], [r for _, r, _ in children])
            if child is None:  # fork failed: these items are computed here
                shares[0] += share
            else:
                children.append((*child, share))
        out: list[R | None] = [None] * len(items)
        for i in sorted(shares[0]):
            out[i] = fn(items[i])
        while children:
            pid, r, share = children.pop(0)
            done = _collect(pid, r, len(share))
            if done is None:  # the child failed: its items are made here
                done = [fn(items[i]) for i in share]
            for i, v in zip(share, done, strict=True):
                out[i] = v
    finally:
        for pid, r, _ in children:  # this process failed: each child gets EPIPE, reaped
            os.close(r)
            os.waitpid(pid, 0)
    return out  # type: ignore[return-value]  # every slot was filled


def _fork_child(fn: Callable[[T], R], theirs: list[T], others: list[int]) -> tuple[int, int] | None:
    """Fork a child computing ``fn`` over ``theirs``: (its pid, the read end of its
    results), or None if it could not be forked. ``others``: read ends of earlier
    children, closed in the new one."""
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(r)
        os.close(w)
        return None
    if pid == 0:  # the child: compute its share, send it, and leave without cleaning up
        code = 1
        try:
            os.close(r)
            for fd in others:
                os.close(fd)
            data = pickle.dumps([fn(x) for x in theirs], protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(w, "wb") as sink:
                sink.write(data)
            code = 0
        finally:
            # os._exit: no atexit hooks, no finally blocks of the caller (the build's lock,
            # its staging folder): they are the parent's.
            os._exit(code)
    os.close(w)  # (before the next fork: a later child holding it would hide this one's EOF)
    return pid, r


def _collect(pid: int, r: int, n: int) -> list | None:
    """A child's ``n`` results, or None if it failed; the child is reaped."""
    try:
        with os.fdopen(r, "rb") as src:
            data = src.read()
    finally:
        _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return None
    try:
        done = pickle.loads(data)
    except Exception:  # noqa: BLE001 - a damaged result: computed here instead
        return None
    return done if isinstance(done, list) and len(done) == n else None
