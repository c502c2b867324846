"""Gold answers computed independently of the backend, with networkx, from plain edge triples.

These functions never touch the database or the loop: they are the oracle. Relation semantics
follow ``data_plane.relations``: ``prerequisite`` source comes before target; ``builds_on`` source
builds on target (so the target comes first); ``part_of`` source is a part of target;
``related`` and ``contrasts_with`` are symmetric.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import networkx as nx

from data_plane.clock import parse_time
from data_plane.relations import BUILDS_ON, CONTRASTS_WITH, PART_OF, PREREQUISITE, RELATED

__all__ = [
    "GraphView",
    "before_graph",
    "builds_on_x",
    "comes_after",
    "contrasts",
    "dependents",
    "direct_prerequisites",
    "foundations",
    "lessons_before",
    "lessons_covering",
    "load_bundle_lessons",
    "load_bundle_view",
    "needed_before",
    "parts",
    "related",
    "unique_path",
    "wholes",
]

Triple = tuple[str, str, str]


@dataclass(frozen=True)
class GraphView:
    """A graph at one point in time: concept ids and (source, target, relation) triples."""

    concepts: frozenset[str]
    edges: frozenset[Triple]

    @classmethod
    def of(cls, concepts: Iterable[str], edges: Iterable[Triple]) -> GraphView:
        return cls(frozenset(concepts), frozenset(edges))

    def out(self, x: str, relation: str) -> set[str]:
        return {t for s, t, r in self.edges if s == x and r == relation}

    def into(self, x: str, relation: str) -> set[str]:
        return {s for s, t, r in self.edges if t == x and r == relation}


def before_graph(view: GraphView) -> nx.DiGraph:
    """``u -> v`` when ``u`` must come before ``v``: prerequisite u->v, or v builds_on u."""
    g = nx.DiGraph()
    g.add_nodes_from(view.concepts)
    for s, t, r in view.edges:
        if r == PREREQUISITE:
            g.add_edge(s, t)
        elif r == BUILDS_ON:
            g.add_edge(t, s)
    return g


def direct_prerequisites(view: GraphView, x: str) -> set[str]:
    """Sources of ``prerequisite`` edges into ``x`` (the relation as stored, one hop)."""
    return view.into(x, PREREQUISITE)


def needed_before(view: GraphView, x: str) -> set[str]:
    """Everything needed before ``x``: the transitive closure over prerequisite edges into ``x``
    and builds_on edges out of ``x``."""
    g = before_graph(view)
    return set(nx.ancestors(g, x)) if x in g else set()


def dependents(view: GraphView, x: str) -> set[str]:
    """Concepts that have ``x`` as a direct prerequisite (targets of prerequisite edges out of x)."""
    return view.out(x, PREREQUISITE)


def comes_after(view: GraphView, x: str) -> set[str]:
    """Everything that comes after ``x``, transitively: the mirror of :func:`needed_before`."""
    g = before_graph(view)
    return set(nx.descendants(g, x)) if x in g else set()


def builds_on_x(view: GraphView, x: str) -> set[str]:
    """Concepts that build on ``x`` (sources of builds_on edges into ``x``)."""
    return view.into(x, BUILDS_ON)


def foundations(view: GraphView, x: str) -> set[str]:
    """Concepts ``x`` builds on (targets of builds_on edges out of ``x``)."""
    return view.out(x, BUILDS_ON)


def parts(view: GraphView, x: str) -> set[str]:
    """The parts of ``x`` (sources of part_of edges into ``x``)."""
    return view.into(x, PART_OF)


def wholes(view: GraphView, x: str) -> set[str]:
    """What ``x`` is part of (targets of part_of edges out of ``x``)."""
    return view.out(x, PART_OF)


def contrasts(view: GraphView, x: str) -> set[str]:
    """Concepts ``x`` contrasts with (symmetric)."""
    return view.out(x, CONTRASTS_WITH) | view.into(x, CONTRASTS_WITH)


def related(view: GraphView, x: str) -> set[str]:
    """Concepts related to ``x`` (symmetric)."""
    return view.out(x, RELATED) | view.into(x, RELATED)


def unique_path(view: GraphView, a: str, b: str) -> list[str] | None:
    """The concepts on the shortest "before" path from ``a`` to ``b`` (both included), if there is
    exactly one shortest path; None when there is no path or the shortest one is ambiguous."""
    g = before_graph(view)
    if a not in g or b not in g or not nx.has_path(g, a, b):
        return None
    paths = list(nx.all_shortest_paths(g, a, b))
    return list(paths[0]) if len(paths) == 1 else None


Lessons = dict[str, frozenset[str]]
"""Lesson id -> the concepts it covers (links in force at one time)."""


def lessons_covering(lessons: Lessons, x: str) -> set[str]:
    """The lessons with a link to ``x``."""
    return {lesson for lesson, covered in lessons.items() if x in covered}


def lessons_before(view: GraphView, lessons: Lessons, x: str) -> set[str]:
    """Lessons to take before ``x``: those covering something needed before ``x``
    (:func:`needed_before`), less the lessons that cover ``x`` itself."""
    needed = needed_before(view, x)
    return {lesson for lesson, covered in lessons.items() if covered & needed} - lessons_covering(lessons, x)


def _in_force(valid_at: str, invalid_at: str, at: datetime | None, default_valid: str) -> bool:
    if at is None:
        return not invalid_at
    start = parse_time(valid_at or default_valid)
    return start <= at and (not invalid_at or parse_time(invalid_at) > at)


def load_bundle_view(directory: str | Path, *, at: datetime | None = None) -> GraphView:
    """Read a ``kg-bundle/1`` directory's CSVs as a GraphView valid at ``at`` (None: now, i.e.
    every row that is not invalidated). Read directly from the files, not through the backend."""
    directory = Path(directory)
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    default_valid = manifest.get("defaults", {}).get("valid_at", "1970-01-01T00:00:00Z")
    with (directory / "concepts.csv").open(encoding="utf-8", newline="") as fh:
        concepts = {
            r["id"]
            for r in csv.DictReader(fh)
            if _in_force(r.get("valid_at") or "", r.get("invalid_at") or "", at, default_valid)
        }
    with (directory / "concept_edges.csv").open(encoding="utf-8", newline="") as fh:
        edges = {
            (r["source_id"], r["target_id"], r["relation"])
            for r in csv.DictReader(fh)
            if _in_force(r.get("valid_at") or "", r.get("invalid_at") or "", at, default_valid)
            and r["source_id"] in concepts
            and r["target_id"] in concepts
        }
    return GraphView.of(concepts, edges)


def load_bundle_lessons(directory: str | Path, *, at: datetime | None = None) -> Lessons:
    """Read a bundle's ``lesson_concepts.csv`` as the lessons in force at ``at`` (None: now), keeping
    only links to concepts in force then. Read directly from the files, not through the backend."""
    directory = Path(directory)
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    default_valid = manifest.get("defaults", {}).get("valid_at", "1970-01-01T00:00:00Z")
    concepts = load_bundle_view(directory, at=at).concepts
    out: dict[str, set[str]] = {}
    path = directory / "lesson_concepts.csv"
    if not path.exists():
        return {}
    with path.open(encoding="utf-8", newline="") as fh:
        for r in csv.DictReader(fh):
            if r["concept_id"] in concepts and _in_force(
                r.get("valid_at") or "", r.get("invalid_at") or "", at, default_valid
            ):
                out.setdefault(r["lesson_id"], set()).add(r["concept_id"])
    return {lesson: frozenset(covered) for lesson, covered in out.items()}
