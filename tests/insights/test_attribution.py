from datetime import timedelta

from msgspec.structs import replace

from sitegen.insights.attribution import Attribution, attribute, boundaries, clock_offset
from tests.insights.helpers import STEP_S, T0, blocks, trial


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
    ts = [replace(t, started_at=t.started_at + timedelta(hours=5)) for t in ts]
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


# -- the clock offset, at each of its thresholds, worked by hand ------------------------------
# The log's span: 00:00 to 10:00 (lo, hi inclusive); trials written h hours after 00:00.

LO = T0.replace(hour=0)
HI = LO + timedelta(hours=10)


def _offset(*hours: float) -> timedelta:
    return clock_offset(sorted(LO + timedelta(hours=h) for h in hours), LO, HI)


def test_half_the_trials_inside_as_written_is_no_offset():
    # 1 of 2 inside (2 * 1 >= 2): nothing tried, though -2 h would hold both
    assert _offset(5, 12) == timedelta(0)
    assert _offset(5, 6, 12, 12) == timedelta(0)  # 2 of 4
    assert _offset() == timedelta(0)  # no trial


def test_a_third_inside_is_shifted_when_a_zone_puts_all_inside():
    # 1 of 3 inside: -2 h puts all three inside (3 >= 2 * 1, 2 * 3 >= 3)
    assert _offset(9, 11, 12) == timedelta(hours=-2)


def test_the_shift_must_put_twice_as_many_and_half_inside():
    # 2 of 5 inside; the best shift (+2 h: -1.5 and -2 move in, 9.5 out) holds 3 < 2 * 2
    assert _offset(-1.5, -2, 1, 9.5, 30) == timedelta(0)
    # 1 of 4 inside; -2.25 h holds 2 = 2 * 1 of them, 2 * 2 >= 4: taken
    assert _offset(9, 12, 12.25, 40) == timedelta(hours=-2.25)
    # 1 of 4 inside; +1 h holds 2 of them (-1 moves in, 0 stays): exactly half, taken
    assert _offset(-1, 0, 40, 50) == timedelta(hours=1)
    # none of 3 inside; the best shift holds 1 (>= 2 * 0, but 2 * 1 < 3): none
    assert _offset(20, 30, 40) == timedelta(0)


def test_the_smallest_shift_wins_a_tie():
    # every shift from -2 h to -3 h puts both inside (11.5 and 12 minus 2..3 h): -2 h
    assert _offset(12, 12, 11.5) == timedelta(hours=-2)
    assert _offset(-2, -2, -1.5) == timedelta(hours=2)


def test_shifts_reach_fourteen_hours_and_no_further():
    assert _offset(-14, -14, 5) == timedelta(hours=14)
    assert _offset(-14.25, -14.25, 5) == timedelta(0)
    assert _offset(24, 24, 5) == timedelta(hours=-14)  # 24 - 14 = 10: the span's last instant


def test_a_log_without_timed_blocks_says_so_in_full():
    trials = [trial("a", 1), trial("b", None)]
    assert attribute(trials, [], None) == Attribution(
        "none",
        "the log has no timed metric blocks to attribute trials to",
        (None, None),
        (),
        0,
        1,
        0,
        0,
    )


def test_the_log_starts_where_its_first_line_or_else_its_first_block_says():
    # a trial 15 minutes before the first block: inside only when the log started earlier
    early = trial("a", start=T0 + timedelta(seconds=STEP_S) - timedelta(minutes=15))
    bs, inside = blocks(3), [trial("b", 2), trial("c", 3)]  # (most inside: no clock shift)
    assert attribute([early, *inside], bs, T0).steps == (1, 2, 3)
    assert attribute([early, *inside], bs, None).steps == (None, 2, 3)
    # no first line: 10 minutes of slack before the first block, not the second
    near = trial("a", start=T0 + timedelta(seconds=STEP_S) - timedelta(minutes=5))
    assert attribute([near, *inside], bs, None).steps == (1, 2, 3)


def _shifted(trials, hours: float):
    return [replace(t, started_at=t.started_at + timedelta(hours=hours)) for t in trials]


def test_the_shift_is_said_in_full_either_way():
    bs = blocks(2)
    bounds = tuple((b.step, b.time) for b in bs)
    # both written a quarter hour early: before the log's start less its slack
    early = _shifted([trial("a", 1, offset_s=10), trial("a", 1, offset_s=60)], -0.25)
    behind = attribute(early, bs, T0)
    assert behind == Attribution(
        "time",
        "trial times read 0.25 h behind the log's clock (a time-zone difference) and were "
        "shifted by +0.25 h",
        (1, 1),
        bounds,
        2,
        0,
        0,
        0,
        900.0,
    )
    ahead = attribute(_shifted([trial("a", 1), trial("a", 2)], 3), bs, T0)
    assert ahead.reason == (
        "trial times read 3 h ahead of the log's clock (a time-zone difference) and were "
        "shifted by -3 h"
    )


def test_no_trial_in_the_span_is_said_in_full():
    bs = blocks(2)
    ts = [trial("a", start=T0 + timedelta(days=3)), trial("a", start=None)]
    assert attribute(ts, bs, T0) == Attribution(
        "none",
        "none of the 1 trials started within the log's time span",
        (None, None),
        tuple((b.step, b.time) for b in bs),
        0,
        1,
        0,
        1,
    )


def test_a_trial_started_at_the_span_s_first_instant_is_inside():
    bs = blocks(2)
    first = trial("a", start=T0 - timedelta(minutes=10))  # the log's start less the slack
    assert attribute([first, trial("a", 2)], bs, T0).steps == (1, 2)


def test_boundaries_keep_equal_times_and_what_follows_a_clock_running_backwards():
    bs = blocks(4)
    back = bs[1].__class__(2, {}, 2, T0 - timedelta(hours=1))
    same = bs[2].__class__(3, {}, 3, bs[0].time)
    assert [s for s, _ in boundaries([bs[0], back, same, bs[3]])] == [1, 3, 4]
    untimed = bs[1].__class__(2, {}, 2, None)
    assert [s for s, _ in boundaries([bs[0], untimed, bs[2]])] == [1, 3]


def test_trials_after_or_before_the_log_leave_the_next_ones_placed():
    bs = blocks(3)
    ts = [
        trial("a", start=T0 + timedelta(hours=5)),  # after the last block
        trial("b", start=T0 - timedelta(hours=5)),  # before the log
        trial("u", None),  # no start time
        trial("c", 2),
    ]
    a = attribute(ts, bs, T0)
    assert a.steps == (None, None, None, 2) and (a.attributed, a.before, a.after) == (1, 1, 1)
