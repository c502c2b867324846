"""Stateful property test: the gateway and reader agree with a tiny in-memory bi-temporal model.

Hypothesis drives random sequences of assert / revise / invalidate / retract of concepts and edges
(five concept ids, every relation) with a manual clock that only moves when a rule advances it
(often by zero, so writes share instants). A pure-Python reference model predicts, for each write,
either the exact exception the gateway must raise (and then neither side changes) or the exact
versions it must write, cascades included. After every step the whole version tables must equal
the model, at most one version per key is current, no edge in force has an endpoint out of force,
and snapshots, neighbourhoods and histories at random points on both timelines agree with the model.
"""

from __future__ import annotations

import os
import random
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, ClassVar

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from data_plane import (
    AsOf,
    GraphReader,
    InactiveEndpoint,
    KeyExists,
    NotFound,
    PrerequisiteCycle,
    SelfLoop,
    TemporalConflict,
    UnknownRelation,
    Write,
    WriteGateway,
    WriteRejected,
    connect,
    migrate,
    schema,
)
from data_plane.relations import PREREQUISITE, RELATIONS, canonical_edge
from data_plane.testing import EPOCH, ManualClock, grounding

CONCEPT_IDS = ("a", "b", "c", "d", "e")
NAMES = ("first name", "second name")
REASONS = ("reason one", "reason two")
STEPS = (timedelta(0), timedelta(microseconds=1), timedelta(seconds=1), timedelta(days=1))
MICRO = timedelta(microseconds=1)

