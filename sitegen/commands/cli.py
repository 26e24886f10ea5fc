"""Command line: ``sitegen build | synth | serve | gh-deploy | check-site``. Parses options, calls the library.

Errors of the :class:`~sitegen.errors.SitegenError` family become one line on
stderr and exit code 2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path
from typing import NoReturn

from sitegen import __version__, collect_less
from sitegen.errors import SitegenError, printable


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2, no usage dump
        command = f"sitegen {self.prog.split()[-1]}" if " " in self.prog else "sitegen"
        self.exit(2, f"sitegen: {message} (see '{command} --help')\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="sitegen", description="Static website for SkyRL training runs.")
    p.add_argument("--version", action="version", version=f"sitegen {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    b = sub.add_parser("build", help="build the site for an archive")
    b.add_argument("archive", type=Path, help="folder holding job logs and trials")
    _site_options(b)
    b.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when the build has warnings, those already reported too (for CI)",
    )
    b.add_argument("-v", "--verbose", action="store_true", help=_VERBOSE)

    s = sub.add_parser("synth", help="write a synthetic archive (with its ground truth)")
    s.add_argument("out", type=Path, help="new (or empty) folder to write the archive into")
    for flag, default, what in _SYNTH_SIZES:
        s.add_argument(flag, type=type(default), default=default, help=what)
    s.add_argument(
        "--plants",
        action="store_true",
        help="add jobs that plant every insight and finding (sitegen/synth/plants.py)",
    )
    s.add_argument(
        "--real-shapes",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="add five jobs written as real SkyRL/vLLM/SLURM/Harbor output looks "
        "(docs/formats.md §2–§6)",
    )

    v = sub.add_parser(
        "serve", help="build, serve on localhost with live reload, rebuild on change"
    )
    v.add_argument("archive", type=Path, help="folder holding job logs and trials (watched)")
    _site_options(v)
    v.add_argument(
        "--port", type=_port, default=8000, help="port to serve on, 1-65535 (default: 8000)"
    )
    v.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default: 127.0.0.1, this machine only)",
    )
    d = sub.add_parser(
        "gh-deploy",
        help="build, check (publish gate), commit to gh-pages and push",
        description="Build ARCHIVE into the output folder, run the publish gate on it, commit "
        "exactly that folder as the tip of the gh-pages branch of the git repository in the "
        "current folder, and push it. Exit 2, nothing committed, when the gate finds a secret.",
    )
    d.add_argument("archive", type=Path, help="folder holding job logs and trials")
    _site_options(d)
    d.add_argument("--repo", type=Path, default=Path("."), help="git repository (default: .)")
    d.add_argument("--branch", default="gh-pages", help="branch to publish (default: gh-pages)")
    d.add_argument("--remote", default="origin", help="remote to push to (default: origin)")
    d.add_argument("--no-push", action="store_true", help="commit only, do not push")
    d.add_argument("--cname", default=None, help="custom domain: written to CNAME")
    d.add_argument(
        "--strict", action="store_true", help="exit 1, nothing committed, when the build warns"
    )
    d.add_argument("-v", "--verbose", action="store_true", help=_VERBOSE)

    c = sub.add_parser(
        "check-site",
        help="run the publish gate on a built site (secrets, GitHub's size limits)",
        description="Scan every file of SITE with the redactor's rules and GitHub's size limits, "
        "as gh-deploy does before it commits. Exit 2 when anything must not be published.",
    )
    c.add_argument("site", type=Path, help="the built site folder")
    c.add_argument(
        "--config",
        type=Path,
        default=None,
        help="sitegen.toml with redact_patterns, publish_allow (default: sitegen.toml in the "
        "current folder, if there is one)",
    )
    for q in (b, s, v, d, c):
        q.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


_VERBOSE = "print every warning, also those the last build already printed"
_SYNTH_SIZES = (
    ("--seed", 0, "random seed: one seed, one archive (default: 0)"),
    ("--jobs", 7, "job logs (at least 7; default: 7)"),
    ("--steps", 12, "steps per run (default: 12)"),
    ("--trials-per-step", 4, "Harbor trials per step (default: 4)"),
    ("--pad-mb", 0.0, "noise padding spread over the logs (MB)"),
    ("--trial-kb", 4.0, "size of each result.json (KB)"),
)


def _port(text: str) -> int:
    """A TCP port to listen on: 1-65535 (0 would pick a random one the message could not name)."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port: give a number from 1 to 65535")
    return port


