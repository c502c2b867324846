"""Values read from a whole table as of a point (the name index, relation counts), kept while
they provably still hold.

A value read as of ``(valid, recorded)`` stays right while the table has no newer version (the
same ``max(version_id)``) and the as-of point stays inside the *time box* around it: the
nearest version stamps on both timelines, between which no version of the table changes state.
Checking that costs one ``SELECT max(version_id)`` (or none, when the caller read it already);
rebuilding costs one read of the table. The planner keeps its name index and relation counts
here, and ``SQLPropertyGraphStore`` its name index, so both read names the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Generic, TypeVar

import sqlalchemy as sa

from control_plane.understanding.names import NameIndex
from data_plane import schema
from data_plane.clock import ensure_utc
from data_plane.reads import GraphReader
from data_plane.temporal import AsOf

__all__ = ["UNREAD", "Boxed", "TableCache", "Unread", "name_cache", "newest_version"]

T = TypeVar("T")
Box = tuple[datetime | None, datetime | None]


class Unread:
    """Marks a version id the caller did not read (None is a real value: an empty table)."""


UNREAD: Final = Unread()


@dataclass(frozen=True)
class Boxed(Generic[T]):
    """A value read as of a point, valid while the table is unchanged (same max version id) and
    the as-of point stays inside the box where no version of the table changes state."""

    max_version: int | None
    valid_box: Box
    recorded_box: Box
    value: T

    def covers(self, max_version: int | None, as_of: AsOf) -> bool:
        def inside(t: datetime, box: Box) -> bool:
            lo, hi = box
            return (lo is None or lo <= t) and (hi is None or t < hi)

        return (
            max_version == self.max_version
            and inside(as_of.valid_at, self.valid_box)
            and inside(as_of.recorded_at, self.recorded_box)
        )


class TableCache(Generic[T]):
    """``build(as_of)`` over ``table``, rebuilt only when it may have changed."""

    def __init__(self, reader: GraphReader, table: sa.Table, build: Callable[[AsOf], T]) -> None:
        self._reader = reader
        self._table = table
        self._build = build
        self._entry: Boxed[T] | None = None
        self.builds = 0  # how often the value was (re)built; for tests and benchmarks

    def get(self, as_of: AsOf, *, top: int | Unread | None = UNREAD) -> T:
        """The value as of ``as_of``; ``top`` is the table's newest version id when the caller
        already read it."""
        if isinstance(top, Unread):
            top = newest_version(self._reader, self._table)
        if self._entry is not None and self._entry.covers(top, as_of):
            return self._entry.value
        valid_box, recorded_box = _time_box(self._reader, as_of, self._table)
        self._entry = Boxed(top, valid_box, recorded_box, self._build(as_of))
        self.builds += 1
        return self._entry.value


def name_cache(reader: GraphReader) -> TableCache[NameIndex]:
    """The name index of the concepts in force, as the question reader reads names. Only names and
    aliases are kept (streamed from SQL), so the graph's concept records are never held."""
    return TableCache(
        reader, schema.concepts, lambda as_of: NameIndex.from_names(reader.concept_labels(as_of=as_of))
    )


def newest_version(reader: GraphReader, table: sa.Table = schema.concepts) -> int | None:
    with reader.connection() as conn:
        value = conn.execute(sa.select(sa.func.max(table.c.version_id))).scalar()
    return None if value is None else int(value)


def _aware(t: datetime | None) -> datetime | None:
    """Aggregates may come back naive on SQLite; the columns hold UTC."""
    if t is None:
        return None
    return ensure_utc(t if t.tzinfo is not None else t.replace(tzinfo=UTC))


def _time_box(reader: GraphReader, as_of: AsOf, table: sa.Table) -> tuple[Box, Box]:
    """The nearest version time stamps of ``table`` around ``as_of`` on both timelines (one query)."""
    C = table
    v, r = as_of.valid_at, as_of.recorded_at

    def lo(col: Any, t: datetime) -> Any:
        return sa.select(sa.func.max(col)).where(col <= t).scalar_subquery()

    def hi(col: Any, t: datetime) -> Any:
        return sa.select(sa.func.min(col)).where(col > t).scalar_subquery()

    stmt = sa.select(
        lo(C.c.valid_at, v),
        lo(C.c.invalid_at, v),
        hi(C.c.valid_at, v),
        hi(C.c.invalid_at, v),
        lo(C.c.recorded_at, r),
        lo(C.c.expired_at, r),
        hi(C.c.recorded_at, r),
        hi(C.c.expired_at, r),
    )
    with reader.connection() as conn:
        row = conn.execute(stmt).one()
    vals = [_aware(x) for x in row]

    def pick(a: datetime | None, b: datetime | None, f: Any) -> datetime | None:
        present = [x for x in (a, b) if x is not None]
        return f(present) if present else None

    return (pick(vals[0], vals[1], max), pick(vals[2], vals[3], min)), (
        pick(vals[4], vals[5], max),
        pick(vals[6], vals[7], min),
    )
