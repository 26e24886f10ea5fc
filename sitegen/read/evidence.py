"""Is a log a training job's? The signs a parsed line gives of SkyRL, Ray, vLLM or SLURM.

A SLURM folder's ``*.out`` may be a preprocessing log, a script's traceback, binary junk.
The log parser asks :func:`line_evidence` of each line it splits until one answers (kept
as ``ParsedLog.evidence``); a log with none is skipped, not shown as a job (docs/design.md,
"Which logs are jobs"). One sign is enough: a job just started has one Ray or SkyRL line.
"""

from __future__ import annotations

import re

from sitegen.read.lines import SLURMSTEPD_RE, Line
from sitegen.read.markers import STEP_RE, TRAIN_BAR_RE

RAY_PREFIX = "a Ray prefix"
RAY_RECORD = "a Ray log record"
SKYRL_RECORD = "a SkyRL log record"
VLLM_RECORD = "a vLLM log record"
SLURM_STATUS = "a SLURM status line"
MIRROR = "a WANDB_MIRROR line"
TRAIN_BAR = "SkyRL's training progress bar"
CONFIG_DUMP = "SkyRL's config dump"

# Ray's own processes, whose prefixes carry no pid: "(raylet) ", "(autoscaler +1m2s) ",
# "(pid=gcs_server) ".
_RAY_DAEMONS = frozenset(
    {"raylet", "autoscaler", "scheduler", "gcs_server", "runtime_env", "monitor", "dashboard"}
)
# Ray's Python logger (ray_constants.LOGGER_FORMAT): "2025-11-28 04:00:00,123\tINFO
# worker.py:1841 -- Started a local Ray instance." The tab after the time is Ray's.
RAY_RECORD_RE = re.compile(
    r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\t(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) "
    r"[\w.\-]+\.py:\d+ -- "
)


def line_evidence(ln: Line) -> str | None:
    """What ``ln`` shows of a training job, or None for a line any program could write.

    A loguru record counts when its module is SkyRL's (``skyrl_train.…``, ``skyrl.train.…``,
    a fork's ``…skyrl…``) or when it is a metrics record (``Step N:``, ``WANDB_MIRROR``)
    of any module; a loguru record of another program's module does not.
    """
    if ln.pid is not None or ln.source.split(" ", 1)[0] in _RAY_DAEMONS:
        return RAY_PREFIX
    if ln.emitter == "vllm":
        return VLLM_RECORD
    msg = ln.message
    if ln.emitter == "loguru":
        module = ln.where.split(":", 1)[0]
        if "skyrl" in module.lower() or STEP_RE.match(msg):
            return SKYRL_RECORD
    if msg.startswith("slurmstepd") and SLURMSTEPD_RE.match(msg):
        return SLURM_STATUS
    if msg.startswith("WANDB_MIRROR "):
        return MIRROR
    if TRAIN_BAR_RE.match(msg) or (ln.before and TRAIN_BAR_RE.match(ln.before)):
        return TRAIN_BAR
    if ln.emitter == "" and RAY_RECORD_RE.match(msg):
        return RAY_RECORD
    return None


def config_evidence(config: object) -> str | None:
    """A config dump counts when it is SkyRL's: a mapping with a ``trainer`` section."""
    return CONFIG_DUMP if isinstance(config, dict) and "trainer" in config else None
