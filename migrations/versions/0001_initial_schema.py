"""Initial schema: versioned, grounded, bi-temporal graph tables and their guards.

Every graph table holds versions of a stable key. The database itself refuses DELETE (and
TRUNCATE on PostgreSQL) and any UPDATE other than closing an open version once (``expired_at`` or
``invalid_at`` from NULL to a value); at most one version per key is current.

This file is frozen: it does not import the application's schema, so later changes to the models
cannot silently change what this revision did. ``tests/test_migrations.py`` checks that the
models and the migrated database agree.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")
VERSION_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
TS = sa.DateTime(timezone=True)

RELATIONS = ("prerequisite", "builds_on", "part_of", "related", "contrasts_with")
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


def _spec() -> dict[str, tuple[tuple[str, ...], list[sa.Column], list[tuple[str, str]]]]:
    return {
        "concepts": (
            ("concept_id",),
            [
                sa.Column("concept_id", sa.String(200), nullable=False),
                sa.Column("name", sa.Text(), nullable=False),
                sa.Column("aliases", JSON, nullable=False),
                sa.Column("summary", sa.Text(), nullable=False),
            ],
            [
                ("length(concept_id) > 0", "concept_id_nonempty"),
                ("length(name) > 0", "name_nonempty"),
            ],
        ),
        "concept_edges": (
            ("source_id", "target_id", "relation"),
            [
                sa.Column("source_id", sa.String(200), nullable=False),
                sa.Column("target_id", sa.String(200), nullable=False),
                sa.Column("relation", sa.String(32), nullable=False),
            ],
            [
                ("source_id <> target_id", "no_self_loop"),
                ("relation IN (" + ", ".join(f"'{r}'" for r in RELATIONS) + ")", "relation_known"),
            ],
        ),
        "lessons": (
            ("lesson_id",),
            [
                sa.Column("lesson_id", sa.String(200), nullable=False),
                sa.Column("title", sa.Text(), nullable=False),
            ],
            [("length(lesson_id) > 0", "lesson_id_nonempty")],
        ),
        "lesson_concepts": (
            ("lesson_id", "concept_id"),
            [
                sa.Column("lesson_id", sa.String(200), nullable=False),
                sa.Column("concept_id", sa.String(200), nullable=False),
            ],
            [],
        ),
        "answers": (
            ("answer_id",),
            [
                sa.Column("answer_id", sa.String(64), nullable=False),
                sa.Column("question", sa.Text(), nullable=False),
                sa.Column("answer_text", sa.Text(), nullable=False),
                sa.Column("abstained", sa.Boolean(), nullable=False),
                sa.Column("payload", JSON, nullable=False),
            ],
            [],
        ),
    }


def _create_versioned(
    name: str, key: tuple[str, ...], columns: list[sa.Column], checks: list[tuple[str, str]]
) -> None:
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
        f"uq_{name}_current", name, list(key), unique=True, sqlite_where=where, postgresql_where=where
    )
    op.create_index(f"ix_{name}_key_recorded", name, [*key, "recorded_at"])
    op.create_index(f"ix_{name}_recorded_at", name, ["recorded_at"])
    op.create_index(f"ix_{name}_expired_at", name, ["expired_at"])


def _sqlite_guards(name: str, columns: list[str]) -> list[str]:
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


PG_FUNCTIONS = [
    """
    CREATE FUNCTION kg_forbid_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION '%: rows are never deleted; invalidate the version instead', TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation';
    END $$
    """,
    """
    CREATE FUNCTION kg_close_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF (to_jsonb(NEW) - 'expired_at' - 'invalid_at') IS DISTINCT FROM (to_jsonb(OLD) - 'expired_at' - 'invalid_at')
         OR (OLD.expired_at IS NOT NULL AND NEW.expired_at IS DISTINCT FROM OLD.expired_at)
         OR (OLD.invalid_at IS NOT NULL AND NEW.invalid_at IS DISTINCT FROM OLD.invalid_at) THEN
        RAISE EXCEPTION '%: an UPDATE may only close an open version once (expired_at or invalid_at from NULL); content and grounding never change', TG_TABLE_NAME
          USING ERRCODE = 'restrict_violation';
      END IF;
      RETURN NEW;
    END $$
    """,
]


def _pg_guards(name: str) -> list[str]:
    return [
        f"CREATE TRIGGER trg_{name}_no_delete BEFORE DELETE ON {name} FOR EACH ROW EXECUTE FUNCTION kg_forbid_delete()",
        f"CREATE TRIGGER trg_{name}_no_truncate BEFORE TRUNCATE ON {name} FOR EACH STATEMENT EXECUTE FUNCTION kg_forbid_delete()",
        f"CREATE TRIGGER trg_{name}_close_only BEFORE UPDATE ON {name} FOR EACH ROW EXECUTE FUNCTION kg_close_only()",
    ]


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    spec = _spec()
    if dialect == "postgresql":
        for fn in PG_FUNCTIONS:
            op.execute(fn)
    for name, (key, columns, checks) in spec.items():
        column_names = [
            "version_id",
            *(c.name for c in columns),
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
        ]
        _create_versioned(name, key, columns, checks)
        for ddl in _sqlite_guards(name, column_names) if dialect == "sqlite" else _pg_guards(name):
            op.execute(ddl)
    op.create_index("ix_concept_edges_target_recorded", "concept_edges", ["target_id", "recorded_at"])
    op.create_index("ix_lesson_concepts_concept", "lesson_concepts", ["concept_id"])
    op.create_table(
        "api_tokens",
        sa.Column("token_id", sa.String(32), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("revoked_at", TS, nullable=True),
        sa.CheckConstraint("scope IN ('read', 'write')", name=op.f("ck_api_tokens_scope_known")),
        sa.PrimaryKeyConstraint("token_id", name="pk_api_tokens"),
        sa.UniqueConstraint("token_hash", name="uq_api_tokens_token_hash"),
    )


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    op.drop_table("api_tokens")
    for name in reversed(list(_spec())):
        if dialect == "postgresql":
            for trg in ("no_delete", "no_truncate", "close_only"):
                op.execute(f"DROP TRIGGER IF EXISTS trg_{name}_{trg} ON {name}")
        else:
            for trg in ("no_delete", "close_only"):
                op.execute(f"DROP TRIGGER IF EXISTS trg_{name}_{trg}")
        op.drop_table(name)
    if dialect == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS kg_close_only()")
        op.execute("DROP FUNCTION IF EXISTS kg_forbid_delete()")
