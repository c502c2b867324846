"""Alembic environment: ``target_metadata`` comes from the data plane.

The database is, in order: a connection handed in by ``data_plane.database.migrate`` (via
``config.attributes['connection']``), ``-x url=...`` on the alembic command line, or the
``KG_DATABASE_URL`` environment variable (the alembic CLI is an edge, so reading it here is fine).
SQLite runs in batch mode, so future ALTERs work there too.
"""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection

from data_plane.schema import metadata

config = context.config
target_metadata = metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = context.get_x_argument(as_dictionary=True).get("url") or os.environ.get("KG_DATABASE_URL")
    if not url:
        raise SystemExit("alembic: set KG_DATABASE_URL or pass -x url=DATABASE_URL")
    engine = create_engine(url)
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("alembic: offline (--sql) mode is not supported; run against a database")
run_migrations_online()
