"""How a job ended, as SLURM, srun and SkyRL write it (docs/formats.md §4.4): the shapes of
each SLURM version's cancel, srun's own lines against copies of them, eval output after an
srun end, and the order of a failure warned after 'Training done!'."""

from __future__ import annotations

import pytest

from tests.read.test_logparse import METRICS, P, block, lg, parse
from tests.read.test_producer_shapes import PLAIN_CANCELS, slurm_and_srun
from tests.read.test_real_shapes import _by_blocks

EXIT_1 = "srun: error: gpu-17: task 0: Exited with exit code 1"
JOB_FAILED = (
    "slurmstepd: error: *** JOB 7 ON gpu-17 FAILED (non-zero exit code or other failure mode) ***"
)


def _end(lines: list[str]) -> tuple[str | None, str | None, list[str]]:
    """The end both readers (line by line, by blocks) make of ``lines``, and the warnings."""
    ends = {
        (log.end_marker, log.end_detail, tuple(w.message for w in log.warnings))
        for log in (parse(lines), _by_blocks(lines))
    }
    assert len(ends) == 1, ends
    marker, detail, warnings = ends.pop()
    return marker, detail, list(warnings)


# -- 1. every shape of SLURM's cancel line ----------------------------------------------------
# slurmstepd's req.c, _handle_signal_container: SLURM 25.05 names the signal of a cancel
# ("DUE to SIGNAL %s", strsignal's name, "to" in lower case) and a step ended for a task's
# failure ("DUE TO TASK FAILURE"); both were a plain "CANCELLED AT %s ***" before. SLURM
# 14.03.8 to 14.11.9 and 15.08.0 put " on <node>" at the end. "BY <uid>" is sacct's wording
# (State "CANCELLED by 1234"), read as a cancel by someone, as a plain one.
PLAIN_SHAPES = (
    "slurmstepd: error: *** JOB 123 ON node1 CANCELLED AT 2026-01-01T00:00:00 BY 1234 ***",
    "slurmstepd: error: *** JOB 123 ON node1 CANCELLED AT 2026-01-01T00:00:00 BY alice ***",
    "slurmstepd: error: *** JOB 123 ON node1 CANCELLED AT 2026-01-01T00:00:00 DUE to SIGNAL Terminated ***",
    "slurmstepd-node1: error: *** STEP 123.0 ON node1 CANCELLED AT 2026-01-01T00:00:00 DUE to SIGNAL Killed ***",
    "slurmstepd: error: *** JOB 123 CANCELLED AT 2014-11-01T00:00:00 *** on node1",
)


@pytest.mark.parametrize("line", PLAIN_SHAPES)
def test_every_plain_cancel_shape_is_a_cancel(line):
    assert _end([*block(3, METRICS), line]) == ("cancelled", "CANCELLED", [])
    # as a plain cancel does, it keeps the task's failure srun reported before it
    assert _end([*block(3, METRICS), EXIT_1, line]) == (
        "failed",
        "srun: task 0: Exited with exit code 1",
        [],
    )


def test_a_reason_cancel_of_slurm_14_names_its_reason():
    line = (
        "slurmstepd: error: *** JOB 5 CANCELLED AT 2014-11-01T00:00:00 DUE TO TIME LIMIT on n1 ***"
    )
    assert _end([*block(3, METRICS), line]) == ("cancelled", "TIME LIMIT", [])


def test_a_node_failure_of_slurm_14_and_15_08_0_is_a_node_failure():
    """SLURM 14.03.8 to 14.11.9 and 15.08.0 name the node inside the reason; 15.08.1 says
    "DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS": the same cancel, the same reason."""
    line = "slurmstepd: error: *** JOB 5 CANCELLED AT 2015-01-01T00:00:00 DUE TO NODE gpu-17 FAILURE ***"
    assert _end([*block(3, METRICS), line]) == ("cancelled", "NODE FAILURE", [])
    assert _end([*block(3, METRICS), line.replace("JOB 5", "STEP 5.0")])[:2] == (
        "cancelled",
        "NODE FAILURE",
    )


