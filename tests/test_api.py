"""The HTTP API on both engines: ask, reads, curation, audit, replay, problem bodies, limits, logging."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest
import structlog
from structlog.testing import capture_logs

from control_plane.settings import Settings
from control_plane.surfaces.http import create_app
from control_plane.surfaces.runtime import Runtime, ensure_initialised
from data_plane import connect

with warnings.catch_warnings():
    # Starlette nudges towards its httpx fork; the TestClient itself works the same on httpx.
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

QUESTION = (
    "What must a learner master before agent orchestration, and which of those concepts does RAG build on?"
)
GROUNDING = {"reason": "added in an API test", "evidence": {"test": "api"}, "confidence": 0.9}


@pytest.fixture
def runtime(database_url: str) -> Iterator[Runtime]:
    ensure_initialised(database_url)
    rt = Runtime(Settings(database_url=database_url, synthesizer="offline"), connect(database_url))
    yield rt
    rt.close()


@pytest.fixture
def client(runtime: Runtime) -> Iterator[TestClient]:
    structlog.reset_defaults()
    with TestClient(create_app(runtime.settings, runtime=runtime), raise_server_exceptions=False) as c:
        yield c


@pytest.fixture
def writer(runtime: Runtime) -> dict[str, str]:
    _, secret = runtime.tokens.create("api-test", "write")
    return {"Authorization": f"Bearer {secret}"}


@pytest.fixture
def asked(client: TestClient) -> dict[str, Any]:
    r = client.post("/ask", json={"question": QUESTION})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def test_ask_answers_the_worked_example_with_evidence(asked: dict[str, Any]) -> None:
    """POST /ask returns an answer/1 object that cites edges present in its evidence."""
    assert asked["schema"] == "answer/1"
    assert not asked["abstained"]
    edge_ids = {e["edge_id"] for e in asked["evidence"]["edges"]}
    assert asked["cited_edges"] and set(asked["cited_edges"]) <= edge_ids


def test_asked_answer_is_recorded_and_listed(client: TestClient, asked: dict[str, Any]) -> None:
    """An answer given by /ask is retrievable by id and listed under /answers."""
    assert client.get(f"/answers/{asked['answer_id']}").json()["answer_id"] == asked["answer_id"]
    assert asked["answer_id"] in [a["answer_id"] for a in client.get("/answers").json()]


def test_replay_reports_the_recorded_answer(client: TestClient, asked: dict[str, Any]) -> None:
    """GET /answers/{id}/replay returns a report about that answer."""
    r = client.get(f"/answers/{asked['answer_id']}/replay")
    assert r.status_code == 200, r.text
    assert r.json()["answer_id"] == asked["answer_id"]


def test_evidence_page_is_html_with_the_evidence_nodes(client: TestClient, asked: dict[str, Any]) -> None:
    """GET /answers/{id}/evidence.html serves the self-contained page with every evidence concept."""
    r = client.get(f"/answers/{asked['answer_id']}/evidence.html")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    for c in asked["evidence"]["concepts"]:
        assert f'data-id="{c["concept_id"]}"' in r.text


def test_too_long_question_is_422_problem(client: TestClient) -> None:
    """A question over 2000 characters is refused with a 422 problem body."""
    r = client.post("/ask", json={"question": "x" * 2001})
    assert r.status_code == 422
    assert r.headers["content-type"].startswith("application/problem+json")
    assert set(r.json()) == {"type", "title", "status", "detail"}


def test_oversized_body_is_413(client: TestClient, writer: dict[str, str]) -> None:
    """A request body over 64 KiB is refused with 413 before it reaches the handler."""
    body = {"concept_id": "big", "name": "Big", "summary": "x" * 70_000, "grounding": GROUNDING}
    r = client.post("/concepts", json=body, headers=writer)
    assert r.status_code == 413
    assert r.json()["status"] == 413


def test_unknown_concept_is_404_problem(client: TestClient) -> None:
    """Reading a concept that does not exist is a 404 problem body, not a traceback."""
    r = client.get("/concepts/no_such_concept")
    assert r.status_code == 404
    assert r.json()["title"] == "Not found" and "no_such_concept" in r.json()["detail"]


def test_concept_curation_round_trip(client: TestClient, writer: dict[str, str]) -> None:
    """Add, revise and invalidate a concept; its history shows assert, revise, invalidate in order."""
    body = {"concept_id": "colbert", "name": "ColBERT", "grounding": GROUNDING}
    assert client.post("/concepts", json=body, headers=writer).status_code == 201
    revised = {"summary": "RAG over a knowledge graph.", "grounding": GROUNDING}
    assert client.post("/concepts/colbert/revise", json=revised, headers=writer).status_code == 201
    r = client.post("/concepts/colbert/invalidate", json={"grounding": GROUNDING}, headers=writer)
    assert r.status_code == 201
    ops = [v["op"] for v in client.get("/concepts/colbert/history").json()]
    assert ops == ["assert", "revise", "invalidate"]


def test_edge_curation_and_edges_query(client: TestClient, writer: dict[str, str]) -> None:
    """An added edge appears under /edges?concept=; after invalidation it no longer does."""
    edge = {"source_id": "rag", "target_id": "tokenization", "relation": "builds_on", "grounding": GROUNDING}
    assert client.post("/edges", json=edge, headers=writer).status_code == 201
    keys = [e["key"] for e in client.get("/edges", params={"concept": "rag"}).json()]
    assert "rag>builds_on>tokenization" in keys
    assert client.post("/edges/invalidate", json=edge, headers=writer).status_code == 201
    keys = [e["key"] for e in client.get("/edges", params={"concept": "rag"}).json()]
    assert "rag>builds_on>tokenization" not in keys


def test_an_invalidated_edge_is_asserted_again_over_http(client: TestClient, writer: dict[str, str]) -> None:
    """POST /edges on an invalidated edge asserts it again (201); its history reads assert,
    invalidate, assert, and it is listed again."""
    edge = {"source_id": "rag", "target_id": "embeddings", "relation": "builds_on", "grounding": GROUNDING}
    assert client.post("/edges/invalidate", json=edge, headers=writer).status_code == 201
    again = client.post("/edges", json=edge, headers=writer)
    assert again.status_code == 201, again.text
    assert again.json()["written"][0]["op"] == "assert"
    ops = [v["op"] for v in client.get("/edges/rag%3Ebuilds_on%3Eembeddings/history").json()]
    assert ops == ["assert", "invalidate", "assert"]
    assert "rag>builds_on>embeddings" in [
        e["key"] for e in client.get("/edges", params={"concept": "rag"}).json()
    ]


def test_unknown_relation_is_400_problem(client: TestClient, writer: dict[str, str]) -> None:
    """An edge with an unknown relation is a 400 problem naming the relation."""
    edge = {"source_id": "rag", "target_id": "tokenization", "relation": "likes", "grounding": GROUNDING}
    r = client.post("/edges", json=edge, headers=writer)
    assert r.status_code == 400 and "likes" in r.json()["detail"]


def test_duplicate_concept_is_409_problem(client: TestClient, writer: dict[str, str]) -> None:
    """Asserting a concept that already exists is a 409 conflict."""
    r = client.post(
        "/concepts", json={"concept_id": "rag", "name": "RAG", "grounding": GROUNDING}, headers=writer
    )
    assert r.status_code == 409


def test_a_concept_under_another_concepts_name_is_409_unless_allowed(
    client: TestClient, writer: dict[str, str]
) -> None:
    """POST /concepts with a name another concept goes by is a 409 naming it; with
    allow_duplicate_name it is written."""
    body = {"concept_id": "graph_rag", "name": "GraphRAG", "grounding": GROUNDING}
    r = client.post("/concepts", json=body, headers=writer)
    assert r.status_code == 409 and "is already concept 'graphrag'" in r.json()["detail"]
    r = client.post("/concepts", json={**body, "allow_duplicate_name": True}, headers=writer)
    assert r.status_code == 201, r.text


def test_lesson_link_is_recorded(client: TestClient, writer: dict[str, str]) -> None:
    """Linking a lesson to a concept writes a lesson_concepts version."""
    r = client.post(
        "/lessons/L99_test/concepts", json={"concept_id": "rag", "grounding": GROUNDING}, headers=writer
    )
    assert r.status_code == 201
    assert r.json()["written"][0]["table"] == "lesson_concepts"


def test_snapshot_as_of_the_past_excludes_later_concepts(client: TestClient) -> None:
    """A snapshot as of a time before the curriculum's valid_at has no concepts."""
    past = client.get("/snapshot", params={"as_of": "2023-01-01T00:00:00Z"}).json()
    now = client.get("/snapshot").json()
    assert past["concepts"] == [] and len(now["concepts"]) > 100


