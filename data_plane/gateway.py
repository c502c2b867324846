"""The write gateway: the one module that writes the graph tables.

Every write is a :class:`Write` (assert, revise, correct, upsert, invalidate or retract one key of
one table) carrying a :class:`Grounding`. A write covers a portion of valid time; the versions it
supersedes keep the parts of their periods it does not cover, as versions of their own (SQL:2011
``FOR PORTION OF``), so a key has one current version per valid period it holds over.
:meth:`WriteGateway.apply` takes a batch of writes and applies all of them in one transaction, or
none:

1. load the current versions of every key the batch touches (a few bulk SELECTs);
2. decide, per write, the new versions and the versions they supersede (pure rules below);
3. cascade: closing a concept closes its edges and lesson links over the same portion, with the
   same grounding;
4. check the result: edges only where both concepts hold, no self-loops, known relations, and no
   prerequisite cycle among active prerequisite edges;
5. close superseded versions (``expired_at`` from NULL, once) and insert the new ones in bulk.

Nothing is ever deleted. Single writes (``assert_concept`` ...) are batches of one.
:meth:`WriteGateway.bulk` applies many batches in one transaction (bundle imports stream through
it), with the cycle check run once at the end. The ``set_aside`` mode records a row an import
refused on purpose as a retraction of its own key: never in force, visible in its history.

Concurrency: SQLite transactions start with ``BEGIN IMMEDIATE`` (one writer at a time); on
PostgreSQL every write transaction first takes one advisory transaction lock, so gateway writes
are serialised there too and the checks above see a stable graph. A writer that finds the lock
held (by an import, say) waits its turn, up to its ``WriteWait`` (default 600 s; it is told once
that it waits), then gives up with ``WriteLockTimeout``, on both engines alike. Readers are never
blocked, and neither is :meth:`WriteGateway.record_answer`: answers take a lock of their own on
PostgreSQL, and on SQLite wait in the side file's queue while the graph's lock is held
(``data_plane.sidecar``).
"""

from __future__ import annotations

import functools
import json
import operator
import sys
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import Enum
from typing import Any, Final, NamedTuple

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Dialect, Engine
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from data_plane import schema, write_clock
from data_plane.clock import Clock, ensure_utc, format_time, utc_now
from data_plane.database import WriteWait
from data_plane.duplicates import NameBook, NameKey
from data_plane.errors import (
    ConcurrentWrite,
    DuplicateName,
    InactiveEndpoint,
    InputError,
    KeyExists,
    KGError,
    NotFound,
    PrerequisiteCycle,
    RequirementRejected,
    SelfLoop,
    TemporalConflict,
    UnknownRelation,
    WriteLockTimeout,
    WriteRejected,
)
from data_plane.events import get_logger
from data_plane.names import confusable
from data_plane.periods import Period, covers, cut, overlaps, uncovered
from data_plane.reads import GraphReader
from data_plane.records import (
    Concept,
    Edge,
    Grounding,
    Version,
    alias_fault,
    id_fault,
    name_fault,
    text_fault,
)
from data_plane.relations import PREREQUISITE, RELATIONS, canonical_edge, edge_key
from data_plane.requirements import check_group, label_options, period_fault, unlearnable
from data_plane.reuse import ReuseEntry
from data_plane.rows import concept_from_row, edge_from_row, stamp_from_row, version_from_row
from data_plane.sidecar import QueuedAnswer, queue_of
from data_plane.temporal import find_cycle

log = get_logger(__name__)

# One lock id for all gateway writes of the graph on PostgreSQL ("KG" in ASCII), and one for
# recording answers, which never wait for the graph's ("KA").
_PG_WRITE_LOCK: Final = 0x4B47
_PG_ANSWER_LOCK: Final = 0x4B41
# How long moving queued answers waits for SQLite's write lock: long enough for another answer
# being moved (milliseconds), far too short to wait for an import or a curation.
_MOVE_WAIT: Final = WriteWait(0.05, quiet=True)
# SQLSTATE of a lock wait that ran past lock_timeout.
_PG_LOCK_NOT_AVAILABLE: Final = "55P03"
# sqlite3's result code for a string or blob over its size limit.
_SQLITE_TOOBIG: Final = 18
# Bound on IN (...) lists, well under SQLite's and PostgreSQL's parameter limits.
_CHUNK: Final = 500
# Inserts of at least this many rows use COPY on PostgreSQL (bulk imports); smaller ones INSERT.
_COPY_MIN: Final = 1000


class _Keep(Enum):
    KEEP = "keep"


KEEP: Final = _Keep.KEEP
"""Sentinel for ``invalid_at``: keep the current version's value."""

MODES: Final = ("assert", "revise", "correct", "upsert", "invalidate", "retract", "set_aside", "cover")
# Text content refused alike on both engines when it holds NUL or is not UTF-8 (see text_fault).
_TEXT_CONTENT: Final = ("name", "aliases", "summary", "title", "question", "answer_text")
_CONTENT: Final[dict[str, tuple[str, ...]]] = {
    "concepts": ("name", "aliases", "summary"),
    "concept_edges": (),
    "lessons": ("title",),
    "lesson_concepts": (),
    "requirement_groups": ("target_id", "needs"),
    "requirement_members": (),
    "answers": ("question", "answer_text", "abstained", "payload"),
}
GROUPS: Final = "requirement_groups"
MEMBERS: Final = "requirement_members"


@dataclass(frozen=True)
class Write:
    """One intended write to one key. Build with the class methods."""

    table: str
    key: tuple[str, ...]
    mode: str
    grounding: Grounding
    content: Mapping[str, Any] = field(default_factory=dict)
    valid_at: datetime | None = None
    invalid_at: datetime | _Keep | None = KEEP
    # The end of the valid period a revise or invalidate covers (None: for ever).
    until: datetime | None = None

    @classmethod
    def concept(
        cls,
        concept_id: str,
        *,
        grounding: Grounding,
        mode: str = "assert",
        name: str | None = None,
        aliases: Iterable[str] | None = None,
        summary: str | None = None,
        valid_at: datetime | None = None,
        invalid_at: datetime | _Keep | None = KEEP,
        until: datetime | None = None,
    ) -> Write:
        content: dict[str, Any] = {}
        if name is not None:
            content["name"] = name
        if aliases is not None:
            content["aliases"] = list(aliases)
        if summary is not None:
            content["summary"] = summary
        return cls("concepts", (concept_id,), mode, grounding, content, valid_at, invalid_at, until)

    @classmethod
    def edge(
        cls,
        source_id: str,
        target_id: str,
        relation: str,
        *,
        grounding: Grounding,
        mode: str = "assert",
        valid_at: datetime | None = None,
        invalid_at: datetime | _Keep | None = KEEP,
        until: datetime | None = None,
    ) -> Write:
        return cls(
            "concept_edges",
            (source_id, target_id, relation),
            mode,
            grounding,
            {},
            valid_at,
            invalid_at,
            until,
        )

    @classmethod
    def lesson(
        cls,
        lesson_id: str,
        *,
        grounding: Grounding,
        title: str | None = None,
        mode: str = "upsert",
        valid_at: datetime | None = None,
    ) -> Write:
        content = {} if title is None else {"title": title}
        return cls("lessons", (lesson_id,), mode, grounding, content, valid_at)

    @classmethod
    def lesson_link(
        cls,
        lesson_id: str,
        concept_id: str,
        *,
        grounding: Grounding,
        mode: str = "assert",
        valid_at: datetime | None = None,
        invalid_at: datetime | _Keep | None = KEEP,
        until: datetime | None = None,
    ) -> Write:
        return cls(
            "lesson_concepts", (lesson_id, concept_id), mode, grounding, {}, valid_at, invalid_at, until
        )

    @classmethod
    def requirement(
        cls,
        group_id: str,
        *,
        grounding: Grounding,
        mode: str = "invalidate",
        invalid_at: datetime | _Keep | None = KEEP,
        until: datetime | None = None,
    ) -> Write:
        """A write of a requirement group's own row: for closing a group (``invalidate``, its
        members follow by cascade) or retracting it. Asserting and revising a group, members
        and all, is a :class:`RequirementWrite`."""
        return cls(GROUPS, (group_id,), mode, grounding, {}, None, invalid_at, until)


@dataclass(frozen=True)
class RequirementWrite:
    """One write of a whole requirement group: its row and its members, in one batch.

    ``mode``: ``assert`` (a new group, or one closed before, over ``[valid_at, invalid_at)``;
    ``target_id``, ``needs`` and ``options`` required), ``revise`` (over ``[valid_at, until)``,
    default all of its validity: a new ``needs``, new ``options``, or both; what is not given is
    kept; the versions it supersedes keep their parts outside the portion) or ``upsert`` (a
    bundle's group: authoritative from ``valid_at`` on, its members too; members the bundle no
    longer lists are closed from then). ``options`` are the sets of concepts each all needed, in
    order; a mapping gives their numbers too. An upsert may give its ``members`` instead: one
    upsert ``Write`` per member with its own grounding and times (a bundle's member rows; the
    options are read off their keys). Closing a group is ``Write.requirement(group_id,
    mode="invalidate")``."""

    group_id: str
    grounding: Grounding
    mode: str = "assert"
    target_id: str | None = None
    needs: int | None = None
    options: Sequence[Collection[str]] | Mapping[str, Collection[str]] | None = None
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    until: datetime | None = None
    members: tuple[Write, ...] = ()

    @property
    def table(self) -> str:
        """The table of the group's own row (where errors about the group are located)."""
        return GROUPS

    @property
    def key(self) -> tuple[str, ...]:
        return (self.group_id,)


class BatchResult:
    """What a batch wrote: new versions (in write order, cascades last), the earlier parts of
    the versions it superseded that its periods do not cover (``kept``: recorded again, with their
    old content and grounding), and untouched keys.

    The ``Version`` records are built on first access: a bulk import of 10^5 rows only needs
    :meth:`counts`, and building every record would cost more than the inserts themselves.
    """

    def __init__(self, entries: Sequence[tuple[str, str, Mapping[str, Any], int, Grounding | None]]) -> None:
        # (kind, table, row, version_id, grounding); kind: "written" | "kept" | "cascaded" |
        # "unchanged". A row without a grounding is read back as it is (unchanged and kept rows).
        self._entries = entries

    def _versions(self, kind: str) -> tuple[Version, ...]:
        return tuple(
            version_from_row(table, {**row, "version_id": vid})
            if grounding is None
            else _new_version(table, row, vid, grounding)
            for k, table, row, vid, grounding in self._entries
            if k == kind
        )

    @functools.cached_property
    def written(self) -> tuple[Version, ...]:
        return self._versions("written")

    @functools.cached_property
    def kept(self) -> tuple[Version, ...]:
        return self._versions("kept")

    @functools.cached_property
    def unchanged(self) -> tuple[Version, ...]:
        return self._versions("unchanged")

    @functools.cached_property
    def cascaded(self) -> tuple[Version, ...]:
        return self._versions("cascaded")

    def sizes(self) -> dict[str, int]:
        """How many versions were written, kept, cascaded and left unchanged (no records built)."""
        out = dict.fromkeys(("written", "kept", "cascaded", "unchanged"), 0)
        for kind, *_ in self._entries:
            out[kind] += 1
        return out

    def counts(self) -> dict[tuple[str, str], int]:
        """``(table, op) -> rows``; ``op`` is the operation written, "kept" or "unchanged"."""
        out: dict[tuple[str, str], int] = defaultdict(int)
        for kind, table, row, _, _ in self._entries:
            out[(table, kind if kind in ("unchanged", "kept") else row["op"])] += 1
        return dict(out)

    def to_dict(self) -> dict[str, Any]:
        return {
            "written": [v.to_dict() for v in self.written],
            "kept": [v.to_dict() for v in self.kept],
            "unchanged": [v.to_dict() for v in self.unchanged],
            "cascaded": [v.to_dict() for v in self.cascaded],
        }


# ---------------------------------------------------------------------------------------------
# Pure rules: given the current rows of a key and a write, which rows does it add and close?


def _describe(table: str, key: tuple[str, ...]) -> str:
    if table == "concept_edges":
        return f"edge {edge_key(*key)!r}"
    noun = {
        "concepts": "concept",
        "lessons": "lesson",
        "lesson_concepts": "lesson link",
        GROUPS: "requirement",
        MEMBERS: "requirement member",
        "answers": "answer",
    }
    return f"{noun[table]} {'/'.join(key)!r}"


