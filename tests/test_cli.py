"""The command line: one clear line and a non-zero exit for errors, never a traceback."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from sitegen.cli import main


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sitegen", *args], capture_output=True, text=True, timeout=300
    )


def test_missing_archive(tmp_path):
    r = run("build", str(tmp_path / "nope"), "-o", str(tmp_path / "o"))
    assert r.returncode == 2
    assert (
        r.stderr.strip().count("\n") == 0
        and "not found" in r.stderr
        and "Traceback" not in r.stderr
    )


def test_archive_without_jobs(tmp_path):
    (tmp_path / "a" / "empty").mkdir(parents=True)
    r = run("build", str(tmp_path / "a"), "-o", str(tmp_path / "o"))
    assert r.returncode == 2 and "no jobs found" in r.stderr and "Traceback" not in r.stderr


def test_unknown_option_and_bad_config(tmp_path):
    r = run("build", str(tmp_path), "--frobnicate")
    assert r.returncode == 2 and "frobnicate" in r.stderr and r.stderr.count("\n") == 1
    cfg = tmp_path / "c.toml"
    cfg.write_text('colour = "red"\n')
    (tmp_path / "j").mkdir()
    (tmp_path / "j" / "a.out").write_text("hello\n")
    r = run("build", str(tmp_path), "--config", str(cfg), "-o", str(tmp_path / "o"))
    assert r.returncode == 2 and "unknown key 'colour'" in r.stderr


def test_synth_then_build_with_warnings_summary_and_strict(tmp_path, capsys):
    assert (
        main(
            ["synth", str(tmp_path / "a"), "--seed", "5", "--steps", "8", "--trials-per-step", "2"]
        )
        == 0
    )
    truth = json.loads((tmp_path / "a" / "synth-truth.json").read_text())
    assert len(truth["jobs"]) == 7
    assert main(["build", str(tmp_path / "a"), "-o", str(tmp_path / "site"), "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "warning: " in err and ":" in err.split("warning: ")[1]  # file:line
    assert "built " in err and "7 jobs" in err and "warnings" in err
    assert (tmp_path / "site" / "index.html").exists()
    assert (
        main(
            [
                "build",
                str(tmp_path / "a"),
                "-o",
                str(tmp_path / "site"),
                "--strict",
                "--workers",
                "1",
            ]
        )
        == 1
    )


def test_users_files_in_the_output_folder_stay(tmp_path):
    (tmp_path / "a" / "j").mkdir(parents=True)
    (tmp_path / "a" / "j" / "x.out").write_text("hi\n")
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    r = run("build", str(tmp_path / "a"), "-o", str(out))
    assert r.returncode == 0 and (out / "index.html").exists()
    assert (out / "thesis.tex").read_text() == "precious"
    (out / "index.html").unlink()
    (out / ".sitegen-site").unlink()  # now index.html would overwrite a page that is not sitegen's
    (out / "index.html").write_text("my own page")
    shutil.rmtree(tmp_path / ".mine.cache")
    r = run("build", str(tmp_path / "a"), "-o", str(out))
    assert r.returncode == 2 and "did not make" in r.stderr and "Traceback" not in r.stderr
    assert (out / "index.html").read_text() == "my own page"
