"""Structured log events, written by structlog, which is imported only when an event is written.

Importing structlog loads its console renderer, rich's pretty-printer and tracebacks and asyncio:
about 0.16 s, a fifth of what a ``kg ask`` imports (docs/benchmarks.md, "Start-up"), for events
a command drops unwritten (it writes warnings and errors only). So an edge that chooses a level
(:func:`control_plane.surfaces.logs.configure_logging`) hands it to :func:`defer` with how to
configure structlog: an event below that level is dropped without loading structlog; the first
one at or above it configures structlog, and every such event is written by structlog as
configured. Until an edge defers (or after :func:`reset`) every event goes to structlog as it
stands (a library caller, a test's ``structlog.testing.capture_logs``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__ = ["LEVELS", "Events", "defer", "get_logger", "reset"]

# The levels events are written at, as the standard library numbers them.
LEVELS: Final = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}


class _Edge:
    """What the process's edge chose: the lowest level written, and its structlog
    configuration while not yet applied."""

    level: int = 0
    configure: Callable[[], None] | None = None


_edge = _Edge()


def defer(level: int, configure: Callable[[], None]) -> None:
    """Write events from ``level`` on; ``configure`` sets up structlog before the first one."""
    _edge.level, _edge.configure = level, configure


def reset() -> None:
    """Every event to structlog again, as it stands (what a process starts with)."""
    _edge.level, _edge.configure = 0, None


class Events:
    """The events of one logger name: ``info``, ``warning`` and ``error``, each an event name and
    key-value pairs, as structlog's loggers take them."""

    def __init__(self, name: str) -> None:
        self.name = name

    def _write(self, level: str, event: str, values: dict[str, Any]) -> None:
        if LEVELS[level] < _edge.level:
            return
        configure, _edge.configure = _edge.configure, None
        if configure is not None:
            configure()
        import structlog  # only now: module docstring

        getattr(structlog.get_logger(self.name), level)(event, **values)

    def info(self, event: str, **values: Any) -> None:
        self._write("info", event, values)

    def warning(self, event: str, **values: Any) -> None:
        self._write("warning", event, values)

    def error(self, event: str, **values: Any) -> None:
        self._write("error", event, values)


def get_logger(name: str) -> Events:
    """The events of logger ``name`` (a module's ``__name__``, or a surface's own name)."""
    return Events(name)
