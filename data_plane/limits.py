"""The shared state of the rate limits: one row per limited key in ``rate_limits``.

Every worker process, on every host that serves one database, reads and writes the same rows, so
N processes enforce one limit instead of N. The arithmetic (which value a key holds, what a request
costs, when it is refused) is not here: :meth:`LimitTable.update` hands the stored value to a pure
``step`` function of the caller (``control_plane.surfaces.ratelimit``) and stores what it returns,
atomically:

* **PostgreSQL**: the key's row is locked (``SELECT ... FOR UPDATE``) for the read-step-write, so
  concurrent updates of one key queue behind each other while other keys go ahead. A key with no
  row is inserted with ``ON CONFLICT DO NOTHING``; if another process inserted it first, the loop
  locks that row and steps again.
* **SQLite**: the table is the one in the database's side file (``data_plane.sidecar``), never
  the graph file, so a limit is never held up by an import holding the graph's write lock; the
  transaction begins ``IMMEDIATE`` (the side file's write lock), so every update is serialised.

Clean-up: a row whose value (a GCRA "theoretical arrival time") has passed says exactly what no
row says, that the key may spend its whole burst. :meth:`LimitTable.sweep` deletes such rows; it
runs after an update that added a row, so the table holds only keys that are limited right now
(plus the one just added). This table is operational state, not graph history: nothing in it is
a fact about the curriculum, and a swept row loses no information, which is why deleting here is
consistent with the graph tables' never-delete rule (they keep every version for audit).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Final, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine

from data_plane import schema
from data_plane.errors import ConcurrentWrite
from data_plane.sidecar import side_engine

__all__ = ["LimitTable"]

R = TypeVar("R")
T = schema.rate_limits
# An insert can lose to another process's insert and the row then vanish to a sweep before it is
# locked; each retry needs that to happen again, so a few are plenty.
_ATTEMPTS: Final = 8
# The key column's width (``VARCHAR(200)``).
_MAX_KEY: Final = 200


def bounded(key: str) -> str:
    """``key`` as stored: itself when it fits the column (``VARCHAR(200)``), else its first 100
    characters and a SHA-256 of the whole, so no key overflows it and distinct keys stay apart."""
    if len(key) <= _MAX_KEY:
        return key
    return f"{key[:100]}#sha256:{hashlib.sha256(key.encode('utf-8', 'surrogatepass')).hexdigest()}"


class LimitTable:
    """Read-step-write of one limited key at a time, atomic across processes. Keys longer than
    the column are stored :func:`bounded`."""

    def __init__(self, engine: Engine) -> None:
        self._main = engine
        side_engine(engine)

    @property
    def _engine(self) -> Engine:
        # Looked up at every use: a side file deleted under the process is opened afresh.
        return side_engine(self._main) or self._main

    @property
    def _writer(self) -> Engine:
        # On SQLite this option makes the transaction BEGIN IMMEDIATE (data_plane.database).
        return self._engine.execution_options(kg_write=True)

    def update(
        self, key: str, step: Callable[[float | None], tuple[float | None, R]], *, sweep_before: float
    ) -> R:
        """Call ``step`` with ``key``'s stored value (None: no row) while no other process can
        change it; store the new value it returns (None: leave the row as it is) and return its
        result. When a row was added, rows whose value is below ``sweep_before`` are swept."""
        with self._writer.begin() as conn:
            result, added = self._update(conn, bounded(key), step)
        if added:
            self.sweep(sweep_before)
        return result

    def _update(
        self, conn: Connection, key: str, step: Callable[[float | None], tuple[float | None, R]]
    ) -> tuple[R, bool]:
        for _ in range(_ATTEMPTS):
            held = conn.execute(sa.select(T.c.tat).where(T.c.key == key).with_for_update()).first()
            value, result = step(None if held is None else float(held[0]))
            if value is None:
                return result, False
            if held is not None:
                conn.execute(sa.update(T).where(T.c.key == key).values(tat=value))
                return result, False
            # RETURNING says whether the row went in (psycopg reports no rowcount for this INSERT).
            if conn.execute(self._insert(conn, key, value)).first() is not None:
                return result, True
        raise ConcurrentWrite(f"rate limit {key!r}: its row kept changing under this update; retry")

    @staticmethod
    def _insert(conn: Connection, key: str, value: float) -> sa.Executable:
        """INSERT the row unless another process did first; RETURNING says which happened."""
        insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
        stmt = insert(T).values(key=key, tat=value).on_conflict_do_nothing(index_elements=[T.c.key])
        return stmt.returning(T.c.key)

    def peek(self, key: str) -> float | None:
        """``key``'s stored value (None: no row), without locking it."""
        with self._engine.connect() as conn:
            value = conn.execute(sa.select(T.c.tat).where(T.c.key == bounded(key))).scalar()
        return None if value is None else float(value)

    def sweep(self, before: float) -> int:
        """Delete rows whose value is below ``before`` (rows that say no more than no row);
        rows another process holds are left for a later sweep. Returns how many went."""
        stale = sa.select(T.c.key).where(T.c.tat < before)
        with self._writer.begin() as conn:
            if conn.dialect.name == "postgresql":
                stale = stale.with_for_update(skip_locked=True)
            return int(conn.execute(sa.delete(T).where(T.c.key.in_(stale))).rowcount)

    def size(self) -> int:
        """How many keys hold a row (for tests and ``/readyz``-style checks)."""
        with self._engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.count()).select_from(T)).scalar_one())
