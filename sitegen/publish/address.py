"""The GitHub Pages address of a repository, from its remote's URL.

``git@github.com:ORG/REPO.git``, ``https://github.com/ORG/REPO`` → ``https://org.github.io/REPO/``
(the host in lower case, the path as written); ``ORG.github.io`` is the root site. A remote
not on github.com (a path, a GitHub Enterprise host) gives None.
"""

from __future__ import annotations

import re

_GITHUB = re.compile(
    r"""^(?:
        (?:[A-Za-z0-9._~-]+@)?github\.com:            # scp-like: git@github.com:ORG/REPO
      | (?:ssh|git|https?|git\+ssh)://                # or a URL ...
        (?:[^/@]*@)?github\.com(?::\d+)?/             # ... with optional user[:token]@ and port
    )
    /?(?P<org>[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/
    (?P<repo>[A-Za-z0-9._-]+?)
    (?:\.git)?/?$""",
    re.X,
)


def pages_url(remote_url: str) -> str | None:
    """The Pages address for ``remote_url``, or None when it is not a github.com repository."""
    m = _GITHUB.match(remote_url.strip())
    if not m:
        return None
    org, repo = m.group("org"), m.group("repo")
    host = f"{org.lower()}.github.io"
    if repo.lower() == host:
        return f"https://{host}/"
    return f"https://{host}/{repo}/"


def cname_url(cname: str) -> str:
    """The address of a site served on a custom domain (a ``CNAME`` file's content)."""
    domain = cname.strip().splitlines()[0].strip() if cname.strip() else ""
    domain = re.sub(r"^https?://", "", domain, flags=re.IGNORECASE).rstrip("/")
    return f"https://{domain}/"


def describe_remote(url: str) -> str:
    """The remote's URL fit to print: a user:token part is never shown."""
    return re.sub(r"(://)[^/@\s]*@", r"\1", url)
