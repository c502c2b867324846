"""One round of the planning loop, as named steps over one state.

:class:`LoopState` holds what the loop knows of a question between rounds: the evidence, the
frontier and focus, what was expanded (one hop or walked), what waits (pending, reserve), the
best draft so far, the traces, and whether the answer may be reused. A round is these steps,
each a small function over the state (``planning.loop.Planner`` runs them):

1. :func:`expand`: the one data-plane call: a **walk** of the reading's learning relations from
   the frontier (learning-order questions, ``walk_order``) or **one hop** from it (every other
   question, and a walked question's turn to relations its walk does not follow);
2. :func:`read_lessons`: a lesson question's lesson links of what it is about;
3. :func:`request` and :func:`synthesize`: the one synthesis call (a model that stays down
   gives an empty draft and the reason, not an error);
4. :func:`judge`: the verifier's verdict, capped below the threshold while a walk cut by its row
   budget leaves the closure partial;
5. :func:`decide`: answer, continue or abstain; the round's trace and the best draft so far;
6. :func:`refocus`: what was missing becomes the next focus, and the next frontier is chosen
   for it (the concepts a draft needs that no round read, or the best pending ones).

**Faults.** A draft whose claim contradicts the evidence (``Verdict.fault``: a "no" the evidence
disproves, a set with members left out, an edge that does not say what the claim says) is not a
reason to read more of the graph: the next round looks only where the evidence itself is
incomplete (the evidence's own finding's focus), or, when the evidence settles the question,
reads nothing and asks again, telling the synthesizer why its claim was refused
(``SynthesisRequest.rejected``). The :data:`MAX_FAULTS`-th fault ends the question in an
abstention that says so, so a model that lies costs at most that many calls.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Final

from control_plane.errors import LLMUnavailable, ModelBudgetSpent
from control_plane.evidence import EvidenceGraph, LessonLink, edge_ref
from control_plane.planning.answer import RoundTrace
from control_plane.planning.expansion import Expander
from control_plane.planning.ranking import Ranking, follows
from control_plane.planning.verify import Verdict, verify
from control_plane.planning.walk_order import WalkOrder
from control_plane.synthesizers.base import Draft, Focus, SynthesisRequest, Synthesizer, Usage
from control_plane.understanding.interpretation import Reading
from control_plane.understanding.reading import READS_BOTH_WAYS
from control_plane.understanding.relating import mode_of
from data_plane.reads import GraphReader
from data_plane.records import Concept, ConceptLike, Edge, EdgeLike, Neighbour
from data_plane.relations import BUILDS_ON, PREREQUISITE
from data_plane.temporal import AsOf
from data_plane.walks import Walk

__all__ = [
    "FAULTY",
    "LESSON_INTENTS",
    "MAX_FAULTS",
    "MODEL_UNAVAILABLE",
    "NOTHING_MORE",
    "NO_SEED",
    "PARTIAL",
    "PARTIAL_CLOSURE",
    "TOO_LARGE",
    "Best",
    "Expansion",
    "LoopState",
    "Reserve",
    "decide",
    "expand",
    "ground",
    "judge",
    "read_lessons",
    "refocus",
    "request",
    "synthesize",
    "trace",
]

NO_SEED = "no known concept is named"
# How an abstention because the model stayed unavailable begins (``kg ask`` exits 3 on it).
MODEL_UNAVAILABLE = "the model is unavailable"
NOTHING_MORE = "the graph has nothing more to offer"
# A question ends in an abstention at its second draft that contradicts the evidence.
MAX_FAULTS = 2
FAULTY = "the synthesizer's claims contradicted the evidence"
PARTIAL = "the closure is partial: a walk stopped at its row budget"
# How the abstention on a closure larger than a question's walks gather begins.
TOO_LARGE = "the closure is too large to gather"
# The confidence an answer over a partial closure may keep at most.
PARTIAL_CLOSURE = 0.7
LESSON_INTENTS = ("lessons_covering", "lessons_before")


class Reserve:
    """Neighbours seen but not chosen (no place left), by concept: they compete again in later
    rounds, and their edges join the evidence if their concept does.

    It also keeps, as it changes, which expanded concepts still have reserved neighbours along
    the question's ``relations`` (and ``direction``, see ``ranking.follows``): those concepts
    are not fully in the evidence, and the synthesizer is told so."""

    __slots__ = ("_along", "_by_concept", "_direction", "_relations")

    def __init__(self, relations: tuple[str, ...], direction: str) -> None:
        self._relations, self._direction = relations, direction
        self._by_concept: dict[str, list[Neighbour]] = {}
        self._along: dict[str, int] = {}  # expanded concept -> its reserved neighbours that follow

    def add(self, n: Neighbour) -> None:
        self._by_concept.setdefault(n.concept.concept_id, []).append(n)
        if follows(n, self._relations, self._direction):
            self._along[n.from_id] = self._along.get(n.from_id, 0) + 1

    def pop(self, concept_id: str) -> list[Neighbour]:
        """Take out the neighbours of ``concept_id`` (none if it has none)."""
        taken = self._by_concept.pop(concept_id, [])
        along = self._along
        for n in taken:
            if follows(n, self._relations, self._direction):
                if along[n.from_id] == 1:
                    del along[n.from_id]
                else:
                    along[n.from_id] -= 1
        return taken

    def neighbours(self) -> list[Neighbour]:
        return [n for ns in self._by_concept.values() for n in ns]

    def incomplete(self) -> set[str]:
        """Expanded concepts with reserved neighbours along the question's relations."""
        return set(self._along)


