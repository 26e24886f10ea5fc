"""The command line: one clear line and a non-zero exit for errors, never a traceback."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from sitegen.commands.cli import main

# The first line of a job that has just started: enough to be a job (read/evidence.py).
STARTED = "(skyrl_entrypoint pid=4242) starting\n"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sitegen", *args], capture_output=True, text=True, timeout=300
    )


# The other errors are main()'s in this process (one_line_error): python -m sitegen runs
# the same main(), and a traceback here would fail the test as surely as one printed there.
def test_missing_archive(tmp_path):
    """``python -m sitegen`` itself: an error is one line and exit 2."""
    r = run("build", str(tmp_path / "nope"), "-o", str(tmp_path / "o"))
    assert r.returncode == 2
    assert (
        r.stderr.strip().count("\n") == 0
        and "not found" in r.stderr
        and "Traceback" not in r.stderr
    )


def test_archive_without_jobs(tmp_path, capsys):
    (tmp_path / "a" / "empty").mkdir(parents=True)
    err = one_line_error(capsys, ["build", str(tmp_path / "a"), "-o", str(tmp_path / "o")])
    assert "no jobs found" in err


def test_unknown_option_and_bad_config(tmp_path, capsys):
    err = one_line_error(capsys, ["build", str(tmp_path), "--frobnicate"])
    assert "frobnicate" in err and err.count("\n") == 1
    cfg = tmp_path / "c.toml"
    cfg.write_text('colour = "red"\n')
    (tmp_path / "j").mkdir()
    (tmp_path / "j" / "a.out").write_text(STARTED)
    argv = ["build", str(tmp_path), "--config", str(cfg), "-o", str(tmp_path / "o")]
    assert "unknown key 'colour'" in one_line_error(capsys, argv)


def _build(capsys, *argv: str) -> tuple[int, list[str]]:
    """``sitegen build ARGV`` in this process: its exit code and the lines of its stderr."""
    code = main(["build", *argv, "--workers", "1"])
    lines = capsys.readouterr().err.splitlines()
    return code, [x for x in lines if not x.startswith("progress: ")]  # (not on a terminal)


REPEATED = re.compile(
    r"^(\d+) warnings? already reported by the last build \(from (\d+) inputs?\) (?:is|are) "
    r"not repeated: all are in (.+)#warnings, or here with --verbose$"
)


def test_a_rebuild_prints_each_warning_once_and_its_closing_lines_agree(tmp_path, capsys):
    """The first build prints every warning, then that a synth archive's damage is planted;
    a rebuild with nothing changed sums them up in one line and says once that nothing
    changed; new warnings of changed inputs are printed in full; --strict counts them all."""
    arch, site = tmp_path / "a", tmp_path / "site"
    assert main(["synth", str(arch), "--seed", "5", "--steps", "8", "--trials-per-step", "2"]) == 0
    truth = json.loads((arch / "synth-truth.json").read_text())
    assert len(truth["jobs"]) == 12  # 7 + the five jobs in real shapes (docs/formats.md §2–§6)
    capsys.readouterr()
    code, first = _build(capsys, str(arch), "-o", str(site))
    assert code == 0
    published = json.loads((site / "data" / "warnings.json").read_text())
    every = [
        f"warning: {w['path']}" + (f":{w['line']}" if w["line"] else "") + f": {w['message']}"
        for w in published
    ]
    assert len(every) >= 10 and [x for x in first if x.startswith("warning: ")] == every
    note = first[len(every)]
    assert (
        note.startswith(f"note: {arch} was written by 'sitegen synth'")
        and "planted on purpose" in note
    )
    assert first[len(every) + 1].startswith("built ") and f", {len(every)} warnings, " in first[-3]
    assert first[-1] == f"site written to {site}/index.html"
    inputs = len({w["path"] for w in published})

    # nothing changed: one line for the warnings, one statement that nothing changed
    code, again = _build(capsys, str(arch), "-o", str(site))
    assert code == 0 and len(again) == 4, again
    m = REPEATED.match(again[0])
    assert m and (int(m[1]), int(m[2]), m[3]) == (len(every), inputs, f"{site}/index.html")
    assert again[1].startswith("nothing changed since the last build: 12 jobs in ")
    assert f", {len(every)} warnings, 2 skipped inputs; secrets hidden in " in again[1]
    assert again[2].startswith("inputs: 12 logs and ") and "all unchanged (none read)" in again[2]
    assert again[3] == f"site left as it was: {site}/index.html"
    assert not any("written" in x or x.startswith(("built", "note:")) for x in again)
    # --strict: the warnings summed up count (a CI keeping the cache must not go green)
    code, strict = _build(capsys, str(arch), "-o", str(site), "--strict")
    assert code == 1 and REPEATED.match(strict[0])
    assert (
        strict[-1]
        == f"sitegen: --strict: {len(every)} warnings (all already reported by the last build)"
    )
    # --verbose: every one again
    code, verbose = _build(capsys, str(arch), "-o", str(site), "--verbose")
    assert code == 0 and [x for x in verbose if x.startswith("warning: ")] == every
    assert not any(REPEATED.match(x) for x in verbose)

    # changed inputs: a log grows a line of binary, a damaged trial and a job-level file
    # appear: only their warnings are printed; the archive is no longer synth's (no note)
    with open(arch / "flat/stale/train_600150.out", "ab") as fh:
        fh.write(b"x\x00y\n")
    trials = arch / "flat/sync-baseline/trace_jobs"
    (trials / "cut__x").mkdir()
    (trials / "cut__x" / "result.json").write_text("{")
    (arch / "synth-truth.json").unlink()
    code, changed = _build(capsys, str(arch), "-o", str(site), "--strict")
    new = [x for x in changed if x.startswith("warning: ")]
    assert len(new) == 2 and "flat/stale/train_600150.out:" in new[0] and "NUL" in new[0]
    assert new[1].startswith("warning: flat/sync-baseline/trace_jobs/cut__x/result.json:1: ")
    m = REPEATED.match(changed[2])
    assert m and int(m[1]) == len(every)
    assert not any(x.startswith("note:") for x in changed)
    assert changed[3].startswith("built ") and changed[-2] == f"site written to {site}/index.html"
    assert code == 1 and changed[-1] == (
        f"sitegen: --strict: {len(every) + 2} warnings ({len(every)} of them already reported "
        "by the last build)"
    )


# Each count synth and build print, and the words that say what it counts.
COUNTS = {
    "jobs": r"(\d+) jobs? in \d+ runs?\b",
    "runs": r"\d+ jobs? in (\d+) runs?\b",
    "trials": r"(\d+) training trials?\b",
    "eval_trials": r"(\d+) eval trials?\b",
    "unreadable": r"(\d+) unreadable result\.json\b",
    "job_level": r"(\d+) job-level result\.json \(not (?:a trial|trials)\)",
    "missing": r"(\d+) trials? without result\.json\b",
    "trial_files": r"(\d+) result\.json files?\b",
    "planted_jobs": r"(\d+) of the jobs planted\b",
}
READ = re.compile(r"\b(\d+) result\.json files? \((\d+) read, (\d+) from the last build\)")


def _counts(text: str) -> dict[str, int]:
    """Every count of :data:`COUNTS` the text prints (each at most once)."""
    out = {}
    for name, pattern in COUNTS.items():
        found = re.findall(pattern, text)
        assert len(found) <= 1, (name, text)
        if found:
            out[name] = int(found[0])
    return out


def test_synth_and_build_print_the_same_counts_of_one_archive(tmp_path, capsys):
    """synth and build of one archive print the same counts in the same words, each equal to
    the ground truth; a build's result.json files are what it read plus what it took from the
    last build, and a second build takes from the last build what the first read (a trial
    archive's members counted one by one on both sides)."""
    arch, site = tmp_path / "a", tmp_path / "site"
    argv = ["synth", str(arch), "--seed", "4", "--steps", "8", "--trials-per-step", "2"]
    assert main([*argv, "--plants"]) == 0
    said = capsys.readouterr().out
    truth = json.loads((arch / "synth-truth.json").read_text())["counts"]
    synth = _counts(said)
    # every count printed, each equal to its truth (a kind of damage there is none of: left out)
    assert synth == {k: v for k, v in truth.items() if v or k in ("eval_trials",)}
    assert synth["planted_jobs"] == 9 and synth["unreadable"] == 2 and synth["missing"] == 1
    assert synth["trial_files"] == synth["trials"] + synth["eval_trials"] + synth["unreadable"]

    code, first = _build(capsys, str(arch), "-o", str(site))
    built = _counts("\n".join(first[-3:]))
    assert code == 0 and built == {k: v for k, v in synth.items() if k != "planted_jobs"}
    assert READ.search(first[-2]).groups() == (str(synth["trial_files"]),) * 2 + ("0",)
    # a log changed: its trial folders are unchanged, taken from the last build
    log = arch / "flat/stale/train_600150.out"
    os.utime(log, ns=(log.stat().st_atime_ns, log.stat().st_mtime_ns + 10**9))
    code, second = _build(capsys, str(arch), "-o", str(site))
    assert second[-3].startswith("built ") and _counts("\n".join(second[-3:])) == built
    assert READ.search(second[-2]).groups() == (str(synth["trial_files"]), "0") + (
        str(synth["trial_files"]),
    )
    code, third = _build(capsys, str(arch), "-o", str(site))  # nothing changed
    assert third[-3].startswith("nothing changed") and _counts("\n".join(third[-3:])) == built
    assert f"{synth['trial_files']} result.json files, all unchanged (none read)" in third[-2]

    # a trial added, and a job-level result.json in a trial folder: read, counted apart,
    # then taken from the last build like the rest
    trials = arch / "flat/sync-baseline/trace_jobs"
    done = next(p for p in sorted(trials.iterdir()) if (p / "result.json").is_file())
    (trials / "late__x").mkdir()
    (trials / "late__x" / "result.json").write_bytes((done / "result.json").read_bytes())
    (trials / "summary__x").mkdir()
    (trials / "summary__x" / "result.json").write_text('{"id": "job", "n_total_trials": 9}')
    code, fourth = _build(capsys, str(arch), "-o", str(site))
    now = _counts("\n".join(fourth[-3:]))
    assert now == {
        **built,
        "trials": built["trials"] + 1,
        "job_level": 1,
        "trial_files": built["trial_files"] + 2,
    }
    assert "1 job-level result.json (not a trial)" in fourth[-3]
    total = str(now["trial_files"])
    assert READ.search(fourth[-2]).groups() == (total, "2", str(built["trial_files"]))
    os.utime(log, ns=(log.stat().st_atime_ns, log.stat().st_mtime_ns + 10**9))
    code, fifth = _build(capsys, str(arch), "-o", str(site))
    assert READ.search(fifth[-2]).groups() == (total, "0", total)


def test_users_files_in_the_output_folder_stay(tmp_path, capsys):
    (tmp_path / "a" / "j").mkdir(parents=True)
    (tmp_path / "a" / "j" / "x.out").write_text(STARTED)
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    argv = ["build", str(tmp_path / "a"), "-o", str(out)]
    assert main(argv) == 0 and (out / "index.html").exists()
    assert (out / "thesis.tex").read_text() == "precious"
    (out / "index.html").unlink()
    (out / ".sitegen-site").unlink()  # now index.html would overwrite a page that is not sitegen's
    (out / "index.html").write_text("my own page")
    shutil.rmtree(tmp_path / ".mine.cache")
    capsys.readouterr()
    assert "did not make" in one_line_error(capsys, argv)
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
    (tmp_path / "a/j/x.out").write_text(STARTED)
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


def _base_url_errors(tmp_path: Path, capsys, url: str) -> list[tuple[str, str]]:
    """(where, the one-line error) of a build given ``url`` as --base-url and in a config;
    the archive is one job (made once), nothing is built."""
    if not (tmp_path / "a/j/x.out").exists():
        (tmp_path / "a/j").mkdir(parents=True)
        (tmp_path / "a/j/x.out").write_text(STARTED)
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'base_url = "{url}"\n')
    out = []
    for argv, where in ((["--base-url", url], "--base-url"), (["--config", str(cfg)], str(cfg))):
        build = ["build", str(tmp_path / "a"), "-o", str(tmp_path / "o"), *argv]
        out.append((where, one_line_error(capsys, build)))
    assert not (tmp_path / "o").exists()
    return out


