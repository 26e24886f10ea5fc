"""What the lines of a SkyRL log look like to the parser (docs/formats.md §2–§5): the
patterns :class:`~sitegen.read.logparse.LogParser` reads, and :class:`Markers`, the fast
finder of the lines in a block that may carry one.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from ahocorasick_rs import MATCHKIND_LEFTMOST_FIRST, BytesAhoCorasick

from sitegen.read.lines import SLURMSTEPD

# A number read as an int has at most 18 digits (a 64-bit integer holds every such number;
# JSON tools and our own writer refuse larger ones): a longer one does not match, and the
# line is warned about as unreadable (or ignored) like any other malformed marker.
STEP_RE = re.compile(r"^Step (\d{1,18}):\s*$")
MIRROR_RE = re.compile(r"^WANDB_MIRROR kind=(\w+) step=(\d{1,18}) metrics=(\{.*\})\s*$")
BATCH_START_RE = re.compile(r"^Starting batch generation for (\d{1,18}) trials \(mode=(\w+)")
BATCH_EXC_RE = re.compile(r"^Exception breakdown: (\{.*\})\s*$")
# The success count can be negative: the generator subtracts exception counts, which can
# exceed the batch (docs/formats.md §4). Read as written.
BATCH_DONE_RE = re.compile(
    r"^Batch generation complete: (-?\d{1,18})/(\d{1,18}) successful, (-?\d{1,18}) failed instances, "
    r"(\d{1,18}) masked"
)
# A checkpoint's folder is the rest of the line: it may hold spaces ("/content/drive/My Drive/…")
LOAD_CKPT_RE = re.compile(r"^Loading checkpoint from: (\S(?:[^\r\n]*\S)?)")
RESUME_RE = re.compile(
    r"^(?:Resuming from global_step:?|Resumed training from global_step) (\d{1,18})(?!\d)"
)
# A start from scratch: "No checkpoint found" (resume_mode latest), "Checkpoint resumption
# disabled" (resume_mode none, the synchronous trainer; skyrl/train/trainer.py, load_checkpoints).
FRESH_STARTS = (
    "No checkpoint found, starting training from scratch",
    "Checkpoint resumption disabled, starting training from scratch",
)
CKPT_STEP_RE = re.compile(r"global_step_(\d{1,18})(?!\d)")
SAVED_RE = re.compile(
    r"^Successfully saved checkpoint for global_step_(\d{1,18}) to: (\S(?:[^\r\n]*\S)?)"
)
FAILED_RE = re.compile(
    r"^(?:Train loop failed at global_step (\d{1,18})|Training failed at step (\d{1,18}))(?!\d)"
)
# slurmstepd's cancel line (req.c, _handle_signal_container) in each SLURM version's words:
# docs/formats.md §4.4 (the reason is what comes before a comma). The time is
# SLURM_TIME_FORMAT's, spaces and all: read up to the words after it, possessive (never
# backtracked into: the match is linear in the line).
_CANCEL_TIME = r"(?P<time>(?:(?! DUE (?:T[Oo]|to) | BY | \*\*\*).)++)"
SLURM_CANCEL_RE = re.compile(
    rf"^{SLURMSTEPD} error: \*\*\* (?:JOB|STEP) \S+ (?:ON \S+ )?CANCELLED AT {_CANCEL_TIME}"
    r"(?: DUE TO (?:(?P<node_failure>NODE) \S+ FAILURE|(?P<reason>[A-Z ]+?)(?:, [^*]*)?)"
    r"| DUE to SIGNAL (?P<signal>[A-Za-z0-9 \-]{1,40}?)| BY (?P<by>\S+))?"
    r"(?: on \S+)? \*\*\*"
)
NODE_FAILURE = "NODE FAILURE"
# Any other line of SLURM's cancel: read as a plain one with a warning. One character, then
# any: "\S+.*" would read the line's rest again for each length of its word.
SLURM_CANCEL_ANY_RE = re.compile(
    rf"^{SLURMSTEPD} error: \*\*\* (?:JOB|STEP) \S+ (?:ON \S+ )?CANCELLED AT \S.*\*\*\*"
)
# The reason slurmctld gave with the signal (SLURM 22.05+), after the cancel's line: passed over
SLURM_REASON_RE = re.compile(rf"^{SLURMSTEPD} error: \*\*\* REASON: .*\*\*\*")
# A cancel's detail when SLURM gives no reason: the user's scancel, srun's --kill-on-bad-exit
PLAIN_CANCEL = "CANCELLED"
# A step SLURM ended because one of its tasks failed (25.05+): the failure read before it, if
# any, is the job's end, as before a plain cancel
TASK_FAILURE = "TASK FAILURE"
# "*** %s ON %s FAILED (…) ***": SLURM ends the job as failed (older: "… FAILED (…) on %s ***")
SLURM_FAILED_RE = re.compile(
    rf"^{SLURMSTEPD} error: \*\*\* (?:JOB|STEP) \S+ (?:ON \S+ )?FAILED \(([^)]*)\)(?: on \S+)? \*\*\*"
)
# step_terminate_monitor.c (SLURM 17.02+): the step outlived UnkillableStepTimeout after
# SLURM's signal; the line that sent the signal said the job's end: this one changes nothing.
SLURM_STEPD_END_RE = re.compile(
    rf"^{SLURMSTEPD} error: \*\*\* (?:JOB|STEP|EXTERN STEP FOR|INTERACTIVE STEP FOR) \S+ "
    r"STEPD TERMINATED ON \S+ AT .* DUE TO JOB NOT (?:RUNNING|ENDING WITH SIGNALS) \*\*\*"
)
# A node's memory failed under the job (the time as in a cancel: up to the last "***")
SLURM_MEMORY_RE = re.compile(
    rf"^{SLURMSTEPD} error: \*\*\* (?:JOB|STEP) \S+ (?:ON \S+ )?UNCORRECTABLE MEMORY ERROR AT \S.* \*\*\*"
)
SLURM_OOM_RE = re.compile(rf"^{SLURMSTEPD} error: Detected (\d{{1,18}}) oom[_-]kill event")
# jobacct_gather's memory enforcement (docs/formats.md §4.4; group 1: its virtual memory
# limit). "Exceeded step memory limit at some point." is task/cgroup's note that the limit
# was hit (memory reclaimed, nothing killed)
SLURM_MEM_LIMIT_RE = re.compile(
    rf"^{SLURMSTEPD} error: (?:(?:Job |Step )?\S+ exceeded (virtual )?memory limit \("
    r"|Exceeded job memory limit\s*$)"
)
SLURM_MEM_PEAK_RE = re.compile(
    rf"^{SLURMSTEPD} error: Exceeded (?:job|step) memory limit at some point"
)
# srun's report of its tasks' end (src/srun/launch.c, _task_finish; docs/formats.md §4.4),
# a signal by glibc's strsignal name (letters, digits, spaces, "/", "-": "I/O possible",
# "Real-time signal N", "Stopped (tty input)"). Matched whole (fullmatch): a copy inside
# other text (quoted, a dict's value: a quote, comma or brace after it) is no task's end.
SRUN_ERROR = "srun: error: "
SRUN_TASK_RE = re.compile(
    r"srun: error: \S+: (tasks? [0-9,\-\[\]]{1,200}): "
    r"(Out Of Memory|Exited with exit code [0-9]{1,18}"
    r"|(?!Out Of Memory|Exited )[A-Z](?:[A-Za-z0-9 /\-]{0,40}[A-Za-z0-9])?(?: \([a-z ]{1,12}\))?"
    r"(?: \(core dumped\))?)"
    r"[ \t]*"
)
SRUN_OOM = "Out Of Memory"
# How an end read from srun's line is told (its detail): srun reports a task's end, which
# may be a background step's, not the training's (statuslines.StatusLines._srun)
SRUN_DETAIL = "srun: "


def is_srun_end(detail: str | None) -> bool:
    """Whether an end's detail is srun's report of a task's exit code or signal."""
    return detail is not None and detail.startswith(SRUN_DETAIL)


