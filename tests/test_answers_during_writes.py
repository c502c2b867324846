"""A question never waits for a write: answers are recorded while an import holds the graph's
write lock, on both engines, and the import still lands whole or not at all.

Every gateway here waits at most 1 s for a lock, so a question that waited for the held lock
would fail with ``WriteLockTimeout`` instead of hanging."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from control_plane.planning.loop import Planner
from control_plane.settings import Settings
from control_plane.surfaces.http import create_app
from control_plane.surfaces.ratelimit import RateLimiter
from control_plane.surfaces.runtime import Runtime, ensure_initialised
from control_plane.testing import ScriptedSynthesizer, cite_all
from data_plane import GraphReader, Write, WriteGateway, connect, schema
from data_plane.database import WriteWait
from data_plane.limits import LimitTable
from data_plane.reuse import AnswerIndex
from data_plane.sidecar import QueuedAnswer, queue_of
from data_plane.testing import ManualClock, build_graph, grounding

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

QUESTION = "What does rag build on?"
SHORT = WriteWait(1.0)


def _count(engine: Engine, table: sa.Table) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())


def _stored(engine: Engine, answer_id: str) -> dict[str, Any] | None:
    A = schema.answers
    with engine.connect() as conn:
        row = conn.execute(sa.select(A).where(A.c.answer_id == answer_id)).mappings().first()
    return None if row is None else dict(row)


@pytest.fixture
def world(engine: Engine, clock: ManualClock) -> tuple[Planner, ScriptedSynthesizer]:
    build_graph(
        WriteGateway(engine, clock=clock),
        ["rag", "embeddings", "prompting"],
        [("rag", "embeddings", "builds_on"), ("rag", "prompting", "builds_on")],
    )
    reader = GraphReader(engine, clock=clock)
    synth = ScriptedSynthesizer(cite_all(0.9))
    gateway = WriteGateway(engine, clock=clock, wait=SHORT)
    return Planner(reader, synth, gateway=gateway, clock=clock, reuse=AnswerIndex(reader)), synth


def _import_batch(n: int) -> list[Write]:
    return [Write.concept(f"bulk{i}", grounding=grounding("bulk"), name=f"Bulk {i}") for i in range(n)]


def test_an_answer_is_recorded_while_an_import_holds_the_write_lock(
    engine: Engine, clock: ManualClock, world: tuple[Planner, ScriptedSynthesizer]
) -> None:
    """An answer given while an import's transaction holds the write lock is readable by id at
    once, and is in ``answers`` with the time it was recorded at once the import commits."""
    planner, _ = world
    with WriteGateway(engine, clock=clock).bulk() as bulk:
        bulk.apply(_import_batch(3))
        answer = planner.reply(QUESTION)
        during = planner.reader.answer(answer.answer_id)
    assert during.content["payload"] == answer.to_dict()
    stored = _stored(engine, answer.answer_id)
    assert stored is not None and stored["recorded_at"] == during.stamp.recorded_at
    assert _count(engine, schema.concepts) == 6


def test_a_repeated_question_reuses_an_answer_given_during_an_import(
    engine: Engine, clock: ManualClock, world: tuple[Planner, ScriptedSynthesizer]
) -> None:
    """The same question asked twice while the write lock is held makes one model call: the
    second reuses the first, recorded while the import ran."""
    planner, synth = world
    with WriteGateway(engine, clock=clock).bulk() as bulk:
        bulk.apply(_import_batch(2))
        first = planner.reply(QUESTION)
        calls = synth.calls
        second = planner.reply(QUESTION)
    assert synth.calls == calls
    assert second.to_dict()["reused_from"] == first.answer_id
    assert _stored(engine, second.answer_id) is not None


def test_a_failed_import_keeps_the_answers_given_during_it(
    engine: Engine, clock: ManualClock, world: tuple[Planner, ScriptedSynthesizer]
) -> None:
    """An import that fails writes nothing, and the answers given while it held the lock stay
    recorded (moved into ``answers`` by the next write)."""
    planner, _ = world
    concepts = _count(engine, schema.concepts)
    with pytest.raises(RuntimeError), WriteGateway(engine, clock=clock).bulk() as bulk:
        bulk.apply(_import_batch(3))
        answer = planner.reply(QUESTION)
        raise RuntimeError("the import fails late")
    assert _count(engine, schema.concepts) == concepts
    WriteGateway(engine, clock=clock).assert_concept("later", name="Later", grounding=grounding())
    assert _stored(engine, answer.answer_id) is not None
    assert planner.reader.answer(answer.answer_id).stamp.version_id > 0


def test_the_rate_limits_are_spent_while_an_import_holds_the_write_lock(
    engine: Engine, clock: ManualClock
) -> None:
    """A rate limit is checked and spent while the graph's write lock is held (it never waits)."""
    limiter = RateLimiter(2, clock=lambda: 1000.0, store=LimitTable(engine))
    with WriteGateway(engine, clock=clock).bulk() as bulk:
        bulk.apply(_import_batch(1))
        assert [limiter.check("ask:addr:a") for _ in range(3)][:2] == [0.0, 0.0]
        assert limiter.wait("ask:addr:a") > 0


