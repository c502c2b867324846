"""Temporal reads: neighbourhoods, as-of on both timelines, history, snapshots, diffs and query plans."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from data_plane import AsOf, ConceptRow, EdgeRow, GraphReader, Neighbour, WriteGateway
from data_plane.reads import neighbourhood_statement
from data_plane.testing import ManualClock, build_graph, grounding

V0 = datetime(2024, 1, 1, tzinfo=UTC)  # when the test curriculum became valid


@pytest.fixture
def graph(gateway: WriteGateway) -> WriteGateway:
    """a -> b (prerequisite), c builds on a, a ~ d (related), b part of e; all valid since V0."""
    build_graph(
        gateway,
        ["a", "b", "c", "d", "e"],
        [("a", "b", "prerequisite"), ("c", "a", "builds_on"), ("d", "a", "related"), ("b", "e", "part_of")],
        valid_at=V0,
    )
    return gateway


def _seen(neighbours: list[Neighbour]) -> list[tuple[str, str, str]]:
    return [(n.concept.concept_id, n.edge.relation, n.direction) for n in neighbours]


@contextmanager
def _statements(engine: Engine) -> Iterator[list[str]]:
    """Collect the SQL statements (other than transaction control) sent on ``engine``."""
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if not statement.lstrip().upper().startswith(("BEGIN", "COMMIT", "ROLLBACK")):
            seen.append(statement)

    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)


# -- neighbourhoods -----------------------------------------------------------------------------


def test_neighbourhood_follows_edges_in_both_directions(graph: WriteGateway, reader: GraphReader) -> None:
    """Neighbours come from edges leaving and entering the start concept, each with its direction."""
    assert _seen(reader.neighbourhood(["a"])) == [
        ("b", "prerequisite", "out"),
        ("d", "related", "out"),  # symmetric: stored as a ~ d, so it leaves a
        ("c", "builds_on", "in"),
    ]


def test_neighbourhood_of_several_ids_reports_where_each_step_starts(
    graph: WriteGateway, reader: GraphReader
) -> None:
    """With several start ids, an edge between two of them is reported once from each end."""
    found = [(n.from_id, n.concept.concept_id) for n in reader.neighbourhood(["a", "b"])]
    assert sorted(found) == [("a", "b"), ("a", "c"), ("a", "d"), ("b", "a"), ("b", "e")]


def test_neighbourhood_relation_filter(graph: WriteGateway, reader: GraphReader) -> None:
    """A relation filter keeps only edges of those relations."""
    assert _seen(reader.neighbourhood(["a"], relations={"builds_on", "related"})) == [
        ("d", "related", "out"),
        ("c", "builds_on", "in"),
    ]


def test_neighbourhood_exclude(graph: WriteGateway, reader: GraphReader) -> None:
    """Excluded ids are never reached."""
    assert [n.concept.concept_id for n in reader.neighbourhood(["a"], exclude={"b", "d"})] == ["c"]


def test_neighbourhood_as_of_valid_time_around_invalidation(
    graph: WriteGateway, reader: GraphReader, clock: ManualClock
) -> None:
    """An edge invalidated at t is seen at valid times before t and not at or after t; nothing before V0."""
    t = V0 + timedelta(days=100)
    graph.invalidate_edge("a", "b", "prerequisite", grounding=grounding("wrong"), invalid_at=t)
    known = clock.now

    def reached(valid_at: datetime) -> list[str]:
        return sorted(n.concept.concept_id for n in reader.neighbourhood(["a"], as_of=AsOf(valid_at, known)))

    assert reached(t - timedelta(seconds=1)) == ["b", "c", "d"]
    assert reached(t) == ["c", "d"]
    assert reached(t + timedelta(days=1)) == ["c", "d"]
    assert reached(V0 - timedelta(seconds=1)) == []


def test_neighbourhood_as_of_recorded_time_sees_the_old_version(
    graph: WriteGateway, reader: GraphReader, clock: ManualClock
) -> None:
    """Before a revision was recorded, reads return the version it superseded (edge and concept)."""
    before = clock.now
    clock.advance(timedelta(hours=1))
    graph.revise_concept("b", name="B renamed", grounding=grounding("rename"))
    graph.revise_edge("a", "b", "prerequisite", grounding=grounding("re-checked", confidence=0.5))
    now = clock.now

    (old,) = reader.neighbourhood(["a"], as_of=AsOf(now, before), relations={"prerequisite"})
    (new,) = reader.neighbourhood(["a"], as_of=AsOf(now, now), relations={"prerequisite"})
    assert (old.concept.name, old.edge.confidence) == ("b", 0.9)
    assert (new.concept.name, new.edge.confidence) == ("B renamed", 0.5)
    full, _ = reader.records(edge_versions=[new.edge.version_id])
    assert full[new.edge.version_id].stamp.supersedes_id == old.edge.version_id


def test_neighbourhood_skips_retracted_edges_at_every_time(
    graph: WriteGateway, reader: GraphReader, clock: ManualClock
) -> None:
    """Once an edge is retracted, reads as of a later recorded time do not see it at any valid time."""
    graph.invalidate_edge("c", "a", "builds_on", grounding=grounding("never true"), retract=True)
    reached = reader.neighbourhood(["a"], as_of=AsOf(V0 + timedelta(days=1), clock.now))
    assert "c" not in [n.concept.concept_id for n in reached]


def test_neighbourhood_is_one_statement(graph: WriteGateway, reader: GraphReader, engine: Engine) -> None:
    """A neighbourhood read of several ids at a point sends exactly one SQL statement (a loop
    settles its point once per question: ``GraphReader.known_at``)."""
    point = reader.as_of()
    reader.neighbourhood(["a"], as_of=point)  # first use of the pool: dialect set-up queries are not ours
    with _statements(engine) as seen:
        found = reader.neighbourhood(["a", "b", "e"], relations={"prerequisite", "part_of"}, as_of=point)
    assert len(found) == 4  # a -> b and b -> e, each seen from both ends
    assert len(seen) == 1, seen


def _big_graph(gateway: WriteGateway, engine: Engine) -> None:
    ids = [f"c{i:03d}" for i in range(300)]
    rnd = random.Random(7)
    relations = ["related", "builds_on", "part_of", "contrasts_with"]
    edges: set[tuple[str, str, str]] = set()
    while len(edges) < 2000:
        s, t = sorted(rnd.sample(ids, 2))
        edges.add((s, t, rnd.choice(relations)))
    build_graph(gateway, ids, sorted(edges))
    with engine.begin() as conn:
        conn.exec_driver_sql("ANALYZE")


def test_neighbourhood_plan_uses_indexes(gateway: WriteGateway, reader: GraphReader, engine: Engine) -> None:
    """Both halves of the neighbourhood enter concept_edges through an index, never a full scan."""
    _big_graph(gateway, engine)
    plan = "\n".join(reader.explain_neighbourhood(["c001", "c002"]))
    if engine.dialect.name == "sqlite":
        assert "SEARCH concept_edges USING INDEX ix_concept_edges_key_recorded (source_id=?)" in plan
        assert "SEARCH concept_edges USING INDEX ix_concept_edges_target_recorded (target_id=?" in plan
        assert "SCAN concept_edges" not in plan
        assert "SCAN c_" not in plan
    else:
        assert "ix_concept_edges_key_recorded on concept_edges" in plan
        assert "on ix_concept_edges_target_recorded" in plan or (
            "ix_concept_edges_target_recorded on concept_edges" in plan
        )
        assert "Seq Scan on concept_edges" not in plan


# -- history, snapshots, diffs ------------------------------------------------------------------


def test_history_is_ordered_and_keeps_each_grounding(graph: WriteGateway, reader: GraphReader) -> None:
    """History lists every version oldest first, each with its own grounding and a supersedes chain."""
    g1, g2 = grounding("second opinion", confidence=0.6), grounding("disproved", source="review")
    graph.revise_edge("a", "b", "prerequisite", grounding=g1)
    graph.invalidate_edge("a", "b", "prerequisite", grounding=g2)
    versions = reader.history("concept_edges", ("a", "b", "prerequisite"))
    assert [v.stamp.op for v in versions] == ["assert", "revise", "invalidate"]
    assert [v.grounding for v in versions][1:] == [g1, g2]
    assert versions[0].grounding.reason == "edge a prerequisite b"
    stamps = [v.stamp for v in versions]
    assert stamps[0].recorded_at < stamps[1].recorded_at < stamps[2].recorded_at
    assert [s.supersedes_id for s in stamps] == [None, stamps[0].version_id, stamps[1].version_id]
    assert [s.expired_at for s in stamps] == [stamps[1].recorded_at, stamps[2].recorded_at, None]


def test_history_of_symmetric_edge_accepts_either_order(graph: WriteGateway, reader: GraphReader) -> None:
    """History of a symmetric edge is found whichever way round its ends are named."""
    assert reader.history("concept_edges", ("d", "a", "related")) == reader.history(
        "concept_edges", ("a", "d", "related")
    )


def test_snapshot_at_valid_and_recorded_pairs(
    gateway: WriteGateway, reader: GraphReader, clock: ManualClock
) -> None:
    """A snapshot shows exactly what was believed at the recorded time about the valid time."""
    build_graph(gateway, ["a", "b"], [("a", "b", "prerequisite")], valid_at=V0)
    k1 = clock.now
    clock.advance(timedelta(minutes=1))  # so the next write is recorded strictly after k1
    v1 = V0 + timedelta(days=10)
    gateway.invalidate_concept("b", grounding=grounding("dropped"), invalid_at=v1)
    k2 = clock.now
    clock.advance(timedelta(minutes=1))
    gateway.assert_concept("c", name="C", grounding=grounding(), valid_at=V0 + timedelta(days=20))
    k3 = clock.now

    def seen(v: datetime, k: datetime) -> tuple[list[str], list[str]]:
        snap = reader.snapshot(AsOf(v, k))
        return [c.concept_id for c in snap.concepts], [e.key for e in snap.edges]

    day = timedelta(days=1)
    assert seen(V0 - day, k3) == ([], [])
    assert seen(v1 - day, k1) == (["a", "b"], ["a>prerequisite>b"])
    assert seen(v1 + day, k1) == (["a", "b"], ["a>prerequisite>b"])  # the invalidation was not yet known
    assert seen(v1 - day, k2) == (["a", "b"], ["a>prerequisite>b"])  # known, but not yet in force
    assert seen(v1 + day, k2) == (["a"], [])
    assert seen(v1 + 30 * day, k2) == (["a"], [])  # c not yet recorded
    assert seen(v1 + 30 * day, k3) == (["a", "c"], [])


def test_diff_classifies_changes_between_recorded_times(
    graph: WriteGateway, reader: GraphReader, clock: ManualClock
) -> None:
    """A diff groups the versions recorded in (since, until] into asserted, revised, invalidated and retracted."""
    built = clock.now
    clock.advance(timedelta(minutes=1))
    start = clock.now
    graph.assert_concept("f", name="F", grounding=grounding())
    graph.revise_concept("a", name="A2", grounding=grounding("rename"))
    graph.invalidate_concept("e", grounding=grounding("obsolete"))
    graph.invalidate_concept("c", grounding=grounding("mistake"), retract=True)
    diff = reader.diff(start - timedelta(microseconds=1), clock.now)

    def keys(versions: tuple[Any, ...]) -> list[str]:
        return sorted(v.key_text for v in versions)

    assert keys(diff.asserted) == ["f"]
    assert keys(diff.revised) == ["a"]
    assert keys(diff.invalidated) == ["b>part_of>e", "e"]
    assert keys(diff.retracted) == ["c", "c>builds_on>a"]
    initial = reader.diff(built - timedelta(days=1), built)
    assert len(initial.asserted) == 9
    assert (initial.revised, initial.invalidated, initial.retracted) == ((), (), ())


def test_neighbourhood_rows_are_thin(graph: WriteGateway, reader: GraphReader) -> None:
    """A neighbourhood read returns thin rows (ids, relation, confidence, name, summary), and its
    statement selects no grounding text and no time stamps."""
    (n,) = reader.neighbourhood(["a"], relations={"prerequisite"})
    assert isinstance(n.edge, EdgeRow) and isinstance(n.concept, ConceptRow)
    assert (n.edge.key, n.edge.confidence, n.concept.name) == ("a>prerequisite>b", 0.9, "b")
    stmt, _params = neighbourhood_statement(["a"], reader.as_of())
    selected = {c.name for c in stmt.selected_columns}
    assert not selected & {"e_evidence", "e_reason", "e_recorded_at", "c_aliases", "c_evidence", "c_valid_at"}


def test_records_ground_thin_rows_in_one_statement(
    graph: WriteGateway, reader: GraphReader, engine: Engine
) -> None:
    """``records`` returns the full edge and concept versions for thin rows' version ids, in one
    statement, including versions no longer in force."""
    found = reader.neighbourhood(["a"])
    graph.invalidate_edge("a", "b", "prerequisite", grounding=grounding("wrong"))
    with _statements(engine) as seen:
        edges, concepts = reader.records(
            edge_versions=[n.edge.version_id for n in found],
            concept_versions=[n.concept.version_id for n in found],
        )
    assert len(seen) == 1, seen
    assert len(edges) == len(found) == 3
    assert edges == reader.edges_by_version(n.edge.version_id for n in found)
    assert edges[found[0].edge.version_id].stamp.expired_at is not None  # closed since, still returned
    in_force = reader.concepts(n.concept.concept_id for n in found)
    assert concepts == {c.version_id: c for c in in_force.values()}
    assert reader.records() == ({}, {})


@pytest.mark.parametrize("n", [1, 8, 9, 17, 501])
def test_records_of_any_number_of_versions_are_the_versions(
    gateway: WriteGateway, reader: GraphReader, n: int
) -> None:
    """``records`` pads its id lists to a few compiled sizes and chunks beyond 500 ids: whatever
    the count, it returns exactly the asked versions (aliases and grounding decoded), no others."""
    build_graph(
        gateway,
        [("hub", "Hub", ("H",)), *(f"c{i}" for i in range(n))],
        [(f"c{i}", "hub", "prerequisite") for i in range(n)],
    )
    found = reader.neighbourhood(["hub"])
    assert len(found) == n
    edges, concepts = reader.records(
        edge_versions=[x.edge.version_id for x in found],
        concept_versions=[x.concept.version_id for x in found] + [reader.concepts(["hub"])["hub"].version_id],
    )
    assert edges == reader.edges_by_version(x.edge.version_id for x in found)
    in_force = reader.concepts([*(x.concept.concept_id for x in found), "hub"])
    assert concepts == {c.version_id: c for c in in_force.values()}
    assert concepts[in_force["hub"].version_id].aliases == ("H",)


@pytest.mark.parametrize("page", [1, 2, 3])
def test_streamed_pages_rebuild_the_snapshot(graph: WriteGateway, reader: GraphReader, page: int) -> None:
    """Keyset pages (``after`` the last key, ``limit`` rows) of every streamed table concatenate
    to exactly the in-memory snapshot, in the same order."""
    graph.invalidate_edge("a", "b", "prerequisite", grounding=grounding("wrong"))
    as_of = reader.as_of()
    snap = reader.snapshot(as_of)

    def pages(fetch: Any, key: Any) -> list[Any]:
        out: list[Any] = []
        after = None
        while True:
            got = list(fetch(after=after, limit=page))
            out += got
            if len(got) < page:
                return out
            after = key(got[-1])

    assert pages(lambda **kw: reader.stream_concepts(as_of, **kw), lambda c: c.concept_id) == list(
        snap.concepts
    )
    assert pages(
        lambda **kw: reader.stream_edges(as_of, **kw), lambda e: (e.source_id, e.relation, e.target_id)
    ) == list(snap.edges)
    assert pages(
        lambda **kw: reader.stream_versions("lesson_concepts", as_of, **kw), lambda v: v.key
    ) == list(snap.lesson_links)
    changes = pages(
        lambda **kw: reader.stream_changes("concept_edges", V0, as_of.recorded_at, **kw),
        lambda v: v.stamp.version_id,
    )
    diff = reader.diff(V0, as_of.recorded_at, tables=["concept_edges"])
    assert changes == sorted(
        (*diff.asserted, *diff.revised, *diff.invalidated, *diff.retracted),
        key=lambda v: (v.stamp.recorded_at, v.stamp.version_id),
    )
    assert len(changes) == 5


# -- one connection per question ----------------------------------------------------------------


@contextmanager
def _checkouts(engine: Engine) -> Iterator[list[int]]:
    """Count pool checkouts on ``engine`` (each is one connection handed to a read)."""
    seen: list[int] = []

    def checkout(*_args: Any) -> None:
        seen.append(1)

    sa.event.listen(engine, "checkout", checkout)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "checkout", checkout)


def test_reads_inside_a_pinned_block_share_one_connection(
    graph: WriteGateway, reader: GraphReader, engine: Engine
) -> None:
    """Outside a block every read checks a connection out; inside, all reads (nested blocks
    too) use the block's one, and they still return what they return unpinned."""
    as_of = reader.as_of()
    loose = (reader.neighbourhood(["a"], as_of=as_of), reader.concepts(["a", "b"], as_of=as_of))
    with _checkouts(engine) as seen:
        reader.neighbourhood(["a"], as_of=as_of)
        reader.concepts(["a"], as_of=as_of)
    assert len(seen) == 2
    with _checkouts(engine) as seen, reader.pinned():
        with reader.connection() as outer:
            pass
        # a streamed read first: its batching must not leak into the reads after it
        assert len(list(reader.concept_labels(as_of=as_of))) == 5
        pinned = (reader.neighbourhood(["a"], as_of=as_of), reader.concepts(["a", "b"], as_of=as_of))
        with reader.pinned(), reader.connection() as inner:
            assert inner is outer
    assert len(seen) == 1
    assert pinned == loose


def test_a_failed_block_leaves_no_connection_pinned(
    graph: WriteGateway, reader: GraphReader, engine: Engine
) -> None:
    with pytest.raises(RuntimeError), reader.pinned(), reader.connection() as held:
        raise RuntimeError("boom")
    with reader.connection() as fresh:
        assert fresh is not held
    point = reader.as_of()
    with _checkouts(engine) as seen:
        reader.neighbourhood(["a"], as_of=point)
    assert len(seen) == 1
