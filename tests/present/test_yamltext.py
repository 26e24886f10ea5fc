"""A config shown as YAML reads back, with PyYAML's safe_load, as the values it shows."""

from __future__ import annotations

import datetime
import math

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.present.yamltext import to_yaml

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1)
    | st.floats(allow_nan=False)
    | st.text()
    | st.dates()
    | st.sampled_from(
        [
            "yes",
            "No",
            "on",
            "OFF",
            "null",
            "~",
            "1.0",
            "0x1f",
            "1e3",
            "2026-01-01",
            "[REDACTED]",
            "a: b",
            "a #b",
            "- x",
            "Qwen/Qwen3-8B",
            "",
            " lead",
            "tail ",
            "\u0085",
            "\ufeff",
            "\x00",
            "tab\there",
            "é",
            "\ud800",
        ]
    )  # fmt: skip
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text() | _scalars, inner, max_size=4)
    ),
    max_leaves=25,
)


def _hashable_keys(v: object) -> bool:
    if isinstance(v, dict):
        return all(not isinstance(k, dict | list) for k in v) and all(
            map(_hashable_keys, v.values())
        )
    if isinstance(v, list):
        return all(map(_hashable_keys, v))
    return True


@settings(max_examples=150, deadline=None)
@given(_values)
def test_the_yaml_reads_back_as_the_values(value):
    if not _hashable_keys(value):
        return
    assert yaml.safe_load(to_yaml(value)) == value


def test_a_config_reads_as_block_yaml():
    cfg = {
        "trainer": {"epochs": 1, "lr": 1e-06, "policy": {"model": "Qwen/Qwen3-8B"}},
        "generator": {"engines": [{"tp": 2, "dp": 1}, {"tp": 1}], "stop": ["</s>", "\n"]},
        "secret": "[REDACTED]",
        "odd": float("nan"),
        "day": datetime.date(2026, 1, 1),
    }
    text = to_yaml(cfg)
    assert text.splitlines()[:4] == [
        "trainer:",
        "  epochs: 1",
        "  lr: 1.0e-06",  # (YAML 1.1 reads 1e-06 as text)
        "  policy:",
    ]
    assert "    - tp: 2\n      dp: 1\n    - tp: 1\n" in text
    assert 'secret: "[REDACTED]"' in text and "odd: .nan" in text
    back = yaml.safe_load(text)
    assert math.isnan(back.pop("odd")) and back == {k: v for k, v in cfg.items() if k != "odd"}
    assert to_yaml({}) == "{}\n" and to_yaml([]) == "[]\n" and to_yaml(None) == "null\n"
