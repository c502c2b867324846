"""The raw-driver comparator of ``kg bench`` reads what the reader reads, boundaries included."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.engine import Engine

from data_plane import AsOf, GraphReader, WriteGateway
from data_plane.testing import EPOCH, ManualClock, build_graph, grounding
from evals.bench_raw import RawDriver


def _rows(reader: GraphReader, ids: list[str], point: AsOf) -> set[tuple[int, int]]:
    return {(n.edge.version_id, n.concept.version_id) for n in reader.neighbourhood(ids, as_of=point)}


def test_the_raw_neighbourhood_read_equals_the_readers_at_every_change(
    engine: Engine, database_url: str
) -> None:
    """At each change's recorded time (a whole second, so no fractional digits), a microsecond
    before and after, and at valid times on the changes' boundaries, the hand-written read returns
    exactly the versions the reader returns: never the closed and the new version together."""
    clock = ManualClock(now=EPOCH, step=timedelta(seconds=1))
    gateway, reader = WriteGateway(engine, clock=clock), GraphReader(engine, clock=clock)
    build_graph(gateway, ["a", "b", "c"], [("a", "b", "prerequisite"), ("b", "c", "builds_on")])
    gateway.revise_edge(
        "a", "b", "prerequisite", grounding=grounding("revised"), valid_at=EPOCH + timedelta(days=1)
    )
    gateway.revise_concept(
        "b", grounding=grounding("renamed"), name="Bee", valid_at=EPOCH + timedelta(days=2)
    )
    gateway.invalidate_edge(
        "b", "c", "builds_on", grounding=grounding("dropped"), invalid_at=EPOCH + timedelta(days=3)
    )
    changes = sorted(
        {
            v.stamp.recorded_at
            for key in (("a", "b", "prerequisite"), ("b", "c", "builds_on"))
            for v in reader.history("concept_edges", key)
        }
    )
    valid = [EPOCH + timedelta(days=d) for d in range(5)]
    driver = RawDriver(database_url)
    try:
        for k in changes:
            for dk in (-timedelta(microseconds=1), timedelta(0), timedelta(microseconds=1)):
                for v in valid:
                    point = AsOf(v, k + dk)
                    raw = {
                        (r[0], r[5]) for r in driver.expansion(["b"], [], point.valid_at, point.recorded_at)
                    }
                    assert raw == _rows(reader, ["b"], point), point
    finally:
        driver.close()
