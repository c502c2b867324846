"""The SQL schema: every graph table holds *versions* of stable keys.

Each row of ``concepts``, ``concept_edges``, ``lessons``, ``lesson_concepts``, ``requirement_groups``,
``requirement_members`` and ``answers`` is one version of its key, with the grounding record (``confidence``, ``reason``, ``source``,
``evidence``), the two timelines (``valid_at``/``invalid_at``: true in the curriculum;
``recorded_at``/``expired_at``: known to the system), the operation that wrote it and the version it
supersedes. Rows are never deleted and only ever closed once: the database enforces both with
triggers (see ``data_plane/guards.py`` and the migrations). A key may have several current versions
(``expired_at IS NULL``), one per valid period it holds over as now known; the gateway keeps their
periods apart, and a partial unique index allows one current version per key and valid start.

Alembic owns the DDL; this module is the ``target_metadata`` the migrations are checked against.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect

from data_plane.records import MAX_ID_LENGTH
from data_plane.relations import RELATIONS

NAMING_CONVENTION: Final = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)

OPERATIONS: Final[tuple[str, ...]] = ("assert", "revise", "invalidate", "retract")


@functools.lru_cache(maxsize=8192)
def _parse_sqlite_utc(text: str) -> datetime:
    # Stamps repeat heavily (a batch shares one recorded_at; imports share valid_at), and
    # datetimes are immutable, so a bounded cache is safe and saves most parses.
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


class UTCDateTime(sa.TypeDecorator[datetime]):
    """Aware-UTC datetimes on every engine.

    PostgreSQL stores ``timestamptz``. SQLite has no zone support, so values are stored as naive
    UTC (fixed-width ISO text, which sorts and compares correctly) and made aware again on read.
    Naive datetimes are refused on the way in: their meaning is ambiguous.
    """

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value!r} reached the database layer")
        value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def result_processor(self, dialect: Dialect, coltype: Any) -> Any:
        if dialect.name != "sqlite":
            return super().result_processor(dialect, coltype)

        # SQLite hands back the stored ISO text; one C-level parse replaces SQLAlchemy's regex
        # parse plus a second pass to attach the zone (eight stamps per neighbourhood row).
        def process(value: str | None) -> datetime | None:
            return None if value is None else _parse_sqlite_utc(value)

        return process

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


JSONType = sa.JSON().with_variant(JSONB(), "postgresql")
VersionId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

# Columns every versioned table has, in order, after its key and content columns.
GROUNDING_COLUMNS: Final = ("confidence", "reason", "source", "evidence")
TIME_COLUMNS: Final = ("valid_at", "invalid_at", "recorded_at", "expired_at")
# The only columns an UPDATE may touch, and only from NULL to a value.
CLOSABLE_COLUMNS: Final = ("invalid_at", "expired_at")


def _versioned_table(name: str, key: tuple[str, ...], columns: list[sa.Column[Any]], *extra: Any) -> sa.Table:
    table = sa.Table(
        name,
        metadata,
        sa.Column("version_id", VersionId, primary_key=True, autoincrement=True),
        *columns,
        sa.Column("op", sa.String(16), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("evidence", JSONType, nullable=False),
        sa.Column("valid_at", UTCDateTime(), nullable=False),
        sa.Column("invalid_at", UTCDateTime(), nullable=True),
        sa.Column("recorded_at", UTCDateTime(), nullable=False),
        sa.Column("expired_at", UTCDateTime(), nullable=True),
        sa.Column(
            "supersedes_id",
            VersionId,
            sa.ForeignKey(f"{name}.version_id"),
            nullable=True,
        ),
        sa.CheckConstraint("confidence >= 0 AND confidence <= 1", name="confidence_range"),
        sa.CheckConstraint("length(reason) > 0", name="reason_nonempty"),
        sa.CheckConstraint("length(source) > 0", name="source_nonempty"),
        sa.CheckConstraint("invalid_at IS NULL OR invalid_at > valid_at", name="valid_interval"),
        sa.CheckConstraint("expired_at IS NULL OR expired_at >= recorded_at", name="recorded_interval"),
        sa.CheckConstraint("op IN (" + ", ".join(f"'{op}'" for op in OPERATIONS) + ")", name="op_known"),
        *extra,
    )
    # At most one current version per key and valid start (migration 0004).
    sa.Index(
        f"uq_{name}_current",
        *(table.c[k] for k in key),
        table.c.valid_at,
        unique=True,
        sqlite_where=table.c.expired_at.is_(None),
        postgresql_where=table.c.expired_at.is_(None),
    )
    # History of a key and as-of reads: the versions of a key in recorded order.
    sa.Index(f"ix_{name}_key_recorded", *(table.c[k] for k in key), table.c.recorded_at)
    # Diffs between two recorded times.
    sa.Index(f"ix_{name}_recorded_at", table.c.recorded_at)
    sa.Index(f"ix_{name}_expired_at", table.c.expired_at)
    return table


concepts = _versioned_table(
    "concepts",
    ("concept_id",),
    [
        sa.Column("concept_id", sa.String(MAX_ID_LENGTH), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("aliases", JSONType, nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
    ],
    sa.CheckConstraint("length(concept_id) > 0", name="concept_id_nonempty"),
    sa.CheckConstraint("length(name) > 0", name="name_nonempty"),
)

concept_edges = _versioned_table(
    "concept_edges",
    ("source_id", "target_id", "relation"),
    [
        sa.Column("source_id", sa.String(MAX_ID_LENGTH), nullable=False),
        sa.Column("target_id", sa.String(MAX_ID_LENGTH), nullable=False),
        sa.Column("relation", sa.String(32), nullable=False),
    ],
    sa.CheckConstraint("source_id <> target_id", name="no_self_loop"),
    sa.CheckConstraint("relation IN (" + ", ".join(f"'{r}'" for r in RELATIONS) + ")", name="relation_known"),
)
# Neighbourhood reads enter from either end: the source end through ix_concept_edges_key_recorded
# (source_id leads it), the target end through this one.
sa.Index("ix_concept_edges_target_recorded", concept_edges.c.target_id, concept_edges.c.recorded_at)
# Name lookups when questions are resolved to concepts (migration 0002).
sa.Index("ix_concepts_name", concepts.c.name)

lessons = _versioned_table(
    "lessons",
    ("lesson_id",),
    [
        sa.Column("lesson_id", sa.String(MAX_ID_LENGTH), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
    ],
    sa.CheckConstraint("length(lesson_id) > 0", name="lesson_id_nonempty"),
)

lesson_concepts = _versioned_table(
    "lesson_concepts",
    ("lesson_id", "concept_id"),
    [
        sa.Column("lesson_id", sa.String(MAX_ID_LENGTH), nullable=False),
        sa.Column("concept_id", sa.String(MAX_ID_LENGTH), nullable=False),
    ],
)
sa.Index("ix_lesson_concepts_concept", lesson_concepts.c.concept_id)

# Requirements with alternatives (migration 0005; docs/data-plane.md, "Requirement groups"): a group
# says its target needs ``needs`` (k >= 1) of its options; a member row puts one concept into one
# option (an option is the set of concepts that are ALL needed). ``option`` is the option's number
# within its group ("1", "2", ...), part of the member's key, because a concept may belong to more
# than one option of a group (one of {A, B} or {A, C}).
requirement_groups = _versioned_table(
    "requirement_groups",
    ("group_id",),
    [
        sa.Column("group_id", sa.String(MAX_ID_LENGTH), nullable=False),
        sa.Column("target_id", sa.String(MAX_ID_LENGTH), nullable=False),
        sa.Column("needs", sa.Integer(), nullable=False),
    ],
    sa.CheckConstraint("length(group_id) > 0", name="group_id_nonempty"),
    sa.CheckConstraint("needs >= 1", name="needs_positive"),
)
# A target's groups (reads, walks stepping from a target into its groups).
sa.Index(
    "ix_requirement_groups_target_recorded", requirement_groups.c.target_id, requirement_groups.c.recorded_at
)

requirement_members = _versioned_table(
    "requirement_members",
    ("group_id", "option", "concept_id"),
    [
        sa.Column("group_id", sa.String(MAX_ID_LENGTH), nullable=False),
        sa.Column("option", sa.String(8), nullable=False),
        sa.Column("concept_id", sa.String(MAX_ID_LENGTH), nullable=False),
    ],
)
# The groups a concept is an option of (walks in the unlocks direction, cascades).
sa.Index(
    "ix_requirement_members_concept_recorded",
    requirement_members.c.concept_id,
    requirement_members.c.recorded_at,
)

answers = _versioned_table(
    "answers",
    ("answer_id",),
    [
        sa.Column("answer_id", sa.String(64), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("answer_text", sa.Text(), nullable=False),
        sa.Column("abstained", sa.Boolean(), nullable=False),
        # The whole answer object (see control_plane.planning.answer), for replay and audit.
        sa.Column("payload", JSONType, nullable=False),
    ],
)

# API tokens are credentials, not curriculum facts: revocation closes a row (revoked_at), and the
# secret itself is never stored, only its SHA-256.
api_tokens = sa.Table(
    "api_tokens",
    metadata,
    sa.Column("token_id", sa.String(32), primary_key=True),
    sa.Column("name", sa.Text(), nullable=False),
    sa.Column("scope", sa.String(16), nullable=False),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("created_at", UTCDateTime(), nullable=False),
    sa.Column("revoked_at", UTCDateTime(), nullable=True),
    sa.CheckConstraint("scope IN ('read', 'write')", name="scope_known"),
)

# Operational state, not graph history (migration 0003; docs/serving.md). The shared rate limits:
# one row per limited key holding its GCRA "theoretical arrival time" (epoch seconds). A row whose
# ``tat`` has passed says exactly what no row says (the key may spend its whole burst), so such rows
# are swept (``data_plane.limits``): the table holds only keys limited right now.
rate_limits = sa.Table(
    "rate_limits",
    metadata,
    sa.Column("key", sa.String(200), primary_key=True),
    sa.Column("tat", sa.Float(), nullable=False),
)
sa.Index("ix_rate_limits_tat", rate_limits.c.tat)

# Which recorded answer a repeated question may reuse (``data_plane.reuse``): one row per reusable
# answer, written in the transaction that records it, never updated or deleted (it grows with the
# answers table, which keeps every answer for ever). ``reuse_key`` hashes the question's reading and
# as-of semantics; ``seen`` holds the newest version id of each graph table when the answer began
# reading; ``reads`` what it read (the concepts whose neighbourhoods and lesson links it read).
answer_reuse = sa.Table(
    "answer_reuse",
    metadata,
    sa.Column("answer_id", sa.String(64), primary_key=True),
    sa.Column("reuse_key", sa.String(64), nullable=False),
    sa.Column("valid_at", UTCDateTime(), nullable=False),
    sa.Column("recorded_at", UTCDateTime(), nullable=False),
    sa.Column("seen", JSONType, nullable=False),
    sa.Column("reads", JSONType, nullable=False),
    sa.Column("created_at", UTCDateTime(), nullable=False),
)
sa.Index("ix_answer_reuse_key_created", answer_reuse.c.reuse_key, answer_reuse.c.created_at)

# The recorded time of the latest committed graph write (migration 0006): one row, updated in the
# transaction of every graph write that wrote something. A write stamps its rows strictly after it,
# and a read "as known at T" reads at most at it (docs/data-plane.md, "Recorded time").
write_clock = sa.Table(
    "write_clock",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True, autoincrement=False),
    sa.Column("recorded_at", UTCDateTime(), nullable=False),
    sa.CheckConstraint("id = 1", name="one_row"),
)

VERSIONED_TABLES: Final[tuple[sa.Table, ...]] = (
    concepts,
    concept_edges,
    lessons,
    lesson_concepts,
    requirement_groups,
    requirement_members,
    answers,
)
KEY_COLUMNS: Final[dict[str, tuple[str, ...]]] = {
    "concepts": ("concept_id",),
    "concept_edges": ("source_id", "target_id", "relation"),
    "lessons": ("lesson_id",),
    "lesson_concepts": ("lesson_id", "concept_id"),
    "requirement_groups": ("group_id",),
    "requirement_members": ("group_id", "option", "concept_id"),
    "answers": ("answer_id",),
}
