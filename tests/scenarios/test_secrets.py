"""Safe to publish: a secret planted in every place text travels from never reaches the site.

One small archive carries each credential shape of issue 10 in folder and file names,
metric names (console, WANDB_MIRROR, timing/*, eval/*), Exception breakdown labels,
vLLM Stats keys, the failure line (past its 300-character cut), checkpoint paths,
the config dump, notes, trial names, tasks and exception types, tar members and
warning paths; plus links leading out of the archive, a FIFO and /dev/zero. One build
(with a base URL: sitemap, canonical and OpenGraph links) must finish, keep every job,
and no output byte — nor any input of the PNG cards — may hold any secret, or even
its first half.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import tarfile
import threading
from pathlib import Path

import msgspec
import pytest

from sitegen.commands.build import build
from sitegen.options import BuildOptions
from sitegen.present import cards
from sitegen.redact import Redactor

A = "A1b2C3d4E5f6G7h8J9k0"  # 20 characters that make a credential body
HEX40 = "39a7bf3a9b1ec8a4b410ebe370f84c839f522952"
PEM_BODY = "MIIEowIBAAKCAQEAsecretPEMbodyLine"
S = {  # name -> secret as planted (the part that must vanish)
    "dir": f"hf_DIR{A}",
    "file": f"github_pat_FILE{A}",
    "skipped": f"sk-proj-SKIP{A}",
    "trialdir": f"dtn_TDIR{A}",
    "warndir": f"ghp_WARN{A}{A}",
    "tarmember": f"AIzaTAR{A}{A}",
    "console_metric": f"hf_CONS{A}",
    "mirror_metric": f"ghp_MIRR{A}{A}",
    "timing": f"hf_TIME{A}",
    "eval_metric": f"hf_EVAL{A}",
    "exception_label": f"xoxb-EXCL{A}",
    "vllm_key": f"hf_VLLM{A}",
    "failure": HEX40,
    "checkpoint": f"ghp_CKPT{A}{A}",
    "pem": PEM_BODY,
    "api_keys": "apikeyONE_plural_secret",
    "hf_tokens": "hftokenTWO_plural_secret",
    "passphrase": "correct horse battery",
    "db_pass": "dbPASSsecret99",
    "pat": f"github_pat_CFG{A}",
    "aiza": f"AIzaCFG{A}{A}",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzZWNyZXQifQ.c2lnbmF0dXJlU0VDUkVU",
    "stripe": f"sk_live_{A}",
    "slack": f"T000/B000/SLACK{A}",
    "amz": f"amzSIG{A}",
    "redis": "redisPW/with/slash",
    "git_token": f"gitTOKEN{A}",
    "basic": "dXNlcjpiYXNpY1NFQ1JFVA==",
    "dict_key": f"hf_DKEY{A}",
    "notes": "notesPASSWORDsecret",
    "notes_cli": "cliTOKENsecret77",
    "user": "ACMESECRET424242",
    "trial_name": f"hf_TNAME{A}",
    "task_name": f"ghp_TASK{A}{A}",
    "exception_type": f"hf_EXCT{A}",
    "outside": "OUTSIDE_FILE_MARKER_never_published",
    # one-word secret names (PGPASSWORD is libpq's)
    "pgpassword": "pgPASSWORDvalue77",
    "dbpass": "dbpassONEWORD88",
    # in notes.md as Markdown that escapes it (hf\_…): the page would show it whole
    "notes_escaped": f"NESC{A}",
    # a log whose file name assigns a key: the name shows a hash, which must scan clean
    "key_in_name": "KEYNAMEc0ffee4242beef",
}


def _hex(name: str) -> str:
    return hashlib.sha1(name.encode()).hexdigest()  # a W&B key's look: 40 hex characters


def _b64(name: str) -> str:
    return base64.b64encode(hashlib.sha256(name.encode()).digest()).decode()[:40]  # AWS's look


# Secrets that only what stands beside them names (issue 35): a flag before them in an argv
# list, an override's or a nested key's path, a name field beside a value field, an AWS key
# id, the user and host around a URL's password that holds "@", a provider's error message.
# Each is planted where it may travel from: the config dump (c), notes.md (n), the failure
# line (f), a checkpoint path (p), a trial's exception type (t), an Exception breakdown label (x).
B = {f"{shape}-{where}": (_b64 if shape == "aws" else _hex)(f"{shape}-{where}") for shape, wheres in {
    "argv": "cnf", "argvblock": "cn", "override": "cnf", "nested": "cn", "envpair": "cn",
    "envjson": "cnf", "aws": "cnfp", "urlat": "cnfp", "apikey": "cnftx", "token": "nftx",
    "dotted": "cnf", "pair": "cnf", "repr": "cnf", "netrc": "cn", "block": "cn", "md": "n",
    "osenv": "cnf", "wlogin": "cnf", "piped": "cnf", "hdrbytes": "cnf", "loginarg": "cnf",
    "herestr": "cnf", "table": "n", "htmltable": "n", "prose": "cnf", "argvlogin": "cnf",
    "loginlist": "c", "printed": "cn", "columns": "cn",
}.items() for where in wheres}  # fmt: skip
AWS_ID = "AKIAQWERTYUIOPASDFGH"


def _beside(where: str) -> list[str]:
    """The shapes planted at ``where``, as lines (of a YAML dump, or of any text)."""
    b = {k.rsplit("-", 1)[0]: v for k, v in B.items() if k.endswith(f"-{where}")}
    lines = [
        f"launcher_argv: [python, -m, train, --wandb-api-key, {b['argv']}]" if "argv" in b else "",
        f"block_argv:\n- --hf-token\n- {b['argvblock']}" if "argvblock" in b else "",
        f"hydra_overrides: ['+logger.wandb.key={b['override']}']" if "override" in b else "",
        f"logger:\n  wandb:\n    key: {b['nested']}" if "nested" in b else "",
        f"env_list:\n- name: WANDB_API_KEY\n  value: {b['envpair']}" if "envpair" in b else "",
        f'env_json: \'{{"name": "HF_TOKEN", "value": "{b["envjson"]}"}}\''
        if "envjson" in b
        else "",
        f"aws_note: '{AWS_ID} {b['aws']}'" if "aws" in b else "",
        f"api_base2: 'https://svc:Hun@{b['urlat']}@inference.internal/v1'" if "urlat" in b else "",
        f"error: 'AuthenticationError: Invalid API key: {b['apikey']}'" if "apikey" in b else "",
        f"error2: '401 Unauthorized: invalid token {b['token']} for this org'"
        if "token" in b
        else "",
        f"launcher: 'python train.py --wandb.key={b['dotted']} --lr 1'" if "dotted" in b else "",
        f"env_pairs: [[LR, '1'], [WANDB_API_KEY, {b['pair']}]]" if "pair" in b else "",
        f"logger_repr: \"WandbConfig(project='p', key='{b['repr']}')\"" if "repr" in b else "",
        f"netrc: |\n  machine api.wandb.ai\n    login u\n    password {b['netrc']}"
        if "netrc" in b
        else "",
        f"secrets:\n  api_key: |-\n    {b['block']}" if "block" in b else "",
        f"- **WandB API key**: {b['md']}" if "md" in b else "",
        # a traceback's quoted line: a subscript assignment, a module's login(key=…)
        f"tb_line: \"os.environ['WANDB_API_KEY'] = '{b['osenv']}'\"" if "osenv" in b else "",
        f"tb_call: 'wandb.login(key=\"{b['wlogin']}\", relogin=True)'" if "wlogin" in b else "",
        f"setup: 'echo {b['piped']} | wandb login && python train.py'" if "piped" in b else "",
        f"http_debug: \"headers=[(b'host', b'api'), (b'x-api-key', b'{b['hdrbytes']}')]\""
        if "hdrbytes" in b
        else "",
        f"nb_cell: \"huggingface_hub.login('{b['loginarg']}')\"" if "loginarg" in b else "",
        f"gh_setup: 'gh auth login --with-token <<< {b['herestr']}'" if "herestr" in b else "",
        f"| setting | value |\n|---|---|\n| WANDB_API_KEY | `{b['table']}` |"
        if "table" in b
        else "",
        f"note: 'my W&B key is {b['prose']}'" if "prose" in b else "",
        f"login_argv: [wandb, login, --relogin, {b['loginlist']}]" if "loginlist" in b else "",
        f"env_listing: |\n  NAME            VALUE\n  WANDB_API_KEY   {b['columns']}"
        if "columns" in b
        else "",
        f"shell: |\n  root@box:/app# echo $WANDB_API_KEY\n  {b['printed']}\n  root@box:/app#"
        if "printed" in b
        else "",
        f"launch_error: \"Command '['wandb', 'login', '{b['argvlogin']}']' returned non-zero\""
        if "argvlogin" in b
        else "",
        f"<table><tr><td>HF_TOKEN</td><td>{b['htmltable']}</td></tr></table>"
        if "htmltable" in b
        else "",
    ]
    return [x for x in lines if x]


# Every single-token shape, each planted in every place a token can travel from (below).
TOKENS = {
    "hf": f"hf_MX{A}",
    "ghp": f"ghp_MX{A}{A}",
    "github_pat": f"github_pat_MX{A}",
    "glpat": f"glpat-MX{A}",
    "openai": f"sk-proj-MX{A}",
    "stripe": f"sk_live_MX{A}",
    "aiza": f"AIzaMX{A}{A}",
    "ya29": f"ya29.MX{A}",
    "jwt": "eyJhbGciOiJNWCJ9.eyJtYXRyaXgiOiJNWCJ9.TVhzaWduYXR1cmVNWA",
    "aws": "AKIAMXMXMXMXMXMXMXMX",
    "daytona": f"dtn_MX{A}",
    "npm": f"npm_MX{A}{A}",
    "slack": f"xoxb-MX{A}",
    "together": f"tgp_v1_MX{A}",
    "xai": f"xai-MX{A}{A}",
    "fireworks": f"fw_MX{A}",
    "cerebras": f"csk-MX{A}",
    "pinecone": f"pcsk_MX{A}",
    "e2b": f"e2b_MX{A}",
    "runpod": f"rpa_MX{A}",
    "databricks": "dapi0123456789abcdef0123456789abcdef",
    "modal": "as-MXk3v9QmW0b2C3d4E5f6",
    "sentry": f"sntrys_MX{A}",
    "google_client": f"GOCSPX-MX{A}",
    "langsmith_old": "ls__0123456789abcdef0123456789abcdef",
    "pypi": f"pypi-AgEIcHlwaS5vcmcMX{A}{A}",
    "docker": f"dckr_pat_MX{A}",
    "aws_session": f"FwoGZXIvYXdzEMX{A}",
    "tailscale": f"tskey-auth-MX{A}",
    "wandb_local": f"local-{HEX40}",
    "sendgrid": f"SG.MX{A}.{A}{A}MXb",
}
WORD_TOKENS = {k: t for k, t in TOKENS.items() if t.replace("_", "a").isalnum()}  # \w+ only
PATH_TOKENS = {k: t for k, t in TOKENS.items() if "." not in t}  # as folder names


def _log(lines: list[str], pid: int = 7) -> str:
    return "".join(f"(skyrl_entrypoint pid={pid}) {x}\n" for x in lines)


def _lg(msg: str, second: int = 0) -> str:
    return f"2026-02-08 00:00:{second:02d}.000 | INFO     | m:f:1 - {msg}"


def _result(name: str, task: str, exc: str | None, reward: float = 1.0) -> bytes:
    return json.dumps(
        {
            "trial_name": name,
            "task_name": task,
            "agent_result": {"metadata": {"n_episodes": 3}},
            "verifier_result": {"rewards": {"reward": reward}},
            "exception_info": {"exception_type": exc} if exc else None,
            "started_at": "2026-02-08T00:00:00Z",
            "finished_at": "2026-02-08T00:01:00Z",
        }
    ).encode()


def _plant(root: Path) -> Path:
    """Write the archive (under ``root/archive``) and a file outside it."""
    a = root / "archive"
    outside = root / "outside.txt"
    outside.write_text(f"root:x:0:0 {S['outside']}\n")
    (root / "outside.json").write_bytes(_result(S["outside"], S["outside"], None))

    # An experiment whose folder name holds a token; its log's name holds another.
    exp = a / f"exp-{S['dir']}"
    (exp / "logs").mkdir(parents=True)
    config = [
        "trainer:",
        "  run_name: leaky",
        "  innocent: |",
        "    -----BEGIN RSA PRIVATE KEY-----",
        f"    {PEM_BODY}",
        "    -----END RSA PRIVATE KEY-----",
        f"  api_keys: [{S['api_keys']}, other]",
        f"  hf_tokens: [{S['hf_tokens']}]",
        f"  passphrase: {S['passphrase']}",
        f"  db_pass: {S['db_pass']}",
        f"  note_pat: uses {S['pat']} daily",
        f"  google: {S['aiza']}",
        f"  session_jwt_cookie_free: {S['jwt']}",
        f"  billing: {S['stripe']}",
        f"  hook: https://hooks.slack.com/services/{S['slack']}",
        f"  s3: https://b.s3.amazonaws.com/k?X-Amz-Signature={S['amz']}&X-Amz-Date=1",
        f"  cache: redis://:{S['redis']}@cachehost:6379/0",
        f"  repo: https://{S['git_token']}@github.com/org/repo",
        f"  header: 'Authorization: Basic {S['basic']}'",
        "  keys_by_secret:",
        f"    {S['dict_key']}: 1",
        f"  project: {S['user']}",
        f"  PGPASSWORD: {S['pgpassword']}",
        f"  DBPASS: {S['dbpass']}",
        *("  " + x for line in _beside("c") for x in line.split("\n")),
    ]
    matrix_metrics = "".join(f"'debug/{t}': 1.0, 'timing/{t}': 1.0, " for t in TOKENS.values())
    step_dict = (
        "{'reward/avg_raw_reward': '0.5000', 'trainer/global_step': %d, "
        + matrix_metrics
        + f"'debug/{S['console_metric']}': 1.0, 'timing/{S['timing']}': 2.0}}"
    )
    labels = ", ".join(f"'{t}': 1" for t in TOKENS.values())
    vllm_keys = ", ".join(f"{t}=1.0" for t in WORD_TOKENS.values())
    lines = [
        *config,
        _lg("Starting batch generation for 8 trials (mode=training)"),
        _lg(f"Exception breakdown: {{'{S['exception_label']}': 1, {labels}}}"),
        _lg("Batch generation complete: 7/8 successful, 1 failed instances, 0 masked"),
        _lg("Step 1:", 1),
        step_dict % 1,
        _lg(f"vLLM Stats (step 1): {S['vllm_key']}=3.0, {vllm_keys}, running=2"),
        _lg(f"Successfully saved checkpoint for global_step_1 to: /ckpt/{S['checkpoint']}/g1"),
        _lg(
            f"Exception breakdown: {{'invalid token {B['token-x']}': 1, 'Invalid API key: {B['apikey-x']}': 2}}"
        ),
        _lg(
            "Successfully saved checkpoint for global_step_2 to: "
            f"s3://svc:Pw@{B['urlat-p']}@bucket/ck/{AWS_ID}:{B['aws-p']}"
        ),
        _lg("Step 2:", 2),
        step_dict % 2,
        _lg(
            "Train loop failed at global_step 2: "
            + "x" * 290
            + f" WANDB_API_KEY={HEX40} "
            + " ".join(TOKENS.values()),
            3,
        ),
    ]
    (exp / "logs" / f"run-{S['file']}_5.out").write_text(_log(lines))
    (exp / "notes.md").write_text(
        f"# Notes\n\npassword = {S['notes']}\n\nrun with `--token {S['notes_cli']}`\n\n"
        + f"used hf\\_{S['notes_escaped']} and sk\\-proj\\-{S['notes_escaped']} \\*kept\\*\n\n"
        + "\n".join(f"- {t}" for t in TOKENS.values())
        + "\n\n```yaml\n"
        + "\n".join(_beside("n"))
        + "\n```\n\n"
        + "\n\n".join(_beside("n"))
        + "\n"
    )

    # Its trials: names, tasks and exception types, a damaged one, a tar, links, a FIFO.
    tj = exp / "run" / "trace_jobs"
    good = tj / f"t-{S['trialdir']}"
    good.mkdir(parents=True)
    (good / "result.json").write_bytes(
        _result(S["trial_name"], S["task_name"], S["exception_type"], 0.0)
    )
    for i, exc in enumerate(
        (f"AuthenticationError: Invalid API key: {B['apikey-t']}", f"invalid token {B['token-t']}")
    ):
        (tj / f"e{i}").mkdir()
        (tj / f"e{i}" / "result.json").write_bytes(_result(f"e{i}", "t", exc, 0.0))
    for i, t in enumerate(TOKENS.values()):
        (tj / f"m{i}").mkdir()
        (tj / f"m{i}" / "result.json").write_bytes(_result(t, t, t, 0.0))
    (tj / "plain").mkdir()
    (tj / "plain" / "result.json").write_bytes(_result("plain", "t", None))
    bad = tj / f"bad-{S['warndir']}"
    bad.mkdir()
    (bad / "result.json").write_bytes(b'{"trial_name": ')
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        data = b"{not json"
        info = tarfile.TarInfo(f"trials/trial-{S['tarmember']}/result.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    (tj / "trials_step1_20260208T000000.tar.gz").write_bytes(buf.getvalue())
    (tj / "linked").mkdir()
    os.symlink(root / "outside.json", tj / "linked" / "result.json")
    (tj / "fifo").mkdir()
    os.mkfifo(tj / "fifo" / "result.json")
    (tj / "zero").mkdir()
    os.symlink("/dev/zero", tj / "zero" / "result.json")

    # A flat job using the mirror form, eval metrics, notes linked out of the archive.
    flat = a / "flat"
    flat.mkdir()
    mirror = [
        _lg("WANDB_MIRROR kind=train step=1 metrics="
            + json.dumps({"reward/avg_raw_reward": 0.5, f"x/{S['mirror_metric']}": 1.0,
                          **{f"x/{t}": 1.0 for t in TOKENS.values()}}), 1),
        _lg("WANDB_MIRROR kind=eval step=1 metrics="
            + json.dumps({f"eval/{S['eval_metric']}": 0.3,
                          **{f"eval/{t}": 0.1 for t in TOKENS.values()}}), 2),
        _lg("Train loop failed at global_step 1: " + " | ".join(_beside("f")), 3),
    ]  # fmt: skip
    (flat / "train_9.out").write_text(_log(mirror))
    named = a / "named"
    named.mkdir()
    (named / f"WANDB_API_KEY={S['key_in_name']}.out").write_text(
        _log([_lg("Step 1:", 1), "{'x/y': 1}"])
    )
    os.symlink(root / "outside.txt", flat / "notes.md")
    os.symlink(root / "outside.txt", flat / "linked_10.out")

    # One job whose path holds every token that can be a folder name; a skipped folder each.
    deep = a.joinpath(*(f"n-{t}" for t in PATH_TOKENS.values()))
    deep.mkdir(parents=True)
    (deep / f"{TOKENS['hf']}_3.out").write_text(_log([_lg("Step 1:", 1), step_dict % 1]))
    for t in PATH_TOKENS.values():
        (a / f"e-{t}").mkdir()
    # Folders that hold nothing: reported by name.
    (a / f"empty-{S['skipped']}").mkdir()
    (a / f"proj-{S['user']}").mkdir()
    return a


@pytest.fixture(scope="module")
def leaky_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("leaks")
    archive = _plant(root)
    specs: list[dict] = []
    real_paint = cards.paint

    def recording_paint(card: cards.Card) -> bytes:
        # the card's inputs: the PNG's text cannot be scanned, what it was drawn from can
        specs.append(msgspec.structs.asdict(card))
        return real_paint(card) if cards.available() else b""

    cards.paint = recording_paint
    out = root / "site"
    result: dict = {}

    def run() -> None:
        result["report"] = build(
            BuildOptions(
                archive=archive,
                out=out,
                base_url="https://org.github.io/runs/",
                redact_patterns=("ACMESECRET[0-9]+",),
                workers=1,
                now=1.9e9,
            )
        )

    try:
        t = threading.Thread(target=run, daemon=True)
        t.start()
        t.join(120)  # a FIFO read would hang here
        assert "report" in result, "the build hung or failed"
    finally:
        cards.paint = real_paint
    return out, result["report"], specs


def _outputs(out: Path) -> list[tuple[str, bytes]]:
    return [
        (p.relative_to(out).as_posix(), p.read_bytes())
        for p in sorted(out.rglob("*"))
        if p.is_file() and not p.is_symlink()
    ]


def test_no_secret_reaches_any_output_byte(leaky_site):
    out, report, specs = leaky_site
    files = _outputs(out)
    # the names the site is made of count too (folders, files, URLs)
    files.append(("<file names>", "\n".join(rel for rel, _ in files).encode()))
    files += [(f"<card spec {i}>", json.dumps(s).encode()) for i, s in enumerate(specs)]
    files.append(("<build report>", "\n".join(str(w) for w in report.warnings).encode()))
    leaks = []
    for name, secret in [*S.items(), *TOKENS.items(), *B.items()]:
        half = secret[: max(10, len(secret) // 2)].encode()
        for rel, data in files:
            if half in data:
                leaks.append(f"{name} in {rel}")
    assert not leaks, leaks


def test_everything_was_still_read(leaky_site):
    out, report, specs = leaky_site
    index = json.loads((out / "data" / "index.json").read_text())
    # the experiment's job, the flat one, the one of secret names, the one with a key in its name
    assert len(index["jobs"]) == 4
    assert report.trials >= 2 + len(TOKENS)  # every trial with secret names, and the plain one
    if cards.available():
        assert specs
    warned = "\n".join(str(w) for w in report.warnings)
    assert "outside the archive" in warned  # notes.md, a log and a result.json linked out
    assert "FIFO" in warned and "not read" in warned


def _strings(v: object) -> list[str]:
    """Every string in a JSON value, keys included (a gate scans values, not JSON syntax)."""
    if isinstance(v, dict):
        return [s for k, x in v.items() for s in (str(k), *_strings(x))]
    if isinstance(v, list):
        return [s for x in v for s in _strings(x)]
    return [v] if isinstance(v, str) else []


def test_published_data_scans_clean(leaky_site):
    """What the publish gate runs: no finding in any text of any data file sitegen wrote."""
    out, _, _ = leaky_site
    r = Redactor(("ACMESECRET[0-9]+",))
    scanned = 0
    for rel, data in _outputs(out):
        if rel.endswith(".json"):
            texts = _strings(json.loads(data))
        elif rel.endswith((".csv", ".xml", ".txt", ".md")):
            texts = [data.decode("utf-8", errors="replace")]
        else:
            continue
        for text in texts:
            scanned += 1
            found = [(f.kind, text[max(0, f.start - 20) : f.end + 5]) for f in r.findings(text)]
            assert not found, (rel, found)
    assert scanned > 100


def test_ids_from_secret_names_are_stable_and_clean(leaky_site, tmp_path):
    out, _, _ = leaky_site
    jobs = sorted(p.name for p in (out / "jobs").iterdir())
    assert any(j.startswith("exp-redacted-") for j in jobs), jobs
    # a second, clean build elsewhere gives the same URLs
    again = _plant(tmp_path)
    report = build(BuildOptions(archive=again, out=tmp_path / "site2", workers=1, now=1.9e9))
    assert sorted(p.name for p in (tmp_path / "site2" / "jobs").iterdir()) == jobs
    assert report.jobs == 4


def test_the_publish_gate_passes_the_redacted_site(leaky_site):
    """The gate (sitegen check-site) runs the same rules: a site this build made passes it."""
    from sitegen.publish.gate import check_site

    out, _, _ = leaky_site
    report = check_site(out, Redactor(("ACMESECRET[0-9]+",)), workers=1)
    assert report.ok, report.lines()


def test_every_secret_hidden_is_reported_by_kind_file_and_line(leaky_site):
    """Someone must rotate each token and clean the archive: the build says where secrets were
    hidden (one warning an input: kinds, first lines, counts), in its output and on the site,
    never with a value; the values it hid were read (the config dump and notes are shown)."""
    from sitegen.redact import SECRETS_HIDDEN

    out, report, _ = leaky_site
    reported = [w for w in report.warnings if w.message.startswith(SECRETS_HIDDEN)]
    hidden = {
        w.path: w for w in reported if w.line or w.path not in {x.path for x in reported if x.line}
    }
    log = next(p for p in hidden if p.endswith(".out") and p.startswith("exp-") and hidden[p].line)
    assert hidden[log].line == 4  # the PEM block under "innocent:", the dump's first secret
    for kind in ("cli-secret", "secret-env-pair", "aws-secret-key", "url-password", "error-secret"):
        assert kind in hidden[log].message, kind
    notes = next(p for p in hidden if p.endswith("notes.md"))
    assert "secret-env-pair" in hidden[notes].message and hidden[notes].line == 3
    trials = next(p for p in hidden if p.endswith("trace_jobs"))
    assert "error-secret 2 times (first in e0/result.json)" in hidden[trials].message
    # each name holding one, once: every folder of the deep path, its log, the skipped folders
    named_once = [w.path for w in reported if "(in this name)" in w.message]
    named = set(named_once)
    deep = {p for p in named if p.startswith("n-redacted-")}
    assert len(deep) == len(PATH_TOKENS) + 1 and len(named_once) == len(named)
    assert {
        p for p in named if p.startswith("e-redacted-")
    } and "named/WANDB_API_KEY=redacted-" in str(named)
    assert f"; secrets hidden in {len(reported)} inputs: rotate them" in report.summary()
    # on the site too: the index's warnings and each job's
    listed = json.loads((out / "data" / "warnings.json").read_text())
    listed = listed["warnings"] if isinstance(listed, dict) else listed
    assert sum(w["message"].startswith(SECRETS_HIDDEN) for w in listed) == len(reported)
    # the index lists them apart from the damaged input, each input once, open
    index = (out / "index.html").read_text()
    found = index.split('<div class="secrets-found">')[1].split("</div>")[0]
    assert f"Secrets found in {len(reported)} inputs" in found
    assert found.count("<li>") == len(reported) and "rotate them" in found
    assert SECRETS_HIDDEN not in found and "cli-secret" in found  # the kinds, said once
    damaged = index.split("Show the damaged input the build read around (")[1]
    assert int(damaged.split(")")[0].replace(",", "")) == len(listed) - len(reported)
    assert SECRETS_HIDDEN not in damaged.split("</details>")[0]
    job = next((out / "data" / "jobs").glob("exp-*.json"))
    shown = json.loads(job.read_text())
    assert any(w["message"].startswith(SECRETS_HIDDEN) for w in shown["warnings"])
    trainer = shown["config"]["trainer"]
    assert trainer["env_list"] == [{"name": "WANDB_API_KEY", "value": "[REDACTED]"}]
    assert trainer["logger"] == {"wandb": {"key": "[REDACTED]"}}
    assert (
        "--wandb-api-key" in trainer["launcher_argv"] and "[REDACTED]" in trainer["launcher_argv"]
    )
