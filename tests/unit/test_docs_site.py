"""The documentation: the short README's links and the docs site (``mkdocs.yml``, ``docs/``).

The site is built the way CI builds it, ``mkdocs build --strict``: a link to a page or anchor that
does not exist, or a page left out of the nav, fails the build. mkdocs comes with the ``dev``
extra, which CI installs; without it the build test is skipped with the reason.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ..conftest import REPO

DOCS = REPO / "docs"
#: ``[text](target)`` and ``![alt](target)``; the target ends at the first space or ``)``.
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _nav_pages(nav: list[object]) -> list[str]:
    pages: list[str] = []
    for entry in nav:
        values = entry.values() if isinstance(entry, dict) else [entry]
        for value in values:
            pages.extend(_nav_pages(value) if isinstance(value, list) else [str(value)])
    return pages


def _slug(heading: str) -> str:
    """The anchor Python-Markdown's ``toc`` extension (mkdocs' default) gives a heading."""
    text = re.sub(r"[^\w\s-]", "", heading.strip().lower())
    return re.sub(r"[-\s]+", "-", text).strip("-")


def _anchors(markdown: Path) -> set[str]:
    anchors, fence = set(), False
    for line in markdown.read_text().splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            anchors.add(_slug(line.lstrip("#")))
    return anchors


def test_the_docs_site_builds_strictly(tmp_path: Path) -> None:
    mkdocs = Path(sys.executable).parent / "mkdocs"
    if not mkdocs.is_file():
        pytest.skip(f"mkdocs is not installed next to {sys.executable} (pip install -e '.[dev]')")
    site = tmp_path / "site"
    proc = subprocess.run(
        [str(mkdocs), "build", "--strict", "-f", str(REPO / "mkdocs.yml"), "-d", str(site)],
        cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}{proc.stderr}"
    for page in _nav_pages(yaml.safe_load((REPO / "mkdocs.yml").read_text())["nav"]):
        built = site / ("index.html" if page == "index.md" else f"{page[:-3]}/index.html")
        assert built.is_file(), page


def test_every_docs_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    nav = _nav_pages(config["nav"])
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(nav) == pages
    assert len(set(nav)) == len(nav), nav


def test_every_relative_link_of_the_readme_resolves() -> None:
    readme = REPO / "README.md"
    links = [t for t in _LINK.findall(readme.read_text()) if not re.match(r"[a-z]+:", t)]
    assert len(links) >= 10, links  # the links to every docs page
    for target in links:
        path, _, anchor = target.partition("#")
        file = (REPO / path) if path else readme
        assert file.is_file(), f"README.md links to {target}: no such file"
        if anchor:
            assert anchor in _anchors(file), f"README.md links to {target}: no such heading"
    linked = {t.partition("#")[0] for t in links}
    for page in DOCS.glob("*.md"):
        assert page.relative_to(REPO).as_posix() in linked, f"README.md does not link {page}"


def test_the_readme_keeps_the_set_up_commands() -> None:
    """CI's ``.ci/run`` calls ``./test.sh``, the README's second set-up command."""
    text = (REPO / "README.md").read_text()
    assert "./run.sh\n" in text and "./test.sh\n" in text
