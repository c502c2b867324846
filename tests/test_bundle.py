"""Graph bundles (kg-bundle/1): import is validated, idempotent and all-or-nothing; export round-trips."""

from __future__ import annotations

import gc
import json
import shutil
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import Engine

from data_plane import AsOf, BundleError, GraphReader, InputError, Snapshot, WriteGateway, connect, migrate
from data_plane.bundle import ImportReport, export_bundle, import_bundle
from data_plane.testing import ManualClock, build_graph, grounding

CURRICULUM = Path(__file__).resolve().parents[1] / "data_plane" / "curriculum"
TABLES = ("concepts", "concept_edges", "lessons", "lesson_concepts")
DEFAULTS: dict[str, Any] = {
    "source": "tests/bundle",
    "reason": "fixture row",
    "confidence": 0.9,
    "evidence": {"doc": "fixture"},
    "valid_at": "2024-01-01T00:00:00Z",
}
CONCEPTS = "id,name,aliases,summary\na,Alpha,A|first,The first.\nb,Beta,,The second.\nc,Gamma,,\n"
EDGES = "source_id,target_id,relation,reason\na,b,prerequisite,a before b\nc,b,related,siblings\n"
LINKS = "lesson_id,lesson_title,concept_id\nL1,Lesson one,a\nL1,Lesson one,b\n"


def write_bundle(
    folder: Path,
    *,
    concepts: str = CONCEPTS,
    edges: str | None = EDGES,
    links: str | None = LINKS,
    defaults: dict[str, Any] | None = None,
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "format": "kg-bundle/1",
        "name": "fixture",
        "defaults": DEFAULTS if defaults is None else defaults,
    }
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    for name, text in (
        ("concepts.csv", concepts),
        ("concept_edges.csv", edges),
        ("lesson_concepts.csv", links),
    ):
        if text is not None:
            (folder / name).write_text(text, encoding="utf-8")
    return folder


def row_counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {t: conn.execute(sa.text(f"SELECT count(*) FROM {t}")).scalar_one() for t in TABLES}


def content(snap: Snapshot) -> dict[str, Any]:
    """What a snapshot says, without version ids or recorded times."""

    def g(x: Any) -> tuple[Any, ...]:
        return (x.grounding.confidence, x.grounding.reason, x.grounding.source, x.grounding.evidence)

    return {
        "concepts": sorted(
            (c.concept_id, c.name, c.aliases, c.summary, g(c), c.stamp.valid_at, c.stamp.invalid_at)
            for c in snap.concepts
        ),
        "edges": sorted(
            (e.source_id, e.target_id, e.relation, g(e), e.stamp.valid_at, e.stamp.invalid_at)
            for e in snap.edges
        ),
        "lessons": sorted((v.key, v.content["title"]) for v in snap.lessons),
        "links": sorted((v.key, g(v), v.stamp.valid_at, v.stamp.invalid_at) for v in snap.lesson_links),
    }


# ---------------------------------------------------------------------------------------------
# import


def test_import_writes_every_row_with_its_grounding(
    gateway: WriteGateway, reader: GraphReader, tmp_path: Path
) -> None:
    """A small bundle imports concepts, edges, lessons and links, filling grounding from the defaults."""
    report = import_bundle(gateway, write_bundle(tmp_path / "b"), reader=reader)
    assert {t: report.counts[t].asserted for t in TABLES} == {
        "concepts": 3,
        "concept_edges": 2,
        "lessons": 1,
        "lesson_concepts": 2,
    }
    a = reader.concept("a")
    assert (a.name, a.aliases, a.summary) == ("Alpha", ("A", "first"), "The first.")
    assert a.grounding.to_dict() == {
        "confidence": 0.9,
        "reason": "fixture row",
        "source": "tests/bundle",
        "evidence": {"doc": "fixture"},
    }
    assert a.stamp.valid_at == datetime(2024, 1, 1, tzinfo=UTC)
    assert reader.edge("a", "b", "prerequisite").grounding.reason == "a before b"
    assert reader.edge("b", "c", "related").source_id == "b"  # symmetric: smaller id first
    assert reader.snapshot().lessons[0].content["title"] == "Lesson one"


