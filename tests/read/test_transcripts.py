"""A trial's transcript in each of Harbor's three forms, every text cleaned, redacted and cut."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sitegen.read.transcript_text import (
    MARGIN,
    OUTPUT_HEAD,
    Shaper,
    clean,
    parse_reply,
)
from sitegen.read.transcripts import UNKNOWN_SECRETS, read_transcript
from sitegen.redact import Redactor

TEMPLATE = (
    "You are an agent.\n\nTask Description:\n{instruction}\n\nCurrent terminal state:\n{screen}\n"
)
FIRST = TEMPLATE.format(instruction="Fix the build.\nUse make.", screen="root@x:/app# ")
HF = "hf_" + "Zq8vK3mT9wXbR2pL6nYc4dF7"


def _write(folder: Path, rel: str, value: object) -> None:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value))


def _reply(analysis: str, keys: list[str], done: bool = False) -> str:
    cmds = [{"keystrokes": k, "duration": 0.1} for k in keys]
    return json.dumps({"analysis": analysis, "plan": "p", "commands": cmds, "task_complete": done})


def _agent_step(n: int, msg: str, keys: list[str], output: str, **extra: object) -> dict:
    calls = [
        {
            "tool_call_id": f"c{n}{i}",
            "function_name": "bash_command",
            "arguments": {"keystrokes": k},
        }
        for i, k in enumerate(keys)
    ]
    return {
        "step_id": n,
        "source": "agent",
        "message": msg,
        "tool_calls": calls,
        "observation": {"results": [{"content": output}]},
        "metrics": {
            "prompt_tokens": 10 * n,
            "completion_tokens": n,
            "prompt_token_ids": [424242] * 5,
        },
        **extra,
    }


def test_atif_with_a_continuation_reads_each_turn_once(tmp_path):
    steps = [
        {"step_id": 1, "source": "user", "message": FIRST},
        _agent_step(2, "Analysis: a\nPlan: b", ["ls\n"], "New Terminal Output:\nx"),
    ]
    _write(tmp_path, "agent/trajectory.json", {"schema_version": "ATIF-v1.5", "steps": steps})
    copied = [dict(s, is_copied_context=True) for s in steps]
    cont = copied + [
        {"step_id": 3, "source": "user", "message": "Summary so far"},
        _agent_step(
            4,
            "Analysis: c",
            ["make\n"],
            "done",
            tool_calls=[
                {
                    "tool_call_id": "t",
                    "function_name": "bash_command",
                    "arguments": {"keystrokes": "make\n"},
                },
                {"tool_call_id": "u", "function_name": "mark_task_complete", "arguments": {}},
            ],
        ),
    ]
    _write(tmp_path, "agent/trajectory.cont-1.json", {"schema_version": "ATIF-v1.5", "steps": cont})
    _write(
        tmp_path,
        "result.json",
        {"trial_name": "t", "agent_result": {"metadata": {"summarization_count": 1}}},
    )
    t = read_transcript(tmp_path, tmp_path)
    assert t.form == "atif" and t.summarized == 1 and t.agent_turns == 2
    assert t.source == "agent/trajectory.json (+ 1 continued)"
    assert [x.event for x in t.turns] == [None, "user", None]
    assert t.turns[0].commands[0].text == "ls\n" and t.turns[0].tokens == (20, 2)
    assert t.turns[2].done and [c.text for c in t.turns[2].commands] == ["make\n"]
    assert t.prompt is not None and t.prompt.instruction.text == "Fix the build.\nUse make."
    assert t.prompt.template.text == "You are an agent.\n\nTask Description:\n"
    assert t.prompt.screen.text.startswith("Current terminal state:\nroot@x")
    assert "424242" not in repr(t)  # token ids are never read


def test_atif_raw_content_is_parsed_as_the_reply(tmp_path):
    steps = [
        {"step_id": 1, "source": "user", "message": "go"},
        {
            "step_id": 2,
            "source": "agent",
            "message": "<think>hmm</think>" + _reply("look", ["ls -la\n"], True),
            "observation": {
                "results": [
                    {
                        "content": [
                            {"type": "text", "text": "out"},
                            {"type": "image", "source": {"path": "a.png"}},
                        ]
                    }
                ]
            },
        },
    ]
    _write(tmp_path, "agent/trajectory.json", {"steps": steps})
    _write(tmp_path, "result.json", {})
    turn = read_transcript(tmp_path, tmp_path).turns[0]
    assert turn.text.text == "Analysis: look\nPlan: p" and turn.reasoning.text == "hmm"
    assert [c.text for c in turn.commands] == ["ls -la\n"] and turn.done
    assert turn.output.text == "out\n[image: a.png]"


def test_another_agents_system_prompt_is_its_template_not_a_summary(tmp_path):
    """OpenHands, SWE-agent and others start their ATIF with a ``system`` step; a system
    message later is shown as one; only Terminus' handoff step (``context_management``)
    says the context was summarized."""
    steps = [
        {"step_id": 1, "source": "system", "message": "You are OpenHands agent."},
        {"step_id": 2, "source": "user", "message": "Fix the build."},
        {
            "step_id": 3,
            "source": "agent",
            "message": "Running the tests.",
            "tool_calls": [
                {
                    "tool_call_id": "a",
                    "function_name": "execute_bash",
                    "arguments": {"command": "make"},
                }
            ],
            "observation": {"results": [{"source_call_id": "a", "content": "ok"}]},
        },
        {"step_id": 4, "source": "system", "message": "Budget: 10 turns left."},
        {"step_id": 5, "source": "agent", "message": "Done."},
    ]
    _write(tmp_path, "agent/trajectory.json", {"schema_version": "ATIF-v1.0", "steps": steps})
    _write(tmp_path, "result.json", {})
    t = read_transcript(tmp_path, tmp_path)
    assert t.summarized == 0 and t.agent_turns == 2
    assert t.prompt.template.text == "You are OpenHands agent."
    assert t.prompt.text.text == "Fix the build." and t.prompt.instruction is None
    assert [x.event for x in t.turns] == [None, "system", None]
    assert [c.text for c in t.turns[0].commands] == ['execute_bash({"command":"make"})']
    handoff = {
        "step_id": 4,
        "source": "system",
        "message": "Performed context summarization and handoff to continue task.",
        "extra": {"context_management": {"type": "compaction", "boundary": "replace"}},
    }
    steps[3] = handoff
    _write(tmp_path, "agent/trajectory.json", {"schema_version": "ATIF-v1.8", "steps": steps})
    t = read_transcript(tmp_path, tmp_path)
    assert t.summarized == 1 and [x.event for x in t.turns] == [None, "summary", None]
    # a chat that opens with a system message: the same
    msgs = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": FIRST},
        {"role": "assistant", "content": _reply("a", ["ls\n"])},
    ]
    _write(tmp_path / "m", "result.json", {"agent_result": {"metadata": {"all_messages": msgs}}})
    t = read_transcript(tmp_path / "m", tmp_path)
    assert t.summarized == 0 and [x.event for x in t.turns] == [None]
    assert t.prompt.template.text == "You are an agent.\n\nYou are an agent.\n\nTask Description:\n"
    assert t.prompt.instruction.text == "Fix the build.\nUse make."


def test_all_messages_alternate_and_read_every_reply_form(tmp_path):
    xml = (
        "<response><analysis>x</analysis><plan>y</plan><commands>"
        '<keystrokes duration="1">cat a &amp; b\n</keystrokes></commands>'
        "<task_complete>true</task_complete></response>"
    )
    msgs = [
        {"role": "user", "content": FIRST},
        {"role": "assistant", "content": "<think>plan it</think>\n" + _reply("a", ["echo hi\n"])},
        {"role": "user", "content": "New Terminal Output:\nhi"},
        {"role": "assistant", "content": "I will simply run ls", "reasoning_content": "r2"},
        {"role": "user", "content": "Current Terminal Screen:\n$ "},
        {"role": "assistant", "content": xml},
    ]
    _write(
        tmp_path,
        "result.json",
        {"agent_result": {"metadata": {"all_messages": msgs, "summarization_count": 2}}},
    )
    t = read_transcript(tmp_path, tmp_path)
    assert t.form == "messages" and t.summarized == 2 and t.agent_turns == 3
    a, b, c = t.turns
    assert a.reasoning.text == "plan it" and [x.text for x in a.commands] == ["echo hi\n"]
    assert a.output.text == "New Terminal Output:\nhi"
    assert b.text.text == "I will simply run ls" and b.reasoning.text == "r2" and not b.commands
    assert (
        c.text.text == "Analysis: x\nPlan: y" and c.commands[0].text == "cat a &amp; b\n" and c.done
    )
    assert c.output.text == ""  # the last answer is not in the chat


def test_episodes_in_numeric_order_and_debug_json_never_read(tmp_path):
    for n in (0, 1, 2, 9, 10, 11):
        prompt = FIRST if n == 0 else f"New Terminal Output:\nout{n}"
        _write(tmp_path, f"agent/episode-{n}/prompt.txt", prompt)
        _write(tmp_path, f"agent/episode-{n}/response.txt", _reply(f"ep{n}", [f"cmd{n}\n"]))
        _write(tmp_path, f"agent/episode-{n}/debug.json", {"api_key": "DEBUGJSONNEVERREAD"})
    _write(tmp_path, "agent/episode-x/prompt.txt", "not an episode")
    _write(tmp_path, "result.json", {"trial_name": "t"})
    t = read_transcript(tmp_path, tmp_path)
    assert t.form == "episodes" and t.agent_turns == 6
    assert [x.text.text.split("\n")[0] for x in t.turns] == [
        f"Analysis: ep{n}" for n in (0, 1, 2, 9, 10, 11)
    ]
    assert [x.output.text for x in t.turns[:5]] == [
        f"New Terminal Output:\nout{n}" for n in (1, 2, 9, 10, 11)
    ]
    assert "DEBUGJSONNEVERREAD" not in repr(t)


def test_a_damaged_source_gives_way_to_the_next_form_and_says_so(tmp_path):
    _write(tmp_path, "agent/trajectory.json", '{"steps": [')
    msgs = [{"role": "user", "content": "go"}, {"role": "assistant", "content": "done"}]
    _write(tmp_path, "result.json", {"agent_result": {"metadata": {"all_messages": msgs}}})
    t = read_transcript(tmp_path, tmp_path)
    assert t.form == "messages" and t.agent_turns == 1
    assert t.notes == ("agent/trajectory.json: malformed JSON; the next source is read instead",)


def test_no_source_no_result(tmp_path):
    t = read_transcript(tmp_path, tmp_path)
    assert t.form == "" and t.turns == ()
    assert t.notes == ("result.json: No such file or directory", UNKNOWN_SECRETS)


@pytest.mark.parametrize("result", [None, b'{"config": {"agent": {"env": {"DB_PASSWORD": "plain'])
def test_no_turn_is_shown_without_a_readable_result(tmp_path, result):
    """The trial's config names the secrets its transcript hides wherever they appear: with
    its result.json missing or cut short they are unknown, so no turn, verifier output or
    exception is shown (its trial may still be counted, read from an archive)."""
    steps = [{"step_id": 1, "source": "agent", "message": "the password is plainword12345"}]
    _write(tmp_path, "agent/trajectory.json", {"steps": steps})
    _write(tmp_path, "verifier/test-stdout.txt", "plainword12345\n")
    if result is not None:
        (tmp_path / "result.json").write_bytes(result)
    t = read_transcript(tmp_path, tmp_path)
    assert (t.form, t.turns, t.verifier, t.exception) == ("", (), None, None)
    assert t.notes[-1] == UNKNOWN_SECRETS


def test_verifier_tail_exception_and_the_trials_own_secrets(tmp_path):
    _write(
        tmp_path,
        "verifier/test-stdout.txt",
        "".join(f"line {i}\n" for i in range(20000)) + "FAILED x\n",
    )
    _write(
        tmp_path,
        "result.json",
        {
            "config": {
                "agent": {
                    "env": {"SERVICE_TOKEN": "plainvalue123"},
                    "kwargs": {"api_key": "${KEY}"},
                }
            },
            "exception_info": {
                "exception_type": "AgentTimeoutError",
                "exception_message": "gave up after echo plainvalue123",
                "exception_traceback": "Traceback\n" + "  frame\n" * 2000 + "AgentTimeoutError",
            },
        },
    )
    t = read_transcript(tmp_path, tmp_path, build_secrets={"MY_API_KEY": "buildsecret77x"})
    assert t.verifier is not None and t.verifier.text.endswith("line 19999\nFAILED x\n")
    assert t.verifier.bytes > 100_000 and len(t.verifier.text) < 2100
    kind, message, tb = t.exception
    assert (
        kind == "AgentTimeoutError" and message.text == "gave up after echo [REDACTED:trial-secret]"
    )
    assert tb.text.endswith("AgentTimeoutError") and "bytes omitted" in tb.text
    assert t.hidden == ("trial-secret",)


def test_a_multi_step_trial_is_read_step_by_step_from_its_steps_folders(tmp_path):
    # Harbor 0.26 moves each step's agent/ and verifier/ to steps/<step>/ and records each
    # step's exception on the step, the trial's own left null (harbor/trial/multi_step.py)
    first = [
        {"step_id": 1, "source": "user", "message": FIRST},
        _agent_step(2, "Analysis: clone", ["git clone r\n"], "Cloning"),
    ]
    second = [
        {"step_id": 1, "source": "user", "message": "Now fix the bug in parser.py"},
        _agent_step(2, "Analysis: edit", ["vim parser.py\n"], "saved"),
    ]
    _write(tmp_path, "steps/setup-repo/agent/trajectory.json", {"steps": first})
    _write(tmp_path, "steps/fix-bug/agent/trajectory.json", {"steps": second})
    _write(tmp_path, "steps/setup-repo/verifier/test-stdout.txt", "1 passed\n")
    _write(tmp_path, "steps/fix-bug/verifier/test-stdout.txt", "FAILED test_parse\n")
    _write(tmp_path, "steps/evil/agent/trajectory.json", {"steps": first})
    timeout = {
        "exception_type": "AgentTimeoutError",
        "exception_message": "timed out, token plainvalue123",
        "exception_traceback": "Traceback\nAgentTimeoutError",
    }
    _write(
        tmp_path,
        "result.json",
        {
            "config": {"agent": {"env": {"SERVICE_TOKEN": "plainvalue123"}}},
            "agent_result": None,
            "exception_info": None,
            "step_results": [
                {"step_name": "setup-repo", "exception_info": None},
                {"step_name": "fix-bug", "exception_info": timeout},
                {"step_name": "../evil"},  # not a step's folder name: not read
                {"step_name": ["x"]},
            ],
        },
    )
    t = read_transcript(tmp_path, tmp_path)
    assert t.form == "atif" and t.agent_turns == 2
    assert t.source == "steps/setup-repo/agent/trajectory.json; steps/fix-bug/agent/trajectory.json"
    assert t.prompt is not None and t.prompt.instruction.text == "Fix the build.\nUse make."
    assert [(x.event, x.text.text.split("\n")[0]) for x in t.turns] == [
        ("step", "Step 1 of 4: setup-repo"),
        (None, "Analysis: clone"),
        ("step", "Step 2 of 4: fix-bug"),
        ("user", "Now fix the bug in parser.py"),
        (None, "Analysis: edit"),
    ]
    assert t.exception is not None and t.exception[0] == "AgentTimeoutError"
    assert t.exception[1].text == "timed out, token [REDACTED:trial-secret]"
    assert t.verifier is not None and t.verifier.text == "FAILED test_parse\n"  # the last step's
    assert t.notes == (
        "step 3: its name '../evil' is not a folder's: not read",
        "step 4: its name ['x'] is not a folder's: not read",
    )


def test_a_multi_step_trials_messages_are_read_from_its_steps_results(tmp_path):
    # Terminus-2 with store_all_messages: each step's chat is in its step_results entry
    def chat(ask: str, reply: str) -> dict:
        msgs = [{"role": "user", "content": ask}, {"role": "assistant", "content": reply}]
        return {"agent_result": {"metadata": {"all_messages": msgs, "summarization_count": 1}}}

    steps = [
        {"step_name": "one", **chat(FIRST, _reply("a1", ["ls\n"]))},
        {"step_name": HF, **chat("Now step two", _reply("a2", ["make\n"]))},
    ]
    _write(tmp_path, "result.json", {"config": {}, "agent_result": None, "step_results": steps})
    t = read_transcript(tmp_path, tmp_path)
    assert (t.form, t.source, t.summarized, t.exception) == (
        "messages",
        "result.json, step one (all_messages); result.json, step [REDACTED:hf-token] (all_messages)",
        2,
        None,
    )
    assert [(x.event, x.text.text.split("\n")[0]) for x in t.turns] == [
        ("step", "Step 1 of 2: one"),
        (None, "Analysis: a1"),
        ("step", "Step 2 of 2: [REDACTED:hf-token]"),  # a secret in a step's name: hidden
        ("user", "Now step two"),
        (None, "Analysis: a2"),
    ]


K = "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0"  # a W&B key: no rule knows its shape alone


def _said(folder: Path, config: dict, message: str) -> str:
    """The transcript's exception message of a trial with ``config`` that failed saying
    ``message``: what the trial's own secrets leave of it."""
    exc = {"exception_type": "X", "exception_message": message}
    _write(folder, "result.json", {"config": config, "exception_info": exc})
    _, shown, _ = read_transcript(folder, folder).exception
    return shown.text


