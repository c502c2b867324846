"""Answers to question forms from the evidence sub-graph: yes or no, how many, why, which first,
how two concepts relate, what to learn next. Pure: each is a function of the request.

==========  ====================================================================================
form        answer (learning order: prerequisite source before target, builds_on target first)
==========  ====================================================================================
yes_no      "Yes: X comes directly before Y (prerequisite)" / "Yes, through Z: X → Z → Y" / "No:
            X is not among the N concepts needed before Y" (No only when that set was read
            whole; "it is the other way round" when Y comes before X). The proof path is cited.
count       the number first, then the set ("3. The direct prerequisites of Y: A, B, C.")
why         every shortest chain from X to Y, each step with the reason on its edge; "X is not
            needed for Y" when it is not among Y's needs (read whole)
order       which of A and B comes first, with the path between them, or "neither needs the other"
relate      the shortest learning path(s) between A and B in either direction; else their nearest
            shared foundations (each with its paths to A and B); else the edges of any other
            relation between them; else "not connected"
next        what a learner who knows K can take up next: the concepts not in K and not needed
            before anything in K, whose every need is in K or needed before it (at least one)
==========  ====================================================================================

Each answer is a :class:`~control_plane.semantics.findings.Finding` whose ``facts`` carry the
form's result keys (``holds``, ``direct``, ``count``, ``first``, ``how``), so the answer's text,
result and citations come from one place.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, Final

from control_plane.evidence import EvidenceGraph
from control_plane.semantics.findings import (
    NOTHING,
    Ask,
    Finding,
    Name,
    Names,
    Piece,
    by_name,
    by_ref,
    partial,
    unsettled,
)
from control_plane.semantics.requirements import on_some_way, phrase, requirement
from control_plane.synthesizers.base import Focus
from control_plane.understanding.relating import Walk, adjacency, asked_adjacency, mode_of, walk
from data_plane.relations import BUILDS_ON, CONTRASTS_WITH, PART_OF, PREREQUISITE, RELATED

__all__ = [
    "FORMS",
    "check",
    "count",
    "next_concepts",
    "opens",
    "order",
    "ready",
    "relate",
    "shortest_chains",
    "start",
    "why",
]

_LEARNING: Final = (PREREQUISITE, BUILDS_ON)
_OTHER: Final = (RELATED, CONTRASTS_WITH, PART_OF)
# At most this many shortest chains are listed (more are said to exist).
MAX_CHAINS: Final = 8
_ARROW: Final = " → "


def _chain_pieces(chain: Sequence[str]) -> list[Piece]:
    out: list[Piece] = []
    for i, c in enumerate(chain):
        out += [*([_ARROW] if i else []), Name(c)]
    return out


def shortest_chains(w: Walk, start: str, adj: dict[str, list[tuple[str, str]]]) -> list[list[str]]:
    """Every shortest chain (at most :data:`MAX_CHAINS` + 1) from ``start`` to the walk's own start,
    ``start`` first, over the adjacency the walk followed."""
    if start not in w.dist:
        return []
    back: dict[str, list[str]] = {}  # node -> the nodes one step nearer the walk's start
    for u, steps in adj.items():
        for v, _ in steps:
            if u in w.dist and v in w.dist and w.dist[v] == w.dist[u] + 1:
                back.setdefault(v, []).append(u)
    chains: list[list[str]] = []
    stack: list[list[str]] = [[start]]
    while stack and len(chains) <= MAX_CHAINS:
        chain = stack.pop()
        if w.dist[chain[-1]] == 0:
            chains.append(chain)
            continue
        stack.extend([*chain, u] for u in sorted(back.get(chain[-1], []), reverse=True))
    return chains


def _edge_between(ev: EvidenceGraph[Any, Any], a: str, b: str, relations: Iterable[str]) -> str | None:
    """The ref of an evidence edge between ``a`` and ``b`` (either way) of one of ``relations``."""
    wanted = set(relations)
    for ref, e in sorted(ev.edges.items(), key=lambda kv: int(kv[0][1:])):
        if e.relation in wanted and {e.source_id, e.target_id} == {a, b}:
            return ref
    return None


def _chain_edges(ev: EvidenceGraph[Any, Any], chain: Sequence[str], relations: Iterable[str]) -> list[str]:
    refs = [_edge_between(ev, a, b, relations) for a, b in itertools.pairwise(chain)]
    return [r for r in refs if r is not None]


def _open(ask: Ask, w: Walk, depth: int | None = None) -> list[str]:
    """Concepts the answer depends on that were not expanded: every concept of the walk when it
    is transitive, the start alone for a one-step walk."""
    inner = [c for c, d in w.dist.items() if depth is None or d < depth]
    return sorted(c for c in inner if c in ask.unexpanded)


def _walk_from(
    ask: Ask, start: str, *, depth: int | None = None
) -> tuple[Walk, dict[str, list[tuple[str, str]]]]:
    adj, _ = asked_adjacency(ask.reading, ask.ev)
    return walk(start, adj, depth=depth), adj


_RELATION_WORDS: Final[dict[str, str]] = {
    "before": "needed before",
    "after": "coming after",
    "parts": "the parts of",
    "wholes": "what is made up of",
    "either": "linked to",
}


def check(ask: Ask) -> Finding:
    """Is the candidate X in the subject Y's answer set (module docstring)."""
    ev, reading, y, x = ask.ev, ask.reading, ask.reading.subject, ask.reading.candidate
    assert y is not None
    if x is None or x not in ev.concepts:
        return unsettled(("The question names no second concept to check.",))
    depth = None if reading.transitive else 1
    w, adj = _walk_from(ask, y, depth=depth)
    mode = mode_of(reading) or "before"
    if x in w.parent:
        chain = shortest_chains(w, x, adj)[0]
        refs = by_ref(w.path_edges(x))
        says: list[Piece]
        if len(chain) == 2:
            e = ev.edges[refs[0]]
            says = [
                "Yes: ",
                Name(x),
                _direct_words(mode),
                Name(y),
                f" ({e.relation.replace('_', ' ')} edge {refs[0]}).",
            ]
        else:
            says = ["Yes, through ", Names(tuple(chain[1:-1])), ": ", *_chain_pieces(chain), "."]
        return Finding(
            (),
            tuple(says),
            refs,
            facts={"holds": True, "direct": len(chain) == 2},
            path=tuple(w.path_edges(x)),
        )
    open_ = _open(ask, w, depth)
    if open_:
        found = Finding((), ("Not found yet: ", Name(x), " is not among what has been read so far."))
        return partial(found, open_, ev, reading.relations or _LEARNING)
    if mode == "before" and (way := _one_way(ask, x, y, depth)) is not None:
        return way
    n = len(w.parent) - 1
    scope = "" if depth is None else " directly"
    says = ["No: ", Name(x), f" is not among the {n} concept{'s' if n != 1 else ''}{scope} ",
            _RELATION_WORDS.get(mode, "linked to"), " ", Name(y)]  # fmt: skip
    back_path: tuple[str, ...] = ()
    if mode in ("before", "after"):
        back, back_adj = _walk_from(ask, x)
        if y in back.parent:  # the other way round: Y comes before X
            chain = shortest_chains(back, y, back_adj)[0]
            back_path = tuple(back.path_edges(y))
            says += ["; it is the other way round: ", *_chain_pieces(chain)]
    says.append(".")
    return Finding(
        (), tuple(says), by_ref(back_path), facts={"holds": False, "direct": False}, path=back_path
    )


