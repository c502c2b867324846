"""Set answers and the intents with a function of their own: what each reading's answer is over
the evidence. Pure: each is a function of the request (``findings.Ask``).

==============  ============================================================================
intent          answer
==============  ============================================================================
prerequisites   stored prerequisite edges into X ("The direct prerequisites of X: ...")
needed_before   learning order before X (prerequisite edges into X, builds_on edges out of
                X), transitively or one step ("Before X a learner must master: ...")
dependents      learning order after X ("Concepts that have X as a prerequisite: ...")
builds_on /     builds_on edges out of / into X (on a prerequisite-only graph the reading
built_by        fits them to prerequisite edges and the answer says so)
parts, wholes   part_of edges into / out of X; contrasts, related: symmetric edges
neighbours      any relation, within / exactly N hops
path            how A leads to B: the shortest learning-order path from A to B
before_uses     what is needed before X (listed, with its paths), and of those what Y builds on
study_plan      the needed-before closure of X minus what is already known, in layers
lessons_*       active lesson links of X (covering) or of what is needed before X
about           the summary of X and its relations
==============  ============================================================================

Two subjects combine: "both" (intersection), "either" (union), "except" (minus the other's
answer and the other itself). A list of more than ``findings.LONG_LIST`` concepts in learning
order is written in at most four groups by learning stage ("first ...; then ...; last ...").

Confidence: 0.9 when every concept the answer depends on has been expanded (none is in
``request.unexpanded``). 0.85 for a before+uses answer whose closure is still open but where
every concept Y builds on is decided. Below 0.80 otherwise (a *partial* finding), with
``missing`` naming the unexplored concepts and ``next_focus`` the relations and concepts to
expand. An empty result ("none") is only stated with complete evidence, and never when the asked
relation has no edge in this graph.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from control_plane.evidence import EvidenceGraph
from control_plane.learning_order import closure, layers, needs_from_edges
from control_plane.semantics.findings import (
    COMPLETE,
    DECIDED,
    NO_PATH,
    NOTHING,
    Ask,
    Finding,
    Name,
    Names,
    Piece,
    by_name,
    by_ref,
    fill,
    partial,
    relations_used,
    unsettled,
)
from control_plane.semantics.requirements import (
    Pick,
    choices,
    chosen,
    credited,
    group_facts,
    phrase,
    pick_pieces,
    plain_needs,
    required,
    requirement,
    ways_after,
)
from control_plane.synthesizers.base import Focus
from control_plane.understanding.interpretation import Reading
from control_plane.understanding.relating import Walk, adjacency, mode_of, walk
from data_plane.relations import BUILDS_ON, PREREQUISITE, RELATIONS

__all__ = ["INTENTS", "SET_WORDS", "before_uses", "lessons", "path", "set_answer", "study_plan"]

_LEARNING: Final = (PREREQUISITE, BUILDS_ON)


# -- set answers: one relation from one or two subjects -----------------------------------------

# (answer head, the whole sentence when the answer is empty). Slots: {x} the subject(s), {but}
# what is left out, {reach} a distance, {build}/{is}/{contrast} a verb agreeing with {x}.
SET_WORDS: Final[dict[str, tuple[str, str]]] = {
    "prerequisites": (
        "The direct prerequisites of {x}{but}",
        "{x} has no direct prerequisites in the graph{but}",
    ),
    "needed_before": (
        "Before {x}{but} a learner must master",
        "Nothing needs to be learned before {x}{but}, according to the graph",
    ),
    "needed_before/direct": (
        "What comes directly before {x}{but}",
        "Nothing comes directly before {x}{but}, according to the graph",
    ),
    "dependents": ("What comes after {x}{but}", "Nothing comes after {x}{but}, according to the graph"),
    "dependents/direct": (
        "What comes directly after {x}{but}",
        "Nothing comes directly after {x}{but}, according to the graph",
    ),
    "dependents/prerequisite": (
        "Concepts that have {x} as a prerequisite{but}",
        "No concept has {x} as a prerequisite{but}, according to the graph",
    ),
    "builds_on": ("{x} {build} on{but}", "{x} {build} on nothing else{but}, according to the graph"),
    "built_by": ("Concepts that build on {x}{but}", "Nothing builds on {x}{but}, according to the graph"),
    "parts": ("The parts of {x}{but}", "{x} has no parts in the graph{but}"),
    "wholes": ("{x} {is} part of{but}", "{x} is not part of anything else{but}, according to the graph"),
    "contrasts": ("{x} {contrast} with{but}", "Nothing contrasts with {x}{but}, according to the graph"),
    "related": ("{x} {is} related to{but}", "Nothing is related to {x}{but}, according to the graph"),
    "neighbours": ("Concepts {reach} {x}{but}", "No concept is {reach} {x}{but}, according to the graph"),
    "about": (
        "{x}: {summary} It is connected to",
        "{x}: {summary} It is connected to nothing else in the graph",
    ),
}


def _words_key(reading: Reading) -> str:
    intent = reading.intent
    if intent == "needed_before" and not reading.transitive:
        return "needed_before/direct"
    if intent == "dependents":
        if reading.asked_relations == (PREREQUISITE,) and not reading.transitive:
            return "dependents/prerequisite"
        return "dependents" if reading.transitive else "dependents/direct"
    return intent if intent in SET_WORDS else "about"


def _sentence(
    reading: Reading, ev: EvidenceGraph[Any, Any], subjects: list[str]
) -> tuple[tuple[Piece, ...], tuple[Piece, ...]]:
    """(answer head, the whole sentence when the answer is empty) as pieces."""
    x0 = subjects[0]
    two = len(subjects) > 1
    x: tuple[Piece, ...] = (Name(x0),)
    if reading.combine == "both" and two:
        x = ("both ", Name(x0), " and ", Name(subjects[1]))
    elif reading.combine == "either" and two:
        x = (Name(x0), " and ", Name(subjects[1]))
    but: tuple[Piece, ...] = (
        (" (leaving out ", Name(subjects[1]), " and what it needs)")
        if reading.combine == "except" and two
        else ()
    )
    plural = reading.combine in ("both", "either") and two
    reach = f"exactly {reading.hops} hops from" if reading.exact else f"within {reading.hops} hops of"
    if reading.hops == 1 and not reading.exact:
        reach = "directly connected to"
    slots: dict[str, Sequence[Piece] | str] = {
        "x": x,
        "but": but,
        "reach": reach,
        "build": "build" if plural else "builds",
        "is": "are" if plural else "is",
        "contrast": "contrast" if plural else "contrasts",
        "summary": ev.concepts[x0].summary,
    }
    head, none = SET_WORDS[_words_key(reading)]
    return fill(head, **slots), fill(none, **slots)


# Heads whose verb takes the list as its object ("a learner must master 28 concepts, in learning
# order: first ..."): no colon between them.
_LEADS_INTO_LIST: Final = frozenset({"needed_before"})


@dataclass(frozen=True)
class _Set:
    """One subject's answer set, the edges that justify each member, and what is unexplored."""

    members: frozenset[str]
    paths: Callable[[Iterable[str]], set[str]]  # the edge refs of these members' paths to the subject
    open: frozenset[str]
    relations: tuple[str, ...]

    def refs(self, ids: Iterable[str]) -> set[str]:
        """The edge refs of the paths of those of ``ids`` that are members."""
        return self.paths(m for m in ids if m in self.members)


