"""Raw-driver comparators for ``kg bench``: the floor our code is measured against, same run.

Each comparator does the same work as one of ours with the bare DB-API driver (``sqlite3``, or
``psycopg`` on PostgreSQL) and hand-written SQL, no SQLAlchemy and no record building:

* :func:`raw_expansion`: the neighbourhood read (the given ids, both directions, the
  bi-temporal filter on edge and concept, the same thin columns, the same exclusions) on the
  same database file, so the same indexes (including the partial ones) serve it;
* :func:`raw_insert`: the same rows an import writes (concepts, edges, lessons, lesson links)
  inserted by ``executemany`` in one transaction into a freshly migrated database;
* :func:`raw_export`: the rows in force selected by one ``SELECT`` per table and written with
  ``csv.writer`` to the same bundle files (same columns, same cell formats).

They are benchmarks' helpers, not product code: nothing outside ``evals`` imports them.
"""

from __future__ import annotations

import csv
import json
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from data_plane.bundle_rows import GROUNDING_COLUMNS as _BUNDLE_GROUNDING

__all__ = ["RawDriver", "raw_export", "raw_insert"]

_EDGE = ("version_id", "source_id", "target_id", "relation", "confidence")
_CONCEPT = ("version_id", "concept_id", "name", "summary")
_GROUNDING = ("confidence", "reason", "source", "evidence", "valid_at", "invalid_at")


def _in_force(alias: str, p: str) -> str:
    return (
        f"{alias}.op <> 'retract' AND {alias}.recorded_at <= {p} AND "
        f"({alias}.expired_at IS NULL OR {alias}.expired_at > {p}) AND {alias}.valid_at <= {p} AND "
        f"({alias}.invalid_at IS NULL OR {alias}.invalid_at > {p})"
    )


class RawDriver:
    """A bare DB-API connection to the benchmark database, with its parameter style and the
    way it wants time stamps (SQLite: the stored naive-UTC text; PostgreSQL: datetimes)."""

    def __init__(self, url: str) -> None:
        self.sqlite = url.startswith("sqlite")
        if self.sqlite:
            self.conn: Any = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
            self.p = "?"
        else:
            import psycopg

            self.conn = psycopg.connect(
                url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True
            )
            self.p = "%s"

    def stamp(self, t: datetime) -> Any:
        # The stored text always has six fractional digits; ``isoformat`` drops them when they
        # are zero, and "... 00:00:00" sorts before "... 00:00:00.000000", so a version closed at
        # exactly that time would still be read as in force.
        return t.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f") if self.sqlite else t

    def close(self) -> None:
        self.conn.close()

    def expansion(
        self, ids: Sequence[str], exclude: Sequence[str], valid: datetime, known: datetime
    ) -> list[Any]:
        """The neighbourhood read, hand-written: a UNION ALL of the two directions."""
        p = self.p
        halves, params = [], []
        v, k = self.stamp(valid), self.stamp(known)
        for direction, near, far in (("out", "source_id", "target_id"), ("in", "target_id", "source_id")):
            cols = ", ".join([*(f"e.{c}" for c in _EDGE), *(f"c.{c}" for c in _CONCEPT), f"e.{near}"])
            sql = (
                f"SELECT {cols}, '{direction}' FROM concept_edges e JOIN concepts c ON c.concept_id = e.{far} "
                f"WHERE e.{near} IN ({', '.join([p] * len(ids))})"
            )
            params += list(ids)
            if exclude:
                sql += f" AND e.{far} NOT IN ({', '.join([p] * len(exclude))})"
                params += list(exclude)
            sql += " AND " + _in_force("e", p)
            sql += " AND " + _in_force("c", p)
            params += [k, k, v, v, k, k, v, v]
            halves.append(sql)
        cur = self.conn.cursor()
        cur.execute(" UNION ALL ".join(halves), params)
        return list(cur.fetchall())


