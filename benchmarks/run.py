"""Archive-scale benchmarks for sitegen (a script, not a test).

For each size it synthesizes an archive with ``sitegen synth`` (kept in
``bench-out/`` between runs), then measures, side by side:

* the raw read floor: ``cat`` of every input file to /dev/null, page cache warm;
* a cold build (``--clean``), a no-change rebuild, and a rebuild after one job's
  log grew by one step;
* peak RSS (the whole process tree, sampled every 20 ms) of the cold build;
* the site's size and the weight of the heaviest job page without the shared JavaScript.

Usage: ``python benchmarks/run.py [--sizes small,medium,large] [--out bench-out] [--write docs/benchmarks.md]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent

# name: synth options. "large" is the issue's ≥ 1 GB archive: ~200 MB of noisy logs, ≥ 10 000 result.json of ~60 KB.
SIZES = {
    "small": {"jobs": 7, "steps": 20, "trials_per_step": 10, "trial_kb": 8, "pad_mb": 5},
    "medium": {"jobs": 12, "steps": 40, "trials_per_step": 60, "trial_kb": 30, "pad_mb": 50},
    "large": {"jobs": 20, "steps": 100, "trials_per_step": 135, "trial_kb": 60, "pad_mb": 200},
}
TARGETS = {
    "cold_x_floor": 4.0,
    "nochange_s": 0.5,
    "onejob_share": 0.10,
    "rss_mb": 400,
    "page_kb": 500,
}


def sitegen(*args: str) -> list[str]:
    return [sys.executable, "-m", "sitegen", *args]


def run_measured(cmd: list[str]) -> tuple[float, float]:
    """Wall time and peak RSS (MB) of the whole process tree."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    ps = psutil.Process(proc.pid)
    while proc.poll() is None:
        try:
            rss = ps.memory_info().rss + sum(
                c.memory_info().rss for c in ps.children(recursive=True)
            )
            peak = max(peak, rss)
        except psutil.Error:
            pass
        time.sleep(0.02)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err}")
    return wall, peak / 2**20


def raw_floor(archive: Path) -> float:
    cmd = f"find '{archive}' -type f -print0 | xargs -0 cat > /dev/null"
    subprocess.run(cmd, shell=True, check=True)  # warm the page cache
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run(cmd, shell=True, check=True)
        best = min(best, time.perf_counter() - t)
    return best


