"""docs/bundles.md stays true: its worked example is the bundle in docs/examples, imports as the
doc says, and the error line it quotes is the one `kg import` prints."""

from __future__ import annotations

import shutil
from pathlib import Path

from sqlalchemy.engine import Engine
from typer.testing import CliRunner

from control_plane.surfaces.cli import app
from data_plane.bundle import import_bundle
from data_plane.clock import parse_time
from data_plane.gateway import WriteGateway
from data_plane.reads import GraphReader

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "retrieval-unit"
DOC = (ROOT / "docs" / "bundles.md").read_text(encoding="utf-8")


def test_the_doc_shows_every_example_file_verbatim() -> None:
    """Each file of the example bundle appears in docs/bundles.md exactly as it is on disk."""
    for name in ("manifest.json", "concepts.csv", "concept_edges.csv", "lesson_concepts.csv"):
        assert f"`{name}`:\n\n```" in DOC and (EXAMPLE / name).read_text(encoding="utf-8") in DOC, name


def test_the_example_imports_as_the_doc_says(engine: Engine) -> None:
    """18 versions on the first import, none on the second; RAG builds on BM25 only in the past."""
    gateway = WriteGateway(engine)
    assert import_bundle(gateway, EXAMPLE).new_versions == 18
    assert import_bundle(gateway, EXAMPLE).new_versions == 0
    reader = GraphReader(engine)

    def rag_builds_on(point: str | None) -> set[str]:
        as_of = reader.as_of(parse_time(point) if point else None)
        return {
            n.concept.concept_id
            for n in reader.neighbourhood(["rag"], as_of=as_of)
            if n.edge.relation == "builds_on" and n.edge.source_id == "rag"
        }

    assert rag_builds_on("2025-10-01") == {"bm25", "embeddings", "vector_search"}
    assert rag_builds_on(None) == {"embeddings", "vector_search"}


def test_the_quoted_error_line_is_what_kg_import_prints(tmp_path: Path) -> None:
    """The doc's example error is the real one-line error for an unknown relation on line 4."""
    bad = tmp_path / "bad"
    shutil.copytree(EXAMPLE, bad)
    edges = bad / "concept_edges.csv"
    lines = edges.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[3] = lines[3].replace(",builds_on,", ",depends_on,")
    edges.write_text("".join(lines), encoding="utf-8")
    url = f"sqlite:///{tmp_path}/kg.sqlite3"
    runner = CliRunner()
    assert runner.invoke(app, ["--db", url, "init", "--no-curriculum"]).exit_code == 0
    result = runner.invoke(app, ["--db", url, "import", str(bad)])
    assert result.exit_code == 1
    assert result.stderr.strip() in DOC
