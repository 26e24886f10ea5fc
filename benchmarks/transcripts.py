"""What sampled transcripts cost: a cold build with and without them, and their bytes on disk.

Usage: ``python benchmarks/transcripts.py ARCHIVE [--pairs 5]``, ARCHIVE the large archive of
``benchmarks/run.py`` (``sitegen synth ARCHIVE --jobs=20 --steps=100 --trials-per-step=135
--trial-kb=60 --pad-mb=200``). Prints Markdown for docs/benchmarks.md ("Transcripts"):

- cold builds (``--clean``) with ``--transcripts 0`` and with the default 48, alternated,
  the archive read once before each (as benchmarks/run.py does), medians of the pairs;
- the bytes of each storage form for 48 Terminus-2 transcripts of 30 turns whose terminal
  answers are what agents read (test runs, listings, installs, tracebacks, diffs): the
  record as JSON in a script, gzip'ed (a ``.json.gz`` fetched over HTTP), base64 of gzip in
  a script (what the site writes), the same for all 48 in one bundle; and the time to read,
  redact and encode one.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITEGEN = [sys.executable, "-m", "sitegen"]


def cold(archive: Path, out: Path, *args: str) -> tuple[float, float]:
    """A cold build's wall time and CPU time (the process and its workers: on a machine
    others share, the CPU time is the steadier measure)."""
    subprocess.run(["cat", *map(str, archive.rglob("*.out"))], stdout=subprocess.DEVNULL)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(
        [*SITEGEN, "build", str(archive), "-o", str(out), "--clean", *args],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


LINES = [
    "tests/test_{w}.py::test_{w}_{n} PASSED{pad}[ {p}%]",
    "tests/test_{w}.py::test_{w}_{n} FAILED{pad}[ {p}%]",
    "-rw-r--r-- 1 root root {n:>6} Jan {d:>2} 10:{n2:02d} {w}_{n}.py",
    "drwxr-xr-x 2 root root   4096 Jan {d:>2} 09:{n2:02d} {w}",
    "  Downloading {w}-{n}.{d}.0-py3-none-any.whl ({n} kB)",
    "Collecting {w}>={d}.{n2}",
    '  File "/app/src/{w}/core.py", line {n}, in {w}_{n2}',
    "    return self._{w}(value, strict=True)",
    "AssertionError: assert {n} == {n2}",
    "+    if {w} is None:",
    "-    return {w}_{n}",
    "@@ -{n},7 +{n},9 @@ def {w}():",
    "root@sandbox:/app# python -m pytest -q tests/test_{w}.py",
    "{w}.c:{n}:{n2}: warning: unused variable '{w}' [-Wunused-variable]",
    "make[1]: Entering directory '/app/build/{w}'",
]
WORDS = ("parser", "cache", "server", "config", "loader", "tokenizer", "matrix", "graph",
         "queue", "worker", "schema", "merge")  # fmt: skip


def _output(rng: random.Random, lines: int) -> str:
    out = []
    for _ in range(lines):
        out.append(
            rng.choice(LINES).format(
                w=rng.choice(WORDS),
                n=rng.randint(1, 999),
                n2=rng.randint(0, 59),
                d=rng.randint(1, 28),
                p=rng.randint(1, 100),
                pad=" " * rng.randint(1, 30),
            )
        )
    return "New Terminal Output:\n" + "\n".join(out) + "\nroot@sandbox:/app# "


def _trial(folder: Path, rng: random.Random, turns: int) -> None:
    """A Terminus-2 trial in the all_messages form, as agents write them."""
    msgs = [{"role": "user", "content": "You are an AI assistant…\n\nTask Description:\n"
             "Fix the failing tests in /app.\n\nCurrent terminal state:\nroot@sandbox:/app# \n"}]  # fmt: skip
    for k in range(turns):
        reply = {
            "analysis": " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 80))),
            "plan": " ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 40))),
            "commands": [
                {"keystrokes": f"python -m pytest -q tests/test_{rng.choice(WORDS)}.py\n"}
            ],
            "task_complete": k == turns - 1,
        }
        msgs.append({"role": "assistant", "content": json.dumps(reply)})
        msgs.append({"role": "user", "content": _output(rng, rng.choice((5, 20, 60, 200)))})
    folder.mkdir(parents=True)
    result = {"trial_name": folder.name, "agent_result": {"metadata": {"all_messages": msgs}}}
    (folder / "result.json").write_text(json.dumps(result))


def storage(n: int = 48, turns: int = 30) -> tuple[dict[str, int], float]:
    from sitegen.present.transcripts import TranscriptMaker, encode
    from sitegen.read.transcripts import read_transcript
    from sitegen.redact import Redactor

    rng = random.Random(37)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i in range(n):
            _trial(root / f"t{i:02d}", rng, turns)
        shared: dict = {}
        maker = TranscriptMaker.__new__(TranscriptMaker)  # (record() needs nothing else)
        t = time.perf_counter()
        records = []
        for i in range(n):
            tr = read_transcript(root / f"t{i:02d}", root, Redactor())
            records.append(maker.record(f"t{i:02d}", tr, shared))
            encode(f"t{i:02d}", records[-1])
        per = (time.perf_counter() - t) / n
    js = [json.dumps(r, ensure_ascii=False).encode() for r in records]
    gz = [gzip.compress(j, 9, mtime=0) for j in js]
    out = {
        "JSON in a script": sum(len(j) + 30 for j in js),
        "JSON, gzip (.json.gz, HTTP only)": sum(map(len, gz)),
        "base64 of gzip in a script (the site's)": sum(
            len(encode(f"t{i:02d}", r)) for i, r in enumerate(records)
        ),
        "one bundle of 48, base64 of gzip": len(
            base64.b64encode(gzip.compress(b"[" + b",".join(js) + b"]", 9, mtime=0))
        ),
    }
    return out, per


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("archive", type=Path)
    ap.add_argument("--pairs", type=int, default=5)
    args = ap.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sizes, per = storage()
    print("| form | bytes for 48 transcripts |\n|---|---:|")
    for k, v in sizes.items():
        print(f"| {k} | {v:,} |")
    print(f"\nread, redact and encode one (30 turns): {per * 1000:.1f} ms\n")
    with tempfile.TemporaryDirectory() as tmp:
        off, on = [], []
        for _ in range(args.pairs):
            off.append(cold(args.archive, Path(tmp) / "off", "--transcripts", "0"))
            on.append(cold(args.archive, Path(tmp) / "on"))
        site = Path(tmp) / "on"
        bulk = [p for p in site.rglob("*") if p.is_file() and "transcripts" in p.parts]
        data = [p for p in bulk if p.name == "transcript.js"]
        owners = {p.parts[len(site.parts) : len(site.parts) + 2] for p in data}
        for i, what in ((0, "wall"), (1, "CPU")):
            a = statistics.median(x[i] for x in off)
            b = statistics.median(x[i] for x in on)
            print(f"cold build, {args.pairs} pairs, {what}: without {a:.2f} s, with {b:.2f} s: "
                  f"{100 * (b / a - 1):+.1f} %")  # fmt: skip
        print(f"{len(data)} transcripts of {len(owners)} pages: "
              f"{sum(p.stat().st_size for p in bulk):,} bytes in all "
              f"({sum(p.stat().st_size for p in data):,} of data)")  # fmt: skip


if __name__ == "__main__":
    main()