def raw_insert(url: str, tables: Mapping[str, tuple[Sequence[str], Sequence[tuple[Any, ...]]]]) -> float:
    """Insert ``tables`` (name -> (columns, rows)) in one transaction; return seconds."""
    raw = RawDriver(url)
    try:
        t0 = time.perf_counter()
        cur = raw.conn.cursor()
        if raw.sqlite:
            cur.execute("BEGIN")
        else:
            raw.conn.autocommit = False
        for name, (cols, rows) in tables.items():
            marks = ", ".join([raw.p] * len(cols))
            cur.executemany(f"INSERT INTO {name} ({', '.join(cols)}) VALUES ({marks})", rows)
        if raw.sqlite:
            cur.execute("COMMIT")
        else:
            raw.conn.commit()
        return time.perf_counter() - t0
    finally:
        raw.close()


def _time_cell(sqlite: bool) -> Callable[[Any], str]:
    if sqlite:
        return lambda t: "" if t is None else t.replace(" ", "T") + "Z"
    return lambda t: "" if t is None else t.isoformat().replace("+00:00", "Z")


def raw_export(url: str, valid: datetime, known: datetime, folder: Path) -> dict[str, int]:
    """The rows in force as of (valid, known), one SELECT per table, written as bundle CSVs."""
    raw = RawDriver(url)
    folder.mkdir(parents=True, exist_ok=True)
    cell = _time_cell(raw.sqlite)
    p, v, k = raw.p, raw.stamp(valid), raw.stamp(known)
    where = _in_force("t", p)
    binds = [k, k, v, v]
    g = ", ".join(f"t.{c}" for c in _GROUNDING)

    def evidence(x: Any) -> str:
        return x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)

    def grounding(r: Sequence[Any]) -> tuple[str, ...]:
        conf, reason, source, ev, va, ia = r
        return (repr(float(conf)), reason, source, evidence(ev), cell(va), cell(ia))

    def aliases(x: Any) -> str:
        return "|".join(json.loads(x) if isinstance(x, str) else x)

    counts: dict[str, int] = {}
    try:
        cur = raw.conn.cursor()
        plans: list[tuple[str, str, Sequence[str], Callable[[Sequence[Any]], tuple[Any, ...]]]] = [
            (
                "concepts.csv",
                f"SELECT t.concept_id, t.name, t.aliases, t.summary, {g} FROM concepts t WHERE {where} "
                "ORDER BY t.concept_id",
                ("id", "name", "aliases", "summary", *_BUNDLE_GROUNDING),
                lambda r: (r[0], r[1], aliases(r[2]), r[3], *grounding(r[4:])),
            ),
            (
                "concept_edges.csv",
                f"SELECT t.source_id, t.target_id, t.relation, {g} FROM concept_edges t WHERE {where} "
                "ORDER BY t.source_id, t.relation, t.target_id",
                ("source_id", "target_id", "relation", *_BUNDLE_GROUNDING),
                lambda r: (r[0], r[1], r[2], *grounding(r[3:])),
            ),
        ]
        for file, sql, header, convert in plans:
            cur.execute(sql, binds)
            n = 0
            with (folder / file).open("w", encoding="utf-8", newline="") as fh:
                w = csv.writer(fh, lineterminator="\n")
                w.writerow(header)
                while rows := cur.fetchmany(5000):
                    w.writerows(convert(r) for r in rows)
                    n += len(rows)
            counts[file] = n
        cur.execute(f"SELECT t.lesson_id, t.title FROM lessons t WHERE {where}", binds)
        titles = dict(cur.fetchall())
        cur.execute(
            f"SELECT t.lesson_id, t.concept_id, {g} FROM lesson_concepts t WHERE {where} "
            "ORDER BY t.lesson_id, t.concept_id",
            binds,
        )
        n = 0
        with (folder / "lesson_concepts.csv").open("w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(("lesson_id", "lesson_title", "concept_id", *_BUNDLE_GROUNDING))
            while rows := cur.fetchmany(5000):
                w.writerows((r[0], titles.get(r[0], r[0]), r[1], *grounding(r[2:])) for r in rows)
                n += len(rows)
        counts["lesson_concepts.csv"] = n
    finally:
        raw.close()
    return counts
