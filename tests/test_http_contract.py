"""The HTTP contract: every route declares its request and response models in /openapi.json,
every list endpoint pages with a bounded limit and a cursor that walks the whole set once, and a
client generated from the contract (openapi-python-client, slow) can use it: readable operation
ids, open reads without a lock, times it can send as dates, concept search and the CLI's filters."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kg_cli import ok

from control_plane.settings import Settings
from control_plane.surfaces.http import create_app
from control_plane.surfaces.http.config import ApiConfig
from control_plane.surfaces.http.schemas import RelationName
from control_plane.surfaces.pagination import MAX_LIMIT, Cursor, Section, keyset_sections
from control_plane.surfaces.runtime import Runtime, ensure_initialised
from data_plane import InputError, connect
from data_plane.clock import parse_time
from data_plane.relations import RELATIONS

with warnings.catch_warnings():
    # Starlette nudges towards its httpx fork; the TestClient itself works the same on httpx.
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

GROUNDING = {"reason": "added in a contract test", "evidence": {"test": "contract"}}
LISTS = ("/concepts", "/edges", "/answers", "/snapshot", "/diff")
SNAPSHOT_SECTIONS = ("concepts", "edges", "lessons", "lesson_links")
DIFF_SECTIONS = ("asserted", "revised", "invalidated", "retracted")


@pytest.fixture
def runtime(database_url: str) -> Iterator[Runtime]:
    ensure_initialised(database_url)
    rt = Runtime(Settings(database_url=database_url, synthesizer="offline"), connect(database_url))
    yield rt
    rt.close()


@pytest.fixture
def client(runtime: Runtime) -> Iterator[TestClient]:
    with TestClient(create_app(runtime.settings, runtime=runtime), raise_server_exceptions=False) as c:
        yield c


@pytest.fixture
def writer(runtime: Runtime) -> dict[str, str]:
    _, secret = runtime.tokens.create("contract-test", "write")
    return {"Authorization": f"Bearer {secret}"}


def _openapi(config: ApiConfig | None = None) -> dict[str, Any]:
    rt = Runtime(Settings(database_url="sqlite://", synthesizer="offline"), connect("sqlite://"))
    try:
        schema: dict[str, Any] = create_app(rt.settings, runtime=rt, config=config).openapi()
    finally:
        rt.close()
    return schema


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    return _openapi()


def _operations(openapi: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, ops in openapi["paths"].items() for method, op in ops.items()]


def _resolve(openapi: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = openapi["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


# ---------------------------------------------------------------------------------------------
# The OpenAPI document


def test_every_route_declares_a_non_empty_success_schema(openapi: dict[str, Any]) -> None:
    """Each operation's 200/201 response has a content schema that names a model (not `{}`)."""
    missing = []
    for path, method, op in _operations(openapi):
        ok = [r for code, r in op["responses"].items() if code in ("200", "201")]
        schemas = [m.get("schema", {}) for r in ok for m in r.get("content", {}).values()]
        resolved = [_resolve(openapi, s.get("items", s)) for s in schemas]
        if not resolved or any(not s or s == {"type": "object"} for s in resolved):
            missing.append(f"{method.upper()} {path}")
        for s in resolved:
            if s.get("type") == "object" or "properties" in s:
                assert s.get("properties"), f"{method.upper()} {path} returns an object without properties"
    assert missing == []
    assert len(_operations(openapi)) >= 20


def test_every_json_route_answers_with_a_named_model(openapi: dict[str, Any]) -> None:
    """JSON success bodies are a $ref to a component (or an array of one): a client can name them."""
    for path, method, op in _operations(openapi):
        for code, response in op["responses"].items():
            body = response.get("content", {}).get("application/json")
            if code in ("200", "201") and body is not None:
                schema = body["schema"]
                assert "$ref" in schema.get("items", schema), f"{method.upper()} {path}"


