"""The HTTP API (FastAPI): ask, read the graph over time, curate it with bearer tokens, audit answers.

* Writes need ``Authorization: Bearer <secret>`` with a ``write`` token (401 without, or with an
  unknown or revoked token; 403 with a ``read`` token). Reads are open unless
  ``KG_API_READS_REQUIRE_TOKEN=1`` (then any active token).
* Errors are RFC 7807 ``application/problem+json`` bodies ``{type, title, status, detail}``;
  ``KGError`` maps to 400/404/409 (503 for the model), never a traceback.
* Request bodies over ``max_body_bytes`` (64 KiB) get 413; questions over 2000 characters 422.
* Every request is logged as ONE structlog event ``http.request`` with a request id (the
  ``X-Request-ID`` header, echoed back, or a fresh one), method, path, status and duration. The
  Authorization header and tokens are never logged.

OpenAPI docs are served at ``/docs``.
"""

import json
import math
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Final

import structlog
from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field, field_validator
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from control_plane.settings import Settings
from control_plane.surfaces.ratelimit import RateLimiter
from control_plane.surfaces.runtime import Runtime
from data_plane.errors import (
    ConcurrentWrite,
    ConfigurationError,
    KeyExists,
    KGError,
    NotFound,
    PrerequisiteCycle,
    TemporalConflict,
)
from data_plane.records import Grounding, Version
from data_plane.relations import parse_edge_key
from data_plane.tokens import Token

__all__ = ["ApiConfig", "create_app"]

log = structlog.get_logger("control_plane.surfaces.api")

MAX_QUESTION: Final = 2000
PROBLEM: Final = "application/problem+json"

ASGIApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]


@dataclass(frozen=True)
class ApiConfig:
    """HTTP-only settings: whether reads need a token, and the request body limit."""

    reads_require_token: bool = False
    max_body_bytes: int = 64 * 1024
    # /ask requests per minute per token (or per client address); 0 means unlimited.
    ask_rate_per_min: float = 0.0
    rate_clock: Callable[[], float] = time.monotonic

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "ApiConfig":
        flag = env.get("KG_API_READS_REQUIRE_TOKEN", "").strip().lower()
        if flag not in ("", "0", "1", "true", "false", "yes", "no"):
            raise ConfigurationError(f"KG_API_READS_REQUIRE_TOKEN must be 0 or 1, got {flag!r}")
        rate_text = env.get("KG_API_ASK_RATE_PER_MIN", "").strip() or "0"
        try:
            rate = float(rate_text)
        except ValueError:
            raise ConfigurationError(f"KG_API_ASK_RATE_PER_MIN must be a number, got {rate_text!r}") from None
        return cls(reads_require_token=flag in ("1", "true", "yes"), ask_rate_per_min=rate)


# ---------------------------------------------------------------------------------------------
# Problems


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


def _kg_status(exc: KGError) -> tuple[int, str]:
    from control_plane.errors import LLMError

    if isinstance(exc, NotFound):
        return 404, "Not found"
    if isinstance(exc, KeyExists | ConcurrentWrite | PrerequisiteCycle | TemporalConflict):
        return 409, "Conflict"
    if isinstance(exc, LLMError):
        return 503, "Model unavailable"
    if isinstance(exc, ConfigurationError):
        return 500, "Misconfigured"
    return 400, "Bad request"


# ---------------------------------------------------------------------------------------------
# Request bodies


class GroundingIn(BaseModel):
    """Why a write is believed. ``source`` defaults to ``api:<token name>``; ``confidence`` to 1.0."""

    reason: str = Field(min_length=1, max_length=4000)
    evidence: Any = Field(description="Non-empty JSON: a document, URL, quote ...")
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    source: str | None = Field(default=None, max_length=400)

    @field_validator("evidence")
    @classmethod
    def _encodable(cls, value: Any) -> Any:
        # A JSON escape like "\ud800" decodes to a lone surrogate, which SQLite stores but no
        # response can encode: refuse it here (UnicodeEncodeError is a ValueError, so this is a 422).
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value

    def build(self, token: Token) -> Grounding:
        return Grounding(self.confidence, self.reason, self.source or f"api:{token.name}", self.evidence)


class AskIn(BaseModel):
    question: str = Field(min_length=1, max_length=MAX_QUESTION)
    as_of: datetime | None = None
    known_at: datetime | None = None


class ConceptIn(BaseModel):
    concept_id: str = Field(min_length=1, max_length=200)
    name: str = Field(min_length=1, max_length=400)
    aliases: list[str] = Field(default_factory=list)
    summary: str = ""
    valid_at: datetime | None = None
    grounding: GroundingIn


