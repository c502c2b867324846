"""Gold answers computed independently of the backend, with networkx, from plain edge triples.

These functions never touch the database or the loop: they are the oracle. Relation semantics
follow ``data_plane.relations``: ``prerequisite`` source comes before target; ``builds_on`` source
builds on target (so the target comes first); ``part_of`` source is a part of target;
``related`` and ``contrasts_with`` are symmetric.

The question forms (check, count, why, order, relate, next, remaining, shared, ready, opens, start;
docs/evals.md, "Question forms corpus") are read off the learning order: an order graph ``g`` (:func:`before_graph`)
has ``u -> v`` when ``u`` must come before ``v``; ``pred(y)`` is what comes directly before ``y``,
``anc(y)`` everything before it. Each ``*_gold`` function returns a :class:`FormGold`: the finding
the answer's ``result`` must carry and the concept set it is scored on.

Course catalogues state requirements with alternatives ("one of CSE 21, MATH 154"): a bundle's
``requirements.json`` holds them, its edges only the required courses. :func:`requirement_groups`
reads which courses such groups constrain and name, and the ``group_free_*`` tests say when a
gold read off the edges cannot change once the groups become part of the graph (see
:class:`RequirementGroups` for the assumption they rest on).
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
    "RequirementGroups",
    "before_graph",
    "builds_on_x",
    "check_gold",
    "closure",
    "comes_after",
    "contrasts",
    "count_gold",
    "dependents",
    "direct_prerequisites",
    "first_of",
    "foundations",
    "group_free_after",
    "group_free_before",
    "group_free_next",
    "holds_before",
    "learn_next",
    "left_before",
    "lessons_before",
    "lessons_covering",
    "load_bundle_lessons",
    "load_bundle_view",
    "load_requirements",
    "missing_for",
    "nearest_shared_foundations",
    "needed_before",
    "next_gold",
    "opened_by",
    "opens_gold",
    "order_gold",
    "parts",
    "ready_gold",
    "relate_gold",
    "related",
    "relation_between",
    "remaining_gold",
    "requirement_groups",
    "shared_gold",
    "shared_needs",
    "shortest_chain",
    "start_gold",
    "starting_points",
    "unique_chain",
    "unique_path",
    "wholes",
    "why_gold",
    "with_groups",
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
    return unique_chain(before_graph(view), a, b)


def unique_chain(g: nx.DiGraph, a: str, b: str) -> list[str] | None:
    """:func:`unique_path` on an order graph already built (``u -> v``: u comes before v)."""
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


def closure(g: nx.DiGraph, known: Iterable[str]) -> set[str]:
    """K*: the knowns and everything before each of them."""
    return _known(g, known)


def missing_for(g: nx.DiGraph, known: Iterable[str], x: str) -> set[str]:
    """What a learner who has done ``known`` still lacks for ``x``: anc(x) minus K*. (The set of
    :func:`left_before`; named for the readiness question "can I take x, having done K?")."""
    return _before(g, x) - _known(g, known)


def opened_by(g: nx.DiGraph, x: str) -> set[str]:
    """What knowing ``x`` opens: the direct dependents ``d`` of ``x`` whose every direct
    prerequisite is ``x`` or before ``x`` (pred(d) within K* of {x}), i.e. what becomes possible
    because of ``x`` alone. A dependent that also needs something unrelated to ``x`` is not opened."""
    if x not in g:
        return set()
    have = _known(g, (x,))
    return {d for d in g.successors(x) if set(g.predecessors(d)) <= have}


def starting_points(g: nx.DiGraph, x: str) -> set[str]:
    """Where to start towards ``x``: the concepts before ``x`` that have nothing before them."""
    return {a for a in _before(g, x) if g.in_degree(a) == 0}


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


def ready_gold(g: nx.DiGraph, known: Iterable[str], x: str) -> FormGold:
    """ "Can I take x, having done K?": ``holds`` when nothing is missing; the concepts are what is
    missing (:func:`missing_for`, empty when ready)."""
    missing = frozenset(missing_for(g, known, x))
    return FormGold({"holds": not missing}, missing)


def opens_gold(g: nx.DiGraph, x: str) -> FormGold:
    """ "What opens up once I know x": :func:`opened_by`, no finding."""
    return FormGold(concepts=frozenset(opened_by(g, x)))


def start_gold(g: nx.DiGraph, x: str) -> FormGold:
    """ "Where do I start if I want x": :func:`starting_points`, no finding."""
    return FormGold(concepts=frozenset(starting_points(g, x)))


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


# -- requirements with alternatives (course catalogues) -----------------------------------------------


GROUP_TYPES = ("one", "two")
"""Requirement expression types that offer alternatives (any one of, any two of)."""


@dataclass(frozen=True)
class RequirementGroups:
    """What a catalogue's one-of/two-of groups touch.

    ``targets``: the courses whose requirement holds such a group anywhere in its expression;
    ``options``: every course named anywhere inside such a group (nested all-of parts included);
    ``mentions``: each course's whole expression as the set of course names it holds.

    The ``group_free_*`` tests assume the one thing a change that brings the groups into the graph
    may do: rewrite the requirement (the incoming edges) of a group target in any way, with new
    nodes (a group, a course the catalogue does not list) and new edges out of the courses that
    expression names; the incoming edges of every other course stay as they are. Under that
    assumption a course that is not a target keeps its direct prerequisites, and a course named in
    no target's expression keeps its direct dependents.
    """

    targets: frozenset[str]
    options: frozenset[str]
    mentions: Mapping[str, frozenset[str]]
    expressions: Mapping[str, Any] = field(default_factory=dict)

    @property
    def named_by_targets(self) -> frozenset[str]:
        """Every course named in the requirement of some group target (option or required part)."""
        return frozenset(c for t in self.targets for c in self.mentions.get(t, ()))


def requirement_groups(requirements: Mapping[str, Any]) -> RequirementGroups:
    """Read requirement expressions (course -> a course name, or ``{"type": "all"|"one"|"two",
    "courses": [...]}``, nested) into :class:`RequirementGroups`."""
    targets: set[str] = set()
    options: set[str] = set()
    mentions: dict[str, frozenset[str]] = {}

    def walk(expr: Any, inside: bool, named: set[str]) -> bool:
        if isinstance(expr, str):
            named.add(expr)
            if inside:
                options.add(expr)
            return False
        if not isinstance(expr, Mapping) or expr.get("type") not in ("all", *GROUP_TYPES):
            raise ValueError(f"not a requirement expression: {expr!r}")
        group = expr["type"] in GROUP_TYPES
        found = group
        for part in expr.get("courses") or ():
            found = walk(part, inside or group, named) or found
        return found

    for course, expr in requirements.items():
        named: set[str] = set()
        if walk(expr, False, named):
            targets.add(course)
        mentions[course] = frozenset(named)
    return RequirementGroups(frozenset(targets), frozenset(options), mentions, dict(requirements))


def load_requirements(directory: str | Path) -> RequirementGroups | None:
    """A bundle's ``requirements.json`` (``{"requirements": {course: expression}}``) read with
    :func:`requirement_groups`; None when the bundle has none."""
    path = Path(directory) / "requirements.json"
    if not path.exists():
        return None
    return requirement_groups(json.loads(path.read_text(encoding="utf-8"))["requirements"])


def group_free_before(g: nx.DiGraph, groups: RequirementGroups, x: str) -> bool:
    """anc(x) (and so pred(x), the paths into x, the starting points of x) is the same with the
    groups: neither x nor anything before it is a group target."""
    return not (({x} | _before(g, x)) & groups.targets)


def group_free_after(g: nx.DiGraph, groups: RequirementGroups, x: str, *, direct: bool) -> bool:
    """succ(x) (``direct``) or desc(x) is the same with the groups: no group target's requirement
    names x (so x is no option and no dependent of x is a target), nor, for desc, any course after x."""
    named = groups.named_by_targets
    after = set(g.successors(x)) if direct else (set(nx.descendants(g, x)) if x in g else set())
    ends = {x} if direct else {x} | after
    return not (ends & named) and not (after & groups.targets)


def group_free_next(g: nx.DiGraph, groups: RequirementGroups, known: Iterable[str]) -> bool:
    """ "What next, having done K" reads the same with the groups: K* holds no group target (each
    known is :func:`group_free_before`), and no group target outside K* names a course of K* (a
    target naming none of K* is not next either way)."""
    known = list(known)
    if not all(group_free_before(g, groups, k) for k in known):
        return False
    have = _known(g, known)
    return not any(t not in have and groups.mentions.get(t, frozenset()) & have for t in groups.targets)


def with_groups(g: nx.DiGraph, groups: RequirementGroups, *, style: str) -> nx.DiGraph:
    """``g`` as two ways of bringing the groups in might leave it, to test a gold against:

    * ``nodes``: every group target's requirement rebuilt as nodes (``t#0``, ``t#1``, ...: one per
      all/one/two expression, each part -> its expression's node, the top node -> ``t``), its old
      incoming edges dropped; a course the graph does not hold becomes a node;
    * ``flat``: every course named in a target's expression gets an edge to the target (each
      alternative read as required), the old edges kept.

    New nodes' names hold ``#`` or are the catalogue's own names of unlisted courses."""
    if style not in ("nodes", "flat"):
        raise ValueError(f"style must be 'nodes' or 'flat', not {style!r}")
    out = g.copy()
    for t in sorted(groups.targets):
        if style == "flat":
            out.add_edges_from((c, t) for c in sorted(groups.mentions.get(t, ())) if c != t)
            continue
        out.remove_edges_from(list(out.in_edges(t)))
        out.add_edge(_expression_nodes(out, t, groups.expressions[t], []), t)
    return out


def _expression_nodes(out: nx.DiGraph, t: str, expr: Any, made: list[str]) -> str:
    """Add ``expr`` (part of target ``t``'s requirement) to ``out`` as nodes; its top node's name."""
    if isinstance(expr, str):
        return expr
    node = f"{t}#{len(made)}"
    made.append(node)
    for part in expr.get("courses") or ():
        out.add_edge(_expression_nodes(out, t, part, made), node)
    return node
