"""The MCP server itself, on the official SDK's ``MCPServer``: the tools of ``tools`` (each behind
``Backend.serve``), the schema resource and the prompts of ``catalog``; run over stdio
(:func:`run_stdio`, what ``kg mcp`` runs) or served over streamable HTTP (:class:`Streamable`, the
``/mcp`` endpoint of the HTTP app).

Over HTTP the server is stateless and answers in JSON: each POST is a whole exchange, no session
is kept in a process, so any worker of ``kg serve --workers N`` answers any request, as for the
REST routes. Like those routes, ``/mcp`` checks no ``Host`` header: what guards it is the same
rule (writes need a write token; reads one when ``KG_API_READS_REQUIRE_TOKEN=1``).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Final

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from control_plane.surfaces.mcp import catalog
from control_plane.surfaces.mcp.backend import Backend, Needs
from control_plane.surfaces.mcp.tools import TOOLS, ToolSpec

__all__ = ["Streamable", "build_server", "run_stdio"]

INSTRUCTIONS: Final = (
    "A bi-temporal curriculum knowledge graph. `ask` answers a learner's question with the evidence "
    "sub-graph it rests on (every edge with its grounding) or abstains and says why; find concept "
    "ids with `search_concepts`, read one with `show_concept`, its past with `history`, the graph "
    "at a time with `snapshot` and what changed with `diff`; every answer is recorded "
    "(`recorded_answers`) and can be re-run (`replay`). Writes (add, revise, invalidate a "
    "concept or an edge) need a write token and take `dry_run`; nothing is ever deleted. The "
    "resource kg://schema describes the relations and the four time stamps."
)


def build_server(backend: Backend) -> MCPServer:
    """The MCP server over ``backend``: every tool of :data:`~.tools.TOOLS`, the schema resource
    and the prompts."""
    # MCPServer calls logging.basicConfig with its level; at WARNING it prints only what
    # Python's last-resort handler would print anyway (a library's warnings, on stderr).
    server: MCPServer = MCPServer(
        "curriculum-kg", title="Curriculum knowledge graph", instructions=INSTRUCTIONS, version=_version(),
        log_level="WARNING",
    )  # fmt: skip
    for spec in TOOLS:
        server.add_tool(
            _served(backend, spec),
            name=spec.name,
            title=spec.title,
            description=inspect.getdoc(spec.body),
            annotations=ToolAnnotations(
                title=spec.title,
                read_only_hint=spec.needs is not Needs.WRITE,
                destructive_hint=False,  # nothing is deleted: a write adds versions
                open_world_hint=False,
            ),
        )
    server.resource(
        catalog.SCHEMA_URI,
        name="schema",
        title="The graph's schema",
        description="Relation types and their directions, the time stamps, key formats, the answer contract.",
        mime_type="application/json",
    )(catalog.schema_text)
    server.prompt(name="study_plan", title="Study plan")(catalog.study_plan)
    server.prompt(name="explain_with_evidence", title="Answer with evidence")(catalog.explain_with_evidence)
    return server


def _served(backend: Backend, spec: ToolSpec) -> Callable[..., Any]:
    """``spec``'s body as the SDK calls a tool: its arguments (the body's, less the ``Call``,
    which ``Backend.serve`` makes) and the SDK's ``Context``, from which the HTTP request comes."""
    signature = inspect.signature(spec.body, eval_str=True)
    arguments = list(signature.parameters.values())[1:]

    def run(**given: Any) -> Any:
        ctx: Context = given.pop("ctx")
        return backend.serve(spec.name, spec.needs, ctx.request_context.request, given, spec.body)

    context = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    run.__signature__ = signature.replace(parameters=[*arguments, context])  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in arguments} | {
        "ctx": Context,
        "return": signature.return_annotation,
    }
    run.__name__ = run.__qualname__ = spec.name
    return run


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("curriculum-kg")
    except PackageNotFoundError:
        return "0.0.0"


def run_stdio(backend: Backend) -> None:
    """Serve MCP over this process's stdin and stdout until the client closes them."""
    build_server(backend).run("stdio")


class Streamable:
    """The MCP server as the ASGI endpoint of ``/mcp`` (streamable HTTP, stateless, JSON answers).
    :meth:`running` runs it for the HTTP app's lifespan: each run builds the SDK's app anew, as its
    session manager runs once."""

    def __init__(self, backend: Backend) -> None:
        self._server = build_server(backend)
        self._app: ASGIApp | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        self._app = self._server.streamable_http_app(
            stateless_http=True,
            json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        try:
            async with self._server.session_manager.run():
                yield
        finally:
            self._app = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._app is None:
            raise RuntimeError("the MCP endpoint is served only while the app runs (its lifespan)")
        if scope.get("method") == "GET":
            # A stream for messages the server starts: this one starts none, so no GET holds a
            # connection open for nothing (the protocol's answer for that is 405).
            await _NO_STREAM(scope, receive, send)
            return
        await self._app(scope, receive, send)


_NO_STREAM: Final = PlainTextResponse(
    "this MCP endpoint sends no stream of its own: POST each message",
    status_code=405,
    headers={"Allow": "POST"},
)
