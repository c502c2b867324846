"""The write gateway: the one module that writes the graph tables.

Every write is a :class:`Write` (assert, revise, upsert, invalidate or retract one key of one
table) carrying a :class:`Grounding`. :meth:`WriteGateway.apply` takes a batch of writes and
applies all of them in one transaction, or none:

1. load the current version of every key the batch touches (a few bulk SELECTs);
2. decide, per write, the new version and the version it supersedes (pure rules below);
3. cascade: closing a concept closes its active edges and lesson links with the same grounding;
4. check the result: edges only between active concepts, no self-loops, known relations, and no
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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import Enum
from typing import Any, Final, NamedTuple

import sqlalchemy as sa
import structlog
from sqlalchemy.engine import Connection, Dialect, Engine
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from data_plane import schema
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
    SelfLoop,
    TemporalConflict,
    UnknownRelation,
    WriteLockTimeout,
    WriteRejected,
)
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
from data_plane.reuse import ReuseEntry
from data_plane.rows import concept_from_row, edge_from_row, stamp_from_row, version_from_row
from data_plane.sidecar import QueuedAnswer, queue_of
from data_plane.temporal import find_cycle

log = structlog.get_logger(__name__)

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

MODES: Final = ("assert", "revise", "upsert", "invalidate", "retract", "set_aside")
# Text content refused alike on both engines when it holds NUL or is not UTF-8 (see text_fault).
_TEXT_CONTENT: Final = ("name", "aliases", "summary", "title", "question", "answer_text")
_CONTENT: Final[dict[str, tuple[str, ...]]] = {
    "concepts": ("name", "aliases", "summary"),
    "concept_edges": (),
    "lessons": ("title",),
    "lesson_concepts": (),
    "answers": ("question", "answer_text", "abstained", "payload"),
}


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
    ) -> Write:
        content: dict[str, Any] = {}
        if name is not None:
            content["name"] = name
        if aliases is not None:
            content["aliases"] = list(aliases)
        if summary is not None:
            content["summary"] = summary
        return cls("concepts", (concept_id,), mode, grounding, content, valid_at, invalid_at)

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
    ) -> Write:
        return cls(
            "concept_edges", (source_id, target_id, relation), mode, grounding, {}, valid_at, invalid_at
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
    ) -> Write:
        return cls("lesson_concepts", (lesson_id, concept_id), mode, grounding, {}, valid_at, invalid_at)


class BatchResult:
    """What a batch wrote: new versions (in write order, cascades last) and untouched keys.

    The ``Version`` records are built on first access: a bulk import of 10^5 rows only needs
    :meth:`counts`, and building every record would cost more than the inserts themselves.
    """

    def __init__(self, entries: Sequence[tuple[str, str, Mapping[str, Any], int, Grounding | None]]) -> None:
        # (kind, table, row, version_id, grounding); kind: "written" | "cascaded" | "unchanged".
        self._entries = entries

    def _versions(self, kind: str) -> tuple[Version, ...]:
        return tuple(
            version_from_row(table, row) if grounding is None else _new_version(table, row, vid, grounding)
            for k, table, row, vid, grounding in self._entries
            if k == kind
        )

    @functools.cached_property
    def written(self) -> tuple[Version, ...]:
        return self._versions("written")

    @functools.cached_property
    def unchanged(self) -> tuple[Version, ...]:
        return self._versions("unchanged")

    @functools.cached_property
    def cascaded(self) -> tuple[Version, ...]:
        return self._versions("cascaded")

    def sizes(self) -> dict[str, int]:
        """How many versions were written, cascaded and left unchanged (no records built)."""
        out = dict.fromkeys(("written", "cascaded", "unchanged"), 0)
        for kind, *_ in self._entries:
            out[kind] += 1
        return out

    def counts(self) -> dict[tuple[str, str], int]:
        """``(table, op) -> rows``; ``op`` is the operation written, or "unchanged"."""
        out: dict[tuple[str, str], int] = defaultdict(int)
        for kind, table, row, _, _ in self._entries:
            out[(table, "unchanged" if kind == "unchanged" else row["op"])] += 1
        return dict(out)

    def to_dict(self) -> dict[str, Any]:
        return {
            "written": [v.to_dict() for v in self.written],
            "unchanged": [v.to_dict() for v in self.unchanged],
            "cascaded": [v.to_dict() for v in self.cascaded],
        }


# ---------------------------------------------------------------------------------------------
# Pure rules: given the current row of a key (or None) and a write, what is the new row?


def _is_open_at(row: Mapping[Any, Any], t: datetime) -> bool:
    return row["op"] != "retract" and (row["invalid_at"] is None or row["invalid_at"] > t)


def _describe(table: str, key: tuple[str, ...]) -> str:
    if table == "concept_edges":
        return f"edge {edge_key(*key)!r}"
    noun = {"concepts": "concept", "lessons": "lesson", "lesson_concepts": "lesson link", "answers": "answer"}
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
        if "summary" in content and not isinstance(content["summary"], str):
            raise InputError(
                f"concept {key[0]!r}: summary must be text", field="summary", value=content["summary"]
            )
    if (
        table == "lessons"
        and "title" in content
        and (not isinstance(content["title"], str) or not content["title"].strip())
    ):
        raise InputError(
            f"lesson {key[0]!r}: title must be non-empty text", field="title", value=content["title"]
        )


def _defaults(table: str, key: tuple[str, ...]) -> dict[str, Any]:
    if table == "concepts":
        return {"aliases": [], "summary": ""}
    if table == "lessons":
        return {"title": key[0]}
    return {}


def _new_row(
    write: Write, current: Mapping[str, Any] | None, now: datetime
) -> tuple[dict[str, Any] | None, str]:
    """Decide the row a write produces, or None when it changes nothing.

    Returns ``(row, op)``; raises a ``WriteRejected`` naming the field and value on refusal.
    """
    table, key, mode = write.table, write.key, write.mode
    live = current is not None and current["op"] != "retract"
    what = _Described(table, key)
    if mode == "upsert":
        mode = "revise" if live else "assert"
    if mode == "set_aside":
        # A row an import refused on purpose, recorded as a retraction of its own key: it is never
        # in force, but its history shows what was set aside, when and why (the grounding).
        if live:
            assert current is not None
            raise KeyExists(
                f"{what} has stored history (version {current['version_id']}); a set-aside record "
                "would hide it, so fix the row instead",
                field="id",
                value="/".join(key),
            )
        content = {**_defaults(table, key), **write.content}
        valid_at = write.valid_at or (current["valid_at"] if current is not None else now)
        invalid_at = None if write.invalid_at is KEEP else write.invalid_at
        op = "retract"
    elif mode == "assert":
        valid_at = write.valid_at or now
        if live:
            assert current is not None
            _refuse_unless_closed_by(what, key, current, valid_at)
        content = {**_defaults(table, key), **write.content}
        missing = [c for c in _CONTENT[table] if c not in content]
        if missing:
            raise InputError(f"{what}: missing {missing[0]}", field=missing[0])
        invalid_at = None if write.invalid_at is KEEP else write.invalid_at
        op = "assert"
    elif mode in ("revise", "invalidate", "retract"):
        if not live:
            raise NotFound(f"{what} does not exist (or was retracted)", key="/".join(key))
        assert current is not None
        content = {c: current[c] for c in _CONTENT[table]}
        if mode == "revise":
            content.update(write.content)
            valid_at = write.valid_at or current["valid_at"]
            invalid_at = current["invalid_at"] if write.invalid_at is KEEP else write.invalid_at
            op = "revise"
        elif mode == "invalidate":
            if (
                current["invalid_at"] is not None
                and current["invalid_at"] <= now
                and write.invalid_at is KEEP
            ):
                raise TemporalConflict(
                    f"{what} is already invalid since {format_time(current['invalid_at'])}",
                    field="invalid_at",
                    value=format_time(current["invalid_at"]),
                )
            valid_at = current["valid_at"]
            invalid_at = now if write.invalid_at is KEEP or write.invalid_at is None else write.invalid_at
            op = "invalidate"
        else:
            valid_at, invalid_at, op = current["valid_at"], current["invalid_at"], "retract"
    else:
        raise InputError(f"unknown write mode {mode!r}; expected one of {MODES}", field="mode", value=mode)

    valid_at = ensure_utc(valid_at, field="valid_at")
    if invalid_at is not None:
        invalid_at = ensure_utc(invalid_at, field="invalid_at")
        if invalid_at <= valid_at:
            raise TemporalConflict(
                f"{what}: invalid_at {format_time(invalid_at)} must be after valid_at {format_time(valid_at)}",
                field="invalid_at",
                value=format_time(invalid_at),
            )
    if current is not None and current["recorded_at"] > now:
        raise TemporalConflict(
            f"{what}: the clock ({format_time(now)}) is before the current version's recorded_at "
            f"({format_time(current['recorded_at'])})",
            field="recorded_at",
            value=format_time(now),
        )
    g = write.grounding
    # Built key by key (same keys, same order as the columns): this runs once per imported row.
    row: dict[str, Any] = dict(zip(schema.KEY_COLUMNS[table], key, strict=True))
    row.update(content)
    row["op"] = op
    row["confidence"] = g.confidence
    row["reason"] = g.reason
    row["source"] = g.source
    row["evidence"] = g.evidence
    row["valid_at"] = valid_at
    row["invalid_at"] = invalid_at
    row["recorded_at"] = now
    row["expired_at"] = None
    row["supersedes_id"] = None if current is None else current["version_id"]
    if op == "revise" and current is not None and _same_version(row, current):
        return None, op
    if mode == "set_aside" and current is not None and _same_version(row, current):
        return None, op
    return row, op


def _refuse_unless_closed_by(
    what: _Described, key: tuple[str, ...], current: Mapping[str, Any], start: datetime
) -> None:
    """An assert on a key whose current version still holds at ``start`` is refused. One whose
    validity was closed at or before ``start`` (invalidated) is asserted again from ``start``:
    curricula change back, and the history then reads assert, invalidate, assert."""
    end = current["invalid_at"]
    if end is None:
        raise KeyExists(
            f"{what} already exists (version {current['version_id']}); revise it instead",
            field="id",
            value="/".join(key),
        )
    if end > start:
        raise KeyExists(
            f"{what} holds until {format_time(end)} (version {current['version_id']}); assert it "
            f"again from then on (valid_at >= {format_time(end)}) or revise it",
            field="valid_at",
            value=format_time(start),
        )


_BOOKKEEPING: Final = frozenset({"version_id", "op", "recorded_at", "expired_at", "supersedes_id"})


def _same_version(new: Mapping[str, Any], current: Mapping[str, Any]) -> bool:
    """Would ``new`` say exactly what ``current`` says (content, grounding, validity)?"""
    return all(new[c] == current[c] for c in new if c not in _BOOKKEEPING)


# ---------------------------------------------------------------------------------------------
# The I/O shell.


@dataclass(slots=True)
class _Pending:
    write: Write
    row: dict[str, Any] | None  # None: unchanged
    current: dict[str, Any] | None
    cascade: bool = False


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
        allow_duplicate_name: bool = False,
    ) -> Concept:
        """Write a new version of a concept, superseding the current one (fields not given are
        kept). A new name or alias another concept goes by is refused unless
        ``allow_duplicate_name``."""
        w = Write.concept(
            concept_id,
            grounding=grounding,
            mode="revise",
            name=name,
            aliases=aliases,
            summary=summary,
            valid_at=valid_at,
        )
        return _as_concept(self._one(self.apply([w], allow_duplicate_names=allow_duplicate_name)))

    def invalidate_concept(
        self,
        concept_id: str,
        *,
        grounding: Grounding,
        invalid_at: datetime | None = None,
        retract: bool = False,
    ) -> BatchResult:
        """Close a concept's validity at ``invalid_at`` (default now) or, with ``retract``, withdraw
        the belief altogether. Its active edges and lesson links are closed the same way, with the
        same grounding, in the same transaction."""
        w = Write.concept(
            concept_id,
            grounding=grounding,
            mode="retract" if retract else "invalidate",
            invalid_at=KEEP if invalid_at is None else invalid_at,
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
    ) -> Edge:
        """Write a new version of an edge (new grounding and/or valid_at)."""
        w = Write.edge(source_id, target_id, relation, grounding=grounding, mode="revise", valid_at=valid_at)
        return _as_edge(self._one(self.apply([w])))

    def invalidate_edge(
        self,
        source_id: str,
        target_id: str,
        relation: str,
        *,
        grounding: Grounding,
        invalid_at: datetime | None = None,
        retract: bool = False,
    ) -> Edge:
        """Close an edge's validity at ``invalid_at`` (default now), or retract it."""
        w = Write.edge(
            source_id,
            target_id,
            relation,
            grounding=grounding,
            mode="retract" if retract else "invalidate",
            invalid_at=KEEP if invalid_at is None else invalid_at,
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
        retract: bool = False,
    ) -> Version:
        """Close a lesson link at ``invalid_at`` (default now), or retract it."""
        w = Write.lesson_link(
            lesson_id,
            concept_id,
            grounding=grounding,
            mode="retract" if retract else "invalidate",
            invalid_at=KEEP if invalid_at is None else invalid_at,
        )
        return self.apply([w]).written[0]

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
        return result.written[0] if result.written else result.unchanged[0]

    # -- batches -----------------------------------------------------------------------------

    def apply(self, writes: Sequence[Write], *, allow_duplicate_names: bool = False) -> BatchResult:
        """Apply ``writes`` in one transaction: all of them, or none (the error says why).
        ``allow_duplicate_names`` lets concepts go by names other concepts go by."""
        name_key = None if allow_duplicate_names else self._name_key
        with _translated(), self._writer.begin() as conn:
            now = self._lock(conn)
            result = self._apply(conn, list(writes), now, name_key=name_key)
        self._log(result, now)
        self._move_queued_answers_now()
        return result

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
            now = self._lock(conn)
            writer = BulkWriter(self, conn, now)
            yield writer
            writer.finish()
        self._move_queued_answers_now()

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
        writes: list[Write],
        now: datetime,
        *,
        prerequisites: list[tuple[str, str]] | None = None,
        concepts: dict[str, Mapping[str, Any]] | None = None,
        name_key: NameKey | None = None,
    ) -> BatchResult:
        """Apply one batch on ``conn``. With ``prerequisites``, the cycle check is left to the
        caller: the open prerequisite edges of the batch are appended to that list instead.
        ``concepts`` caches concept rows across the batches of one transaction (see BulkWriter).
        With ``name_key``, concept names are checked for duplicates (bulk imports leave that to
        the bundle check, which compares the whole bundle at once)."""
        normalised = [_normalise(w) for w in writes]
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
        pending: list[_Pending] = []
        for w in normalised:
            cur = currents.get((w.table, w.key))
            row, _ = _new_row(w, cur, now)
            pending.append(_Pending(w, row, cur))

        pending += _cascade(conn, pending, seen, now)
        if name_key is not None:
            _check_names(conn, pending, now, name_key)
        view = _final_view(conn, pending, currents, concepts)
        _check_endpoints(pending, view, now)
        if prerequisites is None:
            _check_prerequisite_cycles(conn, pending, now)
        else:
            prerequisites += _open_prerequisites(pending, now)[0]
        return _persist(conn, pending, now)


