"""A corpus of hostile inputs: each gives a warning with a location and the build finishes;
nothing injected executes or appears unescaped; clear errors for bad options and folders."""

from __future__ import annotations

import gzip
import json
import os
import re
import threading
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from sitegen.commands.build import build
from sitegen.commands.cli import main
from sitegen.options import BuildOptions
from sitegen.read.parse import read_log
from sitegen.synth import synth
from tests.conftest import page_specs, unprivileged

PAYLOAD = '<script>window.__pwned=1</script>"onload=alert(1) javascript:alert(1)'


def _step(pid: int, n: int) -> str:
    return (
        f"(skyrl_entrypoint pid={pid}) 2026-02-08 00:00:00.000 | INFO     | m:f:1 - Step {n}: \n"
        f"(skyrl_entrypoint pid={pid}) {{'reward/avg_raw_reward': '0.5000', 'trainer/global_step': {n}}}\n"
    )


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[Path, Path, list]:
    root = tmp_path_factory.mktemp("hostile")
    a = root / "archive"
    synth(a, seed=9, steps=8, trials_per_step=2, payload=PAYLOAD)
    h = a / "hostile"
    (h / "cr-only").mkdir(parents=True)
    (h / "cr-only" / "job.out").write_bytes(
        _step(1, 1).replace("\n", "\r").encode() + _step(1, 2).encode()
    )
    big = h / "big-line"
    big.mkdir()
    with open(big / "job.out", "wb") as fh:
        fh.write(_step(1, 1).encode())
        fh.write(b"(skyrl_entrypoint pid=1) " + b"y" * (50 << 20) + b"\n")
        fh.write(b"\xff\xfe\x00 binary \x80\n")
        fh.write(_step(1, 2).encode())
    t = h / "bad-trials" / "trace_jobs"
    cases = {
        "list": b"[1, 2, 3]",
        "number": b"42",
        "nested": b"[" * 5000 + b"]" * 5000,
        "truncated": b'{"trial_name": "x", "agent_result": {',
    }
    for name, data in cases.items():
        (t / name).mkdir(parents=True)
        (t / name / "result.json").write_bytes(data)
    (t / "huge").mkdir()
    with open(t / "huge" / "result.json", "wb") as fh:  # 200 MB, sparse: never read
        fh.truncate(200 << 20)
    (t / "dir-not-file" / "result.json").mkdir(parents=True)
    (h / "bad-trials" / "job.out").write_text(_step(1, 1))
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.out").write_text("secret\n")
    links = h / "links"
    links.mkdir()
    (links / "job.out").write_text(_step(1, 1))
    os.symlink(outside / "secret.out", links / "other.out")
    os.symlink(a, links / "loop")
    os.symlink(outside, links / "outside-dir")
    # a log being appended to while the build reads it
    live = h / "live"
    live.mkdir()
    (live / "job.out").write_text("".join(_step(1, n) for n in range(1, 50)))
    stop = threading.Event()

    def writer():
        n = 50
        while not stop.is_set():
            with open(live / "job.out", "a") as fh:
                fh.write(_step(1, n)[:-7])  # often mid-line
                fh.flush()
                fh.write(_step(1, n)[-7:])
            n += 1
            time.sleep(0.001)

    th = threading.Thread(target=writer)
    th.start()
    try:
        report = build(BuildOptions(archive=a, out=root / "site", workers=2))
    finally:
        stop.set()
        th.join()
    return a, root / "site", report.warnings


def _warned(warnings, path_part: str, text: str | None = None, line: bool | None = None) -> bool:
    for w in warnings:
        if (
            path_part in w.path
            and (text is None or text in w.message)
            and (line is None or (w.line is not None) == line)
        ):
            return True
    return False


def test_corpus_warnings_with_locations(hostile):
    a, site, warnings = hostile
    assert _warned(warnings, "big-line/job.out", "longer than 1 MiB", line=True)
    assert _warned(warnings, "big-line/job.out", "invalid UTF-8", line=True)
    assert _warned(warnings, "big-line/job.out", "NUL", line=True)
    assert _warned(warnings, "trace_jobs/list/result.json", "list")
    assert _warned(warnings, "trace_jobs/number/result.json", "int")
    assert _warned(warnings, "trace_jobs/nested/result.json", "malformed")
    assert _warned(warnings, "trace_jobs/truncated/result.json", "malformed", line=True)
    assert _warned(warnings, "trace_jobs/huge/result.json", "over the")
    assert _warned(warnings, "trace_jobs/dir-not-file/result.json", "cannot read")
    assert _warned(warnings, "links/other.out", "outside the archive")
    assert _warned(warnings, "links/loop", "not followed")


