"""Every statement in an answer is backed by its cited sub-graph: the text names only concepts
it cites, each with a cited path to the subject in the asked relation, for the offline
synthesizer and for DeepSeek drafts alike; ``kg eval`` measures it as citation coverage."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from itertools import pairwise

import pytest
from fake_deepseek import FakeDeepSeek, claim_reply
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import Engine
from test_lesson_citations import T0, _ask
from test_offline import CONCEPTS, EDGES, SEEDS, WORKED

from control_plane.evidence import EvidenceGraph
from control_plane.planning.verify import Verdict, verify
from control_plane.semantics.findings import LONG_LIST
from control_plane.synthesizers.base import Claim, Draft
from control_plane.synthesizers.offline import OfflineSynthesizer, read_request
from control_plane.testing import draft, make_concept, make_evidence, make_request
from control_plane.understanding.interpretation import Reading
from control_plane.understanding.names import NameIndex
from data_plane import Concept, Edge, GraphReader, WriteGateway
from data_plane.testing import ManualClock, build_graph
from evals.coverage import evidence_names, named_concepts, quoted_records
from evals.metrics import Response, score, summarise


def worked() -> tuple[EvidenceGraph[Concept, Edge], Reading]:
    """The worked example's evidence in small, and its reading."""
    ev = make_evidence(CONCEPTS, EDGES, seeds=SEEDS)
    return ev, read_request(make_request(WORKED, ev))


def ref(ev: EvidenceGraph[Concept, Edge], source: str, target: str, relation: str) -> str:
    edges = ev.edges
    return next(
        r for r, e in edges.items() if (e.source_id, e.target_id, e.relation) == (source, target, relation)
    )


# -- which concepts a text names ---------------------------------------------------------------


def test_a_text_names_concepts_by_name_alias_or_id_and_the_longest_name_wins() -> None:
    """Names, aliases and ids are found; "agent orchestration" is one name, not "agent" as well."""
    index = NameIndex.from_names(
        [
            ("rag", "Retrieval-augmented generation", ["RAG"]),
            ("agent", "Agent", []),
            ("agent_orchestration", "Agent orchestration", []),
        ]
    )
    assert named_concepts("RAG needs agent orchestration.", index) == {"rag", "agent_orchestration"}
    assert named_concepts("see retrieval_augmented_generation or rag", index) == {"rag"}


def test_list_punctuation_keeps_neighbouring_names_apart() -> None:
    """ "Embeddings, Vector search" names two concepts, never the "embedding vector" across the comma."""
    index = NameIndex.from_names(
        [
            ("embeddings", "Embeddings", []),
            ("vector_search", "Vector search", []),
            ("ev", "Embedding vector", []),
        ]
    )
    assert named_concepts("It builds on: Embeddings, Vector search.", index) == {
        "embeddings",
        "vector_search",
    }
    assert named_concepts("an embedding vector", index) == {"ev"}


def test_text_quoted_from_a_cited_record_is_not_a_claim() -> None:
    """A cited concept's summary and a cited lesson's title are that record's words: names in them
    do not count, and the words either side of them never join into a name."""
    ev = make_evidence(
        [make_concept("rag", "RAG", "RAG retrieves with vector search."), "vector_search", "search"]
    )
    index = evidence_names(ev)
    text = "RAG: RAG retrieves with vector search. It is connected to nothing else."
    assert named_concepts(text, index) == {"rag", "vector_search"}
    assert named_concepts(text, index, quoted=quoted_records(ev, ["rag"])) == {"rag"}


