"""Hostile and malformed input: questions through Planner.ask and bundles through import_bundle.

Each input gets a clear KGError or a correct answer/abstention; nothing crashes and nothing is
partially written.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_workers import record_figures
from sqlalchemy.engine import Engine

from control_plane.planning.loop import Planner
from control_plane.synthesizers.offline import OfflineSynthesizer
from data_plane import BundleError, GraphReader, InputError, KGError, WriteGateway, connect, migrate, schema
from data_plane.bundle import import_bundle
from data_plane.testing import build_graph

HOSTILE_QUESTIONS = [
    "",
    "   \t\n",
    "\x00\x01\x02 rag \x7f",
    "rag'; DROP TABLE concepts; --",
    '"' * 5000,
    "'" * 5000 + " rag",
    "RAG 检索增强生成 это поиск ساخت rag ✓ 🧠",
    "\u202erag\u202c before embeddings?",
    "%s %(x)s {0} {{}} rag",
    "rag " * 400,
]
TRIED: dict[str, int] = {"questions": 0, "bundles": 0}


def _count(engine: Engine, table: sa.Table) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())


def _all_counts(engine: Engine) -> dict[str, int]:
    return {t.name: _count(engine, t) for t in schema.VERSIONED_TABLES}


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    url = f"sqlite:///{tmp_path_factory.mktemp('hostile')}/kg.sqlite3"
    engine = connect(url)
    migrate(engine)
    build_graph(
        WriteGateway(engine),
        ["rag", "embeddings", "vector_search", "llm"],
        [
            ("embeddings", "rag", "prerequisite"),
            ("vector_search", "rag", "prerequisite"),
            ("rag", "llm", "builds_on"),
        ],
    )
    yield engine
    engine.dispose()


@pytest.fixture(scope="module")
def planner(graph: Engine) -> Planner:
    return Planner(GraphReader(graph), OfflineSynthesizer(), gateway=WriteGateway(graph))


def _ask_once(planner: Planner, engine: Engine, question: str) -> None:
    before = _count(engine, schema.answers)
    TRIED["questions"] += 1
    try:
        answer = planner.ask(question)
    except KGError as exc:
        assert str(exc).strip()
        assert _count(engine, schema.answers) == before
        return
    assert _count(engine, schema.answers) == before + 1
    assert answer.abstained or answer.abstain_reason is None
    assert set(answer.cited_concept_ids) <= set(answer.evidence.concepts)


@pytest.mark.parametrize("question", HOSTILE_QUESTIONS, ids=range(len(HOSTILE_QUESTIONS)))
def test_hostile_question_gets_clear_error_or_grounded_reply(
    planner: Planner, graph: Engine, question: str
) -> None:
    """Empty, control-character, SQL, quote-storm and mixed-script questions end in a KGError (nothing written) or one recorded grounded reply."""
    _ask_once(planner, graph, question)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(question=st.text(max_size=300) | st.text(alphabet="rag ';\"\\%\x00\n", max_size=200))
def test_any_question_gets_clear_error_or_grounded_reply(
    planner: Planner, graph: Engine, question: str
) -> None:
    """Arbitrary text through Planner.ask never crashes and never writes a partial answer."""
    _ask_once(planner, graph, question)


def test_oversized_question_is_refused_by_the_planner(planner: Planner, graph: Engine) -> None:
    """A 100 KB question is refused with InputError before any work, as the HTTP API refuses > 2000 characters."""
    before = _count(graph, schema.answers)
    with pytest.raises(InputError):
        planner.ask("what before rag? " + "x" * 100_000)
    assert _count(graph, schema.answers) == before


GOOD_CONCEPTS = "id,name,aliases,summary\nrag,RAG,,Retrieval\nllm,LLM,,Model\n"
MANIFEST = '{"format": "kg-bundle/1", "name": "t", "defaults": {"source": "t", "reason": "t", "confidence": 0.9, "evidence": {"t": 1}}}'
BAD_BUNDLES: dict[str, dict[str, bytes]] = {
    "latin-1 encoding": {"concepts.csv": "id,name\nrag,Réseau\n".encode("latin-1")},
    "missing name column": {"concepts.csv": b"id,summary\nrag,x\n"},
    "confidence not a number": {"concepts.csv": b"id,name,confidence\nrag,RAG,high\n"},
    "confidence > 1": {"concepts.csv": b"id,name,confidence\nrag,RAG,1.5\n"},
    "duplicate ids": {"concepts.csv": b"id,name\nrag,RAG\nrag,RAG again\n"},
    "edge to unknown concept": {
        "concept_edges.csv": b"source_id,target_id,relation\nrag,nowhere,prerequisite\n"
    },
    "unknown relation": {"concept_edges.csv": b"source_id,target_id,relation\nrag,llm,befriends\n"},
    "prerequisite cycle": {
        "concept_edges.csv": b"source_id,target_id,relation\nrag,llm,prerequisite\nllm,rag,prerequisite\n"
    },
    "empty id": {"concepts.csv": b"id,name\n,RAG\n"},
    "bad evidence JSON": {"concepts.csv": b"id,name,evidence\nrag,RAG,{not json\n"},
    "manifest not JSON": {"manifest.json": b"{format: kg-bundle/1"},
}


def _bundle(root: Path, files: dict[str, bytes]) -> Path:
    root.mkdir()
    (root / "manifest.json").write_text(MANIFEST)
    (root / "concepts.csv").write_text(GOOD_CONCEPTS)
    for name, data in files.items():
        (root / name).write_bytes(data)
    return root


@pytest.mark.parametrize("case", list(BAD_BUNDLES))
def test_malformed_bundle_is_a_located_error_and_writes_nothing(
    engine: Engine, tmp_path: Path, case: str
) -> None:
    """A malformed bundle raises BundleError naming the file, and no table changes."""
    path = _bundle(tmp_path / "b", BAD_BUNDLES[case])
    before = _all_counts(engine)
    TRIED["bundles"] += 1
    with pytest.raises(BundleError) as info:
        import_bundle(WriteGateway(engine), path)
    assert info.value.file and info.value.file in str(info.value)
    assert _all_counts(engine) == before


def test_bom_and_extra_columns_import_correctly(engine: Engine, tmp_path: Path) -> None:
    """A UTF-8 BOM and unknown extra columns are tolerated: the bundle imports in full."""
    path = _bundle(
        tmp_path / "b", {"concepts.csv": b"\xef\xbb\xbfid,name,colour\nrag,RAG,blue\nllm,LLM,red\n"}
    )
    TRIED["bundles"] += 1
    import_bundle(WriteGateway(engine), path)
    assert _count(engine, schema.concepts) == 2


def test_a_field_over_the_csv_limit_is_refused_cleanly(engine: Engine, tmp_path: Path) -> None:
    """A 1 MB summary is over the CSV field limit (131,072 characters): a BundleError naming the
    limit and the line, with nothing written (tests/test_import_parity.py: the limit itself imports)."""
    path = _bundle(tmp_path / "b", {"concepts.csv": b"id,name,summary\nrag,RAG," + b"y" * 1_000_000 + b"\n"})
    TRIED["bundles"] += 1
    with pytest.raises(BundleError, match="131,072 characters") as info:
        import_bundle(WriteGateway(engine), path)
    assert info.value.line == 2
    assert _count(engine, schema.concepts) == 0
    record_figures("hostile", TRIED)


def test_bundle_fixture_is_importable(engine: Engine, tmp_path: Path) -> None:
    """The control: the base bundle the malformed cases start from imports cleanly."""
    import_bundle(WriteGateway(engine), _bundle(tmp_path / "b", {}))
    assert _count(engine, schema.concepts) == 2
    shutil.rmtree(tmp_path / "b")