class _Described:
    """``_describe(table, key)``, formatted only if an error message needs it (hot path)."""

    __slots__ = ("key", "table")

    def __init__(self, table: str, key: tuple[str, ...]) -> None:
        self.table, self.key = table, key

    def __str__(self) -> str:
        return _describe(self.table, self.key)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def _validate_content(table: str, key: tuple[str, ...], content: Mapping[str, Any]) -> None:
    for part in key:
        if not isinstance(part, str) or not part.strip():
            raise InputError(
                f"{table}: key part must be non-empty text, got {part!r}", field="id", value=part
            )
        if part != part.strip():
            raise InputError(f"{table}: id {part!r} has surrounding whitespace", field="id", value=part)
        fault = text_fault(part) if table == "answers" else id_fault(part)
        if fault is not None:
            raise InputError(f"{table}: id {part[:60]!r} {fault}", field="id", value=part[:200])
    for column in _TEXT_CONTENT:
        values = content.get(column)
        for text in values if isinstance(values, list) else [values]:
            if not isinstance(text, str):
                continue
            fault = text_fault(text)
            if fault is not None:
                raise InputError(f"{_describe(table, key)}: {column} {fault}", field=column, value=text[:200])
    unknown = set(content) - set(_CONTENT[table])
    if unknown:
        raise InputError(f"{table}: unknown fields {sorted(unknown)}", field=sorted(unknown)[0])
    if table == "concepts":
        if "name" in content and (not isinstance(content["name"], str) or not content["name"].strip()):
            raise InputError(
                f"concept {key[0]!r}: name must be non-empty text", field="name", value=content["name"]
            )
        aliases = content.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) and a.strip() for a in aliases):
            raise InputError(
                f"concept {key[0]!r}: aliases must be non-empty texts", field="aliases", value=aliases
            )
        named = [("name", content["name"])] if "name" in content else []
        for column, name in (*named, *(("aliases", a) for a in aliases)):
            fault = name_fault(name) if column == "name" else alias_fault(name)
            if fault is not None:
                what = "name" if column == "name" else "alias"
                raise InputError(
                    f"concept {key[0]!r}: {what} {name[:60]!r} {fault}", field=column, value=name[:200]
                )
            if (why := confusable(name)) is not None:
                raise InputError(
                    f"concept {key[0]!r}: {column} {name!r} could pass for another name ({why}); "
                    "write each word in one script, without direction controls",
                    field=column,
                    value=name,
                )
        if "summary" in content and not isinstance(content["summary"], str):
            raise InputError(
                f"concept {key[0]!r}: summary must be text", field="summary", value=content["summary"]
            )
    if table in (GROUPS, MEMBERS):
        _validate_requirement(table, key, content)
    if (
        table == "lessons"
        and "title" in content
        and (not isinstance(content["title"], str) or not content["title"].strip())
    ):
        raise InputError(
            f"lesson {key[0]!r}: title must be non-empty text", field="title", value=content["title"]
        )


def _validate_requirement(table: str, key: tuple[str, ...], content: Mapping[str, Any]) -> None:
    """A group's target is an id and its ``needs`` a positive integer; a member's option is a
    positive decimal number (``"1"``, ``"2"``, ...)."""
    what = _describe(table, key)
    if table == MEMBERS:
        option = key[1]
        if not (option.isascii() and option.isdigit() and option[0] != "0" and len(option) <= 8):
            raise RequirementRejected(
                f"{what}: option must be a positive number, got {option!r}", field="option", value=option
            )
        return
    if "target_id" in content:
        target = content["target_id"]
        fault = (
            id_fault(target)
            if isinstance(target, str) and target.strip() == target and target
            else "is not an id"
        )
        if fault is not None:
            raise InputError(
                f"{what}: target_id {str(target)[:60]!r} {fault}", field="target_id", value=target
            )
    if "needs" in content:
        needs = content["needs"]
        if isinstance(needs, bool) or not isinstance(needs, int) or needs < 1:
            raise RequirementRejected(
                f"{what}: needs must be an integer of at least 1, got {needs!r}", field="needs", value=needs
            )


def _defaults(table: str, key: tuple[str, ...]) -> dict[str, Any]:
    if table == "concepts":
        return {"aliases": [], "summary": ""}
    if table == "lessons":
        return {"title": key[0]}
    return {}


def _period(row: Mapping[str, Any]) -> Period:
    return Period(row["valid_at"], row["invalid_at"])


