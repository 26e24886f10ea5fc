"""What the test suite costs: `make test`'s command once, measured as docs/benchmarks.md's
"The test suite" says.

Usage: ``python benchmarks/suite.py [--cwd DIR] [--json OUT] [-- PYTEST ARGS]``; ``--cwd``
runs another checkout's tests (another commit's, for a before/after pair) with this venv.
Prints:

- the wall time of the run;
- the CPU time of every process of the run (pytest's workers, Chromium and Playwright's
  driver, Ray, git, builds' forks), read with psutil every 0.1 s and kept per process, so a
  process that lives less than 0.1 s is missed (a lower bound), and Chromium's share;
- the sum of every test's setup, call and teardown (``--durations=0``), and the longest
  test (its three phases summed): two workers cannot finish before it; the ten longest
  tests and the twelve longest modules;
- the wall time the run would take on 2 idle cores, at least: max(CPU / 2, longest test).

On a machine others share, the CPU time and the summed durations move less than the wall
time (a busy machine stretches every duration, and the CPU time a little: caches and
switches).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
DURATION = re.compile(r"^([\d.]+)s (setup|call|teardown) +(\S.*?)$", re.M)


def tmp_dir() -> str:
    """Where `make test` puts the tests' temporary folders: /dev/shm with 2 GiB free."""
    shm = Path("/dev/shm")
    if os.access(shm, os.W_OK) and psutil.disk_usage(str(shm)).free >= 2 * 2**30:
        return str(shm)
    return os.environ.get("TMPDIR", tempfile.gettempdir())


def run(cwd: Path, extra: list[str]) -> dict:
    argv = [sys.executable, "-m", "pytest", "-q", "-n", "auto", "--dist", "worksteal"]
    argv += ["--durations=0", "--durations-min=0", "-p", "no:cacheprovider", *extra]
    env = {**os.environ, "TMPDIR": tmp_dir(), "PYTHONDONTWRITEBYTECODE": ""}
    with tempfile.TemporaryFile("w+") as log:
        load = os.getloadavg()
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
        root = psutil.Process(proc.pid)
        cpu: dict[tuple[int, float], tuple[str, float]] = {}
        while proc.poll() is None:
            try:
                tree = [root, *root.children(recursive=True)]
            except psutil.Error:
                tree = []
            for p in tree:
                try:
                    with p.oneshot():
                        t = p.cpu_times()
                        cpu[(p.pid, p.create_time())] = (p.name(), t.user + t.system)
                except psutil.Error:
                    pass
            time.sleep(0.1)
        wall = time.perf_counter() - start
        log.seek(0)
        text = log.read()
    per_test: dict[str, float] = {}
    for m in DURATION.finditer(text):
        per_test[m.group(3)] = per_test.get(m.group(3), 0.0) + float(m.group(1))
    longest = max(per_test.items(), key=lambda kv: kv[1])
    per_module: dict[str, float] = {}
    for name, t in per_test.items():
        per_module[name.split("::")[0]] = per_module.get(name.split("::")[0], 0.0) + t
    total = sum(c for _, c in cpu.values())
    return {
        "wall_s": round(wall, 1),
        "cpu_s": round(total, 1),
        "chromium_cpu_s": round(sum(c for n, c in cpu.values() if "chrom" in n), 1),
        "durations_sum_s": round(sum(per_test.values()), 1),
        "longest_test": longest[0],
        "longest_test_s": round(longest[1], 1),
        "idle_wall_estimate_s": round(max(total / 2, longest[1]), 1),
        "modules": [
            [round(t, 1), name]
            for name, t in sorted(per_module.items(), key=lambda kv: -kv[1])[:12]
        ],
        "slowest": [
            [round(t, 1), name] for name, t in sorted(per_test.items(), key=lambda kv: -kv[1])[:10]
        ],
        "tests": len(per_test),  # (that took any time: --durations-min=0 lists every one)
        "load_average_before_after": [round(load[0], 1), round(os.getloadavg()[0], 1)],
        "exit": proc.returncode,
        "summary": text.strip().splitlines()[-1] if text.strip() else "",
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cwd", type=Path, default=ROOT, help="the checkout whose tests run")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("pytest_args", nargs="*", help="more arguments for pytest (after --)")
    args = ap.parse_args()
    figures = run(args.cwd, args.pytest_args)
    print(json.dumps(figures, indent=1))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    sys.exit(figures["exit"])


if __name__ == "__main__":
    main()
