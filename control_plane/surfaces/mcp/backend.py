"""What an MCP tool call goes through before and after its body: the same checks, limits, counts,
log and one-line errors as the HTTP routes and the command line.

:class:`Backend` is what the server serves from (built once at the edge: ``kg mcp``, the HTTP
app). :meth:`Backend.serve` runs one call:

1. every text argument must be storable (no NUL, no lone surrogate), or the call is refused
   naming the argument, as ``kg`` and the HTTP door refuse it;
2. the caller is who presented a token: over HTTP the request's ``Authorization: Bearer``
   header, over stdio the secret in ``KG_MCP_TOKEN``; ``access`` decides whether it may read,
   write or ask (one ask spent from the caller's limit, shared with ``POST /ask``);
3. the body runs: a thin call into the functions the CLI and HTTP use (``tools``);
4. a failure becomes a tool error (``isError``) whose text is the one line ``kg`` prints after
   ``error:`` (a concept id that names none gets the same did-you-mean); an unexpected one says
   only that it happened (its type goes to the log);
5. one structlog event ``mcp.call`` (tool, transport, outcome, duration; never an argument or a
   token) and the counts (``kg_mcp_tool_calls_total``, the answer and limiter counters of
   ``/metrics``) record it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Final, Protocol

from mcp.types import CallToolResult, TextContent

from control_plane.errors import AccessRefused, ModelBudgetSpent, RateLimited
from control_plane.surfaces.access import STDIO, Caller, for_read, for_write, presented, spend_ask
from control_plane.surfaces.messages import database_error, first_line
from data_plane.errors import InactiveEndpoint, InputError, KGError, NotFound
from data_plane.events import get_logger
from data_plane.records import text_fault

if TYPE_CHECKING:
    from starlette.requests import Request

    from control_plane.settings import Secret
    from control_plane.surfaces.ratelimit import RateLimiter
    from control_plane.surfaces.runtime import Runtime
    from data_plane.tokens import Token

__all__ = ["Backend", "Call", "Counts", "Needs"]

log = get_logger("control_plane.surfaces.mcp")

# How each transport lets a caller present a token, for the refusal that asks for one.
_HOW: Final = {
    "http": " (send Authorization: Bearer <secret of a kg token>)",
    STDIO: " (set KG_MCP_TOKEN in the MCP server's environment to the secret of a kg token)",
}
# Arguments that name concepts, for the did-you-mean of a refusal for want of one.
_CONCEPT_ARGUMENTS: Final = ("concept_id", "source_id", "target_id")
_UNEXPECTED: Final = "an unexpected error occurred; see the server log"


class Needs(Enum):
    """What a tool needs of its caller."""

    READ = "read"  # a token only when reads require one (KG_API_READS_REQUIRE_TOKEN=1)
    ASK = "ask"  # a read that spends one question from the caller's limit
    WRITE = "write"  # a write token


class Counts(Protocol):
    """Where calls are counted (``control_plane.surfaces.http.metrics.Metrics`` is one)."""

    def answer(self, payload: Mapping[str, Any]) -> None: ...

    def limited(self, limit: str) -> None: ...

    def tool_call(self, tool: str, outcome: str) -> None: ...


@dataclass(frozen=True)
class Call:
    """What a tool body is given: the runtime, and the token its caller presented (None: none)."""

    runtime: Runtime
    token: Token | None
    counts: Counts | None

    def answered(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Count an answer given (as ``POST /ask`` counts it) and hand it back."""
        if self.counts is not None:
            self.counts.answer(payload)
        return payload


