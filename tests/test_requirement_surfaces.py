"""Requirement groups where people and programs read the graph: `kg concept show`, `kg audit
history --requirement`, `kg audit snapshot`, and the HTTP routes for groups and snapshots."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from control_plane.settings import Settings
from control_plane.surfaces.http import create_app
from control_plane.surfaces.runtime import Runtime, ensure_initialised
from data_plane import WriteGateway, connect
from data_plane.testing import grounding
from tests.kg_cli import initialised_sqlite, ok

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient


def _group(url: str) -> None:
    """rag needs one of embeddings or vector_search (in the bundled curriculum)."""
    engine = connect(url)
    try:
        WriteGateway(engine).assert_requirement(
            "rag.1",
            target_id="rag",
            needs=1,
            options=[["embeddings"], ["vector_search"]],
            grounding=grounding("one way in to RAG"),
        )
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def grouped(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = initialised_sqlite(Path(tmp_path_factory.mktemp("grouped")))
    _group(url)
    return url


def test_concept_show_lists_its_groups_and_the_groups_it_is_an_option_of(grouped: str) -> None:
    """`kg concept show` prints the target's group with its options, and the member's side too."""
    out = ok(grouped, "concept", "show", "rag").output
    assert "requirements (1):" in out and "rag.1 -> rag needs 1 of: embeddings | vector_search" in out
    shown = json.loads(ok(grouped, "concept", "show", "embeddings", "--format", "json").stdout)
    assert [g["group_id"] for g in shown["option_of"]] == ["rag.1"]


def test_audit_history_of_a_group_lists_its_and_its_members_versions(grouped: str) -> None:
    """`kg audit history --requirement` gives the group's version and each member's."""
    history = json.loads(ok(grouped, "audit", "history", "rag.1", "--requirement", "--format", "json").stdout)
    assert [(v["table"], v["key"]) for v in history] == [
        ("requirement_groups", "rag.1"),
        ("requirement_members", "rag.1/1/embeddings"),
        ("requirement_members", "rag.1/2/vector_search"),
    ]


def test_audit_snapshot_holds_the_groups(grouped: str) -> None:
    """The JSON snapshot has requirement_groups and requirement_members; the text counts groups."""
    snap = json.loads(ok(grouped, "audit", "snapshot", "--format", "json").stdout)
    assert [v["key"] for v in snap["requirement_groups"]] == ["rag.1"]
    assert len(snap["requirement_members"]) == 2
    assert "1 requirement group" in ok(grouped, "audit", "snapshot").output


@pytest.fixture
def client(database_url: str) -> Iterator[tuple[TestClient, dict[str, str]]]:
    ensure_initialised(database_url)
    _group(database_url)
    rt = Runtime(Settings(database_url=database_url, synthesizer="offline"), connect(database_url))
    _, secret = rt.tokens.create("read-test", "read")
    with TestClient(create_app(rt.settings, runtime=rt), raise_server_exceptions=False) as c:
        yield c, {"Authorization": f"Bearer {secret}"}
    rt.close()


def test_http_reads_groups_a_concepts_groups_and_snapshots_them(
    client: tuple[TestClient, dict[str, str]],
) -> None:
    """GET /requirements/{id}, /concepts/{id}/requirements, /requirements/{id}/history and /snapshot show the group."""
    c, auth = client
    group = c.get("/requirements/rag.1", headers=auth).json()
    assert (group["target_id"], group["needs"], group["options"]) == (
        "rag",
        1,
        [["embeddings"], ["vector_search"]],
    )
    assert [g["group_id"] for g in c.get("/concepts/rag/requirements", headers=auth).json()] == ["rag.1"]
    assert len(c.get("/requirements/rag.1/history", headers=auth).json()) == 3
    assert c.get("/requirements/nope", headers=auth).status_code == 404
    snap = c.get("/snapshot", headers=auth).json()
    assert [v["key"] for v in snap["requirement_groups"]] == ["rag.1"]
