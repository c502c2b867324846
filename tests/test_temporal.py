"""The pure temporal rules, checked against independent oracles: SQLite for ``AsOf``, networkx for cycles."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import networkx as nx
import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import Engine

from data_plane import AsOf, InputError
from data_plane.schema import OPERATIONS, UTCDateTime
from data_plane.temporal import find_cycle

T0 = datetime(2025, 1, 1, tzinfo=UTC)

# A scratch table with exactly the columns AsOf reads, typed as in the real schema.
_scratch = sa.MetaData()
STAMPS = sa.Table(
    "stamps",
    _scratch,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("op", sa.String(16), nullable=False),
    sa.Column("valid_at", UTCDateTime(), nullable=False),
    sa.Column("invalid_at", UTCDateTime(), nullable=True),
    sa.Column("recorded_at", UTCDateTime(), nullable=False),
    sa.Column("expired_at", UTCDateTime(), nullable=True),
)

# Few distinct instants (with sub-second offsets) so that ties at every boundary are common.
instants = st.builds(
    lambda minutes, micros: T0 + timedelta(minutes=minutes, microseconds=micros),
    st.integers(0, 6),
    st.sampled_from([0, 1, 999_999]),
)


@st.composite
def stamp_rows(draw: st.DrawFn) -> dict[str, Any]:
    valid_at = draw(instants)
    recorded_at = draw(instants)
    invalid_at = draw(st.none() | instants.filter(lambda t: t > valid_at))
    expired_at = draw(st.none() | instants.filter(lambda t: t >= recorded_at))
    return {
        "op": draw(st.sampled_from(OPERATIONS)),
        "valid_at": valid_at,
        "invalid_at": invalid_at,
        "recorded_at": recorded_at,
        "expired_at": expired_at,
    }


@pytest.fixture(scope="module")
def stamps_engine() -> Iterator[Engine]:
    """An in-memory SQLite database holding the scratch stamps table."""
    engine = sa.create_engine("sqlite://", poolclass=sa.StaticPool)
    _scratch.create_all(engine)
    yield engine
    engine.dispose()


@pytest.mark.slow  # 300 Hypothesis examples against SQL
@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(stamp_rows(), min_size=1, max_size=12),
    points=st.lists(st.tuples(instants, instants), min_size=1, max_size=4),
)
def test_holds_agrees_with_sql_clause(
    stamps_engine: Engine, rows: list[dict[str, Any]], points: list[tuple[datetime, datetime]]
) -> None:
    """For any rows and query points, SQLite evaluating AsOf.clause selects exactly the rows AsOf.holds accepts."""
    with stamps_engine.begin() as conn:
        conn.execute(sa.delete(STAMPS))
        conn.execute(sa.insert(STAMPS), [{"id": i, **r} for i, r in enumerate(rows)])
        for valid_at, recorded_at in points:
            as_of = AsOf(valid_at, recorded_at)
            in_sql = set(conn.execute(sa.select(STAMPS.c.id).where(as_of.clause(STAMPS))).scalars())
            in_python = {i for i, r in enumerate(rows) if as_of.holds(**r)}
            assert in_sql == in_python


def test_as_of_refuses_naive_datetimes() -> None:
    """AsOf will not guess the zone of a naive datetime."""
    with pytest.raises(InputError) as info:
        AsOf(datetime(2025, 1, 1), T0)
    assert info.value.field == "as_of"


def test_as_of_normalises_to_utc() -> None:
    """An AsOf given another zone holds the same instant in UTC."""
    plus_two = timezone(timedelta(hours=2))
    as_of = AsOf(datetime(2025, 1, 1, 2, tzinfo=plus_two), T0)
    assert as_of.valid_at == T0 and as_of.valid_at.tzinfo == UTC


NODES = list("abcdef")


@st.composite
def dag_and_additions(draw: st.DrawFn) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """An acyclic edge set (edges follow a random node order) and arbitrary added edges."""
    order = draw(st.permutations(NODES))
    forward = [(order[i], order[j]) for i in range(len(order)) for j in range(i + 1, len(order))]
    existing = draw(st.lists(st.sampled_from(forward), unique=True, max_size=10))
    pairs = st.tuples(st.sampled_from(NODES), st.sampled_from(NODES)).filter(lambda p: p[0] != p[1])
    added = draw(st.lists(pairs, unique=True, max_size=4))
    return existing, added


@settings(max_examples=500, deadline=None)
@given(graph=dag_and_additions())
def test_find_cycle_agrees_with_networkx(graph: tuple[list[tuple[str, str]], list[tuple[str, str]]]) -> None:
    """find_cycle reports a cycle exactly when networkx says the union is not a DAG, and the cycle is real."""
    existing, added = graph
    union = nx.DiGraph()
    union.add_nodes_from(NODES)
    union.add_edges_from([*existing, *added])
    cycle = find_cycle(existing, added)
    assert (cycle is None) == nx.is_directed_acyclic_graph(union)
    if cycle is not None:
        assert cycle[0] == cycle[-1] and len(cycle) >= 3
        assert len(set(cycle)) == len(cycle) - 1
        assert all(union.has_edge(s, t) for s, t in itertools.pairwise(cycle))
