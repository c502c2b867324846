"""Recorded time: a read "as known at T" gives the same result whenever it is repeated, even when a
write stamped before T (an import's rows, stamped as its write pass began) commits after the read
(``data_plane.write_clock``; docs/data-plane.md, "Recorded time")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from control_plane.planning.loop import Planner
from control_plane.planning.replay import replay
from control_plane.synthesizers.offline import OfflineSynthesizer
from data_plane import GraphReader, Write, WriteGateway, schema, utc_now
from data_plane.reuse import AnswerIndex
from data_plane.testing import ManualClock, build_graph, grounding

BUILDS = "What does RAG build on?"


def _graph(gateway: WriteGateway) -> None:
    build_graph(
        gateway,
        [("rag", "RAG"), "embeddings", "chunking", "vector_search"],
        [("rag", "embeddings", "builds_on")],
    )


def _import_edge() -> Write:
    return Write.edge("rag", "chunking", "builds_on", grounding=grounding("an import"))


def test_a_read_now_during_an_open_write_reads_the_same_after_its_commit(engine: Engine) -> None:
    """A snapshot read "now" while a write's transaction is open (its rows stamped before the read,
    on the real clock) is the snapshot the same point gives after the write commits."""
    gateway, reader = WriteGateway(engine), GraphReader(engine)
    _graph(gateway)
    with gateway.bulk() as bulk:
        bulk.apply([_import_edge()])
        point = reader.as_of()
        during = reader.snapshot(point)
    assert reader.snapshot(point) == during
    assert point.recorded_at < bulk.now
    assert "rag>builds_on>chunking" in {e.key for e in reader.snapshot().edges}


def test_a_diff_to_now_during_an_open_write_is_the_same_after_its_commit(engine: Engine) -> None:
    """What was recorded up to "now", read while a write's transaction is open, is what the same
    diff gives after the write commits (the diff ends no later than the latest committed write)."""
    gateway, reader = WriteGateway(engine), GraphReader(engine)
    _graph(gateway)
    since = reader.history("concepts", ("rag",))[0].stamp.recorded_at - timedelta(seconds=1)
    with gateway.bulk() as bulk:
        bulk.apply([_import_edge()])
        during = reader.diff(since, utc_now())
    assert reader.diff(during.since, during.until) == during
    assert "rag>builds_on>chunking" not in {v.key_text for v in during.asserted}


def test_an_answer_during_an_import_replays_after_it_commits(engine: Engine) -> None:
    """An answer given while an import that adds an edge from RAG is in its write pass is
    reproduced by its replay after the import committed."""
    gateway, reader = WriteGateway(engine), GraphReader(engine)
    _graph(gateway)
    planner = Planner(
        reader, OfflineSynthesizer(), gateway=gateway, intent_model=None, reuse=AnswerIndex(reader)
    )
    with gateway.bulk() as bulk:
        bulk.apply([_import_edge()])
        during = planner.reply(BUILDS, fresh=True)
    assert "chunking" not in {c["id"] for c in during.to_dict()["cited_concepts"]}
    report = replay(during.answer_id, reader=reader, synthesizer=OfflineSynthesizer())
    assert report["reproduced"], report
    after = planner.reply(BUILDS, fresh=True)
    assert "chunking" in {c["id"] for c in after.to_dict()["cited_concepts"]}


def test_a_write_is_stamped_after_the_latest_write_when_the_clock_is_behind(engine: Engine) -> None:
    """A writer whose clock stands at or before the latest committed write (a clock stepped back,
    another host's clock) stamps its rows a microsecond after it, so stamps follow commit order."""
    ahead = datetime(2030, 1, 1, tzinfo=UTC)
    WriteGateway(engine, clock=lambda: ahead).assert_concept("a", name="A", grounding=grounding())
    behind = WriteGateway(engine, clock=ManualClock(now=ahead - timedelta(days=1), step=timedelta(0)))
    b = behind.assert_concept("b", name="B", grounding=grounding())
    c = behind.assert_concept("c", name="C", grounding=grounding())
    assert b.stamp.recorded_at == ahead + timedelta(microseconds=1)
    assert c.stamp.recorded_at == ahead + timedelta(microseconds=2)
    with engine.connect() as conn:
        clock = conn.execute(sa.select(schema.write_clock.c.recorded_at)).scalar_one()
    assert clock == c.stamp.recorded_at


def test_a_later_known_at_reads_as_known_at_the_latest_write(engine: Engine) -> None:
    """A read asked "as known at" a time past the latest committed write reads at that write's
    stamp (nothing later is settled), and an earlier time is read as asked."""
    clock = ManualClock()
    gateway, reader = WriteGateway(engine, clock=clock), GraphReader(engine, clock=clock)
    _graph(gateway)
    latest = reader.history("concepts", ("rag",))[-1].stamp.recorded_at
    assert reader.known_at(latest + timedelta(days=365)) == latest
    assert reader.as_of(recorded_at=latest + timedelta(days=1)).recorded_at == latest
    assert reader.known_at(latest - timedelta(seconds=1)) == latest - timedelta(seconds=1)


def test_a_write_that_writes_nothing_leaves_the_clock(engine: Engine) -> None:
    """An identical revise writes no row, and the write clock stays at the last write that did."""
    clock = ManualClock()
    gateway = WriteGateway(engine, clock=clock)
    g = grounding()
    first = gateway.assert_concept("a", name="A", grounding=g, summary="s")
    gateway.revise_concept("a", name="A", summary="s", grounding=g)
    with engine.connect() as conn:
        stamp = conn.execute(sa.select(schema.write_clock.c.recorded_at)).scalar_one()
    assert stamp == first.stamp.recorded_at
