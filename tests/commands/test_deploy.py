"""gh-deploy against a local bare repository as the remote (a path: no network is ever touched).

The branch holds exactly the site; .nojekyll and a kept CNAME; a grown log is one new commit that
leaves every other job's files as they were; nothing changed is no commit; a planted token or a
101 MB file stops it with exit 2, nothing committed, nothing pushed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sitegen.commands.cli import main
from sitegen.commands.deploy import (
    Git,
    PublishBlocked,
    PublishError,
    gh_deploy,
    publish_site,
    site_address,
)
from sitegen.errors import ConfigError
from sitegen.options import BuildOptions
from sitegen.publish.gate import blob_id, site_files
from sitegen.write.site import SitePaths
from tests.conftest import made_once
from tests.scenarios.test_incremental import CHAIN, STEP, _append, _archive

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
TOKEN = "ghp_" + "Q7w3Er5tY8uI0oP2aS4dF6gH9jK1lZ3xC5vB"


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    # git refuses every transport but local files: a test that reached for the network fails.
    monkeypatch.setenv("GIT_ALLOW_PROTOCOL", "file")
    for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def rev(repo: Path, ref: str) -> str | None:
    p = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "-q", "--verify", ref], capture_output=True, text=True
    )
    return p.stdout.strip() or None


def tree(repo: Path, ref: str) -> dict[str, str]:
    """path -> blob id of every file on ``ref``."""
    out = {}
    for line in git(repo, "ls-tree", "-r", ref).splitlines():
        meta, path = line.split("\t", 1)
        out[path] = meta.split()[2]
    return out


@pytest.fixture(scope="session")
def template(tmp_path_factory) -> Path:
    """A clone with a bare remote, an archive, and one deploy done: made once for every
    worker (``made_once``: a deploy builds and scans a site, the costliest part of these
    tests), each test on a copy."""
    return made_once(tmp_path_factory, "deploy", _make_template)


def _make_template(root: Path) -> None:
    # Three jobs in two runs: a grown log's job beside others that must stay as they were.
    # The gate's scan of every page and the first build cost in step with the site, and no
    # test here turns on its size (the gate on a whole synth site: tests/scenarios).
    _archive(root / "archive", (*CHAIN, "flat/stale"), seed=31, steps=6, trials_per_step=1)
    subprocess.run(["git", "init", "-q", "--bare", str(root / "remote.git")], check=True)
    subprocess.run(["git", "init", "-q", str(root / "repo")], check=True)
    git(root / "repo", "remote", "add", "origin", str(root / "remote.git"))
    said: list[str] = []
    gh_deploy(_opts(root), repo=root / "repo", cname="runs.example.org", say=said.append)
    (root / "said.txt").write_text("\n".join(said))


def _opts(root: Path) -> BuildOptions:
    # now=None, as the CLI has it: a CLI deploy after this one finds the build unchanged
    return BuildOptions(archive=root / "archive", out=root / "repo" / "site", workers=1)


def _gate_cache(root: Path) -> Path:
    """The deploy's record of clean files (copied with the world): only new files are scanned."""
    return SitePaths.of(root / "repo" / "site").cache / "publish-gate.json"


@pytest.fixture
def world(template, tmp_path) -> Path:
    root = tmp_path / "w"
    shutil.copytree(template, root, symlinks=True)
    git(root / "repo", "remote", "set-url", "origin", str(root / "remote.git"))
    return root


def test_branch_holds_exactly_the_site(world):
    repo, site = world / "repo", world / "repo" / "site"
    head = rev(repo, "refs/heads/gh-pages")
    assert head and rev(world / "remote.git", "refs/heads/gh-pages") == head
    files = tree(repo, "gh-pages")
    assert sorted(files) == sorted([*site_files(site), "CNAME"])  # CNAME: --cname
    assert ".nojekyll" in files and "index.html" in files
    assert ".sitegen-site" not in files and not any(p.startswith(".git") for p in files)
    assert all(files[rel] == blob_id((site / rel).read_bytes()) for rel in site_files(site))
    # the user's checkout is untouched: no HEAD moved, no index written
    assert rev(repo, "HEAD") is None and not (repo / ".git" / "index").exists()
    msg = git(repo, "log", "-1", "--format=%B", "gh-pages")
    assert msg.startswith("Deploy the site with sitegen ") and "3 jobs in 2 runs" in msg


