"""Curation writes for the routers: applied, or rehearsed (``?dry_run=true``: what would be written
and which recorded answers it would change, nothing written)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Query, Response

from control_plane.surfaces.writes import curate

if TYPE_CHECKING:
    from control_plane.surfaces.runtime import Runtime
    from data_plane.gateway import Write

__all__ = ["DryRun", "write"]

DryRun = Annotated[
    bool,
    Query(
        description="Rehearse the write: answer what it would write and which recorded answers it "
        "would change (200), and write nothing."
    ),
]


def write(
    rt: Runtime,
    writes: Sequence[Write],
    *,
    dry_run: bool,
    response: Response,
    allow_duplicate_names: bool = False,
) -> dict[str, Any]:
    """Apply ``writes`` (201: every version written, kept parts and cascades included), or with
    ``dry_run`` rehearse them (200)."""
    outcome = curate(rt, writes, dry_run=dry_run, allow_duplicate_names=allow_duplicate_names)
    if dry_run:
        response.status_code = 200
    return outcome.to_dict()