def test_reimport_creates_no_versions(gateway: WriteGateway, engine: Engine, tmp_path: Path) -> None:
    """Importing the same bundle twice writes nothing the second time and reports every row unchanged."""
    bundle = write_bundle(tmp_path / "b")
    import_bundle(gateway, bundle)
    before = row_counts(engine)
    report = import_bundle(gateway, bundle)
    assert row_counts(engine) == before
    assert report.new_versions == 0
    assert {t: report.counts[t].unchanged for t in TABLES} == {
        "concepts": 3,
        "concept_edges": 2,
        "lessons": 1,
        "lesson_concepts": 2,
    }


def test_changed_row_becomes_a_new_version_superseding_the_old(
    gateway: WriteGateway, reader: GraphReader, tmp_path: Path
) -> None:
    """A row whose content changed becomes a revise version that supersedes the previous one."""
    import_bundle(gateway, write_bundle(tmp_path / "b1"))
    changed = CONCEPTS.replace("b,Beta,,The second.", "b,Beta,B,The second letter.")
    report = import_bundle(gateway, write_bundle(tmp_path / "b2", concepts=changed))
    assert report.counts["concepts"].revised == 1
    assert report.counts["concepts"].unchanged == 2
    first, second = reader.history("concepts", ("b",))
    assert second.stamp.op == "revise"
    assert second.stamp.supersedes_id == first.stamp.version_id
    assert first.stamp.expired_at == second.stamp.recorded_at
    assert reader.concept("b").summary == "The second letter."


def test_report_serialises_counts_and_elapsed(gateway: WriteGateway, tmp_path: Path) -> None:
    """ImportReport.to_dict gives per-table counts, the number of new versions and the elapsed seconds."""
    report = import_bundle(gateway, write_bundle(tmp_path / "b"))
    assert isinstance(report, ImportReport)
    data = report.to_dict()
    assert data["counts"]["concept_edges"] == {"asserted": 2, "revised": 0, "unchanged": 0, "invalidated": 0}
    assert data["new_versions"] == 8
    assert data["elapsed_s"] >= 0


BAD_BUNDLES: list[tuple[str, dict[str, Any], str, int | None, str | None]] = [
    ("missing column", {"concepts": "id,title\na,Alpha\n"}, "concepts.csv", 1, "name"),
    ("empty id", {"concepts": "id,name\na,Alpha\n ,Beta\n"}, "concepts.csv", 3, "id"),
    (
        "duplicate id",
        {"concepts": "id,name\na,Alpha\nb,Beta\na,Again\n", "edges": None, "links": None},
        "concepts.csv",
        4,
        "id",
    ),
    (
        "duplicate symmetric edge",
        {"edges": "source_id,target_id,relation\na,b,related\nb,a,related\n"},
        "concept_edges.csv",
        3,
        "target_id",
    ),
    (
        "confidence not a number",
        {"concepts": "id,name,confidence\na,Alpha,high\n"},
        "concepts.csv",
        2,
        "confidence",
    ),
    ("confidence NaN", {"concepts": "id,name,confidence\na,Alpha,nan\n"}, "concepts.csv", 2, "confidence"),
    (
        "confidence above 1",
        {"concepts": "id,name,confidence\na,Alpha,1.5\n"},
        "concepts.csv",
        2,
        "confidence",
    ),
    (
        "empty reason without default",
        {"concepts": "id,name,reason\na,Alpha,ok\nb,Beta,\n", "defaults": {**DEFAULTS, "reason": None}},
        "concepts.csv",
        3,
        "reason",
    ),
    (
        "empty source without default",
        {"concepts": "id,name\na,Alpha\n", "defaults": {k: v for k, v in DEFAULTS.items() if k != "source"}},
        "concepts.csv",
        2,
        "source",
    ),
    ("evidence not JSON", {"concepts": "id,name,evidence\na,Alpha,{oops\n"}, "concepts.csv", 2, "evidence"),
    ("evidence empty JSON", {"concepts": 'id,name,evidence\na,Alpha,"{}"\n'}, "concepts.csv", 2, "evidence"),
    ("bad time", {"concepts": "id,name,valid_at\na,Alpha,yesterday\n"}, "concepts.csv", 2, "valid_at"),
    (
        "naive time",
        {"concepts": "id,name,valid_at\na,Alpha,2024-01-01T10:00:00\n"},
        "concepts.csv",
        2,
        "valid_at",
    ),
    (
        "invalid_at not after valid_at",
        {"edges": "source_id,target_id,relation,valid_at,invalid_at\na,b,part_of,2024-05-01,2024-05-01\n"},
        "concept_edges.csv",
        2,
        "invalid_at",
    ),
    (
        "unknown relation",
        {"edges": "source_id,target_id,relation\na,b,prerequisite\nb,c,requires\n"},
        "concept_edges.csv",
        3,
        "relation",
    ),
    (
        "self-loop",
        {"edges": "source_id,target_id,relation\na,a,related\n"},
        "concept_edges.csv",
        2,
        "target_id",
    ),
    (
        "edge to unknown concept (gateway)",
        {"edges": "source_id,target_id,relation\na,b,part_of\nb,zeta,builds_on\n"},
        "concept_edges.csv",
        3,
        "target_id",
    ),
    (
        "link to unknown concept (gateway)",
        {"links": "lesson_id,concept_id\nL1,a\nL1,zeta\n"},
        "lesson_concepts.csv",
        3,
        "concept_id",
    ),
    (
        "prerequisite cycle (gateway)",
        {
            "edges": "source_id,target_id,relation\na,b,prerequisite\nb,c,prerequisite\nc,a,prerequisite\nb,c,related\n"
        },
        "concept_edges.csv",
        4,
        "target_id",
    ),
    (
        "conflicting lesson titles",
        {"links": "lesson_id,lesson_title,concept_id\nL1,One,a\nL1,Uno,b\n"},
        "lesson_concepts.csv",
        3,
        "lesson_title",
    ),
    ("row with too many cells", {"concepts": "id,name\na,Alpha,extra\n"}, "concepts.csv", 2, None),
    ("bad manifest format", {"manifest_format": "kg-bundle/9"}, "manifest.json", None, "format"),
]


