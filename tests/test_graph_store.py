"""The LlamaIndex PropertyGraphStore over the SQL graph, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from llama_index.core import MockEmbedding, PropertyGraphIndex
from llama_index.core.graph_stores.types import ChunkNode, EntityNode, Relation
from llama_index.core.llms import MockLLM
from llama_index.core.vector_stores.types import VectorStoreQuery

from control_plane.planning.graph_store import SeedRetriever, SQLPropertyGraphStore
from data_plane import GraphReader, GroundingRejected, InputError, WriteGateway
from data_plane.testing import build_graph, grounding

GROUND = {"confidence": 0.9, "reason": "test", "source": "tests", "evidence": {"doc": "t"}}


@pytest.fixture
def store(gateway: WriteGateway, reader: GraphReader) -> SQLPropertyGraphStore:
    build_graph(
        gateway,
        [("a", "Alpha"), ("b", "Beta"), ("c", "Gamma"), ("d", "Delta")],
        [("a", "b", "prerequisite"), ("b", "c", "builds_on"), ("c", "d", "related"), ("a", "d", "part_of")],
    )
    return SQLPropertyGraphStore(reader, gateway=gateway)


def test_get_by_ids_returns_concept_nodes(store: SQLPropertyGraphStore) -> None:
    """Nodes are EntityNodes labelled Concept, named by id, with name, version and grounding properties."""
    (node,) = store.get(ids=["a"])
    assert isinstance(node, EntityNode) and node.label == "Concept" and node.id == "a"
    assert node.properties["name"] == "Alpha" and node.properties["version_id"] > 0
    assert node.properties["grounding"]["source"] == "tests"


def test_get_by_properties(store: SQLPropertyGraphStore) -> None:
    """Property filters select matching concepts only."""
    assert [n.id for n in store.get(properties={"name": "Gamma"})] == ["c"]


def test_get_triplets_filters_by_entity_and_relation(store: SQLPropertyGraphStore) -> None:
    """Triplets touching an entity can be narrowed to relation names."""
    all_b = store.get_triplets(entity_names=["b"])
    assert {t[1].label for t in all_b} == {"prerequisite", "builds_on"}
    only = store.get_triplets(entity_names=["b"], relation_names=["builds_on"])
    assert [(s.id, r.label, t.id) for s, r, t in only] == [("b", "builds_on", "c")]


def test_rel_map_walks_both_directions_and_ignores_relations(store: SQLPropertyGraphStore) -> None:
    """get_rel_map follows edges both ways, skips ignored relations, and applies the limit afterwards."""
    seeds = store.get(ids=["b"])
    full = store.get_rel_map(seeds, depth=2)
    assert {r.label for _, r, _ in full} == {"prerequisite", "builds_on", "related", "part_of"}
    no_related = store.get_rel_map(seeds, depth=2, ignore_rels=["related"])
    assert "related" not in {r.label for _, r, _ in no_related}
    assert len(store.get_rel_map(seeds, depth=2, limit=2, ignore_rels=["related"])) == 2


def test_rel_map_sees_only_active_edges(store: SQLPropertyGraphStore, gateway: WriteGateway) -> None:
    """An invalidated edge is not in the rel map."""
    gateway.invalidate_edge("a", "b", "prerequisite", grounding=grounding("superseded"))
    assert "prerequisite" not in {r.label for _, r, _ in store.get_rel_map(store.get(ids=["b"]), depth=1)}


def test_upsert_with_grounding_writes_versions(store: SQLPropertyGraphStore, reader: GraphReader) -> None:
    """Grounded nodes and relations are written through the gateway."""
    store.upsert_nodes([EntityNode(name="e", label="Concept", properties={"name": "Epsilon", **GROUND})])
    store.upsert_relations([Relation(label="builds_on", source_id="e", target_id="a", properties=GROUND)])
    assert reader.concept("e").name == "Epsilon"
    assert reader.edge("e", "a", "builds_on").grounding.reason == "test"


def test_upsert_without_grounding_is_refused(store: SQLPropertyGraphStore, reader: GraphReader) -> None:
    """A node without grounding properties is refused and nothing is written."""
    with pytest.raises(GroundingRejected, match="grounding"):
        store.upsert_nodes([EntityNode(name="f", label="Concept", properties={"name": "F"})])
    assert "f" not in reader.concepts(["f"])


def test_chunk_nodes_are_refused(store: SQLPropertyGraphStore) -> None:
    """Only concept entities can be stored."""
    with pytest.raises(InputError, match="EntityNode"):
        store.upsert_nodes([ChunkNode(text="hello", properties=GROUND)])


def test_delete_never_deletes(store: SQLPropertyGraphStore, reader: GraphReader) -> None:
    """delete invalidates: the concept leaves the current graph, but its history keeps every version."""
    store.delete(ids=["d"], properties=GROUND)
    assert store.get(ids=["d"]) == []
    history = reader.history("concepts", ("d",))
    assert [v.stamp.op for v in history] == ["assert", "invalidate"]


def test_delete_without_grounding_is_refused(store: SQLPropertyGraphStore) -> None:
    """delete needs a grounding record in properties."""
    with pytest.raises(GroundingRejected):
        store.delete(ids=["d"])
    assert store.get(ids=["d"])


def test_delete_relations_only(store: SQLPropertyGraphStore) -> None:
    """With relation names, only those relations of the entity are invalidated."""
    store.delete(entity_names=["c"], relation_names=["related"], properties=GROUND)
    assert {r.label for _, r, _ in store.get_triplets(entity_names=["c"])} == {"builds_on"}
    assert store.get(ids=["c"])


def test_queries_are_not_supported(store: SQLPropertyGraphStore) -> None:
    """Structured and vector queries raise NotImplementedError with a clear message."""
    assert store.supports_vector_queries is False
    with pytest.raises(NotImplementedError, match="Cypher"):
        store.structured_query("MATCH (n) RETURN n")
    with pytest.raises(NotImplementedError, match="embeddings"):
        store.vector_query(VectorStoreQuery(query_embedding=[0.0] * 8))


def test_schema_names_relations(store: SQLPropertyGraphStore) -> None:
    """The schema string lists the Concept label and every relation type."""
    text = store.get_schema_str()
    assert "Concept" in text and all(r in text for r in ("prerequisite", "builds_on", "part_of"))


def test_property_graph_index_from_existing_retrieves_offline(store: SQLPropertyGraphStore) -> None:
    """PropertyGraphIndex.from_existing works with mock models, and SeedRetriever retrieves triplets."""
    index = PropertyGraphIndex.from_existing(
        property_graph_store=store,
        llm=MockLLM(),
        embed_model=MockEmbedding(embed_dim=8),
        embed_kg_nodes=False,
    )
    retriever = index.as_retriever(sub_retrievers=[SeedRetriever(store, depth=1)])
    texts = [n.node.get_content() for n in retriever.retrieve("what comes before beta?")]
    assert "Alpha must be mastered before Beta" in texts
