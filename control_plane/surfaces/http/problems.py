"""RFC 7807 problem bodies, and the exception handlers that turn every error into one.

``KGError`` maps to 400/404/409 (503 for the model, 500 for misconfiguration); Starlette's own
HTTP errors (unknown route, wrong method, unparsable body), validation errors (422) and anything
unexpected (500, details only in the server log) become problem bodies too: never a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus
from typing import Any, Final

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from control_plane.errors import LLMError
from control_plane.surfaces.http.schemas import Problem
from data_plane.errors import (
    ConcurrentWrite,
    ConfigurationError,
    DuplicateName,
    KeyExists,
    KGError,
    NotFound,
    PrerequisiteCycle,
    TemporalConflict,
)

__all__ = ["PROBLEM", "install_handlers", "kg_status", "problem", "problem_media", "problem_responses"]

log = structlog.get_logger("control_plane.surfaces.http")

PROBLEM: Final = "application/problem+json"


def problem(
    status: int, title: str, detail: str, *, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    slug = title.lower().replace(" ", "-")
    return JSONResponse(
        {
            "type": f"https://curriculum-kg.invalid/problems/{slug}",
            "title": title,
            "status": status,
            "detail": detail,
        },
        status_code=status,
        media_type=PROBLEM,
        headers=dict(headers or {}),
    )


def problem_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI entries saying that ``codes`` answer with a problem body (see :func:`problem_media`)."""
    return {code: {"model": Problem, "description": HTTPStatus(code).phrase} for code in codes}


def problem_media(openapi: dict[str, Any]) -> dict[str, Any]:
    """FastAPI files every declared response model under the route's media type; error
    responses are ``application/problem+json``, so move their schemas there (in place)."""
    for operation in (op for path in openapi.get("paths", {}).values() for op in path.values()):
        for code, response in operation.get("responses", {}).items():
            content = response.get("content", {})
            if code[:1] in "45" and content:
                response["content"] = {PROBLEM: next(iter(content.values()))}
    return openapi


def kg_status(exc: KGError) -> tuple[int, str]:
    """The HTTP status and problem title of a backend error (pure)."""
    if isinstance(exc, NotFound):
        return 404, "Not found"
    if isinstance(exc, KeyExists | DuplicateName | ConcurrentWrite | PrerequisiteCycle | TemporalConflict):
        return 409, "Conflict"
    if isinstance(exc, LLMError):
        return 503, "Model unavailable"
    if isinstance(exc, ConfigurationError):
        return 500, "Misconfigured"
    return 400, "Bad request"


async def _kg_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, KGError)
    status, title = kg_status(exc)
    text = str(exc).strip()
    return problem(status, title, text.splitlines()[0] if text else title)


async def _http_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = exc.status_code
    title = HTTPStatus(code).phrase if code in HTTPStatus._value2member_map_ else "Error"
    return problem(code, title, str(exc.detail), headers=exc.headers)


async def _invalid(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    details = "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in exc.errors()[:5]
    )
    return problem(422, "Unprocessable content", details or "invalid request")


async def _unexpected(_request: Request, exc: Exception) -> JSONResponse:
    log.error("http.unexpected", error=type(exc).__name__)
    return problem(500, "Internal server error", "an unexpected error occurred; see the server log")


def install_handlers(app: FastAPI) -> None:
    """Every error becomes a problem body."""
    app.add_exception_handler(KGError, _kg_error)
    # Starlette's own HTTPException (unknown route, wrong method, unparsable body) included.
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(Exception, _unexpected)
