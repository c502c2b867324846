"""Replay: a recorded answer re-run as it was known then, and against today's graph."""

from __future__ import annotations

import json

from sqlalchemy.engine import Engine

from control_plane.planning.graph_store import SQLPropertyGraphStore
from control_plane.planning.loop import Planner
from control_plane.planning.replay import replay
from control_plane.synthesizers.offline import OfflineSynthesizer
from data_plane import GraphReader, WriteGateway
from data_plane.testing import ManualClock, build_graph, grounding

QUESTION = (
    "What must a learner master before agent orchestration, and which of those concepts does RAG build on?"
)


def _graph(gateway: WriteGateway) -> None:
    build_graph(
        gateway,
        [
            "agent_orchestration",
            "function_calling",
            "agent_memory",
            "prompting_fundamentals",
            "embeddings",
            ("rag", "RAG"),
        ],
        [
            ("function_calling", "agent_orchestration", "prerequisite"),
            ("agent_memory", "agent_orchestration", "prerequisite"),
            ("function_calling", "prompting_fundamentals", "builds_on"),
            ("agent_memory", "embeddings", "builds_on"),
            ("rag", "prompting_fundamentals", "builds_on"),
            ("rag", "embeddings", "builds_on"),
        ],
    )


def test_replay_shows_an_invalidated_evidence_edge(sqlite_engine: Engine) -> None:
    """After an evidence edge is invalidated, replay reproduces the old answer and reports the change now."""
    clock = ManualClock()
    gateway, reader = WriteGateway(sqlite_engine, clock=clock), GraphReader(sqlite_engine, clock=clock)
    _graph(gateway)
    synth = OfflineSynthesizer()
    original = Planner(reader, synth, store=SQLPropertyGraphStore(reader), gateway=gateway, clock=clock).ask(
        QUESTION
    )
    assert original.result is not None
    assert set(original.result.members) == {"prompting_fundamentals", "embeddings"}
    removed = reader.edge("rag", "embeddings", "builds_on")
    gateway.invalidate_edge(
        "rag", "embeddings", "builds_on", grounding=grounding("dropped from the RAG lesson")
    )

    report = replay(
        original.answer_id, reader=reader, synthesizer=synth, store=SQLPropertyGraphStore(reader), clock=clock
    )

    json.dumps(report)  # JSON-serialisable
    assert report["reproduced"] is True
    assert report["then"]["text"] == original.text
    changes = report["changes"]
    assert changes["answer_changed"] is True
    assert changes["members"]["removed"] == ["embeddings"]
    assert removed.stamp.version_id in changes["evidence_edges"]["removed_version_ids"]
    assert "rag>builds_on>embeddings" in changes["evidence_edges"]["removed_keys"]


def test_replay_of_an_unchanged_graph_reports_no_change(sqlite_engine: Engine) -> None:
    """With nothing changed, then and now agree."""
    clock = ManualClock()
    gateway, reader = WriteGateway(sqlite_engine, clock=clock), GraphReader(sqlite_engine, clock=clock)
    _graph(gateway)
    synth = OfflineSynthesizer()
    original = Planner(reader, synth, store=SQLPropertyGraphStore(reader), gateway=gateway, clock=clock).ask(
        QUESTION
    )
    report = replay(original.answer_id, reader=reader, synthesizer=synth, clock=clock)
    assert report["changes"]["answer_changed"] is False
    assert report["changes"]["evidence_edges"]["added_version_ids"] == []
    assert report["changes"]["evidence_edges"]["removed_version_ids"] == []
