"""LlamaIndex's ``PropertyGraphStore`` over the SQL graph, and the planner's expander.

:class:`SQLPropertyGraphStore` reads through :class:`~data_plane.reads.GraphReader` (as of the
store's :class:`~data_plane.temporal.AsOf`, or now) and writes through
:class:`~data_plane.gateway.WriteGateway`, so every LlamaIndex write is grounded and versioned.
``SQLPropertyGraphStore.from_url(url)`` builds one from a database URL (``docs/llamaindex.md``).

* Nodes are ``EntityNode(label="Concept", name=<concept id>, properties=...)``, relations
  ``Relation(label=<relation type>, source_id, target_id, properties=...)``. ``get`` and
  ``get_triplets`` carry full records (node: name, summary, aliases, version_id, grounding;
  relation: edge_id, version_id, key, confidence, reason, source, evidence); ``get_rel_map``,
  the retrievers' hot path, carries what the planner's own reads carry (node: name, summary,
  version_id; relation: edge_id, version_id, key, confidence).
* Ids and names are read as the question reader reads them (:meth:`SQLPropertyGraphStore.named`):
  ``get(ids=["Rag", "Retrieval augmented generation"])`` (how ``LLMSynonymRetriever`` asks: it
  capitalises its keywords) is RAG. Names go through the reader's own
  :class:`~control_plane.understanding.names.NameIndex`, cached like the planner's
  (:mod:`control_plane.planning.table_cache`), so the store reads names exactly as questions are read.
* ``get_rel_map`` runs the planner's own indexed statements: the seeds' neighbourhood
  (``GraphReader.neighbourhood``) and, beyond one hop, the needed-before walk
  (``data_plane.walks``). LlamaIndex gives it no direction; its docstring says which it takes.
* Requirement groups ("one of A or B") are relations a LlamaIndex user reads in ``get_triplets``:
  a node ``EntityNode(label="Requirement", name=<group id>)`` per group (properties: target_id,
  needs, options, version_id, grounding), a ``requires`` relation from the target to it, and an
  ``option`` relation from it to each member (properties: option, version_id, grounding):
  the target needs ``needs`` of the options, each option's members all. ``get_rel_map`` follows
  edges only.
* Vector retrieval: :meth:`SQLPropertyGraphStore.embed_concepts` embeds the concepts into a
  LlamaIndex vector store (or the store is given one that holds them), which ``vector_query``
  (``VectorContextRetriever``) then searches; without one ``vector_query`` refuses with a
  :class:`~data_plane.errors.ConfigurationError` that says how to make them.
* ``upsert_nodes``/``upsert_relations`` need ``confidence, reason, source, evidence`` in the
  properties, or refuse with :class:`~data_plane.errors.GroundingRejected`; documents and text
  chunks (``from_documents``, ``insert``) are refused with one :class:`InputError` naming what
  to do instead; ``delete`` never deletes: it invalidates (grounding in ``properties``) or refuses;
  ``structured_query`` is not supported (``NotImplementedError``).

:meth:`SQLPropertyGraphStore.neighbours` is the planner's one data-plane call per round (one
SQL statement). :class:`SeedRetriever` is an offline LlamaIndex sub-retriever: it seeds from
concept names in the query and walks ``get_rel_map``.

This module imports LlamaIndex (slow, 2-3 s cold); nothing on the answer path imports it unless
the planner builds this store (DeepSeek), and neither ``kg`` nor the HTTP app does otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.graph_stores.types import (
    VECTOR_SOURCE_KEY,
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
from llama_index.core.schema import BaseNode, TextNode
from llama_index.core.vector_stores.simple import SimpleVectorStore
from llama_index.core.vector_stores.types import BasePydanticVectorStore, VectorStoreQuery
from pydantic import BaseModel

from control_plane.evidence import edge_ref
from control_plane.planning.expansion import ReaderExpander
from control_plane.planning.table_cache import name_cache
from control_plane.understanding.names import NameIndex, normalise
from data_plane.database import connect, database_missing, head_revision, redacted_url, schema_revision
from data_plane.errors import ConfigurationError, GroundingRejected, InputError, NotFound
from data_plane.gateway import Write, WriteGateway
from data_plane.reads import GraphReader
from data_plane.records import Concept, ConceptRow, Edge, EdgeRow, Grounding, Neighbour
from data_plane.relations import BUILDS_ON, PHRASES, PREREQUISITE, RELATIONS
from data_plane.temporal import AsOf
from data_plane.walks import MAX_STARTS, NEEDED_BEFORE, learning_steps, walk

__all__ = [
    "CONCEPT_LABEL",
    "NOT_A_DOCUMENT_STORE",
    "OPTION",
    "REQUIREMENT_LABEL",
    "REQUIRES",
    "SQLPropertyGraphStore",
    "SeedRetriever",
    "grounding_from",
]

CONCEPT_LABEL = "Concept"
REQUIREMENT_LABEL = "Requirement"
REQUIRES: Final = "requires"
OPTION: Final = "option"
_GROUNDING_KEYS = ("confidence", "reason", "source", "evidence")
# Beyond its first hop, a rel map follows learning order towards what the seeds rest on.
REL_MAP_DIRECTION: Final = NEEDED_BEFORE
# What from_documents / insert meet: one refusal, saying what to do instead.
NOT_A_DOCUMENT_STORE: Final = (
    "SQLPropertyGraphStore keeps a curated curriculum (concepts and grounded relations), not "
    "documents or text chunks: build the index with PropertyGraphIndex.from_existing("
    "property_graph_store=store, ...) instead of from_documents/insert, and add concepts and "
    "relations with store.upsert_nodes/upsert_relations (grounding in their properties), "
    "the HTTP API or `kg import`"
)
_NO_VECTORS: Final = (
    "SQLPropertyGraphStore has no concept embeddings to search (VectorContextRetriever asks the "
    "store, not PropertyGraphIndex's vector_store): call store.embed_concepts(embed_model) once "
    "(store.embed_concepts(embed_model, vector_store) to keep them in your vector store), or build "
    "the store with a vector store that holds them (SQLPropertyGraphStore.from_url(url, "
    "vector_store=...)), or build the index with embed_kg_nodes=False to retrieve by concept names only"
)
_NODE_GIVEN: Final = frozenset({"name", "label", "properties"})
_RELATION_GIVEN: Final = frozenset({"label", "source_id", "target_id", "properties"})


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


def _fill(model: BaseModel, fields: dict[str, Any], given: frozenset[str]) -> None:
    """Give ``model`` (made by ``cls.__new__``) the state a validated construction from ``fields``
    would give it, without validating values that are already of their field types (read from
    our own rows): what ``model_construct`` does, minus its per-field Python loop. The rel map
    builds one node per concept and one relation per edge, and validation was a third of its time.
    ``fields`` names every field, ``given`` those a caller of the constructor would have passed
    (``model_fields_set``); ``tests/test_graph_store.py`` checks the result equals a validated model."""
    object.__setattr__(model, "__dict__", fields)
    object.__setattr__(model, "__pydantic_fields_set__", set(given))
    object.__setattr__(model, "__pydantic_extra__", None)
    object.__setattr__(model, "__pydantic_private__", None)


def thin_node(c: ConceptRow) -> EntityNode:
    """A rel-map node: what a walk row carries of a concept."""
    node = EntityNode.__new__(EntityNode)
    props = {"name": c.name, "summary": c.summary, "version_id": c.version_id}
    _fill(
        node,
        {"label": CONCEPT_LABEL, "embedding": None, "properties": props, "name": c.concept_id},
        _NODE_GIVEN,
    )
    return node


def thin_relation(e: EdgeRow) -> Relation:
    """A rel-map relation: what a walk row carries of an edge."""
    vid, source, target, relation, confidence = e
    props = {
        "edge_id": f"e{vid}",
        "version_id": vid,
        "key": f"{source}>{relation}>{target}",  # stored edges are canonical: this is edge_key
        "confidence": confidence,
    }
    rel = Relation.__new__(Relation)
    _fill(
        rel,
        {"label": relation, "source_id": source, "target_id": target, "properties": props},
        _RELATION_GIVEN,
    )
    return rel


def _matches(props: dict[str, Any], wanted: dict[str, Any] | None) -> bool:
    return not wanted or all(props.get(k) == v for k, v in wanted.items())


def _concept_text(c: Concept) -> str:
    """What a concept's embedding is made of: its name, aliases and summary."""
    aliases = f" (also: {', '.join(c.aliases)})" if c.aliases else ""
    return f"{c.name}{aliases}: {c.summary}" if c.summary else f"{c.name}{aliases}"


