"""Requirement groups in bundles: ``requirement_groups.csv`` and ``requirement_members.csv`` are
checked in one pass with line numbers, imported idempotently, and exported and re-imported byte
for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from data_plane import (
    BundleRejected,
    GraphReader,
    WriteGateway,
    check_bundle,
    connect,
    export_bundle,
    import_bundle,
    migrate,
)
from data_plane.testing import ManualClock

MANIFEST = {
    "format": "kg-bundle/1",
    "name": "courses",
    "defaults": {
        "source": "catalogue",
        "reason": "listed",
        "confidence": 0.9,
        "evidence": {"doc": "c"},
        "valid_at": "2025-01-01",
    },
}
CONCEPTS = (
    "id,name\nc101,CSE 101\nc21,CSE 21\nm154,MATH 154\nc12,CSE 12\nd20,DSC 20\nd30,DSC 30\nm20,MATH 20\n"
)
EDGES = "source_id,target_id,relation\nm20,m154,prerequisite\n"
GROUPS = "group_id,target_id,needs\nc101.1,c101,1\nc101.2,c101,1\n"
MEMBERS = (
    "group_id,option,concept_id\nc101.1,1,c21\nc101.1,2,m154\nc101.2,1,c12\nc101.2,2,d20\nc101.2,2,d30\n"
)


def _bundle(folder: Path, groups: str = GROUPS, members: str = MEMBERS, edges: str = EDGES) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps(MANIFEST), encoding="utf-8")
    (folder / "concepts.csv").write_text(CONCEPTS, encoding="utf-8")
    (folder / "concept_edges.csv").write_text(edges, encoding="utf-8")
    (folder / "requirement_groups.csv").write_text(groups, encoding="utf-8")
    (folder / "requirement_members.csv").write_text(members, encoding="utf-8")
    return folder


def test_a_bundle_with_groups_imports_them_and_reimports_as_nothing_new(
    gateway: WriteGateway, reader: GraphReader, tmp_path: Path
) -> None:
    """The groups read back with their options; importing the same bundle again writes no version."""
    folder = _bundle(tmp_path / "b")
    first = import_bundle(gateway, folder)
    assert first.counts["requirement_groups"].asserted == 2
    assert first.counts["requirement_members"].asserted == 5
    groups = reader.requirements(["c101"])["c101"]
    assert [g.options for g in groups] == [(("c21",), ("m154",)), (("c12",), ("d20", "d30"))]
    again = import_bundle(gateway, folder)
    assert again.new_versions == 0


def test_a_bundle_restating_a_group_is_authoritative_for_its_members(
    gateway: WriteGateway, reader: GraphReader, tmp_path: Path
) -> None:
    """A re-import whose group lost an option closes that option's members; the rest are unchanged."""
    import_bundle(gateway, _bundle(tmp_path / "b"))
    fewer = MEMBERS.replace("c101.2,2,d20\nc101.2,2,d30\n", "c101.2,2,d20\n")
    report = import_bundle(gateway, _bundle(tmp_path / "b2", members=fewer))
    assert report.counts["requirement_members"].invalidated == 1
    assert reader.requirements(["c101"])["c101"][1].options == (("c12",), ("d20",))


def test_export_then_import_then_export_is_byte_identical(gateway: WriteGateway, tmp_path: Path) -> None:
    """Every file of an export with groups is the same bytes after a round trip through an empty database."""
    import_bundle(gateway, _bundle(tmp_path / "b"))
    out1, out2 = tmp_path / "e1", tmp_path / "e2"
    counts = export_bundle(gateway.reader(), out1)
    assert counts["requirement_groups"] == 2 and counts["requirement_members"] == 5
    other = connect(f"sqlite:///{tmp_path}/other.sqlite3")
    migrate(other)
    try:
        gw2 = WriteGateway(other, clock=ManualClock())
        import_bundle(gw2, out1)
        export_bundle(gw2.reader(), out2)
    finally:
        other.dispose()
    for name in ("concepts.csv", "concept_edges.csv", "requirement_groups.csv", "requirement_members.csv"):
        assert (out1 / name).read_bytes() == (out2 / name).read_bytes(), name


def test_an_export_without_groups_writes_no_group_files(gateway: WriteGateway, tmp_path: Path) -> None:
    """A graph holding no group exports the four files it always did."""
    folder = _bundle(tmp_path / "b")
    (folder / "requirement_groups.csv").unlink()
    (folder / "requirement_members.csv").unlink()
    import_bundle(gateway, folder)
    export_bundle(gateway.reader(), tmp_path / "e")
    assert sorted(p.name for p in (tmp_path / "e").iterdir()) == [
        "concept_edges.csv",
        "concepts.csv",
        "lesson_concepts.csv",
        "manifest.json",
    ]


@pytest.mark.parametrize(
    ("groups", "members", "kind", "file", "line"),
    [
        (
            GROUPS.replace("c101.2,c101,1", "c101.2,c101,3"),
            MEMBERS,
            "requirement",
            "requirement_groups.csv",
            3,
        ),
        (GROUPS, MEMBERS + "c101.1,3,nope\n", "unknown_concept", "requirement_members.csv", 7),
        (GROUPS, MEMBERS + "c101.1,3,c101\n", "self_loop", "requirement_members.csv", 7),
        (GROUPS, MEMBERS + "c101.1,1,c21\n", "duplicate", "requirement_members.csv", 7),
        (GROUPS, MEMBERS + "c999.1,1,c21\n", "requirement", "requirement_members.csv", 7),
        (GROUPS, MEMBERS + "c101.1,0,c12\n", "option", "requirement_members.csv", 7),
        (GROUPS + "c101.1,c101,1\n", MEMBERS, "duplicate", "requirement_groups.csv", 4),
        (GROUPS.replace("c101.1,c101,1", "c101.1,c101,x"), MEMBERS, "needs", "requirement_groups.csv", 2),
    ],
)
def test_the_check_names_each_group_problem_by_file_and_line(
    reader: GraphReader, tmp_path: Path, groups: str, members: str, kind: str, file: str, line: int
) -> None:
    """k over the options, unknown, self-naming and duplicate members, unknown groups, bad numbers are each located."""
    plan = check_bundle(reader, _bundle(tmp_path / "b", groups, members))
    assert [(p.kind, p.file, p.line) for p in plan.problems] == [(kind, file, line)]


def test_a_cycle_no_order_can_enter_is_refused_with_its_member_lines(
    gateway: WriteGateway, engine: Engine, tmp_path: Path
) -> None:
    """c21 after c101 by an edge, and c101 met only through options that all need c21: refused, nothing written."""
    groups = "group_id,target_id,needs\nc101.1,c101,1\n"
    members = "group_id,option,concept_id\nc101.1,1,c21\nc101.1,2,c21\nc101.1,2,c12\n"
    edges = EDGES + "c101,c21,prerequisite\n"
    with pytest.raises(BundleRejected) as exc:
        import_bundle(gateway, _bundle(tmp_path / "b", groups, members, edges))
    (problem,) = exc.value.problems
    assert (problem.kind, problem.file) == ("cycle", "requirement_members.csv")
    assert set(problem.lines) <= {2, 3}
    assert gateway.reader().requirements(["c101"]) == {}
