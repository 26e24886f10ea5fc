"""Headers anywhere: a synth log with random tqdm bars glued in front of every marker
(with and without the bar's \\r) reads exactly as the clean log (docs/formats.md §2).

A bar the driver wrote carries no Ray prefix: the record glued after it keeps its own
prefix after the bar, or loses it (a notebook's rendering of the stream); a loguru
record's process then comes from the lines after it (a ``Step N:`` header's, from its
dict's first line)."""

from __future__ import annotations

import functools
import io
import re

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitegen.read.lines import ANSI_RE, LOGURU_RE, RAY_PREFIX_RE, VLLM_RE
from sitegen.read.logparse import LogParser
from sitegen.redact import Redactor
from sitegen.synth import synth

# Not the training loop's own bar: its count is data (it numbers text-only steps).
DESCS = ("Processed prompts", "Generation Buffer Progress", "Sampling", "")


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    root = tmp_path_factory.mktemp("glue")
    synth(root, seed=11, steps=8, real=True)
    names = [
        "exp-async/logs/async-run_561773.out",  # console, coloured Ray prefixes
        "flat/stale/train_600150.out",  # mirror form
        "flat/sync-baseline/train_600100.out",  # split timing, failed
        "real/sync-glued/train_700100.out",  # already glued, V0, prefix forms
        "real/wandb-only/train_700200.out",  # text only
    ]
    return [(root / n).read_bytes() for n in names]


bars = st.builds(
    lambda desc, n, total, rate, post: (
        f"{desc}{': ' if desc else ''}{100 * n // total:3d}%|{'#' * (10 * n // total):<10}| "
        f"{n}/{total} [00:{n % 60:02d}<01:{total % 60:02d}, {rate:.2f}{'it/s' if rate > 1 else 's/it'}{post}]"
    ),
    st.sampled_from(DESCS),
    st.integers(0, 50),
    st.integers(50, 400),
    st.floats(0.01, 99, allow_nan=False),
    st.sampled_from(("", ", buffer qsize=3")),
)


PLACES = ("after its prefix", "before its prefix", "instead of its prefix")


def _glue(data: bytes, draw_bar, draw_cr, draw_place=lambda: PLACES[0]) -> bytes:
    """Put a bar in front of each record's header, maybe with \\r: after its Ray prefixes,
    before them (the driver's bar, then the record as Ray forwards it) or instead of them
    (the record's prefix lost; not a vLLM record's, whose prefix names its engine)."""
    out = []
    for raw in data.split(b"\n"):
        text = raw.decode("utf-8", errors="surrogateescape")
        plain = ANSI_RE.sub("", text)
        head = CONTAINER.sub("", plain)
        for _ in range(3):
            m = RAY_PREFIX_RE.match(head)
            if not m:
                break
            head = head[m.end() :]
        loguru = LOGURU_RE.match(head) or head.startswith("WANDB_MIRROR")
        if loguru or VLLM_RE.match(head) or head.startswith("slurmstepd:"):
            m = CONTAINER.match(text)
            start = m.end() if m else 0  # a container time stays first
            pos = _header_pos(text)  # where the header starts in the raw (coloured) text
            bar = draw_bar() + ("\r" if draw_cr() else "")
            place = draw_place()
            if place == PLACES[1]:
                text = text[:start] + bar + text[start:]
            elif place == PLACES[2] and loguru:
                text = text[:start] + bar + text[pos:]
            else:
                text = text[:pos] + bar + text[pos:]
        out.append(text.encode("utf-8", errors="surrogateescape"))
    return b"\n".join(out)


PREFIX_RAW = re.compile(r"(?:\x1b\[[0-9;]*m)*\([^)]*\)(?:\x1b\[[0-9;]*m)* ")


CONTAINER = re.compile(r"^\d{4}-\d\d-\d\dT[\d:.]+Z ")


def _header_pos(text: str) -> int:
    """After the container time and Ray prefixes: they are written around the whole line."""
    m = CONTAINER.match(text)
    pos = m.end() if m else 0
    for _ in range(3):
        m = PREFIX_RAW.match(text, pos)
        if not m:
            break
        pos = m.end()
    return pos


def _parse(data: bytes):
    p = LogParser("job.out", Redactor(), year_hint=2026)
    p.feed_stream(io.BytesIO(data))
    return p.finish(len(data), 0.0)


@functools.cache
def _clean(data: bytes) -> dict:
    """``_without_lines`` of a source log's parse, made once a log (the tests compare many
    glued variants of each with it)."""
    return _without_lines(_parse(data))


def _without_lines(log) -> dict:
    """The parse with line numbers and sizes left out (a \\r adds lines, a bar bytes)."""
    d = msgspec.json.decode(msgspec.json.encode(log))  # (NaN as null: NaN != NaN)
    for b in d["blocks"] + d["eval_blocks"]:
        b["line"] = 0
    d["lines"] = d["size_bytes"] = 0
    d["warnings"] = sorted(re.sub(r"\d+", "N", w["message"]) for w in d["warnings"])
    d["mid_run"] = re.sub(r"line \d+", "line N", d["mid_run"] or "")
    return d


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_bars_glued_before_every_marker_change_nothing(logs, data):
    src = logs[data.draw(st.integers(0, len(logs) - 1))]
    glued = _glue(
        src,
        lambda: data.draw(bars),
        lambda: data.draw(st.booleans()),
        lambda: data.draw(st.sampled_from(PLACES)),
    )
    assert glued != src
    clean = _clean(src)
    assert clean["blocks"], "the source log has metrics"
    assert _without_lines(_parse(glued)) == clean


def test_glue_helper_really_glues(logs):
    glued = _glue(
        logs[0],
        lambda: "Training Batches Processed:  50%|#####     | 1/2 [00:01<00:01, 1.00it/s]",
        lambda: False,
    )
    n = sum(
        1
        for line in glued.split(b"\n")
        if b"it/s]" in line
        and b" | INFO" in ANSI_RE.sub("", line.decode("utf-8", "replace")).encode()
    )
    assert n > 20


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("cr", [False, True])
def test_every_marker_glued_the_same_way_changes_nothing(logs, place, cr):
    bar = "Sampling:  50%|#####     | 1/2 [00:01<00:01, 1.00it/s]"
    for src in logs:
        glued = _glue(src, lambda: bar, lambda: cr, lambda: place)
        assert _without_lines(_parse(glued)) == _clean(src)
