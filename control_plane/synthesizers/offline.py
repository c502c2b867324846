"""The offline synthesizer: deterministic, graph-grounded answers without a model.

It reads the question's intent from cue phrases, answers from the evidence sub-graph only, and
reports a confidence that reflects how complete that evidence is. It counts as the round's one
synthesis call (``usage.calls == 1``, zero tokens). Nothing here knows any concept id: the
subjects are the seeds the planner found, in order of appearance in the question.

Cue phrases are matched on normalised tokens (``control_plane.understanding.names.normalise``: lowercase,
singular), so "prerequisites" matches "prerequisite" and "builds" matches "build". The first
row that applies wins:

==============  ============================================================================
intent          cues and meaning
==============  ============================================================================
path            two seeds and "lead to", "path", "chain", "get from", "trace": how A leads
                to B in *learning order* — the shortest path from A to B over prerequisite
                edges source→target and builds_on edges target→source (the foundation leads
                to what builds on it). Other relations and reversed edges never count; no
                such path means no answer (the loop abstains).
unlocks         "unlock", "unlocks", "enable", "enables": what X unlocks — everything that
                needs X, transitively (prerequisite edges out of X, builds_on edges into X;
                the reverse of "before"); only the immediate ones with "direct"/"immediately"
before+uses     two seeds, a "before" cue and a "build"/"built"/"foundation"/"use" cue, in
                either order: what is needed before X (the seed after the "before" cue)
                intersected with what Y (the other seed) builds on
prerequisites   "prerequisite": the *direct* prerequisites of X, i.e. the stored
                prerequisite edges into X only. With a transitive cue ("indirect",
                "transitive", "all the way", "everything", "full", "whole") it is the
                needed-before closure instead.
before          "before", "first", "need", "require", "master", "lead up to", "groundwork",
                "background", "end at" ("the learning path that ends at X"): what is needed
                before X — the needed-before closure (prerequisite edges into X, builds_on
                edges out of X, transitively; ``data_plane.relations``). Transitive by
                default; only the immediate ones with "direct", "directly", "immediate",
                "immediately" (and no transitive cue).
contrasts       "contrast", "contrasted", "versus", "vs", "alternative", "opposite",
                "difference", "differ", "compared": contrasts_with neighbours (symmetric)
parts/wholes    "part of", "belong to", "member of": the parts of X when X follows the cue
                ("the parts of X", "which metrics belong to X"), what X is part of when X
                precedes it ("what is X part of"). "part" (without "of"), "component",
                "piece", "made of", "make up", "consist", "include", "contain", "comprise":
                always the parts of X
foundations /   "build", "built", "based on", "depend on", "rely on", "use", "foundation",
built by        "underlie": X before the verb ("what does X build on", "what is X built on",
                "what foundations does X build on") asks for what X builds on (builds_on
                edges out of X); X after it, or a pronoun after it ("what builds on X",
                "once I know X, what builds on it?") asks for what builds on X (builds_on
                edges into X). "foundation(s) of X" without a verb: what X builds on
related         "related", "relate", "associated": related neighbours (symmetric)
neighbours      "connected", "linked", "link", "adjacent", "neighbour", "hop": concepts
                linked to X by any relation; "within N hops" widens to distance 1..N,
                "exactly N hops" keeps distance N only
about           anything else: the seed's summary and its relations
==============  ============================================================================

Two seeds combine the answers of the single-seed intent: "both", "common", "in common",
"shared" (or a link question naming two concepts: "which concept links A and B") → the
intersection of A's and B's answers; "but not", "except", "excluding" → A's answer minus B's
answer and B itself.

Confidence: 0.9 when every concept the answer depends on has been expanded (none is in
``request.unexpanded``): the subject for one-hop intents, every member of a closure, every
concept closer than the found path's length to B for a path, every concept closer than N for
"within N hops". 0.85 for a before+uses answer whose closure is still open but where every
concept Y builds on is decided (on a path to X, or expanded with no link into the explored
closure: a bounded one-hop check, documented as such). Below 0.80 otherwise, with ``missing``
naming the unexplored concepts and ``next_focus`` the relations and concepts to expand. An
empty result ("none of them") is only stated with complete evidence.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from control_plane.evidence import EvidenceGraph
from control_plane.synthesizers.base import Draft, Focus, SynthesisRequest, SynthesizerInfo, Usage
from control_plane.understanding.names import NameIndex, normalise
from data_plane.relations import BUILDS_ON, CONTRASTS_WITH, PART_OF, PREREQUISITE, RELATED, RELATIONS

__all__ = ["RULES_VERSION", "Intent", "OfflineSynthesizer", "parse_intent"]

RULES_VERSION: Final = "offline-rules-2"
COMPLETE: Final = 0.9
DECIDED: Final = 0.85
PARTIAL_MAX: Final = 0.7
NO_PATH: Final = 0.5
NOTHING: Final = 0.2

Cues = tuple[tuple[str, ...], ...]


def _cues(*phrases: str) -> Cues:
    return tuple(normalise(p) for p in phrases)


_PATH: Final = _cues("lead to", "path", "chain", "get from", "trace")
_BEFORE: Final = _cues(
    "before",
    "first",
    "need",
    "needed",
    "require",
    "required",
    "master",
    "lead up to",
    "groundwork",
    "background",
    "end at",
)
_PREREQ: Final = _cues("prerequisite")
_UNLOCK: Final = _cues("unlock", "enable")
_TRANSITIVE: Final = _cues(
    "indirect", "indirectly", "transitive", "transitively", "all the way", "everything", "full", "whole"
)
_DIRECT: Final = _cues("direct", "directly", "immediate", "immediately")
_CONTRAST: Final = _cues(
    "contrast", "contrasted", "versus", "vs", "alternative", "opposite", "difference", "differ", "compared"
)
_PART_POSITIONAL: Final = _cues("part of", "belong to", "member of")
_PART_WHOLE_IS_X: Final = _cues(
    "part", "component", "piece", "made of", "make up", "consist", "include", "contain", "comprise"
)
_BUILD_VERB: Final = _cues("build", "built", "based on", "depend on", "rely on", "use")
_BUILD_NOUN: Final = _cues("foundation", "underlie")
_RELATED: Final = _cues("related", "relate", "associated")
_NEIGHBOUR: Final = _cues("connected", "linked", "link", "adjacent", "neighbour", "neighbor", "hop")
_BOTH: Final = _cues("both", "common", "in common", "shared")
_EXCEPT: Final = _cues("but not", "except", "excluding")
_EXACT: Final = _cues("exactly")
_PRONOUNS: Final = frozenset({"it", "them", "this", "that", "these", "those"})
_NUMBERS: Final = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_LEARNING: Final = (PREREQUISITE, BUILDS_ON)
# One-hop intents: (relation, which end the subject must be: source, target or either).
_ONE_HOP: Final[dict[str, tuple[str, str]]] = {
    "foundations": (BUILDS_ON, "source"),
    "built_by": (BUILDS_ON, "target"),
    "parts": (PART_OF, "target"),
    "wholes": (PART_OF, "source"),
    "contrasts": (CONTRASTS_WITH, "either"),
    "related": (RELATED, "either"),
    "prereq": (PREREQUISITE, "target"),
}


def _at(tokens: tuple[str, ...], cues: Cues, masked: frozenset[int] = frozenset()) -> int:
    """Position of the earliest occurrence of any cue in ``tokens``, or -1. Occurrences that
    overlap a ``masked`` position (a seed's own name, e.g. "chain" in "chain-of-thought
    prompting") do not count."""
    best = -1
    for phrase in cues:
        n = len(phrase)
        for i in range(len(tokens) - n + 1):
            if (
                tokens[i] == phrase[0]
                and tokens[i : i + n] == phrase
                and not any(j in masked for j in range(i, i + n))
            ):
                if best < 0 or i < best:
                    best = i
                break
    return best


@dataclass(frozen=True)
class Intent:
    """What the question asks: a kind, the seeds it is about, and how two answers combine.

    ``kind``: path | before_uses | prereq | before | after | foundations | built_by | parts | wholes |
    contrasts | related | neighbours | about. ``combine``: "" (one subject), "both"
    (intersection with ``other``'s answer) or "except" (minus ``other``'s answer and ``other``).
    """

    kind: str
    subject: str | None = None
    other: str | None = None
    transitive: bool = False
    combine: str = ""
    hops: int = 1
    exact: bool = False


def _positions(question: str, evidence: EvidenceGraph[Any, Any]) -> tuple[dict[str, int], frozenset[int]]:
    """Where each seed first appears in the question (token index), and every token position
    covered by a seed's name (cue words there are part of the name, not of the question)."""
    seeds = [evidence.concepts[s] for s in evidence.seeds if s in evidence.concepts]
    index = NameIndex.build(seeds)
    pos: dict[str, int] = {}
    masked: set[int] = set()
    for m in index.matches(question):
        pos[m.concept_id] = min(pos.get(m.concept_id, m.start), m.start)
        masked.update(range(m.start, m.end))
    for i, s in enumerate(evidence.seeds):
        pos.setdefault(s, 10_000 + i)
    return pos, frozenset(masked)


def _hops(tokens: tuple[str, ...]) -> int:
    """N in "within N hops" / "exactly N hops" (digits or a number word), default 1."""
    for i, tok in enumerate(tokens):
        if tok == "hop" and i > 0:
            prev = tokens[i - 1]
            if prev.isdigit():
                return max(1, int(prev))
            if prev in _NUMBERS:
                return _NUMBERS[prev]
    return 1


def parse_intent(question: str, seeds_by_position: Mapping[str, int], masked: Collection[int] = ()) -> Intent:
    """The intent of ``question`` given where each seed appears in it (pure; module docstring).

    ``masked``: token positions covered by seed names, where cue words do not count."""
    toks = normalise(question)
    hidden = frozenset(masked)

    def at(cues: Cues) -> int:
        return _at(toks, cues, hidden)

    seeds = sorted(seeds_by_position, key=lambda s: (seeds_by_position[s], s))
    if not seeds:
        return Intent("about")
    second = seeds[1] if len(seeds) > 1 else None
    before_at, prereq_at = at(_BEFORE), at(_PREREQ)
    verb_at, noun_at = at(_BUILD_VERB), at(_BUILD_NOUN)
    # "before X" / "prerequisites of X": the subject is the first seed after the cue, if any
    # ("I'm new to ML. What do I need before cross-entropy loss?" asks about cross-entropy).
    cue_at = prereq_at if prereq_at >= 0 else before_at
    after_cue = [s for s in seeds if seeds_by_position[s] > cue_at] if cue_at >= 0 else []
    first = after_cue[0] if after_cue else seeds[0]
    combine = ""
    if second is not None:
        if at(_BOTH) >= 0:
            combine = "both"
        elif at(_EXCEPT) >= 0:
            combine = "except"
    second = next((s for s in seeds if s != first), None)
    other = second if combine else None
    transitive = at(_TRANSITIVE) >= 0

    if second is not None and at(_PATH) >= 0:
        return Intent("path", seeds[0], seeds[1])  # "from A to B", "A leads to B": text order
    if at(_UNLOCK) >= 0:
        direct = at(_DIRECT) >= 0 and not transitive
        return Intent("after", first, other, transitive=not direct, combine=combine)
    if second is not None and before_at >= 0 and max(verb_at, noun_at) >= 0 and not combine:
        # "before X ..., which of those does Y build on": X is the first seed after the cue.
        return Intent("before_uses", first, second, transitive=True)
    if prereq_at >= 0:
        if transitive:
            return Intent("before", first, other, transitive=True, combine=combine)
        return Intent("prereq", first, other, combine=combine)
    if before_at >= 0:
        direct = at(_DIRECT) >= 0 and not transitive
        return Intent("before", first, other, transitive=not direct, combine=combine)
    if at(_CONTRAST) >= 0:
        return Intent("contrasts", first, second, combine=combine)
    part_at = at(_PART_POSITIONAL)
    if part_at >= 0:
        kind = "wholes" if seeds_by_position[first] < part_at else "parts"
        return Intent(kind, first, other, combine=combine)
    if at(_PART_WHOLE_IS_X) >= 0:
        return Intent("parts", first, other, combine=combine)
    if verb_at >= 0:
        after = seeds_by_position[first] > verb_at or bool(_PRONOUNS & set(toks[verb_at + 1 : verb_at + 5]))
        return Intent("built_by" if after else "foundations", first, other, combine=combine)
    if noun_at >= 0:
        return Intent("foundations", first, other, combine=combine)
    if at(_RELATED) >= 0:
        return Intent("related", first, other, combine=combine)
    if at(_NEIGHBOUR) >= 0:
        if second is not None and not combine:
            combine, other = "both", second  # "which concept links A and B": common neighbours
        return Intent("neighbours", first, other, combine=combine, hops=_hops(toks), exact=at(_EXACT) >= 0)
    return Intent("about", first)


@dataclass
class _Walk:
    """A breadth-first walk: reached concept → (previous concept, edge ref); and distances."""

    parent: dict[str, tuple[str, str] | None]
    dist: dict[str, int] = field(default_factory=dict)

    def path_edges(self, node: str) -> list[str]:
        refs: list[str] = []
        while (step := self.parent.get(node)) is not None:
            node, ref = step
            refs.append(ref)
        return refs


def _adjacency(evidence: EvidenceGraph[Any, Any], kind: str) -> dict[str, list[tuple[str, str]]]:
    """``before``: x → concepts needed immediately before x; ``after``: x → concepts that need x
    immediately; ``any``: every edge, undirected."""
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
    dist = {start: 0}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if depth is not None and dist[node] >= depth:
            continue
        for nxt, ref in adj.get(node, []):
            if nxt not in parent:
                parent[nxt] = (node, ref)
                dist[nxt] = dist[node] + 1
                queue.append(nxt)
    return _Walk(parent, dist)


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


class OfflineSynthesizer:
    """Deterministic answers from the evidence sub-graph (see the module docstring)."""

    def __init__(self) -> None:
        self._info = SynthesizerInfo("offline", "graph-rules-v2", RULES_VERSION, offline=True)

    @property
    def info(self) -> SynthesizerInfo:
        return self._info

    def synthesize(self, request: SynthesisRequest) -> Draft:
        ev = request.evidence
        positions, masked = _positions(request.question, ev)
        intent = parse_intent(request.question, positions, masked)
        if intent.subject is None or intent.subject not in ev.concepts:
            return _draft(
                "The evidence names no concept from the question.",
                0.0,
                (),
                (),
                "a concept named in the question",
                Focus(RELATIONS, (), request.question),
            )
        if intent.kind == "path":
            return self._path(request, intent)
        if intent.kind == "before_uses":
            return self._before_uses(request, intent)
        return self._set_answer(request, intent)

    # -- answer sets ------------------------------------------------------------------------

    def _solve(self, request: SynthesisRequest, intent: Intent, x: str) -> _Result:
        """The answer set of ``intent`` for subject ``x`` (one subject, no combination)."""
        ev, unexpanded = request.evidence, request.unexpanded
        if intent.kind in ("before", "after"):
            walk = _bfs(x, _adjacency(ev, intent.kind), depth=None if intent.transitive else 1)
            members = frozenset(walk.parent) - {x}
            scope = {x, *members} if intent.transitive else {x}
            edges = {m: tuple(walk.path_edges(m)) for m in members}
            return _Result(members, edges, frozenset(scope & unexpanded), _LEARNING)
        if intent.kind == "neighbours":
            walk = _bfs(x, _adjacency(ev, "any"), depth=intent.hops)
            members = frozenset(
                c
                for c, d in walk.dist.items()
                if c != x and (d == intent.hops if intent.exact else 1 <= d <= intent.hops)
            )
            inner = {c for c, d in walk.dist.items() if d < intent.hops}
            edges = {m: tuple(walk.path_edges(m)) for m in members}
            return _Result(members, edges, frozenset(inner & unexpanded), ())
        rule = _ONE_HOP.get(intent.kind)
        hits: dict[str, list[str]] = {}
        for ref, e in ev.edges.items():
            if x not in (e.source_id, e.target_id):
                continue
            other = e.target_id if e.source_id == x else e.source_id
            if rule is not None:
                relation, end = rule
                if e.relation != relation:
                    continue
                if (end == "source" and e.source_id != x) or (end == "target" and e.target_id != x):
                    continue
            hits.setdefault(other, []).append(ref)
        relations = (rule[0],) if rule is not None else RELATIONS
        return _Result(
            frozenset(hits),
            {m: tuple(refs) for m, refs in hits.items()},
            frozenset({x} & unexpanded),
            relations,
        )

    def _set_answer(self, request: SynthesisRequest, intent: Intent) -> Draft:
        ev, x, y = request.evidence, intent.subject, intent.other
        assert x is not None
        a = self._solve(request, intent, x)
        members, open_, edges = set(a.members), set(a.open), dict(a.edges)
        if intent.combine and y is not None and y in ev.concepts:
            b = self._solve(request, intent, y)
            open_ |= b.open
            if intent.combine == "both":
                members &= b.members
                edges = {m: a.edges[m] + b.edges[m] for m in members}
            else:
                members -= b.members | {y}
        if intent.kind == "contrasts" and intent.other and not intent.combine:
            members &= {intent.other}  # "A versus B": only the contrast between the two
        ordered = sorted(members)
        refs = _by_ref(r for m in ordered for r in edges.get(m, ()))
        subjects = [x, y] if intent.combine and y is not None else [x]
        text = self._phrase(intent, ev, subjects)
        if open_:
            return _partial(
                f"{text}: {_names(ev, ordered)}.", ordered, refs, sorted(open_), ev, a.relations or RELATIONS
            )
        if not ordered:
            about = intent.kind == "about"
            return _draft(
                f"{text}: none, according to the graph.",
                NOTHING if about else COMPLETE,
                tuple(subjects),
                (),
                "nothing connected" if about else "",
                Focus(),
            )
        return _draft(f"{text}: {_names(ev, ordered)}.", COMPLETE, tuple(ordered), tuple(refs), "", Focus())

    @staticmethod
    def _phrase(intent: Intent, ev: EvidenceGraph[Any, Any], subjects: list[str]) -> str:
        names = " and ".join(ev.name(s) for s in subjects)
        if intent.combine == "except":
            names = f"{ev.name(subjects[0])} (and not {ev.name(subjects[1])})"
        both = " both" if intent.combine == "both" else ""
        if intent.kind == "neighbours":
            reach = f"exactly {intent.hops} hops from" if intent.exact else f"within {intent.hops} hops of"
            if intent.hops == 1 and not intent.exact:
                reach = "directly connected to"
            return f"Concepts{both} {reach} {names}"
        if intent.kind == "before":
            how = "everything, transitively" if intent.transitive else "directly"
            return f"Before {names}{both} a learner must master ({how})"
        if intent.kind == "after":
            how = "everything, transitively" if intent.transitive else "directly"
            return f"Mastering {names}{both} unlocks ({how})"
        return {
            "prereq": f"The direct prerequisites{both} of {names}",
            "foundations": f"What {names}{both} build on",
            "built_by": f"What builds on {names}{both}",
            "parts": f"The parts{both} of {names}",
            "wholes": f"What {names}{both} are part of",
            "contrasts": f"What {names}{both} contrast with",
            "related": f"What {names}{both} relate to",
            "about": f"{names}: {ev.concepts[subjects[0]].summary} It is connected to",
        }[intent.kind]

    # -- two-seed intents -------------------------------------------------------------------

    def _before_uses(self, request: SynthesisRequest, intent: Intent) -> Draft:
        ev, x, y = request.evidence, intent.subject, intent.other
        assert x is not None and y is not None
        walk = _bfs(x, _adjacency(ev, "before"))
        members = sorted(c for c in walk.parent if c != x)
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
        edges = _by_ref([r for c in found for r in walk.path_edges(c)] + [uses[c] for c in found])
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

    def _path(self, request: SynthesisRequest, intent: Intent) -> Draft:
        """How A leads to B: walk back from B in learning order until A is reached."""
        ev, a, b = request.evidence, intent.subject, intent.other
        assert a is not None and b is not None
        walk = _bfs(b, _adjacency(ev, "before"))
        if a in walk.parent:
            refs = walk.path_edges(a)  # from A forward to B
            nodes = [a]
            for ref in refs:
                e = ev.edges[ref]
                nodes.append(e.target_id if e.relation == PREREQUISITE else e.source_id)
            steps = [
                f"{ev.name(e.source_id)} {e.relation.replace('_', ' ')} {ev.name(e.target_id)}"
                for e in (ev.edges[r] for r in refs)
            ]
            text = f"{ev.name(a)} leads to {ev.name(b)}: " + "; ".join(steps) + "."
            # Shortest only if no concept closer to B than A could still have an unseen shortcut.
            closer = sorted(c for c, d in walk.dist.items() if d < walk.dist[a] and c in request.unexpanded)
            if not closer:
                return _draft(text, COMPLETE, tuple(nodes), tuple(refs), "", Focus())
            return _partial(text, nodes, refs, closer, ev, _LEARNING)
        open_ = sorted(c for c in walk.parent if c in request.unexpanded)
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