def test_nothing_changed_is_no_commit(world):
    repo = world / "repo"
    before = rev(repo, "gh-pages")
    said: list[str] = []
    result = gh_deploy(_opts(world), repo=repo, say=said.append)
    assert result.commit is None and not result.pushed
    assert rev(repo, "gh-pages") == before == rev(world / "remote.git", "gh-pages")
    assert any("nothing to commit, nothing to push" in s for s in said)


def test_grown_log_is_one_commit_touching_only_its_job(world):
    repo = world / "repo"
    before = rev(repo, "gh-pages")
    old = tree(repo, "gh-pages")
    log = world / "archive/flat/stale/train_600150.out"
    _append(log, STEP.format(n=50))
    result = gh_deploy(_opts(world), repo=repo, say=lambda s: None)
    assert result.parent == before and result.pushed
    assert git(repo, "rev-list", "--count", f"{before}..gh-pages") == "1"
    assert rev(world / "remote.git", "gh-pages") == result.commit
    new = tree(repo, "gh-pages")
    changed = {p for p in old.keys() | new.keys() if old.get(p) != new.get(p)}
    assert "data/jobs/flat.stale.train_600150.json" in changed
    own = (
        "jobs/flat.stale.train_600150/",
        "runs/flat.stale.train_600150/",
        "data/jobs/flat.stale",
        "data/runs/flat.stale",
    )
    others = [p for p in changed if p.startswith(("jobs/", "data/jobs/")) and not p.startswith(own)]
    assert others == []


def test_cname_is_written_then_kept(world):
    repo = world / "repo"
    said = (world / "said.txt").read_text().splitlines()
    base_at = said.index("base URL: https://runs.example.org/")
    assert base_at < next(i for i, s in enumerate(said) if s.startswith("committed"))
    assert git(repo, "show", "gh-pages:CNAME") == "runs.example.org"
    assert not (repo / "site" / "CNAME").exists()  # the output folder is the build's, untouched
    canonical = '<link rel="canonical" href="https://runs.example.org/'
    assert canonical in (repo / "site/index.html").read_text()
    # next deploy, no --cname, something new: the branch's CNAME stays and gives the base URL
    (repo / "site" / "about.html").write_text("<p>About these runs</p>\n")
    r = gh_deploy(_opts(world), repo=repo, say=lambda s: None)
    assert r.commit and r.base_url == "https://runs.example.org/"
    assert git(repo, "show", "gh-pages:CNAME") == "runs.example.org"
    assert git(repo, "show", "gh-pages:about.html") == "<p>About these runs</p>"


