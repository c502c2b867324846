"""The HTTP app as operations and clients meet it: health and readiness, metrics, offline docs, and
consistent refusals (415, JSON syntax, one 413, bare dates, 429 wording, Retry-After)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

from control_plane.errors import ModelBudgetSpent
from control_plane.settings import Settings
from control_plane.surfaces.http import ApiConfig, create_app
from control_plane.surfaces.http.problems import json_error, kg_status
from control_plane.surfaces.ratelimit import ModelCallCap, cap_synthesizer
from control_plane.surfaces.runtime import Runtime, ensure_initialised
from control_plane.synthesizers.base import SynthesizerInfo
from control_plane.testing import ScriptedSynthesizer, truthful
from data_plane import connect
from data_plane.database import downgrade
from data_plane.limits import LimitTable

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

QUESTION = "What must I master before rag?"
CONCEPT = {
    "concept_id": "ops_concept",
    "name": "Ops concept",
    "grounding": {"reason": "operations test", "evidence": {"test": "ops"}},
}


class Ticker:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Runtime]:
    url = f"sqlite:///{tmp_path}/kg.sqlite3"
    ensure_initialised(url)
    rt = Runtime(Settings(database_url=url, synthesizer="offline"), connect(url))
    yield rt
    rt.close()


def _client(runtime: Runtime, **cfg: Any) -> TestClient:
    structlog.reset_defaults()
    config = ApiConfig(rate_clock=cfg.pop("rate_clock", Ticker()), **cfg)
    return TestClient(
        create_app(runtime.settings, runtime=runtime, config=config), raise_server_exceptions=False
    )


@pytest.fixture
def client(runtime: Runtime) -> Iterator[TestClient]:
    with _client(runtime, max_body_bytes=8 * 1024) as c:
        yield c


def _writer(runtime: Runtime) -> dict[str, str]:
    _, secret = runtime.tokens.create("ops-writer", "write")
    return {"Authorization": f"Bearer {secret}"}


# --- health, readiness, metrics -----------------------------------------------------------------


def test_health_and_readiness_need_no_token_and_are_never_limited(runtime: Runtime) -> None:
    """With reads behind tokens and /ask at 1 a minute, /healthz and /readyz still answer everyone, often."""
    with _client(runtime, reads_require_token=True, ask_rate_per_min=1) as c:
        assert c.get("/concepts").status_code == 401
        for _ in range(5):
            assert c.get("/healthz").json() == {"status": "ok"}
            ready = c.get("/readyz")
            assert ready.status_code == 200 and ready.json()["status"] == "ready"
    checks = ready.json()["checks"]
    assert set(checks) == {"database", "schema", "storage", "synthesizer"}
    assert all(c["ok"] for c in checks.values())
    assert checks["synthesizer"]["detail"].startswith("offline")


def test_readiness_does_not_show_where_the_database_is(runtime: Runtime, tmp_path: Path) -> None:
    """/readyz names the kind of database it reached, never its file path (or host)."""
    with _client(runtime) as c:
        body = c.get("/readyz").text
    assert str(tmp_path) not in body and "kg.sqlite3" not in body
    assert '"database":{"ok":true,"detail":"reachable (sqlite)"}' in body


def test_readiness_fails_when_the_schema_is_behind(runtime: Runtime) -> None:
    """A database at an older revision is not ready: 503 naming the revisions and `kg init`."""
    with _client(runtime) as c:
        downgrade(runtime.engine, "0002")
        ready = c.get("/readyz")
    assert ready.status_code == 503 and ready.json()["status"] == "not ready"
    schema = ready.json()["checks"]["schema"]
    assert not schema["ok"] and "0002" in schema["detail"] and "kg init" in schema["detail"]


def _metric(text: str, name: str, **labels: str) -> float:
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    line = f"{name}{{{want}}}" if labels else name
    for row in text.splitlines():
        if row.startswith(line + " "):
            return float(row.rsplit(" ", 1)[1])
    return 0.0


def test_metrics_count_requests_answers_model_use_and_refusals(runtime: Runtime) -> None:
    """/metrics (Prometheus text) counts requests by route template, answers, reuse hits, model calls,
    tokens and 429s of each limit."""
    online = SynthesizerInfo("scripted", "online-script", "test", offline=False)
    runtime.synthesizer = ScriptedSynthesizer(truthful(0.95), info=online)
    with _client(runtime, ask_rate_per_min=3, model_calls_per_min=60) as c:
        codes = [c.post("/ask", json={"question": QUESTION}).status_code for _ in range(4)]
        c.get("/concepts/rag")
        c.get("/concepts/embeddings")
        text = c.get("/metrics").text
    assert codes == [200, 200, 200, 429]
    assert _metric(text, "kg_http_requests_total", method="POST", route="/ask", status="200") == 3
    assert (
        _metric(text, "kg_http_requests_total", method="GET", route="/concepts/{concept_id}", status="200")
        == 2
    )
    assert _metric(text, "kg_answers_total", outcome="answered") == 3
    assert _metric(text, "kg_answer_reuse_hits_total") == 2
    assert _metric(text, "kg_model_calls_total") == 1
    assert _metric(text, "kg_limiter_rejections_total", limit="ask") == 1
    assert _metric(text, "kg_http_request_duration_seconds_count", method="POST", route="/ask") == 4
    assert "kg_model_tokens_total" in text and "kg_model_cost_usd_total" in text


def test_a_request_refused_before_routing_is_counted_under_its_route(runtime: Runtime) -> None:
    """A 415 (and a 413) on POST /ask is labelled route="/ask", not "unmatched"; an unknown path
    still is "unmatched"."""
    with _client(runtime, max_body_bytes=64) as c:
        assert (
            c.post("/ask", content=b"What is RAG?", headers={"Content-Type": "text/plain"}).status_code == 415
        )
        assert c.post("/ask", json={"question": "x" * 100}).status_code == 413
        assert c.get("/no/such/route").status_code == 404
        text = c.get("/metrics").text
    assert _metric(text, "kg_http_requests_total", method="POST", route="/ask", status="415") == 1
    assert _metric(text, "kg_http_requests_total", method="POST", route="/ask", status="413") == 1
    assert _metric(text, "kg_http_requests_total", method="GET", route="unmatched", status="404") == 1


def test_offline_answers_count_no_model_calls(runtime: Runtime) -> None:
    """Offline, /ask answers count rounds but no model call in /metrics."""
    with _client(runtime) as c:
        body = c.post("/ask", json={"question": QUESTION}).json()
        text = c.get("/metrics").text
    assert body["llm_calls"] == 0 and body["syntheses"] >= 1
    assert _metric(text, "kg_model_calls_total") == 0 and _metric(text, "kg_answer_rounds_total") >= 1


# --- docs -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_docs_load_nothing_from_a_cdn(client: TestClient, page: str) -> None:
    """Swagger UI and ReDoc pages reference only assets this server serves."""
    html = client.get(page).text
    assert "cdn." not in html and "https://" not in html and "/static-offline-docs/" in html
    script = "swagger-ui-bundle.js" if page == "/docs" else "redoc.standalone.js"
    served = client.get(f"/static-offline-docs/{script}")
    assert served.status_code == 200 and len(served.content) > 100_000


def test_openapi_describes_times_and_retry_after(client: TestClient) -> None:
    """as_of/known_at are described wherever they are taken, and every 429 documents Retry-After."""
    spec = client.get("/openapi.json").json()
    params = {p["name"]: p for p in spec["paths"]["/snapshot"]["get"]["parameters"]}
    assert (
        "Valid time" in params["as_of"]["description"]
        and "Recorded time" in params["known_at"]["description"]
    )
    ask_in = spec["components"]["schemas"]["AskIn"]["properties"]
    assert "2024-06-01" in ask_in["as_of"]["description"] and "fresh" in ask_in
    refused = spec["paths"]["/ask"]["post"]["responses"]["429"]
    assert "Retry-After" in refused["headers"]
    assert "reused_from" in spec["components"]["schemas"]["AnswerOut"]["properties"]


# --- refusals ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"],
)
def test_a_body_that_is_not_json_is_415(client: TestClient, content_type: str | None) -> None:
    """A POST body sent as anything but JSON is 415, saying which Content-Type to send."""
    headers = {"Content-Type": content_type} if content_type else {}
    r = client.post("/ask", content=b'{"question": "What is rag?"}', headers=headers)
    assert r.status_code == 415 and r.headers["content-type"].startswith("application/problem+json")
    assert "Content-Type: application/json" in r.json()["detail"]


def test_json_with_a_charset_or_a_json_suffix_is_accepted(client: TestClient) -> None:
    """``application/json; charset=utf-8`` and ``application/*+json`` are JSON."""
    for content_type in ("application/json; charset=utf-8", "application/vnd.kg+json"):
        r = client.post(
            "/ask", content=b'{"question": "What is rag?"}', headers={"Content-Type": content_type}
        )
        assert r.status_code == 200, r.text


def test_malformed_json_names_the_line_and_column(client: TestClient) -> None:
    """A JSON syntax error is a 400 saying what is wrong and where, as a person counts lines."""
    body = b'{\n  "question": "What is rag?"\n  "as_of": "2024-06-01"\n}'
    r = client.post("/ask", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    assert (
        r.json()["detail"]
        == "the request body is not valid JSON: Expecting ',' delimiter at line 3, column 3"
    )


def test_json_error_positions_are_one_based() -> None:
    """Column 1 is the first character of a line; line 1 the first line."""
    assert json_error("x", 0, "bad").endswith("line 1, column 1")
    assert json_error('{"a":\n  ]', 8, "bad").endswith("line 2, column 3")


def test_an_oversized_body_is_one_413_whether_declared_or_streamed(
    client: TestClient, runtime: Runtime
) -> None:
    """Declared and chunked oversized bodies get the same problem type and title."""
    headers = {**_writer(runtime), "Content-Type": "application/json"}
    big = b'{"concept_id": "x", "name": "' + b"x" * 20_000 + b'"}'
    declared = client.post("/concepts", content=big, headers=headers)

    def chunks() -> Iterator[bytes]:
        for i in range(0, len(big), 1000):
            yield big[i : i + 1000]

    streamed = client.post("/concepts", content=chunks(), headers=headers)
    assert declared.status_code == streamed.status_code == 413
    assert {k: declared.json()[k] for k in ("type", "title")} == {
        k: streamed.json()[k] for k in ("type", "title")
    }
    assert declared.json()["title"] == "Content too large"


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/snapshot", {"as_of": "2024-06-01"}),
        ("/snapshot", {"as_of": "2024-06-01", "known_at": "2030-01-01"}),
        ("/concepts", {"as_of": "2024-06-01"}),
        ("/concepts/rag", {"known_at": "2030-01-01"}),
        ("/edges", {"concept": "rag", "as_of": "2024-06-01"}),
        ("/answers", {"since": "2024-01-01"}),
        ("/diff", {"from": "2024-01-01", "to": "2030-01-01", "limit": 1}),
    ],
)
def test_bare_dates_are_accepted_like_the_cli(client: TestClient, path: str, params: dict[str, Any]) -> None:
    """A bare date means midnight UTC, on every route that takes a time, as `kg` reads it."""
    r = client.get(path, params=params)
    assert r.status_code == 200, r.text


def test_a_bare_date_is_midnight_utc_and_a_naive_datetime_is_still_refused(client: TestClient) -> None:
    """``2024-06-01`` is 2024-06-01T00:00:00Z; ``2024-06-01T00:00:00`` (no zone) is a 400."""
    assert client.get("/snapshot", params={"as_of": "2024-06-01", "limit": 1}).json()["valid_at"] == (
        "2024-06-01T00:00:00Z"
    )
    body = client.post("/ask", json={"question": "What does RAG build on?", "as_of": "2024-06-01"}).json()
    assert body["as_of"]["valid_at"] == "2024-06-01T00:00:00Z"
    naive = client.get("/snapshot", params={"as_of": "2024-06-01T00:00:00"})
    assert naive.status_code == 400 and "naive" in naive.json()["detail"]


def test_the_429_names_the_token_or_the_address(runtime: Runtime) -> None:
    """Without a token the 429 speaks of the client address; with one, of that token."""
    with _client(runtime, ask_rate_per_min=1) as c:
        c.post("/ask", json={"question": QUESTION})
        by_address = c.post("/ask", json={"question": QUESTION}).json()["detail"]
        token_id, secret = runtime.tokens.create("learner", "read")
        auth = {"Authorization": f"Bearer {secret}"}
        c.post("/ask", json={"question": QUESTION}, headers=auth)
        by_token = c.post("/ask", json={"question": QUESTION}, headers=auth).json()["detail"]
    assert (
        "client address testclient (no token was sent)" in by_address
        and "token" not in by_address.split("(")[0]
    )
    assert f"token {token_id}" in by_token and "address" not in by_token
    assert "KG_API_ASK_RATE_PER_MIN" in by_token


def test_a_budget_spent_before_the_first_model_call_is_refused_and_records_nothing(runtime: Runtime) -> None:
    """When the server's budget is spent by the time a question reaches the model (another process
    spent it after this request passed the door), the question is refused, not recorded as an
    abstention; HTTP answers that with 429 and Retry-After."""
    online = SynthesizerInfo("scripted", "online-script", "test", offline=False)
    cap = ModelCallCap(1, clock=Ticker(), store=LimitTable(runtime.engine))
    assert cap.take() == 0.0  # the budget is spent
    inner = ScriptedSynthesizer(truthful(0.95), info=online)
    runtime.synthesizer = cap_synthesizer(inner, cap)
    before = len(runtime.reader.answers(limit=1000))
    with pytest.raises(ModelBudgetSpent) as refused:
        runtime.planner.reply(QUESTION)
    assert inner.calls == 0 and len(runtime.reader.answers(limit=1000)) == before
    assert kg_status(refused.value) == (429, "Too many requests")


def test_a_spent_budget_still_serves_answers_that_need_no_model_call(runtime: Runtime) -> None:
    """Once the model budget is spent, a repeated question is still answered by reuse (and one naming
    no concept by its abstention); only a question that needs the model is refused."""
    online = SynthesizerInfo("scripted", "online-script", "test", offline=False)
    runtime.synthesizer = ScriptedSynthesizer(truthful(0.95), info=online)
    with _client(runtime, ask_rate_per_min=0, model_calls_per_min=1) as c:
        first = c.post("/ask", json={"question": QUESTION})
        reused = c.post("/ask", json={"question": QUESTION})
        unknown = c.post("/ask", json={"question": "What is the capital of France?"})
        needs_model = c.post("/ask", json={"question": "What does RAG build on?"})
    assert first.status_code == 200 and first.json()["llm_calls"] == 1
    assert reused.status_code == 200 and reused.json()["reused_from"] == first.json()["answer_id"]
    assert unknown.status_code == 200 and unknown.json()["abstained"]
    assert needs_model.status_code == 429 and "KG_API_MODEL_CALLS_PER_MIN" in needs_model.json()["detail"]
