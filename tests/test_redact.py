from sitegen.redact import MASK, Redactor, is_secret_key


def test_keys():
    for k in (
        "WANDB_API_KEY",
        "hf_token",
        "aws_secret_access_key",
        "DB_PASSWORD",
        "gcp_credentials",
        "Authorization",
    ):
        assert is_secret_key(k), k
    for k in ("max_tokens", "n_tokens_dp_gt_1pct", "tokenizer", "pad_token_id", "author", "keys"):
        assert not is_secret_key(k), k


def test_shapes_and_assignments():
    r = Redactor()
    text = (
        "export WANDB_API_KEY=abc123 HF=hf_"
        + "a" * 30
        + " key sk-"
        + "b" * 40
        + " AKIA"
        + "C" * 16
        + " https://me:pw@host/x Bearer "
        + "d" * 30
        + " dtn_"
        + "e" * 30
        + " "
        + "f" * 40
    )
    out = r.text(text)
    for leak in ("abc123", "hf_aaa", "sk-bbb", "AKIACCC", ":pw@", "ddddd", "dtn_eee", "f" * 40):
        assert leak not in out, leak
    assert out.count(MASK) >= 7


def test_user_patterns_and_nested_config():
    r = Redactor(("corp-[0-9]{6}",))
    assert r.text("id corp-123456 ok") == f"id {MASK} ok"
    cfg = r.value(None, {"a": {"api_key": "zzz", "list": ["hf_" + "x" * 25], "n": 3}})
    assert cfg == {"a": {"api_key": MASK, "list": [MASK], "n": 3}}