@dataclass(frozen=True)
class Best:
    """The best verdict so far: its confidence, the draft it judged, its reason, and what the
    evidence itself answered then (what an abstention shows as its partial answer)."""

    confidence: float = 0.0
    draft: Draft | None = None
    reason: str = NO_SEED
    verdict: Verdict | None = None

    @property
    def truth(self) -> Draft | None:
        return self.verdict.truth if self.verdict is not None else None

    def missing(self) -> str:
        """What the best draft still lacked, in its words or the verdict's."""
        return self.draft.missing if self.draft is not None and self.draft.missing else self.reason


@dataclass(frozen=True)
class Expansion:
    """What one :func:`expand` added: concepts, edge ids, and how many concepts it expanded."""

    added: list[str]
    edges_added: list[str]
    expanded: int


@dataclass
class LoopState:
    """What the loop knows of one question (module docstring); the steps change it in place."""

    question: str
    reading: Reading
    point: AsOf
    order: WalkOrder | None  # None: every round expands one hop
    evidence: EvidenceGraph[ConceptLike, EdgeLike]  # thin rows; full records only for the answer
    focus: Focus
    direction: str  # "after" when the question looks forward, else ""
    frontier: list[str]
    ranking: Ranking
    reserve: Reserve
    visited: set[str] = field(default_factory=set)  # expanded one hop, every relation
    walked: set[str] = field(default_factory=set)  # expanded by a walk, along the walked relations
    budget_open: set[str] = field(default_factory=set)  # boundary of walks cut by their row budget
    walks: int = 0
    first_walk: tuple[str, ...] = ()  # where the question's first walk started
    # Gathered but not yet expanded concepts, with the neighbour record that reached them.
    pending: dict[str, Neighbour] = field(default_factory=dict)
    # Concepts whose neighbourhoods were read (for answer reuse); False once the answer cannot be
    # reused (a walk cut by its budget, a model that stayed unavailable).
    read_from: set[str] = field(default_factory=set)
    reusable: bool = True
    lessons_read: set[str] = field(default_factory=set)
    # The graph holds requirement groups: each round reads the groups of what it gathered
    grouped: bool = False
    groups_read: set[str] = field(default_factory=set)
    # Relations a walked question turns to that its walk does not follow ("how are A and B
    # related", when no learning link joins them): that round expands one hop over them.
    hop_over: tuple[str, ...] = ()
    round_no: int = 0
    faults: int = 0  # drafts whose claims contradicted the evidence
    retry: bool = False  # the next round reads nothing and asks again (after a fault)
    rejected: str = ""  # why the last draft's claim was refused, when it was a fault
    best: Best = Best()
    accepted: Draft | None = None
    reason: str | None = None  # why the loop stops without an answer
    traces: list[RoundTrace] = field(default_factory=list)

    @classmethod
    def seeded(
        cls,
        question: str,
        reading: Reading,
        seeds: tuple[Concept, ...],
        point: AsOf,
        order: WalkOrder | None,
        *,
        grouped: bool = False,
    ) -> LoopState:
        """The state before round 1: the seeds are the evidence and the frontier; the relations
        the question needs, fixed per question, come from its reading."""
        evidence: EvidenceGraph[ConceptLike, EdgeLike] = EvidenceGraph(
            seeds=tuple(c.concept_id for c in seeds)
        )
        for c in seeds:
            evidence.add_concept(c)
        asked = reading.relations if reading.intent not in ("neighbours", "about") else ()
        direction = "after" if reading.direction == "after" else ""
        state = cls(
            question,
            reading,
            point,
            order,
            evidence,
            Focus(relations=asked, direction=direction),
            direction,
            list(evidence.seeds),
            Ranking(question),
            # A reserved neighbour either way leaves a both-ways neighbourhood out of the evidence.
            Reserve(asked, "either" if reading.intent in READS_BOTH_WAYS else direction),
        )
        state.reason = None if seeds else NO_SEED
        state.grouped = grouped
        return state

    @property
    def unexplored(self) -> set[str]:
        """Gathered concepts no round expanded."""
        return set(self.evidence.concepts) - self.visited - self.walked

    def walk_budget(self) -> int:
        """The rows the next walk may read: its own budget, within what the question's walks
        may still gather (``WalkOrder.total``; at least one row)."""
        assert self.order is not None
        return max(1, min(self.order.budget, self.order.total - len(self.walked)))

    @property
    def closure_spent(self) -> bool:
        """A walk was cut by its budget and the question's walks may gather no more: the closure
        cannot be completed (it is counted instead, ``planning.loop``)."""
        order = self.order
        return bool(self.budget_open) and order is not None and len(self.walked) >= order.total