def _solve(ask: Ask, x: str) -> _Set:
    """The answer set of the reading for subject ``x`` (one subject, no combination)."""
    ev, reading, unexpanded = ask.ev, ask.reading, ask.unexpanded
    mode = mode_of(reading)
    if mode is None:  # about: every neighbour
        hits: dict[str, list[str]] = {}
        for ref, e in ev.edges.items():
            if x in (e.source_id, e.target_id):
                other = e.target_id if e.source_id == x else e.source_id
                hits.setdefault(other, []).append(ref)
        return _Set(
            frozenset(hits),
            lambda ids: {r for m in ids for r in hits[m]},
            frozenset({x} & unexpanded),
            RELATIONS,
        )
    neighbours = reading.intent == "neighbours"
    relations = () if neighbours else reading.relations
    depth = reading.hops if neighbours else (None if reading.transitive else 1)
    w = walk(x, adjacency(ev, relations, mode), depth=depth)
    if neighbours:
        members = frozenset(
            c
            for c, d in w.dist.items()
            if c != x and (d == reading.hops if reading.exact else 1 <= d <= reading.hops)
        )
        inner = {c for c, d in w.dist.items() if d < reading.hops}
    else:
        members = frozenset(w.parent) - {x}
        inner = {x, *members} if reading.transitive else {x}
    return _Set(members, w.paths_edges, frozenset(inner & unexpanded), tuple(relations) or RELATIONS)


