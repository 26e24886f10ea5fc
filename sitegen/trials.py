"""Harbor trial ``result.json`` files (formats.md §6).

Every direct child directory of a trials directory is one trial. A trials
directory may also hold a job-level ``result.json`` (not a trial),
``eval_sessions/`` (eval trials, counted apart) and ``trials_step<N>_*.tar[.gz]``
archives of older trials, which are read member by member.
"""

from __future__ import annotations

import json
import os
import re
import tarfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import orjson

from .errors import BuildWarning
from .model import TrialResult, TrialSet

MAX_RESULT_BYTES = 64 << 20  # a result.json larger than this is reported, not read
MAX_WARNINGS = 20
TAR_RE = re.compile(r"^trials_step\d+_.*\.tar(\.gz)?$")

# formats.md §6: sandbox and setup failures are infrastructure, the agent's
# own timeouts and overflows are the model's. Verifier and reward-file
# problems come from the grading harness, so they count as infrastructure;
# an LLM request ``Timeout`` is the serving stack's. Anything else is "other".
INFRA_EXCEPTIONS = frozenset(
    {
        "AgentSetupTimeoutError",
        "EnvironmentStartTimeoutError",
        "VerifierTimeoutError",
        "RewardFileNotFoundError",
        "RewardFileEmptyError",
        "VerifierOutputParseError",
        "Timeout",
    }
)
MODEL_EXCEPTIONS = frozenset(
    {
        "AgentTimeoutError",
        "ContextLengthExceededError",
        "OutputLengthExceededError",
    }
)


def exception_kind(name: str | None) -> str:
    """``none``, ``infrastructure``, ``model`` or ``other`` for an exception type."""
    if not name:
        return "none"
    if name.startswith("Daytona") or name in INFRA_EXCEPTIONS:
        return "infrastructure"
    if name in MODEL_EXCEPTIONS:
        return "model"
    return "other"


class TrialFormatError(ValueError):
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
    exc = _dict(obj.get("exception_info"))
    exception = exc.get("exception_type") if exc else None
    reward = _reward(obj.get("verifier_result"))
    turns = _int(meta.get("n_episodes"))
    steps = obj.get("step_results")
    if isinstance(steps, list) and steps:
        # Multi-step tasks: the top level may be empty; take the last graded
        # step's reward, the first exception and the sum of turns.
        if reward is None:
            for st in reversed(steps):
                reward = _reward(_dict(st).get("verifier_result"))
                if reward is not None:
                    break
        if exception is None:
            for st in steps:
                e = _dict(_dict(st).get("exception_info"))
                if e.get("exception_type"):
                    exception = e["exception_type"]
                    break
        if turns is None:
            ts = [
                _int(_dict(_dict(_dict(st).get("agent_result")).get("metadata")).get("n_episodes"))
                for st in steps
            ]
            if any(t is not None for t in ts):
                turns = sum(t or 0 for t in ts)
    if turns == 0 and exception:
        turns = None  # older Harbor recorded 0 turns when the agent loop raised
    return TrialResult(
        name=str(obj.get("trial_name") or name),
        task=str(obj.get("task_name") or ""),
        reward=reward,
        exception=str(exception) if exception else None,
        turns=turns,
        input_tokens=_int(agent.get("n_input_tokens")),
        output_tokens=_int(agent.get("n_output_tokens")),
        duration_s=_duration(obj.get("started_at"), obj.get("finished_at")),
        eval=is_eval,
    )


def _dict(v: object) -> dict:
    return v if isinstance(v, dict) else {}


def _int(v: object) -> int | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
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


class _Collector:
    def __init__(self, rel: str) -> None:
        self.rel = rel
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
            self.warnings.append(BuildWarning(path, line, msg))

    def take(self, data: bytes, name: str, path: str, is_eval: bool) -> None:
        try:
            r = decode_result(data, name, is_eval)
        except TrialFormatError as exc:
            self.malformed += 1
            self.warn(path, exc.line, str(exc))
            return
        if r is None:
            self.warn(path, None, "job-level result.json inside a trial directory: not a trial")
        elif is_eval:
            self.eval += 1
        else:
            self.results.append(r)

    def freeze(self) -> TrialSet:
        if self.nwarn > MAX_WARNINGS:
            self.warnings.append(
                BuildWarning(
                    self.rel, None, f"{self.nwarn - MAX_WARNINGS} more trial warnings not shown"
                )
            )
        # Sorted by name so a sharded (parallel) read gives the same order.
        return TrialSet(
            self.rel,
            tuple(sorted(self.results, key=lambda r: r.name)),
            self.eval,
            self.malformed,
            self.missing,
            self.archives,
            tuple(self.warnings),
        )