def test_the_job_s_failed_of_slurm_14_and_15_08_0_is_the_job_s_failed():
    """SLURM 14.03.8 to 14.11.9 and 15.08.0 put " on <node>" before the last "***"."""
    line = "slurmstepd: error: *** JOB 5 FAILED (non-zero exit code or other failure mode) on gpu-17 ***"
    said = ("failed", "SLURM: non-zero exit code or other failure mode", [])
    assert _end([*block(3, METRICS), line]) == said
    # the JOB's: final, as the newer shape's (more training does not undo it)
    assert _end([*block(3, METRICS), line, *block(4, METRICS)]) == said
    assert _end([*block(3, METRICS), EXIT_1, line])[:2] == ("failed", slurm_and_srun(EXIT_1))


# SLURM_TIME_FORMAT (slurm_make_time_str: any strftime format, or "relative") gives the time
# as that format writes it, spaces and all
@pytest.mark.parametrize(
    ("line", "detail"),
    [
        (
            "slurmstepd: error: *** JOB 5 ON n1 CANCELLED AT Thu Jan  1 00:00:00 DUE TO TIME LIMIT ***",
            "TIME LIMIT",
        ),
        (
            "slurmstepd: error: *** JOB 5 ON n1 CANCELLED AT Tomorr 00:00 DUE TO NODE FAILURE, SEE "
            "SLURMCTLD LOG FOR DETAILS ***",
            "NODE FAILURE",
        ),
        ("slurmstepd: error: *** JOB 5 ON n1 CANCELLED AT 1 Jan 00:00 ***", "CANCELLED"),
        (
            "slurmstepd: error: *** JOB 5 ON n1 CANCELLED AT 1 Jan 00:00 DUE to SIGNAL Terminated ***",
            "CANCELLED",
        ),
        # (strsignal's names with a digit or a dash: no words not known)
        (
            "slurmstepd: error: *** JOB 5 ON n1 CANCELLED AT 2026-01-01T00:00:00 DUE to SIGNAL "
            "User defined signal 1 ***",
            "CANCELLED",
        ),
        (
            "slurmstepd: error: *** JOB 5 ON n1 CANCELLED AT 2026-01-01T00:00:00 DUE to SIGNAL "
            "Real-time signal 3 ***",
            "CANCELLED",
        ),
        ("slurmstepd: error: *** JOB 5 ON n1 CANCELLED AT 1 Jan 00:00 BY 1234 ***", "CANCELLED"),
        (
            "slurmstepd: error: *** JOB 5 CANCELLED AT Thu Jan  1 00:00:00 DUE TO PREEMPTION on n1 ***",
            "PREEMPTION",
        ),
        ("slurmstepd: error: *** JOB 5 CANCELLED AT Thu Jan  1 00:00:00 *** on n1", "CANCELLED"),
    ],
)
def test_a_cancel_s_reason_is_read_whatever_its_time_s_format(line, detail):
    assert _end([*block(3, METRICS), line]) == ("cancelled", detail, [])


@pytest.mark.parametrize(
    "time", ["2026-02-08T10:00:00", "Thu Jan  1 00:00:00", "1 Jan 00:00", "08/02 10:00 CET"]
)
def test_a_memory_error_is_read_whatever_its_time_s_format(time):
    """SLURM_TIME_FORMAT writes the time with blanks as it likes (slurm_make_time_str)."""
    line = f"slurmstepd: error: *** JOB 5 ON n1 UNCORRECTABLE MEMORY ERROR AT {time} ***"
    assert _end([*block(3, METRICS), line]) == ("failed", "uncorrectable memory error", [])


def test_a_step_cancelled_for_its_task_s_failure_keeps_that_failure():
    """SLURM 25.05: srun's --kill-on-bad-exit, a task exits 1, the step is "CANCELLED … DUE
    TO TASK FAILURE", the other tasks are killed: the task's exit is the end. With nothing
    before it, the cancel and its reason."""
    line = "slurmstepd: error: *** STEP 7.0 ON gpu-17 CANCELLED AT 2026-01-01T00:00:00 DUE TO TASK FAILURE ***"
    killed = "srun: error: gpu-18: task 1: Killed"
    assert _end([*block(3, METRICS), EXIT_1, line, killed]) == (
        "failed",
        "srun: task 0: Exited with exit code 1",
        [],
    )
    # a task killed by a signal (the kernel's OOM killer) and SLURM's word that it failed
    assert _end([*block(3, METRICS), killed, line])[:2] == ("failed", "srun: task 1: Killed")
    assert _end([*block(3, METRICS), line]) == ("cancelled", "TASK FAILURE", [])
    done = [*block(3, METRICS), lg("Training done!"), EXIT_1, line]
    assert _end(done)[:2] == ("complete", None)


