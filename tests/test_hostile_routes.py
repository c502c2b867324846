"""Every route of the HTTP API against hostile values, on both engines: nothing a client sends is
a 5xx, and a refusal (400/422) names the field it refuses.

The table is deterministic: each route the app serves (read from the app itself, so a new route
is covered without being listed) gets, one at a time, a hostile value in each of its path
parameters, query parameters and body fields, hostile headers, and forged cursors; every other
value of the request is a valid one. Hostile values: a NUL, a lone surrogate (a JSON ``\\ud800``
escape in a body; its UTF-8-like bytes ``%ED%A0%80`` in a URL), control characters, the
reserved id characters, 5,000 and 70,000 characters, integers past 64 bits, NaN, and times out
of range.
"""

from __future__ import annotations

import base64
import json
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest
from conftest import ENGINES, _pg_database
from reliability_workers import record_figures

from control_plane.settings import Settings
from control_plane.surfaces.http import ApiConfig, create_app
from control_plane.surfaces.runtime import Runtime, ensure_initialised
from data_plane import connect
from data_plane.testing import grounding

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

GROUNDING = {"reason": "hostile suite", "evidence": {"suite": "hostile"}, "confidence": 0.9}
# Valid values of every path parameter the app has, and a valid body of every route that takes one.
PATH = {
    "concept_id": "rag",
    "key": "rag>builds_on>embeddings",
    "lesson_id": "L-hostile",
    "group_id": "hostile_a.1",
}
# Curation routes work on concepts and an edge of their own (see the fixture).
ROUTE_PATH = {
    "/concepts/{concept_id}/revise": {"concept_id": "hostile_a"},
    "/concepts/{concept_id}/invalidate": {"concept_id": "hostile_gone"},
}
EDGE = {"source_id": "hostile_a", "target_id": "hostile_b", "relation": "related", "grounding": GROUNDING}
BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/ask"): {"question": "What does RAG build on?"},
    ("POST", "/concepts"): {"concept_id": "hostile_new", "name": "Hostile new", "grounding": GROUNDING},
    ("POST", "/concepts/{concept_id}/revise"): {"summary": "revised", "grounding": GROUNDING},
    ("POST", "/concepts/{concept_id}/invalidate"): {"grounding": GROUNDING},
    ("POST", "/edges"): {**EDGE, "target_id": "rag"},
    ("POST", "/edges/revise"): EDGE,
    ("POST", "/edges/invalidate"): EDGE,
    ("POST", "/lessons/{lesson_id}/concepts"): {"concept_id": "hostile_a", "title": "Hostile", "grounding": GROUNDING},
    ("POST", "/lessons/{lesson_id}/concepts/unlink"): {"concept_id": "hostile_a", "grounding": GROUNDING},
}  # fmt: skip
# Required (and small pages).
QUERY = {"concept": "rag", "from": "2020-01-01", "limit": "2", "q": "rag", "key": "rag>builds_on>embeddings"}

URL_VALUES = {
    "nul": "%00",
    "nul inside": "a%00b",
    "surrogate bytes": "%ED%A0%80",
    "control": quote("\x1b[31m\x07\x7f", safe=""),
    "reserved": quote("a>b/c", safe=""),
    "long": "x" * 5000,
    "huge integer": "9" * 30,
    "negative": "-1",
    "nan": "NaN",
    "far time": quote("9999-12-31T23:59:59-14:00", safe=""),
}
BODY_VALUES: dict[str, Any] = {
    "nul": "a\x00b",
    "surrogate": "\ud800",
    "control": "\x1b[31m\x07\x7f",
    "reserved": "a>b/c",
    "long": "x" * 5000,
    "too long for a body": "x" * 70_000,
    "huge integer": 10**30,
    "nan": float("nan"),
    "far time": "9999-12-31T23:59:59-14:00",
    "wrong type": {"nested": ["junk"]},
}
HEADERS = {
    "authorization": ["Bearer \x00", "Bearer " + "x" * 5000, "Basic \x00\x01", "Bearer kg_\udcff".encode("utf-8", "surrogateescape").decode("latin-1")],
    "x-request-id": ["\x00", "x" * 5000, "id\x1b[31m"],
    "x-forwarded-for": ["\x00", "junk", "x" * 5000, "1.2.3.4, 5.6.7.8"],
    "content-type": ["application/json; charset=\x00", "application/json; charset=latin-1"],
    "accept": ["\x00", "x" * 5000],
}  # fmt: skip
SEEN: Counter[int] = Counter()


@dataclass(frozen=True)
class Api:
    client: TestClient
    write: dict[str, str]
    answer_id: str


