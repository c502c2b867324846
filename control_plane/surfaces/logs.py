"""Where logs go, configured once at an edge (the ``kg`` command, or a served app's process).

Logs go to stderr, so stdout stays clean for answers and JSON. ``KG_LOG_LEVEL`` sets the level
(``debug``, ``info``, ``warning``, ``error``); the default is ``warning`` for commands and ``info``
for a server, whose events are JSON lines (one per request, ``http.request``, and the loop's).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import Any

from data_plane.events import defer

__all__ = ["configure_logging"]


def configure_logging(env: Mapping[str, str], *, json_events: bool = False) -> None:
    """Configure structlog from ``KG_LOG_LEVEL`` in ``env``; ``json_events`` for a server. It is
    configured (and imported) before the first event at that level, never for a run that writes
    none (``data_plane.events``)."""
    level_name = (env.get("KG_LOG_LEVEL") or ("info" if json_events else "warning")).strip().upper()
    level = logging.getLevelNamesMapping().get(level_name, logging.WARNING)

    def configure() -> None:
        import structlog

        renderer: Any = (
            structlog.processors.JSONRenderer() if json_events else structlog.dev.ConsoleRenderer()
        )
        structlog.configure(
            processors=[
                structlog.processors.add_log_level,
                structlog.processors.TimeStamper(fmt="iso", utc=True),
                renderer,
            ],
            wrapper_class=structlog.make_filtering_bound_logger(level),
            logger_factory=structlog.PrintLoggerFactory(sys.stderr),
            cache_logger_on_first_use=False,
        )

    defer(level, configure)
