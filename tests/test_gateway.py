"""The write gateway: what it refuses (and that refusal writes nothing), and what it writes."""

from __future__ import annotations

import itertools
import math
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from data_plane import (
    AsOf,
    GraphReader,
    Grounding,
    GroundingRejected,
    InactiveEndpoint,
    KeyExists,
    NotFound,
    PrerequisiteCycle,
    SelfLoop,
    TemporalConflict,
    UnknownRelation,
    Write,
    WriteGateway,
    WriteRejected,
    connect,
    migrate,
    schema,
)
from data_plane.testing import ManualClock, build_graph, grounding

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def _counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {
            t.name: conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one()
            for t in schema.VERSIONED_TABLES
        }


# -- grounding ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("reason", ""),
        ("reason", "   "),
        ("reason", None),
        ("source", ""),
        ("source", None),
        ("evidence", None),
        ("evidence", {}),
        ("evidence", []),
        ("evidence", ""),
    ],
)
def test_grounding_refuses_missing_or_empty_text(field: str, value: Any) -> None:
    """A grounding with a missing or empty reason, source or evidence cannot be built, and the error names it."""
    kwargs: dict[str, Any] = {"confidence": 0.5, "reason": "r", "source": "s", "evidence": {"e": 1}}
    kwargs[field] = value
    with pytest.raises(GroundingRejected) as info:
        Grounding(**kwargs)
    assert info.value.field == field
    assert info.value.value == value


@pytest.mark.parametrize("value", [-0.01, 1.01, math.nan, "0.5", None, True])
def test_grounding_refuses_bad_confidence(value: Any) -> None:
    """Confidence must be a real number in [0, 1]; anything else is refused naming the field and value."""
    with pytest.raises(GroundingRejected) as info:
        Grounding(confidence=value, reason="r", source="s", evidence={"e": 1})
    assert info.value.field == "confidence"
    if isinstance(value, float) and math.isnan(value):
        assert math.isnan(info.value.value)
    else:
        assert info.value.value == value


@pytest.mark.parametrize("confidence", [0, 0.0, 1, 1.0])
def test_grounding_accepts_the_closed_interval(confidence: float) -> None:
    """The ends of [0, 1] are valid confidences."""
    assert Grounding(confidence, "r", "s", ["e"]).confidence == float(confidence)


# -- rejections ---------------------------------------------------------------------------------


def test_invalid_at_not_after_valid_at_is_refused(gateway: WriteGateway) -> None:
    """invalid_at <= valid_at raises TemporalConflict naming invalid_at."""
    with pytest.raises(TemporalConflict) as info:
        gateway.assert_concept("a", name="A", grounding=grounding(), valid_at=T0, invalid_at=T0)
    assert info.value.field == "invalid_at"
    assert info.value.value == "2025-01-01T00:00:00Z"


def test_edge_to_unknown_concept_is_refused(gateway: WriteGateway) -> None:
    """An edge naming a concept that was never asserted raises InactiveEndpoint naming that concept."""
    build_graph(gateway, ["a"])
    with pytest.raises(InactiveEndpoint) as info:
        gateway.assert_edge("a", "ghost", "prerequisite", grounding=grounding())
    assert (info.value.field, info.value.value) == ("concept_id", "ghost")


def test_edge_to_invalidated_concept_is_refused(gateway: WriteGateway) -> None:
    """An edge to a concept that is no longer valid raises InactiveEndpoint naming that concept."""
    build_graph(gateway, ["a", "b"])
    gateway.invalidate_concept("b", grounding=grounding("obsolete"))
    with pytest.raises(InactiveEndpoint) as info:
        gateway.assert_edge("a", "b", "builds_on", grounding=grounding())
    assert (info.value.field, info.value.value) == ("concept_id", "b")


def test_edge_to_retracted_concept_is_refused(gateway: WriteGateway) -> None:
    """An edge to a retracted concept raises InactiveEndpoint naming that concept."""
    build_graph(gateway, ["a", "b"])
    gateway.invalidate_concept("b", grounding=grounding("mistake"), retract=True)
    with pytest.raises(InactiveEndpoint) as info:
        gateway.assert_edge("b", "a", "part_of", grounding=grounding())
    assert info.value.value == "b"


