"""Every ``KG_*`` environment variable the code or the suite reads is in the README's configuration
tables, so an operator never meets a setting only in an error message."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = re.compile(r"\bKG_[A-Z][A-Z0-9_]*[A-Z0-9]\b")


def _configuration_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Configuration")
    return text[start : text.index("\n## ", start + 1)]


def test_every_kg_setting_is_in_the_readme_table() -> None:
    """Names read anywhere in the packages, the suite or CI appear as rows of the README table."""
    used: set[str] = set()
    for folder in ("control_plane", "data_plane", "evals", "migrations", "tests", ".ci"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", "") and path.name != Path(__file__).name:
                used |= set(NAME.findall(path.read_text(encoding="utf-8", errors="replace")))
    rows = set(re.findall(r"^\| `(KG_[A-Z0-9_]+)` \|", _configuration_section(), flags=re.M))
    assert used, "the scan found no setting at all"
    assert sorted(used - rows) == []
