"""LlamaIndex's ``PropertyGraphStore`` over the SQL graph, and the planner's expander.

:class:`SQLPropertyGraphStore` reads through :class:`~data_plane.reads.GraphReader` (as of the
store's :class:`~data_plane.temporal.AsOf`, or now) and writes through
:class:`~data_plane.gateway.WriteGateway`, so every LlamaIndex write is grounded and versioned:

* nodes are ``EntityNode(label="Concept", name=<concept id>, properties={name, summary, aliases,
  version_id, grounding})``; relations are ``Relation(label=<relation type>, source_id,
  target_id, properties={edge_id, version_id, key, confidence, reason, source, evidence})``;
* ``upsert_nodes``/``upsert_relations`` need ``confidence, reason, source, evidence`` in the
  properties, or refuse with :class:`~data_plane.errors.GroundingRejected`;
* ``delete`` never deletes: it invalidates (grounding in ``properties``) or refuses;
* ``structured_query``/``vector_query`` are not supported (``NotImplementedError``).

:meth:`SQLPropertyGraphStore.neighbours` is the planner's one data-plane call per round (one
SQL statement); ``get_rel_map`` is built on it. :class:`SeedRetriever` is an offline LlamaIndex
sub-retriever: it seeds from concept names in the query and walks ``get_rel_map``.

This module imports LlamaIndex (slow, ~1.5 s); nothing on the answer path imports it unless the
planner builds its default store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.graph_stores.types import (
    EntityNode,
    LabelledNode,
    PropertyGraphStore,
    Relation,
    Triplet,
)
from llama_index.core.indices.property_graph.sub_retrievers.custom import (
    CUSTOM_RETRIEVE_TYPE,
    CustomPGRetriever,
)
from llama_index.core.vector_stores.types import VectorStoreQuery

from control_plane.evidence import edge_ref
from control_plane.planning.expansion import ReaderExpander
from control_plane.understanding.names import NameIndex
from data_plane.errors import GroundingRejected, InputError, NotFound
from data_plane.gateway import Write, WriteGateway
from data_plane.reads import GraphReader
from data_plane.records import Concept, ConceptLike, Edge, EdgeRow, Grounding
from data_plane.relations import PHRASES, RELATIONS
from data_plane.temporal import AsOf

__all__ = ["CONCEPT_LABEL", "SQLPropertyGraphStore", "SeedRetriever", "grounding_from"]

CONCEPT_LABEL = "Concept"
_GROUNDING_KEYS = ("confidence", "reason", "source", "evidence")


def grounding_from(properties: dict[str, Any], *, what: str) -> Grounding:
    """The grounding carried in a node's or relation's properties, or a clear refusal."""
    missing = [k for k in _GROUNDING_KEYS if properties.get(k) in (None, "", [], {})]
    if missing:
        raise GroundingRejected(
            f"{what}: properties must carry grounding ({', '.join(_GROUNDING_KEYS)}); missing {', '.join(missing)}",
            field=missing[0],
        )
    return Grounding(
        confidence=properties["confidence"],
        reason=properties["reason"],
        source=properties["source"],
        evidence=properties["evidence"],
    )


def concept_node(c: Concept) -> EntityNode:
    return EntityNode(
        name=c.concept_id,
        label=CONCEPT_LABEL,
        properties={
            "name": c.name,
            "summary": c.summary,
            "aliases": list(c.aliases),
            "version_id": c.stamp.version_id,
            "grounding": c.grounding.to_dict(),
        },
    )


def edge_relation(e: Edge) -> Relation:
    return Relation(
        label=e.relation,
        source_id=e.source_id,
        target_id=e.target_id,
        properties={
            "edge_id": edge_ref(e),
            "version_id": e.stamp.version_id,
            "key": e.key,
            **e.grounding.to_dict(),
        },
    )


def _matches(props: dict[str, Any], wanted: dict[str, Any] | None) -> bool:
    return not wanted or all(props.get(k) == v for k, v in wanted.items())


class SQLPropertyGraphStore(PropertyGraphStore, ReaderExpander):
    """A LlamaIndex property graph store backed by the bi-temporal SQL graph."""

    supports_structured_queries: bool = False
    supports_vector_queries: bool = False

    def __init__(
        self, reader: GraphReader, *, gateway: WriteGateway | None = None, as_of: AsOf | None = None
    ) -> None:
        self._reader = reader
        self._gateway = gateway
        self._as_of = as_of

    @property
    def client(self) -> Any:
        return self._reader

    def as_of(self) -> AsOf:
        """The store's fixed point in time, or now."""
        return self._as_of or self._reader.as_of()

    # -- reads ------------------------------------------------------------------------------

    def get(
        self, properties: dict[str, Any] | None = None, ids: list[str] | None = None
    ) -> list[LabelledNode]:
        as_of = self.as_of()
        found = (
            list(self._reader.concepts(ids, as_of=as_of).values())
            if ids is not None
            else self._reader.all_concepts(as_of=as_of)
        )
        nodes = [concept_node(c) for c in sorted(found, key=lambda c: c.concept_id)]
        return [n for n in nodes if _matches(n.properties, properties)]

    def get_triplets(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict[str, Any] | None = None,
        ids: list[str] | None = None,
    ) -> list[Triplet]:
        as_of = self.as_of()
        names = sorted({*(entity_names or []), *(ids or [])})
        edges: dict[str, Edge] = {}
        if names:
            rows: dict[str, EdgeRow] = {}
            for n in self.neighbours(names, as_of=as_of, relations=relation_names):
                rows.setdefault(n.edge.key, n.edge)
            full, _ = self._reader.records(edge_versions=[e.version_id for e in rows.values()])
            edges = {key: full[e.version_id] for key, e in rows.items()}
        elif entity_names is None and ids is None:
            for e in self._reader.snapshot(as_of).edges:
                if relation_names is None or e.relation in relation_names:
                    edges[e.key] = e
        return [
            t for t in self._triplets(list(edges.values()), as_of) if _matches(t[1].properties, properties)
        ]

    def _triplets(self, edges: list[Edge], as_of: AsOf) -> list[Triplet]:
        ends = self._reader.concepts({i for e in edges for i in (e.source_id, e.target_id)}, as_of=as_of)
        out: list[Triplet] = []
        for e in sorted(edges, key=lambda e: e.key):
            if e.source_id in ends and e.target_id in ends:
                out.append(
                    (concept_node(ends[e.source_id]), edge_relation(e), concept_node(ends[e.target_id]))
                )
        return out

    def get_rel_map(
        self,
        graph_nodes: list[LabelledNode],
        depth: int = 2,
        limit: int = 30,
        ignore_rels: list[str] | None = None,
    ) -> list[Triplet]:
        """Triplets within ``depth`` hops of ``graph_nodes`` (both directions, active only, as of
        the store's time); ``ignore_rels`` are filtered in SQL and ``limit`` applies afterwards."""
        as_of = self.as_of()
        relations = [r for r in RELATIONS if r not in set(ignore_rels or ())]
        seen = {n.id for n in graph_nodes}
        frontier = sorted(seen)
        concepts: dict[str, ConceptLike] = dict(self._reader.concepts(frontier, as_of=as_of))
        walked: list[EdgeRow] = []
        keys: set[str] = set()
        for _ in range(max(depth, 0)):
            if not frontier or len(walked) >= limit:
                break
            nxt: list[str] = []
            for n in self.neighbours(frontier, as_of=as_of, relations=relations):
                concepts.setdefault(n.concept.concept_id, n.concept)
                if n.edge.key in keys or n.from_id not in concepts:
                    continue
                keys.add(n.edge.key)
                walked.append(n.edge)
                if n.concept.concept_id not in seen:
                    seen.add(n.concept.concept_id)
                    nxt.append(n.concept.concept_id)
            frontier = sorted(nxt)
        walked = walked[:limit]
        # The walk read thin rows; the triplets carry full records (one statement for both).
        ends = {i: concepts[i] for e in walked for i in (e.source_id, e.target_id)}
        full_edges, full_concepts = self._reader.records(
            edge_versions=[e.version_id for e in walked],
            concept_versions=[c.version_id for c in ends.values() if not isinstance(c, Concept)],
        )

        def node(cid: str) -> EntityNode:
            c = concepts[cid]
            return concept_node(c if isinstance(c, Concept) else full_concepts[c.version_id])

        return [
            (node(e.source_id), edge_relation(full_edges[e.version_id]), node(e.target_id)) for e in walked
        ]

    def get_schema(self, refresh: bool = False) -> dict[str, Any]:
        return {
            "node_labels": [CONCEPT_LABEL],
            "node_properties": ["name", "summary", "aliases", "version_id", "grounding"],
            "relations": {r: PHRASES[r] for r in RELATIONS},
            "relation_properties": ["edge_id", "version_id", "key", *_GROUNDING_KEYS],
        }

    def get_schema_str(self, refresh: bool = False) -> str:
        s = self.get_schema(refresh)
        lines = [f"Node label: {CONCEPT_LABEL} (properties: {', '.join(s['node_properties'])})"]
        lines += [
            f"Relation: (:Concept)-[:{r}]->(:Concept)  source {p} target" for r, p in s["relations"].items()
        ]
        return "\n".join(lines)

    # -- writes (through the gateway, grounded) -----------------------------------------------

    def _writer(self) -> WriteGateway:
        if self._gateway is None:
            raise InputError("this property graph store is read-only: it was built without a WriteGateway")
        return self._gateway

    def upsert_nodes(self, nodes: Sequence[LabelledNode]) -> None:
        writes: list[Write] = []
        for node in nodes:
            if not isinstance(node, EntityNode):
                raise InputError(
                    f"only concept nodes (EntityNode) can be stored, got {type(node).__name__}",
                    field="node",
                    value=type(node).__name__,
                )
            props = dict(node.properties)
            aliases = props.get("aliases")
            writes.append(
                Write.concept(
                    node.name,
                    grounding=grounding_from(props, what=f"node {node.name!r}"),
                    mode="upsert",
                    name=str(props.get("name") or node.name),
                    aliases=list(aliases) if aliases is not None else None,
                    summary=props.get("summary"),
                )
            )
        if writes:
            self._writer().apply(writes)

    def upsert_relations(self, relations: list[Relation]) -> None:
        writes = [
            Write.edge(
                r.source_id,
                r.target_id,
                r.label,
                grounding=grounding_from(
                    dict(r.properties), what=f"relation {r.source_id} -{r.label}-> {r.target_id}"
                ),
                mode="upsert",
            )
            for r in relations
        ]
        if writes:
            self._writer().apply(writes)

    def delete(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict[str, Any] | None = None,
        ids: list[str] | None = None,
    ) -> None:
        """Never deletes: invalidates the named concepts (their edges close with them) or, with
        ``relation_names``, only those relations touching them. The grounding comes from
        ``properties``; without it, or without anything named, this refuses."""
        names = sorted({*(entity_names or []), *(ids or [])})
        if not names:
            raise InputError(
                "delete needs entity names or ids; nothing is ever deleted wholesale", field="ids"
            )
        g = grounding_from(dict(properties or {}), what="delete (invalidation)")
        as_of = self.as_of()
        writes: list[Write]
        if relation_names:
            edges = {
                n.edge.key: n.edge for n in self.neighbours(names, as_of=as_of, relations=relation_names)
            }
            if not edges:
                raise NotFound(f"no active {', '.join(relation_names)} relation touches {', '.join(names)}")
            writes = [
                Write.edge(e.source_id, e.target_id, e.relation, grounding=g, mode="invalidate")
                for e in edges.values()
            ]
        else:
            known = self._reader.concepts(names, as_of=as_of)
            unknown = [n for n in names if n not in known]
            if unknown:
                raise NotFound(f"no active concept {', '.join(unknown)}", key=unknown[0])
            writes = [Write.concept(n, grounding=g, mode="invalidate") for n in names]
        self._writer().apply(writes)

    def structured_query(self, query: str, param_map: dict[str, Any] | None = None) -> Any:
        raise NotImplementedError(
            "SQLPropertyGraphStore has no query language (no Cypher); use get, get_triplets or get_rel_map"
        )

    def vector_query(self, query: VectorStoreQuery, **kwargs: Any) -> tuple[list[LabelledNode], list[float]]:
        raise NotImplementedError(
            "SQLPropertyGraphStore stores no embeddings (supports_vector_queries is False); "
            "retrieve by concept names with SeedRetriever or get_rel_map"
        )


class SeedRetriever(CustomPGRetriever):
    """Offline sub-retriever: concepts named in the query, then their relations (``get_rel_map``).

    Needs no LLM and no embeddings; usable with ``PropertyGraphIndex.as_retriever(sub_retrievers=[...])``.
    """

    def init(self, *, depth: int = 1, limit: int = 30, **kwargs: Any) -> None:
        self._depth = depth
        self._limit = limit

    def custom_retrieve(self, query_str: str) -> CUSTOM_RETRIEVE_TYPE:
        store = self.graph_store
        index = NameIndex.from_names(
            (n.id, str(n.properties.get("name", n.id)), n.properties.get("aliases") or ())
            for n in store.get()
        )
        seeds = index.find(query_str)
        if not seeds:
            return []
        triplets = store.get_rel_map(store.get(ids=seeds), depth=self._depth, limit=self._limit)
        return [
            f"{s.properties.get('name', s.id)} {PHRASES.get(r.label, r.label)} {t.properties.get('name', t.id)}"
            for s, r, t in triplets
        ]
