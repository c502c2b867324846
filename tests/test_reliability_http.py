"""HTTP security: write scopes, hashed tokens compared in constant time, instant revocation, a per-token
/ask rate limit, a body size limit, and no secret in the logs."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
import structlog
from structlog.testing import capture_logs

from control_plane.settings import Settings
from control_plane.surfaces.http import ApiConfig, create_app
from control_plane.surfaces.ratelimit import RateLimiter
from control_plane.surfaces.runtime import Runtime, ensure_initialised
from data_plane import connect, schema, tokens

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

CONCEPT = {
    "concept_id": "sec_concept",
    "name": "Security concept",
    "grounding": {"reason": "http security test", "evidence": {"test": "http"}, "confidence": 0.9},
}


class Ticker:
    """A monotonic clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def runtime(database_url: str) -> Iterator[Runtime]:
    ensure_initialised(database_url)
    rt = Runtime(Settings(database_url=database_url, synthesizer="offline"), connect(database_url))
    yield rt
    rt.close()


@pytest.fixture
def ticker() -> Ticker:
    return Ticker()


@pytest.fixture
def client(runtime: Runtime, ticker: Ticker) -> Iterator[TestClient]:
    """The app with a 2-per-minute /ask limit on a manual clock and an 8 KiB body limit."""
    structlog.reset_defaults()
    cfg = ApiConfig(max_body_bytes=8 * 1024, ask_rate_per_min=2, rate_clock=ticker)
    app = create_app(runtime.settings, runtime=runtime, config=cfg)
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def _bearer(runtime: Runtime, scope: str) -> tuple[str, dict[str, str]]:
    token_id, secret = runtime.tokens.create(f"{scope}-token", scope)
    return token_id, {"Authorization": f"Bearer {secret}"}


def test_write_without_token_is_401(client: TestClient) -> None:
    """A curation write with no bearer token is 401 problem+json with WWW-Authenticate."""
    r = client.post("/concepts", json=CONCEPT)
    assert r.status_code == 401
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.headers["www-authenticate"] == "Bearer"


def test_write_with_unknown_token_is_401(client: TestClient) -> None:
    """A made-up bearer token is 401, not 403 or 500."""
    r = client.post("/concepts", json=CONCEPT, headers={"Authorization": "Bearer kg_not-a-real-token"})
    assert r.status_code == 401


def test_write_with_read_token_is_403(client: TestClient, runtime: Runtime) -> None:
    """A read-scoped token may not write: 403."""
    _, headers = _bearer(runtime, "read")
    assert client.post("/concepts", json=CONCEPT, headers=headers).status_code == 403


def test_write_with_write_token_is_201(client: TestClient, runtime: Runtime) -> None:
    """The positive control: a write-scoped token writes."""
    _, headers = _bearer(runtime, "write")
    assert client.post("/concepts", json=CONCEPT, headers=headers).status_code == 201


def test_revocation_takes_effect_on_the_next_request(client: TestClient, runtime: Runtime) -> None:
    """Once revoked, a token that just wrote is refused on the very next request."""
    token_id, headers = _bearer(runtime, "write")
    assert client.post("/concepts", json=CONCEPT, headers=headers).status_code == 201
    runtime.tokens.revoke(token_id)
    second = {**CONCEPT, "concept_id": "sec_concept_2"}
    assert client.post("/concepts", json=second, headers=headers).status_code == 401


def test_tokens_are_compared_in_constant_time() -> None:
    """Token verification compares digests with hmac.compare_digest, not ==."""
    source = inspect.getsource(tokens.TokenStore.verify)
    assert "hmac.compare_digest" in source


def test_secret_is_never_stored(runtime: Runtime) -> None:
    """The api_tokens table holds only the SHA-256 of a secret, never the secret itself."""
    _, secret = runtime.tokens.create("stored", "write")
    with runtime.engine.connect() as conn:
        rows = [tuple(str(v) for v in r) for r in conn.execute(sa.select(schema.api_tokens))]
    flat = " ".join(" ".join(r) for r in rows)
    assert secret not in flat
    assert tokens.hash_secret(secret) in flat


def test_ask_is_rate_limited_per_token(client: TestClient, runtime: Runtime, ticker: Ticker) -> None:
    """Past its budget a token gets 429 with Retry-After on /ask, while another token is still served."""
    _, first = _bearer(runtime, "read")
    _, second = _bearer(runtime, "read")
    q = {"question": "What is rag?"}
    assert [client.post("/ask", json=q, headers=first).status_code for _ in range(2)] == [200, 200]
    limited = client.post("/ask", json=q, headers=first)
    assert limited.status_code == 429
    assert int(limited.headers["retry-after"]) >= 1
    assert limited.headers["content-type"].startswith("application/problem+json")
    assert client.post("/ask", json=q, headers=second).status_code == 200


def test_rate_limit_refills_with_time(client: TestClient, runtime: Runtime, ticker: Ticker) -> None:
    """After Retry-After seconds on the injected clock, the limited token is served again."""
    _, headers = _bearer(runtime, "read")
    q = {"question": "What is rag?"}
    for _ in range(2):
        client.post("/ask", json=q, headers=headers)
    limited = client.post("/ask", json=q, headers=headers)
    assert limited.status_code == 429
    ticker.now += int(limited.headers["retry-after"])
    assert client.post("/ask", json=q, headers=headers).status_code == 200


def test_token_bucket_is_exact_on_a_manual_clock() -> None:
    """Two per minute: two at once, the third waits 30 s, and one more is allowed 30 s later."""
    t = Ticker()
    limiter = RateLimiter(2, clock=t)
    assert [limiter.check("k"), limiter.check("k")] == [0.0, 0.0]
    assert limiter.check("k") == pytest.approx(30.0)
    t.now += 30
    assert limiter.check("k") == 0.0


def test_oversized_body_is_413(client: TestClient, runtime: Runtime) -> None:
    """A body over the limit is 413 problem+json, whether declared or streamed, and never reaches the handler."""
    _, headers = _bearer(runtime, "write")

    def count() -> int:
        with runtime.engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.count()).select_from(schema.concepts)).scalar_one())

    before = count()
    big = {**CONCEPT, "summary": "x" * 20_000}
    r = client.post("/concepts", json=big, headers=headers)
    assert r.status_code == 413
    assert r.headers["content-type"].startswith("application/problem+json")
    assert count() == before


def test_no_token_or_secret_in_logs(client: TestClient, runtime: Runtime) -> None:
    """Across writes, refusals, rate limits and errors, no bearer secret or Authorization header is logged."""
    _, write = _bearer(runtime, "write")
    _, read = _bearer(runtime, "read")
    with capture_logs() as logs:
        client.post("/concepts", json=CONCEPT, headers=write)
        client.post("/concepts", json=CONCEPT, headers=read)
        client.post("/concepts", json=CONCEPT, headers={"Authorization": "Bearer kg_forged-secret-123"})
        for _ in range(3):
            client.post("/ask", json={"question": "What is rag?"}, headers=read)
    text = repr(logs)
    assert logs
    for headers in (write, read):
        assert headers["Authorization"].split()[1] not in text
    assert "kg_forged-secret-123" not in text and "Authorization" not in text