@pytest.mark.parametrize(
    "config",
    [
        {"env": {"secrets": {"a": K}}},  # everything under a secret-named key
        {"env": {"secrets": {"b": [K]}}},
        {"kwargs": {"wandb": {"key": K}}},  # a key read with what it belongs to
        {"env": [{"name": "WANDB_API_KEY", "value": K}]},  # a container's env list
        {"env": [{"Name": "WANDB_API_KEY", "Value": K}]},
        {"env": [{"NAME": "WANDB_API_KEY", "VALUE": K}]},
        {"args": ["train.py", "--wandb-api-key", K]},  # an argv flag's value
        {"env": [["WANDB_API_KEY", K]]},  # a name and its value as a pair
        {"cmd": ["wandb", "login", K]},  # the key after wandb login
    ],
)
def test_a_trials_secrets_are_those_its_config_table_hides(tmp_path, config):
    """The values a transcript hides as the trial's own are exactly those the config table
    hides (Redactor.value), whatever shape names them."""
    config = {"agent": config, "verifier": {"sort": {"key": "notasecret9"}}}
    assert _said(tmp_path, config, f"echo {K} notasecret9") == (
        "echo [REDACTED:trial-secret] notasecret9"
    )


@pytest.mark.parametrize(
    ("secret", "message", "shown"),
    [
        # a password of plain words: hidden where it stands as a value and in prose alike
        (
            "correcthorse",
            "DB_PASSWORD: correcthorse\nmysql -pcorrecthorse; the correcthorse plan failed",
            "DB_PASSWORD: [REDACTED:trial-secret]\nmysql -p[REDACTED:trial-secret]; "
            "the [REDACTED:trial-secret] plan failed",
        ),
        # a common word: every time the transcript says it, inside a longer word too
        (
            "sunshine",
            'I will try "sunshine" as the password; sunshine state; sunshine2',
            'I will try "[REDACTED:trial-secret]" as the password; [REDACTED:trial-secret]'
            " state; [REDACTED:trial-secret]2",
        ),
        # (another case is another string: a password's case is part of it)
        ("sunshine", "Sunshine and SUNSHINE", "Sunshine and SUNSHINE"),
    ],
)
def test_a_trials_plain_word_secret_is_hidden_wherever_it_is_said(tmp_path, secret, message, shown):
    """A trial's own secret is hidden wherever the transcript holds it, a word of prose
    too: an agent that says its password in a sentence ("I will try sunshine") says the
    secret, and no rule can tell that sentence from one using the word apart."""
    assert _said(tmp_path, {"agent": {"env": {"DB_PASSWORD": secret}}}, message) == shown


