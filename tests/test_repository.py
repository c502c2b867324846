"""The checkout stays readable: small docs with an index, no generated reports, no large files."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _tracked() -> list[Path]:
    """The files git tracks (the checkout's own files, not what a run left behind)."""
    try:
        done = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / name for name in done.stdout.decode().split("\0") if name]


def test_no_tracked_file_is_over_400_kb() -> None:
    """Large artefacts are built, not committed (the learnt model is stored compressed)."""
    big = {
        str(p.relative_to(ROOT)): p.stat().st_size
        for p in _tracked()
        if p.exists() and p.stat().st_size > 400_000
    }
    assert big == {}


def test_docs_stay_small_pages_of_reference() -> None:
    """docs/ holds at most 60 files and 5 MB, and no page runs over 600 lines."""
    files = [p for p in _tracked() if p.is_relative_to(DOCS) and p.exists()]
    assert len(files) <= 60
    assert sum(p.stat().st_size for p in files) <= 5_000_000
    long = {
        p.name: n
        for p in files
        if p.suffix == ".md" and (n := len(p.read_text(encoding="utf-8").splitlines())) > 600
    }
    assert long == {}


def test_the_docs_index_lists_every_page_and_every_link_resolves() -> None:
    """docs/README.md names every page, and every relative link in the docs and the README points
    at a file that exists."""
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    pages = {p.name for p in DOCS.glob("*.md")} - {"README.md"}
    assert {page for page in pages if f"]({page})" not in index} == set()
    for page in [ROOT / "README.md", *DOCS.glob("*.md")]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" not in target:
                assert (page.parent / target).exists(), f"{page.name} links {target}"


def test_question_corpora_are_one_file_per_graph_and_split() -> None:
    """evals/questions holds at most 26 files: per graph one dev, test and holdout file (blind
    rounds are a field, not a file), the templates and the builders; LectureBank, a map not
    shipped, adds its builder, its templates and its dev and test files, and the UC San Diego
    catalogue, another, its builder, its templates and its dev, test and holdout files, and its
    builder and dev and test files with its requirement groups (the same templates)."""
    folder = ROOT / "evals" / "questions"
    files = [p for p in _tracked() if p.is_relative_to(folder) and p.exists()]
    assert 0 < len(files) <= 26
    assert not [p.name for p in files if re.search(r"holdout\d+|round\d+", p.name)]
