"""The command line: one clear line and a non-zero exit for errors, never a traceback."""

from __future__ import annotations

import json
import shutil
import socket
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
    assert len(truth["jobs"]) == 10  # 7 + the three jobs in real shapes (formats.md §8)
    assert main(["build", str(tmp_path / "a"), "-o", str(tmp_path / "site"), "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "warning: " in err and ":" in err.split("warning: ")[1]  # file:line
    assert "built " in err and "10 jobs" in err and "warnings" in err
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


# -- issue 10: every bad input is one line naming the key or path and the fix, exit 2 ----------


def one_line_error(capsys, argv) -> str:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and err.strip().count("\n") == 0, err
    return err


def test_bad_config_values_are_one_line(tmp_path, capsys):
    (tmp_path / "a/j").mkdir(parents=True)
    (tmp_path / "a/j/x.out").write_text("hello\n")
    cfg = tmp_path / "c.toml"
    cases = {
        'workers = "many"\n': "workers must be a whole number",
        "workers = -3\n": "workers must be",
        "base_url = 5\n": "base_url must be",
        'base_url = "not a url"\n': "base_url must be",
        'title = ""\n': "title must be",
        'redact_patterns = ["(?i)x"]\n': None,  # valid alone: fine (compiled alone, not joined)
        'redact_patterns = ["a)|(b"]\n': "redact pattern 1",
        'redact_patterns = ["x*"]\n': "matches the empty string",
        "redact_patterns = 3\n": "redact_patterns must be a list",
    }
    for text, expected in cases.items():
        cfg.write_text(text)
        argv = ["build", str(tmp_path / "a"), "-o", str(tmp_path / "o"), "--config", str(cfg)]
        if expected is None:
            assert main(argv) == 0, text
            capsys.readouterr()
            continue
        err = one_line_error(capsys, argv)
        assert expected in err and str(cfg) in err, (text, err)
    cfg.write_bytes(b'title = "\xff\xfe"\n')
    assert "not UTF-8" in one_line_error(
        capsys, ["build", str(tmp_path / "a"), "--config", str(cfg)]
    )
    assert "workers" in one_line_error(capsys, ["build", str(tmp_path / "a"), "--workers", "-2"])
    assert "base_url" in one_line_error(
        capsys, ["build", str(tmp_path / "a"), "--base-url", "ftp:/x"]
    )


def test_serve_port_is_checked(tmp_path, capsys):
    for port in ("-1", "99999", "0", "http"):
        err = one_line_error(capsys, ["serve", str(tmp_path), "--port", port])
        assert "--port" in err and "1 to 65535" in err
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        err = one_line_error(capsys, ["serve", str(tmp_path), "--port", str(port)])
        assert f"127.0.0.1:{port}" in err and "--port" in err


def test_synth_refuses_a_used_or_impossible_folder(tmp_path, capsys):
    (tmp_path / "used").mkdir()
    (tmp_path / "used/keep.txt").write_text("mine")
    assert "not empty" in one_line_error(capsys, ["synth", str(tmp_path / "used")])
    assert (tmp_path / "used/keep.txt").read_text() == "mine"
    (tmp_path / "file").write_text("x")
    assert "not a folder" in one_line_error(capsys, ["synth", str(tmp_path / "file")])
    assert "cannot create" in one_line_error(capsys, ["synth", str(tmp_path / "file/sub")])


def test_the_command_freezes_the_collector_before_exit_and_main_does_not(tmp_path):
    """``sitegen``/``python -m sitegen`` end with gc.freeze() (a faster shutdown), exit handlers
    still run and the exit code is main's; main() called as a library leaves gc alone."""
    import gc

    (tmp_path / "a" / "j").mkdir(parents=True)
    (tmp_path / "a" / "j" / "a.out").write_text("hello\n")
    argv = ["build", str(tmp_path / "a"), "-o", str(tmp_path / "site"), "--workers", "1"]
    for args, want in ((argv, 0), (["build", str(tmp_path / "nope")], 2)):
        code = (
            "import atexit, gc, sys\n"
            "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
            f"sys.argv = ['sitegen', *{args!r}]\n"
            "from sitegen.cli import entry\n"
            "entry()\n"
        )
        r = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=300
        )
        assert r.stdout.split() == ["frozen", "True"], r.stderr
        assert r.returncode == want, r.stderr  # main's code
    assert (tmp_path / "site" / "index.html").is_file()
    before = gc.get_freeze_count()
    assert main(argv) == 0 and gc.get_freeze_count() == before
