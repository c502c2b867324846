"""Who may make a served call, one rule for every served surface (the HTTP routes and the MCP tools):
the token a caller presents, checked for a read or a write, and the caller's limit on questions.

* A token that is presented must be valid wherever it is presented, an open read too (a client
  with a stale token learns it at once, not at its first write): unknown or revoked is
  ``Unauthenticated``.
* A write needs a ``write`` token: none is ``Unauthenticated``, a ``read`` token ``Forbidden``.
* A read needs a token only when reads require one (``KG_API_READS_REQUIRE_TOKEN=1``).
* A question (``POST /ask``, the MCP ``ask`` tool) spends one from the caller's limit
  (``KG_API_ASK_RATE_PER_MIN``), kept per token, else per client address (a stdio client, which
  has none, is the one key :data:`STDIO`). Both surfaces use the same keys, so a token has ONE
  limit whichever way it asks. Spent: ``RateLimited``, with the seconds to wait.

The surfaces translate these errors: HTTP to 401 (``WWW-Authenticate: Bearer``), 403 and 429
problem bodies, MCP to tool errors with the same one-line message. No message holds a secret.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from control_plane.errors import Forbidden, RateLimited, Unauthenticated
from control_plane.surfaces.ratelimit import RateLimiter, whole_seconds
from data_plane.tokens import Token, TokenStore

__all__ = ["STDIO", "Caller", "for_read", "for_write", "presented", "spend_ask"]

# What a stdio client is known by when it presents no token: it has no address, and every stdio
# server on a machine is one person's tool, so they share one key.
STDIO: Final = "stdio"
_REQUIRED: Final = "a valid bearer token is required"


@dataclass(frozen=True)
class Caller:
    """Who makes a call: the (verified) token it presented, if any, and its client address over
    HTTP, or :data:`STDIO`."""

    token: Token | None
    address: str

    def limit_key(self) -> tuple[str, str]:
        """The key of this caller's question limit, and how a message names the caller."""
        if self.token is not None:
            return f"ask:token:{self.token.token_id}", f"token {self.token.token_id}"
        if self.address == STDIO:
            return "ask:stdio", "this stdio client (no token was set)"
        return f"ask:addr:{self.address}", f"client address {self.address} (no token was sent)"


def presented(tokens: TokenStore, secret: str | None) -> Token | None:
    """The token whose secret was presented, None when none was; ``Unauthenticated`` for one that
    is unknown or revoked (checked against the database on every call, so a revocation holds from
    the next call on)."""
    if secret is None:
        return None
    token = tokens.verify(secret)
    if token is None:
        raise Unauthenticated("the bearer token is unknown or revoked")
    return token


def for_write(token: Token | None, *, how: str = "") -> Token:
    """``token`` when it may write; ``how`` (e.g. " (set KG_MCP_TOKEN ...)") says how to present one."""
    if token is None:
        raise Unauthenticated(_REQUIRED + how)
    if not token.allows("write"):
        raise Forbidden(f"token {token.token_id} has scope {token.scope!r}; this needs 'write'")
    return token


def for_read(token: Token | None, *, required: bool, how: str = "") -> Token | None:
    """``token`` (None: none presented) when it may read; reads need one only when ``required``."""
    if token is None and required:
        raise Unauthenticated(_REQUIRED + how)
    return token


def spend_ask(limiter: RateLimiter | None, caller: Caller, *, what: str) -> None:
    """Spend one question from ``caller``'s limit (none: unlimited), or ``RateLimited``; ``what``
    names the calls in the message ("/ask requests", "ask calls")."""
    if limiter is None:
        return
    key, who = caller.limit_key()
    wait = limiter.check(key)
    if wait > 0:
        raise RateLimited(
            f"too many {what} for {who}: the limit is {limiter.rule.per_min:g} per minute "
            f"(KG_API_ASK_RATE_PER_MIN); retry in {whole_seconds(wait)} s",
            retry_after=wait,
        )
