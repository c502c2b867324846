"""Time is a period: a write covers a portion of valid time and keeps the rest (both engines), the
pure period arithmetic, imports that revise, and restoring what the old rule dropped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy.engine import Engine

from data_plane import (
    KEEP,
    GraphReader,
    InactiveEndpoint,
    KeyExists,
    TemporalConflict,
    Write,
    WriteGateway,
    import_bundle,
    schema,
)
from data_plane.periods import Period, covers, cut, overlaps
from data_plane.restore import find_dropped, restore_dropped
from data_plane.testing import ManualClock, build_graph, grounding

ROOT = Path(__file__).resolve().parent.parent
D = [datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=30 * i) for i in range(12)]


@pytest.fixture
def later() -> ManualClock:
    """A clock after every valid time these tests use."""
    return ManualClock(now=datetime(2026, 1, 1, tzinfo=UTC))


@pytest.fixture
def g(engine: Engine, later: ManualClock) -> WriteGateway:
    return WriteGateway(engine, clock=later)


@pytest.fixture
def r(engine: Engine, later: ManualClock) -> GraphReader:
    return GraphReader(engine, clock=later)


def _at(reader: GraphReader, cid: str, valid: datetime) -> str | None:
    found = reader.concepts([cid], as_of=reader.as_of(valid))
    return found[cid].summary if cid in found else None


# -- revisions ---------------------------------------------------------------------------------


def test_a_revision_from_a_later_time_keeps_the_earlier_period(g: WriteGateway, r: GraphReader) -> None:
    """Revised from D3 on, the concept says the new summary from D3 and the old one before, as now
    known: the earlier part is recorded again as a version of its own."""
    build_graph(g, [("t", "Tokenization")], valid_at=D[0])
    g.revise_concept("t", summary="subwords", grounding=grounding("rewritten"), valid_at=D[3])
    assert (_at(r, "t", D[1]), _at(r, "t", D[3] - timedelta(microseconds=1)), _at(r, "t", D[3])) == (
        "Tokenization.",
        "Tokenization.",
        "subwords",
    )
    assert [(v.stamp.op, v.stamp.valid_at) for v in r.history("concepts", ("t",))] == [
        ("assert", D[0]),
        ("revise", D[0]),
        ("revise", D[3]),
    ]


def test_a_revision_over_a_bounded_period_keeps_both_sides(g: WriteGateway, r: GraphReader) -> None:
    """Revised over [D3, D5), the concept is as before outside it."""
    build_graph(g, ["t"], valid_at=D[0])
    g.revise_concept("t", summary="then", grounding=grounding("for a term"), valid_at=D[3], until=D[5])
    assert [_at(r, "t", d) for d in (D[2], D[3], D[4], D[5], D[8])] == ["t.", "then", "then", "t.", "t."]


def test_a_revision_that_changes_nothing_writes_nothing(g: WriteGateway, r: GraphReader) -> None:
    """Same content and grounding over a later part: no version is written, none is split."""
    build_graph(g, ["t"], valid_at=D[0])
    same = Write.concept("t", grounding=grounding("concept t"), mode="revise", summary="t.", valid_at=D[3])
    result = g.apply([same])
    assert result.written == () and len(result.unchanged) == 1
    assert len(r.history("concepts", ("t",))) == 1


def test_a_correction_replaces_the_whole_period(g: WriteGateway, r: GraphReader) -> None:
    """``correct`` from D3: one version from D3 on; the part before is retracted (said, recorded)."""
    build_graph(g, ["t"], valid_at=D[0])
    g.apply([Write.concept("t", grounding=grounding("wrong start"), mode="correct", valid_at=D[3])])
    assert (_at(r, "t", D[1]), _at(r, "t", D[3])) == (None, "t.")
    ops = [(v.stamp.op, v.stamp.valid_at, v.stamp.expired_at is None) for v in r.history("concepts", ("t",))]
    assert ops[1:] == [("retract", D[0], True), ("revise", D[3], True)]


def test_a_correction_that_would_strand_an_edge_is_refused(g: WriteGateway, r: GraphReader) -> None:
    """Moving a concept's start past the start of one of its edges is refused, naming the edge."""
    build_graph(g, ["a", "b"], [("a", "b", "related")], valid_at=D[0])
    with pytest.raises(InactiveEndpoint, match="a>related>b"):
        g.apply([Write.concept("a", grounding=grounding(), mode="correct", valid_at=D[3])])