# -- expand -----------------------------------------------------------------------------------


def expand(state: LoopState, store: Expander, cap: int) -> Expansion:
    """The round's one data-plane call: a walk when the question asks for a learning order (and
    this round does not turn to other relations), else one hop."""
    if state.order is not None and not state.hop_over:
        return _walk(state, store, state.order)
    return _hop(state, store, cap)


def _walk(state: LoopState, store: Expander, order: WalkOrder) -> Expansion:
    """One recursive walk from the frontier gathers the closure as evidence; the frontier itself
    stays capped, and the walk's unexpanded boundary becomes pending."""
    frontier = state.frontier
    walk = store.walk(
        frontier,
        as_of=state.point,
        direction=order.direction,
        relations=order.relations,
        max_depth=order.max_depth,
        budget=state.walk_budget(),
        exclude=state.walked,
    )
    state.first_walk = state.first_walk or tuple(frontier)
    added, edges_added = _gather(state, walk)
    state.walked.update(frontier, walk.expanded)
    state.read_from.update(frontier, walk.expanded, (r.from_id for r in walk.rows))
    state.reusable = state.reusable and not walk.partial
    # Nothing walked stays pending (a later walk may report an excluded, already walked concept
    # on its boundary); the check runs over pending, not over walked.
    for cid in state.pending.keys() & state.walked:
        del state.pending[cid]
    state.walks += 1
    if walk.partial:
        state.budget_open |= walk.unexpanded
    state.budget_open -= state.walked
    return Expansion(added, edges_added, len(frontier))