@pytest.mark.parametrize(
    "odd",
    [
        # keys the redactor shows alike (both masked), an int and a str key
        {"sk-ant-api03-" + "A" * 40: "a", "sk-ant-api03-" + "B" * 40: "b"},
        # nested past Python's recursion limit (JSON written by hand: json.dumps cannot)
        '{"deep": ' + '{"a": ' * 900 + '"x"' + "}" * 900 + "}",
    ],
)
def test_an_odd_config_neither_breaks_the_transcript_nor_shows_its_secret(tmp_path, odd):
    odd_json = odd if isinstance(odd, str) else json.dumps(odd)
    _write(
        tmp_path,
        "result.json",
        f'{{"config": {{"agent": {{"env": {{"WANDB_API_KEY": "{K}"}}, "odd": {odd_json}}}}}, '
        f'"exception_info": {{"exception_type": "X", "exception_message": "echo {K}"}}}}',
    )
    _, message, _ = read_transcript(tmp_path, tmp_path).exception
    assert message.text == "echo [REDACTED:trial-secret]"


def test_where_a_secret_is_is_not_a_secret_of_the_trial(tmp_path):
    """A variable's name in a list of required ones and a key file's path are hidden in
    the config table (beside a secret-named name or flag) but say where a secret is, not
    what: the transcript's text keeps them."""
    config = {
        "env": [["ANTHROPIC_API_KEY", "OPENAI_API_KEY"], ["WANDB_API_KEY", K]],
        "args": ["--api-key-file", "credentials.json"],
    }
    said = _said(tmp_path, {"agent": config}, f"no OPENAI_API_KEY in credentials.json, not {K}")
    assert said == "no OPENAI_API_KEY in credentials.json, not [REDACTED:trial-secret]"