def _one_way(ask: Ask, x: str, y: str, depth: int | None) -> Finding | None:
    """ "No" to "is X needed for Y" when X lies on some ways to Y only (an option of one of Y's
    choices, or needed by one): which requirement it is one way to meet (``one_of``). One step
    ("is X a direct prerequisite of Y"): Y's own groups only, X in an option."""
    ev = ask.ev
    relations = ask.reading.relations or _LEARNING
    if depth is None:
        found = on_some_way(ev, x, y, relations)
    else:
        found = next(((g, x) for g in ev.groups_of(y) if any(x in o for o in g.options)), None)
    if found is None:
        return None
    g, via = found
    says: list[Piece] = ["No: ", Name(x), " is not required for ", Name(y), "; it is "]
    if via != x:
        says += ["on the way to ", Name(via), ", "]
    says += ["one of the ways to meet what ", Name(g.target_id), " requires (", *phrase(ev, g), ")"]
    if g.target_id != y:
        says += [", which ", Name(y), " needs"]
    says.append(".")
    return Finding((), tuple(says), facts={"holds": False, "direct": False, "one_of": g.group_id})


def _direct_words(mode: str) -> str:
    return {
        "before": " comes directly before ",
        "after": " comes directly after ",
        "parts": " is part of ",
        "wholes": " is made up of ",
    }.get(mode, " is linked to ")


