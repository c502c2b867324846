"""Recursive learning-order walks: closures, bounds, time, paths, lessons and query plans."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime, timedelta

import networkx as nx
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import Engine

from data_plane import AsOf, GraphReader, InputError, WriteGateway
from data_plane.testing import ManualClock, build_graph, grounding
from data_plane.walks import (
    NEEDED_BEFORE,
    UNLOCKS,
    Step,
    explain_walk,
    fringe,
    learning_steps,
    lessons_for,
    shortest_paths,
    walk,
)

V0 = datetime(2024, 1, 1, tzinfo=UTC)
BEFORE = learning_steps(NEEDED_BEFORE)
AFTER = learning_steps(UNLOCKS)


def chain(gateway: WriteGateway, n: int, prefix: str = "n") -> list[str]:
    ids = [f"{prefix}{i}" for i in range(n)]
    build_graph(gateway, ids, [(ids[i], ids[i + 1], "prerequisite") for i in range(n - 1)], valid_at=V0)
    return ids


def test_learning_steps_follow_the_relation_semantics() -> None:
    """Needed-before steps go backward along prerequisite and forward along builds_on; unlocks reverses both."""
    assert set(BEFORE) == {Step("prerequisite", False), Step("builds_on", True)}
    assert set(AFTER) == {Step("prerequisite", True), Step("builds_on", False)}
    assert learning_steps(NEEDED_BEFORE, ["builds_on"]) == (Step("builds_on", True),)


@pytest.mark.parametrize(
    ("direction", "relations"), [("sideways", ["prerequisite"]), (UNLOCKS, ["related"]), (UNLOCKS, [])]
)
def test_learning_steps_refuse_what_has_no_learning_order(direction: str, relations: list[str]) -> None:
    """An unknown direction or a relation without a learning order is refused with a clear error."""
    with pytest.raises(InputError):
        learning_steps(direction, relations)


def test_walk_refuses_bad_bounds(gateway: WriteGateway, engine: Engine, reader: GraphReader) -> None:
    """More than 12 starts, no start, a depth outside 1..64 or a non-positive budget are refused."""
    chain(gateway, 3)
    as_of = reader.as_of()
    cases: list[dict[str, object]] = [
        {"starts": [f"x{i}" for i in range(13)]},
        {"starts": []},
        {"starts": ["n2"], "max_depth": 0},
        {"starts": ["n2"], "budget": 0},
        {"starts": ["n2"], "steps": []},
    ]
    for kwargs in cases:
        options = {"steps": BEFORE, **kwargs}
        with pytest.raises(InputError):
            walk(engine, as_of=as_of, **options)  # type: ignore[arg-type]


def test_walk_gathers_the_closure_in_one_statement(
    gateway: WriteGateway, engine: Engine, reader: GraphReader
) -> None:
    """A needed-before walk returns the whole chain with depths, complete, in one SQL statement."""
    ids = chain(gateway, 8)
    build_graph(
        gateway, ["x", "y"], [("n3", "x", "builds_on"), ("y", "n3", "builds_on"), ("x", "n1", "related")]
    )
    statements: list[str] = []
    engine.connect().close()
    point = reader.as_of()  # a loop settles its point once per question, before it walks

    def record(_c: object, _cur: object, statement: str, *_a: object) -> None:
        if not statement.lstrip().upper().startswith(("BEGIN", "COMMIT", "ROLLBACK")):
            statements.append(statement)

    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        w = walk(engine, ["n7"], as_of=point, steps=BEFORE)
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)
    assert len([s for s in statements if "WITH RECURSIVE" in s.upper()]) == 1
    assert len(statements) == 1, statements
    assert dict(w.depths) == {**{ids[i]: 7 - i for i in range(8)}, "x": 5}
    assert w.complete and w.reached == frozenset(ids[:-1]) | {"x"}
    assert [r.depth for r in w.rows] == sorted(r.depth for r in w.rows)
    unlocks = walk(engine, ["n0"], as_of=reader.as_of(), steps=AFTER)
    assert unlocks.reached == frozenset(ids[1:]) | {"y"}


def test_depth_limit_leaves_a_boundary(gateway: WriteGateway, engine: Engine, reader: GraphReader) -> None:
    """A walk cut by its depth says which concepts it did not expand and is not complete."""
    chain(gateway, 8)
    w = walk(engine, ["n7"], as_of=reader.as_of(), steps=BEFORE, max_depth=3)
    assert w.reached == {"n6", "n5", "n4"} and w.unexpanded == {"n4"}
    assert not w.partial and not w.complete


def test_budget_marks_the_walk_partial(gateway: WriteGateway, engine: Engine, reader: GraphReader) -> None:
    """A walk that hits its row budget is partial, and everything it did not expand is on its boundary."""
    chain(gateway, 12)
    w = walk(engine, ["n11"], as_of=reader.as_of(), steps=BEFORE, budget=4)
    assert w.partial and not w.complete
    assert len(w.depths) <= 6 and w.unexpanded
    assert all(w.depths[c] >= max(w.depths[e] for e in w.expanded) for c in w.unexpanded)


def test_excluded_concepts_are_reached_but_not_walked(
    gateway: WriteGateway, engine: Engine, reader: GraphReader
) -> None:
    """An excluded concept's incoming edge is returned, its own edges are not walked."""
    chain(gateway, 6)
    w = walk(engine, ["n5"], as_of=reader.as_of(), steps=BEFORE, exclude=["n3"])
    assert w.reached == {"n4", "n3"} and w.complete


