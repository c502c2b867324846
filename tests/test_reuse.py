"""Answer reuse: a repeated question reuses the recorded answer when nothing it read has changed,
at no model call, and a reused answer equals the answer a fresh run would give."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import Engine

from control_plane.errors import LLMUnavailable
from control_plane.planning.loop import Planner
from control_plane.planning.reuse import ReusedAnswer, reuse_key, reused_payload, substance
from control_plane.synthesizers.base import Draft, SynthesisRequest, SynthesizerInfo
from control_plane.synthesizers.offline import OfflineSynthesizer
from data_plane import AsOf, GraphReader, WriteGateway, connect, migrate, schema
from data_plane.reuse import AnswerIndex
from data_plane.testing import ManualClock, build_graph, grounding

CONCEPTS = [
    "agent_orchestration",
    "function_calling",
    "agent_memory",
    "prompting_fundamentals",
    "embeddings",
    ("rag", "RAG"),
    "vector_search",
    "tokenization",
    "gradient_descent",
]
EDGES = [
    ("function_calling", "agent_orchestration", "prerequisite"),
    ("agent_memory", "agent_orchestration", "prerequisite"),
    ("function_calling", "prompting_fundamentals", "builds_on"),
    ("agent_memory", "embeddings", "builds_on"),
    ("rag", "prompting_fundamentals", "builds_on"),
    ("rag", "embeddings", "builds_on"),
    ("vector_search", "embeddings", "builds_on"),
    ("tokenization", "prompting_fundamentals", "prerequisite"),
]
BEFORE = "What must a learner master before agent orchestration?"
BUILDS = "What does RAG build on?"
CONNECTED = "Which concepts are connected to rag?"
LESSONS = "Which lessons cover RAG?"
PLAN = "Give me a study plan for agent orchestration"
QUESTIONS = [BEFORE, BUILDS, CONNECTED, "What comes after embeddings?", LESSONS, PLAN]


class Counting:
    """The offline synthesizer, counting its calls."""

    def __init__(self) -> None:
        self._inner = OfflineSynthesizer()
        self.calls = 0

    @property
    def info(self) -> SynthesizerInfo:
        return self._inner.info

    def synthesize(self, request: SynthesisRequest) -> Draft:
        self.calls += 1
        return self._inner.synthesize(request)


@dataclass
class World:
    engine: Engine
    clock: ManualClock
    gateway: WriteGateway
    reader: GraphReader
    synth: Counting
    planner: Planner


def _world(engine: Engine) -> World:
    clock = ManualClock()
    gateway, reader = WriteGateway(engine, clock=clock), GraphReader(engine, clock=clock)
    synth = Counting()
    planner = Planner(reader, synth, gateway=gateway, clock=clock, reuse=AnswerIndex(reader))
    return World(engine, clock, gateway, reader, synth, planner)


@pytest.fixture
def world(engine: Engine) -> World:
    """A small curriculum on each engine, and a planner that reuses answers."""
    w = _world(engine)
    build_graph(w.gateway, CONCEPTS, EDGES)
    return w


def _fresh_at(w: World, question: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The answer a fresh run gives as of the reused answer's own point (not recorded)."""
    point = payload["as_of"]
    at = AsOf(*(w.reader.as_of().valid_at.fromisoformat(point[k]) for k in ("valid_at", "recorded_at")))
    return w.planner.ask(question, as_of=at.valid_at, known_at=at.recorded_at, record=False).to_dict()


# --- the loop -----------------------------------------------------------------------------------


def test_a_repeated_question_is_reused_at_no_model_call(world: World) -> None:
    """Asked twice with nothing changed, the second answer reuses the first: marked, free, recorded."""
    first = world.planner.reply(BEFORE)
    calls = world.synth.calls
    second = world.planner.reply(BEFORE)
    assert isinstance(second, ReusedAnswer) and world.synth.calls == calls
    body = second.to_dict()
    assert body["reused_from"] == first.answer_id and body["answer_id"] != first.answer_id
    assert body["llm_calls"] == 0 and body["cost_usd"] == 0.0
    assert world.reader.answer(second.answer_id).content["payload"] == body  # recorded as its own answer
    said, was = substance(body), substance(first.to_dict())
    assert said.pop("as_of") != was.pop("as_of")  # the point it was asked at: later
    assert said == was
    third = world.planner.reply(BEFORE)
    assert isinstance(third, ReusedAnswer) and third.reused_from == first.answer_id