def test_the_reason_on_a_cited_edge_is_quoted_not_claimed() -> None:
    """A "why" answer quotes each step's grounding reason: a concept named in the reason (the
    reason on e: "RAG is motivated by hallucination") is the edge's words, not a claim."""
    ev = make_evidence(["llm", "rag", "hallucination"], [("llm", "rag", "prerequisite")])
    (ref,) = ev.edges
    grounded = replace(
        ev.edges[ref], grounding=replace(ev.edges[ref].grounding, reason="RAG fixes hallucination.")
    )
    ev.edges[ref] = grounded
    text = f"llm -> rag ({ref}): RAG fixes hallucination."
    index = evidence_names(ev)
    assert "hallucination" in named_concepts(text, index, quoted=quoted_records(ev, ["llm", "rag"]))
    assert named_concepts(text, index, quoted=quoted_records(ev, ["llm", "rag"], (), [ref])) == {"llm", "rag"}


def test_a_name_inside_a_longer_name_across_its_own_colon_is_not_named() -> None:
    """ "Evaluating multiple integrals: change of variables" names that concept alone, though
    "Multiple integrals" stands inside it and its name runs across a colon."""
    index = NameIndex.from_names(
        [
            ("cov", "Evaluating multiple integrals: change of variables", []),
            ("mi", "Multiple integrals", []),
            ("cv", "Change of variables", []),
        ]
    )
    text = "Before Evaluating multiple integrals: change of variables comes calculus."
    assert named_concepts(text, index) == {"cov"}
    assert named_concepts("Multiple integrals: change of variables", index) == {"mi", "cv"}
    assert named_concepts("Start with multiple integrals; change of variables comes later.", index) == {
        "mi",
        "cv",
    }


def test_an_everyday_word_names_a_concept_only_where_the_text_writes_it_as_a_name() -> None:
    """A concept called "Edge" is not named by "(from prerequisite edges)", nor "Order" by "in
    learning order"; capitalised mid-sentence or in quotes, they are named."""
    index = NameIndex.from_names(
        [
            ("edge", "Edge", []),
            ("order", "Order", []),
            ("c", "C", []),
            ("cpp", "C++", []),
            ("alg", "Algebra", []),
        ]
    )
    assert named_concepts("Before Calculus: Algebra (from prerequisite edges).", index) == {"alg"}
    assert named_concepts("3 concepts, in learning order: first Algebra", index) == {"alg"}
    assert named_concepts("Graph theory starts from Edge and Order.", index) == {"edge", "order"}
    assert named_concepts('it needs "edge" first', index) == {"edge"}
    assert named_concepts("a plan: C before C++, as a rule", index) == {"c", "cpp"}


# -- the verifier: claims, and the words of the verified claim -----------------------------------


def _verify(d: Draft, question: str, ev: EvidenceGraph[Concept, Edge]) -> Verdict:
    request = make_request(question, ev)
    return verify(d, request, reading=read_request(request))


def test_a_claim_naming_a_concept_outside_the_evidence_is_a_fault() -> None:
    """Claiming a concept the evidence does not hold is never an answer, however confident."""
    ev, _ = worked()
    d = draft(0.95, claim=Claim("set", True, members=("prompting_fundamentals", "transformers")))
    verdict = _verify(d, WORKED, ev)
    assert not verdict.accepted and verdict.fault
    assert verdict.reason == "cites ids outside the evidence: transformers"


def test_an_accepted_claim_is_answered_in_the_words_of_the_evidence_with_every_path_cited() -> None:
    """The worked example's claim (only what RAG builds on) is accepted; the learner reads the
    closure and the answer in the offline words, and every concept named is cited with its path."""
    ev, _ = worked()
    d = draft(0.9, claim=Claim("set", True, members=("prompting_fundamentals",)))
    verdict = _verify(d, WORKED, ev)
    assert verdict.accepted and verdict.draft is not None
    fixed = verdict.draft
    assert fixed.answer.startswith("Before agent orchestration a learner must master")
    assert set(fixed.concept_ids) == {
        "agent_orchestration",
        "rag",
        "agent_memory",
        "function_calling",
        "prompting_fundamentals",
    }
    cited = {(ev.edges[r].source_id, ev.edges[r].target_id) for r in fixed.edge_ids}
    assert {("agent_memory", "agent_orchestration"), ("function_calling", "agent_orchestration")} <= cited
    assert ("function_calling", "prompting_fundamentals") in cited  # prompting fundamentals' path to X
    assert fixed.usage == d.usage and fixed.result is not None
    assert fixed.result.members == ("prompting_fundamentals",)


