"""Archive-scale benchmarks for sitegen (a script, not a test).

For each size it synthesizes an archive with ``sitegen synth`` (kept in
``bench-out/`` between runs), then measures, for the code being benchmarked and,
side by side, for an older commit (``--baseline``, checked out with ``git archive``):

* the raw read floor: ``cat`` of every input file to /dev/null, page cache warm (best of 3);
* a cold build (``--clean``) and a cold publish build (``--clean --base-url``: cards,
  sitemap), medians of ``--repeat`` runs, each after a read of the archive and a ``sync``
  (see :func:`run_timed`);
* a no-change rebuild, a rebuild after one job's log grew by one step, and one after a
  running job moved on: its log grew by a step and its trials folder got two new trials
  (medians);
* peak RSS of the whole process tree (sampled every 20 ms) over one more cold and one more
  publish build, apart from the timed runs (the sampler's own CPU would slow them);
* the published site's weight: total, per job and per 10 k trials, the heaviest page, and
  that weight extrapolated to a team archive (500 jobs × 40 k trials each);
* "team": the pages that grow with the number of jobs (the index, the runs list, the
  comparison list), measured on a build of 500 tiny synthesized jobs rather than
  extrapolated (synth and build well under a minute).

Usage: ``python benchmarks/run.py [--sizes small,medium,large,team] [--baseline REF]
[--repeat 3] [--out bench-out] [--write docs/benchmarks.md]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent

# name: synth options. "large" is the ≥ 1 GB archive the budgets are measured on: ~200 MB of noisy logs, ≥ 10 000 result.json of ~60 KB.
SIZES = {
    "small": {"jobs": 7, "steps": 20, "trials_per_step": 10, "trial_kb": 8, "pad_mb": 5},
    "medium": {"jobs": 12, "steps": 40, "trials_per_step": 60, "trial_kb": 30, "pad_mb": 50},
    "large": {"jobs": 20, "steps": 100, "trials_per_step": 135, "trial_kb": 60, "pad_mb": 200},
}
# main before the site-weight, chart-skeleton and card work: the "old" column
BASELINE = "39194a9"
# The team archive the weight is extrapolated to: 500 jobs of 40 k trials, at 135 trials a
# step (the large archive's) ~300 steps each, whatever the size measured.
TEAM = {"jobs": 500, "trials": 500 * 40_000, "steps": 40_000 // 135}
PAGES_LIMIT = 10**9  # GitHub Pages
TARGETS = {
    "cold_x_floor": 3.0,
    "publish_x_floor": 4.0,
    "nochange_s": 0.3,
    "onejob_share": 0.10,
    "rss_mb": 400,
    "page_kb": 500,
    "team_gb": 1.0,
}
BASE_URL = "https://example.github.io/runs/"
LISTINGS = ("index.html", "runs/index.html", "compare/items.js")
# The "team" case: TEAM's 500 jobs, tiny (a few steps, a few trials), built for real so that
# the listings are weighed at team scale instead of extrapolated from a handful of jobs.
TEAM_LISTING = ["--jobs=500", "--steps=5", "--trials-per-step=2", "--trial-kb=1", "--pad-mb=0",
                "--no-real-shapes"]  # fmt: skip
# the files that grow with the number of jobs and runs: pages and the lists they load
TEAM_FILES = ("index.html", "index-rows.js", "runs/index.html", "compare/index.html",
              "compare/items.js", "data/index.json")  # fmt: skip


Command = tuple[list[str], dict[str, str], Path]


def sitegen(src: Path, *args: str) -> Command:
    """The command running the sitegen found in ``src`` (a checkout): its arguments,
    environment and folder (``python -m`` puts the working folder first on the path)."""
    env = dict(os.environ, PYTHONPATH=str(src))
    # As installed for a user, Python keeps its compiled modules (pip compiles them at install
    # time): a shell with PYTHONDONTWRITEBYTECODE would make every build recompile sitegen.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return [sys.executable, "-m", "sitegen", *args], env, src


def warm(archive: Path) -> None:
    """Read every input file once, so that the page cache holds the archive, as for the floor."""
    cmd = f"find {shlex.quote(str(archive))} -type f -print0 | xargs -0 cat > /dev/null"
    subprocess.run(cmd, shell=True, check=True)


def run_timed(cmd: Command, archive: Path | None = None) -> float:
    """Wall time of one run, nothing else in the way: ``wait`` returns the moment it exits.

    With ``archive`` (a build that reads all of it: cold, publish), the archive is read
    first (:func:`warm`): a kernel may page out what was not touched for a minute or so
    (this machine's does: DAMON's ``pageout``; the archive read again 90 s after a warm
    read took 2.4 s against 1.0 s), and a cold build after the rebuild cases, which
    read little, then paid for disk reads the floor never does. The disk is synced then:
    the kernel writes dirty pages back in the background, and the gigabyte a synth just
    wrote (or the site the last run wrote) would otherwise be written out while this run
    is timed, billed to it as a slower build (seen: a cold build right after the synth
    ~10 % slower than the publish build after it).
    """
    argv, env, cwd = cmd
    if archive is not None:
        warm(archive)
    os.sync()
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr.decode()}")
    return wall


def run_sampled(cmd: Command) -> float:
    """Peak RSS (MB) of the whole process tree, sampled every 20 ms.

    Kept apart from the timed runs: walking the process tree every 20 ms costs CPU
    the build would otherwise have (about 3 % of a cold build on 2 cores), and a
    sleeping poll loop sees an exit up to 20 ms late.
    """
    argv, env, cwd = cmd
    proc = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
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
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{err}")
    return peak / 2**20


def median_run(cmd: Command, repeat: int, archive: Path | None = None) -> tuple[float, float]:
    """Median wall time of ``repeat`` timed runs (each after reading ``archive``, when given:
    :func:`run_timed`), and the peak RSS of one more, sampled."""
    walls = [run_timed(cmd, archive) for _ in range(repeat)]
    return statistics.median(walls), run_sampled(cmd)


def raw_floor(archive: Path) -> float:
    cmd = f"find {shlex.quote(str(archive))} -type f -print0 | xargs -0 cat > /dev/null"
    warm(archive)
    os.sync()  # as before each timed build (run_timed)
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run(cmd, shell=True, check=True)
        best = min(best, time.perf_counter() - t)
    return best


def painted_cards(site: Path, label: str) -> None:
    """Stop unless the publish build painted a card for every job page.

    The baseline (39194a9) renders its cards with vl-convert and, without it, skips them
    without a word: its "publish build" would then cost what a cold build costs and weigh
    less than it does (seen once: a fresh venv without the ``bench`` extra).
    """
    pages = list(site.glob("jobs/*/index.html"))
    missing = [p.parent.name for p in pages if not (p.parent / "card.png").is_file()]
    if missing:
        raise SystemExit(
            f"{label}: the publish build painted no card for {len(missing)} of {len(pages)} job "
            f"pages (first: {missing[0]}); install the bench extra: pip install -e '.[bench]'"
        )


def tree_size(path: Path) -> tuple[int, int]:
    files = [p for p in path.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


APPENDS = 3  # the form of what the rebuild cases append, and take back (see bench)
_TRACKING_STEP = re.compile(
    rb"utils\.tracking:log:\d+(?:\x1b\[[0-9;]*m)? - (?:\x1b\[[0-9;]*m)?Step (\d+):"
)


def append_step(log: Path) -> int:
    """Append the job's next step to ``log`` as SkyRL writes it; return its number.

    The tracking logger's ``Step N:`` header and metrics dict, numbered one past the last
    step the log holds, and the ``WANDB_MIRROR`` line after them when the log has those
    (a log in that form counts a step by its mirror line: docs/formats.md §3). The step is one
    the rebuild must read and show, as a running job's next step is.
    """
    data = log.read_bytes()
    step = max((int(m) for m in _TRACKING_STEP.findall(data)), default=0) + 1
    prefix = "(skyrl_entrypoint pid=4242) 2026-04-01 00:00:00.000 | INFO     | skyrl_train.utils.tracking"
    metrics = {"reward/avg_raw_reward": 0.5, "timing/step": 10.0, "trainer/global_step": step}
    lines = [
        f"{prefix}:log:208 - Step {step}: ",
        "(skyrl_entrypoint pid=4242) " + repr(metrics),
    ]
    if b"WANDB_MIRROR kind=train" in data:
        lines.append(
            f"{prefix}:log:230 - WANDB_MIRROR kind=train step={step} metrics={json.dumps(metrics)}"
        )
    with open(log, "a") as fh:
        fh.write("\n".join(lines) + "\n")
    return step


def grow_one_job(archive: Path) -> None:
    """A job's log grows by one step (the chain's second job)."""
    append_step(archive / "flat/chain-b/train_600301.out")


def grow_running_job(archive: Path) -> None:
    """A running job moves on: its log gets a step and its trials folder two new trials.

    The async experiment's last job, whose trials folder (shared by the experiment's
    resume chain, as SkyRL writes it) holds ~13.5 k trials in the large archive. Copies of
    an existing trial under new names: what Harbor adds while a job runs.
    """
    exp = archive / "exp-async"
    append_step(max((exp / "logs").glob("*.out")))
    n = time.time_ns()
    trials = exp / "async-run" / "trace_jobs"
    model = next(d for d in sorted(trials.iterdir()) if (d / "result.json").is_file())
    result = json.loads((model / "result.json").read_text())
    task = result["task_name"]
    for k in range(2):
        name = f"{task}__bench{n % 10**9:09d}{k}"
        result.update(trial_name=name, id=f"{n + k:x}"[-16:])
        (trials / name).mkdir()
        (trials / name / "result.json").write_text(json.dumps(result))


GROWN_LOGS = ("flat/chain-b/train_600301.out", "exp-async/logs")
BENCH_TRIALS = "exp-async/async-run/trace_jobs"


def grown_files(archive: Path) -> dict[Path, int]:
    """The logs the rebuild cases append to, with their sizes now."""
    logs = [archive / GROWN_LOGS[0], *sorted((archive / GROWN_LOGS[1]).glob("*.out"))]
    return {p: p.stat().st_size for p in logs if p.is_file()}


def restore(archive: Path, sizes: dict[Path, int]) -> None:
    """Take back what the rebuild cases added: the logs cut to ``sizes``, the trials they
    copied removed. Every run then measures the same archive (appended steps would pile up
    from run to run, and a one-job rebuild analyse a longer and longer run)."""
    for log, size in sizes.items():
        os.truncate(log, size)
    trials = archive / BENCH_TRIALS
    for d in trials.glob("*__bench*") if trials.is_dir() else ():
        shutil.rmtree(d)


def checkout(ref: str, out: Path) -> Path:
    """The package at ``ref`` (``git archive``), kept between runs; ``.`` is this tree."""
    if ref == ".":
        return ROOT
    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", ref],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    dest = out / f"src-{sha}"
    if not (dest / "sitegen").is_dir():
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        tar = subprocess.run(
            ["git", "-C", str(ROOT), "archive", sha], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return dest


def _per_step(rel: str) -> bool:
    """Files that grow with a job's steps: the full series (data JSON, steps.csv, report.md).
    Pages do not: their charts are downsampled to at most 400 points."""
    name = rel.rsplit("/", 1)[-1]
    return (rel.startswith("data/") and rel.count("/") == 2) or name in ("steps.csv", "report.md")


def weight(site: Path) -> dict:
    """The published site's bytes: fixed (static/), per job (pages, cards), per step (full
    series), per 10 k trials (trial tables), the heaviest page, and the total extrapolated to
    :data:`TEAM`."""
    index = json.loads((site / "data" / "index.json").read_text())
    jobs, trials = index["totals"]["jobs"], index["totals"]["trials"]
    steps = sum(j["metric_blocks"] for j in index["jobs"])
    sizes = {
        p.relative_to(site).as_posix(): p.stat().st_size for p in site.rglob("*") if p.is_file()
    }
    total = sum(sizes.values())
    fixed = sum(n for r, n in sizes.items() if r.startswith("static/"))
    trial_tables = sum(n for r, n in sizes.items() if r.rsplit("/", 1)[-1].startswith("trials.csv"))
    series = sum(n for r, n in sizes.items() if _per_step(r))
    per_step = series / steps
    per_job = (total - fixed - trial_tables - series) / jobs
    per_10k = trial_tables / trials * 10_000 if trials else 0.0
    team_steps = TEAM["steps"]
    pages = {r: n for r, n in sizes.items() if r.endswith(".html")}
    heaviest = max(pages, key=lambda r: pages[r])
    # the pages (and the comparison page's list) that grow with every job, at TEAM's size
    listings = {r: sizes.get(r, 0) * TEAM["jobs"] / jobs for r in LISTINGS}
    listing = max(listings, key=lambda r: listings[r])
    team = (
        fixed + TEAM["jobs"] * (per_job + team_steps * per_step) + TEAM["trials"] / 10_000 * per_10k
    )
    return {
        "jobs": jobs,
        "trials": trials,
        "site_mb": total / 1e6,
        "fixed_mb": fixed / 1e6,
        "per_job_kb": per_job / 1e3,
        "per_step_kb": per_step / 1e3,
        "team_steps": team_steps,
        "per_10k_trials_kb": per_10k / 1e3,
        "page_kb": pages[heaviest] / 1e3,
        "page": heaviest,
        "listing_team_kb": listings[listing] / 1e3,
        "listing": listing,
        "team_gb": team / 1e9,
    }


def bench(name: str, opts: dict, out: Path, codes: dict[str, Path], repeat: int) -> list[dict]:
    base = out / name
    archive = base / "archive"
    stamp = base / "synth.json"
    # The archive is kept between runs, each run appending steps and trials to it (the
    # rebuild cases); APPENDS names the form of those, so an archive grown otherwise (before
    # append_step: steps SkyRL would not write) is made anew.
    made = {**opts, "appends": APPENDS}
    if not (stamp.exists() and json.loads(stamp.read_text()) == made):
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        t = time.perf_counter()
        args = [f"--{k.replace('_', '-')}={v}" for k, v in opts.items()]
        cmd, env, cwd = sitegen(ROOT, "synth", str(archive), *args)
        subprocess.run(cmd, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
        print(f"[{name}] synth {time.perf_counter() - t:.1f}s", file=sys.stderr)
        stamp.write_text(json.dumps(made))
    n_files, n_bytes = tree_size(archive)
    logs = sum(p.stat().st_size for p in archive.rglob("*") if p.suffix in (".out", ".log"))
    floor = raw_floor(archive)
    rows = []
    for label, src in codes.items():
        site, pub = base / f"site-{label}", base / f"pub-{label}"
        cold, rss = median_run(
            sitegen(src, "build", str(archive), "-o", str(site), "--clean"), repeat, archive
        )
        publish, rss_pub = median_run(
            sitegen(src, "build", str(archive), "-o", str(pub), "--clean", "--base-url", BASE_URL),
            repeat,
            archive,
        )
        painted_cards(pub, label)
        nochange, _ = median_run(sitegen(src, "build", str(archive), "-o", str(site)), repeat)
        sizes = grown_files(archive)
        onejobs = []
        for _ in range(repeat):
            grow_one_job(archive)
            onejobs.append(run_timed(sitegen(src, "build", str(archive), "-o", str(site))))
        running = []
        if (archive / "exp-async" / "async-run" / "trace_jobs").is_dir():
            for _ in range(repeat):
                grow_running_job(archive)
                running.append(run_timed(sitegen(src, "build", str(archive), "-o", str(site))))
        restore(archive, sizes)
        row = {
            "size": name,
            "code": label,
            "archive_mb": n_bytes / 2**20,
            "files": n_files,
            "logs_mb": logs / 2**20,
            "floor_s": floor,
            "cold_s": cold,
            "publish_s": publish,
            "nochange_s": nochange,
            "onejob_s": statistics.median(onejobs),
            "running_s": statistics.median(running) if running else None,
            "rss_mb": max(rss, rss_pub),
            **weight(pub),
        }
        print(
            f"[{name}/{label}] {json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()})}",
            file=sys.stderr,
        )
        rows.append(row)
    return rows


def team_listing(out: Path, codes: dict[str, Path]) -> list[dict]:
    """The "team" case: synthesize :data:`TEAM`'s number of tiny jobs once, build them with
    each code, and weigh the heaviest page and every file of :data:`TEAM_FILES` (``None``
    where a code does not write it). ``data/index.json`` is a download, not something a
    page loads: reported, not held to the page budget."""
    base = out / "team"
    archive = base / "archive"
    stamp = base / "synth.json"
    if not (stamp.exists() and json.loads(stamp.read_text()) == TEAM_LISTING):
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        t = time.perf_counter()
        cmd, env, cwd = sitegen(ROOT, "synth", str(archive), *TEAM_LISTING)
        subprocess.run(cmd, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
        print(f"[team] synth {time.perf_counter() - t:.1f}s", file=sys.stderr)
        stamp.write_text(json.dumps(TEAM_LISTING))
    rows = []
    for label, src in codes.items():
        site = base / f"site-{label}"
        t = time.perf_counter()
        cmd, env, cwd = sitegen(src, "build", str(archive), "-o", str(site), "--clean")
        subprocess.run(cmd, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)  # fmt: skip
        build_s = time.perf_counter() - t
        index = json.loads((site / "data" / "index.json").read_text())
        pages = {p.relative_to(site).as_posix(): p.stat().st_size for p in site.rglob("*.html")}
        heaviest = max(pages, key=lambda r: pages[r])
        files = {r: (site / r).stat().st_size if (site / r).exists() else None for r in TEAM_FILES}
        loaded = {r: n for r, n in files.items() if n is not None and r != "data/index.json"}
        worst = max(loaded, key=lambda r: loaded[r])
        row = {
            "code": label,
            "jobs": index["totals"]["jobs"],
            "runs": index["totals"]["runs"],
            "build_s": build_s,
            "page": heaviest,
            "page_kb": pages[heaviest] / 1e3,
            "files_kb": {r: None if n is None else n / 1e3 for r, n in files.items()},
            "listing": worst,
            "listing_kb": loaded[worst] / 1e3,
        }
        print(f"[team/{label}] {json.dumps(row)}", file=sys.stderr)
        rows.append(row)
    return rows


def team_table(rows: list[dict]) -> str:
    """The team case's table: each listing file's size at 500 jobs, measured."""
    head = (
        "| code | jobs / runs | build | heaviest page | "
        + " | ".join(f"`{r}`" for r in TEAM_FILES)
        + " |\n|---|---:|---:|---:|"
        + "---:|" * len(TEAM_FILES)
        + "\n"
    )
    body = "".join(
        f"| {r['code']} | {r['jobs']} / {r['runs']} | {r['build_s']:.1f} s "
        f"| `{r['page']}` {r['page_kb']:.0f} KB | "
        + " | ".join("–" if v is None else f"{v:.0f} KB" for v in r["files_kb"].values())
        + " |\n"
        for r in rows
    )
    checks = "".join(
        f"- **team, {r['code']}**: heaviest page {r['page_kb']:.0f} KB "
        f"({'ok' if r['page_kb'] <= TARGETS['page_kb'] else 'missed'}); heaviest listing "
        f"`{r['listing']}` {r['listing_kb']:.0f} KB "
        f"({'ok' if r['listing_kb'] <= TARGETS['page_kb'] else 'missed'})\n"
        for r in rows
    )
    return (
        f"\nListings measured at team scale ({TEAM['jobs']} synthesized jobs of a few steps, "
        "`sitegen synth " + " ".join(TEAM_LISTING) + "`; a page or list a page loads must stay "
        "≤ 500 KB; `data/index.json` is a download):\n\n" + head + body + "\n" + checks
    )


def verdicts(r: dict, team: dict | None = None) -> list[str]:
    def ok(good: bool) -> str:
        return "ok" if good else "missed"

    cold_x = r["cold_s"] / r["floor_s"] if r["floor_s"] else float("inf")
    pub_x = r["publish_s"] / r["floor_s"] if r["floor_s"] else float("inf")
    share = r["onejob_s"] / r["cold_s"]
    return [
        f"cold {cold_x:.1f}× floor ({ok(cold_x <= TARGETS['cold_x_floor'])})",
        f"publish {pub_x:.1f}× floor ({ok(pub_x <= TARGETS['publish_x_floor'])})",
        f"no-change {r['nochange_s']:.2f} s ({ok(r['nochange_s'] <= TARGETS['nochange_s'])})",
        f"one job {100 * share:.1f} % of cold ({ok(share <= TARGETS['onejob_share'])})",
        *(
            [
                f"one job with new trials {100 * r['running_s'] / r['cold_s']:.1f} % of cold "
                f"({ok(r['running_s'] / r['cold_s'] <= TARGETS['onejob_share'])})"
            ]
            if r.get("running_s")
            else []
        ),
        f"RSS {r['rss_mb']:.0f} MB ({ok(r['rss_mb'] <= TARGETS['rss_mb'])})",
        f"heaviest page {r['page_kb']:.0f} KB ({ok(r['page_kb'] <= TARGETS['page_kb'])})",
        # measured by the team case when it ran; else extrapolated in proportion to the jobs,
        # which overstates a page whose size is not all rows: no verdict on that
        f"{team['listing']} at {TEAM['jobs']} jobs (measured) {team['listing_kb']:.0f} KB "
        f"({ok(team['listing_kb'] <= TARGETS['page_kb'])})"
        if team
        else f"{r['listing']} at {TEAM['jobs']} jobs ≈ {r['listing_team_kb']:.0f} KB "
        "(extrapolated, at most: `--sizes team` measures it)",
        f"team site {r['team_gb']:.2f} GB ({ok(r['team_gb'] <= TARGETS['team_gb'])})",
    ]


def table(rows: list[dict], team: list[dict] | None = None) -> str:
    head = (
        "| size | code | archive | raw read floor | cold build | publish build | no-change | one job changed "
        "| one job, new trials | peak RSS (tree) | site (published) | per job + per step | per 10 k trials | heaviest page | 500 jobs × 40 k trials |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    body = "".join(
        f"| {r['size']} | {r['code']} | {r['archive_mb']:.0f} MB, {r['files']:,} files | {r['floor_s']:.2f} s "
        f"| {r['cold_s']:.2f} s | {r['publish_s']:.2f} s | {r['nochange_s']:.2f} s | {r['onejob_s']:.2f} s "
        f"| {'–' if r.get('running_s') is None else format(r['running_s'], '.2f') + ' s'} "
        f"| {r['rss_mb']:.0f} MB | {r['site_mb']:.1f} MB | {r['per_job_kb']:.0f} KB + {r['per_step_kb']:.1f} KB "
        f"| {r['per_10k_trials_kb']:.0f} KB | {r['page_kb']:.0f} KB | {r['team_gb']:.2f} GB |\n"
        for r in rows
    )
    measured = {t["code"]: t for t in team or []}
    checks = "".join(
        f"- **{r['size']}, {r['code']}**: " + "; ".join(verdicts(r, measured.get(r["code"]))) + "\n"
        for r in rows
    )
    return (
        head
        + body
        + "\nAgainst the targets (cold ≤ 3× floor, publish ≤ 4× floor, no-change ≤ 0.3 s, one job ≤ 10 % "
        "of cold, RSS ≤ 400 MB, every page ≤ 500 KB, team site ≤ 1 GB):\n\n" + checks
    )


def breakdown(out: Path, row: dict, top: int = 10) -> str:
    """Where the last row's published bytes go, by kind of file (sitegen.write.weight)."""
    sys.path.insert(0, str(ROOT))
    from sitegen.write.weight import by_kind

    site = out / row["size"] / f"pub-{row['code']}"
    sizes = {
        p.relative_to(site).as_posix(): p.stat().st_size for p in site.rglob("*") if p.is_file()
    }
    lines = "".join(
        f"| `{kind}` | {files:,} | {b / 1e6:.2f} MB | {100 * b / row['site_mb'] / 1e6:.0f} % |\n"
        for kind, b, files in by_kind(sizes)[:top]
    )
    return (
        f"\nWhere the published bytes of **{row['size']}, {row['code']}** go "
        f"({row['site_mb']:.1f} MB):\n\n| kind of file | files | bytes | share |\n|---|---:|---:|---:|\n"
        + lines
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
    load = os.getloadavg()[0]
    return (
        f"{os.cpu_count()} cores ({cpu}), {psutil.virtual_memory().total / 2**30:.0f} GiB RAM, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}; "
        f"load average {load:.1f} when the run started"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--sizes", default="small,medium,large,team", help="of " + ",".join([*SIZES, "team"])
    )
    ap.add_argument("--out", type=Path, default=ROOT / "bench-out")
    ap.add_argument(
        "--baseline",
        default=BASELINE,
        help="git ref measured side by side as 'old' ('' to skip); default: main before the site-weight work",
    )
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    ap.add_argument(
        "--write", type=Path, default=None, help="write the results table into this Markdown file"
    )
    args = ap.parse_args()
    where = machine()
    codes = {"new": ROOT}
    if args.baseline:
        codes = {"old": checkout(args.baseline, args.out), **codes}
    names = args.sizes.split(",")
    team = team_listing(args.out, codes) if "team" in names else []
    rows = [
        r
        for name in names
        if name != "team"
        for r in bench(name, SIZES[name], args.out, codes, args.repeat)
    ]
    text = (table(rows, team) + breakdown(args.out, rows[-1]) if rows else "") + (
        team_table(team) if team else ""
    )
    print(text)
    (args.out / "results.json").write_text(json.dumps(rows, indent=1))
    (args.out / "team-results.json").write_text(json.dumps(team, indent=1))
    if args.write:
        doc = args.write.read_text() if args.write.exists() else ""
        start, end = "<!-- results -->", "<!-- /results -->"
        old = f"old = `{args.baseline}`, " if args.baseline else ""
        block = (
            f"{start}\nMachine: {where}. Run on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
            f"{old}new = this commit; medians of {args.repeat}.\n\n{text}{end}"
        )
        if start in doc and end in doc:
            doc = doc[: doc.index(start)] + block + doc[doc.index(end) + len(end) :]
        else:
            doc += "\n" + block + "\n"
        args.write.write_text(doc)


if __name__ == "__main__":
    main()