def test_slurm_s_reason_line_after_a_cancel_is_no_warning():
    """SLURM 22.05+ may add the reason slurmctld gave as a line of its own."""
    lines = [
        *block(3, METRICS),
        "slurmstepd: error: *** JOB 7 ON n1 CANCELLED AT 2026-01-01T00:00:00 DUE TO TIME LIMIT ***",
        "slurmstepd: error: *** REASON: Job's time limit reached ***",
    ]
    assert _end(lines) == ("cancelled", "TIME LIMIT", [])


@pytest.mark.parametrize(
    "words", ["DUE TO a rule of ours", "DUE to a rule of ours", "DUE To TIME LIMIT"]
)
def test_a_cancel_in_words_not_known_is_a_cancel_with_a_warning(words):
    # (SLURM writes "DUE to" only before SIGNAL: any other words after it are not known)
    line = f"slurmstepd: error: *** JOB 7 ON n1 CANCELLED AT 2026-01-01T00:00:00 {words} ***"
    assert _end([*block(3, METRICS), line]) == (
        "cancelled",
        "CANCELLED",
        ["SLURM's cancel with words not known: read as a cancel"],
    )


# step_terminate_monitor.c (SLURM 17.02+): the step's processes outlived UnkillableStepTimeout
# after SLURM's signal, slurmstepd ends itself and drains the node ("JOB NOT RUNNING": the
# step had not started). The line that sent the signal said the job's end.
STEPD_ENDS = (
    "slurmstepd: error: *** JOB 5 STEPD TERMINATED ON gpu-17 AT 2026-01-01T00:05:00 DUE TO JOB "
    "NOT ENDING WITH SIGNALS ***",
    "slurmstepd-gpu-17: error: *** STEP 5.0 STEPD TERMINATED ON gpu-17 AT 2026-01-01T00:05:00 "
    "DUE TO JOB NOT ENDING WITH SIGNALS ***",
    "slurmstepd: error: *** EXTERN STEP FOR 5 STEPD TERMINATED ON gpu-17 AT Thu Jan  1 00:05:00 "
    "DUE TO JOB NOT ENDING WITH SIGNALS ***",
    "slurmstepd: error: *** INTERACTIVE STEP FOR 5 STEPD TERMINATED ON gpu-17 AT "
    "2026-01-01T00:05:00 DUE TO JOB NOT RUNNING ***",
)


@pytest.mark.parametrize("line", STEPD_ENDS)
def test_slurmstepd_s_own_end_changes_no_status_and_is_no_warning(line):
    cancel = "slurmstepd: error: *** JOB 5 ON gpu-17 CANCELLED AT 2026-01-01T00:00:00 DUE TO TIME LIMIT ***"
    assert _end([*block(3, METRICS), cancel, line]) == ("cancelled", "TIME LIMIT", [])
    assert _end([*block(3, METRICS), EXIT_1, line]) == (
        "failed",
        "srun: task 0: Exited with exit code 1",
        [],
    )
    assert _end([*block(3, METRICS), line]) == (None, None, [])


# -- 2. srun's own lines, not copies of them -------------------------------------------------
# srun writes "srun: error: <hosts>: <task(s)>: <end>" to the batch script's stderr: no Ray
# prefix, no header, at a line's start (or after the driver's bar, the same stream), and
# nothing after its end. A copy in other text keeps something around it.
COPIES = (
    f"(pid=77) {EXIT_1}",  # a worker's output, forwarded by Ray
    f"{P}{EXIT_1}",
    lg(EXIT_1),  # the trainer logging it
    f"'{EXIT_1}'",
    f"{EXIT_1}',",  # a quoted string's end, a dict's value split by pformat
    f'{EXIT_1}"}}',  # a JSON record's
    f"{EXIT_1}\\n', 'stderr': '…'}}",
    "srun: error: gpu-17: task 0: Killed', 'rc': 137}",
    'srun: error: gpu-17: task 0: Out Of Memory"',
    f"  {EXIT_1}",
    f"Example generated: {EXIT_1}",
)