def test_self_loop_is_refused(gateway: WriteGateway) -> None:
    """An edge from a concept to itself raises SelfLoop naming the target."""
    build_graph(gateway, ["a"])
    with pytest.raises(SelfLoop) as info:
        gateway.assert_edge("a", "a", "related", grounding=grounding())
    assert (info.value.field, info.value.value) == ("target_id", "a")


def test_unknown_relation_is_refused(gateway: WriteGateway) -> None:
    """A relation outside RELATIONS raises UnknownRelation naming it."""
    build_graph(gateway, ["a", "b"])
    with pytest.raises(UnknownRelation) as info:
        gateway.assert_edge("a", "b", "causes", grounding=grounding())
    assert (info.value.field, info.value.value) == ("relation", "causes")


def test_prerequisite_cycle_is_refused_with_the_cycle(gateway: WriteGateway) -> None:
    """A prerequisite edge closing a cycle raises PrerequisiteCycle whose .cycle is that cycle."""
    build_graph(gateway, ["a", "b", "c"], [("a", "b", "prerequisite"), ("b", "c", "prerequisite")])
    with pytest.raises(PrerequisiteCycle) as info:
        gateway.assert_edge("c", "a", "prerequisite", grounding=grounding())
    cycle = info.value.cycle
    assert cycle[0] == cycle[-1]
    assert set(cycle) == {"a", "b", "c"} and len(cycle) == 4
    assert list(itertools.pairwise(cycle)) in (
        [("c", "a"), ("a", "b"), ("b", "c")],
        [("a", "b"), ("b", "c"), ("c", "a")],
        [("b", "c"), ("c", "a"), ("a", "b")],
    )
    assert (info.value.field, info.value.value) == ("relation", "prerequisite")


def test_cycle_through_an_invalidated_edge_is_allowed(gateway: WriteGateway) -> None:
    """Only active prerequisite edges count: after invalidating b->c, c->a no longer closes a cycle."""
    build_graph(gateway, ["a", "b", "c"], [("a", "b", "prerequisite"), ("b", "c", "prerequisite")])
    gateway.invalidate_edge("b", "c", "prerequisite", grounding=grounding("wrong"))
    edge = gateway.assert_edge("c", "a", "prerequisite", grounding=grounding())
    assert (edge.source_id, edge.target_id) == ("c", "a")


def test_assert_of_existing_key_is_refused(gateway: WriteGateway) -> None:
    """Asserting a key that already has a current version raises KeyExists naming the key."""
    build_graph(gateway, ["a"])
    with pytest.raises(KeyExists) as info:
        gateway.assert_concept("a", name="A again", grounding=grounding())
    assert (info.value.field, info.value.value) == ("id", "a")


def test_revise_of_missing_key_is_refused(gateway: WriteGateway) -> None:
    """Revising a key with no current version raises NotFound naming the key."""
    with pytest.raises(NotFound) as info:
        gateway.revise_concept("ghost", grounding=grounding(), name="Ghost")
    assert info.value.key == "ghost"


def test_symmetric_edges_in_either_order_are_one_key(gateway: WriteGateway, reader: GraphReader) -> None:
    """(b, a, related) and (a, b, related) are the same key: stored once, smaller id first."""
    build_graph(gateway, ["a", "b"])
    edge = gateway.assert_edge("b", "a", "related", grounding=grounding())
    assert (edge.source_id, edge.target_id) == ("a", "b")
    with pytest.raises(KeyExists):
        gateway.assert_edge("a", "b", "related", grounding=grounding())
    assert [e.key for e in reader.snapshot().edges] == ["a>related>b"]


# -- atomicity ----------------------------------------------------------------------------------

BAD_LAST_WRITES: dict[str, tuple[Write, type[Exception]]] = {
    "key exists": (Write.concept("c00", grounding=grounding(), name="again"), KeyExists),
    "unknown endpoint": (Write.edge("c01", "ghost", "related", grounding=grounding()), InactiveEndpoint),
    "cycle": (Write.edge("c19", "c00", "prerequisite", grounding=grounding()), PrerequisiteCycle),
    "revise missing": (Write.concept("ghost", grounding=grounding(), mode="revise", name="G"), NotFound),
}


