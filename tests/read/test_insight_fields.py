"""The model fields the insights read: block times from the log, stage times and tokens from trials."""

import json
import pprint
from datetime import datetime

from sitegen.read.trials import decode_result
from tests.read.test_logparse import P, lg, parse


def test_block_time_is_its_first_markers_loguru_time():
    lines = [lg("Step 1: ", "2026-02-08 01:00:00.000")]
    lines += [P + x for x in pprint.pformat({"timing/step": "1.0"}).splitlines()]
    lines += [lg("Step 1: ", "2026-02-08 01:00:05.000")]  # split timing: the first one counts
    lines += [P + x for x in pprint.pformat({"timing/x": "1.0"}).splitlines()]
    mirror = 'WANDB_MIRROR kind=train step=2 metrics={"timing/step": 2.0}'
    lines += [lg(mirror, "2026-02-08 01:10:00.000")]
    log = parse(lines)
    assert [(b.step, b.time) for b in log.blocks] == [(2, datetime(2026, 2, 8, 1, 10))]
    log = parse(lines[:-1])
    assert log.blocks[0].time == datetime(2026, 2, 8, 1, 0)


def _result(**kw):
    obj = {
        "trial_name": "t__abc",
        "task_name": "t",
        "started_at": "2026-02-08T01:00:00Z",
        "finished_at": "2026-02-08T01:05:00Z",
        "agent_result": {"n_input_tokens": 10, "n_output_tokens": 2, "n_cache_tokens": 7},
        "environment_setup": {
            "started_at": "2026-02-08T01:00:01Z",
            "finished_at": "2026-02-08T01:00:31Z",
        },
        "agent_setup": {
            "started_at": "2026-02-08T01:00:31Z",
            "finished_at": "2026-02-08T01:00:33Z",
        },
        "agent_execution": {
            "started_at": "2026-02-08T01:00:33Z",
            "finished_at": "2026-02-08T01:04:33Z",
        },
        "verifier": None,
    }
    obj.update(kw)
    return decode_result(json.dumps(obj).encode(), "x", False)


def test_stage_durations_start_and_cache_tokens():
    r = _result()
    assert r.started_at == datetime(2026, 2, 8, 1, 0)  # the reading, tz dropped
    assert (r.env_setup_s, r.agent_setup_s, r.agent_exec_s, r.verifier_s) == (30, 2, 240, None)
    assert r.cache_tokens == 7


def test_damaged_stage_times_are_unknown_not_errors():
    r = _result(
        environment_setup={"started_at": "garbage", "finished_at": 3},
        agent_setup={"started_at": "2026-02-08T01:00:33Z", "finished_at": "2026-02-08T01:00:31Z"},
        agent_execution="no",
        started_at="2026-02-08T01:00:00",
    )
    assert (r.env_setup_s, r.agent_setup_s, r.agent_exec_s) == (None, None, None)
    assert r.started_at == datetime(2026, 2, 8, 1, 0)
