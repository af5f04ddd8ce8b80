"""Every relative Markdown link in README.md and docs/ points at an existing file, and a
``#fragment`` at a heading of that file (GitHub's anchors)."""

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]

LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE = re.compile(r"`[^`\n]*`")


def _text(path):
    return CODE.sub("", FENCE.sub("", path.read_text(encoding="utf-8")))


def _anchors(path):
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, -1, -2 ...
    for repeats."""
    seen, anchors = {}, set()
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    for title in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


def _links(page):
    for target in LINK.findall(_text(page)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: ...
            continue
        yield target


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page):
    broken = []
    for target in _links(page):
        path, _, fragment = target.partition("#")
        dest = (page.parent / unquote(path)).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
            continue
        if fragment and dest.suffix == ".md" and fragment not in _anchors(dest):
            broken.append(f"{target}: no heading #{fragment} in {dest.relative_to(REPO)}")
    assert not broken, f"{page.relative_to(REPO)}: " + "; ".join(broken)


def test_pages_found():
    assert (REPO / "docs" / "solvers.md") in PAGES and len(PAGES) > 5


def test_the_sources_references_to_docs_resolve():
    """A module that keeps only the why in its docstring points at the page that holds the
    rest (``docs/online.md#the-online-core-qponline_corepy``): the page and heading exist."""
    broken, found = [], 0
    for path in sorted((REPO / "lasvm_cli").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for page, fragment in re.findall(r"\bdocs/([\w\-/]+\.md)(?:#([\w\-]+))?", text):
            found += 1
            dest = REPO / "docs" / page
            if not dest.exists():
                broken.append(f"{path.name}: docs/{page}: no such file")
            elif fragment and fragment not in _anchors(dest):
                broken.append(f"{path.name}: docs/{page}#{fragment}: no such heading")
    assert not broken, "; ".join(broken)
    assert found > 5
