"""BuildState: what survives between builds, keyed on version and options, and read as data only."""

from __future__ import annotations

import json
import math
import os
from datetime import datetime
from pathlib import Path

import msgspec
import pytest
from msgspec.structs import replace

from sitegen.cache import sources
from sitegen.cache import state as incremental
from sitegen.cache.codec import decode, known_from_bytes
from sitegen.cache.files import (
    LastBuild,
    Summary,
    entry_bytes,
    packed_entry,
    packed_entry_bytes,
    read_file,
)
from sitegen.cache.sources import fingerprint
from sitegen.cache.state import DELTA_MIN, BuildState
from sitegen.model.parsed import TrialResult
from sitegen.options import BuildOptions


def _state(tmp_path: Path, **kw) -> BuildState:
    return BuildState(tmp_path / ".site.cache", BuildOptions(archive=tmp_path, **kw))


TRIAL = TrialResult(
    name="t1",
    task="fix-bug",
    reward=math.nan,
    exception="AgentTimeoutError",
    turns=2**63 - 1,  # the largest the reader makes (read/harbor.py's _int)
    input_tokens=None,
    output_tokens=5,
    duration_s=-math.inf,
    eval=False,
    started_at=datetime(2026, 3, 1, 12, 0, 5),
    env_setup_s=1.25,
    cache_tokens=7,
)
KNOWN = {
    "t/t1/result.json": (120, 1_700_000_000_123_456_789, ("ok", TRIAL)),
    "t/t2/result.json": (0, 5, ("bad", "empty result.json", None)),
    "t/e/result.json": (9, 5, ("eval",)),
    "t/trials_step1_a.tar": (
        4096,
        7,
        [("x/t3/result.json", ("job",)), ("x/t4/result.json", ("bad", "m", 3))],
    ),
}


def _same(a: dict, b: dict) -> bool:
    # nan != nan: compare the trial's fields by their repr
    return repr(sorted(a.items())) == repr(sorted(b.items()))


def test_trial_outcomes_round_trip(tmp_path):
    s = _state(tmp_path)
    s.keep_trial_outcomes("t", KNOWN)
    got = _state(tmp_path).trial_outcomes("t")
    assert _same(got, KNOWN)
    r = got["t/t1/result.json"][2][1]
    assert math.isnan(r.reward) and r.duration_s == -math.inf and r.turns == 2**63 - 1
    assert r.started_at == TRIAL.started_at and r.cache_tokens == 7 and r.verifier_s is None
    assert _state(tmp_path).warnings == []


def _plain(i: int) -> TrialResult:
    return TrialResult(f"p{i}", "task", 0.5, None, i, 10, 20, 3.5, False, datetime(2026, 1, 1))


def _many(n: int, start: int = 0) -> dict:
    return {f"t/p{i}/result.json": (100 + i, i, ("ok", _plain(i))) for i in range(start, n)}


def _as_next_build(tmp_path: Path, known: dict) -> tuple[BuildState, dict]:
    """A new state, its outcomes read, and ``known`` with each unchanged entry replaced by
    the one it read (as plan_trials hands them on: the very entry read)."""
    s = _state(tmp_path)
    old = s.trial_outcomes("t")
    return s, {rel: old.get(rel) if old.get(rel) == e else e for rel, e in known.items()}


def test_new_outcomes_are_written_beside_the_base_and_read_over_it(tmp_path):
    first = _many(200)
    _state(tmp_path).keep_trial_outcomes("t", first)
    s = _state(tmp_path)
    base, added = s._path("trials", "t"), s._path("trialsadd", "t")
    base_bytes = base.read_bytes()
    assert not added.exists()
    grown = {**first, **_many(203, 200), "t/p5/result.json": (1, 2, ("bad", "cut short", 3))}
    s, known = _as_next_build(tmp_path, grown)
    s.keep_trial_outcomes("t", known)
    assert base.read_bytes() == base_bytes and added.exists()  # only what changed was written
    _, body = packed_entry(read_file(added))
    assert len(known_from_bytes(decode(body, tuple[str, msgspec.Raw])[1])) == 4  # 3 new, 1 changed
    s = _state(tmp_path)
    assert _same(s.trial_outcomes("t"), grown) and s.warnings == []
    # one more trial: written beside the same base, with those added before
    s, known = _as_next_build(tmp_path, {**grown, **_many(204, 203)})
    s.keep_trial_outcomes("t", known)
    assert base.read_bytes() == base_bytes
    assert _same(_state(tmp_path).trial_outcomes("t"), {**grown, **_many(204, 203)})