def _site_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-o", "--out", type=Path, default=Path("site"), help="output folder (default: site)"
    )
    p.add_argument("--title", default=None, help="archive title shown on every page")
    p.add_argument(
        "--base-url",
        default=None,
        help="public URL of the site: adds sitemap, canonical and OpenGraph links",
    )
    p.add_argument(
        "--workers", type=int, default=0, help="parallel parse processes (default: CPU count)"
    )
    p.add_argument(
        "--executor",
        choices=("local", "ray"),
        default=None,
        help="where the parse stage runs: local processes (default) or a Ray cluster "
        "(needs sitegen[ray])",
    )
    p.add_argument(
        "--ray-address",
        default=None,
        help="with --executor ray: the cluster's address (default: start a local Ray)",
    )
    p.add_argument(
        "--transcripts",
        type=int,
        default=None,
        metavar="N",
        help="trial transcripts sampled per job (default: 48; 0: none). A build for "
        "publishing (--base-url, gh-deploy) writes none unless the config says "
        "publish_transcripts = true",
    )
    p.add_argument(
        "--site-budget",
        default=None,
        metavar="SIZE",
        help="the most the whole site may take, e.g. '800 MB' (default: 1 GB, GitHub Pages' "
        "limit): bulk data (trial and task tables, transcripts) goes in newest job first",
    )
    p.add_argument(
        "--config",
        type=Path,
        default=None,
        help="sitegen.toml with title, base_url, workers, redact_patterns, publish_allow, "
        "transcripts, publish_transcripts, site_budget "
        "(default: sitegen.toml in the current folder, if there is one)",
    )
    p.add_argument(
        "--clean", action="store_true", help="ignore the build cache: parse and render everything"
    )


def _options(args: argparse.Namespace):
    from sitegen.options import find_config, load_options

    config, found = find_config(args.config)
    given = {name: getattr(args, name) for name in _BUILD_OPTIONS}
    opts = load_options(config, strict=getattr(args, "strict", False), **given)
    _say_config(config, found)
    return opts


_BUILD_OPTIONS = (
    *("archive", "out", "title", "base_url", "workers", "executor", "ray_address", "clean"),
    *("transcripts", "site_budget"),
)


def _say_config(config: Path | None, found: bool) -> None:
    """Which config file the command read (one line), once it was read without error."""
    if config is not None:
        where = " (found in the current folder)" if found else ""
        print(f"config: {config}{where}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    # Fewer young collections from the start, the imports included (as build() does); the
    # thresholds come back on return, as main() may be called as a library.
    thresholds = gc.get_threshold()
    collect_less()
    try:
        return _main(argv)
    finally:
        gc.set_threshold(*thresholds)


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except SitegenError as exc:
        if args.debug:
            raise
        print(f"sitegen: error: {printable(str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:  # the machine said no (permissions, a full disk, a busy port)
        if args.debug:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        print(printable(f"sitegen: error: {where}{exc.strerror or exc}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sitegen: interrupted", file=sys.stderr)
        return 130


def entry() -> NoReturn:
    """The ``sitegen`` command and ``python -m sitegen``: :func:`main`, then exit with its code."""
    code = main()
    # gc.freeze(): the collector need not walk every object still alive at shutdown only for
    # the process to free them. Exit handlers still run; main() leaves the collector as it was.
    gc.freeze()
    sys.exit(code)


def _run(args: argparse.Namespace) -> int:
    if args.command == "synth":
        from sitegen.synth import summary_line, synth

        shape = ("seed", "jobs", "steps", "trials_per_step", "pad_mb", "trial_kb", "plants")
        truth = synth(args.out, real=args.real_shapes, **{k: getattr(args, k) for k in shape})
        print(summary_line(truth, args.out))
        return 0
    if args.command == "build":
        from sitegen.commands.build import build, closing_lines, warning_lines
        from sitegen.progress import Progress

        opts = _options(args)
        with Progress(sys.stderr) as progress:
            report = build(opts, progress=progress)
        for line in warning_lines(report, opts, args.verbose) + closing_lines(report, opts):
            print(line, file=sys.stderr)
        if opts.strict and report.warnings:  # those already reported too: CI stays red
            print(f"sitegen: --strict: {report.strict_failure()}", file=sys.stderr)
            return 1
        return 0
    if args.command == "gh-deploy":
        return _gh_deploy(args)
    if args.command == "check-site":
        return _check_site(args)
    if args.command == "serve":
        from sitegen.commands.serve import serve

        return serve(_options(args), host=args.host, port=args.port)
    return 2


def _gh_deploy(args: argparse.Namespace) -> int:
    from sitegen.commands.deploy import PublishBlocked, StrictStop, gh_deploy
    from sitegen.progress import Progress

    opts = _options(args)
    try:
        with Progress(sys.stderr) as progress:
            gh_deploy(
                opts,
                repo=args.repo,
                branch=args.branch,
                remote=args.remote,
                push=not args.no_push,
                cname=args.cname,
                progress=progress,
                verbose=args.verbose,
            )
    except PublishBlocked as exc:  # the gate's lines are printed already
        print(f"sitegen: error: {exc}", file=sys.stderr)
        return 2
    except StrictStop as exc:  # as `build --strict`: warnings are exit 1
        print(f"sitegen: {exc}", file=sys.stderr)
        return 1
    return 0


def _check_site(args: argparse.Namespace) -> int:
    from sitegen.options import find_config, load_config
    from sitegen.publish.gate import check_site, not_a_site
    from sitegen.redact import Redactor

    problem = not_a_site(args.site)
    if problem:
        raise SitegenError(problem)
    config, found = find_config(args.config)
    cfg = load_config(config)
    _say_config(config, found)
    report = check_site(
        args.site, Redactor(tuple(cfg.get("redact_patterns", ()))), cfg.get("publish_allow", ())
    )
    for line in report.lines():
        print(line, file=sys.stderr)
    print(report.summary(), file=sys.stderr)
    return 0 if report.ok else 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
