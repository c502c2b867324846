"""Concurrent writers: 8 threads or 8 processes fight over the same keys and nothing is lost.

Each writer asserts, revises and invalidates concepts and asserts prerequisite edges on a small set
of shared keys, logging every attempt as accepted (with the version id the gateway returned) or
rejected (with the error class and message). Afterwards the database is audited against the logs.
"""

from __future__ import annotations

import json
import multiprocessing
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from conftest import ENGINES, _pg_database
from reliability_workers import (
    audit,
    keys_with_several_current_versions,
    record_figures,
    run_writer,
    thread_writer,
)
from sqlalchemy.engine import Engine

from data_plane import WriteGateway, connect, migrate, schema
from data_plane.temporal import find_cycle
from data_plane.testing import EPOCH, grounding

# Slow (many concurrent writers, threads and processes): left out by default, run by .ci/run (-m slow).
pytestmark = pytest.mark.slow

WRITERS = 8
OPS_PER_WRITER = 40


def _run_threads(url: str) -> list[dict[str, Any]]:
    engine = connect(url)
    barrier = threading.Barrier(WRITERS)
    try:
        with ThreadPoolExecutor(WRITERS) as pool:
            futures = [
                pool.submit(thread_writer, engine, w, OPS_PER_WRITER, 1000 + w, barrier)
                for w in range(WRITERS)
            ]
            return [entry for f in futures for entry in f.result()]
    finally:
        engine.dispose()


def _run_processes(url: str, tmp: Path) -> list[dict[str, Any]]:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(WRITERS)
    outs = [tmp / f"writer{w}.json" for w in range(WRITERS)]
    procs = [
        ctx.Process(target=run_writer, args=(url, 100 + w, OPS_PER_WRITER, 2000 + w, str(outs[w]), barrier))
        for w in range(WRITERS)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
    return [entry for out in outs for entry in json.loads(out.read_text())]


def _open_prerequisites(engine: Engine) -> list[tuple[str, str]]:
    e = schema.concept_edges
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(e.c.source_id, e.c.target_id).where(
                e.c.relation == "prerequisite",
                e.c.expired_at.is_(None),
                e.c.op != "retract",
                e.c.invalid_at.is_(None),
            )
        )
        return [(s, t) for s, t in rows]


@pytest.fixture(scope="module", params=[*ENGINES])
def shared_database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A fresh migrated database per engine, shared by the tests of one writers' run (runs are slow)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('concurrency')}/kg.sqlite3"
        engine = connect(url)
        migrate(engine)
        engine.dispose()
        yield url
    else:
        yield from _pg_database(request.getfixturevalue("pg_template"))


@pytest.fixture(scope="module", params=["threads", "processes"])
def audited(
    request: pytest.FixtureRequest, shared_database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """8 concurrent writers × 40 operations on one database, audited against their combined log."""
    url = shared_database_url
    if request.param == "threads":
        log = _run_threads(url)
    else:
        log = _run_processes(url, tmp_path_factory.mktemp("writers"))
    engine = connect(url)
    try:
        report = audit(engine, log)
        report["several_current"] = keys_with_several_current_versions(engine)
        report["cycle"] = find_cycle([], _open_prerequisites(engine))
    finally:
        engine.dispose()
    dialect = sa.make_url(url).get_backend_name()
    record_figures(f"concurrency_{dialect}_{request.param}", report)
    report["log"] = log
    return report


def test_every_attempt_is_accounted_for(audited: dict[str, Any]) -> None:
    """Every one of the 8 × 40 attempts is either accepted or rejected, and none crashed."""
    assert audited["attempted"] == WRITERS * OPS_PER_WRITER
    assert audited["crashed"] == 0, [e for e in audited["log"] if e["outcome"] == "crashed"][:3]
    assert audited["accepted"] + audited["rejected"] == audited["attempted"]


def test_accepted_writes_are_never_lost(audited: dict[str, Any]) -> None:
    """Every accepted write's version id is in the table with its own grounding."""
    assert audited["accepted"] > 0
    assert audited["lost"] == 0, audited["lost_entries"]


def test_rejected_writes_leave_no_trace(audited: dict[str, Any]) -> None:
    """No row in the database carries the grounding of a write that was rejected."""
    assert audited["phantom"] == 0, audited["phantom_entries"]


def test_rejections_are_clear_kg_errors(audited: dict[str, Any]) -> None:
    """Every rejection is a KGError subclass from the data plane's tree with a non-empty message."""
    known = {
        "KeyExists",
        "NotFound",
        "ConcurrentWrite",
        "TemporalConflict",
        "InactiveEndpoint",
        "PrerequisiteCycle",
        "WriteRejected",
    }
    rejected = [e for e in audited["log"] if e["outcome"] == "rejected"]
    assert {e["error"] for e in rejected} <= known, {e["error"] for e in rejected}
    assert all(e["message"].strip() for e in rejected)


def test_at_most_one_current_version_per_key(audited: dict[str, Any]) -> None:
    """After the fight, no key of any table has more than one current version."""
    assert audited["several_current"] == []


def test_no_prerequisite_cycle_survives_concurrency(audited: dict[str, Any]) -> None:
    """Concurrent prerequisite asserts never leave a cycle among open prerequisite edges."""
    assert audited["cycle"] is None


def test_recorded_at_follows_commit_order(engine: Engine) -> None:
    """A write that commits after another is never recorded as known earlier (as-of reads stay repeatable)."""
    first, second = EPOCH + timedelta(seconds=1), EPOCH + timedelta(seconds=2)
    other = WriteGateway(engine, clock=lambda: second)
    done = threading.Event()

    def other_writer() -> None:
        try:
            other.assert_concept("b", name="B", grounding=grounding("other writer"))
        finally:
            done.set()

    def slow_clock() -> datetime:
        # This writer reads the time, then is descheduled while another writer commits.
        threading.Thread(target=other_writer).start()
        done.wait(timeout=3)
        return first

    WriteGateway(engine, clock=slow_clock).assert_concept("a", name="A", grounding=grounding("slow writer"))
    done.wait(timeout=60)
    c = schema.concepts
    with engine.connect() as conn:
        stamps = conn.execute(sa.select(c.c.recorded_at).order_by(c.c.version_id)).scalars().all()
    assert stamps == sorted(stamps)
