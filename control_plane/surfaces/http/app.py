"""The app factory: routers in, the MCP endpoint (``/mcp``) mounted, middleware and problem handlers
on, nothing else.

OpenAPI docs are served at ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc) from assets shipped
in the ``fastapi-offline`` package, never from a CDN, so they work on an offline machine;
``/openapi.json`` declares every request and response model (see
:mod:`control_plane.surfaces.http.schemas`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

from fastapi import Depends, FastAPI
from fastapi.routing import APIRoute
from fastapi_offline import FastAPIOffline
from starlette.routing import Route

from control_plane.settings import Settings
from control_plane.surfaces.http.config import ApiConfig
from control_plane.surfaces.http.dependencies import open_reads, request_address
from control_plane.surfaces.http.door import checked_input
from control_plane.surfaces.http.metrics import Metrics
from control_plane.surfaces.http.middleware import RequestLimitsAndLog
from control_plane.surfaces.http.problems import install_handlers, problem_media
from control_plane.surfaces.http.routers import ROUTERS
from control_plane.surfaces.http.routers.operations import schema_head
from control_plane.surfaces.logs import configure_logging
from control_plane.surfaces.mcp import Backend, Streamable
from control_plane.surfaces.ratelimit import serving_limits
from control_plane.surfaces.runtime import Runtime

__all__ = ["MCP_PATH", "app_from_env", "create_app", "operation_id"]

# Where the MCP server answers (streamable HTTP), beside the REST routes.
MCP_PATH: Final = "/mcp"


def create_app(
    settings: Settings, *, runtime: Runtime | None = None, config: ApiConfig | None = None
) -> FastAPI:
    """Build the ASGI app. ``runtime`` defaults to one built from ``settings``; ``config`` (HTTP-only
    settings) defaults to ``ApiConfig()``: open reads, 64 KiB bodies, /ask limited per caller and
    model calls capped for the whole server, both kept in the database (shared by every process
    serving it). ``/mcp`` serves the same backend to MCP clients under the same rules; it answers
    while the app runs (its lifespan)."""
    cfg = config or ApiConfig()
    app = FastAPIOffline(
        title="curriculum-kg",
        version="0.1.0",
        description="Grounded answers over a bi-temporal curriculum knowledge graph, with their evidence. "
        "Writes need a bearer token with the write scope. Reads and `/ask` declare no security "
        "requirement while the server keeps them open: a bearer token is optional there; when the "
        "server requires one (`KG_API_READS_REQUIRE_TOKEN=1`) they declare it. A token that is "
        "unknown or revoked is refused with 401 wherever it is sent.",
        generate_unique_id_function=operation_id,
        # Text no engine stores alike (NUL, lone surrogates) is refused before any route runs.
        dependencies=[Depends(checked_input)],
        lifespan=_lifespan,
    )
    rt = runtime or Runtime.build(settings)
    app.state.runtime = rt
    app.state.config = cfg
    app.state.metrics = metrics = Metrics(multiprocess=cfg.metrics_multiprocess)
    app.state.schema_head = schema_head()
    # The per-caller /ask limit, and one budget of model calls for the whole server in front of
    # the synthesizer, so many clients cannot multiply the bill (offline is never capped).
    app.state.limiter = serving_limits(
        rt,
        ask_rate_per_min=cfg.ask_rate_per_min,
        model_calls_per_min=cfg.model_calls_per_min,
        clock=cfg.rate_clock,
    )
    for router in ROUTERS:
        app.include_router(router)
    # Agents' door: the same backend over MCP, with the same tokens, limits, metrics and logs.
    app.state.mcp = Streamable(
        Backend(
            rt,
            cfg.reads_require_token,
            app.state.limiter,
            metrics,
            address_of=functools.partial(request_address, proxies=cfg.trusted_proxies),
        )
    )
    mcp = Route(MCP_PATH, app.state.mcp, name="mcp")
    app.router.routes.append(mcp)
    install_handlers(app)
    generate = app.openapi

    def contract() -> dict[str, Any]:
        return open_reads(problem_media(generate()), required=cfg.reads_require_token)

    app.openapi = lambda: app.openapi_schema or contract()  # type: ignore[method-assign]
    routes = [*(route for router in ROUTERS for route in router.routes), mcp]
    app.add_middleware(RequestLimitsAndLog, max_body=cfg.max_body_bytes, metrics=metrics, routes=routes)
    return app


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """While the app runs, so does its MCP endpoint (the SDK's session manager)."""
    async with app.state.mcp.running():
        yield


def operation_id(route: APIRoute) -> str:
    """An operation's id is its route function's name (``ask``, ``list_concepts``,
    ``get_concept``, ``search_concepts`` ...): what a generated client names its calls."""
    return route.name


def app_from_env() -> FastAPI:
    """Factory for ``uvicorn --factory control_plane.surfaces.http:app_from_env`` (reads the
    environment once). Every worker process calls it, so it also sets up that process's logs: JSON
    events on stderr at ``KG_LOG_LEVEL`` (default info)."""
    configure_logging(os.environ, json_events=True)
    return create_app(Settings.from_env(os.environ), config=ApiConfig.from_env(os.environ))