class ConceptReviseIn(BaseModel):
    name: str | None = None
    aliases: list[str] | None = None
    summary: str | None = None
    valid_at: datetime | None = None
    grounding: GroundingIn


class InvalidateIn(BaseModel):
    invalid_at: datetime | None = None
    retract: bool = False
    grounding: GroundingIn


class EdgeIn(BaseModel):
    source_id: str = Field(min_length=1, max_length=200)
    target_id: str = Field(min_length=1, max_length=200)
    relation: str = Field(min_length=1, max_length=32)
    valid_at: datetime | None = None
    grounding: GroundingIn


class EdgeInvalidateIn(BaseModel):
    source_id: str = Field(min_length=1, max_length=200)
    target_id: str = Field(min_length=1, max_length=200)
    relation: str = Field(min_length=1, max_length=32)
    invalid_at: datetime | None = None
    retract: bool = False
    grounding: GroundingIn


class LessonLinkIn(BaseModel):
    concept_id: str = Field(min_length=1, max_length=200)
    title: str | None = None
    grounding: GroundingIn


class LessonUnlinkIn(BaseModel):
    concept_id: str = Field(min_length=1, max_length=200)
    grounding: GroundingIn


# ---------------------------------------------------------------------------------------------
# Middleware: request id, one log event, body limit


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


# ---------------------------------------------------------------------------------------------
# The app


