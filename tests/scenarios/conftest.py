"""Fixtures of the insight scenarios: an archive holding only the planted jobs, and its site."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from sitegen.commands.build import build
from sitegen.options import BuildOptions
from sitegen.synth import TRUTH_FILE
from sitegen.synth.plants import write_plants
from tests.conftest import made_once


@pytest.fixture(scope="session")
def planted_archive(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """(archive, ground truth) of the planted jobs (sitegen/synth/plants.py)."""

    def make(root: Path) -> None:
        (root / "truth.json").write_text(json.dumps(write_plants(root)))

    root = made_once(tmp_path_factory, "planted", make)
    return root, json.loads((root / "truth.json").read_text())


def build_planted(root: Path, truth: dict, opts: BuildOptions) -> object:
    """A build of the planted archive with a value in its environment named like a secret,
    which a transcript shows (the truth's ``build_secret``: hidden wherever it appears)."""
    tx = truth["jobs"][0]["transcripts"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(tx["build_secret_env"], tx["build_secret"])
        return build(opts)


@pytest.fixture(scope="session")
def planted(tmp_path_factory: pytest.TempPathFactory, planted_archive) -> tuple[Path, dict]:
    """(site folder, ground truth) of a build of the planted jobs."""
    root, truth = planted_archive
    out = made_once(
        tmp_path_factory,
        "planted-out",
        lambda p: build_planted(
            root, truth, BuildOptions(archive=root, out=p / "site", workers=1, now=time.time())
        ),
    )
    return out / "site", truth


@pytest.fixture(scope="session")
def planted_gate(tmp_path_factory: pytest.TempPathFactory, planted) -> tuple[dict, Path]:
    """The publish gate on the planted site (``check_site`` with the default rules): its
    leaks and blocked files (``{"leaks": [...], "blocked": [...]}``), and its record of the
    files that scanned clean (``clean_cache``). A test that checks a site holding many of
    the same files scans it with a copy of the record: a file whose bytes (and whether it is
    HTML) are recorded clean is hashed, not scanned again."""
    from sitegen.publish.gate import check_site
    from sitegen.redact import Redactor

    site, _ = planted

    def make(p: Path) -> None:
        report = check_site(site, Redactor(), (), clean_cache=p / "clean.json")
        found = {"leaks": [str(x) for x in report.leaks], "blocked": report.blocked}
        (p / "report.json").write_text(json.dumps(found))

    out = made_once(tmp_path_factory, "planted-gate", make)
    return json.loads((out / "report.json").read_text()), out / "clean.json"


LONG_CHAIN_JOBS = 12


@pytest.fixture(scope="session")
def long_chain(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """(site folder, data/index.json) of one run resumed again and again: 12 jobs of a few
    steps, each resumed from the last checkpoint of the one before (which ran a step past
    it), their trials in one folder. Its run page holds a long chain and wide tables."""
    root = made_once(tmp_path_factory, "long-chain", _make_long_chain)
    out = made_once(
        tmp_path_factory,
        "long-chain-out",
        lambda p: build(BuildOptions(archive=root, out=p / "site", workers=1, now=time.time())),
    )
    return out / "site", json.loads((out / "site" / "data" / "index.json").read_text())


def _make_long_chain(root: Path) -> None:
    from datetime import datetime, timedelta

    from sitegen.synth.jobspec import JobSpec
    from sitegen.synth.logs import write_log
    from sitegen.synth.trials import step_windows, write_trials

    windows = []
    for i in range(LONG_CHAIN_JOBS):
        last = i == LONG_CHAIN_JOBS - 1
        spec = JobSpec(
            f"flat/long-chain/train_{620000 + i}.out",
            "long-chain",
            3 * i + 1,
            3 * i + 3 if last else 3 * i + 4,
            "complete" if last else "cancelled",
            "TIME LIMIT",
            resume_from=3 * i or None,
            ckpt_interval=3,
            ckpt_root="/ckpt/long-chain",
            job_id=620000 + i,
            start=datetime(2026, 2, 8) + timedelta(days=i),
            engines=1,
        )
        path = root / spec.path
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as fh:
            truth = write_log(fh, spec, 34 + i)
        windows += step_windows(spec, truth, None if last else 3 * i + 3)
    rel = "flat/long-chain/trace_jobs"
    write_trials(root / rel, rel, 4 * len(windows), 34, 1024, variants=False, windows=windows)


@pytest.fixture(scope="session")
def golden_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """(site folder, ground truth) of the golden scenario (tests/scenarios/golden.py)."""
    from tests.scenarios.golden import make_site

    root = made_once(tmp_path_factory, "golden", make_site)
    return root / "site", json.loads((root / "a" / TRUTH_FILE).read_text())
