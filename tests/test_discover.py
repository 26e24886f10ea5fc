import os

import pytest

from sitegen.discover import discover, slug
from sitegen.errors import ArchiveError


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
