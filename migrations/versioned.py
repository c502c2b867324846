"""Frozen DDL of a versioned table and its guards, shared by the migrations that create one.

Every graph table holds versions of a stable key with the grounding record, the four stamps,
``op`` and ``supersedes_id``; the database refuses DELETE (and TRUNCATE on PostgreSQL) and any
UPDATE other than closing an open version once. Migration 0001 created the first five such
tables with these functions, migration 0005 the requirement tables.

Like a revision file, this module is frozen: it does not import the application's schema, and a
change to what it creates is a new function (used by a new revision), never an edit of these,
which would silently change what earlier revisions did.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

JSON = sa.JSON().with_variant(JSONB(), "postgresql")
VERSION_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
TS = sa.DateTime(timezone=True)

OPERATIONS = ("assert", "revise", "invalidate", "retract")
CLOSABLE = ("invalid_at", "expired_at")
COMMON_CHECKS = [
    ("confidence >= 0 AND confidence <= 1", "confidence_range"),
    ("length(reason) > 0", "reason_nonempty"),
    ("length(source) > 0", "source_nonempty"),
    ("invalid_at IS NULL OR invalid_at > valid_at", "valid_interval"),
    ("expired_at IS NULL OR expired_at >= recorded_at", "recorded_interval"),
    ("op IN (" + ", ".join(f"'{o}'" for o in OPERATIONS) + ")", "op_known"),
]
# The columns every versioned table has after its key and content columns, in order.
COMMON_COLUMNS = (
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
)


def create_versioned(
    name: str,
    key: tuple[str, ...],
    columns: list[sa.Column],
    checks: list[tuple[str, str]],
    *,
    current: Sequence[str] | None = None,
) -> None:
    """The table, its checks and its indexes; ``uq_<name>_current`` is unique over ``current``
    (default: the key) among current versions."""
    op.create_table(
        name,
        sa.Column("version_id", VERSION_ID, primary_key=True, autoincrement=True),
        *columns,
        sa.Column("op", sa.String(16), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("evidence", JSON, nullable=False),
        sa.Column("valid_at", TS, nullable=False),
        sa.Column("invalid_at", TS, nullable=True),
        sa.Column("recorded_at", TS, nullable=False),
        sa.Column("expired_at", TS, nullable=True),
        sa.Column("supersedes_id", VERSION_ID, nullable=True),
        sa.ForeignKeyConstraint(
            ["supersedes_id"], [f"{name}.version_id"], name=f"fk_{name}_supersedes_id_{name}"
        ),
        # op.f(): the name is final; the target metadata's naming convention must not prefix it again.
        *(
            sa.CheckConstraint(sql, name=op.f(f"ck_{name}_{short}"))
            for sql, short in [*COMMON_CHECKS, *checks]
        ),
        sa.PrimaryKeyConstraint("version_id", name=f"pk_{name}"),
    )
    where = sa.text("expired_at IS NULL")
    op.create_index(
        f"uq_{name}_current",
        name,
        list(key if current is None else current),
        unique=True,
        sqlite_where=where,
        postgresql_where=where,
    )
    op.create_index(f"ix_{name}_key_recorded", name, [*key, "recorded_at"])
    op.create_index(f"ix_{name}_recorded_at", name, ["recorded_at"])
    op.create_index(f"ix_{name}_expired_at", name, ["expired_at"])


def sqlite_guards(name: str, columns: list[str]) -> list[str]:
    """SQLite triggers refusing DELETE and any UPDATE but closing an open version once."""
    frozen = [c for c in columns if c not in CLOSABLE]
    changed = " OR ".join(f"NEW.{c} IS NOT OLD.{c}" for c in frozen)
    reopened = " OR ".join(f"(OLD.{c} IS NOT NULL AND NEW.{c} IS NOT OLD.{c})" for c in CLOSABLE)
    return [
        f"CREATE TRIGGER trg_{name}_no_delete BEFORE DELETE ON {name} BEGIN "
        f"SELECT RAISE(ABORT, '{name}: rows are never deleted; invalidate the version instead'); END",
        f"CREATE TRIGGER trg_{name}_close_only BEFORE UPDATE ON {name} WHEN {changed} OR {reopened} BEGIN "
        f"SELECT RAISE(ABORT, '{name}: an UPDATE may only close an open version once "
        f"(expired_at or invalid_at from NULL); content and grounding never change'); END",
    ]


def pg_guards(name: str) -> list[str]:
    """PostgreSQL triggers (the functions are migration 0001's) refusing DELETE, TRUNCATE and
    any UPDATE but closing an open version once."""
    return [
        f"CREATE TRIGGER trg_{name}_no_delete BEFORE DELETE ON {name} FOR EACH ROW EXECUTE FUNCTION kg_forbid_delete()",
        f"CREATE TRIGGER trg_{name}_no_truncate BEFORE TRUNCATE ON {name} FOR EACH STATEMENT EXECUTE FUNCTION kg_forbid_delete()",
        f"CREATE TRIGGER trg_{name}_close_only BEFORE UPDATE ON {name} FOR EACH ROW EXECUTE FUNCTION kg_close_only()",
    ]


def create_guarded(
    name: str,
    key: tuple[str, ...],
    columns: list[sa.Column],
    checks: list[tuple[str, str]],
    *,
    current: Sequence[str] | None = None,
) -> None:
    """A versioned table with its guard triggers, on the connection's engine."""
    column_names = ["version_id", *(c.name for c in columns), *COMMON_COLUMNS]
    create_versioned(name, key, columns, checks, current=current)
    dialect = op.get_bind().dialect.name
    for ddl in sqlite_guards(name, column_names) if dialect == "sqlite" else pg_guards(name):
        op.execute(ddl)


def drop_guarded(name: str) -> None:
    """Drop a versioned table and its guard triggers."""
    if op.get_bind().dialect.name == "postgresql":
        for trg in ("no_delete", "no_truncate", "close_only"):
            op.execute(f"DROP TRIGGER IF EXISTS trg_{name}_{trg} ON {name}")
    else:
        for trg in ("no_delete", "close_only"):
            op.execute(f"DROP TRIGGER IF EXISTS trg_{name}_{trg}")
    op.drop_table(name)
