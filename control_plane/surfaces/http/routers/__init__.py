"""One ``APIRouter`` per resource: ``ask``, ``concepts``, ``edges``, ``lessons``, ``answers``
(recorded answers, replay, evidence pages) and ``audit`` (snapshots and diffs)."""

from control_plane.surfaces.http.routers import answers, ask, audit, concepts, edges, lessons

__all__ = ["ROUTERS"]

ROUTERS = (ask.router, concepts.router, edges.router, lessons.router, answers.router, audit.router)