def test_a_base_url_holding_a_credential_is_refused_and_not_repeated(tmp_path, capsys):
    """Every page's canonical, OpenGraph and sitemap links carry the base URL: one holding a
    password, a token as its user or in its query would be published on every page."""
    for url, secret in (
        ("https://bot:Zk3v9QmWab12@org.github.io/runs/", "Zk3v9QmWab12"),
        ("https://ghp_" + "Q7w3Er5tY8uI0oP2aS4dF6gH9jK1lZ3xC5vB@org.github.io/", "Q7w3Er5tY8"),
        ("https://org.github.io/runs/?token=Zk3v9QmWab12", "Zk3v9QmWab12"),
    ):
        for where, err in _base_url_errors(tmp_path, capsys, url):
            assert "holds a credential" in err and where in err, err
            assert secret not in err and "[REDACTED]" in err, err
    cfg = tmp_path / "c.toml"
    cfg.write_text('base_url = "https://org.github.io/runs/"\n')
    assert (
        main(["build", str(tmp_path / "a"), "-o", str(tmp_path / "o"), "--config", str(cfg)]) == 0
    )


def test_a_base_url_that_is_not_the_sites_folder_is_refused(tmp_path, capsys):
    """Every page's address is the base URL and the page's path: one copied from the address
    bar of the index (``…/index.html``), or with a query or a fragment, would give addresses
    such as ``…/index.html/jobs/x/`` or ``…/#top/jobs/x/`` that lead nowhere."""
    for url, says in (
        ("https://org.github.io/runs/index.html", "give 'https://org.github.io/runs/'"),
        ("https://runs.example.org/index.htm", "give 'https://runs.example.org/'"),
        ("https://org.github.io/runs/#top", "no '?' or '#'"),
        ("https://org.github.io/runs?x=1", "no '?' or '#'"),
        ("https://org.github.io/runs/?", "no '?' or '#'"),
    ):
        for where, err in _base_url_errors(tmp_path, capsys, url):
            assert "the site's folder" in err and says in err and where in err, err
    for fine in ("https://org.github.io/runs", "https://org.github.io/runs.v2/", "HTTPS://x.org/"):
        argv = ["build", str(tmp_path / "a"), "-o", str(tmp_path / "o"), "--base-url", fine]
        assert main(argv) == 0


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
    (tmp_path / "a" / "j" / "a.out").write_text(STARTED)
    argv = ["build", str(tmp_path / "a"), "-o", str(tmp_path / "site"), "--workers", "1"]
    for args, want in ((argv, 0), (["build", str(tmp_path / "nope")], 2)):
        code = (
            "import atexit, gc, sys\n"
            "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
            f"sys.argv = ['sitegen', *{args!r}]\n"
            "from sitegen.commands.cli import entry\n"
            "entry()\n"
        )
        r = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=300
        )
        assert r.stdout.split() == ["frozen", "True"], r.stderr
        assert r.returncode == want, r.stderr  # main's code
    assert (tmp_path / "site" / "index.html").is_file()
    before = gc.get_freeze_count(), gc.get_threshold()
    assert main(argv) == 0 and (gc.get_freeze_count(), gc.get_threshold()) == before
    assert main(["build", str(tmp_path / "nope")]) == 2 and gc.get_threshold() == before[1]


