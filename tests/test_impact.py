"""What a change does to recorded answers: the impact audit and the dry run, on the command line
and over HTTP, and `kg doctor` pointing at periods the old rule dropped."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from kg_cli import GROUNDED, ok

from control_plane.settings import Settings
from control_plane.surfaces.http import create_app
from control_plane.surfaces.runtime import Runtime, ensure_initialised
from data_plane import connect, schema

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

EDGE = "rag>builds_on>embeddings"
QUESTION = "What does RAG build on?"


def _rows(url: str) -> dict[str, int]:
    engine = connect(url)
    try:
        with engine.connect() as conn:
            return {
                t.name: conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one()
                for t in schema.VERSIONED_TABLES
            }
    finally:
        engine.dispose()


def test_a_dry_run_writes_nothing_and_names_the_answers_it_would_change(db: str) -> None:
    """`--dry-run` prints the version it would write and the recorded answer whose text it would
    change, and every table keeps its rows."""
    asked = json.loads(ok(db, "ask", QUESTION, "--format", "json").stdout)
    before = _rows(db)
    out = ok(db, "edge", "invalidate", EDGE, *GROUNDED, "--dry-run").stdout
    assert out.startswith("dry run, nothing was written; it would write:")
    assert f"concept_edges {EDGE}: version" in out and "op=invalidate" in out
    assert f"answer changed (1):\n  {asked['answer_id']}  {QUESTION}" in out
    assert _rows(db) == before


def test_the_impact_audit_lists_citing_answers_and_replays_them(db: str) -> None:
    """`kg audit impact EDGE` lists the answer that cited the edge; after the edge is invalidated,
    `--replay` puts it under "answer changed"."""
    asked = json.loads(ok(db, "ask", QUESTION, "--format", "json").stdout)
    listed = json.loads(ok(db, "audit", "impact", EDGE, "--format", "json").stdout)
    assert [(a["answer_id"], a["how"]) for a in listed["answers"]] == [(asked["answer_id"], "cited")]
    ok(db, "edge", "invalidate", EDGE, *GROUNDED)
    replayed = json.loads(ok(db, "audit", "impact", EDGE, "--replay", "--format", "json").stdout)
    assert replayed["changes"]["answer changed"] == [asked["answer_id"]]


def test_an_answer_that_never_saw_a_fact_is_not_listed(db: str) -> None:
    """An answer recorded before an edge existed did not read it, even where it would lie."""
    ok(db, "ask", QUESTION)
    ok(db, "edge", "add", "rag>builds_on>tokenization", *GROUNDED)
    assert "no recorded answer" in ok(db, "audit", "impact", "rag>builds_on>tokenization").stdout


def test_doctor_points_at_dropped_periods_and_restoring_clears_it(db: str) -> None:
    """A revision written the old way (its earlier period dropped) makes `kg doctor` warn; `kg
    audit restore-periods` restores it and the warning goes."""
    engine = connect(db)
    c = schema.concepts
    now = datetime.now(UTC)
    with engine.begin() as conn:
        cur = (
            conn.execute(sa.select(c).where(c.c.concept_id == "rag", c.c.expired_at.is_(None)))
            .mappings()
            .one()
        )
        conn.execute(sa.update(c).where(c.c.version_id == cur["version_id"]).values(expired_at=now))
        row = {k: v for k, v in cur.items() if k != "version_id"}
        row.update(
            op="revise",
            valid_at=datetime(2025, 3, 1, tzinfo=UTC),
            recorded_at=now,
            supersedes_id=cur["version_id"],
        )
        conn.execute(sa.insert(c).values(**row))
    engine.dispose()
    assert "[warn] periods: 1 valid period dropped" in ok(db, "doctor").stdout
    assert "restored 1 dropped valid period" in ok(db, "audit", "restore-periods").stdout
    assert "[ok] periods" in ok(db, "doctor").stdout
    assert "restored 0 dropped valid periods" in ok(db, "audit", "restore-periods").stdout


@pytest.fixture
def client(database_url: str) -> Iterator[tuple[TestClient, dict[str, str]]]:
    ensure_initialised(database_url)
    rt = Runtime(Settings(database_url=database_url, synthesizer="offline"), connect(database_url))
    _, secret = rt.tokens.create("impact-test", "write")
    with TestClient(create_app(rt.settings, runtime=rt), raise_server_exceptions=False) as c:
        yield c, {"Authorization": f"Bearer {secret}"}
    rt.close()


def test_http_dry_run_and_impact(client: tuple[TestClient, dict[str, str]], database_url: str) -> None:
    """`?dry_run=true` answers 200 with what it would write and the answer it would change, and
    writes nothing; GET /audit/impact lists the answer that cited the edge."""
    http, auth = client
    asked = http.post("/ask", json={"question": QUESTION}).json()
    body = {
        "source_id": "rag",
        "target_id": "embeddings",
        "relation": "builds_on",
        "grounding": {"reason": "dropped", "evidence": {"t": 1}},
    }
    before = _rows(database_url)
    r = http.post("/edges/invalidate?dry_run=true", json=body, headers=auth)
    assert r.status_code == 200, r.text
    assert r.json()["dry_run"] is True and r.json()["answers"]["changes"]["answer changed"] == [
        asked["answer_id"]
    ]
    assert _rows(database_url) == before
    impact = http.get("/audit/impact", params={"key": EDGE}).json()
    assert [a["answer_id"] for a in impact["answers"]] == [asked["answer_id"]]
    assert http.post("/edges/invalidate", json=body, headers=auth).status_code == 201