def test_an_unbounded_walk_expands_each_concept_once(
    gateway: WriteGateway, engine: Engine, reader: GraphReader
) -> None:
    """Without a depth bound the walk's rows are concepts, each expanded once; depths are still least."""
    build_graph(
        gateway,
        ["a", "b", "c", "d"],
        [
            ("b", "a", "prerequisite"),
            ("c", "b", "prerequisite"),
            ("c", "a", "prerequisite"),
            ("d", "c", "prerequisite"),
        ],
    )
    w = walk(engine, ["a"], as_of=reader.as_of(), steps=BEFORE, max_depth=None)
    assert dict(w.depths) == {"a": 0, "b": 1, "c": 1, "d": 2} and w.complete
    assert {r.version_id: r.depth for r in w.rows} == {
        r.version_id: w.depths[r.to_id] if r.from_id != "b" else 2 for r in w.rows
    }
    cut = walk(engine, ["a"], as_of=reader.as_of(), steps=BEFORE, max_depth=None, budget=1)
    assert cut.partial and not cut.complete and cut.unexpanded


def test_cycles_through_builds_on_terminate(
    gateway: WriteGateway, engine: Engine, reader: GraphReader
) -> None:
    """A prerequisite/builds_on mix that closes a learning-order cycle still terminates, each concept once."""
    build_graph(
        gateway,
        ["a", "b", "c"],
        [("a", "b", "prerequisite"), ("b", "c", "prerequisite"), ("a", "c", "builds_on")],
    )
    w = walk(engine, ["a"], as_of=reader.as_of(), steps=BEFORE, max_depth=64)
    assert dict(w.depths) == {"a": 0, "c": 1, "b": 2} and w.complete
    assert len({r.version_id for r in w.rows}) == len(w.rows) == 3


def test_detail_returns_records_for_the_evidence(
    gateway: WriteGateway, engine: Engine, reader: GraphReader
) -> None:
    """With detail, every row comes with its thin edge and the reached concept's row."""
    chain(gateway, 4)
    w = walk(engine, ["n3"], as_of=reader.as_of(), steps=BEFORE, detail=True)
    assert [(n.edge.version_id, n.concept.concept_id, n.from_id, n.direction) for n in w.neighbours] == [
        (r.version_id, r.to_id, r.from_id, "in") for r in w.rows
    ]
    assert all(n.concept.name and n.edge.confidence == 0.9 for n in w.neighbours)


def test_invalidated_edge_is_not_walked_after_its_invalidation(
    gateway: WriteGateway, engine: Engine, clock: ManualClock
) -> None:
    """As of a time after an edge's invalidation the walk stops there; as of before, it goes through."""
    chain(gateway, 5)
    before = clock.now
    clock.advance(timedelta(days=1))
    gateway.invalidate_edge("n1", "n2", "prerequisite", grounding=grounding("dropped"))
    after = clock.now
    assert walk(engine, ["n4"], as_of=AsOf(after, after), steps=BEFORE).reached == {"n3", "n2"}
    assert walk(engine, ["n4"], as_of=AsOf(before, after), steps=BEFORE).reached == {"n3", "n2", "n1", "n0"}
    assert walk(engine, ["n4"], as_of=AsOf(after, before), steps=BEFORE).reached == {"n3", "n2", "n1", "n0"}


# -- properties against networkx -----------------------------------------------------------------

_run = itertools.count()


@st.composite
def dags(draw: st.DrawFn) -> tuple[int, list[tuple[int, int, str]]]:
    """A random graph of learning edges: prerequisite edges go from a lower to a higher index
    (acyclic, as the gateway demands); builds_on edges go either way, so learning-order cycles
    through builds_on occur."""
    n = draw(st.integers(2, 9))
    pairs = draw(
        st.lists(
            st.tuples(
                st.integers(0, n - 1), st.integers(0, n - 1), st.sampled_from(["prerequisite", "builds_on"])
            ),
            max_size=20,
        )
    )
    edges: dict[tuple[int, int, str], None] = {}
    for a, b, rel in pairs:
        if a == b:
            continue
        if rel == "prerequisite" and a > b:
            a, b = b, a
        edges[(a, b, rel)] = None
    return n, list(edges)