def _tiny_archive(root):
    (root / "j").mkdir(parents=True)
    (root / "j" / "a.out").write_text(STARTED)
    return root


def _no_reading(monkeypatch):
    """Make any discovery or parse of the archive fail the test."""
    import sitegen.commands.build

    def read(*_a, **_k):
        raise AssertionError("the archive was read")

    monkeypatch.setattr(sitegen.commands.build, "discover", read)
    monkeypatch.setattr(sitegen.commands.build, "_parse", read)


def test_bad_output_and_options_are_refused_before_anything_is_read(tmp_path, capsys, monkeypatch):
    """Exit 2, one line naming the file, no parse, nothing made beside the output folder."""
    monkeypatch.chdir(tmp_path)
    arch = _tiny_archive(tmp_path / "a")
    (tmp_path / "file").write_text("mine")
    _no_reading(monkeypatch)
    cases = {
        ("-o", str(tmp_path / "file")): f"{tmp_path / 'file'} exists and is not a folder",
        ("-o", str(tmp_path / "file" / "site")): f"{tmp_path / 'file'} is a file",
        ("-o", str(arch)): "cannot build into the archive itself",
        ("-o", str(tmp_path)): f"it holds the archive ({arch})",  # gh-deploy would publish it
        ("-o", "."): f"it holds the archive ({arch})",
        ("--ray-address", "auto"): "--ray-address is for --executor ray",
    }
    for extra, expected in cases.items():
        for command in ("build", "serve", "gh-deploy"):
            err = one_line_error(capsys, [command, str(arch), *extra])
            assert expected in err, (command, extra, err)
    cfg = tmp_path / "team.toml"
    cfg.write_text("publish_allow = ['.*']\n")
    for command in ("build", "gh-deploy", "check-site"):
        target = str(tmp_path / "site") if command == "check-site" else str(arch)
        if command == "check-site":
            (tmp_path / "site").mkdir()
            (tmp_path / "site" / "index.html").write_text("<p>hi</p>")
        err = one_line_error(capsys, [command, target, "--config", str(cfg)])
        assert f"config {cfg}: publish_allow: pattern '.*' would allow any value" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "file", "site", "team.toml"]
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["j"]


