"""The `kg` CLI: init, ask in every format, bundles, curation, audit, tokens, and one-line errors."""

from __future__ import annotations

import getpass
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from kg_cli import ENV, GROUNDED, assert_json_error, assert_one_line_error, kg, ok
from typer.testing import CliRunner

from control_plane.surfaces.cli import app

QUESTION = (
    "What must a learner master before agent orchestration, and which of those concepts does RAG build on?"
)
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _reset_logging() -> Iterator[None]:
    yield
    structlog.reset_defaults()


def test_init_is_idempotent(db: str) -> None:
    """A second `kg init` migrates nothing and imports no new versions."""
    out = ok(db, "init").output
    assert "already at" in out and "new_versions=0" in out


def test_ask_text_shows_answer_meta_and_a_summary_of_the_evidence(initialised: str) -> None:
    """By default the text names the answer, confidence, rounds, model calls (none offline) and the
    cited edges by name, one line each, with the options that show their grounding."""
    out = ok(initialised, "ask", QUESTION).output
    assert out.startswith("Answer: ")
    assert "confidence" in out and "1 round" in out and "no model calls" in out
    assert "Function calling -prerequisite-> Agent orchestration" in out and "--evidence cited" in out


def test_ask_text_says_how_the_question_was_read(initialised: str) -> None:
    """Text output has one 'read as:' line naming the interpreted relation and subject."""
    out = ok(initialised, "ask", "Which concepts have RAG as a prerequisite?").output
    lines = [line for line in out.splitlines() if line.startswith("read as: ")]
    assert lines == ["read as: concepts that have RAG as a prerequisite"]


def _edge_refs(out: str) -> list[str]:
    return re.findall(r"^  (e\d+)\b", out, re.M)


def test_ask_text_summary_lists_exactly_the_cited_edges(initialised: str) -> None:
    """The default summary lists the cited edges, not all gathered, and says how many were gathered."""
    answer = json.loads(ok(initialised, "ask", QUESTION, "--format", "json").stdout)
    out = ok(initialised, "ask", QUESTION).output
    gathered = len(answer["evidence"]["edges"])
    assert f"of {gathered} edges gathered" in out and gathered > len(answer["cited_edges"])
    assert sorted(_edge_refs(out)) == sorted(answer["cited_edges"])


def test_ask_evidence_cited_grounds_every_cited_edge_and_concept(initialised: str) -> None:
    """--evidence cited gives every cited edge (by key) and concept with its reason and source."""
    answer = json.loads(ok(initialised, "ask", QUESTION, "--format", "json").stdout)
    out = ok(initialised, "ask", QUESTION, "--evidence", "cited").output
    assert sorted(_edge_refs(out)) == sorted(answer["cited_edges"])
    assert "function_calling>prerequisite>agent_orchestration" in out and "curriculum-team" in out
    for concept in answer["cited_concepts"]:
        assert f"({concept['id']})" in out


def test_ask_evidence_all_shows_everything_gathered(initialised: str) -> None:
    """--evidence all lists every gathered edge and stars the cited ones."""
    answer = json.loads(ok(initialised, "ask", QUESTION, "--format", "json").stdout)
    out = ok(initialised, "ask", QUESTION, "--evidence", "all").output
    assert len(_edge_refs(out)) == len(answer["evidence"]["edges"])
    starred = re.findall(r"^  (e\d+) \*", out, re.M)
    assert sorted(starred) == sorted(answer["cited_edges"])


def test_ask_evidence_none_prints_no_evidence(initialised: str) -> None:
    """--evidence none stops after the answer, its reading and the meta line."""
    out = ok(initialised, "ask", QUESTION, "--evidence", "none").output
    assert out.splitlines()[-1].startswith("confidence ")
    assert "-prerequisite->" not in out and "Evidence" not in out


def test_ask_json_is_the_answer_schema(initialised: str) -> None:
    """--format json prints an answer/1 object."""
    data = json.loads(ok(initialised, "ask", QUESTION, "--format", "json").stdout)
    assert data["schema"] == "answer/1" and data["evidence"]["edges"]


def test_ask_mermaid_and_dot(initialised: str) -> None:
    """--format mermaid and dot print a flowchart and a digraph."""
    assert ok(initialised, "ask", QUESTION, "--format", "mermaid").stdout.startswith("flowchart LR")
    assert ok(initialised, "ask", QUESTION, "--format", "dot").stdout.startswith("digraph evidence {")


@pytest.mark.parametrize("graphviz", [True, False], ids=["with dot", "without dot"])
def test_ask_html_writes_the_evidence_page(initialised: str, tmp_path: Path, graphviz: bool) -> None:
    """--format html --out FILE writes a page whose SVG has the seed concept, with Graphviz's dot
    on PATH and without it (a pip-only install: the pure-Python layered layout)."""
    if graphviz and shutil.which("dot") is None:
        pytest.skip("Graphviz dot is not installed (.ci/run installs it)")
    out = tmp_path / "evidence.html"
    env = {} if graphviz else {"PATH": str(tmp_path)}  # a folder with no dot in it
    ok(initialised, "ask", QUESTION, "--format", "html", "--out", str(out), env=env)
    page = out.read_text()
    assert "<svg" in page and 'data-id="agent_orchestration"' in page
    assert ("Laid out without Graphviz" in page) is not graphviz


