"""A config dump never ends a build: whatever YAML scalar or tag it holds, the rest is read.

A date that is no day (``2024-02-30``), an integer of more digits than Python converts,
a tag no safe loader knows: each was a traceback that ended the whole build. Now a value
YAML cannot build is shown as written with a warning naming its line, a dump that is not
YAML at all is a warning and not shown, and the log's steps are read either way.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from sitegen.cache.codec import decode, encode
from sitegen.jsonio import dumps
from sitegen.model.parsed import ParsedLog
from tests.read.test_logparse import P, block, lg, parse

DUMP_FIRST_LINE = 2  # the dump's "trainer:" line in the log below


def _log(value: str):
    return parse(
        [
            lg("Starting"),
            *(P + x for x in ["trainer:", "  run_name: fuzz", f"  value: {value}", "  after: 1"]),
            *block(1, {"reward/avg_raw_reward": "0.5000", "trainer/global_step": 1}),
            *block(2, {"reward/avg_raw_reward": "0.2500", "trainer/global_step": 2}),
        ]
    )


def test_a_date_that_is_no_day_and_a_huge_integer_are_shown_as_written():
    for value, kind in (("2024-02-30", "timestamp"), ("1" + "0" * 5000, "int")):
        log = _log(value)
        assert [b.step for b in log.blocks] == [1, 2]
        assert log.config["trainer"] == {"run_name": "fuzz", "value": value, "after": 1}
        assert [(w.line, kind in w.message) for w in log.warnings] == [(4, True)]


def test_tags_no_safe_loader_knows_are_read_as_plain_data():
    log = _log("!!python/object/apply:os.system [echo hi]")
    assert log.config["trainer"]["value"] == ["echo hi"]
    assert _log("!custom {a: 1}").config["trainer"]["value"] == {"a": 1}


_DIGITS = st.text("0123456789", min_size=1, max_size=6)
_SCALARS = st.one_of(
    # dates and times, most of them no day or no time at all
    st.builds(
        "{:04d}-{:02d}-{:02d}{}".format,
        st.integers(0, 9999),
        st.integers(0, 19),
        st.integers(0, 39),
        st.sampled_from(["", "T25:61:61", " 12:00:00Z", "t10:00:00.5+25:00", " 1:2:3 -7"]),
    ),
    # numbers of every YAML 1.1 form, with more digits than anything holds
    st.builds(lambda n, s: s + "1" + "0" * n, st.integers(0, 6000), st.sampled_from(["", "-", "+"])),
    st.builds("{}{}".format, st.sampled_from(["0x", "0o", "0b", "0", "1_", "1:", "."]), _DIGITS),
    st.sampled_from(["1e999", "-.inf", ".NaN", "1:2:3:4.5", "0b2", "0x", "+.5e-9999", "~", ""]),
    # any tag, known or not, on any scalar
    st.builds(
        "{} {}".format,
        st.sampled_from(
            ["!!int", "!!float", "!!bool", "!!null", "!!timestamp", "!!binary", "!!str",
             "!!set", "!!omap", "!!pairs", "!!merge", "!!value", "!!yaml", "!!python/name:os",
             "!!python/object:x.Y", "!local", "!<tag:x,2000:y>", "!!map", "!!seq"]
        ),
        st.one_of(_DIGITS, st.text("abcAZ=+/:-. ", max_size=12), st.just("2024-02-30")),
    ),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), max_size=30),
)  # fmt: skip


@settings(max_examples=250, deadline=None)
@given(_SCALARS)
@example("\x850")  # YAML breaks lines at U+0085 too: a warning still names the log's line
def test_any_scalar_or_tag_is_at_worst_a_warning_with_its_line(value):
    log = _log(value)
    # the rest of the log is read whatever the dump holds
    assert [b.step for b in log.blocks] == [1, 2]
    # the dump shown with what is around the value, or not shown; each warning names a
    # line of the dump
    dump_lines = range(DUMP_FIRST_LINE, DUMP_FIRST_LINE + 4)
    warned = [w for w in log.warnings if "config" in w.message]
    assert all(w.line in dump_lines for w in warned), warned
    if log.config is None:
        assert warned, "a dump not shown says why"
    else:
        assert log.config["trainer"]["run_name"] == "fuzz"
        assert log.config["trainer"]["after"] == 1
    # what is shown can be kept (the build cache) and written (the site's JSON)
    kept = encode(log, ParsedLog)
    assert encode(decode(kept, ParsedLog), ParsedLog) == kept  # (NaN != NaN)
    dumps(log.config)


def _dump_log(dump: str, after: tuple[str, ...] = ()):
    """A log whose config dump is ``dump`` logged as upstream does: one loguru record, its
    first key the header's message, every line after it with the Ray prefix, then the blank
    line its own final line break leaves."""
    first, *rest = dump.rstrip("\n").split("\n")
    return parse(
        [
            lg(first),
            *(P + x for x in rest),
            P,
            *after,
            lg("No checkpoint found, starting training from scratch"),
            *block(1, {"reward/avg_raw_reward": "0.5000", "trainer/global_step": 1}),
        ]
    )


def test_a_string_with_line_breaks_in_the_dump_keeps_the_whole_config():
    """yaml.dump (and OmegaConf.to_yaml) writes a string holding line breaks single-quoted,
    with a blank line for each break; the dump ended at the first of them, cut mid-string,
    and the whole config was lost (run name, model, samples per prompt)."""
    import yaml

    prompt = "You are an agent in a terminal.\nSolve the task.\n\nThen stop."
    config = {
        "data": {"train_data": ["/data/train.parquet"]},
        "generator": {"n_samples_per_prompt": 8, "system_prompt": prompt, "max_turns": 30},
        "trainer": {"run_name": "multi-line", "policy": {"model": {"path": "Qwen/Qwen3-8B"}}},
    }
    dump = yaml.dump(config)
    assert "\n\n" in dump.rstrip("\n")  # the blank lines inside the quoted string
    log = _dump_log(dump)
    assert log.config == config and not log.warnings
    # a block scalar's blank line alike
    log = _dump_log(
        "data:\n  x: 1\ngenerator:\n  tmpl: |\n    a\n\n    b\ntrainer:\n  run_name: r\n"
    )
    assert log.config == {
        "data": {"x": 1},
        "generator": {"tmpl": "a\n\nb\n"},
        "trainer": {"run_name": "r"},
    }


def test_a_blank_line_still_ends_the_dump():
    """After the dump's own blank line, a top-level key or an indented line that is no YAML
    (a traceback's) is not the dump's."""
    log = _dump_log(
        "data:\n  x: 1\ntrainer:\n  run_name: r\n", after=(P + "generator:", P + "  n: 2")
    )
    assert log.config == {"data": {"x": 1}, "trainer": {"run_name": "r"}} and not log.warnings
    log = _dump_log(
        "data:\n  x: 1\ntrainer:\n  run_name: r\n",
        after=(P + '  File "x.py", line 3, in <module>: bad: [', P + "ValueError: x"),
    )
    assert log.config == {"data": {"x": 1}, "trainer": {"run_name": "r"}} and not log.warnings


def test_a_dump_with_a_multi_line_string_ends_at_its_own_blank_line():
    """The blank lines inside a string are not the dump's end: with an indented line that is
    no YAML after the dump, it is read up to its own last blank line, the string whole."""
    import yaml

    config = {
        "data": {"x": 1},
        "generator": {"system_prompt": "line one\n\nline two"},
        "trainer": {"run_name": "r"},
    }
    junk = (P + '  File "x.py", line 3, in <module>: bad: [', P + "ValueError: x")
    log = _dump_log(yaml.dump(config), after=junk)
    assert log.config == config and not log.warnings


def test_a_dump_of_many_blank_lines_is_tried_a_bounded_number_of_times(monkeypatch):
    """However many blank lines a dump holds (a planted one: thousands), a dump that is not
    YAML is parsed at most 1 + CONFIG_CUT_TRIES times before its warning."""
    from sitegen.read import configdump

    calls = []
    real = configdump.load_config
    monkeypatch.setattr(configdump, "load_config", lambda *a: calls.append(1) or real(*a))
    dump = "data:\n" + "".join(f"  k{i}: 'a\n\n  b'\n" for i in range(3000))
    log = _dump_log(dump, after=(P + "  : : [", P + "  ]]"))
    assert len(calls) <= 1 + configdump.CONFIG_CUT_TRIES
    assert log.config is not None and len(log.config["data"]) == 3000 and not log.warnings


def test_a_dump_is_never_cut_worse_than_at_its_first_blank_line():
    """Junk after the dump that YAML fails on only at its end, past many blank lines: the
    first blank line is tried last, and the config is read as the dump wrote it."""
    import yaml

    config = {"data": {"x": 1}, "trainer": {"run_name": "r"}}
    after = [P + "  x: [1,"] + sum(([P, P + f"  chunk {i}"] for i in range(6)), [])
    log = _dump_log(yaml.dump(config), after=tuple(after))
    assert log.config == config and not log.warnings
