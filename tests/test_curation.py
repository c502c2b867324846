"""Curation on both engines: what was invalidated may be asserted again; names do not silently
repeat; writers wait their turn for the write lock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from data_plane import AsOf, GraphReader, KeyExists, WriteGateway
from data_plane.testing import ManualClock, build_graph, grounding

T0 = datetime(2025, 1, 1, tzinfo=UTC)


# -- asserting again what was invalidated ------------------------------------------------------


def _ops(reader: GraphReader, table: str, key: tuple[str, ...]) -> list[str]:
    return [v.stamp.op for v in reader.history(table, key)]


def test_an_invalidated_edge_can_be_asserted_again(gateway: WriteGateway, reader: GraphReader) -> None:
    """assert, invalidate, assert: the edge is in force again, from the new assertion on, with its
    own grounding, and the history shows all three."""
    build_graph(gateway, ["a", "b"])
    gateway.assert_edge("a", "b", "prerequisite", grounding=grounding("first"))
    gateway.invalidate_edge("a", "b", "prerequisite", grounding=grounding("dropped"))
    again = gateway.assert_edge("a", "b", "prerequisite", grounding=grounding("back in the 2026 unit"))
    assert again.grounding.reason == "back in the 2026 unit"
    assert again.stamp.invalid_at is None and again.stamp.supersedes_id is not None
    assert _ops(reader, "concept_edges", ("a", "b", "prerequisite")) == ["assert", "invalidate", "assert"]
    assert reader.edge("a", "b", "prerequisite").stamp.version_id == again.stamp.version_id


def test_what_was_known_before_the_reassertion_is_kept(gateway: WriteGateway, reader: GraphReader) -> None:
    """As known before the new assertion, the edge was closed; as known now, it holds from the new
    assertion's valid time (one current version per key: its earlier period is history)."""
    build_graph(gateway, ["a", "b"])
    gateway.assert_edge("a", "b", "prerequisite", grounding=grounding())
    closed = gateway.invalidate_edge("a", "b", "prerequisite", grounding=grounding("dropped"))
    again = gateway.assert_edge("a", "b", "prerequisite", grounding=grounding("back"))
    before = AsOf(again.stamp.valid_at, closed.stamp.recorded_at)
    assert [e.key for e in reader.snapshot(before).edges] == []
    assert [e.key for e in reader.snapshot(AsOf(again.stamp.valid_at, again.stamp.recorded_at)).edges] == [
        "a>prerequisite>b"
    ]


def test_an_invalidated_concept_can_be_asserted_again(gateway: WriteGateway, reader: GraphReader) -> None:
    """A concept closed by an invalidation is asserted again with its new content; the edges its
    invalidation closed stay closed until they are asserted again too."""
    build_graph(gateway, ["a", "b"], [("a", "b", "related")])
    gateway.invalidate_concept("a", grounding=grounding("withdrawn"))
    back = gateway.assert_concept("a", name="A, revived", grounding=grounding("reinstated"))
    assert back.name == "A, revived" and reader.concept("a").name == "A, revived"
    assert _ops(reader, "concepts", ("a",)) == ["assert", "invalidate", "assert"]
    assert reader.snapshot().edges == ()
    gateway.assert_edge("a", "b", "related", grounding=grounding("related again"))
    assert [e.key for e in reader.snapshot().edges] == ["a>related>b"]


def test_an_unlinked_lesson_can_be_linked_again(gateway: WriteGateway, reader: GraphReader) -> None:
    """lesson link, unlink, link: the link is in force again."""
    build_graph(gateway, ["a"])
    gateway.link_lesson("L1", "a", grounding=grounding("first"), title="Lesson one")
    gateway.unlink_lesson("L1", "a", grounding=grounding("postponed"))
    gateway.link_lesson("L1", "a", grounding=grounding("rescheduled"))
    assert _ops(reader, "lesson_concepts", ("L1", "a")) == ["assert", "invalidate", "assert"]
    assert [v.key for v, _ in reader.lesson_links(["a"])] == [("L1", "a")]


def test_an_edge_that_still_holds_is_not_asserted_twice(gateway: WriteGateway) -> None:
    """An assert on a key whose current version holds is refused, naming the version."""
    build_graph(gateway, ["a", "b"], [("a", "b", "prerequisite")])
    with pytest.raises(KeyExists, match=r"already exists \(version \d+\); revise it instead"):
        gateway.assert_edge("a", "b", "prerequisite", grounding=grounding())


def test_a_reassertion_starts_no_earlier_than_the_invalidation(engine: object, clock: ManualClock) -> None:
    """An edge invalidated as of a future time holds until then: asserting it again from before
    that time is refused with the time it may start from; from then on it is accepted."""
    gateway = WriteGateway(engine, clock=clock)  # type: ignore[arg-type]
    build_graph(gateway, ["a", "b"], valid_at=T0 - timedelta(days=10))
    gateway.assert_edge("a", "b", "related", grounding=grounding(), valid_at=T0 - timedelta(days=10))
    end = T0 + timedelta(days=30)
    gateway.invalidate_edge("a", "b", "related", grounding=grounding("ends"), invalid_at=end)
    with pytest.raises(KeyExists, match="holds until 2025-01-31T00:00:00Z") as info:
        gateway.assert_edge("a", "b", "related", grounding=grounding("again"))
    assert info.value.field == "valid_at"
    again = gateway.assert_edge("a", "b", "related", grounding=grounding("again"), valid_at=end)
    assert again.stamp.valid_at == end and again.stamp.invalid_at is None
