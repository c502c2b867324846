"""Mapping database rows to the frozen records of ``data_plane.records``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from data_plane import schema
from data_plane.records import Concept, Edge, Grounding, RequirementMember, Stamp, Version


def stamp_from_row(row: Mapping[Any, Any]) -> Stamp:
    return Stamp(
        version_id=row["version_id"],
        op=row["op"],
        valid_at=row["valid_at"],
        invalid_at=row["invalid_at"],
        recorded_at=row["recorded_at"],
        expired_at=row["expired_at"],
        supersedes_id=row["supersedes_id"],
    )


def grounding_from_row(row: Mapping[Any, Any]) -> Grounding:
    return Grounding.stored(row["confidence"], row["reason"], row["source"], row["evidence"])


def concept_from_row(row: Mapping[Any, Any]) -> Concept:
    return Concept(
        concept_id=row["concept_id"],
        name=row["name"],
        aliases=tuple(row["aliases"] or ()),
        summary=row["summary"],
        grounding=grounding_from_row(row),
        stamp=stamp_from_row(row),
    )


# A records row (edge and concept versions read in one statement): its kind ("edge" or
# "concept"), then these columns in this order, NULL where the row is of the other table.
RECORD_COLUMNS: tuple[str, ...] = (
    "version_id",
    "op",
    *schema.GROUNDING_COLUMNS,
    *schema.TIME_COLUMNS,
    "supersedes_id",
    "concept_id",
    "name",
    "aliases",
    "summary",
    "source_id",
    "target_id",
    "relation",
)


def record_from_values(values: Sequence[Any]) -> Edge | Concept:
    """A records row (kind, then :data:`RECORD_COLUMNS`, values already converted) as its
    record, built positionally: the answer's grounding reads many, and a mapping per row costs."""
    (kind, vid, op, conf, reason, source, evidence, valid_at, invalid_at, recorded_at,
     expired_at, supersedes, cid, name, aliases, summary, src, tgt, rel) = values  # fmt: skip
    grounding = Grounding.stored(conf, reason, source, evidence)
    stamp = Stamp(vid, op, valid_at, invalid_at, recorded_at, expired_at, supersedes)
    if kind == "edge":
        return Edge(src, tgt, rel, grounding, stamp)
    return Concept(cid, name, tuple(aliases or ()), summary, grounding, stamp)


def edge_from_row(row: Mapping[Any, Any]) -> Edge:
    return Edge(
        source_id=row["source_id"],
        target_id=row["target_id"],
        relation=row["relation"],
        grounding=grounding_from_row(row),
        stamp=stamp_from_row(row),
    )


_NOT_CONTENT = frozenset(
    {
        "version_id",
        "op",
        "confidence",
        "reason",
        "source",
        "evidence",
        "valid_at",
        "invalid_at",
        "recorded_at",
        "expired_at",
        "supersedes_id",
    }
)


def version_from_row(table_name: str, row: Mapping[Any, Any]) -> Version:
    keys = schema.KEY_COLUMNS[table_name]
    return Version(
        table=table_name,
        key=tuple(row[k] for k in keys),
        content={k: v for k, v in row.items() if k not in _NOT_CONTENT and k not in keys},
        grounding=grounding_from_row(row),
        stamp=stamp_from_row(row),
    )


def member_from_row(row: Mapping[Any, Any]) -> RequirementMember:
    return RequirementMember(
        group_id=row["group_id"],
        option=int(row["option"]),
        concept_id=row["concept_id"],
        grounding=grounding_from_row(row),
        stamp=stamp_from_row(row),
    )
