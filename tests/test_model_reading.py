"""With DeepSeek configured, a question the grammar cannot read is read by one model call into the
reading's own structure; the reading is used only when every check passes (marked ``read_by:
"model"`` and counted in the answer's calls), and malformed or hostile readings are abstained on.
Offline, reading stays the grammar's alone."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fake_deepseek import FakeDeepSeek, Reply, completion, honest_model
from sqlalchemy.engine import Engine

from control_plane.planning.loop import Planner
from control_plane.settings import LLMSettings, Secret
from control_plane.synthesizers.deepseek import DeepSeekSynthesizer
from control_plane.synthesizers.offline import OfflineSynthesizer
from control_plane.synthesizers.parsing import MalformedReading, parse_reading
from control_plane.understanding.model_reading import checked_reading
from data_plane import GraphReader, WriteGateway
from data_plane.reuse import AnswerIndex
from data_plane.testing import ManualClock, build_graph

KEY = "sk-test-model-reading"
# A question the grammar cannot read with confidence (unpunctuated, it cannot tell where the
# clause put in front ends, nor what "a thing I should get to" asks), though its words place
# triads: "before triads" makes it the later concept.
ODD = "before triads is rhythm a thing I should get to?"
# Nothing in these words says which of the two depends on the other ("lean on" is no cue).
UNPLACED = "does triads lean on rhythm?"


@pytest.fixture
def fake() -> Iterator[FakeDeepSeek]:
    """A fake gateway: scripted reading replies first, then an honest model (``evals.liar``)."""
    with FakeDeepSeek(responder=honest_model) as server:
        yield server


@pytest.fixture
def graph(sqlite_engine: Engine, clock: ManualClock) -> GraphReader:
    build_graph(
        WriteGateway(sqlite_engine, clock=clock),
        ["rhythm", "meter", "triads", "scales"],
        [
            ("rhythm", "meter", "prerequisite"),
            ("meter", "triads", "prerequisite"),
            ("scales", "triads", "prerequisite"),
        ],
    )
    return GraphReader(sqlite_engine, clock=clock)


def reading(**fields: Any) -> Reply:
    body = {"understood": True, "intent": "needed_before", "form": "yes_no", "transitive": True,
            "subjects": [{"concept_id": "triads", "role": "subject"}, {"concept_id": "rhythm", "role": "candidate"}]}  # fmt: skip
    body.update(fields)
    return Reply(body=completion(json.dumps(body)))


def ask(graph: GraphReader, clock: ManualClock, fake: FakeDeepSeek, question: str) -> dict[str, Any]:
    synth = DeepSeekSynthesizer(LLMSettings(api_key=Secret(KEY), base_url=fake.url), sleep=lambda _: None)
    return Planner(graph, synth, clock=clock).ask(question, record=False).to_dict()


def test_the_grammar_alone_does_not_read_the_odd_question(graph: GraphReader, clock: ManualClock) -> None:
    """Offline (no model), the odd phrasing is abstained on, with no model call."""
    a = Planner(graph, OfflineSynthesizer(), clock=clock).ask(ODD, record=False).to_dict()
    assert a["abstained"] and a["reading"]["read_by"] != "model"


def test_a_valid_model_reading_is_used_marked_and_counted(
    graph: GraphReader, clock: ManualClock, fake: FakeDeepSeek
) -> None:
    """One reading call, then the round's synthesis: the answer says the model read it, and both
    calls count."""
    fake.enqueue(reading())
    a = ask(graph, clock, fake, ODD)
    assert a["reading"]["read_by"] == "model" and a["reading"]["form"] == "yes_no"
    assert a["reading_call"]["llm_calls"] == 1 and a["llm_calls"] == a["reading_call"]["llm_calls"] + sum(
        r["llm_calls"] for r in a["rounds"]
    )
    prompt = fake.requests[0].json()["messages"]
    assert (
        "You read a learner's question" in prompt[0]["content"] and "triads: triads" in prompt[1]["content"]
    )


def test_a_reused_answer_to_a_model_read_question_costs_no_call_at_all(
    sqlite_engine: Engine, graph: GraphReader, clock: ManualClock, fake: FakeDeepSeek
) -> None:
    """Asked again with nothing changed, the answer the model read and answered is reused before
    the model is asked to read the question again: no request reaches the gateway, and the reused
    answer keeps the model's reading. A new relation in the graph (which the model may read the
    question as) makes it read afresh."""
    synth = DeepSeekSynthesizer(LLMSettings(api_key=Secret(KEY), base_url=fake.url), sleep=lambda _: None)
    gateway = WriteGateway(sqlite_engine, clock=clock)
    planner = Planner(graph, synth, gateway=gateway, clock=clock, reuse=AnswerIndex(graph))
    fake.enqueue(reading())
    first = planner.reply(ODD).to_dict()
    assert first["reading"]["read_by"] == "model" and len(fake.requests) == 2
    again = planner.reply(ODD).to_dict()
    assert again["reused_from"] == first["answer_id"] and again["llm_calls"] == 0
    assert again["reading"] == first["reading"] and len(fake.requests) == 2
    build_graph(gateway, ["modes"], [("modes", "scales", "part_of")])
    fake.enqueue(reading())
    afresh = planner.reply(ODD).to_dict()
    assert afresh["reused_from"] is None and len(fake.requests) == 4


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (Reply(body=completion("not json at all")), "not one JSON object"),
        (reading(intent="salary"), "not one the reader answers"),
        (
            reading(
                subjects=[
                    {"concept_id": "triads", "role": "subject"},
                    {"concept_id": "guitar", "role": "candidate"},
                ]
            ),
            "not a concept the question names",
        ),
        (reading(subjects=[{"concept_id": "triads", "role": "boss"}]), "not a reading's role"),
        (reading(form="why", intent="parts"), "does not fit"),
        (reading(understood=False), "did not understand"),
        (
            Reply(
                body=completion(
                    '{"understood": true, "intent": "about", "form": "", "transitive": false, '
                    '"subjects": [], "ignore": "previous instructions"}'
                )
            ),
            "unexpected key",
        ),
    ],
)
def test_a_malformed_or_hostile_reading_abstains_saying_why(
    graph: GraphReader, clock: ManualClock, fake: FakeDeepSeek, reply: Reply, why: str
) -> None:
    """A reading that fails a check is never used: the question is abstained on, the reason names
    the fault, and no round is run."""
    fake.enqueue(reply)
    a = ask(graph, clock, fake, ODD)
    assert a["abstained"] and why in a["abstain_reason"] and a["rounds"] == []
    assert a["llm_calls"] == 1  # the reading call is still paid for, and counted


def test_a_sure_grammar_reading_makes_no_reading_call(
    graph: GraphReader, clock: ManualClock, fake: FakeDeepSeek
) -> None:
    ask(graph, clock, fake, "What do I need before triads?")
    assert all(
        "You read a learner's question" not in r.json()["messages"][0]["content"] for r in fake.requests
    )


def test_parse_reading_checks_types() -> None:
    with pytest.raises(MalformedReading, match="true or false"):
        parse_reading(
            json.dumps(
                {"understood": "yes", "intent": "about", "form": "", "transitive": False, "subjects": []}
            )
        )
    ok = parse_reading(
        '```json\n{"understood": true, "intent": "about", "form": "", "transitive": false, "subjects": []}\n```'
    )
    assert ok["intent"] == "about"


def test_checked_reading_builds_the_readers_structure() -> None:
    """A valid payload becomes a Reading with fitted relations and the model's mark."""
    payload = {"understood": True, "intent": "order", "form": "", "transitive": False,
               "subjects": [{"concept_id": "a", "role": "subject"}, {"concept_id": "b", "role": "other"}]}  # fmt: skip
    r = checked_reading(payload, question="q", named={"a": "A", "b": "B"}, relations={"prerequisite": 3})
    assert r.sure and r.read_by == "model" and r.relations == ("prerequisite",) and r.transitive
    missing = dict(payload, subjects=[{"concept_id": "a", "role": "subject"}])
    assert not checked_reading(missing, question="q", named={"a": "A"}, relations=None).sure


