"""What routes share, as FastAPI dependencies: the runtime, the caller's token, the /ask rate
limit, as-of times and page limits.

* Writes need ``Authorization: Bearer <secret>`` with a ``write`` token (401 without, or with an
  unknown or revoked token; 403 with a ``read`` token).
* Reads are open unless ``ApiConfig.reads_require_token`` (``KG_API_READS_REQUIRE_TOKEN=1``);
  then any active token. A token sent to an open read must be valid too (401 otherwise), and
  ``/openapi.json`` declares open reads without a security requirement (:func:`open_reads`), so
  Swagger shows no lock on them and generated clients call them without credentials.
* ``/ask`` is rate limited per token (or per client address) when ``ask_rate_per_min`` is set:
  429 with ``Retry-After``; the server's model budget refuses at a question's first model call. The limits' state is shared by every process serving the database
  (``control_plane.surfaces.ratelimit``).
* ``/healthz`` and ``/readyz`` take none of these: no token, no limit.

The app factory puts the ``Runtime``, the ``ApiConfig`` and the rate limiter on ``app.state``;
these functions read them from there, so routers hold no state of their own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Final

from fastapi import Depends, Query, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from control_plane.settings import Network
from control_plane.surfaces.access import Caller, for_read, for_write, presented, spend_ask
from control_plane.surfaces.http.config import ApiConfig
from control_plane.surfaces.http.metrics import Metrics
from control_plane.surfaces.http.problems import problem_responses
from control_plane.surfaces.http.proxies import HEADER, client_address
from control_plane.surfaces.http.schemas import AS_OF, KNOWN_AT, Instant, WrittenOut
from control_plane.surfaces.pagination import DEFAULT_LIMIT, MAX_LIMIT, next_headers
from control_plane.surfaces.ratelimit import RateLimiter
from control_plane.surfaces.runtime import Runtime
from data_plane.clock import ensure_utc
from data_plane.tokens import Token

__all__ = [
    "WRITE_ROUTE",
    "AsOfQuery",
    "AskRateLimit",
    "BigPage",
    "MetricsDep",
    "Page",
    "Paging",
    "ReadToken",
    "RuntimeDep",
    "Times",
    "WriteToken",
    "open_reads",
    "request_address",
    "utc",
]

BEARER: Final = "HTTPBearer"
# The read routes' own name for the same scheme, so that /openapi.json can say whether their token
# is optional or required (:func:`open_reads`); it never reaches the published contract.
READ_BEARER: Final = "ReadBearer"
bearer: Final = HTTPBearer(auto_error=False, description="An API token from `kg token create`.")
read_bearer: Final = HTTPBearer(auto_error=False, scheme_name=READ_BEARER)
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
ReadCredentials = Annotated[HTTPAuthorizationCredentials | None, Depends(read_bearer)]


def runtime(request: Request) -> Runtime:
    rt: Runtime = request.app.state.runtime
    return rt


def config(request: Request) -> ApiConfig:
    cfg: ApiConfig = request.app.state.config
    return cfg


def metrics(request: Request) -> Metrics:
    found: Metrics = request.app.state.metrics
    return found


RuntimeDep = Annotated[Runtime, Depends(runtime)]
ConfigDep = Annotated[ApiConfig, Depends(config)]
MetricsDep = Annotated[Metrics, Depends(metrics)]


def _caller(rt: Runtime, creds: HTTPAuthorizationCredentials | None) -> Token | None:
    """The bearer token the caller sent (``access.presented``: an unknown or revoked one is a 401
    on any route that reads tokens, an open read too)."""
    return presented(rt.tokens, creds.credentials if creds and creds.scheme.lower() == "bearer" else None)


def write_token(rt: RuntimeDep, creds: Credentials) -> Token:
    """The caller's write token, or 401/403."""
    return for_write(_caller(rt, creds))


def read_token(rt: RuntimeDep, cfg: ConfigDep, creds: ReadCredentials) -> Token | None:
    """The caller's (any scope) token, or None when it sent none and reads are open; 401 for an
    unknown or revoked token, or for none when reads require one."""
    return for_read(_caller(rt, creds), required=cfg.reads_require_token)


ReadToken = Annotated[Token | None, Depends(read_token)]
WriteToken = Annotated[Token, Depends(write_token)]


