"""Running a piece of work at two sizes in a child process, to bound how its time grows.

A pattern that starts a match at each character of a long run and reads the run to its
end takes time quadratic in the line: on a line of 1 MB, hours. The tests built on
:func:`growth` run the same work on inputs of 16 kB and of 256 kB in a child process (which
can be stopped, where a regex holding the interpreter cannot) and compare the two times:
work linear in its input takes ~16 times as long on the larger, quadratic work ~256 times.

The times are the CPU time of the child's thread (other processes on a busy machine do not
stretch it; the process's CPU clock is no use here: under the child's CPU limit it moves in
ticks of a few ms), so the large run may take at most :data:`MAX_GROWTH` times the small
one and only :data:`SLACK_S` more: a quadratic piece of work is caught by the ratio of its
times, not by taking long. A test keeps the fixed costs (making a redactor, compiling its
rules) out of the timed work, where they would hide a quadratic piece's growth. Each size
runs once; a piece of work that grew too fast is timed again, the small size the median of
three runs and the large the best of two (one reading may be the machine's; a quadratic
piece is slow every time).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap

SMALL, LARGE = 1 << 14, 1 << 18
MAX_GROWTH = 48  # linear is 16 (the ratio of the sizes), quadratic 256
SLACK_S = 0.05  # a busy machine's noise in the large run's CPU time
CPU_LIMIT_S = 60  # a quadratic pattern on a long line takes hours: the child is stopped
WALL_LIMIT_S = 1800  # (only if the machine gives it under 1/30 of a core)


def growth(setup: str, work: str, small: int = SMALL, large: int = LARGE) -> dict:
    """Run ``work`` (a function body of ``n``, returning something JSON holds) after ``setup``
    in a child process, at ``small`` and ``large``: the time of each and what the large run
    returned, timed again when it grew too fast (see the module's docstring). Fails when the
    child takes more than :data:`CPU_LIMIT_S` of CPU."""
    got = growth_each(setup, work, [None], small, large)[0]
    if not _linear(got):
        got = growth_each(setup, work, [None], small, large, small_runs=3)[0]
    return got


def growth_each(
    setup: str,
    work: str,
    cases: list,
    small: int = SMALL,
    large: int = LARGE,
    small_runs: int = 1,
) -> list[dict]:
    """The times of ``work`` (a function body of ``case`` and ``n``) at ``small`` (the median
    of ``small_runs`` runs) and ``large`` for each of ``cases``, timed apart in one child
    process: a piece of work that is quadratic alone is quadratic in a test of its own, not
    hidden among linear ones. (Sizes other than 16 kB and 256 kB keep :data:`MAX_GROWTH` only
    in the same ratio, 16.) With ``small_runs`` above 1 (a time taken again) the large size
    runs twice, the least kept: a reading the busy machine made too low or too high is left
    out."""
    large_runs = 2 if small_runs > 1 else 1
    # The child is stopped by the kernel after CPU_LIMIT_S of CPU time: a limit that a busy
    # machine does not trip (as it would a time on the clock), and that stops a regex holding
    # the interpreter.
    code = (
        f"import resource\nresource.setrlimit(resource.RLIMIT_CPU, ({CPU_LIMIT_S}, {CPU_LIMIT_S + 5}))\n"
        + textwrap.dedent(setup)
        + "\ndef work(case, n):\n"
        + textwrap.indent(textwrap.dedent(work), "    ")
        + textwrap.dedent(
            f"""
            import json, time
            out = []
            for case in json.loads({json.dumps(json.dumps(cases))}):
                times = {{}}
                for n, runs in (({small}, {small_runs}), ({large}, {large_runs})):
                    took = []
                    for _ in range(runs):
                        t = time.thread_time()
                        result = work(case, n)
                        took.append(time.thread_time() - t)
                    took.sort()
                    times[n] = took[len(took) // 2] if n == {small} else took[0]
                out.append(
                    {{"case": case, "small": times[{small}], "large": times[{large}], "result": result}}
                )
            print(json.dumps(out))
            """
        )
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=WALL_LIMIT_S,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(f"not done in {WALL_LIMIT_S} s") from None
    assert done.returncode not in (-signal.SIGXCPU, -signal.SIGKILL), (
        f"stopped after {CPU_LIMIT_S} s of CPU: time grows faster than the input"
    )
    assert done.returncode == 0, "\n".join(x[:300] for x in done.stderr.splitlines()[-20:])
    return json.loads(done.stdout.splitlines()[-1])


def assert_each_linear(
    setup: str, work: str, cases: list, small: int = SMALL, large: int = LARGE
) -> None:
    """:func:`assert_linear` of :func:`growth_each` for each case, a case that grew too fast
    timed again (see the module's docstring)."""
    slow = [
        got["case"] for got in growth_each(setup, work, cases, small, large) if not _linear(got)
    ]
    if slow:
        for got in growth_each(setup, work, slow, small, large, small_runs=3):
            assert_linear(got)


def _linear(got: dict) -> bool:
    return got["large"] <= MAX_GROWTH * got["small"] + SLACK_S


def assert_linear(got: dict) -> None:
    """The large run took at most :data:`MAX_GROWTH` times the small one (and
    :data:`SLACK_S` more)."""
    assert _linear(got), got
