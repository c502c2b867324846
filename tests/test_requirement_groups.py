"""Requirement groups on both engines: written only through the gateway (group and members in one
write), refused whole when malformed, revised and invalidated without deleting anything, read as
of any point."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from data_plane import (
    AsOf,
    GraphReader,
    InactiveEndpoint,
    KeyExists,
    NotFound,
    PrerequisiteCycle,
    RequirementRejected,
    RequirementWrite,
    Write,
    WriteGateway,
    schema,
)
from data_plane.testing import ManualClock, build_graph, grounding

T = [datetime(2025, m, 1, tzinfo=UTC) for m in range(1, 13)]
COURSES = ["cse_101", "cse_21", "math_154", "cse_12", "dsc_30", "dsc_20"]


@pytest.fixture
def clock() -> ManualClock:
    """A clock at 2025-06-01 that moves a second per read."""
    return ManualClock(datetime(2025, 6, 1, tzinfo=UTC))


@pytest.fixture
def graph(gateway: WriteGateway) -> WriteGateway:
    """Six courses valid from 2025-01-01 and one plain prerequisite (cse_12 before dsc_30)."""
    build_graph(gateway, COURSES, [("cse_12", "dsc_30", "prerequisite")], valid_at=T[0])
    return gateway


def _count(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {
            t.name: conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one()
            for t in schema.VERSIONED_TABLES
        }


def _assert_101(gw: WriteGateway, **kw: Any) -> None:
    gw.assert_requirement(
        "cse_101.1",
        target_id="cse_101",
        needs=1,
        options=[["cse_21"], ["math_154"]],
        grounding=grounding("one of CSE 21, MATH 154"),
        valid_at=kw.pop("valid_at", T[0]),
        **kw,
    )


def test_a_group_and_its_members_are_written_and_read_together(
    graph: WriteGateway, reader: GraphReader
) -> None:
    """An asserted group reads back with its k, its options by number and every member's grounding."""
    _assert_101(graph)
    (group,) = reader.requirements(["cse_101"])["cse_101"]
    assert (group.group_id, group.needs, group.options) == ("cse_101.1", 1, (("cse_21",), ("math_154",)))
    assert group.option_numbers == (1, 2)
    assert {m.grounding.reason for m in group.members} == {"one of CSE 21, MATH 154"}
    assert group.satisfied_by({"math_154"}) and not group.satisfied_by({"cse_12"})
    assert reader.requirements_naming(["math_154"])["math_154"] == (group,)


@pytest.mark.parametrize(
    ("options", "needs", "error", "field"),
    [
        ([["cse_21"], ["nope"]], 1, InactiveEndpoint, "concept_id"),
        ([["cse_21"], ["cse_101"]], 1, RequirementRejected, "concept_id"),
        ([["cse_21"], ["math_154"]], 3, RequirementRejected, "needs"),
        ([["cse_21"], ["math_154"]], 0, RequirementRejected, "needs"),
        ([["cse_21"], []], 1, RequirementRejected, "options"),
    ],
)
def test_a_malformed_group_is_refused_and_nothing_is_written(
    graph: WriteGateway, engine: Engine, options: Any, needs: int, error: type[Exception], field: str
) -> None:
    """Unknown members, the target as a member, k out of 1..n and an empty option are refused by name, whole."""
    before = _count(engine)
    with pytest.raises(error) as exc:
        graph.assert_requirement(
            "g", target_id="cse_101", needs=needs, options=options, grounding=grounding(), valid_at=T[0]
        )
    assert getattr(exc.value, "field", None) == field
    assert _count(engine) == before


def test_a_group_id_that_holds_is_refused(graph: WriteGateway) -> None:
    """Asserting a group id again while it holds is KeyExists."""
    _assert_101(graph)
    with pytest.raises(KeyExists):
        _assert_101(graph)


def test_a_group_closing_a_learning_order_cycle_is_refused(graph: WriteGateway, engine: Engine) -> None:
    """cse_12 comes before dsc_30; a group letting cse_12 be met only through dsc_30 leaves no order to learn them in."""
    before = _count(engine)
    with pytest.raises(PrerequisiteCycle) as exc:
        graph.assert_requirement(
            "cse_12.1",
            target_id="cse_12",
            needs=1,
            options=[["dsc_30"], ["dsc_30", "dsc_20"]],
            grounding=grounding(),
            valid_at=T[0],
        )
    assert exc.value.cycle[0] == exc.value.cycle[-1]
    assert set(exc.value.cycle) == {"cse_12", "dsc_30"}
    assert _count(engine) == before


