"""Reading a log file from disk, and reading on from a saved state (encoded and decoded, as
the build cache keeps it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from msgspec.structs import replace

from sitegen.cache.codec import encode
from sitegen.cache.logs import log_state_bytes, log_state_from_bytes
from sitegen.model.parsed import ParsedLog
from sitegen.read.logfile import parse_log, window_len
from sitegen.redact import Redactor
from sitegen.synth import synth


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("synth-logfile")
    synth(root, seed=5, steps=8)
    return sorted(p for p in root.rglob("*.out") if p.stat().st_size > 0)


def _bytes(log: ParsedLog) -> bytes:
    return encode(log, ParsedLog)


def test_resume_from_an_encoded_state_equals_full_parse(logs, tmp_path):
    assert len(logs) >= 5
    for src in logs:
        data = src.read_bytes()
        for cut_at in (len(data) // 3, (2 * len(data)) // 3):
            cut = data.rfind(b"\n", 0, cut_at) + 1
            path = tmp_path / src.name
            path.write_bytes(data[:cut] + data[cut : cut + 7])  # a partial last line too
            _first, state = parse_log(path, "x.out", Redactor())
            restored = log_state_from_bytes(log_state_bytes((), state))
            assert log_state_bytes((), restored) == log_state_bytes((), state)
            full, _ = parse_log(src, "x.out", Redactor())
            # Blank what the state says was read (all but its checked head and tail): a
            # resumed parse must not look at it, so it still equals the full parse.
            head, keep = window_len(restored.head), cut - window_len(restored.tail)
            assert 0 < head < keep
            path.write_bytes(data[:head] + b"\n" * (keep - head) + data[keep:])
            resumed, _ = parse_log(path, "x.out", Redactor(), state=restored)
            resumed = replace(resumed, mtime=full.mtime)
            assert _bytes(resumed) == _bytes(full), src.name
            assert resumed.lines == full.lines and len(resumed.blocks) == len(full.blocks) > 0


def test_rewritten_file_is_read_from_the_start(logs, tmp_path):
    path = tmp_path / "a.out"
    path.write_bytes(logs[0].read_bytes())
    _, state = parse_log(path, "a.out", Redactor())
    path.write_bytes(b"X" * 10 + logs[0].read_bytes()[10:])
    again, _ = parse_log(path, "a.out", Redactor(), state=state)
    full, _ = parse_log(path, "a.out", Redactor())
    assert _bytes(again) == _bytes(full)


def _split_job(tmp_path: Path) -> tuple[Path, Path]:
    """A job whose script wrote stdout and stderr apart (#SBATCH --output/--error): prints
    and vLLM's own logger (stdout) in the .out; loguru, Ray's forwarded stderr and SLURM's
    lines in the .err."""
    from tests.read.test_logparse import METRICS, E, block, lg
    from tests.read.test_real_shapes import STATS

    out = [
        "Training started",
        f"{E}INFO 02-08 00:56:50 [loggers.py:127] Engine 000: Running: 3 reqs",  # no throughput
        f"{E}INFO 02-08 00:56:55 [loggers.py:127] {STATS}",
    ]
    err = [
        lg("start", "2026-02-08 00:56:40.000"),
        *block(1, {**METRICS, "trainer/global_step": 1}),
        lg("Batch generation complete: ?"),
        *block(2, {**METRICS, "trainer/global_step": 2}),
        lg("Successfully saved checkpoint for global_step_2 to: /ck/global_step_2"),
        f"{E}INFO 02-08 00:57:05 [loggers.py:127] {STATS} [repeated 2x across cluster]",
        "slurmstepd: error: *** JOB 7 ON gpu-1 CANCELLED AT 2026-02-08T01:00:00 ***",
    ]
    (tmp_path / "x_7.out").write_text("\n".join(out) + "\n")
    (tmp_path / "x_7.err").write_text("\n".join(err) + "\n")
    return tmp_path / "x_7.out", tmp_path / "x_7.err"


def test_a_split_log_is_read_as_two_streams_of_one_job(tmp_path):
    from tests.read.test_logparse import METRICS

    out, err = _split_job(tmp_path)
    log, _state = parse_log(out, "x_7.out", Redactor(), ((err, "x_7.err"),))
    assert log.path == "x_7.out" and log.metric_form == "console"
    assert [b.step for b in log.blocks] == [1, 2] and log.blocks[1].metrics[
        "trainer/global_step"
    ] == 2
    assert [(c.step, c.final) for c in log.checkpoints] == [(2, False)]
    assert (log.end_marker, log.end_detail) == ("cancelled", "CANCELLED")
    # each warning names its own file and its line there
    got = [(w.path, w.line, w.message) for w in log.warnings]
    assert got == [
        ("x_7.out", 2, "vLLM stats line without throughput/running/waiting: ignored"),
        ("x_7.err", len(METRICS) + 3, "unreadable 'Batch generation complete' line: ignored"),
    ]
    # one engine whose lines are in both files; the copies Ray held back counted once
    (e,) = log.vllm.engines
    assert (e.engine, e.samples, e.gen_tps_sum) == ("7@10.0.0.1", 2, pytest.approx(940.4))
    assert log.vllm.suppressed_copies == 2
    # timed from the job's start, the .err's first loguru time (00:56:40), by minute
    assert [(b.t_s, b.samples) for b in log.vllm.timeline] == [(-40.0, 1), (20.0, 1)]
    sizes = out.stat().st_size + err.stat().st_size
    lines = 3 + len(err.read_text().splitlines())
    assert (log.lines, log.size_bytes, log.first_time.second) == (lines, sizes, 40)
    assert log.evidence is not None


def test_a_split_log_read_on_equals_a_full_read(tmp_path):
    """Both files grown: each read on from its own saved state (its lines apart)."""
    out, err = _split_job(tmp_path)
    extra = ((err, "x_7.err"),)
    _first, state = parse_log(out, "x_7.out", Redactor(), extra)
    with out.open("a") as fh:
        fh.write("Training done\n")
    with err.open("a") as fh:
        fh.write("slurmstepd: error: *** JOB 7 ON gpu-1 CANCELLED AT 2026-02-08T01:00:09 ***\n")
    again, _ = parse_log(out, "x_7.out", Redactor(), extra, state)
    fresh, _ = parse_log(out, "x_7.out", Redactor(), extra)
    assert _bytes(again) == _bytes(fresh)
    assert fresh.vllm.engines[0].samples == 2 and len(fresh.blocks) == 2


def test_the_mirror_in_one_stream_wins_over_the_console_in_the_other(tmp_path):
    """As in one file (docs/formats.md §3): the mirror's values are the logged ones."""
    out, err = _split_job(tmp_path)
    mirror = 'WANDB_MIRROR kind=train step={0} metrics={{"reward/avg_raw_reward": 0.{0}}}\n'
    out.write_text("".join(mirror.format(s) for s in (1, 2, 3)))
    log, _ = parse_log(out, "x_7.out", Redactor(), ((err, "x_7.err"),))
    assert log.metric_form == "mirror"
    assert [(b.step, b.metrics["reward/avg_raw_reward"]) for b in log.blocks] == [
        (1, 0.1),
        (2, 0.2),
        (3, 0.3),
    ]


def test_batches_of_a_stream_without_steps_are_in_no_step(tmp_path):
    # the steps printed to the .out (the WANDB mirror), the generator's batch lines and
    # the training bar logged to the .err: which step each batch ran for is not in the
    # files (their line orders are apart), so none is guessed; the totals keep them
    from tests.read.test_logparse import lg

    done = "Batch generation complete: 7/8 successful, 1 failed instances, 0 masked (excluded from baseline)"
    mirror = 'WANDB_MIRROR kind=train step={0} metrics={{"reward/avg_raw_reward": 0.{0}}}\n'
    out, err = tmp_path / "x_8.out", tmp_path / "x_8.err"
    out.write_text("".join(mirror.format(s) for s in (1, 2, 3)))
    batch = [lg("Starting batch generation for 8 trials (mode=training)"), lg(done)]
    bar = "Training Step Progress:  30%|###       | {}/10 [01:00<02:20, 20.0s/it]"
    err.write_text("\n".join([*batch, bar.format(1), *batch, bar.format(2), *batch]) + "\n")
    log, _ = parse_log(out, "x_8.out", Redactor(), ((err, "x_8.err"),))
    assert [b.step for b in log.blocks] == [1, 2, 3]
    assert log.batches_per_step == {}
    assert (log.batches.batches, log.batches.failed) == (3, 3)
    assert [(w.path, w.line) for w in log.warnings] == [("x_8.err", None)]
    assert "3 batches of this file cannot be given to steps" in log.warnings[0].message


def test_a_split_logs_vllm_lines_take_the_err_s_year(tmp_path):
    # a run over a new year, copied with new mtimes: the .out's vLLM lines have no year and
    # the .out no loguru time; they are dated from the .err's first time, not the file's
    import os

    from tests.read.test_logparse import METRICS, E, block, lg
    from tests.read.test_real_shapes import STATS

    out, err = tmp_path / "x_9.out", tmp_path / "x_9.err"
    out.write_text(
        f"{E}INFO 12-31 23:59:00 [loggers.py:127] {STATS}\n"
        f"{E}INFO 01-01 00:01:00 [loggers.py:127] {STATS}\n"
    )
    err.write_text("\n".join([lg("start", "2025-12-31 23:58:00.000"), *block(1, METRICS)]) + "\n")
    later = 1_830_000_000  # 2027-12-28: the copy's date, no year of the run
    for p in (out, err):
        os.utime(p, (later, later))
    extra = ((err, "x_9.err"),)
    log, state = parse_log(out, "x_9.out", Redactor(), extra)
    assert [(b.t_s, b.samples) for b in log.vllm.timeline] == [(60.0, 1), (180.0, 1)]
    # read on from the saved state: the same, and anew when the .err's first time moves
    again, _ = parse_log(out, "x_9.out", Redactor(), extra, state)
    assert _bytes(again) == _bytes(log)
    err.write_text("\n".join([lg("start", "2026-12-31 23:58:00.000"), *block(1, METRICS)]) + "\n")
    os.utime(err, (later, later))
    moved, _ = parse_log(out, "x_9.out", Redactor(), extra, state)
    fresh, _ = parse_log(out, "x_9.out", Redactor(), extra)
    assert _bytes(moved) == _bytes(fresh)
    assert [b.t_s for b in fresh.vllm.timeline] == [60.0, 180.0]


def _split_halves(src: Path) -> tuple[bytes, bytes]:
    """A synth log as a split job writes it: vLLM's own logger's lines in the .out, the
    rest (loguru's steps and batches, the config dump, bars) in the .err."""
    lines = src.read_bytes().splitlines(keepends=True)
    return (
        b"".join(ln for ln in lines if b"[loggers.py" in ln),
        b"".join(ln for ln in lines if b"[loggers.py" not in ln),
    )


def _cut(data: bytes, share: float, partial: int = 0) -> bytes:
    """``data``'s lines up to ``share`` of its bytes, and ``partial`` bytes of the next."""
    end = data.rfind(b"\n", 0, int(len(data) * share)) + 1
    return data[: end + partial]


def _rewritten(err: bytes) -> bytes:
    """``err`` written again by the job run anew a year on: its trainer's pid and every
    loguru time moved, as long."""
    assert err.count(b"2026-") > 10 and err.count(b"pid=4242") > 100
    return err.replace(b"2026-", b"2027-").replace(b"pid=4242", b"pid=4343")


# (the .out and .err at the first build, then at the next; None: no .err) and whether
# each file's state is read on from (the other is read whole)
GROWN = {
    "err grew": (lambda o, e: (o, _cut(e, 0.4)), lambda o, e: (o, e), True),
    "out grew": (lambda o, e: (_cut(o, 0.5), e), lambda o, e: (o, e), True),
    "both grew, partial lines": (
        lambda o, e: (_cut(o, 0.3, 9), _cut(e, 0.6, 11)),
        lambda o, e: (_cut(o, 0.7, 3), _cut(e, 0.9, 5)),
        True,
    ),
    "err rewritten": (lambda o, e: (o, e), lambda o, e: (o, _rewritten(e)), False),
    "err rewritten and grown": (
        lambda o, e: (o, _cut(e, 0.5)),
        lambda o, e: (o, _rewritten(e)),
        False,
    ),
    "err rewritten shorter": (
        lambda o, e: (o, e),
        lambda o, e: (o, _cut(_rewritten(e), 0.8)),
        False,
    ),
    "err appeared": (lambda o, e: (_cut(o, 0.5), None), lambda o, e: (o, e), False),
    "err vanished": (lambda o, e: (_cut(o, 0.5), e), lambda o, e: (o, None), False),
}


@pytest.mark.parametrize("case", list(GROWN))
def test_a_split_log_read_on_from_its_kept_state_equals_a_full_read(logs, tmp_path, case):
    """Each file of a split log is read on from its own state (kept through the cache's
    encoding) when it only grew, else whole: the same parse as a clean read, byte for byte."""
    import os

    first, then, read_on = GROWN[case]
    src = next(p for p in logs if p.name == "async-run_561773.out")
    halves = _split_halves(src)
    assert len(halves[0]) > 5000 and len(halves[1]) > 5000
    out, err = tmp_path / "x_7.out", tmp_path / "x_7.err"
    extra = ((err, "x_7.err"),)

    def write(files: tuple[bytes, bytes | None]) -> None:
        out.write_bytes(files[0])
        if files[1] is None:
            err.unlink(missing_ok=True)
        else:
            err.write_bytes(files[1])
        for p in (out, err) if files[1] is not None else (out,):
            os.utime(p, (1_780_000_000, 1_780_000_000))

    write(first(*halves))
    _, state = parse_log(out, "x_7.out", Redactor(), extra)
    data = log_state_bytes((), state)
    write(then(*halves))
    full, _ = parse_log(out, "x_7.out", Redactor(), extra)
    kept = log_state_from_bytes(data)
    if read_on:
        # Blank what each state says was read (all but its checked head and tail): a
        # parse read on from them cannot see it, and still equals the full parse.
        for path, st in ((out, kept), (err, kept.errs["x_7.err"])):
            was = path.read_bytes()
            head, keep = window_len(st.head), st.offset - window_len(st.tail)
            assert 0 < head < keep
            path.write_bytes(was[:head] + b"\n" * (keep - head) + was[keep:])
            os.utime(path, (1_780_000_000, 1_780_000_000))
    resumed, again = parse_log(out, "x_7.out", Redactor(), extra, kept)
    assert _bytes(resumed) == _bytes(full)
    assert full.vllm.engines and full.lines > 100 and bool(full.blocks) == err.exists()
    assert list(again.errs) == (["x_7.err"] if err.exists() else [])


def test_a_state_read_in_another_year_of_the_files_mtime_is_not_read_on(tmp_path):
    # vLLM's lines carry no year: with no loguru time to go by, they take the year of the
    # file's mtime, which a clean read takes anew; so a log grown into a new year is read
    # whole rather than on from lines dated by the old year
    import os

    from tests.read.test_logparse import E
    from tests.read.test_real_shapes import STATS

    log = tmp_path / "x.out"
    log.write_text(f"{E}INFO 12-31 23:59:00 [loggers.py:127] {STATS}\n")
    os.utime(log, (1_830_232_800, 1_830_232_800))  # 2027-12-31 06:00 UTC: in every zone
    _, state = parse_log(log, "x.out", Redactor())
    with log.open("a") as fh:
        fh.write(f"{E}INFO 01-01 00:01:00 [loggers.py:127] {STATS}\n")
    os.utime(log, (1_830_362_400, 1_830_362_400))  # 2028-01-01 18:00 UTC, a leap year
    again, _ = parse_log(log, "x.out", Redactor(), state=state)
    fresh, _ = parse_log(log, "x.out", Redactor())
    assert _bytes(again) == _bytes(fresh)
    assert len(fresh.vllm.timeline) == 2


def test_a_log_rewritten_in_place_at_its_size_is_read_whole(logs, tmp_path):
    # an edit that keeps the size (a value changed) and both checked ends: the mtime moved
    # with the size unchanged, which an append never does, so the file is read anew
    import os

    path = tmp_path / "x.out"
    data = logs[0].read_bytes()
    path.write_bytes(data)
    os.utime(path, ns=(1_800_000_000_000_000_000,) * 2)
    _, state = parse_log(path, "x.out", Redactor())
    kept = log_state_from_bytes(log_state_bytes((), state))
    mid = data.index(b"'reward/avg_raw_reward': '", len(data) // 3) + 26
    edited = data[:mid] + b"9" + data[mid + 1 :]
    assert len(edited) == len(data) and edited != data
    path.write_bytes(edited)
    os.utime(path, ns=(1_800_000_001_000_000_000,) * 2)
    again, _ = parse_log(path, "x.out", Redactor(), state=kept)
    fresh, _ = parse_log(path, "x.out", Redactor())
    assert _bytes(again) == _bytes(fresh)
    # the same bytes with the mtime kept (a no-change build) read on: nothing new
    os.utime(path, ns=(1_800_000_000_000_000_000,) * 2)
    path.write_bytes(data)
    os.utime(path, ns=(1_800_000_000_000_000_000,) * 2)
    same, _ = parse_log(path, "x.out", Redactor(), state=kept)
    assert _bytes(same) == _bytes(parse_log(path, "x.out", Redactor())[0])


@pytest.mark.parametrize(
    ("out_end", "end"),
    [
        ("Training done!", ("complete", None)),
        (
            "Train loop failed at global_step 2: RuntimeError: boom",
            ("failed", "Train loop failed at global_step 2: RuntimeError: boom"),
        ),
        (None, ("failed", "srun: task 1: Exited with exit code 1")),
    ],
)
def test_a_split_logs_trainer_end_beats_srun_s_in_the_other_stream(tmp_path, out_end, end):
    """srun's line is in the .err, the trainer's end in the .out: the two line orders say
    nothing of which came first, and srun reports a task's end after its cause. srun's
    stands only when nothing else ended the job; SLURM's own end in the .err stands too."""
    from tests.read.test_logparse import METRICS, block, lg

    srun = "srun: error: gpu-18: task 1: Exited with exit code 1"
    out, err = tmp_path / "x_5.out", tmp_path / "x_5.err"
    body = [*block(1, METRICS), *block(2, METRICS)]
    out.write_text("\n".join([*body, *([lg(out_end)] if out_end else [])]) + "\n")
    err.write_text(srun + "\n")
    log, _ = parse_log(out, "x_5.out", Redactor(), ((err, "x_5.err"),))
    assert (log.end_marker, log.end_detail) == end
    # the same lines the other way round: the .err's trainer end, the .out's srun line
    out.write_text(srun + "\n")
    err.write_text("\n".join([*body, *([lg(out_end)] if out_end else [])]) + "\n")
    log, _ = parse_log(out, "x_5.out", Redactor(), ((err, "x_5.err"),))
    assert (log.end_marker, log.end_detail) == end
    # SLURM's own end in the .err beats the .out's srun line
    out.write_text(srun + "\n")
    err.write_text("\n".join([*body, SLURM_TIME_LIMIT]) + "\n")
    log, _ = parse_log(out, "x_5.out", Redactor(), ((err, "x_5.err"),))
    assert (log.end_marker, log.end_detail) == ("cancelled", "TIME LIMIT")


SLURM_TIME_LIMIT = (
    "slurmstepd: error: *** JOB 7 ON gpu-1 CANCELLED AT 2026-02-08T01:00:00 DUE TO TIME LIMIT ***"
)


def _split_end(tmp_path, out_lines, err_lines):
    out, err = tmp_path / "x_5.out", tmp_path / "x_5.err"
    out.write_text("".join(f"{line}\n" for line in out_lines))
    err.write_text("".join(f"{line}\n" for line in err_lines))
    log, _ = parse_log(out, "x_5.out", Redactor(), ((err, "x_5.err"),))
    return log.end_marker, log.end_detail


PLAIN_CANCEL = "slurmstepd: error: *** JOB 7 ON gpu-1 CANCELLED AT 2026-02-08T01:00:00 ***"
STEP_CANCEL = "slurmstepd: error: *** STEP 7.0 ON gpu-1 CANCELLED AT 2026-02-08T01:00:00 ***"
OOM_KILL = "slurmstepd: error: Detected 1 oom_kill event in StepId=7.0. Some of the step tasks have been OOM Killed."


@pytest.mark.parametrize(
    ("tail", "end"),
    [
        # the trainer's failure, srun's report of its task, the step cancelled
        (
            [
                "Train loop failed at global_step 2: RuntimeError: boom",
                "srun: error: gpu-1: task 0: Exited with exit code 1",
                STEP_CANCEL,
            ],
            ("failed", "Train loop failed at global_step 2: RuntimeError: boom"),
        ),
        # scancel: the tasks end on its signal, then the cancel
        (
            ["srun: error: gpu-1: task 0: Terminated", STEP_CANCEL, PLAIN_CANCEL],
            ("cancelled", "CANCELLED"),
        ),
        (
            ["srun: error: gpu-1: task 0: Exited with exit code 143", PLAIN_CANCEL],
            ("cancelled", "CANCELLED"),
        ),
        # a memory failure, more training, then the user's cancel
        ([OOM_KILL, "steps 3"], (None, None)),
        ([OOM_KILL, "steps 3", PLAIN_CANCEL], ("cancelled", "CANCELLED")),
    ],
)
def test_a_split_log_ends_as_its_err_read_alone(tmp_path, tail, end):
    """The lines in the .err in their order: the split log ends as one file of them would,
    whatever the .out holds (its steps' mirror lines, or nothing)."""
    from tests.read.test_logparse import METRICS, block, lg, parse

    def lines(tail):
        for line in tail:
            if line == "steps 3":
                yield from block(3, METRICS)
            else:
                yield line if line.startswith(("slurmstepd", "srun")) else lg(line)

    err = [*block(1, METRICS), *block(2, METRICS), *lines(tail)]
    assert (parse(err).end_marker, parse(err).end_detail) == end
    mirror = [f'WANDB_MIRROR kind=train step={s} metrics={{"loss": 0.{s}}}' for s in (1, 2, 3)]
    for out in ([], mirror):
        assert _split_end(tmp_path, out, err) == end


@pytest.mark.parametrize("cancel", [PLAIN_CANCEL, STEP_CANCEL])
def test_a_split_logs_plain_cancel_keeps_the_trainer_s_failure_in_the_other_stream(
    tmp_path, cancel
):
    """The trainer's failure in one file, a plain cancel in the other: in one file either
    order reads the failure (a plain cancel keeps a failure before it, a failure after a
    cancel is the end), so the split log does too. A cancel with a reason before the
    failure would be the end: its order is not known, the .err's stands."""
    from tests.read.test_logparse import METRICS, block, lg

    failed = lg("Train loop failed at global_step 2: RuntimeError: boom")
    body = [*block(1, METRICS), *block(2, METRICS)]
    want = ("failed", "Train loop failed at global_step 2: RuntimeError: boom")
    assert _split_end(tmp_path, [*body, failed], [cancel]) == want
    assert _split_end(tmp_path, [cancel], [*body, failed]) == want
    exit_1 = "srun: error: gpu-1: task 0: Exited with exit code 1"
    assert _split_end(tmp_path, [*body, failed], [exit_1, cancel]) == want
    # srun's Terminated and the cancel in the .err, no failure anywhere: a cancel
    assert _split_end(tmp_path, body, ["srun: error: gpu-1: task 0: Terminated", cancel]) == (
        "cancelled",
        "CANCELLED",
    )
    assert _split_end(tmp_path, [*body, failed], [SLURM_TIME_LIMIT]) == ("cancelled", "TIME LIMIT")


@pytest.mark.parametrize(
    "slurm",
    [
        OOM_KILL,
        "srun: error: gpu-1: task 0: Out Of Memory",
        "slurmstepd: error: Job 7 exceeded memory limit (3940736 > 2068480), being killed",
        "slurmstepd: error: *** JOB 7 ON gpu-1 FAILED (non-zero exit code or other failure mode) ***",
    ],
)
def test_a_split_logs_training_done_beats_slurm_s_failure_in_the_other_stream(tmp_path, slurm):
    """'Training done!' in the .out, SLURM's failure in the .err: in one file either order
    reads complete (after the training completed SLURM's failure is a warning), so the split
    log does too. The trainer's own failure in the .err stays its end."""
    from tests.read.test_logparse import METRICS, block, lg, parse

    body = [*block(1, METRICS), *block(2, METRICS), lg("Training done!")]
    for one in ([slurm, *body], [*body, slurm]):
        assert parse(one).end_marker == "complete"
    assert _split_end(tmp_path, body, [slurm]) == ("complete", None)
    failed = lg("Train loop failed at global_step 2: RuntimeError: boom")
    assert _split_end(tmp_path, body, [failed]) == (
        "failed",
        "Train loop failed at global_step 2: RuntimeError: boom",
    )