def test_a_removed_outcome_or_too_many_new_ones_write_a_new_base(tmp_path):
    first = _many(200)
    _state(tmp_path).keep_trial_outcomes("t", first)
    s, known = _as_next_build(tmp_path, {**first, **_many(201, 200)})
    s.keep_trial_outcomes("t", known)
    added = s._path("trialsadd", "t")
    assert added.exists()
    fewer = {k: v for k, v in first.items() if k != "t/p7/result.json"}  # a trial folder removed
    s, known = _as_next_build(tmp_path, fewer)
    s.keep_trial_outcomes("t", known)
    assert not added.exists()
    assert _same(_state(tmp_path).trial_outcomes("t"), fewer)
    more = {**fewer, **_many(200 + DELTA_MIN + 1, 200)}  # more added than the base may carry
    s, known = _as_next_build(tmp_path, more)
    s.keep_trial_outcomes("t", known)
    assert not added.exists() and _same(_state(tmp_path).trial_outcomes("t"), more)


def test_added_outcomes_damaged_or_of_another_base(tmp_path):
    """Damaged: a warning, and its files are read again; made on another base (a new base
    was written, and the build stopped before removing them): passed over, no warning."""
    first = _many(100)
    _state(tmp_path).keep_trial_outcomes("t", first)
    s, known = _as_next_build(tmp_path, {**first, **_many(102, 100)})
    s.keep_trial_outcomes("t", known)
    added = s._path("trialsadd", "t")
    good = added.read_bytes()
    added.write_bytes(good[:-9])
    s = _state(tmp_path)
    assert _same(s.trial_outcomes("t"), first)
    assert len(s.warnings) == 1 and str(added) in s.warnings[0]
    added.write_bytes(good)
    _state(tmp_path).keep_trial_outcomes("t", _many(50))  # a new base (the old is gone)...
    added.write_bytes(good)  # ... and what was added to the old one still there
    s = _state(tmp_path)
    assert _same(s.trial_outcomes("t"), _many(50)) and s.warnings == []


def test_a_cache_of_the_last_version_is_read_afresh_without_a_warning(tmp_path, monkeypatch):
    """Version 9 kept a folder's outcomes as JSON columns: a cache of it is not read."""
    monkeypatch.setattr(incremental, "CACHE_VERSION", 9)
    s = _state(tmp_path)
    old_body = {"paths": ["t/a/result.json"], "sizes": [120], "mtimes": [5]}
    old = s._path("trials", "t").with_suffix(".json")
    old.parent.mkdir()
    old.write_bytes(entry_bytes("trials", "t", {**old_body, "outcomes": [["eval"]], "trials": []}))
    monkeypatch.undo()
    s = _state(tmp_path)
    assert s.trial_outcomes("t") == {} and s.warnings == []
    assert not old.exists()  # the old cache is gone


def test_invalidated_by_version_code_options_and_clean(tmp_path, monkeypatch):
    _state(tmp_path).keep_trial_outcomes("t", KNOWN)
    assert _state(tmp_path).trial_outcomes("t")
    assert _state(tmp_path, redact_patterns=("secret",)).trial_outcomes("t") == {}
    _state(tmp_path).keep_trial_outcomes("t", KNOWN)
    monkeypatch.setattr(incremental, "__version__", "99.0")
    assert _state(tmp_path).trial_outcomes("t") == {}
    monkeypatch.undo()
    _state(tmp_path).keep_trial_outcomes("t", KNOWN)
    # the reader changed within the version (an editable install): what it read is read again
    monkeypatch.setattr(incremental, "code_signature", lambda: "other code")
    assert _state(tmp_path).trial_outcomes("t") == {}
    monkeypatch.undo()
    _state(tmp_path).keep_trial_outcomes("t", KNOWN)
    assert _state(tmp_path, clean=True).trial_outcomes("t") == {}
    assert _state(tmp_path).warnings == []  # a new version or options: no warning, just afresh