# -- invalidations and cascades ------------------------------------------------------------------


def test_an_invalidation_over_a_bounded_period_keeps_the_rest(g: WriteGateway, r: GraphReader) -> None:
    """Invalidated over [D3, D5), the edge holds before D3 and again from D5."""
    build_graph(g, ["a", "b"], [("a", "b", "prerequisite")], valid_at=D[0])
    g.invalidate_edge("a", "b", "prerequisite", grounding=grounding("paused"), invalid_at=D[3], until=D[5])
    held = [bool(r.snapshot(r.as_of(d)).edges) for d in (D[2], D[3], D[4], D[5], D[6])]
    assert held == [True, False, False, True, True]


def test_closing_a_concept_for_a_period_closes_its_edges_for_that_period(
    g: WriteGateway, r: GraphReader
) -> None:
    """The cascade follows the portion rule: the edge holds exactly when both concepts do."""
    build_graph(g, ["a", "b"], [("a", "b", "builds_on")], valid_at=D[0])
    g.invalidate_concept("a", grounding=grounding("off for a term"), invalid_at=D[3], until=D[5])
    for d in (D[2], D[3], D[4], D[5]):
        snap = r.snapshot(r.as_of(d))
        assert bool(snap.edges) == ("a" in {c.concept_id for c in snap.concepts})


def test_an_invalidation_leaving_nothing_is_refused(g: WriteGateway) -> None:
    """Invalidating from the start on would leave the fact valid at no time: retract it instead."""
    build_graph(g, ["a"], valid_at=D[2])
    with pytest.raises(TemporalConflict, match="must be after valid_at"):
        g.invalidate_concept("a", grounding=grounding(), invalid_at=D[1])


# -- asserting again, for any period -------------------------------------------------------------


def test_a_fact_may_be_asserted_again_for_an_earlier_period(g: WriteGateway, r: GraphReader) -> None:
    """A concept valid from D5 is asserted for [D1, D3) too; overlapping its period is refused."""
    build_graph(g, ["a"], valid_at=D[5])
    g.assert_concept("a", name="A", grounding=grounding("taught early"), valid_at=D[1], invalid_at=D[3])
    assert [_at(r, "a", d) is not None for d in (D[0], D[1], D[3], D[5])] == [False, True, False, True]
    with pytest.raises(KeyExists, match="holds from"):
        g.assert_concept("a", name="A", grounding=grounding(), valid_at=D[3], invalid_at=D[6])


# -- pure periods --------------------------------------------------------------------------------

times = st.one_of(st.none(), st.integers(0, 20).map(lambda i: D[0] + timedelta(days=i)))


@given(a=times, b=times, s=times, e=times)
def test_a_cut_partitions_the_period(
    a: datetime | None, b: datetime | None, s: datetime | None, e: datetime | None
) -> None:
    """Before, inside and after a portion are disjoint, together are the period, and only the
    inside overlaps the portion."""
    period, portion = Period(a, b), Period(s, e)
    if period.is_empty() or portion.is_empty():
        return
    parts = [p for p in cut(period, portion) if p is not None]
    for i, p in enumerate(parts):
        assert not p.is_empty()
        assert all(not overlaps(p, q) for q in parts[i + 1 :])
    assert covers(parts, period) and all(covers([period], p) for p in parts)
    c = cut(period, portion)
    assert (c.inside is not None) == overlaps(period, portion)
    assert all(p is None or not overlaps(p, portion) for p in (c.before, c.after))


# -- imports -------------------------------------------------------------------------------------


