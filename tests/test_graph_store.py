"""The LlamaIndex PropertyGraphStore over the SQL graph, on SQLite and PostgreSQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llama_index.core import MockEmbedding, PropertyGraphIndex
from llama_index.core.graph_stores.types import ChunkNode, EntityNode, Relation
from llama_index.core.llms import MockLLM
from llama_index.core.vector_stores.types import VectorStoreQuery

from control_plane.planning.graph_store import SeedRetriever, SQLPropertyGraphStore
from data_plane import ConfigurationError, GraphReader, GroundingRejected, InputError, WriteGateway
from data_plane.testing import build_graph, grounding
from data_plane.walks import NEEDED_BEFORE, learning_steps, walk

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


def test_rel_map_depth_one_is_the_whole_neighbourhood_both_ways(store: SQLPropertyGraphStore) -> None:
    """At depth 1 the rel map is every active edge of the seeds, in and out, in any relation."""
    triplets = store.get_rel_map(store.get(ids=["c"]), depth=1)
    assert [(s.id, r.label, t.id) for s, r, t in triplets] == [("b", "builds_on", "c"), ("c", "related", "d")]


def test_rel_map_ignores_relations_and_cuts_at_the_limit(store: SQLPropertyGraphStore) -> None:
    """Ignored relations are left out, and the limit cuts the (one hop first, by key) order."""
    seeds = store.get(ids=["a"])
    assert {r.label for _, r, _ in store.get_rel_map(seeds, depth=1)} == {"prerequisite", "part_of"}
    assert [r.label for _, r, _ in store.get_rel_map(seeds, depth=1, ignore_rels=["part_of"])] == [
        "prerequisite"
    ]
    assert [r.label for _, r, _ in store.get_rel_map(seeds, depth=1, limit=1)] == ["part_of"]


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
    """Only concept entities can be stored: a text chunk is refused with what to do instead."""
    with pytest.raises(
        InputError, match=r"not documents or text chunks: build the index with .*from_existing"
    ):
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


def test_structured_queries_are_not_supported(store: SQLPropertyGraphStore) -> None:
    """A structured query raises NotImplementedError naming what to use instead."""
    with pytest.raises(NotImplementedError, match="Cypher"):
        store.structured_query("MATCH (n) RETURN n")


def test_a_vector_query_without_embeddings_says_how_to_make_them(store: SQLPropertyGraphStore) -> None:
    """Before embed_concepts, a vector query is refused with the call that makes the vectors."""
    assert store.supports_vector_queries is True
    with pytest.raises(ConfigurationError, match=r"store\.embed_concepts\(embed_model\)"):
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


# -- names: read as the question reader reads them ---------------------------------------------


@pytest.fixture
def named_store(gateway: WriteGateway, reader: GraphReader) -> SQLPropertyGraphStore:
    build_graph(
        gateway,
        [
            ("rag", "Retrieval-augmented generation", ["RAG"]),
            ("embeddings", "Embeddings"),
            ("rag_pipeline", "RAG pipeline"),
            ("vector_search", "Vector search"),
        ],
        [
            ("rag", "embeddings", "builds_on"),
            ("rag", "vector_search", "builds_on"),
            ("rag_pipeline", "rag", "builds_on"),
        ],
    )
    return SQLPropertyGraphStore(reader, gateway=gateway)


@pytest.mark.parametrize(
    "key",
    [
        "rag",
        "Rag",
        "RAG",
        "Retrieval augmented generation",
        "retrieval-augmented generations",
        "Keywords: rag",
    ],
)
def test_get_reads_ids_as_names(named_store: SQLPropertyGraphStore, key: str) -> None:
    """An id, a name or an alias in any case, plural or punctuation names the concept, as in a question."""
    assert [n.id for n in named_store.get(ids=[key])] == ["rag"]


def test_a_name_inside_a_longer_one_gives_way(named_store: SQLPropertyGraphStore) -> None:
    """ "RAG pipeline" names the pipeline, not RAG (the reader's containment rule)."""
    assert [n.id for n in named_store.get(ids=["Rag pipeline"])] == ["rag_pipeline"]


def test_get_by_name_property_reads_it_as_a_name(named_store: SQLPropertyGraphStore) -> None:
    """A name property matches the concept it names, and other properties still filter exactly."""
    assert [n.id for n in named_store.get(properties={"name": "RAG"})] == ["rag"]
    assert named_store.get(properties={"name": "RAG", "summary": "something else"}) == []


def test_get_triplets_reads_entity_names_as_names(named_store: SQLPropertyGraphStore) -> None:
    """get_triplets(entity_names=...) takes names as LlamaIndex writes them and returns full records."""
    triplets = named_store.get_triplets(entity_names=["Retrieval augmented generation"])
    assert [r.properties["key"] for _, r, _ in triplets] == [
        "rag>builds_on>embeddings",
        "rag>builds_on>vector_search",
        "rag_pipeline>builds_on>rag",
    ]
    assert triplets[0][1].properties["reason"] and triplets[0][0].properties["grounding"]["source"] == "tests"


def test_a_key_that_names_nothing_finds_nothing(named_store: SQLPropertyGraphStore) -> None:
    """Words that name no concept give no node and no triplet (not every concept)."""
    assert named_store.get(ids=["gardening"]) == []
    assert named_store.get_triplets(entity_names=["gardening"]) == []


def test_names_are_cached_until_concepts_change(
    named_store: SQLPropertyGraphStore, gateway: WriteGateway
) -> None:
    """The name index is built once, and again only after a concept changed; the new name is found."""
    named_store.get(ids=["Rag"])
    named_store.get(ids=["Embeddings"])
    assert named_store._names.builds == 1
    build_graph(gateway, [("chunking", "Chunking", ["text splitting"])])
    assert [n.id for n in named_store.get(ids=["Text splitting"])] == ["chunking"]
    assert named_store._names.builds == 2


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(
        ["Retrieval-augmented generation", "RAG", "Embeddings", "Vector search", "RAG pipeline"]
    ),
    cases=st.lists(st.booleans(), min_size=40, max_size=40),
    sep=st.sampled_from([" ", "-", "  ", " - "]),
)
def test_the_store_names_what_the_question_reader_finds(
    named_store: SQLPropertyGraphStore, name: str, cases: list[bool], sep: str
) -> None:
    """Whatever the case and separators, a name resolves to exactly what the reader's name index finds in it."""
    text = sep.join(
        "".join(c.upper() if up else c.lower() for c, up in zip(w, cases, strict=False)) for w in name.split()
    )
    expected = named_store.names().find(text)
    assert expected and [n.id for n in named_store.get(ids=[text])] == sorted(expected)