def tree_size(path: Path) -> tuple[int, int]:
    files = [p for p in path.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def grow_one_job(archive: Path) -> None:
    log = archive / "flat/chain-b/train_600301.out"
    truth = json.loads((archive / "synth-truth.json").read_text())
    last = max(truth["jobs"]["flat/chain-b/train_600301.out"]["steps"]) + 1
    n = int(time.time())
    with open(log, "a") as fh:
        fh.write(
            f"(skyrl_entrypoint pid=4242) 2026-04-01 00:00:00.000 | INFO     | x:log:1 - Step {last + n % 1000}: \n"
            f"(skyrl_entrypoint pid=4242) {{'reward/avg_raw_reward': '0.5000', 'timing/step': '10.0000'}}\n"
        )


def bench(name: str, opts: dict, out: Path) -> dict:
    base = out / name
    archive = base / "archive"
    stamp = base / "synth.json"
    if not (stamp.exists() and json.loads(stamp.read_text()) == opts):
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        t = time.perf_counter()
        subprocess.run(
            sitegen(
                "synth",
                str(archive),
                "--jobs",
                str(opts["jobs"]),
                "--steps",
                str(opts["steps"]),
                "--trials-per-step",
                str(opts["trials_per_step"]),
                "--trial-kb",
                str(opts["trial_kb"]),
                "--pad-mb",
                str(opts["pad_mb"]),
            ),
            check=True,
            stdout=subprocess.DEVNULL,
        )
        print(f"[{name}] synth {time.perf_counter() - t:.1f}s", file=sys.stderr)
        stamp.write_text(json.dumps(opts))
    n_files, n_bytes = tree_size(archive)
    logs = sum(p.stat().st_size for p in archive.rglob("*") if p.suffix in (".out", ".log"))
    site = base / "site"
    floor = raw_floor(archive)
    cold, rss = run_measured(sitegen("build", str(archive), "-o", str(site), "--clean"))
    nochange, _ = run_measured(sitegen("build", str(archive), "-o", str(site)))
    grow_one_job(archive)
    onejob, _ = run_measured(sitegen("build", str(archive), "-o", str(site)))
    site_files, site_bytes = tree_size(site)
    pages = [p / "index.html" for p in (site / "jobs").iterdir()]
    heaviest = max(p.stat().st_size for p in pages)
    row = {
        "size": name,
        "archive_mb": n_bytes / 2**20,
        "files": n_files,
        "logs_mb": logs / 2**20,
        "floor_s": floor,
        "cold_s": cold,
        "nochange_s": nochange,
        "onejob_s": onejob,
        "rss_mb": rss,
        "site_mb": site_bytes / 2**20,
        "site_files": site_files,
        "page_kb": heaviest / 1024,
    }
    print(
        f"[{name}] {json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()})}",
        file=sys.stderr,
    )
    return row


def verdicts(r: dict) -> list[str]:
    out = []
    ratio = r["cold_s"] / r["floor_s"] if r["floor_s"] else float("inf")
    limit = TARGETS["cold_x_floor"]
    out.append(
        f"cold {ratio:.0f}× floor ({'ok' if ratio <= limit else f'missed by {ratio / limit:.0f}×'})"
    )
    out.append(
        f"no-change {r['nochange_s']:.2f} s ({'ok' if r['nochange_s'] <= TARGETS['nochange_s'] else 'missed'})"
    )
    share = r["onejob_s"] / r["cold_s"]
    out.append(
        f"one job {100 * share:.0f}% of cold ({'ok' if share <= TARGETS['onejob_share'] else 'missed'})"
    )
    out.append(
        f"RSS {r['rss_mb']:.0f} MB ({'ok' if r['rss_mb'] <= TARGETS['rss_mb'] else 'missed'})"
    )
    out.append(
        f"page {r['page_kb']:.0f} KB ({'ok' if r['page_kb'] <= TARGETS['page_kb'] else 'missed'})"
    )
    return out


def table(rows: list[dict]) -> str:
    head = (
        "| size | archive | files | logs | raw read floor | cold build | no-change | one job changed "
        "| peak RSS (tree) | site | heaviest job page |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    body = "".join(
        f"| {r['size']} | {r['archive_mb']:.0f} MB | {r['files']:,} | {r['logs_mb']:.0f} MB | {r['floor_s']:.2f} s "
        f"| {r['cold_s']:.2f} s | {r['nochange_s']:.2f} s | {r['onejob_s']:.2f} s | {r['rss_mb']:.0f} MB "
        f"| {r['site_mb']:.1f} MB | {r['page_kb']:.0f} KB |\n"
        for r in rows
    )
    checks = "".join(f"- **{r['size']}**: " + "; ".join(verdicts(r)) + "\n" for r in rows)
    return (
        head
        + body
        + "\nAgainst the targets (cold ≤ 4× floor, no-change ≤ 0.5 s, one job ≤ 10 % of cold, RSS ≤ 400 MB, page ≤ 500 KB):\n\n"
        + checks
    )


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} cores ({cpu}), {psutil.virtual_memory().total / 2**30:.0f} GiB RAM, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="small,medium,large")
    ap.add_argument("--out", type=Path, default=ROOT / "bench-out")
    ap.add_argument(
        "--write", type=Path, default=None, help="write the results table into this Markdown file"
    )
    args = ap.parse_args()
    rows = [bench(name, SIZES[name], args.out) for name in args.sizes.split(",")]
    text = table(rows)
    print(text)
    if args.write:
        doc = args.write.read_text() if args.write.exists() else ""
        start, end = "<!-- results -->", "<!-- /results -->"
        block = f"{start}\nMachine: {machine()}. Run on {time.strftime('%Y-%m-%d')}.\n\n{text}{end}"
        if start in doc and end in doc:
            doc = doc[: doc.index(start)] + block + doc[doc.index(end) + len(end) :]
        else:
            doc += "\n" + block + "\n"
        args.write.write_text(doc)


if __name__ == "__main__":
    main()
