"""Synthetic agent transcripts in Harbor's three forms, with hazards and planted secrets.

For the planted tasks job (:mod:`sitegen.synth.plants`): every trial whose agent ran gets a
transcript of its ``n_episodes`` turns, written as Terminus-2 writes one (harbor 0.26,
``agents/terminus_2``), in one of three forms:

* ``atif``: ``agent/trajectory.json`` (ATIF-v1.6; a continuation in
  ``trajectory.cont-1.json`` after a summarization, its first steps copied context; or raw
  content: the reply as JSON text and no tool calls);
* ``messages``: ``result.json`` → ``agent_result.metadata.all_messages`` (JSON, XML or free
  text replies, ``<think>`` blocks, a summarization);
* ``episodes``: ``agent/episode-N/prompt.txt`` and ``response.txt`` (and a ``debug.json`` that
  must never be read).

Some carry hazards: ANSI colour, ``<script>`` in terminal output, a 100 KB output, MB of
token ids in ``result.json``; and secrets of every kind a transcript leaks (an ``env`` dump,
git remotes and extra headers, API headers and query strings, AWS keys, a private key, a
JWT, a private inference server, a home folder, a value named secret only by the trial's
own config, one named only by the building machine's environment)."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

FORMS = ("atif", "messages", "episodes")
# Set in the build's environment by whoever builds the planted archive and checks its
# output (tests/scenarios/conftest.py): a value named secret only there.
BUILD_SECRET_ENV = "SITEGEN_SYNTH_BUILD_TOKEN"
TEMPLATE = (
    "You are an AI assistant tasked with solving command-line tasks in a Linux environment. "
    "Reply in JSON with the fields analysis, plan, commands (each with keystrokes and "
    "duration) and task_complete.\n\n"
    "Task Description:\n{instruction}\n\nCurrent terminal state:\n{screen}\n"
)
SCREEN = "root@sandbox:/app# "
LONG_OUTPUT_BYTES = 100_000


def planted_secrets() -> dict[str, tuple[str, str]]:
    """name -> (the text a terminal shows, the secret in it that must never be published)."""
    rng = random.Random(37)
    an = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

    def s(n: int, chars: str = an) -> str:
        return "".join(rng.choice(chars) for _ in range(n))

    gh = "ghs_" + s(36)
    out: dict[str, tuple[str, str]] = {}
    for name, value in (
        ("OPENAI_API_KEY", "sk-proj-" + s(40)),
        ("ANTHROPIC_API_KEY", "sk-ant-api03-" + s(40)),
        ("HF_TOKEN", "hf_" + s(34)),
        ("DAYTONA_API_KEY", "dtn_" + s(32)),
        ("SLACK_BOT_TOKEN", "xoxb-" + s(12, "0123456789") + "-" + s(24)),
        ("AWS_ACCESS_KEY_ID", "AKIA" + s(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")),
        ("AWS_SECRET_ACCESS_KEY", s(40, an + "/+")),
        ("DB_PASSWORD", "pw" + s(14)),
    ):
        out[f"env:{name}"] = (f"{name}={value}", value)
    pat = "ghp_" + s(36)
    out["git-remote"] = (f"origin\thttps://jdoe:{pat}@github.com/acme/app.git (fetch)", pat)
    header = base64.b64encode(f"x-access-token:{gh}".encode()).decode()
    out["extraheader"] = (
        f"http.https://github.com/.extraheader AUTHORIZATION: basic {header}",
        header,
    )
    bearer = s(32)
    out["bearer"] = (f'curl -H "Authorization: Bearer {bearer}" https://api.acme.dev/v1', bearer)
    key = s(32, "0123456789abcdef")
    out["x-api-key"] = (f"x-api-key: {key}", key)
    query = s(24)
    out["query"] = (f"GET https://maps.acme.dev/v1/geo?q=paris&api_key={query}", query)
    body = "\n".join(s(64, an + "+/") for _ in range(6))
    out["private-key"] = (
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----",
        body.splitlines()[2],
    )
    jwt = f"eyJhbGciOiJIUzI1NiJ9.eyJ{s(40)}.{s(43)}"
    out["jwt"] = (f"session={jwt}", jwt)
    out["api-base"] = ("api_base: http://10.12.0.7:8000/v1", "10.12.0.7")
    out["home"] = ("ls /home/jdoe-synth/.cache", "jdoe-synth")
    out["config-value"] = ("echo $CUSTOM_SERVICE_TOKEN\nHq9wZ3xK7mP2vR8tLc", "Hq9wZ3xK7mP2vR8tLc")
    out["build-value"] = ("cat ~/.netrc | grep machine\nNw4qT8zLp2Vx6Rk1Zd", "Nw4qT8zLp2Vx6Rk1Zd")
    return out


BUILD_SECRET = planted_secrets()["build-value"][1]
CONFIG_SECRET = planted_secrets()["config-value"][1]


def instruction(task: str) -> str:
    return (
        f"Task {task}: the project in /app fails its tests.\n"
        "Find the cause, fix it, and run `make test` until it passes. Do not edit the tests."
    )


def _reply(k: int, task: str, commands: list[str], done: bool, style: str) -> str:
    analysis = f"Turn {k} of {task}: reading what the last command printed."
    plan = f"Run {len(commands)} command(s) and look at the result."
    if style == "xml":
        keys = "".join(f'<keystrokes duration="0.5">{c}</keystrokes>\n' for c in commands)
        finish = "<task_complete>true</task_complete>\n" if done else ""
        return (
            f"<response>\n<analysis>{analysis}</analysis>\n<plan>{plan}</plan>\n"
            f"<commands>\n{keys}</commands>\n{finish}</response>"
        )
    if style == "text":
        return f"{analysis} I will just type: {' ; '.join(c.strip() for c in commands)}"
    body = {
        "analysis": analysis,
        "plan": plan,
        "commands": [{"keystrokes": c, "duration": 0.5} for c in commands],
        "task_complete": done,
    }
    return json.dumps(body, indent=2)


def _output(k: int, command: str, hazards: dict[int, str]) -> str:
    text = f"{command.strip()}\nok: step {k} done\n"
    return text + hazards[k] if k in hazards else text


def _turns(turns: int, hazards: dict[int, str]) -> list[tuple[list[str], str, bool]]:
    """Each turn's commands, the terminal's answer and whether it marks the task complete."""
    out = []
    for k in range(1, turns + 1):
        cmd = "make test\n" if k == turns else f"grep -n TODO src/part{k}.py\n"
        out.append(([cmd], _output(k, cmd, hazards), k == turns))
    return out


def write_transcript(
    folder: Path,
    task: str,
    turns: int,
    form: str,
    hazards: dict[int, str] | None = None,
    style: str = "json",
    summarized: bool = False,
    token_ids: int = 0,
) -> dict:
    """Write a trial's transcript under ``folder`` and return what its ``result.json`` must
    add: ``{"metadata": {…}, "config": {…}, "rollout_details": …}``. ``hazards`` puts a
    text in the output of a turn (1-based; the last turn's output is in an ATIF trajectory
    only: Terminus-2 never sends it to the model); ``token_ids``: that many token ids in
    the result's rollout details (and a few in an ATIF trajectory's metrics)."""
    hazards = hazards or {}
    first = TEMPLATE.format(instruction=instruction(task), screen=SCREEN)
    steps = _turns(turns, hazards)
    patch: dict = {
        "metadata": {"summarization_count": 1 if summarized else 0},
        "config": {"agent": {"name": "terminus-2", "env": {"CUSTOM_SERVICE_TOKEN": CONFIG_SECRET}}},
    }
    ids = [987654321 + i % 1000 for i in range(token_ids)]
    if ids:
        patch["rollout_details"] = [{"prompt_token_ids": [ids], "completion_token_ids": [ids]}]
    if form == "atif":
        _atif(folder, task, first, steps, style, summarized, ids)
    elif form == "messages":
        msgs = [{"role": "user", "content": first}]
        if summarized:  # the history after a summary: it starts from the handoff
            msgs = [{"role": "user", "content": f"Summary of the work so far on {task}."}]
        for k, (cmds, output, done) in enumerate(steps, 1):
            reply = _reply(k, task, cmds, done, style)
            if k == 1:
                reply = f"<think>First I look around {task}.</think>\n{reply}"
            msgs.append({"role": "assistant", "content": reply})
            if not done:  # (the last answer is never sent to the model: not in its chat)
                msgs.append({"role": "user", "content": f"New Terminal Output:\n{output}"})
        patch["metadata"]["all_messages"] = msgs
    elif form == "episodes":
        prompt = first
        for n, (cmds, output, done) in enumerate(steps):
            d = folder / "agent" / f"episode-{n}"
            d.mkdir(parents=True, exist_ok=True)
            (d / "prompt.txt").write_text(prompt)
            (d / "response.txt").write_text(_reply(n + 1, task, cmds, done, style))
            if n == 0:  # (Harbor writes one per episode: never read)
                (d / "debug.json").write_text(
                    json.dumps({"litellm_params": {"api_key": "never-read"}})
                )
            prompt = f"New Terminal Output:\n{output}"
    verifier = folder / "verifier"
    verifier.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"tests/test_{task}.py::test_{i} PASSED\n" for i in range(40))
    (verifier / "test-stdout.txt").write_text(f"{lines}=== 40 passed in 1.2s ===\n")
    return patch


def _atif(
    folder: Path,
    task: str,
    first: str,
    steps: list[tuple[list[str], str, bool]],
    style: str,
    summarized: bool,
    ids: list[int],
) -> None:
    raw = style == "raw"

    def agent_step(n: int, k: int, cmds: list[str], output: str, done: bool) -> dict:
        step: dict = {
            "step_id": n,
            "timestamp": f"2026-03-02T08:{k:02d}:00+00:00",
            "source": "agent",
            "model_name": "hosted_vllm/Qwen3-8B",
            "message": _reply(k, task, cmds, done, "json")
            if raw
            else f"Analysis: Turn {k} of {task}.\nPlan: run {len(cmds)} command(s).",
            "observation": {"results": [{"content": f"New Terminal Output:\n{output}"}]},
            "metrics": {"prompt_tokens": 1000 + k, "completion_tokens": 100 + k},
        }
        if ids:  # (a few: the result.json holds the MB)
            step["metrics"]["prompt_token_ids"] = ids[:100]
            step["metrics"]["logprobs"] = [-0.25] * 100
        if not raw:
            calls = [
                {
                    "tool_call_id": f"call_{k - 1}_{i + 1}",
                    "function_name": "bash_command",
                    "arguments": {"keystrokes": c, "duration": 0.5},
                }
                for i, c in enumerate(cmds)
            ]
            if done:
                calls.append(
                    {
                        "tool_call_id": f"call_{k - 1}_task_complete",
                        "function_name": "mark_task_complete",
                        "arguments": {},
                    }
                )
            step["tool_calls"] = calls
        return step

    agent = {"name": "terminus-2", "version": "2.0.0", "model_name": "hosted_vllm/Qwen3-8B"}
    head = {"step_id": 1, "source": "user", "message": first}
    cut = len(steps) // 2 if summarized else len(steps)
    seg = [head] + [agent_step(i + 2, i + 1, *steps[i]) for i in range(cut)]
    doc = {"schema_version": "ATIF-v1.6", "session_id": "synth", "agent": agent, "steps": seg}
    if summarized:
        doc["continued_trajectory_ref"] = "trajectory.cont-1.json"
    (folder / "agent").mkdir(parents=True, exist_ok=True)
    (folder / "agent" / "trajectory.json").write_text(json.dumps(doc, indent=2))
    if not summarized:
        return
    copied = [dict(s, is_copied_context=True) for s in seg]
    for s in copied:
        s.pop("metrics", None)
    handoff = {
        "step_id": len(copied) + 1,
        "source": "user",
        "message": f"Summary of {task} so far.",
    }
    rest = [
        agent_step(len(copied) + 2 + i, cut + i + 1, *steps[cut + i])
        for i in range(len(steps) - cut)
    ]
    cont = {
        "schema_version": "ATIF-v1.6",
        "session_id": "synth-cont-1",
        "agent": agent,
        "steps": copied + [handoff] + rest,
    }
    (folder / "agent" / "trajectory.cont-1.json").write_text(json.dumps(cont, indent=2))


def long_output(secret_at_cut: str) -> str:
    """A 100 KB terminal output with a secret written across where a kept head would end."""
    line = "./src/module/file_%05d.py\n"
    head = "".join(line % i for i in range(36))  # ~1 KB: the secret straddles the cut
    body = "".join(line % i for i in range(36, 3900))
    return (head + secret_at_cut + "\n" + body)[:LONG_OUTPUT_BYTES]


def colour(text: str) -> str:
    return f"\x1b[1;31m{text}\x1b[0m and \x1b[32mgreen\x1b[0m\r\n\x1b]0;title\x07"


SCRIPT = '<script>alert("transcript")</script><img src=x onerror=alert(1)>'