# -- the rel map: the planner's statements, thin rows -------------------------------------------


@pytest.fixture
def chain_store(gateway: WriteGateway, reader: GraphReader) -> SQLPropertyGraphStore:
    """top builds on mid, which needs base first; top is related to side, and after builds on top."""
    build_graph(
        gateway,
        ["top", "mid", "base", "root", "side", "after", "other"],
        [
            ("top", "mid", "builds_on"),
            ("base", "mid", "prerequisite"),
            ("root", "base", "prerequisite"),
            ("top", "side", "related"),
            ("after", "top", "builds_on"),
            ("after", "other", "builds_on"),
            ("side", "other", "part_of"),
        ],
    )
    return SQLPropertyGraphStore(reader, gateway=gateway)


def _keys(triplets: list[Any]) -> list[str]:
    return [r.properties["key"] for _, r, _ in triplets]


def test_rel_map_beyond_one_hop_follows_what_the_seeds_rest_on(chain_store: SQLPropertyGraphStore) -> None:
    """Depth 2 and 3 add the needed-before closure (not the undirected ball): after, other and side's edges stay out."""
    seeds = chain_store.get(ids=["top"])
    one = ["after>builds_on>top", "side>related>top", "top>builds_on>mid"]
    assert _keys(chain_store.get_rel_map(seeds, depth=1)) == one
    assert _keys(chain_store.get_rel_map(seeds, depth=2)) == [*one, "base>prerequisite>mid"]
    assert _keys(chain_store.get_rel_map(seeds, depth=3)) == [
        *one,
        "base>prerequisite>mid",
        "root>prerequisite>base",
    ]


def test_rel_map_beyond_one_hop_equals_the_walk(
    chain_store: SQLPropertyGraphStore, reader: GraphReader
) -> None:
    """Beyond the neighbourhood, the rel map holds exactly the edges the needed-before walk takes."""
    as_of = reader.as_of()
    hop = {n.edge.version_id for n in reader.neighbourhood(["top"], as_of=as_of)}
    w = walk(reader.engine, ["top"], as_of=as_of, steps=learning_steps(NEEDED_BEFORE), max_depth=3)
    got = {
        r.properties["version_id"]
        for _, r, _ in chain_store.get_rel_map(chain_store.get(ids=["top"]), depth=3)
    }
    assert got == hop | {row.version_id for row in w.rows}