def test_fresh_bypasses_reuse(world: World) -> None:
    """``fresh`` answers afresh even when a reusable answer exists, and that answer is reused next."""
    world.planner.reply(BUILDS)
    calls = world.synth.calls
    again = world.planner.reply(BUILDS, fresh=True)
    assert not isinstance(again, ReusedAnswer) and world.synth.calls > calls
    later = world.planner.reply(BUILDS)
    assert isinstance(later, ReusedAnswer) and later.reused_from == again.answer_id


def test_a_new_edge_into_an_expanded_neighbourhood_is_a_change(world: World) -> None:
    """An edge added to a concept whose neighbourhood the answer expanded makes it stale: asked afresh."""
    world.planner.reply(CONNECTED)
    world.gateway.assert_edge("gradient_descent", "rag", "related", grounding=grounding("new link"))
    again = world.planner.reply(CONNECTED)
    assert not isinstance(again, ReusedAnswer)
    assert "gradient_descent" in {c["concept_id"] for c in again.to_dict()["evidence"]["concepts"]}


def test_a_change_outside_what_was_read_keeps_the_answer(world: World) -> None:
    """Revising a concept the answer never read leaves it reusable, and it still equals a fresh run."""
    first = world.planner.reply(BUILDS)
    world.gateway.revise_concept("gradient_descent", summary="Steps downhill.", grounding=grounding("edit"))
    again = world.planner.reply(BUILDS)
    assert isinstance(again, ReusedAnswer) and again.reused_from == first.answer_id
    assert substance(again.to_dict()) == substance(_fresh_at(world, BUILDS, again.to_dict()))


def test_revising_a_cited_concept_is_a_change(world: World) -> None:
    """A new version of a concept in the evidence (a new name) makes the answer stale."""
    world.planner.reply(BUILDS)
    world.gateway.revise_concept("embeddings", name="Vector embeddings", grounding=grounding("rename"))
    again = world.planner.reply(BUILDS)
    assert not isinstance(again, ReusedAnswer) and "Vector embeddings" in again.to_dict()["text"]


def test_a_new_lesson_link_of_a_read_concept_is_a_change(world: World) -> None:
    """A lesson question read the subject's lesson links: a new link makes it stale, and the fresh
    answer names the new lesson."""
    world.gateway.link_lesson("L1", "rag", title="Lesson one", grounding=grounding("syllabus"))
    first = world.planner.reply(LESSONS)
    assert first.to_dict()["cited_lessons"] == ["L1"]
    assert isinstance(world.planner.reply(LESSONS), ReusedAnswer)
    world.gateway.link_lesson("L9", "rag", title="Lesson nine", grounding=grounding("syllabus"))
    again = world.planner.reply(LESSONS)
    assert not isinstance(again, ReusedAnswer) and "L9" in again.to_dict()["cited_lessons"]


def test_a_fact_that_comes_into_force_later_is_a_change(world: World) -> None:
    """An edge recorded before the answer but valid only from a later time invalidates an as-of-now reuse
    once that time has come, though no version was recorded in between."""
    start = world.clock.now + timedelta(days=1)
    world.gateway.assert_edge(
        "rag", "gradient_descent", "builds_on", grounding=grounding("from tomorrow"), valid_at=start
    )
    world.planner.reply(BUILDS)
    assert isinstance(world.planner.reply(BUILDS), ReusedAnswer)  # still before it comes into force
    world.clock.set(start + timedelta(hours=1))
    again = world.planner.reply(BUILDS)
    assert not isinstance(again, ReusedAnswer)
    assert "gradient_descent" in {c["id"] for c in again.to_dict()["cited_concepts"]}


def test_a_write_stamped_before_the_answer_but_committed_after_is_a_change(world: World) -> None:
    """A version whose recorded_at precedes the answer (a long import stamps its start) but that the
    answer could not see is caught by its version id, not by its time."""
    world.clock.set(world.clock.now + timedelta(days=1))
    first = world.planner.reply(BUILDS)
    stamp = first_created(world, first.answer_id) - timedelta(seconds=5)
    late = WriteGateway(world.engine, clock=lambda: stamp)
    late.assert_edge("rag", "gradient_descent", "builds_on", grounding=grounding("import started earlier"))
    assert not isinstance(world.planner.reply(BUILDS), ReusedAnswer)


def first_created(w: World, answer_id: str) -> Any:
    return w.reader.answer(answer_id).stamp.recorded_at


