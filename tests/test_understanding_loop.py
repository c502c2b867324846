"""The reading in the loop: relation vocabulary fitted to the graph, lessons as of a time, time
words, the verifier's direction check, and abstentions for readings it is not sure of."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from control_plane.planning.loop import UNSURE, Planner
from control_plane.planning.verify import verify
from control_plane.synthesizers.base import Claim
from control_plane.synthesizers.offline import OfflineSynthesizer
from control_plane.testing import ScriptedSynthesizer, draft, make_evidence, make_request
from control_plane.understanding.interpretation import Mention, interpret
from data_plane import GraphReader, WriteGateway, schema
from data_plane.testing import ManualClock, build_graph, grounding

T0 = datetime(2024, 1, 1, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(now=T0)


@pytest.fixture
def gw(sqlite_engine: Engine, clock: ManualClock) -> WriteGateway:
    return WriteGateway(sqlite_engine, clock=clock)


@pytest.fixture
def rd(sqlite_engine: Engine, clock: ManualClock) -> GraphReader:
    return GraphReader(sqlite_engine, clock=clock)


def prereq_map(gw: WriteGateway) -> None:
    """A prerequisite-only map: algebra → calculus → {optimisation, physics}; optimisation → ml."""
    build_graph(
        gw,
        ["algebra", "calculus", "optimisation", "physics", ("ml", "Machine learning", ["ML"])],
        [
            ("algebra", "calculus", "prerequisite"),
            ("calculus", "optimisation", "prerequisite"),
            ("calculus", "physics", "prerequisite"),
            ("optimisation", "ml", "prerequisite"),
        ],
    )


def ask(rd: GraphReader, clock: ManualClock, question: str, **kw: object) -> dict[str, object]:
    return Planner(rd, OfflineSynthesizer(), clock=clock).ask(question, record=False, **kw).to_dict()  # type: ignore[arg-type]


def test_builds_on_words_use_prerequisite_edges_and_say_so(
    gw: WriteGateway, rd: GraphReader, clock: ManualClock
) -> None:
    """On a prerequisite-only graph, 'which concepts build directly on X' lists X's dependents."""
    prereq_map(gw)
    a = ask(rd, clock, "Which concepts build directly on calculus?")
    assert not a["abstained"] and a["confidence"] >= 0.8
    assert set(a["result"]["members"]) == {"optimisation", "physics"}
    assert "prerequisite edges" in str(a["text"])
    assert a["reading"]["relations"] == ["prerequisite"]  # type: ignore[index]


def test_depends_on_and_unlocks_on_a_prerequisite_only_graph(
    gw: WriteGateway, rd: GraphReader, clock: ManualClock
) -> None:
    """'What does X depend on' and 'what does X unlock' follow prerequisite edges each way."""
    prereq_map(gw)
    on = ask(rd, clock, "Which concepts does optimisation directly depend on?")
    assert set(on["result"]["members"]) == {"calculus"}  # type: ignore[union-attr]
    unlocks = ask(rd, clock, "What does calculus unlock?")
    assert set(unlocks["result"]["members"]) == {"optimisation", "physics"}  # type: ignore[union-attr]
    after = ask(rd, clock, "Which concepts have algebra as a prerequisite?")
    assert set(after["result"]["members"]) == {"calculus"}  # type: ignore[union-attr]
    assert str(after["text"]).startswith("Concepts that have algebra as a prerequisite: calculus")


def test_an_absent_relation_is_never_answered_none(
    gw: WriteGateway, rd: GraphReader, clock: ManualClock
) -> None:
    """'What is X part of?' on a graph without part_of edges abstains instead of saying 'none'."""
    prereq_map(gw)
    a = ask(rd, clock, "What is calculus part of?")
    assert a["abstained"] and "none" not in str(a["text"]).lower()


def test_lessons_come_from_active_links_as_of_the_asked_time(
    gw: WriteGateway, rd: GraphReader, clock: ManualClock
) -> None:
    """A lesson linked in 2024 and unlinked in 2025 covers X as of mid-2024, not as of 2026."""
    prereq_map(gw)
    gw.link_lesson("L1", "calculus", grounding=grounding(), title="Calculus I", valid_at=T0)
    gw.link_lesson("L0", "algebra", grounding=grounding(), title="Algebra", valid_at=T0)
    gw.unlink_lesson("L1", "calculus", grounding=grounding(), invalid_at=datetime(2025, 1, 1, tzinfo=UTC))
    clock.set(datetime(2026, 1, 1, tzinfo=UTC))
    then = ask(rd, clock, "Which lessons cover calculus?", as_of=datetime(2024, 6, 1, tzinfo=UTC))
    assert then["cited_lessons"] == ["L1"] and "Calculus I" in str(then["text"])
    links = then["evidence"]["lessons"]  # type: ignore[index]
    assert [x["lesson_id"] for x in links] == ["L1"]
    now = ask(rd, clock, "Which lessons cover calculus?")
    assert now["cited_lessons"] == [] and "No active lesson" in str(now["text"])
    gw.link_lesson("L2", "calculus", grounding=grounding(), title="Calculus for optimisation")
    gw.link_lesson("L2", "optimisation", grounding=grounding())
    before = ask(rd, clock, "Which lessons should I take before optimisation?")
    assert before["cited_lessons"] == ["L0"]  # L2 also covers optimisation itself


