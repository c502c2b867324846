"""The side file of an SQLite graph: what a question writes, kept out of the graph's write lock.

SQLite has one write lock per file, and an import holds it for its whole write pass (one
transaction, so that it lands whole or not at all). A question writes twice, and neither may
wait that long: it spends from the rate limits (``/ask``), and it records its answer. On SQLite
both go to a second file beside the database, ``<file>-ops`` (WAL; its lock is only ever held
for a few milliseconds):

* ``rate_limits``: the main schema's table of the same name (which PostgreSQL uses, where a
  limit locks its own row and never waits for the graph);
* ``answer_queue``: answers recorded while the graph's write lock was held, each row the whole
  record (:class:`QueuedAnswer`). The gateway moves them into ``answers`` (and ``answer_reuse``)
  as soon as it holds the lock, and deletes them here only after that commit, so an answer is
  always in the queue or in ``answers`` (after a crash between the two commits, in both until
  the next move, which skips answers ``answers`` has). A queued answer is read by id and found
  for reuse as if it were recorded (:func:`queued_answer`, :meth:`AnswerQueue.latest`).

Nothing here is a fact about the curriculum or has a history of its own: the queue empties
itself, and a limit's row says no more than "wait until t". So the side file's two tables are
created on first use (``CREATE TABLE IF NOT EXISTS``), outside Alembic, which owns the graph
database's schema; a side file holding no queued answer may be deleted (the limits start full).
One deleted or replaced under a running process is noticed at its next use (the path no longer
holds the file the process opened): the process opens the file at the path afresh and first copies
into it the answers still queued in the old one, so none is lost. A side file that cannot be
written (its permissions, a full disk) is a ``StorageFault`` naming it (``data_plane.storage``),
and :func:`probe` tries a write that is rolled back, for ``kg doctor`` and ``/readyz``.
A database in memory has no side file: its answers wait for the write lock, as every write does.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import Engine
from sqlalchemy.schema import CreateIndex, CreateTable

from data_plane import schema, storage
from data_plane.clock import format_time, parse_time
from data_plane.database import connect
from data_plane.errors import StorageFault
from data_plane.records import Grounding, Stamp, Version

__all__ = [
    "SUFFIX",
    "WHAT",
    "AnswerQueue",
    "QueuedAnswer",
    "probe",
    "queued_answer",
    "side_engine",
    "side_path",
]

SUFFIX: Final = "-ops"

_side = sa.MetaData()
answer_queue = sa.Table(
    "answer_queue",
    _side,
    sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=True),
    sa.Column("answer_id", sa.String(64), nullable=False, unique=True),
    sa.Column("reuse_key", sa.String(64), nullable=True, index=True),
    sa.Column("record", sa.JSON(), nullable=False),
)
_TABLES: Final = (schema.rate_limits, answer_queue)

# What the messages call it.
WHAT: Final = "the side file"

# One side engine per graph engine (it dies with it, and is disposed with it), with the inode of
# the file it opened.
_ENGINES: weakref.WeakKeyDictionary[Engine, tuple[Engine, int]] = weakref.WeakKeyDictionary()


def side_path(engine: Engine) -> Path | None:
    """The side file of ``engine``'s database: ``<file>-ops`` for an SQLite file, else None."""
    url = engine.url
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    return Path(url.database + SUFFIX).expanduser()


def side_engine(engine: Engine, *, create: bool = True) -> Engine | None:
    """The engine of ``engine``'s side file (None for PostgreSQL and in-memory SQLite), its
    tables created on first use; with ``create=False``, None while the file does not exist yet
    (reads never create it)."""
    path = side_path(engine)
    found = _ENGINES.get(engine)
    if found is not None:
        old, inode = found
        if path is not None and _inode(path) == inode:
            return old
        # Deleted or replaced under this process: what is queued in the old file moves along.
        del _ENGINES[engine]
        pending = AnswerQueue(old).pending(None)
        old.dispose()
        if pending:
            new = side_engine(engine)
            assert new is not None
            AnswerQueue(new).put_all(pending)
            return new
    if path is None or (not create and not path.exists()):
        return None
    side = connect(f"sqlite:///{path}", what=WHAT)
    with side.execution_options(kg_write=True).begin() as conn:
        for table in _TABLES:
            conn.execute(CreateTable(table, if_not_exists=True))
            for index in table.indexes:
                conn.execute(CreateIndex(index, if_not_exists=True))
    _ENGINES[engine] = (side, _inode(path))
    event.listen(engine, "engine_disposed", lambda *_: side.dispose())
    return side


def _inode(path: Path) -> int:
    try:
        return path.stat().st_ino
    except FileNotFoundError:
        return -1