def test_a_member_outside_the_asked_relation_is_a_fault() -> None:
    """Prompting fundamentals is in the evidence but is no direct prerequisite of agent
    orchestration: claiming it is something the evidence does not give."""
    ev = make_evidence(CONCEPTS, EDGES, seeds=SEEDS)
    d = draft(0.95, claim=Claim("set", True, members=("function_calling", "prompting_fundamentals")))
    verdict = _verify(d, "What are the prerequisites of agent orchestration?", ev)
    assert not verdict.accepted and verdict.fault
    assert "states 1 the evidence does not give (prompting fundamentals)" in verdict.reason


def test_a_member_must_stand_in_every_part_of_a_compound_question() -> None:
    """ "Which of those does RAG build on": function calling is needed before agent orchestration
    but RAG does not build on it, so claiming it (for prompting fundamentals) is a fault."""
    ev, _ = worked()
    d = draft(0.95, claim=Claim("set", True, members=("function_calling",)))
    verdict = _verify(d, WORKED, ev)
    assert not verdict.accepted and verdict.fault
    assert "leaves out 1 of the 1" in verdict.reason and "function calling" in verdict.reason


def test_a_draft_without_a_claim_is_never_an_answer() -> None:
    """Prose alone, however well it cites, is not an answer: there is no claim to check."""
    ev, _ = worked()
    d = draft(0.95, answer="RAG builds on prompting fundamentals.", concept_ids=["prompting_fundamentals"])
    verdict = _verify(d, WORKED, ev)
    assert not verdict.accepted and not verdict.fault and verdict.reason.startswith("states no claim")


# -- the offline synthesizer: text and citations from one source ------------------------------

QUESTIONS = [
    "What do I need to learn before {x}?",
    "What comes directly before {x}?",
    "What does {x} unlock, directly or indirectly?",
    "What are the prerequisites of {x}?",
    "What does {x} build on?",
    "What builds on {x}?",
    "Tell me about {x}.",
    "How does {y} lead to {x}?",
    "Make me a study plan for {x}, I already know {y}",
    "What must a learner master before {x}, and which of those concepts does {y} build on?",
    "What do {x} and {y} both require first?",
]


@st.composite
def learning_graphs(draw: st.DrawFn) -> tuple[list[str], list[tuple[str, str, str]]]:
    n = draw(st.integers(3, 14))
    ids = [f"topic{i}" for i in range(n)]
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
    rels = draw(
        st.lists(
            st.sampled_from(["prerequisite", "builds_on", "related", "part_of"]),
            min_size=len(pairs),
            max_size=len(pairs),
        )
    )
    edges = list({(ids[a], ids[b], r) for (a, b), r in zip(pairs, rels, strict=True) if a < b})
    return ids, edges


@settings(max_examples=60, deadline=None)
@given(graph=learning_graphs(), pick=st.integers(0, 100), question=st.sampled_from(QUESTIONS))
def test_offline_text_names_only_what_it_cites_and_needs_no_repair(
    graph: tuple[list[str], list[tuple[str, str, str]]], pick: int, question: str
) -> None:
    """Whatever the graph and question, every concept the offline text names is cited, and an
    accepted draft already cites every path the verifier asks for."""
    ids, edges = graph
    x, y = ids[pick % len(ids)], ids[(pick + 1) % len(ids)]
    ev = make_evidence(ids, edges, seeds=(x, y))
    request = make_request(question.format(x=x, y=y), ev)
    d = OfflineSynthesizer().synthesize(request)
    named = named_concepts(
        d.answer, evidence_names(ev), quoted=quoted_records(ev, d.concept_ids, d.lesson_refs)
    )
    assert named <= set(d.concept_ids), (d.answer, d.concept_ids)
    assert d.names is not None and all(d.answer[s.start : s.end] == ev.name(s.concept_id) for s in d.names)
    assert {s.concept_id for s in d.names} <= set(d.concept_ids)
    assert d.result is not None and set(d.result.members) <= set(d.concept_ids)
    verdict = verify(d, request, reading=read_request(request))
    if verdict.accepted:
        assert verdict.draft == d  # the verified claim's words are the offline synthesizer's


