"""``sitegen gh-deploy``: build, gate, commit the output folder as the tip of ``gh-pages``, push.

Plain ``git`` plumbing (docs/design.md, "Publishing"): the blobs are written with
``hash-object --stdin-paths`` and checked against the ids of the bytes the gate scanned; the
tree is made in a temporary index, and when it is the tip's tree nothing is committed.
``commit-tree`` and ``update-ref`` (with the old value, so a concurrent change is not
overwritten) move the branch without touching the user's checkout; ``push`` is never forced.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import msgspec
from msgspec.structs import replace

from sitegen import __version__
from sitegen.commands.build import build, warning_lines
from sitegen.discover.safeio import read_bytes
from sitegen.errors import SitegenError
from sitegen.options import BuildOptions, check_base_url, check_output, compile_allow
from sitegen.progress import counted
from sitegen.publish.address import cname_url, describe_remote, pages_url
from sitegen.publish.gate import GateReport, check_site
from sitegen.redact import Redactor
from sitegen.write.site import SitePaths

_ZERO = "0" * 40
_WARNINGS_SHOWN = 20  # a deploy's log is about the deploy; the site lists every warning
CNAME_BYTES = 4096  # a domain name is at most 253 characters: more is not a CNAME


class PublishError(SitegenError):
    """Git refused something, or the repository is not one we can publish from."""


class PublishBlocked(SitegenError):
    """The publish gate found a secret or a size GitHub refuses: nothing was committed."""

    def __init__(self, report: GateReport) -> None:
        n = len(report.leaks) + len(report.blocked)
        super().__init__(
            f"the publish gate stopped the deploy ({n} problem{'s' if n != 1 else ''} above): "
            "nothing committed, nothing pushed (a false positive can be allowed with "
            "publish_allow in sitegen.toml)"
        )
        self.report = report


class StrictStop(SitegenError):
    """``--strict`` and the build warned: nothing committed (the CLI exits 1, as ``build``)."""


class DeployResult(msgspec.Struct, frozen=True):
    """What a deploy did. ``commit`` is None when the site was unchanged (nothing committed)."""

    branch: str
    tree: str
    parent: str | None
    commit: str | None
    pushed: bool
    base_url: str | None
    gate: GateReport


class Git:
    """``git`` in one repository; a failure is a :class:`PublishError` naming the command."""

    def __init__(self, repo: Path) -> None:
        if shutil.which("git") is None:
            raise PublishError("git is not installed (gh-deploy needs the git command)")
        self.repo = repo
        try:
            self.git_dir = self("rev-parse", "--absolute-git-dir")
        except PublishError:
            raise PublishError(
                f"{repo} is not in a git repository: run gh-deploy in a clone of the repository "
                "that publishes the site, or give --repo"
            ) from None

    def __call__(
        self,
        *args: str,
        input: bytes | None = None,
        env: dict[str, str] | None = None,
        ok: tuple[int, ...] = (0,),
    ) -> str:
        proc = self.run(*args, input=input, env=env)
        if proc.returncode not in ok:
            err = [
                ln
                for ln in proc.stderr.decode("utf-8", "replace").strip().splitlines()
                if not ln.startswith("hint:")
            ]
            raise PublishError(
                f"git {args[0]} failed: {describe_remote(' / '.join(err[-3:]) or 'no message')}"
            )
        return proc.stdout.decode("utf-8", "replace").strip()

    def run(
        self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """Run ``git args`` in the repository; the caller reads the status."""
        return subprocess.run(
            ["git", "-C", str(self.repo), *args],
            input=input if input is not None else b"",
            capture_output=True,
            env={**os.environ, **(env or {})},
        )

    def succeeds(self, *args: str) -> bool:
        return self.run(*args).returncode == 0

    def rev(self, name: str) -> str | None:
        """The commit ``name`` points at, or None when it does not exist."""
        return self("rev-parse", "--verify", "-q", f"{name}^{{commit}}", ok=(0, 1)) or None

    def remote_url(self, remote: str) -> str | None:
        return self("remote", "get-url", remote, ok=(0, 2, 128)) or None


def gh_deploy(
    opts: BuildOptions,
    *,
    repo: Path = Path("."),
    branch: str = "gh-pages",
    remote: str = "origin",
    push: bool = True,
    cname: str | None = None,
    say: Callable[[str], None] | None = None,
    progress: Callable[[str], None] | None = None,
    verbose: bool = False,
) -> DeployResult:
    """Build ``opts.archive`` into ``opts.out`` and publish that folder, at the base URL
    :func:`site_address` gives (said before anything is built)."""
    say = say or _stderr
    # Everything that can be refused is refused before the (long) build.
    compile_allow(opts.publish_allow)
    check_output(opts.out, opts.archive)
    git = Git(repo)
    if not git.succeeds("check-ref-format", "--branch", branch):
        raise PublishError(f"--branch {branch!r} is not a valid branch name")
    _checked_out(git, branch, opts.out)
    url = git.remote_url(remote)
    if url is None and push:
        raise PublishError(
            f"the repository has no remote {remote!r}: add it (git remote add {remote} URL), "
            "name another with --remote, or commit only with --no-push"
        )
    base_url = site_address(git, opts.base_url, cname, branch, remote, opts.out)
    if base_url is not None:  # a CNAME (output folder, branch) or --cname is the user's text
        check_base_url(base_url, "--cname" if cname else "the site's address")
    where = f"{remote} ({describe_remote(url)})" if url else "no remote"
    say(f"deploying to branch {branch} of {git.git_dir}, {where}")
    say(
        f"base URL: {base_url}"
        if base_url
        else "base URL: none (no github.com remote and no CNAME; give --base-url for the "
        "sitemap and social links)"
    )
    opts = replace(opts, base_url=base_url, publishing=True)
    report = build(opts, progress=progress)
    for line in warning_lines(report, opts, verbose, _WARNINGS_SHOWN):
        say(line)
    say(report.headline())
    say(report.inputs())
    if opts.strict and report.warnings:
        raise StrictStop(f"--strict: {report.strict_failure()}: nothing committed")
    message = (
        f"Deploy the site with sitegen {__version__}\n\n"
        f"{report.jobs} jobs in {report.runs} runs, {report.trials} training trials, "
        f"{len(report.warnings)} build warnings"
        + ("; the build changed nothing" if report.unchanged else f"; {report.pages} pages")
        + (f"\nBase URL: {base_url}" if base_url else "")
        + "\n"
    )
    result = publish_site(
        opts.out,
        repo=repo,
        branch=branch,
        remote=remote,
        push=push,
        cname=cname,
        message=message,
        redactor=Redactor(opts.redact_patterns),
        allow=opts.publish_allow,
        say=say,
        # beside the build cache: unchanged files of a big site are not scanned again
        gate_cache=SitePaths.of(opts.out).cache / "publish-gate.json",
    )
    return replace(result, base_url=base_url)


def site_address(
    git: Git,
    given: str | None,
    cname: str | None,
    branch: str,
    remote: str,
    site: Path | None = None,
) -> str | None:
    """Where the site will be served: ``given`` (``--base-url`` or the config), else the custom
    domain published (``--cname``, else the output folder's ``CNAME``, else the branch's),
    else the remote's Pages address."""
    own = _output_cname(site)
    if cname and own is not None and _host(_cname_url(own)) != _host(cname_url(cname)):
        # the folder's would be published again by the next deploy without --cname
        raise PublishError(
            f"--cname {cname.strip()} but the output folder's CNAME says "
            f"{own.decode('utf-8', 'replace').strip()!r}: change or remove that file"
        )
    text = cname.encode() if cname else own
    if text is None:
        text = _branch_file(git, _parent(git, branch, remote), "CNAME")
    domain = _cname_url(text) if text is not None else ""  # ("": no custom domain)
    if given:
        if domain and _host(given) != _host(domain):
            # Pages would serve the domain while every link, card and sitemap names the other
            raise PublishError(
                f"the base URL {given} is not on the custom domain {_host(domain)} that the "
                "CNAME publishes: give a base URL on it, or change the CNAME"
            )
        return given
    if domain:
        return domain
    url = git.remote_url(remote)
    return pages_url(url) if url else None