def _gather(state: LoopState, walk: Walk) -> tuple[list[str], list[str]]:
    """Add everything a walk gathered to the evidence (concepts are not capped: the walk's bounds
    are its depth and row budget)."""
    evidence, added, edges_added = state.evidence, [], []
    reached = list(walk.neighbours)
    for n in walk.neighbours:
        cid = n.concept.concept_id
        if evidence.add_concept(n.concept):
            added.append(cid)
            reached.extend(state.reserve.pop(cid))
        if cid in walk.unexpanded:
            state.pending.setdefault(cid, n)
    for n in reached:
        if evidence.add_edge(n.edge):
            edges_added.append(edge_ref(n.edge))
    for cid, row in walk.group_concepts.items():  # reached through a requirement group's option
        if evidence.add_concept(row):
            added.append(cid)
    return added, edges_added


def _hop(state: LoopState, store: Expander, cap: int) -> Expansion:
    """Active neighbours of the frontier in both directions (never a visited concept): the best
    new concepts (at most ``cap``, from these and the reserve) join the evidence with every edge
    that reaches a gathered concept; unchosen neighbours go to the reserve."""
    frontier, evidence, reserve = state.frontier, state.evidence, state.reserve
    found = store.neighbours(
        frontier, as_of=state.point, exclude=state.visited, relations=state.hop_over or None
    )
    state.visited.update(frontier)
    state.read_from.update(frontier)
    for cid in frontier:
        state.pending.pop(cid, None)
    for n in found:
        if n.concept.concept_id not in evidence.concepts:
            reserve.add(n)
    chosen = state.ranking.rank(reserve.neighbours(), state.focus, limit=cap)
    added = []
    reached: list[Neighbour] = [n for n in found if n.concept.concept_id in evidence.concepts]
    for n in chosen:
        cid = n.concept.concept_id
        evidence.add_concept(n.concept)
        state.pending[cid] = n
        added.append(cid)
        reached.extend(reserve.pop(cid))
    edges_added = [edge_ref(n.edge) for n in reached if evidence.add_edge(n.edge)]
    return Expansion(added, edges_added, len(frontier))


# -- lessons, synthesis, verdict ----------------------------------------------------------------


def read_lessons(state: LoopState, reader: GraphReader) -> None:
    """Lesson questions read the active lesson links of the concepts they are about: the subject
    ("which lessons cover X"), or everything gathered ("lessons before X"); each concept once."""
    reading = state.reading
    if reading.intent not in LESSON_INTENTS:
        return
    wanted = [reading.subject] if reading.intent == "lessons_covering" else list(state.evidence.concepts)
    ids = [c for c in wanted if c is not None and c not in state.lessons_read]
    if not ids:
        return
    state.lessons_read.update(ids)
    for version, title in reader.lesson_links(ids, as_of=state.point):
        lesson_id, concept_id = version.key
        state.evidence.add_lesson_link(LessonLink(lesson_id, title, concept_id, version))


def read_requirements(state: LoopState, reader: GraphReader) -> None:
    """On a graph with requirement groups, the groups of every concept gathered (as their target)
    and those naming it (as an option), whole, each concept once; the concepts they name join the
    evidence unexpanded (names first: what a later round may expand). An answer that read groups is
    not indexed for reuse (the reuse index watches the graph's other tables)."""
    reading = state.reading
    if not state.grouped or not set(reading.relations) & {PREREQUISITE, BUILDS_ON}:
        return  # a question about other relations meets no requirement
    ids = [c for c in state.evidence.concepts if c not in state.groups_read]
    if not ids:
        return
    state.groups_read.update(ids)
    state.reusable = False
    found = reader.requirements(ids, as_of=state.point)
    # what a concept is one way to meet matters to what comes after it, and to whether it lies
    # on some way to another (a check, a why, which first)
    forward = (
        mode_of(reading) == "after" or reading.form in _FORWARD_FORMS or reading.intent in _FORWARD_INTENTS
    )
    naming = reader.requirements_naming(ids, as_of=state.point) if forward else {}
    groups = [g for batch in (found, naming) for gs in batch.values() for g in gs]
    for g in groups:
        state.evidence.add_group(g)
    named = {c for g in groups for c in (g.target_id, *(m.concept_id for m in g.members))}
    missing = sorted(named - set(state.evidence.concepts))
    if missing:
        for concept in reader.concepts(missing, as_of=state.point).values():
            state.evidence.add_concept(concept)


