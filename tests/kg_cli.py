"""Running `kg` in-process for tests: the environment, one-line error checks, and SQLite copies."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import Result
from typer.testing import CliRunner

from control_plane.surfaces.cli import app

ENV = {"KG_SYNTHESIZER": "offline", "DEEPSEEK_API_KEY": "", "KG_DATABASE_URL": "", "COLUMNS": "200"}
GROUNDED = ["--reason", "a CLI test", "--evidence", '{"test": "cli"}']


def kg(url: str, *args: str, env: dict[str, str] | None = None) -> Result:
    """`kg --db URL ARGS...`, offline, with stdout and stderr kept apart."""
    return CliRunner().invoke(app, ["--db", url, *args], env={**ENV, **(env or {})})


def ok(url: str, *args: str, env: dict[str, str] | None = None) -> Result:
    """`kg --db URL ARGS...`, which must succeed."""
    result = kg(url, *args, env=env)
    assert result.exit_code == 0, result.output
    return result


def assert_json_error(result: Result, needle: str, code: int = 1) -> None:
    """The command failed (exit ``code``) with exactly one line on stderr: the JSON object
    ``{"error": ..., "exit_code": code}``, its error containing ``needle``."""
    assert result.exit_code == code, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert json.loads(lines[0]) == {"error": json.loads(lines[0])["error"], "exit_code": code}
    assert needle in json.loads(lines[0])["error"]


def assert_one_line_error(result: Result, needle: str) -> None:
    """The command failed with exactly one `error: ...` line on stderr containing ``needle``."""
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert needle in lines[0]


def initialised_sqlite(folder: Path) -> str:
    """A SQLite database in ``folder`` initialised with the bundled curriculum."""
    url = f"sqlite:///{folder}/kg.sqlite3"
    ok(url, "init")
    return url


def copy_sqlite(url: str, folder: Path) -> str:
    """A private copy of the SQLite database at ``url`` in ``folder``, for tests that write."""
    src = Path(url.removeprefix("sqlite:///"))
    dst = folder / "kg.sqlite3"
    for suffix in ("", "-wal", "-shm"):  # WAL mode: recent pages may live in the -wal file
        if Path(f"{src}{suffix}").exists():
            Path(f"{dst}{suffix}").write_bytes(Path(f"{src}{suffix}").read_bytes())
    return f"sqlite:///{dst}"
