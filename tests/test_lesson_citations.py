"""Lessons through DeepSeek: the prompt shows the lesson links a lesson question read (both
evidence forms), the lessons claim's ``lesson_link_ids`` become the answer's cited lessons, and
the verifier refuses lesson links that do not answer the reading."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from fake_deepseek import FakeDeepSeek, Reply, claim_reply
from sqlalchemy.engine import Engine

from control_plane.planning.loop import Planner
from control_plane.settings import LLMSettings, Secret
from control_plane.synthesizers.base import Usage
from control_plane.synthesizers.deepseek import DeepSeekSynthesizer
from control_plane.synthesizers.parsing import parse_draft
from control_plane.synthesizers.prompts import closure_evidence
from data_plane import GraphReader, WriteGateway
from data_plane.testing import ManualClock, build_graph, grounding

T0 = datetime(2024, 1, 1, tzinfo=UTC)
KEY = "sk-test-0123456789abcdef"


@pytest.fixture
def fake() -> Iterator[FakeDeepSeek]:
    with FakeDeepSeek() as server:
        yield server


@pytest.fixture
def graph(sqlite_engine: Engine) -> tuple[GraphReader, ManualClock]:
    """algebra → calculus → optimisation; L0 covers algebra, L1 calculus, L2 optimisation."""
    clock = ManualClock(now=T0)
    gw = WriteGateway(sqlite_engine, clock=clock)
    build_graph(
        gw,
        ["algebra", "calculus", "optimisation"],
        [("algebra", "calculus", "prerequisite"), ("calculus", "optimisation", "prerequisite")],
    )
    for lesson, concept in (("L0", "algebra"), ("L1", "calculus"), ("L2", "optimisation")):
        gw.link_lesson(lesson, concept, grounding=grounding(), title=f"Lesson {lesson}")
    return GraphReader(sqlite_engine, clock=clock), clock


def _reply(links: list[str], confidence: float = 0.9) -> Reply:
    return claim_reply({"lesson_link_ids": links, "complete": True}, confidence=confidence)


def _link(reader: GraphReader, lesson: str, concept: str) -> str:
    (version, _), *_ = [v for v in reader.lesson_links([concept]) if v[0].key == (lesson, concept)]
    return f"l{version.stamp.version_id}"


def _ask(reader: GraphReader, clock: ManualClock, fake: FakeDeepSeek, question: str) -> dict[str, object]:
    synth = DeepSeekSynthesizer(LLMSettings(api_key=Secret(KEY), base_url=fake.url), sleep=lambda _: None)
    return Planner(reader, synth, clock=clock).ask(question, record=False).to_dict()


def test_a_cited_lesson_link_becomes_the_answers_cited_lesson(
    graph: tuple[GraphReader, ManualClock], fake: FakeDeepSeek
) -> None:
    """The prompt lists the lesson links read for the question, and the reply's link id is the
    answer's cited lesson."""
    reader, clock = graph
    ref = _link(reader, "L1", "calculus")
    fake.enqueue(_reply([ref]))
    a = _ask(reader, clock, fake, "Which lessons cover calculus?")
    assert not a["abstained"] and a["cited_lessons"] == ["L1"]
    prompt = fake.requests[-1].json()["messages"][1]["content"]
    assert f"{ref} | L1" in prompt and "lesson_link_ids" in prompt


@pytest.mark.parametrize(
    ("question", "lesson", "concept"),
    [
        ("Which lessons cover calculus?", "L0", "algebra"),  # a lesson of another concept
        ("Which lessons should I take before optimisation?", "L2", "optimisation"),  # X's own lesson
    ],
)
def test_a_lesson_link_that_does_not_answer_the_reading_is_refused(
    graph: tuple[GraphReader, ManualClock], fake: FakeDeepSeek, question: str, lesson: str, concept: str
) -> None:
    """Citing a lesson of the wrong concept is not an answer at any confidence: a fault, twice."""
    reader, clock = graph
    ref = _link(reader, lesson, concept)
    fake.enqueue(*[_reply([ref], confidence=0.95)] * 4)
    a = _ask(reader, clock, fake, question)
    assert a["abstained"] and a["cited_lessons"] == [] and len(fake.requests) == 2
    verdicts = [r["verdict"] for r in a["rounds"]]
    assert all(ref in v and ("do not answer it" in v or "outside the evidence" in v) for v in verdicts)


def test_the_compact_closure_form_lists_lesson_links(graph: tuple[GraphReader, ManualClock]) -> None:
    """Big closures go to the model in the compact form: lesson links are in it too."""
    from control_plane.evidence import EvidenceGraph, LessonLink

    reader, _ = graph
    ev: EvidenceGraph[object, object] = EvidenceGraph()  # type: ignore[type-var]
    for version, title in reader.lesson_links(["calculus"]):
        ev.add_lesson_link(LessonLink(version.key[0], title, version.key[1], version))
    text = closure_evidence(ev)
    assert "LESSON LINKS" in text and f"{_link(reader, 'L1', 'calculus')} L1 calculus" in text


@pytest.mark.parametrize(
    ("links", "refs", "error"),
    [
        (["l3", "l9"], ("l3", "l9"), None),
        ("l3", (), "lesson_link_ids must be a list of strings"),
        ([3], (), "lesson_link_ids[0] must be a string"),
    ],
)
def test_lesson_link_ids_are_strictly_typed(links: object, refs: tuple[str, ...], error: str | None) -> None:
    """A lessons claim's lesson_link_ids are a list of strings (and the draft's cited links)."""
    body: dict[str, object] = {
        "claim": {"lesson_link_ids": links, "complete": True},
        "confidence": 0.9,
        "missing": "",
        "next_focus": {"relations": [], "concept_ids": [], "text": ""},
    }
    draft = parse_draft(json.dumps(body), Usage(), contract="lessons")
    assert draft.lesson_refs == refs
    assert (draft.error is None) if error is None else (error in str(draft.error))
