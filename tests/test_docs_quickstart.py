"""The docs' quickstart (docs/README.md) runs: every command of its steps, in order, on a fresh
install, as ``test_readme`` runs the README (``doc_examples``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from doc_examples import ROOT, examples, fresh_install, run_page

QUICKSTART = ROOT / "docs" / "README.md"


def test_the_quickstart_runs_on_a_fresh_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every `kg` command of the quickstart succeeds in order on a fresh install (the import into
    a database of its own is preceded by the `kg init` that creates it)."""
    found = examples(QUICKSTART.read_text(encoding="utf-8"))
    commands = [e.command for e in found]
    assert len(found) >= 12 and any(" init" in c for c in commands)
    first_import = next(i for i, c in enumerate(commands) if " import " in c)
    assert any(" init" in c for c in commands[:first_import])
    monkeypatch.chdir(tmp_path)
    run_page(fresh_install(tmp_path), found)