def test_explicit_past_points_are_keyed_apart_from_now(world: World) -> None:
    """The as-of semantics are part of the key: the same question as of another time is not reused."""
    world.planner.reply(BUILDS)
    then = world.clock.now
    other = world.planner.reply(BUILDS, as_of=then, known_at=then)
    assert not isinstance(other, ReusedAnswer)
    again = world.planner.reply(BUILDS, as_of=then, known_at=then)
    assert isinstance(again, ReusedAnswer) and again.reused_from == other.answer_id


def test_case_spacing_and_punctuation_do_not_matter_but_words_do(world: World) -> None:
    """``what does RAG build on`` reuses ``What does RAG build on?``; another wording is its own question."""
    first = world.planner.reply(BUILDS)
    same = world.planner.reply("what does RAG  build on")
    assert isinstance(same, ReusedAnswer) and same.reused_from == first.answer_id
    assert same.to_dict()["question"] == "what does RAG  build on"
    assert not isinstance(world.planner.reply("What does RAG build upon?"), ReusedAnswer)


class Down:
    """A synthesizer whose model never answers."""

    info = SynthesizerInfo("down", "down-model", "test", offline=False)

    def synthesize(self, request: SynthesisRequest) -> Draft:
        raise LLMUnavailable("connection refused", status=None, attempts=3)


def test_an_abstention_because_the_model_was_down_is_never_reused(world: World) -> None:
    """A transient failure is not an answer to keep: the next ask tries the model again."""
    planner = replace_synth(world, Down())
    first = planner.reply(BUILDS)
    assert first.abstained
    assert not isinstance(planner.reply(BUILDS), ReusedAnswer)
    with world.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(schema.answer_reuse)).scalar_one() == 0


def replace_synth(w: World, synth: Any) -> Planner:
    return Planner(w.reader, synth, gateway=w.gateway, clock=w.clock, reuse=AnswerIndex(w.reader))


# --- the pure parts -----------------------------------------------------------------------------

INFO = SynthesizerInfo("offline", "offline", "v1", offline=True)


def _key(reading: dict[str, Any], question: str = BUILDS, **kw: Any) -> str:
    args: dict[str, Any] = {
        "question": question,
        "seeds": ["rag"],
        "as_of": None,
        "known_at": None,
        "synthesizer": INFO,
        "planner": {"max_rounds": 4},
    }
    return reuse_key(reading, **{**args, **kw})


def test_the_key_takes_the_whole_reading_but_nothing_volatile() -> None:
    """A field the reader adds later changes the key; timings and token counts never do."""
    reading = {"intent": "builds_on", "subjects": [{"concept_id": "rag"}]}
    base = _key(reading)
    assert _key({**reading, "form": "yes-no"}) != base
    assert _key({**reading, "subjects": [{"concept_id": "rag"}, {"concept_id": "llm"}]}) != base
    assert _key({**reading, "latency_ms": 3.2, "model": {"usage": {"prompt_tokens": 9}}}) == _key(
        {**reading, "model": {}}
    )
    assert _key(dict(reversed(list(reading.items())))) == base


def test_the_key_holds_the_as_of_semantics_and_the_synthesizer() -> None:
    """An explicit time, another synthesizer or other planner bounds make another key."""
    reading = {"intent": "builds_on"}
    base = _key(reading)
    at = AsOf.now(ManualClock()).valid_at
    assert len({base, _key(reading, as_of=at), _key(reading, known_at=at)}) == 3
    assert _key(reading, synthesizer=replace(INFO, prompt_version="v2")) != base
    assert _key(reading, planner={"max_rounds": 2}) != base
    assert _key(reading, question="  what does rag BUILD on ") == base


def test_a_reused_payload_keeps_every_recorded_key() -> None:
    """Whatever the recorded answer holds (a ``result`` added later included) is carried as recorded;
    only this answer's own fields change, and its usage is zero."""
    recorded = {
        "answer_id": "a1",
        "question": "Q?",
        "text": "T",
        "abstained": False,
        "result": {"kind": "list", "items": [1, 2]},
        "llm_calls": 2,
        "cost_usd": 0.01,
        "created_at": "2025-01-01T00:00:00Z",
        "as_of": {"valid_at": "x", "recorded_at": "y"},
    }
    clock = ManualClock()
    point = AsOf.now(clock)
    out = reused_payload(
        recorded, answer_id="a2", question="q", created_at=point.valid_at, as_of=point, latency_ms=1.0
    )
    assert out["result"] == recorded["result"] and out["text"] == "T"
    assert (out["answer_id"], out["question"], out["reused_from"]) == ("a2", "q", "a1")
    assert (out["llm_calls"], out["cost_usd"]) == (0, 0.0) and "prompt_tokens" not in out
    chained = reused_payload(
        out, answer_id="a3", question="q", created_at=point.valid_at, as_of=point, latency_ms=1
    )
    assert chained["reused_from"] == "a1"


