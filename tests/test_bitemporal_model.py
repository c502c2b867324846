"""Stateful property test: the gateway, the reader and answer reuse agree with a small in-memory
bi-temporal reference model of valid periods.

Hypothesis drives random sequences of assert, revise, correct, invalidate, retract and re-assert
of concepts, edges (every relation), lesson links and requirement groups (a group with its
members in one write; revisions of k and of the options; closing a concept a group names closes
the group), each over a valid period drawn in the past,
at the present, in the future and on the boundaries of the periods already stored (and a
microsecond either side), with a manual clock that only moves when a rule advances it (often by
zero, so writes share instants). The model, written here independently of the gateway, keeps
every version with its four stamps and applies the portion rule (SQL:2011 ``FOR PORTION OF``): a
write covers a portion of valid time, and each version it supersedes keeps the parts of its
period the portion does not cover, recorded again. It predicts each write's exact error, or the
exact versions it adds (cascades included).

After every step: the version tables equal the model's (as multisets of content, reason, op and
stamps); no two current versions of a key overlap in valid time; and at the current instant and
at random (valid, recorded) points drawn from the stamps seen (boundaries and a microsecond either
side) the snapshot (concepts, edges, lesson links), neighbourhoods, a diff between two recorded
times and the history of a key equal the model's. A rule asks questions through answer reuse: the
answer a learner gets (reused or not) equals a fresh one at its point, cites only edges the model
has in force there, and a replay of a recorded answer reproduces it. Another writes while a
reader reads (the write's transaction open, as an import's is): the reader's snapshot and answer,
as known at the point it read, are the same after the commit, and the answer's replay reproduces.
Writes are stamped after the latest write that wrote something (``data_plane.write_clock``), and a
read "now" reads as known no later than it.
"""

from __future__ import annotations