def _known_closure(ask: Ask, known: Sequence[str]) -> set[str]:
    """What the learner says they know and everything it rests on (learning order)."""
    adj = adjacency(ask.ev, ask.reading.relations, "before")
    return set().union(*(walk(k, adj).parent for k in known)) if known else set()


def _in_learning_order(reading: Reading) -> bool:
    return mode_of(reading) in ("before", "after") and reading.transitive


def set_answer(ask: Ask) -> Finding:
    """Every intent without a function of its own: one relation from the subject (or two); on a
    graph with requirement groups, read with them (:func:`_with_alternatives`)."""
    found = _set_answer(ask)
    return _with_alternatives(ask, found) if ask.ev.groups else found


def _with_alternatives(ask: Ask, found: Finding) -> Finding:
    """A settled one-subject learning-order answer with the requirement groups it meets
    (``semantics.requirements``; docs/control-plane.md, "Requirements with alternatives"): what
    X needs as its requirement sentence and the choices along the way; what is left for a learner
    with the groups still unmet; what comes after X with the targets X is an option of."""
    ev, reading, x = ask.ev, ask.reading, ask.reading.subject
    if not found.complete or reading.combine or x is None:
        return found
    relations = reading.relations or _LEARNING
    mode = mode_of(reading)
    if mode == "after":
        return _after_with_alternatives(ask, found, x, relations)
    if mode != "before" or reading.intent not in ("needed_before", "prerequisites"):
        return found
    known = [k for k in reading.known if k in ev.concepts]
    if known:
        return _left_with_alternatives(ask, found, x, known, relations)
    if not reading.transitive:
        direct = ev.groups_of(x)
        if not direct:
            return found
        says: tuple[Piece, ...] = (*requirement(ev, x, relations), ".")
        return replace(found, says=says, facts={**found.facts, "requirements": group_facts(direct)})
    needs = required(ev, x, relations)
    groups = choices(ev, {x, *needs})
    if not groups:
        return found
    says = (*requirement(ev, x, relations), ".")
    rest = by_name(needs - set(plain_needs(ev, x, relations)), ev)
    if rest:
        says += (" Every way to it also needs: ", Names(rest, staged=True), ".")
    for c in by_name((c for c in needs if ev.groups_of(c)), ev):
        says += (" ", *requirement(ev, c, relations), ".")
    return replace(found, says=says, facts={**found.facts, "requirements": group_facts(groups)})


def _left_with_alternatives(
    ask: Ask, found: Finding, x: str, known: Sequence[str], relations: Sequence[str]
) -> Finding:
    """What is left before X for a learner who knows ``known``: the required concepts still
    missing (the base answer), and the groups of X and of those that what they know leaves
    unmet."""
    ev = ask.ev
    credit = credited(ev, known, relations)
    groups = choices(ev, {x, *found.members})
    if not groups:
        return found
    unmet = [g for g in groups if not g.satisfied_by(credit)]
    facts = {**found.facts, "unmet": [g.group_id for g in unmet], "requirements": group_facts(groups)}
    if not unmet and not found.members:
        says: tuple[Piece, ...] = (
            "Nothing is left: what you know meets what ",
            Name(x),
            " requires (",
            *requirement(ev, x, relations),
            ").",
        )
        return replace(found, says=says, facts=facts)
    still: tuple[Piece, ...] = ()
    for i, g in enumerate(unmet):
        still += (*(("; ",) if i else ()), Name(g.target_id), " requires ", *phrase(ev, g))
    if not found.members:
        says = ("Still to meet: ", *still, ".")
    elif unmet:
        says = (*found.says, " Still to meet: ", *still, ".")
    else:
        says = found.says
    return replace(found, says=says, facts=facts)


def _after_with_alternatives(ask: Ask, found: Finding, x: str, relations: Sequence[str]) -> Finding:
    """What comes after X, with what X lies on some way to through the options it is in."""
    ev, reading = ask.ev, ask.reading
    if reading.transitive:
        reached = ways_after(ev, x, relations)
        if reached <= set(found.members):
            return found
        members = by_name(reached, ev)
        head, _ = _sentence(reading, ev, [x])
        says = (
            *head,
            ": ",
            Names(members, staged=True),
            " (on some ways: through the options of requirements).",
        )
        return replace(found, members=members, says=says)
    naming = ev.groups_naming(x)
    if not naming:
        return found
    members = by_name({*found.members, *(g.target_id for g in naming)}, ev)
    more: list[Piece] = [Name(x), " is one of the options for: "]
    for i, g in enumerate(naming):
        more += [*(["; "] if i else []), Name(g.target_id), " (", *phrase(ev, g), ")"]
    says = (*(found.says if found.members else ()), *([" "] if found.members else []), *more, ".")
    return replace(
        found, members=members, says=says, facts={**found.facts, "requirements": group_facts(naming)}
    )


