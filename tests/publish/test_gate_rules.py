"""Every rule of the publish gate that stops a publish (or warns) has a planted case.

The rules are the messages the gate's code can add to a report's ``blocked`` list (and
its size warning): the test reads them out of ``sitegen/publish/gate.py`` and ``scan.py``
and checks that a planted case here makes each one, so a new rule without a case fails.
The secrets themselves are the redactor's rules (tests/redact/test_redact_rules.py).
"""

from __future__ import annotations

import ast
import gzip
import json
import os
from pathlib import Path

import pytest

from sitegen.publish import gate, scan
from sitegen.publish.gate import check_site
from tests.conftest import unprivileged
from tests.publish.test_gate import TOKEN, _site


def _messages() -> list[list[str]]:
    """The constant parts of each message the gate's rules report, in the order written.

    A message is an argument of ``report.blocked.append``/``report.warnings.append`` in
    gate.py, or the problem (fourth item) of a ``return`` in scan.py's ``scan_file``.
    """
    out = []
    for module in (gate, scan):
        tree = ast.parse(Path(module.__file__ or "").read_text())
        for node in ast.walk(tree):
            msg = None
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "append"
                and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr in ("blocked", "warnings")
            ):
                msg = node.args[0]
            elif (
                isinstance(node, ast.Return)
                and isinstance(node.value, ast.Tuple)
                and len(node.value.elts) == 4
            ):
                msg = node.value.elts[3]
            if msg is None:
                continue
            parts = [msg] if isinstance(msg, ast.Constant) else _constants(msg)
            texts = [p.value for p in parts if isinstance(p.value, str) and p.value.strip()]
            if texts:
                out.append(texts)
    return out


def _constants(node: ast.AST) -> list[ast.Constant]:
    """The string constants of an f-string, or of a sum of f-strings, left to right."""
    if isinstance(node, ast.JoinedStr):
        return [v for v in node.values if isinstance(v, ast.Constant)]
    if isinstance(node, ast.BinOp):
        return _constants(node.left) + _constants(node.right)
    return [node] if isinstance(node, ast.Constant) else []


def _holds(line: str, parts: list[str]) -> bool:
    pos = 0
    for p in parts:
        pos = line.find(p, pos)
        if pos < 0:
            return False
        pos += len(p)
    return True


# -- the cases ------------------------------------------------------------------------------


def _not_a_folder(tmp_path: Path, monkeypatch) -> list[str]:
    return check_site(tmp_path / "missing").blocked


def _line_break(tmp_path: Path, monkeypatch) -> list[str]:
    return check_site(_site(tmp_path, {"index.html": "x", "a\nb.html": "y"})).blocked


def _link(tmp_path: Path, monkeypatch) -> list[str]:
    site = _site(tmp_path, {"index.html": "x"})
    os.symlink("index.html", site / "other.html")
    return check_site(site).blocked


def _fifo(tmp_path: Path, monkeypatch) -> list[str]:
    site = _site(tmp_path, {"index.html": "x"})
    os.mkfifo(site / "pipe.html")  # read, it would hang the gate
    return check_site(site).blocked


def _too_big(tmp_path: Path, monkeypatch) -> list[str]:
    site = _site(tmp_path, {"index.html": "x"})
    with open(site / "big.bin", "wb") as fh:  # sparse: no disk, never read
        fh.truncate(gate.FILE_LIMIT_BYTES + 1)
    return check_site(site).blocked


def _site_too_big(tmp_path: Path, monkeypatch) -> list[str]:
    monkeypatch.setattr(gate, "SITE_LIMIT_BYTES", 10)
    return check_site(_site(tmp_path, {"index.html": "<p>hello</p>\n"})).blocked


def _warned_big(tmp_path: Path, monkeypatch) -> list[str]:
    monkeypatch.setattr(gate, "FILE_WARN_BYTES", 10)
    report = check_site(_site(tmp_path, {"index.html": "<p>hello</p>\n"}))
    assert report.ok  # a warning does not stop it
    return report.warnings


