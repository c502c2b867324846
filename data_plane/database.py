"""Engines and migrations: how the data plane reaches SQLite or PostgreSQL.

``connect(url)`` returns an engine tuned for this workload; ``migrate(engine)`` brings the schema to
Alembic's head. The schema is never created any other way.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine, ExceptionContext
from sqlalchemy.exc import ArgumentError

from data_plane import storage
from data_plane.errors import ConfigurationError, WriteLockTimeout
from data_plane.events import get_logger

if TYPE_CHECKING:
    from alembic.config import Config

log = get_logger(__name__)

# How long a statement waits for a lock SQLite holds briefly (a checkpoint, a reader's snapshot).
# A writer's wait for the write lock itself is a WriteWait.
SQLITE_BUSY_TIMEOUT_MS = 30_000
DEFAULT_WRITE_WAIT_S: Final = 600.0


@dataclass(frozen=True)
class WriteWait:
    """How a writer waits its turn for the database's one write lock (SQLite's, or the gateway's
    advisory lock on PostgreSQL): up to ``seconds``, then ``WriteLockTimeout``. ``on_wait(seconds)``
    is called once, before waiting, when the lock is not free at once (to tell a person)."""

    seconds: float = DEFAULT_WRITE_WAIT_S
    on_wait: Callable[[float], None] | None = None
    # A wait too short to be worth telling anyone about (moving queued answers).
    quiet: bool = False

    def waiting(self) -> None:
        if self.quiet:
            return
        log.info("gateway.waiting_for_write_lock", up_to_s=self.seconds)
        if self.on_wait is not None:
            self.on_wait(self.seconds)

    def timed_out(self) -> WriteLockTimeout:
        return WriteLockTimeout(
            f"waited {self.seconds:g} s for the database's write lock, which another writer (an "
            "import?) holds; nothing was written; retry when it is done",
            waited_s=self.seconds,
        )


def _tune_sqlite(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
    # WAL lets readers proceed while one writer writes; NORMAL sync is durable at checkpoint
    # boundaries under WAL and much faster than FULL; foreign keys are off by default in SQLite.
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    # Two connections opening a fresh file at once both want its exclusive lock to switch the
    # journal; SQLite fails one at once rather than waiting (that would deadlock): it retries.
    _execute_retrying(cursor.execute, "PRAGMA journal_mode=WAL", SQLITE_BUSY_TIMEOUT_MS / 1000, busy_too=True)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


# Busy codes SQLite returns without calling the busy handler: another connection is recovering
# the WAL after opening the file, or this one's snapshot is stale. Both pass in milliseconds.
_BUSY_WITHOUT_WAITING: Final = frozenset({sqlite3.SQLITE_BUSY_RECOVERY, sqlite3.SQLITE_BUSY_SNAPSHOT})


def _execute_retrying(
    execute: Callable[[str], object], sql: str, seconds: float, *, busy_too: bool = False
) -> None:
    """Run ``sql``, retrying for up to ``seconds`` while SQLite says busy without having waited
    (and, with ``busy_too``, on a plain busy as well)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            execute(sql)
            return
        except sqlite3.OperationalError as exc:
            code = exc.sqlite_errorcode
            again = code in _BUSY_WITHOUT_WAITING or (busy_too and code == sqlite3.SQLITE_BUSY)
            if not again or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def _sqlite_begin(conn: sa.Connection) -> None:
    # Writers take the write lock at BEGIN, not at their first write: two deferred transactions
    # that both read and then write would otherwise deadlock, and one would fail with "database is
    # locked" instead of waiting. Readers begin deferred and never block anyone (WAL).
    options = conn.get_execution_options()
    if not options.get("kg_write", False):
        conn.exec_driver_sql("BEGIN")
        return
    wait: WriteWait = options.get("kg_write_wait") or WriteWait()
    raw = conn.connection.dbapi_connection
    assert raw is not None
    # First without waiting, to know whether to say so; then waiting up to the writer's limit.
    try:
        raw.execute("PRAGMA busy_timeout=0")
        try:
            raw.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY:
                raise
        wait.waiting()
        raw.execute(f"PRAGMA busy_timeout={round(wait.seconds * 1000)}")
        try:
            _execute_retrying(raw.execute, "BEGIN IMMEDIATE", wait.seconds)
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY:
                raise wait.timed_out() from exc
            raise
    finally:
        raw.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")


def connect(url: str, *, echo: bool = False, what: str = "the database file") -> Engine:
    """Create an engine for ``url`` (``sqlite:///path`` or ``postgresql+psycopg://...``). On an
    SQLite file, an error saying the file cannot be opened or written (permissions, a full disk)
    is a ``StorageFault`` naming ``what`` and its path (``data_plane.storage``)."""
    try:
        parsed = sa.make_url(url)
    except ArgumentError as exc:
        raise ConfigurationError(f"database URL is not valid: {_redact(url)}") from exc
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(parsed, echo=echo)

        # pysqlite's own transaction handling is disabled so that BEGIN is ours to issue.
        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection: sqlite3.Connection, record: Any) -> None:
            dbapi_connection.isolation_level = None
            _tune_sqlite(dbapi_connection, record)

        event.listen(engine, "begin", _sqlite_begin)
        if parsed.database and parsed.database != ":memory:":
            path = Path(parsed.database).expanduser().absolute()

            @event.listens_for(engine, "handle_error")
            def _storage(context: ExceptionContext) -> None:
                found = storage.translated(context.original_exception, path, what)
                if found is not None:
                    raise found from context.original_exception

        return engine
    if parsed.get_backend_name() == "postgresql":
        if parsed.drivername == "postgresql":
            parsed = parsed.set(drivername="postgresql+psycopg")
        return sa.create_engine(parsed, echo=echo, pool_pre_ping=True)
    raise ConfigurationError(
        f"unsupported database {parsed.get_backend_name()!r}: use sqlite:///FILE or postgresql://..."
    )


def sqlite_path(url: str) -> Path | None:
    """The file of a file-based SQLite URL (None for other databases and ``:memory:``)."""
    try:
        parsed = sa.make_url(url)
    except ArgumentError as exc:
        raise ConfigurationError(
            "the database URL is not valid: use sqlite:///FILE or postgresql+psycopg://USER@HOST/DB"
        ) from exc
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database).expanduser()


def database_missing(url: str) -> Path | None:
    """The SQLite file ``url`` names when it does not exist yet (or is empty), else None.
    Opening it would create an empty file with no schema, so callers say so instead."""
    path = sqlite_path(url)
    if path is None or (path.is_file() and path.stat().st_size > 0):
        return None
    return path


def _redact(url: str) -> str:
    try:
        return sa.make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparseable URL>"


def redacted_url(engine: Engine) -> str:
    """The engine's URL with any password hidden, for logs and messages."""
    return engine.url.render_as_string(hide_password=True)


def alembic_config() -> Config:
    """An Alembic config pointing at this project's migrations, independent of the CWD."""
    # Alembic is imported lazily: it costs ~0.5 s, and most commands never migrate.
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(resources.files("migrations")))
    return cfg


def migrate(engine: Engine, revision: str = "head") -> None:
    """Upgrade the schema to ``revision`` (default: the latest)."""
    from alembic import command

    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)
    log.info("schema.migrated", revision=revision, database=redacted_url(engine))


def downgrade(engine: Engine, revision: str = "base") -> None:
    """Downgrade the schema to ``revision`` (default: nothing)."""
    from alembic import command

    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, revision)


def schema_revision(engine: Engine) -> str | None:
    """The revision the database is at, or None for an empty database."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head_revision() -> str | None:
    """The newest revision the code knows."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()
