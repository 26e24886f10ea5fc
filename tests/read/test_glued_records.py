"""Records glued after a tqdm bar the driver wrote (no Ray prefix), as real logs have them
(docs/formats.md §2.4): the record loses its own prefix, keeps it after the bar, or follows the
bar's \\r redraws; a ``Step N:`` header so glued is read with the dict after it."""

from __future__ import annotations

import io
import pprint

import pytest

from sitegen.cache.codec import decode
from sitegen.cache.logs import state_bytes
from sitegen.read.logparse import LogParser
from sitegen.read.logstate import ParserState
from sitegen.redact import Redactor
from tests.read.test_logparse import parse

PID = "(skyrl_entrypoint pid=5568) "
CPID = f"\x1b[36m{PID[:-1]}\x1b[0m "
OTHER = "(AsyncVLLMInferenceEngine pid=7, ip=10.0.0.1) "
BAR = (
    "Training Batches Processed:  89%|\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2589 "
    "| {n}/233 [1:15:34<08:27, 20.30s/it]"
)
DICT = {
    "generate/avg_num_tokens": "583.2969",
    "generate/avg_tokens_non_zero_rewards": "541.9487",
    "reward/avg_raw_reward": "0.6250",
    "timing/step": "18.1234",
    "trainer/global_step": 208,
}


def record(msg: str, colour: bool, module: str = "skyrl_train") -> str:
    """A loguru record as SkyRL writes it; coloured, the message's span is left open."""
    t = "2025-11-28 05:09:52.754"
    if not colour:
        return f"{t} | INFO     | {module}.utils.tracking:log:108 - {msg}"
    return (
        f"\x1b[32m{t}\x1b[0m | \x1b[1m\x1b[32mINFO    \x1b[0m | \x1b[36m{module}.utils.tracking\x1b[0m"
        f":\x1b[36mlog\x1b[0m:\x1b[36m108\x1b[0m - \x1b[1m\x1b[32m{msg}"
    )


def dict_lines(d: dict, pfx: str, colour: bool) -> list[str]:
    lines = [pfx + x for x in pprint.pformat(d).splitlines()]
    if colour:
        lines[-1] += "\x1b[0m"  # the reset of the record's one colour span
    return lines


# How the bar and the record meet: the record's own prefix lost (a notebook's rendering),
# after \r redraws of the bar, after the bar's \r, or kept between the bar and the record.
GLUES = {
    "lost": lambda bar, pfx: bar,
    "redraws": lambda bar, pfx: f"\r{bar.replace('89%', '88%')}\r{bar}",
    "bar_cr": lambda bar, pfx: bar + "\r",
    "own_prefix": lambda bar, pfx: bar + pfx,
}


def steps(glue: str, colour: bool, module: str, numbers=(207, 208, 209)) -> list[str]:
    pfx = CPID if colour else PID
    out = []
    for n in numbers:
        out.append(GLUES[glue](BAR.format(n=n - 1), pfx) + record(f"Step {n}: ", colour, module))
        out += dict_lines({**DICT, "trainer/global_step": n}, pfx, colour)
    return out


def _read(text: str, chunk: int = 1 << 20):
    data = text.encode()
    p = LogParser("job.out", Redactor(), year_hint=2026)
    p.feed_stream(io.BytesIO(data), chunk_size=chunk)
    return p.finish(len(data), 0.0)


@pytest.mark.parametrize("glue", sorted(GLUES))
@pytest.mark.parametrize("colour", [True, False])
@pytest.mark.parametrize("module", ["skyrl_train", "skyrl.train"])
def test_header_glued_after_a_prefixless_bar_reads_its_dict(glue, colour, module):
    lines = steps(glue, colour, module)
    for log in (parse(lines), _read("\n".join(lines) + "\n"), _read("\n".join(lines) + "\n", 97)):
        assert [b.step for b in log.blocks] == [207, 208, 209] and not log.warnings
        b = log.blocks[1]
        assert b.metrics["reward/avg_raw_reward"] == 0.625 and b.metrics["timing/step"] == 18.1234
        assert b.metrics["generate/avg_num_tokens"] == 583.2969
        assert log.planned_steps == 233  # the bar is read too


def test_the_issues_bytes():
    head = (
        "Training Batches Processed:  89%|████████▉ | 208/233 [1:15:34<08:27, 20.30s/it]"
        "\x1b[32m2025-11-28 05:09:52.754\x1b[0m | \x1b[1m\x1b[32mINFO    \x1b[0m | "
        "\x1b[36mskyrl_train.utils.tracking\x1b[0m:\x1b[36mlog\x1b[0m:\x1b[36m108\x1b[0m - "
        "\x1b[1m\x1b[32mStep 208: "
    )
    log = parse([head, *dict_lines(DICT, CPID, True)])
    (b,) = log.blocks
    assert (b.step, b.line, b.metrics["reward/avg_raw_reward"]) == (208, 1, 0.625)
    assert not log.warnings


