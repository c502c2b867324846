"""One pure-ASGI middleware: request id, body limit, one log event per request.

Every request is logged as ONE structlog event ``http.request`` with a request id (the
``X-Request-ID`` header, echoed back, or a fresh one), method, path, status and duration. The
Authorization header and tokens are never logged. Request bodies over ``max_body_bytes`` get 413
before they reach a handler (declared ``Content-Length``) or as soon as the stream passes it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import structlog
from fastapi import HTTPException

from control_plane.surfaces.http.problems import problem

__all__ = ["RequestLimitsAndLog"]

log = structlog.get_logger("control_plane.surfaces.http")

ASGIApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]


class _TooLarge(HTTPException):
    """Raised from ``receive`` when a streamed body passes the limit; an HTTPException so that
    FastAPI's body parsing re-raises it instead of reporting a generic 400."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body exceeds {limit} bytes")


def _request_middleware(app: ASGIApp, max_body: int) -> ASGIApp:
    """One pure-ASGI layer: assigns the request id, bounds the body, logs one event at the end."""

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

        async def reject(code: int, title: str, detail: str) -> None:
            resp = problem(code, title, detail)
            await resp(scope, receive, send_with_id)

        try:
            declared = headers.get("content-length")
            if declared is not None and declared.isdigit() and int(declared) > max_body:
                await reject(413, "Payload too large", f"request body exceeds {max_body} bytes")
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
                    await reject(413, "Payload too large", f"request body exceeds {max_body} bytes")
        finally:
            log.info(
                "http.request",
                request_id=request_id,
                method=scope.get("method"),
                path=scope.get("path"),
                status=status["code"],
                duration_ms=round((time.perf_counter() - started) * 1000, 3),
            )

    return middleware


class RequestLimitsAndLog:
    """Adapter so Starlette's ``add_middleware`` can install :func:`_request_middleware`."""

    def __init__(self, app: ASGIApp, max_body: int) -> None:
        self._inner = _request_middleware(app, max_body)

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        await self._inner(scope, receive, send)
