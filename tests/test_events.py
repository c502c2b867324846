"""Log events load and configure structlog only when one is written (``data_plane.events``)."""

from __future__ import annotations

from structlog.testing import capture_logs

from data_plane.events import LEVELS, defer, get_logger


def test_an_event_below_the_level_is_dropped_without_configuring() -> None:
    """Below the level an edge deferred, an event is dropped and structlog is not configured."""
    configured: list[int] = []
    defer(LEVELS["warning"], lambda: configured.append(1))
    with capture_logs() as logs:
        get_logger("t").info("quiet", n=1)
    assert logs == [] and configured == []


def test_the_first_event_at_the_level_configures_once_and_every_one_is_written() -> None:
    """At or above the level, structlog is configured before the first event only, and each is
    written with its values."""
    configured: list[int] = []
    defer(LEVELS["info"], lambda: configured.append(1))
    with capture_logs() as logs:
        get_logger("t").info("one", n=1)
        get_logger("t").error("two", n=2)
    assert configured == [1]
    assert [(e["event"], e["n"], e["log_level"]) for e in logs] == [("one", 1, "info"), ("two", 2, "error")]


def test_without_an_edge_every_event_goes_to_structlog() -> None:
    """Before any edge defers (a library caller, a test), every event reaches structlog."""
    with capture_logs() as logs:
        get_logger("t").info("seen")
    assert [e["event"] for e in logs] == ["seen"]
