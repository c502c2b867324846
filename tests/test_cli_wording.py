"""What `kg` says, read at an ordinary terminal: whole timestamps at 80 columns, the valid time an
answer was asked about, what an option defaults to, and a long id said once."""

from __future__ import annotations

import re

from kg_cli import GROUNDED, kg, ok

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


def test_history_at_80_columns_shows_every_timestamp_whole(db: str) -> None:
    """`kg audit history` at 80 columns prints each version's four stamps whole (a table that
    narrow would cut them), and every line of it fits when the reason does."""
    ok(db, "concept", "revise", "rag", "--summary", "Retrieval, then generation.", *GROUNDED)
    out = ok(db, "audit", "history", "rag", env={"COLUMNS": "80"}).stdout
    assert "…" not in out
    versions = [line for line in out.splitlines() if line.startswith("version ")]
    assert len(versions) >= 2
    stamps = STAMP.findall(out)
    assert len(re.findall(r"(?m)^  (valid|recorded) ", out)) == 2 * len(versions)
    assert len(stamps) >= 3 * len(versions) - 1  # valid, recorded from, recorded until (one current)


def test_the_read_as_line_says_the_valid_time_asked_about(db: str) -> None:
    """`kg ask ... --as-of 2024-06-01` says "as of 2024-06-01" on its read-as line; without
    --as-of nothing is added."""
    asked = ok(db, "ask", "What does RAG build on?", "--as-of", "2024-06-01").stdout
    line = next(line for line in asked.splitlines() if line.startswith("read as:"))
    assert line.endswith(", as of 2024-06-01"), line
    now = ok(db, "ask", "What does RAG build on?").stdout
    assert "as of" not in next(line for line in now.splitlines() if line.startswith("read as:"))


def test_revise_help_says_what_valid_at_defaults_to(db: str) -> None:
    """`kg concept revise --help` and `kg edge revise --help` say a revision covers all of the
    validity by default, not "now" (an assertion's default)."""
    for group in ("concept", "edge"):
        shown = " ".join(ok(db, group, "revise", "--help", env={"COLUMNS": "200"}).stdout.split())
        assert (
            "--valid-at <str> Start of the revised period (ISO 8601). Default: all of its validity" in shown
        )
    added = " ".join(ok(db, "concept", "add", "--help", env={"COLUMNS": "200"}).stdout.split())
    assert "--valid-at <str> True from (ISO 8601). Default: now." in added


def test_a_long_unknown_id_is_said_once(db: str) -> None:
    """A 5,000-character id that names no concept appears once in the error, not again in the
    hint that says where to search."""
    long_id = "x" * 5000
    for args in (("concept", "show", long_id), ("audit", "history", long_id)):
        result = kg(db, *args)
        assert result.exit_code == 1
        assert result.stderr.count(long_id) == 1 and len(result.stderr) < 5300, len(result.stderr)
        assert "`kg concept search WORDS` finds concepts by name" in result.stderr
