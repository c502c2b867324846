"""Curation on both engines: what was invalidated may be asserted again; names do not silently
repeat; writers wait their turn for the write lock."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from control_plane.understanding.names import normalise
from data_plane import (
    AsOf,
    BundleRejected,
    DuplicateName,
    GraphReader,
    ImportPolicy,
    KeyExists,
    Write,
    WriteGateway,
    check_bundle,
    connect,
    import_bundle,
)
from data_plane.database import WriteWait
from data_plane.errors import WriteLockTimeout
from data_plane.testing import ManualClock, build_graph, grounding

T0 = datetime(2025, 1, 1, tzinfo=UTC)


# -- asserting again what was invalidated ------------------------------------------------------


def _ops(reader: GraphReader, table: str, key: tuple[str, ...]) -> list[str]:
    return [v.stamp.op for v in reader.history(table, key)]


def test_an_invalidated_edge_can_be_asserted_again(gateway: WriteGateway, reader: GraphReader) -> None:
    """assert, invalidate, assert: the edge is in force again, from the new assertion on, with its
    own grounding, and the history shows all three."""
    build_graph(gateway, ["a", "b"])
    gateway.assert_edge("a", "b", "prerequisite", grounding=grounding("first"))
    gateway.invalidate_edge("a", "b", "prerequisite", grounding=grounding("dropped"))
    again = gateway.assert_edge("a", "b", "prerequisite", grounding=grounding("back in the 2026 unit"))
    assert again.grounding.reason == "back in the 2026 unit"
    assert again.stamp.invalid_at is None and again.stamp.supersedes_id is None
    assert _ops(reader, "concept_edges", ("a", "b", "prerequisite")) == ["assert", "invalidate", "assert"]
    assert reader.edge("a", "b", "prerequisite").stamp.version_id == again.stamp.version_id


def test_what_was_known_before_the_reassertion_is_kept(gateway: WriteGateway, reader: GraphReader) -> None:
    """As known before the new assertion, the edge was closed; as known now, it holds from the new
    assertion's valid time, and its earlier period still holds too (a key holds over several
    periods: the re-assertion says nothing about before it)."""
    build_graph(gateway, ["a", "b"])
    first = gateway.assert_edge("a", "b", "prerequisite", grounding=grounding())
    closed = gateway.invalidate_edge("a", "b", "prerequisite", grounding=grounding("dropped"))
    again = gateway.assert_edge("a", "b", "prerequisite", grounding=grounding("back"))
    before = AsOf(again.stamp.valid_at, closed.stamp.recorded_at)
    assert [e.key for e in reader.snapshot(before).edges] == []
    now = again.stamp.recorded_at
    assert [e.grounding.reason for e in reader.snapshot(AsOf(again.stamp.valid_at, now)).edges] == ["back"]
    assert [e.grounding.reason for e in reader.snapshot(AsOf(first.stamp.valid_at, now)).edges] == ["dropped"]


def test_an_invalidated_concept_can_be_asserted_again(gateway: WriteGateway, reader: GraphReader) -> None:
    """A concept closed by an invalidation is asserted again with its new content; the edges its
    invalidation closed stay closed until they are asserted again too."""
    build_graph(gateway, ["a", "b"], [("a", "b", "related")])
    gateway.invalidate_concept("a", grounding=grounding("withdrawn"))
    back = gateway.assert_concept("a", name="A, revived", grounding=grounding("reinstated"))
    assert back.name == "A, revived" and reader.concept("a").name == "A, revived"
    assert _ops(reader, "concepts", ("a",)) == ["assert", "invalidate", "assert"]
    assert reader.snapshot().edges == ()
    gateway.assert_edge("a", "b", "related", grounding=grounding("related again"))
    assert [e.key for e in reader.snapshot().edges] == ["a>related>b"]


def test_an_unlinked_lesson_can_be_linked_again(gateway: WriteGateway, reader: GraphReader) -> None:
    """lesson link, unlink, link: the link is in force again."""
    build_graph(gateway, ["a"])
    gateway.link_lesson("L1", "a", grounding=grounding("first"), title="Lesson one")
    gateway.unlink_lesson("L1", "a", grounding=grounding("postponed"))
    gateway.link_lesson("L1", "a", grounding=grounding("rescheduled"))
    assert _ops(reader, "lesson_concepts", ("L1", "a")) == ["assert", "invalidate", "assert"]
    assert [v.key for v, _ in reader.lesson_links(["a"])] == [("L1", "a")]


def test_an_edge_that_still_holds_is_not_asserted_twice(gateway: WriteGateway) -> None:
    """An assert on a key whose current version holds is refused, naming the version."""
    build_graph(gateway, ["a", "b"], [("a", "b", "prerequisite")])
    with pytest.raises(KeyExists, match=r"already exists \(version \d+\); revise it instead"):
        gateway.assert_edge("a", "b", "prerequisite", grounding=grounding())


def test_a_reassertion_starts_no_earlier_than_the_invalidation(engine: Engine, clock: ManualClock) -> None:
    """An edge invalidated as of a future time holds until then: asserting it again from before
    that time is refused with the time it may start from; from then on it is accepted."""
    gateway = WriteGateway(engine, clock=clock)
    build_graph(gateway, ["a", "b"], valid_at=T0 - timedelta(days=10))
    gateway.assert_edge("a", "b", "related", grounding=grounding(), valid_at=T0 - timedelta(days=10))
    end = T0 + timedelta(days=30)
    gateway.invalidate_edge("a", "b", "related", grounding=grounding("ends"), invalid_at=end)
    with pytest.raises(KeyExists, match="holds until 2025-01-31T00:00:00Z") as info:
        gateway.assert_edge("a", "b", "related", grounding=grounding("again"))
    assert info.value.field == "valid_at"
    again = gateway.assert_edge("a", "b", "related", grounding=grounding("again"), valid_at=end)
    assert again.stamp.valid_at == end and again.stamp.invalid_at is None


# -- no silent duplicate names -----------------------------------------------------------------


@pytest.fixture
def named(engine: Engine, clock: ManualClock) -> WriteGateway:
    """A gateway that compares concept names as the question reader reads them."""
    return WriteGateway(engine, clock=clock, name_key=normalise)


def test_a_concept_under_another_concepts_name_is_refused(named: WriteGateway, reader: GraphReader) -> None:
    """ "GraphRAG" for graph_rag reads the same as graphrag's name: refused, naming graphrag; nothing written."""
    build_graph(named, [("graphrag", "GraphRAG", ["graph-based RAG"])])
    with pytest.raises(
        DuplicateName, match="'graph_rag': name 'GraphRAG' is already concept 'graphrag'"
    ) as info:
        named.assert_concept("graph_rag", name="GraphRAG", grounding=grounding())
    assert (info.value.field, info.value.other_id) == ("name", "graphrag")
    assert [c.concept_id for c in reader.all_concepts()] == ["graphrag"]