@pytest.mark.parametrize("case", list(BAD_LAST_WRITES))
def test_rejected_batch_writes_nothing(gateway: WriteGateway, engine: Engine, case: str) -> None:
    """When the last of many writes is refused, no write of the batch reaches the database."""
    build_graph(gateway, ["c00"])
    before = _counts(engine)
    ids = [f"c{i:02d}" for i in range(1, 20)]
    writes = [Write.concept(cid, grounding=grounding(), name=cid) for cid in ids]
    writes += [
        Write.edge(s, t, "prerequisite", grounding=grounding())
        for s, t in zip(["c00", *ids], ids, strict=False)
    ]
    bad, error = BAD_LAST_WRITES[case]
    with pytest.raises(error):
        gateway.apply([*writes, bad])
    assert _counts(engine) == before


def test_rejected_cascade_writes_nothing(gateway: WriteGateway, engine: Engine) -> None:
    """A batch that invalidates a concept (cascading to its edges) and then fails leaves every row as it was."""
    build_graph(gateway, ["a", "b", "c"], [("a", "b", "prerequisite"), ("b", "c", "related")])
    before = _counts(engine)
    with pytest.raises(WriteRejected):
        gateway.apply(
            [
                Write.concept("b", grounding=grounding("gone"), mode="invalidate"),
                Write.edge("a", "a", "related", grounding=grounding()),
            ]
        )
    assert _counts(engine) == before


# -- what gets written --------------------------------------------------------------------------


def test_invalidating_a_concept_cascades_to_edges_and_links(
    gateway: WriteGateway, reader: GraphReader, clock: ManualClock
) -> None:
    """Invalidating a concept closes its active edges and lesson links at the same time, with the same grounding."""
    build_graph(gateway, ["a", "b", "c"], [("a", "b", "prerequisite"), ("b", "c", "related")])
    gateway.link_lesson("L1", "b", grounding=grounding(), title="Lesson")
    why = grounding("superseded by c", confidence=0.8, source="curator")
    result = gateway.invalidate_concept("b", grounding=why)
    (concept,) = result.written
    end = concept.stamp.invalid_at
    assert end is not None
    assert sorted(v.key_text for v in result.cascaded) == ["L1/b", "a>prerequisite>b", "b>related>c"]
    for v in result.cascaded:
        assert v.grounding == why
        assert v.stamp.op == "invalidate"
        assert v.stamp.invalid_at == end
        assert v.stamp.recorded_at == concept.stamp.recorded_at
    now = reader.as_of()
    snap = reader.snapshot(now)
    assert [c.concept_id for c in snap.concepts] == ["a", "c"]
    assert snap.edges == () and snap.lesson_links == ()
    assert reader.neighbourhood(["a", "c"], as_of=now) == []


def test_no_active_edge_points_at_an_inactive_concept_after_cascade(
    gateway: WriteGateway, reader: GraphReader
) -> None:
    """After any cascade, every edge in force has both endpoints in force."""
    build_graph(
        gateway,
        ["a", "b", "c", "d"],
        [("a", "b", "prerequisite"), ("c", "b", "builds_on"), ("b", "d", "part_of"), ("a", "d", "related")],
    )
    gateway.invalidate_concept("b", grounding=grounding("merged"))
    gateway.invalidate_concept("d", grounding=grounding("merged"), retract=True)
    snap = reader.snapshot()
    active = {c.concept_id for c in snap.concepts}
    assert active == {"a", "c"}
    assert all(e.source_id in active and e.target_id in active for e in snap.edges)
    assert snap.edges == ()


