"""The verifier checks claims, not mentions: a draft equal to what the evidence gives is accepted,
and any single change to what it claims (a member dropped or added, a yes/no flipped, a count off
by one, the other concept first, a path with a gap, a step reversed, a lesson of another concept,
"complete" over an incomplete walk) is refused as a fault, for every question form."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from control_plane.evidence import EvidenceGraph
from control_plane.planning.verify import verify
from control_plane.semantics.claims import CONTRACTS, contract_of
from control_plane.semantics.findings import Ask
from control_plane.semantics.meaning import answer
from control_plane.synthesizers.base import Claim, Draft, Step, SynthesisRequest
from control_plane.synthesizers.offline import OfflineSynthesizer, read_request
from control_plane.testing import draft, make_concept, make_edge, make_evidence, make_request
from control_plane.understanding.interpretation import Reading
from data_plane import Concept, Edge

# Questions of every form over two concepts {x} and {y} (read by the grammar from the seeds).
QUESTIONS = [
    "What do I need to learn before {x}?",
    "What comes directly before {x}?",
    "What does {x} unlock, directly or indirectly?",
    "What are the prerequisites of {x}?",
    "What does {x} build on?",
    "What builds on {x}?",
    "What are the parts of {x}?",
    "What is related to {x}?",
    "Tell me about {x}.",
    "How does {y} lead to {x}?",
    "Make me a study plan for {x}, I already know {y}",
    "What must a learner master before {x}, and which of those concepts does {y} build on?",
    "What do {x} and {y} both require first?",
    "Is {y} a prerequisite for {x}?",
    "Do I need {y} before I start {x}?",
    "How many concepts do I need before {x}?",
    "Why do I need {y} to learn {x}?",
    "Which should I learn first, {x} or {y}?",
    "How are {x} and {y} related?",
    "I know {y}, what can I learn next?",
    "Can I take {x} if I've done {y}?",
    "Which lessons cover {x}?",
    "Which lessons should I take before {x}?",
]


Graph = tuple[list[str], list[tuple[str, str, str]], list[tuple[str, str]]]


@st.composite
def graphs(draw: st.DrawFn) -> Graph:
    """Concepts, edges (a lower topic number comes first in learning order) and lesson links."""
    n = draw(st.integers(3, 12))
    ids = [f"topic{i}" for i in range(n)]
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
    rels = draw(
        st.lists(
            st.sampled_from(["prerequisite", "prerequisite", "builds_on", "related", "part_of"]),
            min_size=len(pairs),
            max_size=len(pairs),
        )
    )
    edges = [(ids[a], ids[b], r) for (a, b), r in zip(pairs, rels, strict=True) if a < b]
    if draw(st.booleans()):  # a learning spine, so that paths, chains and "yes" are common
        edges += [(ids[i], ids[i + 1], "prerequisite") for i in range(0, n - 1, draw(st.integers(1, 2)))]
    edges = list(dict.fromkeys((t, s, r) if r == "builds_on" else (s, t, r) for s, t, r in edges))
    covered = draw(st.lists(st.tuples(st.integers(0, 4), st.integers(0, n - 1)), max_size=n))
    lessons = list(dict.fromkeys((f"L{k}", ids[c]) for k, c in covered))
    return ids, edges, lessons


def _asked(
    graph: Graph, pick: tuple[int, int], question: str, unread: frozenset[int]
) -> tuple[SynthesisRequest, Reading]:
    ids, edges, lessons = graph
    lo, hi = sorted((pick[0] % len(ids), pick[1] % len(ids)))
    if lo == hi:
        lo, hi = (hi - 1, hi) if hi else (0, 1)
    x, y = ids[hi], ids[lo]  # y is more often needed before x than not
    ev = make_evidence(ids, edges, seeds=(x, y), lessons=lessons)
    unexpanded = frozenset(ids[i % len(ids)] for i in unread)
    request = make_request(question.format(x=x, y=y), ev, unexpanded=unexpanded)
    reading = read_request(request)
    return replace(request, reading=reading), reading


def mutations(claim: Claim, ev: EvidenceGraph[Concept, Edge], reading: Reading) -> list[tuple[str, Claim]]:
    """Every single change of ``claim`` that makes it false of the evidence it was true of."""
    out: list[tuple[str, Claim]] = []
    members = list(claim.members)
    if members and claim.contract != "relate":
        out.append(("drop a member", replace(claim, members=tuple(members[1:]))))
    others = sorted(set(ev.concepts) - set(members) - set(reading.ids()))
    if others and claim.contract in ("set", "count", "next", "relate", "ready"):
        out.append(("add a member", replace(claim, members=(*members, others[0]))))
    if claim.contract == "count" and claim.count is not None:
        out.append(("count off by one", replace(claim, count=claim.count + 1)))
        if members:
            out.append(("right set, wrong count", replace(claim, count=len(members) - 1)))
    if isinstance(claim.holds, bool):
        out.append(("flip yes/no", replace(claim, holds=not claim.holds)))
    if claim.contract == "order":
        a, b = reading.subject, reading.other
        flipped = {a: b, b: a, None: a}.get(claim.first)
        out.append(("the other one first", replace(claim, first=flipped)))
    if claim.contract in ("check", "order", "path") and claim.path:
        out.append(("a path with a gap", replace(claim, path=claim.path[:-1])))
        stray = sorted(set(ev.edges) - set(claim.path), key=lambda r: int(r[1:]))
        if stray:
            out.append(("an edge too many", replace(claim, path=(*claim.path, stray[0]))))
    if claim.contract == "path" and not claim.path and ev.edges:
        out.append(("a path where there is none", replace(claim, path=tuple(sorted(ev.edges))[:1])))
    if claim.steps:
        s = claim.steps[0]
        out.append(("a step reversed", replace(claim, steps=(Step(s.target, s.relation, s.source, s.edge),))))
    if claim.contract == "relate":
        how = "none" if claim.how != "none" else "path"
        out.append(("another kind of relation", replace(claim, how=how)))
    if claim.contract == "lessons":
        stray = sorted(set(ev.lessons) - set(claim.lessons))
        if claim.lessons:
            out.append(("a lesson left out", replace(claim, lessons=claim.lessons[1:])))
        if stray:
            out.append(("a lesson of another concept", replace(claim, lessons=(*claim.lessons, stray[0]))))
    out.append(("an invented concept", replace(claim, members=(*members, "entropic_context_weaving"))))
    return out


def _claiming(d: Draft, claim: Claim) -> Draft:
    return replace(d, claim=claim, answer="", names=None)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    graph=graphs(),
    pick=st.tuples(st.integers(0, 100), st.integers(0, 100)),
    question=st.sampled_from(QUESTIONS),
    unread=st.frozensets(st.integers(0, 20), max_size=2),
)
def test_the_evidences_own_claim_is_accepted_and_every_single_lie_refused(
    graph: Graph, pick: tuple[int, int], question: str, unread: frozenset[int]
) -> None:
    """Whatever the graph, question and unread boundary: the offline draft's claim (the evidence's
    own) is accepted exactly when the evidence settles it, and each single mutation of it is a
    fault, never an answer."""
    request, reading = _asked(graph, pick, question, unread)
    offline = OfflineSynthesizer().synthesize(request)
    assert offline.claim is not None and offline.claim.contract == contract_of(reading)
    honest = verify(offline, request, reading=reading)
    assert not honest.fault, honest.reason
    settled = offline.claim.complete and offline.confidence >= 0.8
    assert honest.accepted == settled, (honest.reason, offline.answer)
    if honest.accepted:
        assert honest.draft == offline
    for what, lie in mutations(offline.claim, request.evidence, reading):
        liar = _claiming(draft(0.95), lie)
        verdict = verify(liar, request, reading=reading)
        assert not verdict.accepted, (what, lie, offline.claim)
        if offline.claim.complete or lie.complete:
            assert verdict.fault or not lie.complete, (what, verdict.reason)


@settings(max_examples=80, deadline=None)
@given(
    graph=graphs(),
    pick=st.tuples(st.integers(0, 100), st.integers(0, 100)),
    question=st.sampled_from(QUESTIONS),
    grown=st.integers(0, 3),
)
def test_a_truth_read_later_is_the_evidence_as_it_was_checked(
    graph: Graph, pick: tuple[int, int], question: str, grown: int
) -> None:
    """A draft refused before its claim is compared (none stated) leaves the evidence's own answer
    to be computed when asked: asked after the loop has added to the evidence, it is still the
    answer the evidence gave when the draft was checked (``EvidenceGraph.at``)."""
    request, reading = _asked(graph, pick, question, frozenset())
    at_once = verify(OfflineSynthesizer().synthesize(request), request, reading=reading).truth
    later = verify(draft(0.95), request, reading=reading)
    assert later.reason.startswith("states no claim")
    ev = request.evidence
    for i in range(grown):  # the loop's next rounds: new concepts, each needed before the seeds
        ev.add_concept(make_concept(f"later{i}"))
        for seed in ev.seeds:
            ev.add_edge(make_edge(f"later{i}", seed, "prerequisite"))
    assert later.truth == at_once


@settings(max_examples=80, deadline=None)
@given(
    graph=graphs(),
    pick=st.tuples(st.integers(0, 100), st.integers(0, 100)),
    question=st.sampled_from(QUESTIONS),
)
def test_complete_over_an_incomplete_walk_is_a_fault(
    graph: Graph, pick: tuple[int, int], question: str
) -> None:
    """With the subject unexpanded, a claim said to be complete is a fault whatever it says, unless
    a path in the evidence proves it (a "yes" needs no more reading)."""
    request, reading = _asked(graph, pick, question, frozenset({pick[0]}))
    offline = OfflineSynthesizer().synthesize(request)
    assert offline.claim is not None
    if offline.claim.complete:
        return  # settled without the subject's neighbourhood (a found path, a question naming too little)
    verdict = verify(_claiming(draft(0.95), replace(offline.claim, complete=True)), request, reading=reading)
    assert not verdict.accepted and verdict.fault
    assert verdict.reason.startswith("claims a complete answer, but the evidence is not complete")


def test_every_contract_has_a_rule_and_a_prompt_line() -> None:
    """Each contract says what its fields mean (the prompt) and has a rule for complete and for
    partial claims; ``complete`` is every contract's last field."""
    for contract in CONTRACTS.values():
        assert contract.says and contract.fields[-1] == "complete"
        assert callable(contract.same) and callable(contract.partial)