def create_app(
    settings: Settings, *, runtime: Runtime | None = None, config: ApiConfig | None = None
) -> FastAPI:
    """Build the ASGI app. ``runtime`` defaults to one built from ``settings``; ``config`` (HTTP-only
    settings) defaults to ``ApiConfig()``: open reads, 64 KiB bodies."""
    rt = runtime or Runtime.build(settings)
    cfg = config or ApiConfig()
    app = FastAPI(
        title="curriculum-kg",
        version="0.1.0",
        description="Grounded answers over a bi-temporal curriculum knowledge graph, with their evidence.",
    )
    bearer = HTTPBearer(auto_error=False, description="An API token from `kg token create`.")

    def _authenticate(creds: HTTPAuthorizationCredentials | None) -> Token | None:
        if creds is None or creds.scheme.lower() != "bearer":
            return None
        return rt.tokens.verify(creds.credentials)

    def _unauthorized() -> HTTPException:
        return HTTPException(401, "a valid bearer token is required", headers={"WWW-Authenticate": "Bearer"})

    def require_write(creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> Token:
        token = _authenticate(creds)
        if token is None:
            raise _unauthorized()
        if not token.allows("write"):
            raise HTTPException(403, f"token {token.token_id} has scope {token.scope!r}; this needs 'write'")
        return token

    def require_read(creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> Token | None:
        if not cfg.reads_require_token:
            return None
        token = _authenticate(creds)
        if token is None:
            raise _unauthorized()
        return token

    Reader = Annotated[Token | None, Depends(require_read)]
    Writer = Annotated[Token, Depends(require_write)]

    @app.exception_handler(KGError)
    async def _kg_error(_request: Request, exc: KGError) -> JSONResponse:
        status, title = _kg_status(exc)
        return problem(status, title, str(exc).strip().splitlines()[0] if str(exc).strip() else title)

    # Starlette's own HTTPException (unknown route, wrong method, unparsable body) included.
    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        from http import HTTPStatus

        title = (
            HTTPStatus(exc.status_code).phrase
            if exc.status_code in HTTPStatus._value2member_map_
            else "Error"
        )
        return problem(exc.status_code, title, str(exc.detail), headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        details = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in exc.errors()[:5]
        )
        return problem(422, "Unprocessable content", details or "invalid request")

    @app.exception_handler(Exception)
    async def _unexpected(_request: Request, exc: Exception) -> JSONResponse:
        log.error("http.unexpected", error=type(exc).__name__)
        return problem(500, "Internal server error", "an unexpected error occurred; see the server log")

    def _times(as_of: datetime | None, known_at: datetime | None) -> Any:
        from data_plane.clock import ensure_utc

        v = ensure_utc(as_of, field="as_of") if as_of else None
        k = ensure_utc(known_at, field="known_at") if known_at else None
        return rt.reader.as_of(v, k)

    # -- ask -----------------------------------------------------------------------------------

    limiter = RateLimiter(cfg.ask_rate_per_min, clock=cfg.rate_clock) if cfg.ask_rate_per_min else None

    @app.post("/ask", tags=["ask"])
    async def ask(body: AskIn, _t: Reader, request: Request) -> dict[str, Any]:
        """Answer a question with its evidence sub-graph, or abstain; the answer is recorded."""
        from data_plane.clock import ensure_utc

        if limiter is not None:
            token = _t or _authenticate(await bearer(request))
            key = (
                f"token:{token.token_id}"
                if token
                else f"addr:{request.client.host if request.client else '?'}"
            )
            wait = limiter.check(key)
            if wait > 0:
                raise HTTPException(
                    429,
                    "too many /ask requests for this token; retry later",
                    headers={"Retry-After": str(math.ceil(wait))},
                )

        as_of = ensure_utc(body.as_of, field="as_of") if body.as_of else None
        known_at = ensure_utc(body.known_at, field="known_at") if body.known_at else None
        answer = await run_in_threadpool(rt.planner.ask, body.question, as_of=as_of, known_at=known_at)
        return answer.to_dict()

    # -- reads ---------------------------------------------------------------------------------

    @app.get("/concepts", tags=["graph"])
    def concepts(
        _t: Reader, as_of: datetime | None = None, known_at: datetime | None = None
    ) -> list[dict[str, Any]]:
        """Active concepts as of (valid time, recorded time); both default to now."""
        return [c.to_dict() for c in rt.reader.all_concepts(as_of=_times(as_of, known_at))]

    @app.get("/concepts/{concept_id}", tags=["graph"])
    def concept(
        concept_id: str, _t: Reader, as_of: datetime | None = None, known_at: datetime | None = None
    ) -> dict[str, Any]:
        return rt.reader.concept(concept_id, as_of=_times(as_of, known_at)).to_dict()

    @app.get("/concepts/{concept_id}/history", tags=["audit"])
    def concept_history(concept_id: str, _t: Reader) -> list[dict[str, Any]]:
        return [v.to_dict() for v in rt.reader.history("concepts", (concept_id,))]

    @app.get("/edges/{key}/history", tags=["audit"])
    def edge_history(key: str, _t: Reader) -> list[dict[str, Any]]:
        """History of an edge given as ``source>relation>target`` (URL-encode ``>`` as ``%3E``)."""
        try:
            parts = parse_edge_key(key)
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from exc
        return [v.to_dict() for v in rt.reader.history("concept_edges", parts)]

    @app.get("/edges", tags=["graph"])
    def edges(
        _t: Reader,
        concept: Annotated[str, Query(min_length=1, description="Edges touching this concept.")],
        as_of: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[dict[str, Any]]:
        point = _times(as_of, known_at)
        rt.reader.concept(concept, as_of=point)  # 404 for an unknown concept, not an empty list
        found = rt.reader.neighbourhood([concept], as_of=point)
        full, _ = rt.reader.records(edge_versions=[n.edge.version_id for n in found])
        return [full[n.edge.version_id].to_dict() for n in found]

    @app.get("/snapshot", tags=["audit"])
    def snapshot(
        _t: Reader, as_of: datetime | None = None, known_at: datetime | None = None
    ) -> dict[str, Any]:
        return rt.reader.snapshot(_times(as_of, known_at)).to_dict()

    @app.get("/diff", tags=["audit"])
    def diff(
        _t: Reader,
        since: Annotated[datetime, Query(alias="from")],
        until: Annotated[datetime | None, Query(alias="to")] = None,
    ) -> dict[str, Any]:
        from data_plane.clock import ensure_utc

        end = ensure_utc(until, field="to") if until else rt.clock()
        return rt.reader.diff(ensure_utc(since, field="from"), end).to_dict()

    @app.get("/answers", tags=["audit"])
    def answers(
        _t: Reader, since: datetime | None = None, limit: Annotated[int, Query(ge=1, le=1000)] = 100
    ) -> list[dict[str, Any]]:
        from data_plane.clock import ensure_utc

        start = ensure_utc(since, field="since") if since else None
        return [dict(v.content["payload"]) for v in rt.reader.answers(since=start, limit=limit)]

    @app.get("/answers/{answer_id}", tags=["audit"])
    def answer(answer_id: str, _t: Reader) -> dict[str, Any]:
        return dict(rt.reader.answer(answer_id).content["payload"])

    @app.get("/answers/{answer_id}/replay", tags=["audit"])
    async def replay(answer_id: str, _t: Reader) -> dict[str, Any]:
        rt.reader.answer(answer_id)
        return await run_in_threadpool(rt.replay, answer_id)

    @app.get("/answers/{answer_id}/evidence.html", tags=["audit"], response_class=HTMLResponse)
    def evidence_page(answer_id: str, _t: Reader) -> HTMLResponse:
        from control_plane.surfaces.pictures import to_html

        payload = rt.reader.answer(answer_id).content["payload"]
        return HTMLResponse(
            to_html(payload),
            headers={"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'"},
        )

    # -- writes --------------------------------------------------------------------------------

    def _created(versions: list[Version]) -> JSONResponse:
        return JSONResponse({"written": [v.to_dict() for v in versions]}, status_code=201)

    def _utc(t: datetime | None, field: str) -> datetime | None:
        from data_plane.clock import ensure_utc

        return ensure_utc(t, field=field) if t else None

    @app.post("/concepts", tags=["curation"], status_code=201)
    def add_concept(body: ConceptIn, token: Writer) -> JSONResponse:
        c = rt.gateway.assert_concept(
            body.concept_id,
            name=body.name,
            aliases=body.aliases,
            summary=body.summary,
            grounding=body.grounding.build(token),
            valid_at=_utc(body.valid_at, "valid_at"),
        )
        return _created([c.as_version()])

    @app.post("/concepts/{concept_id}/revise", tags=["curation"], status_code=201)
    def revise_concept(concept_id: str, body: ConceptReviseIn, token: Writer) -> JSONResponse:
        c = rt.gateway.revise_concept(
            concept_id,
            name=body.name,
            aliases=body.aliases,
            summary=body.summary,
            grounding=body.grounding.build(token),
            valid_at=_utc(body.valid_at, "valid_at"),
        )
        return _created([c.as_version()])

    @app.post("/concepts/{concept_id}/invalidate", tags=["curation"], status_code=201)
    def invalidate_concept(concept_id: str, body: InvalidateIn, token: Writer) -> JSONResponse:
        result = rt.gateway.invalidate_concept(
            concept_id,
            grounding=body.grounding.build(token),
            invalid_at=_utc(body.invalid_at, "invalid_at"),
            retract=body.retract,
        )
        return _created([*result.written, *result.cascaded])

    @app.post("/edges", tags=["curation"], status_code=201)
    def add_edge(body: EdgeIn, token: Writer) -> JSONResponse:
        e = rt.gateway.assert_edge(
            body.source_id,
            body.target_id,
            body.relation,
            grounding=body.grounding.build(token),
            valid_at=_utc(body.valid_at, "valid_at"),
        )
        return _created([e.as_version()])

    @app.post("/edges/revise", tags=["curation"], status_code=201)
    def revise_edge(body: EdgeIn, token: Writer) -> JSONResponse:
        e = rt.gateway.revise_edge(
            body.source_id,
            body.target_id,
            body.relation,
            grounding=body.grounding.build(token),
            valid_at=_utc(body.valid_at, "valid_at"),
        )
        return _created([e.as_version()])

    @app.post("/edges/invalidate", tags=["curation"], status_code=201)
    def invalidate_edge(body: EdgeInvalidateIn, token: Writer) -> JSONResponse:
        e = rt.gateway.invalidate_edge(
            body.source_id,
            body.target_id,
            body.relation,
            grounding=body.grounding.build(token),
            invalid_at=_utc(body.invalid_at, "invalid_at"),
            retract=body.retract,
        )
        return _created([e.as_version()])

    @app.post("/lessons/{lesson_id}/concepts", tags=["curation"], status_code=201)
    def link_lesson(lesson_id: str, body: LessonLinkIn, token: Writer) -> JSONResponse:
        v = rt.gateway.link_lesson(
            lesson_id, body.concept_id, grounding=body.grounding.build(token), title=body.title
        )
        return _created([v])

    @app.post("/lessons/{lesson_id}/concepts/unlink", tags=["curation"], status_code=201)
    def unlink_lesson(lesson_id: str, body: LessonUnlinkIn, token: Writer) -> JSONResponse:
        v = rt.gateway.unlink_lesson(lesson_id, body.concept_id, grounding=body.grounding.build(token))
        return _created([v])

    app.add_middleware(_BodyLimitAndLog, max_body=cfg.max_body_bytes)
    return app


class _BodyLimitAndLog:
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


def app_from_env() -> FastAPI:
    """Factory for ``uvicorn --factory control_plane.surfaces.api:app_from_env`` (reads the environment once)."""
    return create_app(Settings.from_env(os.environ), config=ApiConfig.from_env(os.environ))
