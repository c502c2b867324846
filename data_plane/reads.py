"""Temporal reads of the graph: neighbourhoods, history, snapshots, diffs.

Every read takes an :class:`~data_plane.temporal.AsOf` (valid time, recorded time); the one
temporal rule is compiled to SQL by ``AsOf.clause``. Reads never write and never block writers.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Iterator
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine

from data_plane import schema
from data_plane.clock import Clock, ensure_utc, utc_now
from data_plane.errors import NotFound
from data_plane.records import Concept, Diff, Edge, Neighbour, Snapshot, Version
from data_plane.relations import canonical_edge, edge_key
from data_plane.rows import concept_from_row, edge_from_row, version_from_row
from data_plane.temporal import AS_OF_PARAMS, AsOf, in_force

_CHUNK = 500
C, E = schema.concepts, schema.concept_edges


# Column positions of the neighbourhood statement's rows: edge columns, then concept columns.
_E_COLS = tuple(col.name for col in E.c)
_C_COLS = tuple(col.name for col in C.c)
_E_END = len(_E_COLS)
_C_END = _E_END + len(_C_COLS)


@functools.cache
def _neighbourhood_statement(with_relations: bool) -> sa.CompoundSelect[Any]:
    """Built once per shape; executed with ``ids``/``exclude``/``relations`` (expanding binds)
    and the as-of binds, so each read skips expression building and hits the compiled cache."""
    as_of_valid, as_of_recorded = AS_OF_PARAMS
    ids: sa.BindParameter[list[str]] = sa.bindparam("ids", expanding=True)
    exclude: sa.BindParameter[list[str]] = sa.bindparam("exclude", expanding=True)
    relations: sa.BindParameter[list[str]] = sa.bindparam("relations", expanding=True)
    halves = []
    for direction, near, far in (("out", E.c.source_id, E.c.target_id), ("in", E.c.target_id, E.c.source_id)):
        c = C.alias(f"c_{direction}")
        stmt = (
            sa.select(
                *(col.label(f"e_{col.name}") for col in E.c),
                *(col.label(f"c_{col.name}") for col in c.c),
                near.label("from_id"),
                sa.literal(direction).label("direction"),
            )
            .select_from(E.join(c, c.c.concept_id == far))
            .where(
                near.in_(ids),
                far.not_in(exclude),
                in_force(E, as_of_valid, as_of_recorded),
                in_force(c, as_of_valid, as_of_recorded),
            )
        )
        if with_relations:
            stmt = stmt.where(E.c.relation.in_(relations))
        halves.append(stmt)
    return sa.union_all(*halves)


def neighbourhood_statement(
    ids: Collection[str],
    as_of: AsOf,
    *,
    relations: Collection[str] | None = None,
    exclude: Collection[str] = (),
) -> tuple[sa.CompoundSelect[Any], dict[str, Any]]:
    """One SQL statement and its parameters: the active neighbours of ``ids`` in both directions.

    Each half enters ``concept_edges`` through an index on the end it starts from
    (``ix_concept_edges_key_recorded``, led by ``source_id``, and
    ``ix_concept_edges_target_recorded``) and joins the neighbour's
    version through ``ix_concepts_key_recorded``, so the cost follows the degree of ``ids`` and
    the number of versions per key, not the size of the graph.
    """
    params: dict[str, Any] = {"ids": sorted(ids), "exclude": sorted(exclude), **as_of.params()}
    if relations is not None:
        params["relations"] = sorted(relations)
    return _neighbourhood_statement(relations is not None), params


class GraphReader:
    """Read-only, temporal access to the graph."""

    def __init__(self, engine: Engine, *, clock: Clock = utc_now) -> None:
        self._engine = engine
        self._clock = clock

    @property
    def engine(self) -> Engine:
        return self._engine

    def as_of(self, valid_at: datetime | None = None, recorded_at: datetime | None = None) -> AsOf:
        """An ``AsOf`` whose missing times default to now."""
        return AsOf.at(self._clock, valid_at, recorded_at)

    # -- neighbourhoods ---------------------------------------------------------------------

    def neighbourhood(
        self,
        ids: Collection[str],
        *,
        as_of: AsOf | None = None,
        relations: Collection[str] | None = None,
        exclude: Collection[str] = (),
    ) -> list[Neighbour]:
        """Active neighbours of ``ids`` (both directions), in one round trip, ordered by edge key."""
        if not ids:
            return []
        as_of = as_of or self.as_of()
        stmt, params = neighbourhood_statement(ids, as_of, relations=relations, exclude=exclude)
        with self._engine.connect() as conn:
            rows = conn.execute(stmt, params).all()
        out = [
            Neighbour(
                edge=edge_from_row(dict(zip(_E_COLS, r[:_E_END], strict=True))),
                concept=concept_from_row(dict(zip(_C_COLS, r[_E_END:_C_END], strict=True))),
                from_id=r[_C_END],
                direction=r[_C_END + 1],
            )
            for r in rows
        ]
        out.sort(key=lambda n: (n.edge.key, n.from_id))
        return out

    # -- concepts and edges -------------------------------------------------------------------

    def concepts(self, ids: Iterable[str], *, as_of: AsOf | None = None) -> dict[str, Concept]:
        """The versions of ``ids`` in force as of ``as_of`` (missing ids are absent)."""
        as_of = as_of or self.as_of()
        wanted = sorted(set(ids))
        out: dict[str, Concept] = {}
        with self._engine.connect() as conn:
            for i in range(0, len(wanted), _CHUNK):
                stmt = sa.select(C).where(C.c.concept_id.in_(wanted[i : i + _CHUNK]), as_of.clause(C))
                for r in conn.execute(stmt).mappings():
                    out[r["concept_id"]] = concept_from_row(r)
        return out

    def concept(self, concept_id: str, *, as_of: AsOf | None = None) -> Concept:
        found = self.concepts([concept_id], as_of=as_of)
        if concept_id not in found:
            raise NotFound(f"no active concept {concept_id!r}", key=concept_id)
        return found[concept_id]

    def all_concepts(
        self, *, as_of: AsOf | None = None, after: str | None = None, limit: int | None = None
    ) -> list[Concept]:
        """Concepts in force, by id; a page of at most ``limit`` with ids after ``after`` if given."""
        as_of = as_of or self.as_of()
        stmt = sa.select(C).where(as_of.clause(C)).order_by(C.c.concept_id)
        if after is not None:
            stmt = stmt.where(C.c.concept_id > after)
        if limit is not None:
            stmt = stmt.limit(limit)
        with self._engine.connect() as conn:
            return [concept_from_row(r) for r in conn.execute(stmt).mappings()]

    def concept_labels(self, *, as_of: AsOf | None = None) -> Iterator[tuple[str, str, tuple[str, ...]]]:
        """``(concept id, name, aliases)`` of every concept in force, streamed in batches: for
        building a name index without materialising whole concept records (a 10^6-edge graph has
        ~200,000 concepts)."""
        as_of = as_of or self.as_of()
        stmt = sa.select(C.c.concept_id, C.c.name, C.c.aliases).where(as_of.clause(C))
        with self._engine.connect() as conn:
            for cid, name, aliases in conn.execution_options(yield_per=5000).execute(stmt):
                yield cid, name, tuple(aliases or ())

    def relation_counts(self, *, as_of: AsOf | None = None) -> dict[str, int]:
        """Active edges per relation as of ``as_of`` (which relations are in force at all)."""
        as_of = as_of or self.as_of()
        stmt = sa.select(E.c.relation, sa.func.count()).where(as_of.clause(E)).group_by(E.c.relation)
        with self._engine.connect() as conn:
            return {rel: int(n) for rel, n in conn.execute(stmt)}

    def lesson_links(
        self, concept_ids: Iterable[str], *, as_of: AsOf | None = None
    ) -> list[tuple[Version, str]]:
        """Active ``lesson_concepts`` links of ``concept_ids`` as of ``as_of``, each with its
        lesson's title ("" when the lesson row is not in force), ordered by lesson then concept."""
        as_of = as_of or self.as_of()
        L, LC = schema.lessons, schema.lesson_concepts
        wanted = sorted(set(concept_ids))
        out: list[tuple[Version, str]] = []
        with self._engine.connect() as conn:
            for i in range(0, len(wanted), _CHUNK):
                stmt = sa.select(LC).where(LC.c.concept_id.in_(wanted[i : i + _CHUNK]), as_of.clause(LC))
                out += [(version_from_row("lesson_concepts", r), "") for r in conn.execute(stmt).mappings()]
            lesson_ids = sorted({v.key[0] for v, _ in out})
            titles: dict[str, str] = {}
            for i in range(0, len(lesson_ids), _CHUNK):
                stmt = sa.select(L.c.lesson_id, L.c.title).where(
                    L.c.lesson_id.in_(lesson_ids[i : i + _CHUNK]), as_of.clause(L)
                )
                titles.update({lid: title for lid, title in conn.execute(stmt)})
        out = [(v, titles.get(v.key[0], "")) for v, _ in out]
        return sorted(out, key=lambda vt: vt[0].key)

    def edge(self, source_id: str, target_id: str, relation: str, *, as_of: AsOf | None = None) -> Edge:
        as_of = as_of or self.as_of()
        s, t, r = canonical_edge(source_id, target_id, relation)
        stmt = sa.select(E).where(E.c.source_id == s, E.c.target_id == t, E.c.relation == r, as_of.clause(E))
        with self._engine.connect() as conn:
            row = conn.execute(stmt).mappings().first()
        if row is None:
            raise NotFound(f"no active edge {edge_key(s, t, r)!r}", key=edge_key(s, t, r))
        return edge_from_row(row)

    def edges_by_version(self, version_ids: Iterable[int]) -> dict[int, Edge]:
        """Edge versions by id, whatever their time stamps (for verifying citations)."""
        wanted = sorted(set(version_ids))
        out: dict[int, Edge] = {}
        with self._engine.connect() as conn:
            for i in range(0, len(wanted), _CHUNK):
                for r in conn.execute(
                    sa.select(E).where(E.c.version_id.in_(wanted[i : i + _CHUNK]))
                ).mappings():
                    out[r["version_id"]] = edge_from_row(r)
        return out

    def degrees(self, ids: Iterable[str], *, as_of: AsOf | None = None) -> dict[str, int]:
        """Number of active edges touching each id (0 for none)."""
        as_of = as_of or self.as_of()
        wanted = sorted(set(ids))
        counts = dict.fromkeys(wanted, 0)
        if not wanted:
            return counts
        with self._engine.connect() as conn:
            for end in (E.c.source_id, E.c.target_id):
                stmt = sa.select(end, sa.func.count()).where(end.in_(wanted), as_of.clause(E)).group_by(end)
                for cid, n in conn.execute(stmt):
                    counts[cid] += n
        return counts

    # -- audit ------------------------------------------------------------------------------

    def history(self, table_name: str, key: tuple[str, ...]) -> list[Version]:
        """Every version of one key, oldest first, with its grounding and stamps."""
        table = schema.metadata.tables[table_name]
        if table_name == "concept_edges":
            key = canonical_edge(*key)
        cond = [table.c[col] == part for col, part in zip(schema.KEY_COLUMNS[table_name], key, strict=True)]
        stmt = sa.select(table).where(*cond).order_by(table.c.recorded_at, table.c.version_id)
        with self._engine.connect() as conn:
            rows = [version_from_row(table_name, r) for r in conn.execute(stmt).mappings()]
        if not rows:
            raise NotFound(f"{table_name}: no history for {'/'.join(key)!r}", key="/".join(key))
        return rows

    def snapshot(self, as_of: AsOf | None = None) -> Snapshot:
        """The whole graph in force as of ``as_of``."""
        as_of = as_of or self.as_of()
        L, LC = schema.lessons, schema.lesson_concepts
        with self._engine.connect() as conn:
            concepts = [
                concept_from_row(r)
                for r in conn.execute(sa.select(C).where(as_of.clause(C)).order_by(C.c.concept_id)).mappings()
            ]
            edges = [
                edge_from_row(r)
                for r in conn.execute(
                    sa.select(E).where(as_of.clause(E)).order_by(E.c.source_id, E.c.relation, E.c.target_id)
                ).mappings()
            ]
            lessons = [
                version_from_row("lessons", r)
                for r in conn.execute(sa.select(L).where(as_of.clause(L)).order_by(L.c.lesson_id)).mappings()
            ]
            links = [
                version_from_row("lesson_concepts", r)
                for r in conn.execute(
                    sa.select(LC).where(as_of.clause(LC)).order_by(LC.c.lesson_id, LC.c.concept_id)
                ).mappings()
            ]
        return Snapshot(
            as_of.valid_at, as_of.recorded_at, tuple(concepts), tuple(edges), tuple(links), tuple(lessons)
        )

    def diff(self, since: datetime, until: datetime, *, tables: Iterable[str] | None = None) -> Diff:
        """Versions recorded in ``(since, until]``, grouped by what they did."""
        since, until = ensure_utc(since, field="from"), ensure_utc(until, field="to")
        names = (
            list(tables)
            if tables is not None
            else ["concepts", "concept_edges", "lessons", "lesson_concepts"]
        )
        groups: dict[str, list[Version]] = {"assert": [], "revise": [], "invalidate": [], "retract": []}
        with self._engine.connect() as conn:
            for name in names:
                t = schema.metadata.tables[name]
                stmt = (
                    sa.select(t)
                    .where(t.c.recorded_at > since, t.c.recorded_at <= until)
                    .order_by(t.c.recorded_at, t.c.version_id)
                )
                for r in conn.execute(stmt).mappings():
                    groups[r["op"]].append(version_from_row(name, r))
        return Diff(
            since,
            until,
            tuple(groups["assert"]),
            tuple(groups["revise"]),
            tuple(groups["invalidate"]),
            tuple(groups["retract"]),
        )

    def answers(
        self,
        *,
        since: datetime | None = None,
        limit: int = 100,
        before: tuple[datetime, int] | None = None,
    ) -> list[Version]:
        """Recorded answers (current versions), newest first; ``before`` (recorded_at, version_id)
        of the last answer of a previous page continues after it."""
        A = schema.answers
        stmt = sa.select(A).where(A.c.expired_at.is_(None))
        if since is not None:
            stmt = stmt.where(A.c.recorded_at >= ensure_utc(since, field="since"))
        if before is not None:
            at = ensure_utc(before[0], field="cursor")
            stmt = stmt.where(
                sa.or_(A.c.recorded_at < at, sa.and_(A.c.recorded_at == at, A.c.version_id < before[1]))
            )
        stmt = stmt.order_by(A.c.recorded_at.desc(), A.c.version_id.desc()).limit(limit)
        with self._engine.connect() as conn:
            return [version_from_row("answers", r) for r in conn.execute(stmt).mappings()]

    def answer(self, answer_id: str) -> Version:
        A = schema.answers
        stmt = sa.select(A).where(A.c.answer_id == answer_id, A.c.expired_at.is_(None))
        with self._engine.connect() as conn:
            row = conn.execute(stmt).mappings().first()
        if row is None:
            raise NotFound(f"no recorded answer {answer_id!r}", key=answer_id)
        return version_from_row("answers", row)

    def explain_neighbourhood(self, ids: Collection[str], as_of: AsOf | None = None) -> list[str]:
        """The engine's query plan for :meth:`neighbourhood` (for docs and the plan test)."""
        as_of = as_of or self.as_of()
        stmt, params = neighbourhood_statement(ids, as_of)
        with self._engine.connect() as conn:
            prefix = "EXPLAIN QUERY PLAN " if conn.dialect.name == "sqlite" else "EXPLAIN "

            def _explain(_c: Any, _cur: Any, statement: str, params: Any, _ctx: Any, _many: bool) -> Any:
                return prefix + statement, params

            # Let SQLAlchemy compile and bind exactly as the real read does; only the verb changes.
            event.listen(conn, "before_cursor_execute", _explain, retval=True)
            try:
                rows = conn.execute(stmt, params)
                return [" ".join(str(c) for c in row) for row in rows.cursor.fetchall()]
            finally:
                event.remove(conn, "before_cursor_execute", _explain)