def test_diff_reports_writes_in_the_window(client: TestClient, writer: dict[str, str]) -> None:
    """/diff?from=T lists a concept asserted after T."""
    start = client.get("/concepts/rag").json()["recorded_at"]
    client.post(
        "/concepts", json={"concept_id": "diffed", "name": "Diffed", "grounding": GROUNDING}, headers=writer
    )
    d = client.get("/diff", params={"from": start}).json()
    assert "diffed" in [v["key"] for v in d["asserted"]]


def test_naive_time_is_rejected(client: TestClient) -> None:
    """A naive as_of datetime is a 400 problem, never guessed."""
    r = client.get("/snapshot", params={"as_of": "2025-01-01T00:00:00"})
    assert r.status_code == 400 and "naive" in r.json()["detail"]


def test_each_request_logs_one_event_with_request_id_and_no_token(
    client: TestClient, writer: dict[str, str]
) -> None:
    """One http.request event per request, carrying the echoed request id and never the token."""
    with capture_logs() as logs:
        r = client.get("/concepts/rag", headers={**writer, "X-Request-ID": "req-42"})
    assert r.headers["x-request-id"] == "req-42"
    events = [e for e in logs if e["event"] == "http.request"]
    assert len(events) == 1
    assert (
        events[0]["request_id"] == "req-42"
        and events[0]["status"] == 200
        and events[0]["path"] == "/concepts/rag"
    )
    secret = writer["Authorization"].split()[1]
    assert secret not in repr(logs) and "Authorization" not in repr(logs)


def test_openapi_docs_are_served(client: TestClient) -> None:
    """/docs and /openapi.json are available and list the ask endpoint."""
    assert client.get("/docs").status_code == 200
    assert "/ask" in client.get("/openapi.json").json()["paths"]
