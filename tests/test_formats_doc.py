"""Citations of the input-formats doc name docs/formats.md and sections it has.

A clone must stand on its own: every ``formats.md`` mentioned in code, tests and docs is
the repository's ``docs/formats.md``, and every ``§N`` cited exists there.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "formats.md"
SCANNED = ("sitegen", "tests", "benchmarks", "docs", "templates", "static", "scripts")
SKIPPED = ("tests/golden", "tests/vendor")
SUFFIXES = {".py", ".md", ".html", ".js", ".toml", ".yml", ".txt"}
# A citation: the doc's name, then its sections ("§3", "§2–§6", "§4 (…) and §5").
NAME_RE = re.compile(r"formats\.md")
SECTION_RE = re.compile(r"§(\d+)")
CITED_AFTER = 80  # a "§N" this close after "docs/formats.md" belongs to that citation
OWN = (DOC, Path(__file__).resolve())  # the doc itself, and this file, which names it


def _files() -> list[Path]:
    found = [ROOT / "README.md", ROOT / "Makefile", ROOT / "pyproject.toml"]
    for top in SCANNED:
        for p in sorted((ROOT / top).rglob("*")):
            rel = p.relative_to(ROOT).as_posix()
            if (
                p.is_file()
                and p.suffix in SUFFIXES
                and not rel.startswith(SKIPPED)
                and p not in OWN
            ):
                found.append(p)
    return found


def _sections() -> set[int]:
    return {int(n) for n in re.findall(r"^## (\d+)\. ", DOC.read_text(), re.M)}


def test_the_doc_numbers_its_sections_one_to_ten():
    assert _sections() == set(range(1, 11))
    # its own cross-references point inside it
    cited = {int(n) for n in SECTION_RE.findall(DOC.read_text())}
    assert cited and cited <= _sections()


def test_every_citation_names_the_repository_doc_and_an_existing_section():
    sections = _sections()
    bad = []
    for path in _files():
        rel = path.relative_to(ROOT).as_posix()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for m in NAME_RE.finditer(line):
                before = line[: m.start()]
                in_docs_link = rel.startswith("docs/") and before.endswith("](")
                if not (before.endswith("docs/") or in_docs_link):
                    bad.append(f"{rel}:{number}: {line.strip()}")
            for m in SECTION_RE.finditer(line):
                start = line.rfind("docs/formats.md", 0, m.start())
                if start < 0 or m.start() - start > CITED_AFTER or int(m.group(1)) not in sections:
                    bad.append(f"{rel}:{number}: {line.strip()}")
    assert not bad, "\n".join(bad)
