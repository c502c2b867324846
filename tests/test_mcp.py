"""The MCP server, driven by the SDK's own client over stdio (``kg mcp`` as a child process) and over
streamable HTTP (``/mcp`` of the HTTP app, served by uvicorn on loopback): the same answers as
``kg ask``, the same tokens and limits as the HTTP API, the same one-line errors as ``kg``, and
answers recorded and replayable like any other."""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
import uvicorn
from fake_deepseek import closed_port
from kg_cli import kg, ok
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from serving_harness import served
from structlog.testing import capture_logs

from control_plane.settings import Settings
from control_plane.surfaces.http import ApiConfig, create_app
from control_plane.surfaces.http.app import MCP_PATH
from control_plane.surfaces.runtime import ensure_initialised
from data_plane import connect
from data_plane.relations import RELATIONS
from data_plane.tokens import TokenStore

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "What does RAG build on?"
NOWHERE = "What does quantum basket weaving build on?"
TRANSPORTS = ["http", "stdio"]
WRITE_TOOLS = {
    "add_concept",
    "revise_concept",
    "invalidate_concept",
    "add_edge",
    "revise_edge",
    "invalidate_edge",
}
READ_TOOLS = {
    "ask",
    "search_concepts",
    "show_concept",
    "history",
    "snapshot",
    "diff",
    "recorded_answers",
    "replay",
}
COLBERT = {
    "concept_id": "colbert",
    "name": "ColBERT",
    "reason": "Added for the 2026 retrieval unit",
    "evidence": {"doc": "syllabus-2026.pdf", "page": 4},
}
# What differs between two askings of one question: who and when, and how long each step took.
VOLATILE = {"answer_id", "created_at", "as_of", "latency_ms"}


def stable(value: Any) -> Any:
    """``value`` without the keys that differ between two askings (``VOLATILE``), at any depth."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


@pytest.fixture
def curriculum(database_url: str) -> str:
    """A database (SQLite, and PostgreSQL when configured) holding the bundled curriculum."""
    ensure_initialised(database_url)
    return database_url


def token(url: str, scope: str) -> str:
    """The secret of a new API token of ``scope``."""
    engine = connect(url)
    try:
        return TokenStore(engine).create(f"mcp-{scope}", scope)[1]
    finally:
        engine.dispose()


@contextmanager
def http_server(url: str, config: ApiConfig | None = None) -> Iterator[str]:
    """The HTTP app over ``url`` served by uvicorn on a loopback port (in this process, so its logs
    can be captured); yields its base URL."""
    app = create_app(Settings(database_url=url, synthesizer="offline"), config=config)
    port = closed_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive(), "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join()
        app.state.runtime.close()


@asynccontextmanager
async def http_client(base: str, secret: str | None = None) -> AsyncIterator[Client]:
    """The SDK's client of ``base``/mcp, sending ``secret`` as its bearer token."""
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client,
    ):
        yield client