@dataclass(frozen=True)
class Backend:
    """What the MCP server serves from. ``stdio_secret`` is the token a stdio server acts with
    (``KG_MCP_TOKEN``; over HTTP every request sends its own); ``address_of`` gives the client
    address of an HTTP request (its peer, or what a trusted proxy forwarded), the key of its
    question limit when it sends no token."""

    runtime: Runtime
    reads_require_token: bool = False
    limiter: RateLimiter | None = None
    counts: Counts | None = None
    stdio_secret: Secret | None = None
    address_of: Callable[[Request], str] | None = None

    def serve(
        self,
        tool: str,
        needs: Needs,
        request: Request | None,
        arguments: Mapping[str, Any],
        body: Callable[..., dict[str, Any]],
    ) -> dict[str, Any] | CallToolResult:
        """Run one call of ``tool`` (module docstring); ``request`` is the HTTP request that
        carried it, None over stdio."""
        transport = STDIO if request is None else "http"
        started = time.perf_counter()
        outcome = "error"
        try:
            _refuse_unstorable(arguments)
            call = self._admit(needs, request, transport)
            result = body(call, **arguments)
            outcome = "ok"
            return result
        except (AccessRefused, RateLimited, ModelBudgetSpent) as exc:
            outcome = "refused"
            if isinstance(exc, RateLimited | ModelBudgetSpent) and self.counts is not None:
                self.counts.limited("ask" if isinstance(exc, RateLimited) else "model_calls")
            return _error(str(exc))
        except (NotFound, InactiveEndpoint) as exc:
            return _error(str(self._hinted(exc, arguments)))
        except KGError as exc:
            return _error(str(exc))
        except Exception as exc:
            return _error(self._unexpected(tool, exc))
        finally:
            self._record(tool, transport, outcome, started, request)

    def _admit(self, needs: Needs, request: Request | None, transport: str) -> Call:
        """The call's runtime and token, once the caller may make it (``access``)."""
        rt = self.runtime
        secret, address = self._presented(request)
        token = presented(rt.tokens, secret)
        if needs is Needs.WRITE:
            token = for_write(token, how=_HOW[transport])
        else:
            token = for_read(token, required=self.reads_require_token, how=_HOW[transport])
        if needs is Needs.ASK:
            spend_ask(self.limiter, Caller(token, address), what="ask calls")
        return Call(rt, token, self.counts)

    def _presented(self, request: Request | None) -> tuple[str | None, str]:
        """The secret the caller presented (None: none) and its client address."""
        if request is None:
            return (self.stdio_secret.reveal() if self.stdio_secret else None), STDIO
        scheme, _, secret = request.headers.get("authorization", "").partition(" ")
        if self.address_of is not None:
            address = self.address_of(request)
        else:
            address = request.client.host if request.client else "unknown"
        return (secret.strip() or None) if scheme.lower() == "bearer" else None, address

    def _hinted(self, exc: NotFound | InactiveEndpoint, arguments: Mapping[str, Any]) -> KGError:
        from control_plane.surfaces.lookup import hinted

        return hinted(exc, self.runtime.reader, list(_concept_ids(arguments)))

    def _unexpected(self, tool: str, exc: Exception) -> str:
        """A database error as the CLI words it; anything else only as having happened (its
        text may hold what a client should not see; its type goes to the log)."""
        from sqlalchemy.exc import SQLAlchemyError

        if isinstance(exc, SQLAlchemyError):
            return database_error(exc)
        log.error("mcp.unexpected", tool=tool, error=type(exc).__name__)
        return _UNEXPECTED

    def _record(
        self, tool: str, transport: str, outcome: str, started: float, request: Request | None
    ) -> None:
        request_id = None if request is None else request.scope.get("state", {}).get("request_id")
        log.info(
            "mcp.call",
            tool=tool,
            transport=transport,
            outcome=outcome,
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
            request_id=request_id,
        )
        if self.counts is not None:
            self.counts.tool_call(tool, outcome)


def _error(message: str) -> CallToolResult:
    """A tool error carrying ``message``'s first line (what ``kg`` prints after ``error:``)."""
    return CallToolResult(content=[TextContent(type="text", text=first_line(message))], is_error=True)


def _texts(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every string in an argument's value (lists and JSON objects included), with where it is."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _texts(key, where)
            yield from _texts(item, f"{where}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _texts(item, f"{where}[{i}]")


def _refuse_unstorable(arguments: Mapping[str, Any]) -> None:
    """Text no database stores alike (a NUL, a lone surrogate) is refused, naming the argument."""
    for name, value in arguments.items():
        for where, text in _texts(value, name):
            fault = text_fault(text)
            if fault is not None:
                raise InputError(f"{where} {fault}", field=name, value=text[:200])


def _concept_ids(arguments: Mapping[str, Any]) -> Iterator[str]:
    """The concept ids among a call's arguments (an edge key's two ends too)."""
    for name in _CONCEPT_ARGUMENTS:
        if isinstance(arguments.get(name), str):
            yield arguments[name]
    key = arguments.get("key")
    if isinstance(key, str):
        parts = key.split(">")
        yield from (parts[0], parts[-1]) if len(parts) == 3 else (key,)
