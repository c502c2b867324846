"""`kg` errors say what to do: one `error:` line that names the problem and the next step."""

from __future__ import annotations

import getpass
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_deepseek import closed_port
from kg_cli import GROUNDED, assert_one_line_error, kg, ok
from typer.testing import CliRunner

from control_plane.surfaces.cli import app
from control_plane.surfaces.cli.serve import port_problem

ENV = {"KG_SYNTHESIZER": "offline", "DEEPSEEK_API_KEY": "", "KG_DATABASE_URL": ""}


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port something is listening on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


def test_serve_on_a_port_in_use_is_one_error_line_and_exit_1(initialised: str, taken_port: int) -> None:
    """`kg serve --port P` with P taken: one `error:` line saying so and what to do, exit 1, and
    never "serving on" (another server answering there must not pass for this one)."""
    result = kg(initialised, "serve", "--port", str(taken_port))
    assert result.exit_code == 1 and "serving on" not in result.output
    assert_one_line_error(result, f"port {taken_port} on 127.0.0.1 is in use")
    assert "--port" in result.stderr


def test_a_free_port_has_no_problem() -> None:
    """The port check passes a port nothing listens on, and names an address this host lacks."""
    assert port_problem("127.0.0.1", closed_port()) is None
    assert "cannot listen on 192.0.2.1" in str(port_problem("192.0.2.1", closed_port()))


@pytest.mark.parametrize("path", ["scratch.sqlite3", "data/kg.db"])
def test_a_plain_path_for_db_says_to_write_a_sqlite_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    """`--db scratch.sqlite3` is refused with the URL to write instead, and creates no file."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["--db", path, "concept", "list"], env=ENV)
    assert_one_line_error(result, f"use sqlite:///{path}")
    assert "kg init" not in result.stderr and list(tmp_path.iterdir()) == []


def test_a_refused_postgres_connection_says_it_cannot_reach_the_server() -> None:
    """A PostgreSQL server nobody listens on: "cannot reach the database", no `kg init` hint."""
    url = f"postgresql+psycopg://kg@127.0.0.1:{closed_port()}/kg?connect_timeout=2"
    result = CliRunner().invoke(app, ["--db", url, "concept", "list"], env=ENV)
    assert_one_line_error(result, "cannot reach the database")
    assert "refused" in result.stderr.lower() and "kg init" not in result.stderr


def test_a_database_without_the_schema_still_points_to_kg_init(tmp_path: Path) -> None:
    """A SQLite file with no kg tables: the error points to `kg init`."""
    import sqlite3

    path = tmp_path / "other.sqlite3"
    sqlite3.connect(path).execute("CREATE TABLE unrelated (x)").connection.commit()
    result = CliRunner().invoke(app, ["--db", f"sqlite:///{path}", "concept", "list"], env=ENV)
    assert_one_line_error(result, "(has `kg init` been run?)")


@pytest.mark.parametrize(
    "args",
    [
        ["concept", "show", "embedings"],
        ["concept", "revise", "embedings", *GROUNDED],
        ["concept", "invalidate", "embedings", *GROUNDED],
        ["edge", "add", "rag>builds_on>embedings", *GROUNDED],
        ["edge", "invalidate", "rag>builds_on>embedings", *GROUNDED],
        ["lesson", "link", "L1", "embedings", *GROUNDED],
        ["audit", "history", "embedings"],
        ["audit", "history", "rag>builds_on>embedings"],
    ],
)
def test_a_misspelt_concept_id_gets_the_near_ones(initialised: str, args: list[str]) -> None:
    """Every command that takes a concept id answers a misspelt one with the concepts near it, as
    `kg ask` offers them, and the command that searches by name."""
    result = kg(initialised, *args)
    assert_one_line_error(result, "did you mean embeddings (Embeddings)?")
    assert "`kg concept search embedings`" in result.stderr


def test_each_unknown_id_of_an_edge_is_named(initialised: str) -> None:
    """An edge with two unknown ends: each is named with what is near it (or that nothing is)."""
    result = kg(initialised, "edge", "add", "zzqx>builds_on>embedings", *GROUNDED)
    assert_one_line_error(result, "'zzqx': no concept's name is near it; 'embedings': did you mean")


def test_a_known_id_gets_no_suggestion(db: str) -> None:
    """A refusal about a concept that exists (an edge that does not) suggests nothing."""
    result = kg(db, "edge", "invalidate", "rag>related>embeddings", *GROUNDED)
    assert_one_line_error(result, "does not exist")
    assert "did you mean" not in result.stderr


def test_without_user_the_source_is_the_login_name(db: str) -> None:
    """With $USER and $LOGNAME unset, a write's default source is the account's login name, not
    "cli:unknown"."""
    env = {"USER": None, "LOGNAME": None, "LNAME": None, "USERNAME": None}
    result = CliRunner().invoke(
        app, ["--db", db, "concept", "revise", "rag", "--summary", "s", *GROUNDED], env={**ENV, **env}
    )
    assert result.exit_code == 0, result.output
    history = json.loads(ok(db, "audit", "history", "rag", "--format", "json").stdout)
    assert history[-1]["grounding"]["source"] == f"cli:{getpass.getuser()}" != "cli:unknown"
