"""Harbor trial ``result.json`` files (formats.md §6).

Every direct child directory of a trials directory is one trial. A trials
directory may also hold a job-level ``result.json`` (not a trial),
``eval_sessions/`` (eval trials, counted apart) and ``trials_step<N>_*.tar[.gz]``
archives of older trials, which are read member by member.
"""

from __future__ import annotations

import json
import math
import os
import re
import tarfile
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from sitegen.errors import BuildWarning
from sitegen.model.parsed import TrialResult, TrialSet
from sitegen.model.vocabulary import policy_kind
from sitegen.read.scrub import scrub_trial
from sitegen.redact import Redactor
from sitegen.safeio import UnsafeInput, open_regular, read_bytes

MAX_RESULT_BYTES = 64 << 20  # a result.json larger than this is reported, not read
MAX_WARNINGS = 20
MAX_TAR_UNPACKED = 16 << 30  # a trials archive that unpacks to more is read up to there
TAR_RE = re.compile(r"^trials_step\d+_.*\.tar(\.gz)?$")


class TrialFormatError(ValueError):
    """A damaged ``result.json``; ``line`` is where the JSON broke, when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def decode_result(data: bytes, name: str, is_eval: bool) -> TrialResult | None:
    """Read one ``result.json``; ``None`` when it is a job-level summary.

    Raises :class:`TrialFormatError` (with a line where known) when damaged.
    """
    if not data.strip():
        raise TrialFormatError("empty result.json")
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        try:  # the stdlib accepts NaN/Infinity and reports a line number
            obj = json.loads(data.decode("utf-8", errors="replace"))
        except json.JSONDecodeError as exc:
            raise TrialFormatError(f"malformed JSON ({exc.msg})", exc.lineno) from None
        except RecursionError:
            raise TrialFormatError("malformed JSON (nested too deeply)") from None
    if not isinstance(obj, dict):
        raise TrialFormatError(f"result.json holds a {type(obj).__name__}, not an object")
    if "trial_name" not in obj and "n_total_trials" in obj:
        return None
    agent = _dict(obj.get("agent_result"))
    meta = _dict(agent.get("metadata"))
    exc_info = _dict(obj.get("exception_info"))
    reward = _reward(obj.get("verifier_result"))
    turns = _int(meta.get("n_episodes"))
    tokens_in, tokens_out = _tokens(agent)
    steps = obj.get("step_results")
    steps = [_dict(st) for st in steps] if isinstance(steps, list) else []
    if steps:
        # Multi-step tasks (formats.md §8): Harbor leaves the top-level exception null and
        # records failures on the steps (its recorded_exceptions(): trial first, then steps
        # in order); the top-level reward is Harbor's own aggregate (mean or final step), so
        # it is read as the file states it. Tokens and turns add up over the steps.
        if not exc_info.get("exception_type"):
            exc_info = next(
                (e for st in steps if (e := _dict(st.get("exception_info"))).get("exception_type")),
                {},
            )
        if turns is None:
            ts = [
                _int(_dict(_dict(st.get("agent_result")).get("metadata")).get("n_episodes"))
                for st in steps
            ]
            if any(t is not None for t in ts):
                turns = sum(t or 0 for t in ts)
        if tokens_in is None and tokens_out is None:
            pairs = [_tokens(_dict(st.get("agent_result"))) for st in steps]
            tokens_in = _sum_known(p[0] for p in pairs)
            tokens_out = _sum_known(p[1] for p in pairs)
    exception = exc_info.get("exception_type") or None
    if obj.get("reward_valid") is False:
        # Harbor 0.26 says the reward does not count (no verifier, or an exception whose
        # policy voids it): no reward, neither success nor failure.
        reward = None
    if turns == 0 and exception:
        turns = None  # older Harbor recorded 0 turns when the agent loop raised
    return TrialResult(
        name=str(obj.get("trial_name") or name),
        task=str(obj.get("task_name") or ""),
        reward=reward,
        exception=str(exception) if exception else None,
        turns=turns,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        duration_s=_duration(obj.get("started_at"), obj.get("finished_at")),
        eval=is_eval,
        **_insight_fields(obj, agent),
        exception_kind=policy_kind(exc_info.get("policy")) if exception else None,
    )


def _tokens(agent: dict) -> tuple[int | None, int | None]:
    """Input and output tokens of one agent context; from ``model_usage`` (0.26) when the totals are absent."""
    n_in, n_out = _int(agent.get("n_input_tokens")), _int(agent.get("n_output_tokens"))
    usage = agent.get("model_usage")
    if isinstance(usage, dict) and usage and n_in is None and n_out is None:
        models = [_dict(u) for u in usage.values()]
        n_in = _sum_known(_int(u.get("n_input_tokens")) for u in models)
        n_out = _sum_known(_int(u.get("n_output_tokens")) for u in models)
    return n_in, n_out


def _sum_known(values) -> int | None:
    xs = [v for v in values if v is not None]
    return sum(xs) if xs else None


def _insight_fields(obj: dict, agent: dict) -> dict:
    """Start time, stage durations and cached tokens (the insights' inputs, docs/design.md)."""
    start = _time(obj.get("started_at"))
    stages = {}
    for key, field_name in (
        ("environment_setup", "env_setup_s"),
        ("agent_setup", "agent_setup_s"),
        ("agent_execution", "agent_exec_s"),
        ("verifier", "verifier_s"),
    ):
        st = _dict(obj.get(key))
        d = _duration(st.get("started_at"), st.get("finished_at"))
        stages[field_name] = d if d is not None and d >= 0 else None
    return {
        # the wall-clock reading as written: logs are naive local time, and a trial's
        # "Z" is compared against them as a reading (docs/design.md, trial attribution)
        "started_at": start.replace(tzinfo=None) if start is not None else None,
        "cache_tokens": _int(agent.get("n_cache_tokens")),
        **stages,
    }


def _dict(v: object) -> dict:
    return v if isinstance(v, dict) else {}


def _int(v: object) -> int | None:
    """A count, or None when absent or not a finite number (``NaN``/``Infinity`` occur)."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if not -(1 << 63) <= v < 1 << 63:
        return None  # no count is that large; it could not be written out as JSON either
    return int(v)


def _reward(v: object) -> float | None:
    if not isinstance(v, dict):
        return None
    rewards = v.get("rewards")
    r = rewards.get("reward") if isinstance(rewards, dict) else v.get("reward")
    if isinstance(r, bool) or not isinstance(r, int | float):
        return None
    return float(r)


def _time(v: object) -> datetime | None:
    if not isinstance(v, str):
        return None
    try:
        t = datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t.replace(tzinfo=None) if t.tzinfo is None else t


def _duration(a: object, b: object) -> float | None:
    ta, tb = _time(a), _time(b)
    if ta is None or tb is None or (ta.tzinfo is None) != (tb.tzinfo is None):
        return None
    return (tb - ta).total_seconds()


Outcome = tuple  # ("ok", TrialResult) | ("eval",) | ("job",) | ("bad", message, line)
# rel path -> (size, mtime_ns, outcome), or for a tar archive (size, mtime_ns, [(member, outcome)])
Known = dict[str, tuple[int, int, Any]]


class _Collector:
    def __init__(self, rel: str, known: Known | None, redactor: Redactor) -> None:
        self.rel = rel
        self.redactor = redactor  # names enter the model redacted (read/scrub.py)
        self.known = known or {}
        self.entries: Known = {}
        self.results: list[TrialResult] = []
        self.eval = 0
        self.malformed = 0
        self.missing = 0
        self.archives = 0
        self.warnings: list[BuildWarning] = []
        self.nwarn = 0

    def warn(self, path: str, line: int | None, msg: str) -> None:
        self.nwarn += 1
        if self.nwarn <= MAX_WARNINGS:
            self.warnings.append(
                BuildWarning(self.redactor.path(path), line, self.redactor.text(msg))
            )

    def cached(self, rel: str, st: os.stat_result) -> Any:
        """The outcome recorded for this file when it is unchanged (a trial never changes once written)."""
        hit = self.known.get(rel)
        if hit is not None and hit[0] == st.st_size and hit[1] == st.st_mtime_ns:
            self.entries[rel] = hit
            return hit[2]
        return None

    @staticmethod
    def decode(data: bytes, name: str, is_eval: bool) -> Outcome:
        try:
            r = decode_result(data, name, is_eval)
        except TrialFormatError as exc:
            return ("bad", str(exc), exc.line)
        if r is None:
            return ("job",)
        return ("eval",) if is_eval else ("ok", r)

    def apply(self, path: str, outcome: Outcome) -> None:
        kind = outcome[0]
        if kind == "ok":
            self.results.append(scrub_trial(outcome[1], self.redactor))
        elif kind == "eval":
            self.eval += 1
        elif kind == "job":
            self.warn(path, None, "job-level result.json inside a trial directory: not a trial")
        elif kind == "bad":
            self.malformed += 1
            self.warn(path, outcome[2], outcome[1])
        elif kind == "missing":
            self.missing += 1

    def freeze(self) -> TrialSet:
        if self.nwarn > MAX_WARNINGS:
            self.warnings.append(
                BuildWarning(
                    self.redactor.path(self.rel),
                    None,
                    f"{self.nwarn - MAX_WARNINGS} more trial warnings not shown",
                )
            )
        # Sorted by name so a sharded (parallel) read gives the same order.
        return TrialSet(
            self.redactor.path(self.rel),
            tuple(sorted(self.results, key=lambda r: r.name)),
            self.eval,
            self.malformed,
            self.missing,
            self.archives,
            tuple(self.warnings),
        )


def list_trial_dirs(root: Path) -> Iterator[tuple[str, str, bool]]:
    """Every trial directory under a trials dir, sorted, as ``(path below root, name, is_eval)``.

    Plain strings: an archive has tens of thousands of trials, and Path objects
    cost more than the listing itself.
    """
    for entry in _sorted_dirs(str(root)):
        if entry.name == "eval_sessions":
            for session in _sorted_dirs(entry.path):
                for trial in _sorted_dirs(session.path):
                    yield f"eval_sessions/{session.name}/{trial.name}", trial.name, True
        else:
            yield entry.name, entry.name, False


def _sorted_dirs(path: str) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return sorted((e for e in it if e.is_dir(follow_symlinks=False)), key=lambda e: e.name)
    except OSError:
        return []


DecodeMap = Callable[[list[tuple[str, str, bool]]], list[Outcome]]


def decode_files(archive_root: str, items: list[tuple[str, str, bool]]) -> list[Outcome]:
    """Read and decode ``result.json`` files: ``(rel path, trial name, is_eval)`` → outcome.

    A plain function of picklable arguments, so a process pool can run it on shards.
    """
    root = Path(archive_root)
    out: list[Outcome] = []
    for rel, name, is_eval in items:
        try:
            data = read_bytes(root / rel, root, MAX_RESULT_BYTES)  # no link out, no FIFO
            out.append(_Collector.decode(data, name, is_eval))
        except OSError as exc:
            out.append(("bad", f"cannot read: {exc.strerror}", None))
    return out


def parse_trials(
    root: Path,
    archive_root: Path,
    known: Known | None = None,
    decode_map: DecodeMap | None = None,
    redactor: Redactor | None = None,
) -> tuple[TrialSet, Known]:
    """Parse a trials directory.

    A ``result.json`` whose outcome ``known`` holds from an earlier build is
    taken from there (complete ones are written once and never change; damaged
    ones are re-read when their size or mtime changed); the rest are read through
    ``decode_map`` (default: in this process; the build passes one that
    spreads shards over worker processes). Returns the trial set and the
    outcomes to keep for the next build.
    """
    rel = _rel(root, archive_root)
    col = _Collector(rel, known, redactor or Redactor())
    plan: list[tuple[str, Any]] = []  # (rel path, outcome or index into todo)
    todo: list[tuple[str, str, bool]] = []
    stats: list[os.stat_result] = []
    for sub, name, is_eval in list_trial_dirs(root):
        frel = f"{rel}/{sub}/result.json" if rel != "." else f"{sub}/result.json"
        hit = col.known.get(frel)
        if hit is not None and hit[2][0] in ("ok", "eval", "job"):
            # A complete result.json is written once and never changes: not even stat'ed again.
            # (Damaged ones are re-checked: they may be a file still being written.)
            col.entries[frel] = hit
            plan.append((frel, hit[2]))
            continue
        try:
            st = os.stat(os.path.join(root, sub, "result.json"))
        except FileNotFoundError:
            if not is_eval:
                plan.append((frel, ("missing",)))
            continue
        except OSError as exc:
            plan.append((frel, ("bad", f"cannot read: {exc.strerror}", None)))
            continue
        outcome = col.cached(frel, st)
        if outcome is None and st.st_size > MAX_RESULT_BYTES:
            outcome = (
                "bad",
                f"result.json of {st.st_size >> 20} MiB is over the {MAX_RESULT_BYTES >> 20} MiB limit: not read",
                None,
            )
        if outcome is None:
            plan.append((frel, len(todo)))
            todo.append((frel, name, is_eval))
            stats.append(st)
        else:
            plan.append((frel, outcome))
    decoded = (
        (decode_map or (lambda items: decode_files(str(archive_root), items)))(todo) if todo else []
    )
    for (frel, _name, _ev), st, outcome in zip(todo, stats, decoded, strict=True):
        if not (outcome[0] == "bad" and str(outcome[1]).startswith("cannot read")):
            col.entries[frel] = (st.st_size, st.st_mtime_ns, outcome)
    for frel, what in plan:
        col.apply(frel, decoded[what] if isinstance(what, int) else what)
    try:
        names = sorted(os.listdir(root))
    except OSError as exc:
        col.warn(rel, None, f"cannot list trials directory: {exc.strerror}")
        names = []
    for name in names:
        if TAR_RE.match(name) and not (root / name).is_dir():
            col.archives += 1
            _read_tar(col, root / name, archive_root)
    return col.freeze(), col.entries


def _read_tar(col: _Collector, path: Path, archive_root: Path) -> None:
    rel = _rel(path, archive_root)
    try:
        st = path.stat()
        fh = open_regular(path, archive_root)  # no link out of the archive, no FIFO
    except OSError as exc:
        col.warn(rel, None, f"cannot read: {exc.strerror}")
        return
    with fh:
        _read_tar_members(col, fh, rel, st)


def _read_tar_members(col: _Collector, fh: Any, rel: str, st: os.stat_result) -> None:
    members = col.cached(rel, st)
    if members is None:
        members = []
        unpacked = 0
        try:
            with tarfile.open(fileobj=fh, mode="r|*") as tar:
                for member in tar:
                    unpacked += max(0, member.size)
                    if unpacked > MAX_TAR_UNPACKED:  # a compression bomb: stop reading
                        raise UnsafeInput(
                            f"unpacks to over {MAX_TAR_UNPACKED >> 30} GiB: read up to there"
                        )
                    if not member.isfile() or not member.name.endswith("result.json"):
                        continue
                    parts = member.name.strip("/").split("/")
                    if len(parts) < 2:
                        continue  # a job-level result.json at the archive's top
                    if member.size > MAX_RESULT_BYTES:
                        members.append(
                            (
                                member.name,
                                ("bad", "result.json over the size limit: not read", None),
                            )
                        )
                        continue
                    mf = tar.extractfile(member)
                    if mf is not None:
                        members.append(
                            (
                                member.name,
                                col.decode(mf.read(), parts[-2], "eval_sessions" in parts),
                            )
                        )
        except UnsafeInput as exc:
            col.warn(rel, None, f"trials archive {exc.strerror}")
        except (tarfile.TarError, OSError, EOFError) as exc:
            col.warn(rel, None, f"damaged trials archive ({exc}): read up to the damage")
        else:
            col.entries[rel] = (st.st_size, st.st_mtime_ns, members)
    for name, outcome in members:
        col.apply(f"{rel}:{name}", outcome)


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