# How a task that SLURM signalled ends (a cancel sends SIGTERM, then SIGKILL): srun names the
# signal, or the task's shell exits with 128 + its number or passes on the number itself
_SIGNALLED_RE = re.compile(
    r"tasks? \S+: (?:Terminated|Killed|Exited with exit code (?:143|137|15|9))$"
)


def is_signalled_end(detail: str | None) -> bool:
    """Whether an end's detail is srun's report of a task ended by SIGTERM or SIGKILL: what a
    cancel does to the job's tasks (the cancel that follows is the end, not a failure)."""
    return (
        detail is not None
        and detail.startswith(SRUN_DETAIL)
        and _SIGNALLED_RE.fullmatch(detail, len(SRUN_DETAIL)) is not None
    )


# "Step N:" headers that STEP_RE cannot read ("Step 3a: ", "Step -3: ", "Step : "): warned about
STEP_LIKE_RE = re.compile(r"^Step \d+:|^Step [^\s:]{0,24}:\s*$|^Step :\s*$")
# A tracking logger's "Step N:" record glued after other text on the line
GLUED_STEP_RE = re.compile(r"\d \| [A-Z]+\s*\| \S+ - Step \d+:\s*$")
# A number as float() reads it ("1.2.3" is none).
_NUMBER = r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:e[-+]?[0-9]+)?"
TIMER_RE = re.compile(rf"^Finished: '([^']+)', time cost: ({_NUMBER}|nan|inf)s\s*$")
STARTED_STEP = "Started: 'step'"
# "reward/avg_pass_at_5: 0.6533, reward/avg_raw_reward: 0.2174, reward/mean_positive_reward: …"
# (a name starts where its run of name characters starts: tried at each "reward/" inside one,
# each try read the run to its end)
REWARD_PAIR_RE = re.compile(
    rf"(?<![\w/.\-])(reward/[\w/.\-]++): ({_NUMBER}|nan|inf|-inf)(?=,|\s*$)"
)
# tqdm bars of the training loop (both trainers): "…Progress:  14%|█▍   | 1/7 [00:10<…]"
TRAIN_BAR_RE = re.compile(
    r"^Training (?:Step Progress|Batches Processed):[^|]*\|[^|]*\| ?(\d{1,18})/(\d{1,18}) "
)
TOTAL_STEPS_RE = re.compile(r"^Total training steps: (\d{1,18})\s*$")
# A notebook front end that keeps only the last lines says so (docs/formats.md §4).
TRUNCATED_RE = re.compile(r"^(?:Output is truncated\b|\[?\.\.\. ?\[?\d+ lines? truncated)")
# Timers the site knows (both trainers' trees and what is logged beside `step`); other
# Timer lines (init_weight_sync_state, dump_data_batch, …) are not part of timing/*.
KNOWN_TIMERS = frozenset(
    {
        "step",
        "wait_for_generation_buffer",
        "generate",
        "postprocess_generator_output",
        "convert_to_training_input",
        "run_training",
        "fwd_logprobs_values_reward",
        "apply_reward_kl_penalty",
        "compute_advantages_and_returns",
        "train_critic_and_policy",
        "policy_train",
        "critic_train",
        "sync_weights",
        "save_checkpoints",
        "save_hf_model",
        "cleanup_old_checkpoints",
        "update_ref_with_policy",
        "eval",
    }
)
YAML_TOP_RE = re.compile(r"^[A-Za-z_][\w\-]*:(?: .*)?$")
CONFIG_ROOTS = frozenset({"data", "trainer", "generator", "environment", "algorithm"})