class BulkWriter:
    """Batches applied in one open transaction (see :meth:`WriteGateway.bulk`)."""

    def __init__(self, gateway: WriteGateway, conn: Connection, now: datetime) -> None:
        self._gateway, self._conn, self.now = gateway, conn, now
        self._added: list[tuple[str, str]] = []
        # Concept rows (only the columns endpoint checks read) this transaction has seen or
        # written: exact while it holds the write lock, and it spares every batch re-reading the
        # endpoints of its edges.
        self._concepts: dict[str, Mapping[str, Any]] = {}

    def apply(self, writes: Sequence[Write]) -> BatchResult:
        """Apply one batch inside the transaction; raises like :meth:`WriteGateway.apply`."""
        result = self._gateway._apply(
            self._conn, list(writes), self.now, prerequisites=self._added, concepts=self._concepts
        )
        self._gateway._log(result, self.now)
        return result

    def finish(self) -> None:
        """The deferred prerequisite-cycle check over every open prerequisite edge added."""
        if self._added:
            targets = {t for _, t in self._added}
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
) -> dict[tuple[str, tuple[str, ...]], dict[str, Any]]:
    """Current versions (``expired_at IS NULL``) of every key written, a few bulk SELECTs."""
    by_table: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    for w in writes:
        by_table[w.table].add(w.key)
    out: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}
    for table_name, keys in by_table.items():
        for row in _current_rows(conn, table_name, keys):
            out[(table_name, row_key(table_name, row))] = row
    return out


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
    # Padded to a power of two by repeating the last key (the join just repeats its row; the
    # callers key their results), so a few statement texts serve every chunk size.
    size = 1 << (len(keys) - 1).bit_length()
    padded = [*keys, *[keys[-1]] * (size - len(keys))]
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
    """Closing a concept closes its open edges and lesson links at the same time, same grounding.

    An edge that would only become valid at or after the concept's end is retracted instead
    (it never held while the concept did).
    """
    closing = [
        p
        for p in pending
        if p.write.table == "concepts" and p.row is not None and p.row["op"] in ("invalidate", "retract")
    ]
    if not closing:
        return []
    extra: list[_Pending] = []
    edges, links = schema.concept_edges, schema.lesson_concepts
    for p in closing:
        assert p.row is not None
        cid = p.write.key[0]
        end: datetime | None = p.row["invalid_at"]
        retract = p.row["op"] == "retract"
        # One statement per end: SQLite answers "source = x OR target = x" through the
        # expired_at index, scanning every current edge, where each end alone has its own index.
        for table, conds in (
            (edges, (edges.c.source_id == cid, edges.c.target_id == cid)),
            (links, (links.c.concept_id == cid,)),
        ):
            found: list[dict[str, Any]] = []
            for cond in conds:
                stmt = sa.select(table).where(cond, table.c.expired_at.is_(None), table.c.op != "retract")
                if conn.dialect.name == "postgresql":
                    stmt = stmt.with_for_update()
                found += [dict(r) for r in conn.execute(stmt).mappings()]
            for cur in sorted(found, key=lambda r: r["version_id"]):
                key = row_key(table.name, cur)
                if (table.name, key) in seen:
                    continue
                if (
                    not retract
                    and end is not None
                    and cur["invalid_at"] is not None
                    and cur["invalid_at"] <= end
                ):
                    continue  # already closed no later than the concept
                seen.add((table.name, key))
                mode = "retract" if retract or (end is not None and cur["valid_at"] >= end) else "invalidate"
                w = Write(
                    table.name, key, mode, p.write.grounding, {}, None, end if mode == "invalidate" else KEEP
                )
                row, _ = _new_row(w, cur, now)
                extra.append(_Pending(w, row, cur, cascade=True))
    return extra


