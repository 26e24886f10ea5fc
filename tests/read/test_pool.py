"""The parse stage's pools: local processes and a Ray cluster give the same results as one process."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest

from sitegen.commands.build import build
from sitegen.errors import ConfigError
from sitegen.options import BuildOptions, load_options
from sitegen.read.pool import WorkerPool, open_pool


def _pid_and(arg: str, items: list[int]) -> list[tuple[int, int]]:
    return [(os.getpid(), i * 2) for i in items]


def _square(x: int) -> int:
    return x * x


def _fail(x: int) -> int:
    raise ValueError(f"bad {x}")


def test_shards_come_back_in_order_and_run_in_workers():
    items = list(range(101))
    with WorkerPool(2) as pool:
        out = pool.start_shards(_pid_and, "x", items, min_items=10)()
        assert [v for _, v in out] == [i * 2 for i in items]
        assert {pid for pid, _ in out} - {os.getpid()}  # not all here
        here = pool.start_shards(_pid_and, "x", items[:5], min_items=10)()  # too few: here and now
        assert {pid for pid, _ in here} == {os.getpid()}


def test_started_shards_run_while_the_caller_goes_on():
    items = list(range(57))
    with WorkerPool(2) as pool:
        running = [pool.submit_all(_square, [(i,) for i in range(6)])]
        started = pool.start_shards(_pid_and, "x", items, min_items=10)  # queued behind those
        assert [f.result() for f in running[0]] == [i * i for i in range(6)]
        out = started()
        assert [v for _, v in out] == [i * 2 for i in items]
        assert {pid for pid, _ in out} - {os.getpid()}
        calls = []

        def here(arg, xs):
            calls.append(len(xs))
            return _pid_and(arg, xs)

        few = pool.start_shards(here, "x", items[:3], min_items=10)
        assert calls == [3]  # too few: run here and now, before anyone asks
        assert [v for _, v in few()] == [0, 2, 4]


def test_sharded_parse_in_workers_equals_a_serial_one(serial_and_sharded):
    """Logs largest first, trial shards between them, logs kept as they come: same site, same cache."""
    root, reports = serial_and_sharded
    serial, parallel = reports["serial"], reports["sharded"]
    assert parallel["parse"] == serial["parse"] and parallel["parse"]["logs_parsed"] > 3
    assert parallel["warnings"] == serial["warnings"]
    for a, b in ((root / "s1", root / "s2"), (root / ".s1.cache", root / ".s2.cache")):
        files = sorted(
            p.relative_to(a) for p in a.rglob("*") if p.is_file() and p.name != "meta.json"
        )
        assert files == sorted(
            p.relative_to(b) for p in b.rglob("*") if p.is_file() and p.name != "meta.json"
        )
        differ = [f for f in files if (a / f).read_bytes() != (b / f).read_bytes()]
        assert differ == [] or all(f.parts[0] == "site.json" for f in differ), differ


def test_submit_all_runs_a_lone_task_here_and_hands_errors_back():
    with WorkerPool(2) as pool:
        assert [f.result() for f in pool.submit_all(_square, [(3,), (4,)])] == [9, 16]
        (lone,) = pool.submit_all(_square, [(5,)])
        assert lone.result() == 25
        (bad,) = pool.submit_all(_fail, [(1,)])
        with pytest.raises(ValueError, match="bad 1"):
            bad.result()
    with WorkerPool(1) as pool:
        assert [f.result() for f in pool.submit_all(_square, [(2,), (3,)])] == [4, 9]


def test_executor_option_is_checked(tmp_path):
    with pytest.raises(ConfigError, match="executor"):
        load_options(None, archive=tmp_path, executor="spark")
    assert load_options(None, archive=tmp_path).executor == "local"


def _files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*") if p.is_file()}


@pytest.mark.ray
def test_ray_executor_equals_the_local_pool(serial_and_sharded, tmp_path):
    """The site built on Ray equals the local pool's (``serial_and_sharded``: workers=2,
    every trials folder in shards), the same options but the executor (and its one CPU)."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'sitegen[ray]')")
    root, _ = serial_and_sharded
    local = BuildOptions(archive=root / "a", out=root / "s2", workers=2, now=0.0)
    # one CPU: the smallest local instance (one worker process runs every task)
    on_ray = msgspec.structs.replace(local, out=tmp_path / "ray", executor="ray", workers=1)
    # shards too: every trials folder is decoded as Ray tasks, not here
    from sitegen.read import parse

    mp = pytest.MonkeyPatch()
    mp.setattr(parse, "TRIAL_SHARD_MIN", 1)
    try:
        report = build(on_ray)
    finally:
        mp.undo()
    assert not ray.is_initialized()  # the local instance it started is stopped again
    assert report.parse is not None and report.parse.logs_parsed == 7
    assert _files(tmp_path / "ray") == _files(local.out)


def test_ray_executor_without_ray_is_one_line(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray":
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(ConfigError, match=r"sitegen\[ray\]"):
        open_pool(2, "ray")