@pytest.fixture(scope="module", params=ENGINES)
def api(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """The app over the bundled curriculum, with a write token and one recorded answer."""
    databases: Iterator[str] | None = None
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('hostile')}/kg.sqlite3"
    else:
        databases = _pg_database(request.getfixturevalue("pg_template"))
        url = next(databases)
    engine = connect(url)
    ensure_initialised(url, engine=engine)
    runtime = Runtime(Settings(database_url=url, synthesizer="offline"), engine)
    _, secret = runtime.tokens.create("hostile", "write")
    # What the curation routes change, so that the graph the read routes see stays whole.
    gateway, g = runtime.gateway, grounding("hostile suite")
    for cid in ("hostile_a", "hostile_b", "hostile_gone"):
        gateway.assert_concept(cid, name=cid.replace("_", " ").title(), grounding=g)
    gateway.assert_edge("hostile_a", "hostile_b", "related", grounding=g)
    gateway.assert_requirement(
        "hostile_a.1", target_id="hostile_a", needs=1, options=[["rag"], ["hostile_b"]], grounding=g
    )
    app = create_app(runtime.settings, runtime=runtime, config=ApiConfig(ask_rate_per_min=0))
    with TestClient(app, raise_server_exceptions=False) as client:
        asked = client.post("/ask", json={"question": "What does RAG build on?"})
        assert asked.status_code == 200, asked.text
        yield Api(client, {"Authorization": f"Bearer {secret}"}, asked.json()["answer_id"])
    runtime.close()
    if databases is not None:
        next(databases, None)
    record_figures("hostile_routes", dict(SEEN))


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    path_params: tuple[str, ...]
    query_params: tuple[str, ...]
    body: bool


def _routes() -> list[Route]:
    """Every operation of the app's OpenAPI document (the contract a client is generated from)."""
    app = create_app(Settings(database_url="sqlite://", synthesizer="offline"), config=ApiConfig())
    out = []
    for path, operations in app.openapi()["paths"].items():
        for method, op in operations.items():
            params = op.get("parameters", [])
            out.append(
                Route(
                    method.upper(),
                    path,
                    tuple(p["name"] for p in params if p["in"] == "path"),
                    tuple(p["name"] for p in params if p["in"] == "query"),
                    "requestBody" in op,
                )
            )
    return out


ROUTES = _routes()


def _url(
    api: Api, route: Route, path: dict[str, str] | None = None, query: dict[str, str] | None = None
) -> str:
    values = {**PATH, "answer_id": api.answer_id, **ROUTE_PATH.get(route.path, {}), **(path or {})}
    url = route.path
    for name in route.path_params:
        url = url.replace(
            "{" + name + "}", values[name] if path and name in path else quote(values[name], safe="")
        )
    params = {k: v for k, v in QUERY.items() if k in route.query_params} | (query or {})
    return url + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")


