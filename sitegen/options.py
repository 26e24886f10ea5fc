"""Build options: the CLI's flags and ``sitegen.toml``, merged into one value by
:func:`load_options`, which Python callers use exactly as the CLI does.
"""

from __future__ import annotations

import importlib.util
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from sitegen.errors import ConfigError, OutputError

DEFAULT_TITLE = "SkyRL run archive"
CONFIG_NAME = "sitegen.toml"  # read from the current folder when no --config is given
CONFIG_KEYS = {
    "title",
    "base_url",
    "redact_patterns",
    "workers",
    "publish_allow",
    "transcripts",
    "publish_transcripts",
    "site_budget",
}
DEFAULT_TRANSCRIPTS = 48  # sampled trial transcripts per job (insights/sampling.py)
MAX_TRANSCRIPTS = 10_000
DEFAULT_SITE_BUDGET = 10**9  # bytes: GitHub Pages' limit for a published site


class BuildOptions(msgspec.Struct, frozen=True):
    """What to build and how: the CLI's options (and ``sitegen.toml``), as one value."""

    archive: Path
    out: Path = Path("site")
    title: str = DEFAULT_TITLE
    base_url: str | None = None
    workers: int = 0  # 0: the CPU count
    redact_patterns: tuple[str, ...] = ()
    publish_allow: tuple[str, ...] = ()  # the publish gate's findings to let through
    strict: bool = False
    clean: bool = False  # ignore (and wipe) the build cache
    now: float | None = None  # for tests: the time "running" is judged against
    executor: str = "local"  # the parse stage's pool: "local" processes or a "ray" cluster
    ray_address: str | None = None  # with executor "ray": a cluster's address (None: start one)
    transcripts: int = DEFAULT_TRANSCRIPTS  # trial transcripts sampled per job (0: none)
    # A build for publishing (a base URL, gh-deploy) leaves transcripts out unless this is set:
    # task texts, solutions and terminal output are often not meant to be public.
    publish_transcripts: bool = False
    publishing: bool = False  # gh-deploy's build: published wherever its address is
    site_budget: int = DEFAULT_SITE_BUDGET  # bytes the whole site may take (write/budget.py)

    def transcripts_wanted(self) -> int:
        """The transcripts per job this build writes: none when publishing without
        ``publish_transcripts``."""
        publishing = self.publishing or self.base_url is not None
        return 0 if publishing and not self.publish_transcripts else self.transcripts


MAX_CONFIG_BYTES = 1 << 20
MAX_WORKERS = 512
EXECUTORS = ("local", "ray")
URL_RE = re.compile(r"(?i:https?)://[^\s/?#]+(?:/[^\s]*)?")  # schemes are case-blind
# Values no publish_allow pattern may match: one that does would wave through any secret.
_BLANKET_PROBES = (
    "",
    "x",
    "hunter2",
    "Zq8vK3mT9wXbR2pL6nYc4dF7gH1jS5aE",
    "ghp_Zq8vK3mT9wXbR2pL6nYc4dF7gH1jS5aE0uI2",
)


def find_config(given: Path | None) -> tuple[Path | None, bool]:
    """The config file to read (``--config``, else ``sitegen.toml`` in the current folder if
    any), and whether it was found rather than given."""
    if given is not None:
        return given, False
    here = Path(CONFIG_NAME)
    return (here, True) if here.exists() or here.is_symlink() else (None, False)


def load_config(path: Path | None) -> dict:
    """Read a ``sitegen.toml``; any bad key or value is a :class:`ConfigError` naming it and the fix."""
    if path is None:
        return {}
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO or device would hang or never end
            raise ConfigError(f"config {path} is not a regular file: give a sitegen.toml file")
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"config {path} is over 1 MiB: is it the right file?")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"config {path} is not UTF-8 text (byte {exc.start}): save it as UTF-8"
        ) from None
    import tomllib  # here: most builds have no config file (its import is a rebuild's share)

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config {path} is not valid TOML: {exc}") from None
    unknown = set(data) - CONFIG_KEYS
    if unknown:
        raise ConfigError(
            f"config {path}: unknown key {sorted(unknown)[0]!r} (known: {', '.join(sorted(CONFIG_KEYS))})"
        )
    where = f"config {path}"
    if "title" in data:
        check_title(data["title"], where)
    if "base_url" in data:
        check_base_url(data["base_url"], where)
    if "workers" in data:
        check_workers(data["workers"], where)
    check_patterns(data.get("redact_patterns", []), where)
    if "transcripts" in data:
        check_transcripts(data["transcripts"], where)
    if "publish_transcripts" in data and not isinstance(data["publish_transcripts"], bool):
        raise ConfigError(
            f"{where}: publish_transcripts must be true or false, e.g. publish_transcripts = true"
        )
    if "site_budget" in data:
        data["site_budget"] = parse_budget(data["site_budget"], where)
    allow = data.get("publish_allow", [])
    if not isinstance(allow, list) or not all(isinstance(p, str) for p in allow):
        raise ConfigError(f"{where}: publish_allow must be a list of regular expressions")
    compile_allow(allow, where)
    return data


