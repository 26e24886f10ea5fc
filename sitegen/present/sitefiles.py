"""The files a site has besides its pages: static assets and the sitemap."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import TYPE_CHECKING

from sitegen.present.assets import package_dir

if TYPE_CHECKING:
    from sitegen.write.site import SiteWriter


# The script of the transcript pages: a site without transcripts (one built for publishing
# without ``publish_transcripts``) leaves it out, so nothing of that feature is published.
TRANSCRIPT_SCRIPT = "transcript.js"


def copy_static(writer: SiteWriter, transcripts: bool) -> None:
    """Copy the package's ``static/`` folder (CSS, JS, vendored Vega) into the site; its
    transcript script only when the site has ``transcripts``."""
    root = package_dir("static")
    for path in sorted(root.rglob("*")):
        if path.is_file() and (transcripts or path.name != TRANSCRIPT_SCRIPT):
            writer.write("static/" + path.relative_to(root).as_posix(), path.read_bytes())


def sitemap_xml(base_url: str, urls: Iterable[str]) -> str:
    """``sitemap.xml`` for the pages at ``urls`` (relative to ``base_url``, which ends in /)."""
    # escaped: a base URL may carry a query (&) and XML must stay well-formed (&, <, > as
    # xml.sax.saxutils.escape does, which would import urllib.request and http.client)
    locs = "".join(f"  <url><loc>{escape(base_url + u, quote=False)}</loc></url>\n" for u in urls)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + locs + "</urlset>\n"
    )