def test_ask_with_an_unwritable_out_fails_before_recording_anything(db: str, tmp_path: Path) -> None:
    """--out in a missing folder is one `error:` line, and no answer is recorded (the file is
    opened before the question is asked)."""
    before = json.loads(ok(db, "audit", "answers", "--format", "json").stdout)
    result = kg(db, "ask", QUESTION, "--format", "json", "--out", str(tmp_path / "missing" / "a.json"))
    assert_json_error(result, "missing")
    assert json.loads(ok(db, "audit", "answers", "--format", "json").stdout) == before


def test_ask_as_of_before_the_curriculum_abstains(initialised: str) -> None:
    """Asked as of a time before any concept was valid, the answer is an abstention with a reason."""
    data = json.loads(ok(initialised, "ask", QUESTION, "--as-of", "2020-01-01", "--format", "json").stdout)
    assert data["abstained"] and data["abstain_reason"]


def test_export_then_import_writes_nothing(db: str, tmp_path: Path) -> None:
    """Exporting the graph and importing it back creates no new versions."""
    ok(db, "export", str(tmp_path / "bundle"))
    report = json.loads(ok(db, "import", str(tmp_path / "bundle"), "--format", "json").stdout)
    assert report["new_versions"] == 0


def test_curation_commands_print_the_version_written(db: str) -> None:
    """concept/edge/lesson commands print version id and op; defaults give source cli:LOGIN."""
    out = ok(db, "concept", "add", "colbert", "--name", "ColBERT", *GROUNDED).output
    assert re.search(r"concepts colbert: version \d+ op=assert", out)
    out = ok(db, "concept", "revise", "colbert", "--summary", "RAG over graphs.", *GROUNDED).output
    assert "op=revise" in out
    out = ok(db, "edge", "add", "colbert>builds_on>rag", *GROUNDED, "--confidence", "0.8").output
    assert "concept_edges colbert>builds_on>rag: version" in out
    assert "op=revise" in ok(db, "edge", "revise", "colbert>builds_on>rag", *GROUNDED).output
    assert "op=assert" in ok(db, "lesson", "link", "L99", "colbert", *GROUNDED).output
    assert "op=invalidate" in ok(db, "lesson", "unlink", "L99", "colbert", *GROUNDED).output
    assert "op=invalidate" in ok(db, "edge", "invalidate", "colbert>builds_on>rag", *GROUNDED).output
    assert "op=invalidate" in ok(db, "concept", "invalidate", "colbert", *GROUNDED).output
    history = json.loads(ok(db, "audit", "history", "colbert", "--format", "json").stdout)
    assert [v["op"] for v in history] == ["assert", "revise", "invalidate"]
    assert history[0]["grounding"]["source"] == f"cli:{getpass.getuser()}"
    assert history[0]["grounding"]["confidence"] == 1.0


def test_audit_history_of_an_edge(initialised: str) -> None:
    """`kg audit history source>relation>target` shows the edge's versions."""
    out = ok(initialised, "audit", "history", "rag>builds_on>embeddings").output
    assert "History of rag>builds_on>embeddings" in out and "assert" in out


def test_audit_snapshot_counts_and_json(initialised: str) -> None:
    """The snapshot summary counts concepts and edges; --format json lists them."""
    assert re.search(r"\d+ concepts, \d+ edges", ok(initialised, "audit", "snapshot").output)
    data = json.loads(
        ok(initialised, "audit", "snapshot", "--as-of", "2023-06-01", "--format", "json").stdout
    )
    assert data["concepts"] == []


def test_audit_diff_shows_recent_writes(db: str) -> None:
    """`kg audit diff --from T` lists a concept asserted after T."""
    ok(db, "concept", "add", "diffed", "--name", "Diffed", *GROUNDED)
    data = json.loads(ok(db, "audit", "diff", "--from", "2020-01-01", "--format", "json").stdout)
    assert "diffed" in [v["key"] for v in data["asserted"]]


def test_audit_answers_and_replay(db: str) -> None:
    """An asked question is listed by `kg audit answers` and can be replayed."""
    answer_id = json.loads(ok(db, "ask", QUESTION, "--format", "json").stdout)["answer_id"]
    assert answer_id in ok(db, "audit", "answers", "--since", "2020-01-01").output
    report = json.loads(ok(db, "audit", "replay", answer_id).stdout)
    assert report["answer_id"] == answer_id