def check_title(v: object, where: str) -> None:
    if not isinstance(v, str) or not v.strip():
        raise ConfigError(f'{where}: title must be a non-empty string, e.g. title = "Team runs"')


def check_base_url(v: object, where: str) -> None:
    """The public URL: ``http(s)://host/path``, a folder's (no page, query or fragment: every
    page's address is this and its path), holding no credential (every page would publish it;
    never repeated)."""
    from sitegen.redact import Redactor

    shown = Redactor().text(v) if isinstance(v, str) else v
    if not isinstance(v, str) or not URL_RE.fullmatch(v):
        raise ConfigError(
            f"{where}: base_url must be the site's public URL as a string, "
            f'e.g. base_url = "https://org.github.io/repo/" (got {shown!r})'
        )
    if shown != v:
        raise ConfigError(
            f"{where}: base_url holds a credential, which every page's links would publish "
            f"(got {shown!r}): give the site's public URL, "
            'e.g. base_url = "https://org.github.io/repo/"'
        )
    if "?" in v or "#" in v:
        raise ConfigError(
            f"{where}: base_url is the address of the site's folder, with no '?' or '#' "
            f'(got {shown!r}), e.g. base_url = "https://org.github.io/repo/"'
        )
    folder, _, last = v.rpartition("/")
    if last.lower().endswith((".html", ".htm")) and folder.count("/") >= 2:
        raise ConfigError(
            f"{where}: base_url is the address of the site's folder, not of a page "
            f"(got {shown!r}): give {folder + '/'!r}"
        )


def check_workers(v: object, where: str) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_WORKERS:
        raise ConfigError(
            f"{where}: workers must be a whole number from 0 (one per CPU) to {MAX_WORKERS}, "
            f"e.g. workers = 4 (got {v!r})"
        )


def check_transcripts(v: object, where: str) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_TRANSCRIPTS:
        raise ConfigError(
            f"{where}: transcripts must be a whole number from 0 (none) to {MAX_TRANSCRIPTS}, "
            f"e.g. transcripts = 48 (got {v!r})"
        )


_SIZE_RE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kKmMgG]?)[bB]?\s*")
_SIZE_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}


def parse_budget(v: object, where: str) -> int:
    """A site budget: bytes, or a size such as ``"800 MB"`` or ``"1.5 GB"`` (powers of ten,
    as GitHub counts); at least 1 MB."""
    n: float | None = None
    if isinstance(v, int) and not isinstance(v, bool):
        n = v
    elif isinstance(v, str) and (m := _SIZE_RE.fullmatch(v)):
        n = float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]
    if n is None or n < 10**6 or n > 10**15:
        raise ConfigError(
            f'{where}: site_budget must be a size of at least 1 MB, e.g. site_budget = "1 GB" '
            f"or 800000000 (got {v!r})"
        )
    return int(n)


def check_patterns(pats: object, where: str) -> None:
    """Each pattern compiles alone and matches something (the redactor runs each on its own)."""
    if not isinstance(pats, list | tuple) or not all(isinstance(p, str) for p in pats):
        raise ConfigError(
            f'{where}: redact_patterns must be a list of regular expressions, e.g. ["corp-[0-9]+"]'
        )
    for i, p in enumerate(pats, 1):
        try:
            rx = re.compile(p)
        except re.error as exc:
            raise ConfigError(
                f"{where}: redact pattern {i} {p!r} is not a valid regular expression ({exc}): fix or remove it"
            ) from None
        if rx.fullmatch(""):
            raise ConfigError(
                f"{where}: redact pattern {i} {p!r} matches the empty string: it would hide nothing; make it stricter"
            )


def compile_allow(patterns: Iterable[str], where: str | None = None) -> tuple[re.Pattern[str], ...]:
    """The ``publish_allow`` patterns, compiled; a broken or blanket pattern (one that would
    let any value through) is a :class:`ConfigError` naming ``where`` it was written."""
    key = f"{where}: publish_allow" if where else "publish_allow"
    out = []
    for p in patterns:
        if not isinstance(p, str):
            raise ConfigError(f"{key}: {p!r} is not a string")
        try:
            rx = re.compile(p)
        except re.error as exc:
            raise ConfigError(f"{key}: pattern {p!r} is invalid: {exc}") from None
        probe = next((s for s in _BLANKET_PROBES if rx.fullmatch(s)), None)
        if probe is not None:
            raise ConfigError(
                f"{key}: pattern {p!r} would allow any value (it matches {probe!r}); "
                "write one that matches only the flagged value"
            )
        out.append(rx)
    return tuple(out)


