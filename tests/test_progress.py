import io

from sitegen.progress import Progress, archive_counts, counted


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_bar_on_a_terminal_and_silence_otherwise():
    out = Tty()
    with Progress(out, min_interval_s=0) as p:
        p.total = 4
        for i in range(4):
            p(f"log {i}")
    text = out.getvalue()
    assert "[######..................] 1/4 log 0" in text
    assert "[########################] 4/4 log 3" in text
    assert text.endswith("\r\x1b[2K")  # the bar is cleared before the summary
    quiet = io.StringIO()
    with Progress(quiet) as p:
        p.total = 20
        for i in range(20):
            p(f"log {i}")
    lines = quiet.getvalue().splitlines()
    assert lines == [f"progress: {n}/20 parsed (log {n - 1})" for n in (5, 10, 15, 20)]


def test_counts_name_what_they_count_in_the_number_they_need():
    assert counted(1, "run") == "1 run" and counted(0, "run") == "0 runs"
    names = ("jobs", "runs", "trials", "eval_trials", "unreadable", "job_level", "missing")

    def archive(*counts: int) -> str:
        return archive_counts(dict(zip(names, counts, strict=True)))

    assert archive(1, 1, 1, 0, 0, 0, 0) == "1 job in 1 run, 1 training trial, 0 eval trials"
    assert archive(15, 13, 355, 6, 2, 1, 1) == (
        "15 jobs in 13 runs, 355 training trials, 6 eval trials, 2 unreadable result.json, "
        "1 job-level result.json (not a trial), 1 trial without result.json"
    )
    assert archive(2, 1, 0, 1, 1, 2, 3).endswith(
        "1 eval trial, 1 unreadable result.json, 2 job-level result.json (not trials), "
        "3 trials without result.json"
    )