@pytest.mark.parametrize("line", COPIES)
def test_srun_s_words_in_other_text_end_nothing(line):
    assert _end([*block(3, METRICS), line]) == (None, None, [])


@pytest.mark.parametrize(
    ("line", "detail"),
    [
        (EXIT_1, "task 0: Exited with exit code 1"),
        (f"{EXIT_1}  ", "task 0: Exited with exit code 1"),
        (
            "srun: error: gpu-[1-2]: tasks 0-1: Segmentation fault (core dumped)",
            "tasks 0-1: Segmentation fault (core dumped)",
        ),
        ("srun: error: n1: task 3: Stopped (tty input)", "task 3: Stopped (tty input)"),
        ("srun: error: n1: task 3: Trace/breakpoint trap", "task 3: Trace/breakpoint trap"),
        ("srun: error: n1: task 3: Real-time signal 3", "task 3: Real-time signal 3"),
    ],
)
def test_srun_s_own_lines_are_read(line, detail):
    assert _end([*block(3, METRICS), line]) == ("failed", f"srun: {detail}", [])


def _at(t: str, lines: list[str]) -> list[str]:
    """``lines`` (loguru records and their dicts) with their records' time ``t``."""
    return [line.replace("2026-02-08 00:56:50.123", t) for line in lines]


def test_a_copy_of_srun_s_line_in_an_older_log_printed_later_ends_nothing():
    """``cat old.out`` in the batch script: an older job's log, srun's line and all. Printed
    after the job's own output began, its times go back before the log's first: the line is
    the copy's. Printed before, the job's own start or training after it undoes it."""
    own = _at("2026-03-01 10:00:00.000", [lg("Total training steps: 9"), *block(3, METRICS)])
    old = _at("2026-02-20 08:00:00.000", block(7, METRICS))
    assert _end([*own, *old, EXIT_1]) == (None, None, [])
    assert _end([*own, *old, EXIT_1, PLAIN_CANCELS[0]])[:2] == ("cancelled", "CANCELLED")
    # the job's own srun line, after its own times: the end
    later = _at("2026-03-01 11:00:00.000", block(4, METRICS))
    assert _end([*own, *old, *later, EXIT_1])[:2] == (
        "failed",
        "srun: task 0: Exited with exit code 1",
    )
    assert _end([*own, EXIT_1])[:2] == ("failed", "srun: task 0: Exited with exit code 1")
    # printed first: the job's own start, or its training, after it undoes it
    start = _at(
        "2026-03-01 10:00:00.000", [lg("No checkpoint found, starting training from scratch")]
    )
    assert _end([*old, EXIT_1, *start])[:2] == (None, None)  # (its steps dropped, warned)
    assert _end([*old, EXIT_1, *own]) == (None, None, [])


# -- 3. eval output goes on as training output does ------------------------------------------
def test_eval_output_after_srun_s_end_undoes_it():
    """A running job that only evaluates after a background step's exit: no end."""
    mirror = 'WANDB_MIRROR kind=eval step=3 metrics={"eval/all/avg_score": 0.5}'
    eval_block = block(3, {"eval/all/avg_score": "0.5000", "timing/eval": "3.0000"})
    for tail in ([mirror], [lg(mirror)], eval_block):
        assert _end([*block(3, METRICS), EXIT_1, *tail]) == (None, None, [])
        # and a plain cancel after it is the job's end
        assert _end([*block(3, METRICS), EXIT_1, *tail, PLAIN_CANCELS[0]])[:2] == (
            "cancelled",
            "CANCELLED",
        )


def test_batch_generation_after_srun_s_end_undoes_it():
    """The generator's batch lines, of training or eval, are the trainer going on."""
    for mode in ("training", "eval (run_eval_step3)"):
        for line in (
            f"Starting batch generation for 16 trials (mode={mode})",
            "Batch generation complete: 13/16 successful, 1 failed instances, 0 masked",
        ):
            assert _end([*block(3, METRICS), EXIT_1, lg(line)]) == (None, None, [])
            # a memory failure SLURM reported, undone alike; a plain cancel after it is the end
            oom = "slurmstepd: error: Detected 1 oom_kill event in StepId=7.batch."
            assert _end([*block(3, METRICS), oom, lg(line)]) == (None, None, [])
            end = _end([*block(3, METRICS), EXIT_1, lg(line), PLAIN_CANCELS[0]])
            assert end[:2] == ("cancelled", "CANCELLED")


