import os

import pytest

from sitegen.discover.archive import discover, slug
from sitegen.errors import ArchiveError
from sitegen.write.site import MARKER


def touch(p, text="x"):
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def test_both_layouts_any_depth(tmp_path):
    touch(tmp_path / "deep/er/exp1/logs/run_2.out")
    touch(tmp_path / "deep/er/exp1/logs/run_10.out")
    (tmp_path / "deep/er/exp1/run/run/trace_jobs").mkdir(parents=True)
    touch(tmp_path / "flat1/job_5.log")
    (tmp_path / "flat1/trials").mkdir()
    touch(tmp_path / "flat1/infra-x.log")
    (tmp_path / "nothing/here").mkdir(parents=True)
    d = discover(tmp_path)
    exp = [j for j in d.jobs if j.layout == "experiment"]
    assert [j.log for j in exp] == [
        "deep/er/exp1/logs/run_2.out",
        "deep/er/exp1/logs/run_10.out",
    ]  # SLURM-id order
    assert d.trials_dirs["deep/er/exp1"] == ["deep/er/exp1/run/run/trace_jobs"]
    flat = [j for j in d.jobs if j.layout == "flat"]
    assert flat[0].infra_logs == ("flat1/infra-x.log",)
    assert d.trials_dirs["flat1"] == ["flat1/trials"]
    assert d.skipped == (("nothing/here", "no .out/.log files and no trials directory"),)


def test_ids_are_url_safe_and_stable(tmp_path):
    assert slug("exp/logs/a_1") == "exp.logs.a_1"
    weird = slug("we ird/<b>é")
    assert weird == slug("we ird/<b>é") and all(c.isalnum() or c in "._-" for c in weird)
    assert slug("a b") != slug("a-b")


def test_links_outside_and_loops_not_followed(tmp_path):
    outside = tmp_path / "outside"
    touch(outside / "secret.out")
    root = tmp_path / "root"
    touch(root / "job/a.out")
    os.symlink(outside / "secret.out", root / "job/b.out")
    os.symlink(root, root / "job/loop")
    d = discover(root)
    assert [j.log for j in d.jobs] == ["job/a.out"]
    assert any("outside" in w.message for w in d.warnings)


def test_missing_archive_is_an_error(tmp_path):
    with pytest.raises(ArchiveError, match="not found"):
        discover(tmp_path / "nope")


def test_output_inside_the_archive_and_hidden_folders(tmp_path):
    touch(tmp_path / "job" / "a.out")
    touch(tmp_path / "site" / "data" / "index.json")
    touch(tmp_path / ".git" / "HEAD")
    d = discover(tmp_path, exclude=(tmp_path / "site",))
    assert [j.log for j in d.jobs] == ["job/a.out"]
    assert d.skipped == ((".git", "hidden folder: not read"),)


# -- issue 10: nothing dropped silently, stable unique ids, secrets out of paths ----------------


def test_jobs_beside_and_below_an_experiment_are_found(tmp_path):
    touch(tmp_path / "exp/logs/r_1.out")
    (tmp_path / "exp/run/trace_jobs").mkdir(parents=True)
    touch(tmp_path / "exp/sibling/logs/s_1.out")  # an experiment beside logs/
    touch(tmp_path / "exp/deeper/flat/f_1.out")  # a flat job below
    touch(tmp_path / "exp/logs/old/o_1.out")  # below logs/
    touch(tmp_path / "exp/stray.out")  # beside logs/: reported, not read
    (tmp_path / "exp/empty").mkdir()
    d = discover(tmp_path)
    assert sorted(j.log for j in d.jobs) == [
        "exp/deeper/flat/f_1.out",
        "exp/logs/old/o_1.out",
        "exp/logs/r_1.out",
        "exp/sibling/logs/s_1.out",
    ]
    assert d.trials_dirs["exp"] == ["exp/run/trace_jobs"]
    assert d.skipped == (("exp/empty", "no .out/.log files and no trials directory"),)
    assert [w.path for w in d.warnings] == ["exp/stray.out"]


def test_every_folder_is_a_job_or_reported(tmp_path):
    touch(tmp_path / "a/logs/r_1.out")
    touch(tmp_path / "a/logs/notes.txt")
    touch(tmp_path / "a/ckpt/model.bin")
    touch(tmp_path / "b/c/readme.txt")
    d = discover(tmp_path)
    listed = {j.group for j in d.jobs} | {p for p, _ in d.skipped}
    for p in tmp_path.rglob("*"):
        if p.is_dir():
            rel = p.relative_to(tmp_path).as_posix()
            # the folder itself, or a folder above or below it, is accounted for
            assert any(
                rel == x or rel.startswith(x + "/") or x.startswith(rel + "/") for x in listed
            )
    assert ("a/ckpt", "no .out/.log files and no trials directory") in d.skipped


