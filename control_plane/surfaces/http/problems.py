"""RFC 7807 problem bodies, and the exception handlers that turn every error into one.

``KGError`` maps to 400/404/409 (401 and 403 for a missing or unfit token, 503 for the model or a
database file that cannot be written, 429 with ``Retry-After`` when the caller's /ask limit or this
server's model budget is spent, 500 for misconfiguration); Starlette's own HTTP errors (unknown
route, wrong method), a body that is not JSON (400, naming the line and column), validation errors
(422) and anything unexpected (500, details only in the server log) become problem bodies too:
never a traceback. One status has one title (:func:`title`), whichever layer refuses.
"""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus
from pathlib import PurePath
from typing import Any, Final
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from control_plane.errors import Forbidden, LLMError, ModelBudgetSpent, RateLimited, Unauthenticated
from control_plane.surfaces.http.schemas import Problem
from control_plane.surfaces.lookup import ECHO_MAX, unknown_hint
from control_plane.surfaces.ratelimit import whole_seconds
from data_plane.errors import (
    ConcurrentWrite,
    ConfigurationError,
    DuplicateName,
    InactiveEndpoint,
    KeyExists,
    KGError,
    NotFound,
    PrerequisiteCycle,
    StorageFault,
    TemporalConflict,
)
from data_plane.events import get_logger

__all__ = [
    "PROBLEM",
    "install_handlers",
    "json_error",
    "kg_status",
    "problem",
    "problem_media",
    "problem_responses",
    "title",
]

log = get_logger("control_plane.surfaces.http")

PROBLEM: Final = "application/problem+json"
# Titles that differ from Python's HTTPStatus phrases (which changed for 413 across versions).
_TITLES: Final = {
    413: "Content too large",
    415: "Unsupported media type",
    422: "Unprocessable content",
    429: "Too many requests",
}
_RETRY_AFTER: Final = {
    "Retry-After": {
        "description": "Seconds until the request may be retried (the limit that refused it says which).",
        "schema": {"type": "integer", "minimum": 1},
    }
}


def title(status: int) -> str:
    """The one problem title of ``status``."""
    if status in _TITLES:
        return _TITLES[status]
    return HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Error"


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
    """OpenAPI entries saying that ``codes`` answer with a problem body (see :func:`problem_media`);
    a 429 also carries ``Retry-After``."""
    return {
        code: {
            "model": Problem,
            "description": title(code),
            **({"headers": _RETRY_AFTER} if code == 429 else {}),
        }
        for code in codes
    }


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
    if isinstance(exc, ModelBudgetSpent | RateLimited):
        return 429, title(429)
    if isinstance(exc, Unauthenticated):
        return 401, title(401)
    if isinstance(exc, Forbidden):
        return 403, title(403)
    if isinstance(exc, NotFound):
        return 404, "Not found"
    if isinstance(exc, KeyExists | DuplicateName | ConcurrentWrite | PrerequisiteCycle | TemporalConflict):
        return 409, "Conflict"
    if isinstance(exc, LLMError):
        return 503, "Model unavailable"
    if isinstance(exc, StorageFault):
        return 503, "Storage unavailable"
    if isinstance(exc, ConfigurationError):
        return 500, "Misconfigured"
    return 400, "Bad request"


async def _kg_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, KGError)
    status, name = kg_status(exc)
    text = str(exc).strip()
    headers = None
    if isinstance(exc, Unauthenticated):
        headers = {"WWW-Authenticate": "Bearer"}
    if isinstance(exc, ModelBudgetSpent | RateLimited):
        # The caller's own /ask limit, or the server's model budget, spent at the question's
        # first model call (between the door check and that call: another process spent it).
        request.app.state.metrics.limited("ask" if isinstance(exc, RateLimited) else "model_calls")
        headers = {"Retry-After": str(whole_seconds(exc.retry_after))}
    if isinstance(exc, NotFound | InactiveEndpoint) and (named := _named_concepts(request)):
        # As `kg` does: the concepts near an id that names none, and where to search.
        rt = request.app.state.runtime
        hint = await run_in_threadpool(unknown_hint, rt.reader, named, searching=_search_route)
        if hint is not None:
            text = f"{text.splitlines()[0]}; {hint}"
    if isinstance(exc, StorageFault) and exc.path:
        # The file's name, not where it lives (as /readyz: a path says too much to any client);
        # the log has it whole.
        log.error("http.storage_fault", error=text)
        text = text.replace(exc.path, PurePath(exc.path).name)
    return problem(status, name, text.splitlines()[0] if text else name, headers=headers)


def _named_concepts(request: Request) -> list[str]:
    """The concept ids a request names in its path or query (``/concepts/{concept_id}``,
    ``?concept=``)."""
    named = [request.path_params.get("concept_id"), request.query_params.get("concept")]
    return [n for n in named if isinstance(n, str) and n]


def _search_route(word: str) -> str:
    shown = quote(word) if len(word) <= ECHO_MAX else "WORDS"
    return f"GET /search/concepts?q={shown} finds concepts by name"


async def _http_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    return problem(exc.status_code, title(exc.status_code), str(exc.detail), headers=exc.headers)


def json_error(doc: str, pos: int, message: str) -> str:
    """Where and why a body is not JSON, as a person reads it (pure)."""
    line = doc.count("\n", 0, pos) + 1
    column = pos - (doc.rfind("\n", 0, pos) + 1) + 1
    return f"the request body is not valid JSON: {message} at line {line}, column {column}"


async def _invalid(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    first = exc.errors()[0] if exc.errors() else {}
    if first.get("type") == "json_invalid" and isinstance(exc.body, str):
        loc = first.get("loc", ())
        pos = loc[1] if len(loc) > 1 and isinstance(loc[1], int) else 0
        return problem(400, "Bad request", json_error(exc.body, pos, str(first.get("ctx", {}).get("error"))))
    details = "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in exc.errors()[:5]
    )
    return problem(422, title(422), details or "invalid request")


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
