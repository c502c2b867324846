"""Temporal reads of the graph: neighbourhoods, history, snapshots, diffs.

Every read takes an :class:`~data_plane.temporal.AsOf` (valid time, recorded time); the one
temporal rule is compiled to SQL by ``AsOf.clause``. Reads never write and never block writers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from operator import itemgetter
from typing import Any, Final, NamedTuple, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Dialect, Engine

from data_plane import schema, write_clock
from data_plane.clock import Clock, ensure_utc, utc_now
from data_plane.errors import NotFound
from data_plane.explain import explain
from data_plane.records import (
    Concept,
    ConceptRow,
    Diff,
    Edge,
    EdgeRow,
    Neighbour,
    RequirementGroup,
    RequirementMember,
    Snapshot,
    Version,
)
from data_plane.relations import canonical_edge, edge_key
from data_plane.rows import (
    RECORD_COLUMNS,
    concept_from_row,
    edge_from_row,
    grounding_from_row,
    member_from_row,
    record_from_values,
    stamp_from_row,
    version_from_row,
)
from data_plane.sidecar import queue_of, queued_answer, side_path
from data_plane.temporal import AS_OF_PARAMS, AsOf, in_force

_CHUNK = 500
# Rows per fetch of a streamed read (a server-side cursor's page on PostgreSQL).
_STREAM_BATCH = 2000
# The tables a diff covers, in the order it reports them.
DIFF_TABLES: Final = (
    "concepts",
    "concept_edges",
    "lessons",
    "lesson_concepts",
    "requirement_groups",
    "requirement_members",
)
_T = TypeVar("_T")
# The order streamed reads list each table in (edges by source, relation, target).
_ORDER: Final = {**schema.KEY_COLUMNS, "concept_edges": ("source_id", "relation", "target_id")}
C, E = schema.concepts, schema.concept_edges
G, M = schema.requirement_groups, schema.requirement_members


# What a neighbourhood row carries: the thin edge and concept columns only (no JSON, no stamps).
_EDGE_ROW = ("version_id", "source_id", "target_id", "relation", "confidence")
_CONCEPT_ROW = ("version_id", "concept_id", "name", "summary")


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
                *(E.c[name].label(f"e_{name}") for name in _EDGE_ROW),
                *(c.c[name].label(f"c_{name}") for name in _CONCEPT_ROW),
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


def _record_columns(table: sa.Table, kind: str) -> list[sa.ColumnElement[Any]]:
    """A records row of ``table``: its kind, then ``RECORD_COLUMNS`` (typed NULLs for the
    other table's key and content columns)."""
    other = C if table is E else E
    return [
        sa.literal(kind).label("kind"),
        *(
            table.c[name].label(name)
            if name in table.c
            else sa.cast(sa.null(), other.c[name].type).label(name)
            for name in RECORD_COLUMNS
        ),
    ]


@functools.cache
def _concepts_statement() -> sa.Select[Any]:
    """Concept versions in force by id (expanding ``ids``, the as-of binds), as records rows:
    built once, and expanded once per size by :func:`_concepts_shape`."""
    ids: sa.BindParameter[list[str]] = sa.bindparam("ids", expanding=True)
    return sa.select(*_record_columns(C, "concept")).where(
        C.c.concept_id.in_(ids), in_force(C, *AS_OF_PARAMS)
    )


@functools.cache
def _degrees_statement() -> sa.CompoundSelect[Any]:
    """Active edges per id at either end (expanding ``ids``, the as-of binds), built once."""
    ids: sa.BindParameter[list[str]] = sa.bindparam("ids", expanding=True)
    halves = [
        sa.select(end, sa.func.count()).where(end.in_(ids), in_force(E, *AS_OF_PARAMS)).group_by(end)
        for end in (E.c.source_id, E.c.target_id)
    ]
    return sa.union_all(*halves)


@functools.cache
def _relation_degrees_statement() -> sa.CompoundSelect[Any]:
    """Active edges per (id, relation) at either end (expanding ``ids``, the as-of binds)."""
    ids: sa.BindParameter[list[str]] = sa.bindparam("ids", expanding=True)
    halves = [
        sa.select(end, E.c.relation, sa.func.count())
        .where(end.in_(ids), in_force(E, *AS_OF_PARAMS))
        .group_by(end, E.c.relation)
        for end in (E.c.source_id, E.c.target_id)
    ]
    return sa.union_all(*halves)


@functools.cache
def _records_statement() -> sa.CompoundSelect[Any]:
    """Edge and concept versions by id in one statement: a UNION ALL of both tables, each
    padded with typed NULLs for the other's key and content columns."""

    def half(table: sa.Table, kind: str, ids: str) -> sa.Select[Any]:
        return sa.select(*_record_columns(table, kind)).where(
            table.c.version_id.in_(sa.bindparam(ids, expanding=True))
        )

    return sa.union_all(half(C, "concept", "concepts"), half(E, "edge", "edges"))


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


class _Binds(NamedTuple):
    """How an expanded statement takes its values: its own literal binds ('out', 'retract', ...)
    and the variable ones, named in the order a caller passes their values."""

    fixed: dict[str, Any]
    names: tuple[str, ...]
    # Positional drivers: picks the parameters, in order, from [*fixed values, *variable values]
    # (one C-level call instead of a dict of names per read); None for named parameters.
    take: Callable[[Sequence[Any]], tuple[Any, ...]] | None

    @classmethod
    def of(cls, expanded: Any, names: Sequence[str]) -> _Binds:
        variable = set(names)
        fixed = {k: v for k, v in expanded.parameters.items() if k not in variable}
        if expanded.positiontup is None:
            return cls(fixed, tuple(names), None)
        index = {name: i for i, name in enumerate([*fixed, *names])}
        picks = [index[name] for name in expanded.positiontup]
        take = itemgetter(*picks) if len(picks) > 1 else lambda src: (src[picks[0]],)
        return cls(fixed, tuple(names), take)

    def params(self, values: Sequence[Any]) -> tuple[Any, ...] | dict[str, Any]:
        """The driver's parameters for ``values`` (of the variable binds, in order)."""
        if self.take is None:
            return {**self.fixed, **dict(zip(self.names, values, strict=True))}
        return self.take([*self.fixed.values(), *values])


class _Shape(NamedTuple):
    """The neighbourhood statement expanded for one shape, as the driver takes it: its values
    are the two as-of times, then the ids, exclusions and relations."""

    sql: str
    binds: _Binds


@functools.lru_cache(maxsize=1024)
def _shape(dialect: Dialect, n_ids: int, n_exclude: int, n_relations: int | None) -> _Shape:
    """SQLAlchemy compiles and expands the statement once per (dialect, number of ids,
    exclusions, relations); each read then only fills in values, skipping the per-execution
    cache-key, expansion and bind-processing work (a third of a small read's time)."""
    compiled = _neighbourhood_statement(n_relations is not None).compile(dialect=dialect)
    probe: dict[str, Any] = {
        "ids": [""] * n_ids,
        "exclude": [""] * n_exclude,
        "as_of_valid": None,
        "as_of_recorded": None,
    }
    if n_relations is not None:
        probe["relations"] = [""] * n_relations
    expanded = compiled.construct_expanded_state(probe)
    names = [
        "as_of_valid",
        "as_of_recorded",
        *(f"ids_{i}" for i in range(1, n_ids + 1)),
        *(f"exclude_{i}" for i in range(1, n_exclude + 1)),
        *(f"relations_{i}" for i in range(1, (n_relations or 0) + 1)),
    ]
    return _Shape(expanded.statement, _Binds.of(expanded, names))


class _RecordsShape(NamedTuple):
    """A statement of records rows (the records and the concepts statements) expanded for
    padded id-list sizes, as the driver takes it, with the type of each column (their result
    processors come from :func:`_processors`)."""

    sql: str
    binds: _Binds
    types: tuple[Any, ...]


def _padded(n: int) -> int:
    """The id-list size a records statement is compiled for: the next power of two (at least 8),
    so a handful of shapes serve every answer (padded with ids that match nothing, or with
    repeats of an id: ``IN`` matches a row once however often its value is listed)."""
    return max(8, 1 << (n - 1).bit_length())


@functools.lru_cache(maxsize=256)
def _records_shape(dialect: Dialect, n_edges: int, n_concepts: int) -> _RecordsShape:
    """Compiled and expanded once per (dialect, padded sizes), like :func:`_shape`: grounding an
    answer then costs the driver's execution and one pass of column processors."""
    stmt = _records_statement()
    compiled = stmt.compile(dialect=dialect)
    expanded = compiled.construct_expanded_state({"edges": [0] * n_edges, "concepts": [0] * n_concepts})
    names = [
        *(f"edges_{i}" for i in range(1, n_edges + 1)),
        *(f"concepts_{i}" for i in range(1, n_concepts + 1)),
    ]
    return _RecordsShape(
        expanded.statement, _Binds.of(expanded, names), tuple(c.type for c in stmt.selected_columns)
    )


@functools.lru_cache(maxsize=64)
def _concepts_shape(dialect: Dialect, n_ids: int) -> _RecordsShape:
    """The concepts statement expanded once per (dialect, padded size); its values are the two
    as-of times (processed with :func:`_as_of_processor`), then the ids."""
    stmt = _concepts_statement()
    probe = {"ids": [""] * n_ids, "as_of_valid": None, "as_of_recorded": None}
    expanded = stmt.compile(dialect=dialect).construct_expanded_state(probe)
    names = ["as_of_valid", "as_of_recorded", *(f"ids_{i}" for i in range(1, n_ids + 1))]
    return _RecordsShape(
        expanded.statement, _Binds.of(expanded, names), tuple(c.type for c in stmt.selected_columns)
    )


@functools.cache
def _as_of_processor(dialect: Dialect) -> Callable[[Any], Any]:
    """How the driver takes an as-of time (SQLite: naive UTC text)."""
    process = AS_OF_PARAMS[0].type.dialect_impl(dialect).bind_processor(dialect)
    return process or (lambda t: t)


def _fetch_records(
    conn: sa.Connection, shape: _RecordsShape, params: Any
) -> tuple[list[Edge], list[Concept]]:
    """Run a records statement; build its rows' records positionally, converting only the
    columns that need it (JSON, time stamps)."""
    dialect = conn.dialect
    cursor = conn.exec_driver_sql(shape.sql, params).cursor
    codes = tuple(d[1] for d in cursor.description)
    convert = [(i, f) for i, f in enumerate(_processors(dialect, shape.types, codes)) if f is not None]
    edges: list[Edge] = []
    concepts: list[Concept] = []
    for raw in cursor.fetchall():
        row = list(raw)
        for i, f in convert:
            if row[i] is not None:
                row[i] = f(row[i])
        record = record_from_values(row)
        if isinstance(record, Edge):
            edges.append(record)
        else:
            concepts.append(record)
    return edges, concepts


@functools.lru_cache(maxsize=64)
def _processors(
    dialect: Dialect, types: tuple[Any, ...], codes: tuple[Any, ...]
) -> tuple[Callable[[Any], Any] | None, ...]:
    """Each column's result processor for the driver's type codes (PostgreSQL's numeric
    processing depends on the type the server reports)."""
    return tuple(
        t.dialect_impl(dialect).result_processor(dialect, code) for t, code in zip(types, codes, strict=True)
    )


# The connection a :meth:`GraphReader.pinned` block reads through, with its engine.
_PINNED: ContextVar[tuple[Engine, sa.Connection] | None] = ContextVar("kg_pinned_connection", default=None)


class GraphReader:
    """Read-only, temporal access to the graph."""

    def __init__(self, engine: Engine, *, clock: Clock = utc_now) -> None:
        self._engine = engine
        self._clock = clock

    @property
    def engine(self) -> Engine:
        return self._engine

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Every read of this engine inside the block (in this thread or task) shares one
        connection, so one question's reads see one snapshot and pay for one pool checkout
        (on PostgreSQL also one liveness ping) instead of one per read. Re-entrant."""
        if self._pinned_connection() is not None:
            yield
            return
        with self._engine.connect() as conn:
            # (Options for one statement go on that statement: ``Connection.execution_options``
            # would change the shared connection for every read after it.)
            token = _PINNED.set((self._engine, conn))
            try:
                yield
            finally:
                _PINNED.reset(token)

    @contextmanager
    def pinned_to(self, conn: sa.Connection) -> Iterator[None]:
        """Every read of this engine inside the block (in this thread or task) goes through
        ``conn``: to read the graph as an open transaction sees it (a rehearsed write, see
        ``WriteGateway.rehearse``)."""
        token = _PINNED.set((self._engine, conn))
        try:
            yield
        finally:
            _PINNED.reset(token)

    @contextmanager
    def connection(self) -> Iterator[sa.Connection]:
        """The connection of the enclosing :meth:`pinned` block, or a fresh one for this read."""
        held = self._pinned_connection()
        if held is not None:
            yield held
            return
        with self._engine.connect() as conn:
            yield conn

    def _pinned_connection(self) -> sa.Connection | None:
        held = _PINNED.get()
        return held[1] if held is not None and held[0] is self._engine else None

    def as_of(self, valid_at: datetime | None = None, recorded_at: datetime | None = None) -> AsOf:
        """An ``AsOf`` whose missing times default to now, its recorded time no later than the
        latest committed write (:meth:`known_at`)."""
        point = AsOf.at(self._clock, valid_at, recorded_at)
        return AsOf(point.valid_at, self.known_at(point.recorded_at))

    def known_at(self, asked: datetime) -> datetime:
        """The recorded time to read "as known at ``asked``" at: ``asked``, or the stamp of the
        latest committed graph write if that is earlier, so that the read gives the same result
        whenever it is repeated (a write committing later is stamped after it:
        ``data_plane.write_clock``)."""
        asked = ensure_utc(asked, field="known_at")
        with self.connection() as conn:
            return write_clock.known_at(asked, write_clock.latest(conn))

    # -- neighbourhoods ---------------------------------------------------------------------

    def neighbourhood(
        self,
        ids: Collection[str],
        *,
        as_of: AsOf | None = None,
        relations: Collection[str] | None = None,
        exclude: Collection[str] = (),
    ) -> list[Neighbour]:
        """Active neighbours of ``ids`` (both directions), in one round trip, ordered by edge key,
        as thin rows (:class:`~data_plane.records.Neighbour`): ids, relation, confidence, name
        and summary; full records of whatever is finally shown come from :meth:`records`."""
        if not ids:
            return []
        as_of = as_of or self.as_of()
        wanted, skip = sorted(ids), sorted(exclude)
        rels = sorted(relations) if relations is not None else None
        shape = _shape(self._engine.dialect, len(wanted), len(skip), None if rels is None else len(rels))
        convert = _as_of_processor(self._engine.dialect)
        params = shape.binds.params(
            [convert(as_of.valid_at), convert(as_of.recorded_at), *wanted, *skip, *(rels or ())]
        )
        with self.connection() as conn:
            # The thin columns need no result processing (ids, texts, numbers), so the driver's
            # rows are used as they come: no per-row ``Row`` objects.
            rows = list(conn.exec_driver_sql(shape.sql, params).cursor.fetchall())
        # Stored edges are canonical, so ``source>relation>target`` is the edge key without
        # re-canonicalising every row.
        rows.sort(key=lambda r: (f"{r[1]}>{r[3]}>{r[2]}", r[9]))
        # tuple.__new__ straight from slices of the driver row: the named tuples' own __new__ is a
        # Python frame per record, three records per row.
        new = tuple.__new__
        return [new(Neighbour, (new(EdgeRow, r[0:5]), new(ConceptRow, r[5:9]), r[9], r[10])) for r in rows]

    # -- concepts and edges -------------------------------------------------------------------

    def concepts(self, ids: Iterable[str], *, as_of: AsOf | None = None) -> dict[str, Concept]:
        """The versions of ``ids`` in force as of ``as_of`` (missing ids are absent)."""
        as_of = as_of or self.as_of()
        wanted = sorted(set(ids))
        out: dict[str, Concept] = {}
        at = _as_of_processor(self._engine.dialect)
        times = [at(as_of.valid_at), at(as_of.recorded_at)]
        with self.connection() as conn:
            for i in range(0, len(wanted), _CHUNK):
                part = wanted[i : i + _CHUNK]
                n = _padded(len(part))
                shape = _concepts_shape(self._engine.dialect, n)
                _, found = _fetch_records(
                    conn, shape, shape.binds.params([*times, *part, *[part[-1]] * (n - len(part))])
                )
                out.update((c.concept_id, c) for c in found)
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
        with self.connection() as conn:
            return [concept_from_row(r) for r in conn.execute(stmt).mappings()]

    def concept_labels(self, *, as_of: AsOf | None = None) -> Iterator[tuple[str, str, tuple[str, ...]]]:
        """``(concept id, name, aliases)`` of every concept in force, streamed in batches: for
        building a name index without materialising whole concept records (a 10^6-edge graph has
        ~200,000 concepts)."""
        as_of = as_of or self.as_of()
        stmt = sa.select(C.c.concept_id, C.c.name, C.c.aliases).where(as_of.clause(C))
        with self.connection() as conn:
            for cid, name, aliases in conn.execute(stmt, execution_options={"yield_per": 5000}):
                yield cid, name, tuple(aliases or ())

    def relation_counts(self, *, as_of: AsOf | None = None) -> dict[str, int]:
        """Active edges per relation as of ``as_of`` (which relations are in force at all)."""
        as_of = as_of or self.as_of()
        stmt = sa.select(E.c.relation, sa.func.count()).where(as_of.clause(E)).group_by(E.c.relation)
        with self.connection() as conn:
            return {rel: int(n) for rel, n in conn.execute(stmt)}

    def has_lesson_links(self, *, as_of: AsOf | None = None) -> bool:
        """Does any lesson link hold as of ``as_of`` (does this graph map lessons at all)?"""
        as_of = as_of or self.as_of()
        LC = schema.lesson_concepts
        stmt = sa.select(sa.literal(1)).where(as_of.clause(LC)).limit(1)
        with self.connection() as conn:
            return conn.execute(stmt).first() is not None

    def has_requirement_groups(self, *, as_of: AsOf | None = None) -> bool:
        """Does any requirement group hold as of ``as_of`` (does this graph say "one of" at all)?"""
        as_of = as_of or self.as_of()
        G = schema.requirement_groups
        stmt = sa.select(sa.literal(1)).where(as_of.clause(G)).limit(1)
        with self.connection() as conn:
            return conn.execute(stmt).first() is not None

    def lesson_links(
        self, concept_ids: Iterable[str], *, as_of: AsOf | None = None
    ) -> list[tuple[Version, str]]:
        """Active ``lesson_concepts`` links of ``concept_ids`` as of ``as_of``, each with its
        lesson's title ("" when the lesson row is not in force), ordered by lesson then concept."""
        as_of = as_of or self.as_of()
        L, LC = schema.lessons, schema.lesson_concepts
        wanted = sorted(set(concept_ids))
        out: list[tuple[Version, str]] = []
        with self.connection() as conn:
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
        with self.connection() as conn:
            row = conn.execute(stmt).mappings().first()
        if row is None:
            raise NotFound(f"no active edge {edge_key(s, t, r)!r}", key=edge_key(s, t, r))
        return edge_from_row(row)

    def edges_by_version(self, version_ids: Iterable[int]) -> dict[int, Edge]:
        """Edge versions by id, whatever their time stamps (for verifying citations)."""
        wanted = sorted(set(version_ids))
        out: dict[int, Edge] = {}
        with self.connection() as conn:
            for i in range(0, len(wanted), _CHUNK):
                for r in conn.execute(
                    sa.select(E).where(E.c.version_id.in_(wanted[i : i + _CHUNK]))
                ).mappings():
                    out[r["version_id"]] = edge_from_row(r)
        return out

    def records(
        self, *, edge_versions: Iterable[int] = (), concept_versions: Iterable[int] = ()
    ) -> tuple[dict[int, Edge], dict[int, Concept]]:
        """Full records (grounding and stamps) of these edge and concept versions, whatever their
        time stamps, by version id: one statement for both tables (chunked only beyond
        ``_CHUNK`` ids each). This is how an answer grounds the thin rows its walk returned."""
        edge_ids, concept_ids = sorted(set(edge_versions)), sorted(set(concept_versions))
        edges: dict[int, Edge] = {}
        concepts: dict[int, Concept] = {}
        dialect = self._engine.dialect
        with self.connection() as conn:
            for i in range(0, max(len(edge_ids), len(concept_ids)), _CHUNK):
                e_part, c_part = edge_ids[i : i + _CHUNK], concept_ids[i : i + _CHUNK]
                n_e, n_c = _padded(len(e_part)), _padded(len(c_part))
                shape = _records_shape(dialect, n_e, n_c)
                params = shape.binds.params(
                    [*e_part, *[-1] * (n_e - len(e_part)), *c_part, *[-1] * (n_c - len(c_part))]
                )
                found_edges, found_concepts = _fetch_records(conn, shape, params)
                edges.update((e.version_id, e) for e in found_edges)
                concepts.update((c.version_id, c) for c in found_concepts)
        return edges, concepts

    def degrees(self, ids: Iterable[str], *, as_of: AsOf | None = None) -> dict[str, int]:
        """Number of active edges touching each id (0 for none)."""
        as_of = as_of or self.as_of()
        wanted = sorted(set(ids))
        counts = dict.fromkeys(wanted, 0)
        if not wanted:
            return counts
        with self.connection() as conn:  # both ends in one round trip
            for cid, n in conn.execute(_degrees_statement(), {"ids": wanted, **as_of.params()}):
                counts[cid] += n
        return counts

    def relation_degrees(self, ids: Iterable[str], *, as_of: AsOf | None = None) -> dict[str, dict[str, int]]:
        """Active edges touching each id, per relation (an empty dict for none)."""
        as_of = as_of or self.as_of()
        wanted = sorted(set(ids))
        counts: dict[str, dict[str, int]] = {cid: {} for cid in wanted}
        with self.connection() as conn:
            for i in range(0, len(wanted), _CHUNK):
                params = {"ids": wanted[i : i + _CHUNK], **as_of.params()}
                for cid, relation, n in conn.execute(_relation_degrees_statement(), params):
                    counts[cid][relation] = counts[cid].get(relation, 0) + n
        return counts

    # -- requirement groups -------------------------------------------------------------------

    def requirements(
        self, target_ids: Iterable[str], *, as_of: AsOf | None = None
    ) -> dict[str, tuple[RequirementGroup, ...]]:
        """The requirement groups of each target in force as of ``as_of``, each with its
        members in force then, by group id (targets without one are absent). Two statements per
        500 targets (groups, then their members), through the target and key indexes."""
        as_of = as_of or self.as_of()
        wanted = sorted(set(target_ids))
        found: list[RequirementGroup] = []
        for i in range(0, len(wanted), _CHUNK):
            found += self._groups(G.c.target_id.in_(wanted[i : i + _CHUNK]), as_of)
        out: dict[str, list[RequirementGroup]] = {}
        for g in found:
            out.setdefault(g.target_id, []).append(g)
        return {t: tuple(sorted(gs, key=lambda g: g.group_id)) for t, gs in sorted(out.items())}

    def requirement(self, group_id: str, *, as_of: AsOf | None = None) -> RequirementGroup:
        """One group in force as of ``as_of`` with its members (``NotFound`` if none)."""
        found = self._groups(G.c.group_id == group_id, as_of or self.as_of())
        if not found:
            raise NotFound(f"no active requirement {group_id!r}", key=group_id)
        return found[0]

    def requirements_naming(
        self, concept_ids: Iterable[str], *, as_of: AsOf | None = None
    ) -> dict[str, tuple[RequirementGroup, ...]]:
        """The groups in force whose options name each concept (what a concept is one way to
        meet), each with all its members; concepts in none are absent."""
        as_of = as_of or self.as_of()
        wanted = sorted(set(concept_ids))
        naming: dict[str, set[str]] = {}
        with self.connection() as conn:
            for i in range(0, len(wanted), _CHUNK):
                stmt = sa.select(M.c.concept_id, M.c.group_id).where(
                    M.c.concept_id.in_(wanted[i : i + _CHUNK]), as_of.clause(M)
                )
                for cid, gid in conn.execute(stmt):
                    naming.setdefault(gid, set()).add(cid)
        groups: dict[str, RequirementGroup] = {}
        ids = sorted(naming)
        for i in range(0, len(ids), _CHUNK):
            groups.update((g.group_id, g) for g in self._groups(G.c.group_id.in_(ids[i : i + _CHUNK]), as_of))
        out: dict[str, list[RequirementGroup]] = {}
        for gid, g in sorted(groups.items()):
            for cid in naming[gid]:
                out.setdefault(cid, []).append(g)
        return {c: tuple(gs) for c, gs in sorted(out.items())}

    def _groups(self, cond: sa.ColumnElement[bool], as_of: AsOf) -> list[RequirementGroup]:
        """Groups in force matching ``cond``, with their members in force, by group id."""
        with self.connection() as conn:
            rows = list(
                conn.execute(sa.select(G).where(cond, as_of.clause(G)).order_by(G.c.group_id)).mappings()
            )
            ids = [r["group_id"] for r in rows]
            members: dict[str, list[RequirementMember]] = {}
            for i in range(0, len(ids), _CHUNK):
                stmt = (
                    sa.select(M)
                    .where(M.c.group_id.in_(ids[i : i + _CHUNK]), as_of.clause(M))
                    .order_by(M.c.group_id, M.c.concept_id)
                )
                for r in conn.execute(stmt).mappings():
                    m = member_from_row(r)
                    members.setdefault(m.group_id, []).append(m)
        return [
            RequirementGroup(
                r["group_id"],
                r["target_id"],
                int(r["needs"]),
                grounding_from_row(r),
                stamp_from_row(r),
                tuple(sorted(members.get(r["group_id"], ()), key=lambda m: (m.option, m.concept_id))),
            )
            for r in rows
        ]

    def requirement_history(self, group_id: str) -> list[Version]:
        """Every version of a group and of its members, in recorded order (then version id,
        the group's own versions first)."""
        with self.connection() as conn:
            out = [
                version_from_row(t.name, r)
                for t in (G, M)
                for r in conn.execute(sa.select(t).where(t.c.group_id == group_id)).mappings()
            ]
        if not out:
            raise NotFound(f"requirement_groups: no history for {group_id!r}", key=group_id)
        rank = {"requirement_groups": 0, "requirement_members": 1}
        return sorted(out, key=lambda v: (v.stamp.recorded_at, rank[v.table], v.stamp.version_id))

    # -- audit ------------------------------------------------------------------------------

    def history(self, table_name: str, key: tuple[str, ...]) -> list[Version]:
        """Every version of one key, oldest first, with its grounding and stamps."""
        table = schema.metadata.tables[table_name]
        if table_name == "concept_edges":
            key = canonical_edge(*key)
        cond = [table.c[col] == part for col, part in zip(schema.KEY_COLUMNS[table_name], key, strict=True)]
        stmt = sa.select(table).where(*cond).order_by(table.c.recorded_at, table.c.version_id)
        with self.connection() as conn:
            rows = [version_from_row(table_name, r) for r in conn.execute(stmt).mappings()]
        if not rows:
            raise NotFound(f"{table_name}: no history for {'/'.join(key)!r}", key="/".join(key))
        return rows

    def stream_concepts(
        self, as_of: AsOf | None = None, *, after: str | None = None, limit: int | None = None
    ) -> Iterator[Concept]:
        """Concepts in force as of ``as_of``, by id, streamed (server-side cursor on PostgreSQL),
        so memory does not grow with the graph. Keyset pages: ``after`` the last id seen, at
        most ``limit``."""
        as_of = as_of or self.as_of()
        stmt = sa.select(C).where(as_of.clause(C)).order_by(C.c.concept_id)
        if after is not None:
            stmt = stmt.where(C.c.concept_id > after)
        yield from self._stream(stmt, limit, concept_from_row)

    def stream_edges(
        self,
        as_of: AsOf | None = None,
        *,
        after: tuple[str, str, str] | None = None,
        limit: int | None = None,
    ) -> Iterator[Edge]:
        """Edges in force as of ``as_of``, by (source, relation, target), streamed; keyset pages
        ``after`` the last ``(source_id, relation, target_id)`` seen, at most ``limit``."""
        as_of = as_of or self.as_of()
        order = (E.c.source_id, E.c.relation, E.c.target_id)
        stmt = sa.select(E).where(as_of.clause(E)).order_by(*order)
        if after is not None:
            stmt = stmt.where(sa.tuple_(*order) > sa.tuple_(*after))
        yield from self._stream(stmt, limit, edge_from_row)

    def stream_versions(
        self,
        table_name: str,
        as_of: AsOf | None = None,
        *,
        after: tuple[str, ...] | None = None,
        limit: int | None = None,
    ) -> Iterator[Version]:
        """Versions of any versioned table in force as of ``as_of``, by key, streamed; keyset
        pages ``after`` the last key seen, at most ``limit``."""
        table = schema.metadata.tables[table_name]
        as_of = as_of or self.as_of()
        order = [table.c[k] for k in schema.KEY_COLUMNS[table_name]]
        stmt = sa.select(table).where(as_of.clause(table)).order_by(*order)
        if after is not None:
            stmt = stmt.where(sa.tuple_(*order) > sa.tuple_(*after))
        yield from self._stream(stmt, limit, lambda r: version_from_row(table_name, r))

    def stream_rows(
        self, table_name: str, columns: Sequence[str], as_of: AsOf | None = None
    ) -> Iterator[Sequence[Any]]:
        """The ``columns`` of every version of a table in force as of ``as_of``, as plain tuples
        in key order, streamed: for bulk writers (export) that need cells, not records."""
        table = schema.metadata.tables[table_name]
        as_of = as_of or self.as_of()
        stmt = (
            sa.select(*(table.c[c] for c in columns))
            .where(as_of.clause(table))
            .order_by(*(table.c[k] for k in _ORDER[table_name]))
        )
        with self.connection() as conn:
            yield from conn.execute(stmt, execution_options={"yield_per": _STREAM_BATCH})

    def stream_changes(
        self,
        table_name: str,
        since: datetime,
        until: datetime,
        *,
        op: str | None = None,
        after: int | None = None,
        limit: int | None = None,
    ) -> Iterator[Version]:
        """Versions of one table recorded in ``(since, until]`` (only ``op`` ones if given), by
        (recorded_at, version_id), streamed; keyset pages ``after`` the version id last seen, at
        most ``limit``."""
        since, until = ensure_utc(since, field="from"), ensure_utc(until, field="to")
        t = schema.metadata.tables[table_name]
        stmt = (
            sa.select(t)
            .where(t.c.recorded_at > since, t.c.recorded_at <= until)
            .order_by(t.c.recorded_at, t.c.version_id)
        )
        if op is not None:
            stmt = stmt.where(t.c.op == op)
        if after is not None:
            # The cursor's recorded_at is read back in SQL, so stored stamps are compared with
            # stored stamps only (never with a re-rendered bind value).
            last = t.alias("last")
            at = sa.select(last.c.recorded_at).where(last.c.version_id == after).scalar_subquery()
            stmt = stmt.where(
                sa.or_(t.c.recorded_at > at, sa.and_(t.c.recorded_at == at, t.c.version_id > after))
            )
        yield from self._stream(stmt, limit, lambda r: version_from_row(table_name, r))

    def _stream(self, stmt: sa.Select[Any], limit: int | None, convert: Callable[[Any], _T]) -> Iterator[_T]:
        if limit is not None:
            stmt = stmt.limit(limit)
        with self.connection() as conn:
            result = conn.execute(stmt, execution_options={"yield_per": _STREAM_BATCH})
            for r in result.mappings():
                yield convert(r)

    def snapshot(self, as_of: AsOf | None = None) -> Snapshot:
        """The whole graph in force as of ``as_of``, in memory (``stream_*`` for large graphs)."""
        as_of = as_of or self.as_of()
        return Snapshot(
            as_of.valid_at,
            as_of.recorded_at,
            tuple(self.stream_concepts(as_of)),
            tuple(self.stream_edges(as_of)),
            tuple(self.stream_versions("lesson_concepts", as_of)),
            tuple(self.stream_versions("lessons", as_of)),
            tuple(self.stream_versions("requirement_groups", as_of)),
            tuple(self.stream_versions("requirement_members", as_of)),
        )

    def diff(self, since: datetime, until: datetime, *, tables: Iterable[str] | None = None) -> Diff:
        """Versions recorded in ``(since, until]``, grouped by what they did, in memory
        (``stream_changes`` for large ranges). ``until`` is read no later than the latest
        committed write (:meth:`known_at`), so the diff is the same whenever it is repeated."""
        since, until = ensure_utc(since, field="from"), self.known_at(ensure_utc(until, field="to"))
        names = list(tables) if tables is not None else list(DIFF_TABLES)
        groups: dict[str, list[Version]] = {"assert": [], "revise": [], "invalidate": [], "retract": []}
        for name in names:
            for v in self.stream_changes(name, since, until):
                groups[v.stamp.op].append(v)
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
        of the last answer of a previous page continues after it. Answers still queued in the
        SQLite side file (an import held the write lock; one killed leaves them there until the
        next write) are listed too, with version id 0, as :meth:`answer` reads them."""
        A = schema.answers
        since = None if since is None else ensure_utc(since, field="since")
        at = None if before is None else (ensure_utc(before[0], field="cursor"), before[1])
        # The queue first, as in :meth:`answer`: a move commits to ``answers`` before it leaves it.
        queue = queue_of(self._engine)
        queued = [q.version() for q in queue.pending(None)] if queue is not None else []
        stmt = sa.select(A).where(A.c.expired_at.is_(None))
        if since is not None:
            stmt = stmt.where(A.c.recorded_at >= since)
        if at is not None:
            stmt = stmt.where(
                sa.or_(A.c.recorded_at < at[0], sa.and_(A.c.recorded_at == at[0], A.c.version_id < at[1]))
            )
        stmt = stmt.order_by(A.c.recorded_at.desc(), A.c.version_id.desc()).limit(limit)
        with self.connection() as conn:
            found = [version_from_row("answers", r) for r in conn.execute(stmt).mappings()]
            if not queued:
                return found
            # One moved already but not yet gone from the queue (a crash between the two) is listed once.
            ids = [v.key[0] for v in queued]
            moved = set(conn.execute(sa.select(A.c.answer_id).where(A.c.answer_id.in_(ids))).scalars())
        queued = [
            v
            for v in queued
            if v.key[0] not in moved
            and (since is None or v.stamp.recorded_at >= since)
            and (at is None or (v.stamp.recorded_at, 0) < at)
        ]
        merged = sorted(
            [*found, *queued], key=lambda v: (v.stamp.recorded_at, v.stamp.version_id), reverse=True
        )
        return merged[:limit]

    def answer(self, answer_id: str) -> Version:
        """A recorded answer; also one recorded while the write lock was held and still queued
        in the SQLite side file (``data_plane.sidecar``; its version id is 0 until it is moved)."""
        A = schema.answers
        # The queue first: a move commits to ``answers`` before it leaves the queue, so an answer
        # not in the queue now is in ``answers`` by the time it is read (the other order could
        # miss one moved in between).
        queued = queued_answer(self._engine, answer_id)
        stmt = sa.select(A).where(A.c.answer_id == answer_id, A.c.expired_at.is_(None))
        with self.connection() as conn:
            row = conn.execute(stmt).mappings().first()
        if (
            row is None
            and queued is None
            and self._pinned_connection() is not None
            and side_path(self._engine)
        ):
            # the pinned snapshot predates a move that has emptied the queue since: a recorded
            # answer never changes, so it is read from a connection of its own
            with self._engine.connect() as conn:
                row = conn.execute(stmt).mappings().first()
        if row is not None:
            return version_from_row("answers", row)
        if queued is None:
            raise NotFound(f"no recorded answer {answer_id!r}", key=answer_id)
        return queued

    def explain_neighbourhood(self, ids: Collection[str], as_of: AsOf | None = None) -> list[str]:
        """The engine's query plan for :meth:`neighbourhood` (for docs and the plan test)."""
        stmt, params = neighbourhood_statement(ids, as_of or self.as_of())
        return explain(self._engine, stmt, params)
