"""Transitive walks in learning order: one recursive SQL statement per walk.

A *walk* follows focused relations from a set of start concepts (at most :data:`MAX_STARTS`),
step after step, with the bi-temporal filter (:func:`data_plane.temporal.in_force`) applied to
every edge it takes, bounded by a maximum depth and a row budget. It is one statement on SQLite
and PostgreSQL alike::

    WITH RECURSIVE walk(node, depth) AS (
        SELECT concept_id, 0 FROM concepts WHERE concept_id IN (:starts) AND <in force>
        UNION                                   -- a (concept, depth) pair is never revisited
        SELECT <far end>, walk.depth + 1 FROM walk JOIN concept_edges e ON <a focused step>
        WHERE walk.depth < :max_depth AND <e in force> AND <far end> NOT IN (:exclude)
    ),
    capped AS (SELECT node, depth FROM walk LIMIT :budget + 1)   -- stops the recursion early
    SELECT capped.*, e.<thin columns> FROM capped LEFT JOIN concept_edges e ON <a focused step>
        AND capped.depth < :max_depth AND <e in force>

A *step* is a relation and an orientation (:class:`Step`): forward goes from an edge's source to
its target, backward from its target to its source. Learning order (``data_plane.relations``):
"needed before X" (:data:`NEEDED_BEFORE`) steps backward along prerequisite edges and forward
along builds_on edges; "what X unlocks" (:data:`UNLOCKS`) is the reverse.

Termination and revisits. ``UNION`` (not ``UNION ALL``) drops every row the walk already
produced, so nothing is expanded twice and the walk ends on any graph, cycles included (a
builds_on/prerequisite mix may close one; the gateway only keeps prerequisite edges acyclic).
Without a depth bound (``max_depth=None``, what the planner uses) rows are concepts alone, so
each concept is expanded **exactly once**; depths are then recomputed breadth-first from the
rows in Python. With a depth bound rows must carry the depth, and SQL cannot keep a global
visited set inside a recursive CTE (neither engine lets the recursive term read the work table
twice), so a concept is expanded at most once per distinct depth at which it is reached: the
work stays bounded by ``reached concepts x max_depth`` rows. Either way each concept's reported
depth is its least.

Budget. ``capped`` reads at most ``budget + 1`` walk rows; both engines produce recursive rows
lazily in breadth-first order, so a big closure costs about ``budget`` rows of work, not the
whole closure. More than ``budget`` rows marks the walk *partial*. Whatever was cut, the result
says exactly which concepts are *expanded* (every focused edge out of them is in the rows): the
others it reached form the boundary (:attr:`Walk.unexpanded`) a next walk may start from, so the
expanded/unexpanded split is right whether or not the engine's row order was breadth-first.

Each step enters ``concept_edges`` through an index on the end it leaves from
(``ix_concept_edges_key_recorded``, led by ``source_id``, and
``ix_concept_edges_target_recorded``); ``tests/test_walks.py`` checks the plans on both engines.

A *fringe* (:func:`fringe`) is what a learner can take up next: the needed-before closure of the
starts (what they know and everything it rests on), the concepts one learning step after that
closure, and every concept those need, again in one statement (the closure's recursive CTE, then
two joins). The closure's concepts and the ones after it are *expanded* in the needed-before
direction, so whether all of a next concept's needs are in the closure is decided by the rows.

:func:`shortest_paths` finds every shortest learning path from A to B (at most ``limit``) in a
needed-before walk from B; :func:`lessons_for` reads the lessons that cover concepts as of a time.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from data_plane import schema
from data_plane.errors import InputError
from data_plane.explain import explain
from data_plane.records import ConceptRow, EdgeRow, Neighbour
from data_plane.relations import BUILDS_ON, PREREQUISITE, RELATIONS
from data_plane.temporal import AS_OF_PARAMS, AsOf, in_force

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_DEPTH",
    "DIRECTIONS",
    "FRINGE",
    "MAX_STARTS",
    "NEEDED_BEFORE",
    "REQUIREMENT",
    "UNLOCKS",
    "Paths",
    "Step",
    "Walk",
    "WalkRow",
    "closure_size",
    "explain_walk",
    "fringe",
    "learning_steps",
    "lessons_for",
    "shortest_paths",
    "walk",
    "walk_statement",
]

NEEDED_BEFORE: Final = "needed_before"
UNLOCKS: Final = "unlocks"
DIRECTIONS: Final = (NEEDED_BEFORE, UNLOCKS)
# Not a walk direction of its own: the planner's name for a fringe (module docstring).
FRINGE: Final = "fringe"
MAX_STARTS: Final = 12
DEFAULT_DEPTH: Final = 16
DEFAULT_BUDGET: Final = 2000
# A closure's size is counted up to this many concepts (every concept of a 10^6-edge graph).
COUNT_BUDGET: Final = 10_000_000
_LEARNING: Final = (PREREQUISITE, BUILDS_ON)

C, E = schema.concepts, schema.concept_edges
G, M = schema.requirement_groups, schema.requirement_members
REQUIREMENT: Final = "requirement"
"""The ``relation`` of a walk row that stepped through a requirement group (not an edge)."""


@dataclass(frozen=True, order=True)
class Step:
    """One way to take an edge: ``forward`` from its source to its target, else backward."""

    relation: str
    forward: bool


def learning_steps(direction: str, relations: Collection[str] = _LEARNING) -> tuple[Step, ...]:
    """The steps of a learning-order walk over ``relations`` (prerequisite and/or builds_on, and
    :data:`REQUIREMENT` to step through requirement groups as well).

    ``needed_before``: prerequisite target→source, builds_on source→target, a group's target to
    its members; ``unlocks``: the reverse. Other relations have no learning order and are
    refused. Without :data:`REQUIREMENT` a walk never reads the group tables (what every caller
    written before groups existed gets, on every graph).
    """
    if direction not in DIRECTIONS:
        raise InputError(f"unknown walk direction {direction!r}; use one of {DIRECTIONS}", field="direction")
    unknown = sorted(set(relations) - {*_LEARNING, REQUIREMENT})
    if unknown or not set(relations) & set(_LEARNING):
        raise InputError(
            "a learning-order walk follows prerequisite and builds_on (and requirement groups) only, "
            f"got {sorted(relations)}",
            field="relations",
            value=unknown,
        )
    before = direction == NEEDED_BEFORE
    # A member is a possible prerequisite of its group's target: oriented like a prerequisite edge.
    return tuple(sorted(Step(r, forward=(r == BUILDS_ON) == before) for r in set(relations)))


@dataclass(frozen=True)
class WalkRow:
    """One step the walk took: its version, ends, relation, confidence, and depth (the step
    count from the nearest start to ``to_id``). ``from_id`` is the end the walk left from.

    A step through a requirement group (``groups=True``) has ``relation`` :data:`REQUIREMENT`,
    ``version_id`` and ``confidence`` of the *member* version, ``source_id`` the member concept
    and ``target_id`` the group's target (the member is one way to meet a need of the target,
    oriented like a prerequisite edge), and ``group_id``, ``option`` and ``needs`` say which
    group and option it came through and what k the group needs. Edge steps leave those None."""

    version_id: int
    source_id: str
    target_id: str
    relation: str
    confidence: float
    depth: int
    from_id: str
    to_id: str
    group_id: str | None = None
    option: int | None = None
    needs: int | None = None

    @property
    def through_group(self) -> bool:
        """Did this step come through a requirement group (not an edge)?"""
        return self.group_id is not None


@dataclass(frozen=True)
class Walk:
    """What a walk gathered.

    ``rows``: one per edge version, least depth first. ``depths``: every concept reached (the
    starts at 0) with its least depth. ``expanded``: concepts every focused edge of which is in
    ``rows``. ``partial``: the row budget was hit. ``neighbours``: the same edges as thin
    edge and reached-concept rows, as the planner's evidence takes them (``detail=True`` only).
    """

    starts: tuple[str, ...]
    rows: tuple[WalkRow, ...]
    depths: Mapping[str, int]
    expanded: frozenset[str]
    partial: bool
    max_depth: int | None
    excluded: frozenset[str] = frozenset()
    neighbours: tuple[Neighbour, ...] = field(default=(), repr=False)
    # detail=True, groups=True: the thin row of each concept first reached through a group step
    # (edge steps carry theirs in ``neighbours``).
    group_concepts: Mapping[str, ConceptRow] = field(default_factory=dict, repr=False)

    # Computed once per walk (a walk is frozen): callers test membership once per row.
    @functools.cached_property
    def reached(self) -> frozenset[str]:
        """Every concept reached, starts excluded."""
        return frozenset(self.depths) - set(self.starts)

    @functools.cached_property
    def unexpanded(self) -> frozenset[str]:
        """The boundary: reached concepts whose own edges may be missing (budget or depth)."""
        return frozenset(self.depths) - self.expanded - self.excluded

    @property
    def complete(self) -> bool:
        """Is this the whole closure (no budget cut, no depth cut)?"""
        return not self.partial and not self.unexpanded


def _far(node: Any) -> sa.ColumnElement[str]:
    return sa.case((E.c.source_id == node, E.c.target_id), else_=E.c.source_id)


def _step_condition(node: Any, forward: bool, backward: bool, prefix: str = "") -> sa.ColumnElement[bool]:
    fwd: sa.BindParameter[list[str]] = sa.bindparam(f"{prefix}forward", expanding=True)
    bwd: sa.BindParameter[list[str]] = sa.bindparam(f"{prefix}backward", expanding=True)
    terms = []
    if forward:
        terms.append(sa.and_(E.c.source_id == node, E.c.relation.in_(fwd)))
    if backward:
        terms.append(sa.and_(E.c.target_id == node, E.c.relation.in_(bwd)))
    return sa.or_(*terms)


def _group_step(needed_before: bool) -> tuple[sa.FromClause, sa.ColumnElement[str]]:
    """The join from a reached concept through the requirement groups it is the target of
    (needed before: into their members) or a member of (unlocks: to their targets), and the far
    end. Entered through ``ix_requirement_groups_target_recorded`` or
    ``ix_requirement_members_concept_recorded``, then the other table by its key."""
    if needed_before:
        return G.join(M, M.c.group_id == G.c.group_id), M.c.concept_id
    return M.join(G, G.c.group_id == M.c.group_id), G.c.target_id


def _group_on(node: Any, needed_before: bool) -> sa.ColumnElement[bool]:
    near = G.c.target_id if needed_before else M.c.concept_id
    return sa.and_(near == node)


_GROUP_COLUMNS: Final = 3  # group_id, option, needs


@functools.cache
def _walk_statement(
    forward: bool,
    backward: bool,
    detail: bool,
    bounded: bool,
    groups: str | None = None,
    lateral: bool = False,
    count: bool = False,
) -> sa.Select[Any] | sa.CompoundSelect[Any]:
    """Built once per shape and executed with binds (compiled-statement cache). ``count``: the
    number of walk rows alone (:func:`closure_size`), no edge or concept is read. ``bounded``:
    rows are ``(concept, depth)`` and the depth is bounded; otherwise rows are concepts only,
    so each concept is expanded exactly once. ``groups``: also step through requirement groups
    in that learning direction (``needed_before``: from a target into its groups' members;
    ``unlocks``: from a member to its groups' targets). Each step is then a recursive SELECT of
    its own (SQLite allows several), or, with ``lateral`` (PostgreSQL, which allows one
    reference to the recursive table), one SELECT joining a LATERAL union of both steps."""
    as_of_valid, as_of_recorded = AS_OF_PARAMS
    starts: sa.BindParameter[list[str]] = sa.bindparam("starts", expanding=True)
    exclude: sa.BindParameter[list[str]] = sa.bindparam("exclude", expanding=True)
    max_depth = sa.bindparam("max_depth", type_=sa.Integer())
    cap = sa.bindparam("cap", type_=sa.Integer())
    before = groups == NEEDED_BEFORE

    anchor_cols: list[Any] = [C.c.concept_id.label("node")]
    if bounded:
        anchor_cols.append(sa.literal(0, sa.Integer()).label("depth"))
    anchor = sa.select(*anchor_cols).where(
        C.c.concept_id.in_(starts), in_force(C, as_of_valid, as_of_recorded)
    )
    walk_cte = anchor.cte("walk", recursive=True)
    w = walk_cte.alias("w")

    def edge_step(joined: bool) -> sa.Select[Any]:
        far, on = _far(w.c.node), _step_condition(w.c.node, forward, backward)
        stmt = sa.select(far.label("node")).select_from(w.join(E, on) if joined else E)
        stmt = stmt.where(in_force(E, as_of_valid, as_of_recorded), far.not_in(exclude))
        return stmt if joined else stmt.where(on).correlate(w)

    def group_step(joined: bool) -> sa.Select[Any]:
        through, end = _group_step(before)
        on = _group_on(w.c.node, before)
        stmt = sa.select(end.label("node")).select_from(w.join(through, on) if joined else through)
        stmt = stmt.where(
            in_force(G, as_of_valid, as_of_recorded),
            in_force(M, as_of_valid, as_of_recorded),
            end.not_in(exclude),
        )
        return stmt if joined else stmt.where(on).correlate(w)

    def deeper(stmt: sa.Select[Any]) -> sa.Select[Any]:
        if not bounded:
            return stmt
        return stmt.add_columns((w.c.depth + 1).label("depth")).where(w.c.depth < max_depth)

    if groups is None:
        walk_cte = walk_cte.union(deeper(edge_step(True)))
    elif not lateral:
        walk_cte = walk_cte.union(deeper(edge_step(True)), deeper(group_step(True)))
    else:
        both = sa.union_all(edge_step(False), group_step(False)).subquery().lateral("s")
        walk_cte = walk_cte.union(deeper(sa.select(both.c.node).select_from(w.join(both, sa.true()))))
    capped = sa.select(*walk_cte.c).limit(cap).cte("capped")
    if count:  # every row, and the rows that are starts
        counts: list[Any] = [sa.func.count(), sa.func.count(sa.case((capped.c.node.in_(starts), 1)))]
        return sa.select(*counts).select_from(capped)
    depth = capped.c.depth if bounded else sa.literal(0, sa.Integer())
    on = [_step_condition(capped.c.node, forward, backward), in_force(E, as_of_valid, as_of_recorded)]
    if bounded:
        on.append(depth < max_depth)
    columns: list[Any] = [
        capped.c.node,
        depth,
        E.c.version_id,
        E.c.source_id,
        E.c.target_id,
        E.c.relation,
        E.c.confidence,
    ]
    joined = capped.outerjoin(E, sa.and_(*on))
    if detail:
        reached = C.alias("reached")
        columns += [reached.c.version_id, reached.c.concept_id, reached.c.name, reached.c.summary]
        joined = joined.outerjoin(
            reached,
            sa.and_(
                reached.c.concept_id == _far(capped.c.node), in_force(reached, as_of_valid, as_of_recorded)
            ),
        )
    edges = sa.select(*columns).select_from(joined)
    if groups is None:
        return edges
    nothing = [sa.cast(sa.null(), t) for t in (sa.String(), sa.String(), sa.Integer())]
    edges = edges.add_columns(*(n.label(f"g{i}") for i, n in enumerate(nothing)))
    # The group half: one row per member of a group of each reached concept (inner join: a
    # concept with no group has its edge half's row, which marks it expanded).
    through, end = _group_step(before)
    g_on = [
        _group_on(capped.c.node, before),
        in_force(G, as_of_valid, as_of_recorded),
        in_force(M, as_of_valid, as_of_recorded),
    ]
    if bounded:
        g_on.append(depth < max_depth)
    g_columns: list[Any] = [
        capped.c.node,
        depth,
        M.c.version_id,
        M.c.concept_id,
        G.c.target_id,
        sa.literal(REQUIREMENT, sa.String()),
        M.c.confidence,
    ]
    g_joined = capped.join(through, sa.and_(*g_on))
    if detail:
        reached = C.alias("reached_g")
        g_columns += [reached.c.version_id, reached.c.concept_id, reached.c.name, reached.c.summary]
        g_joined = g_joined.outerjoin(
            reached, sa.and_(reached.c.concept_id == end, in_force(reached, as_of_valid, as_of_recorded))
        )
    g_columns += [G.c.group_id, M.c.option, G.c.needs]
    return sa.union_all(edges, sa.select(*g_columns).select_from(g_joined))


@contextmanager
def _bound(bind: Engine | sa.Connection) -> Iterator[sa.Connection]:
    """``bind`` itself when it is a connection (a caller's pinned one), else a fresh one."""
    if isinstance(bind, sa.Connection):
        yield bind
        return
    with bind.connect() as conn:
        yield conn


def walk_statement(
    starts: Collection[str],
    as_of: AsOf,
    steps: Collection[Step],
    *,
    max_depth: int | None = DEFAULT_DEPTH,
    budget: int = DEFAULT_BUDGET,
    exclude: Collection[str] = (),
    detail: bool = False,
    dialect: str = "sqlite",
    count: bool = False,
) -> tuple[sa.Select[Any] | sa.CompoundSelect[Any], dict[str, Any]]:
    """The one SQL statement of a walk and its parameters (validated: see :func:`walk`); the
    text of a walk through requirement groups depends on the engine (``dialect``)."""
    starts = sorted(set(starts))
    if not 1 <= len(starts) <= MAX_STARTS:
        raise InputError(
            f"a walk starts from 1 to {MAX_STARTS} concepts, got {len(starts)}",
            field="starts",
            value=starts[:20],
        )
    if not steps:
        raise InputError("a walk needs at least one step (relation and orientation)", field="steps")
    unknown = sorted({s.relation for s in steps} - {*RELATIONS, REQUIREMENT})
    if unknown:
        raise InputError(f"unknown relation(s) {unknown}", field="relations", value=unknown)
    through = {s.forward for s in steps if s.relation == REQUIREMENT}
    if len(through) > 1 or len(through) == len(steps):
        raise InputError(
            "a walk steps through requirement groups in one direction, beside at least one edge relation",
            field="relations",
        )
    groups = None if not through else (UNLOCKS if through.pop() else NEEDED_BEFORE)
    steps = [s for s in steps if s.relation != REQUIREMENT]
    if max_depth is not None and (
        isinstance(max_depth, bool) or not isinstance(max_depth, int) or not 1 <= max_depth <= 64
    ):
        raise InputError(
            f"max_depth must be None or an integer in 1..64, got {max_depth!r}", field="max_depth"
        )
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise InputError(f"budget must be a positive integer, got {budget!r}", field="budget")
    forward = sorted({s.relation for s in steps if s.forward})
    backward = sorted({s.relation for s in steps if not s.forward})
    params: dict[str, Any] = {
        "starts": starts,
        "exclude": sorted(set(exclude) - set(starts)),
        "cap": budget + 1,
        **as_of.params(),
    }
    if max_depth is not None:
        params["max_depth"] = max_depth
    if forward:
        params["forward"] = forward
    if backward:
        params["backward"] = backward
    lateral = groups is not None and dialect == "postgresql"
    return _walk_statement(
        bool(forward), bool(backward), detail and not count, max_depth is not None, groups, lateral, count
    ), params


_THIN: Final = 7


def walk(
    engine: Engine | sa.Connection,
    starts: Collection[str],
    *,
    as_of: AsOf,
    steps: Collection[Step],
    max_depth: int | None = DEFAULT_DEPTH,
    budget: int = DEFAULT_BUDGET,
    exclude: Collection[str] = (),
    detail: bool = False,
) -> Walk:
    """Walk ``steps`` transitively from ``starts`` (1..12 active concepts) as of ``as_of``, in
    one SQL statement, at most ``max_depth`` steps deep and ``budget`` walk rows.

    ``exclude``: concepts not to walk *into* (already explored elsewhere): edges reaching them
    are returned, their own edges are not. ``detail``: also return thin edge and concept
    rows as :class:`~data_plane.records.Neighbour` values (for the planner's evidence; the
    answer fetches full records once, by version id).
    """
    with _bound(engine) as conn:
        stmt, params = walk_statement(
            starts,
            as_of,
            steps,
            max_depth=max_depth,
            budget=budget,
            exclude=exclude,
            detail=detail,
            dialect=conn.dialect.name,
        )
        rows = conn.execute(stmt, params).all()
    pairs: set[tuple[str, int]] = set()
    depths: dict[str, int] = {}
    # (0 for an edge, 1 for a group member; version id) -> (source, target, relation,
    # confidence, from, to, depth of from, group id, option, needs); least depth
    taken: dict[
        tuple[int, int], tuple[str, str, str, float, str, str, int, str | None, int | None, int | None]
    ] = {}
    neighbours: dict[int, Neighbour] = {}
    group_concepts: dict[str, ConceptRow] = {}
    g = _THIN + 4 if detail else _THIN  # where a row's group columns start, when it has them
    for r in rows:
        node, depth = r[0], int(r[1])
        pairs.add((node, depth))
        if depth < depths.get(node, depth + 1):
            depths[node] = depth
        if r[2] is None:
            continue
        vid, source, target = int(r[2]), r[3], r[4]
        group = r[g] if len(r) > g else None
        kind = 0 if group is None else 1
        to = target if source == node else source
        if to not in depths or depth + 1 < depths[to]:
            depths[to] = depth + 1
        if (kind, vid) in taken and taken[kind, vid][6] <= depth:
            continue
        if detail:
            if r[_THIN] is None:  # the reached concept is not in force: not a step
                continue
            concept = ConceptRow(int(r[_THIN]), r[_THIN + 1], r[_THIN + 2], r[_THIN + 3])
            if group is None:
                neighbours[vid] = Neighbour(
                    edge=EdgeRow(vid, source, target, r[5], float(r[6])),
                    concept=concept,
                    from_id=node,
                    direction="out" if source == node else "in",
                )
            else:
                group_concepts.setdefault(concept.concept_id, concept)
        option, needs = (None, None) if group is None else (int(r[g + 1]), int(r[g + 2]))
        taken[kind, vid] = (source, target, r[5], float(r[6]), node, to, depth, group, option, needs)
    if max_depth is None:
        # Unbounded rows carry no depth: least depths come breadth-first from the starts.
        found = _distances(params["starts"], ((t[4], t[5]) for t in taken.values()))
        depths = {c: found.get(c, len(depths)) for c in depths}
        taken = {k: (*t[:6], depths[t[4]], *t[7:]) for k, t in taken.items()}
    ordered = tuple(
        sorted(
            (
                WalkRow(vid, t[0], t[1], t[2], t[3], t[6] + 1, t[4], t[5], t[7], t[8], t[9])
                for (_, vid), t in taken.items()
            ),
            # edges before group steps at one depth (without groups: by depth and version id)
            key=lambda x: (x.depth, x.group_id is not None, x.version_id),
        )
    )
    return Walk(
        starts=tuple(params["starts"]),
        rows=ordered,
        depths=depths,
        expanded=frozenset(n for n, d in pairs if max_depth is None or d < max_depth),
        partial=len(pairs) > budget,
        max_depth=max_depth,
        excluded=frozenset(params["exclude"]),
        neighbours=tuple(
            neighbours[x.version_id] for x in ordered if x.group_id is None and x.version_id in neighbours
        ),
        group_concepts=group_concepts,
    )


def closure_size(
    engine: Engine | sa.Connection,
    starts: Collection[str],
    *,
    as_of: AsOf,
    steps: Collection[Step],
    budget: int = COUNT_BUDGET,
) -> int | None:
    """How many concepts an unbounded walk of ``steps`` from ``starts`` reaches (starts
    excluded), counted by the database in the walk's one statement: no row of the closure is
    sent back, so its size costs the walk alone whatever it holds. None when it reaches more
    than ``budget`` concepts (the count stops there)."""
    with _bound(engine) as conn:
        stmt, params = walk_statement(
            starts, as_of, steps, max_depth=None, budget=budget, dialect=conn.dialect.name, count=True
        )
        rows, starts_seen = conn.execute(stmt, params).one()
    return None if rows > budget else int(rows) - int(starts_seen)


@functools.cache
def _fringe_statement(forward: bool, backward: bool) -> sa.Select[Any]:
    """The closure of the starts in the needed-before direction (recursive, capped), the concepts
    one after-step from it, and the needed-before edges of both (module docstring). Rows are
    ``(node, kind, edge..., reached concept...)``, kind 0 for the closure, 1 for what comes after.
    ``forward``/``backward``: whether the needed-before steps take edges forward / backward (the
    after-steps take the same relations the other way)."""
    as_of_valid, as_of_recorded = AS_OF_PARAMS
    starts: sa.BindParameter[list[str]] = sa.bindparam("starts", expanding=True)
    cap = sa.bindparam("cap", type_=sa.Integer())
    anchor = sa.select(C.c.concept_id.label("node")).where(
        C.c.concept_id.in_(starts), in_force(C, as_of_valid, as_of_recorded)
    )
    closure = anchor.cte("closure", recursive=True)
    w = closure.alias("w")
    step = (
        sa.select(_far(w.c.node).label("node"))
        .select_from(w.join(E, _step_condition(w.c.node, forward, backward)))
        .where(in_force(E, as_of_valid, as_of_recorded))
    )
    closure = closure.union(step)
    capped = sa.select(closure.c.node).limit(cap).cte("capped")
    after = _far(capped.c.node)
    successors = (
        sa.select(after.label("node"))
        .select_from(capped.join(E, _step_condition(capped.c.node, backward, forward, "after_")))
        .where(in_force(E, as_of_valid, as_of_recorded), after.not_in(sa.select(capped.c.node)))
        .distinct()
        .cte("successors")
    )
    nodes = sa.union_all(
        sa.select(capped.c.node, sa.literal(0, sa.Integer()).label("kind")),
        sa.select(successors.c.node, sa.literal(1, sa.Integer()).label("kind")),
    ).cte("nodes")
    reached, here = C.alias("reached"), C.alias("here")
    joined = (
        nodes.outerjoin(
            E,
            sa.and_(
                _step_condition(nodes.c.node, forward, backward), in_force(E, as_of_valid, as_of_recorded)
            ),
        )
        .outerjoin(
            reached,
            sa.and_(
                reached.c.concept_id == _far(nodes.c.node), in_force(reached, as_of_valid, as_of_recorded)
            ),
        )
        .outerjoin(
            here, sa.and_(here.c.concept_id == nodes.c.node, in_force(here, as_of_valid, as_of_recorded))
        )
    )
    return sa.select(
        nodes.c.node,
        nodes.c.kind,
        E.c.version_id,
        E.c.source_id,
        E.c.target_id,
        E.c.relation,
        E.c.confidence,
        reached.c.version_id,
        reached.c.concept_id,
        reached.c.name,
        reached.c.summary,
        here.c.version_id,
        here.c.name,
        here.c.summary,
    ).select_from(joined)


def fringe(
    engine: Engine | sa.Connection,
    starts: Collection[str],
    *,
    as_of: AsOf,
    relations: Collection[str] = _LEARNING,
    budget: int = DEFAULT_BUDGET,
) -> Walk:
    """What a learner who knows ``starts`` (1..12 active concepts) can take up next, read in one
    statement (module docstring): the needed-before closure of ``starts`` over ``relations``
    (at most ``budget`` concepts, else ``partial``), the concepts one learning step after it,
    and all the needs of those. ``expanded`` holds the closure and the concepts after it (every
    needed-before edge of theirs is in the rows); the needs of a concept after the closure that
    lie outside it are reached, not expanded."""
    before = learning_steps(NEEDED_BEFORE, relations)
    _, params = walk_statement(starts, as_of, before, max_depth=None, budget=budget)
    del params["exclude"]
    forward, backward = "forward" in params, "backward" in params
    if forward:
        params["after_backward"] = params["forward"]  # the same relations, the other way
    if backward:
        params["after_forward"] = params["backward"]
    with _bound(engine) as conn:
        rows = conn.execute(_fringe_statement(forward, backward), params).all()
    closure = {r[0] for r in rows if r[1] == 0}
    after_closure = {r[0] for r in rows if r[1] == 1}
    steps: list[tuple[str, str]] = []  # (a concept, one of its needs)
    taken: dict[int, Neighbour] = {}
    needs: dict[int, tuple[str, str]] = {}
    for node, _, vid, source, target, relation, confidence, cvid, cid, name, summary, *own in rows:
        if vid is None or cvid is None or own[0] is None:
            continue
        steps.append((node, cid))
        needs.setdefault(int(vid), (node, cid))
        edge = EdgeRow(int(vid), source, target, relation, float(confidence))
        if node in after_closure and cid in closure:
            # a concept after the closure, reached from its need inside the closure
            reached_from, concept = cid, ConceptRow(int(own[0]), node, own[1], own[2])
        else:
            reached_from, concept = node, ConceptRow(int(cvid), cid, name, summary)
        taken.setdefault(
            int(vid),
            Neighbour(
                edge=edge,
                concept=concept,
                from_id=reached_from,
                direction="out" if source == reached_from else "in",
            ),
        )
    depths = _distances(params["starts"], steps)
    depths.update({c: 1 for c in after_closure})
    depths.update({n.concept.concept_id: 2 for n in taken.values() if n.concept.concept_id not in depths})
    # a row goes in the needed-before direction, as a walk's rows do: ``to_id`` is the need
    ordered = tuple(
        WalkRow(vid, n.edge.source_id, n.edge.target_id, n.edge.relation, n.edge.confidence,
                depths.get(needs[vid][0], 0) + 1, *needs[vid])
        for vid, n in sorted(taken.items())
    )  # fmt: skip
    return Walk(
        starts=tuple(params["starts"]),
        rows=ordered,
        depths=depths,
        expanded=frozenset(closure | after_closure),
        partial=len(closure) > budget,
        max_depth=None,
        neighbours=tuple(taken[r.version_id] for r in ordered),
    )


def _distances(starts: Iterable[str], steps: Iterable[tuple[str, str]]) -> dict[str, int]:
    """Breadth-first step counts from ``starts`` along ``(from, to)`` steps."""
    adj: dict[str, list[str]] = {}
    for a, b in steps:
        adj.setdefault(a, []).append(b)
    dist = dict.fromkeys(starts, 0)
    queue = deque(dist)
    while queue:
        node = queue.popleft()
        for nxt in adj.get(node, ()):
            if nxt not in dist:
                dist[nxt] = dist[node] + 1
                queue.append(nxt)
    return dist


def explain_walk(
    engine: Engine,
    starts: Collection[str],
    as_of: AsOf,
    steps: Collection[Step] | None = None,
    **options: Any,
) -> list[str]:
    """The engine's query plan for :func:`walk` (for docs and the plan test)."""
    stmt, params = walk_statement(
        starts, as_of, steps or learning_steps(NEEDED_BEFORE), dialect=engine.dialect.name, **options
    )
    return explain(engine, stmt, params)


# -- paths --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Paths:
    """Shortest learning paths from ``start`` to ``goal``, each a tuple of walk rows in learning
    order (``start`` first). ``proven``: no shorter path can hide outside the walk (every concept
    nearer to ``goal`` than ``start`` was expanded). ``truncated``: more shortest paths exist
    than were listed."""

    start: str
    goal: str
    paths: tuple[tuple[WalkRow, ...], ...]
    length: int | None
    proven: bool
    truncated: bool = False


def shortest_paths(w: Walk, start: str, goal: str, *, limit: int = 16) -> Paths:
    """Every shortest learning path (at most ``limit``) from ``start`` to ``goal`` in a walk
    that started from ``goal`` towards what comes before it (a needed-before walk), pure.

    Distances are recomputed breadth-first over the walk's rows (not trusted from the engine),
    so a path listed is shortest among the edges gathered; ``proven`` says whether that is
    shortest in the graph.
    """
    if goal not in w.starts:
        raise InputError(f"the walk did not start from {goal!r}", field="goal", value=goal)
    dist = _distances([goal], ((r.from_id, r.to_id) for r in w.rows))
    if start not in dist or start == goal:
        open_ = w.unexpanded | ({goal} if w.partial else set())
        return Paths(start, goal, (), None, proven=not open_ and not w.partial)
    length = dist[start]
    proven = not any(dist.get(c, length) < length for c in w.unexpanded)
    # Walk back from start towards goal along rows that shorten the distance by one.
    back: dict[str, list[WalkRow]] = {}
    for row in w.rows:
        if row.to_id in dist and row.from_id in dist and dist[row.to_id] == dist[row.from_id] + 1:
            back.setdefault(row.to_id, []).append(row)
    found: list[tuple[WalkRow, ...]] = []
    truncated = False
    stack: list[tuple[str, tuple[WalkRow, ...]]] = [(start, ())]
    while stack:
        node, prefix = stack.pop()
        if node == goal:
            if len(found) >= limit:
                truncated = True
                break
            found.append(prefix)
            continue
        for row in sorted(back.get(node, ()), key=lambda r: r.version_id, reverse=True):
            stack.append((row.from_id, (*prefix, row)))
    return Paths(start, goal, tuple(found), length, proven=proven, truncated=truncated)


# -- lessons ------------------------------------------------------------------------------------


def lessons_for(
    engine: Engine | sa.Connection, concept_ids: Iterable[str], *, as_of: AsOf
) -> dict[str, tuple[str, ...]]:
    """Lesson ids whose link to each concept, and the lesson itself, are in force as of
    ``as_of``, sorted; concepts without one are absent. One statement per 500 ids."""
    L, LC = schema.lessons, schema.lesson_concepts
    wanted = sorted(set(concept_ids))
    out: dict[str, list[str]] = {}
    with _bound(engine) as conn:
        for i in range(0, len(wanted), 500):
            stmt = (
                sa.select(LC.c.concept_id, LC.c.lesson_id)
                .select_from(LC.join(L, L.c.lesson_id == LC.c.lesson_id))
                .where(LC.c.concept_id.in_(wanted[i : i + 500]), as_of.clause(LC), as_of.clause(L))
                .order_by(LC.c.concept_id, LC.c.lesson_id)
            )
            for cid, lid in conn.execute(stmt):
                out.setdefault(cid, []).append(lid)
    return {cid: tuple(lids) for cid, lids in out.items()}