SETTINGS = settings(
    max_examples=int(os.environ.get("KG_MODEL_EXAMPLES", "30")),
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

Key = tuple[str, ...]


@dataclass
class MV:
    """One version in the reference model."""

    table: str
    key: Key
    name: str | None
    reason: str
    op: str
    valid_at: datetime
    invalid_at: datetime | None
    recorded_at: datetime
    expired_at: datetime | None = None
    supersedes: int | None = None
    vid: int = 0

    def in_force(self, v: datetime, k: datetime) -> bool:
        # Written out independently of AsOf.holds, which is part of what is under test.
        if self.op == "retract" or self.recorded_at > k:
            return False
        if self.expired_at is not None and self.expired_at <= k:
            return False
        return self.valid_at <= v and (self.invalid_at is None or v < self.invalid_at)

    def row(self) -> tuple[Any, ...]:
        return (
            self.vid,
            self.key,
            self.name,
            self.reason,
            self.op,
            self.valid_at,
            self.invalid_at,
            self.recorded_at,
            self.expired_at,
            self.supersedes,
        )


class Predicted(Exception):
    """The model's prediction that the gateway refuses a write with ``error``."""

    def __init__(self, error: type[Exception]) -> None:
        super().__init__(error.__name__)
        self.error = error


@dataclass
class Change:
    """One version the model expects a write to add, and the current version it closes."""

    new: MV
    current: MV | None


class Model:
    """Bi-temporal versions of concepts and edges, with the gateway's rules in plain Python."""

    def __init__(self) -> None:
        self.versions: list[MV] = []

    def current(self, table: str, key: Key) -> MV | None:
        found = [v for v in self.versions if v.table == table and v.key == key and v.expired_at is None]
        assert len(found) <= 1
        return found[0] if found else None

    def live(self, table: str, key: Key) -> MV | None:
        cur = self.current(table, key)
        return cur if cur is not None and cur.op != "retract" else None

    # -- planning: what a write would add, or which error it must raise -------------------------

    def plan_concept(
        self, mode: str, cid: str, name: str, reason: str, now: datetime, back: bool
    ) -> list[Change]:
        cur = self.current("concepts", (cid,))
        live = cur if cur is not None and cur.op != "retract" else None
        if mode == "assert":
            valid = now - timedelta(days=1) if back else now
            if live is not None and (live.invalid_at is None or live.invalid_at > valid):
                raise Predicted(KeyExists)  # an invalidated key may be asserted again, from its end on
            return [Change(MV("concepts", (cid,), name, reason, "assert", valid, None, now), cur)]
        if live is None:
            raise Predicted(NotFound)
        if mode == "revise":
            if live.name == name and live.reason == reason:
                return []
            new = replace(
                live, name=name, reason=reason, op="revise", recorded_at=now, expired_at=None, vid=0
            )
            return [Change(new, live)]
        if mode == "invalidate":
            if live.invalid_at is not None and live.invalid_at <= now:
                raise Predicted(TemporalConflict)
            if now <= live.valid_at:
                raise Predicted(TemporalConflict)
            new = replace(
                live, reason=reason, op="invalidate", invalid_at=now, recorded_at=now, expired_at=None, vid=0
            )
        else:
            new = replace(live, reason=reason, op="retract", recorded_at=now, expired_at=None, vid=0)
        changes = [Change(new, live)]
        end, retract = new.invalid_at, mode == "retract"
        for e in self.versions:
            if (
                e.table != "concept_edges"
                or e.expired_at is not None
                or e.op == "retract"
                or cid not in e.key[:2]
            ):
                continue
            if not retract and end is not None and e.invalid_at is not None and e.invalid_at <= end:
                continue
            if retract or (end is not None and e.valid_at >= end):
                closed = replace(e, reason=reason, op="retract", recorded_at=now, expired_at=None, vid=0)
            else:
                closed = replace(
                    e, reason=reason, op="invalidate", invalid_at=end, recorded_at=now, expired_at=None, vid=0
                )
            changes.append(Change(closed, e))
        self._check(changes, now)
        return changes

    def plan_edge(self, mode: str, s: str, t: str, rel: str, reason: str, now: datetime) -> list[Change]:
        if rel not in RELATIONS:
            raise Predicted(UnknownRelation)
        if s == t:
            raise Predicted(SelfLoop)
        key = canonical_edge(s, t, rel)
        cur = self.current("concept_edges", key)
        live = cur if cur is not None and cur.op != "retract" else None
        if mode == "assert":
            if live is not None and (live.invalid_at is None or live.invalid_at > now):
                raise Predicted(KeyExists)
            new = MV("concept_edges", key, None, reason, "assert", now, None, now)
            changes = [Change(new, cur)]
        elif live is None:
            raise Predicted(NotFound)
        elif mode == "revise":
            if live.reason == reason:
                return []
            changes = [Change(replace(live, reason=reason, op="revise", recorded_at=now, vid=0), live)]
        elif mode == "invalidate":
            if (live.invalid_at is not None and live.invalid_at <= now) or now <= live.valid_at:
                raise Predicted(TemporalConflict)
            new = replace(live, reason=reason, op="invalidate", invalid_at=now, recorded_at=now, vid=0)
            changes = [Change(new, live)]
        else:
            changes = [Change(replace(live, reason=reason, op="retract", recorded_at=now, vid=0), live)]
        self._check(changes, now)
        return changes

    def _check(self, changes: list[Change], now: datetime) -> None:
        """Endpoint and prerequisite-cycle rules over the state the batch would leave."""
        after = {(c.new.table, c.new.key): c.new for c in changes}

        def concept(cid: str) -> MV | None:
            return after.get(("concepts", (cid,)), self.current("concepts", (cid,)))

        for c in changes:
            e = c.new
            if e.table != "concept_edges" or e.op == "retract":
                continue
            for cid in e.key[:2]:
                end = concept(cid)
                if end is None or end.op == "retract":
                    raise Predicted(InactiveEndpoint)
                if end.invalid_at is not None and (e.invalid_at is None or e.invalid_at > end.invalid_at):
                    raise Predicted(InactiveEndpoint)
        graph: dict[str, set[str]] = {}
        for v in self.versions:
            v = after.get((v.table, v.key), v) if v.expired_at is None else v
            if (
                v.table == "concept_edges"
                and v.key[2] == PREREQUISITE
                and v.expired_at is None
                and v.op != "retract"
                and (v.invalid_at is None or v.invalid_at > now)
            ):
                graph.setdefault(v.key[0], set()).add(v.key[1])
        for c in changes:
            v = c.new
            if c.current is None and v.table == "concept_edges" and v.key[2] == PREREQUISITE:
                graph.setdefault(v.key[0], set()).add(v.key[1])
        if _has_cycle(graph):
            raise Predicted(PrerequisiteCycle)

    def commit(self, changes: list[Change], now: datetime, vids: dict[tuple[str, Key], int]) -> None:
        for c in changes:
            if c.current is not None:
                c.current.expired_at = now
                c.new.supersedes = c.current.vid
            c.new.vid = vids[(c.new.table, c.new.key)]
            self.versions.append(c.new)


def _has_cycle(graph: dict[str, set[str]]) -> bool:
    state: dict[str, int] = {}

    def visit(n: str) -> bool:
        state[n] = 1
        for m in graph.get(n, ()):
            if state.get(m) == 1 or (m not in state and visit(m)):
                return True
        state[n] = 2
        return False

    return any(n not in state and visit(n) for n in list(graph))


class BiTemporalMachine(RuleBasedStateMachine):
    """Random writes against a fresh database and the reference model, compared after every step."""

    make_database: ClassVar[Callable[[], tuple[str, Callable[[], None]]]]

    def __init__(self) -> None:
        super().__init__()
        url, self._cleanup = type(self).make_database()
        self.engine = connect(url)
        self.clock = ManualClock(now=EPOCH, step=timedelta(0))
        self.gateway = WriteGateway(self.engine, clock=self.clock)
        self.reader = GraphReader(self.engine, clock=self.clock)
        self.model = Model()
        self.times: set[datetime] = {EPOCH}
        self.rnd = random.Random(0)

    def teardown(self) -> None:
        self.engine.dispose()
        self._cleanup()

    @initialize(seed=st.integers(0, 2**32 - 1))
    def seed_query_points(self, seed: int) -> None:
        self.rnd = random.Random(seed)

    # -- rules --------------------------------------------------------------------------------

    @rule(delta=st.sampled_from(STEPS))
    def advance(self, delta: timedelta) -> None:
        self.clock.advance(delta)

    @initialize(n=st.integers(2, len(CONCEPT_IDS)), back=st.booleans())
    def some_concepts(self, n: int, back: bool) -> None:
        """Start from a few concepts so that edge writes have something to connect."""
        for cid in CONCEPT_IDS[:n]:
            self.write_concept_id("assert", cid, NAMES[0], REASONS[0], back)

    def _pick(self, data: st.DataObject, pool: list[Any], fallback: st.SearchStrategy[Any]) -> Any:
        # Mostly aim at what exists, so that revisions, closures and cascades actually happen.
        if pool and data.draw(st.integers(0, 9), label="aim") < 8:
            return data.draw(st.sampled_from(pool))
        return data.draw(fallback)

    def _live(self, table: str) -> list[Key]:
        return sorted(
            v.key
            for v in self.model.versions
            if v.table == table and v.expired_at is None and v.op != "retract"
        )

    @rule(
        data=st.data(),
        mode=st.sampled_from(("assert", "revise", "invalidate", "retract")),
        name=st.sampled_from(NAMES),
        reason=st.sampled_from(REASONS),
        back=st.booleans(),
    )
    def write_concept(self, data: st.DataObject, mode: str, name: str, reason: str, back: bool) -> None:
        live = [k[0] for k in self._live("concepts")]
        cid = (
            data.draw(st.sampled_from(CONCEPT_IDS))
            if mode == "assert"
            else self._pick(data, live, st.sampled_from(CONCEPT_IDS))
        )
        self.write_concept_id(mode, cid, name, reason, back)

    def write_concept_id(self, mode: str, cid: str, name: str, reason: str, back: bool) -> None:
        now = self.clock.now
        if mode == "assert":
            valid_at = now - timedelta(days=1) if back else None
            w = Write.concept(cid, grounding=grounding(reason), name=name, valid_at=valid_at)
        elif mode == "revise":
            w = Write.concept(cid, grounding=grounding(reason), mode="revise", name=name)
        else:
            w = Write.concept(cid, grounding=grounding(reason), mode=mode)
        self._apply(w, lambda: self.model.plan_concept(mode, cid, name, reason, now, back))

    @rule(
        data=st.data(),
        mode=st.sampled_from(("assert", "assert", "assert", "revise", "invalidate", "retract")),
        reason=st.sampled_from(REASONS),
    )
    def write_edge(self, data: st.DataObject, mode: str, reason: str) -> None:
        any_edge = st.tuples(
            st.sampled_from(CONCEPT_IDS),
            st.sampled_from(CONCEPT_IDS),
            st.sampled_from((*RELATIONS, PREREQUISITE, PREREQUISITE, "causes")),
        )
        if mode == "assert":
            live = [k[0] for k in self._live("concepts")]
            if len(live) >= 2 and data.draw(st.integers(0, 9), label="aim") < 8:
                s, t = data.draw(st.lists(st.sampled_from(live), min_size=2, max_size=2, unique=True))
                rel = data.draw(st.sampled_from((*RELATIONS, PREREQUISITE, PREREQUISITE)))
            else:
                s, t, rel = data.draw(any_edge)
        else:
            s, t, rel = self._pick(data, self._live("concept_edges"), any_edge)
        now = self.clock.now
        w = Write.edge(s, t, rel, grounding=grounding(reason), mode=mode)
        self._apply(w, lambda: self.model.plan_edge(mode, s, t, rel, reason, now))

    def _apply(self, write: Write, plan: Callable[[], list[Change]]) -> None:
        now = self.clock.now
        try:
            changes: list[Change] | None = plan()
            expected: type[Exception] | None = None
        except Predicted as p:
            changes, expected = None, p.error
        before = self._rows() if expected is not None else []
        try:
            result = self.gateway.apply([write])
        except WriteRejected as exc:
            assert expected is not None, f"gateway refused {write} ({exc!r}); the model accepted it"
            assert type(exc) is expected, f"gateway raised {exc!r}, model predicted {expected.__name__}"
            assert self._rows() == before, "a refused write changed the database"
            return
        except NotFound as exc:
            assert expected is NotFound, f"gateway raised {exc!r}, model predicted {expected}"
            assert self._rows() == before
            return
        assert expected is None, f"gateway accepted {write}; the model predicted {expected.__name__}"
        assert changes is not None
        vids = {(v.table, v.key): v.stamp.version_id for v in (*result.written, *result.cascaded)}
        assert set(vids) == {(c.new.table, c.new.key) for c in changes}
        self.model.commit(changes, now, vids)
        self.times.add(now)
        self.times.add(now - timedelta(days=1))

    # -- invariants ---------------------------------------------------------------------------

    def _rows(self) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        with self.engine.connect() as conn:
            for table in (schema.concepts, schema.concept_edges):
                keys = schema.KEY_COLUMNS[table.name]
                name = table.c.name if table.name == "concepts" else sa.null()
                for r in conn.execute(
                    sa.select(table, name.label("content_name")).order_by(table.c.version_id)
                ).mappings():
                    out.append(
                        (
                            r["version_id"],
                            tuple(r[k] for k in keys),
                            r["content_name"],
                            r["reason"],
                            r["op"],
                            r["valid_at"],
                            r["invalid_at"],
                            r["recorded_at"],
                            r["expired_at"],
                            r["supersedes_id"],
                        )
                    )
        return out

    @invariant()
    def tables_equal_the_model(self) -> None:
        by_table = {"concepts": 0, "concept_edges": 1}
        expected = sorted((v.row() for v in self.model.versions), key=lambda r: (by_table[_table(r)], r[0]))
        assert self._rows() == expected

    @invariant()
    def at_most_one_current_version_per_key(self) -> None:
        with self.engine.connect() as conn:
            for table in (schema.concepts, schema.concept_edges):
                keys = [table.c[k] for k in schema.KEY_COLUMNS[table.name]]
                stmt = (
                    sa.select(*keys)
                    .where(table.c.expired_at.is_(None))
                    .group_by(*keys)
                    .having(sa.func.count() > 1)
                )
                assert conn.execute(stmt).all() == []

    @invariant()
    def reads_agree_with_the_model(self) -> None:
        times = sorted(self.times)
        points = [(self.clock.now, self.clock.now)]
        for _ in range(2):
            v = self.rnd.choice(times) + self.rnd.choice((-MICRO, timedelta(0), MICRO))
            k = self.rnd.choice(times) + self.rnd.choice((-MICRO, timedelta(0), MICRO))
            points.append((v, k))
        for v, k in points:
            in_force = [m for m in self.model.versions if m.in_force(v, k)]
            concepts = {m.key[0]: m.vid for m in in_force if m.table == "concepts"}
            edges = [m for m in in_force if m.table == "concept_edges"]

            snap = self.reader.snapshot(AsOf(v, k))
            assert sorted(c.stamp.version_id for c in snap.concepts) == sorted(concepts.values())
            assert sorted(e.stamp.version_id for e in snap.edges) == sorted(m.vid for m in edges)
            # No edge in force has an endpoint out of force, at any point on either timeline.
            assert all(e.source_id in concepts and e.target_id in concepts for e in snap.edges)

            ids = set(self.rnd.sample(CONCEPT_IDS, self.rnd.randint(1, 2)))
            expected = set()
            for m in edges:
                s, t, _ = m.key
                for near, far, direction in ((s, t, "out"), (t, s, "in")):
                    if near in ids and far in concepts:
                        expected.add((m.vid, concepts[far], near, direction))
            found = {
                (n.edge.version_id, n.concept.version_id, n.from_id, n.direction)
                for n in self.reader.neighbourhood(ids, as_of=AsOf(v, k))
            }
            assert found == expected, (v, k, ids)

        if self.model.versions:
            some = self.rnd.choice(self.model.versions)
            history = self.reader.history(some.table, some.key)
            mine = sorted(
                (m for m in self.model.versions if (m.table, m.key) == (some.table, some.key)),
                key=lambda m: (m.recorded_at, m.vid),
            )
            assert [(h.stamp.version_id, h.stamp.op, h.grounding.reason) for h in history] == [
                (m.vid, m.op, m.reason) for m in mine
            ]


def _table(row: tuple[Any, ...]) -> str:
    return "concepts" if len(row[1]) == 1 else "concept_edges"


def _sqlite_database() -> tuple[str, Callable[[], None]]:
    tmp = tempfile.TemporaryDirectory()
    url = f"sqlite:///{tmp.name}/model.sqlite3"
    engine = connect(url)
    migrate(engine)
    engine.dispose()
    return url, tmp.cleanup


@pytest.mark.slow  # a long Hypothesis state machine
def test_gateway_and_reader_agree_with_the_model_on_sqlite() -> None:
    """On SQLite, random write sequences leave the database, and every read of it, equal to the model."""
    machine = type("SQLiteModel", (BiTemporalMachine,), {"make_database": staticmethod(_sqlite_database)})
    run_state_machine_as_test(machine, settings=SETTINGS)  # type: ignore[no-untyped-call]


@pytest.mark.slow  # a long Hypothesis state machine
@pytest.mark.postgres
def test_gateway_and_reader_agree_with_the_model_on_postgresql(pg_template: str) -> None:
    """On PostgreSQL, random write sequences leave the database, and every read of it, equal to the model."""
    url = os.environ["KG_TEST_POSTGRES_URL"]
    admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")

    def database() -> tuple[str, Callable[[], None]]:
        name = f"kg_model_{uuid.uuid4().hex[:12]}"
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}" TEMPLATE "{pg_template}"')

        def drop() -> None:
            with admin.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

        return sa.make_url(url).set(database=name).render_as_string(hide_password=False), drop

    machine = type("PostgresModel", (BiTemporalMachine,), {"make_database": staticmethod(database)})
    # A third of the SQLite examples keeps this near 40 s (a fresh database per example costs more here).
    pg_settings = settings(SETTINGS, max_examples=max(1, SETTINGS.max_examples // 3))
    try:
        run_state_machine_as_test(machine, settings=pg_settings)  # type: ignore[no-untyped-call]
    finally:
        admin.dispose()