@pytest.mark.parametrize("colour", [True, False])
def test_eval_only_and_split_timing_blocks_glued_the_same_way(colour):
    """The other headers a dict follows: eval_before_train's eval-only block, and a step's
    second (timing) block."""
    pfx = CPID if colour else PID
    lines = [record("Resuming from global_step: 47", colour)]
    lines += [BAR.format(n=47) + record("Step 47: ", colour)]
    lines += dict_lines({"eval/all/avg_score": "0.4000"}, pfx, colour)
    lines += [BAR.format(n=47) + record("Step 48: ", colour)]
    lines += dict_lines({"reward/avg_raw_reward": "0.5000", "trainer/global_step": 48}, pfx, colour)
    lines += [BAR.format(n=47) + "\r" + record("Step 48: ", colour)]
    lines += dict_lines({"timing/step": "12.0000"}, pfx, colour)
    log = parse(lines)
    assert [(b.step, b.metrics) for b in log.blocks] == [
        (48, {"reward/avg_raw_reward": 0.5, "trainer/global_step": 48, "timing/step": 12.0})
    ]
    assert [(b.step, b.metrics) for b in log.eval_blocks] == [(47, {"eval/all/avg_score": 0.4})]
    assert not log.warnings


def test_other_processes_lines_inside_the_dict_are_not_its():
    """Past its first line, the dict takes only its process's lines (the guard stays)."""
    body = dict_lines(DICT, PID, False)
    lines = [BAR.format(n=207) + record("Step 208: ", False), body[0]]
    lines += [OTHER + "{'x': 1,", OTHER + " 'y': 2}", "Processing: 5it [00:01, 3.2it/s]", *body[1:]]
    log = parse(lines)
    (b,) = log.blocks
    assert "x" not in b.metrics and b.metrics["trainer/global_step"] == 208 and not log.warnings


def test_only_the_line_right_after_the_header_names_its_process():
    """A dict line that does not directly follow a prefix-less header is not taken for
    its dict (another process's output came between): said, not read."""
    lines = [BAR.format(n=207) + record("Step 208: ", False), OTHER + "INFO engine chatter"]
    lines += [*dict_lines(DICT, PID, False), BAR.format(n=208) + record("Step 209: ", False)]
    log = parse(lines)
    assert log.blocks == ()
    assert [w.line for w in log.warnings] == [1, 8]  # 208 cut by 209's header; 209 at the end
    # the driver's own dict (no prefix either) still follows its header past other lines
    lines = [BAR.format(n=207) + record("Step 208: ", False), OTHER + "INFO chatter"]
    lines += dict_lines(DICT, "", False)
    assert [b.step for b in parse(lines).blocks] == [208]


def test_a_dict_opened_by_its_first_line_from_another_process_is_that_processs():
    """A process whose own dict is open and cut by this header's first line (it starts a
    new dict) loses its dict, as any dict cut by its own process."""
    mine = dict_lines({**DICT, "trainer/global_step": 207}, PID, False)
    lines = [record("Step 207: ", False).replace("2025", PID + "2025", 1), mine[0]]
    lines += [BAR.format(n=207) + record("Step 208: ", False), *dict_lines(DICT, PID, False)]
    log = parse(lines)
    assert [b.step for b in log.blocks] == [208]
    assert [(w.line, "cut off" in w.message) for w in log.warnings] == [(1, True)]


def test_state_saved_between_the_header_and_its_dict_reads_on():
    lines = steps("lost", True, "skyrl_train")
    data = ("\n".join(lines) + "\n").encode()
    cut = data.index(b"\n") + 1  # right after the first (glued) header
    p = LogParser("job.out", Redactor(), year_hint=2026)
    p.feed_stream(io.BytesIO(data[:cut]))
    q = LogParser.resume(decode(state_bytes(p.state()), ParserState), "job.out", Redactor())
    q.feed_stream(io.BytesIO(data[cut:]))
    log = q.finish(len(data), 0.0)
    assert [b.step for b in log.blocks] == [207, 208, 209] and not log.warnings


@pytest.mark.parametrize("glue", sorted(GLUES))
def test_mirror_and_checkpoint_lines_glued_after_a_prefixless_bar(glue):
    metrics = '{"reward/avg_raw_reward": 0.123456, "timing/step": 18.5}'
    bar = GLUES[glue](BAR.format(n=233), PID)
    lines = [
        bar + f"WANDB_MIRROR kind=train step=233 metrics={metrics}",
        bar + record(f"WANDB_MIRROR kind=eval step=233 metrics={metrics}", True),
        bar
        + record("Successfully saved checkpoint for global_step_234 to: /ck/global_step_234", True),
        bar + record("Saved final checkpoint.", False),
        bar + record("Training done!", True),
    ]
    log = parse(lines)
    (b,) = log.blocks
    assert b.step == 233 and b.metrics["reward/avg_raw_reward"] == 0.123456
    assert log.eval_blocks[0].metrics["timing/step"] == 18.5
    assert [(c.step, c.final) for c in log.checkpoints] == [(234, True)]
    assert log.end_marker == "complete" and not log.warnings