# A line holding none of these cannot carry anything we read (once the config dump is behind
# us and no metrics dict is open): a loguru header (a time, maybe colour codes, then " | ";
# tqdm bars have " | " too, but after a space), a vLLM engine line, the SLURM end line, vLLM
# step lines (Markers.LITERALS).
LOGURU_HINT = re.compile(rb"\d(?:\x1b\[[0-9;]*m)* \| ")
# Where a LOGURU_HINT may end: a " | " right after a digit, or after an "m" (a colour
# code's end; then LOGURU_HINT itself is asked), found by the literals' automaton.
HINT_LITERALS = (*(b"%d | " % d for d in range(10)), b"m | ")


class Markers:
    """Finds the next line of a block that may carry a marker, in one pass over the block:
    the literals and the loguru hints (:data:`HINT_LITERALS`) by one Aho-Corasick
    automaton. A line holds a hit exactly when it holds a literal or a :data:`LOGURU_HINT`.
    """

    # "Engine 0", not "Engine": the Ray actor AsyncVLLMInferenceEngine prefixes every line
    # an engine writes (most are "Request truncated" warnings), and only stats lines say
    # "Engine 000:" (with "Engine", nearly all the lines taken as vLLM lines were not stats).
    LITERALS = (
        b"Engine 0",
        b"Engines Aggregated",
        b"slurmstepd",
        b"srun: error: ",
        b"vLLM Stats",
        b"WANDB_MIRROR",
        b"Avg prompt throughput",
        b"Prefix cache hit rate: GPU",  # the V0 engine's own line for it
        b"Training Step Progress",
        b"Training Batches Processed",
        b"Output is truncated",  # not "truncated": engines log "Request truncated" a lot
        b"lines truncated",
    )
    # Leftmost-first, non-overlapping matches. An occurrence left out overlaps a reported
    # match that starts no later; no pattern holds a \n, so both are on the same line. The
    # reported one is a hit, unless it is an "m | " that is no LOGURU_HINT: but nothing
    # can hide behind that one (no pattern starts with " " or "|", nor another at its "m").
    _FINDER = BytesAhoCorasick([*LITERALS, *HINT_LITERALS], matchkind=MATCHKIND_LEFTMOST_FIRST)
    _COLOUR_HINT = len(LITERALS) + 10  # the index of b"m | "

    def __init__(self, block: bytes) -> None:
        self.block = block
        self.starts: list[int] | None = None  # the matches' starts, made on the first find
        self.checked: list[bool] = []  # per match: a hit as it stands (not an "m | ")
        self.k = 0  # the first match not before the last pos asked for

    def find(self, pos: int) -> int:
        """Where the first hit at or after ``pos`` (a line start, never less than the last
        asked) is, or -1: a position on the hit's line, whose line callers take."""
        b = self.block
        if self.starts is None:
            found = self._FINDER.find_matches_as_indexes(b)
            colour = self._COLOUR_HINT
            self.starts = [s for _, s, _ in found]
            self.checked = [i != colour for i, _, _ in found]
        starts = self.starts
        k = bisect_left(starts, pos, self.k)
        n = len(starts)
        while k < n:
            i = starts[k]
            # "m | ": a hint only after a digit and a colour code, whatever its length
            # (exactly the lines LogParser.feed_raw takes for a LOGURU_HINT: a clean
            # block's runs and its bad lines are read by the two; they must agree).
            if self.checked[k] or LOGURU_HINT.search(b, b.rfind(b"\n", 0, i) + 1, i + 4):
                self.k = k
                return i
            k += 1
        self.k = k
        return -1