def test_offline_answers_on_a_graph_of_everyday_names_are_accepted() -> None:
    """With concepts called Edge, Graph and Path beside Algebra -> Calculus, the offline answer to
    "what comes before calculus" is accepted: its own words ("edges", "learning path") claim
    nothing; its claims are the spans it wrote names into."""
    ev = make_evidence(
        [
            make_concept("algebra", "Algebra"),
            make_concept("calculus", "Calculus"),
            make_concept("edge", "Edge"),
            make_concept("graph", "Graph"),
            make_concept("path", "Path"),
        ],
        [("algebra", "calculus", "prerequisite"), ("edge", "graph", "prerequisite")],
        seeds=("calculus",),
    )
    request = make_request("What comes before calculus?", ev)
    d = OfflineSynthesizer().synthesize(request)
    assert d.names is not None and {s.concept_id for s in d.names} == {"algebra", "calculus"}
    assert all(d.answer[s.start : s.end] == ev.name(s.concept_id) for s in d.names)
    verdict = verify(d, request, reading=read_request(request))
    assert verdict.accepted, verdict.reason


def test_a_drafts_own_text_never_reaches_the_learner() -> None:
    """Whatever text and name spans a draft carries (here a forged span and other words), the
    accepted answer's words are the verified claim's, rendered from the evidence."""
    ev, reading = worked()
    request = make_request(WORKED, ev)
    d = OfflineSynthesizer().synthesize(request)
    assert d.names
    first = d.names[0]
    forged = replace(
        d, answer="No: nothing is needed.", names=(replace(first, end=first.end - 1), *d.names[1:])
    )
    verdict = verify(forged, request, reading=reading)
    assert verdict.accepted and verdict.draft is not None
    assert verdict.draft.answer == d.answer and verdict.draft.names == d.names


def test_a_long_closure_is_written_in_at_most_four_learning_stages() -> None:
    """A 20-concept chain reads first / then / and last, in learning order, and names all 20."""
    ids = [f"step{i:02d}" for i in range(21)]
    ev = make_evidence(ids, [(a, b, "prerequisite") for a, b in pairwise(ids)], seeds=("step20",))
    d = OfflineSynthesizer().synthesize(make_request("What do I need to learn before step20?", ev))
    assert "20 concepts, in learning order: first step00," in d.answer
    assert d.answer.count("; then ") <= 2 and "; and last " in d.answer
    assert d.answer.index("step05") < d.answer.index("step15")
    assert d.result is not None and len(d.result.members) == 20 and len(d.edge_ids) == 20
    short = make_evidence(
        ids[: LONG_LIST + 1],
        [(a, b, "prerequisite") for a, b in pairwise(ids[: LONG_LIST + 1])],
    )
    s = OfflineSynthesizer().synthesize(
        make_request(f"What do I need to learn before {ids[LONG_LIST]}?", short)
    )
    assert "learning order" not in s.answer


# -- DeepSeek drafts, through the fake server --------------------------------------------------


@pytest.fixture
def fake() -> Iterator[FakeDeepSeek]:
    with FakeDeepSeek() as server:
        yield server


@pytest.fixture
def graph(sqlite_engine: Engine) -> tuple[GraphReader, ManualClock]:
    """algebra → calculus → optimisation by prerequisite; statistics stands apart."""
    clock = ManualClock(now=T0)
    build_graph(
        WriteGateway(sqlite_engine, clock=clock),
        ["algebra", "calculus", "optimisation", "statistics"],
        [("algebra", "calculus", "prerequisite"), ("calculus", "optimisation", "prerequisite")],
    )
    return GraphReader(sqlite_engine, clock=clock), clock