@pytest.mark.parametrize(
    "pw", ["$uperS3cretPass", "hunter2_password", "Tr0ub4dor_3_secret", "PROD_DB_PASSWD_2024"]
)
def test_a_value_under_a_secret_named_key_is_always_a_secret(tmp_path, pw):
    # (only a list's item hidden for its neighbour may name where a secret is)
    said = _said(tmp_path, {"agent": {"env": {"DB_PASSWORD": pw}}}, f"psql: {pw}")
    assert said == "psql: [REDACTED:trial-secret]"


def test_a_result_with_nan_is_read_as_the_trial_reader_reads_it(tmp_path):
    _write(
        tmp_path,
        "agent/trajectory.json",
        {"steps": [{"step_id": 1, "source": "agent", "message": f"key {K}"}]},
    )
    (tmp_path / "result.json").write_text(
        f'{{"config": {{"agent": {{"env": {{"WANDB_API_KEY": "{K}"}}}}}}, "reward": NaN}}'
    )
    t = read_transcript(tmp_path, tmp_path)
    assert t.form == "atif" and t.turns[0].text.text == "key [REDACTED:trial-secret]"


def test_ansi_and_carriage_returns_are_shown_as_a_terminal_shows_them():
    assert clean("\x1b[1;31mred\x1b[0m ok\r\n\x1b]0;title\x07x") == "red ok\nx"
    assert clean("10%\r50%\r100%\ndone\x07") == "100%\ndone"
    assert clean("a\ud800b") == "a\ufffdb"


