"""`kg` for scripts: every command that prints takes `--format json`, errors under it are one JSON
object with the message and the exit code, an abstention carries its text, and shell completion
comes from Typer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from kg_cli import GROUNDED, assert_json_error, ok
from typer.testing import CliRunner

from control_plane.surfaces.cli import app

# `kg serve` and `kg mcp` run servers: what `kg serve` prints is its log (JSON lines already), and
# `kg mcp` speaks the MCP protocol (JSON-RPC) on stdout, not a result.
NOT_A_RESULT = {"kg serve", "kg mcp"}


def _commands() -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []

    def walk(command: Any, path: str) -> None:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, f"{path} {name}")
        else:
            found.append((path, command))

    walk(typer.main.get_command(app), "kg")
    return found


@pytest.mark.parametrize(("path", "command"), _commands(), ids=[p for p, _ in _commands()])
def test_every_command_that_prints_takes_format_json(path: str, command: Any) -> None:
    """Each command (but `kg serve`) has a `--format` option that offers json."""
    if path in NOT_A_RESULT:
        pytest.skip("a server: it prints its log, not a result")
    assert any("--format" in p.opts for p in command.params), f"{path} has no --format"
    shown = CliRunner().invoke(app, [*path.split()[1:], "--help"], prog_name="kg", terminal_width=200)
    line = next(line for line in shown.stdout.splitlines() if "--format" in line)
    assert "json" in line, line


def _json(result: Any) -> Any:
    return json.loads(result.stdout)


def test_writes_print_what_they_wrote_as_json(db: str) -> None:
    """A curation write under --format json prints {"written": [versions]}, as the HTTP API answers;
    a dry run adds the answers it would change."""
    added = _json(ok(db, "concept", "add", "colbert", "--name", "ColBERT", *GROUNDED, "--format", "json"))
    assert [v["key"] for v in added["written"]] == [["colbert"]] or added["written"][0]["table"] == "concepts"
    edge = ["colbert>builds_on>embeddings", *GROUNDED]
    rehearsed = _json(ok(db, "edge", "add", *edge, "--dry-run", "--format", "json"))
    assert rehearsed["dry_run"] is True and rehearsed["written"] and "answers" in rehearsed
    linked = _json(ok(db, "lesson", "link", "L99", "colbert", *GROUNDED, "--format", "json"))
    assert linked["written"][0]["table"] == "lesson_concepts"


def test_tokens_doctor_and_init_print_json(db: str) -> None:
    """`kg token create/list/revoke`, `kg doctor` and `kg init` print objects a program reads."""
    made = _json(ok(db, "token", "create", "ci-bot", "--scope", "write", "--format", "json"))
    assert made["name"] == "ci-bot" and made["secret"].startswith("kg_")
    listed = _json(ok(db, "token", "list", "--format", "json"))
    assert [t["token_id"] for t in listed] == [made["token_id"]] and "secret" not in listed[0]
    revoked = _json(ok(db, "token", "revoke", made["token_id"], "--format", "json"))
    assert revoked["revoked_at"] is not None
    doctor = _json(ok(db, "doctor", "--format", "json"))
    assert doctor["ok"] is True and {"database", "schema", "side file"} <= {
        c["name"] for c in doctor["checks"]
    }
    init = _json(ok(db, "init", "--format", "json"))
    assert init["migrated"] is False and init["revision_after"]


def test_an_error_under_format_json_is_a_json_object(db: str) -> None:
    """Under --format json an error is one JSON line on stderr with the message and exit code:
    a concept that does not exist (1) and a usage error (2) alike."""
    from kg_cli import kg

    assert_json_error(kg(db, "concept", "show", "nosuch", "--format", "json"), "no active concept 'nosuch'")
    assert_json_error(kg(db, "concept", "show", "--format", "json"), "Missing argument", code=2)
    assert_json_error(kg(db, "audit", "history", "nosuch", "--format=json"), "nosuch")


def test_an_abstention_under_format_json_carries_its_text(db: str) -> None:
    """An abstention's `text` is what the text format says, its reason kept in `abstain_reason`."""
    answer = _json(ok(db, "ask", "What does quantum gravity build on?", "--format", "json"))
    assert answer["abstained"] is True
    assert answer["text"] == f"Abstained: {answer['abstain_reason']}"


def test_replay_prints_json_by_default_and_a_line_as_text(db: str) -> None:
    """`kg audit replay` prints its report as JSON (default) or one line."""
    answer = _json(ok(db, "ask", "What does RAG build on?", "--format", "json"))
    report = _json(ok(db, "audit", "replay", answer["answer_id"]))
    assert report["reproduced"] is True
    line = ok(db, "audit", "replay", answer["answer_id"], "--format", "text").stdout
    assert (
        line.strip()
        == f"answer {answer['answer_id']}: reproduced as it was known; asked now, the same answer"
    )


def test_shell_completion_is_typers(tmp_path: Path) -> None:
    """`kg --install-completion` is offered, and the script it installs (what the shell asks
    for with _KG_COMPLETE=source_bash) is Typer's completion for kg."""
    assert "--install-completion" in CliRunner().invoke(app, ["--help"], prog_name="kg").stdout
    result = CliRunner().invoke(app, [], prog_name="kg", env={"_KG_COMPLETE": "source_bash"})
    assert result.exit_code == 0, result.output
    assert "_kg_completion" in result.stdout and "complete" in result.stdout
