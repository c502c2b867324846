"""Verification of a draft against the evidence sub-graph: pure, no I/O.

A draft may become the answer only when

* it carries no ``error`` (malformed model output),
* every concept, edge and lesson link it cites, and every member of its ``result``, is in the
  evidence (which holds only versions read as of the query time, so this is "active as of the
  query time"; an id outside it is unknown or out of scope);
* its confidence is at least the threshold (0.80 by default) and it cites something;
* **it cites every concept its text names**: where the synthesizer says its text names them
  (``Draft.names``, the offline synthesizer's spans: its own words are no claims), else by
  name, alias or id found in the free text with the graph's name index
  (``control_plane.planning.coverage``). A named concept outside the evidence, or, when the
  draft has no reading, any named concept it does not cite, rejects the draft;
* given the question's reading, every concept it cites or names stands in the asked relation
  to a subject along evidence edges (the reading's relations and direction, walked with
  ``understanding.relating``): an answer to "what has RAG as a prerequisite" that cites RAG's own
  prerequisites is rejected;
* **every such concept has a cited path** to a subject in that relation, and every member of
  its result a cited path along each part of the question (before+uses: a path to X *and* the
  builds_on edge from Y; "both": from each subject; "either": from one). A path the draft
  left out but the evidence holds is added (the draft is *repaired*: :attr:`Verdict.draft`
  cites it, and :attr:`Verdict.repaired` names the concepts it was added for);
* cited lesson links fit a lesson reading: "lessons covering X" cites links to X only, "lessons
  before X" links to concepts needed before X from lessons that do not cover X itself.

Which walks back a reading is a table (:data:`RULES`, one small function per intent; every
other intent walks the reading's own relation from its subjects): a new question form adds its
rule there. A rejected draft keeps its confidence capped just below the threshold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Final

from control_plane.evidence import EvidenceGraph
from control_plane.planning.coverage import evidence_names, named_concepts, quoted_records, spans_named
from control_plane.synthesizers.base import Draft
from control_plane.understanding.interpretation import Reading
from control_plane.understanding.names import NameIndex
from control_plane.understanding.relating import Walk, adjacency, mode_of, walk
from data_plane.relations import BUILDS_ON

__all__ = ["FORM_RULES", "RULES", "Route", "Rule", "Verdict", "rule_of", "verify"]


@dataclass(frozen=True)
class Verdict:
    """The outcome of checking one draft."""

    accepted: bool
    confidence: float  # the draft's confidence, capped below the threshold when rejected
    reason: str  # "accepted", or why not (recorded in the round trace)
    unknown_concepts: tuple[str, ...] = ()
    unknown_edges: tuple[str, ...] = ()
    draft: Draft | None = None  # the accepted draft, with the paths it left out cited
    repaired: tuple[str, ...] = ()  # concepts whose citation or path the verifier added
    uncited: tuple[str, ...] = ()  # named concepts outside the evidence (worth looking for)


@dataclass(frozen=True)
class Route:
    """A walk from ``start`` in ``mode`` (``relating.adjacency``) over ``relations`` (empty:
    any), ``depth`` steps at most (None: transitively)."""

    start: str
    mode: str
    relations: tuple[str, ...]
    depth: int | None


@dataclass(frozen=True)
class Rule:
    """How a reading's answer must be backed: every cited or named concept lies on one of the
    ``cite`` routes; every member on all of the ``members`` routes (any one, when ``any_member``)."""

    cite: tuple[Route, ...]
    members: tuple[Route, ...]
    any_member: bool = False


def _set_rule(reading: Reading) -> Rule | None:
    """One relation from the subject (and the other subject, when there is one)."""
    mode = mode_of(reading)
    x, y = reading.subject, reading.other
    if mode is None or x is None:
        return None
    neighbours = reading.intent == "neighbours"
    relations = () if neighbours else reading.relations
    depth = reading.hops if neighbours else (None if reading.transitive else 1)
    cite = tuple(Route(s, mode, relations, depth) for s in (x, y) if s is not None)
    members = cite if reading.combine in ("both", "either") else cite[:1]
    return Rule(cite, members, any_member=reading.combine == "either")


def _closure_rule(reading: Reading, *, transitive: bool = True) -> Rule | None:
    """Everything needed before the subject."""
    x = reading.subject
    if x is None:
        return None
    route = Route(x, "before", reading.relations, None if transitive else 1)
    return Rule((replace(route, depth=None),), (route,))


def _path_rule(reading: Reading) -> Rule | None:
    """Every node of a path from A to B comes before B."""
    b = reading.other
    if b is None:
        return None
    route = Route(b, "before", reading.relations, None)
    return Rule((route,), (route,))


def _before_uses_rule(reading: Reading) -> Rule | None:
    """The closure of X is listed (each with its path to X); each member is in it *and* one Y
    builds on (its builds_on edge from Y)."""
    x, y = reading.subject, reading.other
    if x is None or y is None:
        return _set_rule(reading)
    closure = Route(x, "before", reading.relations, None)
    uses = Route(y, "before", (BUILDS_ON,), 1)
    return Rule((closure, Route(y, "before", reading.relations, None), uses), (closure, uses))


def _about_rule(reading: Reading) -> Rule | None:
    """ "What is X": its neighbours, by any relation."""
    x = reading.subject
    return None if x is None else Rule((Route(x, "either", (), 1),), (Route(x, "either", (), 1),))


def _no_rule(reading: Reading) -> Rule | None:
    return None


def _check_rule(reading: Reading) -> Rule | None:
    """ "Is X among Y's ...": the proof path from X to Y along the asked relation, or (for "no, it
    is the other way round") the path from Y to X."""
    mode, y, x = mode_of(reading), reading.subject, reading.candidate
    if mode is None or y is None or x is None:
        return None
    relations = () if reading.intent == "neighbours" else reading.relations
    depth = None if reading.transitive else 1
    return Rule((Route(y, mode, relations, depth), Route(x, mode, relations, None)), ())


def _pair_rule(reading: Reading) -> Rule | None:
    """Which first / how related: what comes before either concept; a member lies on either side."""
    a, b = reading.subject, reading.other
    if a is None or b is None:
        return None
    routes = (Route(a, "before", reading.relations, None), Route(b, "before", reading.relations, None))
    return Rule(routes, routes, any_member=True)


# Intents whose answer is backed differently from a set answer (``_set_rule``). New question
# forms register their rule here.
RULES: Final[dict[str, Callable[[Reading], Rule | None]]] = {
    "path": _path_rule,
    "before_uses": _before_uses_rule,
    "study_plan": _closure_rule,
    "lessons_before": lambda r: _closure_rule(r, transitive=r.transitive),
    "lessons_covering": _no_rule,
    "about": _about_rule,
    "unknown": _no_rule,
    "order": _pair_rule,
    "relate": _pair_rule,
    # what comes one step after a learner's closure: each member is cited with its needs
    "next": _no_rule,
}
# Question forms backed otherwise than their intent's answer (a count is backed like its set).
FORM_RULES: Final[dict[str, Callable[[Reading], Rule | None]]] = {
    "yes_no": _check_rule,
    "why": lambda r: _closure_rule(r),
}


def rule_of(reading: Reading) -> Rule | None:
    """How an answer to ``reading`` must be backed (None: no relation is put on citations)."""
    if reading.form in FORM_RULES:
        return FORM_RULES[reading.form](reading)
    return RULES.get(reading.intent, _set_rule)(reading)


def _cap(confidence: float, threshold: float) -> float:
    """Just below the threshold (0.79 for 0.80), never above the draft's own confidence."""
    below = round(threshold - 0.01, 2) if threshold >= 0.01 else 0.0
    return max(0.0, min(confidence, below))


def _walks(
    routes: Iterable[Route], evidence: EvidenceGraph[Any, Any], refs: Iterable[str] | None
) -> list[Walk]:
    """Each route walked over the evidence edges (``refs``: only those)."""
    graph = evidence
    if refs is not None:
        graph = EvidenceGraph(evidence.concepts, {r: evidence.edges[r] for r in refs}, evidence.seeds)
    return [walk(r.start, adjacency(graph, r.relations, r.mode), depth=r.depth) for r in routes]


def verify(
    draft: Draft,
    evidence: EvidenceGraph[Any, Any],
    *,
    threshold: float = 0.80,
    reading: Reading | None = None,
    names: NameIndex | None = None,
) -> Verdict:
    """Accept (possibly repaired) or reject ``draft``; a rejection names the first reason found.

    ``names`` is the graph's name index (what the text may name); without it the evidence's own
    concepts are looked for."""
    conf = draft.confidence if 0.0 <= draft.confidence <= 1.0 else 0.0
    capped = _cap(conf, threshold)
    if draft.error:
        return Verdict(False, _cap(0.0, threshold), f"unusable model output: {draft.error}")
    members = draft.result.members if draft.result is not None else ()
    unknown_c = tuple(sorted({c for c in (*draft.concept_ids, *members) if c not in evidence.concepts}))
    unknown_e = tuple(sorted({e for e in draft.edge_ids if e not in evidence.edges}))
    unknown_e += tuple(sorted({r for r in draft.lesson_refs if r not in evidence.lessons}))
    if unknown_c or unknown_e:
        cited = ", ".join([*unknown_c, *unknown_e])
        return Verdict(False, capped, f"cites ids outside the evidence: {cited}", unknown_c, unknown_e)
    if conf < threshold:
        why = f"confidence {conf:.2f} below {threshold:.2f}"
        if draft.missing:
            why += f"; missing: {draft.missing}"
        return Verdict(False, capped, why)
    if not draft.concept_ids and not draft.edge_ids:
        return Verdict(False, capped, "cites nothing from the evidence")
    named = _named(draft, evidence, reading, names)
    if isinstance(named, str):
        return Verdict(False, capped, named)
    outside = tuple(sorted(c for c in named if c not in evidence.concepts))
    if outside:
        return Verdict(
            False, capped, "names concepts outside the evidence: " + ", ".join(outside), uncited=outside
        )
    if reading is None:
        loose = sorted(named - set(draft.concept_ids))
        if loose:
            return Verdict(False, capped, "names concepts it does not cite: " + ", ".join(loose))
        return Verdict(True, conf, "accepted", draft=draft)
    rule = rule_of(reading)
    backed = _backed(draft, evidence, reading, rule, named)
    if isinstance(backed, str):
        return Verdict(False, capped, backed)
    repaired_draft, repaired = backed
    if draft.lesson_refs:
        allowed = None
        if rule is not None:
            allowed = {c for w in _walks(rule.cite, evidence, None) for c in w.parent} | set(reading.ids())
        misplaced = _misplaced_lessons(draft, evidence, reading, allowed)
        if misplaced:
            return Verdict(
                False,
                capped,
                f"cites lesson links that are not {reading.describe()}: " + ", ".join(misplaced),
            )
    return Verdict(True, conf, "accepted", draft=repaired_draft, repaired=repaired)


def _named(
    draft: Draft, evidence: EvidenceGraph[Any, Any], reading: Reading | None, names: NameIndex | None
) -> frozenset[str] | str:
    """The concepts the draft's text names: the spans it says it named them in, or, for free
    text, the names found in it (``coverage``); or why its spans are not to be believed."""
    if draft.names is not None:
        return spans_named(draft.answer, draft.names, evidence)
    quoted = quoted_records(
        evidence, (*draft.concept_ids, *(reading.ids() if reading else ())), draft.lesson_refs, draft.edge_ids
    )
    return named_concepts(draft.answer, names or evidence_names(evidence), quoted=quoted)


def _path_nodes(w: Walk, c: str) -> list[str]:
    """``c`` and every concept on its walk back to the start."""
    nodes = [c]
    while (step := w.parent.get(nodes[-1])) is not None:
        nodes.append(step[0])
    return nodes


def _backed(
    draft: Draft,
    evidence: EvidenceGraph[Any, Any],
    reading: Reading,
    rule: Rule | None,
    named: frozenset[str],
) -> tuple[Draft, tuple[str, ...]] | str:
    """The draft with every named concept cited and every path it owes added (and the concepts
    they were added for), or why that cannot be done."""
    members = draft.result.members if draft.result is not None else ()
    want = dict.fromkeys([*draft.concept_ids, *named, *members])
    owed: list[str] = [c for c in want if c not in draft.concept_ids]
    edges = dict.fromkeys(draft.edge_ids)
    if rule is not None:
        why = _owe_paths(want, members, evidence, reading, rule, named, edges, owed)
        if why:
            return why
    ends = [c for ref in edges for c in (evidence.edges[ref].source_id, evidence.edges[ref].target_id)]
    concepts = tuple(dict.fromkeys([*want, *ends]))
    if concepts == draft.concept_ids and tuple(edges) == draft.edge_ids:
        return draft, ()
    return replace(draft, concept_ids=concepts, edge_ids=tuple(edges)), tuple(dict.fromkeys(owed))


def _owe_paths(
    want: Iterable[str],
    members: tuple[str, ...],
    evidence: EvidenceGraph[Any, Any],
    reading: Reading,
    rule: Rule,
    named: frozenset[str],
    edges: dict[str, None],
    owed: list[str],
) -> str:
    """Add to ``edges`` the evidence path of every wanted concept (and member, along each of its
    routes) that the cited edges do not reach; "" when done, else why it cannot be."""
    subjects = set(reading.ids())
    found = _walks(rule.cite, evidence, None)
    stray = sorted(c for c in want if c not in subjects and not any(c in w.parent for w in found))
    if stray:
        what = "names or cites" if set(stray) & named else "cites"
        return f"{what} concepts that are not {reading.describe()} along the evidence: " + ", ".join(stray)
    reach = [set(w.parent) for w in _walks(rule.cite, evidence, edges)]
    for c in want:
        if c in subjects or any(c in r for r in reach):
            continue
        i = next(i for i, w in enumerate(found) if c in w.parent)
        edges.update(dict.fromkeys(found[i].path_edges(c)))
        reach[i].update(_path_nodes(found[i], c))
        owed.append(c)
    if not members or not rule.members:
        return ""
    found = _walks(rule.members, evidence, None)
    reach = [set(w.parent) for w in _walks(rule.members, evidence, edges)]
    for m in members:
        routes = [i for i, w in enumerate(found) if m in w.parent]
        if not routes or (not rule.any_member and len(routes) < len(found)):
            return f"states {m} as an answer, which is not {reading.describe()} along the evidence"
        if rule.any_member and any(m in reach[i] for i in routes):
            continue
        for i in routes[:1] if rule.any_member else routes:
            if m not in reach[i]:
                edges.update(dict.fromkeys(found[i].path_edges(m)))
                reach[i].update(_path_nodes(found[i], m))
                owed.append(m)
    return ""


def _misplaced_lessons(
    draft: Draft, evidence: EvidenceGraph[Any, Any], reading: Reading, allowed: set[str] | None
) -> list[str]:
    """Cited lesson links that do not answer the reading (module docstring)."""
    x = reading.subject
    links = {r: evidence.lessons[r] for r in draft.lesson_refs}
    if reading.intent == "lessons_covering":
        return sorted(r for r, link in links.items() if link.concept_id != x)
    if reading.intent == "lessons_before":
        own = {link.lesson_id for link in evidence.lessons_of(x)} if x is not None else set()
        return sorted(
            r
            for r, link in links.items()
            if link.concept_id == x
            or link.lesson_id in own
            or (allowed is not None and link.concept_id not in allowed)
        )
    return []
