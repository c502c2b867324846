"""The whole graph as of any (valid time, recorded time), and what the system learned between
two recorded times; both paginated."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from control_plane.surfaces.http.dependencies import AsOfQuery, BigPage, ReadToken, RuntimeDep, utc
from control_plane.surfaces.http.problems import problem_responses
from control_plane.surfaces.http.schemas import TIME_IN, DiffOut, ImpactOut, Instant, SnapshotOut
from control_plane.surfaces.listings import diff_page, snapshot_page
from control_plane.surfaces.pagination import PAGED
from data_plane.clock import ensure_utc

__all__ = ["router"]

router = APIRouter(tags=["audit"], responses=problem_responses(400, 401, 422))


@router.get("/snapshot", response_model=SnapshotOut, responses=PAGED)
def snapshot(rt: RuntimeDep, _t: ReadToken, at: AsOfQuery, page: BigPage) -> dict[str, Any]:
    """The graph in force as of a point: up to ``limit`` concepts, edges, lessons and lesson links
    per page (default and maximum 1000 of each)."""
    body = snapshot_page(rt.reader, at.as_of, at.known_at, page.limit, page.cursor)
    page.next_page(body["next_cursor"])
    return body


@router.get("/diff", response_model=DiffOut, responses=PAGED)
def diff(
    rt: RuntimeDep,
    _t: ReadToken,
    since: Annotated[Instant, Query(alias="from", description="Recorded time, exclusive. " + TIME_IN)],
    page: BigPage,
    until: Annotated[
        Instant | None, Query(alias="to", description="Recorded time, inclusive; default now. " + TIME_IN)
    ] = None,
) -> dict[str, Any]:
    """Versions recorded in (from, to], grouped by operation: up to ``limit`` of each group per
    page (default and maximum 1000); ``to`` defaults to now."""
    start = ensure_utc(since, field="from")
    body = diff_page(rt.reader, start, utc(until, "to"), rt.clock(), page.limit, page.cursor)
    page.next_page(body["next_cursor"])
    return body


@router.get("/audit/impact", response_model=ImpactOut)
def audit_impact(
    rt: RuntimeDep,
    _t: ReadToken,
    key: Annotated[
        str,
        Query(
            min_length=1,
            max_length=420,
            description="A concept id, an edge source>relation>target, a lesson link LESSON/CONCEPT, or lesson:ID.",
        ),
    ],
    replay: Annotated[
        bool, Query(description="Replay them (as known then, and asked now) and group by how they changed.")
    ] = False,
) -> dict[str, Any]:
    """Recorded answers that cited or read any version of a fact; with ``replay``, which of them
    answer differently now (at most 20 replayed, newest first)."""
    from control_plane.planning.impact import fact, impact

    synthesizer = rt.planner.synthesizer if replay else None
    return impact(rt.reader, [fact(key)], synthesizer=synthesizer, clock=rt.clock).to_dict()