def _set_answer(ask: Ask) -> Finding:
    """One relation from the subject (or two), as the edges say."""
    ev, reading, x, y = ask.ev, ask.reading, ask.reading.subject, ask.reading.other
    assert x is not None
    a = _solve(ask, x)
    members, open_ = set(a.members), set(a.open)
    backing: tuple[_Set, ...] = (a,)  # whose paths back the members
    if reading.combine and y is not None and y in ev.concepts:
        b = _solve(ask, y)
        open_ |= b.open
        if reading.combine == "both":
            members &= b.members
            backing = (a, b)
        elif reading.combine == "either":
            members |= b.members
            backing = (a, b)
        else:
            members -= b.members | {y}
    elif reading.intent == "contrasts" and y is not None and y in ev.concepts:
        members &= {y}  # "A versus B": only the contrast between the two
    known = tuple(k for k in reading.known if k in ev.concepts)
    unread = [k for k in reading.known if k not in ev.concepts]
    if unread and mode_of(reading) == "before" and reading.transitive:
        # what a known concept rests on cannot be left out before it is read: ask for it
        return partial(
            Finding((), ("Not yet read: what ", Names(tuple(unread)), " rests on.")), unread, ev, a.relations
        )
    rests = _known_closure(ask, known) if mode_of(reading) == "before" and reading.transitive else set(known)
    members -= rests
    open_ |= {c for c in rests if c in ask.unexpanded}
    ordered = by_name(members, ev)
    refs = by_ref(r for s in backing for r in s.refs(ordered))
    subjects = [x, y] if reading.combine and y is not None and y in ev.concepts else [x]
    head, none = _sentence(reading, ev, subjects)
    if known and rests != set(known) and _words_key(reading) == "needed_before":
        # "I already know A and B, what's left before X": not A, B, nor what they rest on
        they = "they rest" if len(known) > 1 else "it rests"
        head = ("Before ", Name(x), ", leaving out ", Names(by_name(known, ev)), f" and what {they} on, "
                "a learner still needs")  # fmt: skip
        none = ("Nothing is left to learn before ", Name(x), " besides ", Names(by_name(known, ev)),
                f" and what {they} on, according to the graph")  # fmt: skip
    used = relations_used(reading)
    listed = Names(ordered, staged=_in_learning_order(reading))
    if open_:
        found = Finding(ordered, (*head, ", so far: ", listed, f"{used}."), refs)
        return partial(found, sorted(open_), ev, a.relations)
    if not ordered:
        about = reading.intent == "about"
        return Finding(
            (),
            (*none, "." if about else f"{used}."),
            confidence=NOTHING if about else COMPLETE,
            missing="nothing connected" if about else "",
        )
    lead = " " if _words_key(reading) in _LEADS_INTO_LIST else ": "
    if reading.intent == "contrasts" and y is not None and ordered == (y,):
        # "what is the difference between A and B": the contrast, in the edge's own words
        reason = _edge_reason(ev, refs[0]) if refs else ""
        if reason:
            return Finding(ordered, (Name(x), " contrasts with ", Name(y), f": {reason} ({refs[0]})."), refs)
    return Finding(ordered, (*head, lead, listed, f"{used}."), refs)


def _edge_reason(ev: EvidenceGraph[Any, Any], ref: str) -> str:
    """The grounding reason of an evidence edge, when the evidence holds full records."""
    grounding = getattr(ev.edges[ref], "grounding", None)
    return str(getattr(grounding, "reason", "") or "").strip().rstrip(".")


# -- intents with a function of their own ------------------------------------------------------