def _host(url: str) -> str:
    """The host a URL names, in lower case (no port, no user)."""
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError as exc:  # ("[runs.team.org": an IPv6 address left open)
        raise PublishError(f"{url!r} names no host: {exc}") from exc


def _cname_url(text: bytes) -> str:
    return cname_url(text.decode("utf-8", "replace")) if text.strip() else ""


def publish_site(
    site: Path,
    *,
    repo: Path = Path("."),
    branch: str = "gh-pages",
    remote: str = "origin",
    push: bool = True,
    cname: str | None = None,
    message: str | None = None,
    redactor: Redactor | None = None,
    allow: tuple[str, ...] = (),
    say: Callable[[str], None] | None = None,
    gate_cache: Path | None = None,
) -> DeployResult:
    """Gate ``site``, commit exactly its files (plus ``.nojekyll`` and a kept ``CNAME``) as the
    tip of ``branch``, and push it unless ``push`` is False; :class:`PublishBlocked` when the
    gate stops it."""
    say = say or _stderr
    git = Git(repo)
    worktree = _checked_out(git, branch, site)  # refused before the (long) scan, not after
    gate = check_site(site, redactor, allow, clean_cache=gate_cache)
    for line in gate.lines():
        say(line)
    say(gate.summary())
    if not gate.ok:
        raise PublishBlocked(gate)

    parent = _parent(git, branch, remote)
    entries = _write_blobs(git, site, gate)
    names = {rel for _, _, rel in entries}
    if ".nojekyll" not in names:  # Pages would run Jekyll, which hides folders starting with _
        entries.append(("100644", git("hash-object", "-w", "--stdin"), ".nojekyll"))
    if cname:
        blob = git("hash-object", "-w", "--stdin", input=f"{cname.strip()}\n".encode())
        entries = [e for e in entries if e[2] != "CNAME"] + [("100644", blob, "CNAME")]
    elif "CNAME" not in names and parent:
        kept = git("ls-tree", parent, "--", "CNAME").split()
        if len(kept) >= 3 and kept[1] == "blob":
            entries.append(("100644", kept[2], "CNAME"))  # the custom domain stays configured
    tree = _write_tree(git, entries)

    if parent and git("rev-parse", f"{parent}^{{tree}}") == tree:
        say(f"the site is unchanged since {parent[:12]}: nothing to commit, nothing to push")
        return DeployResult(branch, tree, parent, None, False, None, gate)

    commit = git(
        "commit-tree",
        tree,
        *(["-p", parent] if parent else []),
        input=(message or f"Deploy the site with sitegen {__version__}\n").encode("utf-8"),
        env=_identity(git),
    )
    local = git.rev(f"refs/heads/{branch}")
    git("update-ref", "-m", "sitegen gh-deploy", f"refs/heads/{branch}", commit, local or _ZERO)
    if worktree is not None:
        # The output folder is the branch's worktree: bring its index along to the new tip.
        Git(worktree).run("reset", "-q")
    # Plumbing never triggers git's housekeeping: without it, loose objects pile up.
    git.run("gc", "--auto", "--quiet")
    say(f"committed {commit[:12]} to {branch} ({counted(len(entries), 'file')})")
    pushed = False
    if push:
        try:
            git("push", "--quiet", remote, f"refs/heads/{branch}:refs/heads/{branch}")
        except PublishError as exc:
            raise PublishError(
                f"{exc}. The commit is on the local {branch}; if the remote's {branch} has "
                f"commits you do not have, run `git fetch {remote} {branch}` and deploy again"
            ) from None
        pushed = True
        say(f"pushed {branch} to {remote}")
    return DeployResult(branch, tree, parent, commit, pushed, None, gate)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def _parent(git: Git, branch: str, remote: str) -> str | None:
    """The commit to build on: the local branch when it holds the remote's (as last fetched),
    else the remote's. A diverged local branch holds deploys never published; every commit
    is a whole site, so building on the remote's loses nothing online and fast-forwards."""
    local = git.rev(f"refs/heads/{branch}")
    tracking = git.rev(f"refs/remotes/{remote}/{branch}")
    if local and tracking and local != tracking:
        return local if git.succeeds("merge-base", "--is-ancestor", tracking, local) else tracking
    return local or tracking


