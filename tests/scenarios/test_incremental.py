"""Incremental builds: nothing changed → nothing parsed or written; a grown log → read on from where it
stopped, only its pages re-rendered; the result always equals a clean build. Parallel equals serial."""

from __future__ import annotations

import gzip
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import msgspec

import sitegen
from sitegen.cache import reuse, sources
from sitegen.cache import state as incremental
from sitegen.commands import build as build_module
from sitegen.commands.build import build
from sitegen.options import BuildOptions
from sitegen.pages import forkmap
from sitegen.present import html, listing, pagefiles
from sitegen.read import parse
from sitegen.read import trials as trials_reader
from sitegen.synth import TRUTH_FILE, synth
from tests.conftest import column_in_one_unit
from tests.present.test_html import _script_data


def _data(site: Path) -> dict[str, object]:
    out = {}
    for p in sorted((site / "data").rglob("*.json")):
        d = json.loads(p.read_text())
        out[p.relative_to(site).as_posix()] = d
    return out


def _clean_build(archive: Path, out: Path) -> Path:
    """The same archive built from scratch (no cache), to compare an incremental build with."""
    build(BuildOptions(archive=archive, out=out, workers=1, now=0.0, clean=True))
    return out


# The folders of synth's archive, each its runs' logs and trials: flat/chain-a and
# flat/chain-b (one run resumed once, no trials), flat/stale (a job without an end marker,
# in the mirror form), flat/live (a running job's .log), flat/sync-baseline (a job and its
# trials), exp-async (an experiment of two jobs, their trials and notes) and misc (what
# the build skips).
FOLDERS = (
    "flat/chain-a",
    "flat/chain-b",
    "flat/stale",
    "flat/live",
    "flat/sync-baseline",
    "exp-async",
    "misc",
)


def _archive(root: Path, keep: tuple[str, ...], **synth_args: Any) -> Path:
    """synth's archive (``synth_args``: seed, steps, trials per step) holding only the folders
    ``keep`` names of ``FOLDERS``: a case builds the runs it is about and one or two others
    to be kept or left alone, and each build costs what those runs cost."""
    synth(root, **synth_args)
    folders = [
        p for p in (*root.glob("flat/*"), *root.iterdir()) if p.is_dir() and p.name != "flat"
    ]
    assert {p.relative_to(root).as_posix() for p in folders} == set(FOLDERS)
    assert set(keep) <= set(FOLDERS)
    for name in FOLDERS:
        if name not in keep:
            shutil.rmtree(root / name)
    return root


CHAIN = ("flat/chain-a", "flat/chain-b")


def _files(site: Path) -> dict[Path, bytes]:
    return {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()}


def _append(log: Path, text: str) -> None:
    st = log.stat()
    with open(log, "a") as fh:
        fh.write(text)
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))


STEP = (
    "(skyrl_entrypoint pid=4242) 2026-03-01 00:00:00.000 | INFO     | skyrl_train.utils.tracking:log:208 - Step {n}: \n"
    "(skyrl_entrypoint pid=4242) {{'reward/avg_raw_reward': '0.9000',\n"
    "(skyrl_entrypoint pid=4242)  'timing/step': '100.0000',\n"
    "(skyrl_entrypoint pid=4242)  'trainer/global_step': {n}}}\n"
)


def test_incremental_builds(tmp_path):
    archive = _archive(
        tmp_path / "a", (*CHAIN, "flat/stale", "flat/sync-baseline"), seed=21, steps=8,
        trials_per_step=3,
    )  # fmt: skip
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    first = build(opts)
    assert first.parse.logs_parsed == 4 and first.parse.trial_files_read > 0
    index_inode = (out / "index.html").stat().st_ino

    second = build(opts)
    assert second.unchanged
    assert second.parse is None  # nothing parsed, nothing even loaded from the cache
    assert (out / "index.html").stat().st_ino == index_inode  # not rewritten

    # The stale (flat, mirror form, no end marker) job grows by one step.
    log = archive / "flat/stale/train_600150.out"
    last = json.loads((out / "data/jobs/flat.stale.train_600150.json").read_text())["last_step"]
    _append(log, STEP.format(n=last + 1))
    third = build(opts)
    assert not third.unchanged
    assert (
        third.parse.logs_parsed == 1
        and third.parse.logs_resumed == 1
        and third.parse.logs_cached == 3
    )
    assert third.pages_reused >= 3  # every other job page carried over
    grown = json.loads((out / "data/jobs/flat.stale.train_600150.json").read_text())
    # the mirror form wins in that log, so the console block is read but not shown; its line is counted
    assert grown["log_lines"] > last

    assert _data(out) == _data(_clean_build(archive, tmp_path / "clean"))


def test_grown_console_log_is_read_on(tmp_path):
    archive = _archive(tmp_path / "a", CHAIN, seed=22, steps=8, trials_per_step=1)
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    build(opts)
    log = archive / "flat/chain-b/train_600301.out"
    j = json.loads((out / "data/jobs/flat.chain-b.train_600301.json").read_text())
    _append(log, STEP.format(n=j["last_step"] + 1))
    r = build(opts)
    assert r.parse.logs_resumed == 1
    j2 = json.loads((out / "data/jobs/flat.chain-b.train_600301.json").read_text())
    assert j2["last_step"] == j["last_step"] + 1 and j2["reward_last"] == 0.9
    assert _data(out) == _data(_clean_build(archive, tmp_path / "clean"))


def test_a_rebuild_that_changes_the_step_time_unit_prints_every_row_in_it(tmp_path):
    """The index prints its step times in one unit over every row; a grown log whose step
    hung for days moves that unit from minutes to hours, and the rows of the runs carried
    over from the last build are printed in hours too, as a clean build prints them."""
    archive = _archive(tmp_path / "a", (*CHAIN, "flat/stale"), seed=22, steps=8, trials_per_step=1)
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    first = build(opts)

    def step_time_column() -> str:
        index = json.loads((out / "data/index.json").read_text())
        took = {
            (kind, r["id"]): r["headline"]["step_time_mean_s"]
            for kind in ("run", "job")
            for r in index[kind + "s"]
        }
        _, rows = _script_data(out / listing.ROWS_FILE)
        kind, rid = rows["columns"].index("kind"), rows["columns"].index("id")
        listed = [took[r[kind], r[rid]] for g in rows["groups"] for r in (g[0], *g[1])]
        html = (out / "index.html").read_text(encoding="utf-8")
        return column_in_one_unit(html, "runs-table", "step time", listed)

    assert step_time_column() == "min"
    log = archive / "flat/chain-b/train_600301.out"
    j = json.loads((out / "data/jobs/flat.chain-b.train_600301.json").read_text())
    _append(log, STEP.format(n=j["last_step"] + 1).replace("'100.0000'", "'1000000.0000'"))
    r = build(opts)
    assert r.runs_kept == first.runs - 1  # every other run's row made again from its numbers
    assert step_time_column() == "h"
    _same_as_clean(out, opts, tmp_path / "clean")