import functools
import os
import random
import shutil
import tempfile
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from control_plane.planning.loop import Planner
from control_plane.planning.replay import replay
from control_plane.synthesizers.offline import OfflineSynthesizer
from data_plane import (
    KEEP,
    AsOf,
    BatchResult,
    GraphReader,
    InactiveEndpoint,
    KeyExists,
    NotFound,
    PrerequisiteCycle,
    RequirementRejected,
    RequirementWrite,
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
from data_plane.reuse import AnswerIndex
from data_plane.testing import EPOCH, ManualClock, grounding
from data_plane.write_clock import known_at, stamp_after

NAMES = {"a": "Alpha", "b": "Beta", "c": "Gamma", "d": "Delta", "e": "Epsilon"}
GROUP_IDS = ("g1", "g2")
GROUPS, MEMBERS = "requirement_groups", "requirement_members"
TABLES = (
    schema.concepts,
    schema.concept_edges,
    schema.lesson_concepts,
    schema.requirement_groups,
    schema.requirement_members,
)
CONCEPT_IDS = tuple(NAMES)
LESSON_IDS = ("L1", "L2")
SUMMARIES = ("first summary", "second summary")
REASONS = ("reason one", "reason two")
STEPS = (timedelta(0), timedelta(microseconds=1), timedelta(seconds=1), timedelta(days=1))
MICRO = timedelta(microseconds=1)
QUESTIONS = ("What must I learn before {}?", "What does {} build on?")
# Open ends, for the model's own arithmetic (the store keeps NULL).
NEVER = datetime(1, 1, 1, tzinfo=UTC)
FOREVER = datetime(9999, 12, 31, tzinfo=UTC)

# Default runs: a fixed, modest number of sequences (derandomized, so CI runs the same ones);
# the slow tests run many more, drawn afresh.
EXAMPLES = int(os.environ.get("KG_MODEL_EXAMPLES", "10"))
SLOW_EXAMPLES = int(os.environ.get("KG_MODEL_SLOW_EXAMPLES", "50"))


def _settings(examples: int, *, derandomize: bool) -> settings:
    return settings(
        max_examples=examples,
        stateful_step_count=25,
        deadline=None,
        derandomize=derandomize,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


Key = tuple[str, ...]


@dataclass
class MV:
    """One version in the reference model (``summary`` is a concept's content, a group's
    ``target|needs``; None otherwise)."""

    table: str
    key: Key
    summary: str | None
    reason: str
    op: str
    valid_at: datetime
    invalid_at: datetime | None
    recorded_at: datetime
    expired_at: datetime | None = None

    @property
    def start(self) -> datetime:
        return self.valid_at

    @property
    def end(self) -> datetime:
        return FOREVER if self.invalid_at is None else self.invalid_at

    def in_force(self, v: datetime, k: datetime) -> bool:
        # Written out independently of AsOf.holds, which is part of what is under test.
        if self.op == "retract" or self.recorded_at > k:
            return False
        if self.expired_at is not None and self.expired_at <= k:
            return False
        return self.valid_at <= v < self.end

    def over(self, start: datetime, end: datetime, **changes: Any) -> MV:
        """This version over ``[start, end)``, with ``changes``, recorded by the model later."""
        return replace(self, valid_at=start, invalid_at=None if end == FOREVER else end, **changes)

    def row(self) -> tuple[Any, ...]:
        return (
            self.table,
            self.key,
            self.summary,
            self.reason,
            self.op,
            self.valid_at,
            self.invalid_at,
            self.recorded_at,
            self.expired_at,
        )


def _cited(payload: dict[str, Any]) -> set[Key]:
    """The edges an answer cites, by key."""
    keys = {
        e["edge_id"]: (e["source_id"], e["target_id"], e["relation"]) for e in payload["evidence"]["edges"]
    }
    return {keys[i] for i in payload["cited_edges"]}


class Predicted(Exception):
    """The model's prediction that the gateway refuses a write with ``error``."""

    def __init__(self, error: type[Exception]) -> None:
        super().__init__(error.__name__)
        self.error = error


@dataclass
class Plan:
    """What a write does in the model: the versions it adds and the current ones it closes."""

    added: list[MV]
    closed: list[MV]


def _meets(a_start: datetime, a_end: datetime, b_start: datetime, b_end: datetime) -> bool:
    return a_start < b_end and b_start < a_end


class Model:
    """Bi-temporal versions of concepts, edges and lesson links, with the write rules in plain
    Python over closed-open periods (open ends as NEVER/FOREVER)."""

    def __init__(self) -> None:
        self.versions: list[MV] = []

    def currents(self, table: str, key: Key) -> list[MV]:
        found = [v for v in self.versions if v.table == table and v.key == key and v.expired_at is None]
        return sorted(found, key=lambda v: v.valid_at)

    def live(self, table: str, key: Key) -> list[MV]:
        return [v for v in self.currents(table, key) if v.op != "retract"]

    # -- one write ----------------------------------------------------------------------------

    def plan(
        self,
        mode: str,
        table: str,
        key: Key,
        *,
        summary: str | None,
        reason: str,
        start: datetime | None,
        end: datetime | None,
        now: datetime,
        strict: bool = True,
    ) -> Plan:
        live = self.live(table, key)
        if mode != "assert" and not live:
            raise Predicted(NotFound)
        if mode == "assert":
            s, e = start or now, end or FOREVER
            if e <= s:
                raise Predicted(TemporalConflict)
            if any(_meets(v.start, v.end, s, e) for v in live):
                raise Predicted(KeyExists)
            closed = [
                v for v in self.currents(table, key) if v.op == "retract" and _meets(v.start, v.end, s, e)
            ]
            new = MV(table, key, summary, reason, "assert", s, None if e == FOREVER else e, now)
            return Plan([new], closed)
        if mode == "retract":
            return Plan(
                [v.over(v.start, v.end, reason=reason, op="retract", recorded_at=now) for v in live], live
            )
        if mode == "correct":
            return self._correct(live, summary, reason, start, now)
        s = (start or NEVER) if mode == "revise" else (start or now)
        e = end or FOREVER
        if e <= s:
            raise Predicted(TemporalConflict)
        hit = [v for v in live if _meets(v.start, v.end, s, e)]
        if not hit:
            raise Predicted(TemporalConflict)
        if mode == "revise":
            return self._revise(hit, summary, reason, s, e, now)
        if strict and len(hit) == len(live) and all(s <= v.start and v.end <= e for v in hit):
            raise Predicted(TemporalConflict)  # nothing would be left: retract instead
        added: list[MV] = []
        for v in hit:
            if v.start < s:
                added.append(v.over(v.start, s, reason=reason, op="invalidate", recorded_at=now))
            else:
                added.append(v.over(v.start, min(v.end, e), reason=reason, op="retract", recorded_at=now))
            if e < v.end:
                added.append(v.over(e, v.end, op="revise", recorded_at=now))
        return Plan(added, hit)

    def _revise(
        self, hit: list[MV], summary: str | None, reason: str, s: datetime, e: datetime, now: datetime
    ) -> Plan:
        added: list[MV] = []
        closed: list[MV] = []
        for v in hit:
            new_summary = summary if summary is not None else v.summary
            if (new_summary, reason) == (v.summary, v.reason):
                continue
            closed.append(v)
            if v.start < s:
                added.append(v.over(v.start, s, op="revise", recorded_at=now))
            added.append(
                v.over(
                    max(v.start, s),
                    min(v.end, e),
                    summary=new_summary,
                    reason=reason,
                    op="revise",
                    recorded_at=now,
                )
            )
            if e < v.end:
                added.append(v.over(e, v.end, op="revise", recorded_at=now))
        return Plan(added, closed)

    def _correct(
        self, live: list[MV], summary: str | None, reason: str, start: datetime | None, now: datetime
    ) -> Plan:
        first, last = live[0], live[-1]
        s, e = start or first.start, last.end
        if e <= s:
            raise Predicted(TemporalConflict)
        new_summary = summary if summary is not None else last.summary
        if len(live) == 1 and (s, new_summary, reason) == (first.start, first.summary, first.reason):
            return Plan([], [])
        table, key = first.table, first.key
        closed = [
            *live,
            *(v for v in self.currents(table, key) if v.op == "retract" and _meets(v.start, v.end, s, e)),
        ]
        added: list[MV] = []
        if s > first.start:
            added.append(
                first.over(first.start, min(s, first.end), reason=reason, op="retract", recorded_at=now)
            )
        added.append(first.over(s, e, summary=new_summary, reason=reason, op="revise", recorded_at=now))
        return Plan(added, closed)

    def cover(self, table: str, key: Key, reason: str, s: datetime, e: datetime, now: datetime) -> Plan:
        """The key holds over all of [s, e): asserted over each part where it does not yet."""
        gaps = [(s, e)]
        for v in self.live(table, key):
            gaps = [p for a, b in gaps for p in ((a, min(b, v.start)), (max(a, v.end), b)) if p[0] < p[1]]
        out = Plan([], [])
        for a, b in gaps:
            out.closed += [
                v
                for v in self.currents(table, key)
                if v.op == "retract" and _meets(v.start, v.end, a, b) and v not in out.closed
            ]
            out.added.append(MV(table, key, None, reason, "assert", a, None if b == FOREVER else b, now))
        return out

    def requirement(
        self,
        mode: str,
        gid: str,
        *,
        target: str | None,
        needs: int | None,
        options: list[frozenset[str]] | None,
        reason: str,
        start: datetime | None,
        end: datetime | None,
        now: datetime,
    ) -> Plan:
        """A requirement write: the group row, then its members, in the gateway's order of
        refusals (the group's shape first, then each key's own rule)."""
        if mode in ("invalidate", "retract"):
            p = self.plan(mode, GROUPS, (gid,), summary=None, reason=reason, start=start, end=end, now=now)
            more = self.cascade_members(gid, p, mode, reason, end if mode == "invalidate" else None, now)
            return Plan(p.added + more.added, p.closed + more.closed)
        if mode == "assert":
            assert target is not None and needs is not None and options is not None
            _check_shape(target, needs, options)
            out = self.plan(
                "assert",
                GROUPS,
                (gid,),
                summary=f"{target}|{needs}",
                reason=reason,
                start=start,
                end=end,
                now=now,
            )
            for label, option in enumerate(options, 1):
                for c in sorted(option):
                    p = self.plan(
                        "assert",
                        MEMBERS,
                        (gid, str(label), c),
                        summary=None,
                        reason=reason,
                        start=start or now,
                        end=end,
                        now=now,
                    )
                    out = Plan(out.added + p.added, out.closed + p.closed)
            return out
        live = self.live(GROUPS, (gid,))
        if not live:
            raise Predicted(NotFound)
        target = (live[-1].summary or "").split("|")[0]
        span: tuple[datetime, datetime] | None = None
        if options is not None:
            ps, pe = start or NEVER, end or FOREVER
            spans = _merged(
                sorted((max(v.start, ps), min(v.end, pe)) for v in live if _meets(v.start, v.end, ps, pe))
            )
            if len(spans) > 1:
                raise Predicted(TemporalConflict)
            if spans:
                _check_shape(
                    target,
                    needs if needs is not None else int((live[-1].summary or "").split("|")[1]),
                    options,
                )
                span = spans[0]
        out = self.plan(
            "revise",
            GROUPS,
            (gid,),
            summary=None if needs is None else f"{target}|{needs}",
            reason=reason,
            start=start,
            end=end,
            now=now,
        )
        if span is None or options is None:
            return out
        s, e = span
        inside = [v for v in self.member_versions(gid) if _meets(v.start, v.end, s, e)]
        old: dict[str, set[str]] = {}
        for v in inside:
            old.setdefault(v.key[1], set()).add(v.key[2])
        labels = _labels({k: frozenset(old[k]) for k in sorted(old, key=int)}, options)
        wanted = {(label, c) for label, o in labels.items() for c in o}
        for label, c in sorted({(v.key[1], v.key[2]) for v in inside} - wanted):
            p = self.plan(
                "invalidate",
                MEMBERS,
                (gid, label, c),
                summary=None,
                reason=reason,
                start=s,
                end=None if e == FOREVER else e,
                now=now,
                strict=False,
            )
            out = Plan(out.added + p.added, out.closed + p.closed)
        for label, c in sorted(wanted):
            p = self.cover(MEMBERS, (gid, label, c), reason, s, e, now)
            out = Plan(out.added + p.added, out.closed + p.closed)
        return out

    def member_versions(self, gid: str) -> list[MV]:
        return [
            v
            for v in self.versions
            if v.table == MEMBERS and v.key[0] == gid and v.expired_at is None and v.op != "retract"
        ]

    def cascade_members(
        self, gid: str, plan: Plan, mode: str, reason: str, until: datetime | None, now: datetime
    ) -> Plan:
        """Closing a group closes its members over the same portion."""
        return self._close_with(
            plan, mode, reason, until, now, sorted({(MEMBERS, v.key) for v in self.member_versions(gid)})
        )

    def cascade(
        self, cid: str, plan: Plan, mode: str, reason: str, until: datetime | None, now: datetime
    ) -> Plan:
        """Closing a concept closes its edges, lesson links and the groups that name it (as
        target or member, and so their members) over the same portion."""
        keys = sorted(
            {
                (v.table, v.key)
                for v in self.versions
                if v.expired_at is None
                and v.op != "retract"
                and (
                    (v.table == "concept_edges" and cid in v.key[:2])
                    or (v.table == "lesson_concepts" and v.key[1] == cid)
                )
            }
        )
        groups = {
            (GROUPS, (v.key[0],))
            for v in self.versions
            if v.expired_at is None
            and v.op != "retract"
            and (
                (v.table == GROUPS and (v.summary or "").split("|")[0] == cid)
                or (v.table == MEMBERS and v.key[2] == cid)
            )
            and self.live(GROUPS, (v.key[0],))
        }
        out = self._close_with(plan, mode, reason, until, now, [*keys, *sorted(groups)])
        for key in sorted({v.key for v in out.added if v.table == GROUPS}):
            sub = Plan([v for v in out.added if v.table == GROUPS and v.key == key], [])
            more = self.cascade_members(key[0], sub, mode, reason, until, now)
            out = Plan(out.added + more.added, out.closed + more.closed)
        return out

    def _close_with(
        self,
        plan: Plan,
        mode: str,
        reason: str,
        until: datetime | None,
        now: datetime,
        keys: list[tuple[str, Key]],
    ) -> Plan:
        if mode not in ("invalidate", "retract") or not plan.added:
            return Plan([], [])
        starts = [v.invalid_at for v in plan.added if v.op == "invalidate"]
        start = starts[0] if starts else min(v.valid_at for v in plan.added if v.op == "retract")
        out = Plan([], [])
        for table, key in keys:
            live = self.live(table, key)
            if mode == "invalidate" and not any(
                _meets(v.start, v.end, start, until or FOREVER) for v in live
            ):
                continue
            p = self.plan(
                mode, table, key, summary=None, reason=reason, start=start, end=until, now=now, strict=False
            )
            out.added += p.added
            out.closed += p.closed
        return out

    # -- the batch's checks, over the state it would leave ----------------------------------------

    def check(self, plan: Plan, now: datetime) -> None:
        closed = {id(v) for v in plan.closed}
        after = [v for v in self.versions if v.expired_at is None and id(v) not in closed] + plan.added
        held = [v for v in after if v.op != "retract"]

        def coverage(cid: str) -> list[tuple[datetime, datetime]]:
            return sorted((v.start, v.end) for v in held if v.table == "concepts" and v.key == (cid,))

        for v in held:
            if v.table == "concepts":
                continue
            if v.table == GROUPS:
                ends: tuple[str, ...] = ((v.summary or "").split("|")[0],)
            elif v.table == MEMBERS:
                ends = v.key[2:]
            else:
                ends = v.key[:2] if v.table == "concept_edges" else v.key[1:]
            for cid in ends:
                at = v.start
                for s, e in coverage(cid):
                    if s <= at < e:
                        at = e
                if at < v.end:
                    raise Predicted(InactiveEndpoint)
        _check_groups(held)
        ordered = any(
            (v.table == "concept_edges" and v.key[2] == PREREQUISITE) or v.table == MEMBERS
            for v in (*plan.added, *plan.closed)
        )
        if ordered and any(v.table == MEMBERS for v in (*self.versions, *plan.added)):
            if _unlearnable([v for v in held if v.end > now]):
                raise Predicted(PrerequisiteCycle)
            return
        touched = any(v.table == "concept_edges" and v.key[2] == PREREQUISITE for v in plan.added)
        graph: dict[str, set[str]] = {}
        for v in held:
            if v.table == "concept_edges" and v.key[2] == PREREQUISITE and v.end > now:
                graph.setdefault(v.key[0], set()).add(v.key[1])
        if touched and _has_cycle(graph):
            raise Predicted(PrerequisiteCycle)

    def commit(self, plan: Plan, now: datetime) -> None:
        for v in plan.closed:
            v.expired_at = now
        self.versions += plan.added


def _check_shape(target: str, needs: int, options: list[frozenset[str]]) -> None:
    if any(target in o for o in options) or not 1 <= needs <= len(options):
        raise Predicted(RequirementRejected)


def _merged(parts: list[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    out: list[tuple[datetime, datetime]] = []
    for a, b in parts:
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _labels(old: dict[str, frozenset[str]], new: list[frozenset[str]]) -> dict[str, frozenset[str]]:
    """Option numbers as a revision keeps them: an unchanged option keeps its number, a new one
    takes the smallest free number (written here apart from the gateway's)."""
    out: dict[str, frozenset[str]] = {}
    free = dict(old)
    rest = []
    for o in new:
        hit = [label for label, x in free.items() if x == o]
        if hit:
            out[hit[0]] = o
            del free[hit[0]]
        else:
            rest.append(o)
    n = 0
    for o in rest:
        n += 1
        while str(n) in out:
            n += 1
        out[str(n)] = o
    return out


def _check_groups(held: list[MV]) -> None:
    """Every group's members hold only where it does, never name its target, and give it at
    least ``needs`` options at every valid time it holds."""
    for gid in {v.key[0] for v in held if v.table in (GROUPS, MEMBERS)}:
        versions = [v for v in held if v.table == GROUPS and v.key == (gid,)]
        members = [v for v in held if v.table == MEMBERS and v.key[0] == gid]
        if len({(v.summary or "").split("|")[0] for v in versions}) > 1:
            raise Predicted(RequirementRejected)
        spans = _merged(sorted((v.start, v.end) for v in versions))
        for m in members:
            if not any(a <= m.start and m.end <= b for a, b in spans):
                raise Predicted(RequirementRejected)
            if any(
                m.key[2] == (v.summary or "").split("|")[0] and _meets(v.start, v.end, m.start, m.end)
                for v in versions
            ):
                raise Predicted(RequirementRejected)
        cuts = sorted({t for v in versions + members for t in (v.start, v.end)})
        for v in versions:
            needs = int((v.summary or "").split("|")[1])
            inner = [t for t in cuts if v.start < t < v.end]
            for a, b in zip([v.start, *inner], [*inner, v.end], strict=True):
                if len({m.key[1] for m in members if m.start <= a and b <= m.end}) < needs:
                    raise Predicted(RequirementRejected)


def _unlearnable(open_versions: list[MV]) -> bool:
    """Is some concept learnable in no order, over what is open now or later (a group needs the
    most any open version of it needs, from the union of its open options)? A plain fixed point,
    written here apart from the gateway's worklist."""
    plain = {
        (v.key[0], v.key[1]) for v in open_versions if v.table == "concept_edges" and v.key[2] == PREREQUISITE
    }
    groups: dict[str, tuple[str, int]] = {}
    for v in open_versions:
        if v.table == GROUPS:
            target, needs = (v.summary or "").split("|")
            groups[v.key[0]] = (target, max(int(needs), groups.get(v.key[0], (target, 0))[1]))
    options: dict[str, dict[str, set[str]]] = {}
    for v in open_versions:
        if v.table == MEMBERS and v.key[0] in groups:
            options.setdefault(v.key[0], {}).setdefault(v.key[1], set()).add(v.key[2])
    nodes = {n for pair in plain for n in pair} | {t for t, _ in groups.values()}
    nodes |= {c for opts in options.values() for o in opts.values() for c in o}
    learnt: set[str] = set()
    while True:
        more = {
            n
            for n in nodes - learnt
            if all(a in learnt for a, b in plain if b == n)
            and all(
                sum(1 for o in options.get(gid, {}).values() if o <= learnt) >= k
                for gid, (t, k) in groups.items()
                if t == n
            )
        }
        if not more:
            return bool(nodes - learnt)
        learnt |= more


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
        self.planner = Planner(
            self.reader,
            OfflineSynthesizer(),
            gateway=self.gateway,
            clock=self.clock,
            intent_model=None,
            reuse=AnswerIndex(self.reader),
        )
        self.model = Model()
        self.times: set[datetime] = {EPOCH}
        self.latest: datetime | None = None
        self.recorded: list[str] = []
        self.rnd = random.Random(0)

    def teardown(self) -> None:
        self.engine.dispose()
        self._cleanup()

    @initialize(seed=st.integers(0, 2**32 - 1))
    def seed_query_points(self, seed: int) -> None:
        self.rnd = random.Random(seed)

    @initialize(n=st.integers(2, len(CONCEPT_IDS)), back=st.booleans())
    def some_concepts(self, n: int, back: bool) -> None:
        """Start from a few concepts so that edge and link writes have something to point at."""
        start = EPOCH - timedelta(days=1) if back else None
        for cid in CONCEPT_IDS[:n]:
            self.write("assert", "concepts", (cid,), SUMMARIES[0], REASONS[0], start, None)
        if n >= 3:
            # and one group (a needs one of b or c), so that group revisions and cascades happen
            options = [frozenset("b"), frozenset("c")]
            w = RequirementWrite("g1", grounding(REASONS[0]), "assert", "a", 1, [["b"], ["c"]], start)
            now = stamp_after(self.clock.now, self.latest)
            plan = self.model.requirement(
                "assert",
                "g1",
                target="a",
                needs=1,
                options=options,
                reason=REASONS[0],
                start=start,
                end=None,
                now=now,
            )
            self.model.check(plan, now)
            self.apply(w, plan, now)

    # -- drawing ------------------------------------------------------------------------------

    def _time(self, data: st.DataObject, label: str) -> datetime | None:
        """None (the default), or a time in the past, present or future, or on a stored boundary
        (or a microsecond either side)."""
        kind = data.draw(st.sampled_from(("none", "none", "near", "boundary", "boundary")), label=label)
        now = self.clock.now
        if kind == "none":
            return None
        if kind == "near":
            delta = data.draw(
                st.sampled_from(
                    (
                        -timedelta(days=1),
                        -timedelta(seconds=1),
                        timedelta(0),
                        timedelta(seconds=1),
                        timedelta(days=1),
                    )
                )
            )
            return now + delta
        base = data.draw(st.sampled_from(sorted(self.times)), label=label + " at")
        return base + data.draw(st.sampled_from((-MICRO, timedelta(0), timedelta(0), MICRO)))

    def _live_keys(self, table: str) -> list[Key]:
        return sorted(
            {
                v.key
                for v in self.model.versions
                if v.table == table and v.expired_at is None and v.op != "retract"
            }
        )

    def _pick(self, data: st.DataObject, pool: list[Any], fallback: st.SearchStrategy[Any]) -> Any:
        # Mostly aim at what exists, so that revisions, closures and cascades actually happen.
        if pool and data.draw(st.integers(0, 9), label="aim") < 8:
            return data.draw(st.sampled_from(pool))
        return data.draw(fallback)

    # -- rules --------------------------------------------------------------------------------

    @rule(delta=st.sampled_from(STEPS))
    def advance(self, delta: timedelta) -> None:
        self.clock.advance(delta)

    @rule(
        data=st.data(),
        mode=st.sampled_from(
            ("assert", "revise", "revise", "correct", "invalidate", "invalidate", "retract")
        ),
        summary=st.sampled_from(SUMMARIES),
        reason=st.sampled_from(REASONS),
    )
    def write_concept(self, data: st.DataObject, mode: str, summary: str, reason: str) -> None:
        live = [k[0] for k in self._live_keys("concepts")]
        cid = self._pick(data, live if mode != "assert" else [], st.sampled_from(CONCEPT_IDS))
        start, end = self._time(data, "start"), self._time(data, "end")
        self.write(mode, "concepts", (cid,), summary, reason, start, end)

    @rule(
        data=st.data(),
        mode=st.sampled_from(("assert", "assert", "assert", "revise", "invalidate", "invalidate", "retract")),
        reason=st.sampled_from(REASONS),
    )
    def write_edge(self, data: st.DataObject, mode: str, reason: str) -> None:
        any_edge = st.tuples(
            st.sampled_from(CONCEPT_IDS),
            st.sampled_from(CONCEPT_IDS),
            st.sampled_from((*RELATIONS, PREREQUISITE, PREREQUISITE, "causes")),
        )
        live = [k[0] for k in self._live_keys("concepts")]
        if mode == "assert" and len(live) >= 2 and data.draw(st.integers(0, 9), label="aim") < 8:
            s, t = data.draw(st.lists(st.sampled_from(live), min_size=2, max_size=2, unique=True))
            rel = data.draw(st.sampled_from((*RELATIONS, PREREQUISITE, PREREQUISITE)))
        else:
            s, t, rel = self._pick(
                data, self._live_keys("concept_edges") if mode != "assert" else [], any_edge
            )
        start, end = self._time(data, "start"), self._time(data, "end")
        if rel not in RELATIONS:
            self.refused(Write.edge(s, t, rel, grounding=grounding(reason), mode=mode), UnknownRelation)
        elif s == t:
            self.refused(Write.edge(s, t, rel, grounding=grounding(reason), mode=mode), SelfLoop)
        else:
            self.write(mode, "concept_edges", canonical_edge(s, t, rel), None, reason, start, end)

    @rule(
        data=st.data(),
        mode=st.sampled_from(("assert", "assert", "revise", "invalidate", "retract")),
        reason=st.sampled_from(REASONS),
    )
    def write_link(self, data: st.DataObject, mode: str, reason: str) -> None:
        any_link = st.tuples(st.sampled_from(LESSON_IDS), st.sampled_from(CONCEPT_IDS))
        key = self._pick(data, self._live_keys("lesson_concepts") if mode != "assert" else [], any_link)
        start, end = self._time(data, "start"), self._time(data, "end")
        self.write(mode, "lesson_concepts", tuple(key), None, reason, start, end)

    @rule(
        data=st.data(),
        mode=st.sampled_from(
            ("assert", "assert", "assert", "revise", "revise", "revise", "invalidate", "retract")
        ),
        reason=st.sampled_from(REASONS),
    )
    def write_group(self, data: st.DataObject, mode: str, reason: str) -> None:
        """A requirement group: asserted with its members, revised (k, options or both, over a
        portion), invalidated or retracted with its members, asserted again."""
        gid = self._pick(
            data,
            [k[0] for k in self._live_keys(GROUPS)] if mode != "assert" else [],
            st.sampled_from(GROUP_IDS),
        )
        start, end = self._time(data, "start"), self._time(data, "end")
        live = [k[0] for k in self._live_keys("concepts")]
        target = self._pick(data, live, st.sampled_from(CONCEPT_IDS))
        # Mostly well-formed (live members other than the target, k within the options), so that
        # groups get written, revised and cascaded; sometimes anything, so refusals happen too.
        others = [c for c in live if c != target]
        sound = bool(others) and data.draw(st.integers(0, 9), label="sound") < 8
        option = st.frozensets(st.sampled_from(others if sound else CONCEPT_IDS), min_size=1, max_size=2)
        options = data.draw(st.lists(option, min_size=1, max_size=3), label="options")
        needs = data.draw(st.integers(1, len(options)) if sound else st.sampled_from((1, 2)), label="needs")
        g = grounding(reason)
        w: Write | RequirementWrite
        if mode == "assert":
            w = RequirementWrite(gid, g, "assert", target, needs, [sorted(o) for o in options], start, end)
            args = {"target": target, "needs": needs, "options": options}
        elif mode == "revise":
            if data.draw(st.booleans(), label="keep needs"):
                needs_or_none: int | None = None
            else:
                needs_or_none = needs
            opts = options if data.draw(st.booleans(), label="new options") else None
            w = RequirementWrite(
                gid, g, "revise", needs=needs_or_none, options=None if opts is None else [sorted(o) for o in opts],
                valid_at=start, until=end,
            )  # fmt: skip
            args = {"target": None, "needs": needs_or_none, "options": opts}
        elif mode == "invalidate":
            w = Write(GROUPS, (gid,), mode, g, {}, None, KEEP if start is None else start, end)
            args = {"target": None, "needs": None, "options": None}
        else:
            w = Write(GROUPS, (gid,), mode, g, {})
            args = {"target": None, "needs": None, "options": None}
        now = stamp_after(self.clock.now, self.latest)
        try:
            plan = self.model.requirement(mode, gid, reason=reason, start=start, end=end, now=now, **args)
            self.model.check(plan, now)
        except Predicted as p:
            event(f"group {mode}: refused with {p.error.__name__}")
            self.refused(w, p.error)
            return
        event(f"group {mode}: {len(plan.added)} versions" if plan.added else f"group {mode}: unchanged")
        self.apply(w, plan, now)

    @rule(data=st.data(), as_of=st.booleans(), which=st.sampled_from(QUESTIONS))
    def ask(self, data: st.DataObject, as_of: bool, which: str) -> None:
        """The answer a learner gets (reused when nothing it read changed) equals a fresh one at
        its point, and cites only edges the model has in force there."""
        cid = data.draw(st.sampled_from(CONCEPT_IDS))
        question = which.format(NAMES[cid])
        valid = data.draw(st.sampled_from(sorted(self.times))) if as_of else None
        got = self.planner.reply(question, as_of=valid).to_dict()
        fresh = self.planner.ask(question, as_of=valid, record=False).to_dict()
        assert (got["text"], got["abstained"]) == (fresh["text"], fresh["abstained"]), question
        assert _cited(got) == _cited(fresh)
        point = (valid or self.clock.now, known_at(self.clock.now, self.latest))
        in_force = {v.key for v in self.model.versions if v.table == "concept_edges" and v.in_force(*point)}
        assert _cited(got) <= in_force, (question, _cited(got), in_force)
        self.recorded.append(got["answer_id"])
        # Later writes are recorded strictly after the answer, as in any real use.
        self.clock.advance(MICRO)

    @rule(
        data=st.data(),
        table=st.sampled_from(("concepts", "concept_edges", "lesson_concepts")),
        which=st.sampled_from(QUESTIONS),
    )
    def write_while_a_reader_reads(self, data: st.DataObject, table: str, which: str) -> None:
        """A write that commits while a reader reads (an import's write pass): what the reader
        read, and the answer it gave, as known at its point, are what the same read gives after the
        commit (the write is recorded after every point a reader could read before it)."""
        live = [k[0] for k in self._live_keys("concepts")]
        if table == "concepts":
            key: Key = (data.draw(st.sampled_from(CONCEPT_IDS)),)
        elif table == "concept_edges" and len(live) >= 2:
            s, t = data.draw(st.lists(st.sampled_from(live), min_size=2, max_size=2, unique=True))
            key = canonical_edge(s, t, data.draw(st.sampled_from(RELATIONS)))
        else:  # a lesson link (an edge needs two live concepts)
            table = "lesson_concepts"
            key = (data.draw(st.sampled_from(LESSON_IDS)), data.draw(st.sampled_from(CONCEPT_IDS)))
        question = which.format(NAMES[data.draw(st.sampled_from(CONCEPT_IDS))])
        read: dict[str, Any] = {}

        def apply_while_reading(w: Write) -> BatchResult:
            with self.gateway.bulk() as bulk:
                result = bulk.apply([w])
                read["point"] = point = self.reader.as_of()
                read["snapshot"] = self.reader.snapshot(point)
                read["answer"] = self.planner.reply(question, fresh=True).to_dict()
            return result

        summary = SUMMARIES[1] if table == "concepts" else None
        self.write("assert", table, key, summary, REASONS[1], None, None, apply=apply_while_reading)
        if read:
            assert self.reader.snapshot(read["point"]) == read["snapshot"], read["point"]
            self.recorded.append(read["answer"]["answer_id"])
            report = replay(
                read["answer"]["answer_id"],
                reader=self.reader,
                synthesizer=OfflineSynthesizer(),
                clock=self.clock,
            )
            assert report["reproduced"], report
        self.clock.advance(MICRO)

    @rule()
    def replay_an_answer(self) -> None:
        """A recorded answer replayed as it was known is reproduced, whatever was written since."""
        if self.recorded:
            report = replay(
                self.rnd.choice(self.recorded),
                reader=self.reader,
                synthesizer=OfflineSynthesizer(),
                clock=self.clock,
            )
            assert report["reproduced"], report

    # -- applying a write to both sides ---------------------------------------------------------

    def write(
        self,
        mode: str,
        table: str,
        key: Key,
        summary: str | None,
        reason: str,
        start: datetime | None,
        end: datetime | None,
        apply: Callable[[Write], BatchResult] | None = None,
    ) -> None:
        """Apply one write to the model and the store (through ``apply``, default the gateway's)."""
        apply = apply or (lambda w: self.gateway.apply([w]))
        # Strictly after the latest write that wrote something, however the clock stands.
        now = stamp_after(self.clock.now, self.latest)
        g = grounding(reason)
        if mode == "assert":
            w = Write(table, key, mode, g, self._content(table, key, summary), start, end)
        elif mode in ("revise", "correct"):
            content = {"summary": summary} if table == "concepts" else {}
            w = Write(table, key, mode, g, content, start, KEEP, end if mode == "revise" else None)
            end = end if mode == "revise" else None
        elif mode == "invalidate":
            w = Write(table, key, mode, g, {}, None, KEEP if start is None else start, end)
        else:
            w = Write(table, key, mode, g, {})
        try:
            plan = self.model.plan(
                mode, table, key, summary=summary, reason=reason, start=start, end=end, now=now
            )
            if table == "concepts":
                more = self.model.cascade(
                    key[0], plan, mode, reason, end if mode == "invalidate" else None, now
                )
                plan = Plan(plan.added + more.added, plan.closed + more.closed)
            self.model.check(plan, now)
        except Predicted as p:
            self.refused(w, p.error)
            return
        self.apply(w, plan, now, through=apply)

    def apply(
        self,
        w: Write | RequirementWrite,
        plan: Plan,
        now: datetime,
        through: Callable[[Write | RequirementWrite], BatchResult] | None = None,
    ) -> None:
        """Apply ``w`` to the store (through ``through``, default the gateway's) and ``plan`` to
        the model, which must agree on what was written."""
        result = through(w) if through is not None else self.gateway.apply([w])
        assert len(result.written) + len(result.kept) + len(result.cascaded) == len(plan.added), (w, plan)
        self.model.commit(plan, now)
        self.latest = now if plan.added else self.latest
        self.times.add(now)
        for v in plan.added:
            self.times.add(v.valid_at)
            if v.invalid_at is not None:
                self.times.add(v.invalid_at)

    @staticmethod
    def _content(table: str, key: Key, summary: str | None) -> dict[str, Any]:
        return {"name": NAMES[key[0]], "aliases": [], "summary": summary} if table == "concepts" else {}

    def refused(self, write: Write | RequirementWrite, expected: type[Exception]) -> None:
        before = self._rows()
        with pytest.raises((WriteRejected, NotFound)) as info:
            self.gateway.apply([write])
        assert type(info.value) is expected, (
            f"gateway raised {info.value!r}, model predicted {expected.__name__}"
        )
        assert self._rows() == before, "a refused write changed the database"

    # -- invariants ---------------------------------------------------------------------------

    def _rows(self) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        with self.engine.connect() as conn:
            for table in TABLES:
                keys = schema.KEY_COLUMNS[table.name]
                for r in conn.execute(sa.select(table).order_by(table.c.version_id)).mappings():
                    content = (
                        r["summary"]
                        if table.name == "concepts"
                        else f"{r['target_id']}|{r['needs']}"
                        if table.name == GROUPS
                        else None
                    )
                    out.append(
                        (
                            table.name,
                            tuple(r[k] for k in keys),
                            content,
                            r["reason"],
                            r["op"],
                            r["valid_at"],
                            r["invalid_at"],
                            r["recorded_at"],
                            r["expired_at"],
                        )
                    )
        return out

    @invariant()
    def tables_equal_the_model(self) -> None:
        assert Counter(self._rows()) == Counter(v.row() for v in self.model.versions)

    @invariant()
    def current_versions_of_a_key_never_overlap(self) -> None:
        with self.engine.connect() as conn:
            for table in TABLES:
                a, b = table.alias("a"), table.alias("b")
                same = [a.c[k] == b.c[k] for k in schema.KEY_COLUMNS[table.name]]
                stmt = sa.select(sa.func.count()).where(
                    *same,
                    a.c.version_id < b.c.version_id,
                    a.c.expired_at.is_(None),
                    b.c.expired_at.is_(None),
                    sa.or_(a.c.invalid_at.is_(None), a.c.invalid_at > b.c.valid_at),
                    sa.or_(b.c.invalid_at.is_(None), b.c.invalid_at > a.c.valid_at),
                )
                assert conn.execute(stmt).scalar_one() == 0

    def _points(self) -> list[tuple[datetime, datetime]]:
        times = sorted(self.times)
        points = [(self.clock.now, self.clock.now)]
        for _ in range(3):
            v = self.rnd.choice(times) + self.rnd.choice((-MICRO, timedelta(0), MICRO))
            k = self.rnd.choice(times) + self.rnd.choice((-MICRO, timedelta(0), MICRO))
            points.append((v, k))
        return points

    @invariant()
    def reads_agree_with_the_model(self) -> None:
        for v, k in self._points():
            held = [m for m in self.model.versions if m.in_force(v, k)]
            concepts = {m.key[0]: (m.summary, m.reason) for m in held if m.table == "concepts"}
            edges = {m.key: m.reason for m in held if m.table == "concept_edges"}
            links = {m.key: m.reason for m in held if m.table == "lesson_concepts"}

            snap = self.reader.snapshot(AsOf(v, k))
            assert {c.concept_id: (c.summary, c.grounding.reason) for c in snap.concepts} == concepts, (v, k)
            assert {(e.source_id, e.target_id, e.relation): e.grounding.reason for e in snap.edges} == edges
            assert {x.key: x.grounding.reason for x in snap.lesson_links} == links
            assert len(snap.concepts) == len(concepts) and len(snap.edges) == len(edges)
            # No edge or link in force has an endpoint out of force, at any point on either timeline.
            assert all(s in concepts and t in concepts for s, t, _ in edges)
            assert all(c in concepts for _, c in links)
            groups = {m.key[0]: ((m.summary or "").split("|"), m.reason) for m in held if m.table == GROUPS}
            members = {m.key: m.reason for m in held if m.table == MEMBERS}
            read = [g for gs in self.reader.requirements(CONCEPT_IDS, as_of=AsOf(v, k)).values() for g in gs]
            assert {g.group_id: ([g.target_id, str(g.needs)], g.grounding.reason) for g in read} == groups, (
                v,
                k,
            )
            assert {
                (m.group_id, str(m.option), m.concept_id): m.grounding.reason for g in read for m in g.members
            } == {key: r for key, r in members.items() if key[0] in groups}
            # No member in force outside its group, nor a group in force whose target is not.
            assert {key[0] for key in members} <= set(groups)
            assert all(target in concepts for (target, _), _ in groups.values())

            ids = set(self.rnd.sample(CONCEPT_IDS, self.rnd.randint(1, 2)))
            expected = set()
            for s, t, rel in edges:
                for near, far, direction in ((s, t, "out"), (t, s, "in")):
                    if near in ids:
                        expected.add(((s, t, rel), far, direction))
            found = {
                ((n.edge.source_id, n.edge.target_id, n.edge.relation), n.concept.concept_id, n.direction)
                for n in self.reader.neighbourhood(ids, as_of=AsOf(v, k))
            }
            assert found == expected, (v, k, ids)

    @invariant()
    def diffs_and_histories_agree_with_the_model(self) -> None:
        times = sorted(self.times)
        since, until = sorted((self.rnd.choice(times), self.rnd.choice(times)))
        since -= self.rnd.choice((MICRO, timedelta(0)))
        diff = self.reader.diff(since, until, tables=[t.name for t in TABLES])
        got = Counter(
            (
                x.table,
                x.key,
                x.stamp.op,
                x.grounding.reason,
                x.stamp.valid_at,
                x.stamp.invalid_at,
                x.stamp.recorded_at,
            )
            for group in (diff.asserted, diff.revised, diff.invalidated, diff.retracted)
            for x in group
        )
        want = Counter(
            (m.table, m.key, m.op, m.reason, m.valid_at, m.invalid_at, m.recorded_at)
            for m in self.model.versions
            if since < m.recorded_at <= until
        )
        assert got == want, (since, until)
        if self.model.versions:
            some = self.rnd.choice(self.model.versions)
            history = self.reader.history(some.table, some.key)
            mine = [m for m in self.model.versions if (m.table, m.key) == (some.table, some.key)]
            assert Counter(
                (
                    h.stamp.op,
                    h.grounding.reason,
                    h.stamp.valid_at,
                    h.stamp.invalid_at,
                    h.stamp.recorded_at,
                    h.stamp.expired_at,
                )
                for h in history
            ) == Counter(
                (m.op, m.reason, m.valid_at, m.invalid_at, m.recorded_at, m.expired_at) for m in mine
            )
            assert [h.stamp.recorded_at for h in history] == sorted(m.recorded_at for m in mine)


@functools.cache
def _migrated_sqlite() -> Path:
    """One migrated SQLite file per test run, copied for each example (migrating costs more)."""
    folder = Path(tempfile.mkdtemp(prefix="kg-model-"))
    engine = connect(f"sqlite:///{folder}/template.sqlite3")
    migrate(engine)
    engine.dispose()
    return folder / "template.sqlite3"


def _sqlite_database() -> tuple[str, Callable[[], None]]:
    tmp = tempfile.TemporaryDirectory()
    shutil.copy(_migrated_sqlite(), f"{tmp.name}/model.sqlite3")
    return f"sqlite:///{tmp.name}/model.sqlite3", tmp.cleanup


def _postgres_databases(template: str) -> Callable[[], tuple[str, Callable[[], None]]]:
    url = os.environ["KG_TEST_POSTGRES_URL"]

    def database() -> tuple[str, Callable[[], None]]:
        admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")
        name = f"kg_model_{uuid.uuid4().hex[:12]}"
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')

        def drop() -> None:
            with admin.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.dispose()

        return sa.make_url(url).set(database=name).render_as_string(hide_password=False), drop

    return database


def _run(
    name: str, make: Callable[[], tuple[str, Callable[[], None]]], examples: int, *, derandomize: bool
) -> None:
    machine = type(name, (BiTemporalMachine,), {"make_database": staticmethod(make)})
    run_state_machine_as_test(machine, settings=_settings(examples, derandomize=derandomize))  # type: ignore[no-untyped-call]


def test_the_store_agrees_with_the_model_on_sqlite() -> None:
    """On SQLite, a fixed set of random write sequences leaves the tables and every read equal to
    the model's."""
    _run("SQLiteModel", _sqlite_database, EXAMPLES, derandomize=True)


@pytest.mark.postgres
def test_the_store_agrees_with_the_model_on_postgresql(pg_template: str) -> None:
    """On PostgreSQL, a fixed set of random write sequences leaves the tables and every read equal
    to the model's."""
    _run("PostgresModel", _postgres_databases(pg_template), max(1, EXAMPLES // 2), derandomize=True)


@pytest.mark.slow  # many Hypothesis sequences
def test_many_sequences_agree_with_the_model_on_sqlite() -> None:
    """On SQLite, many fresh random write sequences agree with the model."""
    _run("SQLiteModelMany", _sqlite_database, SLOW_EXAMPLES, derandomize=False)


@pytest.mark.slow  # many Hypothesis sequences, a database each
@pytest.mark.postgres
def test_many_sequences_agree_with_the_model_on_postgresql(pg_template: str) -> None:
    """On PostgreSQL, many fresh random write sequences agree with the model."""
    _run("PostgresModelMany", _postgres_databases(pg_template), max(1, SLOW_EXAMPLES // 3), derandomize=False)