def _build(
    table: str,
    key: tuple[str, ...],
    content: Mapping[str, Any],
    g: Grounding,
    op: str,
    period: Period,
    now: datetime,
    supersedes: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """A new row (columns in table order; this runs once per imported row)."""
    row: dict[str, Any] = dict(zip(schema.KEY_COLUMNS[table], key, strict=True))
    row.update(content)
    row["op"] = op
    row["confidence"] = g.confidence
    row["reason"] = g.reason
    row["source"] = g.source
    row["evidence"] = g.evidence
    row["valid_at"] = period.start
    row["invalid_at"] = period.end
    row["recorded_at"] = now
    row["expired_at"] = None
    row["supersedes_id"] = None if supersedes is None else supersedes["version_id"]
    return row


def _kept(current: Mapping[str, Any], period: Period, now: datetime) -> dict[str, Any]:
    """The part ``period`` of a superseded version that a write does not cover, recorded again:
    its content and grounding as they were, op ``revise``."""
    row = {c: v for c, v in current.items() if c != "version_id"}
    row.update(
        op="revise",
        valid_at=period.start,
        invalid_at=period.end,
        recorded_at=now,
        expired_at=None,
        supersedes_id=current["version_id"],
    )
    return row


@dataclass(slots=True)
class _Pending:
    """What one write does to its key: the rows it adds (each ``written`` or ``kept``), the
    current versions it closes, and the current versions it leaves as they are when it changes
    nothing (``unchanged``)."""

    write: Write
    currents: list[dict[str, Any]]
    rows: list[dict[str, Any]] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    closed: list[dict[str, Any]] = field(default_factory=list)
    unchanged: list[dict[str, Any]] = field(default_factory=list)
    cascade: bool = False

    def add(self, row: dict[str, Any], kind: str = "written") -> None:
        self.rows.append(row)
        self.kinds.append(kind)

    def live_after(self) -> list[Period]:
        """The valid periods of the key in force as now known, once the write is applied."""
        return [_period(r) for r in self.live_rows_after()]

    def live_rows_after(self) -> list[Mapping[str, Any]]:
        """The current versions of the key not retracted, once the write is applied."""
        closed = {id(r) for r in self.closed}
        kept = [r for r in self.currents if id(r) not in closed and r["op"] != "retract"]
        return [r for r in (*kept, *self.rows) if r["op"] != "retract"]


def _plan(write: Write, currents: list[dict[str, Any]], now: datetime, *, strict: bool = True) -> _Pending:
    """Decide what a write does, given every current version of its key (``currents``, by valid
    time). Raises a ``WriteRejected`` naming the field and value on refusal, ``NotFound`` when
    there is nothing to change. The rules (docs/data-plane.md, "Operations") in short: a write
    covers a portion of valid time and says nothing about the rest; a version it supersedes
    keeps, as a version of its own recorded now, every part of its period the portion does not
    cover (SQL:2011 ``FOR PORTION OF``)."""
    mode = write.mode
    live = [r for r in currents if r["op"] != "retract"]
    if mode == "upsert":
        mode = "put" if live else "assert"
    if mode not in _RULES:
        raise InputError(f"unknown write mode {mode!r}; expected one of {MODES}", field="mode", value=mode)
    p = _Pending(write, currents)
    latest = max((r["recorded_at"] for r in currents), default=now)
    if latest > now:
        raise TemporalConflict(
            f"{_describe(write.table, write.key)}: the clock ({format_time(now)}) is before the current "
            f"version's recorded_at ({format_time(latest)})",
            field="recorded_at",
            value=format_time(now),
        )
    if mode in ("revise", "correct", "put", "invalidate", "retract") and not live:
        what = _describe(write.table, write.key)
        raise NotFound(f"{what} does not exist (or was retracted)", key="/".join(write.key))
    _RULES[mode](p, live, now, strict)
    return p


def _checked_period(what: _Described, start: datetime, end: datetime | None, name: str) -> Period:
    start = ensure_utc(start, field="valid_at")
    if end is not None:
        end = ensure_utc(end, field=name)
        if end <= start:
            raise TemporalConflict(
                f"{what}: {name} {format_time(end)} must be after valid_at {format_time(start)}",
                field=name,
                value=format_time(end),
            )
    return Period(start, end)


def _retracted_in(p: _Pending, period: Period) -> list[dict[str, Any]]:
    """Current retractions whose periods a new version in force over ``period`` overlaps: it
    supersedes them (so the current versions of a key never overlap)."""
    return [r for r in p.currents if r["op"] == "retract" and overlaps(_period(r), period)]


def _assert(p: _Pending, live: list[dict[str, Any]], now: datetime, strict: bool) -> None:
    """A new fact over ``[valid_at, invalid_at)``, where no version of the key holds."""
    w = p.write
    what = _Described(w.table, w.key)
    period = _checked_period(
        what, w.valid_at or now, None if w.invalid_at is KEEP else w.invalid_at, "invalid_at"
    )
    for r in live:
        if overlaps(_period(r), period):
            _refuse_overlap(what, w.key, r, period)
    content = {**_defaults(w.table, w.key), **w.content}
    missing = [c for c in _CONTENT[w.table] if c not in content]
    if missing:
        raise InputError(f"{what}: missing {missing[0]}", field=missing[0])
    p.closed = _retracted_in(p, period)
    p.add(_build(w.table, w.key, content, w.grounding, "assert", period, now, _last(p.closed)))


def _last(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    return rows[-1] if rows else None


def _refuse_overlap(what: _Described, key: tuple[str, ...], r: Mapping[str, Any], period: Period) -> None:
    """An assert over a period in which the key already holds (version ``r``) is refused."""
    start, end, vid = r["valid_at"], r["invalid_at"], r["version_id"]
    assert period.start is not None
    if start <= period.start and end is None:
        raise KeyExists(
            f"{what} already exists (version {vid}); revise it instead", field="id", value="/".join(key)
        )
    if start <= period.start:
        raise KeyExists(
            f"{what} holds until {format_time(end)} (version {vid}); assert it again from then on "
            f"(valid_at >= {format_time(end)}) or revise it",
            field="valid_at",
            value=format_time(period.start),
        )
    raise KeyExists(
        f"{what} holds from {format_time(start)} (version {vid}); assert it until then "
        f"(invalid_at <= {format_time(start)}) or revise it",
        field="invalid_at",
        value=format_time(period.end),
    )


def _portion(p: _Pending, start: datetime | None) -> Period:
    w = p.write
    if start is None or w.until is None:
        return Period(start, w.until)
    return _checked_period(_Described(w.table, w.key), start, w.until, "until")


def _hit(p: _Pending, live: list[dict[str, Any]], portion: Period, verb: str) -> list[dict[str, Any]]:
    """The versions in force whose periods the portion overlaps; refused when there are none."""
    hit = [r for r in live if overlaps(_period(r), portion)]
    if hit:
        return hit
    what = _Described(p.write.table, p.write.key)
    last = live[-1]["invalid_at"]
    if verb == "invalidate" and last is not None and portion.start is not None and last <= portion.start:
        raise TemporalConflict(
            f"{what} is already invalid since {format_time(last)}",
            field="invalid_at",
            value=format_time(last),
        )
    spans = ", ".join(_span(_period(r)) for r in live)
    raise TemporalConflict(
        f"{what} holds at no time in {_span(portion)} (it holds {spans}); nothing to {verb}",
        field="valid_at" if verb == "revise" else "invalid_at",
        value=format_time(portion.start) or "",
    )


def _span(period: Period) -> str:
    return f"{format_time(period.start) or 'always'}..{format_time(period.end) or 'open'}"


def _revise(p: _Pending, live: list[dict[str, Any]], now: datetime, strict: bool) -> None:
    """New content (or grounding) over a portion of valid time: each version in force there is
    revised over the part the portion covers, and keeps the rest."""
    w = p.write
    if w.invalid_at is not KEEP:
        raise InputError(
            f"{_describe(w.table, w.key)}: a revision keeps the periods it covers; to change when the "
            "fact holds, correct it (mode 'correct', kg: --correct) or invalidate it",
            field="invalid_at",
        )
    portion = _portion(p, w.valid_at)
    for r in _hit(p, live, portion, "revise"):
        content = {c: r[c] for c in _CONTENT[w.table]}
        content.update(w.content)
        parts = cut(_period(r), portion)
        assert parts.inside is not None
        new = _build(w.table, w.key, content, w.grounding, "revise", parts.inside, now, r)
        if _same_fact(new, r):
            p.unchanged.append(r)
            continue
        p.closed.append(r)
        if parts.before is not None:
            p.add(_kept(r, parts.before, now), "kept")
        p.add(new)
        if parts.after is not None:
            p.add(_kept(r, parts.after, now), "kept")


def _correct(p: _Pending, live: list[dict[str, Any]], now: datetime, strict: bool) -> None:
    """A correction of the whole period: one version replaces every version in force, over
    ``[valid_at, invalid_at)`` (defaults: the first start and the last end), with the latest
    version's content updated. A start moved later retracts the part before it."""
    w = p.write
    what = _Described(w.table, w.key)
    first, last = live[0], live[-1]
    end = last["invalid_at"] if w.invalid_at is KEEP else w.invalid_at
    period = _checked_period(what, w.valid_at or first["valid_at"], end, "invalid_at")
    content = {c: last[c] for c in _CONTENT[w.table]}
    content.update(w.content)
    new = _build(w.table, w.key, content, w.grounding, "revise", period, now, first)
    if len(live) == 1 and _same_version(new, first):
        p.unchanged.append(first)
        return
    p.closed = [*live, *_retracted_in(p, period)]
    assert period.start is not None
    if period.start > first["valid_at"]:
        dropped = Period(first["valid_at"], min(period.start, first["invalid_at"] or period.start))
        old = {c: first[c] for c in _CONTENT[w.table]}
        p.add(_build(w.table, w.key, old, w.grounding, "retract", dropped, now, first))
    p.add(new)


def _put(p: _Pending, live: list[dict[str, Any]], now: datetime, strict: bool) -> None:
    """An upsert of a key in force (a bundle row): the row is authoritative from its valid_at on.
    Versions in force from then on are replaced by the row's version over ``[valid_at,
    invalid_at)``; a version that began earlier keeps its part before valid_at."""
    w = p.write
    what = _Described(w.table, w.key)
    if w.table == "lessons" and not w.content:
        p.unchanged.append(live[-1])  # linking a lesson names it; it does not re-ground it
        return
    end = live[-1]["invalid_at"] if w.invalid_at is KEEP else w.invalid_at
    period = _checked_period(what, w.valid_at or live[0]["valid_at"], end, "invalid_at")
    assert period.start is not None
    replaced = [r for r in live if r["invalid_at"] is None or r["invalid_at"] > period.start]
    content = {c: live[-1][c] for c in _CONTENT[w.table]}
    content.update(w.content)
    base = replaced[0] if replaced else _last(_retracted_in(p, period))
    new = _build(w.table, w.key, content, w.grounding, "revise" if replaced else "assert", period, now, base)
    if len(replaced) == 1 and _same_version(new, replaced[0]):
        p.unchanged.append(replaced[0])
        return
    p.closed = [*replaced, *_retracted_in(p, period)]
    for r in replaced:
        if r["valid_at"] < period.start:
            p.add(_kept(r, Period(r["valid_at"], period.start), now), "kept")
    p.add(new)


def _invalidate(p: _Pending, live: list[dict[str, Any]], now: datetime, strict: bool) -> None:
    """Not true over ``[invalid_at, until)`` (default: from now on). A version in force there ends
    at invalid_at (op ``invalidate``, this write's grounding), keeps its part after ``until``, and
    is retracted over what remains when the portion covers its start. With ``strict``, an
    invalidation that would leave the key valid at no time at all is refused (retract it)."""
    w = p.write
    start = now if w.invalid_at is KEEP or w.invalid_at is None else w.invalid_at
    portion = _portion(p, ensure_utc(start, field="invalid_at"))
    hit = _hit(p, live, portion, "invalidate")
    parts = [(r, cut(_period(r), portion)) for r in hit]
    if strict and len(hit) == len(live) and all(c.before is None and c.after is None for _, c in parts):
        what = _describe(w.table, w.key)
        first = live[0]["valid_at"]
        raise TemporalConflict(
            f"{what}: invalid_at {format_time(portion.start)} must be after valid_at {format_time(first)}"
            if len(live) == 1
            else f"{what}: invalidating {_span(portion)} would leave it valid at no time; retract it instead",
            field="invalid_at",
            value=format_time(portion.start),
        )
    for r, c in parts:
        p.closed.append(r)
        content = {col: r[col] for col in _CONTENT[w.table]}
        if c.before is not None:
            p.add(_build(w.table, w.key, content, w.grounding, "invalidate", c.before, now, r))
        else:
            assert c.inside is not None
            p.add(_build(w.table, w.key, content, w.grounding, "retract", c.inside, now, r))
        if c.after is not None:
            p.add(_kept(r, c.after, now), "kept")


def _retract(p: _Pending, live: list[dict[str, Any]], now: datetime, strict: bool) -> None:
    """Never in force from now on: every version in force is retracted."""
    w = p.write
    for r in live:
        p.closed.append(r)
        content = {c: r[c] for c in _CONTENT[w.table]}
        p.add(_build(w.table, w.key, content, w.grounding, "retract", _period(r), now, r))


def _set_aside(p: _Pending, live: list[dict[str, Any]], now: datetime, strict: bool) -> None:
    """A row an import refused on purpose, recorded as a retraction of its own key: it is never in
    force, but its history shows what was set aside, when and why (the grounding)."""
    w = p.write
    if live:
        raise KeyExists(
            f"{_describe(w.table, w.key)} has stored history (version {live[-1]['version_id']}); a "
            "set-aside record would hide it, so fix the row instead",
            field="id",
            value="/".join(w.key),
        )
    last = p.currents[-1] if p.currents else None
    start = w.valid_at or (last["valid_at"] if last is not None else now)
    period = _checked_period(
        _Described(w.table, w.key), start, None if w.invalid_at is KEEP else w.invalid_at, "invalid_at"
    )
    content = {**_defaults(w.table, w.key), **w.content}
    new = _build(w.table, w.key, content, w.grounding, "retract", period, now, last)
    same = [r for r in p.currents if _same_version(new, r)]
    if same:
        p.unchanged.append(same[0])
        return
    p.closed = list(p.currents)
    p.add(new)


def _cover(p: _Pending, live: list[dict[str, Any]], now: datetime, strict: bool) -> None:
    """Holds over all of ``[valid_at, until)``: asserted over the parts of it where it does not
    hold yet (a requirement member a revision keeps or adds), each part a version of its own."""
    w = p.write
    what = _Described(w.table, w.key)
    assert w.valid_at is not None
    portion = _checked_period(what, w.valid_at, w.until, "until")
    content = {**_defaults(w.table, w.key), **w.content}
    for gap in uncovered(portion, [_period(r) for r in live]):
        retracted = [r for r in _retracted_in(p, gap) if all(r is not c for c in p.closed)]
        p.closed += retracted
        p.add(_build(w.table, w.key, content, w.grounding, "assert", gap, now, _last(retracted)))


_Rule = Callable[[_Pending, list[dict[str, Any]], datetime, bool], None]
_RULES: Final[dict[str, _Rule]] = {
    "assert": _assert,
    "revise": _revise,
    "correct": _correct,
    "put": _put,
    "invalidate": _invalidate,
    "retract": _retract,
    "set_aside": _set_aside,
    "cover": _cover,
}

_BOOKKEEPING: Final = frozenset({"version_id", "op", "recorded_at", "expired_at", "supersedes_id"})
_PERIOD: Final = frozenset({"valid_at", "invalid_at"})


def _same_version(new: Mapping[str, Any], current: Mapping[str, Any]) -> bool:
    """Would ``new`` say exactly what ``current`` says (content, grounding, validity)?"""
    return all(new[c] == current[c] for c in new if c not in _BOOKKEEPING)


def _same_fact(new: Mapping[str, Any], current: Mapping[str, Any]) -> bool:
    """Would ``new`` say what ``current`` says, its period aside (content and grounding)?"""
    return all(new[c] == current[c] for c in new if c not in _BOOKKEEPING and c not in _PERIOD)


# ---------------------------------------------------------------------------------------------
# The I/O shell.


class WriteGateway:
    """Applies grounded, bi-temporal writes; the only writer of the graph tables."""

    def __init__(
        self,
        engine: Engine,
        *,
        clock: Clock = utc_now,
        name_key: NameKey | None = None,
        wait: WriteWait | None = None,
    ) -> None:
        """``name_key``: how concept names are compared (the question reader's normaliser); with
        it, a concept may not be asserted, or renamed, to a name or alias another concept in
        force already goes by, unless the write allows the duplicate. Without it names are not
        compared. ``wait``: how long a write waits for another writer (an import) to finish
        (default ``WriteWait()``, 600 s)."""
        self._engine = engine
        self._wait = wait or WriteWait()
        self._writer = engine.execution_options(kg_write=True, kg_write_wait=self._wait)
        self._mover = engine.execution_options(kg_write=True, kg_write_wait=_MOVE_WAIT)
        self._clock = clock
        self._name_key = name_key

    def reader(self) -> GraphReader:
        """A reader on the same database and clock, so reads agree with this gateway's "now"."""
        return GraphReader(self._engine, clock=self._clock)

    # -- single-key operations -------------------------------------------------------------

    def assert_concept(
        self,
        concept_id: str,
        *,
        name: str,
        grounding: Grounding,
        aliases: Iterable[str] = (),
        summary: str = "",
        valid_at: datetime | None = None,
        invalid_at: datetime | None = None,
        allow_duplicate_name: bool = False,
    ) -> Concept:
        """Assert a new concept, or one whose validity an invalidation closed (again, from
        ``valid_at``). A name or alias another concept goes by is refused (``DuplicateName``)
        unless ``allow_duplicate_name``."""
        w = Write.concept(
            concept_id,
            grounding=grounding,
            name=name,
            aliases=aliases,
            summary=summary,
            valid_at=valid_at,
            invalid_at=invalid_at,
        )
        return _as_concept(self.apply([w], allow_duplicate_names=allow_duplicate_name).written[0])

    def revise_concept(
        self,
        concept_id: str,
        *,
        grounding: Grounding,
        name: str | None = None,
        aliases: Iterable[str] | None = None,
        summary: str | None = None,
        valid_at: datetime | None = None,
        until: datetime | None = None,
        allow_duplicate_name: bool = False,
    ) -> Concept:
        """Revise a concept over ``[valid_at, until)`` (default: all of its validity): the versions
        in force there are superseded and keep their parts outside it (fields not given are kept).
        A new name or alias another concept goes by is refused unless ``allow_duplicate_name``.
        Returns the first version written (or the unchanged one); :meth:`apply` returns them all."""
        w = Write.concept(
            concept_id,
            grounding=grounding,
            mode="revise",
            name=name,
            aliases=aliases,
            summary=summary,
            valid_at=valid_at,
            until=until,
        )
        return _as_concept(self._one(self.apply([w], allow_duplicate_names=allow_duplicate_name)))

    def invalidate_concept(
        self,
        concept_id: str,
        *,
        grounding: Grounding,
        invalid_at: datetime | None = None,
        until: datetime | None = None,
        retract: bool = False,
    ) -> BatchResult:
        """Close a concept's validity over ``[invalid_at, until)`` (default: from now on) or, with
        ``retract``, withdraw the belief altogether. Its active edges and lesson links are closed
        the same way, with the same grounding, in the same transaction."""
        w = Write.concept(
            concept_id,
            grounding=grounding,
            mode="retract" if retract else "invalidate",
            invalid_at=KEEP if invalid_at is None else invalid_at,
            until=until,
        )
        return self.apply([w])

    def assert_edge(
        self,
        source_id: str,
        target_id: str,
        relation: str,
        *,
        grounding: Grounding,
        valid_at: datetime | None = None,
        invalid_at: datetime | None = None,
    ) -> Edge:
        """Assert an edge between two active concepts: a new one, or one an invalidation closed
        (again, from ``valid_at``)."""
        w = Write.edge(
            source_id, target_id, relation, grounding=grounding, valid_at=valid_at, invalid_at=invalid_at
        )
        return _as_edge(self.apply([w]).written[0])

    def revise_edge(
        self,
        source_id: str,
        target_id: str,
        relation: str,
        *,
        grounding: Grounding,
        valid_at: datetime | None = None,
        until: datetime | None = None,
    ) -> Edge:
        """Re-ground an edge over ``[valid_at, until)`` (default: all of its validity); the versions
        in force there keep their parts outside it."""
        w = Write.edge(
            source_id, target_id, relation, grounding=grounding, mode="revise", valid_at=valid_at, until=until
        )
        return _as_edge(self._one(self.apply([w])))

    def invalidate_edge(
        self,
        source_id: str,
        target_id: str,
        relation: str,
        *,
        grounding: Grounding,
        invalid_at: datetime | None = None,
        until: datetime | None = None,
        retract: bool = False,
    ) -> Edge:
        """Close an edge's validity over ``[invalid_at, until)`` (default: from now on), or retract
        it."""
        w = Write.edge(
            source_id,
            target_id,
            relation,
            grounding=grounding,
            mode="retract" if retract else "invalidate",
            invalid_at=KEEP if invalid_at is None else invalid_at,
            until=until,
        )
        return _as_edge(self.apply([w]).written[0])

    def link_lesson(
        self,
        lesson_id: str,
        concept_id: str,
        *,
        grounding: Grounding,
        title: str | None = None,
        valid_at: datetime | None = None,
    ) -> Version:
        """Link a lesson to an active concept (creating or retitling the lesson as needed)."""
        writes = [Write.lesson_link(lesson_id, concept_id, grounding=grounding, valid_at=valid_at)]
        writes.insert(0, Write.lesson(lesson_id, grounding=grounding, title=title, valid_at=valid_at))
        result = self.apply(writes)
        return next(v for v in result.written if v.table == "lesson_concepts")

    def unlink_lesson(
        self,
        lesson_id: str,
        concept_id: str,
        *,
        grounding: Grounding,
        invalid_at: datetime | None = None,
        until: datetime | None = None,
        retract: bool = False,
    ) -> Version:
        """Close a lesson link over ``[invalid_at, until)`` (default: from now on), or retract it."""
        w = Write.lesson_link(
            lesson_id,
            concept_id,
            grounding=grounding,
            mode="retract" if retract else "invalidate",
            invalid_at=KEEP if invalid_at is None else invalid_at,
            until=until,
        )
        return self.apply([w]).written[0]

    def assert_requirement(
        self,
        group_id: str,
        *,
        target_id: str,
        needs: int,
        options: Sequence[Collection[str]],
        grounding: Grounding,
        valid_at: datetime | None = None,
        invalid_at: datetime | None = None,
    ) -> BatchResult:
        """Assert that ``target_id`` needs ``needs`` of ``options`` (each a set of concept ids,
        all needed), the group and its members in one write, over ``[valid_at, invalid_at)``.
        Refused (nothing written): unknown or inactive concepts, a member equal to the target,
        ``needs`` outside 1..len(options), an empty option, a group that would close a
        learning-order cycle (each member counts as a prerequisite of the target), a group id
        that holds then (``KeyExists``)."""
        w = RequirementWrite(
            group_id,
            grounding,
            target_id=target_id,
            needs=needs,
            options=options,
            valid_at=valid_at,
            invalid_at=invalid_at,
        )
        return self.apply([w])

    def revise_requirement(
        self,
        group_id: str,
        *,
        grounding: Grounding,
        needs: int | None = None,
        options: Sequence[Collection[str]] | None = None,
        valid_at: datetime | None = None,
        until: datetime | None = None,
    ) -> BatchResult:
        """Revise a group over ``[valid_at, until)`` (default: all of its validity): a new
        ``needs``, new ``options``, or both (what is not given is kept). The versions it
        supersedes are closed, never deleted, and keep their parts outside the portion; an
        option left as it was keeps its number and its versions."""
        w = RequirementWrite(
            group_id, grounding, "revise", needs=needs, options=options, valid_at=valid_at, until=until
        )
        return self.apply([w])

    def invalidate_requirement(
        self,
        group_id: str,
        *,
        grounding: Grounding,
        invalid_at: datetime | None = None,
        until: datetime | None = None,
        retract: bool = False,
    ) -> BatchResult:
        """Close a group over ``[invalid_at, until)`` (default: from now on), or retract it; its
        members are closed the same way, with the same grounding, in the same write."""
        w = Write.requirement(
            group_id,
            grounding=grounding,
            mode="retract" if retract else "invalidate",
            invalid_at=KEEP if invalid_at is None else invalid_at,
            until=until,
        )
        return self.apply([w])

    def record_answer(
        self,
        answer_id: str,
        *,
        question: str,
        answer_text: str,
        abstained: bool,
        payload: Mapping[str, Any],
        grounding: Grounding,
        valid_at: datetime | None = None,
        reuse: ReuseEntry | None = None,
    ) -> None:
        """Record an answer or abstention (grounded, bi-temporal, never deleted); with ``reuse``,
        index it for reuse (``data_plane.reuse``) in the same transaction.

        Never waits for the graph's write lock (an import, a curation): on PostgreSQL answers
        take a lock of their own; on an SQLite file the answer is queued in the side file and
        moved into ``answers`` at once if the write lock is free, else as soon as it is
        (``data_plane.sidecar``; a queued answer is read like a recorded one)."""
        w = Write(
            "answers",
            (answer_id,),
            "assert",
            grounding,
            {
                "question": question,
                "answer_text": answer_text,
                "abstained": abstained,
                "payload": dict(payload),
            },
            valid_at,
        )
        if reuse is not None and reuse.answer_id != answer_id:
            raise WriteRejected(
                f"the reuse entry is for answer {reuse.answer_id!r}, not {answer_id!r}",
                field="answer_id",
                value=reuse.answer_id,
            )
        _validate_content(w.table, w.key, w.content)  # refused now, never when moved
        queue = queue_of(self._engine, create=True)
        if queue is None:
            with _translated(), self._writer.begin() as conn:
                now = self._lock(conn, _PG_ANSWER_LOCK)
                result = self._apply(conn, [w], now)
                if reuse is not None:
                    conn.execute(sa.insert(schema.answer_reuse).values(**reuse.row()))
            self._log(result, now)
            return
        now = ensure_utc(self._clock(), field="clock")
        reused = None if reuse is None else reuse.to_json()
        with _translated():
            queue.put(QueuedAnswer(answer_id, w.content, grounding, valid_at, now, reused))
        self._move_queued_answers_now()

    def move_queued_answers(self) -> int:
        """Move the answers queued in the SQLite side file into ``answers`` (each with the time
        it was recorded at), if the write lock is free now; returns how many moved. While another
        writer holds the lock they stay queued (and readable), and nothing waits."""
        queue = queue_of(self._engine)
        moved = 0
        while queue is not None and (items := queue.pending(_CHUNK)):
            try:
                with _translated(), self._mover.begin() as conn:
                    done = _present_answers(conn, [item.answer_id for item in items])
                    for item in items:
                        if item.answer_id not in done:
                            self._move(conn, item)
                            moved += 1
            except WriteLockTimeout:
                break
            queue.remove(item.answer_id for item in items)
        return moved

    def _move_queued_answers_now(self) -> None:
        """Move queued answers after a write committed (or an answer was queued), if the lock is
        free; a failure is logged, never raised: the write it follows has succeeded, and the
        answers stay queued (and readable) for the next move."""
        try:
            self.move_queued_answers()
        except (KGError, sa.exc.SQLAlchemyError) as exc:
            log.warning("gateway.answers_not_moved", error=_first_line(exc))

    def _move(self, conn: Connection, item: QueuedAnswer) -> None:
        w = Write("answers", (item.answer_id,), "assert", item.grounding, item.content, item.valid_at)
        result = self._apply(conn, [w], item.recorded_at)
        if item.reuse is not None:
            reuse = ReuseEntry.from_json(item.reuse)
            conn.execute(sa.insert(schema.answer_reuse).values(**reuse.row()))
        self._log(result, item.recorded_at)

    @staticmethod
    def _one(result: BatchResult) -> Version:
        """The first version in force that a write wrote (or, when it changed nothing, the
        version it left as it was)."""
        held = [v for v in result.written if v.stamp.op != "retract"]
        return held[0] if held else result.unchanged[0]

    # -- batches -----------------------------------------------------------------------------

    def apply(
        self, writes: Sequence[Write | RequirementWrite], *, allow_duplicate_names: bool = False
    ) -> BatchResult:
        """Apply ``writes`` in one transaction: all of them, or none (the error says why).
        ``allow_duplicate_names`` lets concepts go by names other concepts go by."""
        name_key = None if allow_duplicate_names else self._name_key
        with _translated(), self._writer.begin() as conn:
            now, previous = self._stamp(conn)
            result = self._apply(conn, list(writes), now, name_key=name_key)
            _advance_clock(conn, result, now, previous)
        self._log(result, now)
        self._move_queued_answers_now()
        return result

    @contextmanager
    def rehearse(
        self, writes: Sequence[Write | RequirementWrite], *, allow_duplicate_names: bool = False
    ) -> Iterator[tuple[BatchResult, Connection]]:
        """A dry run: apply ``writes`` in a transaction that is always rolled back. Yields what
        they would write (checked as :meth:`apply` checks it) and the connection that sees the
        graph as it would be, for reading it before the rollback (nothing is ever committed)."""
        name_key = None if allow_duplicate_names else self._name_key
        with _translated(), self._writer.connect() as conn:
            transaction = conn.begin()
            try:
                now, previous = self._stamp(conn)
                result = self._apply(conn, list(writes), now, name_key=name_key)
                # Rolled back with the rest; reads inside the rehearsal see its writes as known.
                _advance_clock(conn, result, now, previous)
                yield result, conn
            finally:
                transaction.rollback()

    @contextmanager
    def bulk(self) -> Iterator[BulkWriter]:
        """One transaction for many batches, so a caller can stream a large import in bounded
        memory and still write all of it or none of it.

        Every batch gets the checks of :meth:`apply` against the graph as the transaction has it
        so far, except the prerequisite-cycle check, which runs once over everything the batches
        added when the block ends (before the commit). Leaving the block with an exception rolls
        everything back.
        """
        with _translated(), self._writer.begin() as conn:
            now, previous = self._stamp(conn)
            writer = BulkWriter(self, conn, now)
            yield writer
            writer.finish()
            if writer.wrote:
                write_clock.advance(conn, now, previous)
        self._move_queued_answers_now()

    def _stamp(self, conn: Connection) -> tuple[datetime, datetime | None]:
        """Take the graph's write lock; return the write's recorded time, strictly after the
        latest committed graph write's (``data_plane.write_clock``), and that write's."""
        now = self._lock(conn)
        previous = write_clock.latest(conn)
        return write_clock.stamp_after(now, previous), previous

    def _lock(self, conn: Connection, lock: int = _PG_WRITE_LOCK) -> datetime:
        """Take the write lock (SQLite took it at BEGIN; on PostgreSQL ``lock``, the graph's or
        the answers' own); return "now", read only once the lock is held so that recorded_at
        follows commit order."""
        if conn.dialect.name == "postgresql":
            _pg_write_lock(conn, self._wait, lock)
        return ensure_utc(self._clock(), field="clock")

    def _log(self, result: BatchResult, now: datetime) -> None:
        sizes = result.sizes()
        log.info(
            "gateway.applied",
            written=sizes["written"],
            cascaded=sizes["cascaded"],
            unchanged=sizes["unchanged"],
            recorded_at=format_time(now),
        )

    def _apply(
        self,
        conn: Connection,
        writes: Sequence[Write | RequirementWrite],
        now: datetime,
        *,
        prerequisites: list[tuple[str, str]] | None = None,
        concepts: dict[str, list[Period]] | None = None,
        name_key: NameKey | None = None,
    ) -> BatchResult:
        """Apply one batch on ``conn``. With ``prerequisites``, the cycle check is left to the
        caller: the open prerequisite edges of the batch are appended to that list instead.
        ``concepts`` caches concept rows across the batches of one transaction (see BulkWriter).
        With ``name_key``, concept names are checked for duplicates (bulk imports leave that to
        the bundle check, which compares the whole bundle at once)."""
        expanded, lenient = _expand_requirements(conn, writes, now)
        normalised = [_normalise(w) for w in expanded]
        seen: set[tuple[str, tuple[str, ...]]] = set()
        for w in normalised:
            _validate_content(w.table, w.key, w.content)
            if (w.table, w.key) in seen:
                raise WriteRejected(
                    f"{_describe(w.table, w.key)} is written twice in one batch",
                    field="id",
                    value="/".join(w.key),
                )
            seen.add((w.table, w.key))

        currents = _load_current(conn, normalised)
        pending = [
            _plan(w, currents.get((w.table, w.key), []), now, strict=(w.table, w.key) not in lenient)
            for w in normalised
        ]
        pending += _cascade(conn, pending, seen, now)
        if name_key is not None:
            _check_names(conn, pending, now, name_key)
        view = _final_view(conn, pending, concepts)
        _check_endpoints(pending, view)
        _check_shrunk_concepts(conn, pending, seen)
        targets = _check_requirements(conn, pending)
        added = _open_prerequisites(pending, now, targets)[0]
        if prerequisites is not None:
            prerequisites += added
            return _persist(conn, pending, now)
        if not added:
            return _persist(conn, pending, now)
        if not targets and not _has_groups(conn):
            _check_prerequisite_cycles(conn, pending, now, targets)
            return _persist(conn, pending, now)
        # With groups, learning order is checked on the graph as the transaction now has it
        # (a refusal rolls the write back): every concept after the batch's pairs stays learnable.
        result = _persist(conn, pending, now)
        _check_learnable(conn, {t for _, t in added}, now)
        return result


class BulkWriter:
    """Batches applied in one open transaction (see :meth:`WriteGateway.bulk`)."""

    def __init__(self, gateway: WriteGateway, conn: Connection, now: datetime) -> None:
        self._gateway, self._conn, self.now = gateway, conn, now
        self.wrote = False
        self._added: list[tuple[str, str]] = []
        # Concept rows (only the columns endpoint checks read) this transaction has seen or
        # written: exact while it holds the write lock, and it spares every batch re-reading the
        # endpoints of its edges.
        self._concepts: dict[str, list[Period]] = {}

    def apply(self, writes: Sequence[Write | RequirementWrite]) -> BatchResult:
        """Apply one batch inside the transaction; raises like :meth:`WriteGateway.apply`."""
        result = self._gateway._apply(
            self._conn, list(writes), self.now, prerequisites=self._added, concepts=self._concepts
        )
        self.wrote = self.wrote or _wrote(result)
        self._gateway._log(result, self.now)
        return result

    def finish(self) -> None:
        """The deferred prerequisite-cycle check over every open prerequisite edge added."""
        if self._added:
            targets = {t for _, t in self._added}
            if _has_groups(self._conn):
                self._added = []
                _check_learnable(self._conn, targets, self.now)
                return
            # Past a few chunks of starts the reachable part is most of the graph anyway, and one
            # scan beats a recursive query per chunk that walks the same edges again.
            if len(targets) > 4 * _CHUNK:
                # Every open prerequisite edge, the added ones included, searched from every edge.
                added, self._added = self._added, []
                del added
                cycle = find_cycle([], _open_prerequisite_edges(self._conn, self.now))
            else:
                existing = _reachable_prerequisites(self._conn, targets, self.now)
                cycle = find_cycle(existing, self._added)
            if cycle is not None:
                raise PrerequisiteCycle(
                    "prerequisite edge would close a cycle: " + " -> ".join(cycle), cycle=cycle
                )


def _wrote(result: BatchResult) -> bool:
    return bool(result.written or result.kept or result.cascaded)


def _advance_clock(conn: Connection, result: BatchResult, now: datetime, previous: datetime | None) -> None:
    """Move the write clock to ``now`` with the write, if it wrote anything."""
    if _wrote(result):
        write_clock.advance(conn, now, previous)


def _pg_write_lock(conn: Connection, wait: WriteWait, lock: int) -> None:
    """An advisory lock of the gateway's: at once if free, else after saying so, waiting up to
    ``wait.seconds`` (``lock_timeout``, for this wait only)."""
    if conn.execute(sa.select(sa.func.pg_try_advisory_xact_lock(lock))).scalar():
        return
    wait.waiting()
    conn.execute(sa.select(sa.func.set_config("lock_timeout", f"{round(wait.seconds * 1000)}ms", True)))
    try:
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(lock)))
    except OperationalError as exc:
        if getattr(exc.orig, "sqlstate", None) == _PG_LOCK_NOT_AVAILABLE:
            raise wait.timed_out() from exc
        raise
    conn.execute(sa.select(sa.func.set_config("lock_timeout", "0", True)))


