"""`kg ask` reuses a recorded answer to the same question unless --fresh, and when the model stays
unavailable answers offline, says so, and exits 3."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from fake_deepseek import closed_port
from typer.testing import CliRunner

from control_plane.surfaces.cli import app
from control_plane.surfaces.cli.shell import EXIT_MODEL_UNAVAILABLE

QUESTION = "What does RAG build on?"
ENV = {"KG_SYNTHESIZER": "offline", "DEEPSEEK_API_KEY": "", "KG_DATABASE_URL": "", "COLUMNS": "200"}


@pytest.fixture(autouse=True)
def _reset_logging() -> Iterator[None]:
    yield
    structlog.reset_defaults()


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path}/kg.sqlite3"
    assert CliRunner().invoke(app, ["--db", url, "init"], env=ENV).exit_code == 0
    return url


def _ask(db: str, *args: str, env: dict[str, str] = ENV) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--db", db, "ask", QUESTION, *args], env=env)
    return result.exit_code, result.output


def test_a_repeated_question_is_reused_and_fresh_asks_again(db: str) -> None:
    """The second `kg ask` says which answer it reused (no model call); --fresh does not reuse."""
    code, first = _ask(db, "--format", "json")
    assert code == 0
    first_id = json.loads(first)["answer_id"]
    code, text = _ask(db)
    assert code == 0 and f"reused from {first_id}" in text and "no model calls" in text
    code, again = _ask(db, "--fresh", "--format", "json")
    assert code == 0 and json.loads(again)["reused_from"] is None and json.loads(again)["syntheses"] >= 1


def test_a_model_outage_answers_offline_says_so_and_exits_3(db: str) -> None:
    """With the model gateway unreachable, `kg ask` answers from the graph offline, says in one
    line that it answered offline and why (the abstention recorded), and exits 3 (not 0)."""
    env = {
        **ENV,
        "KG_SYNTHESIZER": "deepseek",
        "DEEPSEEK_API_KEY": "sk-test",
        "KG_LLM_BASE_URL": f"http://127.0.0.1:{closed_port()}",
        "KG_LLM_MAX_RETRIES": "0",
        "KG_LLM_TIMEOUT_S": "5",
    }
    result = CliRunner().invoke(app, ["--db", db, "ask", QUESTION, "--fresh"], env=env)
    assert result.exit_code == EXIT_MODEL_UNAVAILABLE == 3
    assert result.stdout.startswith("Answer: Retrieval-augmented generation builds on")
    assert "synthesizer offline" in result.stdout
    said = [line for line in result.stderr.splitlines() if line.startswith("answered offline")]
    assert len(said) == 1 and "the model is unavailable" in said[0] and "recorded as answer" in said[0]
    code, _ = _ask(db)  # the offline synthesizer answers; an ordinary answer exits 0
    assert code == 0
