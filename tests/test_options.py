from pathlib import Path

import pytest

from sitegen.errors import ConfigError
from sitegen.options import DEFAULT_TITLE, BuildOptions, load_options


def test_defaults_without_config(tmp_path: Path):
    opts = load_options(None, archive=tmp_path)
    assert opts == BuildOptions(archive=tmp_path)
    assert opts.title == DEFAULT_TITLE


def test_config_file_from_python(tmp_path: Path):
    cfg = tmp_path / "sitegen.toml"
    cfg.write_text(
        'title = "Team runs"\nbase_url = "https://o.github.io/r/"\nworkers = 3\n'
        'redact_patterns = ["corp-[0-9]+"]\n'
    )
    opts = load_options(cfg, archive=str(tmp_path), out=tmp_path / "site")
    assert opts.title == "Team runs"
    assert opts.base_url == "https://o.github.io/r/"
    assert opts.workers == 3
    assert opts.redact_patterns == ("corp-[0-9]+",)
    assert opts.archive == tmp_path and opts.out == tmp_path / "site"


def test_overrides_win_and_unset_overrides_do_not(tmp_path: Path):
    cfg = tmp_path / "sitegen.toml"
    cfg.write_text('title = "From file"\nworkers = 3\n')
    opts = load_options(cfg, archive=tmp_path, title="From flag", workers=0, base_url=None)
    assert opts.title == "From flag"
    assert opts.workers == 3  # 0 means "not given", as the CLI's default
    assert opts.base_url is None


def test_unknown_option_and_missing_archive(tmp_path: Path):
    with pytest.raises(ConfigError, match="unknown build option 'colour'"):
        load_options(None, archive=tmp_path, colour="red")
    with pytest.raises(ConfigError, match="archive"):
        load_options(None)


def test_unknown_config_key(tmp_path: Path):
    cfg = tmp_path / "sitegen.toml"
    cfg.write_text("colour = 1\n")
    with pytest.raises(ConfigError, match="unknown key 'colour'"):
        load_options(cfg, archive=tmp_path)


def test_config_found_in_the_current_folder(tmp_path: Path, monkeypatch):
    from sitegen.options import find_config

    monkeypatch.chdir(tmp_path)
    assert find_config(None) == (None, False)
    (tmp_path / "sitegen.toml").write_text('title = "Here"\n')
    assert find_config(None) == (Path("sitegen.toml"), True)
    assert find_config(tmp_path / "x.toml") == (tmp_path / "x.toml", False)  # given wins


def test_executor_is_checked_before_the_build(tmp_path: Path, monkeypatch):
    import importlib.util

    with pytest.raises(ConfigError, match="choose one of local, ray"):
        load_options(None, archive=tmp_path, executor="slurm")
    with pytest.raises(ConfigError, match="--ray-address is for --executor ray"):
        load_options(None, archive=tmp_path, ray_address="auto")
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a)
    )
    with pytest.raises(ConfigError, match=r"needs Ray: pip install 'sitegen\[ray\]'"):
        load_options(None, archive=tmp_path, executor="ray")


def test_transcripts_and_the_site_budget_from_the_config_and_the_flags(tmp_path: Path):
    cfg = tmp_path / "sitegen.toml"
    cfg.write_text('transcripts = 12\nsite_budget = "1.5 GB"\n')
    opts = load_options(cfg, archive=tmp_path)
    assert (opts.transcripts, opts.site_budget, opts.transcripts_wanted()) == (
        12,
        1_500_000_000,
        12,
    )
    opts = load_options(cfg, archive=tmp_path, transcripts=0, site_budget="800 MB")
    assert (opts.transcripts, opts.site_budget) == (0, 800_000_000)  # 0 is a value: none
    assert load_options(None, archive=tmp_path, site_budget=5_000_000).site_budget == 5_000_000


def test_a_build_for_publishing_leaves_transcripts_out_unless_the_config_says(tmp_path: Path):
    url = "https://o.github.io/r/"
    assert load_options(None, archive=tmp_path).transcripts_wanted() == 48
    assert load_options(None, archive=tmp_path, base_url=url).transcripts_wanted() == 0
    assert load_options(None, archive=tmp_path, publishing=True).transcripts_wanted() == 0
    cfg = tmp_path / "sitegen.toml"
    cfg.write_text("publish_transcripts = true\ntranscripts = 5\n")
    assert load_options(cfg, archive=tmp_path, base_url=url).transcripts_wanted() == 5


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("transcripts = -1", "transcripts must be a whole number from 0"),
        ('transcripts = "all"', "transcripts must be a whole number from 0"),
        ("transcripts = true", "transcripts must be a whole number from 0"),
        ('publish_transcripts = "yes"', "publish_transcripts must be true or false"),
        ('site_budget = "a lot"', "site_budget must be a size of at least 1 MB"),
        ("site_budget = 1000", "site_budget must be a size of at least 1 MB"),
        ('site_budget = "2 TBs"', "site_budget must be a size of at least 1 MB"),
    ],
)
def test_bad_transcript_and_budget_values_are_refused(tmp_path: Path, text, message):
    cfg = tmp_path / "sitegen.toml"
    cfg.write_text(text + "\n")
    with pytest.raises(ConfigError, match=message):
        load_options(cfg, archive=tmp_path)
