"""Writing sampled transcripts into the site (sitegen/present/transcripts.py)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("source", "where"),
    [
        ("agent/trajectory.json", "t1/agent/trajectory.json"),
        ("agent/episode-0..7 (prompt.txt, response.txt)", "t1/agent/episode-0..7"),
        (
            "steps/a/agent/trajectory.json; steps/b/agent/trajectory.json",
            "t1/steps/a/agent/trajectory.json",
        ),
        (
            "result.json, step a (all_messages); result.json, step b (all_messages)",
            "t1/result.json",
        ),
        ("", "t1/result.json"),
        (None, "t1/result.json"),
    ],
)
def test_a_warning_names_the_first_file_a_transcript_was_read_from(source, where):
    # a multi-step trial's source names each step's file: the warning names the first,
    # without the separator after it
    from sitegen.present.transcripts import _where

    assert _where({"trial": "t1", "source": source}) == where