class SQLPropertyGraphStore(PropertyGraphStore, ReaderExpander):
    """A LlamaIndex property graph store backed by the bi-temporal SQL graph."""

    supports_structured_queries: bool = False
    # True so that VectorContextRetriever asks this store (vector_query), which searches the
    # vectors of embed_concepts or says how to make them, instead of an empty vector store.
    supports_vector_queries: bool = True

    def __init__(
        self,
        reader: GraphReader,
        *,
        gateway: WriteGateway | None = None,
        as_of: AsOf | None = None,
        vector_store: BasePydanticVectorStore | None = None,
    ) -> None:
        """``vector_store``: one that already holds the concepts' vectors (filled by
        :meth:`embed_concepts`, perhaps in another process), searched by :meth:`vector_query`."""
        self._reader = reader
        self._gateway = gateway
        self._as_of = as_of
        self._names = name_cache(reader)
        self._vectors = vector_store

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        writable: bool = False,
        as_of: AsOf | None = None,
        vector_store: BasePydanticVectorStore | None = None,
    ) -> SQLPropertyGraphStore:
        """The store over the graph at database ``url`` (``sqlite:///kg.sqlite3``,
        ``postgresql+psycopg://...``), created with ``kg --db URL init``: read-only unless
        ``writable`` (writes then go through a gateway that refuses a concept name another concept
        already goes by, as ``kg`` does). :meth:`close` releases its connections."""
        missing = database_missing(url)
        if missing is not None:
            raise ConfigurationError(f"no database at {missing}: create it with `kg --db {url} init`")
        engine = connect(url)
        at, head = schema_revision(engine), head_revision()
        if at != head:
            engine.dispose()
            raise ConfigurationError(
                f"the database at {redacted_url(engine)} is at schema {at or 'none'}, the code needs "
                f"{head}: run `kg --db URL init`"
            )
        gateway = WriteGateway(engine, name_key=normalise) if writable else None
        return cls(GraphReader(engine), gateway=gateway, as_of=as_of, vector_store=vector_store)

    def close(self) -> None:
        """Release the database connections (the store is not usable afterwards)."""
        self._reader.engine.dispose()

    @property
    def client(self) -> Any:
        return self._reader

    def as_of(self) -> AsOf:
        """The store's fixed point in time, or now."""
        return self._as_of or self._reader.as_of()

    # -- names ----------------------------------------------------------------------------------

    def names(self, as_of: AsOf | None = None) -> NameIndex:
        """The question reader's name index of the concepts in force as of ``as_of`` (default: the
        store's time), rebuilt only when the concepts may have changed."""
        return self._names.get(as_of or self.as_of())

    def named(self, keys: Iterable[str], *, as_of: AsOf | None = None) -> dict[str, Concept]:
        """The concepts in force that ``keys`` name, by id. A key that is a concept id names that
        concept; any other key names every concept whose name, alias or id the question reader
        finds in it (``NameIndex.candidates``: case, plurals, hyphens and the rest of the name
        normaliser; a name inside a longer one gives way), so "Rag", "RAG" and "Retrieval
        augmented generation" all name ``rag``."""
        as_of = as_of or self.as_of()
        wanted = sorted({str(k) for k in keys})
        found = self._reader.concepts(wanted, as_of=as_of)
        rest = [k for k in wanted if k not in found]
        if rest:
            index = self.names(as_of)
            ids = {cid for k in rest for cid in index.candidates(k)} - set(found)
            found.update(self._reader.concepts(ids, as_of=as_of))
        return found

    # -- reads ------------------------------------------------------------------------------

    def get(
        self, properties: dict[str, Any] | None = None, ids: list[str] | None = None
    ) -> list[LabelledNode]:
        """Concept nodes by id or name (:meth:`named`), by properties, or all of them. A ``name``
        property is read like a name (:meth:`named`); other properties must be equal."""
        as_of = self.as_of()
        wanted = dict(properties or {})
        name = wanted.pop("name", None)
        if ids is not None:
            found = self.named(ids, as_of=as_of)
            if name is not None:
                keep = self.named([name], as_of=as_of)
                found = {k: c for k, c in found.items() if k in keep}
        elif name is not None:
            found = self.named([name], as_of=as_of)
        else:
            found = {c.concept_id: c for c in self._reader.all_concepts(as_of=as_of)}
        nodes = [concept_node(found[k]) for k in sorted(found)]
        return [n for n in nodes if _matches(n.properties, wanted)]

    def get_triplets(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict[str, Any] | None = None,
        ids: list[str] | None = None,
    ) -> list[Triplet]:
        """Triplets (full records) touching the concepts ``entity_names`` and ``ids`` name
        (:meth:`named`), or every triplet when neither is given; narrowed to ``relation_names``
        and to relation ``properties`` (equal values)."""
        as_of = self.as_of()
        edges: dict[str, Edge] = {}
        names: list[str] = []
        if entity_names is not None or ids is not None:
            names = sorted(self.named([*(entity_names or []), *(ids or [])], as_of=as_of))
            rows: dict[str, EdgeRow] = {}
            for n in self.neighbours(names, as_of=as_of, relations=relation_names) if names else ():
                rows.setdefault(n.edge.key, n.edge)
            full, _ = self._reader.records(edge_versions=[e.version_id for e in rows.values()])
            edges = {key: full[e.version_id] for key, e in rows.items()}
        else:
            for e in self._reader.snapshot(as_of).edges:
                if relation_names is None or e.relation in relation_names:
                    edges[e.key] = e
        triplets = self._triplets(list(edges.values()), as_of)
        if relation_names is None or {REQUIRES, OPTION} & set(relation_names):
            targets = None if entity_names is None and ids is None else names
            triplets += self._requirement_triplets(targets, as_of, relation_names)
        return [t for t in triplets if _matches(t[1].properties, properties)]

    def _requirement_triplets(
        self, concept_ids: list[str] | None, as_of: AsOf, relation_names: list[str] | None
    ) -> list[Triplet]:
        """The groups of ``concept_ids`` (as target or as an option; all groups when None) as
        ``requires`` and ``option`` triplets through a Requirement node (module docstring)."""
        if concept_ids is None:
            targets = sorted(
                {v.content["target_id"] for v in self._reader.snapshot(as_of).requirement_groups}
            )
            groups = {
                g.group_id: g for gs in self._reader.requirements(targets, as_of=as_of).values() for g in gs
            }
        else:
            groups = {
                g.group_id: g
                for gs in self._reader.requirements(concept_ids, as_of=as_of).values()
                for g in gs
            }
            for gs in self._reader.requirements_naming(concept_ids, as_of=as_of).values():
                groups.update((g.group_id, g) for g in gs)
        ends = self._reader.concepts(
            {g.target_id for g in groups.values()}
            | {m.concept_id for g in groups.values() for m in g.members},
            as_of=as_of,
        )
        out: list[Triplet] = []
        for g in sorted(groups.values(), key=lambda g: g.group_id):
            node = EntityNode(
                name=g.group_id,
                label=REQUIREMENT_LABEL,
                properties={
                    "target_id": g.target_id,
                    "needs": g.needs,
                    "options": [list(o) for o in g.options],
                    "version_id": g.version_id,
                    "grounding": g.grounding.to_dict(),
                },
            )
            if (relation_names is None or REQUIRES in relation_names) and g.target_id in ends:
                requires = Relation(
                    label=REQUIRES,
                    source_id=g.target_id,
                    target_id=g.group_id,
                    properties={"needs": g.needs, "version_id": g.version_id, **g.grounding.to_dict()},
                )
                out.append((concept_node(ends[g.target_id]), requires, node))
            if relation_names is not None and OPTION not in relation_names:
                continue
            for m in g.members:
                if m.concept_id in ends:
                    option = Relation(
                        label=OPTION,
                        source_id=g.group_id,
                        target_id=m.concept_id,
                        properties={"option": m.option, "version_id": m.version_id, **m.grounding.to_dict()},
                    )
                    out.append((node, option, concept_node(ends[m.concept_id])))
        return out

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
        """At most ``limit`` triplets around ``graph_nodes``, as of the store's time, active only.

        LlamaIndex gives a rel map no direction, and our relations have one, so this decides:
        depth 1 is the seeds' whole neighbourhood, every relation both ways (one
        ``GraphReader.neighbourhood`` statement, what ``LLMSynonymRetriever`` and
        ``VectorContextRetriever`` read with their default ``path_depth=1``); each level beyond
        follows learning order towards what the seeds rest on (prerequisite edges backward,
        builds_on forward: ``data_plane.walks`` ``needed_before``, one recursive statement per 12
        seeds), so depth 3 is the seeds' neighbourhood plus their needed-before closure to 3
        steps, not the undirected ball (at 10^5 edges that ball holds dozens of times more
        concepts). ``ignore_rels`` are left out in SQL; triplets come one hop first (by edge
        key), then by walk depth, and ``limit`` cuts that order. Nodes and relations carry thin
        properties (module docstring); the seeds are the nodes given."""
        if depth < 1 or limit < 1 or not graph_nodes:
            return []
        as_of = self.as_of()
        ignored = set(ignore_rels or ()) & set(RELATIONS)
        relations = [r for r in RELATIONS if r not in ignored] if ignored else None
        seeds = {n.id: n for n in graph_nodes}
        rows = self._reader.neighbourhood(list(seeds), as_of=as_of, relations=relations)
        learning = [r for r in (PREREQUISITE, BUILDS_ON) if r not in ignored]
        known: dict[str, ConceptRow] = {}
        if depth > 1 and learning and _distinct_edges(rows) < limit:
            deeper, known = self._walk_rows(sorted(seeds), as_of, learning, depth, limit)
            rows = rows + deeper
        return _rel_map(rows, seeds, known, limit)

    def _walk_rows(
        self, seeds: list[str], as_of: AsOf, relations: list[str], depth: int, limit: int
    ) -> tuple[list[Neighbour], dict[str, ConceptRow]]:
        """The needed-before walk's rows from ``seeds`` (12 at a time), and every concept they
        reach or leave from that is not a seed, as thin rows."""
        steps = learning_steps(REL_MAP_DIRECTION, relations)
        rows: list[Neighbour] = []
        with self._reader.connection() as conn:
            for i in range(0, len(seeds), MAX_STARTS):
                w = walk(
                    conn,
                    seeds[i : i + MAX_STARTS],
                    as_of=as_of,
                    steps=steps,
                    max_depth=min(depth, 64),
                    budget=limit,
                    detail=True,
                )
                rows += w.neighbours
        known = {n.concept.concept_id: n.concept for n in rows}
        # A walk row leaves from a concept an earlier row reached; should an engine list them in
        # another order, the few ends not seen yet are read here.
        missing = {i for n in rows for i in (n.edge.source_id, n.edge.target_id)} - known.keys() - set(seeds)
        for c in self._reader.concepts(missing, as_of=as_of).values() if missing else ():
            known[c.concept_id] = ConceptRow(c.stamp.version_id, c.concept_id, c.name, c.summary)
        return rows, known

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

    # -- vectors ----------------------------------------------------------------------------

    def embed_concepts(
        self,
        embed_model: BaseEmbedding,
        vector_store: BasePydanticVectorStore | None = None,
        *,
        batch: int = 1000,
    ) -> BasePydanticVectorStore:
        """Embed every concept in force (its name, aliases and summary) with ``embed_model`` into
        ``vector_store`` (default: a new in-memory ``SimpleVectorStore``), in LlamaIndex's own
        layout (each vector's ``vector_source_id`` is the concept id), and search it from now on
        in :meth:`vector_query` (``VectorContextRetriever`` asks the store, whatever vector store
        ``PropertyGraphIndex`` was given). Embeds the graph as it is now: call again after it
        changed (a concept's vector is keyed by its id, so it is replaced)."""
        vectors = vector_store if vector_store is not None else SimpleVectorStore()
        concepts: list[Concept] = []
        for c in self._reader.stream_concepts(self.as_of()):
            concepts.append(c)
            if len(concepts) == batch:
                self._embed(embed_model, vectors, concepts)
                concepts = []
        if concepts:
            self._embed(embed_model, vectors, concepts)
        self._vectors = vectors
        return vectors

    @staticmethod
    def _embed(embed_model: BaseEmbedding, vectors: BasePydanticVectorStore, concepts: list[Concept]) -> None:
        texts = [_concept_text(c) for c in concepts]
        embeddings = embed_model.get_text_embedding_batch(texts)
        nodes: list[BaseNode] = []
        for c, text, embedding in zip(concepts, texts, embeddings, strict=True):
            node = TextNode(text=text, metadata={VECTOR_SOURCE_KEY: c.concept_id}, embedding=embedding)
            if not vectors.stores_text:  # as LlamaIndex does: such stores key vectors by node id
                node.id_ = c.concept_id
            nodes.append(node)
        vectors.add(nodes)

    def vector_query(self, query: VectorStoreQuery, **kwargs: Any) -> tuple[list[LabelledNode], list[float]]:
        """The concepts nearest ``query`` among the vectors of :meth:`embed_concepts`, with their
        similarities; a :class:`ConfigurationError` saying how to make them when there are none."""
        if self._vectors is None:
            raise ConfigurationError(_NO_VECTORS)
        result = self._vectors.query(query, **kwargs)
        if result.nodes is not None:
            ids = [n.metadata.get(VECTOR_SOURCE_KEY, n.node_id) for n in result.nodes]
        else:
            ids = list(result.ids or [])
        scores = list(result.similarities or [0.0] * len(ids))
        found = self._reader.concepts(ids, as_of=self.as_of())
        kept = [(concept_node(found[i]), s) for i, s in zip(ids, scores, strict=False) if i in found]
        return [n for n, _ in kept], [s for _, s in kept]

    # -- writes (through the gateway, grounded) -----------------------------------------------

    def _writer(self) -> WriteGateway:
        if self._gateway is None:
            raise InputError("this property graph store is read-only: it was built without a WriteGateway")
        return self._gateway

    def upsert_nodes(self, nodes: Sequence[LabelledNode]) -> None:
        writes: list[Write] = []
        for node in nodes:
            if not isinstance(node, EntityNode):
                raise InputError(NOT_A_DOCUMENT_STORE, field="node", value=type(node).__name__)
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

    def get_llama_nodes(self, node_ids: list[str]) -> list[BaseNode]:
        """No documents or chunks are kept here, so none is ever found (ids are not read as names)."""
        return []

    def upsert_llama_nodes(self, llama_nodes: list[BaseNode]) -> None:
        """Refused before anything is written: see :data:`NOT_A_DOCUMENT_STORE`."""
        raise InputError(NOT_A_DOCUMENT_STORE, field="nodes", value=len(llama_nodes))

    def delete_llama_nodes(
        self, node_ids: list[str] | None = None, ref_doc_ids: list[str] | None = None
    ) -> None:
        """Refused: no document or chunk is kept here (concepts are invalidated with ``delete``)."""
        raise InputError(NOT_A_DOCUMENT_STORE, field="node_ids")

    def delete(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict[str, Any] | None = None,
        ids: list[str] | None = None,
    ) -> None:
        """Never deletes: invalidates the named concepts (their edges close with them) or, with
        ``relation_names``, only those relations touching them. The grounding comes from
        ``properties``; without it, or without anything named, this refuses. Names here are
        exact concept ids (a write is never guessed from a name)."""
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


