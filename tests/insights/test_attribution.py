from datetime import timedelta

from sitegen.insights.attribution import attribute, boundaries
from tests.insights.helpers import T0, blocks, trial


def test_trials_belong_to_the_step_they_started_in():
    bs = blocks(4)
    ts = [trial("a", 1, offset_s=1), trial("a", 2, offset_s=599), trial("b", 4, offset_s=300)]
    a = attribute(ts, bs, T0)
    assert a.method == "time"
    assert a.steps == (1, 2, 4)
    assert a.attributed == 3 and a.before == 0 and a.after == 0


def test_a_trial_started_exactly_at_a_block_belongs_to_that_step():
    bs = blocks(3)
    a = attribute([trial("a", start=T0 + timedelta(seconds=600))], bs, T0)
    assert a.steps == (1,)


def test_before_after_and_undated_are_counted_apart():
    bs = blocks(3)
    ts = [trial("a", 1)] * 4 + [
        trial("a", start=T0 - timedelta(hours=2)),
        trial("a", step=5),  # after the last block: in flight
        trial("a", start=None),
    ]
    a = attribute(ts, bs, T0)
    assert a.steps[:4] == (1, 1, 1, 1)
    assert a.steps[4:] == (None, None, None)
    assert (a.before, a.after, a.undated, a.attributed) == (1, 1, 1, 4)


def test_a_time_zone_difference_is_found_and_shifted():
    bs = blocks(6)
    # trials written 5 h ahead of the log's clock (UTC vs a cluster at UTC−5)
    ts = [trial("a", s, offset_s=30) for s in range(1, 7)]
    ts = [
        t.__class__(**{**t.__dict__, "started_at": t.started_at + timedelta(hours=5)}) for t in ts
    ]
    a = attribute(ts, bs, T0)
    assert a.method == "time" and a.offset_s == -5 * 3600
    assert a.steps == (1, 2, 3, 4, 5, 6)
    assert "shifted by -5 h" in a.reason


def test_trials_of_an_earlier_job_are_counted_apart_not_shifted():
    bs = blocks(4)
    # half the folder's trials come from a job that ran the day before this log
    ts = [trial("a", s) for s in range(1, 5)] + [
        trial("a", start=T0 - timedelta(days=1, minutes=m)) for m in range(4)
    ]
    a = attribute(ts, bs, T0)
    assert a.method == "time" and a.offset_s == 0 and a.reason == ""
    assert a.steps == (1, 2, 3, 4, None, None, None, None) and a.before == 4


def test_no_trial_inside_the_log_declines_attribution():
    bs = blocks(3)
    ts = [trial("a", start=T0 + timedelta(days=3)) for _ in range(5)]
    a = attribute(ts, bs, T0)
    assert a.method == "none" and "time span" in a.reason
    assert set(a.steps) == {None} and a.after == 5


def test_no_block_times_means_no_attribution():
    bs = [b.__class__(b.step, b.metrics, b.line, None) for b in blocks(3)]
    a = attribute([trial("a", 1)], bs, T0)
    assert a.method == "none" and a.steps == (None,)


def test_boundaries_skip_a_clock_running_backwards():
    bs = blocks(3)
    bad = bs[1].__class__(2, {}, 2, T0 - timedelta(hours=1))
    assert [s for s, _ in boundaries([bs[0], bad, bs[2]])] == [1, 3]
