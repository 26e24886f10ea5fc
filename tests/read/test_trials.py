import gzip
import io
import json
import os
import tarfile

import pytest
from msgspec.structs import asdict

from sitegen.model.parsed import TrialResult
from sitegen.read import trials as trials_reader
from sitegen.read.trials import (
    TrialFormatError,
    _Gunzip,
    decode_files,
    decode_result,
    parse_trials,
)


def rec(**kw) -> bytes:
    obj = {
        "trial_name": "t__abc1234",
        "task_name": "t",
        "agent_result": {
            "n_input_tokens": 10,
            "n_output_tokens": 2,
            "metadata": {"n_episodes": 3, "all_messages": ["x" * 100]},
        },
        "verifier_result": {"rewards": {"reward": 1.0}},
        "exception_info": None,
        "started_at": "2026-02-08T00:00:00Z",
        "finished_at": "2026-02-08T00:01:30Z",
    }
    obj.update(kw)
    return json.dumps(obj).encode()


def test_fields_read():
    r = decode_result(rec(), "d", False)
    assert (r.name, r.reward, r.turns, r.exception, r.duration_s) == (
        "t__abc1234",
        1.0,
        3,
        None,
        90.0,
    )


def test_variants():
    assert decode_result(rec(verifier_result=None), "d", False).reward is None
    assert (
        decode_result(rec(verifier_result={"reward": -1.0}), "d", False).reward == -1.0
    )  # old form
    r = decode_result(
        rec(
            exception_info={"exception_type": "AgentTimeoutError"},
            verifier_result={"rewards": {"reward": 1.0}},
        ),
        "d",
        False,
    )
    assert r.exception == "AgentTimeoutError" and r.reward == 1.0  # the verifier still ran
    r = decode_result(
        rec(
            exception_info={"exception_type": "DaytonaError"},
            agent_result={"metadata": {"n_episodes": 0}},
        ),
        "d",
        False,
    )
    assert r.turns is None  # old Harbor: 0 turns when the agent loop raised
    assert decode_result(rec(agent_result={"metadata": {}}), "d", False).turns is None
    assert decode_result(json.dumps({"n_total_trials": 5}).encode(), "d", False) is None
    steps = [
        {
            "agent_result": {"metadata": {"n_episodes": 2}},
            "verifier_result": {"rewards": {"reward": 0.0}},
        },
        {
            "agent_result": {"metadata": {"n_episodes": 1}},
            "verifier_result": {"rewards": {"reward": 1.0}},
            "exception_info": {"exception_type": "AgentTimeoutError"},
        },
    ]
    top = {"rewards": {"reward": 0.5}}  # Harbor's aggregate over the steps
    r = decode_result(
        json.dumps({"trial_name": "m", "verifier_result": top, "step_results": steps}).encode(),
        "d",
        False,
    )
    assert (r.reward, r.turns, r.exception) == (0.5, 3, "AgentTimeoutError")
    # the reward is what the file states: none at the top level, none read
    r = decode_result(json.dumps({"trial_name": "m", "step_results": steps}).encode(), "d", False)
    assert (r.reward, r.exception) == (None, "AgentTimeoutError")


@pytest.mark.parametrize(
    ("rewards", "reward", "noted"),
    [
        ({"reward": 1.0, "format": 0.5}, 1.0, False),  # several: "reward" is the primary one
        ({"accuracy": 1.0}, 1.0, False),  # a reward.json of one key: that key is the reward
        ({"pass": 0}, 0.0, False),
        ({"accuracy": 1.0, "format": 0.0}, None, True),  # several, none named: none primary
        ({"reward": None, "accuracy": 1.0}, None, False),  # named, no value: not "none named"
        ({f"check_{i:02d}": 1.0 for i in range(12)}, None, True),
        ({}, None, False),
        (None, None, False),
    ],
)
def test_the_reward_is_harbors_primary_reward(rewards, reward, noted):
    # Harbor's verifier reads a reward.json of any keys; its own primary reward
    # (cli/jobs.py, upload/uploader.py) is "reward", else the only key's value
    notes: list = []
    r = decode_result(rec(verifier_result={"rewards": rewards}), "d", False, notes)
    assert r.reward == reward and type(r.reward) is type(reward)
    shown = "accuracy, format" if len(rewards or ()) == 2 else f"of {len(rewards or ())} keys"
    assert [m for m, _ in notes] == (
        [f"rewards {shown}: none is named reward: counted as no reward"] if noted else []
    )


@pytest.mark.parametrize(
    "data", [b"", b"   ", b'{"a": ', b"[1, 2]", b"42", b"[" * 5000 + b"]" * 5000]
)
def test_malformed_raise_with_reason(data):
    with pytest.raises(TrialFormatError):
        decode_result(data, "d", False)


def _tar(path, members):
    """A trials archive of ``(trial folder, result.json bytes)``, gzip'ed if named so."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if path.name.endswith(".gz") else "w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(f"{name}/result.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(buf.getvalue())


def _tree(root):
    for i in range(6):
        d = root / f"t{i}"
        d.mkdir(parents=True)
        (d / "result.json").write_bytes(rec(trial_name=f"t{i}"))
    (root / "missing").mkdir()
    (root / "bad").mkdir()
    (root / "bad" / "result.json").write_text('{"trial_name": ')
    (root / "result.json").write_text('{"n_total_trials": 6}')
    ev = root / "eval_sessions" / "s1" / "e1"
    ev.mkdir(parents=True)
    (ev / "result.json").write_bytes(rec(trial_name="e1"))
    _tar(root / "trials_step1_2026.tar.gz", [("old1", rec(trial_name="old1"))])


def test_parse_directory(tmp_path):
    _tree(tmp_path / "trace_jobs")
    ts, _ = parse_trials(tmp_path / "trace_jobs", tmp_path)
    assert (
        len(ts.results) == 7
        and ts.missing == 1
        and ts.malformed == 1
        and ts.eval_count == 1
        and ts.archives == 1
    )
    bad = [w for w in ts.warnings if "bad" in w.path]
    assert bad and bad[0].path == "trace_jobs/bad/result.json" and bad[0].line == 1


def test_a_hidden_folder_is_not_a_trial(tmp_path):
    # Jupyter leaves .ipynb_checkpoints/ where a notebook looked at the trials; Harbor
    # names no trial with a leading dot (<task>__<7 chars>): not a trial cut short
    root = tmp_path / "trace_jobs"
    (root / "t0").mkdir(parents=True)
    (root / "t0" / "result.json").write_bytes(rec(trial_name="t0"))
    (root / ".ipynb_checkpoints").mkdir()
    (root / ".cache" / "x").mkdir(parents=True)
    (root / "eval_sessions" / ".ipynb_checkpoints").mkdir(parents=True)
    (root / "eval_sessions" / "s1" / ".tmp").mkdir(parents=True)
    ts, _ = parse_trials(root, tmp_path)
    assert [r.name for r in ts.results] == ["t0"]
    assert (ts.missing, ts.malformed, ts.eval_count, ts.warnings) == (0, 0, 0, ())


def test_an_archived_trial_is_its_own_result_json_only(tmp_path):
    # an archived trial folder keeps what Harbor wrote in it: artifacts collected from the
    # sandbox (any files: a result.json too), the verifier's output (test_result.json), a
    # multi-step trial's steps/: none is a trial of its own, as the folder's are not
    root = tmp_path / "trace_jobs"
    root.mkdir()
    other = json.dumps({"passed": 3, "failed": 0}).encode()
    _tar(
        root / "trials_step1_a.tar.gz",
        [
            ("old1", rec(trial_name="old1")),
            ("old1/artifacts/app", other),
            ("old1/agent", rec(trial_name="inner")),
            ("old1/steps/fix-bug/verifier", other),
            ("./old2", rec(trial_name="old2")),
            ("eval_sessions/s_eval_step1/e1", rec(trial_name="e1")),
            ("eval_sessions/s_eval_step1/e1/artifacts", other),
        ],
    )
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("old3/verifier/test_result.json")
        info.size = len(other)
        tar.addfile(info, io.BytesIO(other))
    (root / "trials_step2_b.tar").write_bytes(buf.getvalue())
    ts, _ = parse_trials(root, tmp_path)
    assert [r.name for r in ts.results] == ["old1", "old2"]
    # (old3: a trial's folder cut short, its verifier/ written: one missing, as in a folder)
    assert (ts.eval_count, ts.missing, ts.malformed, ts.warnings) == (1, 1, 0, ())


def test_an_archived_trial_below_a_folder_named_as_a_trials_own_is_read(tmp_path):
    # a folder named agent/, steps/ or artifacts/ above the trials (a home directory's
    # artifacts, a steps/ of checkpoints) is no trial's own: the trials below it count; a
    # trial's own agent/ (its folder holds its result.json, config.json or trial.log) is
    # still no trial, whichever of its members comes first in the archive
    root = tmp_path / "trace_jobs"
    root.mkdir()
    other = json.dumps({"passed": 3}).encode()
    _tar(
        root / "trials_step1_a.tar.gz",
        [
            ("home/u/artifacts/run/trials/t1/agent/x", other),  # before its trial's file
            ("home/u/artifacts/run/trials/t1", rec(trial_name="t1")),
            ("steps/step_10/t2", rec(trial_name="t2")),
            ("agent/trials/t3", rec(trial_name="t3")),
            ("eval_sessions/steps/e1", rec(trial_name="e1")),
        ],
    )
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in (("k/t4/agent/result.json", other), ("k/t4/config.json", b"{}")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    (root / "trials_step2_b.tar").write_bytes(buf.getvalue())
    ts, _ = parse_trials(root, tmp_path)
    assert sorted(r.name for r in ts.results) == ["t1", "t2", "t3"]
    assert (ts.eval_count, ts.missing, ts.malformed, ts.warnings) == (1, 0, 0, ())


def _tar_files(path, files):
    """An archive of ``(member name, bytes)``, gzip'ed if named so."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if path.name.endswith(".gz") else "w") as tar:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(buf.getvalue())


