import io

from sitegen.progress import Progress


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
