"""Migrations are code under test: they run both ways on real databases and agree with the models."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import Engine

from data_plane import connect, migrate, schema
from data_plane.database import downgrade, head_revision, schema_revision

REPO_ROOT = Path(__file__).resolve().parent.parent
GRAPH_TABLES = {t.name for t in schema.VERSIONED_TABLES}
ALL_TABLES = set(schema.metadata.tables)


@pytest.fixture
def empty_engine(empty_database_url: str) -> Iterator[Engine]:
    """An engine on a database with no schema at all."""
    eng = connect(empty_database_url)
    yield eng
    eng.dispose()


def _tables(engine: Engine) -> set[str]:
    return set(sa.inspect(engine).get_table_names()) - {"alembic_version"}


def _triggers(engine: Engine) -> set[str]:
    with engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            sql = "SELECT name FROM sqlite_master WHERE type = 'trigger'"
        else:
            sql = "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal"
        return {name for (name,) in conn.exec_driver_sql(sql)}


def _expected_triggers(dialect: str) -> set[str]:
    kinds = ("no_delete", "close_only") if dialect == "sqlite" else ("no_delete", "no_truncate", "close_only")
    return {f"trg_{t}_{k}" for t in GRAPH_TABLES for k in kinds}


def _diff(engine: Engine, metadata: sa.MetaData) -> list[object]:
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        return list(compare_metadata(ctx, metadata))


def _check_names(engine: Engine) -> set[tuple[str, str]]:
    insp = sa.inspect(engine)
    return {(table, str(ck["name"])) for table in ALL_TABLES for ck in insp.get_check_constraints(table)}


def _model_check_names() -> set[tuple[str, str]]:
    return {
        (table.name, str(c.name))
        for table in schema.metadata.tables.values()
        for c in table.constraints
        if isinstance(c, sa.CheckConstraint)
    }


def test_upgrade_downgrade_upgrade_round_trips(empty_engine: Engine) -> None:
    """upgrade head creates every table and guard trigger, downgrade base removes them, upgrade again restores them."""
    dialect = empty_engine.dialect.name
    migrate(empty_engine)
    assert _tables(empty_engine) == ALL_TABLES
    assert _triggers(empty_engine) == _expected_triggers(dialect)
    assert schema_revision(empty_engine) == head_revision()

    downgrade(empty_engine)
    assert _tables(empty_engine) == set()
    assert _triggers(empty_engine) == set()
    assert schema_revision(empty_engine) is None

    migrate(empty_engine)
    assert _tables(empty_engine) == ALL_TABLES
    assert _triggers(empty_engine) == _expected_triggers(dialect)


def test_alembic_cli_upgrades_and_downgrades(empty_database_url: str) -> None:
    """`python -m alembic -x url=... upgrade head` from the repo root uses [tool.alembic] and works."""

    def alembic(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "alembic", "-x", f"url={empty_database_url}", *args],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    up = alembic("upgrade", "head")
    assert up.returncode == 0, up.stderr
    engine = connect(empty_database_url)
    try:
        assert _tables(engine) == ALL_TABLES
        assert schema_revision(engine) == head_revision()
        down = alembic("downgrade", "base")
        assert down.returncode == 0, down.stderr
        assert _tables(engine) == set()
    finally:
        engine.dispose()


def test_models_and_migrations_do_not_drift(engine: Engine) -> None:
    """Autogenerate finds no difference between data_plane.schema and the migrated database."""
    assert _diff(engine, schema.metadata) == []


def test_check_constraints_match_the_models(engine: Engine) -> None:
    """Every CHECK constraint of the models exists in the migrated database under the same name (autogenerate does not compare CHECKs)."""
    assert _check_names(engine) == _model_check_names()


def test_drift_check_catches_an_extra_column(engine: Engine) -> None:
    """The drift check is not vacuous: a model with one more column produces a non-empty diff."""
    changed = sa.MetaData(naming_convention=schema.NAMING_CONVENTION)
    for table in schema.metadata.tables.values():
        table.to_metadata(changed)
    changed.tables["concepts"].append_column(sa.Column("difficulty", sa.Integer(), nullable=True))
    diff = _diff(engine, changed)
    assert any(d[0] == "add_column" and d[3].name == "difficulty" for d in diff if isinstance(d, tuple)), diff
