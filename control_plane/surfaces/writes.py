"""Curation writes as every surface makes them (``kg concept/edge``, the HTTP write routes, the MCP
write tools): the period a revision or an invalidation covers, and applying the writes or
rehearsing them (a dry run: what they would write and which recorded answers they would change,
nothing written).

A revision from ``valid_at`` until ``until`` revises that period only: the versions in force
before and after keep what they say. ``correct`` replaces the whole period instead (from
``valid_at``, default the first start, to ``until``, default the last end). An invalidation closes
the validity from ``invalid_at`` (default now) until ``until`` (default: for good), or retracts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict

from data_plane.gateway import KEEP

if TYPE_CHECKING:
    from control_plane.planning.impact import Impact
    from control_plane.surfaces.runtime import Runtime
    from data_plane.gateway import BatchResult, Write
    from data_plane.records import Version

__all__ = ["Outcome", "Period", "curate", "invalidation", "revision"]


class Period(TypedDict, total=False):
    """The ``Write.concept`` / ``Write.edge`` arguments that say which period a write covers."""

    mode: str
    valid_at: datetime | None
    invalid_at: Any  # a datetime, None (open) or KEEP (as it is)
    until: datetime | None


def revision(valid_at: datetime | None, until: datetime | None, *, correct: bool) -> Period:
    """The period of a revision (module docstring)."""
    return {
        "mode": "correct" if correct else "revise",
        "valid_at": valid_at,
        "invalid_at": until if correct and until is not None else KEEP,
        "until": None if correct else until,
    }


def invalidation(invalid_at: datetime | None, until: datetime | None, *, retract: bool) -> Period:
    """The period of an invalidation (module docstring)."""
    return {
        "mode": "retract" if retract else "invalidate",
        "invalid_at": KEEP if invalid_at is None else invalid_at,
        "until": until,
    }


@dataclass(frozen=True)
class Outcome:
    """What writes wrote (every version: kept parts and cascades included; the unchanged versions
    when nothing changed), or on a dry run would write, with the recorded answers they would
    change (``answers``, None when they were written)."""

    versions: Sequence[Version]
    answers: Impact | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"written": [...]}``, and on a dry run ``"dry_run": true`` and ``"answers"``."""
        body: dict[str, Any] = {"written": [v.to_dict() for v in self.versions]}
        if self.answers is not None:
            body.update(dry_run=True, answers=self.answers.to_dict())
        return body


def curate(
    rt: Runtime, writes: Sequence[Write], *, dry_run: bool, allow_duplicate_names: bool = False
) -> Outcome:
    """Apply ``writes`` in one batch, or with ``dry_run`` rehearse them (checked, then rolled back)."""
    if not dry_run:
        result = rt.gateway.apply(writes, allow_duplicate_names=allow_duplicate_names)
        return Outcome(_versions(result))
    from control_plane.planning.impact import rehearse

    result, found = rehearse(
        rt.gateway,
        rt.reader,
        writes,
        rt.planner.synthesizer,
        allow_duplicate_names=allow_duplicate_names,
        clock=rt.clock,
    )
    return Outcome(_versions(result), found)


def _versions(result: BatchResult) -> Sequence[Version]:
    return [*result.written, *result.kept, *result.cascaded] or result.unchanged
