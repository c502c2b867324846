"""The one error tree of the backend.

    KGError                      root: every error this backend raises on purpose
    ├── ConfigurationError       bad settings (database URL, model, gateway URL) found at start-up
    ├── InputError               a value given by a user is malformed (time, id, JSON ...)
    │   └── BundleError          a bundle file/line/column is wrong (.file, .line, .column)
    │       └── BundleRejected   every problem of a bundle, found in one pass (.problems)
    ├── WriteRejected            the write gateway refused a write (.field, .value); nothing was written
    │   ├── GroundingRejected    a grounding field is missing, empty or out of range
    │   ├── TemporalConflict     invalid_at <= valid_at, or an operation that time forbids
    │   ├── UnknownRelation      relation type not in RELATIONS
    │   ├── SelfLoop             an edge from a concept to itself
    │   ├── InactiveEndpoint     an edge to an unknown or no-longer-active concept
    │   ├── PrerequisiteCycle    a prerequisite edge would close a cycle (.cycle)
    │   ├── RequirementRejected  a requirement group is malformed (k, options, members)
    │   ├── KeyExists            assert on a key whose current version still holds
    │   ├── DuplicateName        a concept name or alias reads the same as another concept's (.other_id)
    │   └── ConcurrentWrite      another writer changed the key first; retry
    │       └── WriteLockTimeout another writer held the write lock longer than the wait (.waited_s)
    ├── NotFound                 no such concept, edge, answer or version (.key)
    ├── StorageFault             an SQLite file cannot be written: permissions, a full disk (.path)
    ├── LLMError                 defined in control_plane.errors (LLMUnavailable, LLMRejected)
    ├── AccessRefused            defined in control_plane.errors (Unauthenticated, Forbidden)
    └── RateLimited              defined in control_plane.errors

Foreign exceptions (SQLAlchemy, httpx, openai) are translated at the boundary with
``raise ... from exc`` and never leak upward. Messages never contain secrets.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a bundle: what (``kind``), where (file, line, column) and why.

    ``lines`` names every row involved when more than one is (the rows of a prerequisite cycle,
    the first occurrence of a duplicate).
    """

    kind: str
    file: str
    line: int | None
    column: str | None
    message: str
    lines: tuple[int, ...] = ()

    @property
    def where(self) -> str:
        where = self.file
        if self.lines:
            where += " lines " + ", ".join(map(str, self.lines))
        elif self.line is not None:
            where += f":{self.line}"
        if self.column is not None:
            where += f" column {self.column!r}"
        return where

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "lines": list(self.lines),
        }


class BundleRejected(BundleError):
    """A bundle was refused; ``problems`` lists everything wrong with it (nothing was written).

    ``file``, ``line`` and ``column`` are those of the first problem, so a caller that only
    handles :class:`BundleError` still learns where to look first.
    """

    def __init__(self, problems: Sequence[Problem]) -> None:
        if not problems:
            raise ValueError("BundleRejected needs at least one problem")
        first = problems[0]
        more = len(problems) - 1
        message = first.message + (f" (and {more} more problem{'s' * (more != 1)})" if more else "")
        super().__init__(message, file=first.file, line=first.line, column=first.column)
        self.problems = tuple(problems)

    def counts(self) -> dict[str, int]:
        """Problems per kind, in the order the kinds first appear."""
        return dict(Counter(p.kind for p in self.problems))


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


class RequirementRejected(WriteRejected):
    """A requirement group is malformed: ``needs`` below 1 or above its number of options, an
    empty option, a member that is its own target, a target that changes, or options that fall
    below ``needs`` at some valid time (``field`` and ``value`` name which)."""


class KeyExists(WriteRejected):
    """An assert names a key whose current version still holds then; revise it instead. (A key
    whose validity was closed by an invalidation may be asserted again.)"""


class DuplicateName(WriteRejected):
    """A concept's name or alias reads the same as another concept's (``other_id``), as the question
    reader reads names; allowed only when the caller says the duplicate is intended."""

    def __init__(self, message: str, *, field: str, value: str, other_id: str) -> None:
        super().__init__(message, field=field, value=value)
        self.other_id = other_id


class ConcurrentWrite(WriteRejected):
    """Another writer superseded the same key first; the write can be retried."""


class WriteLockTimeout(ConcurrentWrite):
    """Another writer (an import, say) held the database's write lock for longer than this writer
    was willing to wait (``waited_s``); nothing was written."""

    def __init__(self, message: str, *, waited_s: float) -> None:
        super().__init__(message)
        self.waited_s = waited_s


class NotFound(KGError):
    """No such concept, edge, lesson link, answer or version."""

    def __init__(self, message: str, *, key: Any = None) -> None:
        super().__init__(message)
        self.key = key


class StorageFault(KGError):
    """An SQLite database file or its side file cannot be opened or written: its permissions, a
    read-only file system, a full disk (``.path``). The message names the file and what is wrong."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path