def test_a_long_output_is_cut_head_and_tail_with_the_bytes_omitted():
    text = "".join(f"{i:05d}\n" for i in range(20000))
    s = Shaper(Redactor(transcripts=True)).shape(text, OUTPUT_HEAD, OUTPUT_HEAD)
    head, mark, tail = s.text.partition("\n[… ")
    assert head == text[:OUTPUT_HEAD] and s.text.endswith(text[-OUTPUT_HEAD:])
    assert mark and s.bytes == len(text)
    omitted = int(tail.split(" bytes omitted")[0].replace(",", ""))
    assert omitted == len(text) - 2 * OUTPUT_HEAD


@pytest.mark.parametrize("at", [OUTPUT_HEAD - 30, OUTPUT_HEAD - 3, OUTPUT_HEAD + 500])
def test_a_secret_across_a_cut_is_hidden_whole(at):
    """Redacted before it is cut: a secret the cut would split is hidden, never half shown."""
    text = "x" * at + f" {HF} " + "y" * 50_000
    s = Shaper(Redactor(transcripts=True)).shape(text, OUTPUT_HEAD, OUTPUT_HEAD)
    assert HF[:12] not in s.text and HF[-8:] not in s.text
    assert ("[REDACTED:hf-token]" in s.text) == (at < OUTPUT_HEAD)


