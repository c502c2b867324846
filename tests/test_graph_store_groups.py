"""Requirement groups through LlamaIndex's PropertyGraphStore: a Requirement node per group, a
``requires`` relation from its target and an ``option`` relation to each member."""

from __future__ import annotations

import pytest
from llama_index.core.graph_stores.types import Triplet

from control_plane.planning.graph_store import OPTION, REQUIREMENT_LABEL, REQUIRES, SQLPropertyGraphStore
from data_plane import GraphReader, WriteGateway
from data_plane.testing import build_graph, grounding


@pytest.fixture
def store(gateway: WriteGateway, reader: GraphReader) -> SQLPropertyGraphStore:
    """t needs one of {a} or {b, c}; d comes before t by an edge."""
    build_graph(gateway, ["t", "a", "b", "c", "d"], [("d", "t", "prerequisite")])
    gateway.assert_requirement(
        "t.1", target_id="t", needs=1, options=[["a"], ["b", "c"]], grounding=grounding("one of")
    )
    return SQLPropertyGraphStore(reader, gateway=gateway)


def _shape(triplets: list[Triplet]) -> set[tuple[str, str, str]]:
    return {(s.name, r.label, o.name) for s, r, o in triplets}


def test_get_triplets_reads_a_group_as_requires_and_option_relations(store: SQLPropertyGraphStore) -> None:
    """All triplets hold the edge, t -requires-> t.1 and t.1 -option-> a, b, c with option numbers."""
    triplets = store.get_triplets()
    assert _shape(triplets) == {
        ("d", "prerequisite", "t"),
        ("t", REQUIRES, "t.1"),
        ("t.1", OPTION, "a"),
        ("t.1", OPTION, "b"),
        ("t.1", OPTION, "c"),
    }
    (node,) = [o for _, r, o in triplets if r.label == REQUIRES]
    assert node.label == REQUIREMENT_LABEL and node.properties["needs"] == 1
    assert node.properties["options"] == [["a"], ["b", "c"]]
    assert {o.name: r.properties["option"] for _, r, o in triplets if r.label == OPTION} == {
        "a": 1,
        "b": 2,
        "c": 2,
    }


def test_a_member_names_the_group_it_is_an_option_of(store: SQLPropertyGraphStore) -> None:
    """Triplets of b are its group's: the requires relation and every option of it."""
    assert ("t", REQUIRES, "t.1") in _shape(store.get_triplets(entity_names=["b"]))


def test_relation_names_leave_groups_out_unless_asked(store: SQLPropertyGraphStore) -> None:
    """Asking for prerequisite relations only gives no group triplets; asking for option gives only those."""
    assert _shape(store.get_triplets(relation_names=["prerequisite"])) == {("d", "prerequisite", "t")}
    assert {r for _, r, _ in _shape(store.get_triplets(relation_names=[OPTION]))} == {OPTION}