def test_revise_supersedes_the_current_version(gateway: WriteGateway, reader: GraphReader) -> None:
    """A revision points at the version it replaces, and that version expires exactly when the revision is recorded."""
    old = gateway.assert_concept("a", name="A", grounding=grounding())
    new = gateway.revise_concept("a", name="A, renamed", grounding=grounding("better name"))
    assert new.stamp.supersedes_id == old.stamp.version_id
    assert new.stamp.op == "revise"
    first, second = reader.history("concepts", ("a",))
    assert first.stamp.version_id == old.stamp.version_id
    assert first.stamp.expired_at == second.stamp.recorded_at == new.stamp.recorded_at
    assert second.stamp.expired_at is None
    assert reader.concept("a").name == "A, renamed"


def test_retract_hides_from_current_reads_but_history_keeps_all(
    gateway: WriteGateway, reader: GraphReader
) -> None:
    """A retracted concept disappears from current reads; its history keeps every version."""
    build_graph(gateway, ["a", "b"], [("a", "b", "prerequisite")])
    gateway.revise_concept("a", name="A2", grounding=grounding("rename"))
    gateway.invalidate_concept("a", grounding=grounding("never existed"), retract=True)
    assert reader.concepts(["a", "b"]).keys() == {"b"}
    assert [c.concept_id for c in reader.snapshot().concepts] == ["b"]
    assert [v.stamp.op for v in reader.history("concepts", ("a",))] == ["assert", "revise", "retract"]
    assert [v.stamp.op for v in reader.history("concept_edges", ("a", "b", "prerequisite"))] == [
        "assert",
        "retract",
    ]