def ready(ask: Ask, base: Callable[[Ask], Finding]) -> Finding:
    """Whether what the learner knows (and what it rests on) covers everything the subject needs:
    the base answer is what is still missing (the needs less what is known); none, and it holds."""
    found = base(ask)
    if not found.complete:
        return replace(found, facts={**found.facts, "holds": None})
    holds = not found.members and not found.facts.get("unmet")
    first = "Yes: " if holds else "Not yet. "
    return replace(found, says=(first, *found.says), facts={**found.facts, "holds": holds})


def count(ask: Ask, base: Callable[[Ask], Finding]) -> Finding:
    """The number of the base answer's members first, then the base answer."""
    found = base(ask)
    n = len(found.members)
    groups = found.facts.get("requirements") or ()
    lead = f"{n}. "
    if groups:  # what every way needs; the choices are counted apart
        lead = f"{n} on every way, and {len(groups)} requirement{'s' if len(groups) != 1 else ''} with alternatives. "
    return Finding(
        found.members,
        (lead, *found.says),
        found.edges,
        found.lessons,
        found.confidence,
        found.missing,
        found.focus,
        {**found.facts, "count": n},
    )


def why(ask: Ask) -> Finding:
    """Every shortest chain from X to Y in learning order, each step with its reason."""
    ev, reading, y, x = ask.ev, ask.reading, ask.reading.subject, ask.reading.candidate
    assert y is not None
    if x is None or x not in ev.concepts:
        return unsettled(("The question names no second concept.",))
    w, adj = _walk_from(ask, y)
    if x not in w.parent:
        open_ = _open(ask, w)
        if open_:
            return partial(Finding((), ("No chain found yet.",)), open_, ev, reading.relations or _LEARNING)
        if ev.groups and (way := _one_way(ask, x, y, None)) is not None:
            return replace(way, facts={"holds": False, "one_of": way.facts["one_of"]})
        n = len(w.parent) - 1
        return Finding(
            (),
            (
                Name(x),
                " is not needed for ",
                Name(y),
                f": it is not among the {n} concepts needed before it.",
            ),
            facts={"holds": False},
        )
    chains = shortest_chains(w, x, adj)
    listed, more = chains[:MAX_CHAINS], len(chains) > MAX_CHAINS
    steps: dict[tuple[str, str], str] = {}
    for chain in listed:
        for a, b in itertools.pairwise(chain):
            ref = _edge_between(ev, a, b, reading.relations or _LEARNING)
            if ref is not None:
                steps.setdefault((a, b), ref)
    says: list[Piece] = [Name(y), " needs ", Name(x)]
    if len(listed) == 1 and len(listed[0]) == 2:
        says += [" directly"]
    else:
        says += [f" through {'these chains' if len(listed) > 1 else 'this chain'}: "]
        for i, chain in enumerate(listed):
            says += [*(["; "] if i else []), *_chain_pieces(chain)]
        if more:
            says.append(" (and more of the same length)")
    says.append(".")
    for (a, b), ref in steps.items():
        reason = _reason(ev, ref)
        says += [" ", Name(a), _ARROW, Name(b), f" ({ref})" + (f": {reason}" if reason else "") + "."]
    members = tuple(dict.fromkeys(c for chain in listed for c in chain))
    found = Finding(members, tuple(says), by_ref(steps.values()), facts={"holds": True})
    nearer = sorted(c for c, d in w.dist.items() if d < w.dist[x] and c in ask.unexpanded)
    return partial(found, nearer, ev, reading.relations or _LEARNING) if nearer else found