def ask_rate_limit(request: Request, token: ReadToken) -> None:
    """Spend one /ask from the caller's limit (per token, else per client address), or 429 with
    ``Retry-After`` (``access.spend_ask``; the MCP ``ask`` tool spends from the same limit).

    The server's model budget is not checked here: a question that needs no model call (a reused
    answer, one that names no concept) is served even while it is spent, and one that does is
    refused at its first call (``ModelBudgetSpent``, also a 429; see ``problems``)."""
    limiter: RateLimiter | None = request.app.state.limiter
    cfg: ApiConfig = request.app.state.config
    spend_ask(limiter, Caller(token, request_address(request, cfg.trusted_proxies)), what="/ask requests")


def request_address(request: Request, proxies: tuple[Network, ...]) -> str:
    """The client address of ``request``: its peer, or behind one of ``proxies`` the address it
    forwarded (``proxies.client_address``)."""
    peer = request.client.host if request.client else None
    return client_address(peer, request.headers.get(HEADER), proxies)


AskRateLimit = Depends(ask_rate_limit)


def utc(t: datetime | None, field: str) -> datetime | None:
    """``t`` in UTC; a naive time is a 400 naming ``field``."""
    return ensure_utc(t, field=field) if t else None


Limit = Annotated[
    int,
    Query(ge=1, le=MAX_LIMIT, description=f"Items per page (at most {MAX_LIMIT})."),
]
CursorParam = Annotated[
    str | None,
    Query(max_length=4096, description="`next_cursor` of the previous page (X-Next-Cursor header)."),
]


@dataclass(frozen=True)
class Paging:
    """A list request's page size and cursor, and where to say where the next page is."""

    limit: int
    cursor: str | None
    request: Request
    response: Response

    def next_page(self, cursor: str | None) -> None:
        """Point the response at the next page (``X-Next-Cursor`` and ``Link: rel="next"``)."""
        url = str(self.request.url.include_query_params(cursor=cursor)) if cursor else ""
        self.response.headers.update(next_headers(url, cursor))


def _paging(default: int) -> Callable[..., Paging]:
    def paging(
        request: Request, response: Response, limit: Limit = default, cursor: CursorParam = None
    ) -> Paging:
        return Paging(limit, cursor, request, response)

    return paging


# Lists of records default to 100 a page; /snapshot and /diff pages (of each section) to 1000.
Page = Annotated[Paging, Depends(_paging(DEFAULT_LIMIT))]
BigPage = Annotated[Paging, Depends(_paging(MAX_LIMIT))]


@dataclass(frozen=True)
class Times:
    """``as_of`` (valid time) and ``known_at`` (recorded time) query parameters, in UTC (None: now)."""

    as_of: datetime | None
    known_at: datetime | None


def _times(
    as_of: Annotated[Instant | None, Query(description=AS_OF)] = None,
    known_at: Annotated[Instant | None, Query(description=KNOWN_AT)] = None,
) -> Times:
    return Times(utc(as_of, "as_of"), utc(known_at, "known_at"))


AsOfQuery = Annotated[Times, Depends(_times)]


# Every curation route: 201 with the versions written; 403 for a read token, 409 for a conflict.
WRITE_ROUTE: Final[dict[str, Any]] = {
    "tags": ["curation"],
    "status_code": 201,
    "response_model": WrittenOut,
    "responses": problem_responses(403, 409),
}


def open_reads(openapi: dict[str, Any], *, required: bool) -> dict[str, Any]:
    """The read token's security requirement as it is (in place): none on reads when they are
    open (``required`` False: a token is optional there, so Swagger shows no lock on them and a
    generated client calls them without credentials; OpenAPI's own "optional", ``[{}, {bearer}]``,
    would still show a lock and make openapi-python-client demand an authenticated client), the
    one bearer scheme when they need a token."""
    for operation in (op for path in openapi.get("paths", {}).values() for op in path.values()):
        needs = [
            {BEARER: []} if READ_BEARER in r else r
            for r in operation.get("security", [])
            if required or READ_BEARER not in r
        ]
        if needs:
            operation["security"] = needs
        else:
            operation.pop("security", None)
    openapi.get("components", {}).get("securitySchemes", {}).pop(READ_BEARER, None)
    return openapi