@contextmanager
def _translated() -> Iterator[None]:
    """Foreign database errors become errors of our tree, with the reason in one line."""
    try:
        yield
    except (KGError, ValueError):
        raise
    except IntegrityError as exc:
        raise ConcurrentWrite(
            f"the database refused the write ({_first_line(exc)}); another writer may have changed the same key",
        ) from exc
    except OperationalError as exc:
        if _refused_value(exc):
            raise WriteRejected(f"the database refused a value: {_first_line(exc)}") from exc
        raise ConcurrentWrite(f"the database is busy or unavailable ({_first_line(exc)}); retry") from exc
    except DBAPIError as exc:
        raise WriteRejected(f"the database refused the write: {_first_line(exc)}") from exc


def _refused_value(exc: DBAPIError) -> bool:
    """Whether the database refused a value rather than being busy: a retry cannot fix that (a
    data exception or a limit such as a btree entry's size on PostgreSQL, a value too big for
    SQLite), so it must not be reported as "busy ... retry"."""
    orig = exc.orig
    state = str(getattr(orig, "sqlstate", "") or "")
    return state[:2] in ("22", "54") or getattr(orig, "sqlite_errorcode", None) == _SQLITE_TOOBIG


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", exc)) or type(exc).__name__
    return text.strip().splitlines()[0][:300]


