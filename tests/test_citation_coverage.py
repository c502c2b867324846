"""Every statement in an answer is backed by its cited sub-graph: the text names only concepts
it cites, each with a cited path to the subject in the asked relation, for the offline
synthesizer and for DeepSeek drafts alike; ``kg eval`` measures it as citation coverage."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from itertools import pairwise

import pytest
from fake_deepseek import FakeDeepSeek, Reply, completion
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import Engine
from test_lesson_citations import T0, _ask
from test_offline import CONCEPTS, EDGES, SEEDS, WORKED

from control_plane.evidence import EvidenceGraph
from control_plane.planning.coverage import evidence_names, named_concepts, quoted_records
from control_plane.planning.verify import verify
from control_plane.synthesizers.base import Draft, Result, Usage
from control_plane.synthesizers.findings import LONG_LIST
from control_plane.synthesizers.offline import OfflineSynthesizer, read_request
from control_plane.testing import draft, make_concept, make_evidence, make_request
from control_plane.understanding.interpretation import Reading
from control_plane.understanding.names import NameIndex
from data_plane import Concept, Edge, GraphReader, WriteGateway
from data_plane.testing import ManualClock, build_graph
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


# -- the verifier ------------------------------------------------------------------------------


def test_a_draft_naming_a_concept_outside_the_evidence_is_rejected() -> None:
    """Naming a concept the evidence does not hold is never repaired: there is nothing to cite."""
    ev, reading = worked()
    names = NameIndex.from_names([(c, c.replace("_", " "), ()) for c in [*CONCEPTS, "transformers"]])
    d = draft(
        0.95,
        answer="RAG builds on prompting fundamentals and transformers.",
        concept_ids=["prompting_fundamentals", "rag"],
        edge_ids=[ref(ev, "rag", "prompting_fundamentals", "builds_on")],
    )
    verdict = verify(d, ev, reading=reading, names=names)
    assert not verdict.accepted and verdict.uncited == ("transformers",)
    assert "names concepts outside the evidence: transformers" in verdict.reason


def test_the_old_worked_example_draft_is_repaired_to_cite_every_named_concept_and_its_path() -> None:
    """The draft that named the whole closure but cited only the three answers (and no path for
    the rest) is accepted only once every named concept and a path for each is cited."""
    ev, reading = worked()
    old = Draft(
        "Before agent orchestration a learner must master agent memory, function calling, prompting "
        "fundamentals. Of those, rag builds on: prompting fundamentals.",
        0.9,
        ("prompting_fundamentals",),
        (ref(ev, "rag", "prompting_fundamentals", "builds_on"),),
        "",
        draft(0.9).next_focus,
        Usage(calls=1),
        result=Result("before_uses", ("prompting_fundamentals",)),
    )
    verdict = verify(old, ev, reading=reading)
    assert verdict.accepted and verdict.draft is not None
    fixed = verdict.draft
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
    assert {"agent_memory", "function_calling", "agent_orchestration", "rag"} <= set(verdict.repaired)


def test_a_named_concept_outside_the_asked_relation_is_rejected() -> None:
    """Prompting fundamentals is in the evidence but is no direct prerequisite of agent
    orchestration: naming it in that answer is not something a path can back."""
    ev = make_evidence(CONCEPTS, EDGES, seeds=SEEDS)
    request = make_request("What are the prerequisites of agent orchestration?", ev)
    d = draft(
        0.95,
        answer="Agent orchestration needs function calling and prompting fundamentals.",
        concept_ids=["function_calling", "agent_orchestration"],
    )
    verdict = verify(d, ev, reading=read_request(request))
    assert not verdict.accepted and "names or cites concepts that are not" in verdict.reason
    assert verdict.reason.endswith(": prompting_fundamentals")


def test_a_member_must_stand_in_every_part_of_a_compound_question() -> None:
    """ "Which of those does RAG build on": function calling is needed before agent orchestration
    but RAG does not build on it, so stating it as an answer is rejected."""
    ev, reading = worked()
    d = replace(
        draft(0.95, answer="RAG builds on function calling.", concept_ids=["function_calling"]),
        result=Result("before_uses", ("function_calling",)),
    )
    verdict = verify(d, ev, reading=reading)
    assert not verdict.accepted and "states function_calling as an answer" in verdict.reason


def test_without_a_reading_an_uncited_name_is_rejected() -> None:
    """With no reading there is no relation to cite a path in: a named, uncited concept rejects."""
    ev, _ = worked()
    d = draft(0.95, answer="It is chunking.", concept_ids=["rag"])
    assert not verify(d, ev).accepted
    assert verify(replace(d, concept_ids=("rag", "chunking")), ev).accepted


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
    verdict = verify(d, ev, reading=read_request(request))
    if verdict.accepted:
        assert verdict.repaired == () and verdict.draft == d, verdict.repaired


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
    verdict = verify(d, ev, reading=read_request(request), names=evidence_names(ev))
    assert verdict.accepted, verdict.reason


def test_a_draft_whose_name_spans_do_not_hold_names_is_rejected() -> None:
    """A span that does not hold its concept's name is no claim the verifier can trust."""
    ev, reading = worked()
    d = OfflineSynthesizer().synthesize(make_request(WORKED, ev))
    assert d.names
    first = d.names[0]
    forged = replace(d, names=(replace(first, end=first.end - 1), *d.names[1:]))
    verdict = verify(forged, ev, reading=reading)
    assert not verdict.accepted and "is not the name of" in verdict.reason


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


