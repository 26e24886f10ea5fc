"""The Pages address of each shape of GitHub remote; anything else gives none."""

from __future__ import annotations

import pytest

from sitegen.publish.address import cname_url, describe_remote, pages_url


@pytest.mark.parametrize(
    "remote, url",
    [
        ("git@github.com:Org/Repo.git", "https://org.github.io/Repo/"),
        ("git@github.com:org/repo", "https://org.github.io/repo/"),
        ("https://github.com/org/repo", "https://org.github.io/repo/"),
        ("https://github.com/org/repo.git", "https://org.github.io/repo/"),
        ("https://github.com/org/repo/", "https://org.github.io/repo/"),
        ("ssh://git@github.com/org/my.site.git", "https://org.github.io/my.site/"),
        ("ssh://git@github.com:22/org/repo.git", "https://org.github.io/repo/"),
        ("https://x-access-token:abc@github.com/org/repo.git", "https://org.github.io/repo/"),
        ("git@github.com:Org/org.github.io.git", "https://org.github.io/"),
        ("https://github.com/org/ORG.github.io", "https://org.github.io/"),
    ],
)
def test_github_remotes(remote, url):
    assert pages_url(remote) == url


@pytest.mark.parametrize(
    "remote",
    [
        "/srv/git/site.git",
        "file:///srv/git/site.git",
        "../remote.git",
        "git@gitlab.com:org/repo.git",
        "https://github.example.com/org/repo.git",
        "https://notgithub.com/org/repo",
        "https://github.com/org",
        "https://github.com/org/repo/tree/main",
    ],
)
def test_other_remotes_have_no_pages_address(remote):
    assert pages_url(remote) is None


def test_cname_and_printed_remote():
    assert cname_url("docs.example.org\n") == "https://docs.example.org/"
    assert cname_url("https://docs.example.org/") == "https://docs.example.org/"
    shown = describe_remote("https://x-access-token:ghs_secret@github.com/org/repo.git")
    assert shown == "https://github.com/org/repo.git" and "ghs_secret" not in shown
    assert describe_remote("git@github.com:org/repo.git") == "git@github.com:org/repo.git"
