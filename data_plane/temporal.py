"""Pure temporal rules: which version is in force as of (valid time, recorded time), and whether a
set of prerequisite edges closes a cycle.

``AsOf`` is the one temporal filter. It is used twice, and the two must agree (a property test
checks it): compiled to SQL by :meth:`AsOf.clause`, and evaluated in Python by :meth:`AsOf.holds`.

A version is *in force* as of ``(v, k)`` when the system believed it at ``k``
(``recorded_at <= k < expired_at``), it was true in the curriculum at ``v``
(``valid_at <= v < invalid_at``), and it is not a retraction. Open ends are NULL (infinity).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Final

import sqlalchemy as sa

from data_plane.clock import Clock, ensure_utc, format_time


@dataclass(frozen=True)
class AsOf:
    """A point on both timelines."""

    valid_at: datetime
    recorded_at: datetime

    def __post_init__(self) -> None:
        object.__setattr__(self, "valid_at", ensure_utc(self.valid_at, field="as_of"))
        object.__setattr__(self, "recorded_at", ensure_utc(self.recorded_at, field="known_at"))

    @classmethod
    def now(cls, clock: Clock) -> AsOf:
        t = clock()
        return cls(t, t)

    @classmethod
    def at(cls, clock: Clock, valid_at: datetime | None = None, recorded_at: datetime | None = None) -> AsOf:
        """Either time defaults to now."""
        t = clock()
        return cls(valid_at or t, recorded_at or t)

    def holds(
        self,
        valid_at: datetime,
        invalid_at: datetime | None,
        recorded_at: datetime,
        expired_at: datetime | None,
        op: str,
    ) -> bool:
        """Is a version with these stamps in force as of this point?"""
        return (
            op != "retract"
            and recorded_at <= self.recorded_at
            and (expired_at is None or expired_at > self.recorded_at)
            and valid_at <= self.valid_at
            and (invalid_at is None or invalid_at > self.valid_at)
        )

    def clause(self, table: sa.FromClause) -> sa.ColumnElement[bool]:
        """The same rule as :meth:`holds`, as a SQL expression over ``table``'s columns."""
        return in_force(table, self.valid_at, self.recorded_at)

    def params(self) -> dict[str, datetime]:
        """Values for the ``as_of_valid`` / ``as_of_recorded`` binds of :data:`AS_OF_PARAMS`."""
        return {"as_of_valid": self.valid_at, "as_of_recorded": self.recorded_at}

    def to_dict(self) -> dict[str, str | None]:
        return {"valid_at": format_time(self.valid_at), "recorded_at": format_time(self.recorded_at)}


def in_force(
    table: sa.FromClause,
    valid_at: datetime | sa.BindParameter[datetime],
    recorded_at: datetime | sa.BindParameter[datetime],
) -> sa.ColumnElement[bool]:
    """The temporal rule as SQL: the one place it is compiled. The times are values, or bind
    parameters for statements built once and executed many times (see :data:`AS_OF_PARAMS`)."""
    c = table.c
    return sa.and_(
        c.op != "retract",
        c.recorded_at <= recorded_at,
        sa.or_(c.expired_at.is_(None), c.expired_at > recorded_at),
        c.valid_at <= valid_at,
        sa.or_(c.invalid_at.is_(None), c.invalid_at > valid_at),
    )


def _as_of_binds() -> tuple[sa.BindParameter[datetime], sa.BindParameter[datetime]]:
    from data_plane.schema import UTCDateTime

    return (
        sa.bindparam("as_of_valid", type_=UTCDateTime()),
        sa.bindparam("as_of_recorded", type_=UTCDateTime()),
    )


AS_OF_PARAMS: Final = _as_of_binds()
"""Bind parameters (valid, recorded) for prepared temporal statements; fill with ``AsOf.params()``."""


def find_cycle(existing: Iterable[tuple[str, str]], added: Iterable[tuple[str, str]]) -> list[str] | None:
    """If adding ``added`` to the acyclic ``existing`` edges closes a directed cycle, return one
    cycle as a list of ids (first == last); otherwise None.

    Iterative DFS with colours over the union graph, so deep chains do not hit the recursion limit.
    """
    graph: dict[str, list[str]] = defaultdict(list)
    for s, t in existing:
        graph[s].append(t)
    starts: list[str] = []
    for s, t in added:
        graph[s].append(t)
        starts.append(s)
    white, grey, black = 0, 1, 2
    colour: dict[str, int] = defaultdict(int)
    for start in starts:
        if colour[start] != white:
            continue
        path: list[str] = [start]
        iters = [iter(graph[start])]
        colour[start] = grey
        while iters:
            nxt = next(iters[-1], None)
            if nxt is None:
                colour[path.pop()] = black
                iters.pop()
                continue
            if colour[nxt] == grey:
                return [*path[path.index(nxt) :], nxt]
            if colour[nxt] == white:
                colour[nxt] = grey
                path.append(nxt)
                iters.append(iter(graph[nxt]))
    return None