def _renames(p: _Pending) -> bool:
    """Does this pending concept version take on names: a new assertion, or a change of name or
    aliases?"""
    row, cur = p.row, p.current
    if p.write.table != "concepts" or row is None or row["op"] not in ("assert", "revise"):
        return False
    return (
        row["op"] == "assert" or cur is None or (row["name"], row["aliases"]) != (cur["name"], cur["aliases"])
    )


def _check_names(conn: Connection, pending: list[_Pending], now: datetime, key: NameKey) -> None:
    """A concept the batch asserts, or renames, may not go by a name or alias (as ``key`` reads
    it) that another concept in force now goes by, or another concept of the batch."""
    named = [p for p in pending if _renames(p)]
    if not named:
        return
    ids = {p.write.key[0] for p in named}
    book: NameBook[None] = NameBook(key)
    c = schema.concepts
    stmt = sa.select(c.c.concept_id, c.c.name, c.c.aliases).where(
        c.c.expired_at.is_(None), c.c.op != "retract", sa.or_(c.c.invalid_at.is_(None), c.c.invalid_at > now)
    )
    for cid, name, aliases in conn.execute(stmt):
        if cid not in ids:
            for n in (name, *(aliases or ())):
                book.claim(cid, n, None)
    for p in named:
        assert p.row is not None
        cid = p.write.key[0]
        for field_, n in (("name", p.row["name"]), *(("aliases", a) for a in p.row["aliases"])):
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