def before_uses(ask: Ask) -> Finding:
    """What is needed before X (each with its path to X), and of those what Y builds on (each
    with its builds_on edge from Y): both parts cited."""
    ev, reading, x, y = ask.ev, ask.reading, ask.reading.subject, ask.reading.other
    if x is None or y is None or y not in ev.concepts:
        return set_answer(ask)
    w = walk(x, adjacency(ev, reading.relations, "before"))
    closure = by_name((c for c in w.parent if c != x), ev)
    uses = {
        e.target_id: ref
        for ref, e in ev.edges.items()
        if e.relation == BUILDS_ON and e.source_id == y and e.target_id != y
    }
    found = by_name((c for c in uses if c in closure), ev)
    open_closure = sorted(c for c in [x, *closure] if c in ask.unexpanded)
    # A concept Y builds on that is not (yet) on a path to X is decided once it and everything
    # after it in the evidence have been expanded: a path from it to X would then be in view.
    off = [c for c in uses if c not in closure]
    after = adjacency(ev, reading.relations, "after") if off else {}
    undecided = sorted({n for c in off for n in walk(c, after).parent if n in ask.unexpanded})
    y_open = y in ask.unexpanded
    edges = by_ref([*w.paths_edges(closure), *(uses[c] for c in found)])
    among = "" if not open_closure else ", among others,"
    says: tuple[Piece, ...]
    if not closure:
        says = ("None of the concepts needed before ", Name(x), " is one that ", Name(y), " builds on.")
    elif found:
        says = (
            "Before ", Name(x), f" a learner must master{among} ", Names(closure, staged=True),
            ". Of those, ", Name(y), " builds on: ", Names(found), ".",
        )  # fmt: skip
    else:
        says = (
            "Before ", Name(x), f" a learner must master{among} ", Names(closure, staged=True),
            ". None of those is one that ", Name(y), " builds on.",
        )  # fmt: skip
    finding = Finding(found, says, edges)
    if not open_closure and not y_open:
        return finding
    if found and not undecided and not y_open:
        return Finding(found, says, edges, confidence=DECIDED)
    todo = sorted({*undecided, *open_closure, *([y] if y_open else [])})
    return partial(finding, todo, ev, _LEARNING)


def _path_nodes(ev: EvidenceGraph[Any, Any], a: str, refs: Sequence[str]) -> tuple[str, ...]:
    nodes = [a]
    for ref in refs:
        e = ev.edges[ref]
        nodes.append(e.target_id if e.relation == PREREQUISITE else e.source_id)
    return tuple(nodes)


def path(ask: Ask) -> Finding:
    """How A leads to B: walk back from B in learning order until A is reached."""
    ev, reading, a, b = ask.ev, ask.reading, ask.reading.subject, ask.reading.other
    if a is None or b is None or b not in ev.concepts:
        return unsettled(("The question names only one end of the path.",), "the other end")
    w = walk(b, adjacency(ev, reading.relations, "before"))
    if a in w.parent:
        refs = tuple(w.path_edges(a))  # from A forward to B
        says: list[Piece] = [Name(a), " leads to ", Name(b), ": "]
        for i, ref in enumerate(refs):
            e = ev.edges[ref]
            verb = (
                " must be mastered before "
                if e.relation == PREREQUISITE
                else f" {e.relation.replace('_', ' ')} "
            )
            says += [*(["; "] if i else []), Name(e.source_id), verb, Name(e.target_id)]
        says.append(".")
        finding = Finding(_path_nodes(ev, a, refs), tuple(says), refs, path=refs)
        # Shortest only if no concept closer to B than A could still have an unseen shortcut.
        closer = sorted(c for c, d in w.dist.items() if d < w.dist[a] and c in ask.unexpanded)
        return partial(finding, closer, ev, _LEARNING) if closer else finding
    open_ = sorted(c for c in w.parent if c in ask.unexpanded)
    if open_:
        return unsettled(
            ("No learning path from ", Name(a), " to ", Name(b), " has been found yet."),
            "unexplored: " + ", ".join(ev.name(c) for c in open_),
            Focus(_LEARNING, tuple(open_), f"what comes before {ev.name(b)}"),
        )
    return Finding(
        (),
        ("Nothing in the graph says that ", Name(a), " leads to ", Name(b), "."),
        confidence=NO_PATH,
        missing="no learning path in the graph",
    )


def _closure(ask: Ask, x: str) -> tuple[list[str], Walk, list[str]]:
    """(members needed before ``x`` minus what is known and what that needs, the walk back from
    ``x``, members and ``x`` still open)."""
    ev, reading = ask.ev, ask.reading
    adj = adjacency(ev, reading.relations, "before")
    w = walk(x, adj)
    members = set(w.parent) - {x}
    known: set[str] = set()
    for k in reading.known:
        if k in ev.concepts:
            known |= set(walk(k, adj).parent)
    open_ = sorted(c for c in {x, *members} if c in ask.unexpanded)
    return sorted(members - known), w, open_


