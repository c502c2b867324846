"""The one-line messages every surface gives for a failure, so that the command line's ``error:``
line and an MCP tool error say the same thing.

A ``KGError``'s message is written to be acted on; :func:`first_line` keeps its first line.
:func:`database_error` turns a database error into one line: a missing schema points to ``kg
init``, a database that cannot be reached says so. (The did-you-mean for a concept id that names
no concept is ``lookup.hinted``.) This module imports nothing heavy: SQLAlchemy is imported by
:func:`database_error` when it is given one of its errors.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["abstention_said", "database_error", "first_line"]

# What SQLite and PostgreSQL say when the schema is not there: the one case `kg init` mends.
_NO_SCHEMA: Final = re.compile(r"no such table|relation .* does not exist")


def abstention_said(answer: Mapping[str, Any]) -> Mapping[str, Any]:
    """The answer object as ``kg ask --format json`` and the MCP ``ask`` tool give it: an
    abstention's ``text`` is what the text format says ("Abstained: REASON"; the recorded
    ``answer/1`` keeps "" there, and the reason in ``abstain_reason``), so a script or an agent
    reads ``.text`` for every outcome."""
    if answer.get("abstained") and not answer.get("text"):
        return {**answer, "text": f"Abstained: {answer.get('abstain_reason')}"}
    return answer


def first_line(message: str, default: str = "failed") -> str:
    """The first line of ``message`` (``default`` when it is blank)."""
    text = message.strip()
    return text.splitlines()[0] if text else default


def database_error(exc: Exception) -> str:
    """One line for a database error: a missing schema points to ``kg init``, a database that
    cannot be reached says so (and what to check), anything else is named as it is."""
    from sqlalchemy.exc import OperationalError, ProgrammingError

    first = first_line(str(getattr(exc, "orig", exc)), type(exc).__name__)
    if isinstance(exc, OperationalError | ProgrammingError) and _NO_SCHEMA.search(first):
        return f"database error: {first} (has `kg init` been run?)"
    if isinstance(exc, OperationalError):
        return f"cannot reach the database: {first} (is the server running, and is the URL right?)"
    return f"database error: {first}"
