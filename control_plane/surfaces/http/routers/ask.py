"""``POST /ask``: a grounded answer with its evidence sub-graph, or an abstention."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from control_plane.surfaces.http.dependencies import AskRateLimit, MetricsDep, ReadToken, RuntimeDep, utc
from control_plane.surfaces.http.problems import problem_responses
from control_plane.surfaces.http.schemas import AnswerOut, AskIn

__all__ = ["router"]

router = APIRouter(tags=["ask"], responses=problem_responses(400, 401, 415, 422, 429, 503))


@router.post("/ask", response_model=AnswerOut, dependencies=[AskRateLimit])
async def ask(body: AskIn, _t: ReadToken, rt: RuntimeDep, seen: MetricsDep) -> dict[str, Any]:
    """Answer a question with its evidence sub-graph, or abstain; the answer is recorded. A
    recorded answer to the same question is reused (``reused_from``, no model call) when nothing
    it read has changed since, unless ``fresh`` is true."""
    as_of, known_at = utc(body.as_of, "as_of"), utc(body.known_at, "known_at")
    answer = await run_in_threadpool(
        rt.planner.reply, body.question, as_of=as_of, known_at=known_at, fresh=body.fresh
    )
    payload = answer.to_dict()
    seen.answer(payload)
    return payload