def test_damaged_or_planted_files_are_ignored_with_a_warning(tmp_path):
    s = _state(tmp_path)
    s.keep_trial_outcomes("t", KNOWN)
    path = s._path("trials", "t")
    good = path.read_bytes()
    (version, kind, name, shape), body = packed_entry(good)
    cols = msgspec.msgpack.decode(body)

    def planted(**change) -> bytes:  # a body with a good checksum
        new = msgspec.msgpack.encode([change.get(k, v) for k, v in zip(FIELDS, cols, strict=True)])
        return packed_entry_bytes(kind, name, new, shape)

    bad = {
        "truncated": good[: len(good) // 2],
        "not msgpack": b"\x80\x04\x95 a pickle",
        "a bit flipped": good[:-20] + bytes([good[-20] ^ 1]) + good[-19:],
        "another name": packed_entry_bytes(kind, "u", bytes(body), shape),
        "uneven columns": planted(sizes=cols[1][:-1]),
        "wrong type": planted(sizes=["120", *cols[1][1:]]),
        "unknown outcome": planted(outcomes=[None, ["exec", "os.system"], *cols[3][2:]]),
        "short trial": planted(trials=[cols[4][0][:1]]),
        "no trial": planted(trials=[]),
        "not an array": packed_entry_bytes(kind, name, msgspec.msgpack.encode({"a": 1}), shape),
    }
    for what, data in bad.items():
        assert data != good, what
        path.write_bytes(data)
        s = _state(tmp_path)
        assert s.trial_outcomes("t") == {}, what
        assert len(s.warnings) == 1 and str(path) in s.warnings[0], what


FIELDS = ("paths", "sizes", "mtimes", "outcomes", "trials")


def test_a_trial_set_or_summary_damaged_is_read_again(tmp_path):
    from sitegen.model.parsed import TrialSet

    ts = TrialSet("t", (TRIAL,), 1, 0, 0, 0, ())
    s = _state(tmp_path)
    s.keep_trial_set("t", ts)
    token = s.trial_tokens["t"]
    for kind in ("trialset", "trialsum"):
        path = s._path(kind, "t")
        good = path.read_bytes()
        path.write_bytes(good[:-9])
        s2 = _state(tmp_path)
        got = s2.whole_trials("t") if kind == "trialset" else s2._trial_summary("t")
        assert got is None and len(s2.warnings) == 1 and str(path) in s2.warnings[0]
        path.write_bytes(good)
    s = _state(tmp_path)
    assert repr(s.whole_trials("t")) == repr(ts) and s.trial_tokens["t"] == token
    assert s._trial_summary("t") == (replace(ts, results=()), 1)


def test_a_trial_set_msgpack_cannot_hold_is_not_kept(tmp_path):
    """A name that was not UTF-8: the set is not kept (its folder is read again), and its
    token is the same for equal sets."""
    from sitegen.model.parsed import TrialSet

    ts = TrialSet("t/\udcff", (TRIAL,), 1, 0, 0, 0, ())
    s = _state(tmp_path)
    s.keep_trial_set("t", replace(ts, path="t"))
    s.keep_trial_set("t", ts)
    token = s.trial_tokens["t"]
    assert not s._path("trialset", "t").exists() and not s._path("trialsum", "t").exists()
    s = _state(tmp_path)
    s.keep_trial_set("t", ts)
    assert s.trial_tokens["t"] == token and s.whole_trials("t") is None


def test_a_fifo_or_link_is_never_opened(tmp_path):
    s = _state(tmp_path)
    s.keep_trial_outcomes("t", KNOWN)
    path = s._path("trials", "t")
    path.unlink()
    os.mkfifo(path)  # opening it for reading would wait forever
    s = _state(tmp_path)
    assert s.trial_outcomes("t") == {} and "not a regular file" in s.warnings[0]
    path.unlink()
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    path.symlink_to(target)
    s = _state(tmp_path)
    assert s.trial_outcomes("t") == {} and len(s.warnings) == 1


def test_a_cache_folder_that_is_a_link_is_replaced(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("x")
    (tmp_path / ".site.cache").symlink_to(victim)
    s = _state(tmp_path)
    assert not s.dir.is_symlink() and s.dir.is_dir() and (victim / "precious.txt").exists()
    assert "not a folder sitegen made" in s.warnings[0]


def test_last_build_record_round_trips(tmp_path):
    last = LastBuild(
        sources="abc",
        pages={"job:x": "p1"},
        files={"index.html": (10, 1_700_000_000_000_000_001)},
        watch={"t": ((("t", 5),), (("t/a/result.json", -1, -1),))},
        open_jobs=frozenset({"x"}),
        summary=Summary(
            1, 1, 3, 1, 4, 5, 6, 7, 8, 9, (("x.out", 3, "damaged"), ("t", None, "odd"))
        ),
    )
    _state(tmp_path).save_site(last)
    assert _state(tmp_path).last == last
    assert _state(tmp_path, clean=True).last is None


def _watch(archive: Path, known: dict) -> tuple:
    before = sources._folder_stats(archive, "t")  # taken before the parse, as a build does
    return sources._watch(archive, "t", known, before)


def test_trials_watch_sees_new_and_finished_trials_only(tmp_path):
    root = tmp_path / "t"
    for name in ("a", "b"):
        (root / name).mkdir(parents=True)
    (root / "a" / "result.json").write_text("{}")
    (root / "eval_sessions" / "s1" / "e1").mkdir(parents=True)
    known = {"t/a/result.json": (2, 1, ("ok", TRIAL))}  # b has no result.json yet
    w = _watch(tmp_path, known)
    assert [f for f, _, _ in w[1]] == ["t/b/result.json", "t/eval_sessions/s1/e1/result.json"]
    assert sources.watch_holds(tmp_path, w)
    (root / "a" / "result.json").write_text('{"changed": 1}')  # complete: never looked at again
    assert sources.watch_holds(tmp_path, w)
    (root / "b" / "result.json").write_text("{}")  # a pending trial finishes
    assert not sources.watch_holds(tmp_path, w)
    w = _watch(tmp_path, known)
    (root / "eval_sessions" / "s1" / "e2").mkdir()  # a new trial in a session
    os.utime(root / "eval_sessions" / "s1", ns=(1, 1))  # (whatever the clock's granularity)
    assert not sources.watch_holds(tmp_path, w)


def test_trials_watch_from_the_parse_listing_is_the_watch_from_a_new_listing(tmp_path):
    """The build makes a folder's watch from what plan_trials listed (the folder is not
    listed again at the end of the build): the same watch, for trials complete, missing,
    damaged and in eval sessions, and trial archives (a directory named like one is none)."""
    import io
    import tarfile

    from sitegen.read.trials import decode_files, plan_trials

    root = tmp_path / "t"
    for name in ("a", "b", "c"):
        (root / name).mkdir(parents=True)
    (root / "a" / "result.json").write_text(json.dumps({"trial_name": "a", "task_name": "x"}))
    (root / "c" / "result.json").write_text("{damaged")
    (root / "eval_sessions" / "s1" / "e1").mkdir(parents=True)
    (root / "trials_step3_x.tar.gz.d").mkdir()
    (root / "trials_step9_dir.tar").mkdir()  # not an archive: a directory
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = json.dumps({"trial_name": "m", "task_name": "x"}).encode()
        info = tarfile.TarInfo("m/result.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    (root / "trials_step2_old.tar").write_bytes(buf.getvalue())
    before = sources._folder_stats(tmp_path, "t")
    plan = plan_trials(root, tmp_path)
    _, known = plan.finish(decode_files(str(tmp_path), plan.todo))
    listed = sources.Listing(plan.files, plan.tars)
    assert plan.tars == ["trials_step2_old.tar"]
    made = sources._watch(tmp_path, "t", known, before, listed)
    assert made == sources._watch(tmp_path, "t", known, before)
    assert [f for f, _, _ in made[1]] == [
        "t/b/result.json",
        "t/c/result.json",
        "t/eval_sessions/s1/e1/result.json",
        "t/trials_step3_x.tar.gz.d/result.json",
        "t/trials_step9_dir.tar/result.json",
        "t/trials_step2_old.tar",
    ]


def _parse_and_watch(tmp_path, known=None) -> tuple:
    """The trials folder ``t`` parsed as a build parses it: its trial set, outcomes, watch."""
    from sitegen.read.trials import decode_files, plan_trials

    before = sources._folder_stats(tmp_path, "t")
    plan = plan_trials(tmp_path / "t", tmp_path, known)
    ts, known = plan.finish(decode_files(str(tmp_path), plan.todo))
    listed = sources.Listing(plan.files, plan.tars, plan.dirs)
    return ts, known, sources._watch(tmp_path, "t", known, before, listed)


def _trial(folder, name) -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / "trial.log").write_text("")
    (folder / name / "result.json").write_text(json.dumps({"trial_name": name, "task_name": "x"}))


@pytest.mark.parametrize("above", ["", "outer/"])
def test_trials_watch_sees_a_harbor_job_folders_trial_end(tmp_path, above):
    """A Harbor job's folder in a trials folder (its trials read below it), or in a folder
    holding jobs: Harbor rewrites the job's summary as each trial starts and ends, so the
    watch of the summary sees a trial end; read again, the summary's new stat is watched,
    and the next build finds nothing changed."""
    job = tmp_path / "t" / above / "run"
    summary = job / "result.json"
    _trial(job, "t0")
    summary.write_text(json.dumps({"n_total_trials": 2, "stats": {}}))
    ts, known, w = _parse_and_watch(tmp_path)
    assert [r.name for r in ts.results] == ["t0"]
    assert f"t/{above}run/result.json" in [f for f, _, _ in w[1]]
    assert sources.watch_holds(tmp_path, w)
    (job / "t1").mkdir()
    (job / "t1" / "trial.log").write_text("")
    ts, known, w = _parse_and_watch(tmp_path, known)
    assert sources.watch_holds(tmp_path, w)
    (job / "t1" / "result.json").write_text(json.dumps({"trial_name": "t1", "task_name": "x"}))
    summary.write_text(json.dumps({"n_total_trials": 2, "stats": {"n": 2}}))
    assert not sources.watch_holds(tmp_path, w)
    ts, known, w = _parse_and_watch(tmp_path, known)
    assert [r.name for r in ts.results] == ["t0", "t1"]
    assert sources.watch_holds(tmp_path, w)  # nothing changed since: nothing read again
    assert _parse_and_watch(tmp_path, known)[1] == known


@pytest.mark.parametrize("own", ["trial.log", "lock.json", "agent/,verifier/"])
def test_trials_watch_holds_no_folder_of_a_running_trials_own(tmp_path, own):
    """A trial running in a job's folder: its agent/, verifier/, … change as it runs, and
    hold no trial: not walked, not watched."""
    job = tmp_path / "t" / "run"
    _trial(job, "t0")
    (job / "result.json").write_text('{"n_total_trials": 2}')
    for f in (*own.split(","), "agent/x/out.txt", "artifacts/y/z.txt", "steps/s1/agent/a.txt"):
        (job / "r" / f).parent.mkdir(parents=True, exist_ok=True)
        if f.endswith("/"):
            (job / "r" / f).mkdir(exist_ok=True)
        else:
            (job / "r" / f).write_text("{}")
    w = _parse_and_watch(tmp_path)[2]
    assert [d for d, _ in w[0]] == ["t", "t/run"]
    assert "t/run/r/result.json" in [f for f, _, _ in w[1]]  # (it ends: the watch sees it)


@pytest.mark.parametrize("above", ["", "jobs/"])
@pytest.mark.parametrize("first", ["ends", "starts"])
def test_trials_watch_sees_a_job_before_its_first_trial_ends(tmp_path, above, first):
    """A Harbor job's folder with no summary and no trial ended yet (each running, or none
    started): the folders walked are watched all the same, so the next build sees its
    first trial end (its result.json and the job's summary written) or start."""
    job = tmp_path / "t" / above / "j1"
    job.mkdir(parents=True)
    for f in ("job.log", "config.json", "lock.json"):
        (job / f).write_text("{}")
    running = ["a__1", "b__2"] if first == "ends" else []
    for name in running:
        for f in ("trial.log", "lock.json", "agent/x.txt", "verifier/y.txt"):
            (job / name / f).parent.mkdir(parents=True, exist_ok=True)
            (job / name / f).write_text("{}")
    ts, known, w = _parse_and_watch(tmp_path)
    # (none started: no trial missing, docs/formats.md §6.7)
    assert (ts.results, ts.missing) == ((), len(running))
    assert sources.watch_holds(tmp_path, w)
    if first == "ends":
        (job / "a__1" / "result.json").write_text(
            json.dumps({"trial_name": "a__1", "task_name": "x"})
        )
        (job / "result.json").write_text('{"n_total_trials": 2, "stats": {}}')
    else:
        _trial(job, "a__1")
    assert not sources.watch_holds(tmp_path, w)
    ts, known, w = _parse_and_watch(tmp_path, known)
    assert ([r.name for r in ts.results], ts.missing) == (["a__1"], len(running[1:]))
    assert sources.watch_holds(tmp_path, w)


def test_trials_watch_sees_a_job_summary_written_whole(tmp_path):
    """A job's summary below a folder holding jobs, read cut short as it was written, then
    whole: the watch sees it (its malformed warning goes)."""
    job = tmp_path / "t" / "outer" / "run"
    _trial(job, "t0")
    (job / "result.json").write_text('{"n_total_trials": 1, "st')
    ts, known, w = _parse_and_watch(tmp_path)
    assert (ts.malformed, [r.name for r in ts.results]) == (1, ["t0"])
    assert sources.watch_holds(tmp_path, w)
    (job / "result.json").write_text(json.dumps({"n_total_trials": 1, "stats": {}}))
    assert not sources.watch_holds(tmp_path, w)
    ts, known, w = _parse_and_watch(tmp_path, known)
    assert (ts.malformed, ts.job_level, [r.name for r in ts.results]) == (0, 1, ["t0"])


@pytest.mark.parametrize("added", ["outer/job3/k0", "outer/run/t1", "outer/mid/job4/k1"])
def test_trials_watch_sees_a_job_or_trial_added_below_a_folder_holding_jobs(tmp_path, added):
    """A Harbor job started in a folder holding jobs, or a trial started in a job's folder:
    the folders walked for a job's trials are watched (not its trials' own: they change
    as a trial runs, and its result.json is watched)."""
    (tmp_path / "t" / "outer" / "mid").mkdir(parents=True)
    _trial(tmp_path / "t" / "outer" / "run", "t0")
    (tmp_path / "t" / "outer" / "run" / "result.json").write_text('{"n_total_trials": 1}')
    ts, known, w = _parse_and_watch(tmp_path)
    assert [r.name for r in ts.results] == ["t0"]
    assert [d for d, _ in w[0]] == ["t", "t/outer", "t/outer/mid", "t/outer/run"]
    (tmp_path / "t" / added).mkdir(parents=True)
    assert not sources.watch_holds(tmp_path, w)
    (tmp_path / "t" / added).rmdir()
    folder, name = added.rsplit("/", 1)
    _trial(tmp_path / "t" / folder, name)
    ts = _parse_and_watch(tmp_path, known)[0]
    assert [r.name for r in ts.results] == sorted(["t0", name])


def test_a_result_landing_during_the_build_is_seen_by_the_next(tmp_path):
    """The watch holds the stats the parse saw, not the ones after it."""
    (tmp_path / "t" / "b").mkdir(parents=True)
    before = sources._folder_stats(tmp_path, "t")
    # ... the parse lists b (no result.json yet): b is "missing" ...
    (tmp_path / "t" / "b" / "result.json").write_text("{}")  # ... and the trial finishes now
    w = sources._watch(tmp_path, "t", {}, before)
    assert not sources.watch_holds(tmp_path, w)  # so the next build reads it


def test_fingerprint_marks_missing_files(tmp_path):
    (tmp_path / "a").write_text("abc")
    (fp_a, fp_b) = fingerprint([tmp_path / "a", tmp_path / "b"])
    assert fp_a[1] == 3 and fp_b[1:] == (-1, -1)


def test_a_log_parsed_in_a_worker_brings_its_cache_entries_encoded(tmp_path):
    """The parse worker encodes the log's cache entries (cache.logs.read_log) and the build
    only writes them: the same files as log_entries makes of a parse here, read back whole."""
    import shutil

    from sitegen.cache.logs import log_entries, read_log

    archive = tmp_path / "a"
    (archive / "j").mkdir(parents=True)
    sample = Path(__file__).resolve().parents[2] / "sample" / "archive" / "flat" / "stale"
    log = archive / "j" / "train_1.out"
    shutil.copy(next(sample.glob("*.out")), log)
    fp = fingerprint([log])
    parsed, entries = read_log(str(archive), "j/train_1.out", (), (), None, fp)
    assert [kind for kind, _ in entries] == ["log", "logstate", "logsum"]
    here = _state(tmp_path / "here")
    here.keep_log(parsed.path, entries)
    there = _state(tmp_path / "there")
    resume = read_log(str(archive), "j/train_1.out", (), (), None)
    assert resume[1] == []  # without a fingerprint, nothing to keep
    from sitegen.read.logfile import parse_log
    from sitegen.redact import Redactor

    again, state = parse_log(log, "j/train_1.out", Redactor(), (), None)
    there.keep_log(again.path, log_entries(again.path, fp, again, state))
    files = sorted(p.relative_to(here.dir) for p in here.dir.rglob("*.msgpack"))
    assert len(files) == 3
    for f in files:
        assert (here.dir / f).read_bytes() == (there.dir / f).read_bytes()
    whole, _ = here.cached_log(parsed.path, fp)
    steps = [b.step for b in parsed.blocks]
    assert whole is not None and len(steps) > 1
    assert [b.step for b in here.whole_log(parsed.path).blocks] == steps


def _kept_sample_log(tmp_path: Path) -> tuple:
    """A sample log copied into an archive, read as a parse worker reads it and its cache
    entries kept: the parse, the entries and the log's fingerprint."""
    import shutil

    from sitegen.cache.logs import read_log

    archive = tmp_path / "a"
    (archive / "j").mkdir(parents=True)
    sample = Path(__file__).resolve().parents[2] / "sample" / "archive" / "flat" / "stale"
    log = archive / "j" / "train_1.out"
    shutil.copy(next(sample.glob("*.out")), log)
    fp = fingerprint([log])
    parsed, entries = read_log(str(archive), "j/train_1.out", (), (), None, fp)
    _state(tmp_path).keep_log(parsed.path, entries)
    return parsed, entries, fp


def test_entries_of_another_shape_of_the_model_are_passed_over_quietly(tmp_path):
    """An entry written for another shape of its type (a field of ParsedLog or of the
    parser's state added, say) is no damage: it is not read back, nothing is said, and
    the log is read again whole. The same entry of this shape is read."""
    parsed, entries, fp = _kept_sample_log(tmp_path)
    s = _state(tmp_path)
    assert s.cached_log(parsed.path, fp)[0] is not None and s.warnings == []
    for kind, _ in entries:
        path = s._path(kind, parsed.path)
        head, body = packed_entry(path.read_bytes())
        path.write_bytes(packed_entry_bytes(head[1], head[2], bytes(body), "0" * 16))
    s = _state(tmp_path)
    assert s.cached_log(parsed.path, fp) == (None, None) and s.warnings == []


def test_trials_watch_sees_trials_start_in_a_job_folder_copied_without_its_log(tmp_path):
    """A job's folder copied without its job.log, before any trial started: its lock.json
    and config.json read as a trial running (one missing), its folder watched, so two trials
    starting in it are seen by the next build (two missing), as a clean build counts them."""
    job = tmp_path / "t" / "j1"
    job.mkdir(parents=True)
    for f in ("config.json", "lock.json"):
        (job / f).write_text("{}")
    ts, known, w = _parse_and_watch(tmp_path)
    assert (ts.results, ts.missing) == ((), 1)
    assert sources.watch_holds(tmp_path, w)
    for name in ("a__1", "b__2"):
        for f in ("trial.log", "lock.json", "agent/x.txt", "verifier/y.txt"):
            (job / name / f).parent.mkdir(parents=True, exist_ok=True)
            (job / name / f).write_text("{}")
    assert not sources.watch_holds(tmp_path, w)
    ts, known, w = _parse_and_watch(tmp_path, known)
    assert (ts.results, ts.missing) == ((), 2)
    assert sources.watch_holds(tmp_path, w)


def test_a_log_whose_summary_is_missing_is_read_whole_and_its_summary_kept(tmp_path):
    """A log's summary entry lost (its whole parse still kept): the whole parse is read back,
    nothing is said, and the summary is written again, which the next build reads; a whole
    entry of another fingerprint is not taken."""
    parsed, entries, fp = _kept_sample_log(tmp_path)
    summary = _state(tmp_path)._path("logsum", parsed.path)
    kept = summary.read_bytes()
    summary.unlink()
    s = _state(tmp_path)
    whole, resume = s.cached_log(parsed.path, fp)
    assert resume is None and s.warnings == []
    assert repr(whole) == repr(parsed)  # (nan != nan: compared by repr)
    assert summary.read_bytes() == kept
    again = _state(tmp_path)
    assert again.cached_log(parsed.path, fp)[0] is not None and again.warnings == []
    summary.unlink()
    other = tuple((p, size + 1, m) for p, size, m in fp)
    s = _state(tmp_path)
    assert s.cached_log(parsed.path, other)[0] is None and s.warnings == []


def _record_json() -> dict:
    last = LastBuild(
        sources="abc",
        pages={"job:x": "p1"},
        files={"index.html": (10, 1_700_000_000_000_000_001)},
        watch={"t": ((("t", 5),), (("t/a/result.json", -1, -1),))},
        open_jobs=frozenset({"x"}),
        summary=Summary(1, 1, 3, 1, 4, 5, 6, 7, 8, 9, (("x.out", 3, "damaged"),)),
    )
    return json.loads(json.dumps(last.to_json()))


def _drop(d: dict, *path: str) -> dict:
    for key in path[:-1]:
        d = d[key]
    del d[path[-1]]
    return d


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b["summary"].update(jobs="1"),  # a string for a count
        lambda b: b["summary"].update(jobs=True),  # a bool for a count
        lambda b: b["summary"].update(jobs=1.0),  # a float for a count
        lambda b: _drop(b, "summary", "skipped"),  # a count missing
        lambda b: b["summary"].update(warnings=[["x.out", 3]]),  # a warning cut short
        lambda b: b["files"].update({"index.html": ["10", "1"]}),  # a record of strings
        lambda b: b["files"].update({"index.html": [10]}),  # a record cut short
        lambda b: b.update(pages=None),
        lambda b: b.update(open_jobs="x"),
        lambda b: b["watch"].update(t=None),  # a watch not an object
        lambda b: b["watch"].update(t={"dirs": [], "files": [["t/a/result.json"]]}),
        lambda b: _drop(b, "sources"),
    ],
)
def test_a_damaged_last_build_record_is_refused_with_a_warning(tmp_path, damage):
    """The last build's record (site.json) decides which pages are carried over and which
    files are ours: a value of the wrong type or a field missing refuses it whole, with a
    warning (the build then starts afresh), and no exception escapes."""
    body = _record_json()
    assert LastBuild.from_json(body) is not None  # (the undamaged record is taken)
    damage(body)
    _state(tmp_path).save_site(LastBuild.from_json(_record_json()))
    assert _state(tmp_path).last is not None
    path = tmp_path / ".site.cache" / "site.json"
    head = json.loads(path.read_bytes())
    head["body"] = body
    path.write_text(json.dumps(head))
    s = _state(tmp_path)
    assert s.last is None
    assert len(s.warnings) == 1 and "ignored" in s.warnings[0]


def test_a_trial_file_in_a_sessions_own_folder_is_seen_by_the_next_build(tmp_path):
    """An eval session folder holding a trial's config.json: its agent/ is a trial's own
    folder, unless it holds a trial's file itself. A trial.log added there, or taken away,
    changes no folder the watch held before; the folder looked into is watched, so the next
    build counts what a clean build counts."""
    from sitegen.commands.build import build
    from tests.commands.test_serve import small_archive

    archive = small_archive(tmp_path)
    session = archive / "exp-async/async-run/trace_jobs/eval_sessions/run_eval_step2"
    (session / "agent").mkdir(parents=True)
    (session / "config.json").write_text("{}")
    (session / "agent/result.json").write_text(json.dumps({"trial_name": "agent"}))
    opts = BuildOptions(archive=archive, out=tmp_path / "site", workers=1, now=0.0)
    first = build(opts)
    for change in ("add", "remove"):
        log = session / "agent/trial.log"
        log.write_text("") if change == "add" else log.unlink()
        again = build(opts)
        clean = build(replace(opts, out=tmp_path / f"clean-{change}", clean=True))
        assert not again.unchanged, change
        assert again.eval_trials == clean.eval_trials, change
        assert again.eval_trials == first.eval_trials + (change == "add"), change