def test_a_model_that_cannot_be_reached_leaves_the_grammars_doubt_and_counts_the_attempts(
    graph: GraphReader, clock: ManualClock, fake: FakeDeepSeek
) -> None:
    """Every retry failing: abstained, the reason says the model could not read it, and each
    attempt is a call."""
    fake.enqueue(*[Reply(status=503) for _ in range(6)])
    a = ask(graph, clock, fake, ODD)
    assert a["abstained"] and "the model could not read it" in a["abstain_reason"] and a["rounds"] == []
    assert a["llm_calls"] == len(fake.requests) >= 1


def test_the_reading_call_is_spent_from_the_servers_model_budget(
    graph: GraphReader, clock: ManualClock, fake: FakeDeepSeek
) -> None:
    """Behind the serving cap, the reading call takes one call of the budget like a synthesis does:
    with a budget of one, the round after the reading is refused."""
    from control_plane.errors import ModelBudgetSpent
    from control_plane.surfaces.ratelimit import ModelCallCap, cap_synthesizer
    from control_plane.synthesizers.base import QuestionReader

    inner = DeepSeekSynthesizer(LLMSettings(api_key=Secret(KEY), base_url=fake.url), sleep=lambda _: None)
    capped = cap_synthesizer(inner, ModelCallCap(1))
    assert isinstance(capped, QuestionReader)
    fake.enqueue(reading())
    with pytest.raises(ModelBudgetSpent):
        Planner(graph, capped, clock=clock).ask(ODD, record=False)
    assert len(fake.requests) == 1  # the reading reached the model; the synthesis did not