def test_import_hands_every_object_back_to_the_collector(gateway: WriteGateway, tmp_path: Path) -> None:
    """The import keeps the garbage collector off older objects only while it runs: afterwards,
    whether it succeeded or was refused, nothing is left frozen."""
    assert gc.get_freeze_count() == 0
    import_bundle(gateway, write_bundle(tmp_path / "ok"))
    assert gc.get_freeze_count() == 0
    with pytest.raises(BundleError):
        import_bundle(
            gateway, write_bundle(tmp_path / "bad", edges="source_id,target_id,relation\na,zz,related\n")
        )
    assert gc.get_freeze_count() == 0


@pytest.mark.parametrize(
    ("case", "files", "file", "line", "column"), BAD_BUNDLES, ids=[c[0] for c in BAD_BUNDLES]
)
def test_bad_bundle_names_file_line_column_and_writes_nothing(
    gateway: WriteGateway,
    engine: Engine,
    tmp_path: Path,
    case: str,
    files: dict[str, Any],
    file: str,
    line: int | None,
    column: str | None,
) -> None:
    """Every malformed bundle is refused with a BundleError naming file, line and column; no row is written."""
    build_graph(gateway, ["x", "y"], [("x", "y", "related")])
    before = row_counts(engine)
    folder = write_bundle(
        tmp_path / "bad",
        concepts=files.get("concepts", CONCEPTS),
        edges=files.get("edges", EDGES),
        links=files.get("links", LINKS),
        defaults=files.get("defaults"),
    )
    if "manifest_format" in files:
        doc = json.loads((folder / "manifest.json").read_text())
        (folder / "manifest.json").write_text(json.dumps({**doc, "format": files["manifest_format"]}))
    with pytest.raises(BundleError) as info:
        import_bundle(gateway, folder)
    err = info.value
    assert (err.file, err.line, err.column) == (file, line, column), str(err)
    assert str(err).startswith(file)
    assert row_counts(engine) == before


def test_wrong_encoding_names_the_file(gateway: WriteGateway, engine: Engine, tmp_path: Path) -> None:
    """A CSV that is not UTF-8 is refused with a BundleError naming the file and line; nothing is written."""
    folder = write_bundle(tmp_path / "b")
    (folder / "concepts.csv").write_bytes("id,name\na,Alpha\nb,Caf\u00e9\n".encode("latin-1"))
    with pytest.raises(BundleError, match=r"concepts\.csv:3.*not UTF-8") as info:
        import_bundle(gateway, folder)
    assert info.value.file == "concepts.csv"
    assert row_counts(engine) == dict.fromkeys(TABLES, 0)


