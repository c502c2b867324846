"""Lesson links: which lessons teach which concepts (write token)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from control_plane.surfaces.http.curation import DryRun, write
from control_plane.surfaces.http.dependencies import WRITE_ROUTE, RuntimeDep, WriteToken
from control_plane.surfaces.http.problems import problem_responses
from control_plane.surfaces.http.schemas import LessonLinkIn, LessonUnlinkIn
from data_plane.gateway import Write

__all__ = ["router"]

router = APIRouter(responses=problem_responses(400, 401, 404, 422))


@router.post("/lessons/{lesson_id}/concepts", **WRITE_ROUTE)
def link_lesson(
    lesson_id: str,
    body: LessonLinkIn,
    token: WriteToken,
    rt: RuntimeDep,
    response: Response,
    dry_run: DryRun = False,
) -> dict[str, Any]:
    """Link a lesson (created on first use, with ``title``) to a concept it teaches; again after an
    unlink."""
    g = body.grounding.build(token)
    if dry_run:
        writes = [
            Write.lesson(lesson_id, grounding=g, title=body.title),
            Write.lesson_link(lesson_id, body.concept_id, grounding=g),
        ]
        return write(rt, writes, dry_run=True, response=response)
    v = rt.gateway.link_lesson(lesson_id, body.concept_id, grounding=g, title=body.title)
    return {"written": [v.to_dict()]}


@router.post("/lessons/{lesson_id}/concepts/unlink", **WRITE_ROUTE)
def unlink_lesson(
    lesson_id: str,
    body: LessonUnlinkIn,
    token: WriteToken,
    rt: RuntimeDep,
    response: Response,
    dry_run: DryRun = False,
) -> dict[str, Any]:
    """Invalidate a lesson's link to a concept from now on."""
    w = Write.lesson_link(
        lesson_id, body.concept_id, grounding=body.grounding.build(token), mode="invalidate"
    )
    return write(rt, [w], dry_run=dry_run, response=response)
