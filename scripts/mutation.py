"""The mutation score of the modules that compute published numbers or decide what is redacted.

mutmut (3.x) changes one thing at a time in a module (``<`` for ``<=``, ``+ 1`` for ``- 1``, a
string, a default, a ``break``…) and runs the tests chosen for that module below; a change
no test notices survives. A survivor is a gap in the tests or a change that alters nothing
a reader could see (an equivalent mutant): each one left is named (``x_function__mutmut_N``)
under its module's heading in docs/testing.md with the reason it is equivalent, and this
script fails on a survivor that is not.

Each module runs in a folder of its own under ``.mutation/`` with its own tests, niced
(the runs are long; never part of ``make test``). mutmut keeps its results there: a second
run tests only the functions that changed (a change to a module's tests below makes it
forget them and start again).

    python scripts/mutation.py [--write] [--jobs N] [module ...]

``--write`` puts the table of scores into docs/testing.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutation"
DOC = ROOT / "docs" / "testing.md"
AIM = 0.85  # of each module's mutants killed

_ANALYSE = (
    "tests/analyse/test_analyse.py",
    "tests/analyse/test_columns.py",
    "tests/analyse/test_figures.py",
    "tests/analyse/test_timing.py",
)
_FINDINGS = (
    "tests/insights/test_findings.py",
    "tests/insights/test_finding_texts.py",
    "tests/insights/test_windows.py",
)
_REDACT = (
    "tests/redact/test_redact.py",
    "tests/redact/test_redact_rules.py",
    "tests/redact/test_redact_values.py",
    "tests/redact/test_redactor_edges.py",
    "tests/redact/test_redact_mutants.py",
    "-k",
    "not linear",  # (the linear-time test times subprocesses: minutes a mutant, no new kill)
)
_REDACT_EDGES = (
    "tests/redact/test_redactor_edges.py",
    "tests/redact/test_redact_rules.py",
    "tests/redact/test_redact.py::test_the_prefilter_skips_no_text_a_rule_finds_something_in",
    "tests/redact/test_redact_mutants.py",
)
_STATS = (
    "tests/analyse/test_stats.py",
    "tests/insights/test_paired.py",
    "tests/insights/test_learning.py",
)
_READ_MUTANTS = "tests/read/test_read_mutants.py"
# module -> the tests that run against its mutants (pytest arguments)
MODULES: dict[str, tuple[str, ...]] = {
    "sitegen/read/metricblocks.py": (
        "tests/read/test_logparse.py",
        "tests/read/test_printed_values.py",
        "tests/read/test_fastpath_dicts.py",
        "tests/read/test_glued_records.py",
        "tests/read/test_real_shapes.py",
        "tests/read/test_insight_fields.py",
        "tests/read/test_fastpaths.py::test_flat_dict_is_literal_eval_or_declines",
        "tests/read/test_fastpaths.py::test_flat_dict_reads_pformat_dicts_as_literal_eval_does",
        "tests/read/test_fastpaths.py::test_flat_dict_repeated_keys_tabs_and_bare_nan",
        "tests/read/test_fastpaths.py::test_headers_glued_after_the_drivers_bars_read_alike_in_blocks",
        "tests/read/test_fastpaths.py::test_unclean_blocks_read_as_line_by_line",
        "tests/read/test_fastpaths.py::test_bad_lines_in_a_block_warn_at_their_lines_and_the_rest_is_read",
        _READ_MUTANTS,
        "-k",
        "not config_dumps_that_expand",  # (config dumps: the slowest, no metric dict)
    ),
    "sitegen/read/vllm.py": (
        "tests/read/test_vllm.py",
        "tests/read/test_logparse.py::test_vllm_line_shapes",
        "tests/read/test_logparse.py::test_vllm_preemptions_are_summed_over_the_logging_intervals",
        "tests/read/test_fastpaths.py::test_vllm_stats_line_is_feed_of_split_line_or_declines",
        "tests/read/test_fastpaths.py::test_vllm_stats_line_takes_the_standard_line",
        "tests/read/test_real_shapes.py",
        "tests/read/test_producer_shapes.py",
        _READ_MUTANTS,
    ),
    "sitegen/read/harbor.py": (
        "tests/read/test_harbor.py",
        # (the decoding tests of test_trials.py; the rest find, plan and untar trial folders)
        "tests/read/test_trials.py::test_fields_read",
        "tests/read/test_trials.py::test_variants",
        "tests/read/test_trials.py::test_the_reward_is_harbors_primary_reward",
        "tests/read/test_trials.py::test_malformed_raise_with_reason",
        "tests/read/test_trials.py::test_non_finite_and_huge_counts_are_absent_not_a_traceback",
        "tests/read/test_trials.py::test_harbor_files_as_harbor_writes_them",
        "tests/read/test_trials.py::test_harbor_policy_in_the_file_wins_over_the_name_table",
        "tests/read/test_trials.py::test_model_usage_gives_tokens_when_the_totals_are_absent",
        "tests/read/test_trials.py::test_problems_read_around_are_noted_with_their_line",
        "tests/read/test_insight_fields.py::test_stage_durations_start_and_cache_tokens",
        "tests/read/test_insight_fields.py::test_damaged_stage_times_are_unknown_not_errors",
        _READ_MUTANTS,
    ),
    "sitegen/read/statuslines.py": (
        "tests/read/test_job_status.py",
        "tests/read/test_logparse.py",
        "tests/read/test_real_shapes.py",
        "tests/read/test_producer_shapes.py",
        "tests/read/test_logfile.py::test_a_split_logs_trainer_end_beats_srun_s_in_the_other_stream",
        "tests/read/test_logfile.py::test_a_split_log_ends_as_its_err_read_alone",
        "tests/read/test_logfile.py::"
        "test_a_split_logs_plain_cancel_keeps_the_trainer_s_failure_in_the_other_stream",
        "tests/read/test_logfile.py::"
        "test_a_split_logs_training_done_beats_slurm_s_failure_in_the_other_stream",
        "tests/read/test_fastpaths.py::test_vllm_stats_line_is_feed_of_split_line_or_declines",
        "tests/read/test_fastpaths.py::test_vllm_stats_line_takes_the_standard_line",
        _READ_MUTANTS,
        "-k",
        "not config_dumps_that_expand",  # (config dumps: the slowest, no status)
    ),
    "sitegen/read/configdump.py": (
        "tests/read/test_configdump.py",
        "tests/read/test_logparse.py",
        "tests/read/test_real_shapes.py",
        _READ_MUTANTS,
    ),
    "sitegen/analyse/batches.py": _ANALYSE,
    "sitegen/analyse/curves.py": ("tests/analyse/test_curves.py", "tests/insights/test_windows.py"),
    "sitegen/analyse/steps.py": _ANALYSE,
    "sitegen/analyse/trials.py": _ANALYSE,
    "sitegen/analyse/vllm.py": (*_ANALYSE, "tests/read/test_vllm.py"),
    "sitegen/analyse/stats.py": _STATS,
    "sitegen/analyse/ar1.py": ("tests/analyse/test_ar1.py", "tests/insights/test_learning.py"),
    "sitegen/model/numbers.py": (
        "tests/model/test_numbers.py",
        "tests/present/test_formatting.py",
        "tests/present/test_formatting_bounds.py",
    ),
    "sitegen/insights/attribution.py": (
        "tests/insights/test_attribution.py",
        "tests/insights/test_tasks.py",
    ),
    "sitegen/insights/tasks.py": ("tests/insights/test_tasks.py", "tests/insights/test_windows.py"),
    "sitegen/insights/rollouts.py": ("tests/insights/test_rollouts.py",),
    "sitegen/insights/learning.py": (
        "tests/insights/test_learning.py",
        "tests/insights/test_windows.py",
    ),
    "sitegen/insights/paired.py": ("tests/insights/test_paired.py",),
    "sitegen/insights/intervalrules.py": ("tests/insights/test_intervalrules.py",),
    "sitegen/insights/metricrules.py": _FINDINGS,
    "sitegen/insights/findings.py": _FINDINGS,
    "sitegen/insights/rulebase.py": _FINDINGS,
    "sitegen/present/formatting.py": (
        "tests/present/test_formatting.py",
        "tests/present/test_formatting_bounds.py",
    ),
    "sitegen/redact/__init__.py": _REDACT,
    "sitegen/redact/redactor.py": _REDACT,
    "sitegen/redact/tally.py": _REDACT,
    "sitegen/redact/rule.py": _REDACT,
    "sitegen/redact/rules.py": _REDACT,
    "sitegen/redact/names.py": _REDACT,
    "sitegen/redact/values.py": _REDACT,
    "sitegen/redact/assign.py": _REDACT,
    "sitegen/redact/shapes.py": _REDACT,
    "sitegen/redact/shell.py": _REDACT,
    "sitegen/redact/prose.py": _REDACT,
    "sitegen/redact/tables.py": _REDACT,
    "sitegen/redact/transcript.py": _REDACT,
    "sitegen/redact/escapes.py": _REDACT,
    # (the commands' and the source rules' cases are in the edge tests and the rule tables)
    "sitegen/redact/programs.py": _REDACT_EDGES,
    "sitegen/redact/sourcecode.py": _REDACT_EDGES,
}


def _toml_list(items) -> str:
    return "[" + ", ".join(json.dumps(str(x)) for x in items) + "]"


# Functions a module runs when it is imported (the redaction rules are built then), or whose
# answers a cache keeps from the clean run of the tests (``is_secret_key``'s, over
# ``_is_secret_name``): mutmut forks each mutant's run from a process that ran them already,
# so no test could see it. Their survivors are tested again, each in a fresh interpreter
# with the mutant written into a copy of the module.
AT_IMPORT: dict[str, tuple[str, ...]] = {
    "sitegen/redact/rule.py": ("regex_rule",),
    "sitegen/redact/names.py": ("_words", "_is_secret_name"),
}


def work_folder(module: str) -> Path:
    return WORK / module.removesuffix(".py").replace("/", ".")


def prepare(module: str) -> Path:
    """The module's work folder: a copy of the package (mutants are written into it when
    they are tested apart), the rest of the tree linked in, mutmut's settings for it."""
    folder = work_folder(module)
    folder.mkdir(parents=True, exist_ok=True)
    package = folder / "sitegen"
    if package.is_symlink():
        package.unlink()
    shutil.rmtree(package, ignore_errors=True)
    shutil.copytree(
        ROOT / "sitegen", folder / "sitegen", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("tests", "templates", "static"):
        link = folder / name
        if not link.is_symlink():
            link.symlink_to(ROOT / name)
    settings = (ROOT / "pyproject.toml").read_text() + (
        "\n[tool.mutmut]\n"
        'source_paths = ["sitegen/"]\n'
        f"only_mutate = {_toml_list([module])}\n"
        f"pytest_add_cli_args_test_selection = {_toml_list(MODULES[module])}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "no:xdist"]\n'
        'also_copy = ["templates/", "static/"]\n'
        # a mutant that makes a test run away (a regex gone exponential) is caught when it
        # uses 8 times the tests' own time (mutmut's default, 30 times, spent most of a run
        # waiting on the redaction rules' few such mutants)
        "timeout_multiplier = 4.0\n"
    )
    target = folder / "pyproject.toml"
    if not target.exists() or target.read_text() != settings:
        target.write_text(settings)
    return folder


MUTMUT = [sys.executable, "-m", "mutmut"]


def run(module: str, jobs: int) -> dict:
    """Run mutmut on ``module``; its counts and its survivors."""
    folder = prepare(module)
    again = (folder / "mutants").is_dir()
    log = folder / "mutmut.log"
    with open(log, "w") as out:
        _mutmut_run(folder, module, jobs, [], out)
        if again and (left := _survivors(folder)):
            # (mutmut keeps a survivor's verdict: test each against today's tests)
            _mutmut_run(folder, module, jobs, left, out)
    subprocess.run([*MUTMUT, "export-cicd-stats"], cwd=folder, capture_output=True, check=True)
    stats = json.loads((folder / "mutants" / "mutmut-cicd-stats.json").read_text())
    survivors = _survivors(folder)
    fresh = killed_in_a_fresh_process(folder, module, survivors)
    (folder / "fresh-killed.txt").write_text("".join(f"{m}\n" for m in fresh))
    stats["killed"] += len(fresh)
    stats["survived"] -= len(fresh)
    stats["survivors"] = sorted(set(survivors) - set(fresh))
    return stats


def _mutmut_run(folder: Path, module: str, jobs: int, names: list[str], out) -> None:
    done = subprocess.run(
        ["nice", "-n", "19", *MUTMUT, "run", "--max-children", str(jobs), *names],
        cwd=folder,
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    if done.returncode != 0:
        raise RuntimeError(f"mutmut failed on {module}: see {out.name}")


def _survivors(folder: Path) -> list[str]:
    """The mutants no test killed (``mutmut results`` lists each mutant not killed)."""
    listed = subprocess.run(
        [*MUTMUT, "results"], cwd=folder, capture_output=True, text=True, check=True
    ).stdout
    return [
        m
        for m, state in re.findall(r"^\s*(\S+): (.+)$", listed, re.M)
        if state in ("survived", "no tests")
    ]


def killed_in_a_fresh_process(folder: Path, module: str, survivors: list[str]) -> list[str]:
    """The survivors in :data:`AT_IMPORT`'s functions that the tests catch when the mutant is
    in the module before it is imported."""
    marks = [f"x_{f}__mutmut_" for f in AT_IMPORT.get(module, ())]
    original = (folder / module).read_bytes()
    killed = []
    for name in survivors:
        if not any(m in name for m in marks):
            continue
        subprocess.run([*MUTMUT, "apply", name], cwd=folder, capture_output=True, check=True)
        try:
            done = subprocess.run(
                ["nice", "-n", "19", sys.executable, "-m", "pytest", "-x", "-q"]
                + ["-p", "no:cacheprovider", "-p", "no:xdist", *MODULES[module]],
                cwd=folder,
                capture_output=True,
            )
        finally:
            (folder / module).write_bytes(original)
        if done.returncode not in (0, 5):  # (5: no test collected)
            killed.append(name)
    return killed


def score(stats: dict) -> float:
    """The share of mutants the tests kill (a mutant that hangs them counts as killed)."""
    caught = stats["killed"] + stats["timeout"] + stats["segfault"]
    return caught / stats["total"] if stats["total"] else 1.0


def table(results: dict[str, dict]) -> str:
    lines = [
        "| module | mutants | killed | survived | no test | score |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for module, s in results.items():
        caught = s["killed"] + s["timeout"] + s["segfault"]
        lines.append(
            f"| `{module}` | {s['total']} | {caught} | {s['survived']} | {s['no_tests']} "
            f"| {score(s):.1%} |"
        )
    return "\n".join(lines)


def write_table(results: dict[str, dict]) -> None:
    """Replace the scores between the markers in docs/testing.md (the modules run now; the
    others keep their rows)."""
    text = DOC.read_text()
    begin, end = "<!-- mutation scores: begin -->", "<!-- mutation scores: end -->"
    i, j = text.index(begin) + len(begin), text.index(end)
    old = {
        m: row
        for row in text[i:j].splitlines()
        if (m := re.match(r"\| `([^`]+)`", row)) and (m := m.group(1)) in MODULES
    }
    rows = table(results).splitlines()
    new = {re.match(r"\| `([^`]+)`", r).group(1): r for r in rows[2:]}  # type: ignore[union-attr]
    merged = [new.get(m) or old.get(m) for m in MODULES if new.get(m) or old.get(m)]
    DOC.write_text(text[:i] + "\n" + "\n".join([*rows[:2], *merged]) + "\n" + text[j:])


def explained(text: str, module: str) -> str:
    """The part of docs/testing.md that explains ``module``'s survivors: from its heading
    (``#### `sitegen/…py` ``) to the next heading."""
    m = re.search(rf"^#### `{re.escape(module)}`.*?(?=^#|\Z)", text, re.M | re.S)
    return m.group(0) if m else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("modules", nargs="*", help="modules to run (default: all of them)")
    ap.add_argument("--jobs", type=int, default=1, help="mutants tested at once (default: 1)")
    ap.add_argument("--write", action="store_true", help="write the scores into docs/testing.md")
    ap.add_argument(
        "--fresh",
        action="store_true",
        help="forget the results kept from the last run (mutmut tests again only the functions"
        " that changed, not what changed tests would now catch)",
    )
    args = ap.parse_args()
    modules = args.modules or list(MODULES)
    unknown = [m for m in modules if m not in MODULES]
    if unknown:
        sys.exit(f"not a module of the mutation run: {', '.join(unknown)}")
    if shutil.which("nice") is None:
        sys.exit("nice not found")
    results, failed = {}, []
    for module in modules:
        print(f"mutating {module} …", flush=True)
        if args.fresh:
            shutil.rmtree(work_folder(module), ignore_errors=True)
        try:
            results[module] = s = run(module, args.jobs)
        except RuntimeError as exc:
            print(f"  {exc}", flush=True)
            failed.append(module)
            continue
        print(f"  {s['total']} mutants, {score(s):.1%} killed", flush=True)
    print(table(results))
    if args.write:
        write_table(results)
    text = DOC.read_text()
    unexplained = [
        f"{module}: {m}"
        for module, s in results.items()
        for m in s["survivors"]
        if f"`{m.rsplit('.', 1)[1]}`" not in explained(text, module)
    ]
    low = [m for m, s in results.items() if score(s) < AIM]
    for m in unexplained:
        print(f"survivor not explained in docs/testing.md: {m}")
    for m in low:
        print(f"below the aim of {AIM:.0%}: {m}")
    if unexplained or low or failed:
        sys.exit(1)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()
