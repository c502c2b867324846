"""Valid periods that writes under the old revision rule dropped, found and restored.

Before migration 0004 a revision (or an import row) from a later valid time, and an assertion
again after an invalidation, replaced the whole valid period of the version they superseded: the
part before the new version's start was no longer believed by anyone, though nothing said it was
untrue. The portion rule (``data_plane.gateway``) never does that: every write that closes a
version writes a successor starting where it started (its kept part, its invalidation, or a
retraction of what it removes). So a closed version whose successors all start later than it
did, over a part of valid time that no current version of its key covers, is a period the old
rule dropped (:func:`find_dropped`).

:func:`restore_dropped` writes each such part back through the gateway, recorded now, as an
``assert`` of the dropped version's content over exactly that part, with its grounding and a
reason that says it was restored (edges and lesson links clipped to when their concepts hold).
The newest belief about a time wins when two dropped parts overlap. Running it again finds
nothing: the restored parts are covered.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from data_plane import schema
from data_plane.clock import format_time
from data_plane.gateway import BatchResult, Write, WriteGateway
from data_plane.periods import Period, uncovered
from data_plane.records import Grounding

__all__ = ["Dropped", "find_dropped", "restore_dropped"]

# Restored in this order, so that edges and links find their concepts' periods restored first.
TABLES: Final = ("concepts", "lessons", "concept_edges", "lesson_concepts")
_CONTENT: Final[dict[str, tuple[str, ...]]] = {
    "concepts": ("name", "aliases", "summary"),
    "lessons": ("title",),
    "concept_edges": (),
    "lesson_concepts": (),
}


@dataclass(frozen=True)
class Dropped:
    """A part of a version's valid period that no current version covers any more."""

    table: str
    key: tuple[str, ...]
    period: Period
    version_id: int  # the version whose period it was
    dropped_by: int  # the version that superseded it
    row: Mapping[str, Any]  # that version's columns (content and grounding)

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "key": list(self.key),
            "valid_at": format_time(self.period.start),
            "invalid_at": format_time(self.period.end),
            "version_id": self.version_id,
            "dropped_by": self.dropped_by,
        }

    def grounding(self) -> Grounding:
        r = self.row
        return Grounding(
            confidence=r["confidence"],
            reason=(
                f"restored: valid {format_time(self.period.start)}..{format_time(self.period.end) or 'open'} "
                f"of version {self.version_id}, dropped when version {self.dropped_by} superseded it under "
                f"the old revision rule (kg audit restore-periods); its reason: {r['reason']}"
            ),
            source=r["source"],
            evidence=r["evidence"],
        )


def _closed_with_later_successors(conn: sa.Connection, table: sa.Table) -> Iterator[dict[str, Any]]:
    """Closed versions in force (not retractions) whose successors all start later than they did,
    newest closing first, with the first successor's start and id."""
    s = table.alias("s")
    first = (
        sa.select(
            s.c.supersedes_id.label("vid"),
            sa.func.min(s.c.valid_at).label("next_start"),
            sa.func.min(s.c.version_id).label("next_id"),
        )
        .where(s.c.supersedes_id.is_not(None))
        .group_by(s.c.supersedes_id)
        .subquery()
    )
    stmt = (
        sa.select(table, first.c.next_start, first.c.next_id)
        .join(first, first.c.vid == table.c.version_id)
        .where(
            table.c.expired_at.is_not(None), table.c.op != "retract", first.c.next_start > table.c.valid_at
        )
        .order_by(table.c.expired_at.desc(), table.c.version_id.desc())
    )
    for row in conn.execute(stmt).mappings():
        yield dict(row)


def _current(conn: sa.Connection, table: sa.Table) -> dict[tuple[str, ...], list[dict[str, Any]]]:
    keys = schema.KEY_COLUMNS[table.name]
    out: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
    stmt = sa.select(*(table.c[k] for k in keys), table.c.op, table.c.valid_at, table.c.invalid_at).where(
        table.c.expired_at.is_(None)
    )
    for row in conn.execute(stmt).mappings():
        out[tuple(row[k] for k in keys)].append(dict(row))
    return out


def find_dropped(engine: Engine) -> list[Dropped]:
    """Every valid period the old rule dropped and no current version covers (module docstring),
    concepts and lessons first; edges and lesson links only where their concepts hold (as they
    will once the concepts' periods are restored)."""
    out: list[Dropped] = []
    held: dict[str, list[Period]] = defaultdict(list)  # concept id -> periods in force after restoring
    with engine.connect() as conn:
        for name in TABLES:
            table = schema.metadata.tables[name]
            keys = schema.KEY_COLUMNS[name]
            current = _current(conn, table)
            covered = {
                k: [Period(r["valid_at"], r["invalid_at"]) for r in rows] for k, rows in current.items()
            }
            if name == "concepts":
                for (cid,), rows in current.items():
                    held[cid] += [
                        Period(r["valid_at"], r["invalid_at"]) for r in rows if r["op"] != "retract"
                    ]
            for row in _closed_with_later_successors(conn, table):
                key = tuple(row[k] for k in keys)
                if not any(r["op"] != "retract" for r in current.get(key, ())):
                    continue  # withdrawn (or never current again): nothing to restore
                end = (
                    row["invalid_at"]
                    if row["invalid_at"] is not None and row["invalid_at"] < row["next_start"]
                    else row["next_start"]
                )
                gaps = uncovered(Period(row["valid_at"], end), covered.get(key, []))
                for gap in gaps:
                    for part in _where_concepts_hold(name, key, gap, held):
                        out.append(Dropped(name, key, part, row["version_id"], row["next_id"], row))
                        covered.setdefault(key, []).append(part)
                        if name == "concepts":
                            held[key[0]].append(part)
    return out


def _where_concepts_hold(
    name: str, key: tuple[str, ...], gap: Period, held: Mapping[str, list[Period]]
) -> list[Period]:
    """The parts of ``gap`` in which every concept an edge or link points at holds."""
    if name not in ("concept_edges", "lesson_concepts"):
        return [gap]
    parts = [gap]
    for cid in key[:2] if name == "concept_edges" else key[1:]:
        periods = held.get(cid, [])
        nxt: list[Period] = []
        for p in parts:
            # What of p the concept covers: p minus the parts of p it does not.
            missing = uncovered(p, periods)
            nxt += uncovered(p, missing) if missing else [p]
        parts = [p for p in nxt if not p.is_empty()]
    return parts


def restore_dropped(gateway: WriteGateway, dropped: list[Dropped]) -> dict[str, int]:
    """Write every dropped period back (one transaction); returns how many per table."""
    counts: dict[str, int] = dict.fromkeys(TABLES, 0)
    if not dropped:
        return counts
    with gateway.bulk() as bulk:
        for name in TABLES:
            # One write per key and batch: a key with several dropped parts takes several batches.
            rounds: list[list[Write]] = []
            seen: dict[tuple[str, ...], int] = defaultdict(int)
            for d in (d for d in dropped if d.table == name):
                i = seen[d.key]
                seen[d.key] += 1
                if i == len(rounds):
                    rounds.append([])
                content = {c: d.row[c] for c in _CONTENT[name]}
                rounds[i].append(
                    Write(name, d.key, "assert", d.grounding(), content, d.period.start, d.period.end)
                )
            for batch in rounds:
                result: BatchResult = bulk.apply(batch)
                counts[name] += len(result.written)
    return counts
