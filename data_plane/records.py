"""Frozen values the data plane hands out and takes in.

``Grounding`` refuses to exist when invalid, so a write without a proper grounding record cannot
even be expressed. Versions carry their ``Stamp`` (version id, operation, the four time stamps,
the version they supersede).

Two weights of the same versions:

* **thin rows** (:class:`EdgeRow`, :class:`ConceptRow`, and :class:`Neighbour` built of them) are
  plain named tuples of what a graph walk ranks and reasons with: version id, ids, relation,
  confidence, name and summary. No JSON is decoded and no time stamp parsed to build them; every
  read on the hot path (neighbourhoods, recursive walks) returns these;
* **full records** (:class:`Edge`, :class:`Concept`) add the grounding and the stamps; fetch them
  by version id (``GraphReader.records``) for what an answer finally shows.

Both weights satisfy :class:`EdgeLike` / :class:`ConceptLike`, the attributes code that only
ranks, prompts or verifies may rely on.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, NamedTuple, Protocol

from data_plane.clock import format_time
from data_plane.errors import GroundingRejected
from data_plane.relations import SYMMETRIC, edge_key

JSONValue = Any

MAX_ID_LENGTH: Final = 200
"""Concept, lesson and edge-end ids are at most this many characters (``VARCHAR(200)``: PostgreSQL
refuses longer ones, SQLite would store them, so both refuse them before the database does)."""

ID_RESERVED: Final = (">", "/")
"""Characters no id may hold: ``>`` joins the parts of an edge key (``source>relation>target``),
and ``/`` ends a URL path segment; an id holding either could not be addressed."""

MAX_NAME_LENGTH: Final = 400
"""A concept's name or alias is at most this many characters, on both engines: names are indexed
(``ix_concepts_name``), and PostgreSQL's btree refuses an entry over 2,704 bytes, which 400
characters of UTF-8 (at most 1,600 bytes) never reach."""

# A JSON escape of NUL in ``json.dumps`` output, not preceded by an escaped backslash.
_JSON_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


def text_fault(text: str) -> str | None:
    """Why ``text`` cannot be stored alike on both engines (None if it can): a NUL character
    (PostgreSQL refuses it) or a lone surrogate (not UTF-8 text at all)."""
    if "\x00" in text:
        return "holds a NUL character (U+0000), which PostgreSQL cannot store"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"is not valid UTF-8 text ({text[exc.start : exc.end]!r})"
    return None


def id_fault(ident: str) -> str | None:
    """Why ``ident`` cannot be an id of the graph (None if it can): too long for its column,
    holding a reserved character (:data:`ID_RESERVED`), or text a database cannot store."""
    if len(ident) > MAX_ID_LENGTH:
        return f"is {len(ident)} characters long; ids have at most {MAX_ID_LENGTH}"
    for reserved in ID_RESERVED:
        if reserved in ident:
            use = "joins the parts of an edge key" if reserved == ">" else "ends a URL path segment"
            return f"holds {reserved!r}, which no id may hold ({reserved!r} {use})"
    return text_fault(ident)


def name_fault(name: str) -> str | None:
    """Why ``name`` cannot be a concept's name or alias (None if it can): surrounding white
    space, more than :data:`MAX_NAME_LENGTH` characters, or text a database cannot store."""
    if name != name.strip():
        return "has white space around it"
    if len(name) > MAX_NAME_LENGTH:
        return f"is {len(name)} characters long; names have at most {MAX_NAME_LENGTH}"
    return text_fault(name)


ALIAS_SEPARATOR: Final = "|"
"""What separates a concept's aliases in a bundle's ``aliases`` cell, so no alias may hold it."""


def alias_fault(alias: str) -> str | None:
    """Why ``alias`` cannot be one of a concept's aliases (None if it can): a name's faults, or
    the separator of aliases in a bundle (an export could not write it)."""
    if ALIAS_SEPARATOR in alias:
        return f"holds {ALIAS_SEPARATOR!r}, which separates aliases in a bundle"
    return name_fault(alias)


def _non_empty_json(value: JSONValue) -> bool:
    if value is None:
        return False
    if isinstance(value, str | list | dict | tuple):
        return len(value) > 0 and (not isinstance(value, str) or value.strip() != "")
    return True


@dataclass(frozen=True)
class Grounding:
    """Why a write is believed: confidence in [0, 1], a reason, who asserted it, and evidence."""

    confidence: float
    reason: str
    source: str
    evidence: JSONValue

    def __post_init__(self) -> None:
        c = self.confidence
        if isinstance(c, bool) or not isinstance(c, int | float):
            raise GroundingRejected(
                f"confidence must be a number in [0, 1], got {c!r}", field="confidence", value=c
            )
        if math.isnan(c) or not 0.0 <= c <= 1.0:
            raise GroundingRejected(f"confidence must be in [0, 1], got {c!r}", field="confidence", value=c)
        for name in ("reason", "source"):
            text = getattr(self, name)
            if not isinstance(text, str) or not text.strip():
                raise GroundingRejected(
                    f"{name} must be non-empty text, got {text!r}", field=name, value=text
                )
            fault = text_fault(text)
            if fault is not None:
                raise GroundingRejected(f"{name} {fault}", field=name, value=text[:200])
        if not _non_empty_json(self.evidence):
            raise GroundingRejected(
                f"evidence must be non-empty JSON, got {self.evidence!r}",
                field="evidence",
                value=self.evidence,
            )
        try:
            dumped = json.dumps(self.evidence, allow_nan=False, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError) as exc:
            raise GroundingRejected(
                f"evidence must be JSON-serialisable: {exc}", field="evidence", value=repr(self.evidence)
            ) from exc
        fault = text_fault(dumped)
        if fault is None and _JSON_NUL.search(dumped):
            fault = "holds a NUL character (\\u0000), which PostgreSQL cannot store"
        if fault is not None:
            raise GroundingRejected(f"evidence {fault}", field="evidence", value=repr(self.evidence)[:200])
        object.__setattr__(self, "confidence", float(c))

    @classmethod
    def stored(cls, confidence: float, reason: str, source: str, evidence: JSONValue) -> Grounding:
        """A grounding read back from the database: validated when it was written (and by the
        table's CHECK constraints), so it is not validated again on the hot read path."""
        g = object.__new__(cls)
        object.__setattr__(g, "confidence", float(confidence))
        object.__setattr__(g, "reason", reason)
        object.__setattr__(g, "source", source)
        object.__setattr__(g, "evidence", evidence)
        return g

    def to_dict(self) -> dict[str, Any]:
        return {
            "confidence": self.confidence,
            "reason": self.reason,
            "source": self.source,
            "evidence": self.evidence,
        }


@dataclass(frozen=True)
class Stamp:
    """Where a version sits on both timelines, and what it superseded."""

    version_id: int
    op: str
    valid_at: datetime
    invalid_at: datetime | None
    recorded_at: datetime
    expired_at: datetime | None
    supersedes_id: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "version_id": self.version_id,
            "op": self.op,
            "valid_at": format_time(self.valid_at),
            "invalid_at": format_time(self.invalid_at),
            "recorded_at": format_time(self.recorded_at),
            "expired_at": format_time(self.expired_at),
            "supersedes_id": self.supersedes_id,
        }


