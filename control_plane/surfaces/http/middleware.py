"""One pure-ASGI middleware: request id, body type and size, metrics, one log event per request.

Every request is logged as ONE structlog event ``http.request`` with a request id (the
``X-Request-ID`` header, echoed back, or a fresh one), method, path, status and duration, and
counted in the app's metrics by route template. The Authorization header and tokens are never
logged. A POST/PUT/PATCH body that is not JSON (``Content-Type`` other than ``application/json``
or ``*+json``, or none) gets 415. Request bodies over ``max_body_bytes`` get 413 (one problem
type) before they reach a handler (declared ``Content-Length``) or as soon as the stream passes it.
"""

from __future__ import annotations

import email.message
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from typing import Any, Final

from fastapi import HTTPException
from starlette.routing import BaseRoute, Match

from control_plane.surfaces.http.metrics import Metrics
from control_plane.surfaces.http.problems import problem, title
from data_plane.events import get_logger

__all__ = ["RequestLimitsAndLog"]

log = get_logger("control_plane.surfaces.http")

ASGIApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]


_WITH_BODY: Final = frozenset({"POST", "PUT", "PATCH"})


def _not_json(method: str, headers: Mapping[str, str]) -> str | None:
    """Why a request's body is refused as not JSON (415), or None (pure)."""
    has_body = headers.get("content-length", "0") not in ("", "0") or "transfer-encoding" in headers
    if method not in _WITH_BODY or not has_body:
        return None
    given = headers.get("content-type", "")
    if given:
        parsed = email.message.Message()
        parsed["content-type"] = given
        subtype = parsed.get_content_subtype()
        if parsed.get_content_maintype() == "application" and (
            subtype == "json" or subtype.endswith("+json")
        ):
            return None
    sent = f"Content-Type {given!r}" if given else "no Content-Type"
    return f"the body must be JSON: send Content-Type: application/json ({sent} was sent)"


def _route(scope: MutableMapping[str, Any], routes: Sequence[BaseRoute]) -> str:
    """The matched route's template (bounded label values), or ``unmatched``. A request refused
    here, before routing (413, 415), is labelled with the route of ``routes`` it was sent to."""
    route = scope.get("route") or next((r for r in routes if r.matches(scope)[0] is Match.FULL), None)
    return str(getattr(route, "path", "unmatched"))


class _TooLarge(HTTPException):
    """Raised from ``receive`` when a streamed body passes the limit; an HTTPException so that
    FastAPI's body parsing re-raises it instead of reporting a generic 400."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body exceeds {limit} bytes")


def _request_middleware(
    app: ASGIApp, max_body: int, metrics: Metrics, routes: Sequence[BaseRoute]
) -> ASGIApp:
    """One pure-ASGI layer: assigns the request id, checks the body's type and size, counts and
    logs the request at the end."""

    async def middleware(
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        given = headers.get("x-request-id", "")
        request_id = given if given and len(given) <= 128 and given.isprintable() else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id
        status = {"code": 500}
        sent_start = {"done": False}

        async def send_with_id(message: Any) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                sent_start["done"] = True
                message = {
                    **message,
                    "headers": [*message.get("headers", []), (b"x-request-id", request_id.encode())],
                }
            await send(message)

        async def reject(code: int, detail: str) -> None:
            resp = problem(code, title(code), detail)
            await resp(scope, receive, send_with_id)

        try:
            declared = headers.get("content-length")
            if declared is not None and declared.isdigit() and int(declared) > max_body:
                await reject(413, f"request body exceeds {max_body} bytes")
                return
            if (why := _not_json(str(scope.get("method")), headers)) is not None:
                await reject(415, why)
                return
            seen = {"bytes": 0}

            async def bounded_receive() -> Any:
                message = await receive()
                if message["type"] == "http.request":
                    seen["bytes"] += len(message.get("body", b""))
                    if seen["bytes"] > max_body:
                        raise _TooLarge(max_body)
                return message

            try:
                await app(scope, bounded_receive, send_with_id)
            except _TooLarge:
                if not sent_start["done"]:
                    await reject(413, f"request body exceeds {max_body} bytes")
        finally:
            elapsed = time.perf_counter() - started
            metrics.request(_route(scope, routes), str(scope.get("method")), status["code"], elapsed)
            log.info(
                "http.request",
                request_id=request_id,
                method=scope.get("method"),
                path=scope.get("path"),
                status=status["code"],
                duration_ms=round(elapsed * 1000, 3),
            )

    return middleware


class RequestLimitsAndLog:
    """Adapter so Starlette's ``add_middleware`` can install :func:`_request_middleware`."""

    def __init__(
        self, app: ASGIApp, max_body: int, metrics: Metrics, routes: Sequence[BaseRoute] = ()
    ) -> None:
        self._inner = _request_middleware(app, max_body, metrics, routes)

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        await self._inner(scope, receive, send)