def _reason(ev: EvidenceGraph[Any, Any], ref: str) -> str:
    """The grounding reason of an evidence edge, when the evidence holds full records."""
    grounding = getattr(ev.edges[ref], "grounding", None)
    reason = getattr(grounding, "reason", "") if grounding is not None else ""
    return str(reason).strip().rstrip(".")


def _two(
    ask: Ask,
) -> tuple[str, str, Walk, Walk, dict[str, list[tuple[str, str]]], dict[str, list[tuple[str, str]]]] | None:
    ev, a, b = ask.ev, ask.reading.subject, ask.reading.other
    if a is None or b is None or a not in ev.concepts or b not in ev.concepts:
        return None
    wa, adj_a = _walk_from(ask, a)
    wb, adj_b = _walk_from(ask, b)
    return a, b, wa, wb, adj_a, adj_b


def order(ask: Ask) -> Finding:
    """Which of A and B comes first in learning order, with the path between them."""
    two = _two(ask)
    if two is None:
        return unsettled(("The question names only one of the two concepts.",))
    a, b, wa, wb, adj_a, adj_b = two
    for first, then, w, adj in ((a, b, wb, adj_b), (b, a, wa, adj_a)):
        if first in w.parent:
            chain = shortest_chains(w, first, adj)[0]
            return Finding(
                tuple(chain),
                ("Learn ", Name(first), " first: ", Name(then), " needs it (", *_chain_pieces(chain), ")."),
                by_ref(w.path_edges(first)),
                facts={"first": first},
                path=tuple(w.path_edges(first)),
            )
    open_ = sorted(set(_open(ask, wa)) | set(_open(ask, wb)))
    if not open_ and ask.ev.groups:
        relations = ask.reading.relations or _LEARNING
        for first, then in ((a, b), (b, a)):
            way = on_some_way(ask.ev, first, then, relations)
            if way is not None:  # first lies on some ways to then, through an option
                g, via = way
                says: tuple[Piece, ...] = ("Learn ", Name(first), " first, on the ways through it: ")
                if via != first:
                    says += ("it is on the way to ", Name(via), ", ")
                says += (
                    "one of the ways to meet what ",
                    Name(g.target_id),
                    " requires (",
                    *phrase(ask.ev, g),
                    ").",
                )
                return Finding((first, then), says, facts={"first": first, "one_of": g.group_id})
    found = Finding(
        (a, b),
        ("Neither needs the other: ", Name(a), " and ", Name(b), " can be learned in either order."),
        facts={"first": None},
    )
    return partial(found, open_, ask.ev, ask.reading.relations or _LEARNING) if open_ else found


def relate(ask: Ask) -> Finding:
    """How A and B relate: a learning path, else nearest shared foundations, else other links."""
    two = _two(ask)
    if two is None:
        return unsettled(("The question names only one of the two concepts.",))
    ev, reading = ask.ev, ask.reading
    a, b, wa, wb, adj_a, adj_b = two
    relations = reading.relations or _LEARNING
    for first, then, w, adj in ((a, b, wb, adj_b), (b, a, wa, adj_a)):
        if first in w.parent:
            chains = shortest_chains(w, first, adj)[:MAX_CHAINS]
            says: list[Piece] = [Name(first), " comes before ", Name(then), " in learning order: "]
            for i, chain in enumerate(chains):
                says += [*(["; "] if i else []), *_chain_pieces(chain)]
            says.append(".")
            refs = by_ref(r for chain in chains for r in _chain_edges(ev, chain, relations))
            members = tuple(dict.fromkeys(c for chain in chains for c in chain))
            return Finding(members, tuple(says), refs, facts={"how": "path"})
    open_ = sorted(set(_open(ask, wa)) | set(_open(ask, wb)))
    if open_:
        found = Finding((a, b), ("No link between ", Name(a), " and ", Name(b), " found yet."))
        return partial(found, open_, ev, relations)
    shared = (set(wa.parent) & set(wb.parent)) - {a, b}
    nearest = by_name((s for s in shared if not any(s != t and s in _needs_of(t, adj_a) for t in shared)), ev)
    if nearest:
        refs = by_ref(r for s in nearest for w in (wa, wb) for r in w.path_edges(s))
        return Finding(
            nearest,
            (
                "Neither needs the other; both build on ",
                Names(nearest),
                ", the nearest foundations they share.",
            ),
            refs,
            facts={"how": "shared_foundations"},
        )
    direct = [
        ref for ref, e in ev.edges.items() if {e.source_id, e.target_id} == {a, b} and e.relation in _OTHER
    ]
    if direct:
        says = ["Neither needs the other, and they share no foundation; "]
        for i, ref in enumerate(by_ref(direct)):
            e = ev.edges[ref]
            says += [
                *([", and "] if i else []),
                Name(e.source_id),
                f" {_OTHER_WORDS[e.relation]} ",
                Name(e.target_id),
            ]
        says.append(".")
        return Finding((a, b), tuple(says), by_ref(direct), facts={"how": "direct"})
    unread = sorted(c for c in (a, b) if c not in ask.request.visited)
    if unread:
        return Finding(
            (a, b),
            ("No learning link between ", Name(a), " and ", Name(b), "; their other links are not read yet."),
            confidence=NOTHING,
            missing="the other relations of " + " and ".join(ev.name(c) for c in unread),
            focus=Focus(_OTHER, tuple(unread), "other links between the two"),
            complete=False,
        )
    return Finding(
        (a, b),
        ("Nothing connects ", Name(a), " and ", Name(b), ": neither needs the other, they share no "
         "foundation, and no other relation links them."),
        facts={"how": "none"},
    )  # fmt: skip


