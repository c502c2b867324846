"""Migrations on a populated database: head → 0001 → head keeps every row and its grounding, byte for byte.

The operational tables of migrations 0003 (``rate_limits``, ``answer_reuse``) and 0006
(``write_clock``) are not graph history: a downgrade below them drops them, and an upgrade brings
the first two back empty (limits start full, and answers are reused again once asked again) and
the write clock at the latest stamp the graph holds, where it was. The requirement tables of
migration 0005 are graph history: a downgrade below 0005 drops them only while they are empty, and
refuses otherwise."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from data_plane import AsOf, WriteGateway, schema
from data_plane.database import downgrade, head_revision, migrate, schema_revision
from data_plane.reuse import Reads, ReuseEntry
from data_plane.testing import ManualClock, build_graph, grounding
from data_plane.tokens import TokenStore

PREVIOUS = "0001"
OPERATIONAL = frozenset({"rate_limits", "answer_reuse", "write_clock"})
REQUIREMENTS = frozenset({"requirement_groups", "requirement_members"})
KEPT = frozenset(schema.metadata.tables) - OPERATIONAL - REQUIREMENTS
# After everything _populate records (its manual clock starts at 2025-01-01).
LATER = datetime(2025, 6, 1, tzinfo=UTC)


def _populate(engine: Engine) -> None:
    """Concepts, edges, lessons, answers and tokens, with revisions, invalidations and retractions."""
    clock = ManualClock()
    gw = WriteGateway(engine, clock=clock)
    build_graph(
        gw,
        ["rag", "embeddings", ("vector_search", "Vector search", ["ANN", "kNN"]), "llm", "agents"],
        [
            ("embeddings", "rag", "prerequisite"),
            ("vector_search", "rag", "prerequisite"),
            ("rag", "llm", "builds_on", 0.7),
            ("agents", "llm", "builds_on"),
            ("rag", "agents", "related"),
        ],
    )
    gw.revise_concept(
        "rag", summary="Retrieval-augmented generation: «quoted» ünïcode ✓", grounding=grounding("r1")
    )
    gw.revise_edge("rag", "llm", "builds_on", grounding=grounding("stronger", confidence=0.95))
    gw.invalidate_edge("rag", "agents", "related", grounding=grounding("no longer related"))
    gw.link_lesson("L1", "rag", title="Lesson one", grounding=grounding("syllabus"))
    gw.link_lesson("L1", "embeddings", grounding=grounding("syllabus"))
    gw.invalidate_concept("agents", grounding=grounding("dropped from track"))
    at = clock()
    gw.record_answer(
        "a1",
        question="what before rag?",
        answer_text="embeddings",
        abstained=False,
        payload={"cited": [1, 2], "nested": {"x": None}},
        grounding=grounding("answer"),
        reuse=ReuseEntry("a1", "k" * 64, AsOf(at, at), {"concepts": 1}, Reads(frozenset({"rag"})), at),
    )
    TokenStore(engine, clock=clock).create("ci", "write")
    # LimitTable keeps SQLite's limits in the side file (data_plane.sidecar); the schema's table is
    # filled directly, so that the migrations meet a row on both engines.
    with engine.begin() as conn:
        conn.execute(sa.insert(schema.rate_limits).values(key="ask:addr:127.0.0.1", tat=2e9))


def _dump(engine: Engine, tables: frozenset[str] | None = None) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (of ``tables``) as the driver returns it, ordered by primary key."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    with engine.connect() as conn:
        for table in schema.metadata.sorted_tables:
            if tables is not None and table.name not in tables:
                continue
            pk = ", ".join(c.name for c in table.primary_key.columns)
            cols = ", ".join(c.name for c in table.columns)
            rows = conn.exec_driver_sql(f"SELECT {cols} FROM {table.name} ORDER BY {pk}")
            out[table.name] = [tuple(r) for r in rows]
    return out


def _indexes(engine: Engine) -> set[str]:
    return {str(ix["name"]) for ix in sa.inspect(engine).get_indexes("concepts")}


@pytest.fixture
def populated(engine: Engine) -> Engine:
    """A database at head holding a small graph with history, answers and a token."""
    _populate(engine)
    return engine


def test_populated_database_has_rows_in_every_table(populated: Engine) -> None:
    """The fixture is not vacuous: every table holds rows, including superseded versions."""
    dump = _dump(populated)
    assert all(dump[t] for t in KEPT | OPERATIONAL), {k: len(v) for k, v in dump.items()}
    assert len(dump["concepts"]) > 5


def test_downgrade_to_previous_keeps_every_row(populated: Engine) -> None:
    """Downgrading head → 0001 on a populated database keeps every graph row and grounding byte for
    byte, and drops only the operational tables."""
    before = _dump(populated, KEPT)
    downgrade(populated, PREVIOUS)
    assert schema_revision(populated) == PREVIOUS
    assert "ix_concepts_name" not in _indexes(populated)
    assert _dump(populated, KEPT) == before
    assert not OPERATIONAL & set(sa.inspect(populated).get_table_names())


def test_round_trip_keeps_every_row(populated: Engine) -> None:
    """head → 0001 → head on a populated database keeps every row and grounding byte for byte."""
    before = _dump(populated, KEPT)
    clock = _dump(populated, frozenset({"write_clock"}))
    downgrade(populated, PREVIOUS)
    migrate(populated)
    assert schema_revision(populated) == head_revision()
    assert "ix_concepts_name" in _indexes(populated)
    assert _dump(populated, KEPT) == before
    assert _dump(populated, OPERATIONAL) == {"rate_limits": [], "answer_reuse": [], **clock}
    assert len(clock["write_clock"]) == 1


def test_guards_and_writes_work_after_round_trip(populated: Engine) -> None:
    """After head → 0001 → head the no-delete guard still holds and new writes get fresh version ids."""
    top = max(r[0] for r in _dump(populated)["concepts"])
    downgrade(populated, PREVIOUS)
    migrate(populated)
    with pytest.raises(sa.exc.DBAPIError), populated.begin() as conn:
        conn.exec_driver_sql("DELETE FROM concepts")
    v = WriteGateway(populated, clock=ManualClock()).assert_concept(
        "fresh", name="Fresh", grounding=grounding("after migration")
    )
    assert v.stamp.version_id > top


def test_downgrade_below_0005_is_refused_while_groups_hold_history(populated: Engine) -> None:
    """A database holding a requirement group is not downgraded below 0005 (that would delete the
    group's history): the downgrade fails and every row, groups included, is still there."""
    WriteGateway(populated, clock=ManualClock(LATER)).assert_requirement(
        "rag.1",
        target_id="rag",
        needs=1,
        options=[["embeddings"], ["vector_search"]],
        grounding=grounding("one of"),
    )
    before = _dump(populated)
    with pytest.raises(Exception, match="holds requirement history"):
        downgrade(populated, "0004")
    assert schema_revision(populated) == head_revision()
    assert _dump(populated) == before