@pytest.mark.parametrize(
    ("files", "names"),
    [
        # a Harbor job folder (its config.json, result.json, job.log) is no trial's folder
        (["run/config.json", "run/result.json", "run/job.log", "run/steps/s10/t2/result.json",
          "run/t0/result.json"], ["t0", "t2"]),
        # tar -C trace_jobs -cf x.tar . writes every name after ./ (the job summary too)
        (["./result.json", "./steps/s10/t2/result.json", "./t0/result.json"], ["t0", "t2"]),
        (["result.json", "steps/s10/t2/result.json", "t0/result.json"], ["t0", "t2"]),
        # a trial folder holding its own config.json is a trial's, whatever is above it
        (["run/config.json", "run/steps/s10/t2/result.json", "run/steps/s10/t2/config.json"],
         ["t2"]),
        # and a trial's own agent/ is none, its config.json before or after it
        (["t1/agent/x/result.json", "t1/config.json"], []),
        (["t1/trial.log", "t1/agent/x/result.json", "t1/result.json"], ["t1"]),
        # a job folder without its job.log (its result.json a job's summary) is no trial's
        (["run/config.json", "run/result.json", "run/steps/s10/t2/result.json",
          "run/steps/s10/t2/config.json"], ["t2"]),
        (["run/config.json", "run/result.json", "run/steps/s10/t2/result.json",
          "run/steps/s10/t2/trial.log"], ["t2"]),
        # a trial's own trial.log inside another trial's artifacts is no second trial
        (["t1/trial.log", "t1/result.json", "t1/artifacts/logs/trial.log",
          "t1/artifacts/logs/result.json"], ["t1"]),
        # a model saved among a trial's artifacts (its config.json) is no trial either
        (["t1/config.json", "t1/result.json", "t1/artifacts/tout/config.json",
          "t1/artifacts/tout/result.json"], ["t1"]),
    ],
)  # fmt: skip
def test_which_archived_result_json_is_a_trials(tmp_path, files, names):
    root = tmp_path / "trace_jobs"
    root.mkdir()
    job = b'{"n_total_trials": 3}'  # Harbor's job summary

    def data(f: str) -> bytes:
        folder = [p for p in f.split("/")[:-1] if p != "."]
        if not f.endswith("result.json"):
            return b"{}"
        return rec(trial_name=folder[-1]) if folder and folder[-1].startswith("t") else job

    _tar_files(root / "trials_step1_a.tar", [(f, data(f)) for f in files])
    ts, _ = parse_trials(root, tmp_path)
    assert sorted(r.name for r in ts.results) == names
    assert [w.message for w in ts.warnings if "job-level" not in w.message] == []


def test_a_damaged_archive_keeps_the_trials_read_before_the_damage(tmp_path):
    # a trial below an artifacts/ folder of no trial's, held back until the archive is seen
    # whole: the archive cut short, it is read still, with the one warning of the damage
    root = tmp_path / "trace_jobs"
    root.mkdir()
    noise = os.urandom(400_000)  # (incompressible: the cut falls inside it)
    files = [
        ("home/u/artifacts/t1/result.json", rec(trial_name="t1")),
        ("t0/result.json", rec(trial_name="t0")),
        ("t9/blob.bin", noise),
        ("t9/result.json", rec(trial_name="t9")),
    ]
    _tar_files(root / "trials_step1_a.tar.gz", files)
    data = (root / "trials_step1_a.tar.gz").read_bytes()
    (root / "trials_step1_a.tar.gz").write_bytes(data[: len(data) - 50_000])
    ts, _ = parse_trials(root, tmp_path)
    assert sorted(r.name for r in ts.results) == ["t0", "t1"]
    assert [w.message.split(" (")[0] for w in ts.warnings] == ["damaged trials archive"]


def test_a_trial_both_in_its_folder_and_an_archive_counts_once(tmp_path):
    # archiving stopped before the folders were removed: t0 and t1 are in an archive as
    # well, t1 in a second one too; each trial counts once (its folder's record), and each
    # archive holding trials read already says how many, naming one
    root = tmp_path / "trace_jobs"
    _tree(root)
    _tar(root / "trials_step2_a.tar.gz", [("t0", rec(trial_name="t0", verifier_result=None))])
    _tar(
        root / "trials_step3_b.tar",
        [("t1", rec(trial_name="t1")), ("old1", rec(trial_name="old1"))],
    )
    _tar(
        root / "trials_step4_c.tar", [("t1", rec(trial_name="t1")), ("new", rec(trial_name="new"))]
    )
    # a trial is its folder: another folder whose file names t0 is a trial of its own
    (root / "t0-copy").mkdir()
    (root / "t0-copy" / "result.json").write_bytes(rec(trial_name="t0"))
    ts, _ = parse_trials(root, tmp_path)
    names = [r.name for r in ts.results]
    assert names == ["new", "old1", "t0", "t0", "t1", "t2", "t3", "t4", "t5"]
    assert [r.reward for r in ts.results if r.name == "t0"] == [1.0, 1.0]  # the folders'

    assert ts.archives == 4  # (with _tree's own)
    dup = sorted((w.path, w.message) for w in ts.warnings if "counted once" in w.message)
    assert dup == [
        ("trace_jobs/trials_step2_a.tar.gz", "1 trial (t0) read twice: counted once"),
        ("trace_jobs/trials_step3_b.tar", "2 trials (t1, …) read twice: counted once"),
        ("trace_jobs/trials_step4_c.tar", "1 trial (t1) read twice: counted once"),
    ]


def test_a_trial_whose_folder_holds_no_readable_copy_is_the_archives(tmp_path):
    # t0's folder lost its result.json and t1's holds a cut one, while an archive holds both
    # whole: each is one trial, read from the archive, and neither is missing or unreadable;
    # t2's folder is whole and the archive's copy of it cut: the folder's counts, once
    root = tmp_path / "trace_jobs"
    for name in ("t0", "t1", "t2", "t3"):
        (root / name).mkdir(parents=True)
    (root / "t1" / "result.json").write_bytes(rec(trial_name="t1")[:40])
    (root / "t2" / "result.json").write_bytes(rec(trial_name="t2"))
    _tar(
        root / "trials_step2_a.tar",
        [
            ("t0", rec(trial_name="t0")),
            ("t1", rec(trial_name="t1")),
            ("t2", rec(trial_name="t2")[:40]),
            ("t3", rec(trial_name="t3")[:40]),
        ],
    )
    ts, _ = parse_trials(root, tmp_path)
    assert [r.name for r in ts.results] == ["t0", "t1", "t2"]
    # t3: its folder lacks the file and the archive's copy is cut: one trial, counted as its
    # folder first showed it (missing); t1's folder copy is no longer reported unreadable
    assert (ts.missing, ts.malformed) == (1, 0)
    # (said apart from a copy of a whole folder's: a set read so is another set, its run
    # analysed again when a folder's copy is damaged, lost or mended)
    assert [(w.path, w.message) for w in ts.warnings] == [
        ("trace_jobs/trials_step2_a.tar", "2 trials (t2, …) read twice: counted once"),
        (
            "trace_jobs/trials_step2_a.tar",
            "2 trials (t0, …) read from here: no readable result.json in the folder",
        ),
    ]


def test_an_eval_trial_is_not_taken_for_a_training_trial_of_its_name(tmp_path):
    # an eval session's trial and a training trial of one name: each counted as itself
    root = tmp_path / "trace_jobs"
    (root / "eval_sessions" / "s1" / "task-a__A").mkdir(parents=True)
    (root / "eval_sessions" / "s1" / "task-a__A" / "result.json").write_bytes(b"{")
    (root / "task-a__A").mkdir()
    (root / "task-a__A" / "result.json").write_bytes(b"{")
    _tar(root / "trials_step2_a.tar", [("task-a__A", rec(trial_name="task-a__A"))])
    ts, _ = parse_trials(root, tmp_path)
    assert [r.name for r in ts.results] == ["task-a__A"]
    assert ts.malformed == 1  # the eval trial's, still reported
    assert sorted(w.path for w in ts.warnings) == [
        "trace_jobs/eval_sessions/s1/task-a__A/result.json",
        "trace_jobs/trials_step2_a.tar",
    ]


def test_an_eval_trial_in_its_folder_and_an_archive_counts_once(tmp_path):
    # whole in both (the archive's under a top folder), or damaged in its folder and whole
    # in the archive: one eval trial, nothing unreadable
    root = tmp_path / "trace_jobs"
    for name, folder_copy in (("t0", rec(trial_name="t0")), ("t1", b"{")):
        (root / "eval_sessions" / "s1" / name).mkdir(parents=True)
        (root / "eval_sessions" / "s1" / name / "result.json").write_bytes(folder_copy)
    _tar(
        root / "trials_step2_a.tar",
        [
            ("trace_jobs/eval_sessions/s1/t0", rec(trial_name="t0")),
            ("trace_jobs/eval_sessions/s1/t1", rec(trial_name="t1")),
        ],
    )
    ts, _ = parse_trials(root, tmp_path)
    assert (ts.eval_count, ts.malformed, ts.missing) == (2, 0, 0)


def test_sharded_decoding_equals_serial(tmp_path):
    _tree(tmp_path / "trace_jobs")
    serial, known = parse_trials(tmp_path / "trace_jobs", tmp_path)

    def sharded(items):
        out = [None] * len(items)
        for i in range(3):
            out[i::3] = decode_files(str(tmp_path), items[i::3])
        return out

    parallel, known2 = parse_trials(tmp_path / "trace_jobs", tmp_path, decode_map=sharded)
    assert parallel == serial and known2 == known


