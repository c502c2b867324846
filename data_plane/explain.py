"""The engine's query plan for a built statement, for docs, benchmarks and the plan tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.sql import Executable

__all__ = ["explain"]


def explain(engine: Engine, stmt: Executable, params: Mapping[str, Any]) -> list[str]:
    """``EXPLAIN QUERY PLAN`` (SQLite) or ``EXPLAIN`` (PostgreSQL) of ``stmt`` with ``params``,
    one line per plan row."""
    with engine.connect() as conn:
        prefix = "EXPLAIN QUERY PLAN " if conn.dialect.name == "sqlite" else "EXPLAIN "

        def _explain(_c: Any, _cur: Any, statement: str, params: Any, _ctx: Any, _many: bool) -> Any:
            return prefix + statement, params

        # Let SQLAlchemy compile and bind exactly as the real read does; only the verb changes.
        event.listen(conn, "before_cursor_execute", _explain, retval=True)
        try:
            rows = conn.execute(stmt, dict(params))
            return [" ".join(str(c) for c in row) for row in rows.cursor.fetchall()]
        finally:
            event.remove(conn, "before_cursor_execute", _explain)
