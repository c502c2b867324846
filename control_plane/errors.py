"""Errors of the control plane: the model egress (``LLMError``) and the served surfaces' access
rules (``AccessRefused``, ``RateLimited``), branches of the one error tree.

    KGError                      (data_plane.errors)
    ├── LLMError                 the model could not give a usable reply
    │   ├── LLMUnavailable       network error, timeout, 429/5xx after bounded retries (.status, .attempts)
    │   │   └── ModelBudgetSpent the server's own cap on model calls per minute is used up (.retry_after)
    │   └── LLMRejected          400/401/402/422 ...: retrying cannot help (.status)
    ├── AccessRefused            a served call (HTTP route, MCP tool) lacks the token it needs
    │   ├── Unauthenticated      no valid token: none where one is needed, or one unknown or revoked (401)
    │   └── Forbidden            a valid token whose scope does not allow the call (403)
    └── RateLimited              the caller's own limit is spent (.retry_after; 429)

Malformed *content* (blank, not JSON, wrong types) is not an exception: it becomes a ``Draft``
with ``error`` set and confidence 0 (see ``control_plane.synthesizers.parsing``). Messages never contain the
API key, the gateway token or any request header.
"""

from __future__ import annotations

from data_plane.errors import KGError

__all__ = [
    "AccessRefused",
    "Forbidden",
    "LLMError",
    "LLMRejected",
    "LLMUnavailable",
    "ModelBudgetSpent",
    "RateLimited",
    "Unauthenticated",
]


class LLMError(KGError):
    """The model could not give a usable reply."""


class LLMUnavailable(LLMError):
    """The model gateway did not answer in time, or kept failing after bounded retries.

    ``status`` is the last HTTP status seen (None for a network error or timeout); ``attempts``
    is how many requests were sent.
    """

    def __init__(self, message: str, *, status: int | None, attempts: int) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


class ModelBudgetSpent(LLMUnavailable):
    """This server's cap on model calls per minute (``KG_API_MODEL_CALLS_PER_MIN``) is used up.

    No request was sent; ``retry_after`` is the seconds until a call may go ahead."""

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message, status=429, attempts=0)
        self.retry_after = retry_after


class LLMRejected(LLMError):
    """The model gateway refused the request itself (bad key, no balance, bad parameters)."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


class AccessRefused(KGError):
    """A served call (an HTTP route, an MCP tool) lacks the token it needs. Messages never hold a
    secret."""


class Unauthenticated(AccessRefused):
    """No valid token: none was presented where one is needed, or the one presented is unknown or
    revoked."""


class Forbidden(AccessRefused):
    """The token presented is valid, but its scope does not allow the call (a read token writing)."""


class RateLimited(KGError):
    """The caller's own limit (``KG_API_ASK_RATE_PER_MIN``) is spent; ``retry_after`` is the seconds
    until it may ask again."""

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after