def test_a_cycle_through_an_alternative_that_can_be_entered_is_accepted(
    graph: WriteGateway, reader: GraphReader
) -> None:
    """cse_12 before dsc_30, and cse_12 met by dsc_30 or dsc_20: learn dsc_20 first, so it is a learning order."""
    graph.assert_requirement(
        "cse_12.1",
        target_id="cse_12",
        needs=1,
        options=[["dsc_30"], ["dsc_20"]],
        grounding=grounding(),
        valid_at=T[0],
    )
    assert reader.requirement("cse_12.1").options == (("dsc_30",), ("dsc_20",))


def test_an_edge_leaving_no_way_into_a_group_is_refused(graph: WriteGateway) -> None:
    """With cse_101 met by cse_21 or math_154, edges making both need cse_101 leave no order: refused whole."""
    _assert_101(graph)
    edges = [
        Write.edge("cse_101", "math_154", "prerequisite", grounding=grounding(), valid_at=T[0]),
        Write.edge("cse_101", "cse_21", "prerequisite", grounding=grounding(), valid_at=T[0]),
    ]
    with pytest.raises(PrerequisiteCycle):
        graph.apply(edges)
    graph.apply(edges[:1])  # one of them alone leaves cse_21 as the way in


def test_revising_k_closes_the_old_version_and_keeps_what_held_before(
    graph: WriteGateway, reader: GraphReader, engine: Engine
) -> None:
    """A revision of needs from valid time T keeps the old needs before T, as now known; nothing is deleted."""
    graph.assert_requirement(
        "g", target_id="cse_101", needs=1, options=[["cse_21"], ["math_154"], ["dsc_20"]],
        grounding=grounding(), valid_at=T[0],
    )  # fmt: skip
    before = _count(engine)
    graph.revise_requirement("g", needs=2, grounding=grounding("now two of"), valid_at=T[3])
    now = reader.as_of()
    assert reader.requirement("g", as_of=AsOf(T[1], now.recorded_at)).needs == 1
    assert reader.requirement("g", as_of=AsOf(T[4], now.recorded_at)).needs == 2
    assert _count(engine)["requirement_groups"] == before["requirement_groups"] + 2  # kept part + revision
    assert _count(engine)["requirement_members"] == before["requirement_members"]  # members untouched
    ops = [v.stamp.op for v in reader.history("requirement_groups", ("g",))]
    assert ops == ["assert", "revise", "revise"]


def test_revising_options_closes_dropped_members_and_keeps_unchanged_ones(
    graph: WriteGateway, reader: GraphReader
) -> None:
    """New options from T: before T the old ones hold as now known; an unchanged option keeps its number and version."""
    _assert_101(graph)
    kept = {m.concept_id: m.version_id for m in reader.requirement("cse_101.1").members}
    graph.revise_requirement(
        "cse_101.1",
        options=[["math_154"], ["dsc_20", "dsc_30"]],
        grounding=grounding("revised"),
        valid_at=T[3],
    )
    known = reader.as_of().recorded_at
    old = reader.requirement("cse_101.1", as_of=AsOf(T[1], known))
    new = reader.requirement("cse_101.1", as_of=AsOf(T[4], known))
    assert old.options == (("cse_21",), ("math_154",))
    assert new.options == (("dsc_20", "dsc_30"), ("math_154",))
    assert dict(zip(new.option_numbers, new.options, strict=True))[2] == ("math_154",)
    assert next(m for m in new.members if m.concept_id == "math_154").version_id == kept["math_154"]
    dropped = reader.history("requirement_members", ("cse_101.1", "1", "cse_21"))
    assert [v.stamp.op for v in dropped] == ["assert", "invalidate"]
    assert dropped[-1].stamp.invalid_at == T[3]


def test_revising_to_fewer_options_than_needed_is_refused(graph: WriteGateway) -> None:
    """A revision leaving a 2-of group one option is refused whole."""
    graph.assert_requirement(
        "g", target_id="cse_101", needs=2, options=[["cse_21"], ["math_154"], ["dsc_20"]],
        grounding=grounding(), valid_at=T[0],
    )  # fmt: skip
    with pytest.raises(RequirementRejected):
        graph.revise_requirement("g", options=[["cse_21"]], grounding=grounding())