# --- equivalence across curation --------------------------------------------------------------


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A migrated SQLite file holding the small curriculum, copied for each example."""
    path = tmp_path_factory.mktemp("reuse") / "template.sqlite3"
    engine = connect(f"sqlite:///{path}")
    migrate(engine)
    gw = WriteGateway(engine, clock=ManualClock())
    build_graph(gw, CONCEPTS, EDGES)
    gw.link_lesson("L1", "rag", title="Lesson one", grounding=grounding("syllabus"))
    gw.link_lesson("L2", "function_calling", title="Lesson two", grounding=grounding("syllabus"))
    engine.dispose()
    yield path


IDS = [c if isinstance(c, str) else c[0] for c in CONCEPTS]
RELATIONS = ["prerequisite", "builds_on", "related", "part_of"]


@st.composite
def curation(draw: st.DrawFn) -> tuple[str, tuple[Any, ...]]:
    kind = draw(
        st.sampled_from(["nothing", "add_edge", "invalidate_edge", "revise", "add_concept", "lesson"])
    )
    if kind == "add_edge":
        a, b = draw(st.lists(st.sampled_from(IDS), min_size=2, max_size=2, unique=True))
        return kind, (a, b, draw(st.sampled_from(RELATIONS)))
    if kind == "invalidate_edge":
        return kind, draw(st.sampled_from(EDGES))
    if kind in ("revise", "lesson"):
        return kind, (draw(st.sampled_from([*IDS, "rag", "rag"])),)
    return kind, ()


def _apply(gw: WriteGateway, change: tuple[str, tuple[Any, ...]]) -> None:
    kind, args = change
    g = grounding(f"curation: {kind}")
    if kind == "add_edge":
        try:
            gw.assert_edge(*args, grounding=g)
        except Exception as exc:  # a cycle or an edge already in force: no change then
            event(f"add_edge refused: {type(exc).__name__}")
    elif kind == "invalidate_edge":
        gw.invalidate_edge(*args, grounding=g)
    elif kind == "revise":
        gw.revise_concept(args[0], summary=f"{args[0]} revised.", grounding=g)
    elif kind == "add_concept":
        gw.assert_concept("retrieval_tuning", name="Retrieval tuning", grounding=g)
    elif kind == "lesson":
        gw.link_lesson("L9", args[0], title="Lesson nine", grounding=g)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(question=st.sampled_from(QUESTIONS), change=curation())
def test_a_reused_answer_equals_a_fresh_one_across_a_curation_change(
    template: Path, question: str, change: tuple[str, tuple[Any, ...]]
) -> None:
    """Ask, curate, ask again: whenever the second answer is reused, a fresh run as of the same point
    says exactly the same; with no change it is always reused."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kg.sqlite3"
        shutil.copy(template, path)
        engine = connect(f"sqlite:///{path}")
        try:
            w = _world(engine)
            w.clock.set(w.clock.now + timedelta(days=1))
            w.planner.reply(question)
            _apply(w.gateway, change)
            again = w.planner.reply(question)
            reused = isinstance(again, ReusedAnswer)
            event(f"{change[0]}: {'reused' if reused else 'asked afresh'}")
            if change[0] == "nothing":
                assert reused
            if reused:
                body = again.to_dict()
                assert substance(body) == substance(_fresh_at(w, question, body))
        finally:
            engine.dispose()


def test_the_repeated_question_mix_meets_its_target(tmp_path: Path) -> None:
    """A small run of ``evals.reuse_mix`` (8 questions x 5 asks, GraphRAG added halfway): model
    calls within 2 x questions x rounds, and no reused answer differs from a fresh run."""
    from evals.reuse_mix import run_mix

    report = run_mix(f"sqlite:///{tmp_path}/mix.sqlite3", questions=8, repeats=5, seed=3)
    assert report.asks == 40 and report.reused > 0 and report.stale == 0
    assert report.model_calls <= report.target and report.met
    assert report.model_calls < report.model_calls_without_reuse
