"""The database itself enforces invalidate-not-delete, on every engine."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from data_plane import WriteGateway
from data_plane.testing import build_graph, grounding

TABLES = ["concepts", "concept_edges", "lessons", "lesson_concepts"]


@pytest.fixture
def populated(gateway: WriteGateway, engine: Engine) -> Engine:
    build_graph(gateway, ["a", "b"], [("a", "b", "prerequisite")])
    gateway.link_lesson("L1", "a", grounding=grounding(), title="Lesson 1")
    return engine


def _refused(engine: Engine, sql: str) -> None:
    with pytest.raises(DBAPIError, match=r"never deleted|only close|restrict"), engine.begin() as conn:
        conn.exec_driver_sql(sql)


@pytest.mark.parametrize("table", TABLES)
def test_raw_delete_is_refused(populated: Engine, table: str) -> None:
    """A raw SQL DELETE on a graph table fails and removes nothing."""
    with populated.connect() as conn:
        before = conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one()
    _refused(populated, f"DELETE FROM {table}")
    with populated.connect() as conn:
        assert conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one() == before > 0


@pytest.mark.parametrize("table", TABLES)
def test_raw_update_of_grounding_is_refused(populated: Engine, table: str) -> None:
    """An UPDATE may not change grounding or content."""
    _refused(populated, f"UPDATE {table} SET reason = 'rewritten history'")
    _refused(populated, f"UPDATE {table} SET confidence = 0.1")


def test_raw_update_of_content_is_refused(populated: Engine) -> None:
    _refused(populated, "UPDATE concepts SET name = 'Renamed'")
    _refused(populated, "UPDATE concept_edges SET relation = 'related'")


def test_closing_an_open_version_once_is_allowed_but_not_twice(populated: Engine) -> None:
    """expired_at may go from NULL to a value once; it can then neither change nor reopen."""
    with populated.begin() as conn:
        conn.exec_driver_sql("UPDATE concepts SET expired_at = recorded_at WHERE concept_id = 'a'")
    _refused(populated, "UPDATE concepts SET expired_at = NULL WHERE concept_id = 'a'")
    with populated.connect() as conn:
        later = (
            "recorded_at + interval '1 day'"
            if conn.dialect.name == "postgresql"
            else "datetime(recorded_at, '+1 day')"
        )
    _refused(populated, f"UPDATE concepts SET expired_at = {later} WHERE concept_id = 'a'")


def test_truncate_is_refused_on_postgresql(populated: Engine) -> None:
    if populated.dialect.name != "postgresql":
        pytest.skip("TRUNCATE exists only on PostgreSQL")
    _refused(populated, "TRUNCATE concepts CASCADE")


def test_two_current_versions_of_one_key_are_refused(populated: Engine) -> None:
    """The partial unique index allows at most one current version per key and valid start."""
    with pytest.raises(DBAPIError), populated.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO concepts (concept_id, name, aliases, summary, op, confidence, reason, source, evidence,"
            " valid_at, recorded_at) SELECT concept_id, name, aliases, summary, op, confidence, reason, source,"
            " evidence, valid_at, recorded_at FROM concepts WHERE concept_id = 'a'"
        )
