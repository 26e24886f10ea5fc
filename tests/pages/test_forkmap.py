"""fork_map: a serial map's results, in item order, shares of them made in forked children."""

from __future__ import annotations

import contextlib
import os
import threading

import pytest

from sitegen.pages.forkmap import can_fork, fork_map, split

needs_fork = pytest.mark.skipif(not can_fork(), reason="forking is not safe here (not Linux)")


def _square_and_pid(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


@needs_fork
@pytest.mark.parametrize("n", [2, 3, 8, 11])
def test_results_are_a_serial_maps_and_half_come_from_a_child(n: int) -> None:
    out = fork_map(_square_and_pid, list(range(n)))
    assert [v for v, _ in out] == [x * x for x in range(n)]
    me = os.getpid()
    assert {pid for i, (_, pid) in enumerate(out) if i % 2 == 0} == {me}
    assert me not in {pid for i, (_, pid) in enumerate(out) if i % 2 == 1}


def test_serial_when_asked_or_when_there_is_one_item() -> None:
    me = os.getpid()
    assert fork_map(_square_and_pid, [1, 2, 3], processes=1) == [(1, me), (4, me), (9, me)]
    assert fork_map(_square_and_pid, [5]) == [(25, me)]
    assert fork_map(_square_and_pid, []) == []


@needs_fork
def test_a_failing_child_leaves_its_items_to_the_parent() -> None:
    parent = os.getpid()

    def only_here(x: int) -> int:
        if os.getpid() != parent:
            raise RuntimeError("child trouble")
        return -x

    assert fork_map(only_here, [1, 2, 3, 4]) == [-1, -2, -3, -4]

    def unpicklable(x: int) -> object:
        return (lambda: x) if os.getpid() != parent else x  # a lambda cannot be pickled

    assert fork_map(unpicklable, [1, 2, 3]) == [1, 2, 3]


@needs_fork
def test_an_error_here_is_raised_and_the_child_reaped() -> None:
    def fails_on_zero(x: int) -> int:
        if x == 0:
            raise ValueError("zero")
        return x

    with pytest.raises(ValueError, match="zero"):
        fork_map(fails_on_zero, list(range(2000)))
    # no child of ours left behind, not even a zombie (one would be reaped here); no child
    # process at all is ChildProcessError
    with contextlib.suppress(ChildProcessError):
        assert os.waitpid(-1, os.WNOHANG) == (0, 0)


def test_no_fork_while_another_thread_runs() -> None:
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert not can_fork()
        me = os.getpid()
        assert fork_map(_square_and_pid, [1, 2]) == [(1, me), (4, me)]
    finally:
        stop.set()
        t.join()


def test_split_by_cost_partitions_the_items_and_evens_the_load() -> None:
    assert split(5) == [[0, 2, 4], [1, 3]]
    assert split(5, parts=3) == [[0, 3], [1, 4], [2]]
    cost = [1.0, 50.0, 2.0, 3.0, 40.0, 4.0]
    here, there = split(len(cost), cost)
    assert sorted(here + there) == list(range(len(cost))) and here == sorted(here)
    assert 1 in there  # the largest goes to the child
    assert abs(sum(cost[i] for i in here) - sum(cost[i] for i in there)) <= 10
    assert split(0, []) == [[], []]
    three = split(len(cost), cost, 3)
    assert sorted(sum(three, [])) == list(range(len(cost)))
    assert all(s == sorted(s) for s in three)
    assert [1] in three[1:] and [4] in three[1:]  # the two largest: one child each
    assert sum(cost[i] for i in three[0]) == 10.0  # the rest here


def test_an_item_costlier_than_all_others_together_stays_here() -> None:
    # its results, the largest, need not cross a pipe; the others go to the children
    assert split(2, [10.0, 4.0]) == [[0], [1]]
    assert split(3, [3.0, 10.0, 4.0]) == [[1], [0, 2]]
    assert split(3, [3.0, 10.0, 4.0], 3) == [[1], [0], [2]]
    assert split(3, [5.0, 10.0, 5.0]) == [[0, 2], [1]]  # not costlier: the largest to a child
    assert split(1, [7.0]) == [[0], []]


def test_a_childs_items_weigh_their_sending_back() -> None:
    # equal items: evened by count without it; with it, a child's share (sent back) is lighter
    cost = [10.0] * 20
    assert [len(s) for s in split(20, cost)] == [10, 10]
    here, there = split(20, cost, send_back=0.3)
    assert sorted(here + there) == list(range(20)) and len(here) > len(there)
    # the loads it evens, to within an item: this process's work against the child's work
    # and its sending back
    assert abs(10 * len(here) - 13 * len(there)) <= 13


@needs_fork
def test_results_by_cost_are_a_serial_maps() -> None:
    items = list(range(9))
    out = fork_map(_square_and_pid, items, cost=[(x * 7) % 5 for x in items])
    assert [v for v, _ in out] == [x * x for x in items]
    assert len({pid for _, pid in out}) == 2


@needs_fork
@pytest.mark.parametrize("processes", [3, 4, 20])
def test_several_children_each_compute_their_share(processes: int) -> None:
    items = list(range(13))
    out = fork_map(_square_and_pid, items, processes)
    assert [v for v, _ in out] == [x * x for x in items]
    pids = [pid for _, pid in out]
    me = os.getpid()
    n = min(processes, len(items))
    assert len(set(pids)) == n  # this process and n - 1 children
    assert {pids[i] for i in range(0, len(items), n)} == {me}
    assert me not in {pids[i] for i in range(len(items)) if i % n}
    with contextlib.suppress(ChildProcessError):  # every child reaped
        assert os.waitpid(-1, os.WNOHANG) == (0, 0)


@needs_fork
def test_one_failing_child_of_several_leaves_its_items_to_the_parent() -> None:
    parent = os.getpid()
    big = "x" * 300_000  # more than a pipe holds: the other children block until read

    def third_child_fails(x: int) -> tuple[int, str]:
        if os.getpid() != parent and x % 4 == 2:
            os._exit(3)
        return -x, big

    out = fork_map(third_child_fails, list(range(12)), 4)
    assert [v for v, _ in out] == [-x for x in range(12)]
    with contextlib.suppress(ChildProcessError):
        assert os.waitpid(-1, os.WNOHANG) == (0, 0)


@needs_fork
def test_an_error_here_reaps_every_child() -> None:
    parent = os.getpid()

    def fails_here(x: int) -> str:
        if os.getpid() == parent:
            raise ValueError("here")
        return "y" * 200_000  # the children block on their full pipes

    with pytest.raises(ValueError, match="here"):
        fork_map(fails_here, list(range(9)), 3)
    with contextlib.suppress(ChildProcessError):
        assert os.waitpid(-1, os.WNOHANG) == (0, 0)