def test_a_cname_in_the_output_folder_gives_the_base_url(world, tmp_path):
    """A ``CNAME`` the user put in the output folder is the one published (it replaces the
    branch's): the pages are built for that domain, on the first deploy already."""
    repo = world / "repo"
    (repo / "site" / "CNAME").write_text("www.team-runs.org\n")
    r = gh_deploy(_opts(world), repo=repo, say=lambda s: None)
    assert r.commit and r.base_url == "https://www.team-runs.org/"
    assert git(repo, "show", "gh-pages:CNAME") == "www.team-runs.org"
    canonical = '<link rel="canonical" href="https://www.team-runs.org/'
    assert canonical in (repo / "site/index.html").read_text()
    # a fresh repository with a GitHub remote: the output folder's CNAME, not the remote's
    # Pages address; a --cname it contradicts is refused (the next deploy without it would
    # publish the folder's again), one it repeats is taken
    fresh = tmp_path / "fresh"
    subprocess.run(["git", "init", "-q", str(fresh)], check=True)
    git(fresh, "remote", "add", "origin", "git@github.com:Team/rl-runs.git")
    (fresh / "site").mkdir()
    (fresh / "site" / "CNAME").write_text("runs.team.org")
    g, out = Git(fresh), fresh / "site"
    assert site_address(g, None, None, "gh-pages", "origin", out) == "https://runs.team.org/"
    with pytest.raises(PublishError, match="CNAME says 'runs.team.org'"):
        site_address(g, None, "x.example.org", "gh-pages", "origin", out)
    with pytest.raises(PublishError, match="change or remove"):
        site_address(g, "https://given.example/", "x.example.org", "gh-pages", "origin", out)
    assert site_address(g, None, " runs.team.org", "gh-pages", "origin", out) == (
        "https://runs.team.org/"
    )
    (fresh / "site" / "CNAME").write_text("\n")  # an empty one names no domain
    assert site_address(g, None, None, "gh-pages", "origin", out) == (
        "https://team.github.io/rl-runs/"
    )
    # domains are case-blind: a --cname the folder's says in other capitals is the same
    (fresh / "site" / "CNAME").write_text("Runs.Team.org\n")
    assert site_address(g, None, "runs.team.org", "gh-pages", "origin", out) == (
        "https://runs.team.org/"
    )
    # a base URL on another host than the custom domain published: Pages would serve the
    # domain while every link names the other; on the same host it is taken
    with pytest.raises(PublishError, match="not on the custom domain runs.team.org"):
        site_address(g, "https://team.github.io/rl-runs/", None, "gh-pages", "origin", out)
    assert site_address(g, "https://RUNS.team.org/x/", None, "gh-pages", "origin", out) == (
        "https://RUNS.team.org/x/"
    )
    for same in ("https://runs.team.org:443/", "https://me@runs.team.org/"):  # port, user
        assert site_address(g, same, None, "gh-pages", "origin", out) == same
    # the domain written as a URL in the file, bare on the command line: the same domain
    (fresh / "site" / "CNAME").write_text("https://runs.team.org/\n")
    assert site_address(g, None, "runs.team.org", "gh-pages", "origin", out) == (
        "https://runs.team.org/"
    )
    (fresh / "site" / "CNAME").write_text("HTTPS://runs.team.org/\n")  # a scheme, in capitals
    assert site_address(g, None, None, "gh-pages", "origin", out) == "https://runs.team.org/"
    (fresh / "site" / "CNAME").write_text("[runs.team.org\n")  # no host: refused in a line
    with pytest.raises(PublishError, match="names no host"):
        site_address(g, "https://runs.team.org/", None, "gh-pages", "origin", out)
    (fresh / "site" / "CNAME").write_text("x" * 5000)  # no domain name: refused, not skipped
    with pytest.raises(PublishError, match="holds no domain name"):
        site_address(g, None, None, "gh-pages", "origin", out)


def test_a_blank_cname_in_the_output_folder_is_no_custom_domain(world):
    # the branch has a CNAME (an earlier --cname); the user empties the folder's to drop the
    # domain: that blank file is published, so the pages are built for the Pages address,
    # not for the branch's domain Pages no longer serves
    repo = world / "repo"
    assert git(repo, "show", "gh-pages:CNAME") == "runs.example.org"
    (repo / "site" / "CNAME").write_text("\n")
    assert site_address(Git(repo), None, None, "gh-pages", "origin", repo / "site") != (
        "https://runs.example.org/"
    )