def test_parallel_equals_serial(serial_and_sharded, tmp_path):
    """The serial build and the one on two workers (its trials in shards) are the pool
    tests' (tests/conftest.py: ``serial_and_sharded``); the one on three workers reads each
    trials folder whole in a worker."""
    root, _ = serial_and_sharded
    assert _data(root / "s1") == _data(root / "s2")
    # every page, chart and download too: parsing in workers, analysing and rendering in
    # forked children (two with --workers 3) changes nothing
    build(BuildOptions(archive=root / "a", out=tmp_path / "s3", workers=3, now=0.0))
    files1, files2 = _files(root / "s1"), _files(root / "s2")
    assert files1.keys() == files2.keys()
    assert [k for k in files1 if files1[k] != files2[k]] == []
    assert _files(tmp_path / "s3") == files1


def test_pages_made_with_their_analysis_equal_pages_made_apart(tmp_path, monkeypatch):
    """Each analysed run's page files are made where it was analysed (Renderer.premake); the
    site is byte for byte the one the renderer makes on its own, published cards included,
    and a premade page whose arguments differ from the renderer's is made again."""
    archive = _archive(tmp_path / "a", (*CHAIN, "exp-async"), seed=29, steps=6, trials_per_step=3)
    kw = {"archive": archive, "now": 0.0, "base_url": "https://x.io/r/"}
    calls: list[int] = []
    real_site = html.Renderer.site

    def site(self, *a, **k):
        calls.append(len(self.premade))
        return real_site(self, *a, **k)

    monkeypatch.setattr(html.Renderer, "site", site)
    build(BuildOptions(out=tmp_path / "ahead", workers=2, **kw))
    assert calls[-1] > 0
    monkeypatch.setattr(html.Renderer, "premake", lambda self, *a: {})
    build(BuildOptions(out=tmp_path / "apart", workers=2, **kw))
    assert calls[-1] == 0
    ahead = _files(tmp_path / "ahead")
    assert ahead == _files(tmp_path / "apart")
    assert any(k.name == "card.png" for k in ahead)
    # a premade page is taken only with the arguments it was made with
    r = html.Renderer.__new__(html.Renderer)
    r.premade = {"jobs/x/": (("job", "run-a", True, False), [("jobs/x/index.html", "old")])}
    assert r._take_premade("jobs/x/", ("job", "run-a", False, False)) is None
    assert r.premade == {}


def test_a_rebuilt_runs_trial_table_is_made_beside_its_analysis(tmp_path, monkeypatch):
    """A run analysed again makes its trial table as a unit of its own (commands.analyse.site_pages):
    with that one run to analyse (a running job's new trial), the analysis stays here and the
    table goes to a forked child; the table lands in the run page's files, and the site is a
    clean build's."""
    archive = _archive(
        tmp_path / "a", ("flat/stale", "exp-async"), seed=37, steps=4, trials_per_step=3
    )
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=2, now=0.0)
    build(opts)
    seen: list[tuple[list, list[list[int]]]] = []
    real = forkmap.fork_map

    def spy(fn, items, processes=2, cost=None):
        seen.append((list(items), forkmap.split(len(items), cost, min(processes, len(items)))))
        return real(fn, items, processes, cost)

    monkeypatch.setattr(forkmap, "fork_map", spy)
    prepared = []
    real_premake = html.Renderer.premake
    monkeypatch.setattr(
        html.Renderer, "premake", lambda self, *a: prepared.append(a[-1]) or real_premake(self, *a)
    )
    trials = archive / "exp-async/async-run/trace_jobs"
    model = next(d for d in sorted(trials.iterdir()) if (d / "result.json").is_file())
    result = json.loads((model / "result.json").read_text())
    result["trial_name"] = name = f"{result['task_name']}__again"
    (trials / name).mkdir()
    (trials / name / "result.json").write_text(json.dumps(result))
    build(opts)
    ((units, shares),) = seen
    assert [type(u).__name__ for u in units] == ["Run", "TrialSet"]
    assert units[1] is units[0].trials and shares == [[0], [1]]
    # the run's page files held the table's slot (filled from the unit), not a table of their own
    assert [dict(p.tables) for p in prepared] == [{id(units[1]): pagefiles.TableSlot(0)}]
    _same_as_clean(out, opts, tmp_path / "clean")
    with gzip.open(out / "runs/exp-async/trials.csv.gz", "rt") as fh:
        assert f"\n{name}," in fh.read()


def test_a_chain_job_that_shows_the_same_is_not_made_ahead(tmp_path, monkeypatch):
    """The chain's last job moved on: its run is analysed again, but the first job's page,
    which shows the same as before, is not made ahead (Renderer.premake) only to be carried
    over; with its files damaged by hand, the renderer makes it after all. Both times the
    site is a clean build's."""
    archive = _archive(tmp_path / "a", (*CHAIN, "flat/stale"), seed=36, steps=4, trials_per_step=1)
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    build(opts)
    made: list[set[str]] = []
    real = html.Renderer.premake

    def premake(self, *a):
        files = real(self, *a)
        made.append(set(files))
        return files

    monkeypatch.setattr(html.Renderer, "premake", premake)
    first, second = "jobs/flat.chain-a.train_600300/", "jobs/flat.chain-b.train_600301/"
    _append(archive / "flat/chain-b/train_600301.out", STEP.format(n=99))
    r = build(opts)
    assert second in made[-1] and first not in made[-1]
    assert r.pages_reused >= 1
    _same_as_clean(out, opts, tmp_path / "clean")
    (out / first / "index.html").write_text("edited")
    _append(archive / "flat/chain-b/train_600301.out", STEP.format(n=100))
    build(opts)
    assert first not in made[-1]
    _same_as_clean(out, opts, tmp_path / "clean2")


def test_a_run_keeps_its_link_when_it_resumes(tmp_path):
    """A flat run is named after its first job: when the next job of the chain lands, the
    run's page stays where it was (a link shared while the first job ran still leads to
    the run, now of two jobs)."""
    archive = _archive(tmp_path / "a", CHAIN, seed=37, steps=4, trials_per_step=1)
    later = archive / "flat" / "chain-b"
    shutil.move(later, tmp_path / "held-back")
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    build(opts)
    first = json.loads((out / "data" / "index.json").read_text())
    run = next(r for r in first["runs"] if r["jobs"] == ["flat.chain-a.train_600300"])
    shutil.move(tmp_path / "held-back", later)
    build(opts)
    now = json.loads((out / "data" / "index.json").read_text())
    again = next(r for r in now["runs"] if r["id"] == run["id"])
    assert again["url"] == run["url"] and (out / run["url"] / "index.html").is_file()
    assert again["jobs"] == ["flat.chain-a.train_600300", "flat.chain-b.train_600301"]
    _same_as_clean(out, opts, tmp_path / "clean")