def test_trials_cross_from_a_worker_pickled_and_come_back_equal(tmp_path):
    """Outcomes of every kind, with a trial's notes, come back equal from a worker (pickled);
    and the sharded parse through pickle equals the serial one."""
    import pickle

    root = tmp_path / "trace_jobs"
    _tree(root)
    (root / "noted").mkdir()
    (root / "noted" / "result.json").write_bytes(rec(verifier_result={"reward": "1"}))
    (root / "dt").mkdir()
    (root / "dt" / "result.json").write_bytes(rec(started_at="2026-02-08T00:00:00+02:00"))
    items = [(f"trace_jobs/{p.parent.name}/result.json", p.parent.name, False)
             for p in sorted(root.glob("*/result.json"))] + [
        ("trace_jobs/missing/result.json", "missing", False),
        ("trace_jobs/result.json", "summary", False),
        ("trace_jobs/eval_sessions/s1/e1/result.json", "e1", True),
    ]  # fmt: skip
    decoded = decode_files(str(tmp_path), items)
    kinds = {o[0] for _, _, o in decoded}
    assert kinds >= {"ok", "bad", "missing", "job", "eval"}
    assert any(o[0] == "ok" and len(o) > 2 for _, _, o in decoded)  # an "ok" with notes
    back = pickle.loads(pickle.dumps(decoded))
    assert back == decoded
    for (_, _, a), (_, _, b) in zip(back, decoded, strict=True):
        if a[0] == "ok":
            assert type(a[1]) is TrialResult and asdict(a[1]) == asdict(b[1])
            assert list(asdict(a[1])) == list(TrialResult.__struct_fields__)

    serial, known = parse_trials(root, tmp_path)

    def over_the_wire(todo):
        return pickle.loads(pickle.dumps(decode_files(str(tmp_path), todo)))

    wired, known2 = parse_trials(root, tmp_path, decode_map=over_the_wire)
    assert wired == serial and known2 == known


def test_unchanged_files_come_from_the_known_outcomes(tmp_path):
    _tree(tmp_path / "trace_jobs")
    first, known = parse_trials(tmp_path / "trace_jobs", tmp_path)
    # Poison the file contents without changing size or mtime: a cached read never opens them.
    f = tmp_path / "trace_jobs" / "t0" / "result.json"
    st = f.stat()
    f.write_bytes(b"x" * st.st_size)
    import os

    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    second, known2 = parse_trials(tmp_path / "trace_jobs", tmp_path, known=known)
    assert second == first and known2 == known
    new = tmp_path / "trace_jobs" / "t9"
    new.mkdir()
    (new / "result.json").write_bytes(rec(trial_name="t9"))
    third, known3 = parse_trials(tmp_path / "trace_jobs", tmp_path, known=known2)
    assert len(third.results) == len(first.results) + 1 and len(known3) == len(known2) + 1


def test_a_result_still_being_written_is_read_again_when_complete(tmp_path):
    root = tmp_path / "trace_jobs"
    (root / "t1").mkdir(parents=True)
    full = rec(trial_name="t1")
    (root / "t1" / "result.json").write_bytes(full[:40])  # the writer is halfway through
    first, known = parse_trials(root, tmp_path)
    assert first.malformed == 1 and len(first.results) == 0
    (root / "t1" / "result.json").write_bytes(full)
    second, known2 = parse_trials(root, tmp_path, known=known)
    assert second.malformed == 0 and [r.name for r in second.results] == ["t1"]
    # complete now: the next build takes it from the known outcomes without reading
    (root / "t1" / "result.json").write_bytes(b"garbage that is never read")
    third, _ = parse_trials(root, tmp_path, known=known2)
    assert third == second


def test_non_finite_and_huge_counts_are_absent_not_a_traceback():
    from sitegen.read.trials import decode_result

    for bad in ("NaN", "Infinity", "-Infinity", "1e400", "9" * 30):
        data = (
            (
                '{"trial_name": "t__1", "task_name": "t", "agent_result": {"n_input_tokens": BAD, '
                '"n_output_tokens": 5, "metadata": {"n_episodes": BAD}}}'
            )
            .replace("BAD", bad)
            .encode()
        )
        r = decode_result(data, "t__1", False)
        assert r is not None and r.turns is None and r.input_tokens is None
        assert r.output_tokens == 5


@pytest.mark.parametrize(
    "variant", ["0.1.45", "0.26", "0.26-multi", "0.26-context", "0.26-invalid"]
)
def test_harbor_files_as_harbor_writes_them(variant):
    """Files in the field order and shape of Harbor's ``TrialResult.model_dump_json(indent=4)``."""
    import random
    from datetime import datetime

    from sitegen.synth.trials import harbor_result

    rng = random.Random(variant)
    for _ in range(6):
        text, seen = harbor_result(rng, variant, "fix-git", datetime(2026, 5, 12, 8))
        assert text.startswith(
            '{\n    "schema_version": 1,' if variant != "0.1.45" else '{\n    "id": '
        )
        r = decode_result(text.encode(), "x", False)
        assert (r.exception, r.reward, r.turns) == (
            seen["exception"],
            seen["reward"],
            seen["turns"],
        )
        assert (r.input_tokens, r.output_tokens) == (seen["input_tokens"], seen["output_tokens"])
        assert r.duration_s == seen["duration_s"]  # UTC "Z" times beside a naive occurred_at
        if variant == "0.26-context":
            assert r.exception == "ContextLengthExceededError" and r.reward is not None
            assert r.exception_kind == "model"
        if variant == "0.26-invalid":
            assert r.exception == "VerifierTimeoutError" and r.reward is None  # reward_valid false
            assert r.exception_kind == "infrastructure"
        if variant == "0.1.45":
            assert r.exception_kind is None  # no policy in the file: classified by name


def test_harbor_policy_in_the_file_wins_over_the_name_table():
    obj = {
        "trial_name": "t__1",
        "exception_info": {
            "exception_type": "AgentTimeoutError",
            "policy": {"should_retry": True, "should_grade": False, "has_valid_reward": False},
        },
    }
    r = decode_result(json.dumps(obj).encode(), "t", False)
    assert r.exception_kind == "infrastructure"  # an override made it an infrastructure failure
    from sitegen.model.vocabulary import exception_kind, policy_kind

    assert exception_kind("AgentTimeoutError") == "model"
    assert exception_kind("SandboxBuildFailedError") == "infrastructure"
    assert exception_kind("CancelledError") == "other"
    assert (
        policy_kind({"should_retry": True, "should_grade": True, "has_valid_reward": True})
        == "other"
    )
    assert policy_kind({"should_retry": "no"}) is None


def test_model_usage_gives_tokens_when_the_totals_are_absent():
    obj = {
        "trial_name": "t__1",
        "agent_result": {
            "n_input_tokens": None,
            "n_output_tokens": None,
            "model_usage": {
                "a": {"n_input_tokens": 10, "n_output_tokens": 2},
                "b": {"n_input_tokens": 5, "n_output_tokens": 1},
            },
        },
    }
    r = decode_result(json.dumps(obj).encode(), "t", False)
    assert (r.input_tokens, r.output_tokens) == (15, 3)


def test_decode_files_refuses_what_is_not_a_plain_file_inside(tmp_path, monkeypatch):
    """The fast read keeps every refusal: a link out, a FIFO, a folder, a file over the limit."""
    import os

    from sitegen.read import trials

    root = tmp_path / "archive"
    (root / "ok").mkdir(parents=True)
    (root / "ok/result.json").write_bytes(rec(trial_name="ok"))
    (tmp_path / "secret.json").write_bytes(rec(trial_name="secret"))
    (root / "out").mkdir()
    os.symlink(tmp_path / "secret.json", root / "out/result.json")
    (root / "in").mkdir()
    os.symlink(root / "ok/result.json", root / "in/result.json")
    (root / "fifo").mkdir()
    os.mkfifo(root / "fifo/result.json")
    (root / "dir/result.json").mkdir(parents=True)
    (root / "empty").mkdir()
    (root / "empty/result.json").write_bytes(b"")
    (root / "big").mkdir()
    (root / "big/result.json").write_bytes(rec(trial_name="big", pad="x" * 2000))
    monkeypatch.setattr(trials, "MAX_RESULT_BYTES", 1000)
    names = ["ok", "out", "in", "fifo", "dir", "empty", "big", "gone"]
    decoded = decode_files(str(root), [(f"{n}/result.json", n, False) for n in names])
    got = {n: outcome for n, (_, _, outcome) in zip(names, decoded, strict=True)}
    assert got["ok"][0] == "ok" and got["ok"][1].name == "ok"
    assert got["in"][0] == "ok" and got["in"][1].name == "ok"  # a link inside is followed
    assert got["out"] == ("bad", "cannot read: link points outside the archive: not read", None)
    assert got["fifo"] == ("bad", "cannot read: a FIFO: not read", None)
    assert got["dir"] == ("bad", "cannot read: a directory: not read", None)
    assert got["empty"] == ("bad", "empty result.json", None)
    assert got["big"] == ("bad", "result.json of 0 MiB is over the 0 MiB limit: not read", None)
    assert got["gone"] == ("missing",)
    # what is kept for the next build: the fstat of each file read, nothing of the rest
    kept = {n: (size, mtime) for n, (size, mtime, _) in zip(names, decoded, strict=True)}
    st = os.stat(root / "ok/result.json")
    assert kept["ok"] == kept["in"] == (st.st_size, st.st_mtime_ns)
    assert kept["empty"] == (0, os.stat(root / "empty/result.json").st_mtime_ns)
    assert {n for n, (size, _) in kept.items() if size < 0} == {"out", "fifo", "dir", "big", "gone"}


def test_plan_lists_paths_as_they_are_joined_and_stats_only_what_may_change(tmp_path, monkeypatch):
    """plan_trials builds paths by concatenation: they must be the joined paths, for a trials
    folder at the archive's top as well as below it; and only files read before without a
    complete outcome are stat'ed (an unchanged damaged one is taken from the known outcomes);
    files never read are not stat'ed here at all (decode_files opens them)."""
    import os

    from sitegen.read import trials

    root = tmp_path / "trace_jobs"
    _tree(root)
    for archive, prefix in ((tmp_path, "trace_jobs/"), (root, "")):  # rel "trace_jobs", "."
        plan = trials.plan_trials(root, archive)
        rels = {frel for frel, _, _ in plan.plan}
        assert {f"{prefix}t0/result.json", f"{prefix}missing/result.json"} <= rels
        assert f"{prefix}eval_sessions/s1/e1/result.json" in rels
        assert len(plan.todo) == 9  # t0..t5, bad, e1 and missing: listed, none stat'ed
        missing = f"{prefix}missing/result.json"
        for frel, _name, _ev in plan.todo:
            assert os.path.isfile(os.path.join(archive, frel)) == (frel != missing)

    _, known = parse_trials(tmp_path / "trace_jobs", tmp_path)
    stated: list[str] = []
    real_stat = os.stat
    monkeypatch.setattr(
        trials.os, "stat", lambda p, *a, **k: stated.append(str(p)) or real_stat(p, *a, **k)
    )
    plan = trials.plan_trials(tmp_path / "trace_jobs", tmp_path, known)
    assert [os.path.basename(os.path.dirname(p)) for p in stated] == ["bad"]
    # the damaged one, unchanged: its outcome is the known one; the missing one is looked for
    assert [frel for frel, _, _ in plan.todo] == ["trace_jobs/missing/result.json"]
    assert {f: w for f, _, w in plan.plan}["trace_jobs/bad/result.json"] == known[
        "trace_jobs/bad/result.json"
    ][2]

    monkeypatch.setattr(trials, "MAX_RESULT_BYTES", 10)
    (tmp_path / "trace_jobs" / "bad" / "result.json").write_text('{"trial_name": "bad", "x": 1}')
    plan = trials.plan_trials(tmp_path / "trace_jobs", tmp_path, known)
    kind, msg, _ = {f: w for f, _, w in plan.plan}["trace_jobs/bad/result.json"]
    assert kind == "bad" and "over the 0 MiB limit: not read" in msg
    assert [frel for frel, _, _ in plan.todo] == ["trace_jobs/missing/result.json"]