def check_output(out: Path, archive: Path) -> None:
    """Refuse, before anything is read or written, an output folder no build can use: a file,
    a folder below a file, the archive, or a folder holding it (it would be published)."""
    real = Path(os.path.realpath(out))
    if real.exists() and not real.is_dir():
        raise OutputError(f"{real} exists and is not a folder (choose another -o folder)")
    up = real.parent
    while not up.exists() and up.parent != up:
        up = up.parent
    if not up.is_dir():
        raise OutputError(
            f"cannot create {real}: {up} is a file, not a folder (choose another -o folder)"
        )
    source = Path(os.path.realpath(archive))
    if real == source:
        raise OutputError(
            f"cannot build into the archive itself ({real}): choose a folder inside it "
            "(-o ARCHIVE/site) or elsewhere"
        )
    if source.is_relative_to(real):
        raise OutputError(
            f"cannot build into {real}: it holds the archive ({source}), which would be "
            "published with the site; choose a folder inside the archive (-o ARCHIVE/site) "
            "or beside it"
        )


def load_options(config_path: Path | None = None, **overrides: Any) -> BuildOptions:
    """Options from ``sitegen.toml`` (if given) with ``overrides`` on top. An override of
    ``None`` (or ``0`` for ``workers``, an empty title) means "not given", as on the CLI."""
    known = set(BuildOptions.__struct_fields__)
    unknown = set(overrides) - known
    if unknown:
        raise ConfigError(f"unknown build option {sorted(unknown)[0]!r}")
    if overrides.get("archive") is None:
        raise ConfigError("an archive folder is required")
    cfg = load_config(config_path)
    # (0 transcripts is a value, not "not given")
    given = {
        k: v
        for k, v in overrides.items()
        if v is not None and (k == "transcripts" or v not in ("", 0))
    }
    merged: dict[str, Any] = {
        "title": cfg.get("title") or DEFAULT_TITLE,
        "base_url": cfg.get("base_url"),
        "workers": cfg.get("workers", 0),
        "redact_patterns": tuple(cfg.get("redact_patterns", ())),
        "publish_allow": tuple(cfg.get("publish_allow", ())),
        "transcripts": cfg.get("transcripts", DEFAULT_TRANSCRIPTS),
        "publish_transcripts": cfg.get("publish_transcripts", False),
        "site_budget": cfg.get("site_budget", DEFAULT_SITE_BUDGET),
    }
    merged.update(given)
    if "transcripts" in given:
        check_transcripts(given["transcripts"], "--transcripts")
    if "site_budget" in given:
        merged["site_budget"] = parse_budget(given["site_budget"], "--site-budget")
    # Values given from Python or the command line get the config file's checks too.
    if "title" in given:
        check_title(given["title"], "--title")
    if merged["base_url"] is not None:
        check_base_url(merged["base_url"], "--base-url" if "base_url" in given else "config")
    check_workers(merged["workers"], "--workers" if "workers" in given else "config")
    check_executor(merged.get("executor", "local"), merged.get("ray_address"))
    merged["redact_patterns"] = tuple(merged["redact_patterns"])
    check_patterns(merged["redact_patterns"], "redact_patterns")
    merged["publish_allow"] = tuple(merged["publish_allow"])
    if "publish_allow" in given:
        compile_allow(merged["publish_allow"])
    for flag in ("strict", "clean", "publishing"):
        merged[flag] = bool(overrides.get(flag, False))
    merged["archive"] = Path(merged["archive"])
    if "out" in merged:
        merged["out"] = Path(merged["out"])
    options = BuildOptions(**merged)
    check_output(options.out, options.archive)
    return options


def check_executor(executor: str, ray_address: str | None) -> None:
    """The parse stage's pool can be had: a known executor, and Ray installed for ``ray``."""
    if executor not in EXECUTORS:
        raise ConfigError(f"--executor {executor!r}: choose one of {', '.join(EXECUTORS)}")
    if ray_address and executor != "ray":
        raise ConfigError("--ray-address is for --executor ray: add it, or drop the address")
    if executor == "ray" and importlib.util.find_spec("ray") is None:
        raise ConfigError(
            "--executor ray needs Ray: pip install 'sitegen[ray]' (or use the local pool)"
        )