def probe(engine: Engine) -> str | None:
    """Why the side file of ``engine`` could not take a question's writes now (its answer, its
    limits), or None: the disk and permissions are looked at, then a write is tried and rolled
    back (it reaches no disk). None where there is no side file (PostgreSQL, memory)."""
    path = side_path(engine)
    if path is None:
        return None
    why = storage.fault(path, WHAT)
    if why is not None:
        return why
    try:
        side = side_engine(engine)
        assert side is not None
        with side.execution_options(kg_write=True).connect() as conn:
            transaction = conn.begin()
            try:
                conn.execute(sa.insert(schema.rate_limits).values(key="kg:probe", tat=0.0))
            finally:
                transaction.rollback()
    except StorageFault as exc:
        return str(exc)
    return None


@dataclass(frozen=True)
class QueuedAnswer:
    """An answer waiting to be moved into ``answers``: what ``WriteGateway.record_answer`` was
    given, the time it was recorded at (its ``recorded_at`` once moved), and its reuse entry as
    JSON (``ReuseEntry.to_json``)."""

    answer_id: str
    content: Mapping[str, Any]
    grounding: Grounding
    valid_at: datetime | None
    recorded_at: datetime
    reuse: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "answer_id": self.answer_id,
            "content": dict(self.content),
            "grounding": self.grounding.to_dict(),
            "valid_at": format_time(self.valid_at),
            "recorded_at": format_time(self.recorded_at),
            "reuse": None if self.reuse is None else dict(self.reuse),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> QueuedAnswer:
        g = data["grounding"]
        return cls(
            data["answer_id"],
            data["content"],
            Grounding.stored(g["confidence"], g["reason"], g["source"], g["evidence"]),
            None if data["valid_at"] is None else parse_time(data["valid_at"], field="valid_at"),
            parse_time(data["recorded_at"], field="recorded_at"),
            data.get("reuse"),
        )

    def version(self) -> Version:
        """The version this answer will be, with version id 0 until it is moved."""
        valid_at = self.valid_at or self.recorded_at
        stamp = Stamp(0, "assert", valid_at, None, self.recorded_at, None, None)
        return Version("answers", (self.answer_id,), dict(self.content), self.grounding, stamp)


class AnswerQueue:
    """The ``answer_queue`` table of a side file (see the module docstring)."""

    def __init__(self, side: Engine) -> None:
        self._engine = side
        self._writer = side.execution_options(kg_write=True)

    def put(self, item: QueuedAnswer) -> None:
        reuse_key = None if item.reuse is None else item.reuse["key"]
        row = {"answer_id": item.answer_id, "reuse_key": reuse_key, "record": item.to_json()}
        with self._writer.begin() as conn:
            conn.execute(sa.insert(answer_queue).values(row))

    def put_all(self, items: Iterable[QueuedAnswer]) -> None:
        """Queue ``items`` in order, skipping any already queued (another process copied it)."""
        rows = [
            {
                "answer_id": item.answer_id,
                "reuse_key": None if item.reuse is None else item.reuse["key"],
                "record": item.to_json(),
            }
            for item in items
        ]
        if rows:
            with self._writer.begin() as conn:
                conn.execute(sqlite.insert(answer_queue).on_conflict_do_nothing(), rows)

    def pending(self, limit: int | None) -> list[QueuedAnswer]:
        """Up to ``limit`` queued answers (None: all), oldest first."""
        stmt = sa.select(answer_queue.c.record).order_by(answer_queue.c.seq).limit(limit)
        with self._engine.connect() as conn:
            return [QueuedAnswer.from_json(r) for (r,) in conn.execute(stmt)]

    def remove(self, answer_ids: Iterable[str]) -> None:
        """Forget answers that are now in ``answers`` (call only after that commit)."""
        ids = list(answer_ids)
        if ids:
            with self._writer.begin() as conn:
                conn.execute(sa.delete(answer_queue).where(answer_queue.c.answer_id.in_(ids)))

    def find(self, answer_id: str) -> QueuedAnswer | None:
        stmt = sa.select(answer_queue.c.record).where(answer_queue.c.answer_id == answer_id)
        with self._engine.connect() as conn:
            found = conn.execute(stmt).scalar()
        return None if found is None else QueuedAnswer.from_json(found)

    def latest(self, reuse_key: str) -> Mapping[str, Any] | None:
        """The reuse entry (JSON) of the newest queued answer filed under ``reuse_key``."""
        stmt = (
            sa.select(answer_queue.c.record)
            .where(answer_queue.c.reuse_key == reuse_key)
            .order_by(answer_queue.c.seq.desc())
            .limit(1)
        )
        with self._engine.connect() as conn:
            found = conn.execute(stmt).scalar()
        return None if found is None else found["reuse"]


def queue_of(engine: Engine, *, create: bool = False) -> AnswerQueue | None:
    """The answer queue of ``engine``'s database (None where there is no side file)."""
    side = side_engine(engine, create=create)
    return None if side is None else AnswerQueue(side)


def queued_answer(engine: Engine, answer_id: str) -> Version | None:
    """Answer ``answer_id`` as recorded while the write lock was held and not yet moved, if so."""
    queue = queue_of(engine)
    found = None if queue is None else queue.find(answer_id)
    return None if found is None else found.version()