def test_missing_concepts_file_is_refused(gateway: WriteGateway, tmp_path: Path) -> None:
    """concepts.csv is required; its absence is a BundleError naming it."""
    folder = write_bundle(tmp_path / "b")
    (folder / "concepts.csv").unlink()
    with pytest.raises(BundleError) as info:
        import_bundle(gateway, folder)
    assert info.value.file == "concepts.csv"


def test_utf8_bom_is_tolerated(gateway: WriteGateway, reader: GraphReader, tmp_path: Path) -> None:
    """A UTF-8 byte-order mark before the header does not corrupt the first column name."""
    folder = write_bundle(tmp_path / "b", edges=None, links=None)
    (folder / "concepts.csv").write_bytes(b"\xef\xbb\xbf" + "id,name\na,Caf\u00e9\n".encode())
    import_bundle(gateway, folder)
    assert reader.concept("a").name == "Caf\u00e9"


def test_extra_columns_are_ignored(gateway: WriteGateway, reader: GraphReader, tmp_path: Path) -> None:
    """Columns the format does not know are ignored rather than refused or stored."""
    folder = write_bundle(
        tmp_path / "b",
        concepts="id,owner,name,notes\na,alice,Alpha,whatever\nb,bob,Beta,\n",
        edges="source_id,target_id,weight,relation\na,b,3,part_of\n",
        links=None,
    )
    report = import_bundle(gateway, folder)
    assert report.counts["concepts"].asserted == 2
    assert reader.concept("a").name == "Alpha"
    assert reader.edge("a", "b", "part_of").grounding.reason == "fixture row"


def test_rows_may_override_defaults_per_cell(
    gateway: WriteGateway, reader: GraphReader, tmp_path: Path
) -> None:
    """A non-empty grounding cell wins over the manifest default; an empty one falls back to it."""
    folder = write_bundle(
        tmp_path / "b",
        concepts=(
            'id,name,confidence,source,evidence,valid_at,invalid_at\na,Alpha,0.5,me,"[1, 2]",2024-03-01,2030-01-01\n'
            "b,Beta,,,,,\n"
        ),
        edges=None,
        links=None,
    )
    import_bundle(gateway, folder)
    a, b = reader.concept("a"), reader.concept("b")
    assert (a.grounding.confidence, a.grounding.source, a.grounding.evidence) == (0.5, "me", [1, 2])
    assert (a.stamp.valid_at, a.stamp.invalid_at) == (
        datetime(2024, 3, 1, tzinfo=UTC),
        datetime(2030, 1, 1, tzinfo=UTC),
    )
    assert (b.grounding.confidence, b.grounding.source, b.stamp.invalid_at) == (0.9, "tests/bundle", None)


# ---------------------------------------------------------------------------------------------
# invalidate_missing


def test_invalidate_missing_requires_a_reason(gateway: WriteGateway, engine: Engine, tmp_path: Path) -> None:
    """invalidate_missing without a non-empty reason is an InputError, and nothing is written."""
    with pytest.raises(InputError, match="reason"):
        import_bundle(gateway, write_bundle(tmp_path / "b"), invalidate_missing=True, reason="  ")
    assert row_counts(engine) == dict.fromkeys(TABLES, 0)


def test_invalidate_missing_closes_what_the_bundle_dropped(
    gateway: WriteGateway, reader: GraphReader, tmp_path: Path
) -> None:
    """Active concepts, edges and lesson links absent from the bundle are invalidated; the rest is untouched."""
    import_bundle(gateway, write_bundle(tmp_path / "b1"))
    smaller = write_bundle(
        tmp_path / "b2",
        concepts="id,name,aliases,summary\na,Alpha,A|first,The first.\nb,Beta,,The second.\n",
        edges="source_id,target_id,relation,reason\na,b,prerequisite,a before b\n",
        links="lesson_id,lesson_title,concept_id\nL1,Lesson one,a\n",
    )
    report = import_bundle(
        gateway, smaller, reader=reader, invalidate_missing=True, reason="dropped from syllabus"
    )
    assert {t: report.counts[t].invalidated for t in TABLES} == {
        "concepts": 1,
        "concept_edges": 1,
        "lessons": 0,
        "lesson_concepts": 1,
    }
    assert report.counts["concepts"].unchanged == 2
    assert sorted(c.concept_id for c in reader.all_concepts()) == ["a", "b"]
    closed = reader.history("concepts", ("c",))[-1]
    assert closed.stamp.op == "invalidate"
    assert closed.grounding.to_dict() == {
        "confidence": 1.0,
        "reason": "dropped from syllabus",
        "source": "kg import",
        "evidence": {"bundle": "fixture", "invalidated_missing": True},
    }
    assert reader.history("concept_edges", ("b", "c", "related"))[-1].stamp.op == "invalidate"
    assert [v.key for v in reader.snapshot().lesson_links] == [("L1", "a")]