def test_injected_clock_gives_exact_stamps(engine: Engine) -> None:
    """Every stamp of a write comes from the injected clock, exactly."""
    when = datetime(2030, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
    clock = ManualClock(now=when, step=timedelta(0))
    gateway = WriteGateway(engine, clock=clock)
    concept = gateway.assert_concept("a", name="A", grounding=grounding())
    assert concept.stamp.recorded_at == concept.stamp.valid_at == when
    clock.advance(timedelta(hours=1))
    result = gateway.invalidate_concept("a", grounding=grounding("done"))
    later = when + timedelta(hours=1)
    assert result.written[0].stamp.invalid_at == result.written[0].stamp.recorded_at == later
    history = GraphReader(engine, clock=clock).history("concepts", ("a",))
    assert [(v.stamp.recorded_at, v.stamp.expired_at) for v in history] == [(when, later), (later, None)]


def test_identical_revise_writes_nothing(gateway: WriteGateway, engine: Engine) -> None:
    """A revise that says exactly what the current version says adds no row and returns the current version."""
    g = grounding()
    old = gateway.assert_concept("a", name="A", grounding=g, summary="s")
    before = _counts(engine)
    same = gateway.revise_concept("a", name="A", summary="s", grounding=g)
    assert _counts(engine) == before
    assert same.stamp.version_id == old.stamp.version_id


def test_as_of_before_invalidation_still_sees_the_cascaded_edge(
    gateway: WriteGateway, reader: GraphReader, clock: ManualClock
) -> None:
    """Invalidation closes valid time without rewriting it: an earlier valid time still sees the edge."""
    build_graph(gateway, ["a", "b"], [("a", "b", "prerequisite")], valid_at=T0 - timedelta(days=10))
    gateway.invalidate_concept("b", grounding=grounding("gone"))
    earlier = AsOf(T0 - timedelta(days=1), clock.now)
    assert [n.concept.concept_id for n in reader.neighbourhood(["a"], as_of=earlier)] == ["b"]


def test_edge_may_not_hold_before_its_endpoint_concepts(gateway: WriteGateway, clock: ManualClock) -> None:
    """An edge whose valid_at precedes an endpoint's valid_at is refused, naming valid_at."""
    later = clock.now + timedelta(days=30)
    gateway.assert_concept("early", name="Early", grounding=grounding())
    gateway.assert_concept("late", name="Late", grounding=grounding(), valid_at=later)
    with pytest.raises(InactiveEndpoint) as err:
        gateway.assert_edge("early", "late", "prerequisite", grounding=grounding(), valid_at=clock.now)
    assert err.value.field == "valid_at"


def test_batch_reads_exactly_the_current_versions_of_its_own_keys(
    gateway: WriteGateway, engine: Engine
) -> None:
    """A batch whose keys share their parts with other current edges revises exactly its own keys
    and asserts the rest, each new version superseding the right one."""
    build_graph(gateway, ["a", "b", "c"], [("a", "b", "prerequisite"), ("a", "c", "part_of")])
    (old,) = GraphReader(engine).history("concept_edges", ("a", "b", "prerequisite"))
    writes = [
        Write.edge("a", "b", "part_of", grounding=grounding("new"), mode="upsert"),
        Write.edge("a", "c", "prerequisite", grounding=grounding("new"), mode="upsert"),
        Write.edge("a", "b", "prerequisite", grounding=grounding("revised"), mode="upsert"),
    ]
    result = gateway.apply(writes)
    by_key = {v.key: v.stamp for v in result.written}
    assert {k: s.op for k, s in by_key.items()} == {
        ("a", "b", "part_of"): "assert",
        ("a", "c", "prerequisite"): "assert",
        ("a", "b", "prerequisite"): "revise",
    }
    assert by_key[("a", "b", "prerequisite")].supersedes_id == old.stamp.version_id
    assert by_key[("a", "b", "part_of")].supersedes_id is None


def test_current_version_lookups_search_the_current_key_index(tmp_path: Any) -> None:
    """On SQLite the gateway finds the current versions of a batch's keys through the
    current-key index (one search per key), never by scanning the current versions of the
    whole table (which the planner would otherwise do through the expired_at index)."""
    eng = connect(f"sqlite:///{tmp_path}/plan.sqlite3")
    migrate(eng)
    gateway = WriteGateway(eng, clock=ManualClock())
    build_graph(gateway, ["a", "b", "c"], [("a", "b", "prerequisite")])
    seen: list[tuple[str, Any]] = []

    def capture(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        if statement.startswith("WITH k("):
            seen.append((statement, parameters))

    sa.event.listen(eng, "before_cursor_execute", capture)
    gateway.apply(
        [
            Write.edge("a", "c", "prerequisite", grounding=grounding(), mode="upsert"),
            Write.edge("b", "c", "related", grounding=grounding(), mode="upsert"),
            Write.concept("a", grounding=grounding("renamed"), mode="upsert", name="A"),
        ]
    )
    sa.event.remove(eng, "before_cursor_execute", capture)
    assert {s.split(" JOIN ")[1].split()[0] for s, _ in seen} >= {"concepts", "concept_edges"}
    with eng.connect() as conn:
        for statement, parameters in seen:
            plan = " | ".join(
                r[-1] for r in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
            )
            assert "USING INDEX uq_" in plan, plan
            assert "expired_at" not in plan, plan
    eng.dispose()


def test_closing_a_concept_finds_its_edges_by_either_end(tmp_path: Any) -> None:
    """On SQLite, closing a concept finds its open edges and lesson links through the index on
    each end, never by scanning the current versions of the whole table (the expired_at index),
    and still closes every one of them."""
    eng = connect(f"sqlite:///{tmp_path}/cascade.sqlite3")
    migrate(eng)
    gateway = WriteGateway(eng, clock=ManualClock())
    build_graph(gateway, ["a", "b", "c"], [("a", "b", "prerequisite"), ("c", "a", "builds_on")])
    gateway.link_lesson("L1", "a", grounding=grounding())
    seen: list[tuple[str, Any]] = []

    def capture(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append((statement, parameters))

    sa.event.listen(eng, "before_cursor_execute", capture)
    result = gateway.invalidate_concept("a", grounding=grounding("withdrawn"))
    sa.event.remove(eng, "before_cursor_execute", capture)
    assert {v.key for v in result.cascaded} == {
        ("a", "b", "prerequisite"),
        ("c", "a", "builds_on"),
        ("L1", "a"),
    }
    assert any("concept_edges.target_id = " in s for s, _ in seen)
    with eng.connect() as conn:
        for statement, parameters in seen:
            plan = " | ".join(
                r[-1] for r in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
            )
            assert "_expired_at (expired_at=?)" not in plan, plan
    eng.dispose()
