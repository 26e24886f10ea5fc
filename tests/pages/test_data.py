"""The JSON side of page objects: to_json writes null for non-finite numbers, from_json is strict."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sitegen.jsonio import clean, dumps
from sitegen.pages.sections import Headline, Stats, TimerNode, Timing


def test_from_json_refuses_missing_and_unknown_keys():
    h = {
        "steps": 0,
        "first_step": None,
        "last_step": None,
        "reward_mean": None,
        "reward_max": None,
        "reward_last": None,
        "pass_at_k": None,
        "pass_at_k_mean": None,
        "total_time_s": None,
        "step_time_mean_s": None,
        "gen_wait_mean_s": None,
        "gen_wait_share": None,
        "avg_tokens_mean": None,
        "staleness_mean": None,
        "staleness_max": None,
    }
    assert Headline.from_json(h).pass_label == "pass@k"
    with pytest.raises(TypeError, match="unknown keys \\['typo'\\]"):
        Headline.from_json({**h, "typo": 1})
    with pytest.raises(TypeError, match="missing keys \\['steps'\\]"):
        Headline.from_json({k: v for k, v in h.items() if k != "steps"})
    assert Headline.from_json({**h, "pass_at_k": 8}).pass_label == "pass@8"


def test_to_json_writes_non_finite_numbers_as_null():
    s = Stats(mean=math.nan, std=None, min=math.inf, max=1.0, count=1)
    assert s.to_json() == {"mean": None, "std": None, "min": None, "max": 1.0, "count": 1}
    # the page copy the templates see: same type, non-finite numbers gone
    assert clean(s) == Stats(mean=None, std=None, min=None, max=1.0, count=1)


def test_from_json_builds_nested_sections():
    leaf = {
        "name": "policy_train",
        "total_s": 2.0,
        "mean_s": 1.0,
        "count": 2,
        "share_of_parent": 0.5,
        "share_of_step": 0.5,
        "mean_step_share": None,
        "children": [],
    }
    root = {**leaf, "name": "step", "total_s": 4.0, "share_of_parent": None, "children": [leaf]}
    t = Timing.from_json({"steps": 2, "step_total_s": 4.0, "tree": root, "outside_step": []})
    assert isinstance(t.tree, TimerNode) and isinstance(t.tree.children[0], TimerNode)
    assert t.tree.children == (TimerNode.from_json(leaf),)  # sequences of sections are tuples
    assert [(r.depth, r.node.name) for r in t.rows()] == [(0, "step"), (1, "policy_train")]
    assert t.to_json() == {"steps": 2, "step_total_s": 4.0, "tree": root, "outside_step": []}
    assert dumps(t) == dumps(t.to_json())
    with pytest.raises(TypeError, match="TimerNode: expected an object"):
        Timing.from_json({"steps": 2, "step_total_s": 4.0, "tree": 3, "outside_step": []})


def test_a_union_of_sections_is_refused():
    import msgspec

    from sitegen.pages.data import PageData

    class Either(msgspec.Struct, PageData, frozen=True):
        part: Stats | TimerNode

    with pytest.raises(TypeError, match="use one section type"):
        Either.from_json({"part": {"mean": 1.0}})


def test_pages_naming_the_analyses_in_hints_alone_are_read_back():
    """Pages name the task and rollout analyses in type hints only; their hints resolve."""
    code = (
        "import sys\n"
        "from sitegen.pages import data as pagedata\n"
        "from sitegen.pages.objects import JobPage, RunPage\n"
        "from sitegen.insights.sections import Insights, TasksSection\n"
        "from sitegen.insights.rollouts import RolloutAnalysis\n"
        "from sitegen.insights.tasks import TaskAnalysis, Wasted\n"
        "assert pagedata._hints(JobPage)['rollouts'] == RolloutAnalysis | None\n"
        "assert pagedata._hints(RunPage)['rollouts'] == RolloutAnalysis | None\n"
        "assert pagedata._hints(TasksSection)['wasted'] is Wasted\n"
        "assert pagedata._hints(Insights)['tasks'] == TaskAnalysis | None\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