class ConceptLike(Protocol):
    """What a thin :class:`ConceptRow` and a full :class:`Concept` both offer."""

    @property
    def concept_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def summary(self) -> str: ...
    @property
    def version_id(self) -> int: ...


class EdgeLike(Protocol):
    """What a thin :class:`EdgeRow` and a full :class:`Edge` both offer."""

    @property
    def source_id(self) -> str: ...
    @property
    def target_id(self) -> str: ...
    @property
    def relation(self) -> str: ...
    @property
    def confidence(self) -> float: ...
    @property
    def version_id(self) -> int: ...
    @property
    def key(self) -> str: ...


class ConceptRow(NamedTuple):
    """One concept version as a walk reads it: no aliases, grounding or stamps."""

    version_id: int
    concept_id: str
    name: str
    summary: str


class EdgeRow(NamedTuple):
    """One edge version as a walk reads it: ids, relation and confidence; no grounding text, no
    stamps. ``source_id``/``target_id`` are the stored (canonical) ends, whichever end a walk
    entered from."""

    version_id: int
    source_id: str
    target_id: str
    relation: str
    confidence: float

    @property
    def key(self) -> str:
        # edge_key inlined: ranking asks for it once per candidate per round.
        s, t, r = self.source_id, self.target_id, self.relation
        if r in SYMMETRIC and t < s:
            s, t = t, s
        return f"{s}>{r}>{t}"


@dataclass(frozen=True)
class Concept:
    concept_id: str
    name: str
    aliases: tuple[str, ...]
    summary: str
    grounding: Grounding
    stamp: Stamp

    @property
    def version_id(self) -> int:
        return self.stamp.version_id

    def row(self) -> ConceptRow:
        """This version as a thin row."""
        return ConceptRow(self.stamp.version_id, self.concept_id, self.name, self.summary)

    def as_version(self) -> Version:
        """This concept as a generic version record (for history-style listings)."""
        return Version(
            "concepts",
            (self.concept_id,),
            {"name": self.name, "aliases": list(self.aliases), "summary": self.summary},
            self.grounding,
            self.stamp,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "concept_id": self.concept_id,
            "name": self.name,
            "aliases": list(self.aliases),
            "summary": self.summary,
            "grounding": self.grounding.to_dict(),
            **self.stamp.to_dict(),
        }