def test_a_thousand_nested_folders(tmp_path):
    p = str(tmp_path)
    for _ in range(1000):  # (Path.mkdir(parents=True) would itself recurse too deep)
        p = os.path.join(p, "d")
        os.mkdir(p)
    touch(tmp_path / "top/j_1.out")
    try:
        d = discover(tmp_path)  # no RecursionError
        assert [j.log for j in d.jobs] == ["top/j_1.out"]
        assert len(d.skipped) + len(d.warnings) >= 1  # the deep chain is reported (or unreadable)
    finally:  # pytest's own clean-up recurses: unchain it level by level, on short paths
        cur, i = os.path.join(tmp_path, "d"), 0
        while os.path.isdir(os.path.join(cur, "d")):
            nxt = os.path.join(tmp_path, f"c{i}")
            os.rename(os.path.join(cur, "d"), nxt)
            os.rmdir(cur)
            cur, i = nxt, i + 1
        os.rmdir(cur)


def test_ids_are_unique_and_do_not_move(tmp_path):
    touch(tmp_path / "p/q/train_1.out")
    before = {j.log: j.id for j in discover(tmp_path).jobs}
    assert before == {"p/q/train_1.out": "p.q.train_1"}
    touch(tmp_path / "p.q/train_1.out")  # would have had the same id
    after = {j.log: j.id for j in discover(tmp_path).jobs}
    assert after["p/q/train_1.out"] == "p.q.train_1"  # the old URL still serves the old job
    assert after["p.q/train_1.out"] != "p.q.train_1"
    assert after["p.q/train_1.out"] == slug("p.q/train_1")  # from its own path only
    touch(tmp_path / "p/q/train_1.log")  # same stem, other suffix: both get a hash
    ids = [j.id for j in discover(tmp_path).jobs]
    assert len(ids) == len(set(ids))


def test_a_long_path_gives_an_id_a_file_system_takes(tmp_path):
    """Plain folder names 300 characters deep (each fine alone) gave an id longer than any
    file name may be: the build read everything, then ended at its first write."""
    from sitegen.commands.build import build
    from sitegen.options import BuildOptions

    deep = "/".join(f"segment_{i}_" + "x" * 40 for i in range(6))
    assert len(slug(deep)) <= 87 and slug(deep) != slug(deep + "y")
    assert slug("a/" * 99 + "b") == "a." * 99 + "b"  # 199 characters: as it was
    job = tmp_path / "a" / deep
    job.mkdir(parents=True)
    (job / "train_1.out").write_text(
        "(skyrl_entrypoint pid=1) 2026-01-01 00:00:00.000 | INFO     | skyrl_train.t:f:1 - "
        "Step 1: \n(skyrl_entrypoint pid=1) {'reward/avg_raw_reward': '0.5000'}\n"
    )
    report = build(BuildOptions(archive=tmp_path / "a", out=tmp_path / "site", workers=1))
    assert report.jobs == 1
    (page,) = (tmp_path / "site" / "jobs").iterdir()
    assert page.name.startswith("segment_0_") and len(page.name) <= 87


def test_slug_is_canonical_only_for_plain_paths():
    assert slug("exp-async/async-run_561773") == "exp-async.async-run_561773"
    assert slug("x.y") != slug("x/y") == "x.y"
    assert slug("Qwen2.5/run").startswith("Qwen2.5.run-")


def test_secrets_in_names_never_reach_the_model(tmp_path):
    tok = "hf_" + "S" * 30
    touch(tmp_path / f"exp-{tok}/logs/r_1.out")
    touch(tmp_path / f"flat/{tok}.out")
    (tmp_path / f"exp-{tok}/run/trace_jobs").mkdir(parents=True)
    (tmp_path / f"empty-{tok}").mkdir()
    d = discover(tmp_path)
    assert tok not in repr((d.jobs, d.trials_dirs, d.skipped, d.warnings))
    for j in d.jobs:
        assert (tmp_path / d.real(j.log)).is_file()  # the file can still be read
    for dirs in d.trials_dirs.values():
        assert all((tmp_path / d.real(x)).is_dir() for x in dirs)
    # stable: the same secret gives the same id on every build
    assert [j.id for j in discover(tmp_path).jobs] == [j.id for j in d.jobs]


def test_notes_and_logs_linked_outside_are_not_used(tmp_path):
    outside = tmp_path / "outside"
    touch(outside / "passwd", "root:x:0:0")
    root = tmp_path / "root"
    touch(root / "exp/logs/r_1.out")
    os.symlink(outside / "passwd", root / "exp/notes.md")
    d = discover(root)
    assert d.jobs[0].notes is None
    assert any(w.path == "exp/notes.md" and "outside" in w.message for w in d.warnings)


def test_special_files_are_reported_not_opened(tmp_path):
    touch(tmp_path / "j/a.out")
    os.mkfifo(tmp_path / "j/b.out")
    d = discover(tmp_path)
    assert [j.log for j in d.jobs] == ["j/a.out"]
    assert any(w.path == "j/b.out" for w in d.warnings)