def test_the_answer_model_carries_the_whole_answer_object(openapi: dict[str, Any]) -> None:
    """POST /ask's response schema is answer/1 with its evidence, rounds and synthesizer spelled out."""
    ok = openapi["paths"]["/ask"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    answer = _resolve(openapi, ok)
    for field in (
        "schema",
        "answer_id",
        "text",
        "abstained",
        "confidence",
        "cited_edges",
        "evidence",
        "rounds",
    ):
        assert field in answer["properties"], field
    evidence = _resolve(openapi, answer["properties"]["evidence"])
    edge = _resolve(openapi, evidence["properties"]["edges"]["items"])
    assert {"edge_id", "key", "grounding", "valid_at", "recorded_at"} <= set(edge["properties"])


def test_every_post_declares_its_request_body(openapi: dict[str, Any]) -> None:
    """Every POST takes a JSON body described by a named model."""
    for path, method, op in _operations(openapi):
        if method == "post":
            schema = op["requestBody"]["content"]["application/json"]["schema"]
            assert "$ref" in schema, path


def test_errors_are_documented_as_problem_bodies(openapi: dict[str, Any]) -> None:
    """4xx responses are documented as application/problem+json Problem bodies, 422 included
    wherever there is a parameter or a body to be invalid."""
    for path, method, op in _operations(openapi):
        errors = {c: r for c, r in op["responses"].items() if c.startswith("4")}
        if op.get("parameters") or "requestBody" in op:
            assert "422" in errors, f"{method.upper()} {path}"
        for response in errors.values():
            assert response["content"]["application/problem+json"]["schema"]["$ref"].endswith("/Problem")


@pytest.mark.parametrize("path", LISTS)
def test_list_routes_take_a_bounded_limit_and_a_cursor(openapi: dict[str, Any], path: str) -> None:
    """Every list route has `limit` (max MAX_LIMIT) and `cursor` and documents X-Next-Cursor/Link."""
    op = openapi["paths"][path]["get"]
    params = {p["name"]: p for p in op["parameters"]}
    assert {"limit", "cursor"} <= set(params)
    assert params["limit"]["schema"]["maximum"] == MAX_LIMIT and params["limit"]["schema"]["minimum"] == 1
    assert {"X-Next-Cursor", "Link"} <= set(op["responses"]["200"]["headers"])


# ---------------------------------------------------------------------------------------------
# Walking pages


def _walk(
    client: TestClient, path: str, params: dict[str, Any], merge: Callable[[Any], list[Any]]
) -> tuple[list[Any], int]:
    """Follow X-Next-Cursor from the first page to the last; every item seen and the page count."""
    seen: list[Any] = []
    pages = 0
    cursor: str | None = None
    while True:
        r = client.get(path, params={**params, **({"cursor": cursor} if cursor else {})})
        assert r.status_code == 200, r.text
        pages += 1
        seen.extend(merge(r.json()))
        cursor = r.headers.get("x-next-cursor")
        if cursor is None:
            assert "link" not in r.headers
            return seen, pages
        assert r.headers["link"].endswith('; rel="next"') and f"cursor={cursor}" in r.headers["link"]
        assert pages < 1000


def test_concept_pages_cover_every_concept_once(client: TestClient, runtime: Runtime) -> None:
    """Walking /concepts 17 at a time yields every concept in force exactly once, in id order."""
    seen, pages = _walk(client, "/concepts", {"limit": 17}, lambda b: [c["concept_id"] for c in b])
    expected = [c.concept_id for c in runtime.reader.all_concepts()]
    assert seen == expected and len(set(seen)) == len(seen) and pages == -(-len(expected) // 17)


def test_edge_pages_cover_the_neighbourhood_once(client: TestClient) -> None:
    """Walking /edges?concept=rag two at a time yields the same keys as one big page, once each."""
    whole = [e["key"] for e in client.get("/edges", params={"concept": "rag", "limit": MAX_LIMIT}).json()]
    seen, pages = _walk(client, "/edges", {"concept": "rag", "limit": 2}, lambda b: [e["key"] for e in b])
    assert seen == whole and len(set(seen)) == len(seen) and pages > 1


def test_answer_pages_cover_every_answer_once(client: TestClient) -> None:
    """Five recorded answers walked two at a time come back newest first, each once."""
    asked = [
        client.post("/ask", json={"question": f"What does {name} build on?"}).json()["answer_id"]
        for name in ("RAG", "embeddings", "vector search", "function calling", "agent memory")
    ]
    seen, pages = _walk(client, "/answers", {"limit": 2}, lambda b: [a["answer_id"] for a in b])
    assert seen == list(reversed(asked)) and pages == 3


def test_snapshot_pages_cover_every_section_once(client: TestClient) -> None:
    """Walking /snapshot 60 at a time yields each section of the one-page snapshot exactly once."""
    whole = client.get("/snapshot").json()
    assert whole["next_cursor"] is None
    pages: list[dict[str, Any]] = []
    _walk(client, "/snapshot", {"limit": 60}, lambda b: pages.append(b) or [])
    assert len(pages) > 1 and all(p["valid_at"] == pages[0]["valid_at"] for p in pages)
    for section in SNAPSHOT_SECTIONS:
        keys = [item.get("version_id") for p in pages for item in p[section]]
        assert keys == [item["version_id"] for item in whole[section]] and len(set(keys)) == len(keys)


def test_diff_pages_cover_every_group_once(client: TestClient, runtime: Runtime) -> None:
    """Walking /diff 100 at a time yields each operation group of the whole diff exactly once."""
    pages: list[dict[str, Any]] = []
    _walk(client, "/diff", {"from": "2000-01-01T00:00:00Z", "limit": 100}, lambda b: pages.append(b) or [])
    assert len(pages) > 1 and len({p["to"] for p in pages}) == 1
    whole = runtime.reader.diff(parse_time("2000-01-01T00:00:00Z"), parse_time(pages[0]["to"])).to_dict()
    assert len(whole["asserted"]) > 1000
    for section in DIFF_SECTIONS:
        keys = [(v["table"], v["version_id"]) for p in pages for v in p[section]]
        assert keys == [(v["table"], v["version_id"]) for v in whole[section]] and len(set(keys)) == len(keys)


def test_a_walk_is_pinned_to_its_first_page(client: TestClient, writer: dict[str, str]) -> None:
    """A concept written between two pages does not appear in the walk that started before it."""
    first = client.get("/concepts", params={"limit": 50})
    assert (
        client.post(
            "/concepts",
            json={"concept_id": "aaa_new", "name": "New A", "grounding": GROUNDING},
            headers=writer,
        ).status_code
        == 201
    )
    assert (
        client.post(
            "/concepts",
            json={"concept_id": "zzz_new", "name": "New Z", "grounding": GROUNDING},
            headers=writer,
        ).status_code
        == 201
    )
    rest, _ = _walk(
        client,
        "/concepts",
        {"cursor": first.headers["x-next-cursor"]},
        lambda b: [c["concept_id"] for c in b],
    )
    seen = [c["concept_id"] for c in first.json()] + rest
    assert "zzz_new" not in seen and "aaa_new" not in seen and len(set(seen)) == len(seen)


@pytest.mark.parametrize("path", LISTS)
def test_a_limit_over_the_maximum_is_a_422_problem(client: TestClient, path: str) -> None:
    """limit > MAX_LIMIT (and limit 0) are refused with a 422 problem naming `limit`."""
    params = {"concept": "rag", "from": "2000-01-01T00:00:00Z"}
    for limit in (MAX_LIMIT + 1, 0):
        r = client.get(path, params={**params, "limit": limit})
        assert r.status_code == 422 and r.headers["content-type"].startswith("application/problem+json")
        assert "limit" in r.json()["detail"]


@pytest.mark.parametrize("cursor", ["not-a-cursor", "e30", Cursor("snapshot", {}).encode(), "%%%"])
def test_a_foreign_or_garbled_cursor_is_a_400_problem(client: TestClient, cursor: str) -> None:
    """A cursor that does not decode, or belongs to another listing, is refused with 400."""
    r = client.get("/concepts", params={"cursor": cursor})
    assert r.status_code == 400 and "cursor" in r.json()["detail"]


def test_a_cursor_with_other_filters_is_a_400_problem(client: TestClient) -> None:
    """Repeating a filter with another value than the cursor's is refused, never silently mixed."""
    first = client.get("/edges", params={"concept": "rag", "limit": 1})
    cursor = first.headers["x-next-cursor"]
    assert client.get("/edges", params={"concept": "rag", "limit": 1, "cursor": cursor}).status_code == 200
    r = client.get("/edges", params={"concept": "embeddings", "cursor": cursor})
    assert r.status_code == 400 and "filters" in r.json()["detail"]


# ---------------------------------------------------------------------------------------------
# The pure pieces


@given(
    st.lists(st.lists(st.integers(), max_size=30, unique=True), min_size=1, max_size=4),
    st.integers(min_value=1, max_value=12),
)
def test_keyset_pages_concatenate_to_the_sections(sections: list[list[int]], limit: int) -> None:
    """Following keyset_sections' positions to the end reproduces every (key-ordered) section
    exactly, and no section is ever asked for more than limit + 1 items."""
    named = {f"s{i}": sorted(items) for i, items in enumerate(sections)}
    asked: list[int] = []

    def section(items: list[int]) -> Section[int]:
        def read(pos: int | None, n: int) -> list[int]:
            asked.append(n)
            return [x for x in items if pos is None or x > pos][:n]

        return read, lambda x: x

    readers = {name: section(items) for name, items in named.items()}
    got: dict[str, list[int]] = {name: [] for name in named}
    positions: list[int | str] | None = None
    for _ in range(40):
        page, positions = keyset_sections(readers, positions, limit)
        assert all(len(items) <= limit for items in page.values())
        for name, items in page.items():
            got[name].extend(items)
        if positions is None:
            break
    assert got == named and all(n <= limit + 1 for n in asked)


# Text a database stores: no NUL, no lone surrogate (what every id and time in a cursor is).
STORABLE = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"))


@given(st.dictionaries(st.sampled_from(["as_of", "concept", "since"]), STORABLE), STORABLE)
def test_a_cursor_round_trips(query: dict[str, str], pos: str) -> None:
    """A cursor resumes to the same kind, query and position it was encoded with."""
    cur = Cursor("concepts", query, {"v": "t"}, pos)
    back = Cursor.resume(cur.encode(), "concepts", query)
    assert back is not None and (back.query, back.at, back.pos) == (query, {"v": "t"}, pos)
    with pytest.raises(InputError):
        Cursor.resume(cur.encode(), "answers", {})


@pytest.mark.parametrize("pos", ["a\x00b", "\ud800", 2**63, -(2**63) - 1, ["x", 10**30], {"k": "\x00"}])
def test_a_cursor_decoding_to_what_no_page_writes_is_refused(pos: object) -> None:
    """A forged cursor whose position holds a NUL, a lone surrogate or an integer outside 64
    bits is refused as a cursor (400), before any query sees it."""
    with pytest.raises(InputError, match="cursor"):
        Cursor.resume(Cursor("answers", {}, None, pos).encode(), "answers", {})


# ---------------------------------------------------------------------------------------------
# What a generated client needs: operation ids, open reads without a lock, dates, search, filters

TIMES = {"as_of", "known_at", "since", "from", "to", "valid_at", "invalid_at"}
DATE_OR_DATETIME = [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"}]


def test_operation_ids_are_the_route_names(openapi: dict[str, Any]) -> None:
    """Every operation id is a short snake_case name, unique: what a generated client calls it."""
    ids = [op["operationId"] for _, _, op in _operations(openapi)]
    assert len(ids) == len(set(ids))
    assert all(i.isidentifier() and i == i.lower() and not i.endswith(("_get", "_post")) for i in ids)
    wanted = {"ask", "list_concepts", "get_concept", "search_concepts", "list_answers", "get_answer"}
    assert wanted <= set(ids)
    assert openapi["paths"]["/concepts/{concept_id}"]["get"]["operationId"] == "get_concept"


def test_open_reads_declare_no_lock_and_writes_need_a_token(openapi: dict[str, Any]) -> None:
    """With reads open, no read (nor /ask) declares a security requirement; every write declares the bearer token."""
    for path, method, op in _operations(openapi):
        if method == "get" or path == "/ask":
            assert "security" not in op, f"{method.upper()} {path}"
        else:
            assert op["security"] == [{"HTTPBearer": []}], f"{method.upper()} {path}"
    assert list(openapi["components"]["securitySchemes"]) == ["HTTPBearer"]


def test_reads_that_require_a_token_declare_it() -> None:
    """When the server requires a token for reads, every read and /ask declares the one bearer scheme."""
    schema = _openapi(ApiConfig(reads_require_token=True))
    for path, method, op in _operations(schema):
        if path not in ("/healthz", "/readyz"):
            assert op["security"] == [{"HTTPBearer": []}], f"{method.upper()} {path}"
    assert list(schema["components"]["securitySchemes"]) == ["HTTPBearer"]


def _time_schemas(openapi: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, method, op in _operations(openapi):
        for p in op.get("parameters", []):
            if p["name"] in TIMES:
                yield f"{method.upper()} {path} {p['name']}", p["schema"]
    for name, model in openapi["components"]["schemas"].items():
        if name.endswith("In"):
            for field, schema in model.get("properties", {}).items():
                if field in TIMES:
                    yield f"{name}.{field}", schema


def test_every_time_a_client_sends_may_be_a_date(openapi: dict[str, Any]) -> None:
    """Each time parameter and request field is typed date or date-time, so a typed client can send 2024-06-01."""
    found = dict(_time_schemas(openapi))
    assert len(found) >= 12
    for where, schema in found.items():
        options = [s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"]
        assert options == [{"anyOf": DATE_OR_DATETIME}] or options == DATE_OR_DATETIME, where


def test_the_relation_filter_lists_every_relation() -> None:
    """The relation enum a client sees is the data plane's relation list."""
    assert tuple(RelationName) == RELATIONS


# -- search and list filters, as the CLI ------------------------------------------------------------


@pytest.mark.parametrize("text", ["retreival augmented", "embedings", "graph rag", "attention"])
def test_concept_search_gives_the_clis_hits(client: TestClient, database_url: str, text: str) -> None:
    """GET /search/concepts answers exactly what `kg concept search --format json` prints."""
    cli = json.loads(ok(database_url, "concept", "search", text, "--format", "json").stdout)
    r = client.get("/search/concepts", params={"q": text})
    assert r.status_code == 200 and r.json() == cli and cli


@pytest.mark.parametrize(
    "filters",
    [
        {"relation": "contrasts_with"},
        {"min_degree": 8},
        {"max_degree": 1},
        {"relation": "part_of", "min_degree": 3, "max_degree": 6},
    ],
)
def test_list_filters_give_the_clis_listing(
    client: TestClient, database_url: str, filters: dict[str, Any]
) -> None:
    """GET /concepts with kg concept list's filters, paged 7 at a time, lists exactly the CLI's concepts."""
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in filters.items()]
    cli = json.loads(
        ok(database_url, "concept", "list", "--limit", "1000", *flags, "--format", "json").stdout
    )
    expected = [c["concept_id"] for c in cli["concepts"]]
    seen: list[str] = []
    cursor: str | None = None
    while True:
        params = {"limit": 7, **({"cursor": cursor} if cursor else filters)}
        r = client.get("/concepts", params=params)
        assert r.status_code == 200, r.text
        seen += [c["concept_id"] for c in r.json()]
        cursor = r.headers.get("x-next-cursor")
        if cursor is None:
            break
    assert seen == expected and expected


def test_a_filtered_cursor_refuses_other_filters(client: TestClient) -> None:
    """A cursor of a filtered walk, given with different filters, is a 400 problem."""
    first = client.get("/concepts", params={"relation": "contrasts_with", "limit": 2})
    cursor = first.headers["x-next-cursor"]
    r = client.get("/concepts", params={"relation": "part_of", "cursor": cursor})
    assert r.status_code == 400 and r.json()["detail"] == "cursor belongs to a query with other filters"


@pytest.mark.parametrize("params", [{"relation": "depends_on"}, {"min_degree": -1}, {"q": ""}, {"limit": 0}])
def test_bad_search_and_filter_values_are_422(client: TestClient, params: dict[str, Any]) -> None:
    """An unknown relation, a negative degree, an empty query or a zero limit is a 422 problem."""
    path = "/search/concepts" if "q" in params or "limit" in params else "/concepts"
    r = client.get(path, params={"q": "rag", **params} if path == "/search/concepts" else params)
    assert r.status_code == 422 and r.headers["content-type"].startswith("application/problem+json")


# -- a generated client (slow) -----------------------------------------------------------------


def _generator() -> str:
    """openapi-python-client's command: KG_OPENAPI_PYTHON_CLIENT, else on PATH."""
    found = os.environ.get("KG_OPENAPI_PYTHON_CLIENT") or shutil.which("openapi-python-client")
    if found is None:
        reason = (
            "openapi-python-client not found: install it in its own virtualenv (it pins typer<0.28) "
            "and set KG_OPENAPI_PYTHON_CLIENT to its command (.ci/run does)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return found


@pytest.mark.slow
def test_a_generated_client_asks_searches_lists_shows_and_pages(runtime: Runtime, tmp_path: Path) -> None:
    """A client generated by openapi-python-client, with no credentials, calls ask, search, list
    (filtered, with a date), show, and pages through the recorded answers."""
    app = create_app(runtime.settings, runtime=runtime)
    spec = tmp_path / "openapi.json"
    spec.write_text(json.dumps(app.openapi()), encoding="utf-8")
    done = subprocess.run(
        [
            _generator(),
            "generate",
            "--path",
            str(spec),
            "--output-path",
            str(tmp_path / "kg_client"),
            "--meta",
            "none",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        _call_generated_client(importlib.import_module("kg_client"), app)
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == "kg_client" or m.startswith("kg_client.")]:
            del sys.modules[name]


def _call_generated_client(pkg: Any, app: Any) -> None:
    ask = importlib.import_module("kg_client.api.ask.ask")
    graph = {
        n: importlib.import_module(f"kg_client.api.graph.{n}")
        for n in ("search_concepts", "list_concepts", "get_concept")
    }
    list_answers = importlib.import_module("kg_client.api.audit.list_answers")
    models = importlib.import_module("kg_client.models")
    with TestClient(app) as http:
        api = pkg.Client(base_url="http://testserver")
        api.set_httpx_client(http)
        asked = [
            ask.sync(client=api, body=models.AskIn(question=f"What does {name} build on?")).answer_id
            for name in ("RAG", "embeddings", "vector search")
        ]
        hits = graph["search_concepts"].sync(client=api, q="retreival augmented")
        assert hits[0].concept_id == "rag" and hits[0].field == "name"
        before = graph["list_concepts"].sync(
            client=api, relation=models.RelationName.BUILDS_ON, as_of=date(2024, 6, 1), limit=1000
        )
        assert before and all(c.concept_id for c in before)
        rag = graph["get_concept"].sync("rag", client=api, as_of=date(2025, 6, 1))
        assert rag.name == "Retrieval-augmented generation"
        seen: list[str] = []
        cursor: Any = pkg.types.UNSET
        while True:
            page = list_answers.sync_detailed(client=api, limit=2, cursor=cursor)
            assert page.status_code == 200
            seen += [a.answer_id for a in page.parsed]
            cursor = page.headers.get("x-next-cursor", pkg.types.UNSET)
            if cursor is pkg.types.UNSET:
                break
        assert seen == list(reversed(asked))
