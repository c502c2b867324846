"""The offline synthesizer: deterministic, graph-grounded answers without a model.

It answers FROM THE READING (``control_plane.understanding.interpretation``): the intent, the
subjects and their roles, the direction, direct or transitive, and the relations the reading
fitted to the graph. It answers from the evidence sub-graph only and reports a confidence that
reflects how complete that evidence is. It counts as the round's one synthesis call
(``usage.calls == 1``, zero tokens). A request without a reading (a caller that did not
interpret the question) is read here from the evidence's seeds.

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
before_uses     what is needed before X intersected with what Y builds on
study_plan      the needed-before closure of X minus what is already known, in layers
lessons_*       active lesson links of X (covering) or of what is needed before X
about           the summary of X and its relations
==============  ============================================================================

Two subjects combine: "both" (intersection), "either" (union), "except" (minus the other's
answer and the other itself).

Confidence: 0.9 when every concept the answer depends on has been expanded (none is in
``request.unexpanded``). 0.85 for a before+uses answer whose closure is still open but where
every concept Y builds on is decided. Below 0.80 otherwise, with ``missing`` naming the unexplored
concepts and ``next_focus`` the relations and concepts to expand. An empty result ("none") is only
stated with complete evidence, and never when the asked relation has no edge in this graph.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from control_plane.evidence import EvidenceGraph
from control_plane.synthesizers.base import Draft, Focus, SynthesisRequest, SynthesizerInfo, Usage
from control_plane.understanding.interpretation import Reading, interpret, mentions_in
from control_plane.understanding.names import NameIndex
from control_plane.understanding.relating import adjacency, mode_of, walk
from data_plane.relations import BUILDS_ON, PREREQUISITE, RELATIONS

__all__ = ["RULES_VERSION", "OfflineSynthesizer", "read_request"]

RULES_VERSION: Final = "offline-rules-3"
COMPLETE: Final = 0.9
DECIDED: Final = 0.85
PARTIAL_MAX: Final = 0.7
NO_PATH: Final = 0.5
NOTHING: Final = 0.2
_LEARNING: Final = (PREREQUISITE, BUILDS_ON)


def read_request(request: SynthesisRequest) -> Reading:
    """The request's reading, or one made here from the seeds when the caller gave none."""
    if request.reading is not None:
        return request.reading
    ev = request.evidence
    seeds = [ev.concepts[s] for s in ev.seeds if s in ev.concepts]
    index = NameIndex.build(seeds)
    now: datetime = request.as_of.valid_at
    return interpret(request.question, mentions_in(request.question, index), now=now)


def _names(evidence: EvidenceGraph[Any, Any], ids: Iterable[str]) -> str:
    return ", ".join(evidence.name(i) for i in ids)


def _by_ref(refs: Iterable[str]) -> list[str]:
    return sorted(set(refs), key=lambda r: int(r[1:]))


@dataclass(frozen=True)
class _Result:
    """One subject's answer set, the edges that justify it, and what is still unexplored."""

    members: frozenset[str]
    edges: dict[str, tuple[str, ...]]  # member -> edge refs that justify it
    open: frozenset[str]
    relations: tuple[str, ...]


def _relations_used(reading: Reading) -> str:
    """How the answer names the relation it used."""
    if reading.relation_note:
        return f" ({reading.relation_note})"
    if not reading.relations or reading.intent in ("about", "neighbours"):
        return ""
    rels = " and ".join(reading.relations)
    return f" (from {rels} edges)"