def test_a_private_key_longer_than_the_margin_is_hidden_in_the_tail():
    body = "\n".join("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo" * 2 for _ in range(3 * MARGIN // 64))
    key = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"
    text = "z" * 40_000 + key + "\nafter\n"
    s = Shaper(Redactor(transcripts=True)).shape(text, OUTPUT_HEAD, OUTPUT_HEAD)
    assert "QUJDREVG" not in s.text and "[REDACTED:private-key]" in s.text
    assert s.text.endswith("\nafter\n")


@pytest.mark.parametrize(
    ("content", "text", "commands", "done", "form"),
    [
        (
            '{"analysis": "a", "plan": "b", "commands": [], "task_complete": true}',
            "Analysis: a\nPlan: b",
            (),
            True,
            "json",
        ),
        (
            'Sure!\n{"analysis": "a", "commands": [{"keystrokes": "ls\\n"}]}\nthanks',
            "Analysis: a\n\nSure!\n\nthanks",
            ("ls\n",),
            False,
            "json",
        ),
        (
            "<response><analysis>a</analysis><plan></plan><commands></commands></response>",
            "Analysis: a",
            (),
            False,
            "xml",
        ),
        ("just words {not json}", "just words {not json}", (), False, "text"),
        ("", "", (), False, "text"),
    ],
)
def test_replies_in_every_form(content, text, commands, done, form):
    r = parse_reply(content)
    assert (r.text, r.commands, r.done, r.form) == (text, commands, done, form)


def test_think_blocks_of_every_shape():
    assert parse_reply("<think>a</think>b").reasoning == "a"
    assert parse_reply("opened by the template</think>then").reasoning == "opened by the template"
    r = parse_reply("<think>cut off mid thought")
    assert r.reasoning == "cut off mid thought" and r.text == ""


def test_a_trial_of_very_many_steps_is_read_up_to_a_bound(tmp_path):
    # a planted result.json of thousands of steps, none with a transcript: the first
    # MAX_STEPS are read (each a marker), the rest said in a note, in time linear in them
    from sitegen.read.transcripts import MAX_STEPS

    empty = {"agent_result": {"metadata": {"all_messages": []}}}
    steps = [{"step_name": f"s{i}", **empty} for i in range(MAX_STEPS + 500)]
    _write(tmp_path, "result.json", {"config": {}, "agent_result": None, "step_results": steps})
    t = read_transcript(tmp_path, tmp_path)
    assert [x.event for x in t.turns] == ["step"] * MAX_STEPS
    assert f"{MAX_STEPS + 500:,} steps; the first {MAX_STEPS:,} are shown" in t.notes
