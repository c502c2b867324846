"""The HTTP API (FastAPI): ask, read the graph over time, curate it with bearer tokens, audit answers.

Laid out as FastAPI's "bigger applications": ``app`` (the factory), ``dependencies`` (runtime,
tokens, rate limit, page limits), ``schemas`` (every request and response model), ``routers/``
(one per resource; their pages come from ``surfaces.listings``), ``problems`` (RFC 7807 bodies and
handlers), ``middleware`` (request id, body limit, one log event), ``config`` (``ApiConfig``).
"""

from control_plane.surfaces.http.app import app_from_env, create_app
from control_plane.surfaces.http.config import ApiConfig

__all__ = ["ApiConfig", "app_from_env", "create_app"]