# -- 4. a failure warned after 'Training done!' is judged by order ---------------------------
def test_a_cancel_after_training_that_went_on_past_a_warned_failure_is_a_cancel():
    """'Training done!', a step beside it failed (warned), then training went on (a second
    run in the job), then a plain cancel: that cancel ended the training going on."""
    done = [*block(3, METRICS), lg("Training done!")]
    for failure in (EXIT_1, JOB_FAILED):
        end = _end([*done, failure, *block(4, METRICS), PLAIN_CANCELS[0]])
        assert end[:2] == ("cancelled", "CANCELLED")
        # 'Training done!' again, then the cancel: nothing failed between
        end = _end([*done, failure, lg("Training done!"), PLAIN_CANCELS[0]])
        assert end[:2] == ("cancelled", "CANCELLED")
        # the failure right before the cancel: the step beside training was cancelled
        end = _end([*done, failure, *block(4, METRICS), failure, PLAIN_CANCELS[0]])
        assert end[:2] == ("complete", None)


# -- 5. SLURM's FAILED keeps srun's exit code in the detail ----------------------------------
def test_slurm_s_failed_keeps_srun_s_exit_code_in_the_detail():
    for tail in ([EXIT_1, JOB_FAILED], [EXIT_1, JOB_FAILED, PLAIN_CANCELS[0]]):
        assert _end([*block(3, METRICS), *tail]) == ("failed", slurm_and_srun(EXIT_1), [])
    # SLURM's alone says its words alone; srun's after it adds nothing (an end was read)
    assert _end([*block(3, METRICS), JOB_FAILED, EXIT_1])[:2] == (
        "failed",
        "SLURM: non-zero exit code or other failure mode",
    )


# -- 7. a split log: a step's FAILED in the .err, training in the .out -----------------------
STEP_FAILED = JOB_FAILED.replace("JOB 7", "STEP 7.1")


def _split(tmp_path, out_lines: list[str], err_lines: list[str]):
    from sitegen.read.logfile import parse_log
    from sitegen.redact import Redactor

    out, err = tmp_path / "x_5.out", tmp_path / "x_5.err"
    out.write_text("".join(f"{line}\n" for line in out_lines))
    err.write_text("".join(f"{line}\n" for line in err_lines))
    log, _ = parse_log(out, "x_5.out", Redactor(), ((err, "x_5.err"),))
    return log.end_marker, log.end_detail


def test_a_split_logs_step_failure_stays_when_only_the_out_trains_on(tmp_path):
    """The .err holds the trainer's logger and its bar: training after the FAILED would show
    there, in the .err's own order. The .out's prints (the mirror) carry no time, nor does
    SLURM's FAILED line: nothing orders them, and the .err says the job's end."""
    mirror = [f'WANDB_MIRROR kind=train step={s} metrics={{"loss": 0.5}}' for s in (1, 2, 3)]
    said = ("failed", "SLURM: non-zero exit code or other failure mode")
    assert _split(tmp_path, mirror, [*block(1, METRICS), STEP_FAILED]) == said
    # training after it in the .err itself undoes it, as in one file
    err = [*block(1, METRICS), STEP_FAILED, *block(2, METRICS)]
    assert _split(tmp_path, mirror, err) == (None, None)


def test_a_split_logs_step_failure_gives_way_to_the_end_the_job_said_later(tmp_path):
    """No order between the files: the .err's step FAILED stays against the .out's training,
    also when the .err shows no training of its own. A job that went on says so by its end:
    'Training done!' in the .out, SLURM's cancel for a reason in the .err."""
    mirror = [f'WANDB_MIRROR kind=train step={s} metrics={{"loss": 0.5}}' for s in (1, 2, 3)]
    said = ("failed", "SLURM: non-zero exit code or other failure mode")
    assert _split(tmp_path, mirror, [STEP_FAILED]) == said
    assert _split(tmp_path, [*mirror, lg("Training done!")], [STEP_FAILED]) == ("complete", None)
    limit = (
        "slurmstepd: error: *** JOB 5 ON n1 CANCELLED AT 2026-01-01T00:00:00 DUE TO TIME LIMIT ***"
    )
    assert _split(tmp_path, mirror, [STEP_FAILED, limit]) == ("cancelled", "TIME LIMIT")
