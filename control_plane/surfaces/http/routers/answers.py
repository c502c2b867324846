"""Recorded answers: list them, read one, replay it then and now, and its evidence page."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from control_plane.surfaces.http.dependencies import Page, ReadToken, RuntimeDep, utc
from control_plane.surfaces.http.problems import problem_responses
from control_plane.surfaces.http.schemas import TIME_IN, AnswerOut, Instant, ReplayOut
from control_plane.surfaces.listings import answers_page
from control_plane.surfaces.pagination import PAGED
from control_plane.surfaces.pictures import to_html

__all__ = ["router"]

router = APIRouter(tags=["audit"], responses=problem_responses(400, 401, 404, 422))

# The evidence page draws inline SVG with inline styles and runs no script.
_PAGE_POLICY = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'"}


@router.get("/answers", response_model=list[AnswerOut], responses=PAGED)
def list_answers(
    rt: RuntimeDep,
    _t: ReadToken,
    page: Page,
    since: Annotated[
        Instant | None, Query(description="Only answers recorded at or after this. " + TIME_IN)
    ] = None,
) -> list[dict[str, Any]]:
    """Recorded answers, newest first, optionally only those recorded at or after ``since``."""
    items, nxt = answers_page(rt.reader, utc(since, "since"), page.limit, page.cursor)
    page.next_page(nxt)
    return list(items)


@router.get("/answers/{answer_id}", response_model=AnswerOut)
def get_answer(answer_id: str, rt: RuntimeDep, _t: ReadToken) -> dict[str, Any]:
    """One recorded answer, exactly as it was given."""
    return dict(rt.reader.answer(answer_id).content["payload"])


@router.get("/answers/{answer_id}/replay", response_model=ReplayOut)
async def replay_answer(answer_id: str, rt: RuntimeDep, _t: ReadToken) -> dict[str, Any]:
    """Re-run a recorded answer as of its own times and as of now, and say what changed."""
    rt.reader.answer(answer_id)
    return await run_in_threadpool(rt.replay, answer_id)


@router.get(
    "/answers/{answer_id}/evidence.html",
    response_class=HTMLResponse,
    responses={200: {"content": {"text/html": {"schema": {"type": "string"}}}}},
)
def evidence_page(answer_id: str, rt: RuntimeDep, _t: ReadToken) -> HTMLResponse:
    """The answer's evidence sub-graph as one self-contained HTML page (inline SVG, no script)."""
    return HTMLResponse(to_html(rt.reader.answer(answer_id).content["payload"]), headers=_PAGE_POLICY)
