"""Initial schema: versioned, grounded, bi-temporal graph tables and their guards.

Every graph table holds versions of a stable key. The database itself refuses DELETE (and
TRUNCATE on PostgreSQL) and any UPDATE other than closing an open version once (``expired_at`` or
``invalid_at`` from NULL to a value); at most one version per key is current.

This file is frozen: it does not import the application's schema (the versioned-table DDL it
shares with later revisions is in ``migrations/versioned.py``, frozen alike), so later changes to the models
cannot silently change what this revision did. ``tests/test_migrations.py`` checks that the
models and the migrated database agree.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from migrations.versioned import JSON, TS, create_guarded, drop_guarded

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RELATIONS = ("prerequisite", "builds_on", "part_of", "related", "contrasts_with")


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


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    spec = _spec()
    if dialect == "postgresql":
        for fn in PG_FUNCTIONS:
            op.execute(fn)
    for name, (key, columns, checks) in spec.items():
        create_guarded(name, key, columns, checks)
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
        drop_guarded(name)
    if dialect == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS kg_close_only()")
        op.execute("DROP FUNCTION IF EXISTS kg_forbid_delete()")