def test_rel_map_without_learning_relations_stays_one_hop(chain_store: SQLPropertyGraphStore) -> None:
    """Ignoring both learning relations leaves nothing to walk: deeper maps equal depth 1."""
    seeds = chain_store.get(ids=["top"])
    ignore = ["prerequisite", "builds_on"]
    assert _keys(chain_store.get_rel_map(seeds, depth=3, ignore_rels=ignore)) == ["side>related>top"]


def test_rel_map_nodes_are_the_seeds_given_and_thin_rows(chain_store: SQLPropertyGraphStore) -> None:
    """The seeds come back as the very nodes given; other ends and relations carry the planner's thin columns."""
    seed = chain_store.get(ids=["top"])[0]
    ((s, r, t),) = chain_store.get_rel_map([seed], depth=1, ignore_rels=["builds_on"])
    assert t is seed and s.id == "side"
    assert set(s.properties) == {"name", "summary", "version_id"}
    assert set(r.properties) == {"edge_id", "version_id", "key", "confidence"}
    assert r.properties["edge_id"] == f"e{r.properties['version_id']}"


def test_rel_map_builds_the_models_a_validated_build_would(chain_store: SQLPropertyGraphStore) -> None:
    """Nodes and relations built without re-validation equal LlamaIndex's validated models, field for field."""
    for s, r, t in chain_store.get_rel_map(chain_store.get(ids=["top"]), depth=3):
        for node in (s, t):
            validated = EntityNode(name=node.name, label=node.label, properties=node.properties)
            assert node == validated and node.model_dump() == validated.model_dump()
            assert node.model_fields_set == validated.model_fields_set
        rel = Relation(label=r.label, source_id=r.source_id, target_id=r.target_id, properties=r.properties)
        assert r == rel and r.model_dump() == rel.model_dump() and r.model_fields_set == rel.model_fields_set


def test_rel_map_of_many_seeds_walks_them_all(gateway: WriteGateway, reader: GraphReader) -> None:
    """More than 12 seeds (a walk's most) are walked in groups, and every seed's closure is there."""
    ids = [f"s{i:02d}" for i in range(15)]
    build_graph(gateway, [*ids, *(f"p{i:02d}" for i in range(15)), *(f"q{i:02d}" for i in range(15))],
                [e for i in range(15) for e in ((f"s{i:02d}", f"p{i:02d}", "builds_on"), (f"p{i:02d}", f"q{i:02d}", "builds_on"))])  # fmt: skip
    store = SQLPropertyGraphStore(reader)
    got = _keys(store.get_rel_map(store.get(ids=ids), depth=2, limit=1000))
    assert sorted(got) == sorted(
        f"{a}{i:02d}>builds_on>{b}{i:02d}" for i in range(15) for a, b in (("s", "p"), ("p", "q"))
    )


# -- building the store from a database URL ----------------------------------------------------


def test_from_url_reads_the_graph(database_url: str) -> None:
    """from_url opens a migrated database, read-only unless asked to write."""
    store = SQLPropertyGraphStore.from_url(database_url)
    try:
        assert store.get(ids=["anything"]) == []
        with pytest.raises(InputError, match="read-only"):
            store.upsert_nodes([EntityNode(name="x", label="Concept", properties={"name": "X", **GROUND})])
    finally:
        store.close()
    writer = SQLPropertyGraphStore.from_url(database_url, writable=True)
    try:
        writer.upsert_nodes([EntityNode(name="x", label="Concept", properties={"name": "X", **GROUND})])
        assert [n.id for n in writer.get(ids=["X"])] == ["x"]
    finally:
        writer.close()


def test_from_url_refuses_a_missing_file_without_creating_it(tmp_path: Path) -> None:
    """A SQLite file that does not exist is an error naming it and `kg init`, and no file is left behind."""
    path = tmp_path / "none.sqlite3"
    with pytest.raises(
        ConfigurationError, match=r"no database at .*none\.sqlite3: create it with `kg --db .* init`"
    ):
        SQLPropertyGraphStore.from_url(f"sqlite:///{path}")
    assert not path.exists()


def test_from_url_refuses_a_database_without_the_schema(tmp_path: Path) -> None:
    """A database not at the code's schema says which schema it has and what to run."""
    path = tmp_path / "other.sqlite3"
    sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(ConfigurationError, match=r"is at schema none, the code needs .*kg --db URL init"):
        SQLPropertyGraphStore.from_url(f"sqlite:///{path}")