def test_two_experiments_never_share_a_run_id(tmp_path):
    from sitegen.assemble.runs import group_runs

    touch(tmp_path / "x/y/logs/r_1.out")
    touch(tmp_path / "x.y/logs/r_2.out")
    touch(tmp_path / "a/b.out")  # a flat run whose id meets experiment a/b's
    touch(tmp_path / "a/b/logs/c_1.out")
    d = discover(tmp_path)
    runs = [rid for rid, _ in group_runs(d, {})]
    assert len(runs) == len(set(runs)) == 4
    assert "x.y" in runs  # the plain path keeps the plain id


def test_hidden_and_trials_folders_inside_logs_are_reported(tmp_path):
    touch(tmp_path / "exp/logs/r_1.out")
    (tmp_path / "exp/logs/.cache").mkdir()
    touch(tmp_path / "exp/logs/trials/t1/result.json", "{}")
    d = discover(tmp_path)
    assert ("exp/logs/.cache", "hidden folder: not read") in d.skipped
    # trials/ inside logs/ belongs to the experiment, as one beside logs/ does
    assert d.trials_dirs["exp"] == ["exp/logs/trials"]


def test_sitegen_outputs_anywhere_are_passed_over_silently(tmp_path):
    """Sites (their manifest), caches, staging folders and locks of earlier builds, at any
    depth, are neither jobs nor skipped folders."""
    touch(tmp_path / "job/a.out")
    for site in ("site", "deep/er/pages"):
        touch(tmp_path / site / MARKER, '{"files": []}')
        touch(tmp_path / site / "jobs/x/index.html")
        name = site.rsplit("/", 1)[-1]
        touch(tmp_path / site / f"../.{name}.cache/meta.json", "{}")
        touch(tmp_path / site / f"../.{name}.staging-4242/index.html")
        touch(tmp_path / site / f"../.{name}.lock")
    (tmp_path / ".hidden").mkdir()
    d = discover(tmp_path)
    assert [j.log for j in d.jobs] == ["job/a.out"]
    assert d.skipped == ((".hidden", "hidden folder: not read"),)  # (a user's: still said)


@pytest.mark.parametrize(
    "where", ["old-cache", "deep/er/cache-copy", "trials", "logs", "x.out", "exp/old", "job/trials"]
)
def test_a_cache_folder_is_known_by_its_marker_under_any_name(tmp_path, where):
    """A build cache moved or renamed into the archive (its kinds' folders, ``trials/`` among
    them, look like a job's) is passed over without a word, as a site is, when its marker is
    among the markers discovery is given (build() gives the cache's)."""
    touch(tmp_path / "job/a.out")
    touch(tmp_path / "exp/logs/train_2.out")  # an experiment: its run folders hold its trials
    cache = tmp_path / where
    touch(cache / ".made-by-us")
    touch(cache / "meta.json", "{}")
    touch(cache / "trials/0123456789abcdef0123.json", "{}")
    touch(cache / "log/0123456789abcdef0123.json", "{}")
    touch(cache / "train_1.out", "(skyrl_entrypoint pid=1) Step 1:")
    d = discover(tmp_path, markers=(MARKER, ".made-by-us"))
    assert sorted(j.log for j in d.jobs) == ["exp/logs/train_2.out", "job/a.out"]
    assert d.trials_dirs == {} and d.skipped == () and d.warnings == ()
    assert discover(tmp_path) != d  # (not a marker it is given: read as any folder)


def test_a_split_slurm_log_is_one_job_and_a_lone_err_a_job_of_its_own(tmp_path):
    """#SBATCH --output=x_%j.out --error=x_%j.err: the .err beside a .out (or .log) of its
    stem is that job's other stream; a .err alone is a job's log."""
    touch(tmp_path / "flat/x_7.out")
    touch(tmp_path / "flat/x_7.err")
    touch(tmp_path / "flat/infra-0.log")
    touch(tmp_path / "alone/y_8.err")
    touch(tmp_path / "exp/logs/run_2.out")
    touch(tmp_path / "exp/logs/run_2.err")
    touch(tmp_path / "exp/logs/run_10.err")
    touch(tmp_path / "exp/logs/run_3.log")
    touch(tmp_path / "exp/logs/run_3.err")
    d = discover(tmp_path)
    got = [(j.id, j.log, j.infra_logs) for j in d.jobs]
    assert got == [
        ("alone.y_8", "alone/y_8.err", ()),
        ("exp.run_2", "exp/logs/run_2.out", ("exp/logs/run_2.err",)),
        ("exp.run_3", "exp/logs/run_3.log", ("exp/logs/run_3.err",)),
        ("exp.run_10", "exp/logs/run_10.err", ()),
        ("flat.x_7", "flat/x_7.out", ("flat/x_7.err", "flat/infra-0.log")),
    ]
    assert not d.warnings and not d.skipped
