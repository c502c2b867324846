"""The `kg` help and output read cleanly: every flag and option explained once, usage lines as Unix
tools write them, text where text is asked for, quiet exits into a closed pipe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from kg_cli import ENV, copy_sqlite, kg, ok
from typer.testing import CliRunner

from control_plane.surfaces.cli import app

ROOT = Path(__file__).resolve().parents[1]


def _commands(group: Any = None, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    group = group or typer.main.get_command(app)
    yield path, group
    for name, command in getattr(group, "commands", {}).items():
        yield from _commands(command, (*path, name))


COMMANDS = [path for path, _ in _commands()]


def _help(path: tuple[str, ...]) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], env={**ENV, "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "kg")
def test_flags_show_no_value_type(path: tuple[str, ...]) -> None:
    """A flag is shown as `--check`, never `--check <bool>` (it takes no value)."""
    assert "<bool>" not in _help(path)


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "kg")
def test_usage_lines_name_arguments_in_capitals(path: tuple[str, ...]) -> None:
    """Usage lines write arguments as QUESTION or [BUNDLE], not {question}."""
    usage = _help(path).splitlines()[0]
    assert "{" not in usage and "}" not in usage
    after = usage.split("[OPTIONS]", 1)[1]
    assert after == after.upper()


@pytest.mark.parametrize(("path", "command"), list(_commands()), ids=lambda p: str(p))
def test_every_option_is_explained_once(path: tuple[str, ...], command: Any) -> None:
    """Every option has help text, and none says it is required twice."""
    for param in command.params:
        if param.param_type_name != "option" or param.name == "help":
            continue
        assert (param.help or "").strip(), f"kg {' '.join(path)} {param.opts[0]} has no help"
        assert "required" not in (param.help or "").lower(), f"{param.opts[0]}: '[required]' says it already"


def test_import_and_export_print_text_unless_asked_for_json(initialised: str, tmp_path: Path) -> None:
    """`kg export` and `kg import` print a summary for people; --format json prints the report."""
    db = copy_sqlite(initialised, tmp_path)
    out = ok(db, "export", str(tmp_path / "bundle")).stdout
    assert out.startswith("exported ") and " concepts, " in out and "{" not in out
    exported = json.loads(ok(db, "export", str(tmp_path / "again"), "--format", "json").stdout)
    assert exported["concepts"] > 200
    text = ok(db, "import", str(tmp_path / "bundle")).stdout
    assert text.startswith("imported bundle 'kg-export': 0 new versions") and "  concepts: " in text
    assert (
        json.loads(ok(db, "import", str(tmp_path / "bundle"), "--format", "json").stdout)["new_versions"] == 0
    )


def test_an_offline_answer_reports_no_model_calls_in_every_format(initialised: str) -> None:
    """The offline synthesizer calls no model: the text, the JSON and the page all say 0, and the
    JSON counts its synthesis steps apart."""
    question = "What does RAG build on?"
    out = ok(initialised, "ask", question, "--fresh").stdout
    line = next(x for x in out.splitlines() if x.startswith("confidence "))
    assert "no model calls" in line and "synthesizer offline" in line
    answer = json.loads(ok(initialised, "ask", question, "--fresh", "--format", "json").stdout)
    assert answer["llm_calls"] == 0 and answer["syntheses"] == len(answer["rounds"]) == 1
    assert all(r["llm_calls"] == 0 for r in answer["rounds"])
    page = ok(initialised, "ask", question, "--fresh", "--format", "html").stdout
    assert "no model calls" in page and "LLM calls" not in page


def test_eval_summary_says_n_a_for_ratios_with_nothing_to_count(tmp_path: Path) -> None:
    """A system that abstained nowhere has no abstention precision: `n/a`, not `None`."""
    from evals.runner import summary_lines

    scores = {
        "f1": 0.91234,
        "exact_match": 0.5,
        "abstention_precision": None,
        "abstention_recall": None,
        "citation_coverage": None,
    }
    report = {
        "summary": {"overall": {"loop": {**scores, "mean_llm_calls": 0.0, "mean_syntheses": 1.0}}},
        "meta": {"systems": ["loop"], "plots": []},
    }
    (line, _) = summary_lines(report, tmp_path)
    assert "abstain P/R n/a/n/a" in line and "None" not in line and "F1 0.912" in line
    assert "citation coverage n/a" in line and "model calls 0.00  syntheses 1.00" in line


def test_kg_version_prints_the_installed_version() -> None:
    """`kg --version` prints the distribution's version and exits 0, running no command."""
    from importlib.metadata import version

    result = CliRunner().invoke(app, ["--version"], env=ENV)
    assert result.exit_code == 0 and result.stdout == f"kg (curriculum-kg) {version('curriculum-kg')}\n"


