"""`kg` checks its arguments before a command runs: text no database stores is refused by every
command alike, scores are numbers, and names and ids are ones the graph can hold and address."""

from __future__ import annotations

import pytest
from kg_cli import GROUNDED, assert_one_line_error, kg, ok


@pytest.mark.parametrize(
    "args",
    [
        ["concept", "search", "\udcff"],
        ["concept", "show", "\udcff"],
        ["concept", "list", "--as-of", "2025\udcff"],
        ["ask", "what is \udcffrag?"],
        ["audit", "history", "rag\x00"],
    ],
)
def test_text_no_database_stores_is_refused_by_every_command(db: str, args: list[str]) -> None:
    """An argument holding a lone surrogate (what undecodable argv bytes become) or a NUL ends any
    command with one error line naming the argument, whether or not it would reach a database
    (`kg concept search` would not)."""
    result = kg(db, *args)
    assert result.exit_code == 1
    assert_one_line_error(result, "UTF-8" if "\udcff" in "".join(args) else "NUL")


def test_a_score_that_is_not_a_number_is_a_usage_error(db: str) -> None:
    """`--min-score nan` is a usage error saying what a score is, not a comparison with 100."""
    result = kg(db, "concept", "search", "rag", "--min-score", "nan")
    assert result.exit_code == 2
    assert "must be a number from 0 to 100, got nan" in result.stderr


def test_a_name_with_white_space_around_it_is_refused_even_when_duplicates_are_allowed(db: str) -> None:
    """`--allow-duplicate-name` allows a name another concept has, not one with trailing spaces."""
    result = kg(db, "concept", "add", "rag2", "--name", "RAG  ", "--allow-duplicate-name", *GROUNDED)
    assert_one_line_error(result, "white space around it")
    ok(db, "concept", "add", "rag2", "--name", "RAG", "--allow-duplicate-name", *GROUNDED)


def test_an_id_an_edge_key_could_not_address_is_refused(db: str) -> None:
    """A concept id holding ``>`` is refused, naming the character."""
    assert_one_line_error(
        kg(db, "concept", "add", "a>b", "--name", "A b", *GROUNDED), "holds '>', which no id may hold"
    )
