"""`kg --help` and usage errors start fast: they load neither SQLAlchemy, LlamaIndex, the question
reader, the planner nor structlog (only Typer and what prints help)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = (
    "sqlalchemy",
    "llama_index",
    "fastapi",
    "structlog",
    "control_plane.understanding",
    "control_plane.planning",
    "data_plane.reads",
    "data_plane.gateway",
)
_DATA = ["data_plane.gateway", "data_plane.reads"]
PROBE = """
import json, sys
from control_plane.surfaces.cli import app
try:
    app(sys.argv[2:], prog_name="kg")
    code = 0
except SystemExit as exc:
    code = exc.code
heavy = json.loads(sys.argv[1])
loaded = sorted(h for h in heavy if any(m == h or m.startswith(h + ".") for m in sys.modules))
print(json.dumps({"code": code, "loaded": loaded}), file=sys.stderr)
"""


def run_kg(*argv: str, log_level: str = "") -> tuple[int, list[str]]:
    """Run `kg ARGV` in a fresh interpreter: its exit code, and which heavy modules it loaded."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "KG_DATABASE_URL": "",
        "COLUMNS": "100",
        "KG_SYNTHESIZER": "offline",
        "KG_LOG_LEVEL": log_level,
    }
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(HEAVY), *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    return report["code"], report["loaded"]


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["concept", "add", "--help"],
        ["import", "--help"],
        ["audit", "--help"],
    ],
)
def test_help_loads_nothing_heavy(argv: list[str]) -> None:
    """Help, at any level, and the version are printed without loading the database layer, the
    reader or the model."""
    code, loaded = run_kg(*argv)
    assert code == 0 and loaded == []


@pytest.mark.parametrize(
    "argv",
    [
        ["ask"],
        ["edge", "add", "a>prerequisite>b"],
        ["import", "--max-problems", "0", "bundle"],
        ["concept", "add", "x", "--bogus"],
    ],
)
def test_usage_errors_load_nothing_heavy(argv: list[str]) -> None:
    """A usage error (missing argument, bad value, unknown option) exits 2 before anything heavy loads."""
    code, loaded = run_kg(*argv)
    assert code == 2 and loaded == []


def test_a_command_that_reads_the_graph_does_load_the_database_layer(tmp_path: Path) -> None:
    """The probe is not vacuous: a command that runs loads SQLAlchemy, and structlog when it
    writes an event (``KG_LOG_LEVEL=info``: the migration's)."""
    url = f"sqlite:///{tmp_path}/kg.sqlite3"
    code, loaded = run_kg("--db", url, "init", "--no-curriculum", log_level="info")
    assert code == 0 and {"sqlalchemy", "structlog"} <= set(loaded)


def test_an_offline_ask_writing_no_event_never_loads_structlog(tmp_path: Path) -> None:
    """`kg ask` on an existing database at the default level (warnings) writes no event, so it
    loads neither structlog (with rich's pretty-printer) nor LlamaIndex nor the HTTP app."""
    url = f"sqlite:///{tmp_path}/kg.sqlite3"
    assert run_kg("--db", url, "init")[0] == 0
    code, loaded = run_kg("--db", url, "ask", "What does RAG build on?")
    assert code == 0 and loaded == [
        "control_plane.planning",
        "control_plane.understanding",
        *_DATA,
        "sqlalchemy",
    ]


def test_an_offline_ask_and_search_never_load_llama_index(tmp_path: Path) -> None:
    """`kg ask` (offline, on a fresh database) and `kg concept search` run without LlamaIndex's 2-3 s import."""
    url = f"sqlite:///{tmp_path}/kg.sqlite3"
    code, loaded = run_kg("--db", url, "ask", "What does RAG build on?")
    assert code == 0 and "sqlalchemy" in loaded and "llama_index" not in loaded
    code, loaded = run_kg("--db", url, "concept", "search", "retrieval augmented")
    assert code == 0 and "llama_index" not in loaded
