"""The parse stage's order of work: everything queued, then the caller's own work, then results."""

from __future__ import annotations

from pathlib import Path

from sitegen.discover import discover
from sitegen.incremental import BuildState
from sitegen.options import BuildOptions
from sitegen.parse import parse_all
from sitegen.redact import Redactor
from sitegen.synth import synth


def test_meanwhile_runs_once_all_work_is_queued_and_before_any_result_is_taken(tmp_path: Path):
    archive = tmp_path / "a"
    synth(archive, seed=5, steps=4, trials_per_step=2)
    disc = discover(archive, exclude=(), redactor=Redactor(()))

    def run(meanwhile):
        opts = BuildOptions(archive=archive, out=tmp_path / "site", workers=2, now=0.0)
        events: list[str] = []
        state = BuildState(tmp_path / f"cache{len(seen)}", opts)
        parsed = parse_all(
            disc, opts, state, events.append, meanwhile and (lambda: meanwhile(events))
        )
        return parsed, events

    seen: list[int] = []
    parsed, events = run(lambda ev: (seen.append(len(ev)), ev.append("meanwhile")))
    # taken results say so through the progress callback: none was taken before
    assert seen == [0] and events[0] == "meanwhile" and len(events) > 2
    plain, plain_events = run(None)  # and the parse is the same without it
    # (repr: a log's metrics hold NaN, which equals nothing)
    assert repr(plain.logs) == repr(parsed.logs) and repr(plain.trials) == repr(parsed.trials)
    assert sorted(plain_events) == sorted(events[1:])