def test_time_words_in_the_question_set_valid_time_unless_as_of_is_given(
    gw: WriteGateway, rd: GraphReader, clock: ManualClock
) -> None:
    """'Back in 2024' reads the 2024 graph; an explicit as_of wins and the answer says so."""
    prereq_map(gw)
    clock.set(datetime(2025, 6, 1, tzinfo=UTC))
    gw.invalidate_edge("calculus", "physics", "prerequisite", grounding=grounding("moved"))
    clock.set(datetime(2026, 1, 1, tzinfo=UTC))
    old = ask(rd, clock, "Back in mid-2024, what did calculus unlock?")
    assert set(old["result"]["members"]) == {"optimisation", "physics"}  # type: ignore[union-attr]
    assert "mid" in str(old["text"]) and old["as_of"]["valid_at"].startswith("2024-07-01")  # type: ignore[index]
    explicit = ask(
        rd, clock, "Back in mid-2024, what did calculus unlock?", as_of=datetime(2026, 1, 1, tzinfo=UTC)
    )
    assert set(explicit["result"]["members"]) == {"optimisation"}  # type: ignore[union-attr]
    assert "--as-of" in str(explicit["text"])


def test_unsure_readings_abstain_with_phrasings(
    gw: WriteGateway, rd: GraphReader, clock: ManualClock
) -> None:
    """Conflicting readings abstain without a model call, saying how it read and what to ask."""
    prereq_map(gw)
    synth = ScriptedSynthesizer([draft(0.95, concept_ids=["algebra"])])
    a = Planner(rd, synth, clock=clock).ask(
        "What are the prerequisites of calculus and what requires calculus?", record=False
    )
    assert a.abstained and a.abstain_reason is not None and a.abstain_reason.startswith(UNSURE)
    assert "read as" in a.abstain_reason and "Try asking" in a.abstain_reason and synth.calls == 0


def test_about_stays_an_answer(gw: WriteGateway, rd: GraphReader, clock: ManualClock) -> None:
    """'What is X' is answered (about), not abstained on as unsure."""
    prereq_map(gw)
    a = ask(rd, clock, "What is calculus?")
    assert a["reading"]["intent"] == "about" and a["reading"]["sure"]  # type: ignore[index]


@pytest.mark.parametrize("text", ["Was sind die Voraussetzungen für calculus?", "calculus is great."])
def test_bad_input_abstains_and_writes_nothing(
    gw: WriteGateway, rd: GraphReader, clock: ManualClock, sqlite_engine: Engine, text: str
) -> None:
    """Non-English or non-question text abstains with a reason; interpretation writes nothing."""
    prereq_map(gw)

    def versions() -> list[int]:
        with sqlite_engine.connect() as conn:
            return [
                conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one()
                for t in schema.metadata.sorted_tables
            ]

    before = versions()
    a = Planner(rd, OfflineSynthesizer(), clock=clock).ask(text, record=False)
    assert a.abstained and a.abstain_reason and UNSURE in a.abstain_reason
    assert versions() == before


def test_verifier_rejects_an_answer_in_the_wrong_direction() -> None:
    """An answer to 'what has X as a prerequisite' that claims X's own prerequisite is a fault."""
    ev = make_evidence(
        ["a", "x", "b"], [("a", "x", "prerequisite"), ("x", "b", "prerequisite")], seeds=("x",)
    )
    q = "Which concepts have x as a prerequisite?"
    reading = interpret(q, [Mention("x", 3, 4)], now=T0 + timedelta(days=1))
    assert reading.intent == "dependents"
    req = make_request(q, ev)
    wrong = draft(0.95, claim=Claim("set", True, members=("a",)))
    right = draft(0.95, claim=Claim("set", True, members=("b",)))
    verdict = verify(wrong, req, reading=reading)
    assert not verdict.accepted and verdict.fault and "a" in verdict.reason
    assert verify(right, req, reading=reading).accepted


def test_the_deepseek_prompt_carries_the_reading() -> None:
    """The user message includes the reading as JSON, so a model answers the interpreted question."""
    from control_plane.synthesizers.prompts import build_messages
    from control_plane.testing import make_request

    ev = make_evidence(["a", "x"], [("a", "x", "prerequisite")], seeds=("x",))
    q = "Which concepts have x as a prerequisite?"
    reading = interpret(q, [Mention("x", 3, 4)], now=T0)
    request = replace(make_request(q, ev), reading=reading)
    user = build_messages(request)[1]["content"]
    assert "How the question was read" in user and '"intent": "dependents"' in user


def test_study_plan_layers_what_is_needed_minus_what_is_known() -> None:
    """A study plan lists the needed-before closure in learning order, leaving out what is known."""
    from control_plane.testing import make_request

    ev = make_evidence(
        ["a", "b", "c", "k", "x"],
        [
            ("a", "b", "prerequisite"),
            ("b", "x", "prerequisite"),
            ("c", "x", "prerequisite"),
            ("k", "c", "prerequisite"),
        ],
        seeds=("x", "k"),
    )
    q = "Make me a study plan for x, I already know k"
    d = OfflineSynthesizer().synthesize(make_request(q, ev))
    assert d.result is not None and set(d.result.members) == {"a", "b", "c"} and d.confidence >= 0.8
    assert d.answer.index("1. a, c") < d.answer.index("2. b") < d.answer.index("then x")
