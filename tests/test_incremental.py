from sitegen import incremental as cache_mod
from sitegen.incremental import BuildCache


def test_cache_survives_and_is_invalidated_by_version_or_options(tmp_path, monkeypatch):
    out = tmp_path / "site"
    c = BuildCache(out, {"redact_patterns": []})
    c.save("log", "a.out", {"x": 1})
    assert BuildCache(out, {"redact_patterns": []}).load("log", "a.out") == {"x": 1}
    assert (
        BuildCache(out, {"redact_patterns": ["secret"]}).load("log", "a.out") is None
    )  # options changed
    c = BuildCache(out, {"redact_patterns": []})
    c.save("log", "a.out", {"x": 1})
    monkeypatch.setattr(cache_mod, "__version__", "99.0")
    assert (
        BuildCache(out, {"redact_patterns": []}).load("log", "a.out") is None
    )  # new sitegen version
    c = BuildCache(out, {"redact_patterns": []}, enabled=False)  # --clean
    assert c.load("log", "a.out") is None