def test_counts_of_one_are_singular(tmp_path: Path) -> None:
    """Counts read as English: "1 concept", "1 edge", "1 lesson link", "2 edges"."""
    from control_plane.surfaces.wording import calls_text, counted

    assert [counted(1, "edge"), counted(2, "edge"), counted(0, "lesson link")] == [
        "1 edge",
        "2 edges",
        "0 lesson links",
    ]
    assert [calls_text(0), calls_text(1), calls_text(3)] == [
        "no model calls",
        "1 model call",
        "3 model calls",
    ]
    url = f"sqlite:///{tmp_path}/one.sqlite3"
    ok(url, "init", "--no-curriculum")
    ok(url, "concept", "add", "a", "--name", "A", "--reason", "r", "--evidence", '{"d": 1}')
    ok(url, "concept", "add", "b", "--name", "B", "--reason", "r", "--evidence", '{"d": 1}')
    ok(url, "edge", "add", "a>prerequisite>b", "--reason", "r", "--evidence", '{"d": 1}')
    assert ": 2 concepts, 1 edge, 0 lessons, 0 lesson links" in ok(url, "audit", "snapshot").stdout
    assert ", 1 edge, " in ok(url, "export", str(tmp_path / "bundle")).stdout


def test_a_long_list_of_what_to_master_reads_as_a_sentence(initialised: str) -> None:
    """What comes before a concept, listed in learning stages, follows "must master" without a
    colon: "must master 28 concepts, in learning order: first ..."."""
    out = ok(
        initialised, "ask", "What must a learner master before agent orchestration?", "--evidence", "none"
    )
    assert "a learner must master 28 concepts, in learning order: first " in out.stdout.replace("\n", " ")
    assert "must master:" not in out.stdout


def test_piping_into_head_ends_quietly(initialised: str) -> None:
    """`kg audit snapshot --format json | head -c 100`: no error line, exit 141 (as SIGPIPE would)."""
    env = {**os.environ, **ENV, "PYTHONPATH": str(ROOT)}
    code = "from control_plane.surfaces.cli import app; app()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "--db", initialised, "audit", "snapshot", "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(100)
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait(60) == 141
    assert stderr == ""


def test_a_relative_sqlite_path_is_named_absolutely_and_never_created_by_a_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--db sqlite:///rel.sqlite3` is the file in the working folder, and messages say which:
    a read of a missing file is one error naming the absolute path (and no empty file is left);
    the first `kg ask` initialises it like the default database."""
    monkeypatch.chdir(tmp_path)
    result = kg("sqlite:///rel.sqlite3", "audit", "snapshot")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"error: no database at {tmp_path}/rel.sqlite3: create it with `kg --db sqlite:///{tmp_path}/rel.sqlite3 init`"
    )
    assert not (tmp_path / "rel.sqlite3").exists()
    from_env = CliRunner().invoke(
        app, ["audit", "snapshot"], env={**ENV, "KG_DATABASE_URL": "sqlite:///rel.sqlite3"}
    )
    assert f"no database at {tmp_path}/rel.sqlite3" in from_env.stderr
    asked = ok("sqlite:///rel.sqlite3", "ask", "What does RAG build on?")
    assert f"first run: initialising sqlite:///{tmp_path}/rel.sqlite3" in asked.stderr
    assert asked.stdout.startswith("Answer: ") and (tmp_path / "rel.sqlite3").stat().st_size > 0
