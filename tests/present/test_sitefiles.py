"""The files besides the pages: the sitemap and the static folder."""

from __future__ import annotations

from xml.etree import ElementTree

from sitegen.present.assets import package_dir
from sitegen.present.sitefiles import TRANSCRIPT_SCRIPT, sitemap_xml


def test_sitemap_lists_each_page_under_the_base_url():
    xml = sitemap_xml("https://o.github.io/r/", ["", "jobs/a/", "runs/b&c/"])
    root = ElementTree.fromstring(xml)
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [e.text for e in root.findall("s:url/s:loc", ns)]
    assert locs == [
        "https://o.github.io/r/",
        "https://o.github.io/r/jobs/a/",
        "https://o.github.io/r/runs/b&c/",
    ]


def test_static_files_are_copied(site):
    """All of them but the transcript pages' script: this site is built for publishing
    (a base URL) without ``publish_transcripts``, so it has no transcripts."""
    for path in package_dir("static").rglob("*"):
        if path.is_file():
            rel = path.relative_to(package_dir("static")).as_posix()
            if rel == TRANSCRIPT_SCRIPT:
                assert not (site / "static" / rel).exists()
            else:
                assert (site / "static" / rel).read_bytes() == path.read_bytes(), rel