_FORWARD_FORMS: Final = frozenset({"yes_no", "why"})
_FORWARD_INTENTS: Final = frozenset({"order", "relate", "next", "opens"})


def ground(
    evidence: EvidenceGraph[ConceptLike, EdgeLike], reader: GraphReader
) -> EvidenceGraph[Concept, Edge]:
    """The evidence with full records (grounding, stamps): one statement for whatever the loop
    gathered as thin rows."""
    edge_versions, concept_versions = evidence.thin_versions()
    edges, concepts = (
        reader.records(edge_versions=edge_versions, concept_versions=concept_versions)
        if edge_versions or concept_versions
        else ({}, {})
    )
    return evidence.grounded(edges, concepts)


def request(state: LoopState, reader: GraphReader, max_rounds: int) -> SynthesisRequest:
    """What the round's synthesis call is given. An expanded concept whose relevant neighbours
    did not all win a place is not fully in the evidence: it is named ``unexpanded`` with what no
    round expanded, so the synthesizer does not treat it as explored."""
    reading = state.reading
    return SynthesisRequest(
        question=state.question,
        focus=state.focus,
        # "why do I need X for Y" tells the reasons on the chain's edges, "the difference between
        # A and B" the contrast's: full records
        evidence=ground(state.evidence, reader) if _quotes_reasons(reading) else state.evidence,
        round_no=state.round_no,
        max_rounds=max_rounds,
        as_of=state.point,
        unexpanded=frozenset(state.unexplored | state.reserve.incomplete()),
        reading=reading,
        visited=frozenset(state.visited),
        rejected=state.rejected,
    )


def _quotes_reasons(reading: Reading) -> bool:
    return reading.form == "why" or (reading.intent == "contrasts" and reading.other is not None)


def synthesize(
    state: LoopState, synthesizer: Synthesizer, req: SynthesisRequest
) -> tuple[Draft, LLMUnavailable | None]:
    """The round's one synthesis call. A model that stays down after its own bounded retries
    gives an empty draft and the failure (the loop abstains with it rather than fail the
    question; a rejected request, ``LLMRejected``, still raises); so does a spent model budget,
    unless this question made no model call yet: then it is refused like the rest of the request
    (HTTP 429), with nothing to record."""
    try:
        return synthesizer.synthesize(req), None
    except LLMUnavailable as exc:
        if isinstance(exc, ModelBudgetSpent) and not any(t.llm_calls for t in state.traces):
            raise
        state.reusable = False
        draft = Draft("", 0.0, (), (), "", state.focus, Usage(calls=max(1, exc.attempts)), error=str(exc))
        return draft, exc


def judge(state: LoopState, draft: Draft, req: SynthesisRequest, threshold: float) -> Verdict:
    """The verifier's verdict on ``draft``; a walk stopped at its row budget leaves the closure
    partial whatever the draft says."""
    verdict = verify(draft, req, reading=state.reading, threshold=threshold)
    if verdict.accepted and state.budget_open:
        return Verdict(
            False,
            min(verdict.confidence, PARTIAL_CLOSURE),
            f"{PARTIAL} ({len(state.budget_open)} concepts on its boundary)",
            truth_of=verdict.truth_of,
        )
    return verdict


# -- decide, trace, refocus ---------------------------------------------------------------------


