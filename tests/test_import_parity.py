"""`kg import --check` finds everything the import would refuse, on both engines alike: text
PostgreSQL cannot store (NUL, lone surrogates, over-long ids) is refused on SQLite too, and the CSV
field limit is exact and named."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from data_plane import (
    BundleRejected,
    GraphReader,
    ImportPolicy,
    WriteGateway,
    check_bundle,
    import_bundle,
    schema,
)

LIMIT = 131_072  # Python's csv.field_size_limit() default, in characters
MANIFEST = {
    "format": "kg-bundle/1",
    "name": "hostile",
    "defaults": {"source": "tests", "reason": "parity", "confidence": 1, "evidence": {"t": 1}},
}


def _bundle(folder: Path, concepts: list[list[str]], manifest: dict[str, object] = MANIFEST) -> Path:
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(manifest))
    rows = [[*row, "a" * 401 if row[0] == "long_alias" else ""] for row in concepts]
    with (folder / "concepts.csv").open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(
            [["id", "name", "summary", "evidence", "aliases"], ["rag", "RAG", "", "", ""], *rows]
        )
    return folder


def _versions(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(schema.concepts)).scalar_one())


@pytest.mark.parametrize(
    ("row", "kind", "column", "needle"),
    [
        (["nul", "Has a \x00 NUL", "", ""], "text", "name", "NUL character"),
        (
            ["nul_json", "NUL in evidence", "", '{"doc": "a\\u0000b"}'],
            "grounding",
            "evidence",
            "NUL character",
        ),
        (
            ["surrogate", "Lone surrogate", "", '{"doc": "\\ud800"}'],
            "grounding",
            "evidence",
            "not valid UTF-8",
        ),
        (["x" * 201, "Long id", "", ""], "missing", "id", "at most 200"),
        (["long_name", "n" * 3000, "", ""], "missing", "name", "at most 400"),
        (["long_alias", "Long alias", "", ""], "missing", "aliases", "at most 400"),
        (["a>b", "Edge-like id", "", ""], "missing", "id", "edge key"),
        (["a/b", "Path-like id", "", ""], "missing", "id", "URL path"),
        (["deep", "Deep evidence", "", "[" * 5000 + "]" * 5000], "evidence", "evidence", "nested too deeply"),
    ],
)
def test_the_check_refuses_what_postgresql_would(
    engine: Engine, tmp_path: Path, row: list[str], kind: str, column: str, needle: str
) -> None:
    """Each such cell is a problem of the check, with its line and column, on both engines, and
    the import writes nothing."""
    folder = _bundle(tmp_path / "b", [row])
    plan = check_bundle(GraphReader(engine), folder)
    assert [(p.kind, p.file, p.line, p.column) for p in plan.problems] == [(kind, "concepts.csv", 3, column)]
    assert needle in plan.problems[0].message
    with pytest.raises(BundleRejected):
        import_bundle(WriteGateway(engine), folder)
    assert _versions(engine) == 0


def test_a_cell_at_the_field_limit_imports_intact(engine: Engine, tmp_path: Path) -> None:
    """A summary of exactly 131,072 characters (the limit) imports and reads back whole."""
    import_bundle(WriteGateway(engine), _bundle(tmp_path / "b", [["big", "Big", "y" * LIMIT, ""]]))
    assert GraphReader(engine).concept("big").summary == "y" * LIMIT


def test_a_cell_over_the_field_limit_names_the_limit_and_the_line(engine: Engine, tmp_path: Path) -> None:
    """One character more is a csv problem naming the limit and the row's first line; nothing is written."""
    folder = _bundle(tmp_path / "b", [["ok", "Fine", "", ""], ["big", "Big", "y\n" * (LIMIT // 2 + 1), ""]])
    plan = check_bundle(GraphReader(engine), folder)
    assert [(p.kind, p.line) for p in plan.problems] == [("csv", 4)]
    assert "CSV field limit of 131,072 characters" in plan.problems[0].message
    with pytest.raises(BundleRejected):
        import_bundle(WriteGateway(engine), folder)
    assert _versions(engine) == 0


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", "a\x00b"),
        ("summary", "\ud800"),
        ("aliases", ["ok", "n\x00ul"]),
        ("name", "n" * 3000),
        ("aliases", ["a" * 401]),
        ("aliases", ["this|that"]),
        ("name", "Trailing "),
    ],
)
def test_the_gateway_refuses_such_text_on_both_engines(
    gateway: WriteGateway, field: str, value: object
) -> None:
    """Through the API too, NUL, lone surrogates, names longer than the name index takes and
    names with white space around them are refused before any engine sees them."""
    from data_plane import InputError
    from data_plane.testing import grounding

    content = {"name": "Fine", "aliases": [], "summary": "", field: value}
    with pytest.raises(InputError) as refused:
        gateway.assert_concept("c", grounding=grounding(), **content)  # type: ignore[arg-type]
    assert refused.value.field == field


@pytest.mark.parametrize("ident", ["a>b", "lesson/1"])
def test_an_id_holding_a_reserved_character_is_refused(gateway: WriteGateway, ident: str) -> None:
    """An id holding ``>`` (it joins an edge key) or ``/`` (it ends a URL path segment) could not be
    addressed, so it is refused, naming the character."""
    from data_plane import InputError
    from data_plane.testing import grounding

    with pytest.raises(InputError, match="no id may hold"):
        gateway.assert_concept(ident, name="Fine", grounding=grounding())
    with pytest.raises(InputError, match="no id may hold"):
        gateway.link_lesson(ident, "rag", grounding=grounding())


@pytest.mark.parametrize("name", ["a\x00b", "\ud800"])
@pytest.mark.parametrize("policy", ["set-aside", "invalidate-missing"])
def test_the_check_refuses_a_manifest_name_the_import_would_write(
    engine: Engine, tmp_path: Path, name: str, policy: str
) -> None:
    """The manifest's name goes into the grounding of set-aside records and of invalidations of
    what a bundle lacks; one holding a NUL or a lone surrogate is a manifest problem of the check,
    and the import with either option writes nothing."""
    gateway = WriteGateway(engine)
    import_bundle(gateway, _bundle(tmp_path / "first", [["old", "Old", "", ""]]))
    before = _versions(engine)
    folder = _bundle(tmp_path / "b", [["new", "New", "", ""]], {**MANIFEST, "name": name})
    (folder / "concept_edges.csv").write_text("source_id,target_id,relation\nnew,ghost,related\n")
    options = (
        {"policy": ImportPolicy(set_aside=True)}
        if policy == "set-aside"
        else {"invalidate_missing": True, "reason": "the new syllabus"}
    )
    plan = check_bundle(GraphReader(engine), folder, policy=options.get("policy"))  # type: ignore[arg-type]
    assert [(p.kind, p.column) for p in plan.problems if p.kind == "manifest"] == [("manifest", "name")]
    with pytest.raises(BundleRejected):
        import_bundle(gateway, folder, **options)  # type: ignore[arg-type]
    assert _versions(engine) == before


def test_a_lesson_whose_every_link_is_set_aside_is_not_created(engine: Engine, tmp_path: Path) -> None:
    """With --set-aside, a lesson whose only link points at an unknown concept is not created, and
    the report says so; a lesson that keeps a link is created."""
    folder = _bundle(tmp_path / "b", [])
    (folder / "lesson_concepts.csv").write_text(
        "lesson_id,lesson_title,concept_id\nL1,Kept,rag\nL2,Orphan,ghost\n", encoding="utf-8"
    )
    report = import_bundle(WriteGateway(engine), folder, policy=ImportPolicy(set_aside=True))
    assert [(s.kind, s.file, s.line, s.key) for s in report.set_aside] == [
        ("unknown_concept", "lesson_concepts.csv", 3, "lesson link L2/ghost"),
        ("lesson", "lesson_concepts.csv", 3, "L2"),
    ]
    with engine.connect() as conn:
        lessons = sorted(conn.execute(sa.select(schema.lessons.c.lesson_id)).scalars())
    assert lessons == ["L1"]


# -- safe CSV export ---------------------------------------------------------------------------

HOSTILE = {"name": '=HYPERLINK("http://x")', "aliases": ["+1 trick", "@SUM(A1)"], "summary": "-2+3"}


def test_export_escapes_formula_cells_and_reads_them_back_unchanged(engine: Engine, tmp_path: Path) -> None:
    """Cells a spreadsheet would run (=, +, -, @ first) are written with a leading apostrophe; the
    manifest says so, and importing the export into an empty database gives back the same text."""
    from data_plane import connect, export_bundle, migrate
    from data_plane.testing import grounding

    gateway = WriteGateway(engine)
    gateway.assert_concept("formula", grounding=grounding("=cmd|' /C calc'!A0"), **HOSTILE)  # type: ignore[arg-type]
    gateway.assert_concept("quoted", name="'quoted' already", grounding=grounding())
    out = tmp_path / "export"
    export_bundle(GraphReader(engine), out)
    assert json.loads((out / "manifest.json").read_text())["formula_escape"] is True
    with (out / "concepts.csv").open(encoding="utf-8", newline="") as fh:
        cells = [cell for row in csv.reader(fh) for cell in row]
    assert not any(cell.startswith(("=", "+", "-", "@")) for cell in cells)
    assert '\'=HYPERLINK("http://x")' in cells and "''quoted' already" in cells
    assert import_bundle(gateway, out).new_versions == 0  # read back unchanged: nothing to write
    fresh = connect(f"sqlite:///{tmp_path}/fresh.sqlite3")
    migrate(fresh)
    import_bundle(WriteGateway(fresh), out)
    back = GraphReader(fresh).concept("formula")
    assert (back.name, list(back.aliases), back.summary) == (
        HOSTILE["name"],
        HOSTILE["aliases"],
        HOSTILE["summary"],
    )
    assert back.grounding.reason == "=cmd|' /C calc'!A0"
    assert GraphReader(fresh).concept("quoted").name == "'quoted' already"


def test_export_without_formula_escape_writes_cells_as_stored(engine: Engine, tmp_path: Path) -> None:
    """formula_escape=False (kg export --no-formula-escape) writes the cells raw, and says nothing."""
    from data_plane import export_bundle
    from data_plane.testing import grounding

    WriteGateway(engine).assert_concept("formula", grounding=grounding(), **HOSTILE)  # type: ignore[arg-type]
    out = tmp_path / "raw"
    export_bundle(GraphReader(engine), out, formula_escape=False)
    assert "formula_escape" not in json.loads((out / "manifest.json").read_text())
    assert "=HYPERLINK" in (out / "concepts.csv").read_text().splitlines()[1]


def test_a_hand_written_bundle_keeps_a_leading_apostrophe(engine: Engine, tmp_path: Path) -> None:
    """Without formula_escape in its manifest, a bundle's cells are taken as written."""
    import_bundle(WriteGateway(engine), _bundle(tmp_path / "b", [["q", "'til dawn", "", ""]]))
    assert GraphReader(engine).concept("q").name == "'til dawn"
