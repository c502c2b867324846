"""The app factory: routers in, middleware and problem handlers on, nothing else.

OpenAPI docs are served at ``/docs``; ``/openapi.json`` declares every request and response
model (see :mod:`control_plane.surfaces.http.schemas`).
"""

from __future__ import annotations

import os

from fastapi import FastAPI

from control_plane.settings import Settings
from control_plane.surfaces.http.config import ApiConfig
from control_plane.surfaces.http.middleware import RequestLimitsAndLog
from control_plane.surfaces.http.problems import install_handlers, problem_media
from control_plane.surfaces.http.routers import ROUTERS
from control_plane.surfaces.ratelimit import RateLimiter
from control_plane.surfaces.runtime import Runtime

__all__ = ["app_from_env", "create_app"]


def create_app(
    settings: Settings, *, runtime: Runtime | None = None, config: ApiConfig | None = None
) -> FastAPI:
    """Build the ASGI app. ``runtime`` defaults to one built from ``settings``; ``config`` (HTTP-only
    settings) defaults to ``ApiConfig()``: open reads, 64 KiB bodies, no rate limit."""
    cfg = config or ApiConfig()
    app = FastAPI(
        title="curriculum-kg",
        version="0.1.0",
        description="Grounded answers over a bi-temporal curriculum knowledge graph, with their evidence.",
    )
    app.state.runtime = runtime or Runtime.build(settings)
    app.state.config = cfg
    app.state.limiter = (
        RateLimiter(cfg.ask_rate_per_min, clock=cfg.rate_clock) if cfg.ask_rate_per_min else None
    )
    for router in ROUTERS:
        app.include_router(router)
    install_handlers(app)
    generate = app.openapi
    app.openapi = lambda: app.openapi_schema or problem_media(generate())  # type: ignore[method-assign]
    app.add_middleware(RequestLimitsAndLog, max_body=cfg.max_body_bytes)
    return app


def app_from_env() -> FastAPI:
    """Factory for ``uvicorn --factory control_plane.surfaces.http:app_from_env`` (reads the environment once)."""
    return create_app(Settings.from_env(os.environ), config=ApiConfig.from_env(os.environ))