def decide(
    state: LoopState,
    draft: Draft,
    verdict: Verdict,
    unavailable: LLMUnavailable | None,
    max_rounds: int,
    expansion: Expansion,
    started: float,
) -> str:
    """Answer (the verdict accepts), abstain (the model is down, its claims contradicted the
    evidence :data:`MAX_FAULTS` times, or the last round) or continue; the best draft so far and
    the round's trace follow."""
    state.faults += verdict.fault
    state.rejected = verdict.reason if verdict.fault else ""
    if verdict.accepted:
        state.accepted = verdict.draft or draft
        decision = "answer"
    elif (
        unavailable is not None
        or state.round_no >= max_rounds
        or state.faults >= MAX_FAULTS
        or state.closure_spent
    ):
        decision = "abstain"
    else:
        decision = "continue"
    if state.faults >= MAX_FAULTS and not verdict.accepted:
        state.reason = f"{FAULTY} {state.faults} times (last: {verdict.reason})"
    if verdict.confidence >= state.best.confidence or state.best.draft is None:
        state.best = Best(verdict.confidence, draft, verdict.reason, verdict)
    state.traces.append(trace(state, expansion, draft, started, verdict.confidence, verdict.reason, decision))
    return decision


def trace(
    state: LoopState,
    expansion: Expansion | None,
    draft: Draft | None,
    started: float,
    confidence: float,
    verdict: str,
    decision: str,
) -> RoundTrace:
    """The round's trace: what it added, its model call's usage, its verdict and decision."""
    usage = draft.usage if draft is not None else None
    return RoundTrace(
        round=state.round_no,
        focus=state.focus,
        frontier_added=tuple(expansion.added) if expansion else (),
        edges_added=tuple(expansion.edges_added) if expansion else (),
        llm_calls=usage.calls if usage else 0,
        prompt_tokens=usage.prompt_tokens if usage else 0,
        completion_tokens=usage.completion_tokens if usage else 0,
        latency_ms=(time.perf_counter() - started) * 1000.0,
        model_confidence=draft.confidence if draft is not None else None,
        confidence=confidence,
        verdict=verdict,
        decision=decision,
        reasoning_tokens=usage.reasoning_tokens if usage else 0,
        cache_hit_tokens=usage.cache_hit_tokens if usage else 0,
        cache_miss_tokens=usage.cache_miss_tokens if usage else 0,
        cost_usd=usage.cost_usd if usage else 0.0,
    )


def refocus(state: LoopState, draft: Draft, verdict: Verdict, reader: GraphReader, cap: int) -> None:
    """The next round's focus (what the draft missed) and frontier: the concepts of a focus on
    relations the walk does not follow (one hop over them), else concepts the draft needs that no
    round read yet (a known concept of a "what is left" question beyond the seeds: the walk
    starts from them), else the best pending concepts. After a fault the focus is what the
    evidence's own answer still lacks, or, when it lacks nothing, the next round reads nothing
    and asks again (module docstring)."""
    focus = draft.next_focus
    if verdict.fault and verdict.truth is not None:
        if verdict.truth.claim is not None and verdict.truth.claim.complete:
            state.retry = True
            return
        focus = verdict.truth.next_focus
    if state.direction and not focus.direction:
        focus = replace(focus, direction=state.direction)
    order, budget_open = state.order, state.budget_open
    if budget_open and not set(focus.concept_ids) & budget_open and order is not None:
        relations = tuple(dict.fromkeys((*focus.relations, *order.relations)))
        focus = Focus(relations, tuple(sorted(budget_open)), f"continue: {PARTIAL}", focus.direction)
    state.focus, state.hop_over = focus, ()
    unread = [c for c in focus.concept_ids if c not in state.evidence.concepts and c not in state.visited]
    # gathered but reached by no walk or hop (named by a requirement group): nothing is pending
    # for them, so a walk starts from them
    stray = [c for c in focus.concept_ids if c in state.unexplored and c not in state.pending]
    if order is not None and focus.relations and not set(focus.relations) <= set(order.relations):
        state.hop_over = focus.relations
        state.frontier = [c for c in focus.concept_ids if c not in state.visited][:cap]
    elif order is not None and (unread or stray):
        state.frontier = [*unread, *stray][:cap]
        for c in reader.concepts([c for c in state.frontier if c in unread], as_of=state.point).values():
            state.evidence.add_concept(c)
    else:
        state.frontier = [
            n.concept.concept_id for n in state.ranking.rank(state.pending.values(), focus, limit=cap)
        ]