def study_plan(ask: Ask) -> Finding:
    """The needed-before closure of X minus what is known, in learning-order layers."""
    ev, reading, x = ask.ev, ask.reading, ask.reading.subject
    assert x is not None
    members, _, open_ = _closure(ask, x)
    needs = needs_from_edges(
        (e.source_id, e.target_id, e.relation) for e in ev.edges.values() if e.relation in reading.relations
    )
    picks: list[Pick] = []
    if ev.groups:  # each choice takes one option (``requirements.chosen``), with what it requires
        needs, picks = chosen(ev, x, [k for k in reading.known if k in ev.concepts], reading.relations)
        planned = closure([x], needs) - {x}
        rests = credited(ev, [k for k in reading.known if k in ev.concepts], reading.relations)
        members = list(by_name(planned - rests, ev))
        open_ = sorted(c for c in {x, *planned} if c in ask.unexpanded)
    keep = set(members)
    refs = by_ref(
        ref
        for ref, e in ev.edges.items()
        if e.relation in reading.relations and {e.source_id, e.target_id} <= keep | {x}
    )
    knew = tuple(k for k in reading.known if k in ev.concepts)
    known: tuple[Piece, ...] = (" (leaving out what you already know: ", Names(knew), ")") if knew else ()
    if not members and not open_:
        return Finding(
            (), ("Nothing needs to be learned before ", Name(x), *known, ", according to the graph.")
        )
    says: list[Piece] = ["A study plan for ", Name(x), *known, ", in this order: "]
    for i, layer in enumerate(layers(members, needs)):
        says += [*(["; "] if i else []), f"{i + 1}. ", Names(tuple(layer))]
    says += ["; then ", Name(x), "."]
    facts: dict[str, Any] = {}
    if picks:
        says += pick_pieces(ev, picks)
        facts["requirements"] = group_facts(p.group for p in picks)
    finding = Finding(tuple(members), tuple(says), refs, facts=facts)
    return partial(finding, open_, ev, _LEARNING) if open_ else finding


def lessons(ask: Ask) -> Finding:
    """Active lesson links of X (covering), or of what is needed before X (without the lessons
    that cover X itself), each listed concept with its path to X."""
    ev, reading, x = ask.ev, ask.reading, ask.reading.subject
    assert x is not None
    paths: dict[str, list[str]] = {}
    if reading.intent == "lessons_covering":
        concepts, open_ = [x], list[str]()
        head: tuple[Piece, ...] = ("Lessons that cover ", Name(x))
        none: tuple[Piece, ...] = ("No active lesson covers ", Name(x), ", according to the graph.")
    else:
        concepts, w, open_ = _closure(ask, x)
        if not reading.transitive:
            concepts = [b for b, _ in adjacency(ev, reading.relations, "before").get(x, [])]
        paths = {c: w.path_edges(c) for c in concepts if c in w.parent}
        head = ("Lessons to take before ", Name(x))
        none = ("No active lesson covers what is needed before ", Name(x), ", according to the graph.")
    links = [link for c in concepts for link in ev.lessons_of(c)]
    if reading.intent == "lessons_before":
        # A lesson that covers X itself is not one to take before X.
        own = {link.lesson_id for link in ev.lessons_of(x)}
        links = [link for link in links if link.lesson_id not in own]
    titles: dict[str, str] = {}
    for link in links:
        titles.setdefault(link.lesson_id, link.title or link.lesson_id)
    covered = tuple(sorted({link.concept_id for link in links}))
    members = (x,) if reading.intent == "lessons_covering" else covered
    edges = by_ref(r for c in covered for r in paths.get(c, ()))
    says = (
        (*head, ": " + ", ".join(f"{t} ({lid})" for lid, t in sorted(titles.items())) + ".")
        if titles
        else none
    )
    finding = Finding(members, says, edges, by_ref(link.ref for link in links))
    return partial(finding, open_, ev, _LEARNING) if open_ else finding


# Intents with their own function; every other intent is a set answer.
INTENTS: Final[dict[str, Callable[[Ask], Finding]]] = {
    "path": path,
    "before_uses": before_uses,
    "study_plan": study_plan,
    "lessons_covering": lessons,
    "lessons_before": lessons,
}
