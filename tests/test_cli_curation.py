"""What a curriculum maintainer does with `kg`: assert again what was invalidated, be stopped
before adding a concept under a name the graph already has, and look concepts up."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from kg_cli import GROUNDED, assert_one_line_error, kg, ok

from data_plane import Write, WriteGateway, connect
from data_plane.testing import grounding


def _ops(db: str, key: str) -> list[str]:
    return [v["op"] for v in json.loads(ok(db, "audit", "history", key, "--format", "json").stdout)]


# -- asserting again what was invalidated ------------------------------------------------------


def test_edge_add_after_invalidate_asserts_the_edge_again(db: str) -> None:
    """`kg edge add` on an invalidated edge writes a new assert version from now on, beside the
    closed period (which stays current: it still held then)."""
    key = "rag>builds_on>embeddings"
    ok(db, "edge", "invalidate", key, "--reason", "dropped from the unit", "--evidence", '{"t": 1}')
    out = ok(db, "edge", "add", key, "--reason", "back in the 2026 unit", "--evidence", '{"t": 2}').stdout
    assert re.search(
        rf"concept_edges {re.escape(key)}: version \d+ op=assert valid \S+\.\.open recorded \S+$", out.strip()
    )
    assert _ops(db, key) == ["assert", "invalidate", "assert"]
    assert key in ok(db, "audit", "snapshot", "--format", "json").stdout


def test_concept_add_after_invalidate_asserts_the_concept_again(db: str) -> None:
    """`kg concept add` on an invalidated concept asserts it again with the given name."""
    ok(db, "concept", "invalidate", "graphrag", *GROUNDED)
    ok(db, "concept", "add", "graphrag", "--name", "GraphRAG", "--summary", "Back.", *GROUNDED)
    assert _ops(db, "graphrag") == ["assert", "invalidate", "assert"]


def test_lesson_link_after_unlink_links_again(db: str) -> None:
    """`kg lesson link` after `kg lesson unlink` links the lesson again."""
    ok(db, "lesson", "link", "L99_graph", "graphrag", "--title", "Graphs", *GROUNDED)
    ok(db, "lesson", "unlink", "L99_graph", "graphrag", *GROUNDED)
    assert "op=assert" in ok(db, "lesson", "link", "L99_graph", "graphrag", *GROUNDED).stdout


def test_edge_add_on_an_edge_in_force_still_says_revise(db: str) -> None:
    """An edge that still holds is not asserted twice: one error line pointing at revise."""
    result = kg(db, "edge", "add", "rag>builds_on>embeddings", *GROUNDED)
    assert_one_line_error(result, "already exists")
    assert "revise it instead" in result.stderr


# -- no silent duplicate names -----------------------------------------------------------------


def test_concept_add_under_an_existing_name_is_refused_naming_the_concept(db: str) -> None:
    """`kg concept add graph_rag --name GraphRAG` on the curriculum (which has graphrag, GraphRAG)
    is one error line naming graphrag and the flag; nothing is written."""
    result = kg(db, "concept", "add", "graph_rag", "--name", "GraphRAG", *GROUNDED)
    assert_one_line_error(result, "is already concept 'graphrag'")
    assert "--allow-duplicate-name" in result.stderr
    assert_one_line_error(kg(db, "audit", "history", "graph_rag"), "no history")


def test_concept_add_with_allow_duplicate_name_adds_it(db: str) -> None:
    """--allow-duplicate-name says both concepts are meant."""
    out = ok(
        db, "concept", "add", "graph_rag", "--name", "GraphRAG", "--allow-duplicate-name", *GROUNDED
    ).stdout
    assert "concepts graph_rag: version" in out


def test_concept_revise_onto_an_existing_alias_is_refused(db: str) -> None:
    """A revision adding an alias another concept goes by is refused too."""
    result = kg(db, "concept", "revise", "rag", "--alias", "graph-based RAG", *GROUNDED)
    assert_one_line_error(result, "alias 'graph-based RAG' is already concept 'graphrag'")


def test_import_reports_duplicate_names_as_a_problem_kind(db: str, tmp_path: Path) -> None:
    """`kg import --check` lists a bundle concept under a stored concept's name as duplicate_name;
    --allow-duplicate-names lets it through."""
    unit = tmp_path / "unit"
    unit.mkdir()
    (unit / "manifest.json").write_text(
        '{"format": "kg-bundle/1", "name": "unit", "defaults": {"source": "s", "reason": "r", '
        '"confidence": 1, "evidence": {"e": 1}}}'
    )
    (unit / "concepts.csv").write_text("id,name\ngraph_rag,GraphRAG\n")
    result = kg(db, "import", str(unit), "--check")
    assert result.exit_code == 1
    assert "duplicate_name (1):" in result.stdout
    assert (
        "concepts.csv:2 column 'name': concept 'graph_rag': name 'GraphRAG' is already concept 'graphrag'"
        in result.stdout
    )
    assert "would succeed" in ok(db, "import", str(unit), "--check", "--allow-duplicate-names").stdout


# -- look-ups ----------------------------------------------------------------------------------


def test_concept_list_pages_with_a_hint_to_go_on(initialised: str) -> None:
    """`kg concept list --limit 2` prints two concepts with their degrees and, on stderr, how to
    get the next page; --after continues from there."""
    first = ok(initialised, "concept", "list", "--limit", "2")
    assert len(first.stdout.splitlines()) == 2 and "(degree " in first.stdout
    after = re.search(r"--after (\S+)", first.stderr).group(1)  # type: ignore[union-attr]
    second = json.loads(
        ok(initialised, "concept", "list", "--limit", "2", "--after", after, "--format", "json").stdout
    )
    assert [c["concept_id"] > after for c in second["concepts"]] == [True, True]


def test_concept_list_filters_by_relation_and_degree(initialised: str) -> None:
    """--relation keeps concepts with such an edge; --min-degree keeps the well-connected ones."""
    data = json.loads(
        ok(
            initialised,
            "concept",
            "list",
            "--relation",
            "contrasts_with",
            "--min-degree",
            "5",
            "--format",
            "json",
        ).stdout
    )
    assert data["concepts"] and all(
        c["relations"]["contrasts_with"] > 0 and c["degree"] >= 5 for c in data["concepts"]
    )
    assert_one_line_error(kg(initialised, "concept", "list", "--relation", "likes"), "likes")


def test_concept_show_has_grounding_edges_and_lessons(initialised: str) -> None:
    """`kg concept show graphrag` shows its version and grounding, its edges both ways, its lessons."""
    out = ok(initialised, "concept", "show", "graphrag").stdout
    assert out.startswith("graphrag: GraphRAG\n")
    assert "grounding: confidence 0.95" in out and "evidence: {" in out
    assert "graphrag>builds_on>rag" in out and "entity_extraction>part_of>graphrag" in out
    assert "L37_graphrag" in out
    assert_one_line_error(kg(initialised, "concept", "show", "no_such"), "no_such")


def test_concept_search_is_fuzzy(initialised: str) -> None:
    """`kg concept search "graph rag"` finds GraphRAG first; a typo still finds its concept."""
    assert ok(initialised, "concept", "search", "graph rag").stdout.split()[1] == "graphrag"
    hits = json.loads(ok(initialised, "concept", "search", "retreival augmented", "--format", "json").stdout)
    assert hits[0]["concept_id"] == "rag"


# -- a curator during an import ------------------------------------------------------------------


@contextmanager
def _import_running(url: str, seconds: float) -> Iterator[None]:
    """An import's transaction holds the SQLite write lock for ``seconds`` (in another thread)."""
    gateway = WriteGateway(connect(url))
    taken = threading.Event()

    def hold() -> None:
        with gateway.bulk() as bulk:
            bulk.apply([Write.concept("imported", grounding=grounding("import"), name="Imported concept")])
            taken.set()
            time.sleep(seconds)

    thread = threading.Thread(target=hold)
    thread.start()
    assert taken.wait(30)
    try:
        yield
    finally:
        thread.join(60)


def test_a_curator_waits_for_an_import_and_is_told_on_a_terminal(db: str) -> None:
    """`kg concept add` during an import says it waits (on a terminal) and succeeds once it commits."""
    with _import_running(db, 2):
        result = kg(db, "concept", "add", "colbert", "--name", "ColBERT", *GROUNDED, env={"FORCE_COLOR": "1"})
    assert result.exit_code == 0, result.output
    assert "waiting for the database's write lock" in result.stderr and "up to 600 s" in result.stderr
    assert "concepts colbert: version" in result.stdout


@pytest.mark.slow  # waits out a write lock
def test_a_curator_gives_up_after_KG_WRITE_WAIT_S(db: str) -> None:
    """Past KG_WRITE_WAIT_S the command ends with one error line and writes nothing."""
    with _import_running(db, 4):
        result = kg(
            db, "concept", "add", "colbert", "--name", "ColBERT", *GROUNDED, env={"KG_WRITE_WAIT_S": "0.5"}
        )
    assert_one_line_error(result, "waited 0.5 s for the database's write lock")
    assert_one_line_error(kg(db, "audit", "history", "colbert"), "no history")