def test_problems_read_around_are_noted_with_their_line():
    """A file read in spite of a problem says what it was: bytes that are not UTF-8 (with
    their line), a reward that is not a number or not finite (no reward)."""
    notes: list = []
    data = rec().replace(b'"t"', b'"t\xff\xfe"', 1)
    data = data.replace(b', "agent_result"', b',\n"agent_result"', 1)
    r = decode_result(data, "d", False, notes)
    assert r.task == "t\ufffd\ufffd" and r.reward == 1.0
    assert notes == [("invalid UTF-8: read with replacement characters", 1)]
    long = "https://u:" + "p4ssw0rd" * 6 + "@host"  # never cut: its password would show
    for reward, shown in (
        ("1.0", '"1.0"'),
        (True, "true"),
        ({"x": 1}, '{"x": 1}'),
        (long, f"(a str of {len(long) + 2} characters in JSON)"),
    ):
        notes = []
        r = decode_result(rec(verifier_result={"rewards": {"reward": reward}}), "d", False, notes)
        assert r.reward is None
        assert notes == [(f"reward {shown} is not a number: counted as no reward", None)]
    notes = []
    r = decode_result(rec().replace(b"1.0}}", b"NaN}}"), "d", False, notes)
    assert r.reward != r.reward and notes == [("reward is nan: counted as no reward", None)]
    notes = []
    decode_result(rec(verifier_result=None), "d", False, notes)
    decode_result(rec(), "d", False, notes)
    assert notes == []  # no reward at all, or a good one: nothing to say


def test_notes_are_warned_at_every_build_from_the_kept_outcomes(tmp_path):
    root = tmp_path / "trace_jobs"
    (root / "t1").mkdir(parents=True)
    (root / "t2").mkdir()
    (root / "t1" / "result.json").write_bytes(
        rec(trial_name="t1").replace(b'"task_name": "t"', b'"task_name":\n"t\xff"')
    )
    (root / "t2" / "result.json").write_bytes(
        rec(trial_name="t2", verifier_result={"rewards": {"reward": "1.0"}})
    )
    first, known = parse_trials(root, tmp_path)
    assert [r.name for r in first.results] == ["t1", "t2"]  # both kept
    got = sorted((w.path, w.line, w.message) for w in first.warnings)
    assert got == [
        ("trace_jobs/t1/result.json", 2, "invalid UTF-8: read with replacement characters"),
        ("trace_jobs/t2/result.json", None, 'reward "1.0" is not a number: counted as no reward'),
    ]
    from sitegen.cache.codec import known_bytes, known_from_bytes

    kept = known_from_bytes(known_bytes(known))
    assert kept == known
    second, _ = parse_trials(root, tmp_path, known=kept)
    assert second == first


def test_a_trials_secrets_are_hidden_as_it_is_read():
    """_Collector.scrubbed hides a secret in a trial's name, task or exception type and
    in its notes; a clean trial is kept as the very object; a user pattern is applied."""
    import msgspec

    from sitegen.read import trials as reader
    from sitegen.redact import MASK, Redactor

    base = decode_result(rec(), "t__abc1234", False)
    token = "ghp_" + "A" * 36

    def ok(**kw) -> tuple:
        return ("ok", msgspec.structs.replace(base, **kw))

    outcomes = [ok(name=f"t__{i:07d}") for i in range(12)]
    outcomes[1] = ("ok", outcomes[1][1], ((f"reward {token}", 3),))
    outcomes[2] = ("bad", "malformed JSON (x)", 4)
    outcomes[3] = ("missing",)
    outcomes[5] = ok(name=f"t__{token}")
    outcomes[9] = ok(task=f"task {token}")
    outcomes[10] = ok(exception=token)
    outcomes[11] = ("eval",)
    for patterns in ((), ("t__000000",)):
        col = reader._Collector("trace_jobs", None, Redactor(patterns))
        got = [col.scrubbed(o) for o in outcomes]
        assert all(token not in repr(o) for o in got)
        assert MASK in got[1][2][0][0] and got[5][1].name == f"t__{MASK}"
        assert got[9][1].task == f"task {MASK}" and got[10][1].exception == MASK
        assert got[2] is outcomes[2] and got[11] is outcomes[11]
        if not patterns:
            assert got[0] is outcomes[0]
        else:
            assert got[0][1].name == f"{MASK}0"


def test_a_secret_in_a_trial_folders_name_is_reported_never_shown(tmp_path):
    """A trial folder, or a link in its place, whose name holds a token: its warning names
    it redacted, and the trials folder's report of hidden secrets says where it was."""
    import os

    token = "glpat-" + "Zx9" * 8
    root = tmp_path / "trace_jobs"
    (root / f"bad-{token}").mkdir(parents=True)
    (root / f"bad-{token}" / "result.json").write_bytes(b'{"trial_name": ')
    os.symlink(tmp_path, root / f"link-{token}")
    ts, _ = parse_trials(root, tmp_path)
    shown = "\n".join(str(w) for w in ts.warnings)
    assert token not in shown and token[:12] not in shown
    hidden = [w.message for w in ts.warnings if "secrets in the archive" in w.message]
    assert len(hidden) == 1 and "gitlab-token 2 times (first in link-redacted-" in hidden[0]


JOB = b'{"id": "j", "n_total_trials": 3, "stats": {"n_trials": 3}}'  # Harbor's job summary
CUT_JOB = JOB[:30]  # a job summary cut short as it was written: malformed JSON


def _member(name: str, cut_job: bool) -> tuple[str, bytes]:
    """A member of a trials archive: a trial's result.json when its folder is named t…, the
    job's summary (cut short, if so) in a folder run/, an empty file else."""
    folder = [p for p in name.split("/")[:-1] if p != "."]
    if not name.endswith("result.json"):
        return name, b"{}"
    if folder and folder[-1].startswith("t"):
        return name, rec(trial_name=folder[-1])
    return name, CUT_JOB if cut_job and folder and folder[-1] == "run" else JOB


@pytest.mark.parametrize("prefix", ["", "./"])
@pytest.mark.parametrize("archive", ["trials_step1_a.tar", "trials_step1_a.tar.gz"])
@pytest.mark.parametrize(
    ("files", "names"),
    [
        # a Harbor job folder below a folder named as a trial's own (agent/, artifacts/,
        # steps/): its trials are read, its job.log there or not
        (["x/artifacts/run/config.json", "x/artifacts/run/result.json",
          "x/artifacts/run/steps/s10/t2/result.json", "x/artifacts/run/t0/result.json"],
         ["t0", "t2"]),
        (["x/artifacts/run/steps/s10/t2/result.json", "x/artifacts/run/config.json",
          "x/artifacts/run/job.log", "x/artifacts/run/result.json"], ["t2"]),
        (["x/agent/run/config.json", "x/agent/run/result.json",
          "x/agent/run/steps/s1/t1/result.json", "x/agent/run/steps/s1/t1/config.json"],
         ["t1"]),
        (["u/steps/s3/run/result.json", "u/steps/s3/run/config.json",
          "u/steps/s3/run/steps/s3/t3/result.json"], ["t3"]),
        # a trial's own artifacts stay none, a Harbor job collected among them too
        (["t1/config.json", "t1/result.json", "t1/artifacts/run/result.json",
          "t1/artifacts/run/config.json", "t1/artifacts/run/t5/result.json",
          "t1/steps/s1/agent/t6/result.json"], ["t1"]),
    ],
)  # fmt: skip
def test_trials_of_a_job_folder_below_a_trials_folder_names_are_read(
    tmp_path, files, names, archive, prefix
):
    root = tmp_path / "trace_jobs"
    root.mkdir()
    _tar_files(root / archive, [_member(prefix + f, False) for f in files])
    ts, _ = parse_trials(root, tmp_path)
    assert sorted(r.name for r in ts.results) == names
    assert (ts.malformed, ts.missing) == (0, 0)
    assert [w.message for w in ts.warnings if "job-level" not in w.message] == []


@pytest.mark.parametrize("prefix", ["", "./"])
@pytest.mark.parametrize(
    ("files", "names"),
    [
        (["run/config.json", "run/result.json", "run/steps/s10/t2/result.json"], ["t2"]),
        (["run/result.json", "run/config.json", "run/steps/s10/t2/result.json",
          "run/steps/s10/t2/config.json", "run/t0/result.json"], ["t0", "t2"]),
        (["x/artifacts/run/config.json", "x/artifacts/run/result.json",
          "x/artifacts/run/steps/s10/t2/result.json", "x/artifacts/run/t0/result.json"],
         ["t0", "t2"]),
    ],
)  # fmt: skip
def test_a_job_summary_cut_short_loses_no_trial_below_it(tmp_path, files, names, prefix):
    # the summary is written last: cut short, it is malformed (and said so), and its
    # trials, below its steps/ or not, are read all the same
    root = tmp_path / "trace_jobs"
    root.mkdir()
    _tar_files(root / "trials_step1_a.tar.gz", [_member(prefix + f, True) for f in files])
    ts, _ = parse_trials(root, tmp_path)
    assert sorted(r.name for r in ts.results) == names
    assert (ts.malformed, ts.missing) == (1, 0)
    summary = prefix + next(f for f in files if f.endswith("run/result.json"))
    assert [(w.path.split(":", 1)[1], w.message.split(" (")[0]) for w in ts.warnings] == [
        (summary, "malformed JSON")
    ]