def _final_view(
    conn: Connection,
    pending: list[_Pending],
    currents: Mapping[tuple[str, tuple[str, ...]], dict[str, Any]],
    cache: dict[str, Mapping[str, Any]] | None = None,
) -> dict[str, Mapping[str, Any] | None]:
    """Concept id -> the concept's row after the batch (None: unknown), for endpoint checks.

    Concepts the batch does not write are read with only the columns the checks need (or taken
    from ``cache``, which is then kept up to date)."""
    needed: set[str] = set()
    for p in pending:
        if p.row is None or p.write.table not in ("concept_edges", "lesson_concepts"):
            continue
        needed.update(p.write.key[:2] if p.write.table == "concept_edges" else p.write.key[1:])
    view: dict[str, Mapping[str, Any] | None] = {cid: None for cid in needed}
    written = {p.write.key[0]: p for p in pending if p.write.table == "concepts"}
    if cache is not None:
        for cid, p in written.items():
            row = p.row if p.row is not None else p.current
            if row is not None:
                cache[cid] = {k: row[k] for k in ("op", "valid_at", "invalid_at")}
        for cid in needed:
            if cid in cache:
                view[cid] = cache[cid]
    from_db = sorted(cid for cid in needed if cid not in written and view[cid] is None)
    for i in range(0, len(from_db), _CHUNK):
        chunk = [(cid,) for cid in from_db[i : i + _CHUNK]]
        for found_row in _current_of(conn, "concepts", chunk, ("concept_id", "op", "valid_at", "invalid_at")):
            found = {
                "op": found_row["op"],
                "valid_at": found_row["valid_at"],
                "invalid_at": found_row["invalid_at"],
            }
            view[found_row["concept_id"]] = found
            if cache is not None:
                cache[found_row["concept_id"]] = found
    for cid, p in written.items():
        if cid in view:
            view[cid] = p.row if p.row is not None else p.current
    return view


