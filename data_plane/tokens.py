"""API bearer tokens: created once, stored hashed, checked in constant time, revoked at once.

A token's secret is shown to its creator exactly once (``create`` returns it) and never stored:
the ``api_tokens`` table keeps only its SHA-256. ``verify`` reads the table on every call, so a
revocation takes effect for the very next request; there is no cache to invalidate.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from data_plane import schema
from data_plane.clock import Clock, format_time, utc_now
from data_plane.errors import InputError, NotFound

__all__ = ["SCOPES", "Token", "TokenStore", "hash_secret"]

SCOPES: Final = ("read", "write")
# Secrets carry a recognisable prefix so that leaked tokens are easy to find in logs and repos.
_PREFIX: Final = "kg_"
T = schema.api_tokens


def hash_secret(secret: str) -> str:
    """The stored form of a secret: hex SHA-256."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Token:
    """A token's public record (never its secret)."""

    token_id: str
    name: str
    scope: str
    created_at: datetime
    revoked_at: datetime | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def allows(self, scope: str) -> bool:
        """Does this token grant ``scope``? A write token may also read."""
        return self.active and (self.scope == scope or self.scope == "write")

    def to_dict(self) -> dict[str, Any]:
        return {
            "token_id": self.token_id,
            "name": self.name,
            "scope": self.scope,
            "created_at": format_time(self.created_at),
            "revoked_at": format_time(self.revoked_at),
        }


def _token(row: Any) -> Token:
    return Token(row["token_id"], row["name"], row["scope"], row["created_at"], row["revoked_at"])


class TokenStore:
    """Create, verify, revoke and list API tokens in the ``api_tokens`` table."""

    def __init__(self, engine: Engine, *, clock: Clock = utc_now) -> None:
        self._engine = engine
        self._clock = clock

    def create(self, name: str, scope: str) -> tuple[str, str]:
        """Create a token; returns ``(token_id, secret)``. The secret is not recoverable later."""
        if not isinstance(name, str) or not name.strip():
            raise InputError("token name must be non-empty text", field="name", value=name)
        if scope not in SCOPES:
            raise InputError(
                f"token scope must be one of {', '.join(SCOPES)}, got {scope!r}", field="scope", value=scope
            )
        token_id = secrets.token_hex(8)
        secret = _PREFIX + secrets.token_urlsafe(32)
        with self._engine.begin() as conn:
            conn.execute(
                sa.insert(T).values(
                    token_id=token_id,
                    name=name.strip(),
                    scope=scope,
                    token_hash=hash_secret(secret),
                    created_at=self._clock(),
                    revoked_at=None,
                )
            )
        return token_id, secret

    def verify(self, secret: str) -> Token | None:
        """The active token whose secret this is, or None (unknown, malformed or revoked)."""
        if not secret or not secret.startswith(_PREFIX) or len(secret) > 200:
            return None
        digest = hash_secret(secret)
        with self._engine.connect() as conn:
            row = conn.execute(sa.select(T).where(T.c.token_hash == digest)).mappings().first()
        # The lookup is by an index on the hash; the comparison below keeps the final check
        # constant-time even if a future lookup were to match on a prefix.
        if row is None or not hmac.compare_digest(row["token_hash"], digest):
            return None
        token = _token(row)
        return token if token.active else None

    def revoke(self, token_id: str) -> Token:
        """Revoke a token now; later ``verify`` calls refuse it. Revoking twice is an error."""
        with self._engine.begin() as conn:
            row = conn.execute(sa.select(T).where(T.c.token_id == token_id)).mappings().first()
            if row is None:
                raise NotFound(f"no token {token_id!r}", key=token_id)
            if row["revoked_at"] is not None:
                raise InputError(
                    f"token {token_id!r} was already revoked at {format_time(row['revoked_at'])}",
                    field="token_id",
                    value=token_id,
                )
            now = self._clock()
            conn.execute(sa.update(T).where(T.c.token_id == token_id).values(revoked_at=now))
        return _token({**row, "revoked_at": now})

    def list(self) -> list[Token]:
        """Every token, oldest first, revoked ones included."""
        with self._engine.connect() as conn:
            rows = conn.execute(sa.select(T).order_by(T.c.created_at, T.c.token_id)).mappings().all()
        return [_token(r) for r in rows]