def _distinct_edges(rows: Sequence[Neighbour]) -> int:
    return len({n.edge.version_id for n in rows})


def _rel_map(
    rows: Sequence[Neighbour], seeds: dict[str, LabelledNode], known: dict[str, ConceptRow], limit: int
) -> list[Triplet]:
    """The first ``limit`` distinct edges of ``rows`` as triplets, oriented source → target: the
    seeds' own nodes at their ends, and one thin node per other concept (the concept a row
    reached, or one of ``known``)."""
    nodes: dict[str, LabelledNode] = dict(seeds)
    out: list[Triplet] = []
    taken: set[int] = set()
    for n in rows:
        edge = n.edge
        if edge.version_id in taken:
            continue
        taken.add(edge.version_id)
        source, target = nodes.get(edge.source_id), nodes.get(edge.target_id)
        if source is None:
            source = _add(nodes, edge.source_id, n, known)
        if target is None:
            target = _add(nodes, edge.target_id, n, known)
        out.append((source, thin_relation(edge), target))
        if len(out) == limit:
            break
    return out


def _add(
    nodes: dict[str, LabelledNode], cid: str, n: Neighbour, known: dict[str, ConceptRow]
) -> LabelledNode:
    """The thin node of ``cid``, an end of row ``n`` not seen before, kept in ``nodes``."""
    node = nodes[cid] = thin_node(n.concept if n.concept.concept_id == cid else known[cid])
    return node


class SeedRetriever(CustomPGRetriever):
    """Offline sub-retriever: concepts named in the query, then their relations (``get_rel_map``).

    Needs no LLM and no embeddings; usable with ``PropertyGraphIndex.as_retriever(sub_retrievers=[...])``.
    """

    def init(self, *, depth: int = 1, limit: int = 30, **kwargs: Any) -> None:
        self._depth = depth
        self._limit = limit

    def custom_retrieve(self, query_str: str) -> CUSTOM_RETRIEVE_TYPE:
        store = self.graph_store
        if not isinstance(store, SQLPropertyGraphStore):
            raise InputError(
                f"SeedRetriever reads names through SQLPropertyGraphStore, got {type(store).__name__}",
                field="graph_store",
            )
        seeds = store.names().find(query_str)
        if not seeds:
            return []
        triplets = store.get_rel_map(store.get(ids=seeds), depth=self._depth, limit=self._limit)
        return [
            f"{s.properties.get('name', s.id)} {PHRASES.get(r.label, r.label)} {t.properties.get('name', t.id)}"
            for s, r, t in triplets
        ]