_OTHER_WORDS: Final = {RELATED: "is related to", CONTRASTS_WITH: "contrasts with", PART_OF: "is part of"}


def _needs_of(c: str, adj: dict[str, list[tuple[str, str]]]) -> set[str]:
    """Everything needed before ``c`` over ``adj`` (not ``c`` itself)."""
    return set(walk(c, adj).parent) - {c}


# At most this many concepts opened by what a learner knows but not ready yet are listed.
_MAX_WAITING: Final = 8


def next_concepts(ask: Ask) -> Finding:
    """What a learner who knows the reading's known concepts can take up next (module docstring):
    the concepts ready now (every need known: the answer set), then those the known concepts open
    that still need more, each with what it still needs."""
    ev, reading = ask.ev, ask.reading
    known = [k for k in reading.known if k in ev.concepts]
    if not known:
        return unsettled(("The question names nothing known.",))
    relations = reading.relations or _LEARNING
    before = adjacency(ev, relations, "before")
    after = adjacency(ev, relations, "after")
    walks = [walk(k, before) for k in known]
    closure = set().union(*(w.parent for w in walks))
    candidates = {c for k in closure for c in _after(ev, after, k) if c not in closure}
    ready = by_name((c for c in candidates if _available(ev, before, c, closure)), ev)
    # what the known concepts themselves open, and of those what still needs more
    opened = {c for k in known for c in _after(ev, after, k) if c not in closure}
    waiting = by_name(opened - set(ready), ev)[:_MAX_WAITING]
    open_ = sorted(c for c in closure | candidates if c in ask.unexpanded)
    refs = by_ref(ref for c in (*ready, *waiting) for _, ref in before.get(c, []))
    knew: tuple[Piece, ...] = (Names(by_name(known, ev)),)
    rests = f" (and what {'they rest' if len(known) > 1 else 'it rests'} on)"
    if ready:
        says: tuple[Piece, ...] = ("Knowing ", *knew, rests, ", you can take up next: ", Names(ready), ".")
    else:
        says = ("Knowing ", *knew, ", nothing new has all of its needs met yet.")
    if waiting:
        says += (
            " Opened by what you know but still needing more: ",
            *_still_needs(ev, before, waiting, closure),
            ".",
        )
    found = Finding(ready, says, refs)
    return partial(found, open_, ev, relations) if open_ else found


