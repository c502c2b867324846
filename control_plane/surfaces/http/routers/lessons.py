"""Lesson links: which lessons teach which concepts (write token)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from control_plane.surfaces.http.dependencies import WRITE_ROUTE, RuntimeDep, WriteToken
from control_plane.surfaces.http.problems import problem_responses
from control_plane.surfaces.http.schemas import LessonLinkIn, LessonUnlinkIn

__all__ = ["router"]

router = APIRouter(responses=problem_responses(400, 401, 404, 422))


@router.post("/lessons/{lesson_id}/concepts", **WRITE_ROUTE)
def link_lesson(lesson_id: str, body: LessonLinkIn, token: WriteToken, rt: RuntimeDep) -> dict[str, Any]:
    """Link a lesson (created on first use, with ``title``) to a concept it teaches; again after an
    unlink."""
    v = rt.gateway.link_lesson(
        lesson_id, body.concept_id, grounding=body.grounding.build(token), title=body.title
    )
    return {"written": [v.to_dict()]}


@router.post("/lessons/{lesson_id}/concepts/unlink", **WRITE_ROUTE)
def unlink_lesson(lesson_id: str, body: LessonUnlinkIn, token: WriteToken, rt: RuntimeDep) -> dict[str, Any]:
    """Invalidate a lesson's link to a concept."""
    v = rt.gateway.unlink_lesson(lesson_id, body.concept_id, grounding=body.grounding.build(token))
    return {"written": [v.to_dict()]}
