"""Gold answers computed independently of the backend, with networkx, from plain edge triples.

These functions never touch the database or the loop: they are the oracle. Relation semantics
follow ``data_plane.relations``: ``prerequisite`` source comes before target; ``builds_on`` source
builds on target (so the target comes first); ``part_of`` source is a part of target;
``related`` and ``contrasts_with`` are symmetric.

The question forms (check, count, why, order, relate, next, remaining, shared; docs/evals.md,
"Question forms corpus") are read off the learning order: an order graph ``g`` (:func:`before_graph`)
has ``u -> v`` when ``u`` must come before ``v``; ``pred(y)`` is what comes directly before ``y``,
``anc(y)`` everything before it. Each ``*_gold`` function returns a :class:`FormGold`: the finding
the answer's ``result`` must carry and the concept set it is scored on.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import networkx as nx

from data_plane.clock import parse_time
from data_plane.relations import BUILDS_ON, CONTRASTS_WITH, PART_OF, PREREQUISITE, RELATED

__all__ = [
    "FormGold",
    "GraphView",
    "before_graph",
    "builds_on_x",
    "check_gold",
    "comes_after",
    "contrasts",
    "count_gold",
    "dependents",
    "direct_prerequisites",
    "first_of",
    "foundations",
    "holds_before",
    "learn_next",
    "left_before",
    "lessons_before",
    "lessons_covering",
    "load_bundle_lessons",
    "load_bundle_view",
    "nearest_shared_foundations",
    "needed_before",
    "next_gold",
    "order_gold",
    "parts",
    "relate_gold",
    "related",
    "relation_between",
    "remaining_gold",
    "shared_gold",
    "shared_needs",
    "shortest_chain",
    "unique_path",
    "wholes",
    "why_gold",
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


def before_graph(view: GraphView, *, only: str | None = None) -> nx.DiGraph:
    """``u -> v`` when ``u`` must come before ``v``: prerequisite u->v, or v builds_on u. With
    ``only`` (``prerequisite`` or ``builds_on``), that relation's edges alone."""
    g = nx.DiGraph()
    g.add_nodes_from(view.concepts)
    for s, t, r in view.edges:
        if r == PREREQUISITE and only in (None, PREREQUISITE):
            g.add_edge(s, t)
        elif r == BUILDS_ON and only in (None, BUILDS_ON):
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


# -- question forms ------------------------------------------------------------------------------------

_OTHER_RELATIONS = (RELATED, CONTRASTS_WITH, PART_OF)


@dataclass(frozen=True)
class FormGold:
    """A question form's gold: the ``result`` keys the answer must carry (``finding``), the concept
    set it is scored on, and how (``exact``: the answer's set must equal it; ``contains``: the
    answer must be about these concepts)."""

    finding: Mapping[str, Any] = field(default_factory=dict)
    concepts: frozenset[str] = frozenset()
    match: str = "exact"


def _before(g: nx.DiGraph, y: str) -> set[str]:
    return set(nx.ancestors(g, y)) if y in g else set()


def holds_before(g: nx.DiGraph, x: str, y: str, *, direct: bool = False) -> bool:
    """Is ``x`` needed before ``y``: directly (an edge x -> y) or at all (x is an ancestor of y)."""
    if direct:
        return bool(g.has_edge(x, y))
    return x in _before(g, y)


def shortest_chain(g: nx.DiGraph, x: str, y: str) -> set[str] | None:
    """The concepts on every shortest path ``x .. y`` (both ends included): why ``x`` is needed
    for ``y``. None when ``x`` is not needed before ``y``."""
    if x == y or x not in g or y not in g or not nx.has_path(g, x, y):
        return None
    return {n for path in nx.all_shortest_paths(g, x, y) for n in path}


def first_of(g: nx.DiGraph, a: str, b: str) -> str | None:
    """Which of ``a`` and ``b`` comes first; None when neither is needed before the other, or both
    are (they sit on a cycle: no order between them)."""
    a_first, b_first = a in _before(g, b), b in _before(g, a)
    if a_first == b_first:
        return None
    return a if a_first else b


def nearest_shared_foundations(g: nx.DiGraph, a: str, b: str) -> set[str]:
    """The shared foundations of ``a`` and ``b`` (needed before both) that no other shared
    foundation strictly comes after: ``s`` is dropped when some shared ``t`` has ``s`` before it
    and not ``t`` before ``s`` (on a cycle the whole cycle stays)."""
    shared = _before(g, a) & _before(g, b)
    before = {s: _before(g, s) for s in shared}
    return {s for s in shared if not any(s in before[t] and t not in before[s] for t in shared)}