def test_library_refuses_them_before_anything_is_read(tmp_path, monkeypatch):
    import pytest

    from sitegen.commands.build import build
    from sitegen.commands.deploy import gh_deploy
    from sitegen.errors import ConfigError, OutputError
    from sitegen.options import BuildOptions, load_options

    arch = _tiny_archive(tmp_path / "a")
    (tmp_path / "file").write_text("mine")
    _no_reading(monkeypatch)
    with pytest.raises(OutputError, match="exists and is not a folder"):
        build(BuildOptions(archive=arch, out=tmp_path / "file"))
    with pytest.raises(OutputError, match="exists and is not a folder"):
        load_options(None, archive=arch, out=tmp_path / "file")
    with pytest.raises(ConfigError, match="would allow any value"):
        gh_deploy(BuildOptions(archive=arch, out=tmp_path / "site", publish_allow=(".+",)))
    with pytest.raises(ConfigError, match="would allow any value"):
        load_options(None, archive=arch, publish_allow=(r"\S+",))
    cfg = tmp_path / "c.toml"
    cfg.write_text('publish_allow = ["ghp_.*"]\n')
    with pytest.raises(ConfigError, match=f"config {cfg}: publish_allow: pattern 'ghp_"):
        load_options(cfg, archive=arch)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "c.toml", "file"]


