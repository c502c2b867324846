"""Time discipline: every timestamp is timezone-aware UTC.

This module owns ``utc_now`` and the parsing of user-supplied times. Everything else takes a
``Clock`` (a zero-argument callable returning an aware datetime) so tests control time exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime

from data_plane.errors import InputError

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The current time, aware, in UTC. The default ``Clock``."""
    return datetime.now(UTC)


def ensure_utc(value: datetime, *, field: str = "time") -> datetime:
    """Return ``value`` in UTC; refuse naive datetimes, whose meaning is ambiguous."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise InputError(
            f"{field}: naive datetime {value.isoformat()!r} has no time zone; add 'Z' or an offset",
            field=field,
            value=value.isoformat(),
        )
    try:
        return value.astimezone(UTC)
    except OverflowError as exc:  # e.g. 9999-12-31T23:59:59-14:00 is in year 10000 once in UTC
        raise InputError(
            f"{field}: {value.isoformat()!r} is out of range once converted to UTC",
            field=field,
            value=value.isoformat(),
        ) from exc


def parse_time(text: str, *, field: str = "time") -> datetime:
    """Parse an ISO 8601 date or datetime into aware UTC.

    A bare date (``2025-06-01``) means midnight UTC of that day. A datetime must carry a zone
    (``Z`` or ``+02:00``); naive datetimes are rejected rather than guessed.
    """
    raw = text.strip()
    if not raw:
        raise InputError(f"{field}: empty time", field=field, value=text)
    try:
        if len(raw) == 10:
            d = date.fromisoformat(raw)
            return datetime(d.year, d.month, d.day, tzinfo=UTC)
        parsed = datetime.fromisoformat(raw.replace("z", "Z"))
    except ValueError as exc:
        raise InputError(
            f"{field}: {text!r} is not an ISO 8601 date or datetime (e.g. 2025-06-01 or 2025-06-01T12:00:00Z)",
            field=field,
            value=text,
        ) from exc
    return ensure_utc(parsed, field=field)


def format_time(value: datetime | None) -> str | None:
    """ISO 8601 with a 'Z' suffix, or None."""
    if value is None:
        return None
    return ensure_utc(value).isoformat().replace("+00:00", "Z")
