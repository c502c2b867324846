"""One ``APIRouter`` per resource: ``ask``, ``concepts``, ``edges``, ``lessons``, ``requirements``, ``answers``
(recorded answers, replay, evidence pages), ``audit`` (snapshots and diffs) and ``operations``
(health, readiness, metrics)."""

from control_plane.surfaces.http.routers import (
    answers,
    ask,
    audit,
    concepts,
    edges,
    lessons,
    operations,
    requirements,
)

__all__ = ["ROUTERS"]

ROUTERS = (
    ask.router,
    concepts.router,
    edges.router,
    lessons.router,
    requirements.router,
    answers.router,
    audit.router,
    operations.router,
)