def test_damaged_cache_is_ignored(tmp_path):
    """A crash or a hand can leave any cache file damaged: it is ignored with a warning, never trusted."""
    archive = _archive(
        tmp_path / "a", (*CHAIN, "flat/stale", "flat/sync-baseline"), seed=24, steps=8,
        trials_per_step=2,
    )  # fmt: skip
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    assert build(opts).jobs == 4
    cache = tmp_path / ".site.cache"
    damaged = [p for p in cache.rglob("*") if p.is_file() and p.name != "meta.json"]
    assert len(damaged) > 4
    for p in damaged:
        p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2])
    r = build(opts)
    assert not r.unchanged and r.parse.logs_parsed == 4 and r.pages_reused == 0
    assert len([w for w in r.cache_warnings if "ignored" in w]) >= len(damaged) - 4
    assert _data(out) == _data(_clean_build(archive, tmp_path / "clean"))


class _Payload:
    """Unpickling this runs a command: what a planted cache file would do to a pickle-based cache."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_planted_pickles_and_malformed_files_run_nothing(tmp_path):
    """With -o ARCHIVE/site, whoever can write the archive can write the cache beside the site."""
    archive = _archive(
        tmp_path / "a", (*CHAIN, "flat/sync-baseline"), seed=26, steps=8, trials_per_step=2
    )
    out = archive / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    assert build(opts).jobs == 3
    cache = archive / ".site.cache"
    marker = tmp_path / "pwned"
    evil = pickle.dumps(_Payload(marker))
    # every file but the key and the folder's marker (read by nobody: discovery looks for it)
    planted = [
        p
        for p in cache.rglob("*")
        if p.is_file() and p.name not in ("meta.json", incremental.CACHE_MARKER)
    ]
    for i, p in enumerate(planted):  # every file: a pickle, or JSON of the wrong shape
        p.write_bytes(evil if i % 2 == 0 else b'{"version": 2, "kind": "log", "body": [1, 2]}')
    for kind in ("log", "trials"):  # and pickles where sitegen < 0.5 kept them
        (cache / kind / "0123456789abcdef0123.pkl").write_bytes(evil)
    r = build(opts)
    assert not marker.exists()
    assert r.parse.logs_parsed == 3 and r.parse.trial_files_cached == 0
    # (a folder's trial set and its summary are only looked at when the site record, planted
    # too, vouches for them)
    assert len(r.cache_warnings) == len(
        [p for p in planted if p.parent.name not in ("trialset", "trialsum")]
    )
    after_attack = _data(out)
    build(BuildOptions(archive=archive, out=out, workers=1, now=0.0, clean=True))
    assert _data(out) == after_attack  # the same as a build from scratch

    (cache / "meta.json").write_bytes(evil)  # even the key: the whole cache starts afresh
    r = build(opts)
    assert not marker.exists() and r.parse.logs_parsed == 3
    assert not list(cache.rglob("*.pkl"))


def test_site_inside_the_archive_is_not_read_as_input(tmp_path):
    archive = _archive(
        tmp_path / "a", (*CHAIN, "flat/sync-baseline", "misc"), seed=25, steps=8,
        trials_per_step=1,
    )  # fmt: skip
    opts = BuildOptions(archive=archive, out=archive / "site", workers=1, now=0.0)
    first = build(opts)
    second = build(opts)
    assert second.unchanged and second.jobs == first.jobs == 3
    index = json.loads((archive / "site" / "data" / "index.json").read_text())
    assert not any(s["path"].startswith(("site", ".site")) for s in index["skipped"])
    # A build to another folder passes over the first site and its cache as well: the
    # archive's own skipped folders, no more.
    truth = json.loads((archive / TRUTH_FILE).read_text())
    other = build(BuildOptions(archive=archive, out=tmp_path / "other", workers=1, now=0.0))
    index = json.loads((tmp_path / "other" / "data" / "index.json").read_text())
    assert sorted(s["path"] for s in index["skipped"]) == truth["skipped"]
    assert other.skipped == len(truth["skipped"]) and other.jobs == 3


def test_only_stats_decide_that_nothing_changed(tmp_path):
    """The no-change check reads no file; each kind of change it must still see, it sees."""
    archive = _archive(
        tmp_path / "a", ("flat/stale", "flat/sync-baseline"), seed=27, steps=6, trials_per_step=1
    )
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    first = build(opts)
    again = build(opts)
    assert again.unchanged and again.stage_s.keys() == {"discover", "check"}
    assert (again.jobs, again.runs, again.trials) == (first.jobs, first.runs, first.trials)
    assert [str(w) for w in again.warnings] == [str(w) for w in first.warnings]  # for --strict

    # a trial still running: its folder appears without result.json, then the result lands
    trials = archive / "flat" / "sync-baseline" / "trace_jobs"
    done = next(p for p in sorted(trials.iterdir()) if (p / "result.json").is_file())
    (trials / "new-trial__x").mkdir()
    r = build(opts)
    assert not r.unchanged and r.trials == first.trials and build(opts).unchanged
    (trials / "new-trial__x" / "result.json").write_bytes((done / "result.json").read_bytes())
    r = build(opts)
    assert not r.unchanged and r.trials == first.trials + 1
    assert build(opts).unchanged

    # a log touched but not changed: parsed again, every page carried over
    log = archive / "flat" / "stale" / "train_600150.out"
    st = log.stat()
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    r = build(opts)
    assert not r.unchanged and r.parse.logs_parsed == 1 and r.pages_reused == r.pages - 3

    # time alone: a job without an end marker is "running" for 15 minutes after its last line
    late = msgspec.structs.replace(opts, now=log.stat().st_mtime + 60)
    assert build(late).unchanged  # later, but every status is still the same
    later = msgspec.structs.replace(opts, now=log.stat().st_mtime + 16 * 60)
    r = build(later)
    assert not r.unchanged
    stale = json.loads((out / "data/jobs/flat.stale.train_600150.json").read_text())
    assert stale["status"] == "incomplete"


def test_a_log_that_grows_during_a_build_is_read_by_the_next(tmp_path, monkeypatch):
    archive = _archive(tmp_path / "a", CHAIN, seed=28, steps=6, trials_per_step=1)
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    log = archive / "flat" / "chain-b" / "train_600301.out"
    real_parse = build_module._parse
    last = {}

    def parse_then_grow(*args, **kwargs):
        parsed = real_parse(*args, **kwargs)
        last["step"] = parsed.logs["flat.chain-b.train_600301"].blocks[-1].step
        _append(log, STEP.format(n=last["step"] + 1))  # the job writes while pages render
        return parsed

    monkeypatch.setattr(build_module, "_parse", parse_then_grow)
    build(opts)
    monkeypatch.undo()
    r = build(opts)
    assert not r.unchanged and r.parse.logs_parsed == 1  # not taken for built already
    grown = json.loads((out / "data/jobs/flat.chain-b.train_600301.json").read_text())
    assert grown["last_step"] == last["step"] + 1


def test_the_cache_forgets_what_left_the_archive(tmp_path):
    archive = _archive(tmp_path / "a", (*CHAIN, "flat/stale"), seed=29, steps=6, trials_per_step=1)
    opts = BuildOptions(archive=archive, out=tmp_path / "site", workers=1, now=0.0)
    assert build(opts).jobs == 3
    cache = tmp_path / ".site.cache"
    logs_before = len(list((cache / "log").glob("*.msgpack")))
    (archive / "flat" / "stale" / "train_600150.out").unlink()
    r = build(opts)
    assert r.jobs == 2 and len(list((cache / "log").glob("*.msgpack"))) == logs_before - 1


def test_unchanged_trial_folders_are_not_listed_again(tmp_path, monkeypatch):
    archive = _archive(
        tmp_path / "a", (*CHAIN, "flat/sync-baseline"), seed=30, steps=6, trials_per_step=2
    )
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    build(opts)
    listed: list[str] = []
    real = trials_reader.plan_trials
    monkeypatch.setattr(
        parse,
        "plan_trials",
        lambda root, *a, **k: listed.append(root.name) or real(root, *a, **k),
    )
    _append(archive / "flat/chain-b/train_600301.out", STEP.format(n=99))  # a log, not trials
    r = build(opts)
    assert not r.unchanged and listed == [] and r.parse.trial_files_read == 0
    trials = archive / "flat" / "sync-baseline" / "trace_jobs"
    done = next(p for p in sorted(trials.iterdir()) if (p / "result.json").is_file())
    (trials / "new-trial__y").mkdir()  # one folder changes: only it is listed
    (trials / "new-trial__y" / "result.json").write_bytes((done / "result.json").read_bytes())
    r = build(opts)
    assert listed == ["trace_jobs"]
    # and only the new trial is read: the outcomes of the others were kept meanwhile
    assert r.parse.trial_files_read == 1
    monkeypatch.undo()
    assert _data(out) == _data(_clean_build(archive, tmp_path / "clean"))


def _same_as_clean(out: Path, opts: BuildOptions, clean: Path) -> dict[Path, bytes]:
    """Every file of the incremental site equals a build from scratch of the same archive;
    returns that build's files."""
    build(msgspec.structs.replace(opts, out=clean, clean=True))
    theirs = _files(clean)
    _same_files(out, theirs)
    return theirs


