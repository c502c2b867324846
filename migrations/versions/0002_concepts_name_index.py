"""Index concepts by name: question parsing resolves concept names and aliases to ids.

Reversible and data-preserving: upgrade adds ``ix_concepts_name``, downgrade drops it; no row is
touched either way (``tests/test_migrations_with_data.py`` checks that byte for byte).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_concepts_name", "concepts", ["name"])


def downgrade() -> None:
    op.drop_index("ix_concepts_name", table_name="concepts")