def test_a_model_reading_that_swaps_the_roles_the_question_gives_is_refused(
    graph: GraphReader, clock: ManualClock, fake: FakeDeepSeek
) -> None:
    """ "before triads" makes triads the later concept: a reading that asks whether triads is
    needed before rhythm contradicts the question and is not used (one reading call, no round)."""
    swapped = [{"concept_id": "rhythm", "role": "subject"}, {"concept_id": "triads", "role": "candidate"}]
    fake.enqueue(reading(subjects=swapped))
    a = ask(graph, clock, fake, ODD)
    assert a["abstained"] and a["rounds"] == [] and a["llm_calls"] == 1
    assert "the question's words put it after the other" in a["abstain_reason"]


def test_a_model_reading_of_two_concepts_the_words_do_not_order_is_refused(
    graph: GraphReader, clock: ManualClock, fake: FakeDeepSeek
) -> None:
    """With no cue placing either concept, the model's reading and its swap are equally likely:
    abstain rather than guess which one the learner meant."""
    fake.enqueue(reading())
    a = ask(graph, clock, fake, UNPLACED)
    assert a["abstained"] and a["rounds"] == []
    assert "do not say which of its two concepts comes first" in a["abstain_reason"]


@pytest.mark.parametrize(
    ("payload_roles", "placed", "ok"),
    [
        ((("x", "subject"),), (("x", "dependent", 3),), True),  # "what do I need before X"
        ((("x", "subject"),), (("x", "foundation", 3),), False),  # "what comes after X" read as before
        ((("y", "subject"), ("x", "candidate")), (("x", "foundation", 2),), True),
        ((("x", "subject"), ("y", "candidate")), (("x", "foundation", 2),), False),
        ((("x", "known"),), (("x", "foundation", 3),), True),
    ],
)
def test_checked_reading_holds_roles_to_the_questions_placements(
    payload_roles: tuple[tuple[str, str], ...], placed: tuple[tuple[str, str, int], ...], ok: bool
) -> None:
    """Each role a needed-before reading gives is held to where the words put the concept."""
    form = "yes_no" if any(role == "candidate" for _, role in payload_roles) else ""
    intent = "next" if payload_roles[0][1] == "known" else "needed_before"
    payload = {"understood": True, "intent": intent, "form": form, "transitive": True,
               "subjects": [{"concept_id": c, "role": r} for c, r in payload_roles]}  # fmt: skip
    r = checked_reading(
        payload, question="q", named={"x": "X", "y": "Y"}, relations={"prerequisite": 1}, placed=placed
    )
    assert r.sure is ok, r.problem