def _same_files(out: Path, theirs: dict[Path, bytes]) -> None:
    """Every file of the site ``out`` equals ``theirs`` (a clean build's :func:`_files`)."""
    mine = _files(out)
    assert sorted(map(str, mine)) == sorted(map(str, theirs))
    assert [str(k) for k in mine if mine[k] != theirs[k]] == []


def test_each_kind_of_change_equals_a_clean_build(tmp_path, monkeypatch):
    """After each kind of change the incremental site is byte for byte a clean build's, and a
    change to one job analyses only that job's run again (the others are kept whole)."""
    archive = _archive(
        tmp_path / "a", (*CHAIN, "flat/stale", "flat/sync-baseline"), seed=31, steps=6,
        trials_per_step=1,
    )  # fmt: skip
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    clean = tmp_path / "clean"
    first = build(opts)
    assert first.runs_kept == 0

    # one log grows: its run (chain-a, chain-b) analysed again, every other run kept
    _append(archive / "flat/chain-b/train_600301.out", STEP.format(n=99))
    r = build(opts)
    assert r.runs_kept == first.runs - 1 and r.pages_reused >= r.pages - 6
    _same_as_clean(out, opts, clean)

    # a trial added to a folder; a trial still being written (its result.json cut short) that
    # then finishes: watched by its stat until its result.json is complete
    trials = archive / "flat" / "sync-baseline" / "trace_jobs"
    done = next(p for p in sorted(trials.iterdir()) if (p / "result.json").is_file())
    whole = (done / "result.json").read_bytes()
    (trials / "late__a").mkdir()
    (trials / "late__a" / "result.json").write_bytes(whole)
    assert build(opts).runs_kept == first.runs - 1
    _same_as_clean(out, opts, clean)
    (trials / "late__b").mkdir()
    (trials / "late__b" / "result.json").write_bytes(whole[: len(whole) // 2])
    assert build(opts).runs_kept == first.runs - 1
    _same_as_clean(out, opts, clean)
    (trials / "late__b" / "result.json").write_bytes(whole)
    r = build(opts)
    assert r.trials == first.trials + 2 and r.parse.trial_files_read == 1
    _same_as_clean(out, opts, clean)

    # A finished trial's result.json rewritten: never seen by an incremental build (Harbor
    # writes it once, when the trial ends; finished trials are not even stat'ed again, so a
    # 10 k-trial folder costs nothing), not even when its folder changes. --clean sees it.
    before = _files(out)
    result = json.loads(whole)
    result["verifier_result"] = {"rewards": {"reward": 0.123}}
    (done / "result.json").write_text(json.dumps(result))
    assert build(opts).unchanged
    st = trials.stat()
    os.utime(trials, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # the folder changes
    assert build(opts).parse.trial_files_read == 0 and _files(out) == before
    build(msgspec.structs.replace(opts, clean=True))
    assert _files(out) != before
    _same_as_clean(out, opts, clean)

    # a folder's trials archived (trials_step<N>_*.tar.gz), then their folders removed: the
    # same trials, read twice and then once, their transcripts' sources gone with the folders
    # (a transcript made again inside a run kept whole counts once in the site's record of
    # its bulk bytes: tests/write/test_site.py)
    names = sorted(p.name for p in trials.iterdir() if p.is_dir() and p.name != "eval_sessions")
    with tarfile.open(trials / "trials_step1_0.tar.gz", "w:gz") as tar:
        for name in names:
            tar.add(trials / name, arcname=name)
    assert build(opts).trials == first.trials + 2
    _same_as_clean(out, opts, clean)
    # a trial whole in an archive while its folder's copy is still cut short, then whole: the
    # archive's copy counts meanwhile, and the run (its transcripts too) is made again when
    # the folder's copy is done, as a clean build makes it
    (trials / "late__c").mkdir()
    (trials / "late__c" / "result.json").write_bytes(whole)
    with tarfile.open(trials / "trials_step2_0.tar.gz", "w:gz") as tar:
        tar.add(trials / "late__c", arcname="late__c")
    (trials / "late__c" / "result.json").write_bytes(whole[:40])
    assert build(opts).trials == first.trials + 3
    _same_as_clean(out, opts, clean)
    (trials / "late__c" / "result.json").write_bytes(whole)
    assert build(opts).trials == first.trials + 3
    _same_as_clean(out, opts, clean)
    names.append("late__c")
    for name in names:
        shutil.rmtree(trials / name)
    r = build(opts)
    assert r.trials == first.trials + 3 and r.runs_kept == first.runs - 1
    without_stale2 = _same_as_clean(out, opts, clean)

    # a job added, then removed: the archive is as it was, and so is its clean build
    shutil.copytree(archive / "flat" / "stale", archive / "flat" / "stale2")
    assert build(opts).jobs == first.jobs + 1
    _same_as_clean(out, opts, clean)
    shutil.rmtree(archive / "flat" / "stale2")
    assert build(opts).jobs == first.jobs
    _same_files(out, without_stale2)

    # options every page prints, the redaction patterns, sitegen's version: all made again
    opts = msgspec.structs.replace(opts, title="Other title")
    assert build(opts).runs_kept == 0
    _same_as_clean(out, opts, clean)
    opts = msgspec.structs.replace(opts, redact_patterns=("chain-[a-z]",))
    assert build(opts).runs_kept == 0
    _same_as_clean(out, opts, clean)
    for module in (incremental, sources, html):
        monkeypatch.setattr(module, "__version__", "99.0")
    assert build(opts).runs_kept == 0
    in_99 = _same_as_clean(out, opts, clean)
    # sitegen's code changed within its version (an editable install): every log read again.
    # (The signature keys only the build cache, which a clean build reads nothing of: its
    # build is the one above.)
    monkeypatch.setattr(incremental, "code_signature", lambda: "other code")
    again = build(opts)
    assert again.runs_kept == 0 and again.parse.logs_parsed > 0 and again.parse.trial_files_read > 0
    assert again.parse.logs_cached == again.parse.trial_files_cached == 0
    _same_files(out, in_99)


def test_harbor_jobs_in_a_trials_folder_equal_a_clean_build(tmp_path):
    """Harbor job folders kept in a trials folder (``<jobs>/<job>/<trial>/``): a trial started
    and ended in a job (its summary rewritten at each, as Harbor does), a new job started in
    the folder holding jobs: each incremental site is a clean build's, and a build after
    them finds nothing changed. A job before its first trial ends (no summary, its trials
    running, in a folder holding jobs) is watched all the same: its first trial's end is
    seen."""
    archive = _archive(tmp_path / "a", ("flat/sync-baseline",), seed=38, steps=4, trials_per_step=1)
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    clean = tmp_path / "clean"
    trials = archive / "flat" / "sync-baseline" / "trace_jobs"
    whole = next(p for p in sorted(trials.iterdir()) if (p / "result.json").is_file())
    model = json.loads((whole / "result.json").read_text())

    def job(folder: Path, trials_done: list[str], running: list[str] = (), summed=True) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for f in ("config.json", "lock.json", "job.log"):
            (folder / f).write_text("{}")
        for name in (*trials_done, *running):
            (folder / name / "agent").mkdir(parents=True, exist_ok=True)
            (folder / name / "verifier").mkdir(exist_ok=True)
            (folder / name / "trial.log").write_text("")
        for name in trials_done:
            result = {**model, "trial_name": name}
            (folder / name / "result.json").write_text(json.dumps(result))
        summary = {"n_total_trials": len(trials_done) + len(running), "stats": {"n": trials_done}}
        if summed:
            (folder / "result.json").write_text(json.dumps(summary))

    report = build(opts)
    first, missing = report.trials, report.missing
    job(trials / "outer" / "job1", ["x__1111111"])
    assert build(opts).trials == first + 1
    _same_as_clean(out, opts, clean)
    job(trials / "outer" / "job1", ["x__1111111"], ["x__2222222"])
    assert build(opts).trials == first + 1
    assert build(opts).unchanged
    job(trials / "outer" / "job1", ["x__1111111", "x__2222222"])
    assert build(opts).trials == first + 2
    _same_as_clean(out, opts, clean)
    assert build(opts).unchanged
    job(trials / "outer" / "job2", ["y__3333333"])
    assert build(opts).trials == first + 3
    _same_as_clean(out, opts, clean)
    assert build(opts).unchanged
    job(trials / "jobs" / "job3", [], ["z__4444444", "z__5555555"], summed=False)
    report = build(opts)
    assert (report.trials, report.missing) == (first + 3, missing + 2)  # (one per trial)
    assert build(opts).unchanged
    job(trials / "jobs" / "job3", ["z__4444444"], ["z__5555555"])
    report = build(opts)
    assert (report.trials, report.missing) == (first + 4, missing + 1)
    _same_as_clean(out, opts, clean)
    assert build(opts).unchanged


def test_a_split_jobs_files_are_each_read_on_and_equal_a_clean_build(tmp_path, monkeypatch):
    """A job whose stdout and stderr went to two files: each file grown is read on from its
    own state, one rewritten, gone or new is read whole; each build equals a clean one."""
    from sitegen.read import logfile

    archive = _archive(tmp_path / "a", ("flat/chain-b",), seed=32, steps=6, trials_per_step=1)
    out_log = archive / "flat/chain-b/train_600301.out"
    err_log = out_log.with_suffix(".err")
    lines = out_log.read_bytes().splitlines(keepends=True)
    vllm = b"".join(ln for ln in lines if b"[loggers.py" in ln)
    rest = b"".join(ln for ln in lines if b"[loggers.py" not in ln)
    assert vllm and b"Step 3:" in rest
    out_log.write_bytes(vllm)
    err_log.write_bytes(rest)
    out, clean = tmp_path / "site", tmp_path / "clean"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    assert build(opts).parse.logs_parsed == 1
    job = out / "data/jobs/flat.chain-b.train_600301.json"
    last = json.loads(job.read_text())["last_step"]
    assert last >= 6
    resumed: list[str] = []
    take_up = logfile.LogParser.resume

    def resume(state, rel, redactor):
        resumed.append(rel.rsplit("/", 1)[-1])
        return take_up(state, rel, redactor)

    monkeypatch.setattr(logfile.LogParser, "resume", resume)
    vllm_line = lines[next(i for i, ln in enumerate(lines) if b"[loggers.py" in ln)]
    both = ["train_600301.err", "train_600301.out"]
    for change, read_on, last_step in (
        (lambda: _append(err_log, STEP.format(n=97)), both, 97),
        (lambda: _append(out_log, vllm_line.decode()), both, 97),
        (lambda: _append(err_log, STEP.format(n=98)[:150]), both, 97),  # a partial last line
        (lambda: _append(err_log, STEP.format(n=98)[150:]), both, 98),
        # the job run anew: its .err rewritten (its first time the same: the .out read on)
        (lambda: err_log.write_bytes(rest.replace(b"pid=4242", b"pid=4343")), both[1:], last),
        (lambda: err_log.unlink(), [], None),  # gone, then back: the .out dated anew each time
        (lambda: err_log.write_bytes(rest), [], last),
    ):
        resumed.clear()
        change()
        assert build(opts).parse.logs_parsed == 1
        assert resumed == read_on
        assert json.loads(job.read_text())["last_step"] == last_step
        _same_as_clean(out, opts, clean)


def test_trial_outcomes_kept_apart_and_redacted_once_equal_a_clean_build(tmp_path):
    """A folder's outcomes are kept as a base and what was added since (cache/state.py), its
    trials redacted when read: trials added, a result.json damaged then whole, a trial
    removed, the added outcomes damaged: each site equals a clean one."""
    archive = _archive(
        tmp_path / "a", ("flat/stale", "flat/sync-baseline"), seed=33, steps=6, trials_per_step=2
    )
    out = tmp_path / "site"
    # trial names and tasks redacted: a kept outcome must hold the trial as redacted
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0, redact_patterns=("sql",))
    clean = tmp_path / "clean"
    first = build(opts)
    trials = archive / "flat" / "sync-baseline" / "trace_jobs"
    done = next(p for p in sorted(trials.iterdir()) if (p / "result.json").is_file())
    whole = (done / "result.json").read_bytes()
    cache = tmp_path / ".site.cache"
    for name in ("new1", "new2"):
        result = {**json.loads(whole), "trial_name": f"task-x-sql-join__{name}"}
        (trials / name).mkdir()
        (trials / name / "result.json").write_text(json.dumps(result))
    whole = (trials / "new2" / "result.json").read_bytes()
    (trials / "new2" / "result.json").write_bytes(whole[:50])
    bases = {p: p.read_bytes() for p in (cache / "trials").glob("*.msgpack")}
    r = build(opts)
    assert r.parse.trial_files_read == 2 and r.trials == first.trials + 1
    assert {p: p.read_bytes() for p in (cache / "trials").glob("*.msgpack")} == bases
    assert len(list((cache / "trialsadd").glob("*.msgpack"))) == 1
    _same_as_clean(out, opts, clean)
    published = b"".join(
        gzip.decompress(b) if p.suffix == ".gz" else b for p, b in _files(out).items()
    )
    assert b"-join__new1" in published and b"sql-join__new1" not in published
    (trials / "new2" / "result.json").write_bytes(whole)  # now whole
    r = build(opts)
    assert r.parse.trial_files_read == 1 and r.trials == first.trials + 2
    _same_as_clean(out, opts, clean)
    (added,) = (cache / "trialsadd").glob("*.msgpack")
    added.write_bytes(added.read_bytes()[:-20])  # damaged: its trials are read again
    st = trials.stat()
    os.utime(trials, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # (the folder changed)
    r = build(opts)
    assert r.parse.trial_files_read == 2 and any(str(added) in w for w in r.cache_warnings)
    _same_as_clean(out, opts, clean)
    shutil.rmtree(done)  # a trial removed: a new base, nothing beside it
    r = build(opts)
    assert r.trials == first.trials + 1 and not list((cache / "trialsadd").glob("*.msgpack"))
    assert {p: p.read_bytes() for p in (cache / "trials").glob("*.msgpack")} != bases
    _same_as_clean(out, opts, clean)


def test_logs_are_taken_whole_only_for_runs_made_again(tmp_path, monkeypatch):
    """An unchanged log comes as its summary; a run made again takes its jobs' logs whole,
    and parses a log again when its whole entry is damaged behind a good summary."""
    archive = _archive(tmp_path / "a", (*CHAIN, "flat/stale"), seed=32, steps=6, trials_per_step=1)
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    build(opts)
    whole: list[str] = []
    real = incremental.BuildState.whole_log
    monkeypatch.setattr(
        incremental.BuildState,
        "whole_log",
        lambda self, rel: whole.append(rel) or real(self, rel),
    )
    _append(archive / "flat/chain-b/train_600301.out", STEP.format(n=99))
    r = build(opts)
    # chain-b is read on; chain-a, its run's other job, is taken whole; no other log is
    assert r.parse.logs_resumed == 1 and whole == ["flat/chain-a/train_600300.out"]
    _same_as_clean(out, opts, tmp_path / "clean")

    for p in (tmp_path / ".site.cache" / "log").glob("*.msgpack"):
        p.write_bytes(p.read_bytes()[:100])  # whole entries damaged, summaries intact
    _append(archive / "flat/chain-b/train_600301.out", STEP.format(n=100))
    r = build(opts)
    # chain-a's whole entry is ignored (parsed again); chain-b, grown, reads only its state
    assert len([w for w in r.cache_warnings if "ignored" in w]) == 1
    assert r.parse.logs_resumed == 1 and r.parse.logs_parsed == 1
    _same_as_clean(out, opts, tmp_path / "clean")

    for p in (tmp_path / ".site.cache" / "logstate").glob("*.msgpack"):
        p.write_bytes(p.read_bytes()[:100])  # the states damaged: the grown log is read whole
    _append(archive / "flat/chain-b/train_600301.out", STEP.format(n=101))
    r = build(opts)
    assert len([w for w in r.cache_warnings if "ignored" in w]) == 2  # its state, chain-a's entry
    assert r.parse.logs_resumed == 0 and r.parse.logs_parsed == 1
    _same_as_clean(out, opts, tmp_path / "clean")


def test_trial_sets_are_taken_whole_only_for_runs_made_again(tmp_path, monkeypatch):
    """An unchanged trials folder comes as its summary (counted, keyed, never analysed); a run
    made again takes its set whole, or lists the folder again when that entry is damaged."""
    archive = _archive(
        tmp_path / "a", ("flat/stale", "flat/sync-baseline", "exp-async"), seed=33, steps=6,
        trials_per_step=2,
    )  # fmt: skip
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    first = build(opts)
    whole: list[str] = []
    real = incremental.BuildState.whole_trials
    monkeypatch.setattr(
        incremental.BuildState,
        "whole_trials",
        lambda self, d: whole.append(d) or real(self, d),
    )
    _append(archive / "flat/stale/train_600150.out", STEP.format(n=99))
    r = build(opts)  # a run without trials: no trial set decoded, every one still counted
    assert whole == [] and r.trials == first.trials and r.parse.trial_files_read == 0
    _same_as_clean(out, opts, tmp_path / "clean")

    baseline = archive / "flat/sync-baseline/train_600100.out"
    _append(baseline, STEP.format(n=99))
    r = build(opts)  # the run owning flat/sync-baseline/trace_jobs is made again
    assert whole == ["flat/sync-baseline/trace_jobs"] and r.trials == first.trials
    _same_as_clean(out, opts, tmp_path / "clean")

    for p in (tmp_path / ".site.cache" / "trialset").glob("*.msgpack"):
        p.write_bytes(p.read_bytes()[:100])  # whole sets damaged, summaries intact
    _append(baseline, STEP.format(n=100))
    r = build(opts)
    assert len([w for w in r.cache_warnings if "ignored" in w]) == 1
    _same_as_clean(out, opts, tmp_path / "clean")


def _modules_of_a_rebuild(archive: Path, out: Path, check: str) -> set[str]:
    """The modules a rebuild (``workers=2``) imports, in a fresh process; ``check`` is an
    assertion on its report ``r``."""
    code = (
        "import sys\nfrom pathlib import Path\nfrom sitegen.commands.build import build\n"
        "from sitegen.options import BuildOptions\n"
        f"r = build(BuildOptions(archive=Path({str(archive)!r}), out=Path({str(out)!r}),"
        " workers=2, now=0.0))\n"
        f"assert {check}, r\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_a_one_job_rebuild_imports_only_what_its_work_needs(tmp_path):
    """No process pool for one log, no Markdown for pages without notes, no Altair, no HTTP.
    (The first build, on one worker, makes the cache the rebuild reads.)"""
    archive = _archive(tmp_path / "a", (*CHAIN, "exp-async"), seed=34, steps=6, trials_per_step=1)
    out = tmp_path / "site"
    build(BuildOptions(archive=archive, out=out, workers=1, now=0.0))
    _append(archive / "flat/chain-b/train_600301.out", STEP.format(n=99))
    loaded = _modules_of_a_rebuild(
        archive, out, "r.parse.logs_resumed == 1 and r.runs_kept == r.runs - 1"
    )
    assert "sitegen.present.html" in loaded  # (it did render)
    unwanted = {"concurrent.futures", "markdown", "altair", "jsonschema", "http.client"}
    # nor the card painter (no --base-url)
    unwanted |= {"sitegen.present.cardpaint", "PIL", "importlib.metadata"}
    assert loaded & unwanted == set()


def _new_trial(archive: Path, name: str) -> None:
    """A trial lands in the async experiment's folder (a copy of one, under a new name)."""
    trials = archive / "exp-async/async-run/trace_jobs"
    model = next(d for d in sorted(trials.iterdir()) if (d / "result.json").is_file())
    result = json.loads((model / "result.json").read_text())
    result["trial_name"] = f"{result['task_name']}__{name}"
    (trials / result["trial_name"]).mkdir()
    (trials / result["trial_name"] / "result.json").write_text(json.dumps(result))


def test_notes_are_converted_once_and_kept_in_the_build_cache(tmp_path):
    """A job's notes are converted to HTML once and kept (BuildState.notes_html): the rebuild
    of a run with notes (a running job's new trial) does not import Markdown; edited notes
    are converted again and the old entry is forgotten; the site is a clean build's each
    time. What the cache holds is sanitized on the way to the page: a planted entry's
    script never reaches it. (The notes are converted in the build's own process, before
    any fork: the builds here but the one in a fresh process run on one worker.)"""
    archive = _archive(
        tmp_path / "a", ("flat/stale", "exp-async"), seed=38, steps=4, trials_per_step=2
    )
    notes = archive / "exp-async/notes.md"
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    build(opts)
    kept = tmp_path / ".site.cache" / "notes"
    assert len(list(kept.glob("*.json"))) == 1  # (both jobs of the experiment share them)
    _new_trial(archive, "again")
    loaded = _modules_of_a_rebuild(archive, out, "r.runs_kept == r.runs - 1")
    assert "sitegen.insights.tasks" in loaded  # (it did analyse the run again)
    assert "markdown" not in loaded
    _same_as_clean(out, opts, tmp_path / "clean")
    notes.write_text(notes.read_text() + "\nEdited: *more* notes.\n")
    build(opts)
    page = next(out.glob("jobs/exp-async.*/index.html")).read_text()
    assert "Edited: <em>more</em> notes." in page
    assert len(list(kept.glob("*.json"))) == 1
    _same_as_clean(out, opts, tmp_path / "clean2")
    # someone who can write beside the output plants HTML in the kept notes
    (entry,) = kept.glob("*.json")
    doc = json.loads(entry.read_text())
    doc["body"]["html"] += '<script>alert(1)</script><a href="javascript:x()">y</a><p>planted</p>'
    entry.write_text(json.dumps(doc))
    _new_trial(archive, "planted")
    build(opts)
    page = next(out.glob("jobs/exp-async.*/index.html")).read_text()
    assert "<p>planted</p>" in page  # (the entry was used) ...
    assert "alert(1)" not in page and "javascript:" not in page  # ... and sanitized


def test_kept_notes_stay_while_their_run_is_kept_and_go_when_they_cannot_be_used(
    tmp_path, monkeypatch
):
    """BuildState.notes_html's entries: kept while their run is kept whole (another run
    moved on), made again when the Markdown library changes (the old entry forgotten), and
    an entry whose HTML is not text (a lone surrogate, planted) is ignored with a warning
    instead of failing the build; the site is a clean build's each time. (The notes are
    converted in the build's own process, before any fork: one worker.)"""
    from sitegen.present import formatting

    archive = _archive(tmp_path / "a", (*CHAIN, "exp-async"), seed=39, steps=4, trials_per_step=2)
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    build(opts)
    kept = tmp_path / ".site.cache" / "notes"
    (first,) = kept.glob("*.json")
    _append(archive / "flat/chain-b/train_600301.out", STEP.format(n=99))
    r = build(opts)  # the experiment's run is kept whole: its notes stay in the cache
    assert r.runs_kept == r.runs - 1 and list(kept.glob("*.json")) == [first]
    monkeypatch.setattr(formatting, "markdown_signature", lambda: "markdown, upgraded")
    _new_trial(archive, "upgraded")
    build(opts)
    (second,) = kept.glob("*.json")
    assert second != first
    _same_as_clean(out, opts, tmp_path / "clean")
    doc = json.loads(second.read_text())
    doc["body"]["html"] = "<p>x</p>\ud800"
    second.write_bytes(b" " + json.dumps(doc).encode())  # (read with the standard library)
    _new_trial(archive, "surrogate")
    r = build(opts)
    assert any(str(second) in w and "not HTML text" in w for w in r.cache_warnings)
    _same_as_clean(out, opts, tmp_path / "clean2")


def _card_addresses(out: Path) -> dict[str, str]:
    """Each page's ``og:image`` (and its ``twitter:image``, the same), by page."""
    got = {}
    for page in sorted(out.glob("*/*/index.html")):
        html = page.read_text()
        og = re.findall(r'<meta property="og:image" content="([^"]+)">', html)
        assert re.findall(r'<meta name="twitter:image" content="([^"]+)">', html) == og
        got[page.parent.relative_to(out).as_posix()] = og[0]
    return got


def test_a_published_site_rebuilt_after_one_job_equals_a_clean_build(tmp_path):
    """With --base-url: kept runs keep their cards, and the sitemap lists every page in order.
    A card's address carries a digest of what it shows: the pages whose card changed (a job
    that grew, its run) point a chat app at a new address, the others keep theirs."""
    archive = _archive(tmp_path / "a", (*CHAIN, "flat/stale"), seed=35, steps=6, trials_per_step=1)
    out = tmp_path / "site"
    opts = BuildOptions(
        archive=archive, out=out, workers=1, now=0.0, base_url="https://example.org/x/"
    )
    build(opts)
    _append(archive / "flat/stale/train_600150.out", STEP.format(n=99))
    r = build(opts)
    assert r.runs_kept == r.runs - 1
    _same_as_clean(out, opts, tmp_path / "clean")
    assert (out / "sitemap.xml").is_file()
    before = _card_addresses(out)
    _append(archive / "flat/chain-b/train_600301.out", STEP.format(n=101))
    build(opts)
    after = _card_addresses(out)
    grown = {
        "jobs/flat.chain-b.train_600301": "jobs/flat.chain-b.train_600301/card.png?v=",
        "runs/flat.chain-a.train_600300": "runs/flat.chain-a.train_600300/card.png?v=",
    }
    for page, card in grown.items():
        for address in (before[page], after[page]):
            version = address.removeprefix("https://example.org/x/" + card)
            assert re.fullmatch(r"[0-9a-f]{10}", version), (page, address)
        assert after[page] != before[page], page
    # the others: the same address (a run of one job shows its job's card)
    stale = "https://example.org/x/jobs/flat.stale.train_600150/card.png?v="
    assert after["runs/flat.stale.train_600150"].startswith(stale)
    assert len(after) == 5 and {p: a for p, a in after.items() if p not in grown} == {
        p: a for p, a in before.items() if p not in grown
    }


def test_kept_run_records_are_written_back_as_read(tmp_path, monkeypatch):
    """A one-job rebuild encodes only the record of the run it made again; the others are
    written back as read, and the file is what encoding every record anew gives, byte for byte."""
    import msgspec

    from sitegen.cache import codec
    from sitegen.cache.files import packed_entry_bytes
    from sitegen.pages.kept import RunRecord
    from sitegen.write.site import SitePaths

    archive = _archive(tmp_path / "a", (*CHAIN, "flat/stale"), seed=33, steps=5, trials_per_step=1)
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    first = build(opts)
    cache = SitePaths.of(out).cache
    before = incremental.BuildState(cache, opts).run_records()
    _append(archive / "flat/chain-b/train_600301.out", STEP.format(n=99))
    encoded = []
    encode = incremental.encode  # (the cache's state encodes through codec.encode)

    def counting(value, tp):
        if tp is RunRecord:
            encoded.append(value.run.id)
        return encode(value, tp)

    monkeypatch.setattr(incremental, "encode", counting)
    assert build(opts).runs_kept == first.runs - 1
    assert len(encoded) == 1  # the run made again (chain-a, chain-b)
    monkeypatch.undo()
    state = incremental.BuildState(cache, opts)
    (path,) = list((state.dir / "pages").glob("*.msgpack"))
    records = state.run_records()
    assert len(records) == first.runs
    changed = [
        rid for rid, r in records.items() if encode(r, RunRecord) != encode(before[rid], RunRecord)
    ]
    assert changed == encoded  # the one encoded is the one made again, and holds its new key
    body = {rid: msgspec.Raw(encode(r, RunRecord)) for rid, r in records.items()}
    data = packed_entry_bytes("pages", "runs", encode(body, Any), codec.shape(RunRecord))
    assert path.read_bytes() == data


def test_a_run_is_kept_only_when_every_file_of_its_pages_is_intact(tmp_path):
    """One file of a job page changed by hand: that job's run is not kept whole (it is
    analysed again; its other pages are carried over by signature, the changed one is
    rendered again), and the site equals a clean build."""
    archive = _archive(tmp_path / "a", (*CHAIN, "flat/stale"), seed=34, steps=4, trials_per_step=1)
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    first = build(opts)
    steps = out / "jobs" / "flat.chain-b.train_600301" / "steps.csv"
    steps.write_text(steps.read_text() + "edited\n")
    r = build(opts)
    assert r.runs_kept == first.runs - 1
    assert r.pages_reused == first.pages - 3 - 1  # all but the index, runs list, compare, it
    _same_as_clean(out, opts, tmp_path / "clean")


def test_static_files_are_kept_when_a_run_is_kept_and_they_are_intact(tmp_path, monkeypatch):
    """A one-job rebuild keeps the site's static/ files without reading them (a run kept
    whole shows the package's assets unchanged); one edited in the site is written again;
    a changed asset in the package (no run kept) is copied. Each time: a clean build's site."""
    from sitegen.present import sitefiles

    archive = _archive(tmp_path / "a", (*CHAIN, "flat/stale"), seed=35, steps=4, trials_per_step=1)
    out = tmp_path / "site"
    opts = BuildOptions(archive=archive, out=out, workers=1, now=0.0)
    first = build(opts)
    copies = []
    real = sitefiles.copy_static

    def counted(w, *args):
        if w.out == out:  # (the clean builds it is compared with copy theirs)
            copies.append(1)
        real(w, *args)

    monkeypatch.setattr(html, "copy_static", counted)

    _append(archive / "flat/chain-b/train_600301.out", STEP.format(n=99))
    assert build(opts).runs_kept == first.runs - 1 and copies == []
    _same_as_clean(out, opts, tmp_path / "clean")

    style = out / "static" / "style.css"
    style.write_text("edited")
    _append(archive / "flat/chain-b/train_600301.out", STEP.format(n=100))
    assert build(opts).runs_kept == first.runs - 1 and copies == [1]
    _same_as_clean(out, opts, tmp_path / "clean")

    monkeypatch.setattr(reuse.PageReuse, "__init__", _assets_changed(reuse))
    _append(archive / "flat/chain-b/train_600301.out", STEP.format(n=101))
    assert build(opts).runs_kept == 0 and copies == [1, 1]
    _same_as_clean(out, opts, tmp_path / "clean")


def _assets_changed(reuse):
    """PageReuse.__init__ as if the package's templates and static files had changed."""
    real = reuse.PageReuse.__init__

    def init(self, state, src, writer):
        real(self, state, msgspec.structs.replace(src, assets=src.assets + "-changed"), writer)

    return init


def test_changed_sitegen_code_makes_every_page_again(tmp_path, monkeypatch):
    """A build by changed code (an editable install edited, a reinstall of the same
    version) is no "nothing changed" and carries no page over: the package's own ``.py``
    files are part of the sources signature, as its templates are."""
    from sitegen.cache import sources as sources_mod

    archive = _archive(
        tmp_path / "a", ("flat/stale", "flat/sync-baseline"), seed=5, steps=4, trials_per_step=2
    )
    opts = BuildOptions(archive=archive, out=tmp_path / "site", workers=1, now=0.0)
    build(opts)
    assert build(opts).unchanged
    real = sources_mod.code_signature()
    monkeypatch.setattr(sources_mod, "code_signature", lambda: real + "-edited")
    report = build(opts)
    assert not report.unchanged and report.pages_reused == 0 and report.pages > 0


def test_code_signature_follows_the_package_sources(tmp_path):
    (tmp_path / "p" / "__pycache__").mkdir(parents=True)
    (tmp_path / "p" / "m.py").write_text("x = 1\n")
    (tmp_path / "p" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"\0")
    sig = sources.tree_signature(tmp_path / "p", suffix=".py")
    (tmp_path / "p" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"\0\0")
    assert sources.tree_signature(tmp_path / "p", suffix=".py") == sig  # (bytecode: no)
    os.utime(tmp_path / "p" / "m.py", ns=(1, 10**18))
    assert sources.tree_signature(tmp_path / "p", suffix=".py") != sig


def test_code_signature_covers_every_module_of_the_package():
    """Not only the cache package's own modules: a change to a chart or a page is code too,
    and so is a chart's skeleton (the JSON a chart is filled into)."""
    package = Path(sitegen.__file__).resolve().parent
    assert sources.code_signature() == sources.tree_signature(package, suffix=(".py", ".json"))
    assert sources.code_signature() != sources.tree_signature(package, suffix=".py")
    own = sources.tree_signature(Path(sources.__file__).resolve().parent, suffix=".py")
    assert sources.code_signature() != own


def test_code_signature_is_the_code_this_process_started_with(monkeypatch):
    """Taken once per process: a ``serve`` left running across an edit of the package
    (a ``git pull`` into an editable install) still builds as the code it has loaded, so
    what it builds and keeps must not be marked as the new code's."""
    sources.code_signature.cache_clear()
    first = sources.code_signature()
    monkeypatch.setattr(sources, "tree_signature", lambda *roots, suffix="": "edited on disk")
    assert sources.code_signature() == first
    sources.code_signature.cache_clear()
    assert sources.code_signature() == "edited on disk"
    monkeypatch.undo()
    sources.code_signature.cache_clear()
