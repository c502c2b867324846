"""The one error tree of the backend.

    KGError                      root: every error this backend raises on purpose
    ├── ConfigurationError       bad settings (database URL, model, gateway URL) found at start-up
    ├── InputError               a value given by a user is malformed (time, id, JSON ...)
    │   └── BundleError          a bundle file/line/column is wrong (.file, .line, .column)
    ├── WriteRejected            the write gateway refused a write (.field, .value); nothing was written
    │   ├── GroundingRejected    a grounding field is missing, empty or out of range
    │   ├── TemporalConflict     invalid_at <= valid_at, or an operation that time forbids
    │   ├── UnknownRelation      relation type not in RELATIONS
    │   ├── SelfLoop             an edge from a concept to itself
    │   ├── InactiveEndpoint     an edge to an unknown or no-longer-active concept
    │   ├── PrerequisiteCycle    a prerequisite edge would close a cycle (.cycle)
    │   ├── KeyExists            assert on a key that already has a current version
    │   └── ConcurrentWrite      another writer changed the key first; retry
    ├── NotFound                 no such concept, edge, answer or version (.key)
    └── LLMError                 defined in control_plane.errors (LLMUnavailable, LLMRejected)

Foreign exceptions (SQLAlchemy, httpx, openai) are translated at the boundary with
``raise ... from exc`` and never leak upward. Messages never contain secrets.
"""

from __future__ import annotations

from typing import Any


class KGError(Exception):
    """Root of every error the backend raises on purpose."""


class ConfigurationError(KGError):
    """Settings are invalid; raised once, at start-up."""


class InputError(KGError):
    """A user-supplied value is malformed."""

    def __init__(self, message: str, *, field: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value


class BundleError(InputError):
    """A graph bundle is malformed; names the file, line and column."""

    def __init__(
        self, message: str, *, file: str, line: int | None = None, column: str | None = None
    ) -> None:
        where = file
        if line is not None:
            where += f":{line}"
        if column is not None:
            where += f" column {column!r}"
        super().__init__(f"{where}: {message}", field=column)
        self.file = file
        self.line = line
        self.column = column


class WriteRejected(KGError):
    """The write gateway refused a write. Nothing was written."""

    def __init__(self, message: str, *, field: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value


class GroundingRejected(WriteRejected):
    """A grounding field (confidence, reason, source, evidence) is missing or invalid."""


class TemporalConflict(WriteRejected):
    """The time stamps of a write contradict each other or the current state."""


class UnknownRelation(WriteRejected):
    """The relation type is not one of the known relation types."""


class SelfLoop(WriteRejected):
    """An edge would connect a concept to itself."""


class InactiveEndpoint(WriteRejected):
    """An edge names a concept that is unknown or no longer active."""


class PrerequisiteCycle(WriteRejected):
    """A prerequisite edge would close a cycle among active prerequisite edges."""

    def __init__(self, message: str, *, cycle: list[str]) -> None:
        super().__init__(message, field="relation", value="prerequisite")
        self.cycle = cycle


class KeyExists(WriteRejected):
    """An assert names a key that already has a current version; revise it instead."""


class ConcurrentWrite(WriteRejected):
    """Another writer superseded the same key first; the write can be retried."""


class NotFound(KGError):
    """No such concept, edge, lesson link, answer or version."""

    def __init__(self, message: str, *, key: Any = None) -> None:
        super().__init__(message)
        self.key = key