def _send(api: Api, route: Route, url: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
    # Header values go as bytes: a client may send any latin-1 byte, which httpx would refuse as text.
    sent: dict[str, Any] = {**api.write, **{k: v.encode("latin-1") for k, v in (headers or {}).items()}}
    if route.body:
        payload = BODIES.get((route.method, route.path), {}) if body is None else body
        raw = json.dumps(payload, ensure_ascii=True, allow_nan=True).encode()
        sent.setdefault("content-type", "application/json")
        return api.client.request(route.method, url, content=raw, headers=sent)
    return api.client.request(route.method, url, headers=sent)


def _check(response: Any, field: str, value: Any = None) -> None:
    """No 5xx; a refusal is a problem body, and a 400/422 names ``field`` (or, for a well-formed
    value the graph does not hold, such as an unknown concept, quotes ``value``)."""
    SEEN[response.status_code] += 1
    assert response.status_code < 500, f"{field}: {response.status_code} {response.text[:300]}"
    if response.status_code < 400:
        return
    assert response.headers["content-type"].startswith("application/problem+json"), response.text[:200]
    detail = response.json()["detail"]
    if response.status_code in (400, 422):
        leaf = field.rsplit(".", 1)[-1].lower()
        text = f" {detail.lower()} "
        named = (
            leaf in text or (leaf.endswith("_id") and " id " in text) or (leaf == "key" and "edge" in text)
        )
        quoted = isinstance(value, str) and value[:30] in detail
        assert named or quoted, f"{field} not named in: {detail}"


def _each(where: Any) -> list[Any]:
    """The routes ``where`` holds for, as parameters named by method and path."""
    return [pytest.param(r, id=f"{r.method} {r.path}") for r in ROUTES if where(r)]


@pytest.mark.parametrize("route", _each(lambda r: r.path_params or r.query_params))
def test_hostile_path_and_query_parameters(api: Api, route: Route) -> None:
    """Every path and query parameter of every route (cursors included), given each hostile value."""
    for place, names in (("path", route.path_params), ("query", route.query_params)):
        for name in names:
            for value in URL_VALUES.values():
                _check(_send(api, route, _url(api, route, **{place: {name: value}})), name, value)


def _bodies(base: dict[str, Any]) -> Iterator[tuple[str, Any, dict[str, Any]]]:
    """``base`` with each field (and each grounding field), in turn, set to each hostile value."""
    for name in base:
        for value in BODY_VALUES.values():
            yield name, value, {**base, name: value}
    if isinstance(base.get("grounding"), dict):
        for name in base["grounding"]:
            for value in BODY_VALUES.values():
                yield f"grounding.{name}", value, {**base, "grounding": {**base["grounding"], name: value}}
    for value in ("\x00", "\ud800"):
        yield "evidence", value, {**base, "grounding": {**GROUNDING, "evidence": {value: 1}}}


@pytest.mark.parametrize("route", _each(lambda r: r.body))
def test_hostile_body_fields(api: Api, route: Route) -> None:
    """Every field of every body (the grounding's included), given each hostile value."""
    for field, value, body in _bodies(BODIES.get((route.method, route.path), {"x": 1})):
        _check(_send(api, route, _url(api, route), body=body), field, value)


@pytest.mark.parametrize("route", _each(lambda r: True))
def test_hostile_headers(api: Api, route: Route) -> None:
    """Every route, given each hostile header value."""
    for name, values in HEADERS.items():
        for value in values:
            _check(_send(api, route, _url(api, route), headers={name: value}), name, value)


def _cursor(data: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


AT = {"v": "2025-01-01T00:00:00Z", "r": "2025-01-01T00:00:00Z"}


def _forged(kind: str) -> dict[str, str]:
    """Cursors of listing ``kind`` whose position or time no page ever writes."""
    return {
        "surrogate": _cursor({"kind": kind, "q": {}, "at": AT, "pos": "\ud800"}),
        "nul": _cursor({"kind": kind, "q": {}, "at": AT, "pos": "a\x00"}),
        "int64": _cursor({"kind": kind, "q": {}, "at": AT, "pos": ["2025-01-01T00:00:00Z", 2**64]}),
        "sections": _cursor({"kind": kind, "q": {}, "at": "2025-01-01T00:00:00Z", "pos": [[0, 2**70]] * 4}),
        "time": _cursor(
            {"kind": kind, "q": {}, "at": {"v": "9999-12-31T23:59:59-14:00", "r": "x"}, "pos": "a"}
        ),
        "not base64": "%%%",
        "deep": _cursor({"kind": kind, "q": {}, "at": AT, "pos": [[[[[]]]]]}),
    }


@pytest.mark.parametrize("route", _each(lambda r: "cursor" in r.query_params))
def test_forged_cursors_are_400(api: Api, route: Route) -> None:
    """A cursor that decodes to what no page writes is a 400 naming the cursor, never a 5xx."""
    kind = route.path.strip("/").split("/")[0]
    for name, cursor in _forged(kind).items():
        response = _send(api, route, _url(api, route, query={"cursor": quote(cursor, safe="")}))
        _check(response, "cursor")
        assert response.status_code == 400, f"{name}: {response.status_code} {response.text[:200]}"


def test_the_table_covers_every_route_and_kind_of_input() -> None:
    """The suite is not vacuous: it reads every route the app serves, including those with path
    parameters, query parameters, cursors and bodies."""
    paths = {r.path for r in ROUTES}
    assert {"/ask", "/concepts/{concept_id}", "/answers/{answer_id}/replay", "/snapshot", "/diff"} <= paths
    assert all((r.method, r.path) in BODIES for r in ROUTES if r.body and r.method == "POST")
    assert set(PATH) | {"answer_id"} >= {p for r in ROUTES for p in r.path_params}


def test_text_no_engine_stores_is_refused_at_the_door_before_any_round(api: Api) -> None:
    """A question holding a NUL or a lone surrogate is a 422 naming body.question, recording no
    answer and making no round (the door refuses it before the route runs)."""
    before = api.client.get("/answers", params={"limit": 1000}).json()
    for raw in (b'{"question": "What is RAG\\u0000?"}', b'{"question": "What is RAG\\ud800?"}'):
        response = api.client.post("/ask", content=raw, headers={"content-type": "application/json"})
        assert response.status_code == 422 and response.json()["detail"].startswith("body.question: ")
    assert api.client.get("/answers", params={"limit": 1000}).json() == before