def _check_endpoints(
    pending: list[_Pending], view: Mapping[str, Mapping[str, Any] | None], now: datetime
) -> None:
    """An edge or lesson link may only point at a known concept whose validity covers its own:
    it may neither start before the concept nor outlive it."""
    for p in pending:
        row = p.row
        if row is None or row["op"] == "retract" or p.write.table not in ("concept_edges", "lesson_concepts"):
            continue
        ends = p.write.key[:2] if p.write.table == "concept_edges" else p.write.key[1:]
        for cid in ends:
            concept = view.get(cid)
            what = _describe(p.write.table, p.write.key)
            if concept is None or concept["op"] == "retract":
                raise InactiveEndpoint(f"{what}: unknown concept {cid!r}", field="concept_id", value=cid)
            if row["valid_at"] < concept["valid_at"]:
                raise InactiveEndpoint(
                    f"{what}: would hold from {format_time(row['valid_at'])}, before concept {cid!r} "
                    f"does (valid from {format_time(concept['valid_at'])})",
                    field="valid_at",
                    value=format_time(row["valid_at"]),
                )
            c_end = concept["invalid_at"]
            if c_end is not None and (row["invalid_at"] is None or row["invalid_at"] > c_end):
                raise InactiveEndpoint(
                    f"{what}: concept {cid!r} is no longer active (invalid since {format_time(c_end)})",
                    field="concept_id",
                    value=cid,
                )