def _output_cname(site: Path | None) -> bytes | None:
    """The ``CNAME`` file in the output folder, None when there is none. One that is no
    small regular file is refused: it would be published, for a domain not read from it."""
    if site is None or not os.path.lexists(site / "CNAME"):
        return None
    try:
        return read_bytes(site / "CNAME", site, CNAME_BYTES)
    except OSError as exc:
        raise PublishError(
            f"{site / 'CNAME'} holds no domain name ({exc}): write the site's custom domain "
            "in it, or remove it"
        ) from exc


def _branch_file(git: Git, commit: str | None, name: str) -> bytes | None:
    if commit is None:
        return None
    proc = git.run("cat-file", "blob", f"{commit}:{name}")
    return proc.stdout if proc.returncode == 0 else None


def _checked_out(git: Git, branch: str, site: Path) -> Path | None:
    """The worktree that has ``branch`` checked out when it is the site folder itself; one
    elsewhere is refused (its files would fall behind its branch)."""
    current: Path | None = None
    for line in git("worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            current = Path(line[len("worktree ") :])
        elif line == f"branch refs/heads/{branch}" and current is not None:
            if os.path.realpath(current) == os.path.realpath(site):
                return current
            raise PublishError(
                f"{branch} is checked out in {current}: build into that worktree (-o {current}), "
                f"or publish to another --branch"
            )
    return None


def _write_blobs(git: Git, site: Path, gate: GateReport) -> list[tuple[str, str, str]]:
    """Store every file the gate scanned; each blob must be the bytes the gate saw."""
    if not gate.files:
        return []
    root = site.resolve()
    paths = b"".join(os.fsencode(root / f.rel) + b"\n" for f in gate.files)  # any bytes a name has
    ids = git("hash-object", "-w", "--no-filters", "--stdin-paths", input=paths).split()
    entries = []
    for f, blob in zip(gate.files, ids, strict=True):
        if blob != f.blob:
            raise PublishError(
                f"{f.rel} changed while it was being published (another build?): deploy again"
            )
        entries.append(("100644", blob, f.rel))
    return entries


def _write_tree(git: Git, entries: list[tuple[str, str, str]]) -> str:
    """The tree of ``entries``, made in a throwaway index (the user's index is never touched)."""
    with tempfile.TemporaryDirectory(prefix="sitegen-deploy-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        info = b"".join(
            f"{mode} {blob}\t{rel}".encode("utf-8", "surrogateescape") + b"\0"
            for mode, blob, rel in entries
        )
        git("update-index", "-z", "--add", "--index-info", input=info, env=env)
        return git("write-tree", env=env)


def _identity(git: Git) -> dict[str, str]:
    """A committer for machines where git has none set (a fresh cluster account)."""
    env: dict[str, str] = {}
    if not git("config", "user.name", ok=(0, 1)):
        env["GIT_AUTHOR_NAME"] = env["GIT_COMMITTER_NAME"] = "sitegen"
    if not git("config", "user.email", ok=(0, 1)):
        env["GIT_AUTHOR_EMAIL"] = env["GIT_COMMITTER_EMAIL"] = "sitegen@localhost"
    return env
