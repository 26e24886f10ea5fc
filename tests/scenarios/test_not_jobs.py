"""A mixed SLURM folder: only logs that show a training job become jobs, the rest are listed
as skipped with the reason, and the runs around them keep their jobs and trials (synth's truth)."""

from __future__ import annotations

import json
import random
import shutil
import time
from pathlib import Path

import pytest

from sitegen.commands.build import build
from sitegen.commands.cli import main
from sitegen.discover.archive import EMPTY_LOG, NOT_A_JOB
from sitegen.errors import ArchiveError
from sitegen.options import BuildOptions
from tests.read.test_evidence import PREP, TRACEBACK

RAY_LINE = b"(skyrl_entrypoint pid=5568) 2025-11-28 04:00:00.123 | INFO     | m:f:1 - starting\n"
FAKES = {
    "exp-async/logs/preprocess_561770.out": PREP,  # beside the experiment's real job logs
    "slurm/junk_1.out": random.Random(3).randbytes(50_000),
    "slurm/prep_2.out": PREP,
    "slurm/tb_3.out": TRACEBACK,
    "slurm/pending_5.out": b"",
    "orphan/prep_9.out": PREP,  # the only log of a folder with trials
}


@pytest.fixture()
def mixed(archive: Path, tmp_path: Path) -> Path:
    root = tmp_path / "a"
    for d in ("exp-async", "flat/sync-baseline"):
        shutil.copytree(archive / d, root / d)
    shutil.copytree(archive / "flat/sync-baseline/trace_jobs", root / "orphan/trace_jobs")
    for rel, data in FAKES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    (root / "slurm/started_4.out").write_bytes(RAY_LINE)  # a job that has only just started
    return root


def _index(out: Path) -> dict:
    return json.loads((out / "data" / "index.json").read_text())


def test_a_mixed_slurm_folder_lists_fakes_as_skipped(mixed, tmp_path, truth):
    out = tmp_path / "site"
    opts = BuildOptions(archive=mixed, out=out, workers=1, now=time.time())
    report = build(opts)
    index = _index(out)
    assert {j["id"] for j in index["jobs"]} == {
        "exp-async.async-run_561773",
        "exp-async.async-run_561774",
        "flat.sync-baseline.train_600100",
        "slurm.started_4",
        "orphan.prep_9",  # its trials, under the id its job had, without the log
    }
    skipped = {s["path"]: s["reason"] for s in index["skipped"]}
    assert skipped == {rel: EMPTY_LOG if not data else NOT_A_JOB for rel, data in FAKES.items()}
    assert report.skipped == len(FAKES) and report.jobs == 5
    # the random bytes' undecodable lines are not warned about: the log is not read as a job's
    assert not any(w.path in FAKES for w in report.warnings)
    runs = {r["id"]: r for r in index["runs"]}
    assert runs["exp-async"]["jobs"] == ["exp-async.async-run_561773", "exp-async.async-run_561774"]
    run = json.loads((out / runs["exp-async"]["data"]).read_text())
    want = truth["trials"]["exp-async/async-run/trace_jobs"]
    assert (run["trials"]["total"], run["trials"]["eval"]) == (want["total"], want["eval"])
    orphan = json.loads((out / "data/jobs/orphan.prep_9.json").read_text())
    assert orphan["log"] is None
    assert orphan["trials"]["total"] == truth["trials"]["flat/sync-baseline/trace_jobs"]["total"]

    # The preprocessing log grows SkyRL lines: a job from then on; a job's log that grows
    # with any lines stays one; a build that finds nothing changed says the same counts.
    with open(mixed / "slurm/prep_2.out", "ab") as fh:
        fh.write(RAY_LINE)
    with open(mixed / "slurm/started_4.out", "ab") as fh:
        fh.write(PREP)
    again = build(opts)
    assert again.parse is not None and again.parse.logs_resumed == 2
    assert "slurm.prep_2" in {j["id"] for j in _index(out)["jobs"]}
    assert "slurm.started_4" in {j["id"] for j in _index(out)["jobs"]}
    assert (again.jobs, again.skipped) == (6, len(FAKES) - 1)
    same = build(opts)
    assert same.unchanged and (same.jobs, same.skipped) == (6, len(FAKES) - 1)


def test_an_archive_of_fakes_only_is_one_line(tmp_path, capsys):
    for rel, data in FAKES.items():
        if rel.startswith("slurm/"):
            (tmp_path / "a" / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / "a" / rel).write_bytes(data)
    with pytest.raises(ArchiveError, match="4 logs .* hold nothing of SkyRL"):
        build(BuildOptions(archive=tmp_path / "a", out=tmp_path / "site", workers=1))
    assert main(["build", str(tmp_path / "a"), "-o", str(tmp_path / "site")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("sitegen: error: no jobs found") and "slurm/junk_1.out" in err[-1]