@pytest.mark.parametrize(
    "remote, url",
    [
        ("git@github.com:Team/rl-runs.git", "https://team.github.io/rl-runs/"),
        ("https://github.com/Team/rl-runs", "https://team.github.io/rl-runs/"),
        ("https://github.com/team/team.github.io.git", "https://team.github.io/"),
        ("/srv/git/site.git", None),
    ],
)
def test_base_url_from_the_remote(tmp_path, remote, url):
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    git(repo, "remote", "add", "origin", remote)
    g = Git(repo)
    assert site_address(g, None, None, "gh-pages", "origin") == url
    assert site_address(g, "https://given.example/", None, "gh-pages", "origin") == (
        "https://given.example/"
    )
    assert site_address(g, None, "x.example.org", "gh-pages", "origin") == "https://x.example.org/"


def _cli(world: Path, monkeypatch, *extra: str) -> int:
    monkeypatch.chdir(world / "repo")
    return main(["gh-deploy", str(world / "archive"), "-o", "site", "--workers", "1", *extra])


def test_planted_token_stops_it(world, monkeypatch, capsys):
    repo = world / "repo"
    before = rev(repo, "gh-pages")
    (repo / "site" / "about").mkdir()
    (repo / "site" / "about" / "notes.txt").write_text(f"our token:\n{TOKEN}\n")
    assert _cli(world, monkeypatch) == 2
    err = capsys.readouterr().err
    assert "leak: about/notes.txt:2: github-token: [REDACTED]" in err
    assert "nothing committed, nothing pushed" in err and TOKEN not in err
    assert rev(repo, "gh-pages") == before == rev(world / "remote.git", "gh-pages")
    assert (repo / "site" / "about" / "notes.txt").exists()  # the build kept the user's file


def test_oversized_file_stops_it(world, monkeypatch, capsys):
    repo = world / "repo"
    before = rev(repo, "gh-pages")
    with open(repo / "site" / "weights.bin", "wb") as fh:
        fh.truncate(101 * 10**6)
    assert _cli(world, monkeypatch) == 2
    err = capsys.readouterr().err
    assert "blocked: weights.bin: 101.0 MB, over GitHub's limit of 100.0 MB a file" in err
    assert rev(repo, "gh-pages") == before == rev(world / "remote.git", "gh-pages")


def test_no_push_commits_only(world, monkeypatch):
    repo = world / "repo"
    before = rev(repo, "gh-pages")
    (repo / "site" / "about.html").write_text("<p>About these runs</p>\n")
    assert _cli(world, monkeypatch, "--no-push") == 0
    assert rev(repo, "gh-pages") != before and rev(world / "remote.git", "gh-pages") == before


def test_names_that_are_not_utf8_are_published_as_they_are(world):
    repo = world / "repo"
    name = os.fsdecode(b"caf\xe9 latin-1.html")  # a name in a legacy encoding
    (repo / "site" / name).write_text("<p>old name</p>\n")
    r = publish_site(
        repo / "site", repo=repo, push=False, say=lambda s: None, gate_cache=_gate_cache(world)
    )
    assert r.commit
    raw = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-z", "--name-only", "gh-pages"], capture_output=True
    ).stdout.split(b"\0")
    assert b"caf\xe9 latin-1.html" in raw


def test_branch_checked_out_elsewhere_is_refused(world):
    repo = world / "repo"
    git(repo, "worktree", "add", "-q", str(world / "wt"), "gh-pages")
    (repo / "site" / "extra.txt").write_text("new\n")
    with pytest.raises(PublishError, match="checked out in"):
        publish_site(repo / "site", repo=repo, say=lambda s: None)


def test_not_a_repository(tmp_path):
    (tmp_path / "site").mkdir()
    with pytest.raises(PublishError, match="not in a git repository"):
        publish_site(tmp_path / "site", repo=tmp_path, say=lambda s: None)


def test_publish_blocked_leaves_no_objects(world):
    repo = world / "repo"
    (repo / "site" / "leak.txt").write_text(f"x = {TOKEN}\n")
    before = git(repo, "count-objects")
    with pytest.raises(PublishBlocked):
        publish_site(repo / "site", repo=repo, say=lambda s: None, gate_cache=_gate_cache(world))
    assert git(repo, "count-objects") == before  # not even a blob of the leaking file was written