def list_trial_dirs(root: Path) -> Iterator[tuple[Path, bool]]:
    """Every trial directory under a trials dir, as ``(path, is_eval)``, sorted."""
    for entry in _sorted_dirs(root):
        if entry.name == "eval_sessions":
            for session in _sorted_dirs(Path(entry.path)):
                for trial in _sorted_dirs(Path(session.path)):
                    yield Path(trial.path), True
        else:
            yield Path(entry.path), False


def _sorted_dirs(path: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return sorted((e for e in it if e.is_dir(follow_symlinks=False)), key=lambda e: e.name)
    except OSError:
        return []


def parse_trials(root: Path, archive_root: Path, shard: tuple[int, int] | None = None) -> TrialSet:
    """Parse a trials directory; ``shard=(i, n)`` reads every n-th trial from the i-th.

    Shards of one directory are merged with :func:`merge_trial_sets`; the tar
    archives are read by shard 0 only.
    """
    rel = _rel(root, archive_root)
    col = _Collector(rel)
    for k, (trial, is_eval) in enumerate(list_trial_dirs(root)):
        if shard is not None and k % shard[1] != shard[0]:
            continue
        _read_trial_dir(col, trial, is_eval, archive_root)
    if shard is None or shard[0] == 0:
        try:
            names = sorted(os.listdir(root))
        except OSError as exc:
            col.warn(rel, None, f"cannot list trials directory: {exc.strerror}")
            names = []
        for name in names:
            if TAR_RE.match(name) and (root / name).is_file():
                col.archives += 1
                _read_tar(col, root / name, archive_root)
    return col.freeze()


def _read_trial_dir(col: _Collector, trial: Path, is_eval: bool, archive_root: Path) -> None:
    f = trial / "result.json"
    rel = _rel(f, archive_root)
    try:
        st = f.stat()
    except FileNotFoundError:
        if not is_eval:
            col.missing += 1
        return
    except OSError as exc:
        col.malformed += 1
        col.warn(rel, None, f"cannot read: {exc.strerror}")
        return
    if st.st_size > MAX_RESULT_BYTES:
        col.malformed += 1
        col.warn(
            rel,
            None,
            f"result.json of {st.st_size >> 20} MiB is over the {MAX_RESULT_BYTES >> 20} MiB limit: not read",
        )
        return
    try:
        data = f.read_bytes()
    except OSError as exc:
        col.malformed += 1
        col.warn(rel, None, f"cannot read: {exc.strerror}")
        return
    col.take(data, trial.name, rel, is_eval)


def _read_tar(col: _Collector, path: Path, archive_root: Path) -> None:
    rel = _rel(path, archive_root)
    try:
        with tarfile.open(path, "r|*") as tar:
            for member in tar:
                if not member.isfile() or not member.name.endswith("result.json"):
                    continue
                parts = member.name.strip("/").split("/")
                if len(parts) < 2:
                    continue  # a job-level result.json at the archive's top
                if member.size > MAX_RESULT_BYTES:
                    col.malformed += 1
                    col.warn(
                        f"{rel}:{member.name}", None, "result.json over the size limit: not read"
                    )
                    continue
                fh = tar.extractfile(member)
                if fh is None:
                    continue
                col.take(fh.read(), parts[-2], f"{rel}:{member.name}", "eval_sessions" in parts)
    except (tarfile.TarError, OSError, EOFError) as exc:
        col.warn(rel, None, f"damaged trials archive ({exc}): read up to the damage")


def merge_trial_sets(parts: list[TrialSet]) -> TrialSet:
    """Join shards of one trials directory, keeping trial order by name."""
    first = parts[0]
    results = sorted((r for p in parts for r in p.results), key=lambda r: r.name)
    warnings = tuple(w for p in parts for w in p.warnings)
    return TrialSet(
        first.path,
        tuple(results),
        sum(p.eval_count for p in parts),
        sum(p.malformed for p in parts),
        sum(p.missing for p in parts),
        sum(p.archives for p in parts),
        warnings,
    )


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
