"""Shared fixtures: one synthetic archive with its ground truth, and the site built from it."""

from __future__ import annotations

import fcntl
import functools
import json
import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

from sitegen.commands.build import build
from sitegen.options import BuildOptions
from sitegen.synth import TRUTH_FILE, synth
from tests.chromium import SharedChromium

# No per-example deadline: the suite runs on two shared cores, where one slow example is the
# machine's load, not the code's (speed is measured by benchmarks/, never by a timed test).
settings.register_profile("shared-cores", deadline=None)
settings.load_profile("shared-cores")

_chromium = SharedChromium()


@pytest.fixture
def browser():
    """The shared headless Chromium (tests/chromium.py): a test opens its pages in a context
    of its own. Tests that use it are marked ``browser``."""
    return _chromium.get()


@pytest.fixture
def browser_page(request: pytest.FixtureRequest):
    """A page of the shared Chromium at 1400 × 1000, in a context the browser tests share,
    the page handed back after the test for the next one, left as a new page is
    (tests/chromium.py: ``SharedChromium.page`` and ``release``). A test marked
    ``no_charts`` gets a page that draws no chart (tests/chromium.py: ``without_charts``):
    for tests whose checks do not read what Vega draws."""
    page = _chromium.page(charts=request.node.get_closest_marker("no_charts") is None)
    yield page
    _chromium.release(page)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("browser") is None:
        _chromium.close()


def pytest_sessionfinish(session: pytest.Session) -> None:
    _chromium.close()


# The modules whose tests take longest (``make slowest``), run first and in this order.
# Under ``--dist worksteal`` each worker starts on a contiguous half of the suite and an
# idle worker steals the tail of the other's: long tests at the head of the first half are
# started early and leave only short ones to steal, instead of one long test ending the
# run while the other worker idles. The browser modules stay together (one Chromium). A
# module's tests start on one worker, but the other may steal its tail: a fixture that
# must be made once a run is a session one made through ``made_once``.
LONG_FIRST = (
    "scenarios/test_a11y.py",
    "scenarios/test_browser.py",
    "scenarios/test_browser_insights.py",
    "scenarios/test_browser_transcripts.py",
    "scenarios/test_browser_axes.py",
    "scenarios/test_serve_browser.py",
    "scenarios/test_incremental.py",
    "scenarios/test_transcripts.py",
    "read/test_pool.py",
    "read/test_linear_time.py",
    "redact/test_redact.py",
    "read/test_glued_property.py",
    "commands/test_cli.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tests = Path(__file__).resolve().parent
    rank = {tests / name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.path, len(LONG_FIRST)))  # (a stable sort)


BASE_URL = "https://example.github.io/archive/"
JOB_SECTIONS = (
    "overview",
    "progression",
    "policy",
    "metrics",
    "timing",
    "vllm",
    "batches",
    "trials",
    "tasks",
    "rollouts",
    "config",
    "notes",
    "warnings",
)