def test_valid_records_around_the_damage_are_kept(hostile):
    a, site, _ = hostile
    jobs = {j["log"]: j for j in json.loads((site / "data/index.json").read_text())["jobs"]}
    assert jobs["hostile/cr-only/job.out"]["metric_blocks"] == 2
    assert jobs["hostile/big-line/job.out"]["metric_blocks"] == 2
    live = jobs["hostile/live/job.out"]
    assert live["metric_blocks"] >= 49 and live["first_step"] == 1
    steps = json.loads((site / live["data"]).read_text())["series"]["step"]
    assert steps == list(range(1, len(steps) + 1))  # a clean prefix, nothing torn
    bad = json.loads((site / jobs["hostile/bad-trials/job.out"]["data"]).read_text())["trials"]
    assert bad["malformed"] == 6 and bad["total"] == 0
    assert not any("secret.out" in (j["log"] or "") for j in jobs.values())
    weird = next(j for log, j in jobs.items() if "ünï" in log)
    assert re.fullmatch(r"[A-Za-z0-9._-]+", weird["id"])
    assert (site / weird["url"] / "index.html").exists()


class _Audit(HTMLParser):
    """Every tag and attribute as a browser would build them."""

    def __init__(self):
        super().__init__()
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=...>")
            if (
                name in ("href", "src")
                and value
                and value.strip().lower().startswith("javascript:")
            ):
                self.problems.append(f"<{tag} {name}={value}>")
        a = dict(attrs)
        if tag == "script" and not (a.get("type") == "application/json" or "src" in a or not attrs):
            self.problems.append(f"unexpected script {attrs}")
        if tag in ("b", "img") and any("onmouseover" in (v or "") for _, v in attrs):
            self.problems.append(tag)

    def handle_data(self, data):
        pass


def test_nothing_injected_appears_unescaped(hostile):
    _, site, _ = hostile
    data_script = re.compile(r'<script type="application/json" id="[\w-]+">(.*?)</script>', re.S)
    inline_script = re.compile(r"<script>(.*?)</script>", re.S)
    for page in site.rglob("*.html"):
        text = page.read_text()
        assert "<script>window.__pwned" not in text, page
        # embedded JSON: no "<" or ">" at all, so it can neither close its element nor open a tag
        for block in data_script.findall(text):
            assert "<" not in block and ">" not in block, page
        for block in inline_script.findall(text):
            assert block.startswith("sitegen."), page  # our own one-line calls only
        audit = _Audit()
        audit.feed(text)
        assert audit.problems == [], (page, audit.problems)
    assert not list(site.rglob("*.vl.json"))
    for page in site.rglob("index.html"):
        if 'id="chart-specs"' in page.read_text():
            assert page_specs(page)  # the embedded JSON survives hostile names


def test_names_that_are_not_utf8_are_read_and_shown_with_their_bytes(tmp_path):
    # File and folder names are bytes on Linux; one that is not UTF-8 (a Latin-1 é, a stray
    # 0xff) reaches Python as surrogates, which no JSON or HTML can hold as they are.
    import io
    import tarfile

    a = tmp_path / "a"
    for name in (b"bad\xff", b"bad\xfe"):  # two names that differ in that byte only
        d = os.path.join(os.fsencode(a), name)
        os.makedirs(d)
        with open(os.path.join(d, b"train_\xe9_1.out"), "w") as fh:
            fh.write(_step(1, 1) + _step(1, 2))
    tj = a / "ok" / "trace_jobs"
    tj.mkdir(parents=True)
    (a / "ok" / "train_2.out").write_text(_step(2, 1))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", encoding="utf-8", errors="surrogateescape") as tar:
        data = json.dumps(
            {"trial_name": "t", "task_name": "task", "verifier_result": {"reward": 1}}
        )
        info = tarfile.TarInfo(os.fsdecode(b"trials/t\xfe__x/result.json"))
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data.encode()))
    (tj / "trials_step1_x.tar").write_bytes(buf.getvalue())
    report = build(BuildOptions(archive=a, out=tmp_path / "site", workers=1, now=1.9e9))
    assert report.jobs == 3 and report.trials == 1
    index = json.loads((tmp_path / "site" / "data" / "index.json").read_text())
    logs = sorted(j["log"] for j in index["jobs"])
    assert logs == ["bad\ufffdfe/train_\ufffde9_1.out", "bad\ufffdff/train_\ufffde9_1.out",
                    "ok/train_2.out"]  # fmt: skip
    warned = [str(w) for w in report.warnings if "not valid UTF-8" in w.message]
    assert len(warned) == 4 and all(w.startswith("bad\ufffd") for w in warned), (
        warned
    )  # 2 folders, 2 files
    for j in index["jobs"]:  # each read from its own file: two steps each
        if j["log"].startswith("bad"):
            page = json.loads((tmp_path / "site" / "data" / "jobs" / f"{j['id']}.json").read_text())
            assert (page["first_step"], page["last_step"], page["metric_blocks"]) == (1, 2, 2)