class OfflineSynthesizer:
    """Deterministic answers from the evidence sub-graph (see the module docstring)."""

    def __init__(self) -> None:
        self._info = SynthesizerInfo("offline", "graph-rules-v3", RULES_VERSION, offline=True)

    @property
    def info(self) -> SynthesizerInfo:
        return self._info

    def synthesize(self, request: SynthesisRequest) -> Draft:
        ev = request.evidence
        reading = read_request(request)
        x = reading.subject
        if x is None or x not in ev.concepts:
            return _draft(
                "The evidence names no concept from the question.",
                0.0,
                (),
                (),
                "a concept named in the question",
                Focus(RELATIONS, (), request.question),
            )
        if reading.relations_missing:
            return _draft(
                f"The question asks about {' or '.join(reading.asked_relations)} links, and this graph has none.",
                NOTHING,
                (),
                (),
                reading.relation_note,
                Focus(),
            )
        if reading.intent == "path":
            return self._path(request, reading)
        if reading.intent == "before_uses":
            return self._before_uses(request, reading)
        if reading.intent == "study_plan":
            return self._study_plan(request, reading)
        if reading.intent in ("lessons_covering", "lessons_before"):
            return self._lessons(request, reading)
        return self._set_answer(request, reading)

    # -- answer sets ------------------------------------------------------------------------

    def _solve(self, request: SynthesisRequest, reading: Reading, x: str) -> _Result:
        """The answer set of ``reading`` for subject ``x`` (one subject, no combination)."""
        ev, unexpanded = request.evidence, request.unexpanded
        mode = mode_of(reading)
        if mode is None:  # about: every neighbour
            hits: dict[str, list[str]] = {}
            for ref, e in ev.edges.items():
                if x in (e.source_id, e.target_id):
                    other = e.target_id if e.source_id == x else e.source_id
                    hits.setdefault(other, []).append(ref)
            return _Result(
                frozenset(hits),
                {m: tuple(r) for m, r in hits.items()},
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
        edges = {m: tuple(w.path_edges(m)) for m in members}
        return _Result(members, edges, frozenset(inner & unexpanded), tuple(relations) or RELATIONS)

    def _set_answer(self, request: SynthesisRequest, reading: Reading) -> Draft:
        ev, x, y = request.evidence, reading.subject, reading.other
        assert x is not None
        a = self._solve(request, reading, x)
        members, open_, edges = set(a.members), set(a.open), dict(a.edges)
        if reading.combine and y is not None and y in ev.concepts:
            b = self._solve(request, reading, y)
            open_ |= b.open
            if reading.combine == "both":
                members &= b.members
                edges = {m: a.edges[m] + b.edges[m] for m in members}
            elif reading.combine == "either":
                members |= b.members
                edges = {m: a.edges.get(m, ()) + b.edges.get(m, ()) for m in members}
            else:
                members -= b.members | {y}
        elif reading.intent == "contrasts" and y is not None and y in ev.concepts:
            members &= {y}  # "A versus B": only the contrast between the two
        members -= set(reading.known)
        ordered = sorted(members, key=lambda c: (ev.name(c).lower(), c))
        refs = _by_ref(r for m in ordered for r in edges.get(m, ()))
        subjects = [x, y] if reading.combine and y is not None else [x]
        head, none = self._phrase(reading, ev, subjects)
        used = _relations_used(reading)
        if open_:
            return _partial(
                f"{head}, so far: {_names(ev, ordered)}{used}.", ordered, refs, sorted(open_), ev, a.relations
            )
        if not ordered:
            about = reading.intent == "about"
            return _draft(
                f"{none}{used}." if not about else f"{head} nothing else in the graph.",
                NOTHING if about else COMPLETE,
                tuple(subjects),
                (),
                "nothing connected" if about else "",
                Focus(),
            )
        return _draft(
            f"{head}: {_names(ev, ordered)}{used}.", COMPLETE, tuple(ordered), tuple(refs), "", Focus()
        )

    @staticmethod
    def _phrase(reading: Reading, ev: EvidenceGraph[Any, Any], subjects: list[str]) -> tuple[str, str]:
        """(answer head, the whole sentence when the answer is empty)."""
        x = ev.name(subjects[0])
        if reading.combine == "both" and len(subjects) > 1:
            x = f"both {ev.name(subjects[0])} and {ev.name(subjects[1])}"
        elif reading.combine == "either" and len(subjects) > 1:
            x = f"{ev.name(subjects[0])} and {ev.name(subjects[1])}"
        but = (
            f" (leaving out {ev.name(subjects[1])} and what it needs)"
            if reading.combine == "except" and len(subjects) > 1
            else ""
        )
        plural = reading.combine in ("both", "either") and len(subjects) > 1
        if reading.intent == "neighbours":
            reach = f"exactly {reading.hops} hops from" if reading.exact else f"within {reading.hops} hops of"
            if reading.hops == 1 and not reading.exact:
                reach = "directly connected to"
            return f"Concepts {reach} {x}{but}", f"No concept is {reach} {x}{but}, according to the graph"
        how = "" if reading.transitive else "directly "
        prereq_only = reading.asked_relations == (PREREQUISITE,)
        table = {
            "prerequisites": (
                f"The direct prerequisites of {x}{but}",
                f"{x} has no direct prerequisites in the graph{but}",
            ),
            "needed_before": (
                (
                    f"Before {x}{but} a learner must master",
                    f"Nothing needs to be learned before {x}{but}, according to the graph",
                )
                if reading.transitive
                else (
                    f"What comes directly before {x}{but}",
                    f"Nothing comes directly before {x}{but}, according to the graph",
                )
            ),
            "dependents": (
                (
                    f"Concepts that have {x} as a prerequisite{but}",
                    f"No concept has {x} as a prerequisite{but}, according to the graph",
                )
                if prereq_only and not reading.transitive
                else (
                    f"What comes {how}after {x}{but}",
                    f"Nothing comes {how}after {x}{but}, according to the graph",
                )
            ),
            "builds_on": (
                f"{x} {'build' if plural else 'builds'} on{but}",
                f"{x} {'build' if plural else 'builds'} on nothing else{but}, according to the graph",
            ),
            "built_by": (
                f"Concepts that build on {x}{but}",
                f"Nothing builds on {x}{but}, according to the graph",
            ),
            "parts": (f"The parts of {x}{but}", f"{x} has no parts in the graph{but}"),
            "wholes": (
                f"{x} {'are' if plural else 'is'} part of{but}",
                f"{x} is not part of anything else{but}, according to the graph",
            ),
            "contrasts": (
                f"{x} {'contrast' if plural else 'contrasts'} with{but}",
                f"Nothing contrasts with {x}{but}, according to the graph",
            ),
            "related": (
                f"{x} {'are' if plural else 'is'} related to{but}",
                f"Nothing is related to {x}{but}, according to the graph",
            ),
            "about": (f"{x}: {ev.concepts[subjects[0]].summary} It is connected to", ""),
        }
        return table.get(reading.intent, table["about"])

    # -- two-seed intents -------------------------------------------------------------------

    def _before_uses(self, request: SynthesisRequest, reading: Reading) -> Draft:
        ev, x, y = request.evidence, reading.subject, reading.other
        if x is None or y is None or y not in ev.concepts:
            return self._set_answer(request, reading)
        w = walk(x, adjacency(ev, reading.relations, "before"))
        members = sorted(c for c in w.parent if c != x)
        closure = set(members)
        uses = {
            e.target_id: ref
            for ref, e in ev.edges.items()
            if e.relation == BUILDS_ON and e.source_id == y and e.target_id != y
        }
        found = sorted(c for c in uses if c in closure)
        open_closure = sorted(c for c in [x, *members] if c in request.unexpanded)
        # A concept Y builds on that is not (yet) on a path to X is decided once it has been
        # expanded: its links into the explored closure would then be in the evidence.
        undecided = sorted(c for c in uses if c not in closure and c in request.unexpanded)
        y_open = y in request.unexpanded
        edges = _by_ref([r for c in found for r in w.path_edges(c)] + [uses[c] for c in found])
        if found:
            among = "" if not open_closure else ", among others,"
            text = (
                f"Before {ev.name(x)} a learner must master{among} {_names(ev, members)}. "
                f"Of those, {ev.name(y)} builds on: {_names(ev, found)}."
            )
        else:
            text = f"None of the concepts needed before {ev.name(x)} is one that {ev.name(y)} builds on."
        if not open_closure and not y_open:
            return _draft(text, COMPLETE, tuple(found) or (x, y), tuple(edges), "", Focus())
        if found and not undecided and not y_open:
            return _draft(text, DECIDED, tuple(found), tuple(edges), "", Focus())
        todo = sorted({*undecided, *open_closure, *([y] if y_open else [])})
        return _partial(text, found, edges, todo, ev, _LEARNING)

    def _path(self, request: SynthesisRequest, reading: Reading) -> Draft:
        """How A leads to B: walk back from B in learning order until A is reached."""
        ev, a, b = request.evidence, reading.subject, reading.other
        if a is None or b is None or b not in ev.concepts:
            return _draft(
                "The question names only one end of the path.", NOTHING, (), (), "the other end", Focus()
            )
        w = walk(b, adjacency(ev, reading.relations, "before"))
        if a in w.parent:
            refs = w.path_edges(a)  # from A forward to B
            nodes = [a]
            for ref in refs:
                e = ev.edges[ref]
                nodes.append(e.target_id if e.relation == PREREQUISITE else e.source_id)
            steps = [
                f"{ev.name(e.source_id)} {'must be mastered before' if e.relation == PREREQUISITE else e.relation.replace('_', ' ')} {ev.name(e.target_id)}"
                for e in (ev.edges[r] for r in refs)
            ]
            text = f"{ev.name(a)} leads to {ev.name(b)}: " + "; ".join(steps) + "."
            # Shortest only if no concept closer to B than A could still have an unseen shortcut.
            closer = sorted(c for c, d in w.dist.items() if d < w.dist[a] and c in request.unexpanded)
            if not closer:
                return _draft(text, COMPLETE, tuple(nodes), tuple(refs), "", Focus())
            return _partial(text, nodes, refs, closer, ev, _LEARNING)
        open_ = sorted(c for c in w.parent if c in request.unexpanded)
        if open_:
            text = f"No learning path from {ev.name(a)} to {ev.name(b)} has been found yet."
            return _draft(
                text,
                NOTHING,
                (),
                (),
                f"unexplored: {_names(ev, open_)}",
                Focus(_LEARNING, tuple(open_), f"what comes before {ev.name(b)}"),
            )
        text = f"Nothing in the graph says that {ev.name(a)} leads to {ev.name(b)}."
        return _draft(text, NO_PATH, (), (), "no learning path in the graph", Focus())

    # -- plans and lessons ------------------------------------------------------------------

    def _closure(
        self, request: SynthesisRequest, reading: Reading, x: str
    ) -> tuple[list[str], dict[str, list[str]], list[str]]:
        """(members needed before ``x`` minus what is known, before-adjacency, still open)."""
        ev = request.evidence
        adj = adjacency(ev, reading.relations, "before")
        members = set(walk(x, adj).parent) - {x}
        known: set[str] = set()
        for k in reading.known:
            if k in ev.concepts:
                known |= set(walk(k, adj).parent)
        open_ = sorted(c for c in {x, *members} if c in request.unexpanded)
        before = {c: [b for b, _ in adj.get(c, [])] for c in members | {x}}
        return sorted(members - known), before, open_

    def _study_plan(self, request: SynthesisRequest, reading: Reading) -> Draft:
        ev, x = request.evidence, reading.subject
        assert x is not None
        members, before, open_ = self._closure(request, reading, x)
        keep = set(members)
        level: dict[str, int] = {}

        def depth(c: str, seen: frozenset[str] = frozenset()) -> int:
            if c not in level:
                prior = [b for b in before.get(c, []) if b in keep and b not in seen]
                level[c] = 1 + max((depth(b, seen | {c}) for b in prior), default=-1)
            return level[c]

        layers: dict[int, list[str]] = {}
        for c in members:
            layers.setdefault(depth(c), []).append(c)
        steps = [
            f"{i + 1}. {_names(ev, sorted(layers[n], key=lambda c: ev.name(c).lower()))}"
            for i, n in enumerate(sorted(layers))
        ]
        refs = _by_ref(
            ref
            for ref, e in ev.edges.items()
            if e.relation in reading.relations and {e.source_id, e.target_id} <= keep | {x}
        )
        known = f" (leaving out what you already know: {_names(ev, reading.known)})" if reading.known else ""
        if not members and not open_:
            return _draft(f"Nothing needs to be learned before {ev.name(x)}{known}, according to the graph.",
                          COMPLETE, (x,), (), "", Focus())  # fmt: skip
        text = (
            f"A study plan for {ev.name(x)}{known}, in this order: "
            + "; ".join(steps)
            + f"; then {ev.name(x)}."
        )
        if open_:
            return _partial(text, members, refs, open_, ev, _LEARNING)
        return _draft(text, COMPLETE, tuple(members), tuple(refs), "", Focus())

    def _lessons(self, request: SynthesisRequest, reading: Reading) -> Draft:
        ev, x = request.evidence, reading.subject
        assert x is not None
        if reading.intent == "lessons_covering":
            concepts, open_ = [x], list[str]()
            head = f"Lessons that cover {ev.name(x)}"
        else:
            concepts, _, open_ = self._closure(request, reading, x)
            if not reading.transitive:
                concepts = [b for b, _ in adjacency(ev, reading.relations, "before").get(x, [])]
            head = f"Lessons to take before {ev.name(x)}"
        links = [link for c in concepts for link in ev.lessons_of(c)]
        if reading.intent == "lessons_before":
            # A lesson that covers X itself is not one to take before X.
            own = {link.lesson_id for link in ev.lessons_of(x)}
            links = [link for link in links if link.lesson_id not in own]
        titles: dict[str, str] = {}
        for link in links:
            titles.setdefault(link.lesson_id, link.title or link.lesson_id)
        refs = _by_ref(link.ref for link in links)
        text = (
            f"{head}: " + ", ".join(f"{t} ({lid})" for lid, t in sorted(titles.items())) + "."
            if titles
            else f"No active lesson covers {ev.name(x) if reading.intent == 'lessons_covering' else 'what is needed before ' + ev.name(x)}, according to the graph."
        )
        cited = tuple(sorted({link.concept_id for link in links})) or (x,)
        if open_:
            draft = _partial(text, list(cited), [], open_, ev, _LEARNING)
        else:
            draft = _draft(text, COMPLETE, cited, (), "", Focus())
        return Draft(draft.answer, draft.confidence, draft.concept_ids, draft.edge_ids, draft.missing,
                     draft.next_focus, draft.usage, lesson_refs=tuple(refs))  # fmt: skip


def _draft(
    text: str,
    confidence: float,
    concepts: tuple[str, ...],
    edges: tuple[str, ...],
    missing: str,
    focus: Focus,
) -> Draft:
    return Draft(text, confidence, concepts, edges, missing, focus, Usage(calls=1))


def _partial(
    text: str,
    members: list[str],
    edges: list[str],
    open_: list[str],
    ev: EvidenceGraph[Any, Any],
    relations: tuple[str, ...],
) -> Draft:
    """An answer from incomplete evidence: below 0.80, naming what is still unexplored."""
    share = len(members) / (len(members) + len(open_)) if members or open_ else 0.0
    conf = round(min(PARTIAL_MAX, 0.3 + 0.4 * share) if members else NOTHING, 2)
    return _draft(
        text,
        conf,
        tuple(members),
        tuple(edges),
        f"unexplored: {_names(ev, open_)}",
        Focus(relations, tuple(open_), f"expand {_names(ev, open_)}"),
    )