def test_without_invalidate_missing_absent_rows_are_left_alone(
    gateway: WriteGateway, reader: GraphReader, tmp_path: Path
) -> None:
    """A re-import that omits rows does not touch them unless asked to."""
    import_bundle(gateway, write_bundle(tmp_path / "b1"))
    import_bundle(
        gateway, write_bundle(tmp_path / "b2", concepts="id,name\na,Alpha\nb,Beta\n", edges=None, links=None)
    )
    assert sorted(c.concept_id for c in reader.all_concepts()) == ["a", "b", "c"]


# ---------------------------------------------------------------------------------------------
# export


def fresh_sqlite(folder: Path) -> Engine:
    engine = connect(f"sqlite:///{folder}/target.sqlite3")
    migrate(engine)
    return engine


def test_export_then_import_reproduces_the_snapshot(
    gateway: WriteGateway, reader: GraphReader, clock: ManualClock, tmp_path: Path
) -> None:
    """Exporting as of a point and importing into an empty database gives the same snapshot content."""
    build_graph(
        gateway,
        [("a", "Alpha", ["A", "first"]), ("b", 'Beta \u00e9, "quoted"'), "c", "d"],
        [("a", "b", "prerequisite", 0.7), ("c", "b", "contrasts_with"), ("d", "a", "builds_on")],
        valid_at=datetime(2024, 1, 1, tzinfo=UTC),
    )
    gateway.link_lesson("L1", "a", grounding=grounding("lesson"), title="Lesson, one")
    gateway.invalidate_edge(
        "d", "a", "builds_on", grounding=grounding("retired"), invalid_at=datetime(2030, 1, 1, tzinfo=UTC)
    )
    as_of = reader.as_of()
    counts = export_bundle(reader, tmp_path / "out", as_of=as_of)
    assert counts == {"concepts": 4, "concept_edges": 3, "lessons": 1, "lesson_concepts": 1}

    target = fresh_sqlite(tmp_path)
    try:
        target_clock = ManualClock(now=clock.now)
        import_bundle(WriteGateway(target, clock=target_clock), tmp_path / "out")
        target_reader = GraphReader(target, clock=target_clock)
        copied = target_reader.snapshot(target_reader.as_of(as_of.valid_at))
        assert content(copied) == content(reader.snapshot(as_of))
    finally:
        target.dispose()