def test_unreadable_log_is_a_warning(tmp_path):
    res = read_log(str(tmp_path), "gone.out", (), (), None)
    assert res.path == "gone.out" and "cannot read" in res.message


def test_unwritable_output_is_one_clear_line(tmp_path, capsys):
    (tmp_path / "a" / "j").mkdir(parents=True)
    (tmp_path / "a" / "j" / "x.out").write_text("hi\n")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["build", str(tmp_path / "a"), "-o", str(blocker / "site")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot create" in err and "Traceback" not in err


def test_debug_shows_the_traceback(tmp_path):
    with pytest.raises(Exception, match="not found"):
        main(["build", str(tmp_path / "nope"), "--debug"])


def test_user_redaction_patterns_apply_everywhere(tmp_path):
    a = tmp_path / "a"
    synth(a, seed=2, steps=8, trials_per_step=1)
    marker = "ACME-INTERNAL-7731"
    notes = a / "exp-async" / "notes.md"
    notes.write_text(notes.read_text() + f"\nproject code {marker}\n")
    cfg = tmp_path / "sitegen.toml"
    cfg.write_text('redact_patterns = ["ACME-INTERNAL-[0-9]+"]\n')
    assert (
        main(
            ["build", str(a), "-o", str(tmp_path / "site"), "--config", str(cfg), "--workers", "1"]
        )
        == 0
    )
    for p in (tmp_path / "site").rglob("*"):
        if p.is_file():
            assert marker.encode() not in p.read_bytes(), p


# The build as a script: (path, message) of each warning, as JSON.
_BUILD_WARNINGS = """
import json, sys
from pathlib import Path
from sitegen.commands.build import build
from sitegen.options import BuildOptions
report = build(BuildOptions(archive=Path(sys.argv[1]), out=Path(sys.argv[2]), workers=1))
print(json.dumps([[w.path, w.message] for w in report.warnings]))
"""


def test_unreadable_files(open_tmp):
    """Built by a user who cannot read a mode-0 file (nobody, when this is root)."""
    a = open_tmp / "a"
    (a / "j" / "trace_jobs" / "t1").mkdir(parents=True)
    for d in (a, a / "j", a / "j" / "trace_jobs", a / "j" / "trace_jobs" / "t1"):
        d.chmod(0o755)
    (a / "j" / "job.out").write_text(_step(1, 1))
    (a / "j" / "other.out").write_text(_step(1, 1))
    os.chmod(a / "j" / "other.out", 0)
    (a / "j" / "trace_jobs" / "t1" / "result.json").write_text("{}")
    os.chmod(a / "j" / "trace_jobs" / "t1" / "result.json", 0)
    out = open_tmp / "out"
    printed = unprivileged(_BUILD_WARNINGS, str(a), str(out / "site"), writable=out)
    warnings = json.loads(printed.splitlines()[-1])
    assert [w for w in warnings if w[0] == "j/other.out" and "cannot read" in w[1]], warnings
    assert [w for w in warnings if w[0].endswith("t1/result.json") and "cannot read" in w[1]], (
        warnings
    )
    # the readable log next to them is built as a job, warned about for nothing
    assert not [w for w in warnings if w[0] == "j/job.out"], warnings


def test_a_colliding_job_does_not_move_an_existing_url(tmp_path):
    """Issue 10: adding p.q/train_1.out once moved p/q/train_1.out to another URL."""
    a = tmp_path / "a"
    (a / "p" / "q").mkdir(parents=True)
    (a / "p" / "q" / "train_1.out").write_text(_step(1, 1) + _step(1, 2))
    out = tmp_path / "site"
    opts = BuildOptions(archive=a, out=out, workers=1, now=1.9e9)
    build(opts)
    page = out / "jobs" / "p.q.train_1" / "index.html"
    assert "p/q/train_1.out" in page.read_text()
    (a / "p.q").mkdir()
    (a / "p.q" / "train_1.out").write_text(_step(2, 1))
    build(opts)
    assert "p/q/train_1.out" in page.read_text()  # the old URL still serves the old job
    index = json.loads((out / "data" / "index.json").read_text())
    by_log = {j["log"]: j["id"] for j in index["jobs"]}
    assert by_log["p/q/train_1.out"] == "p.q.train_1"
    assert by_log["p.q/train_1.out"] != "p.q.train_1"
    runs = [r["id"] for r in index["runs"]]
    assert len(runs) == len(set(runs)) == 2


def test_control_characters_in_names_are_escaped_on_the_terminal(tmp_path, capsys):
    """A line break in a file name cannot split a warning, an escape sequence cannot
    recolour or move the terminal's cursor; a trial folder linked out of the archive is
    skipped with a warning, as other links are."""
    a = tmp_path / "archive"
    odd = a / "odd\x1b[31mred\nwarning: forged line\u202e"
    (odd / "trace_jobs").mkdir(parents=True)
    (odd / "job\r_5.out").write_bytes(
        _step(1, 1).encode() + b"\x00bad line\n" + _step(1, 2).encode()
    )
    outside = tmp_path / "outside-trial"
    outside.mkdir()
    (outside / "result.json").write_text(json.dumps({"trial_name": "x", "task_name": "t"}))
    os.symlink(outside, odd / "trace_jobs" / "linked")
    assert main(["build", str(a), "-o", str(tmp_path / "site"), "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\r" not in err and "\u202e" not in err
    lines = err.splitlines()
    assert not any(line.startswith("warning: forged") for line in lines)
    named = [line for line in lines if "odd\\x1b[31mred\\nwarning: forged line\\u202e" in line]
    assert any("NUL" in line for line in named)
    assert any(
        line.endswith("linked: link points outside the archive: not followed (not read as a trial)")
        for line in named
    )


def test_surrogate_escapes_anywhere_are_read_not_a_traceback(tmp_path):
    """A JSON or Python escape of a UTF-16 surrogate ("\\ud800": a string cut in half, a name
    Python wrote with its undecodable bytes) in a config dump, a step dict, a WANDB_MIRROR
    line, an Exception breakdown or a trial's name: no UTF-8 holds it, and writing the page
    or its JSON ended the build. Read with U+FFFD; a pair is joined into its character."""
    p = "(skyrl_entrypoint pid=7) "

    def lg(msg: str) -> str:
        return f"{p}2026-02-08 00:00:00.000 | INFO     | skyrl_train.trainer:train:1 - {msg}"

    lines = [
        lg("Starting"),
        *(p + x for x in ("trainer:", "  run_name: s", '  k: "\\udc80 \\ud83d\\ude00"')),
        lg("Step 1: "),
        p + "{'reward/avg_raw_reward': '0.5000', 'trainer/global_step': 1, 'x/\\ud800': 2}",
        lg('WANDB_MIRROR kind=eval step=1 metrics={"eval/\\ud800y": 0.5}'),
        lg("Exception breakdown: {'\\udfffErr': 2}"),
    ]
    (tmp_path / "a" / "exp" / "trace_jobs" / "t1").mkdir(parents=True)
    (tmp_path / "a" / "exp" / "train_1.out").write_text("\n".join(lines) + "\n")
    result = {"trial_name": "t\ud800", "task_name": "t", "verifier_result": {"reward": 1.0}}
    (tmp_path / "a" / "exp" / "trace_jobs" / "t1" / "result.json").write_text(json.dumps(result))
    report = build(BuildOptions(archive=tmp_path / "a", out=tmp_path / "site", workers=1))
    assert report.jobs == 1
    (job,) = (tmp_path / "site" / "data" / "jobs").glob("*.json")
    shown = json.loads(job.read_text())
    assert shown["config"]["trainer"]["k"] == "\ufffd \U0001f600"
    assert "x/\ufffd" in shown["series"]
    assert shown["trials"]["total"] == 1
    with gzip.open(job.parents[2] / shown["url"] / "trials.csv.gz", "rt") as fh:
        assert "t\ufffd" in fh.read()  # the trial's name, with U+FFFD for the surrogate