def relation_between(view: GraphView, a: str, b: str) -> tuple[str, set[str]]:
    """How ``a`` and ``b`` are related (``evals.questions.HOWS``, the first that applies) and the
    concepts that show it: the nodes of every shortest learning path between them (in the
    direction(s) with the shortest one); else their nearest shared foundations; else both ends,
    for a direct edge of another relation (related, contrasts_with, part_of) or for none."""
    g = before_graph(view)
    lengths = {
        (s, t): nx.shortest_path_length(g, s, t)
        for s, t in ((a, b), (b, a))
        if a != b and nx.has_path(g, s, t)
    }
    if lengths:
        best = min(lengths.values())
        return "path", {
            n
            for (s, t), length in lengths.items()
            if length == best
            for path in nx.all_shortest_paths(g, s, t)
            for n in path
        }
    nearest = nearest_shared_foundations(g, a, b)
    if nearest:
        return "shared_foundations", nearest
    direct = any({s, t} == {a, b} and r in _OTHER_RELATIONS for s, t, r in view.edges)
    return ("direct" if direct else "none"), {a, b}


def learn_next(g: nx.DiGraph, known: Iterable[str]) -> set[str]:
    """What a learner who knows ``known`` can learn next: with K* = the knowns and everything
    before them, the concepts outside K* that have something directly before them and all of it
    in K*. Roots (nothing before them) are left out: "next" builds on what the learner knows."""
    have = _known(g, known)
    return {c for c in g if c not in have and (pred := set(g.predecessors(c))) and pred <= have}


def left_before(g: nx.DiGraph, known: Iterable[str], y: str) -> set[str]:
    """What is left before ``y`` for a learner who knows ``known``: anc(y) minus K*."""
    return _before(g, y) - _known(g, known)


def _known(g: nx.DiGraph, known: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for k in known:
        out |= {k} | _before(g, k)
    return out


def shared_needs(g: nx.DiGraph, x: str, y: str, *, direct: bool) -> set[str]:
    """What ``x`` and ``y`` both need: directly (pred(x) & pred(y)) or at all (anc(x) & anc(y))."""
    if direct:
        return set(g.predecessors(x)) & set(g.predecessors(y)) if x in g and y in g else set()
    return _before(g, x) & _before(g, y)


def _both(*ends: str) -> frozenset[str]:
    return frozenset(ends)


def check_gold(g: nx.DiGraph, x: str, y: str, *, direct: bool) -> FormGold:
    """ "Is x needed (directly) before y": ``holds``; the answer must be about both."""
    return FormGold({"holds": holds_before(g, x, y, direct=direct)}, _both(x, y), "contains")


def count_gold(members: Iterable[str], x: str) -> FormGold:
    """ "How many ...": the count and the counted set; for none, the answer must be about ``x``."""
    counted = frozenset(members)
    if not counted:
        return FormGold({"count": 0}, _both(x), "contains")
    return FormGold({"count": len(counted)}, counted)


def why_gold(g: nx.DiGraph, x: str, y: str) -> FormGold:
    """ "Why is x needed for y": the nodes of all shortest chains; ``holds`` false (about both)
    when x is not needed before y."""
    chain = shortest_chain(g, x, y)
    if chain is None:
        return FormGold({"holds": False}, _both(x, y), "contains")
    return FormGold({"holds": True}, frozenset(chain))


def order_gold(g: nx.DiGraph, a: str, b: str) -> FormGold:
    """ "Which first, a or b": ``first`` is the one needed before the other, or None."""
    return FormGold({"first": first_of(g, a, b)}, _both(a, b), "contains")


def relate_gold(view: GraphView, a: str, b: str) -> FormGold:
    """ "How are a and b related": ``how`` and, for a path or shared foundations, its concepts."""
    how, concepts = relation_between(view, a, b)
    if how in ("path", "shared_foundations"):
        return FormGold({"how": how}, frozenset(concepts))
    return FormGold({"how": how}, _both(a, b), "contains")


def next_gold(g: nx.DiGraph, known: Iterable[str]) -> FormGold:
    """ "I know K, what next": :func:`learn_next`, no finding."""
    return FormGold(concepts=frozenset(learn_next(g, known)))


def remaining_gold(g: nx.DiGraph, known: Iterable[str], y: str) -> FormGold:
    """ "I know K, what is left before y": :func:`left_before`, no finding."""
    return FormGold(concepts=frozenset(left_before(g, known, y)))


def shared_gold(g: nx.DiGraph, x: str, y: str, *, direct: bool) -> FormGold:
    """ "What do x and y both need": :func:`shared_needs`, no finding."""
    return FormGold(concepts=frozenset(shared_needs(g, x, y, direct=direct)))


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
