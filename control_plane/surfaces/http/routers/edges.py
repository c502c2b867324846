"""Edges (``source>relation>target``): list one concept's edges as of any time, an edge's
history, and curate them (write token)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Response

from control_plane.surfaces.http.curation import DryRun, write
from control_plane.surfaces.http.dependencies import (
    WRITE_ROUTE,
    AsOfQuery,
    Page,
    ReadToken,
    RuntimeDep,
    WriteToken,
    utc,
)
from control_plane.surfaces.http.problems import problem_responses
from control_plane.surfaces.http.schemas import EdgeIn, EdgeInvalidateIn, EdgeOut, VersionOut
from control_plane.surfaces.listings import edges_page
from control_plane.surfaces.pagination import PAGED
from control_plane.surfaces.writes import invalidation, revision
from data_plane.gateway import Write
from data_plane.relations import parse_edge_key

__all__ = ["router"]

router = APIRouter(responses=problem_responses(400, 401, 404, 422))


@router.get("/edges", tags=["graph"], response_model=list[EdgeOut], responses=PAGED)
def list_edges(
    rt: RuntimeDep,
    _t: ReadToken,
    concept: Annotated[str, Query(min_length=1, description="Edges touching this concept.")],
    at: AsOfQuery,
    page: Page,
) -> list[dict[str, Any]]:
    """Edges in force touching a concept, by key; 404 for an unknown concept."""
    items, nxt = edges_page(rt.reader, concept, at.as_of, at.known_at, page.limit, page.cursor)
    page.next_page(nxt)
    return list(items)


@router.get("/edges/{key}/history", tags=["audit"], response_model=list[VersionOut])
def edge_history(key: str, rt: RuntimeDep, _t: ReadToken) -> list[dict[str, Any]]:
    """History of an edge given as ``source>relation>target`` (URL-encode ``>`` as ``%3E``)."""
    try:
        parts = parse_edge_key(key)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from exc
    return [v.to_dict() for v in rt.reader.history("concept_edges", parts)]


@router.post("/edges", **WRITE_ROUTE)
def add_edge(
    body: EdgeIn, token: WriteToken, rt: RuntimeDep, response: Response, dry_run: DryRun = False
) -> dict[str, Any]:
    """Assert a new edge, or again one that was invalidated (history: assert, invalidate, assert),
    over [valid_at, until) where it does not hold."""
    w = Write.edge(
        body.source_id,
        body.target_id,
        body.relation,
        grounding=body.grounding.build(token),
        valid_at=utc(body.valid_at, "valid_at"),
        invalid_at=utc(body.until, "until"),
    )
    return write(rt, [w], dry_run=dry_run, response=response)


@router.post("/edges/revise", **WRITE_ROUTE)
def revise_edge(
    body: EdgeIn, token: WriteToken, rt: RuntimeDep, response: Response, dry_run: DryRun = False
) -> dict[str, Any]:
    """Re-ground an edge from ``valid_at`` (default: all of its validity) until ``until`` (default:
    open); before and after, it stays as it was. ``correct`` replaces the whole period instead."""
    w = Write.edge(
        body.source_id,
        body.target_id,
        body.relation,
        grounding=body.grounding.build(token),
        **revision(utc(body.valid_at, "valid_at"), utc(body.until, "until"), correct=body.correct),
    )
    return write(rt, [w], dry_run=dry_run, response=response)


@router.post("/edges/invalidate", **WRITE_ROUTE)
def invalidate_edge(
    body: EdgeInvalidateIn, token: WriteToken, rt: RuntimeDep, response: Response, dry_run: DryRun = False
) -> dict[str, Any]:
    """Close an edge's validity from ``invalid_at`` (default now) until ``until`` (default: for
    good), or retract it."""
    w = Write.edge(
        body.source_id,
        body.target_id,
        body.relation,
        grounding=body.grounding.build(token),
        **invalidation(utc(body.invalid_at, "invalid_at"), utc(body.until, "until"), retract=body.retract),
    )
    return write(rt, [w], dry_run=dry_run, response=response)
