"""The HTTP API for people trying it: an unknown concept's 404 says which concepts are near (as
`kg` does), `GET /concepts/{id}` carries the edges and lessons `kg concept show` prints, and the
examples Swagger UI and ReDoc show are real values, never `"string"`."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from control_plane.surfaces.http import create_app
from control_plane.surfaces.runtime import Runtime

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient


@pytest.fixture
def client(curriculum_runtime: Runtime) -> Iterator[TestClient]:
    with TestClient(create_app(curriculum_runtime.settings, runtime=curriculum_runtime)) as c:
        yield c


def test_an_unknown_concept_is_a_404_with_the_concepts_near_it(client: TestClient) -> None:
    """A misspelt concept id is a 404 naming the concepts it may mean and the search route."""
    for url in ("/concepts/embedings", "/concepts/embedings/history", "/edges?concept=embedings"):
        response = client.get(url)
        assert response.status_code == 404
        detail = response.json()["detail"]
        assert "did you mean embeddings (Embeddings)?" in detail, (url, detail)
        assert "GET /search/concepts?q=embedings" in detail


def test_get_concept_carries_its_edges_and_lessons(client: TestClient) -> None:
    """`GET /concepts/rag` holds the concept and its edges out and in and its lessons, each with
    grounding: what `kg concept show rag --format json` prints."""
    body = client.get("/concepts/rag").json()
    assert body["concept_id"] == "rag" and body["grounding"]["reason"]
    assert {e["target_id"] for e in body["outgoing"]} >= {"embeddings", "vector_search"}
    assert all(e["grounding"]["reason"] for e in body["outgoing"] + body["incoming"])
    assert body["lessons"] and all(lesson["lesson_id"] and "title" in lesson for lesson in body["lessons"])


def _resolve(schema: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _example(schema: dict[str, Any], spec: dict[str, Any]) -> Any:
    """The example a Swagger UI draws for ``schema``: the schema's own example if it has one, else
    one built from its parts (a bare string is "string")."""
    schema = _resolve(schema, spec)
    if schema.get("examples"):
        return schema["examples"][0]
    if "example" in schema:
        return schema["example"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if _resolve(s, spec).get("type") != "null"]
            return _example(options[0], spec) if options else None
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {k: _example(v, spec) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [_example(schema.get("items", {}), spec)]
    if kind == "string":
        return "2024-06-01T00:00:00Z" if schema.get("format") in ("date", "date-time") else "string"
    return {"integer": 0, "number": 0.0, "boolean": True}.get(str(kind))


def _placeholders(value: Any, where: str = "") -> list[str]:
    if value == "string":
        return [where or "(the body)"]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _placeholders(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _placeholders(v, f"{where}[{i}]")]
    return []


def _bodies(spec: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, item in spec["paths"].items():
        for method, op in item.items():
            body = op.get("requestBody", {}).get("content", {}).get("application/json")
            if body:
                yield f"{method.upper()} {path} request", body["schema"]
            for code in ("200", "201"):
                media = op.get("responses", {}).get(code, {}).get("content", {}).get("application/json", {})
                if "schema" in media:
                    yield f"{method.upper()} {path} {code}", media["schema"]


def test_the_docs_examples_are_real_values(client: TestClient) -> None:
    """Every request body and every 200/201 response in /openapi.json has an example made of real
    values: none of the `"string"` placeholders Swagger UI draws for a bare string."""
    spec = client.get("/openapi.json").json()
    found = {where: _placeholders(_example(schema, spec)) for where, schema in _bodies(spec)}
    assert {where: p[:3] for where, p in found.items() if p} == {}


def test_the_request_examples_are_accepted(client: TestClient, curriculum_runtime: Runtime) -> None:
    """Each request body's example, sent as it is (with a write token, in the order of the
    document: the concept the edge examples use is added first), is not refused as invalid."""
    _, secret = curriculum_runtime.tokens.create("examples", "write")
    spec = client.get("/openapi.json").json()
    for path, item in spec["paths"].items():
        for method, op in item.items():
            body = op.get("requestBody", {}).get("content", {}).get("application/json")
            if not body:
                continue
            url = path.replace("{concept_id}", "rag").replace("{lesson_id}", "L_examples")
            sent = client.request(
                method.upper(),
                url,
                json=_example(body["schema"], spec),
                headers={"Authorization": f"Bearer {secret}"},
            )
            assert sent.status_code not in (400, 422), (method, path, sent.text)
