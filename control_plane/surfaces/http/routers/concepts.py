"""Concepts: list, search and read them as of any (valid time, recorded time), their history,
and curate them (write token)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

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
from control_plane.surfaces.http.schemas import (
    ConceptDetailOut,
    ConceptHitOut,
    ConceptIn,
    ConceptOut,
    ConceptReviseIn,
    InvalidateIn,
    RelationName,
    VersionOut,
)
from control_plane.surfaces.listings import ConceptFilter, concepts_page
from control_plane.surfaces.lookup import profile, search
from control_plane.surfaces.pagination import MAX_LIMIT, PAGED
from control_plane.surfaces.writes import invalidation, revision
from data_plane.gateway import Write

__all__ = ["router"]

router = APIRouter(responses=problem_responses(400, 401, 404, 422))


@router.get("/concepts", tags=["graph"], response_model=list[ConceptOut], responses=PAGED)
def list_concepts(
    rt: RuntimeDep,
    _t: ReadToken,
    at: AsOfQuery,
    page: Page,
    relation: Annotated[
        RelationName | None, Query(description="Only concepts with an edge of this relation.")
    ] = None,
    min_degree: Annotated[
        int | None,
        Query(
            ge=0,
            description="Only concepts with at least this many edges (active edges touching "
            "the concept, in and out, any relation; a symmetric edge counts once).",
        ),
    ] = None,
    max_degree: Annotated[
        int | None,
        Query(ge=0, description="Only concepts with at most this many edges (as min_degree counts)."),
    ] = None,
) -> list[dict[str, Any]]:
    """Concepts in force as of (valid time, recorded time), by id; both times default to now. The
    filters are ``kg concept list``'s."""
    only = ConceptFilter(relation.value if relation else None, min_degree, max_degree)
    items, nxt = concepts_page(rt.reader, at.as_of, at.known_at, page.limit, page.cursor, only)
    page.next_page(nxt)
    return list(items)


@router.get("/search/concepts", tags=["graph"], response_model=list[ConceptHitOut])
def search_concepts(
    rt: RuntimeDep,
    _t: ReadToken,
    at: AsOfQuery,
    q: Annotated[
        str,
        Query(min_length=1, max_length=400, description="Words to find (typos and partial names are fine)."),
    ],
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Most hits to return.")] = 10,
    min_score: Annotated[float, Query(ge=0, le=100, description="Lowest score (0-100) returned.")] = 75.0,
) -> list[dict[str, Any]]:
    """Concepts whose name, an alias or summary match ``q`` (fuzzy), best first: the hits of
    ``kg concept search``."""
    point = rt.reader.as_of(at.as_of, at.known_at)
    hits = search(q, rt.reader.stream_concepts(point), limit=limit, cutoff=min_score)
    return [h.to_dict() for h in hits]


@router.get("/concepts/{concept_id}", tags=["graph"], response_model=ConceptDetailOut)
def get_concept(concept_id: str, rt: RuntimeDep, _t: ReadToken, at: AsOfQuery) -> dict[str, Any]:
    """One concept as of (valid time, recorded time), with its edges out and in and its lessons:
    what ``kg concept show`` prints."""
    shown = profile(rt.reader, concept_id, rt.reader.as_of(at.as_of, at.known_at)).to_dict()
    return {
        **shown["concept"],
        "outgoing": shown["outgoing"],
        "incoming": shown["incoming"],
        "lessons": shown["lessons"],
    }


@router.get("/concepts/{concept_id}/history", tags=["audit"], response_model=list[VersionOut])
def concept_history(concept_id: str, rt: RuntimeDep, _t: ReadToken) -> list[dict[str, Any]]:
    """Every version of a concept, oldest first, with its grounding and stamps."""
    return [v.to_dict() for v in rt.reader.history("concepts", (concept_id,))]


@router.post("/concepts", **WRITE_ROUTE)
def add_concept(
    body: ConceptIn, token: WriteToken, rt: RuntimeDep, response: Response, dry_run: DryRun = False
) -> dict[str, Any]:
    """Assert a new concept, or again one that was invalidated."""
    w = Write.concept(
        body.concept_id,
        name=body.name,
        aliases=body.aliases,
        summary=body.summary,
        grounding=body.grounding.build(token),
        valid_at=utc(body.valid_at, "valid_at"),
        invalid_at=None,
    )
    return write(rt, [w], dry_run=dry_run, response=response, allow_duplicate_names=body.allow_duplicate_name)


@router.post("/concepts/{concept_id}/revise", **WRITE_ROUTE)
def revise_concept(
    concept_id: str,
    body: ConceptReviseIn,
    token: WriteToken,
    rt: RuntimeDep,
    response: Response,
    dry_run: DryRun = False,
) -> dict[str, Any]:
    """Revise a concept's name, aliases or summary (fields left out keep their value) from
    ``valid_at`` (default: all of its validity) until ``until`` (default: open); before and after,
    it stays as it was. ``correct`` replaces the whole period instead."""
    w = Write.concept(
        concept_id,
        name=body.name,
        aliases=body.aliases,
        summary=body.summary,
        grounding=body.grounding.build(token),
        **revision(utc(body.valid_at, "valid_at"), utc(body.until, "until"), correct=body.correct),
    )
    return write(rt, [w], dry_run=dry_run, response=response, allow_duplicate_names=body.allow_duplicate_name)


@router.post("/concepts/{concept_id}/invalidate", **WRITE_ROUTE)
def invalidate_concept(
    concept_id: str,
    body: InvalidateIn,
    token: WriteToken,
    rt: RuntimeDep,
    response: Response,
    dry_run: DryRun = False,
) -> dict[str, Any]:
    """Close a concept's validity from ``invalid_at`` (default now) until ``until`` (default: for
    good), or retract it; its edges and lesson links are closed with it over the same period."""
    w = Write.concept(
        concept_id,
        grounding=body.grounding.build(token),
        **invalidation(utc(body.invalid_at, "invalid_at"), utc(body.until, "until"), retract=body.retract),
    )
    return write(rt, [w], dry_run=dry_run, response=response)
