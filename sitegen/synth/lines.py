"""Line writers for synthetic SkyRL logs: the Ray prefix, loguru headers, value formats, noise
(the shapes of docs/formats.md §2 and §3)."""

from __future__ import annotations

import math
import random
from datetime import datetime
from typing import BinaryIO

from sitegen.synth.jobspec import JobSpec

CYAN, RESET, GREEN, DIM = "\x1b[36m", "\x1b[0m", "\x1b[32m", "\x1b[2m"
# The glue turn (:meth:`LogOut._glued`) where the bar is the record's own process's, on its
# Ray-prefixed line: the record comes after the bar's \r and keeps that line's process.
OWN_BAR = 4


class LogOut:
    """Line writer with the Ray prefix and loguru/vLLM headers of docs/formats.md §2."""

    def __init__(self, fh: BinaryIO, spec: JobSpec) -> None:
        self.fh = fh
        self.spec = spec
        self.bytes = 0
        self.glued: tuple[str, int] | None = None  # a bar the next record lands after
        self.turn: int | None = None  # how the last record met its bar (None: no bar)
        self.dedup_noted = False  # Ray's note on its log deduplication written (once a job)

    def raw(self, text: str | bytes) -> None:
        data = text if isinstance(text, bytes) else text.encode("utf-8")
        self.fh.write(data)
        self.bytes += len(data)

    def prefix(self, actor: str, pid: int, ip: str | None) -> str:
        if actor == "skyrl_entrypoint" and self.spec.real and not self.spec.ray_entrypoint:
            return ""  # docs/formats.md §2: the driver's own output, not forwarded by Ray
        p = f"({actor} pid={pid}, ip={ip})" if ip else f"({actor} pid={pid})"
        if not self.spec.colour:
            return f"{p} "
        # Ray (print_worker_logs) writes it dim, then cyan; the scenario's older jobs cyan only
        return f"{DIM}{CYAN}{p}{RESET} " if self.spec.real else f"{CYAN}{p}{RESET} "

    def glue(self, text: str, turn: int = 0) -> None:
        """A bar that lost its line break: the next record lands after it (docs/formats.md §2).

        With :attr:`JobSpec.ray_entrypoint` the bar is the driver's (no Ray prefix) and the
        record a Ray actor's; ``turn`` picks how the two meet (:meth:`_glued`)."""
        if self.spec.ray_entrypoint:
            self.glued = (text, turn)
        else:
            self.raw(text)

    def _glued(self, pfx: str) -> str:
        """What goes before the next record: its prefix, after a glued bar in one of five ways."""
        if self.glued is None:
            self.turn = None
            return pfx
        bar, turn = self.glued
        self.glued = None
        self.turn = turn % 5
        return (
            bar,  # the record's prefix lost: a notebook's rendering of the stream
            f"\r{bar}\r{bar}",  # the same after \r redraws of the bar
            bar + pfx,  # the driver's bar, then the actor's line as Ray forwards it
            bar + "\r",  # the bar's \r kept, the record's prefix lost all the same
            f"{pfx}{bar}\r{bar}\r",  # OWN_BAR: the actor's bar redrawn on its own line
        )[self.turn]

    def loguru(self, t: datetime, msg: str, where: str = "skyrl_train.trainer:train:310") -> None:
        if self.spec.real and not self.spec.skyrl_train_names:
            where = where.replace("skyrl_train.", "skyrl.train.")  # upstream's 2026 rename
        ts = t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}"
        if self.spec.colour:
            head = f"\x1b[32m{ts}\x1b[0m | \x1b[1mINFO    \x1b[0m | \x1b[36m{where}\x1b[0m - \x1b[1m{msg}\x1b[0m"
        else:
            head = f"{ts} | INFO     | {where} - {msg}"
        self.entry(head)

    def entry(self, text: str) -> None:
        self.raw(f"{self._glued(self.prefix('skyrl_entrypoint', 4242, None))}{text}\n")


def round4(v: float) -> float:
    return float(f"{v:.4f}")


def fmt4(v: float | int) -> str | int:
    if isinstance(v, int):
        return v
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.4f}"


NOISE_TEXT = (
    "Example generated: Let me think. Step 3: open the file {'reward/avg_raw_reward': '9.9999'} "
    "then run the tests. Training done! <done>",
    "WARNING 02-08 00:00:00 [tokenizer.py:88] Token indices sequence length is longer than the specified maximum",
    "/usr/lib/python3.11/site-packages/torch/distributed/fsdp.py:690: FutureWarning: FSDP.state_dict_type() is deprecated",
    "[harbor] sandbox ready in 3.2s; uploading task files",
)


def add_noise(out: LogOut, rng: random.Random) -> None:
    kind = rng.randrange(4)
    if kind == 0:
        bar = "".join(
            f"\rProcessing prompts: {p:3d}%|{'█' * (p // 10):<10}| {p}/100 [00:{p % 60:02d}<00:30, 3.5it/s]"
            for p in range(0, 101, 20)
        )
        out.raw(bar + "\n")
    elif kind == 1:
        out.entry(NOISE_TEXT[0])
        out.entry("Step 99: ")  # model text: no loguru header, must not start a block
    else:
        out.entry(NOISE_TEXT[kind])