@asynccontextmanager
async def stdio_client(
    url: str, secret: str | None = None, env: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    """The SDK's client of ``kg --db URL mcp``, started as a desktop client starts it (legacy
    handshake), with ``secret`` in ``KG_MCP_TOKEN``."""
    server_env = {
        "PYTHONPATH": str(ROOT),
        "KG_SYNTHESIZER": "offline",
        "DEEPSEEK_API_KEY": "",
        "KG_LOG_LEVEL": "warning",
        **({"KG_MCP_TOKEN": secret} if secret else {}),
        **(env or {}),
    }
    command = StdioServerParameters(
        command=sys.executable, args=["-m", "control_plane.surfaces.cli", "--db", url, "mcp"], env=server_env
    )
    async with Client(command, mode="legacy") as client:
        yield client


def session(
    transport: str,
    url: str,
    *,
    secret: str | None = None,
    config: ApiConfig | None = None,
    env: dict[str, str] | None = None,
) -> Callable[[Callable[[Client], Awaitable[Any]]], Any]:
    """Run ``script(client)`` against a server of ``transport`` over ``url``; its result."""

    def run(script: Callable[[Client], Awaitable[Any]]) -> Any:
        async def over_stdio() -> Any:
            async with stdio_client(url, secret, env) as client:
                return await script(client)

        if transport == "stdio":
            return anyio.run(over_stdio)
        with http_server(url, config) as base:

            async def over_http() -> Any:
                async with http_client(base, secret) as client:
                    return await script(client)

            return anyio.run(over_http)

    return run


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


# -- the catalogue ------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_tools_are_listed_with_descriptions_and_argument_schemas(curriculum: str, transport: str) -> None:
    """Every read and write tool is listed, each with a description and an input schema that
    describes every argument; only the write tools are marked as not read-only."""

    async def script(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {t.name: t for t in session(transport, curriculum)(script)}
    assert set(tools) == READ_TOOLS | WRITE_TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 60, tool.name
        properties = tool.input_schema["properties"]
        assert all(p.get("description") for p in properties.values()), tool.name
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (tool.name in READ_TOOLS)
        assert tool.annotations.destructive_hint is False
    assert tools["ask"].input_schema["required"] == ["question"]
    assert tools["add_edge"].input_schema["properties"]["relation"]["enum"] == list(RELATIONS)


def test_the_schema_resource_and_the_prompts(curriculum: str) -> None:
    """kg://schema names every relation type with its direction; the study-plan prompt asks the
    ask tool with what the learner already knows."""

    async def script(client: Client) -> Any:
        resources = (await client.list_resources()).resources
        schema = await client.read_resource("kg://schema")
        prompts = (await client.list_prompts()).prompts
        plan = await client.get_prompt("study_plan", {"target": "RAG", "known": "embeddings"})
        return resources, schema, prompts, plan

    resources, schema, prompts, plan = session("http", curriculum)(script)
    assert [str(r.uri) for r in resources] == ["kg://schema"]
    relations = json.loads(schema.contents[0].text)["relations"]
    assert [r["name"] for r in relations] == list(RELATIONS)
    assert {r["name"] for r in relations if r["symmetric"]} == {"related", "contrasts_with"}
    assert {p.name for p in prompts} == {"study_plan", "explain_with_evidence"}
    words = plan.messages[0].content.text
    assert "ask tool" in words and "I already know embeddings. What must I learn before RAG?" in words


# -- asking -------------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_ask_returns_the_answer_kg_ask_prints(curriculum: str, transport: str) -> None:
    """The ask tool's result is the answer object of `kg ask --format json` for the same
    question, key for key (but for who asked when, and how long it took)."""
    cli = json.loads(ok(curriculum, "ask", QUESTION, "--format", "json", "--fresh").stdout)

    async def script(client: Client) -> Any:
        return await client.call_tool("ask", {"question": QUESTION, "fresh": True})

    result = session(transport, curriculum)(script)
    assert not result.is_error
    assert result.structured_content["answer_id"] != cli["answer_id"]
    assert stable(result.structured_content) == stable(cli)
    assert json.loads(text_of(result)) == result.structured_content


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_abstention_is_an_answer_saying_why(curriculum: str, transport: str) -> None:
    """A question naming no concept abstains with its reason, as an answer (not a tool error)."""

    async def script(client: Client) -> Any:
        return await client.call_tool("ask", {"question": NOWHERE})

    result = session(transport, curriculum)(script)
    assert not result.is_error
    answer = result.structured_content
    assert answer["abstained"] is True and answer["abstain_reason"] == "no known concept is named"
    assert stable(answer) == stable(
        json.loads(ok(curriculum, "ask", NOWHERE, "--format", "json", "--fresh").stdout)
    )


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_question_asked_through_mcp_is_recorded_and_replayable(curriculum: str, transport: str) -> None:
    """The answer is listed by recorded_answers and by `kg audit answers`, and `kg audit replay`
    reproduces it, as the replay tool does."""

    async def script(client: Client) -> Any:
        asked = await client.call_tool("ask", {"question": QUESTION})
        answer_id = asked.structured_content["answer_id"]
        listed = await client.call_tool("recorded_answers", {"limit": 5})
        replayed = await client.call_tool("replay", {"answer_id": answer_id})
        return answer_id, listed.structured_content, replayed.structured_content

    answer_id, listed, replayed = session(transport, curriculum)(script)
    assert [a["answer_id"] for a in listed["answers"]][:1] == [answer_id]
    assert answer_id in ok(curriculum, "audit", "answers").stdout
    cli = json.loads(ok(curriculum, "audit", "replay", answer_id).stdout)
    assert cli["reproduced"] is True and replayed["reproduced"] is True
    assert cli["answer_id"] == replayed["answer_id"] == answer_id


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_asking_past_the_limit_is_refused(curriculum: str, transport: str) -> None:
    """With a limit of 2 questions a minute, the third ask is a tool error naming the limit; the
    answers before it were given."""
    config = ApiConfig(ask_rate_per_min=2, rate_clock=lambda: 1_000.0)

    async def script(client: Client) -> Any:
        return [await client.call_tool("ask", {"question": QUESTION}) for _ in range(3)]

    env = {"KG_API_ASK_RATE_PER_MIN": "2"}
    results = session(transport, curriculum, config=config, env=env)(script)
    assert [r.is_error for r in results] == [False, False, True]
    who = (
        "client address 127.0.0.1 (no token was sent)"
        if transport == "http"
        else "this stdio client (no token was set)"
    )
    assert text_of(results[2]).startswith(f"too many ask calls for {who}: the limit is 2 per minute")


def test_mcp_and_http_questions_spend_one_limit_per_token(curriculum: str) -> None:
    """A token asking through POST /ask and through the ask tool spends one limit: after two REST
    questions the tool's third is refused, and then /ask's fourth is a 429."""
    secret = token(curriculum, "read")
    config = ApiConfig(ask_rate_per_min=3, rate_clock=lambda: 1_000.0)
    bearer = {"Authorization": f"Bearer {secret}"}
    with http_server(curriculum, config) as base:
        for _ in range(2):
            assert httpx.post(f"{base}/ask", json={"question": QUESTION}, headers=bearer).status_code == 200

        async def script() -> Any:
            async with http_client(base, secret) as client:
                return [await client.call_tool("ask", {"question": QUESTION}) for _ in range(2)]

        third, fourth = anyio.run(script)
        last = httpx.post(f"{base}/ask", json={"question": QUESTION}, headers=bearer)
    assert not third.is_error
    assert fourth.is_error and text_of(fourth).startswith("too many ask calls for token ")
    assert last.status_code == 429 and "too many /ask requests for token " in last.json()["detail"]


# -- writing ------------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_write_is_refused_without_a_token_and_by_a_read_token(curriculum: str, transport: str) -> None:
    """add_concept without a token, or with a read token, is a tool error, and nothing is written."""

    async def script(client: Client) -> Any:
        return await client.call_tool("add_concept", COLBERT)

    refused = session(transport, curriculum)(script)
    by_reader = session(transport, curriculum, secret=token(curriculum, "read"))(script)
    assert refused.is_error and text_of(refused).startswith("a valid bearer token is required (")
    assert by_reader.is_error and text_of(by_reader).endswith("has scope 'read'; this needs 'write'")
    assert "error: " in kg(curriculum, "concept", "show", "colbert").stderr


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_write_token_writes_and_a_dry_run_writes_nothing(curriculum: str, transport: str) -> None:
    """With a write token, a dry run says what it would write and writes nothing; the write then
    writes it, grounded with the token's name as its source."""

    async def script(client: Client) -> Any:
        rehearsed = await client.call_tool("add_concept", {**COLBERT, "dry_run": True})
        before = await client.call_tool("show_concept", {"concept_id": "colbert"})
        written = await client.call_tool("add_concept", COLBERT)
        after = await client.call_tool("show_concept", {"concept_id": "colbert"})
        return rehearsed, before, written, after

    rehearsed, before, written, after = session(transport, curriculum, secret=token(curriculum, "write"))(
        script
    )
    assert rehearsed.structured_content["dry_run"] is True and before.is_error
    assert [v["op"] for v in written.structured_content["written"]] == ["assert"]
    concept = after.structured_content["concept"]
    assert concept["name"] == "ColBERT" and concept["grounding"]["source"] == "mcp:mcp-write"
    assert (
        json.loads(ok(curriculum, "concept", "show", "colbert", "--format", "json").stdout)["concept"]
        == concept
    )


# -- errors, logs, metrics ------------------------------------------------------------------------


def test_errors_are_the_one_line_kg_prints_with_its_did_you_mean(curriculum: str) -> None:
    """A concept id naming no concept is refused with the very line `kg concept show` prints
    after `error:`, did-you-mean included."""
    cli = kg(curriculum, "concept", "show", "embedings")

    async def script(client: Client) -> Any:
        return await client.call_tool("show_concept", {"concept_id": "embedings"})

    result = session("http", curriculum)(script)
    assert result.is_error and "did you mean embeddings (Embeddings)?" in text_of(result)
    assert cli.stderr.strip() == f"error: {text_of(result)}"


def test_text_no_database_stores_is_refused_naming_the_argument(curriculum: str) -> None:
    """A question holding a NUL is refused before anything runs, naming the argument; nothing is
    recorded."""

    async def script(client: Client) -> Any:
        return await client.call_tool("ask", {"question": "What does RAG\x00 build on?"})

    result = session("http", curriculum)(script)
    assert result.is_error and text_of(result).startswith("question holds a NUL character")
    assert ok(curriculum, "audit", "answers").stdout.strip() == "no recorded answers"


def test_calls_are_logged_and_counted_and_no_log_holds_the_secret(curriculum: str) -> None:
    """Each call is one `mcp.call` event (tool, transport, outcome) and counts in
    kg_mcp_tool_calls_total and the answer counters of /metrics; the token's secret is in no
    event."""
    secret = token(curriculum, "write")
    with capture_logs() as events, http_server(curriculum) as base:

        async def script() -> None:
            async with http_client(base, secret) as client:
                await client.call_tool("ask", {"question": QUESTION})
                await client.call_tool("add_concept", COLBERT)
                await client.call_tool("show_concept", {"concept_id": "nowhere"})

        anyio.run(script)
        metrics = httpx.get(f"{base}/metrics").text
    calls = [(e["tool"], e["transport"], e["outcome"]) for e in events if e["event"] == "mcp.call"]
    assert calls == [("ask", "http", "ok"), ("add_concept", "http", "ok"), ("show_concept", "http", "error")]
    assert not [e for e in events if secret in json.dumps(e, default=str)]
    for line in (
        'kg_mcp_tool_calls_total{outcome="ok",tool="ask"} 1.0',
        'kg_mcp_tool_calls_total{outcome="error",tool="show_concept"} 1.0',
        'kg_answers_total{outcome="answered"} 1.0',
        'kg_http_requests_total{method="POST",route="/mcp",status="200"}',
    ):
        assert line in metrics, line


def test_kg_mcp_refuses_to_start_with_a_token_that_is_not_one(curriculum: str) -> None:
    """`kg mcp` with a KG_MCP_TOKEN no active token has stops at once, naming the setting."""
    result = kg(curriculum, "mcp", env={"KG_MCP_TOKEN": "kg_not-a-token"})
    assert result.exit_code == 1
    assert result.stderr.strip().startswith("error: KG_MCP_TOKEN is not the secret of an active token")


def test_a_get_for_a_stream_is_405_not_a_connection_held_open(curriculum: str) -> None:
    """The server starts no messages of its own, so GET /mcp (a stream for them) is answered
    405, allowing POST, as the protocol says, instead of an event stream that never ends."""
    with (
        http_server(curriculum) as base,
        httpx.stream("GET", f"{base}/mcp", headers={"Accept": "text/event-stream"}) as reply,
    ):
        answered = reply.status_code, reply.headers.get("allow")  # read before any body is
    assert answered == (405, "POST")


def test_kg_serve_with_two_workers_answers_mcp_on_every_connection(tmp_path: Path) -> None:
    """`kg serve --workers 2` answers /mcp with no session to keep: six clients, each POST on a
    connection of its own (whichever worker accepts it), all list the tools and get answers."""
    url = f"sqlite:///{tmp_path}/kg.sqlite3"
    ensure_initialised(url)
    port = closed_port()
    argv = [sys.executable, "-m", "control_plane.surfaces.cli", "--db", url, "serve", "--port", str(port)]
    with served(url, workers=2, port=port, argv=[*argv, "--workers", "2"]) as server:

        async def one(question: str) -> Any:
            async with (
                httpx2.AsyncClient(headers={"Connection": "close"}) as http,
                Client(
                    streamable_http_client(f"{server.url}/mcp", http_client=http), mode="legacy"
                ) as client,
            ):
                await client.list_tools()
                return await client.call_tool("ask", {"question": question})

        async def script() -> list[Any]:
            return [
                await one(f"What does {name} build on?") for name in ("RAG", "GraphRAG", "vector search") * 2
            ]

        results = anyio.run(script)
    assert [r.is_error for r in results] == [False] * 6
    assert {r.structured_content["abstained"] for r in results} == {False}


def test_the_stdio_token_setting_never_shows_itself() -> None:
    """KG_MCP_TOKEN is read once into the serving settings as a secret that no repr reveals."""
    from control_plane.settings import ServingSettings

    serving = ServingSettings.from_env({"KG_MCP_TOKEN": " kg_s3cret "})
    assert serving.mcp_token is not None and serving.mcp_token.reveal() == "kg_s3cret"
    assert "kg_s3cret" not in repr(serving)
    assert ServingSettings.from_env({}).mcp_token is None


def test_the_client_configurations_in_the_docs_are_what_the_server_takes() -> None:
    """docs/mcp.md's two configurations are valid JSON: the stdio one starts `kg mcp` with the
    settings it reads, the HTTP one points at the app's MCP path with a bearer header."""
    blocks = re.findall(r"```json\n(.*?)```", (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8"), re.S)
    stdio, over_http = (json.loads(b)["mcpServers"]["curriculum-kg"] for b in blocks)
    assert (stdio["command"], stdio["args"]) == ("kg", ["mcp"])
    assert set(stdio["env"]) == {"KG_DATABASE_URL", "KG_MCP_TOKEN"}
    assert over_http["url"].endswith(MCP_PATH) and over_http["headers"]["Authorization"].startswith(
        "Bearer kg_"
    )