def test_export_of_the_past_leaves_out_later_rows(
    gateway: WriteGateway, reader: GraphReader, tmp_path: Path
) -> None:
    """An export as of an earlier valid time holds only the rows valid then, and says when it is of."""
    build_graph(gateway, ["a", "b"], [("a", "b", "related")], valid_at=datetime(2024, 1, 1, tzinfo=UTC))
    build_graph(gateway, ["c"], valid_at=datetime(2024, 6, 1, tzinfo=UTC))
    point = reader.as_of(datetime(2024, 3, 1, tzinfo=UTC))
    counts = export_bundle(reader, tmp_path / "out", as_of=point)
    assert counts["concepts"] == 2
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["exported_as_of"]["valid_at"] == "2024-03-01T00:00:00Z"


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file to copy, so each Hypothesis example gets fresh databases cheaply."""
    path = tmp_path_factory.mktemp("template") / "template.sqlite3"
    engine = connect(f"sqlite:///{path}")
    migrate(engine)
    engine.dispose()
    return path


IDS = [f"k{i}" for i in range(6)]
TEXT = st.text(alphabet="abcXYZ é,\"'\n;", min_size=1, max_size=8).filter(lambda s: s.strip() != "")
TIMES = st.integers(min_value=0, max_value=400).map(
    lambda d: datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=d)
)


@st.composite
def graphs(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(min_value=2, max_value=len(IDS)))
    ids = IDS[:n]
    concepts = {
        cid: {
            "name": draw(TEXT).strip(),  # a name has no white space around it
            "aliases": draw(
                st.lists(
                    st.text(alphabet="abc xy", min_size=1, max_size=4).map(str.strip).filter(bool), max_size=2
                )
            ),
            "summary": draw(st.one_of(st.just(""), TEXT)),
            "confidence": draw(st.floats(min_value=0, max_value=1)),
            "evidence": draw(
                st.one_of(TEXT, st.dictionaries(st.sampled_from("xyz"), st.integers(), min_size=1))
            ),
            "valid_at": draw(TIMES),
        }
        for cid in ids
    }
    relation = st.sampled_from(["prerequisite", "builds_on", "part_of", "related", "contrasts_with"])
    pairs = draw(st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(ids), relation), max_size=8))
    edges: dict[tuple[str, str, str], dict[str, Any]] = {}
    for s, t, r in pairs:
        if s == t:
            continue
        if r == "prerequisite" and s > t:
            s, t = t, s  # keep prerequisites acyclic: always from the smaller id
        key = (min(s, t), max(s, t), r) if r in ("related", "contrasts_with") else (s, t, r)
        closes = draw(st.booleans())
        edges[key] = {
            "confidence": draw(st.floats(min_value=0, max_value=1)),
            "reason": draw(TEXT),
            "invalid_at": datetime(2030, 1, 1, tzinfo=UTC) if closes else None,
        }
    return {"concepts": concepts, "edges": edges}


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graph=graphs())
def test_round_trip_property(template_db: Path, graph: dict[str, Any]) -> None:
    """For random small graphs, export then import into an empty database reproduces the snapshot."""
    from data_plane import Grounding, Write

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        engines = []
        for name in ("source", "target"):
            shutil.copy(template_db, folder / f"{name}.sqlite3")
            engines.append(connect(f"sqlite:///{folder}/{name}.sqlite3"))
        try:
            source, target = engines
            clock = ManualClock(now=datetime(2025, 1, 1, tzinfo=UTC))
            writes = [
                Write.concept(
                    cid,
                    grounding=Grounding(c["confidence"], f"why {cid}", "hypothesis", c["evidence"]),
                    name=c["name"],
                    aliases=c["aliases"],
                    summary=c["summary"],
                    valid_at=c["valid_at"],
                )
                for cid, c in graph["concepts"].items()
            ]
            writes += [
                Write.edge(
                    s,
                    t,
                    r,
                    grounding=Grounding(e["confidence"], e["reason"], "hypothesis", {"edge": [s, t]}),
                    valid_at=max(graph["concepts"][s]["valid_at"], graph["concepts"][t]["valid_at"]),
                    invalid_at=e["invalid_at"],
                )
                for (s, t, r), e in graph["edges"].items()
            ]
            WriteGateway(source, clock=clock).apply(writes)
            reader = GraphReader(source, clock=clock)
            as_of = AsOf(datetime(2026, 1, 1, tzinfo=UTC), clock.now)
            export_bundle(reader, folder / "bundle", as_of=as_of)
            import_bundle(WriteGateway(target, clock=clock), folder / "bundle")
            copied = GraphReader(target, clock=clock).snapshot(AsOf(as_of.valid_at, clock.now))
            assert content(copied) == content(reader.snapshot(as_of))
        finally:
            for e in engines:
                e.dispose()


# ---------------------------------------------------------------------------------------------
# the bundled curriculum


@pytest.fixture
def curriculum() -> Iterator[Path]:
    if not (CURRICULUM / "manifest.json").exists():
        pytest.skip("data_plane/curriculum/manifest.json does not exist yet")
    yield CURRICULUM


def test_bundled_curriculum_imports_and_reimports_without_new_versions(
    gateway: WriteGateway, engine: Engine, curriculum: Path
) -> None:
    """The shipped curriculum imports cleanly, and importing it again creates zero versions."""
    first = import_bundle(gateway, curriculum)
    assert first.counts["concepts"].asserted > 0
    assert first.counts["concept_edges"].asserted > 0
    before = row_counts(engine)
    again = import_bundle(gateway, curriculum)
    assert again.new_versions == 0
    assert row_counts(engine) == before
