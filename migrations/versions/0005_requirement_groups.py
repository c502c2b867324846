"""Requirements with alternatives: ``requirement_groups`` and ``requirement_members``.

A group says its target concept needs ``needs`` (k >= 1) of its options; a member row puts one
concept into one option (an option is a set of concepts that are all needed). Both are versioned
graph tables like the others (grounding, four stamps, ``op``, ``supersedes_id``, the guard
triggers; one current version per key and valid start), created with the frozen DDL of
``migrations/versioned.py``. No existing row changes.

Downgrade drops both tables only while they are empty: a downgrade never deletes graph history,
so on a database holding groups it fails and changes nothing (export the graph first).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from migrations.versioned import create_guarded, drop_guarded

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("requirement_groups", "requirement_members")


def upgrade() -> None:
    create_guarded(
        "requirement_groups",
        ("group_id",),
        [
            sa.Column("group_id", sa.String(200), nullable=False),
            sa.Column("target_id", sa.String(200), nullable=False),
            sa.Column("needs", sa.Integer(), nullable=False),
        ],
        [("length(group_id) > 0", "group_id_nonempty"), ("needs >= 1", "needs_positive")],
        current=("group_id", "valid_at"),
    )
    op.create_index(
        "ix_requirement_groups_target_recorded", "requirement_groups", ["target_id", "recorded_at"]
    )
    create_guarded(
        "requirement_members",
        ("group_id", "option", "concept_id"),
        [
            sa.Column("group_id", sa.String(200), nullable=False),
            sa.Column("option", sa.String(8), nullable=False),
            sa.Column("concept_id", sa.String(200), nullable=False),
        ],
        [],
        current=("group_id", "option", "concept_id", "valid_at"),
    )
    op.create_index(
        "ix_requirement_members_concept_recorded", "requirement_members", ["concept_id", "recorded_at"]
    )


def downgrade() -> None:
    bind = op.get_bind()
    for name in TABLES:
        if bind.execute(sa.text(f"SELECT 1 FROM {name} LIMIT 1")).first() is not None:
            raise RuntimeError(
                f"{name} holds requirement history; a downgrade below 0005 would delete it, so it "
                "is refused (export the graph first: kg export DIR)"
            )
    op.drop_index("ix_requirement_members_concept_recorded", table_name="requirement_members")
    drop_guarded("requirement_members")
    op.drop_index("ix_requirement_groups_target_recorded", table_name="requirement_groups")
    drop_guarded("requirement_groups")
