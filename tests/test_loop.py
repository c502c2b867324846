"""The planning loop end to end on small built graphs and on the bundled curriculum."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from structlog.testing import capture_logs

from control_plane.errors import LLMUnavailable
from control_plane.planning.answer import Answer
from control_plane.planning.graph_store import SQLPropertyGraphStore
from control_plane.planning.loop import MAX_QUESTION_CHARS, NO_SEED, NOTHING_MORE, Planner
from control_plane.planning.round import FAULTY, PARTIAL_CLOSURE
from control_plane.planning.walk_order import WalkOrder, walk_order
from control_plane.synthesizers.base import Claim, Focus
from control_plane.synthesizers.offline import OfflineSynthesizer
from control_plane.testing import RecordingExpander, ScriptedSynthesizer, cite_all, draft, truthful
from control_plane.understanding.interpretation import Reading
from data_plane import Concept, Edge, GraphReader, InputError, WriteGateway
from data_plane.testing import ManualClock, build_graph, grounding

WORKED = (
    "What must a learner master before agent orchestration, and which of those concepts does RAG build on?"
)
EXPECTED = {"function_calling", "agent_memory", "prompting_fundamentals"}


@pytest.fixture
def loop_clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def lgateway(sqlite_engine: Engine, loop_clock: ManualClock) -> WriteGateway:
    return WriteGateway(sqlite_engine, clock=loop_clock)


@pytest.fixture
def lreader(sqlite_engine: Engine, loop_clock: ManualClock) -> GraphReader:
    return GraphReader(sqlite_engine, clock=loop_clock)


def worked_graph(gateway: WriteGateway) -> None:
    build_graph(
        gateway,
        [
            "agent_orchestration",
            "function_calling",
            "agent_memory",
            "prompting_fundamentals",
            ("rag", "Retrieval-augmented generation", ["RAG"]),
            "chunking",
            "embeddings",
            "vector_search",
            "multi_agent_systems",
        ],
        [
            ("function_calling", "agent_orchestration", "prerequisite"),
            ("agent_memory", "agent_orchestration", "prerequisite"),
            ("function_calling", "prompting_fundamentals", "builds_on"),
            ("agent_memory", "prompting_fundamentals", "builds_on"),
            ("agent_memory", "embeddings", "builds_on"),
            ("agent_memory", "vector_search", "builds_on"),
            ("rag", "embeddings", "builds_on"),
            ("rag", "vector_search", "builds_on"),
            ("rag", "chunking", "builds_on"),
            ("rag", "prompting_fundamentals", "builds_on"),
            ("agent_orchestration", "multi_agent_systems", "part_of"),
        ],
    )


def chain(gateway: WriteGateway, n: int) -> list[str]:
    ids = [f"node{i}" for i in range(n)]
    build_graph(gateway, ids, [(ids[i], ids[i + 1], "prerequisite") for i in range(n - 1)])
    return ids


def planner(reader: GraphReader, synth: object, clock: ManualClock, **kw: object) -> Planner:
    store = kw.pop("store", None) or SQLPropertyGraphStore(reader)
    return Planner(reader, synth, store=store, clock=clock, **kw)  # type: ignore[arg-type]


def members(answer: Answer) -> tuple[str, ...]:
    """The answer set an answer states (its result's members)."""
    assert answer.result is not None, answer.abstain_reason
    return answer.result.members


def test_worked_example_is_answered_offline(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """The worked example is answered with its evidence, at confidence >= 0.80."""
    worked_graph(lgateway)
    answer = planner(lreader, OfflineSynthesizer(), loop_clock, gateway=lgateway).ask(WORKED)
    assert not answer.abstained and answer.confidence >= 0.8
    assert set(answer.evidence.concepts) >= EXPECTED
    assert set(members(answer)) == {"prompting_fundamentals", "embeddings", "vector_search"}
    assert "Retrieval-augmented generation builds on" in answer.text


def test_worked_example_on_the_bundled_curriculum(lgateway: WriteGateway, lreader: GraphReader) -> None:
    """On the bundled curriculum the worked example is answered with the documented evidence."""
    bundle = pytest.importorskip("data_plane.bundle", reason="data_plane.bundle is not written yet")
    path = Path(__file__).resolve().parents[1] / "data_plane" / "curriculum"
    if not (path / "manifest.json").exists():
        pytest.skip("the bundled curriculum is not written yet")
    bundle.import_bundle(lgateway, path)
    synth = OfflineSynthesizer()
    answer = Planner(lreader, synth, store=SQLPropertyGraphStore(lreader)).ask(WORKED, record=False)
    assert not answer.abstained and answer.confidence >= 0.8, answer.abstain_reason
    assert set(answer.evidence.concepts) >= EXPECTED
    assert "prompting_fundamentals" in members(answer)
    # The offline synthesizer calls no model: each round is a synthesis step, none a model call.
    assert answer.llm_calls == 0 and answer.syntheses == len(answer.rounds) <= 4


def test_abstains_after_max_rounds_when_confidence_stays_low(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """A synthesizer stuck at 0.6 makes the loop abstain after 4 rounds, with the reason."""
    chain(lgateway, 8)
    synth = ScriptedSynthesizer(truthful(0.6))
    answer = planner(lreader, synth, loop_clock).ask("what is connected to node0?", record=False)
    assert answer.abstained and len(answer.rounds) == 4 and synth.calls == 4
    assert answer.abstain_reason is not None and "after 4 rounds (best 0.60)" in answer.abstain_reason
    assert answer.confidence < 0.8 and answer.cited_concepts == ()
    assert [r.decision for r in answer.rounds] == ["continue"] * 3 + ["abstain"]


def test_empty_frontier_stops_without_a_model_call(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """When nothing is left to expand, the loop stops and abstains without calling the model."""
    chain(lgateway, 2)
    synth = ScriptedSynthesizer([draft(0.3, missing="more")])
    answer = planner(lreader, synth, loop_clock).ask("node0?", record=False)
    assert answer.rounds[-1].decision == "stop-empty" and answer.rounds[-1].llm_calls == 0
    assert synth.calls == answer.llm_calls == answer.syntheses == len(answer.rounds) - 1
    assert answer.abstained and answer.abstain_reason is not None and NOTHING_MORE in answer.abstain_reason


def test_no_seed_abstains_at_once(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """A question naming no known concept abstains with no round and no model call."""
    chain(lgateway, 3)
    synth = ScriptedSynthesizer([draft(0.99)])
    answer = planner(lreader, synth, loop_clock).ask("what is the weather?", record=False)
    assert answer.abstained and answer.abstain_reason == NO_SEED
    assert synth.calls == 0 and answer.rounds == ()


def test_no_concept_is_expanded_twice_and_one_call_per_round(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """Each round makes exactly one expansion (data-plane) call and one model call; one-hop calls
    exclude everything already expanded, and no walk starts from a concept a walk expanded."""
    worked_graph(lgateway)
    store = RecordingExpander(SQLPropertyGraphStore(lreader))
    for question in (WORKED, "Which concepts are connected to agent memory?"):
        store.calls.clear()
        store.walks.clear()
        synth = ScriptedSynthesizer(truthful(0.5))
        answer = planner(lreader, synth, loop_clock, store=store).ask(question, record=False)
        expanded: set[str] = set()
        for ids, exclude in store.calls:
            assert not ids & expanded and exclude == expanded
            expanded |= ids
        walked: set[str] = set()
        for ids, _, exclude in store.walks:
            assert not ids & exclude and walked <= exclude
            walked |= ids
        calls_made = [r for r in answer.rounds if r.decision != "stop-empty"]
        assert len(store.calls) + len(store.walks) == len(calls_made) == synth.calls
        assert all(r.llm_calls == 1 for r in calls_made)
    assert store.walks == [] and store.calls  # the second question is not a learning-order one


def _small_walks(depth: int | None = None, budget: int = 1000) -> Callable[[Reading], WalkOrder | None]:
    def order(reading: Reading) -> WalkOrder | None:
        found = walk_order(reading)
        return None if found is None else WalkOrder(found.direction, found.relations, depth, budget)

    return order


def test_a_walk_cut_by_its_budget_is_partial_until_completed(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """A walk that hits its row budget keeps the answer below 0.80 and says the closure is
    partial; later walks start from its boundary, never from a walked concept, and complete it."""
    ids = chain(lgateway, 10)
    store = RecordingExpander(SQLPropertyGraphStore(lreader))
    answer = planner(
        lreader, OfflineSynthesizer(), loop_clock, store=store, walk_order=_small_walks(budget=4)
    ).ask("What do I need to learn before node9?", record=False)
    assert answer.rounds[0].confidence < 0.8
    assert not answer.abstained and set(members(answer)) == set(ids[:-1]), answer.abstain_reason
    assert answer.to_dict()["closure"] == {"walks": len(store.walks), "partial": False, "open": []}
    assert store.calls == [] and 1 < len(store.walks) <= 4
    walked: set[str] = set()
    for starts, direction, exclude in store.walks:
        assert direction == "needed_before" and not starts & walked and walked <= exclude
        walked |= starts


def test_a_partial_closure_is_never_answered_with_high_confidence(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """A model claiming, at 0.99, the complete closure from a walk cut by its row budget makes a
    claim the evidence cannot settle: refused as a fault, never answered; the closure says it is
    partial. A truthful model at 0.99 says its claim is partial, and is not answered either."""
    chain(lgateway, 40)
    closure = Claim("set", True, members=tuple(f"node{i}" for i in range(39)))
    for synth in (ScriptedSynthesizer([draft(0.99, claim=closure)]), ScriptedSynthesizer(truthful(0.99))):
        answer = planner(lreader, synth, loop_clock, walk_order=_small_walks(budget=2), max_rounds=2).ask(
            "What do I need to learn before node39?", record=False
        )
        assert answer.abstained and answer.confidence < 0.8
        assert answer.to_dict()["closure"]["partial"] is True
    assert answer.rounds[0].verdict.startswith("states a partial answer")
    assert PARTIAL_CLOSURE < 0.8


def test_frontier_never_exceeds_twelve(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """With 30 neighbours, no one-hop expansion call adds or expands more than 12 concepts."""
    leaves = [f"leaf{i:02d}" for i in range(30)]
    build_graph(lgateway, ["hub", *leaves], [(leaf, "hub", "prerequisite") for leaf in leaves])
    store = RecordingExpander(SQLPropertyGraphStore(lreader))
    answer = planner(lreader, ScriptedSynthesizer(cite_all(0.5)), loop_clock, store=store).ask(
        "which concepts are connected to hub?", record=False
    )
    assert all(len(ids) <= 12 for ids, _ in store.calls)
    assert all(len(r.frontier_added) <= 12 for r in answer.rounds)
    assert len(answer.rounds[0].frontier_added) == 12


def test_walks_start_from_at_most_twelve_concepts(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """A walk gathers all 30 needs as evidence, but the next walk starts from at most 12 of them."""
    leaves = [f"leaf{i:02d}" for i in range(30)]
    roots = [f"root{i:02d}" for i in range(30)]
    build_graph(
        lgateway,
        ["hub", *leaves, *roots],
        [(leaf, "hub", "prerequisite") for leaf in leaves]
        + [(root, leaf, "prerequisite") for root, leaf in zip(roots, leaves, strict=True)],
    )
    store = RecordingExpander(SQLPropertyGraphStore(lreader))
    answer = planner(
        lreader, OfflineSynthesizer(), loop_clock, store=store, walk_order=_small_walks(depth=1)
    ).ask("what comes before hub?", record=False)
    assert len(answer.rounds[0].frontier_added) == 30
    assert all(len(ids) <= 12 for ids, _, _ in store.walks) and len(store.walks) >= 2


def test_closure_deeper_than_the_round_limit_is_abstained_on_one_hop_at_a_time(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """With one-hop expansion only (walks off), a needed-before chain seven levels deep cannot be
    fully explored in four rounds, so the loop abstains and names what is unexplored."""
    chain(lgateway, 8)
    answer = planner(lreader, OfflineSynthesizer(), loop_clock, walks=False).ask(
        "What do I need to learn before node7?", record=False
    )
    assert answer.abstained and len(answer.rounds) == 4
    assert answer.abstain_reason is not None and "unexplored" in answer.abstain_reason


def test_closure_deeper_than_the_round_limit_is_completed_by_one_walk(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """The same seven-level chain is gathered by one walk and answered completely in one round."""
    ids = chain(lgateway, 8)
    answer = planner(lreader, OfflineSynthesizer(), loop_clock).ask(
        "What do I need to learn before node7?", record=False
    )
    assert not answer.abstained and len(answer.rounds) == 1, answer.abstain_reason
    assert set(members(answer)) == set(ids[:-1])


def test_unplaced_neighbours_keep_a_concept_unexplored(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """One hop at a time, when only 12 of 30 prerequisites win a place, the answer is not
    accepted until all 30 are in."""
    leaves = [f"leaf{i:02d}" for i in range(30)]
    build_graph(lgateway, ["hub", *leaves], [(leaf, "hub", "prerequisite") for leaf in leaves])
    answer = planner(lreader, OfflineSynthesizer(), loop_clock, walks=False).ask(
        "What are the prerequisites of hub?", record=False
    )
    assert answer.rounds[0].confidence < 0.8
    assert not answer.abstained and set(members(answer)) == set(leaves)


def test_question_without_a_learning_path_is_abstained_on(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """'How does A lead to B' abstains when A and B are linked only by non-learning or reversed edges."""
    build_graph(
        lgateway,
        ["alpha", "beta", "gamma", "delta"],
        [
            ("alpha", "beta", "related"),
            ("beta", "gamma", "part_of"),
            ("delta", "gamma", "prerequisite"),
            ("alpha", "delta", "builds_on"),  # delta comes before alpha and before gamma
        ],
    )
    answer = planner(lreader, OfflineSynthesizer(), loop_clock).ask(
        "How does alpha lead to gamma?", record=False
    )
    assert answer.abstained and answer.cited_concepts == ()


def test_citation_outside_evidence_is_rejected_and_refocused(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """A confident draft claiming an id outside the evidence is a fault: capped below 0.80, and
    the next round reads nothing more for it (no search for a made-up concept); a second such
    draft ends the question in an abstention that says so, after two model calls."""
    chain(lgateway, 4)
    synth = ScriptedSynthesizer([draft(0.95, claim=Claim("set", True, members=("ghost",)))])
    answer = planner(lreader, synth, loop_clock).ask("node0?", record=False)
    first, second = answer.rounds
    assert first.confidence < 0.8 and "outside the evidence: ghost" in first.verdict
    assert first.decision == "continue" and second.decision == "abstain" and synth.calls == 2
    assert second.frontier_added == () and "ghost" not in second.focus.concept_ids
    assert answer.abstained and answer.abstain_reason is not None and FAULTY in answer.abstain_reason


def test_error_draft_is_never_an_answer(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """A draft marked as malformed model output is rejected even at high confidence."""
    chain(lgateway, 3)
    synth = ScriptedSynthesizer([draft(0.99, concept_ids=["node0"], error="not JSON")])
    answer = planner(lreader, synth, loop_clock).ask("node0?", record=False)
    assert answer.abstained and "not JSON" in answer.rounds[0].verdict


def test_focus_from_draft_steers_the_next_frontier(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """A concept named in next_focus wins the next free place over candidates that rank higher by id."""
    leaves = [f"leaf{i:02d}" for i in range(20)]
    build_graph(lgateway, ["hub", *leaves], [(leaf, "hub", "prerequisite") for leaf in leaves])
    store = RecordingExpander(SQLPropertyGraphStore(lreader))
    synth = ScriptedSynthesizer([draft(0.3, next_focus=Focus(concept_ids=("leaf11",))), draft(0.3)])
    answer = planner(lreader, synth, loop_clock, store=store, frontier_cap=1, max_rounds=2).ask(
        "hub?", record=False
    )
    assert answer.rounds[0].frontier_added == ("leaf00",)
    assert answer.rounds[1].frontier_added == ("leaf11",)


def test_answer_is_recorded_with_grounding(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """An answer is stored through the gateway with its payload and grounding evidence."""
    worked_graph(lgateway)
    answer = planner(lreader, OfflineSynthesizer(), loop_clock, gateway=lgateway).ask(WORKED)
    stored = lreader.answer(answer.answer_id)
    assert stored.content["payload"]["answer_id"] == answer.answer_id
    assert stored.content["abstained"] is False
    assert stored.grounding.confidence == answer.confidence
    assert stored.grounding.source == "offline:graph-rules-v4:prompt-offline-rules-5"
    assert stored.grounding.evidence["edge_version_ids"] == answer.edge_version_ids()


def test_abstention_is_recorded_too(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """An abstention is stored with its reason as the grounding reason."""
    chain(lgateway, 2)
    answer = planner(lreader, ScriptedSynthesizer([draft(0.1)]), loop_clock, gateway=lgateway).ask("zzz?")
    assert lreader.answer(answer.answer_id).grounding.reason == NO_SEED


def test_record_without_gateway_is_refused(lreader: GraphReader, loop_clock: ManualClock) -> None:
    """record=True without a gateway is a clear input error."""
    with pytest.raises(InputError, match="gateway"):
        planner(lreader, OfflineSynthesizer(), loop_clock).ask("x?")


def test_reads_as_of_the_requested_time(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """An edge invalidated later is used when asking as of before, and not now."""
    worked_graph(lgateway)
    before = loop_clock()
    lgateway.invalidate_edge("rag", "prompting_fundamentals", "builds_on", grounding=grounding("revised"))
    p = planner(lreader, OfflineSynthesizer(), loop_clock)
    then = p.ask(WORKED, as_of=before, known_at=before, record=False)
    now = p.ask(WORKED, record=False)
    assert "prompting_fundamentals" in members(then)
    assert "prompting_fundamentals" not in members(now)


def test_logs_one_event_per_round_and_per_answer(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """Each round logs 'loop.round' and the question logs 'loop.answer'."""
    worked_graph(lgateway)
    with capture_logs() as logs:
        answer = planner(lreader, OfflineSynthesizer(), loop_clock).ask(WORKED, record=False)
    rounds = [e for e in logs if e["event"] == "loop.round"]
    assert len(rounds) == len(answer.rounds)
    assert {
        "question_id",
        "round",
        "frontier_size",
        "edges_added",
        "tokens",
        "latency_ms",
        "confidence",
        "decision",
    } <= set(rounds[0])
    assert [e["event"] for e in logs].count("loop.answer") == 1


def test_answer_dict_is_complete(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """The answer's JSON names cited concepts, the as-of point and a trace per round."""
    worked_graph(lgateway)
    d = planner(lreader, OfflineSynthesizer(), loop_clock).ask(WORKED, record=False).to_dict()
    assert d["schema"] == "answer/1" and d["as_of"]["valid_at"] and d["rounds"]
    assert all(c["name"] for c in d["cited_concepts"])
    assert set(d["cited_edges"]) <= {e["edge_id"] for e in d["evidence"]["edges"]}


class DownSynthesizer:
    """A synthesizer whose model is unreachable."""

    info = OfflineSynthesizer().info

    def synthesize(self, request: object) -> object:
        raise LLMUnavailable("model down (HTTP 503)", status=503, attempts=3)


def test_unavailable_model_abstains_with_the_reason(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """When the model is unavailable, ask() abstains naming the failure instead of raising."""
    worked_graph(lgateway)
    answer = planner(lreader, DownSynthesizer(), loop_clock, gateway=lgateway).ask(WORKED)
    assert answer.abstained and "unavailable" in (answer.abstain_reason or "")
    assert len(answer.rounds) == 1 and answer.rounds[0].decision == "abstain"


def test_oversized_question_is_refused(lreader: GraphReader, loop_clock: ManualClock) -> None:
    """A question longer than MAX_QUESTION_CHARS is refused with InputError and no model call."""
    synth = ScriptedSynthesizer([draft(0.99)])
    with pytest.raises(InputError):
        planner(lreader, synth, loop_clock).ask("what before rag? " + "x" * MAX_QUESTION_CHARS, record=False)
    assert synth.calls == 0


def test_a_path_of_length_eight_is_found_in_one_walk(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """How node0 leads to node8 (distance 8, with a longer detour beside it) is answered in one
    round with the shortest path's edges cited."""
    ids = chain(lgateway, 9)
    build_graph(
        lgateway,
        ["detour1", "detour2"],
        [("node0", "detour1", "prerequisite"), ("detour1", "detour2", "prerequisite")],
    )
    store = RecordingExpander(SQLPropertyGraphStore(lreader))
    answer = planner(lreader, OfflineSynthesizer(), loop_clock, store=store).ask(
        "How does node0 lead to node8?", record=False
    )
    assert not answer.abstained and len(answer.rounds) == 1 and len(store.walks) == 1
    assert list(members(answer)) == ids and len(answer.cited_edges) == 8
    assert set(answer.cited_concept_ids) == set(ids)


def test_answer_evidence_carries_full_grounding_fetched_in_one_statement(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock, sqlite_engine: Engine
) -> None:
    """The walk reads thin rows; the answer's evidence holds the full records (grounding and
    stamps) of every concept and edge it returns, fetched by version id in one statement."""
    worked_graph(lgateway)
    seen: list[str] = []

    def record(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        seen.append(statement)

    sa.event.listen(sqlite_engine, "before_cursor_execute", record)
    try:
        answer = planner(lreader, OfflineSynthesizer(), loop_clock).ask(WORKED, record=False)
    finally:
        sa.event.remove(sqlite_engine, "before_cursor_execute", record)
    ev = answer.evidence
    assert all(isinstance(c, Concept) for c in ev.concepts.values())
    assert all(isinstance(e, Edge) for e in ev.edges.values())
    full_edges, full_concepts = lreader.records(
        edge_versions=[e.version_id for e in ev.edges.values()],
        concept_versions=[c.version_id for c in ev.concepts.values()],
    )
    assert sorted(ev.edges.values(), key=lambda e: e.version_id) == sorted(
        full_edges.values(), key=lambda e: e.version_id
    )
    assert {c.version_id: c for c in ev.concepts.values()} == full_concepts
    payload = answer.to_dict()["evidence"]
    assert all(e["grounding"]["reason"] and e["recorded_at"] for e in payload["edges"])
    # Neighbourhood reads select no grounding text; exactly one statement reads evidence JSON.
    grounding_reads = [s for s in seen if "evidence" in s and "UNION ALL" in s]
    assert len(grounding_reads) == 1, grounding_reads


def test_a_scripted_synthesizer_that_keeps_no_requests_still_follows_its_script(
    reader: GraphReader, gateway: WriteGateway
) -> None:
    """``keep_requests=False`` (the benchmark's: its loop RSS must be the loop's) counts calls and
    steps through the script like the default, and keeps nothing."""
    build_graph(gateway, ["a", "b", "c"], [("a", "b", "prerequisite"), ("b", "c", "prerequisite")])
    kept = ScriptedSynthesizer([draft(0.5), draft(0.6)])
    lean = ScriptedSynthesizer([draft(0.5), draft(0.6)], keep_requests=False)
    answers = [
        Planner(reader, s, walks=False).ask("What must I master before c?", record=False)
        for s in (kept, lean)
    ]
    assert kept.calls == lean.calls == len(kept.requests) >= 2 and lean.requests == []
    confidences = [[r.confidence for r in a.rounds] for a in answers]
    assert confidences[0] == confidences[1] and confidences[0][:2] == [0.5, 0.6]


def test_a_question_reads_through_one_connection(
    lgateway: WriteGateway, lreader: GraphReader, loop_clock: ManualClock
) -> None:
    """Every read of one question (name index, seeds, expansions, walks, grounding) goes through
    one pooled connection: one checkout per question, however many rounds."""
    worked_graph(lgateway)
    engine = lreader.engine
    seen: list[int] = []

    def checkout(*_args: object) -> None:
        seen.append(1)

    p = planner(lreader, OfflineSynthesizer(), loop_clock)
    p.ask(WORKED, record=False)  # warm the caches
    sa.event.listen(engine, "checkout", checkout)
    try:
        answer = p.ask(WORKED, record=False)
    finally:
        sa.event.remove(engine, "checkout", checkout)
    assert answer.rounds and len(seen) == 1


def test_a_name_that_came_later_is_not_read_as_a_shorter_name_in_force_then(sqlite_engine: Engine) -> None:
    """ "In January 2025, what was LLM router built on?" when "LLM router" entered the graph in
    June 2025: "LLM" alone (a concept then) is not what the question names, so it abstains
    instead of answering for "LLM"; the same question about a concept in force then is answered."""
    clock = ManualClock(now=datetime(2026, 1, 1, tzinfo=UTC))
    gateway, reader = WriteGateway(sqlite_engine, clock=clock), GraphReader(sqlite_engine, clock=clock)
    build_graph(
        gateway,
        [("llm", "Large language models", ["LLM"]), "transformers"],
        [("llm", "transformers", "builds_on")],
        valid_at=datetime(2024, 1, 1, tzinfo=UTC),
    )
    build_graph(
        gateway,
        [("llm_router", "LLM router")],
        [("llm_router", "llm", "builds_on")],
        valid_at=datetime(2025, 6, 1, tzinfo=UTC),
    )
    p = planner(reader, OfflineSynthesizer(), clock)
    then = p.ask("In January 2025, what was LLM router built on?", record=False)
    assert (
        then.abstained
        and "'LLM router'" in (then.abstain_reason or "")
        and "2025-01-01" in (then.abstain_reason or "")
    )
    assert members(p.ask("In January 2025, what was LLM built on?", record=False)) == ("transformers",)
    assert members(p.ask("What is LLM router built on?", record=False)) == ("llm",)
