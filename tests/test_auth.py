"""API tokens: stored hashed, verified in constant time, scoped, and revoked at once (store and HTTP)."""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from control_plane.settings import Settings
from control_plane.surfaces.http import ApiConfig, create_app
from control_plane.surfaces.runtime import Runtime
from data_plane import InputError, connect, schema
from data_plane.testing import ManualClock, build_graph
from data_plane.tokens import TokenStore

with warnings.catch_warnings():
    # Starlette nudges towards its httpx fork; the TestClient itself works the same on httpx.
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

GROUNDING = {"reason": "added in a test", "evidence": {"test": "auth"}}


@pytest.fixture
def store(engine: Engine, clock: ManualClock) -> TokenStore:
    return TokenStore(engine, clock=clock)


def test_only_the_sha256_of_the_secret_is_stored(store: TokenStore, engine: Engine) -> None:
    """The api_tokens row holds the secret's SHA-256 and never the secret itself."""
    token_id, secret = store.create("ci", "read")
    with engine.connect() as conn:
        row = conn.execute(sa.select(schema.api_tokens)).mappings().one()
    assert row["token_id"] == token_id
    assert row["token_hash"] == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in {str(v) for v in row.values()}


def test_verify_accepts_the_secret_and_refuses_anything_else(store: TokenStore) -> None:
    """verify returns the token for its secret and None for a wrong or empty secret."""
    token_id, secret = store.create("ci", "write")
    token = store.verify(secret)
    assert token is not None and token.token_id == token_id and token.scope == "write"
    assert store.verify(secret + "x") is None
    assert store.verify("") is None


def test_revoked_token_is_refused_at_once(store: TokenStore) -> None:
    """After revoke, the very next verify of the same secret returns None."""
    token_id, secret = store.create("ci", "write")
    assert store.verify(secret) is not None
    store.revoke(token_id)
    assert store.verify(secret) is None
    assert [t.revoked_at is not None for t in store.list()] == [True]


def test_unknown_scope_is_rejected(store: TokenStore) -> None:
    """A scope other than read or write is an InputError."""
    with pytest.raises(InputError):
        store.create("ci", "admin")


@pytest.fixture
def runtime(database_url: str) -> Iterator[Runtime]:
    rt = Runtime(Settings(database_url=database_url), connect(database_url))
    build_graph(rt.gateway, ["rag", "embeddings"])
    yield rt
    rt.close()


@pytest.fixture
def client(runtime: Runtime) -> Iterator[TestClient]:
    with TestClient(create_app(runtime.settings, runtime=runtime)) as c:
        yield c


def _edge_body() -> dict[str, Any]:
    return {"source_id": "rag", "target_id": "embeddings", "relation": "builds_on", "grounding": GROUNDING}


def test_write_without_token_is_401(client: TestClient) -> None:
    """A write with no Authorization header is refused with 401 and a problem body."""
    r = client.post("/edges", json=_edge_body())
    assert r.status_code == 401
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.headers["www-authenticate"] == "Bearer"


def test_write_with_unknown_token_is_401(client: TestClient) -> None:
    """A write with a made-up bearer token is refused with 401."""
    r = client.post("/edges", json=_edge_body(), headers={"Authorization": "Bearer kg_not-a-token"})
    assert r.status_code == 401


def test_write_with_read_token_is_403(client: TestClient, runtime: Runtime) -> None:
    """A read-scoped token may not write."""
    _, secret = runtime.tokens.create("reader", "read")
    r = client.post("/edges", json=_edge_body(), headers={"Authorization": f"Bearer {secret}"})
    assert r.status_code == 403
    assert r.json()["status"] == 403


def test_write_with_write_token_is_201_and_in_history(client: TestClient, runtime: Runtime) -> None:
    """A write token writes: 201, and the new version is in the edge's history with api:<name> source."""
    _, secret = runtime.tokens.create("curator", "write")
    r = client.post("/edges", json=_edge_body(), headers={"Authorization": f"Bearer {secret}"})
    assert r.status_code == 201, r.text
    version_id = r.json()["written"][0]["version_id"]
    history = client.get("/edges/rag%3Ebuilds_on%3Eembeddings/history").json()
    assert [v["version_id"] for v in history] == [version_id]
    assert history[0]["grounding"]["source"] == "api:curator"


def test_revoked_write_token_is_401(client: TestClient, runtime: Runtime) -> None:
    """Once revoked, a write token is refused with 401 on the next request."""
    token_id, secret = runtime.tokens.create("curator", "write")
    runtime.tokens.revoke(token_id)
    r = client.post("/edges", json=_edge_body(), headers={"Authorization": f"Bearer {secret}"})
    assert r.status_code == 401


def test_reads_can_require_a_token(runtime: Runtime) -> None:
    """With reads_require_token, a read without a token is 401 and with a read token 200."""
    app = create_app(runtime.settings, runtime=runtime, config=ApiConfig(reads_require_token=True))
    _, secret = runtime.tokens.create("reader", "read")
    with TestClient(app) as c:
        assert c.get("/concepts/rag").status_code == 401
        assert c.get("/concepts/rag", headers={"Authorization": f"Bearer {secret}"}).status_code == 200


def test_reads_require_token_is_parsed_from_the_environment() -> None:
    """KG_API_READS_REQUIRE_TOKEN=1 turns token-protected reads on; unset leaves reads open."""
    assert ApiConfig.from_env({"KG_API_READS_REQUIRE_TOKEN": "1"}).reads_require_token
    assert not ApiConfig.from_env({}).reads_require_token


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "/concepts", None),
        ("get", "/concepts/rag", None),
        ("get", "/search/concepts?q=rag", None),
        ("get", "/answers", None),
        ("get", "/metrics", None),
        ("post", "/ask", {"question": "What does RAG build on?"}),
    ],
)
def test_an_unknown_or_revoked_token_is_refused_on_open_reads(
    client: TestClient, runtime: Runtime, method: str, path: str, body: dict[str, Any] | None
) -> None:
    """Reads are open, but a token sent to them must be valid: unknown or revoked is 401, a valid one passes."""
    token_id, secret = runtime.tokens.create("reader", "read")
    sent = {"headers": {"Authorization": f"Bearer {secret}"}, **({"json": body} if body else {})}
    assert client.request(method.upper(), path, **sent).status_code == 200
    unknown = {**sent, "headers": {"Authorization": "Bearer kg_not-a-token"}}
    r = client.request(method.upper(), path, **unknown)
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert "unknown or revoked" in r.json()["detail"]
    runtime.tokens.revoke(token_id)
    assert client.request(method.upper(), path, **sent).status_code == 401
    anonymous = {"json": body} if body else {}
    assert client.request(method.upper(), path, **anonymous).status_code == 200