def test_sitegen_toml_in_the_current_folder_is_read_and_named(tmp_path, capsys, monkeypatch):
    """As MkDocs reads mkdocs.yml from where it runs; which config was used is one line."""
    arch = _tiny_archive(tmp_path / "a")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sitegen.toml").write_text('title = "Team runs"\n')
    assert main(["build", str(arch), "-o", "site", "--workers", "1"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [ln for ln in err if ln.startswith("config")] == [
        "config: sitegen.toml (found in the current folder)"
    ]
    assert json.loads((tmp_path / "site/data/index.json").read_text())["title"] == "Team runs"

    other = tmp_path / "other.toml"
    other.write_text('title = "Given"\n')
    assert main(["build", str(arch), "-o", "site", "--config", str(other)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [ln for ln in err if ln.startswith("config")] == [f"config: {other}"]
    assert json.loads((tmp_path / "site/data/index.json").read_text())["title"] == "Given"

    # a broken one in the current folder is an error naming it, as a given one is
    (tmp_path / "sitegen.toml").write_text("colour = 1\n")
    err = one_line_error(capsys, ["build", str(arch), "-o", "site"])
    assert "config sitegen.toml: unknown key 'colour'" in err
    assert "config sitegen.toml: unknown key" in one_line_error(capsys, ["check-site", "site"])

    (tmp_path / "sitegen.toml").unlink()  # none: nothing said
    assert main(["build", str(arch), "-o", "site"]) == 0
    assert "config" not in capsys.readouterr().err


def test_every_argument_of_every_command_says_what_it_is():
    import argparse

    from sitegen.commands.cli import _parser

    def helps(parser: argparse.ArgumentParser, name: str):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:
                    yield f"{name} {choice.dest}", choice.help
                for sub, p in action.choices.items():
                    yield from helps(p, f"{name} {sub}")
            else:
                yield f"{name} {'/'.join(action.option_strings) or action.dest}", action.help

    found = dict(helps(_parser(), "sitegen"))
    assert len(found) > 60 and "sitegen serve --host" in found and "sitegen synth out" in found
    missing = [k for k, v in found.items() if not v or v == argparse.SUPPRESS]
    assert not missing, missing
    assert "workers" in found["sitegen build --config"]
    assert "current folder" in found["sitegen check-site --config"]