@pytest.mark.parametrize("prefix", ["", "./"])
def test_a_job_folders_trials_below_a_trials_folder_name_survive_a_cut(tmp_path, prefix):
    # the archive cut short after the job's folder: its trials are read, the job's summary
    # (cut short itself, or not) is no trial, the damage is said once
    root = tmp_path / "trace_jobs"
    root.mkdir()
    files = [
        _member(f"{prefix}x/artifacts/run/{f}", cut_job=True)
        for f in ("config.json", "result.json", "steps/s10/t2/result.json", "t0/result.json")
    ] + [(f"{prefix}t9/blob.bin", os.urandom(400_000)), _member(f"{prefix}t9/result.json", False)]
    _tar_files(root / "trials_step1_a.tar.gz", files)
    data = (root / "trials_step1_a.tar.gz").read_bytes()
    (root / "trials_step1_a.tar.gz").write_bytes(data[: len(data) - 50_000])
    ts, _ = parse_trials(root, tmp_path)
    assert sorted(r.name for r in ts.results) == ["t0", "t2"]
    assert (ts.malformed, ts.missing) == (1, 0)
    assert sorted(w.message.split(" (")[0] for w in ts.warnings) == [
        "damaged trials archive",
        "malformed JSON",
    ]


@pytest.mark.parametrize("tool", ["__pycache__", "node_modules", ".git", ".pytest_cache"])
@pytest.mark.parametrize("archive", ["trials_step1_a.tar", "trials_step1_a.tar.gz"])
def test_a_tools_folder_is_not_a_trial(tmp_path, tool, archive):
    # Python, pytest, git and npm leave their folders where a script or a notebook ran
    # beside the trials; Harbor names no trial so (<task>__<7 chars>): none is a trial cut
    # short, in a folder or an archive, nor is a result.json of theirs a trial
    root = tmp_path / "trace_jobs"
    (root / "t0").mkdir(parents=True)
    (root / "t0" / "result.json").write_bytes(rec(trial_name="t0"))
    for where in (root, root / "eval_sessions", root / "eval_sessions" / "s1"):
        (where / tool / "sub").mkdir(parents=True)
        (where / tool / "x.pyc").write_bytes(b"\0")
    (root / "eval_sessions" / "s1" / "e1").mkdir()
    (root / "eval_sessions" / "s1" / "e1" / "result.json").write_bytes(rec(trial_name="e1"))
    other = json.dumps({"name": "pkg", "version": "1.0"}).encode()
    members = [f"{p}{tool}/pkg/result.json" for p in ("", "./", "old1/", "eval_sessions/s2/")]
    _tar_files(
        root / archive,
        [(f"{tool}/x.pyc", b"\0"), ("old1/result.json", rec(trial_name="old1"))]
        + [(m, other) for m in members],
    )
    ts, _ = parse_trials(root, tmp_path)
    assert [r.name for r in ts.results] == ["old1", "t0"]
    assert (ts.missing, ts.malformed, ts.eval_count, ts.job_level, ts.warnings) == (
        0,
        0,
        1,
        0,
        (),
    )


@pytest.mark.parametrize("cut_job", [False, True])
@pytest.mark.parametrize("above", ["", "artifacts/", "home/u/steps/"])
def test_a_harbor_job_folder_in_a_trials_folder_is_read_for_its_trials(tmp_path, above, cut_job):
    # harbor run --jobs-dir trace_jobs: <job>/{config.json, job.log, result.json, <trial>/}
    # below the trials folder, itself below a folder named as a trial's own or not: its
    # trials are read (the summary, cut short, is said unreadable); what lies in a trial's
    # own agent/ or artifacts/ is no trial; a trial folder beside it is read as ever
    root = tmp_path / "trace_jobs"
    job = root / above / "run"
    files = {
        "t9/result.json": rec(trial_name="t9"),
        f"{above}run/config.json": b"{}",
        f"{above}run/job.log": b"",
        f"{above}run/result.json": CUT_JOB if cut_job else JOB,
        f"{above}run/t0/result.json": rec(trial_name="t0", verifier_result=None),
        f"{above}run/t0/trial.log": b"",
        f"{above}run/t0/agent/x/result.json": rec(trial_name="x"),
        f"{above}run/t1/result.json": rec(trial_name="t1"),
        f"{above}run/t1/config.json": b"{}",
        f"{above}run/t1/artifacts/out/result.json": rec(trial_name="out"),
        f"{above}run/steps/s10/t2/result.json": rec(trial_name="t2"),
        f"{above}run/__pycache__/t3/result.json": rec(trial_name="t3"),
    }
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    assert job.is_dir()
    ts, known = parse_trials(root, tmp_path)
    assert [(r.name, r.reward) for r in ts.results] == [
        ("t0", None),
        ("t1", 1.0),
        ("t2", 1.0),
        ("t9", 1.0),
    ]
    assert (ts.missing, ts.malformed, ts.job_level) == (0, int(cut_job), int(not cut_job))
    summary = f"trace_jobs/{above}run/result.json"
    assert [(w.path, w.message.split(" (")[0].split(":")[0]) for w in ts.warnings] == [
        (summary, "malformed JSON" if cut_job else "job-level result.json inside a trial directory")
    ]
    # read again from the outcomes kept: the same trials; no trial's file is read again
    asked: list = []

    def decode(items):
        asked.extend(rel for rel, _, _ in items)
        return decode_files(str(tmp_path), items)

    again, _ = parse_trials(root, tmp_path, known, decode_map=decode)
    assert again == ts
    # (a folder holding the job's: no result.json of its own, looked for again)
    assert asked == ([f"trace_jobs/{above.split('/')[0]}/result.json"] if above else [])


def test_a_trial_cut_short_is_no_folder_of_trials(tmp_path):
    # a trial killed before its result.json: its own agent/ and artifacts/ hold no trials
    # (its config.json or trial.log says whose they are; a step's agent/ and verifier/ say
    # no more than that its folder is one step's): one trial missing, as ever
    root = tmp_path / "trace_jobs"
    for rel in ("tk/config.json", "tk/agent/x/result.json", "tl/trial.log",
                "tl/artifacts/run/t5/result.json", "tl/steps/s1/verifier/result.json",
                "tm/agent/a.txt", "tm/steps/s1/agent/result.json",
                "tm/steps/s1/verifier/result.json", "tm/steps/s2/agent/result.json",
                "tm/steps/s2/verifier/result.json"):  # fmt: skip
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(rec(trial_name="x") if rel.endswith("result.json") else b"{}")
    ts, _ = parse_trials(root, tmp_path)
    assert (ts.results, ts.missing, ts.malformed, ts.job_level, ts.warnings) == ((), 3, 0, 0, ())


@pytest.mark.parametrize("prefix", ["", "./"])
def test_a_cut_archive_says_which_trials_it_could_not_tell_from_their_files(tmp_path, prefix):
    # a result.json in an agent/ or artifacts/ folder whose trial's own files (its
    # result.json, config.json, trial.log) lie past the damage: nothing read says it is a
    # trial's own, so it counts as a trial (as one below a home's artifacts/ does), and the
    # damage's warning names it; one beside its own config.json needs no word
    root = tmp_path / "trace_jobs"
    root.mkdir()
    files = [
        (f"{prefix}t1/agent/x/result.json", rec(trial_name="x")),
        (f"{prefix}home/artifacts/t2/result.json", rec(trial_name="t2")),
        (f"{prefix}k/artifacts/t3/result.json", rec(trial_name="t3")),
        (f"{prefix}k/artifacts/t3/config.json", b"{}"),
        (f"{prefix}k/artifacts/t4/lock.json", b"{}"),
        (f"{prefix}k/artifacts/t4/result.json", rec(trial_name="t4")),
        (f"{prefix}t0/result.json", rec(trial_name="t0")),
        (f"{prefix}t1/blob.bin", os.urandom(400_000)),
        (f"{prefix}t1/result.json", rec(trial_name="t1")),
        (f"{prefix}t1/config.json", b"{}"),
    ]
    _tar_files(root / "trials_step1_a.tar.gz", files)
    data = (root / "trials_step1_a.tar.gz").read_bytes()
    (root / "trials_step1_a.tar.gz").write_bytes(data[: len(data) - 50_000])
    ts, _ = parse_trials(root, tmp_path)
    assert sorted(r.name for r in ts.results) == ["t0", "t2", "t3", "t4", "x"]
    (w,) = ts.warnings
    assert w.path == "trace_jobs/trials_step1_a.tar.gz"
    assert w.message.startswith("damaged trials archive (")
    assert w.message.endswith(
        "read up to the damage; 2 trials (t1/agent/x/result.json, …) counted from inside an"
        " agent/, artifacts/, …"
        " folder whose trial's own files, if any, lie past the damage"
    )


