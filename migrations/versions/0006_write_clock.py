"""The write clock: the recorded time of the latest committed graph write, in one row.

A graph write takes the write lock, then stamps its rows with a time strictly after this row's
and sets the row to it, in its own transaction; a read "as known at T" reads at most this row's
time. So no read sees a state that a later commit changes (docs/data-plane.md, "Recorded time").
Operational state, not graph history: one row, updated in place, never versioned.

The row starts at the latest ``recorded_at`` or ``expired_at`` any graph table already holds (none
on an empty database). Downgrade drops the table; no graph row changes either way.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

GRAPH_TABLES = (
    "concepts",
    "concept_edges",
    "lessons",
    "lesson_concepts",
    "requirement_groups",
    "requirement_members",
)


def upgrade() -> None:
    op.create_table(
        "write_clock",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("id = 1", name=op.f("ck_write_clock_one_row")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_write_clock")),
    )
    stamps = sa.union_all(
        *(
            sa.select(sa.func.max(sa.column(col)).label("t")).select_from(sa.table(name, sa.column(col)))
            for name in GRAPH_TABLES
            for col in ("recorded_at", "expired_at")
        )
    ).subquery()
    latest = op.get_bind().execute(sa.select(sa.func.max(stamps.c.t))).scalar()
    if latest is not None:
        # Copied as the database stores it (timestamptz, or SQLite's fixed-width UTC text).
        op.get_bind().execute(
            sa.text("INSERT INTO write_clock (id, recorded_at) VALUES (1, :t)"), {"t": latest}
        )


def downgrade() -> None:
    op.drop_table("write_clock")
