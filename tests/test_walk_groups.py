"""Walks through requirement groups, on both engines: one recursive statement steps from a target
into its groups' members (and back for unlocks), each row saying which group and option it came
through; a walk that does not ask for groups is what it always was."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from data_plane import AsOf, GraphReader, WriteGateway
from data_plane.testing import ManualClock, build_graph, grounding
from data_plane.walks import NEEDED_BEFORE, REQUIREMENT, UNLOCKS, learning_steps, walk

T0, T1 = datetime(2025, 1, 1, tzinfo=UTC), datetime(2025, 3, 1, tzinfo=UTC)
WITH_GROUPS = ("prerequisite", "builds_on", REQUIREMENT)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2025, 6, 1, tzinfo=UTC))


@pytest.fixture
def graph(gateway: WriteGateway) -> WriteGateway:
    """t needs d (an edge) and one of {a} or {b, c} (a group, invalidated from T1 on as now
    known); e comes before a."""
    build_graph(
        gateway,
        ["t", "a", "b", "c", "d", "e"],
        [("e", "a", "prerequisite"), ("d", "t", "prerequisite")],
        valid_at=T0,
    )
    gateway.assert_requirement(
        "t.1", target_id="t", needs=1, options=[["a"], ["b", "c"]], grounding=grounding(), valid_at=T0
    )
    return gateway


@contextmanager
def _statements(engine: Engine) -> Iterator[list[str]]:
    seen: list[str] = []

    def capture(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)

    sa.event.listen(engine, "before_cursor_execute", capture)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", capture)


def _steps(w: Any) -> set[tuple[Any, ...]]:
    return {(r.source_id, r.target_id, r.relation, r.group_id, r.option, r.depth) for r in w.rows}


@pytest.mark.parametrize("max_depth", [None, 4])
def test_a_needed_before_walk_steps_into_group_members_in_one_statement(
    graph: WriteGateway, reader: GraphReader, engine: Engine, max_depth: int | None
) -> None:
    """From t the walk reaches d by its edge, a, b and c through group t.1 (with their options), and e behind a."""
    with _statements(engine) as seen:
        w = walk(
            engine,
            ["t"],
            as_of=reader.as_of(),
            steps=learning_steps(NEEDED_BEFORE, WITH_GROUPS),
            max_depth=max_depth,
        )
    assert len([s for s in seen if s.lstrip().upper().startswith("WITH")]) == 1
    assert _steps(w) == {
        ("d", "t", "prerequisite", None, None, 1),
        ("a", "t", REQUIREMENT, "t.1", 1, 1),
        ("b", "t", REQUIREMENT, "t.1", 2, 1),
        ("c", "t", REQUIREMENT, "t.1", 2, 1),
        ("e", "a", "prerequisite", None, None, 2),
    }
    assert {r.needs for r in w.rows if r.through_group} == {1}
    assert dict(w.depths) == {"t": 0, "a": 1, "b": 1, "c": 1, "d": 1, "e": 2}
    assert w.complete


def test_an_unlocks_walk_steps_from_a_member_to_its_groups_target(
    graph: WriteGateway, reader: GraphReader, engine: Engine
) -> None:
    """From e the walk reaches a by its edge and t through the group a is an option of."""
    w = walk(engine, ["e"], as_of=reader.as_of(), steps=learning_steps(UNLOCKS, WITH_GROUPS), max_depth=None)
    assert _steps(w) == {("e", "a", "prerequisite", None, None, 1), ("a", "t", REQUIREMENT, "t.1", 1, 2)}


def test_a_walk_without_groups_is_unchanged_and_never_reads_them(
    graph: WriteGateway, reader: GraphReader, engine: Engine
) -> None:
    """Without REQUIREMENT in its relations a walk reads no group table and returns the edges alone."""
    with _statements(engine) as seen:
        w = walk(engine, ["t"], as_of=reader.as_of(), steps=learning_steps(NEEDED_BEFORE), max_depth=None)
    assert not any("requirement" in s for s in seen)
    assert _steps(w) == {("d", "t", "prerequisite", None, None, 1)}


def test_a_closed_group_is_not_stepped_through_after_it_closed(
    graph: WriteGateway, reader: GraphReader, engine: Engine
) -> None:
    """After the group is invalidated from T1, a walk as of T1 reaches d only; as of T0 it still reaches the members."""
    graph.invalidate_requirement("t.1", grounding=grounding("dropped"), invalid_at=T1)
    known = reader.as_of().recorded_at
    steps = learning_steps(NEEDED_BEFORE, WITH_GROUPS)
    after = walk(engine, ["t"], as_of=AsOf(T1, known), steps=steps, max_depth=None)
    before = walk(engine, ["t"], as_of=AsOf(T0, known), steps=steps, max_depth=None)
    assert set(after.depths) == {"t", "d"}
    assert set(before.depths) == {"t", "a", "b", "c", "d", "e"}


def test_detail_gives_the_concepts_reached_through_groups_apart_from_edge_neighbours(
    graph: WriteGateway, reader: GraphReader, engine: Engine
) -> None:
    """With detail, edge steps are Neighbours (edges only) and group steps' concepts are in group_concepts."""
    w = walk(
        engine,
        ["t"],
        as_of=reader.as_of(),
        steps=learning_steps(NEEDED_BEFORE, WITH_GROUPS),
        max_depth=None,
        detail=True,
    )
    assert {n.edge.relation for n in w.neighbours} == {"prerequisite"}
    assert set(w.group_concepts) == {"a", "b", "c"}
    assert w.group_concepts["a"].name == "a"


def test_requirement_steps_need_an_edge_relation_and_one_direction() -> None:
    """A walk of groups alone is refused: learning order is edges first."""
    from data_plane.errors import InputError

    with pytest.raises(InputError):
        learning_steps(NEEDED_BEFORE, (REQUIREMENT,))