@pytest.mark.parametrize(
    ("name", "aliases"),
    [("graphrag", []), ("Graph-based RAGs", []), ("Graph retrieval", ["GRAPHRAG!"])],
)
def test_names_and_aliases_are_compared_as_questions_are_read(
    named: WriteGateway, name: str, aliases: list[str]
) -> None:
    """Case, punctuation and plural endings aside, a name or alias equal to another concept's name
    or alias is a duplicate."""
    build_graph(named, [("graphrag", "GraphRAG", ["graph-based RAG"])])
    with pytest.raises(DuplicateName):
        named.assert_concept("other", name=name, aliases=aliases, grounding=grounding())


def test_a_duplicate_name_is_accepted_when_allowed(named: WriteGateway, reader: GraphReader) -> None:
    """allow_duplicate_name adds the concept anyway."""
    build_graph(named, [("graphrag", "GraphRAG")])
    named.assert_concept("graph_rag", name="GraphRAG", grounding=grounding(), allow_duplicate_name=True)
    assert [c.concept_id for c in reader.all_concepts()] == ["graph_rag", "graphrag"]


def test_renaming_onto_another_concepts_name_is_refused(named: WriteGateway) -> None:
    """A revision that gives a concept another's name or alias is refused; one that leaves the
    names alone is not compared."""
    build_graph(named, [("a", "Alpha"), ("b", "Beta", ["the second"])])
    with pytest.raises(DuplicateName, match="alias 'The Second'"):
        named.revise_concept("a", aliases=["The Second"], grounding=grounding())
    named.assert_concept("c", name="alpha", grounding=grounding(), allow_duplicate_name=True)
    named.revise_concept("c", summary="Still called alpha.", grounding=grounding("summary"))


def test_two_new_concepts_of_one_batch_may_not_share_a_name(named: WriteGateway) -> None:
    """Within one batch, the second concept under the same name is the duplicate."""
    with pytest.raises(DuplicateName, match="'b': name 'Alpha' is already concept 'a'"):
        build_graph(named, [("a", "Alpha"), ("b", "Alpha")])


def test_the_name_of_an_invalidated_concept_is_free(named: WriteGateway) -> None:
    """Only concepts in force hold their names: a withdrawn concept's name may be taken."""
    build_graph(named, [("old_rag", "RAG")])
    named.invalidate_concept("old_rag", grounding=grounding("withdrawn"))
    assert named.assert_concept("rag", name="RAG", grounding=grounding()).concept_id == "rag"