def test_invalidating_a_group_closes_its_members_and_keeps_its_past(
    graph: WriteGateway, reader: GraphReader
) -> None:
    """An invalidated group is gone from T on and still there before T; its members are closed alike."""
    _assert_101(graph)
    result = graph.invalidate_requirement("cse_101.1", grounding=grounding("dropped"), invalid_at=T[2])
    assert {v.table for v in result.cascaded} == {"requirement_members"}
    known = reader.as_of().recorded_at
    assert reader.requirements(["cse_101"], as_of=AsOf(T[3], known)) == {}
    assert len(reader.requirement("cse_101.1", as_of=AsOf(T[1], known)).members) == 2
    history = reader.requirement_history("cse_101.1")
    assert [v.stamp.op for v in history if v.table == "requirement_groups"] == ["assert", "invalidate"]


def test_a_group_can_be_asserted_again_after_it_was_invalidated(
    graph: WriteGateway, reader: GraphReader
) -> None:
    """assert, invalidate, assert: the earlier period still holds as now known."""
    _assert_101(graph)
    graph.invalidate_requirement("cse_101.1", grounding=grounding("dropped"), invalid_at=T[2])
    graph.assert_requirement(
        "cse_101.1", target_id="cse_101", needs=1, options=[["cse_12"], ["dsc_30"]],
        grounding=grounding("back"), valid_at=T[4],
    )  # fmt: skip
    known = reader.as_of().recorded_at
    assert reader.requirement("cse_101.1", as_of=AsOf(T[1], known)).options == (("cse_21",), ("math_154",))
    assert reader.requirement("cse_101.1", as_of=AsOf(T[5], known)).options == (("cse_12",), ("dsc_30",))


def test_closing_a_concept_a_group_names_closes_the_group(graph: WriteGateway, reader: GraphReader) -> None:
    """Invalidating a member concept closes the whole group (and its members) over the same portion."""
    _assert_101(graph)
    result = graph.invalidate_concept("math_154", grounding=grounding("retired"), invalid_at=T[2])
    assert {v.table for v in result.cascaded} == {"requirement_groups", "requirement_members"}
    known = reader.as_of().recorded_at
    assert reader.requirements(["cse_101"], as_of=AsOf(T[3], known)) == {}
    assert reader.requirements(["cse_101"], as_of=AsOf(T[1], known))["cse_101"][0].needs == 1


def test_closing_the_target_closes_its_groups(graph: WriteGateway, reader: GraphReader) -> None:
    """Retracting the target retracts its groups and their members."""
    _assert_101(graph)
    graph.invalidate_concept("cse_101", grounding=grounding("withdrawn"), retract=True)
    assert [v.stamp.op for v in reader.history("requirement_groups", ("cse_101.1",))][-1] == "retract"
    with pytest.raises(NotFound):
        reader.requirement("cse_101.1", as_of=AsOf(T[1], reader.as_of().recorded_at))


def test_a_member_outside_its_group_is_refused(graph: WriteGateway) -> None:
    """A single member write past its group's end is refused: members hold only where their group does."""
    graph.assert_requirement(
        "g", target_id="cse_101", needs=1, options=[["cse_21"], ["math_154"]],
        grounding=grounding(), valid_at=T[0], invalid_at=T[3],
    )  # fmt: skip
    w = Write("requirement_members", ("g", "3", "dsc_20"), "assert", grounding(), {}, T[2], T[5])
    with pytest.raises(RequirementRejected):
        graph.apply([w])


def test_a_group_target_never_changes(graph: WriteGateway) -> None:
    """A revision naming another target is refused."""
    _assert_101(graph)
    with pytest.raises(RequirementRejected) as exc:
        graph.apply([RequirementWrite("cse_101.1", grounding(), "revise", target_id="cse_12", needs=1)])
    assert exc.value.field == "target_id"


def test_an_option_number_that_is_not_a_number_is_refused(graph: WriteGateway) -> None:
    """A member's option is a positive decimal number."""
    _assert_101(graph)
    w = Write("requirement_members", ("cse_101.1", "01", "dsc_20"), "assert", grounding(), {}, T[0])
    with pytest.raises(RequirementRejected):
        graph.apply([w])


def test_plain_graph_writes_are_unchanged_by_groups(engine: Engine) -> None:
    """Writing a group leaves every edge and concept version as it was."""
    gw = WriteGateway(engine, clock=ManualClock(datetime(2025, 6, 1, tzinfo=UTC)))
    build_graph(gw, COURSES, [("cse_12", "dsc_30", "prerequisite")], valid_at=T[0])
    before = {k: v for k, v in _count(engine).items() if not k.startswith("requirement")}
    _assert_101(gw)
    assert {k: v for k, v in _count(engine).items() if not k.startswith("requirement")} == before
