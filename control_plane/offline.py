"""The offline synthesizer: deterministic, graph-grounded answers without a model.

It reads the question's intent from cue phrases, answers from the evidence sub-graph only, and
reports a confidence that reflects how complete that evidence is. It counts as the round's one
synthesis call (``usage.calls == 1``, zero tokens).

Intents (cue phrases are matched on normalised tokens, see ``control_plane.seeding.normalise``):

==============  ==========================================================================
intent          cues and meaning
==============  ==========================================================================
path            "lead to", "leads to", "path", "connect", "get from", "from ... to" with two
                seeds: a shortest path between them over any relation (BFS in the evidence)
before+uses     a "before" cue and a "build on" cue with two seeds, e.g. "what must I master
                before X, and which of those does Y build on?": the needed-before closure of X
                intersected with what Y builds on
before          "before", "need to know", "prerequisite", "master first", "required for",
                "master": what is needed before X. Transitive (the closure) with "everything",
                "all", "what must", "master", "transitive"; otherwise the direct ones
builds on       "build on", "built on", "based on", "what uses X", "depends on": with the
                seed before the cue ("what does X build on") the foundations of X, otherwise
                (or with "uses", "depends on") what builds on X
part of         "part of", "component", "made of": parts of X; "what is X part of" (seed before
                the cue, no "components") the wholes X belongs to
contrasts       "contrast", "versus", "vs", "alternative", "difference": contrasts_with edges
about           anything else: the seed's summary and its relations
==============  ==========================================================================

"Needed before X" follows prerequisite edges *into* X and builds_on edges *out of* X,
transitively (``data_plane.relations``).

Confidence: 0.9 when every concept the answer depends on has been expanded (none is in
``request.unexpanded``); 0.85 for a before+uses answer whose closure is still open but where
every concept Y builds on is decided (on a path to X, or expanded with no link into the explored
closure: a bounded one-hop check, documented as such); below 0.80 otherwise, with ``missing``
naming the unexplored concepts and ``next_focus`` the relations and concepts to expand. An empty
result ("none of them") is only stated with complete evidence.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from control_plane.evidence import EvidenceGraph
from control_plane.seeding import NameIndex, normalise
from control_plane.synthesis import Draft, Focus, SynthesisRequest, SynthesizerInfo, Usage
from data_plane.relations import BUILDS_ON, CONTRASTS_WITH, PART_OF, PREREQUISITE, RELATIONS

__all__ = ["RULES_VERSION", "Intent", "OfflineSynthesizer", "parse_intent"]

RULES_VERSION: Final = "offline-rules-1"
COMPLETE: Final = 0.9
DECIDED: Final = 0.85
PARTIAL_MAX: Final = 0.7
NOTHING: Final = 0.2

_BEFORE = ("before", "need to know", "prerequisite", "master first", "required for", "master")
_TRANSITIVE = ("everything", "all", "what must", "master", "transitive", "whole")
_BUILDS = ("build on", "built on", "based on", "use", "depend on", "depends on", "foundation")
_BUILT_BY = ("use", "depend on", "depends on")
_PART = ("part of", "component", "made of")
_CONTRAST = ("contrast", "versus", "vs", "alternative", "difference", "differ")
_PATH = ("lead to", "path", "connect", "get from")


def _has(tokens: tuple[str, ...], cues: Iterable[str]) -> int:
    """Position of the first cue found in ``tokens`` (earliest), or -1."""
    best = -1
    for cue in cues:
        phrase = normalise(cue)
        n = len(phrase)
        for i in range(len(tokens) - n + 1):
            if tokens[i : i + n] == phrase:
                if best < 0 or i < best:
                    best = i
                break
    return best


@dataclass(frozen=True)
class Intent:
    """What the question asks: a kind and the seeds it is about (in order of appearance)."""

    kind: str  # path | before_uses | before | foundations | built_by | parts | wholes | contrasts | about
    subject: str | None = None
    other: str | None = None
    transitive: bool = False


def _positions(question: str, evidence: EvidenceGraph) -> dict[str, int]:
    """Where each seed first appears in the question (token index)."""
    seeds = [evidence.concepts[s] for s in evidence.seeds if s in evidence.concepts]
    index = NameIndex.build(seeds)
    pos: dict[str, int] = {}
    for m in index.matches(question):
        pos[m.concept_id] = min(pos.get(m.concept_id, m.start), m.start)
    for i, s in enumerate(evidence.seeds):
        pos.setdefault(s, 10_000 + i)
    return pos


def parse_intent(question: str, seeds_by_position: Mapping[str, int]) -> Intent:
    """The intent of ``question`` given where each seed appears in it (pure)."""
    toks = normalise(question)
    seeds = sorted(seeds_by_position, key=lambda s: (seeds_by_position[s], s))
    if not seeds:
        return Intent("about")
    first = seeds[0]
    second = seeds[1] if len(seeds) > 1 else None
    before_at, builds_at = _has(toks, _BEFORE), _has(toks, _BUILDS)
    if second is not None and _has(toks, _PATH) >= 0:
        return Intent("path", first, second)
    if second is not None and before_at >= 0 and builds_at > before_at:
        # "before X ..., which of those does Y build on": X follows the before cue, Y the rest.
        after_cue = [s for s in seeds if seeds_by_position[s] >= before_at]
        subject = after_cue[0] if after_cue else first
        other = next(s for s in seeds if s != subject)
        return Intent("before_uses", subject, other, transitive=True)
    if before_at >= 0:
        return Intent("before", first, transitive=_has(toks, _TRANSITIVE) >= 0)
    if _has(toks, _CONTRAST) >= 0:
        return Intent("contrasts", first, second)
    if _has(toks, _PART) >= 0:
        part_at = _has(toks, _PART)
        if seeds_by_position[first] < part_at and _has(toks, ("component", "made of")) < 0:
            return Intent("wholes", first)
        return Intent("parts", first)
    if builds_at >= 0:
        if _has(toks, _BUILT_BY) >= 0 or seeds_by_position[first] > builds_at:
            return Intent("built_by", first)
        return Intent("foundations", first)
    return Intent("about", first)


@dataclass
class _Walk:
    """A breadth-first walk: reached concept → edge ref that reached it (None for the start)."""

    parent: dict[str, tuple[str, str] | None]

    def path_edges(self, node: str) -> list[str]:
        refs: list[str] = []
        while (step := self.parent.get(node)) is not None:
            node, ref = step
            refs.append(ref)
        return refs


def _adjacency(evidence: EvidenceGraph, kind: str) -> dict[str, list[tuple[str, str]]]:
    """``before``: x → concepts needed before x; ``after``: the reverse; ``any``: undirected."""
    adj: dict[str, list[tuple[str, str]]] = {}
    for ref, e in sorted(evidence.edges.items(), key=lambda kv: int(kv[0][1:])):
        pairs: list[tuple[str, str]] = []
        if kind == "any":
            pairs = [(e.source_id, e.target_id), (e.target_id, e.source_id)]
        elif e.relation == PREREQUISITE:
            pairs = [(e.target_id, e.source_id)]  # source must be mastered before target
        elif e.relation == BUILDS_ON:
            pairs = [(e.source_id, e.target_id)]  # target is the foundation of source
        if kind == "after":
            pairs = [(b, a) for a, b in pairs]
        for a, b in pairs:
            adj.setdefault(a, []).append((b, ref))
    return adj


def _bfs(start: str, adj: Mapping[str, list[tuple[str, str]]], *, depth: int | None = None) -> _Walk:
    parent: dict[str, tuple[str, str] | None] = {start: None}
    queue = deque([(start, 0)])
    while queue:
        node, d = queue.popleft()
        if depth is not None and d >= depth:
            continue
        for nxt, ref in adj.get(node, []):
            if nxt not in parent:
                parent[nxt] = (node, ref)
                queue.append((nxt, d + 1))
    return _Walk(parent)


def _names(evidence: EvidenceGraph, ids: Iterable[str]) -> str:
    return ", ".join(evidence.name(i) for i in ids)


class OfflineSynthesizer:
    """Deterministic answers from the evidence sub-graph (see the module docstring)."""

    def __init__(self) -> None:
        self._info = SynthesizerInfo("offline", "graph-rules-v1", RULES_VERSION, offline=True)

    @property
    def info(self) -> SynthesizerInfo:
        return self._info

    def synthesize(self, request: SynthesisRequest) -> Draft:
        ev = request.evidence
        intent = parse_intent(request.question, _positions(request.question, ev))
        handler = {
            "path": self._path,
            "before_uses": self._before_uses,
            "before": self._before,
            "foundations": self._one_hop,
            "built_by": self._one_hop,
            "parts": self._one_hop,
            "wholes": self._one_hop,
            "contrasts": self._one_hop,
            "about": self._one_hop,
        }[intent.kind]
        if intent.subject is None or intent.subject not in ev.concepts:
            return _draft(
                "The evidence names no concept from the question.",
                0.0,
                (),
                (),
                "a concept named in the question",
                Focus(RELATIONS, (), request.question),
            )
        return handler(request, intent)

    # -- intents ----------------------------------------------------------------------------

    def _closure(self, request: SynthesisRequest, target: str, transitive: bool) -> tuple[_Walk, list[str]]:
        walk = _bfs(target, _adjacency(request.evidence, "before"), depth=None if transitive else 1)
        members = sorted(c for c in walk.parent if c != target)
        return walk, members

    def _before(self, request: SynthesisRequest, intent: Intent) -> Draft:
        ev, x = request.evidence, intent.subject
        assert x is not None
        walk, members = self._closure(request, x, intent.transitive)
        scope = [x, *members] if intent.transitive else [x]
        open_ = sorted(c for c in scope if c in request.unexpanded)
        edges = sorted({r for m in members for r in walk.path_edges(m)}, key=lambda r: int(r[1:]))
        kind = "everything" if intent.transitive else "directly"
        if not members and not open_:
            return _draft(
                f"Nothing must be mastered before {ev.name(x)}: it has no prerequisites in the graph.",
                COMPLETE,
                (x,),
                (),
                "",
                Focus(),
            )
        text = f"Before {ev.name(x)} a learner must master ({kind}): {_names(ev, members)}."
        if not open_:
            return _draft(text, COMPLETE, tuple(members), tuple(edges), "", Focus())
        return _partial(text, members, edges, open_, ev, (PREREQUISITE, BUILDS_ON))

    def _before_uses(self, request: SynthesisRequest, intent: Intent) -> Draft:
        ev, x, y = request.evidence, intent.subject, intent.other
        assert x is not None and y is not None
        walk, members = self._closure(request, x, True)
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
        edges = sorted(
            {r for c in found for r in walk.path_edges(c)} | {uses[c] for c in found},
            key=lambda r: int(r[1:]),
        )
        if found:
            among = "" if not open_closure else ", among others,"
            text = (
                f"Before {ev.name(x)} a learner must master{among} {_names(ev, members)}. "
                f"Of those, {ev.name(y)} builds on: {_names(ev, found)}."
            )
        else:
            text = f"None of the concepts needed before {ev.name(x)} is one that {ev.name(y)} builds on."
        if not open_closure and not y_open:
            return _draft(text, COMPLETE, tuple(found), tuple(edges), "", Focus())
        if found and not undecided and not y_open:
            return _draft(text, DECIDED, tuple(found), tuple(edges), "", Focus())
        todo = sorted({*undecided, *open_closure, *([y] if y_open else [])})
        return _partial(text, found, edges, todo, ev, (PREREQUISITE, BUILDS_ON))

    def _path(self, request: SynthesisRequest, intent: Intent) -> Draft:
        ev, a, b = request.evidence, intent.subject, intent.other
        assert a is not None and b is not None
        walk = _bfs(a, _adjacency(ev, "any"))
        if b in walk.parent:
            refs = list(reversed(walk.path_edges(b)))
            nodes = [a]
            for ref in refs:
                e = ev.edges[ref]
                nodes.append(e.target_id if e.source_id == nodes[-1] else e.source_id)
            steps = [
                f"{ev.name(e.source_id)} {e.relation.replace('_', ' ')} {ev.name(e.target_id)}"
                for e in (ev.edges[r] for r in refs)
            ]
            text = f"{ev.name(a)} leads to {ev.name(b)}: " + "; ".join(steps) + "."
            return _draft(text, COMPLETE, tuple(nodes), tuple(refs), "", Focus())
        open_ = sorted(c for c in walk.parent if c in request.unexpanded)
        text = f"No connection between {ev.name(a)} and {ev.name(b)} has been found yet."
        conf = NOTHING if open_ else 0.5
        return _draft(
            text,
            conf,
            (),
            (),
            f"unexplored: {_names(ev, open_)}" if open_ else "no path in the graph",
            Focus(RELATIONS, tuple(open_[:12]), f"path from {ev.name(a)} to {ev.name(b)}"),
        )

    def _one_hop(self, request: SynthesisRequest, intent: Intent) -> Draft:
        ev, x = request.evidence, intent.subject
        assert x is not None
        wanted: dict[str, tuple[str, str] | None] = {
            # intent → (relation, which end x must be); None: any relation, either end
            "foundations": (BUILDS_ON, "source"),
            "built_by": (BUILDS_ON, "target"),
            "parts": (PART_OF, "target"),
            "wholes": (PART_OF, "source"),
            "contrasts": (CONTRASTS_WITH, "either"),
            "about": None,
        }
        rule = wanted[intent.kind]
        hits: dict[str, str] = {}
        for ref, e in sorted(ev.edges.items(), key=lambda kv: int(kv[0][1:])):
            if x not in (e.source_id, e.target_id):
                continue
            other = e.target_id if e.source_id == x else e.source_id
            if rule is not None:
                relation, end = rule
                if e.relation != relation:
                    continue
                if (end == "source" and e.source_id != x) or (end == "target" and e.target_id != x):
                    continue
                if intent.kind == "contrasts" and intent.other and other != intent.other:
                    continue
            hits.setdefault(other, ref)
        members = sorted(hits)
        refs = sorted(hits.values(), key=lambda r: int(r[1:]))
        phrase = {
            "foundations": f"{ev.name(x)} builds on",
            "built_by": f"What builds on {ev.name(x)}",
            "parts": f"The parts of {ev.name(x)}",
            "wholes": f"{ev.name(x)} is part of",
            "contrasts": f"{ev.name(x)} contrasts with",
            "about": f"{ev.name(x)}: {ev.concepts[x].summary} It is connected to",
        }[intent.kind]
        relations = (rule[0],) if rule is not None else RELATIONS
        if x in request.unexpanded:
            return _partial(f"{phrase}: {_names(ev, members)}.", members, refs, [x], ev, relations)
        if not members:
            return _draft(
                f"{phrase}: none of them, according to the graph.",
                COMPLETE if intent.kind != "about" else NOTHING,
                (x,),
                (),
                "" if intent.kind != "about" else "nothing connected",
                Focus(),
            )
        return _draft(f"{phrase}: {_names(ev, members)}.", COMPLETE, tuple(members), tuple(refs), "", Focus())


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
    ev: EvidenceGraph,
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
