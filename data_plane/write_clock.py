"""Recorded time that every read can repeat: the write clock.

A graph write stamps its rows with one recorded time, but they become visible only when it
commits (an import's write pass can take a minute). A read "as known at T" that ran before the
commit did not see them; if their stamp were at or before T, the same read after the commit would.
So a write's stamp must be later than the recorded time of any read made before it was visible.

The rule, in two halves (the proof is in docs/data-plane.md, "Recorded time"):

* a write takes the graph's write lock, reads ``write_clock`` (the stamp of the latest committed
  graph write, H), stamps its rows ``stamp_after(clock(), H)`` (strictly after H) and, when it
  wrote anything, sets the row to that stamp in its own transaction (:func:`advance`);
* a read "as known at T" reads at ``known_at(T, H)``: T, or H if T is later. Every write with a
  stamp up to H has committed (writes serialise and stamp after one another), and every write not
  yet committed stamps after H, so what is in force at that point never changes again.

The answers table is not part of it: an answer is read by id, never "as known at" a time.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from data_plane import schema

TICK: Final = timedelta(microseconds=1)
"""The resolution of stored stamps: a write after H is stamped at least H + 1 µs."""


def stamp_after(now: datetime, latest: datetime | None) -> datetime:
    """The stamp of a write that read ``now`` from its clock while the latest committed write
    was stamped ``latest``: ``now``, or just after ``latest`` if the clock is not past it (a clock
    stepped back, another host's clock ahead, a clock standing still in a test)."""
    return now if latest is None or now > latest else latest + TICK


def known_at(asked: datetime, latest: datetime | None) -> datetime:
    """The recorded time a read asked "as known at ``asked``" reads at: no later than the latest
    committed write, past which nothing is settled yet."""
    return asked if latest is None or asked <= latest else latest


def latest(conn: Connection) -> datetime | None:
    """The stamp of the latest committed graph write as ``conn`` sees it (None: none yet)."""
    value: datetime | None = conn.execute(sa.select(schema.write_clock.c.recorded_at)).scalar()
    return value


def advance(conn: Connection, stamp: datetime, previous: datetime | None) -> None:
    """Set the clock to ``stamp`` inside the write's transaction (it commits with the rows)."""
    clock = schema.write_clock
    if previous is None:
        conn.execute(sa.insert(clock).values(id=1, recorded_at=stamp))
    else:
        conn.execute(sa.update(clock).where(clock.c.id == 1).values(recorded_at=stamp))
