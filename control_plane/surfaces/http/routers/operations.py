"""Operations: liveness (``/healthz``), readiness (``/readyz``) and Prometheus metrics (``/metrics``).

``/healthz`` and ``/readyz`` need no token and are never rate limited: load balancers and
orchestrators poll them. ``/metrics`` follows the read rule (open unless
``KG_API_READS_REQUIRE_TOKEN=1``; a scraper can send a bearer token).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from control_plane.surfaces.http.dependencies import MetricsDep, ReadToken, RuntimeDep
from control_plane.surfaces.http.metrics import CONTENT_TYPE
from control_plane.surfaces.http.problems import problem_responses
from control_plane.surfaces.http.schemas import HealthOut, ReadyOut
from control_plane.surfaces.runtime import Runtime, build_synthesizer
from data_plane import storage
from data_plane.database import head_revision, schema_revision, sqlite_path
from data_plane.errors import KGError
from data_plane.sidecar import probe as sidecar_probe

__all__ = ["router"]

router = APIRouter(tags=["operations"])


@router.get("/healthz", response_model=HealthOut)
def healthz() -> dict[str, str]:
    """The process is alive and answering (no database access)."""
    return {"status": "ok"}


@router.get(
    "/readyz",
    response_model=ReadyOut,
    responses={503: {"model": ReadyOut, "description": "Not ready: the failing check says why."}},
)
async def readyz(request: Request, rt: RuntimeDep) -> JSONResponse:
    """Ready to serve: the database answers, its schema is at the code's head revision, and the
    synthesizer is configured. 503 with the failing check otherwise."""
    head = request.app.state.schema_head
    checks = await run_in_threadpool(_checks, rt, head)
    ready = all(c["ok"] for c in checks.values())
    return JSONResponse(
        {"status": "ready" if ready else "not ready", "checks": checks}, status_code=200 if ready else 503
    )


def _checks(rt: Runtime, head: str | None) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    try:
        with rt.engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
        # The engine's kind only: a file path or host name says too much to anyone who can poll.
        out["database"] = {"ok": True, "detail": f"reachable ({rt.engine.dialect.name})"}
    except sa.exc.SQLAlchemyError as exc:
        first = str(getattr(exc, "orig", exc)).strip().splitlines()
        out["database"] = {"ok": False, "detail": f"unreachable: {first[0] if first else type(exc).__name__}"}
        out["schema"] = {"ok": False, "detail": "unknown: the database is unreachable"}
    if "schema" not in out:
        at = schema_revision(rt.engine)
        detail = f"at {at}" if at == head else f"at {at}, the code needs {head}: run `kg init`"
        out["schema"] = {"ok": at == head, "detail": detail}
    if out["database"]["ok"]:
        out["storage"] = _storage(rt)
    try:
        info = (rt.synthesizer or build_synthesizer(rt.settings)).info
        out["synthesizer"] = {"ok": True, "detail": f"{info.name} ({info.model})"}
    except KGError as exc:
        out["synthesizer"] = {"ok": False, "detail": str(exc).splitlines()[0]}
    return out


def _storage(rt: Runtime) -> dict[str, Any]:
    """Whether an SQLite database file and its side file take a question's writes; the problem
    without the path (that says too much to anyone who can poll: ``kg doctor`` names it)."""
    path = sqlite_path(rt.engine.url.render_as_string(hide_password=False))
    if path is None:
        return {"ok": True, "detail": f"not a file ({rt.engine.dialect.name})"}
    why = storage.fault(path.absolute(), "the database file") or sidecar_probe(rt.engine)
    if why is None:
        return {"ok": True, "detail": "the database file and its side file can be written"}
    return {"ok": False, "detail": why.replace(str(path.absolute()), path.name)}


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {"content": {CONTENT_TYPE: {"schema": {"type": "string"}}}, "description": "Prometheus text"},
        **problem_responses(401),
    },
)
def metrics(seen: MetricsDep, _t: ReadToken) -> Response:
    """Prometheus metrics (text exposition format): requests, latency, answers, model use, limits."""
    return Response(seen.render(), media_type=CONTENT_TYPE)


def schema_head() -> str | None:
    """The schema revision the code needs (read once, when the app is built)."""
    return head_revision()