@pytest.mark.parametrize(
    ("question", "claim", "fault"),
    [
        # yes/no: "no" where a path proves yes, citing that very path
        (
            "Is algebra a prerequisite for optimisation?",
            Claim("check", True, holds=False, path=("e1", "e2")),
            "says no, but the evidence says yes",
        ),
        # half the set, called complete
        (
            "What do I need before optimisation?",
            Claim("set", True, members=("calculus",)),
            "leaves out 1 of the 2",
        ),
        # a right set with a wrong count
        (
            "How many concepts do I need before optimisation?",
            Claim("count", True, members=("algebra", "calculus"), count=3),
            "says 3 but lists 2",
        ),
        # the later concept first
        (
            "Which should I learn first, optimisation or algebra?",
            Claim("order", True, first="optimisation", path=("e1", "e2")),
            "puts optimisation first, but in the evidence algebra comes first",
        ),
        # an edge said to connect what it does not
        (
            "Why do I need algebra to learn optimisation?",
            Claim("why", True, holds=True, steps=(Step("optimisation", "prerequisite", "calculus", "e2"),)),
            "says e2 is optimisation -prerequisite-> calculus, but e2 is calculus -prerequisite-> optimisation",
        ),
        # a path with a gap
        (
            "How does algebra lead to optimisation?",
            Claim("path", True, path=("e2",)),
            "its path takes 1 steps where the shortest takes 2",
        ),
    ],
)
def test_each_kind_of_lie_is_named(question: str, claim: Claim, fault: str) -> None:
    """The refusal says what the claim got wrong, in the evidence's names."""
    ev = make_evidence(
        ["algebra", "calculus", "optimisation"],
        [("algebra", "calculus", "prerequisite"), ("calculus", "optimisation", "prerequisite")],
        seeds=("algebra", "optimisation"),
    )
    refs = {(e.source_id, e.target_id): r for r, e in ev.edges.items()}
    rename = {"e1": refs["algebra", "calculus"], "e2": refs["calculus", "optimisation"]}
    claim = replace(
        claim,
        path=tuple(rename[r] for r in claim.path),
        steps=tuple(replace(s, edge=rename[s.edge]) for s in claim.steps),
    )
    request = make_request(question, ev)
    verdict = verify(draft(0.95, claim=claim), request, reading=read_request(request))
    assert not verdict.accepted and verdict.fault
    expected = fault
    for old, new in rename.items():
        expected = expected.replace(old, new)
    assert expected in verdict.reason, verdict.reason


def test_two_readings_are_not_settled_until_both_are() -> None:
    """A reading that must agree with another (``Reading.agree``) is no answer while the other is
    still partial over the evidence, even where the two answer alike so far: "which topics open up
    once I know Calculus?" waits for Geometry (after Calculus's foundation Algebra, unread)."""
    edges = [("algebra", "calculus", "prerequisite"), ("algebra", "geometry", "prerequisite")]
    edges += [("trigonometry", "geometry", "prerequisite"), ("calculus", "topology", "prerequisite")]
    concepts = ["algebra", "calculus", "geometry", "topology", "trigonometry"]
    ev = make_evidence(concepts, edges, seeds=("calculus",))
    request = make_request("Which topics open up once I know calculus?", ev, unexpanded={"geometry"})
    reading = read_request(request)
    assert reading.intent == "opens" and reading.agree == ("next",)
    ask = Ask(replace(request, reading=reading), reading)
    assert answer(Ask(ask.request, replace(reading, agree=()))).complete  # what Calculus opens alone
    assert not answer(ask).complete