def _before_graph(edges: list[tuple[str, str, str]]) -> nx.DiGraph:
    """x -> y when y is needed immediately before x."""
    g = nx.DiGraph()
    for s, t, rel in edges:
        if rel == "prerequisite":
            g.add_edge(t, s)
        else:
            g.add_edge(s, t)
    return g


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graph=dags(), depth=st.integers(1, 6), seed=st.integers(0, 10_000))
def test_walk_equals_networkx_within_depth(
    graph: tuple[int, list[tuple[int, int, str]]],
    depth: int,
    seed: int,
    gateway: WriteGateway,
    engine: Engine,
    clock: ManualClock,
) -> None:
    """Needed-before and unlocks walks reach exactly networkx's descendants/ancestors within the
    depth, at their shortest distance; after invalidating some edges, exactly those of the rest."""
    n, raw = graph
    p = f"r{next(_run)}_"
    ids = [f"{p}{i}" for i in range(n)]
    edges = [(ids[a], ids[b], rel) for a, b, rel in raw]
    build_graph(gateway, ids, edges)
    rnd = random.Random(seed)
    starts = rnd.sample(ids, rnd.randint(1, min(3, n)))
    dropped = [e for e in edges if rnd.random() < 0.3]

    def check(as_of: AsOf, live: list[tuple[str, str, str]]) -> None:
        g = _before_graph(live)
        g.add_nodes_from(ids)
        for steps, graph_ in ((BEFORE, g), (AFTER, g.reverse(copy=True))):
            w = walk(engine, starts, as_of=as_of, steps=steps, max_depth=depth)
            expected = nx.multi_source_dijkstra_path_length(graph_, starts, cutoff=depth)
            assert dict(w.depths) == expected
            assert not w.partial
            deeper = {
                c for c, d in expected.items() if d == depth and any(True for _ in graph_.successors(c))
            }
            assert w.unexpanded <= {c for c, d in expected.items() if d == depth}
            assert deeper <= w.unexpanded

    check(AsOf(clock.now, clock.now), edges)
    g = _before_graph(edges)
    g.add_nodes_from(ids)
    unbounded = walk(engine, starts, as_of=AsOf(clock.now, clock.now), steps=BEFORE, max_depth=None)
    assert dict(unbounded.depths) == nx.multi_source_dijkstra_path_length(g, starts) and unbounded.complete
    clock.advance(timedelta(days=1))
    for s, t, rel in dropped:
        gateway.invalidate_edge(s, t, rel, grounding=grounding("dropped"))
    later = clock.now
    check(AsOf(later, later), [e for e in edges if e not in dropped])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graph=dags(), seed=st.integers(0, 10_000))
def test_fringe_equals_networkx(
    graph: tuple[int, list[tuple[int, int, str]]],
    seed: int,
    gateway: WriteGateway,
    engine: Engine,
    clock: ManualClock,
) -> None:
    """A fringe holds the starts' needed-before closure and, for every concept one learning step
    after it, all of that concept's needs: what a learner can take up next is decided from its
    rows alone, and equals networkx's."""
    n, raw = graph
    p = f"f{next(_run)}_"
    ids = [f"{p}{i}" for i in range(n)]
    edges = [(ids[a], ids[b], rel) for a, b, rel in raw]
    build_graph(gateway, ids, edges)
    rnd = random.Random(seed)
    starts = rnd.sample(ids, rnd.randint(1, min(3, n)))
    g = _before_graph(edges)  # x -> y: y is needed immediately before x
    g.add_nodes_from(ids)
    closure = set(starts).union(*(nx.descendants(g, s) for s in starts))
    after = {c for c in ids if c not in closure and any(t in closure for t in g.successors(c))}
    expected_next = {c for c in after if set(g.successors(c)) <= closure}

    w = fringe(engine, starts, as_of=AsOf(clock.now, clock.now))
    needs: dict[str, set[str]] = {}
    for row in w.rows:
        needs.setdefault(row.from_id, set()).add(row.to_id)
    assert w.expanded == closure | after and not w.partial
    assert {c for c in after if needs.get(c, set()) <= closure} == expected_next
    assert all(needs.get(c, set()) == set(g.successors(c)) for c in w.expanded)


# -- paths ---------------------------------------------------------------------------------------