def _open_prerequisites(
    pending: list[_Pending], now: datetime
) -> tuple[list[tuple[str, str]], set[tuple[str, str]]]:
    """The prerequisite edges a batch leaves open, and those it leaves closed."""
    added: list[tuple[str, str]] = []
    closed: set[tuple[str, str]] = set()
    for p in pending:
        if p.write.table != "concept_edges" or p.write.key[2] != PREREQUISITE:
            continue
        pair = (p.write.key[0], p.write.key[1])
        row = p.row if p.row is not None else p.current
        if row is not None and _is_open_at(row, now):
            added.append(pair)
        else:
            closed.add(pair)
    return added, closed


def _check_prerequisite_cycles(conn: Connection, pending: list[_Pending], now: datetime) -> None:
    added, closed = _open_prerequisites(pending, now)
    if not added:
        return
    existing = [e for e in _reachable_prerequisites(conn, {t for _, t in added}, now) if e not in closed]
    cycle = find_cycle(existing, added)
    if cycle is not None:
        raise PrerequisiteCycle("prerequisite edge would close a cycle: " + " -> ".join(cycle), cycle=cycle)


def _open_prerequisite_edges(conn: Connection, now: datetime) -> list[tuple[str, str]]:
    """Every open prerequisite edge (one scan)."""
    e = schema.concept_edges
    stmt = sa.select(e.c.source_id, e.c.target_id).where(
        e.c.relation == PREREQUISITE,
        e.c.expired_at.is_(None),
        e.c.op != "retract",
        sa.or_(e.c.invalid_at.is_(None), e.c.invalid_at > now),
    )
    # Interned: the ids are shared with the rest of the process instead of copied per edge.
    return [(sys.intern(s), sys.intern(t)) for s, t in conn.execute(stmt)]


