"""Which recorded answer a repeated question may reuse, decided exactly by the bi-temporal store.

A reusable answer is indexed in ``answer_reuse`` (written by ``WriteGateway.record_answer`` in the
transaction that records the answer) under a key computed by the control plane from the question's
reading and as-of semantics. The entry keeps what the answer read:

* ``seen``: the newest version id of each graph table when the answer began reading. Every graph
  write takes one global write lock (``WriteGateway``), so version ids are handed out in commit
  order: a version with a larger id was committed after the answer's snapshot, whatever its
  ``recorded_at`` says (a long import stamps every row with its start time).
* ``reads``: the concepts whose neighbourhoods the answer expanded (every edge touching them was
  read, whatever its relation, and so was the concept at its other end), the concepts whose records
  it read, and the concepts whose lesson links it read.

:meth:`AnswerIndex.unchanged` says whether the answer still holds at a new as-of point: no version
in that region was recorded since (``version_id > seen``; a *new* edge into an expanded
neighbourhood is such a version), and no version there is in force at one point but not at the
other (a fact dated to start or end between the two valid times, or a different recorded time).
Both in one statement. Superseding or closing a version always writes a new version of the same
key, so the first test also covers versions closed since.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import sqlalchemy as sa

from data_plane import schema
from data_plane.clock import format_time, parse_time
from data_plane.reads import GraphReader
from data_plane.sidecar import queue_of
from data_plane.temporal import AsOf

__all__ = ["GRAPH_TABLES", "MAX_READS", "AnswerIndex", "Reads", "ReuseEntry", "latest_versions"]

# The tables an answer reads, and whose new versions can change it.
GRAPH_TABLES: Final = ("concepts", "concept_edges", "lessons", "lesson_concepts")
# An answer that read more ids than this is not indexed: checking it would cost as much as asking.
MAX_READS: Final = 5000
A = schema.answer_reuse


@dataclass(frozen=True)
class Reads:
    """What an answer read, by concept id (see the module docstring)."""

    expanded: frozenset[str] = frozenset()
    concepts: frozenset[str] = frozenset()
    lessons_of: frozenset[str] = frozenset()

    def __len__(self) -> int:
        return len(self.expanded) + len(self.concepts) + len(self.lessons_of)

    def to_dict(self) -> dict[str, list[str]]:
        return {
            "expanded": sorted(self.expanded),
            "concepts": sorted(self.concepts),
            "lessons_of": sorted(self.lessons_of),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Iterable[str]]) -> Reads:
        return cls(
            frozenset(data.get("expanded", ())),
            frozenset(data.get("concepts", ())),
            frozenset(data.get("lessons_of", ())),
        )


@dataclass(frozen=True)
class ReuseEntry:
    """One reusable answer: its key, the as-of point it was answered at, and what it read."""

    answer_id: str
    key: str
    point: AsOf
    seen: Mapping[str, int]
    reads: Reads
    created_at: datetime

    def to_json(self) -> dict[str, Any]:
        """This entry as JSON (an answer queued in the side file keeps it so, ``data_plane.sidecar``)."""
        return {
            "answer_id": self.answer_id,
            "key": self.key,
            "valid_at": format_time(self.point.valid_at),
            "recorded_at": format_time(self.point.recorded_at),
            "seen": dict(self.seen),
            "reads": self.reads.to_dict(),
            "created_at": format_time(self.created_at),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReuseEntry:
        return cls(
            data["answer_id"],
            data["key"],
            AsOf(parse_time(data["valid_at"]), parse_time(data["recorded_at"])),
            {name: int(data["seen"].get(name, 0)) for name in GRAPH_TABLES},
            Reads.from_dict(data["reads"]),
            parse_time(data["created_at"]),
        )

    def row(self) -> dict[str, Any]:
        return {
            "answer_id": self.answer_id,
            "reuse_key": self.key,
            "valid_at": self.point.valid_at,
            "recorded_at": self.point.recorded_at,
            "seen": dict(self.seen),
            "reads": self.reads.to_dict(),
            "created_at": self.created_at,
        }


def latest_versions(conn: sa.Connection) -> dict[str, int]:
    """The newest version id of each graph table (0 for an empty one), in one statement."""
    tables = [schema.metadata.tables[name] for name in GRAPH_TABLES]
    newest = [sa.select(sa.func.coalesce(sa.func.max(t.c.version_id), 0)).scalar_subquery() for t in tables]
    row = conn.execute(sa.select(*newest)).one()
    return {name: int(value) for name, value in zip(GRAPH_TABLES, row, strict=True)}


def _moved(table: sa.Table, seen: int, before: AsOf, now: AsOf) -> sa.ColumnElement[bool]:
    """A version of ``table`` recorded after ``seen``, or in force at one point but not the other."""
    moved: sa.ColumnElement[bool] = table.c.version_id > seen
    if before != now:
        was, is_ = before.clause(table), now.clause(table)
        moved = sa.or_(moved, sa.and_(was, sa.not_(is_)), sa.and_(is_, sa.not_(was)))
    return moved


class AnswerIndex:
    """Reads of ``answer_reuse`` and the validity check, on a reader's (pinned) connection."""

    def __init__(self, reader: GraphReader) -> None:
        self._reader = reader

    def seen(self) -> dict[str, int]:
        """The newest version id of each graph table, as this question's snapshot sees them."""
        with self._reader.connection() as conn:
            return latest_versions(conn)

    def latest(self, key: str) -> ReuseEntry | None:
        """The newest reusable answer recorded under ``key``, if any (one still queued in the
        side file included: it is recorded, only not moved into ``answers`` yet)."""
        # The queue first (as GraphReader.answer): an entry moved in between is then in the table.
        queue = queue_of(self._reader.engine)
        queued = None if queue is None else queue.latest(key)
        stmt = (
            sa.select(A).where(A.c.reuse_key == key).order_by(A.c.created_at.desc(), A.c.answer_id).limit(1)
        )
        with self._reader.connection() as conn:
            row = conn.execute(stmt).mappings().first()
        found = None
        if row is not None:
            found = ReuseEntry(
                row["answer_id"],
                row["reuse_key"],
                AsOf(row["valid_at"], row["recorded_at"]),
                {name: int(row["seen"].get(name, 0)) for name in GRAPH_TABLES},
                Reads.from_dict(row["reads"]),
                row["created_at"],
            )
        if queued is not None:
            entry = ReuseEntry.from_json(queued)
            if found is None or entry.created_at > found.created_at:
                return entry
        return found

    def all_reads(self) -> Iterator[tuple[str, Reads]]:
        """What every indexed answer read, by answer id (for the impact audit)."""
        stmt = sa.select(A.c.answer_id, A.c.reads).order_by(A.c.answer_id)
        with self._reader.connection() as conn:
            for answer_id, reads in conn.execute(stmt, execution_options={"yield_per": 2000}):
                yield answer_id, Reads.from_dict(reads)

    def unchanged(self, entry: ReuseEntry, point: AsOf) -> bool:
        """Whether everything ``entry``'s answer read is the same as of ``point`` as it was as of
        the point it was answered at (module docstring)."""
        C, E = schema.concepts, schema.concept_edges
        L, LC = schema.lessons, schema.lesson_concepts
        reads, seen = entry.reads, entry.seen
        checks: list[sa.ColumnElement[bool]] = []
        expanded = sorted(reads.expanded)
        if expanded:
            touching = sa.or_(E.c.source_id.in_(expanded), E.c.target_id.in_(expanded))
            checks.append(sa.exists().where(touching, _moved(E, seen["concept_edges"], entry.point, point)))
        ends = sa.union(
            sa.select(E.c.target_id).where(E.c.source_id.in_(expanded)),
            sa.select(E.c.source_id).where(E.c.target_id.in_(expanded)),
        )
        named = sorted(reads.concepts | reads.expanded)
        in_region: sa.ColumnElement[bool] = C.c.concept_id.in_(named)
        if expanded:
            in_region = sa.or_(in_region, C.c.concept_id.in_(ends))
        checks.append(sa.exists().where(in_region, _moved(C, seen["concepts"], entry.point, point)))
        lessons_of = sorted(reads.lessons_of)
        if lessons_of:
            links = LC.c.concept_id.in_(lessons_of)
            checks.append(sa.exists().where(links, _moved(LC, seen["lesson_concepts"], entry.point, point)))
            linked = sa.select(LC.c.lesson_id).where(links)
            checks.append(
                sa.exists().where(L.c.lesson_id.in_(linked), _moved(L, seen["lessons"], entry.point, point))
            )
        with self._reader.connection() as conn:
            return not conn.execute(sa.select(sa.or_(*checks))).scalar()