def opens(ask: Ask) -> Finding:
    """What knowing X opens up: the concepts one step after X whose every need is X or what X
    rests on (ready now because of X), then those after X that still need more, each with what."""
    ev, reading, x = ask.ev, ask.reading, ask.reading.subject
    assert x is not None
    relations = reading.relations or _LEARNING
    before = adjacency(ev, relations, "before")
    after = adjacency(ev, relations, "after")
    closure = set(walk(x, before).parent)
    candidates = {c for c in _after(ev, after, x) if c not in closure}
    ready = by_name((c for c in candidates if _available(ev, before, c, closure)), ev)
    waiting = by_name(candidates - set(ready), ev)[:_MAX_WAITING]
    open_ = sorted(c for c in closure | candidates if c in ask.unexpanded)
    refs = by_ref(ref for c in (*ready, *waiting) for _, ref in before.get(c, []))
    if ready:
        says: tuple[Piece, ...] = (
            "Knowing ",
            Name(x),
            " (and what it rests on) opens up: ",
            Names(ready),
            ".",
        )
    elif candidates:
        says = ("Knowing ", Name(x), " opens up nothing on its own yet.")
    else:
        says = ("Nothing comes after ", Name(x), ", according to the graph.")
    if waiting:
        says += (" After it but still needing more: ", *_still_needs(ev, before, waiting, closure), ".")
    found = Finding(ready, says, refs)
    return partial(found, open_, ev, relations) if open_ else found


def _after(ev: EvidenceGraph[Any, Any], after: dict[str, list[tuple[str, str]]], c: str) -> list[str]:
    """What comes one step after ``c``: its plain dependents and the targets of the groups it is
    an option of."""
    return [n for n, _ in after.get(c, [])] + [g.target_id for g in ev.groups_naming(c)]


def _available(
    ev: EvidenceGraph[Any, Any], before: dict[str, list[tuple[str, str]]], c: str, known: set[str]
) -> bool:
    """Can a learner credited with ``known`` take up ``c``: every plain need known, and every
    group of ``c`` met by options inside ``known``?"""
    return {n for n, _ in before.get(c, [])} <= known and all(g.satisfied_by(known) for g in ev.groups_of(c))


def _still_needs(
    ev: EvidenceGraph[Any, Any],
    before: dict[str, list[tuple[str, str]]],
    waiting: Sequence[str],
    known: set[str],
) -> tuple[Piece, ...]:
    """Each waiting concept with what it still needs: its plain needs not known, and the phrases
    of its groups not met."""
    out: tuple[Piece, ...] = ()
    for i, c in enumerate(waiting):
        needs = by_name((n for n, _ in before.get(c, []) if n not in known), ev)
        unmet = [g for g in ev.groups_of(c) if not g.satisfied_by(known)]
        parts: tuple[Piece, ...] = (Names(needs),) if needs else ()
        for g in unmet:
            parts += ("; " if parts else "", *phrase(ev, g))
        out += (*(("; ",) if i else ()), Name(c), " (also needs ", *parts, ")")
    return out


def start(ask: Ask) -> Finding:
    """Where to start for X: the concepts X rests on that need nothing first, each with its path
    to X."""
    ev, reading, x = ask.ev, ask.reading, ask.reading.subject
    assert x is not None
    w, adj = _walk_from(ask, x)
    # (a concept with a requirement group needs something first too)
    roots = by_name((c for c in w.parent if c != x and not adj.get(c) and not ev.groups_of(c)), ev)
    open_ = _open(ask, w)
    refs = by_ref(r for c in roots for r in w.path_edges(c))
    if roots:
        says: tuple[Piece, ...] = (
            "To reach ",
            Name(x),
            ", start with: ",
            Names(roots),
            " (nothing comes before them).",
        )
    elif ev.groups and (set(w.parent) - {x} or ev.groups_of(x)):
        # every way in passes through an option: no one place to start
        says = (
            "Nothing ",
            Name(x),
            " requires on every way is a starting point: where to start depends on the options you take (",
            *requirement(ev, x, reading.relations or _LEARNING),
            ").",
        )
    else:
        says = ("Nothing needs to be learned before ", Name(x), ": start with it.")
    found = Finding(roots, says, refs)
    return partial(found, open_, ev, reading.relations or _LEARNING) if open_ else found


# Question forms and the intents of their own, answered here (the offline synthesizer's table).
FORMS: Final[dict[str, Callable[[Ask], Finding]]] = {
    "yes_no": check,
    "why": why,
    "order": order,
    "relate": relate,
    "next": next_concepts,
    "opens": opens,
    "start": start,
}