def _bad_gzip(tmp_path: Path, monkeypatch) -> list[str]:
    data = gzip.compress(f"t,{TOKEN}\n".encode())[:10] + b"\xff" * 20  # no deflate stream
    return check_site(_site(tmp_path, {"index.html": "x", "t.csv.gz": data})).blocked


def _gzip_bomb(tmp_path: Path, monkeypatch) -> list[str]:
    monkeypatch.setattr(scan, "GZIP_MAX_BYTES", 1000)
    data = gzip.compress(b"0" * 5000)
    return check_site(_site(tmp_path, {"index.html": "x", "t.csv.gz": data})).blocked


def _bad_transcript(tmp_path: Path, monkeypatch) -> list[str]:
    data = b'sitegen.transcript("t", "not base64 of gzip");'  # its record cannot be decoded
    return check_site(_site(tmp_path, {"index.html": "x", "t/1.js": data})).blocked


# The gate run by a user who cannot read a folder of mode 0o644 (no entering it: its files
# cannot be looked at) nor a file of mode 0; nobody when this is root.
_CHECK = """
import json, sys
from pathlib import Path
from sitegen.publish.gate import check_site
print(json.dumps(check_site(Path(sys.argv[1]), workers=1).blocked))
"""


def _unreadable(open_tmp: Path) -> list[str]:
    site = _site(open_tmp, {"index.html": "x", "shut/a.html": "y", "secret.html": "z"})
    site.chmod(0o755)
    os.chmod(site / "secret.html", 0)
    os.chmod(site / "shut", 0o644)
    return json.loads(unprivileged(_CHECK, str(site)).splitlines()[-1])


CASES = {
    "not a folder": (_not_a_folder, "missing: not a folder"),
    "line break": (_line_break, "'a\\nb.html': a line break in a file name: rename it"),
    "link": (
        _link,
        "other.html: a symbolic link (GitHub Pages does not serve links: copy the file in)",
    ),
    "fifo": (_fifo, "pipe.html: not a regular file"),
    "too big": (_too_big, "big.bin: 100.0 MB, over GitHub's limit of 100.0 MB a file"),
    "largest": (_too_big, "largest files: big.bin (100.0 MB), index.html (1 byte)"),
    "site too big": (
        _site_too_big,
        "the site is 13 bytes, over GitHub Pages' limit of 10 bytes; largest files: "
        "index.html (13 bytes)",
    ),
    "warned": (_warned_big, "index.html: 13 bytes (GitHub warns from 10 bytes; pushes get slow)"),
    "bad gzip": (
        _bad_gzip,
        "t.csv.gz: a gzip file that cannot be read (Error -3 while decompressing data: "
        "invalid block type): not checked",
    ),
    "gzip bomb": (
        _gzip_bomb,
        "t.csv.gz: a gzip file that cannot be read (it inflates past 0 MB): not checked",
    ),
    "bad transcript": (
        _bad_transcript,
        "t/1.js: a transcript script that cannot be read: not checked",
    ),
}
UNREADABLE = {
    "shut/a.html: cannot read it (Permission denied), so it cannot be checked",
    "secret.html: cannot read it (Permission denied), so it cannot be checked",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_gate_rule_stops_its_planted_case(name, tmp_path, monkeypatch):
    make, want = CASES[name]
    got = make(tmp_path, monkeypatch)
    assert [line for line in got if line.endswith(want)], got


def test_what_cannot_be_read_stops_the_publish(open_tmp):
    assert set(_unreadable(open_tmp)) == UNREADABLE


def test_every_rule_of_the_gate_has_a_case():
    """Each message the gate's code can report is one a case above makes (found in it with
    its constant parts in order)."""
    made = [want for _, want in CASES.values()] + sorted(UNREADABLE)
    # the file-name leak is a leak, not a blocked line: tests/publish/test_gate.py
    missing = [m for m in _messages() if not any(_holds(line, m) for line in made)]
    assert not missing, f"gate rules without a planted case: {missing}"
