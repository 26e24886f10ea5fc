"""serve's watcher: it sees what the build sees (a finished trial, a grown log; not the site's
own output, cache or staging inside the archive; no directory link followed, so a link loop
costs nothing), makes one build of a burst of changes, and tries a failed build again only
when something changed."""

from __future__ import annotations

import json
import os
import shutil
import time
import tracemalloc

from sitegen.commands.build import build
from sitegen.commands.serve import serving
from sitegen.commands.watch import Inputs, Watcher
from sitegen.options import BuildOptions
from tests.commands.test_serve import CHAIN_B, ONE_JOB, get, small_archive, wait_until
from tests.scenarios.test_incremental import STEP

TRIALS = "exp-async/async-run/trace_jobs"
PENDING = f"{TRIALS}/task-4909de8895-fix-build__v6cf5J1"  # a trial without its result.json yet


def _inputs(opts: BuildOptions) -> Inputs:
    inputs = Inputs(opts)
    inputs.last = build(opts).record
    return inputs


def test_the_watcher_sees_what_the_build_sees(tmp_path):
    archive = small_archive(tmp_path)
    opts = BuildOptions(archive=archive, out=tmp_path / "site", workers=1)
    inputs = _inputs(opts)
    assert inputs.look() is None  # as the last build saw it
    # a trial finishing inside its folder (the trials folder's own mtime does not move)
    shutil.copy(
        archive / TRIALS / "task-4909de8895-fix-build__JQhtF5X/result.json", archive / PENDING
    )
    first = inputs.look()
    assert first is not None
    with open(archive / CHAIN_B, "a") as fh:
        fh.write(STEP.format(n=101))
    second = inputs.look()
    assert second not in (None, first)  # each change changes the token
    report = build(opts)
    assert not report.unchanged and report.trials == 29  # (28 before)
    inputs.last = report.record
    assert inputs.look() is None
    # the build's own refusals: a folder beside a job, a FIFO, a hidden folder, a link out
    (archive / "flat/chain-b/.hidden").mkdir()
    os.mkfifo(archive / "flat/chain-b/pipe.out")
    os.symlink("/etc", archive / "flat/chain-b/out-link")
    token = inputs.look()
    report = build(opts)
    assert token is not None and not report.unchanged  # (the build reports them)
    inputs.last = report.record
    assert inputs.look() is None
    (archive / "flat/chain-b/.hidden/x.out").write_text("not read\n")  # inside a hidden folder
    assert inputs.look() is None and build(opts).unchanged
    shutil.rmtree(archive)
    assert inputs.look() not in (None, token)  # the archive gone: the build will say so


def test_a_link_loop_costs_the_watcher_nothing(tmp_path):
    """Two directory links to `../..` in job folders: discovery does not follow them, so a
    look takes no longer and no more memory than without them, and serving goes on."""
    archive = small_archive(tmp_path, (*ONE_JOB, "flat/live"))
    opts = BuildOptions(archive=archive, out=tmp_path / "site", workers=1)
    inputs = _inputs(opts)

    def look() -> tuple[float, int]:
        tracemalloc.start()
        started = time.thread_time()  # (CPU time: the machine's load does not count)
        assert inputs.look() is None
        took = time.thread_time() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return took, peak

    plain = min(look() for _ in range(3))
    os.symlink("../..", archive / "flat/chain-b/up")
    os.symlink("../..", archive / "flat/live/up")
    report = build(opts)
    links = [w for w in report.warnings if "directory link: not followed" in w.message]
    assert len(links) == 2
    inputs.last = report.record
    looped = min(look() for _ in range(3))
    assert looped[0] < plain[0] * 3 + 0.05 and looped[1] < plain[1] * 2 + 100_000, (plain, looped)
    with serving(opts) as site:
        builds = len(site.app.builds)
        until, deadline = site.watcher.looks + 3, time.monotonic() + 10  # two whole looks
        while site.watcher.looks < until:
            assert time.monotonic() < deadline  # (the watcher hung)
            started = time.perf_counter()
            assert get(site.url, timeout=2)[0] == 200
            assert time.perf_counter() - started < 1  # (it hung for good)
            time.sleep(0.01)
        assert len(site.app.builds) == builds  # nothing to build: the links are refused alike


def test_an_output_inside_the_archive_is_not_watched(tmp_path):
    """`-o ARCHIVE/site`: a burst of changes makes one build, and the build's own writes
    (site, cache, staging) none. (`--clean` is for the first build only.)"""
    archive = small_archive(tmp_path)
    out = archive / "site"
    with serving(BuildOptions(archive=archive, out=out, workers=1, clean=True)) as site:
        assert (archive / ".site.cache").is_dir()
        builds = len(site.app.builds)
        for log in (CHAIN_B, "flat/chain-a/train_600300.out"):  # two changes 20 ms apart
            with open(archive / log, "a") as fh:
                fh.write(STEP.format(n=101))
            time.sleep(0.02)
        assert wait_until(lambda: len(site.app.builds) > builds, 10)
        assert site.watcher.wait_looks(3)  # two whole looks more: nothing the build wrote
        # is seen as a change (a look that saw one would be followed by a build first)
        assert len(site.app.builds) == builds + 1, site.app.builds
        assert site.app.builds[-1].startswith("built ") and "7 logs (2 read" in site.app.builds[-1]
        index = json.loads(get(site.url + "data/index.json")[2])
        assert index["totals"]["jobs"] == 7
        # the user touching the site or its cache is no change of the inputs either
        os.utime(out / "index.html")
        (archive / ".site.cache/x.json").write_text("{}")
        assert site.watcher.wait_looks(3)
        assert len(site.app.builds) == builds + 1


def test_a_cache_moved_into_the_archive_is_no_input(tmp_path):
    """A build cache copied into the archive under another name is known by its marker: the
    build reads nothing of it and the watcher sees no change (both discover alike)."""
    archive = small_archive(tmp_path, ONE_JOB)
    opts = BuildOptions(archive=archive, out=tmp_path / "site", workers=1)
    first = build(opts)
    inputs = Inputs(opts)
    inputs.last = first.record
    shutil.copytree(tmp_path / ".site.cache", archive / "flat/old-cache")
    assert inputs.look() is None
    report = build(opts)
    assert report.unchanged and (report.jobs, report.skipped) == (first.jobs, first.skipped)


def test_a_failed_build_is_tried_again_only_after_a_change(tmp_path):
    archive = small_archive(tmp_path, ONE_JOB)
    opts = BuildOptions(archive=archive, out=tmp_path / "site", workers=1)
    inputs = _inputs(opts)
    calls = []
    watcher = Watcher(inputs, lambda: calls.append(time.monotonic()), poll_s=0.05, settle_s=0.02)
    with open(archive / CHAIN_B, "a") as fh:
        fh.write(STEP.format(n=101))
    watcher.start()
    try:
        assert wait_until(lambda: len(calls) == 1, 5)
        time.sleep(0.5)  # ten looks: the build failed (it returned no record), nothing changed
        assert len(calls) == 1
        with open(archive / CHAIN_B, "a") as fh:
            fh.write(STEP.format(n=102))
        assert wait_until(lambda: len(calls) == 2, 5)
    finally:
        watcher.stop()
