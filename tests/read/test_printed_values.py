"""Values pformat prints that are no Python literal: numpy and torch scalars, bare nan/inf.

SkyRL's console logger stringifies Python floats only (``np.float64`` is one); other
numpy scalars print as ``np.float32(0.5)`` under numpy 2, a tensor as ``tensor(0.5)``,
and the policy's status dict prints raw floats, ``nan`` and ``inf`` bare.
"""

from __future__ import annotations

import math

import pytest

from sitegen.read.metricblocks import printed_dict
from tests.read.test_logparse import P, lg, parse
from tests.read.test_real_shapes import _timed_step

ODD_VALUES = (
    ("np.float32(812.5)", 812.5),
    ("np.int64(4096)", 4096),
    ("numpy.float16(-0.25)", -0.25),
    ("tensor(0.5312)", 0.5312),
    ("tensor(-0.0012, device='cuda:0')", -0.0012),
    ("tensor(0.5000, device='cuda:0', dtype=torch.bfloat16)", 0.5),
    ("torch.tensor(3)", 3),
    ("np.float64(nan)", math.nan),
    ("nan", math.nan),
    ("-inf", -math.inf),
    ("np.True_", 1),  # a bool is kept as 0 or 1
    ("tensor(0.1234, device='cuda:0', grad_fn=<MeanBackward0>)", 0.1234),
    ("tensor(2.5000, grad_fn=<AddBackward0>)", 2.5),
    # one element (a metric not reduced with .item()): its value
    ("tensor([0.5000])", 0.5),
    ("tensor([[0.2500]], device='cuda:0')", 0.25),
    ("array([1.5], dtype=float32)", 1.5),
    ("np.array([7])", 7),
)


@pytest.mark.parametrize(("printed", "value"), ODD_VALUES)
def test_a_step_with_a_scalar_wrapper_keeps_all_its_values(printed, value):
    lines = [
        lg("Step 7: "),
        P + "{'generate/odd': " + printed + ",",
        P + " 'reward/avg_raw_reward': '0.4375',",
        P + " 'trainer/global_step': 7}",
    ]
    log = parse(lines)
    (b,) = log.blocks
    assert b.step == 7 and b.metrics["reward/avg_raw_reward"] == 0.4375
    got = b.metrics["generate/odd"]
    assert (math.isnan(got) and math.isnan(value)) or (got == value and type(got) is type(value))
    assert not log.warnings


def test_a_value_of_another_kind_leaves_out_only_its_key_and_says_so():
    lines = [
        lg("Step 3: "),
        P + "{'policy/odd': SomeObject(1, 2),",
        P + " 'policy/other': np.float32(1.5) + 1,",
        P + " 'reward/avg_raw_reward': '0.2500',",
        P + " 'trainer/global_step': 3}",
    ]
    log = parse(lines)
    (b,) = log.blocks
    assert b.metrics == {"reward/avg_raw_reward": 0.25, "trainer/global_step": 3}
    assert [(w.line, w.message) for w in log.warnings] == [
        (1, "metric 'policy/odd' (and 1 more) is not a value we can read: left out")
    ]


def test_an_object_s_angled_repr_leaves_out_only_its_key():
    """An object's default repr is no Python at all ("<foo.Bar object at 0x…>", an enum's
    "<Mode.LATEST: 'latest'>"): its key alone is left out; a string holding "<…>" stays."""
    lines = [
        lg("Step 7: "),
        P + "{'generate/odd': <foo.Bar object at 0x7f3a2b1c>,",
        P + " 'generate/mode': <Mode.LATEST: 'latest'>,",
        P + " 'generate/pad': '<pad> 0.5',",
        P + " 'reward/avg_raw_reward': 0.4375,",
        P + " 'trainer/global_step': 7}",
    ]
    log = parse(lines)
    (b,) = log.blocks
    assert b.metrics == {"reward/avg_raw_reward": 0.4375, "trainer/global_step": 7}
    assert [(w.line, w.message) for w in log.warnings] == [
        (1, "metric 'generate/odd' (and 1 more) is not a value we can read: left out")
    ]
    assert printed_dict("{'a': '<pad>', 'b': <x>}") == ({"a": "<pad>"}, ["b"])


def test_text_that_is_no_dict_display_is_still_a_skipped_block():
    log = parse([lg("Step 3: "), P + "{'a/x': np.float32(1.5),", P + " 'b/y' 2}"])
    assert not log.blocks
    assert [w.line for w in log.warnings] == [1]
    assert "unreadable metrics dict of step 3" in log.warnings[0].message


def test_nested_and_listed_values_read_as_literal_eval_would():
    text = "{'a': {'b': [np.int64(1), tensor(2.5)], 'c': (None, True)}, 'd': -3}"
    assert printed_dict(text) == ({"a": {"b": [1, 2.5], "c": [None, True]}, "d": -3}, [])
    # a tensor of several elements is a list, as its list would be (no metric either way)
    assert printed_dict("{'h': tensor([1, 2]), 'o': tensor([[3]])}") == ({"h": [1, 2], "o": 3}, [])
    # only a tensor or an array is unwrapped: a shape of one dimension stays a list
    assert printed_dict("{'s': torch.Size([8]), 'a': torch.tensor([2])}") == (
        {"s": [8], "a": 2},
        [],
    )
    with pytest.raises(ValueError):
        printed_dict("[1, 2]")
    with pytest.raises(ValueError):
        printed_dict("{**x}")


def test_a_status_dict_with_a_bare_nan_keeps_its_numbers():
    # A text-only log (wandb logger): the policy's status dict prints raw floats.
    lines = _timed_step(1, 7, 0.25, 100.0)
    lines[-2] = lg("{'policy_loss': -0.0123, 'raw_grad_norm': nan, 'policy_lr': 9.99e-07}")
    log = parse(lines)
    (b,) = log.blocks
    assert b.metrics["policy/policy_loss"] == -0.0123 and b.metrics["policy/policy_lr"] == 9.99e-07
    assert math.isnan(b.metrics["policy/raw_grad_norm"])
    assert b.metrics["reward/avg_raw_reward"] == 0.25 and b.metrics["timing/step"] == 100.0
