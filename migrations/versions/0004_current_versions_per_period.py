"""A key may hold over several valid periods as now known: one current version per period.

A write that covers a portion of valid time keeps, as versions of their own, the parts of the
superseded versions' periods it does not cover (docs/data-plane.md, "Operations"), so a key can
have several current versions (``expired_at IS NULL``), one per period. The partial unique index
``uq_<table>_current`` now allows one current version per key *and valid start* (the gateway keeps
the periods apart). No row changes.

Downgrade restores the one-current-version-per-key index; it fails (and changes nothing) on a
database where some key already holds over several periods.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEYS: dict[str, tuple[str, ...]] = {
    "concepts": ("concept_id",),
    "concept_edges": ("source_id", "target_id", "relation"),
    "lessons": ("lesson_id",),
    "lesson_concepts": ("lesson_id", "concept_id"),
    "answers": ("answer_id",),
}


def _current_index(name: str, columns: list[str]) -> None:
    where = sa.text("expired_at IS NULL")
    op.drop_index(f"uq_{name}_current", table_name=name)
    op.create_index(
        f"uq_{name}_current", name, columns, unique=True, sqlite_where=where, postgresql_where=where
    )


def upgrade() -> None:
    for name, key in KEYS.items():
        _current_index(name, [*key, "valid_at"])


def downgrade() -> None:
    for name, key in KEYS.items():
        _current_index(name, list(key))