@dataclass(frozen=True)
class Edge:
    source_id: str
    target_id: str
    relation: str
    grounding: Grounding
    stamp: Stamp

    @property
    def key(self) -> str:
        return edge_key(self.source_id, self.target_id, self.relation)

    @property
    def version_id(self) -> int:
        return self.stamp.version_id

    @property
    def confidence(self) -> float:
        return self.grounding.confidence

    def row(self) -> EdgeRow:
        """This version as a thin row."""
        return EdgeRow(self.stamp.version_id, self.source_id, self.target_id, self.relation, self.confidence)

    def as_version(self) -> Version:
        """This edge as a generic version record (for history-style listings)."""
        return Version(
            "concept_edges", (self.source_id, self.target_id, self.relation), {}, self.grounding, self.stamp
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "source_id": self.source_id,
            "target_id": self.target_id,
            "relation": self.relation,
            "grounding": self.grounding.to_dict(),
            **self.stamp.to_dict(),
        }


@dataclass(frozen=True)
class RequirementMember:
    """One member version: ``concept_id`` is part of option ``option`` (1, 2, ...) of group
    ``group_id``; an option's concepts are all needed."""

    group_id: str
    option: int
    concept_id: str
    grounding: Grounding
    stamp: Stamp

    @property
    def version_id(self) -> int:
        return self.stamp.version_id

    def to_dict(self) -> dict[str, Any]:
        return {
            "group_id": self.group_id,
            "option": self.option,
            "concept_id": self.concept_id,
            "grounding": self.grounding.to_dict(),
            **self.stamp.to_dict(),
        }


@dataclass(frozen=True)
class RequirementGroup:
    """A requirement group version in force, with its members in force at the same point:
    ``target_id`` needs ``needs`` of :attr:`options` (each option's concepts all needed)."""

    group_id: str
    target_id: str
    needs: int
    grounding: Grounding
    stamp: Stamp
    members: tuple[RequirementMember, ...]

    @property
    def version_id(self) -> int:
        return self.stamp.version_id

    @property
    def options(self) -> tuple[tuple[str, ...], ...]:
        """The options by number, each its concept ids sorted."""
        by: dict[int, list[str]] = {}
        for m in self.members:
            by.setdefault(m.option, []).append(m.concept_id)
        return tuple(tuple(sorted(by[n])) for n in sorted(by))

    @property
    def option_numbers(self) -> tuple[int, ...]:
        """The numbers of :attr:`options`, in the same order."""
        return tuple(sorted({m.option for m in self.members}))

    def satisfied_by(self, known: Collection[str]) -> bool:
        """Are at least ``needs`` options wholly in ``known`` (the one meaning of a group,
        ``data_plane.requirements.GroupSpec``)?"""
        have = set(known)
        return sum(1 for o in self.options if set(o) <= have) >= self.needs

    def to_dict(self) -> dict[str, Any]:
        return {
            "group_id": self.group_id,
            "target_id": self.target_id,
            "needs": self.needs,
            "options": [list(o) for o in self.options],
            "grounding": self.grounding.to_dict(),
            **self.stamp.to_dict(),
            "members": [m.to_dict() for m in self.members],
        }


class Neighbour(NamedTuple):
    """One step out of a set of concepts, as thin rows: the edge taken and the concept reached."""

    edge: EdgeRow
    concept: ConceptRow
    from_id: str
    direction: str  # "out": from_id is the edge's source; "in": from_id is its target


@dataclass(frozen=True)
class Version:
    """Any version of any versioned table, for history, snapshots and diffs."""

    table: str
    key: tuple[str, ...]
    content: Mapping[str, Any]
    grounding: Grounding
    stamp: Stamp

    @property
    def key_text(self) -> str:
        if self.table == "concept_edges":
            return edge_key(*self.key)
        return "/".join(self.key)

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "key": self.key_text,
            "content": dict(self.content),
            "grounding": self.grounding.to_dict(),
            **self.stamp.to_dict(),
        }


@dataclass(frozen=True)
class Snapshot:
    """The whole graph as of one (valid time, recorded time)."""

    valid_at: datetime
    recorded_at: datetime
    concepts: tuple[Concept, ...]
    edges: tuple[Edge, ...]
    lesson_links: tuple[Version, ...]
    lessons: tuple[Version, ...] = field(default=())
    requirement_groups: tuple[Version, ...] = field(default=())
    requirement_members: tuple[Version, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid_at": format_time(self.valid_at),
            "recorded_at": format_time(self.recorded_at),
            "concepts": [c.to_dict() for c in self.concepts],
            "edges": [e.to_dict() for e in self.edges],
            "lessons": [v.to_dict() for v in self.lessons],
            "lesson_links": [v.to_dict() for v in self.lesson_links],
            "requirement_groups": [v.to_dict() for v in self.requirement_groups],
            "requirement_members": [v.to_dict() for v in self.requirement_members],
        }


@dataclass(frozen=True)
class Diff:
    """What changed in the system's knowledge between two recorded times."""

    since: datetime
    until: datetime
    asserted: tuple[Version, ...]
    revised: tuple[Version, ...]
    invalidated: tuple[Version, ...]
    retracted: tuple[Version, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "from": format_time(self.since),
            "to": format_time(self.until),
            "asserted": [v.to_dict() for v in self.asserted],
            "revised": [v.to_dict() for v in self.revised],
            "invalidated": [v.to_dict() for v in self.invalidated],
            "retracted": [v.to_dict() for v in self.retracted],
        }
