"""Shared rate limits and answer reuse: two operational tables, no graph table touched.

``rate_limits`` holds the per-client /ask limit and the server-wide model-call budget in the
database, so every worker process (and every host) serving one database enforces one limit.
``answer_reuse`` says which recorded answer a repeated question may reuse and what that answer
read. Neither is graph history: they carry no grounding and are not versioned (docs/serving.md).

Reversible and data-preserving for the graph: downgrade drops only these two tables.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "rate_limits",
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("tat", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_rate_limits"),
    )
    op.create_index("ix_rate_limits_tat", "rate_limits", ["tat"])
    op.create_table(
        "answer_reuse",
        sa.Column("answer_id", sa.String(64), nullable=False),
        sa.Column("reuse_key", sa.String(64), nullable=False),
        sa.Column("valid_at", TS, nullable=False),
        sa.Column("recorded_at", TS, nullable=False),
        sa.Column("seen", JSON, nullable=False),
        sa.Column("reads", JSON, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("answer_id", name="pk_answer_reuse"),
    )
    op.create_index("ix_answer_reuse_key_created", "answer_reuse", ["reuse_key", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_answer_reuse_key_created", table_name="answer_reuse")
    op.drop_table("answer_reuse")
    op.drop_index("ix_rate_limits_tat", table_name="rate_limits")
    op.drop_table("rate_limits")