def test_moving_queued_answers_again_adds_nothing(sqlite_engine: Engine, clock: ManualClock) -> None:
    """An answer both queued and in ``answers`` (a crash between the two commits of a move) is
    not recorded twice: the next move skips it and empties the queue."""
    gateway = WriteGateway(sqlite_engine, clock=clock)
    gateway.record_answer(
        "a1", question="q", answer_text="t", abstained=False, payload={"x": 1}, grounding=grounding()
    )
    queue = queue_of(sqlite_engine)
    assert queue is not None and not queue.pending(10)
    queue.put(
        QueuedAnswer(
            "a1",
            {"question": "q", "answer_text": "t", "abstained": False, "payload": {"x": 1}},
            grounding(),
            None,
            clock(),
        )
    )
    assert gateway.move_queued_answers() == 0
    assert not queue.pending(10)
    assert _count(sqlite_engine, schema.answers) == 1


def test_an_answer_moved_while_a_snapshot_is_pinned_is_found(
    sqlite_engine: Engine, clock: ManualClock
) -> None:
    """A question pins one snapshot for its reads; an answer queued before it and moved into
    ``answers`` by another process after it is in neither place that snapshot sees, and is
    found all the same (two workers reusing one answer got 404s)."""
    queue = queue_of(sqlite_engine, create=True)
    assert queue is not None
    content = {"question": "q", "answer_text": "t", "abstained": False, "payload": {"x": 1}}
    queue.put(QueuedAnswer("a1", content, grounding(), None, clock()))
    reader = GraphReader(sqlite_engine, clock=clock)
    with reader.pinned():
        assert reader.answer("a1").stamp.version_id == 0  # queued: the snapshot starts here
        assert WriteGateway(sqlite_engine, clock=clock).move_queued_answers() == 1
        assert reader.answer("a1").stamp.version_id > 0  # moved since
    assert not queue.pending(10)


def test_processes_opening_a_fresh_side_file_at_once_all_get_it(tmp_path: Path) -> None:
    """Workers that start together open a side file none has created yet: each switches it to
    WAL and creates its tables at the same moment, and none fails with "database is locked"
    (SQLite refuses the loser of that race at once instead of waiting; 4 threads lost it in
    about 1 of 12 trials before the retry)."""
    for trial in range(30):
        url = f"sqlite:///{tmp_path / f'kg{trial}.sqlite3'}"
        engines = [connect(url) for _ in range(4)]
        gate = threading.Barrier(len(engines), timeout=60)

        def open_side(engine: Engine, gate: threading.Barrier = gate) -> None:
            gate.wait()
            LimitTable(engine).update("k", lambda held: (1.0, held), sweep_before=0.0)

        try:
            with ThreadPoolExecutor(len(engines)) as pool:
                for future in [pool.submit(open_side, e) for e in engines]:
                    future.result()
        finally:
            for e in engines:
                e.dispose()


# --- the whole path, during a 100,000-row import (slow) ----------------------------------------


@pytest.fixture
def big_bundle(tmp_path: Path) -> Path:
    from evals.graphgen import generate, write_bundle

    # graphgen gives 0.2 concepts and 0.2 lesson links per edge: 71,430 edges make 100,002 rows.
    return write_bundle(generate(71_430), tmp_path / "big")


def _all_counts(engine: Engine) -> dict[str, int]:
    return {t.name: _count(engine, t) for t in schema.VERSIONED_TABLES}


@pytest.mark.slow
def test_questions_answer_and_are_recorded_during_a_100000_row_import(
    database_url: str, big_bundle: Path, tmp_path: Path
) -> None:
    """While a 100,000-row import is paused in its write pass (the write lock held), `POST /ask`
    and `kg ask` answer and record with a 1 s write wait; the import then commits every row, and
    the answers are in ``answers``."""
    ensure_initialised(database_url)
    engine = connect(database_url)
    before = _all_counts(engine)
    go = tmp_path / "go"
    worker = Path(__file__).with_name("reliability_workers.py")
    env = {**os.environ, "KG_LOG_LEVEL": "warning", "KG_SYNTHESIZER": "offline", "DEEPSEEK_API_KEY": ""}
    command = [sys.executable, str(worker), "paused-import", database_url, str(big_bundle), "50000", str(go)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "writing"
        settings = Settings(database_url=database_url, synthesizer="offline", write_wait_s=1.0)
        with TestClient(create_app(settings, runtime=Runtime(settings, engine))) as client:
            posted = client.post("/ask", json={"question": "What does RAG build on?"})
            assert posted.status_code == 200, posted.text
            posted_id = posted.json()["answer_id"]
            assert client.get(f"/answers/{posted_id}").status_code == 200
        cli = [sys.executable, "-m", "control_plane.surfaces.cli", "--db", database_url, "ask"]
        asked = subprocess.run(
            [*cli, "--format", "json", "What comes before fine-tuning?"],
            env={**env, "KG_WRITE_WAIT_S": "1"},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert asked.returncode == 0, asked.stderr
        assert child.poll() is None  # still paused in its write pass: the answers did not wait
        go.touch()
        done = child.stdout.readline()
        assert child.wait(timeout=600) == 0
    finally:
        go.touch()
        child.kill()
    after = _all_counts(engine)
    graph = [t.name for t in schema.VERSIONED_TABLES if t.name != "answers"]
    assert done.split() == ["done", str(sum(after[t] - before[t] for t in graph))]
    assert after["concepts"] - before["concepts"] == 14_286  # every row of the bundle
    assert after["concept_edges"] - before["concept_edges"] == 71_430
    assert after["answers"] - before["answers"] == 2
    for answer_id in (posted_id, json.loads(asked.stdout)["answer_id"]):
        assert _stored(engine, answer_id) is not None
    engine.dispose()