def _normalise(w: Write) -> Write:
    if w.mode not in MODES:
        raise InputError(
            f"unknown write mode {w.mode!r}; expected one of {MODES}", field="mode", value=w.mode
        )
    if w.table not in _CONTENT:
        raise InputError(f"unknown table {w.table!r}", field="table", value=w.table)
    if len(w.key) != len(schema.KEY_COLUMNS[w.table]):
        raise InputError(f"{w.table}: key must have {len(schema.KEY_COLUMNS[w.table])} parts", field="id")
    # Copies are made only when something changes: imports normalise tens of thousands of writes.
    if w.valid_at is not None and w.valid_at.tzinfo is not UTC:
        w = replace(w, valid_at=ensure_utc(w.valid_at, field="valid_at"))
    if isinstance(w.invalid_at, datetime) and w.invalid_at.tzinfo is not UTC:
        w = replace(w, invalid_at=ensure_utc(w.invalid_at, field="invalid_at"))
    if w.until is not None and w.until.tzinfo is not UTC:
        w = replace(w, until=ensure_utc(w.until, field="until"))
    if w.table != "concept_edges":
        return w
    source_id, target_id, relation = w.key
    if relation not in RELATIONS:
        raise UnknownRelation(
            f"unknown relation type {relation!r}; expected one of {', '.join(RELATIONS)}",
            field="relation",
            value=relation,
        )
    if source_id == target_id:
        raise SelfLoop(f"an edge may not connect {source_id!r} to itself", field="target_id", value=target_id)
    key = canonical_edge(source_id, target_id, relation)
    return w if key == w.key else replace(w, key=key)


def _load_current(
    conn: Connection, writes: Iterable[Write]
) -> dict[tuple[str, tuple[str, ...]], list[dict[str, Any]]]:
    """Current versions (``expired_at IS NULL``) of every key written, by valid time; a few bulk
    SELECTs."""
    by_table: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    for w in writes:
        by_table[w.table].add(w.key)
    out: dict[tuple[str, tuple[str, ...]], list[dict[str, Any]]] = defaultdict(list)
    for table_name, keys in by_table.items():
        for row in _current_rows(conn, table_name, keys):
            out[(table_name, row_key(table_name, row))].append(row)
    for rows in out.values():
        if len(rows) > 1:
            rows.sort(key=_by_valid_time)
    return out


def _by_valid_time(row: Mapping[str, Any]) -> tuple[datetime, int]:
    return (row["valid_at"], row["version_id"])


def _present_answers(conn: Connection, answer_ids: list[str]) -> set[str]:
    """Which of ``answer_ids`` are in ``answers`` already (a move repeated after a crash)."""
    A = schema.answers
    return set(conn.execute(sa.select(A.c.answer_id).where(A.c.answer_id.in_(answer_ids))).scalars())


def row_key(table_name: str, row: Mapping[Any, Any]) -> tuple[str, ...]:
    return tuple(row[c] for c in schema.KEY_COLUMNS[table_name])


def _current_rows(conn: Connection, table_name: str, keys: set[tuple[str, ...]]) -> list[dict[str, Any]]:
    ordered = sorted(keys)
    rows: list[dict[str, Any]] = []
    for i in range(0, len(ordered), _CHUNK):
        rows += [dict(r) for r in _current_of(conn, table_name, ordered[i : i + _CHUNK])]
    return rows