def test_an_import_from_a_later_date_keeps_the_earlier_periods(db: str) -> None:
    """After the retrieval unit (valid from 2025-09-01), RAG and its edges are still there as of
    2024-06-01, as they were; a second import of the same bundle changes nothing."""
    from data_plane import connect

    engine = connect(db)
    try:
        reader, gateway = GraphReader(engine), WriteGateway(engine)
        before = reader.snapshot(reader.as_of(datetime(2024, 6, 1, tzinfo=UTC)))
        import_bundle(gateway, ROOT / "docs/examples/retrieval-unit")
        after = reader.snapshot(reader.as_of(datetime(2024, 6, 1, tzinfo=UTC)))
        assert [(c.concept_id, c.summary) for c in after.concepts] == [
            (c.concept_id, c.summary) for c in before.concepts
        ]
        assert [e.key for e in after.edges] == [e.key for e in before.edges]
        again = import_bundle(gateway, ROOT / "docs/examples/retrieval-unit")
        assert again.new_versions == 0
    finally:
        engine.dispose()


# -- databases written by the old rule ---------------------------------------------------------


def _old_revise(engine: Engine, cid: str, valid_at: datetime, now: datetime, summary: str) -> None:
    """What the gateway did before migration 0004: close the current version and write one new
    version valid from ``valid_at`` only (the earlier part of the period was dropped). The write
    clock is left where migration 0006 starts it on such a database: at its latest stamp."""
    c = schema.concepts
    with engine.begin() as conn:
        cur = (
            conn.execute(sa.select(c).where(c.c.concept_id == cid, c.c.expired_at.is_(None))).mappings().one()
        )
        conn.execute(sa.update(c).where(c.c.version_id == cur["version_id"]).values(expired_at=now))
        row = {k: v for k, v in cur.items() if k != "version_id"}
        row.update(
            op="revise",
            summary=summary,
            reason="old rule",
            valid_at=valid_at,
            recorded_at=now,
            supersedes_id=cur["version_id"],
        )
        conn.execute(sa.insert(c).values(**row))
        clock = schema.write_clock
        conn.execute(sa.update(clock).where(clock.c.id == 1).values(recorded_at=now))


def test_periods_the_old_rule_dropped_are_restored_once(engine: Engine) -> None:
    """A revision written the old way dropped [D0, D3); restoring writes it back, recorded now, with
    a reason that says so, and a second run finds nothing."""
    clock = ManualClock(now=datetime(2025, 6, 1, tzinfo=UTC))
    gateway, r = WriteGateway(engine, clock=clock), GraphReader(engine, clock=clock)
    build_graph(gateway, ["t"], valid_at=D[0])
    _old_revise(engine, "t", D[3], datetime(2025, 7, 1, tzinfo=UTC), "subwords")
    clock.now = datetime(2025, 8, 1, tzinfo=UTC)
    assert _at(r, "t", D[1]) is None
    dropped = find_dropped(engine)
    assert [(d.key, d.period) for d in dropped] == [(("t",), Period(D[0], D[3]))]
    assert restore_dropped(gateway, dropped)["concepts"] == 1
    assert (_at(r, "t", D[1]), _at(r, "t", D[3])) == ("t.", "subwords")
    restored = r.concepts(["t"], as_of=r.as_of(D[1]))["t"]
    assert restored.grounding.reason.startswith(
        "restored: valid 2024-01-01T00:00:00Z..2024-03-31T00:00:00Z of version 1, dropped when version 2"
    )
    assert find_dropped(engine) == []


def test_writes_under_the_portion_rule_never_look_dropped(g: WriteGateway, engine: Engine) -> None:
    """Revisions, corrections, invalidations and re-assertions written now leave nothing to restore."""
    build_graph(g, ["a", "b"], [("a", "b", "related")], valid_at=D[0])
    g.revise_concept("a", summary="x", grounding=grounding("later"), valid_at=D[3])
    g.invalidate_edge("a", "b", "related", grounding=grounding("gap"), invalid_at=D[4], until=D[6])
    g.apply([Write.concept("b", grounding=grounding("fix"), mode="correct", valid_at=D[0], invalid_at=KEEP)])
    g.invalidate_concept("b", grounding=grounding("gone"), invalid_at=D[8])
    g.assert_concept("b", name="B", grounding=grounding("back"), valid_at=D[9])
    assert find_dropped(engine) == []
