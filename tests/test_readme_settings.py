"""Every ``KG_*`` environment variable the code or the suite reads is a row of the configuration
tables (docs/configuration.md, which the README links), so an operator never meets a setting only
in an error message."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = re.compile(r"\bKG_[A-Z][A-Z0-9_]*[A-Z0-9]\b")


def _configuration_tables() -> str:
    return (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")


def test_the_readme_links_the_configuration_page() -> None:
    """The README sends an operator to the settings."""
    assert "(docs/configuration.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_kg_setting_is_in_the_configuration_tables() -> None:
    """Names read anywhere in the packages, the suite or CI appear as rows of the tables."""
    used: set[str] = set()
    for folder in ("control_plane", "data_plane", "evals", "migrations", "tests", ".ci"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", "") and path.name != Path(__file__).name:
                used |= set(NAME.findall(path.read_text(encoding="utf-8", errors="replace")))
    rows = set(re.findall(r"^\| `(KG_[A-Z0-9_]+)` \|", _configuration_tables(), flags=re.M))
    assert used, "the scan found no setting at all"
    assert sorted(used - rows) == []