def _reply(answer: str, concepts: list[str], edges: list[str], answer_ids: list[str] | None) -> Reply:
    body: dict[str, object] = {
        "answer": answer,
        "confidence": 0.95,
        "concept_ids": concepts,
        "edge_ids": edges,
        "missing": "",
        "next_focus": {"relations": [], "concept_ids": [], "text": ""},
    }
    if answer_ids is not None:
        body["answer_ids"] = answer_ids
    return Reply(body=completion(json.dumps(body)))


def test_a_deepseek_draft_naming_a_concept_outside_the_evidence_never_passes(
    graph: tuple[GraphReader, ManualClock], fake: FakeDeepSeek
) -> None:
    """Statistics is a concept of the graph but not of the evidence: however confident, a draft
    naming it is rejected round after round and the question is abstained on (once the loop has
    read statistics, because the rejection put it in focus, for not being needed before
    optimisation)."""
    reader, clock = graph
    fake.enqueue(
        *[
            _reply(
                "Before optimisation: calculus, algebra and statistics.",
                ["calculus", "algebra"],
                [],
                ["calculus", "algebra"],
            )
        ]
        * 4
    )
    a = _ask(reader, clock, fake, "What do I need to learn before optimisation?")
    assert a["abstained"] and a["result"] is None
    verdicts = [r["verdict"] for r in a["rounds"] if r["llm_calls"]]
    assert verdicts and "names concepts outside the evidence: statistics" in verdicts[0]
    assert all(v.endswith(": statistics") and v != "accepted" for v in verdicts), verdicts


def test_a_deepseek_draft_is_repaired_to_cite_the_path_of_what_it_names(
    graph: tuple[GraphReader, ManualClock], fake: FakeDeepSeek
) -> None:
    """A reply that names algebra and the subject but cites only calculus is accepted with
    algebra's path and the subject cited; its answer_ids are the answer's result."""
    reader, clock = graph
    fake.enqueue(
        _reply("Before optimisation: calculus and algebra.", ["calculus"], [], ["calculus", "algebra"])
    )
    a = _ask(reader, clock, fake, "What do I need to learn before optimisation?")
    assert not a["abstained"], a["abstain_reason"]
    assert a["result"] == {"intent": "needed_before", "members": ["calculus", "algebra"]}
    assert {c["id"] for c in a["cited_concepts"]} == {"optimisation", "calculus", "algebra"}
    keys = {e["key"] for e in a["evidence"]["edges"] if e["edge_id"] in a["cited_edges"]}
    assert keys == {"algebra>prerequisite>calculus", "calculus>prerequisite>optimisation"}
    assert "cited what it left out for" in a["rounds"][0]["verdict"]
    system = fake.requests[0].json()["messages"][0]["content"]
    assert '"answer_ids"' in system and "names a concept it does not cite" in system


def test_deepseek_answer_ids_outside_the_asked_relation_are_rejected(
    graph: tuple[GraphReader, ManualClock], fake: FakeDeepSeek
) -> None:
    """Stating optimisation as something needed before calculus (it comes after) is never accepted."""
    reader, clock = graph
    fake.enqueue(*[_reply("Before calculus: optimisation.", ["optimisation"], [], ["optimisation"])] * 4)
    a = _ask(reader, clock, fake, "What do I need to learn before calculus?")
    assert a["abstained"]
    assert "optimisation" in a["rounds"][0]["verdict"]


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
