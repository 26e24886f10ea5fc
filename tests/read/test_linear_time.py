"""A log's lines are read in time linear in their length, whatever they hold.

Each marker the parser looks for comes after and before a line of long runs of each kind
of character its patterns repeat (digits, spaces, brackets, letters, dots, slashes, …), a
Ray prefix opens such a line with a marker at its end (so each prefix pattern reads it),
and SLURM's and srun's lines come bare (with a prefix they are never read), in a log of
three good steps and a config dump; read at 32 kB and at 512 kB a line, the larger read
takes about 11 times as long (the lines' fixed costs), not 256 (tests/linear_time.py).
Each good step is still read, and the config dump's unreadable values are warned about.
"""

from __future__ import annotations

from tests.linear_time import assert_each_linear, assert_linear, growth

SETUP = r"""
import pprint, tempfile
from pathlib import Path
from sitegen.read.logfile import parse_log
from sitegen.redact import Redactor

P = "(skyrl_entrypoint pid=7) "
def lg(msg):
    return f"2026-02-08 00:00:01.000 | INFO     | m:f:1 - {msg}"
# the runs of one line: each pattern's repeated part, a line's worth of it
RUNS = ["0", " ", "[", "]", "a", ".", "a.", "1/", "-", "/", ":", "=", "(", "{", "'", "\\",
        "reward/", "--a ", "://a:", "\x1b[", "key: ", "a{key=1,", "token "]
# Markers whose own pattern reads on to the line's end, the run after them
AFTER = [
    lg("WANDB_MIRROR kind=train step=9 metrics={'x': 1"),
    lg("Exception breakdown: {'E': 1"),
    lg("Successfully saved checkpoint for global_step_9 to: /ckpt/x"),
    lg("Train loop failed at global_step 9: Invalid API key: x"),
    lg("vLLM Stats (step 9): running=1, "),
    lg("reward/avg_raw_reward: 0.5, reward/"),
    lg("Finished: 'step', time cost: 1.0"),
    "Training Step Progress:  50%|#####     | 1/2 [00:01<00:01, 1.0s/it]",
    "INFO 02-08 00:00:01 [loggers.py:1] Engine 000: Avg prompt throughput: 1.0 tokens/s, ",
    "slurmstepd: error: *** JOB 1 ON x CANCELLED AT 2026-02-08T00:00:09 ***",
    "srun: error: gpu-17: task 0: Exited with exit code 1 ",
    "slurmstepd: error: Job 1 exceeded memory limit (",
]
# and headers a record may be glued after (a progress bar's line), the run before them
BEFORE = [
    "] WANDB_MIRROR kind=x step=9 metrics={}",
    "] " + lg("Step 9:"),
    "] INFO 02-08 00:00:01 [loggers.py:1] Engine 000: Avg prompt throughput: 1.0 tokens/s",
    "] slurmstepd: error: Detected 1 oom_kill event",
    "] srun: error: gpu-17: task 0: Out Of Memory",
]
# Ray prefixes that open the run, a marker after it: each prefix pattern reads the run (the
# engine line's fast path matches the prefixes through the whole line)
ENGINE = "] INFO 02-08 00:00:01 [loggers.py:1] Engine 000: Avg prompt throughput: 1.0 tokens/s"
AROUND = [
    ("(MyActor(index=2, rank=(0 ", ENGINE),  # a prefix named by an actor's __repr__, unclosed
    ("\x1b[2m\x1b[36m(MyActor(index=2, rank=(0 ", ENGINE),
    ("\x1b[", ENGINE),  # a colour code before a prefix, unclosed
    ("(pid=gcs_server, ip=", ENGINE),
    ("(MyActor(index=2, rank=(0 ", "] srun: error: gpu-17: task 0: Out Of Memory"),
]
# SLURM's and srun's lines count only without a Ray prefix: written bare, the run after
BARE = [
    "srun: error: ",
    "srun: error: gpu-17: task 0: Exited with exit code 1 ",
    "srun: error: gpu-17: task ",
    "slurmstepd: error: ",
    "slurmstepd: error: Step 1.0 exceeded virtual memory limit (",
    "slurmstepd: error: Job ",
]

def log_text(n):
    lines = [
        lg("Starting"), "trainer:", "  run_name: r", "  data_snapshot: 2024-02-30",
        "  big: 1" + "0" * (n // 2), "  lr: 1.0e-06",  # (grows with n: no fixed cost)
    ]
    for step in (1, 2, 3):
        lines.append(lg(f"Step {step}:"))
        lines += pprint.pformat({"reward/avg_raw_reward": "0.5000", "trainer/global_step": step}).splitlines()
    each = (n - 200) // len(RUNS)
    filler = "".join((run * (each // len(run) + 1))[:each] for run in RUNS)
    lines += [marker + filler for marker in AFTER] + [filler + marker for marker in BEFORE]
    lines += [start + filler + end for start, end in AROUND]
    bare = [marker + filler for marker in BARE]
    return "\n".join([*(P + x for x in lines), *bare]) + "\n"

_folder = tempfile.TemporaryDirectory()  # removed when the child exits
folder = Path(_folder.name)
"""

WORK = r"""
path = folder / f"job_{n}.out"
if not path.exists():
    path.write_text(log_text(n))
log, _ = parse_log(path, path.name, Redactor())
config_warnings = [w.line for w in log.warnings if "config dump" in w.message]
return {"steps": [b.step for b in log.blocks][:3], "config": sorted(log.config or {}),
        "config_warnings": config_warnings}
"""


def test_long_lines_at_every_marker_read_in_linear_time():
    # (32 kB and 512 kB: the lines' count is fixed, and so is what each costs whatever its
    # length, so smaller logs would hide a quadratic reader's growth; 1 MB lines are cut)
    got = growth(SETUP, WORK, 1 << 15, 1 << 19)
    assert_linear(got)
    result = got["result"]
    assert result["steps"] == [1, 2, 3]
    # the date that is no day and the integer of thousands of digits: shown as written, warned
    assert result["config"] == ["trainer"]
    assert result["config_warnings"] == [4, 5]


# SLURM's lines whose words come after a part of any length (a time in any format, a node's
# name), each alone before the line of runs: a pattern that reads the runs again for each
# length of that part is quadratic in the line
SLURM_HEADS = [
    "slurmstepd: error: *** JOB 1 ON x CANCELLED AT ",
    "slurmstepd: error: *** JOB 1 CANCELLED AT x DUE TO NODE ",
    "slurmstepd: error: *** JOB 1 CANCELLED AT x DUE TO TIME LIMIT, ",
    "slurmstepd: error: *** JOB 1 FAILED (x) on ",
    "slurmstepd: error: *** JOB 1 STEPD TERMINATED ON x AT ",
    "slurmstepd: error: *** JOB 1 ON x UNCORRECTABLE MEMORY ERROR AT ",
]

SLURM_WORK = r"""
each = (n - 200) // len(RUNS)
filler = "".join((run * (each // len(run) + 1))[:each] for run in RUNS)
path = folder / f"slurm_{n}.out"
path.write_text(case + filler + "\n")
log, _ = parse_log(path, path.name, Redactor())
return [w.message for w in log.warnings]
"""


def test_slurm_lines_read_in_linear_time_whatever_their_time_holds():
    assert_each_linear(SETUP, SLURM_WORK, SLURM_HEADS)