def test_a_deepseek_claim_naming_a_concept_outside_the_evidence_never_passes(
    graph: tuple[GraphReader, ManualClock], fake: FakeDeepSeek
) -> None:
    """Statistics is a concept of the graph but not of the evidence: a claim naming it is a fault,
    the loop does not go looking for it, and the second such claim ends the question (two calls)."""
    reader, clock = graph
    claim = {"members": ["calculus", "algebra", "statistics"], "complete": True}
    fake.enqueue(*[claim_reply(claim)] * 4)
    a = _ask(reader, clock, fake, "What do I need to learn before optimisation?")
    assert a["abstained"] and a["result"] is None and len(fake.requests) == 2
    verdicts = [r["verdict"] for r in a["rounds"] if r["llm_calls"]]
    assert verdicts == ["cites ids outside the evidence: statistics"] * 2
    assert "contradicted the evidence 2 times" in str(a["abstain_reason"])


def test_a_true_deepseek_claim_is_answered_in_the_evidences_words(
    graph: tuple[GraphReader, ManualClock], fake: FakeDeepSeek
) -> None:
    """A claim of the whole closure is accepted: the learner reads the closure in the offline
    words, with every named concept and its path cited; the claim's members are the result."""
    reader, clock = graph
    fake.enqueue(claim_reply({"members": ["calculus", "algebra"], "complete": True}))
    a = _ask(reader, clock, fake, "What do I need to learn before optimisation?")
    assert not a["abstained"], a["abstain_reason"]
    assert a["result"] == {"intent": "needed_before", "members": ["algebra", "calculus"]}
    assert a["text"].startswith("Before optimisation a learner must master algebra, calculus")
    assert {c["id"] for c in a["cited_concepts"]} == {"optimisation", "calculus", "algebra"}
    keys = {e["key"] for e in a["evidence"]["edges"] if e["edge_id"] in a["cited_edges"]}
    assert keys == {"algebra>prerequisite>calculus", "calculus>prerequisite>optimisation"}
    system = fake.requests[0].json()["messages"][0]["content"]
    user = fake.requests[0].json()["messages"][1]["content"]
    assert (
        '"claim"' in system
        and 'Claim contract for this question: set, with exactly "members", "complete".' in user
    )


def test_deepseek_members_outside_the_asked_relation_are_a_fault(
    graph: tuple[GraphReader, ManualClock], fake: FakeDeepSeek
) -> None:
    """Claiming optimisation as something needed before calculus (it comes after) is never
    accepted; the refusal is told to the model in the next round's prompt."""
    reader, clock = graph
    fake.enqueue(*[claim_reply({"members": ["optimisation"], "complete": True})] * 4)
    a = _ask(reader, clock, fake, "What do I need to learn before calculus?")
    assert a["abstained"] and len(fake.requests) == 2
    assert "optimisation" in a["rounds"][0]["verdict"]
    second = fake.requests[1].json()["messages"][1]["content"]
    assert "Your previous claim was refused: " in second and "optimisation" in second


# -- kg eval -----------------------------------------------------------------------------------


def test_the_scorer_compares_the_answer_set_and_reports_citation_coverage() -> None:
    """With a result, its members are the answer set (not the wider citations); coverage is named
    and cited over named, summed over answered questions."""
    full = Response(
        abstained=False, cited=("x", "a", "b", "c"), result={"members": ["a"]}, named=("x", "a", "b")
    )
    half = Response(abstained=False, cited=("a",), named=("a", "z"))
    s1, s2 = score("1", "t", ["a"], False, full), score("2", "t", ["a"], False, half)
    assert s1.exact_match and s1.f1 == 1.0 and (s1.named, s1.named_cited) == (3, 3)
    assert s2.exact_match and (s2.named, s2.named_cited) == (2, 1)
    assert summarise([s1, s2])["citation_coverage"] == pytest.approx(4 / 5)
    assert summarise([score("3", "t", ["a"], False, Response(abstained=True))])["citation_coverage"] is None