def _lay_out(root, files: dict[str, bytes], archive: str | None) -> None:
    """``files`` (path below the trials folder ``root`` -> bytes) as folders, or as the
    members of the trials archive ``archive`` in ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    if archive is not None:
        _tar_files(root / archive, list(files.items()))
        return
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


@pytest.mark.parametrize("gz", [False, True])
def test_an_archive_cut_at_a_member_s_end_is_damaged_not_ended(tmp_path, gz):
    # a copy interrupted between two members: tarfile stops there as at the archive's end,
    # but the end-of-archive block is missing, so the cut is warned and nothing past it is
    # guessed (b__2's folder, read last, would otherwise count as a trial cut short)
    root = tmp_path / "trace_jobs"
    root.mkdir()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for t in ("a__1", "b__2"):
            folder = tarfile.TarInfo(t)
            folder.type = tarfile.DIRTYPE
            tar.addfile(folder)
            cut = buf.tell()  # (after b__2's folder entry, before its files)
            for name, data in (("trial.log", b"x"), ("result.json", rec(trial_name=t))):
                info = tarfile.TarInfo(f"{t}/{name}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    data = buf.getvalue()[:cut]
    name = "trials_step1_a.tar.gz" if gz else "trials_step1_a.tar"
    (root / name).write_bytes(gzip.compress(data) if gz else data)
    ts, _ = parse_trials(root, tmp_path)
    assert ([r.name for r in ts.results], ts.missing) == (["a__1"], 0)
    (w,) = ts.warnings
    assert "damaged trials archive" in w.message and "end-of-archive" in w.message


def _tar_bytes(names: list[str], end: bool = True) -> bytes:
    """A tar of one ``<name>/result.json`` per name, with its end-of-archive block or not."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for t in names:
            data = rec(trial_name=t)
            info = tarfile.TarInfo(f"{t}/result.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        members = buf.getvalue()
    return buf.getvalue() if end else members  # (closing wrote the end-of-archive blocks)


@pytest.mark.parametrize("gz", [False, True])
def test_a_header_that_is_no_tar_header_is_damage_said_with_the_file(tmp_path, gz):
    # bytes overwritten in a copy, where b__2's header was: tarfile stops there as at the
    # archive's end, silently; the damage is warned, at the archive, a__1 kept
    root = tmp_path / "trace_jobs"
    root.mkdir()
    data = bytearray(_tar_bytes(["a__1", "b__2", "c__3"]))
    at = len(_tar_bytes(["a__1"], end=False))
    data[at : at + 512] = b"x" * 512
    name = "trials_step1_a.tar.gz" if gz else "trials_step1_a.tar"
    (root / name).write_bytes(gzip.compress(bytes(data)) if gz else bytes(data))
    ts, _ = parse_trials(root, tmp_path)
    assert ([r.name for r in ts.results], ts.missing) == (["a__1"], 0)
    (w,) = ts.warnings
    assert w.path == f"trace_jobs/{name}"
    assert w.message.startswith(f"damaged trials archive (no tar header at byte {at}")


def test_a_gzip_of_several_members_is_read_whole(tmp_path):
    # .tar.gz pieces concatenated (a gzip of several members, as `cat` makes): tarfile's own
    # stream reads the first member only, and called the rest a missing end block
    root = tmp_path / "trace_jobs"
    root.mkdir()
    whole = _tar_bytes(["a__1", "b__2", "c__3"])
    archive = root / "trials_step1_a.tar.gz"
    for cut in (700, len(_tar_bytes(["a__1"], end=False))):  # (inside a member, between two)
        archive.write_bytes(gzip.compress(whole[:cut]) + gzip.compress(whole[cut:]))
        ts, _ = parse_trials(root, tmp_path)
        assert ([r.name for r in ts.results], ts.warnings) == (["a__1", "b__2", "c__3"], ())


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize(
    ("after", "said"),
    [
        (_tar_bytes(["b__2"]), True),  # a second archive concatenated (`cat a.tar b.tar`)
        (b"JUNK" * 128, False),
        (b"\n", False),
        (b"\0" * (1 << 20) + _tar_bytes(["b__2"]), False),  # (zeros not read on: unbounded)
    ],
)
def test_what_follows_the_end_of_archive_block_is_not_read(tmp_path, gz, after, said):
    # GNU tar without --ignore-zeros stops at the end block, silently: the archive is
    # whole, and its trial folder cut short still counts missing; a second archive right
    # after it is said, not read
    root = tmp_path / "trace_jobs"
    root.mkdir()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = rec(trial_name="a__1")
        info = tarfile.TarInfo("a__1/result.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        cut = tarfile.TarInfo("c__3/exception.txt")
        cut.size = 1
        tar.addfile(cut, io.BytesIO(b"x"))
    whole = buf.getvalue()
    name = "trials_step1_a.tar.gz" if gz else "trials_step1_a.tar"
    if gz:  # bytes after the gzip that are no gzip: not read, no archive said either
        (root / name).write_bytes(gzip.compress(whole) + after)
        ts, _ = parse_trials(root, tmp_path)
        assert ([r.name for r in ts.results], ts.missing, ts.warnings) == (["a__1"], 1, ())
    (root / name).write_bytes(gzip.compress(whole) + gzip.compress(after) if gz else whole + after)
    ts, known = parse_trials(root, tmp_path)
    assert ([r.name for r in ts.results], ts.missing) == (["a__1"], 1)
    if said:
        (w,) = ts.warnings
        assert (w.path, w.message) == (
            f"trace_jobs/{name}",
            "tar data follows this archive's end-of-archive block (a second archive"
            " concatenated?): it is not read; unpack both and pack them as one",
        )
        again, _ = parse_trials(root, tmp_path, known=known)  # (said every build: not kept)
        assert again.warnings == ts.warnings
    else:
        assert ts.warnings == ()


def test_zeros_after_a_gzip_end_its_data_unread():
    # gzip allows zeros after its last member: they end the data, and nothing past them is
    # read (a megabyte of them, or more, would be read for nothing)
    raw = io.BytesIO(gzip.compress(b"x" * 100) + b"\0" * (4 << 20) + gzip.compress(b"y"))
    src = _Gunzip(raw)
    assert (src.read(), src.read(), src.read(), src.error) == (b"x" * 100, b"", b"", None)
    assert raw.tell() <= 1 << 16


@pytest.mark.parametrize("gz", [False, True])
def test_an_archive_cut_inside_a_header_says_so(tmp_path, gz):
    root = tmp_path / "trace_jobs"
    root.mkdir()
    whole = _tar_bytes(["a__1", "b__2"])
    cut = len(_tar_bytes(["a__1"], end=False)) + 100  # (inside b__2's header)
    name = "trials_step1_a.tar.gz" if gz else "trials_step1_a.tar"
    (root / name).write_bytes(gzip.compress(whole[:cut]) if gz else whole[:cut])
    ts, _ = parse_trials(root, tmp_path)
    assert [r.name for r in ts.results] == ["a__1"]
    (w,) = ts.warnings
    assert "it ends inside a member's header" in w.message


@pytest.mark.parametrize(
    ("damage", "cause"),
    [
        (lambda piece: piece[: len(piece) // 2], "its gzip data ends inside a member"),
        (lambda piece: piece[:20] + b"\xff" * 20 + piece[40:], "damaged gzip data (Error -3"),
        (lambda piece: b"junk" * 8, "bytes after a gzip member that are no gzip"),
    ],
)
def test_a_damaged_gzip_member_keeps_what_came_before_and_says_why(tmp_path, damage, cause):
    # what the first member held is read; the warning names the gzip's damage, not the tar
    # stream's end that it makes
    root = tmp_path / "trace_jobs"
    root.mkdir()
    whole = _tar_bytes(["a__1", "b__2", "c__3"])
    cut = len(_tar_bytes(["a__1"], end=False))
    data = gzip.compress(whole[:cut]) + damage(gzip.compress(whole[cut:]))
    (root / "trials_step1_a.tar.gz").write_bytes(data)
    ts, _ = parse_trials(root, tmp_path)
    assert [r.name for r in ts.results] == ["a__1"]
    (w,) = ts.warnings
    assert w.message.startswith(f"damaged trials archive ({cause}")


@pytest.mark.parametrize("archive", [None, "trials_step1_a.tar.gz"])
@pytest.mark.parametrize("job", ["old/", "old/run/"])
def test_an_eval_trial_below_a_job_folder_counts_as_eval(tmp_path, archive, job):
    # eval_sessions/<session>/<trial>/ below a folder of trials, or a Harbor job's: an eval
    # trial, in a folder as in an archive (its session's, apart from training's)
    root = tmp_path / "trace_jobs"
    files = {
        f"{job}o__1111111/result.json": rec(trial_name="o__1111111"),
        f"{job}eval_sessions/run_eval_step10/e__1111111/result.json": rec(trial_name="e"),
        f"{job}eval_sessions/run_eval_step20/e__1111111/result.json": rec(trial_name="e"),
        f"{job}eval_sessions/run_eval_step20/o__1111111/result.json": rec(trial_name="o"),
    }
    if job == "old/run/":
        files["old/run/result.json"] = JOB
        files["old/run/job.log"] = b""
    _lay_out(root, files, archive)
    ts, _ = parse_trials(root, tmp_path)
    assert ([r.name for r in ts.results], ts.eval_count) == (["o__1111111"], 3)
    assert (ts.missing, ts.malformed) == (0, 0)
    assert [w.message for w in ts.warnings if "job-level" not in w.message] == []


# A trial killed before its trial.log or config.json (harbor/trial/: lock.json first, then
# trial.log, config.json; TrialPaths.mkdir() makes agent/, verifier/, artifacts/), whose
# agent and verifier wrote a result.json of their own
_KILLED = {
    "lock.json": b"{}",
    "agent/result.json": rec(trial_name="agentcopy"),
    "agent/sess/result.json": rec(trial_name="sess"),
    "agent/x/config.json": b"{}",
    "agent/x/result.json": rec(trial_name="x"),
    "verifier/result.json": b'{"reward": 1}',
    "artifacts/home/x/result.json": rec(trial_name="artcopy"),
    "steps/s1/agent/result.json": rec(trial_name="s1"),
    "steps/s1/verifier/result.json": b"{}",
}


@pytest.mark.parametrize("archive", [None, "trials_step1_a.tar", "trials_step1_a.tar.gz"])
@pytest.mark.parametrize("where", ["", "run/", "outer/run/"])
@pytest.mark.parametrize("own", ["lock.json", "verifier/", "lock.json,verifier/"])
def test_a_killed_trial_folder_is_no_trials(tmp_path, archive, where, own):
    # its own lock.json, or its agent/ and verifier/, say it is a trial's: what they hold
    # is no trial; the trial is one missing, at the top of a folder of trials as below a
    # job's folder, in a folder as in an archive
    root = tmp_path / "trace_jobs"
    files = {
        f"{where}r__1111111/{f}": d
        for f, d in _KILLED.items()
        if f.split("/", 1)[0] in own or f.split("/", 1)[0] not in ("lock.json", "verifier")
    }
    files["t0/result.json"] = rec(trial_name="t0")
    if where:
        files[f"{where}result.json"] = JOB
        files[f"{where}job.log"] = b""
        files[f"{where}lock.json"] = b"{}"
        files[f"{where}j0/result.json"] = rec(trial_name="j0")
    _lay_out(root, files, archive)
    ts, _ = parse_trials(root, tmp_path)
    names = ["j0", "t0"] if where else ["t0"]
    assert [r.name for r in ts.results] == names
    assert (ts.missing, ts.malformed, ts.eval_count) == (1, 0, 0)
    assert [w.message for w in ts.warnings if "job-level" not in w.message] == []


@pytest.mark.parametrize("own", ["trial.log", "lock.json", "agent/,verifier/"])
def test_a_running_trial_is_counted_missing_without_walking_it(tmp_path, monkeypatch, own):
    # thousands of running trials are not walked at every build: a stat or two says which
    root = tmp_path / "trace_jobs"
    (root / "t0").mkdir(parents=True)
    (root / "t0" / "result.json").write_bytes(rec(trial_name="t0"))
    for name in ("r1", "r2"):
        for f in own.split(","):
            path = root / name / f
            if f.endswith("/"):
                path.mkdir(parents=True)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(b"{}")
        (root / name / "agent" / "x").mkdir(parents=True, exist_ok=True)
        (root / name / "agent" / "x" / "result.json").write_bytes(rec(trial_name="x"))
    walked: list = []
    below = trials_reader._files_below
    monkeypatch.setattr(
        trials_reader, "_files_below", lambda top, *a: walked.append(top) or below(top, *a)
    )
    ts, _ = parse_trials(root, tmp_path)
    assert ([r.name for r in ts.results], ts.missing, walked) == (["t0"], 2, [])


@pytest.mark.parametrize("archive", [None, "trials_step1_a.tar.gz"])
@pytest.mark.parametrize("mark", ["config.json", "lock.json", "agent/,verifier/"])
def test_a_folder_of_jobs_holding_a_trials_files_is_no_running_trial(tmp_path, archive, mark):
    # a sweep's folder of Harbor jobs with a config.json of its own (Harbor writes a trial's
    # after its trial.log, agent/ and verifier/: it says nothing they do not), a lock.json
    # or agent/ and verifier/: the jobs below it are read, in a folder as in an archive
    root = tmp_path / "trace_jobs"
    files = {
        f"sweep1/{m}.keep" if m.endswith("/") else f"sweep1/{m}": b"{}" for m in mark.split(",")
    }
    files |= {
        "sweep1/jobA/job.log": b"",
        "sweep1/jobA/config.json": b"{}",
        "sweep1/jobA/result.json": JOB,
    }
    for t in ("a__1111111", "b__2222222"):
        files |= {
            f"sweep1/jobA/{t}/trial.log": b"",
            f"sweep1/jobA/{t}/result.json": rec(trial_name=t),
        }
    _lay_out(root, {k.replace("/.keep", "/x.txt"): v for k, v in files.items()}, archive)
    ts, _ = parse_trials(root, tmp_path)
    assert [r.name for r in ts.results] == ["a__1111111", "b__2222222"]
    assert (ts.missing, ts.malformed, ts.job_level) == (0, 0, 1)


@pytest.mark.parametrize("archive", [None, "trials_step1_a.tar.gz"])
@pytest.mark.parametrize("job", ["", "j1/", "jobs/j1/", "jobs/j1/,summary"])
def test_each_running_trial_below_a_job_folder_counts_missing(tmp_path, archive, job):
    # trials still running (a trial.log, or a lock.json, or agent/ and verifier/; no
    # result.json) count one missing each, at the top of a folder of trials as below a
    # Harbor job's folder (its summary not written yet, or written), in an archive alike
    root = tmp_path / "trace_jobs"
    job, _, summary = job.partition(",")
    files = {"t0/result.json": rec(trial_name="t0")}
    if job:
        files |= {f"{job}job.log": b"", f"{job}config.json": b"{}", f"{job}lock.json": b"{}"}
        if summary:
            files[f"{job}result.json"] = JOB
    for name, own in (("r1", "trial.log"), ("r2", "lock.json"), ("r3", "agent/x,verifier/y")):
        for f in own.split(","):
            files[f"{job}{name}/{f}"] = b"{}"
        files[f"{job}{name}/agent/s/result.json"] = rec(trial_name="agentcopy")
    _lay_out(root, files, archive)
    ts, _ = parse_trials(root, tmp_path)
    assert [r.name for r in ts.results] == ["t0"]
    # (at the top of an archive too: a trial's files say it is one, as below a job's)
    assert (ts.missing, ts.malformed, ts.job_level) == (3, 0, int(bool(summary)))


@pytest.mark.parametrize("archive", [None, "trials_step1_a.tar.gz"])
@pytest.mark.parametrize("above", ["", "x/"])
def test_a_job_known_by_its_summary_alone_holds_trials_in_its_folders(tmp_path, archive, above):
    # a Harbor job's folder without its job.log (its summary says it is a job's) holding a
    # folder named as a trial's own (artifacts/): what that holds are trials, not a trial's
    # own files (a folder holding a result.json of no job's would be a trial's)
    root = tmp_path / "trace_jobs"
    files = {
        f"{above}run/result.json": JOB,
        f"{above}run/config.json": b"{}",
        f"{above}run/t0/result.json": rec(trial_name="t0"),
        f"{above}run/artifacts/t5/result.json": rec(trial_name="t5"),
    }
    _lay_out(root, files, archive)
    ts, _ = parse_trials(root, tmp_path)
    assert ([r.name for r in ts.results], ts.job_level, ts.missing) == (["t0", "t5"], 1, 0)


def test_a_cut_archive_counts_and_names_each_trial_it_could_not_tell(tmp_path):
    # result.json files in the agent/ folders of trials whose own files lie past the damage:
    # each is counted (not collapsed as one folder named agent/), and named by its path
    root = tmp_path / "trace_jobs"
    root.mkdir()
    files = [(f"t{i}/agent/result.json", rec(trial_name=f"a{i}")) for i in range(3)]
    files += [("t9/blob.bin", os.urandom(400_000)), ("t9/result.json", rec(trial_name="t9"))]
    _tar_files(root / "trials_step1_a.tar.gz", files)
    data = (root / "trials_step1_a.tar.gz").read_bytes()
    (root / "trials_step1_a.tar.gz").write_bytes(data[: len(data) - 50_000])
    ts, _ = parse_trials(root, tmp_path)
    assert sorted(r.name for r in ts.results) == ["a0", "a1", "a2"]
    (w,) = ts.warnings
    assert "; 3 trials (t0/agent/result.json, …) counted from inside an agent/" in w.message


@pytest.mark.parametrize("archive", [None, "trials_step1_a.tar", "trials_step1_a.tar.gz"])
@pytest.mark.parametrize("own", ["job.log", "job.log,config.json,lock.json"])
@pytest.mark.parametrize("job", ["job1/", "jobs/job1/"])
def test_a_job_folder_before_its_first_trial_counts_no_trial_missing(tmp_path, archive, own, job):
    # harbor run writes its job folder's job.log, config.json and lock.json before any
    # trial's folder: no trial has started, none is missing (a trial's folder never holds a
    # job.log), in a folder as in an archive
    root = tmp_path / "trace_jobs"
    files = {"t0/result.json": rec(trial_name="t0")}
    files |= {f"{job}{f}": b"" if f == "job.log" else b"{}" for f in own.split(",")}
    _lay_out(root, files, archive)
    ts, _ = parse_trials(root, tmp_path)
    assert ([r.name for r in ts.results], ts.missing, ts.malformed, ts.job_level) == (
        ["t0"],
        0,
        0,
        0,
    )


@pytest.mark.parametrize("archive", [None, "trials_step1_a.tar", "trials_step1_a.tar.gz"])
@pytest.mark.parametrize("inner", ["logs/", "agent/", "agent/x/"])
def test_a_job_log_inside_a_trial_cut_short_makes_it_no_job(tmp_path, archive, inner):
    # r1 is a trial's folder by its lock.json, config.json, agent/ and verifier/, cut short
    # (no result.json): a job.log deeper in it (an agent that ran Harbor itself) is its own
    # file, not a job's folder before its first trial: one trial missing
    root = tmp_path / "trace_jobs"
    files = {"t0/result.json": rec(trial_name="t0"), f"r1/{inner}job.log": b""}
    files |= {"r1/lock.json": b"{}", "r1/config.json": b"{}", "r1/verifier/x.txt": b""}
    files |= {"r1/agent/y.txt": b""}
    _lay_out(root, files, archive)
    ts, _ = parse_trials(root, tmp_path)
    assert ([r.name for r in ts.results], ts.missing, ts.malformed, ts.job_level) == (
        ["t0"],
        1,
        0,
        0,
    )


@pytest.mark.parametrize("archive", [None, "trials_step1_a.tar", "trials_step1_a.tar.gz"])
@pytest.mark.parametrize("where", ["artifacts/result.json", "artifacts/home/run/result.json"])
@pytest.mark.parametrize("own", ["trial.log", "lock.json", "trial.log,lock.json"])
def test_a_running_trial_with_a_job_summary_among_its_artifacts_is_one_missing(
    tmp_path, archive, where, own
):
    # harbor/models/trial/paths.py: artifacts/ holds files collected from the sandbox (an
    # agent that ran Harbor itself leaves a job's summary there); the trial around them has
    # no result.json yet: one missing, in a folder as in an archive
    root = tmp_path / "trace_jobs"
    files = {"t0/result.json": rec(trial_name="t0"), f"r1/{where}": JOB}
    files |= {f"r1/{f}": b"{}" for f in own.split(",")}
    _lay_out(root, files, archive)
    ts, _ = parse_trials(root, tmp_path)
    assert ([r.name for r in ts.results], ts.missing, ts.malformed, ts.job_level) == (
        ["t0"],
        1,
        0,
        0,
    )


@pytest.mark.parametrize("archive", [None, "trials_step1_a.tar", "trials_step1_a.tar.gz"])
@pytest.mark.parametrize("inner", ["agent/", "agent/x/"])
def test_a_trial_log_inside_a_running_trials_own_folder_makes_no_trial(tmp_path, archive, inner):
    # an archive of file members only and the empty verifier/ Harbor made (TrialPaths.mkdir):
    # r1 is a trial's folder by its agent/ and verifier/, so a trial.log and result.json in
    # its agent/ (an agent that ran Harbor itself) are its own files, not a trial: r1 is one
    # trial missing, as a folder walk (which reads no running trial's agent/) says
    root = tmp_path / "trace_jobs"
    files = {
        "t0/result.json": rec(trial_name="t0"),
        f"r1/{inner}trial.log": b"",
        f"r1/{inner}result.json": rec(trial_name="agentcopy"),
    }
    _lay_out(root, files, None)
    (root / "r1" / "verifier").mkdir()
    if archive is not None:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz" if archive.endswith(".gz") else "w") as tar:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            info = tarfile.TarInfo("r1/verifier")
            info.type = tarfile.DIRTYPE
            tar.addfile(info)
        for f in ("t0", "r1"):
            for p in sorted((root / f).rglob("*"), reverse=True):
                p.unlink() if p.is_file() else p.rmdir()
            (root / f).rmdir()
        (root / archive).write_bytes(buf.getvalue())
    ts, _ = parse_trials(root, tmp_path)
    assert ([r.name for r in ts.results], ts.missing, ts.malformed) == (["t0"], 1, 0)


@pytest.mark.parametrize("archive", [None, "trials_step1_a.tar", "trials_step1_a.tar.gz"])
@pytest.mark.parametrize(
    ("files", "dirs", "want"),
    [
        # an empty folder at the top: a trial's folder made, killed before its first file
        ({"agent/result.json": rec(trial_name="a")}, ["verifier/"], (["a"], 0, 1, 0)),
        # one holding a file Harbor writes in a trial's, no result.json: cut short
        ({"t1/config.json": b"{}"}, [], ([], 0, 1, 0)),
        ({"t1/exception.txt": b"Traceback"}, [], ([], 0, 1, 0)),
        # one holding nothing Harbor writes in a trial's: no trial
        ({"k/notes/x.txt": b"{}"}, [], ([], 0, 0, 0)),
        # a lock.json beside a job's summary: a job's folder, its artifacts/ holding trials
        ({"j/lock.json": b"{}", "j/result.json": JOB, "j/artifacts/t5/result.json":
          rec(trial_name="t5")}, [], (["t5"], 0, 0, 1)),
        # a running trial in a tool's folder, an eval trial running: neither counted
        ({"__pycache__/t/trial.log": b"", "eval_sessions/s/e/trial.log": b""}, [],
         ([], 0, 0, 0)),
        # an eval trial's agent's result.json: no eval trial
        ({"eval_sessions/s/e/agent/result.json": rec(trial_name="e")}, [], ([], 0, 0, 0)),
        # nor one level up, where the session's folder is a trial's: surely (a trial.log;
        # agent/ and verifier/) or by a file of a trial's, its agent/ holding none
        ({"eval_sessions/s/trial.log": b"", "eval_sessions/s/agent/result.json": rec()}, [],
         ([], 0, 0, 0)),
        ({"eval_sessions/s/agent/result.json": rec()}, ["eval_sessions/s/verifier/"],
         ([], 0, 0, 0)),
        ({"eval_sessions/s/config.json": b"{}", "eval_sessions/s/agent/result.json": rec()}, [],
         ([], 0, 0, 0)),
        # but a trial beside a file of a trial's that holds a trial's files, or in a job's
        # folder, is an eval trial
        ({"eval_sessions/s/config.json": b"{}", "eval_sessions/s/agent/trial.log": b"",
          "eval_sessions/s/agent/result.json": rec()}, [], ([], 1, 0, 0)),
        ({"eval_sessions/s/job.log": b"", "eval_sessions/s/config.json": b"{}",
          "eval_sessions/s/agent/result.json": rec()}, [], ([], 1, 0, 0)),
        # a folder named as a trial's file is no such file
        ({"eval_sessions/s/agent/result.json": rec()}, ["eval_sessions/s/trial.log/"],
         ([], 1, 0, 0)),
        # a multi-step trial's steps/ is its own, ended or running, at any depth
        ({"t0/result.json": rec(trial_name="t0"), "t0/steps/s1/result.json": rec()}, [],
         (["t0"], 0, 0, 0)),
        ({"n/t0/trial.log": b"", "n/t0/steps/s1/result.json": rec()}, [], ([], 0, 1, 0)),
        # a job's folder (its job.log) holding agent/ and verifier/: no trial running
        ({"j/job.log": b"", "j/agent/a.txt": b"", "j/verifier/v.txt": b""}, [], ([], 0, 0, 0)),
    ],
)  # fmt: skip
def test_a_folder_and_its_archive_agree_where_they_differed(tmp_path, archive, files, dirs, want):
    # (results, eval trials, missing, job summaries): the same for a folder and an archive
    # of it with its folder members (harbor/models/trial/paths.py says which is right)
    root = tmp_path / "trace_jobs"
    if archive is None:
        for d in dirs:
            (root / d).mkdir(parents=True)
        _lay_out(root, files, None)
    else:
        root.mkdir()
        _as_tar(root / archive, files, set(dirs))
    ts, _ = parse_trials(root, tmp_path)
    assert ([r.name for r in ts.results], ts.eval_count, ts.missing, ts.job_level) == want


# Differential: the same trials as a folder and as a trials archive of that folder (tar,
# tar.gz; with and without directory members) give the same counts and trials read.
_PIECES = ("result.json", "trial.log", "config.json", "lock.json", "agent/", "verifier/",
           "artifacts/", "steps/")  # fmt: skip


def _random_trial(rng, at: str, name: str, files: dict, dirs: set) -> None:
    """One folder of a trial's pieces, each present or not (a trial ended, running, killed,
    or a folder that is no trial's)."""
    dirs.add(f"{at}{name}/")
    for piece in rng.sample(_PIECES, rng.randint(0, len(_PIECES))):
        if piece == "result.json":
            data = rng.choice([rec(trial_name=name), rec(trial_name=name), CUT_JOB, JOB])
            files[f"{at}{name}/result.json"] = data
        elif not piece.endswith("/"):
            files[f"{at}{name}/{piece}"] = b"{}"
        else:
            d = f"{at}{name}/{piece}"
            if piece == "steps/":
                d += rng.choice(["s1/agent/", "s1/verifier/", "s1/"])
            dirs.add(d)
            what = rng.randint(0, 3)  # empty, a file, a result.json, a trial.log and one
            if what:
                files[f"{d}{'result.json' if what > 1 else 'out.txt'}"] = rec(trial_name="own")
            if what == 3:
                files[f"{d}trial.log"] = b""


def _random_layout(rng) -> tuple[dict, set]:
    """A trials folder's files (path -> bytes) and its folders (paths ending in ``/``)."""
    files: dict = {}
    dirs: set = set()

    def fill(at: str, depth: int) -> None:
        for i in range(rng.randint(0, 3)):
            kind = rng.choice(["trial", "trial", "job", "nest", "empty", "own", "eval", "tool"])
            if kind == "trial" or depth > 2:
                _random_trial(rng, at, f"t{depth}{i}__{rng.randint(0, 9)}", files, dirs)
            elif kind == "job":  # a Harbor job's folder: some of its files, its trials
                job = f"{at}job{i}/"
                dirs.add(job)
                for f, data in (("job.log", b""), ("config.json", b"{}"), ("lock.json", b"{}"),
                                ("result.json", rng.choice([JOB, CUT_JOB]))):  # fmt: skip
                    if rng.random() < 0.6:
                        files[job + f] = data
                fill(job, depth + 1)
            elif kind == "nest":
                dirs.add(f"{at}n{i}/")
                fill(f"{at}n{i}/", depth + 1)
            elif kind == "empty":
                dirs.add(f"{at}e{i}/")
            elif kind == "own":  # a folder named as a trial's own, at this level
                _random_trial(rng, at, rng.choice(["agent", "verifier", "artifacts"]), files, dirs)
            elif kind == "tool":  # a tool's folder: no trial
                tool = rng.choice([".git", "__pycache__", "node_modules"])
                _random_trial(rng, f"{at}{tool}/", f"t{depth}{i}", files, dirs)
            elif rng.random() < 0.7:  # eval trials, ended or running
                _random_trial(rng, f"{at}eval_sessions/s{i}/", f"e{i}", files, dirs)
            else:  # an eval trial one level up: the session's folder is the trial's
                _random_trial(rng, f"{at}eval_sessions/", f"s{i}", files, dirs)
        if not at and rng.random() < 0.3:
            files["result.json"] = JOB  # the job summary at the top

    fill("", 0)
    # every folder a file's or a folder's path goes through
    for f in [*files, *dirs]:
        parts = f.rstrip("/").split("/")[:-1] if f.endswith("/") else f.split("/")[:-1]
        dirs.update("/".join(parts[: i + 1]) + "/" for i in range(len(parts)))
    return files, dirs


def _counts(ts) -> tuple:
    return (sorted(r.name for r in ts.results), ts.eval_count, ts.malformed, ts.missing,
            ts.job_level)  # fmt: skip


def _as_tar(path, files: dict, dirs: set | None) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if path.name.endswith(".gz") else "w") as tar:
        for d in sorted(dirs or ()):
            info = tarfile.TarInfo(d.rstrip("/"))
            info.type = tarfile.DIRTYPE
            tar.addfile(info)
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(buf.getvalue())


def _differ(tmp_path, seed: int) -> list[str]:
    import random

    rng = random.Random(seed)
    files, dirs = _random_layout(rng)
    out = []
    for with_dirs in (True, False):
        # without folder members an archive holds no empty folder: its folder neither
        kept = dirs if with_dirs else {d for d in dirs if any(f.startswith(d) for f in files)}
        folder = tmp_path / f"{seed}{with_dirs}f" / "trace_jobs"
        for d in kept:
            (folder / d).mkdir(parents=True, exist_ok=True)
        _lay_out(folder, files, None)
        want = _counts(parse_trials(folder, folder.parent)[0])
        name = rng.choice(["trials_step1_a.tar", "trials_step1_a.tar.gz"])
        arch = tmp_path / f"{seed}{with_dirs}a" / "trace_jobs"
        arch.mkdir(parents=True)
        _as_tar(arch / name, files, kept if with_dirs else None)
        got = _counts(parse_trials(arch, arch.parent)[0])
        if got != want:
            out.append(f"seed {seed} dirs={with_dirs}: folder {want} archive {got}\n"
                       f"  {sorted(kept)}\n  {sorted(files)}")  # fmt: skip
    return out


def test_a_folder_and_an_archive_of_it_read_the_same(tmp_path):
    differ = [d for seed in range(200) for d in _differ(tmp_path, seed)]
    assert differ == [], f"{len(differ)} differ:\n" + "\n".join(differ[:5])
