"""Requirement groups ("one of A or B"): a group as of any time, a concept's groups, and a group's
history with its members'. Groups are written by bundles (``kg import``) and the gateway."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from control_plane.surfaces.http.dependencies import AsOfQuery, ReadToken, RuntimeDep
from control_plane.surfaces.http.problems import problem_responses
from control_plane.surfaces.http.schemas import RequirementOut, VersionOut

__all__ = ["router"]

router = APIRouter(responses=problem_responses(400, 401, 404, 422))


@router.get("/requirements/{group_id}", tags=["graph"], response_model=RequirementOut)
def get_requirement(group_id: str, rt: RuntimeDep, _t: ReadToken, at: AsOfQuery) -> dict[str, Any]:
    """One requirement group as of (valid time, recorded time), with its members then."""
    return rt.reader.requirement(group_id, as_of=rt.reader.as_of(at.as_of, at.known_at)).to_dict()


@router.get("/concepts/{concept_id}/requirements", tags=["graph"], response_model=list[RequirementOut])
def concept_requirements(
    concept_id: str, rt: RuntimeDep, _t: ReadToken, at: AsOfQuery
) -> list[dict[str, Any]]:
    """The requirement groups of a concept (it needs k of each group's options) as of a point;
    an empty list when it has none."""
    point = rt.reader.as_of(at.as_of, at.known_at)
    return [g.to_dict() for g in rt.reader.requirements([concept_id], as_of=point).get(concept_id, ())]


@router.get("/requirements/{group_id}/history", tags=["audit"], response_model=list[VersionOut])
def requirement_history(group_id: str, rt: RuntimeDep, _t: ReadToken) -> list[dict[str, Any]]:
    """Every version of a group and of its members, in recorded order, with grounding and stamps."""
    return [v.to_dict() for v in rt.reader.requirement_history(group_id)]