def test_gh_pages_worktree_as_the_output(world):
    """Flow 2 with gh-deploy: the output folder is the branch's own worktree."""
    repo = world / "repo"
    wt = world / "pages"
    git(repo, "worktree", "add", "-q", str(wt), "gh-pages")
    opts = BuildOptions(archive=world / "archive", out=wt, workers=1)
    first = gh_deploy(opts, repo=repo, say=lambda s: None)
    # the files on the branch are the site's already (sitegen takes over identical files)
    assert first.commit is None
    (wt / "about.html").write_text("<p>About</p>\n")
    second = gh_deploy(opts, repo=repo, say=lambda s: None)
    assert second.commit and rev(repo, "gh-pages") == second.commit
    assert git(repo, "show", "gh-pages:about.html") == "<p>About</p>"
    # the worktree's index followed the branch: only sitegen's manifest is not committed
    assert git(wt, "status", "--porcelain") == "?? .sitegen-site"


def test_two_machines_build_one_history(world, tmp_path):
    """A colleague deployed from another clone: after a fetch, the deploy builds on their commit;
    without it, the push is refused (never forced) and says what to do."""
    repo = world / "repo"
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(world / "remote.git"), str(other)], check=True)
    (other / "site").mkdir()
    (other / "site" / "index.html").write_text("<p>their site</p>\n")
    theirs = publish_site(other / "site", repo=other, say=lambda s: None)
    assert theirs.pushed and rev(world / "remote.git", "gh-pages") == theirs.commit

    (repo / "site" / "about.html").write_text("<p>About</p>\n")
    with pytest.raises(PublishError, match="git fetch origin gh-pages") as refused:
        gh_deploy(_opts(world), repo=repo, say=lambda s: None)
    assert "rejected" in str(refused.value) and "hint:" not in str(refused.value)
    assert rev(world / "remote.git", "gh-pages") == theirs.commit  # not overwritten

    git(repo, "fetch", "-q", "origin", "gh-pages:refs/remotes/origin/gh-pages")
    (repo / "site" / "about.html").write_text("<p>About us</p>\n")
    ours = gh_deploy(_opts(world), repo=repo, say=lambda s: None)
    assert ours.parent == theirs.commit and ours.pushed
    assert rev(world / "remote.git", "gh-pages") == ours.commit


def test_a_bad_cname_is_refused_before_building(world):
    with pytest.raises(ConfigError, match="--cname"):
        gh_deploy(_opts(world), repo=world / "repo", cname="not a domain", say=lambda s: None)


def test_strict_deploy_with_warnings_commits_nothing(world, monkeypatch, capsys):
    repo = world / "repo"
    before = rev(repo, "gh-pages")
    (repo / "site" / "about.html").write_text("<p>About</p>\n")
    assert _cli(world, monkeypatch, "--strict") == 1  # the synth archive has damaged input
    err = capsys.readouterr().err
    # (this world's site was built before: its warnings were reported then, and count still)
    assert re.search(
        r"sitegen: --strict: \d+ warnings \(all already reported by the last build\): nothing committed",
        err,
    )
    assert rev(repo, "gh-pages") == before


def test_a_bad_branch_is_refused_before_building(world, monkeypatch):
    import sitegen.commands.build

    monkeypatch.setattr(sitegen.commands.build, "build", lambda *a, **k: pytest.fail("built"))
    repo = world / "repo"
    with pytest.raises(PublishError, match="'a..b' is not a valid branch name"):
        gh_deploy(_opts(world), repo=repo, branch="a..b", say=lambda s: None)
    git(repo, "worktree", "add", "-q", str(world / "wt"), "gh-pages")
    with pytest.raises(PublishError, match="checked out in"):
        gh_deploy(_opts(world), repo=repo, say=lambda s: None)
