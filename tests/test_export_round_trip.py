"""Exports round-trip any text a write accepts: export, import into an empty database, export
again, and the two bundles are byte-identical, on both engines (CR, CR LF, LF and every other
NUL-free control character, quotes, separators and formula starters included)."""

from __future__ import annotations

import json
import tempfile
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from conftest import ENGINES, POSTGRES_URL, _admin
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import Engine

from data_plane import GraphReader, Write, WriteGateway, connect, export_bundle, import_bundle, migrate
from data_plane.bundle_rows import CONCEPTS, EDGES, LINKS, MANIFEST
from data_plane.records import Grounding, alias_fault, id_fault, name_fault, text_fault

# Characters a write accepts that CSV and spreadsheets treat specially, and a few ordinary ones.
ALPHABET = list("ab é🧠 ,;\"'=+-@|\t\r\n\x0b\x0c\x1c\x1f\x7f\x85\u2028\ufeff")
TEXT = st.text(ALPHABET, max_size=10).filter(lambda t: text_fault(t) is None)
SOME_TEXT = TEXT.filter(lambda t: t.strip() != "")
NAME = TEXT.filter(lambda t: t.strip() != "" and name_fault(t) is None)
ALIAS = TEXT.filter(lambda t: t.strip() != "" and alias_fault(t) is None)
IDENT = st.text(list("ab_é,\"'=+-@\t\r\n"), min_size=1, max_size=6).filter(
    lambda t: t == t.strip() and id_fault(t) is None
)
EVIDENCE = st.one_of(SOME_TEXT, st.dictionaries(TEXT, st.one_of(TEXT, st.integers(), st.none()), min_size=1))
VALID = datetime(2024, 1, 1, tzinfo=UTC)


@st.composite
def graphs(draw: st.DrawFn) -> list[Write]:
    """Writes of a small graph whose every text field is drawn from the hostile alphabet."""

    def grounding() -> Grounding:
        return Grounding(draw(st.floats(0, 1)), draw(SOME_TEXT), draw(SOME_TEXT), draw(EVIDENCE))

    ids = draw(st.lists(IDENT, min_size=2, max_size=4, unique=True))
    writes = [
        Write.concept(
            cid,
            grounding=grounding(),
            name=draw(NAME),
            aliases=draw(st.lists(ALIAS, max_size=2, unique=True)),
            summary=draw(TEXT),
            valid_at=VALID,
        )
        for cid in ids
    ]
    source, target = ids[0], ids[1]
    writes.append(Write.edge(source, target, "related", grounding=grounding(), valid_at=VALID))
    lesson = draw(IDENT)
    writes.append(Write.lesson(lesson, grounding=grounding(), title=draw(NAME), valid_at=VALID))
    writes.append(Write.lesson_link(lesson, source, grounding=grounding(), valid_at=VALID))
    return writes


@pytest.fixture(params=ENGINES)
def databases(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A maker of fresh, migrated, empty databases on each engine (two per example)."""
    made: list[tuple[Engine, str | None]] = []
    template = request.getfixturevalue("pg_template") if request.param == "postgresql" else None

    def fresh() -> Engine:
        if template is None:
            engine = connect(f"sqlite:///{tmp_path_factory.mktemp('rt')}/kg.sqlite3")
            migrate(engine)
            made.append((engine, None))
            return engine
        name = f"kg_rt_{uuid.uuid4().hex[:12]}"
        with _admin().connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        assert POSTGRES_URL
        engine = connect(sa.make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False))
        made.append((engine, name))
        return engine

    yield fresh
    for engine, name in made:
        engine.dispose()
        if name is not None:
            with _admin().connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _export(engine: Engine, folder: Path) -> dict[str, bytes]:
    """The bundle's files, byte for byte, but for the manifest's export time."""
    export_bundle(GraphReader(engine), folder)
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    del manifest["exported_as_of"]
    files = {f: (folder / f).read_bytes() for f in (CONCEPTS, EDGES, LINKS)}
    return {**files, MANIFEST: json.dumps(manifest, sort_keys=True).encode()}


def _round_trip(fresh: Any, writes: list[Write]) -> tuple[dict[str, bytes], dict[str, bytes]]:
    source, target = fresh(), fresh()
    WriteGateway(source).apply(writes)
    with tempfile.TemporaryDirectory() as tmp:
        first = _export(source, Path(tmp) / "first")
        import_bundle(WriteGateway(target), Path(tmp) / "first")
        return first, _export(target, Path(tmp) / "second")


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(writes=graphs())
def test_export_import_export_is_byte_identical(databases: Any, writes: list[Write]) -> None:
    """For random small graphs with hostile text in every field, the export of the import of an
    export is the same bytes as that export."""
    first, second = _round_trip(databases, writes)
    assert second == first


def test_a_summary_with_a_bare_carriage_return_round_trips(databases: Any) -> None:
    """A summary holding a bare CR (and CR LF, and LF) is quoted in the export and read back whole."""
    g = Grounding(0.5, "r", "s", {"e": 1})
    summary = "one\rtwo\r\nthree\nfour"
    writes = [
        Write.concept("a", grounding=g, name="A", summary=summary, valid_at=VALID),
        Write.concept("b", grounding=g, name="B", valid_at=VALID),
    ]
    first, second = _round_trip(databases, writes)
    assert b'"one\rtwo\r\nthree\nfour"' in first[CONCEPTS]
    assert second == first