def made_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], object]
) -> Path:
    """The folder ``name`` as ``make`` fills it, made once per run of the suite: the xdist
    workers share it (the first to ask makes it while the others wait on a lock), so a
    session fixture's archive or site is built once, not once per worker. What is made
    there is read, never changed: a test that changes it works on a copy."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        path = tmp_path_factory.mktemp(name)
        make(path)
        return path
    shared = tmp_path_factory.getbasetemp().parent / "made-once"  # this run's, every worker's
    shared.mkdir(exist_ok=True)
    path = shared / name
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = shared / f"{name}.done"
        if not done.exists():
            shutil.rmtree(path, ignore_errors=True)  # a worker that failed half way
            path.mkdir()
            make(path)
            done.touch()
    return path


def _make_archive(root: Path) -> None:
    synth(root, seed=3, steps=12, trials_per_step=5, real=True)


def _make_site(out: Path, archive: Path) -> None:
    report = build(
        BuildOptions(archive=archive, out=out, base_url=BASE_URL, workers=2, now=time.time())
    )
    assert report.jobs == len(json.loads((archive / TRUTH_FILE).read_text())["jobs"])


@pytest.fixture(scope="session")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return made_once(tmp_path_factory, "archive", _make_archive)


@pytest.fixture(scope="session")
def truth(archive: Path) -> dict:
    return json.loads((archive / TRUTH_FILE).read_text())


@pytest.fixture(scope="session")
def site(archive: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = made_once(tmp_path_factory, "out", lambda p: _make_site(p / "site", archive))
    return made / "site"


@pytest.fixture(scope="session")
def index(site: Path) -> dict:
    return json.loads((site / "data" / "index.json").read_text())


def load(site: Path, rel: str) -> dict:
    return json.loads((site / rel).read_text())


def page_specs(page: Path) -> dict[str, dict]:
    """The chart specs a page embeds (its ``chart-specs`` script), by chart name."""
    text = page.read_text(encoding="utf-8")
    start = text.index('<script type="application/json" id="chart-specs">')
    body = text[text.index(">", start) + 1 : text.index("</script>", start)]
    return json.loads(body)


def whole_axes(spec: object) -> list[tuple[str, dict]]:
    """Each ``(channel, axis)`` of a Vega-Lite spec, at any depth, whose axis formats whole
    numbers (``format: d``: steps, counts), channel ``"x"`` or ``"y"``."""
    found: list[tuple[str, dict]] = []
    if isinstance(spec, dict):
        for ch in ("x", "y"):
            enc = spec.get("encoding", {}).get(ch)
            axis = (enc.get("axis") or {}) if isinstance(enc, dict) else {}
            if axis.get("format") == "d":
                found.append((ch, axis))
        for v in spec.values():
            found += whole_axes(v)
    elif isinstance(spec, list):
        for v in spec:
            found += whole_axes(v)
    return found


SCHEMAS = Path(__file__).resolve().parents[1] / "docs" / "schemas"


@functools.cache
def schema(name: str):
    """A validator of ``docs/schemas/<name>.schema.json``, the schema itself checked first;
    made once (``jsonschema.validate`` checks and compiles the schema again at every call).
    Its ``validate(doc)`` raises on the first error."""
    jsonschema = pytest.importorskip("jsonschema")
    doc = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    cls = jsonschema.validators.validator_for(doc)
    cls.check_schema(doc)
    return cls(doc)


def _make_serial_and_sharded(root: Path) -> None:
    import dataclasses

    from sitegen.read import parse

    synth(root / "a", seed=5, steps=6, trials_per_step=3)
    serial = build(BuildOptions(archive=root / "a", out=root / "s1", workers=1, now=0.0))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(parse, "TRIAL_SHARD_MIN", 1)  # every trials folder in shards
        sharded = build(BuildOptions(archive=root / "a", out=root / "s2", workers=2, now=0.0))
    reports = {
        name: {"parse": dataclasses.asdict(r.parse), "warnings": [w.to_json() for w in r.warnings]}
        for name, r in (("serial", serial), ("sharded", sharded))
    }
    (root / "reports.json").write_text(json.dumps(reports))


@pytest.fixture(scope="session")
def serial_and_sharded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """(folder, reports) of one synth archive (``a``) built on one worker (``s1``) and in the
    local pool with every trials folder in shards (``s2``), each cache beside its site; the
    reports' parse counts and warnings by ``serial`` and ``sharded``. The pool's tests, the
    Ray executor's and the incremental tests' parallel build compare with these two."""
    root = made_once(tmp_path_factory, "serial-and-sharded", _make_serial_and_sharded)
    return root, json.loads((root / "reports.json").read_text())


@pytest.fixture(scope="session")
def job_pages(site: Path, index: dict):
    """The site's job pages as page objects, by id (read back from their data files)."""
    from sitegen.pages.objects import JobPage

    return {j["id"]: JobPage.from_json(load(site, j["data"])) for j in index["jobs"]}


@pytest.fixture(scope="session")
def run_pages(site: Path, index: dict):
    """The site's run pages as page objects, by id."""
    from sitegen.pages.objects import RunPage

    return {r["id"]: RunPage.from_json(load(site, r["data"])) for r in index["runs"]}


# -- as a user who cannot read what mode 0 forbids ---------------------------------------------


@pytest.fixture
def open_tmp():
    """A new folder any user may enter, removed after the test (pytest's ``tmp_path`` lies
    in a folder only its own user may enter, so ``nobody`` could not reach it)."""
    import os
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="sitegen-test-"))
    base.chmod(0o755)
    yield base
    for dirpath, dirnames, _ in os.walk(base):  # a folder left without x cannot be emptied
        for d in dirnames:
            os.chmod(os.path.join(dirpath, d), 0o755)
    shutil.rmtree(base, ignore_errors=True)


def unprivileged(code: str, *args: str, writable: Path | None = None) -> str:
    """What ``python -c code args`` prints, run by a user whom mode 0 keeps out: this
    process's user, or ``nobody`` (``setpriv``) when this is root, who reads any file (CI
    runs as root). ``writable``: a folder (made here) that user may write in."""
    import os
    import pwd
    import subprocess
    import sys

    cmd = [sys.executable, "-c", code, *args]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    if writable is not None:
        writable.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        if writable is not None:
            os.chown(writable, nobody.pw_uid, nobody.pw_gid)
        cmd = [
            *("setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}"),
            *("--clear-groups", *cmd),
        ]
        env["HOME"] = str(writable or "/nonexistent")
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


_UNIT_S = {"s": 1, "min": 60, "h": 3600}


def column_in_one_unit(html: str, table_id: str, header: str, seconds: list[float | None]) -> str:
    """The ``header`` column of table ``table_id`` names one unit ("rollout (min)") and each
    of its cells is a bare number in it, ``seconds`` read back to a rounding ("–": None).
    Returns the unit."""
    table = html[html.index(f'id="{table_id}"') :].split("</table>")[0]
    heads = re.findall(r"<th[^>]*>(.*?)</th>", table)
    (col,) = [i for i, h in enumerate(heads) if h.startswith(header + " (")]
    unit = re.fullmatch(rf"{header} \((s|min|h)\)", heads[col])
    assert unit is not None, heads[col]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table.split("</thead>")[1], re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)[col] for row in rows]
    assert len(cells) == len(seconds), table_id
    per = _UNIT_S[unit[1]]
    for cell, s in zip(cells, seconds, strict=True):
        if s is None:
            assert cell == "–", (table_id, cell)
            continue
        assert re.fullmatch(r"\d+\.\d+", cell), (table_id, cell)  # no "s" beside "min"
        assert float(cell) * per == pytest.approx(s, abs=0.05 * per)
    return unit[1]
