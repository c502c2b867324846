"""The evidence sub-graph: what the loop has retrieved so far, with versions and grounding.

Edges are identified by their *version id* (``e123`` in prompts), so a citation pins the exact
version that was read, and a replay can tell whether that version is still in force.

While the loop runs, the graph holds thin rows (``EvidenceGraph[ConceptLike, EdgeLike]``: ids,
names, summaries, relations, confidences); :meth:`EvidenceGraph.grounded` swaps in the full
records (grounding and stamps), fetched once per answer, so an answer carries
``EvidenceGraph[Concept, Edge]``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from data_plane.errors import NotFound
from data_plane.records import Concept, ConceptLike, Edge, EdgeLike
from data_plane.relations import PHRASES

__all__ = ["EvidenceGraph", "edge_ref"]

C = TypeVar("C", bound=ConceptLike)
E = TypeVar("E", bound=EdgeLike)


def edge_ref(edge: EdgeLike) -> str:
    """The id an edge has in prompts and citations: ``e`` + its version id."""
    return f"e{edge.version_id}"


@dataclass
class EvidenceGraph(Generic[C, E]):
    """Concepts and edges gathered by the loop. Grows monotonically; never holds duplicates."""

    concepts: dict[str, C] = field(default_factory=dict)
    edges: dict[str, E] = field(default_factory=dict)  # edge_ref -> edge
    seeds: tuple[str, ...] = ()

    def add_concept(self, concept: C) -> bool:
        if concept.concept_id in self.concepts:
            return False
        self.concepts[concept.concept_id] = concept
        return True

    def add_edge(self, edge: E) -> bool:
        ref = edge_ref(edge)
        if ref in self.edges:
            return False
        self.edges[ref] = edge
        return True

    def name(self, concept_id: str) -> str:
        c = self.concepts.get(concept_id)
        return c.name if c else concept_id

    def serialise(self, *, order: str = "id") -> str:
        """Compact, id-bearing text for a prompt. Concept text is quoted data (JSON strings).

        ``order="id"`` sorts concepts by id and edges by version; ``order="added"`` keeps the order
        they joined the evidence, so the text of an earlier round is a prefix of a later one's
        concept list (what a model gateway's prefix cache can reuse)."""
        if order not in ("id", "added"):
            raise ValueError(f"order must be 'id' or 'added', got {order!r}")
        by_id = order == "id"
        lines = ["CONCEPTS (id | name | summary):"]
        for cid in sorted(self.concepts) if by_id else self.concepts:
            c = self.concepts[cid]
            seed = " [seed]" if cid in self.seeds else ""
            lines.append(f"- {cid}{seed} | {json.dumps(c.name)} | {json.dumps(c.summary)}")
        lines.append("EDGES (edge_id | source -relation-> target | confidence):")
        for ref in sorted(self.edges, key=lambda r: int(r[1:])) if by_id else self.edges:
            e = self.edges[ref]
            lines.append(f"- {ref} | {e.source_id} -{e.relation}-> {e.target_id} | {e.confidence:.2f}")
        return "\n".join(lines)

    def sentences(self) -> list[str]:
        """Each edge as a plain sentence (for offline answers and pictures)."""
        return [
            f"{self.name(e.source_id)} {PHRASES[e.relation]} {self.name(e.target_id)}"
            for _, e in sorted(self.edges.items(), key=lambda kv: int(kv[0][1:]))
        ]

    def thin_versions(self) -> tuple[list[int], list[int]]:
        """(edge version ids, concept version ids) of the thin rows held: what
        :meth:`grounded` needs full records of."""
        return (
            [e.version_id for e in self.edges.values() if not isinstance(e, Edge)],
            [c.version_id for c in self.concepts.values() if not isinstance(c, Concept)],
        )

    def grounded(
        self, edges: Mapping[int, Edge], concepts: Mapping[int, Concept]
    ) -> EvidenceGraph[Concept, Edge]:
        """The same evidence, each row replaced by its full record (by version id); rows that
        already are full records are kept. Insertion order is preserved."""

        def full(item: Any, table: Mapping[int, Any], kind: type) -> Any:
            if isinstance(item, kind):
                return item
            try:
                return table[item.version_id]
            except KeyError:
                what = f"{kind.__name__.lower()} version {item.version_id}"
                raise NotFound(f"no full record of {what} to ground the evidence", key=what) from None

        return EvidenceGraph(
            concepts={cid: full(c, concepts, Concept) for cid, c in self.concepts.items()},
            edges={ref: full(e, edges, Edge) for ref, e in self.edges.items()},
            seeds=self.seeds,
        )

    def to_dict(self: EvidenceGraph[Concept, Edge]) -> dict[str, Any]:
        """JSON-ready data (the ``evidence`` of ``answer/1``); only a grounded graph has it."""
        return {
            "seeds": list(self.seeds),
            "concepts": [self.concepts[c].to_dict() for c in sorted(self.concepts)],
            "edges": [
                {"edge_id": ref, **e.to_dict()}
                for ref, e in sorted(self.edges.items(), key=lambda kv: int(kv[0][1:]))
            ],
        }