def test_a_gateway_without_a_name_key_does_not_compare_names(gateway: WriteGateway) -> None:
    """Names are compared only when the gateway is given the reader's normaliser."""
    build_graph(gateway, [("a", "Alpha"), ("b", "Alpha")])


def _unit(folder: Path, concepts: str) -> Path:
    folder.mkdir()
    (folder / "manifest.json").write_text(
        '{"format": "kg-bundle/1", "name": "unit", "defaults": {"source": "s", "reason": "r", '
        '"confidence": 1, "evidence": {"e": 1}}}'
    )
    (folder / "concepts.csv").write_text("id,name,aliases\n" + concepts)
    return folder


def test_a_bundle_concept_under_a_stored_concepts_name_is_a_problem(
    named: WriteGateway, reader: GraphReader, tmp_path: Path
) -> None:
    """The check reports a duplicate_name problem at the bundle's line and column, naming the stored
    concept; the import writes nothing; a concept the bundle restates is not a duplicate of itself."""
    build_graph(named, [("graphrag", "GraphRAG"), ("rag", "RAG")])
    unit = _unit(tmp_path / "unit", "rag,RAG,retrieval augmented generation\ngraph_rag,Graph RAG,GraphRAG\n")
    policy = ImportPolicy(name_key=normalise)
    plan = check_bundle(reader, unit, policy=policy)
    assert [(p.kind, p.line, p.column) for p in plan.problems] == [("duplicate_name", 3, "aliases")]
    assert "is already concept 'graphrag' in the graph" in plan.problems[0].message
    with pytest.raises(BundleRejected):
        import_bundle(named, unit, policy=policy)
    assert [c.concept_id for c in reader.all_concepts()] == ["graphrag", "rag"]
    assert import_bundle(named, unit, policy=ImportPolicy()).new_versions == 2


def test_two_bundle_concepts_under_one_name_are_a_problem(reader: GraphReader, tmp_path: Path) -> None:
    """The later row is the duplicate, and its problem names the first row's line."""
    unit = _unit(tmp_path / "unit", "a,Alpha,\nb,Beta,\nc,ALPHA!,\n")
    plan = check_bundle(reader, unit, policy=ImportPolicy(name_key=normalise))
    assert [(p.kind, p.line, p.column) for p in plan.problems] == [("duplicate_name", 4, "name")]
    assert "is already concept 'a' ('Alpha', line 2" in plan.problems[0].message


# -- writers wait their turn -------------------------------------------------------------------


@contextmanager
def _lock_held(engine: Engine, seconds: float) -> Iterator[None]:
    """Another writer (a bulk import's transaction) holds the write lock for ``seconds``."""
    holder = WriteGateway(connect(engine.url.render_as_string(hide_password=False)))
    taken, failures = threading.Event(), []

    def hold() -> None:
        try:
            with holder.bulk() as bulk:
                bulk.apply([Write.concept("held", grounding=grounding("held"), name="Held by the import")])
                taken.set()
                time.sleep(seconds)
        except Exception as exc:  # surfaced below: a failing holder must fail the test
            failures.append(exc)
            taken.set()

    thread = threading.Thread(target=hold)
    thread.start()
    taken.wait(30)
    try:
        yield
    finally:
        thread.join(60)
        assert failures == []


def test_a_writer_waits_for_the_import_and_is_told_once(engine: Engine) -> None:
    """While another transaction holds the write lock, a write waits (saying so once, with its
    limit), then succeeds after that transaction commits."""
    told: list[float] = []
    curator = WriteGateway(engine, wait=WriteWait(30, told.append))
    with _lock_held(engine, 1.5):
        started = time.monotonic()
        curator.assert_concept("curated", name="Curated", grounding=grounding())
        waited = time.monotonic() - started
    assert told == [30] and waited > 0.5
    assert {c.concept_id for c in GraphReader(engine).all_concepts()} == {"curated", "held"}


@pytest.mark.slow  # waits out a write lock
def test_a_writer_gives_up_after_its_wait_and_writes_nothing(engine: Engine) -> None:
    """Past its wait, a write fails with WriteLockTimeout naming the wait; nothing is written."""
    curator = WriteGateway(engine, wait=WriteWait(0.5))
    with _lock_held(engine, 3), pytest.raises(WriteLockTimeout, match=r"waited 0\.5 s") as info:
        curator.assert_concept("curated", name="Curated", grounding=grounding())
    assert info.value.waited_s == 0.5
    assert [c.concept_id for c in GraphReader(engine).all_concepts()] == ["held"]


def test_a_writer_that_need_not_wait_is_not_told(engine: Engine) -> None:
    """With the lock free, nobody is told anything."""
    told: list[float] = []
    WriteGateway(engine, wait=WriteWait(30, told.append)).assert_concept("a", name="A", grounding=grounding())
    assert told == []