def _reachable_prerequisites(conn: Connection, starts: set[str], now: datetime) -> list[tuple[str, str]]:
    """Open prerequisite edges reachable from ``starts`` (recursive CTE; one round trip per chunk)."""
    e = schema.concept_edges
    open_prereq = sa.and_(
        e.c.relation == PREREQUISITE,
        e.c.expired_at.is_(None),
        e.c.op != "retract",
        sa.or_(e.c.invalid_at.is_(None), e.c.invalid_at > now),
    )
    out: set[tuple[str, str]] = set()
    ordered = sorted(starts)
    for i in range(0, len(ordered), _CHUNK):
        anchor = sa.select(e.c.source_id, e.c.target_id).where(
            open_prereq, e.c.source_id.in_(ordered[i : i + _CHUNK])
        )
        reach = anchor.cte("reach", recursive=True)
        step = (
            sa.select(e.c.source_id, e.c.target_id)
            .join(reach, e.c.source_id == reach.c.target_id)
            .where(open_prereq)
        )
        reach = reach.union(step)
        out.update((s, t) for s, t in conn.execute(sa.select(reach.c.source_id, reach.c.target_id)))
    return sorted(out)


def _persist(conn: Connection, pending: list[_Pending], now: datetime) -> BatchResult:
    expire: dict[str, list[int]] = defaultdict(list)
    for p in pending:
        if p.row is not None and p.current is not None:
            expire[p.write.table].append(p.current["version_id"])
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
        if p.row is not None:
            by_table[p.write.table].append(p.row)
    new_ids = {
        table_name: iter(_insert_versions(conn, table_name, rows)) for table_name, rows in by_table.items()
    }
    # Written, then unchanged, then cascaded; each in pending order (ids were handed out in it).
    entries: dict[str, list[tuple[str, str, Mapping[str, Any], int, Grounding | None]]] = {
        "written": [],
        "unchanged": [],
        "cascaded": [],
    }
    for p in pending:
        table_name = p.write.table
        if p.row is None:
            assert p.current is not None
            entries["unchanged"].append(("unchanged", table_name, p.current, p.current["version_id"], None))
        else:
            kind = "cascaded" if p.cascade else "written"
            entries[kind].append((kind, table_name, p.row, next(new_ids[table_name]), p.write.grounding))
    return BatchResult([*entries["written"], *entries["unchanged"], *entries["cascaded"]])


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