def test_all_shortest_paths_are_listed(gateway: WriteGateway, engine: Engine, reader: GraphReader) -> None:
    """Two equally short learning paths from a to d are both listed, in learning order, and proven."""
    build_graph(
        gateway,
        ["a", "b", "c", "d", "e", "f"],
        [
            ("a", "b", "prerequisite"),
            ("b", "d", "prerequisite"),
            ("c", "a", "builds_on"),  # c builds on a: a comes first
            ("c", "d", "prerequisite"),
            ("a", "e", "prerequisite"),
            ("e", "f", "prerequisite"),
            ("f", "d", "prerequisite"),
        ],
    )
    w = walk(engine, ["d"], as_of=reader.as_of(), steps=BEFORE, max_depth=8)
    found = shortest_paths(w, "a", "d")
    assert found.length == 2 and found.proven and not found.truncated
    assert sorted(tuple((r.source_id, r.target_id) for r in path) for path in found.paths) == [
        (("a", "b"), ("b", "d")),
        (("c", "a"), ("c", "d")),
    ]


def test_no_path_and_unproven_paths(gateway: WriteGateway, engine: Engine, reader: GraphReader) -> None:
    """No learning path gives no path; a depth-cut walk does not prove a path shortest."""
    ids = chain(gateway, 6)
    build_graph(gateway, ["z"], [("n5", "z", "related")])
    w = walk(engine, ["n5"], as_of=reader.as_of(), steps=BEFORE, max_depth=8)
    assert shortest_paths(w, "z", "n5").paths == ()
    assert shortest_paths(w, "z", "n5").proven
    cut = walk(engine, ["n5"], as_of=reader.as_of(), steps=BEFORE, max_depth=2)
    assert shortest_paths(cut, "n0", "n5").length is None and not shortest_paths(cut, "n0", "n5").proven
    assert shortest_paths(w, ids[0], "n5").length == 5
    with pytest.raises(InputError):
        shortest_paths(w, "n5", "n0")


# -- lessons -------------------------------------------------------------------------------------


def test_lessons_as_of_time(gateway: WriteGateway, engine: Engine, clock: ManualClock) -> None:
    """Lessons are read per concept as of a time: an unlinked lesson is gone afterwards only."""
    chain(gateway, 3)
    gateway.link_lesson("L1", "n0", grounding=grounding("l1"), title="One")
    gateway.link_lesson("L2", "n0", grounding=grounding("l2"), title="Two")
    gateway.link_lesson("L2", "n1", grounding=grounding("l2b"), title="Two")
    before = clock.now
    clock.advance(timedelta(days=1))
    gateway.unlink_lesson("L2", "n0", grounding=grounding("moved"))
    after = clock.now
    assert lessons_for(engine, ["n0", "n1", "n2"], as_of=AsOf(before, before)) == {
        "n0": ("L1", "L2"),
        "n1": ("L2",),
    }
    assert lessons_for(engine, ["n0", "n1", "n2"], as_of=AsOf(after, after)) == {"n0": ("L1",), "n1": ("L2",)}


# -- query plans ---------------------------------------------------------------------------------


def _layered(gateway: WriteGateway, engine: Engine) -> None:
    rnd = random.Random(11)
    ids = [f"c{i:04d}" for i in range(600)]
    edges: set[tuple[str, str, str]] = set()
    while len(edges) < 3000:
        a, b = sorted(rnd.sample(range(600), 2))
        rel = rnd.choice(["prerequisite", "builds_on", "related", "part_of"])
        edges.add((ids[a], ids[b], rel) if rel != "builds_on" else (ids[b], ids[a], rel))
    build_graph(gateway, ids, sorted(edges))
    with engine.begin() as conn:
        conn.exec_driver_sql("ANALYZE")


def test_walk_plan_uses_the_edge_indexes(gateway: WriteGateway, engine: Engine, reader: GraphReader) -> None:
    """Every step of the walk, bounded or not, enters concept_edges through an index on the end it
    leaves from."""
    _layered(gateway, engine)
    for depth in (16, None):
        _assert_indexed(
            "\n".join(explain_walk(engine, ["c0500", "c0400"], reader.as_of(), max_depth=depth)), engine
        )


def _assert_indexed(plan: str, engine: Engine) -> None:
    if engine.dialect.name == "sqlite":
        assert "SEARCH concept_edges USING INDEX ix_concept_edges_key_recorded (source_id=?)" in plan
        assert "SEARCH concept_edges USING INDEX ix_concept_edges_target_recorded (target_id=?" in plan
        assert "SCAN concept_edges" not in plan
    else:
        assert "ix_concept_edges_key_recorded" in plan
        assert "ix_concept_edges_target_recorded" in plan
        assert "Seq Scan on concept_edges" not in plan