def test_tokens_create_list_revoke(db: str) -> None:
    """A created token's secret is printed once, listed without it, and shown revoked after revoke."""
    out = ok(db, "token", "create", "ci", "--scope", "write").stdout
    token_id = re.search(r"token_id: (\w+)", out).group(1)  # type: ignore[union-attr]
    secret = re.search(r"secret:\s+(\S+)", out).group(1)  # type: ignore[union-attr]
    listing = ok(db, "token", "list").output
    assert token_id in listing and secret not in listing
    ok(db, "token", "revoke", token_id)
    assert "revoked" in ok(db, "token", "list").output


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["audit", "history", "no_such_concept"], "no_such_concept"),
        (["ask", QUESTION, "--as-of", "not-a-time"], "not-a-time"),
        (["ask", QUESTION, "--as-of", "2025-01-01T00:00:00"], "naive"),
        (["concept", "add", "x", "--name", "X", "--reason", "r", "--evidence", "{bad"], "--evidence"),
        (["concept", "add", "x", "--name", "X", "--reason", " ", "--evidence", '{"a": 1}'], "reason"),
        (["edge", "add", "rag>likes>embeddings", *GROUNDED], "likes"),
        (["edge", "add", "not-an-edge", *GROUNDED], "source>relation>target"),
        (["concept", "add", "rag", "--name", "RAG", *GROUNDED], "already exists"),
        (["token", "revoke", "nope"], "nope"),
    ],
)
def test_bad_input_is_a_one_line_error(db: str, args: list[str], needle: str) -> None:
    """Bad input ends with one `error: ...` line naming the problem, a non-zero exit, no traceback."""
    assert_one_line_error(kg(db, *args), needle)


def test_malformed_bundle_is_a_one_line_error(db: str, tmp_path: Path) -> None:
    """Importing a folder that is not a bundle is a one-line error."""
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "manifest.json").write_text("{not json")
    assert_one_line_error(kg(db, "import", str(tmp_path / "bad")), "bad")


def test_uninitialised_database_is_a_one_line_error(tmp_path: Path) -> None:
    """Reading a database that was never initialised says so in one line."""
    assert_one_line_error(kg(f"sqlite:///{tmp_path}/empty.sqlite3", "audit", "snapshot"), "init`")


def test_eval_and_bench_are_delegated_or_clearly_unavailable(db: str) -> None:
    """`kg eval`/`kg bench` run evals.runner/evals.bench, or say they are unavailable with exit 2."""
    import importlib.util

    for command, module in (("eval", "evals.runner"), ("bench", "evals.bench")):
        if importlib.util.find_spec(module) is None:
            result = kg(db, command)
            assert result.exit_code == 2 and "not available yet" in result.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["bench", "--sizes", "1000,lots"], "--sizes"),
        (["bench", "--sizes", "0"], "--sizes"),
        (["eval", "--baseline", "oracle"], "oracle"),
    ],
)
def test_eval_and_bench_refuse_bad_options_in_one_line(db: str, args: list[str], needle: str) -> None:
    """`kg eval`/`kg bench` speak like every other command: one `error:` line and exit 2."""
    result = kg(db, *args)
    assert_one_line_error(result, needle)
    assert result.exit_code == 2


def test_eval_and_bench_help_lists_their_options(db: str) -> None:
    """`kg eval --help` and `kg bench --help` are Typer help with the CI's options."""
    assert "--limit" in ok(db, "eval", "--help").output and "--questions" in ok(db, "eval", "--help").output
    assert "--sizes" in ok(db, "bench", "--help").output and "--out" in ok(db, "bench", "--help").output


def test_first_ask_on_the_default_database_initialises_it(tmp_path: Path) -> None:
    """On a fresh machine (empty data dir), the very first `kg ask` initialises and answers."""
    env = {**os.environ, **ENV, "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")}
    env.pop("KG_DATABASE_URL")
    proc = subprocess.run(
        [sys.executable, "-m", "control_plane.surfaces.cli", "ask", QUESTION],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "first run: initialising" in proc.stderr
    assert proc.stdout.startswith("Answer: ")
    assert (tmp_path / "data" / "curriculum-kg" / "kg.sqlite3").exists()


def test_import_draws_progress_on_a_terminal_and_keeps_stdout_clean(db: str) -> None:
    """On a terminal `kg import` draws its bar on stderr; stdout is still exactly the JSON report."""
    bundle = str(ROOT / "docs" / "examples" / "retrieval-unit")
    drawn = CliRunner().invoke(
        app, ["--db", db, "import", bundle, "--format", "json"], env={**ENV, "FORCE_COLOR": "1"}
    )
    assert drawn.exit_code == 0, drawn.output
    assert json.loads(drawn.stdout)["new_versions"] == 26
    assert "importing" in drawn.stderr
    quiet = CliRunner().invoke(app, ["--db", db, "import", bundle], env=ENV)
    assert quiet.exit_code == 0 and quiet.stderr == ""