def _current_of(
    conn: Connection, table_name: str, keys: Sequence[tuple[str, ...]], columns: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """The current versions of exactly ``keys`` (at most ``_CHUNK``), locked on PostgreSQL.

    Written as a join of the table with the keys as a VALUES list rather than ``key IN (...)
    AND expired_at IS NULL``: without statistics SQLite's planner answers that through the
    ``expired_at`` index, scanning every current version of the table for each chunk (the
    largest cost of a bulk import into a big graph), where the join looks every key up in the
    current-key index. Only the matching versions are fetched, whatever the keys share.
    """
    if not keys:
        return []
    # Padded to a power of two with empty keys, which match nothing (the gateway refuses empty
    # ids), so a few statement texts serve every chunk size.
    size = 1 << (len(keys) - 1).bit_length()
    padded = [*keys, *[("",) * len(keys[0])] * (size - len(keys))]
    look = _lookup(conn.dialect, table_name, size, tuple(columns or ()))
    cursor = conn.exec_driver_sql(look.sql, tuple(part for key in padded for part in key)).cursor
    found = cursor.fetchall()
    if not found:
        return []
    procs = _result_procs(conn.dialect, look.columns, tuple(d[1] for d in cursor.description))
    return [
        {
            name: value if proc is None else proc(value)
            for name, proc, value in zip(look.names, procs, row, strict=True)
        }
        for row in found
    ]


class _Lookup(NamedTuple):
    sql: str
    names: tuple[str, ...]
    columns: tuple[sa.Column[Any], ...]


@functools.lru_cache(maxsize=64)
def _result_procs(
    dialect: Dialect, columns: tuple[sa.Column[Any], ...], type_codes: tuple[Any, ...]
) -> tuple[Callable[[Any], Any] | None, ...]:
    """Each column's result processor (as SQLAlchemy would apply it) for the driver's types."""
    return tuple(
        c.type.dialect_impl(dialect).result_processor(dialect, code)
        for c, code in zip(columns, type_codes, strict=True)
    )


@functools.lru_cache(maxsize=256)
def _lookup(dialect: Dialect, table_name: str, size: int, columns: tuple[str, ...]) -> _Lookup:
    """The keyed lookup as the driver takes it: written once per shape, not compiled per
    execution (a chunk carries up to 1,500 parameters, and a bulk import runs hundreds)."""
    table = schema.metadata.tables[table_name]
    names = schema.KEY_COLUMNS[table_name]
    selected = [table.c[c] for c in columns] if columns else list(table.c)
    mark = {"qmark": "?", "format": "%s", "pyformat": "%s"}[dialect.paramstyle]
    values = ", ".join(["(" + ", ".join([mark] * len(names)) + ")"] * size)
    on = " AND ".join(f"t.{c} = k.c{j}" for j, c in enumerate(names))
    sql = (
        f"WITH k({', '.join(f'c{j}' for j in range(len(names)))}) AS (VALUES {values}) "
        f"SELECT {', '.join(f't.{c.name}' for c in selected)} FROM k JOIN {table_name} AS t ON {on} "
        "WHERE t.expired_at IS NULL"
    )
    if dialect.name == "postgresql":
        sql += " FOR UPDATE OF t"
    return _Lookup(sql, tuple(c.name for c in selected), tuple(selected))


def _cascade(
    conn: Connection, pending: list[_Pending], seen: set[tuple[str, tuple[str, ...]]], now: datetime
) -> list[_Pending]:
    """Closing a concept closes its edges, lesson links and the requirement groups that name it
    (as target or as a member), and closing a group closes its members, over the same portion of
    valid time, with the same grounding, by the same rule (so a part of an edge that would only
    have held inside the portion is retracted: it never held while the concept did). A group is
    one statement: when a concept it names stops holding, the whole group is closed with it
    (docs/data-plane.md, "Requirement groups")."""
    queue = [
        p
        for p in pending
        if p.write.table in (*_DEPENDENTS,) and p.rows and p.write.mode in ("invalidate", "retract")
    ]
    extra: list[_Pending] = []
    while queue:
        p = queue.pop(0)
        retract = p.write.mode == "retract"
        # The portion the invalidation covered: from its own invalid_at to its until.
        start = next((r["invalid_at"] for r in p.rows if r["op"] == "invalidate"), None)
        if start is None:
            start = min(r["valid_at"] for r in p.rows if r["op"] == "retract")
        portion = Period(start, p.write.until)
        for table, found in _dependents(conn, p.write.table, p.write.key[0]):
            for key in sorted(found, key=lambda k: min(r["version_id"] for r in found[k])):
                if (table, key) in seen:
                    continue
                rows = sorted(found[key], key=_by_valid_time)
                if not retract and not any(overlaps(_period(r), portion) for r in rows):
                    continue  # already closed no later than the concept
                seen.add((table, key))
                w = Write(
                    table,
                    key,
                    "retract" if retract else "invalidate",
                    p.write.grounding,
                    {},
                    None,
                    KEEP if retract else portion.start,
                    p.write.until,
                )
                cascaded = _plan(w, rows, now, strict=False)
                cascaded.cascade = True
                extra.append(cascaded)
                if table in _DEPENDENTS:
                    queue.append(cascaded)
    return extra


_E, _LC, _G, _M = (
    schema.concept_edges,
    schema.lesson_concepts,
    schema.requirement_groups,
    schema.requirement_members,
)
_Found = sa.Select[Any]


def _current(table: sa.Table, cond: sa.ColumnElement[bool]) -> _Found:
    return sa.select(table).where(cond, table.c.expired_at.is_(None), table.c.op != "retract")


def _groups_naming(cid: str) -> _Found:
    # Entered from the member's concept index, then each group by its key: an IN (subquery) on
    # group_id has SQLite scan every current group through the expired_at index instead.
    return (
        sa.select(_G)
        .select_from(_M.join(_G, _G.c.group_id == _M.c.group_id))
        .where(
            _M.c.concept_id == cid,
            _M.c.expired_at.is_(None),
            _M.c.op != "retract",
            _G.c.expired_at.is_(None),
            _G.c.op != "retract",
        )
    )


# What closing a key of a table closes with it: per table, one statement per way of finding
# them. One statement per end: SQLite answers "source = x OR target = x" through the expired_at
# index, scanning every current edge, where each end alone has its own index.
_DEPENDENTS: Final[dict[str, tuple[tuple[sa.Table, Callable[[str], _Found]], ...]]] = {
    "concepts": (
        (_E, lambda cid: _current(_E, _E.c.source_id == cid)),
        (_E, lambda cid: _current(_E, _E.c.target_id == cid)),
        (_LC, lambda cid: _current(_LC, _LC.c.concept_id == cid)),
        (_G, lambda cid: _current(_G, _G.c.target_id == cid)),
        (_G, _groups_naming),
    ),
    GROUPS: ((_M, lambda gid: _current(_M, _M.c.group_id == gid)),),
}


def _dependents(
    conn: Connection, table_name: str, ident: str
) -> Iterator[tuple[str, dict[tuple[str, ...], list[dict[str, Any]]]]]:
    """The current versions in force of every key that closing ``ident`` of ``table_name``
    closes, per table, by key."""
    by_table: dict[str, dict[tuple[str, ...], list[dict[str, Any]]]] = {}
    for table, statement in _DEPENDENTS[table_name]:
        found = by_table.setdefault(table.name, defaultdict(list))
        stmt = statement(ident)
        if conn.dialect.name == "postgresql":
            stmt = stmt.with_for_update(of=table)
        for r in conn.execute(stmt).mappings():
            key = row_key(table.name, r)
            if all(r["version_id"] != x["version_id"] for x in found[key]):
                found[key].append(dict(r))
    yield from by_table.items()


# ---------------------------------------------------------------------------------------------
# Requirement groups: a RequirementWrite is expanded into writes of single keys (its group row and
# its members), planned like any others; what only the whole group can say is checked after.


def _expand_requirements(
    conn: Connection, writes: Sequence[Write | RequirementWrite], now: datetime
) -> tuple[list[Write], set[tuple[str, tuple[str, ...]]]]:
    """Every write of single keys, requirement writes expanded in place (reading their groups'
    current rows first), and the keys whose closing is lenient (a member a revision drops may
    have held only inside the portion: retracted there, as a cascade does)."""
    if not any(isinstance(w, RequirementWrite) for w in writes):
        return list(writes), set()  # type: ignore[arg-type]
    ids = sorted({w.group_id for w in writes if isinstance(w, RequirementWrite)})
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    members: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for i in range(0, len(ids), _CHUNK):
        for row in _current_of(conn, GROUPS, [(g,) for g in ids[i : i + _CHUNK]]):
            groups[row["group_id"]].append(row)
        stmt = sa.select(_M).where(_M.c.group_id.in_(ids[i : i + _CHUNK]), _M.c.expired_at.is_(None))
        for r in conn.execute(stmt).mappings():
            members[r["group_id"]].append(dict(r))
    out: list[Write] = []
    lenient: set[tuple[str, tuple[str, ...]]] = set()
    for w in writes:
        if not isinstance(w, RequirementWrite):
            out.append(w)
            continue
        rule = _REQUIREMENT_RULES.get(w.mode)
        if rule is None:
            raise InputError(
                f"requirement {w.group_id!r}: mode {w.mode!r}; a requirement write asserts, revises or "
                "upserts a group (close one with Write.requirement)",
                field="mode",
                value=w.mode,
            )
        live = sorted((r for r in groups[w.group_id] if r["op"] != "retract"), key=_by_valid_time)
        for single, strict in rule(w, live, [r for r in members[w.group_id] if r["op"] != "retract"], now):
            out.append(single)
            if not strict:
                lenient.add((single.table, single.key))
    return out, lenient


_Expanded = Iterator[tuple[Write, bool]]


def _group_row(w: RequirementWrite, mode: str, content: dict[str, Any]) -> Write:
    end: datetime | _Keep | None = KEEP if mode == "revise" else w.invalid_at
    return Write(GROUPS, (w.group_id,), mode, w.grounding, content, w.valid_at, end, w.until)


def _labelled(
    w: RequirementWrite, target: str, needs: int, old: Mapping[str, frozenset[str]]
) -> dict[str, frozenset[str]]:
    """The write's options, checked and numbered (a mapping's own numbers are kept)."""
    assert w.options is not None
    given = w.options
    options = list(given.values()) if isinstance(given, Mapping) else list(given)
    checked = check_group(w.group_id, target, needs, options)
    if isinstance(given, Mapping):
        return dict(zip((str(k) for k in given), checked, strict=True))
    return label_options(old, checked)


def _member(
    w: RequirementWrite, label: str, concept: str, mode: str, start: datetime | None, end: Any
) -> Write:
    return Write(MEMBERS, (w.group_id, label, concept), mode, w.grounding, {}, start, end, None)


def _dropped(
    w: RequirementWrite, label: str, concept: str, start: datetime | None, until: datetime | None
) -> Write:
    """A member the write no longer lists, closed over ``[start, until)`` (lenient: a part it
    covers from its start is retracted)."""
    return Write(MEMBERS, (w.group_id, label, concept), "invalidate", w.grounding, {}, None, start, until)


def _assert_requirement(
    w: RequirementWrite, live: list[dict[str, Any]], members: list[dict[str, Any]], now: datetime
) -> _Expanded:
    """A new group over ``[valid_at, invalid_at)`` with every member over the same period."""
    if w.target_id is None or w.needs is None or w.options is None:
        raise InputError(
            f"requirement {w.group_id!r}: asserting a group needs its target, needs and options",
            field="target_id" if w.target_id is None else "needs" if w.needs is None else "options",
        )
    labels = _labelled(w, w.target_id, w.needs, {})
    start = w.valid_at or now  # the members start exactly where the group does
    yield _group_row(w, "assert", {"target_id": w.target_id, "needs": w.needs}), True
    for label, option in labels.items():
        for concept in sorted(option):
            yield _member(w, label, concept, "assert", start, w.invalid_at), True


def _options_of(rows: Iterable[Mapping[str, Any]]) -> dict[str, frozenset[str]]:
    """Option number -> its concepts, by number (so equal options are matched in a fixed order)."""
    out: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        out[r["option"]].add(r["concept_id"])
    return {k: frozenset(out[k]) for k in sorted(out, key=int)}


def _same_target(w: RequirementWrite, live: list[dict[str, Any]]) -> str:
    """The group's target; a write naming another is refused (a group's target never changes)."""
    if not live:
        raise NotFound(f"requirement {w.group_id!r} does not exist (or was retracted)", key=w.group_id)
    target = str(live[-1]["target_id"])
    if w.target_id is not None and w.target_id != target:
        raise RequirementRejected(
            f"requirement {w.group_id!r} is a requirement of {target!r}; a group's target never "
            f"changes (assert a new group for {w.target_id!r})",
            field="target_id",
            value=w.target_id,
        )
    return target


def _revise_requirement(
    w: RequirementWrite, live: list[dict[str, Any]], members: list[dict[str, Any]], now: datetime
) -> _Expanded:
    """New ``needs`` and/or options over ``[valid_at, until)`` (default: all of its validity).
    Members the new options drop are closed over the portion (keeping their parts outside it);
    members they keep or add hold over all of it."""
    target = _same_target(w, live)
    if w.invalid_at is not None:
        raise InputError(
            f"requirement {w.group_id!r}: a revision keeps the periods it covers; invalidate the group "
            "to change when it holds",
            field="invalid_at",
        )
    yield _group_row(w, "revise", {} if w.needs is None else {"needs": w.needs}), True
    if w.options is None:
        return
    portion = Period(w.valid_at, w.until)
    spans = _joined(cut(_period(r), portion).inside for r in live if overlaps(_period(r), portion))
    if not spans:
        return  # it holds at no time there: the group row's revise refuses that
    if len(spans) > 1:
        raise TemporalConflict(
            f"requirement {w.group_id!r} holds over {len(spans)} separate periods in "
            f"{_span(portion)}; revise its options over each of them (valid_at and until)",
            field="valid_at",
            value=format_time(portion.start) or "",
        )
    span = spans[0]
    inside = [r for r in members if overlaps(_period(r), span)]
    needs = w.needs if w.needs is not None else int(live[-1]["needs"])
    labels = _labelled(w, target, needs, _options_of(inside))
    wanted = {(label, c) for label, option in labels.items() for c in option}
    for key in sorted({(r["option"], r["concept_id"]) for r in inside} - wanted):
        yield _dropped(w, *key, span.start, span.end), False
    for label, concept in sorted(wanted):
        yield replace(_member(w, label, concept, "cover", span.start, KEEP), until=span.end), True


def _joined(periods: Iterable[Period | None]) -> list[Period]:
    """Periods merged where they touch or overlap, in order (``None`` ends are open)."""
    out: list[Period] = []
    for p in sorted((p for p in periods if p is not None), key=lambda p: (p.start is not None, p.start)):
        if out and (out[-1].end is None or (p.start is not None and p.start <= out[-1].end)):
            last = out[-1]
            end = None if last.end is None or p.end is None else max(last.end, p.end)
            out[-1] = Period(last.start, end)
        else:
            out.append(p)
    return out


def _upsert_requirement(
    w: RequirementWrite, live: list[dict[str, Any]], members: list[dict[str, Any]], now: datetime
) -> _Expanded:
    """A bundle's group, authoritative from ``valid_at`` on (the whole period when empty), its
    members too: stored members it no longer lists are closed from then."""
    given: dict[str, set[str]] = defaultdict(set)
    for m in w.members:
        given[m.key[1]].add(m.key[2])
    if w.members:
        w = replace(w, options=dict(sorted(given.items(), key=lambda kv: int(kv[0]))))
    if w.target_id is None or w.needs is None or w.options is None:
        raise InputError(f"requirement {w.group_id!r}: a bundle group needs target, needs and options")
    if live:
        _same_target(w, live)
    start = w.valid_at or (live[0]["valid_at"] if live else None)
    labels = _labelled(w, w.target_id, w.needs, {})
    wanted = {(label, c) for label, option in labels.items() for c in option}
    yield _group_row(w, "upsert", {"target_id": w.target_id, "needs": w.needs}), True
    holding = {
        (r["option"], r["concept_id"])
        for r in members
        if start is None or r["invalid_at"] is None or r["invalid_at"] > start
    }
    for key in sorted(holding - wanted):
        first = min(r["valid_at"] for r in members if (r["option"], r["concept_id"]) == key)
        yield _dropped(w, *key, first if start is None or start < first else start, None), False
    member_start = start or now
    if w.members:
        for m in w.members:
            yield (m if m.valid_at is not None else replace(m, valid_at=member_start)), True
        return
    for label, concept in sorted(wanted):
        yield _member(w, label, concept, "upsert", member_start, w.invalid_at), True


_REQUIREMENT_RULES: Final[
    dict[str, Callable[[RequirementWrite, list[dict[str, Any]], list[dict[str, Any]], datetime], _Expanded]]
] = {
    "assert": _assert_requirement,
    "revise": _revise_requirement,
    "upsert": _upsert_requirement,
}


def _check_requirements(conn: Connection, pending: list[_Pending]) -> dict[str, str]:
    """Every group a batch touches keeps :func:`~data_plane.requirements.period_fault`'s rules
    as now known once it is applied (its members only where it holds, never its target, at
    least ``needs`` options at every valid time it holds, one target throughout); returns each
    touched group's target (for the cycle check)."""
    written = {(p.write.table, p.write.key): p for p in pending if p.write.table in (GROUPS, MEMBERS)}
    ids = sorted({key[0] for _, key in written})
    if not ids:
        return {}
    versions: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    members: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for (name, key), p in written.items():
        (versions if name == GROUPS else members)[key[0]].extend(p.live_rows_after())
    for i in range(0, len(ids), _CHUNK):
        chunk = ids[i : i + _CHUNK]
        for table, into in ((_G, versions), (_M, members)):
            stmt = sa.select(table).where(
                table.c.group_id.in_(chunk), table.c.expired_at.is_(None), table.c.op != "retract"
            )
            for r in conn.execute(stmt).mappings():
                if (table.name, row_key(table.name, r)) not in written:
                    into[r["group_id"]].append(dict(r))
    targets: dict[str, str] = {}
    for gid in ids:
        rows = versions.get(gid, [])
        found = {r["target_id"] for r in rows}
        if len(found) > 1:
            raise RequirementRejected(
                f"requirement {gid!r} would be a requirement of {' and '.join(sorted(map(repr, found)))}; "
                "a group's target never changes",
                field="target_id",
                value=sorted(found)[0],
            )
        fault = period_fault(
            gid,
            [(_period(r), r["target_id"], int(r["needs"])) for r in rows],
            [(_period(r), r["option"], r["concept_id"]) for r in members.get(gid, [])],
        )
        if fault is not None:
            raise fault
        if found:
            targets[gid] = found.pop()
    return targets


def _new_names(p: _Pending) -> list[tuple[str, str]]:
    """The names (``(field, name)``) a pending concept write takes on: those of a new assertion,
    or of a revision that changes the name or aliases."""
    if p.write.table != "concepts" or not p.rows:
        return []
    before = {(r["name"], tuple(r["aliases"])) for r in p.closed}
    out: list[tuple[str, str]] = []
    for row, kind in zip(p.rows, p.kinds, strict=True):
        if kind != "written" or row["op"] not in ("assert", "revise"):
            continue
        if row["op"] == "assert" or (row["name"], tuple(row["aliases"])) not in before:
            out += [("name", row["name"]), *(("aliases", a) for a in row["aliases"])]
    return out


def _check_names(conn: Connection, pending: list[_Pending], now: datetime, key: NameKey) -> None:
    """A concept the batch asserts, or renames, may not go by a name or alias (as ``key`` reads
    it) that another concept in force now goes by, or another concept of the batch."""
    named = [(p.write.key[0], names) for p in pending if (names := _new_names(p))]
    if not named:
        return
    ids = {cid for cid, _ in named}
    book: NameBook[None] = NameBook(key)
    c = schema.concepts
    stmt = sa.select(c.c.concept_id, c.c.name, c.c.aliases).where(
        c.c.expired_at.is_(None), c.c.op != "retract", sa.or_(c.c.invalid_at.is_(None), c.c.invalid_at > now)
    )
    for cid, name, aliases in conn.execute(stmt):
        if cid not in ids:
            for n in (name, *(aliases or ())):
                book.claim(cid, n, None)
    for cid, names in named:
        for field_, n in names:
            other = book.claim(cid, n, None)
            if other is not None:
                what = "name" if field_ == "name" else "alias"
                raise DuplicateName(
                    f"concept {cid!r}: {what} {n!r} is already concept {other.concept_id!r} "
                    f"({other.name!r}; names are compared as questions are read); choose another "
                    "name, or allow the duplicate if both are meant (kg: --allow-duplicate-name; HTTP: "
                    "allow_duplicate_name)",
                    field=field_,
                    value=n,
                    other_id=other.concept_id,
                )


_POINTING: Final = ("concept_edges", "lesson_concepts", GROUPS, MEMBERS)
"""The tables whose rows point at concepts (which must hold wherever they do)."""


def _ends(p: _Pending) -> tuple[str, ...]:
    """The concepts an edge, lesson link, requirement group (its target) or member points at."""
    table, key = p.write.table, p.write.key
    if table == "concept_edges":
        return key[:2]
    if table == GROUPS:
        return tuple(sorted({r["target_id"] for r in p.rows}))
    return key[-1:]


def _final_view(
    conn: Connection, pending: list[_Pending], cache: dict[str, list[Period]] | None = None
) -> dict[str, list[Period]]:
    """Concept id -> the valid periods the concept holds over after the batch (empty: unknown or
    retracted), for endpoint checks.

    Concepts the batch does not write are read with only the columns the checks need (or taken
    from ``cache``, which is then kept up to date)."""
    needed: set[str] = set()
    for p in pending:
        if p.rows and p.write.table in _POINTING:
            needed.update(_ends(p))
    view: dict[str, list[Period]] = {}
    written = {p.write.key[0]: p for p in pending if p.write.table == "concepts"}
    if cache is not None:
        for cid, p in written.items():
            cache[cid] = p.live_after()
        view.update((cid, cache[cid]) for cid in needed if cid in cache)
    from_db = sorted(cid for cid in needed if cid not in written and cid not in view)
    for i in range(0, len(from_db), _CHUNK):
        chunk = [(cid,) for cid in from_db[i : i + _CHUNK]]
        found: dict[str, list[Period]] = {cid: [] for (cid,) in chunk}
        for row in _current_of(conn, "concepts", chunk, ("concept_id", "op", "valid_at", "invalid_at")):
            if row["op"] != "retract":
                found[row["concept_id"]].append(_period(row))
        view.update(found)
        if cache is not None:
            cache.update(found)
    for cid, p in written.items():
        if cid in needed:
            view[cid] = p.live_after()
    return view


def _check_endpoints(pending: list[_Pending], view: Mapping[str, list[Period]]) -> None:
    """An edge or lesson link may only point at a known concept whose validity covers its own:
    it may neither start before the concept nor outlive it, nor hold in a gap between its
    periods."""
    for p in pending:
        if not p.rows or p.write.table not in _POINTING:
            continue
        for row in p.rows:
            if row["op"] != "retract":
                ends = (row["target_id"],) if p.write.table == GROUPS else _ends(p)
                for cid in ends:
                    _refuse_uncovered(p.write.table, p.write.key, _period(row), cid, view.get(cid) or [])


def _refuse_uncovered(
    table: str, key: tuple[str, ...], period: Period, cid: str, concept: list[Period]
) -> None:
    what = _describe(table, key)
    if not concept:
        raise InactiveEndpoint(f"{what}: unknown concept {cid!r}", field="concept_id", value=cid)
    gaps = uncovered(period, concept)
    if not gaps:
        return
    first = min(c.start for c in concept if c.start is not None)
    assert period.start is not None
    if period.start < first:
        raise InactiveEndpoint(
            f"{what}: would hold from {format_time(period.start)}, before concept {cid!r} "
            f"does (valid from {format_time(first)})",
            field="valid_at",
            value=format_time(period.start),
        )
    raise InactiveEndpoint(
        f"{what}: concept {cid!r} is no longer active (invalid since {format_time(gaps[0].start)})",
        field="concept_id",
        value=cid,
    )


def _check_shrunk_concepts(
    conn: Connection, pending: list[_Pending], seen: set[tuple[str, tuple[str, ...]]]
) -> None:
    """A correction or an import row may shorten when a concept holds; the edges and lesson links
    that point at it (and that the batch does not write) must still be covered."""
    for p in pending:
        if p.write.table != "concepts" or not p.rows or p.write.mode in ("invalidate", "retract"):
            continue
        after = p.live_after()
        before = [_period(r) for r in p.currents if r["op"] != "retract"]
        if all(covers(after, b) for b in before):
            continue
        cid = p.write.key[0]
        for table, cond in (
            (schema.concept_edges, schema.concept_edges.c.source_id == cid),
            (schema.concept_edges, schema.concept_edges.c.target_id == cid),
            (schema.lesson_concepts, schema.lesson_concepts.c.concept_id == cid),
            (_G, _G.c.target_id == cid),
            (_M, _M.c.concept_id == cid),
        ):
            stmt = sa.select(table).where(cond, table.c.expired_at.is_(None), table.c.op != "retract")
            for r in conn.execute(stmt).mappings():
                key = row_key(table.name, r)
                if (table.name, key) not in seen:
                    _refuse_uncovered(table.name, key, Period(r["valid_at"], r["invalid_at"]), cid, after)


def _open_prerequisites(
    pending: list[_Pending], now: datetime, targets: Mapping[str, str] | None = None
) -> tuple[list[tuple[str, str]], set[tuple[str, str]]]:
    """The prerequisite pairs (before, after) a batch leaves open (in force now or later), and
    those it leaves closed: its prerequisite edges, and its requirement members (each a possible
    prerequisite of its group's target: ``targets`` maps group ids to targets)."""
    added: list[tuple[str, str]] = []
    closed: set[tuple[str, str]] = set()
    for p in pending:
        if p.write.table == MEMBERS and targets is not None and p.write.key[0] in targets:
            pair = (p.write.key[2], targets[p.write.key[0]])
        elif p.write.table != "concept_edges" or p.write.key[2] != PREREQUISITE:
            continue
        else:
            pair = (p.write.key[0], p.write.key[1])
        if any(period.end is None or period.end > now for period in p.live_after()):
            added.append(pair)
        else:
            closed.add(pair)
    return added, closed


def _check_prerequisite_cycles(
    conn: Connection, pending: list[_Pending], now: datetime, targets: Mapping[str, str]
) -> None:
    added, closed = _open_prerequisites(pending, now, targets)
    if not added:
        return
    existing = [e for e in _reachable_prerequisites(conn, {t for _, t in added}, now) if e not in closed]
    cycle = find_cycle(existing, added)
    if cycle is not None:
        raise PrerequisiteCycle("prerequisite edge would close a cycle: " + " -> ".join(cycle), cycle=cycle)


def _open(table: sa.Table, now: datetime) -> sa.ColumnElement[bool]:
    """A current version in force now or later."""
    return sa.and_(
        table.c.expired_at.is_(None),
        table.c.op != "retract",
        sa.or_(table.c.invalid_at.is_(None), table.c.invalid_at > now),
    )


def _prerequisite_pairs(conn: Connection, now: datetime) -> sa.Subquery | None:
    """The open (before, after) pairs the cycle check walks when the graph holds requirement
    groups at all: prerequisite edges and each open member with its group's target (a union the
    engine may read whole). None without groups: the edge table itself is walked then, each step
    an index lookup as it always was."""
    e = schema.concept_edges
    edges = sa.select(e.c.source_id.label("source_id"), e.c.target_id.label("target_id")).where(
        e.c.relation == PREREQUISITE, _open(e, now)
    )
    if not _has_groups(conn):
        return None
    members = (
        sa.select(_M.c.concept_id.label("source_id"), _G.c.target_id.label("target_id"))
        .select_from(_M.join(_G, _G.c.group_id == _M.c.group_id))
        .where(_open(_M, now), _open(_G, now))
    )
    return sa.union_all(edges, members).subquery("pairs")


def _has_groups(conn: Connection) -> bool:
    """Does the graph hold any requirement member (then learning order is learnability, not
    acyclicity)?"""
    return conn.execute(sa.select(_M.c.version_id).limit(1)).first() is not None


def _check_learnable(conn: Connection, starts: set[str], now: datetime) -> None:
    """Every concept at or after ``starts`` in learning order can still be learnt in some order
    (``data_plane.requirements.unlearnable``; concepts before them are unaffected by the change
    and were learnable before it), on the open graph as ``conn`` sees it; else a
    ``PrerequisiteCycle`` naming a cycle no order can enter."""
    e = schema.concept_edges
    everything = len(starts) > 4 * _CHUNK
    reach = [] if everything else _reachable_prerequisites(conn, starts, now)
    nodes = set(starts) | {t for _, t in reach}
    plain_stmt = sa.select(e.c.source_id, e.c.target_id).where(e.c.relation == PREREQUISITE, _open(e, now))
    group_stmt = (
        sa.select(_G.c.group_id, _G.c.target_id, _G.c.needs, _M.c.option, _M.c.concept_id)
        .select_from(_G.join(_M, _M.c.group_id == _G.c.group_id))
        .where(_open(_G, now), _open(_M, now))
    )
    plain: list[tuple[str, str]] = []
    groups: list[tuple[str, str, int, str, str]] = []
    if everything:
        plain = [(s, t) for s, t in conn.execute(plain_stmt)]
        groups = [tuple(r) for r in conn.execute(group_stmt)]
        nodes = {n for pair in plain for n in pair} | {r[1] for r in groups} | {r[4] for r in groups}
    else:
        ordered = sorted(nodes)
        for i in range(0, len(ordered), _CHUNK):
            chunk = ordered[i : i + _CHUNK]
            plain += [(s, t) for s, t in conn.execute(plain_stmt.where(e.c.target_id.in_(chunk)))]
            groups += [tuple(r) for r in conn.execute(group_stmt.where(_G.c.target_id.in_(chunk)))]
    bad = unlearnable(nodes, plain, groups)
    if not bad:
        return
    pairs = [(s, t) for s, t in plain if s in bad and t in bad]
    pairs += [(m, t) for _, t, _, _, m in groups if m in bad and t in bad]
    cycle = find_cycle([], sorted(set(pairs))) or sorted(bad)
    raise PrerequisiteCycle(
        "prerequisite edge or requirement would close a learning-order cycle no order can enter: "
        + " -> ".join(cycle),
        cycle=cycle,
    )


def _open_prerequisite_edges(conn: Connection, now: datetime) -> list[tuple[str, str]]:
    """Every open prerequisite pair (one scan)."""
    e = schema.concept_edges
    pairs = _prerequisite_pairs(conn, now)
    stmt = (
        sa.select(e.c.source_id, e.c.target_id).where(e.c.relation == PREREQUISITE, _open(e, now))
        if pairs is None
        else sa.select(pairs.c.source_id, pairs.c.target_id)
    )
    # Interned: the ids are shared with the rest of the process instead of copied per edge.
    return [(sys.intern(s), sys.intern(t)) for s, t in conn.execute(stmt)]


def _reachable_prerequisites(conn: Connection, starts: set[str], now: datetime) -> list[tuple[str, str]]:
    """Open prerequisite pairs reachable from ``starts`` (recursive CTE; one round trip per chunk)."""
    e = schema.concept_edges
    pairs = _prerequisite_pairs(conn, now)
    out: set[tuple[str, str]] = set()
    ordered = sorted(starts)
    for i in range(0, len(ordered), _CHUNK):
        src: Any = e if pairs is None else pairs
        cond = sa.and_(e.c.relation == PREREQUISITE, _open(e, now)) if pairs is None else sa.true()
        anchor = sa.select(src.c.source_id, src.c.target_id).where(
            cond, src.c.source_id.in_(ordered[i : i + _CHUNK])
        )
        reach = anchor.cte("reach", recursive=True)
        step = (
            sa.select(src.c.source_id, src.c.target_id)
            .join(reach, src.c.source_id == reach.c.target_id)
            .where(cond)
        )
        reach = reach.union(step)
        out.update((s, t) for s, t in conn.execute(sa.select(reach.c.source_id, reach.c.target_id)))
    return sorted(out)


def _persist(conn: Connection, pending: list[_Pending], now: datetime) -> BatchResult:
    expire: dict[str, list[int]] = defaultdict(list)
    for p in pending:
        expire[p.write.table] += [r["version_id"] for r in p.closed]
    for table_name, ids in expire.items():
        table = schema.metadata.tables[table_name]
        for i in range(0, len(ids), _CHUNK):
            chunk = ids[i : i + _CHUNK]
            res = conn.execute(
                sa.update(table)
                .where(table.c.version_id.in_(chunk), table.c.expired_at.is_(None))
                .values(expired_at=now)
            )
            if res.rowcount != len(chunk):
                raise ConcurrentWrite(f"{table_name}: a version was superseded by another writer; retry")
    by_table: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in pending:
        by_table[p.write.table] += p.rows
    new_ids = {
        table_name: iter(_insert_versions(conn, table_name, rows))
        for table_name, rows in by_table.items()
        if rows
    }
    # Written, kept, unchanged, then cascaded; each in pending order (ids were handed out in it).
    entries: dict[str, list[tuple[str, str, Mapping[str, Any], int, Grounding | None]]] = {
        "written": [],
        "kept": [],
        "unchanged": [],
        "cascaded": [],
    }
    for p in pending:
        table_name = p.write.table
        for current in p.unchanged:
            entries["unchanged"].append(("unchanged", table_name, current, current["version_id"], None))
        for row, kind in zip(p.rows, p.kinds, strict=True):
            vid = next(new_ids[table_name])
            kind = "cascaded" if p.cascade else kind
            entries[kind].append((kind, table_name, row, vid, None if kind == "kept" else p.write.grounding))
    return BatchResult([*entries["written"], *entries["kept"], *entries["unchanged"], *entries["cascaded"]])


def _insert_versions(conn: Connection, table_name: str, rows: list[dict[str, Any]]) -> list[int]:
    """Insert ``rows`` in bulk; return their new version ids in row order.

    SQLite cannot promise the order of RETURNING rows, so SQLAlchemy would fall back to one
    INSERT per row there. Instead: one executemany, then read the ids back. This writer holds
    SQLite's write lock (BEGIN IMMEDIATE) and rowids are assigned as max + 1 in insert order, so
    the ids above the previous maximum are exactly these rows, in order (checked by count).
    """
    table = schema.metadata.tables[table_name]
    if conn.dialect.name == "postgresql" and len(rows) >= _COPY_MIN:
        return _copy_versions(conn, table, rows)
    if conn.dialect.name != "sqlite":
        stmt = sa.insert(table).returning(table.c.version_id, sort_by_parameter_order=True)
        return [vid for (vid,) in conn.execute(stmt, rows).all()]
    vid = table.c.version_id
    before = conn.execute(sa.select(sa.func.coalesce(sa.func.max(vid), 0))).scalar_one()
    # The driver's executemany with each column's own bind processor (the same conversions
    # SQLAlchemy applies), without SQLAlchemy's per-row parameter bookkeeping: the hot loop of bulk imports.
    sql, order, procs = _sqlite_insert(conn.dialect, table_name, tuple(rows[0]))
    values = operator.itemgetter(*order)
    converts = [(i, _memoised(proc)) for i, proc in procs]
    params: list[tuple[Any, ...]] = []
    for row in rows:
        cells = list(values(row))
        for i, convert in converts:
            cells[i] = convert(cells[i])
        params.append(tuple(cells))
    conn.exec_driver_sql(sql, params)
    # n rows above the old maximum whose maximum is old + n are exactly old + 1 ... old + n.
    count, top = conn.execute(sa.select(sa.func.count(), sa.func.max(vid)).where(vid > before)).one()
    if count != len(rows) or top != before + len(rows):
        raise ConcurrentWrite(f"{table_name}: another writer inserted versions concurrently; retry")
    return list(range(before + 1, top + 1))


@functools.lru_cache(maxsize=64)
def _sqlite_insert(
    dialect: Dialect, table_name: str, columns: tuple[str, ...]
) -> tuple[str, tuple[str, ...], tuple[tuple[int, Callable[[Any], Any]], ...]]:
    """The INSERT of ``columns`` as the driver takes it, the column order of its parameters,
    and the bind processors of the columns that have one (by position); compiled once."""
    table = schema.metadata.tables[table_name]
    compiled = sa.insert(table).compile(dialect=dialect, column_keys=list(columns))
    order = tuple(compiled.positiontup or ())
    procs = ((i, table.c[name].type.bind_processor(dialect)) for i, name in enumerate(order))
    return str(compiled), order, tuple((i, _as_driver_text(proc)) for i, proc in procs if proc is not None)


def _as_driver_text(proc: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``proc``, then the text ``sqlite3``'s default adapter would make of a datetime (memoised
    with it: the driver would otherwise format the same stamps again on every row)."""

    def convert(value: Any) -> Any:
        out = proc(value)
        return out.isoformat(" ") if isinstance(out, datetime) else out

    return convert


def _copy_versions(conn: Connection, table: sa.Table, rows: list[dict[str, Any]]) -> list[int]:
    """PostgreSQL bulk insert with COPY: version ids are drawn from the table's sequence first
    (so they are known without RETURNING), then the rows are streamed in COPY's text format."""
    seq = conn.execute(sa.select(sa.func.pg_get_serial_sequence(table.name, "version_id"))).scalar_one()
    ids = sorted(
        conn.execute(
            sa.select(sa.func.nextval(seq)).select_from(sa.func.generate_series(1, len(rows)))
        ).scalars()
    )
    columns = list(rows[0])
    as_json = [isinstance(table.c[name].type, sa.JSON) for name in columns]
    driver = conn.connection.driver_connection
    assert driver is not None
    with (
        driver.cursor() as cursor,
        cursor.copy(f"COPY {table.name} (version_id, {', '.join(columns)}) FROM STDIN") as copy,
    ):
        for vid, row in zip(ids, rows, strict=True):
            copy.write_row(
                (vid, *(json.dumps(row[c]) if j else row[c] for c, j in zip(columns, as_json, strict=True)))
            )
    return ids


def _memoised(proc: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``proc`` with a cache for the length of one insert: a batch repeats the same few time
    stamps (``recorded_at`` is one value) and often the same evidence object, and converting
    each one again per row was the largest Python cost of a bulk import. The value just seen
    is recognised by identity (rows share their stamp and evidence objects); others are keyed
    by type and value, or by identity for unhashable ones (they stay alive for the whole call)."""
    cache: dict[tuple[Any, ...], Any] = {}
    last: list[Any] = [_UNSET, None]

    def convert(value: Any) -> Any:
        if value is last[0]:
            return last[1]
        try:
            key: tuple[Any, ...] = (type(value), value)
            hash(key)
        except TypeError:
            key = (id(value),)
        try:
            result = cache[key]
        except KeyError:
            cache[key] = result = proc(value)
        last[0], last[1] = value, result
        return result

    return convert


_UNSET: Final = object()


def _new_version(table_name: str, row: Mapping[str, Any], version_id: int, grounding: Grounding) -> Version:
    """The Version a freshly inserted row is (same as ``version_from_row``, without re-validating
    the grounding the row was built from)."""
    return Version(
        table=table_name,
        key=tuple(row[k] for k in schema.KEY_COLUMNS[table_name]),
        content={c: row[c] for c in _CONTENT[table_name]},
        grounding=grounding,
        stamp=stamp_from_row({**row, "version_id": version_id}),
    )


def _as_concept(v: Version) -> Concept:
    return concept_from_row({**v.content, "concept_id": v.key[0], **v.grounding.to_dict(), **_stamp_cols(v)})


def _as_edge(v: Version) -> Edge:
    s, t, r = v.key
    return edge_from_row(
        {"source_id": s, "target_id": t, "relation": r, **v.grounding.to_dict(), **_stamp_cols(v)}
    )


def _stamp_cols(v: Version) -> dict[str, Any]:
    st = v.stamp
    return {
        "version_id": st.version_id,
        "op": st.op,
        "valid_at": st.valid_at,
        "invalid_at": st.invalid_at,
        "recorded_at": st.recorded_at,
        "expired_at": st.expired_at,
        "supersedes_id": st.supersedes_id,
    }
