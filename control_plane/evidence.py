"""The evidence sub-graph: what the loop has retrieved so far, with versions and grounding.

Edges are identified by their *version id* (``e123`` in prompts), so a citation pins the exact
version that was read, and a replay can tell whether that version is still in force. Requirement
groups ("one of A or B", docs/control-plane.md "Requirements with alternatives") are held whole,
as full records, by group id (``g`` + the group's version id in prompts).

While the loop runs, the graph holds thin rows (``EvidenceGraph[ConceptLike, EdgeLike]``: ids,
names, summaries, relations, confidences); :meth:`EvidenceGraph.grounded` swaps in the full
records (grounding and stamps), fetched once per answer, so an answer carries
``EvidenceGraph[Concept, Edge]``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Generic, TypeVar

from data_plane.errors import NotFound
from data_plane.records import Concept, ConceptLike, Edge, EdgeLike, RequirementGroup, Version
from data_plane.relations import PHRASES

__all__ = ["EvidenceGraph", "LessonLink", "edge_ref", "group_ref"]


@dataclass(frozen=True)
class LessonLink:
    """An active ``lesson_concepts`` link read as evidence: lesson ``lesson_id`` covers
    ``concept_id``; cited as ``l`` + its version id."""

    lesson_id: str
    title: str
    concept_id: str
    version: Version

    @property
    def ref(self) -> str:
        return f"l{self.version.stamp.version_id}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "link_id": self.ref,
            "lesson_id": self.lesson_id,
            "title": self.title,
            "concept_id": self.concept_id,
            "grounding": self.version.grounding.to_dict(),
            "stamp": self.version.stamp.to_dict(),
        }


C = TypeVar("C", bound=ConceptLike)
E = TypeVar("E", bound=EdgeLike)


def edge_ref(edge: EdgeLike) -> str:
    """The id an edge has in prompts and citations: ``e`` + its version id."""
    return f"e{edge.version_id}"


def group_ref(group: RequirementGroup) -> str:
    """The id a requirement group has in prompts: ``g`` + its version id."""
    return f"g{group.version_id}"


@dataclass
class EvidenceGraph(Generic[C, E]):
    """Concepts and edges gathered by the loop. Grows monotonically; never holds duplicates."""

    concepts: dict[str, C] = field(default_factory=dict)
    edges: dict[str, E] = field(default_factory=dict)  # edge_ref -> edge
    seeds: tuple[str, ...] = ()
    lessons: dict[str, LessonLink] = field(default_factory=dict)  # link ref -> link
    groups: dict[str, RequirementGroup] = field(default_factory=dict)  # group id -> group

    def size(self) -> tuple[int, int, int, int]:
        """How much it holds (concepts, edges, lesson links, groups): a mark :meth:`at` returns
        to, since it only grows, in insertion order."""
        return len(self.concepts), len(self.edges), len(self.lessons), len(self.groups)

    def at(self, size: tuple[int, int, int, int]) -> EvidenceGraph[C, E]:
        """The evidence as it was when it held ``size`` (:meth:`size`): itself if it has not grown
        since, else a copy of what it held then."""
        if size == self.size():
            return self
        c, e, lessons, g = size
        return EvidenceGraph(
            dict(islice(self.concepts.items(), c)),
            dict(islice(self.edges.items(), e)),
            self.seeds,
            dict(islice(self.lessons.items(), lessons)),
            dict(islice(self.groups.items(), g)),
        )

    def add_group(self, group: RequirementGroup) -> bool:
        if group.group_id in self.groups:
            return False
        self.groups[group.group_id] = group
        return True

    def groups_of(self, target_id: str) -> list[RequirementGroup]:
        """The requirement groups of ``target_id`` held, by group id."""
        return sorted((g for g in self.groups.values() if g.target_id == target_id), key=lambda g: g.group_id)

    def groups_naming(self, concept_id: str) -> list[RequirementGroup]:
        """The requirement groups held with ``concept_id`` in one of their options, by group id."""
        return sorted(
            (g for g in self.groups.values() if any(concept_id in o for o in g.options)),
            key=lambda g: g.group_id,
        )

    def add_lesson_link(self, link: LessonLink) -> bool:
        if link.ref in self.lessons:
            return False
        self.lessons[link.ref] = link
        return True

    def lessons_of(self, concept_id: str) -> list[LessonLink]:
        return sorted(
            (x for x in self.lessons.values() if x.concept_id == concept_id), key=lambda x: x.lesson_id
        )

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
        if self.groups:
            lines.append(
                "REQUIREMENTS (group_id | target needs k of: option | option ...; an option's concepts all needed):"
            )
            for gid in sorted(self.groups):
                g = self.groups[gid]
                options = " | ".join(" + ".join(o) for o in g.options)
                lines.append(f"- {group_ref(g)} | {g.target_id} needs {g.needs} of: {options}")
        if self.lessons:
            lines.append("LESSONS (link_id | lesson_id | title | covers concept):")
            for ref in sorted(self.lessons, key=lambda r: int(r[1:])):
                x = self.lessons[ref]
                lines.append(f"- {ref} | {x.lesson_id} | {json.dumps(x.title)} | {x.concept_id}")
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
            lessons=dict(self.lessons),
            groups=dict(self.groups),
        )

    def to_dict(self: EvidenceGraph[Concept, Edge]) -> dict[str, Any]:
        """JSON-ready data (the ``evidence`` of ``answer/1``); only a grounded graph has it."""
        out: dict[str, Any] = {
            "seeds": list(self.seeds),
            "concepts": [self.concepts[c].to_dict() for c in sorted(self.concepts)],
            "edges": [
                {"edge_id": ref, **e.to_dict()}
                for ref, e in sorted(self.edges.items(), key=lambda kv: int(kv[0][1:]))
            ],
        }
        if self.lessons:  # absent when empty, so older answer payloads keep their shape
            out["lessons"] = [
                self.lessons[r].to_dict() for r in sorted(self.lessons, key=lambda r: int(r[1:]))
            ]
        if self.groups:  # likewise
            out["requirements"] = [
                {"ref": group_ref(self.groups[g]), **self.groups[g].to_dict()} for g in sorted(self.groups)
            ]
        return out
