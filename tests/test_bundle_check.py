"""Importing messy prerequisite data: every problem in one pass, a dry run, an explicit policy for
contradictions, and plain prerequisite lists."""

from __future__ import annotations

import itertools
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import Engine
from test_bundle import TABLES, row_counts
from typer.testing import CliRunner

from control_plane.surfaces.cli import app
from data_plane import GraphReader, WriteGateway, connect, migrate
from data_plane.bundle import ImportPolicy, check_bundle, import_bundle, set_aside_records
from data_plane.bundle_check import format_problems
from data_plane.cycles import Arc, break_cycles
from data_plane.errors import BundleRejected, Problem
from data_plane.pairs import bundle_from_pairs, slugify
from data_plane.testing import ManualClock, build_graph

DEFAULTS: dict[str, Any] = {
    "source": "tests/messy",
    "reason": "fixture row",
    "confidence": 0.8,
    "evidence": {"doc": "fixture"},
}
ENV = {"KG_SYNTHESIZER": "offline", "DEEPSEEK_API_KEY": "", "KG_DATABASE_URL": "", "COLUMNS": "200"}


def write_bundle(
    folder: Path, concepts: bytes | str, edges: bytes | str | None = None, links: bytes | str | None = None
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {"format": "kg-bundle/1", "name": "messy", "defaults": DEFAULTS}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    for name, data in (
        ("concepts.csv", concepts),
        ("concept_edges.csv", edges),
        ("lesson_concepts.csv", links),
    ):
        if data is not None:
            (folder / name).write_bytes(data.encode() if isinstance(data, str) else data)
    return folder


def edge_rows(edges: list[tuple[str, str, str, float | None]]) -> str:
    lines = ["source_id,target_id,relation,confidence"]
    lines += [f"{s},{t},{r},{'' if c is None else c}" for s, t, r, c in edges]
    return "\n".join(lines) + "\n"


def concept_rows(ids: list[str]) -> str:
    return "id,name\n" + "".join(f"{i},Name of {i}\n" for i in ids)


MESSY_CONCEPTS = (
    b"id,name,confidence,valid_at\n"
    b"a,Alpha,,\n"
    b"b,Beta,,\n"
    b"c,Gamma,1.7,\n"  # 4: confidence out of range
    b"d,Delta,,yesterday\n"  # 5: bad time
    b"e,Epsilon,,\n"
    b"a,Alpha again,,\n"  # 7: duplicate id
    b"f,Caf\xe9,,\n"  # 8: latin-1, not UTF-8
)
MESSY_EDGES = edge_rows(
    [
        ("a", "b", "prerequisite", 0.9),  # 2 \
        ("b", "c", "prerequisite", 0.7),  # 3  } cycle a -> b -> c -> a
        ("c", "a", "prerequisite", 0.95),  # 4 /
        ("a", "b", "prerequisite", None),  # 5: duplicate of line 2
        ("d", "e", "prerequisite", None),  # 6 \ mutual
        ("e", "d", "prerequisite", 0.5),  # 7 /
        ("a", "zeta", "builds_on", None),  # 8: unknown concept
        ("b", "e", "requires", None),  # 9: unknown relation
        ("e", "e", "related", None),  # 10: self-loop
    ]
)
MESSY_LINKS = "lesson_id,lesson_title,concept_id\nL1,One,a\nL1,Uno,b\nL2,Two,omega\n"
EXPECTED = {
    ("encoding", "concepts.csv", 8, "name"),
    ("confidence", "concepts.csv", 4, "confidence"),
    ("time", "concepts.csv", 5, "valid_at"),
    ("duplicate", "concepts.csv", 7, "id"),
    ("duplicate", "concept_edges.csv", 5, "target_id"),
    ("relation", "concept_edges.csv", 9, "relation"),
    ("self_loop", "concept_edges.csv", 10, "target_id"),
    ("unknown_concept", "concept_edges.csv", 8, "target_id"),
    ("unknown_concept", "lesson_concepts.csv", 4, "concept_id"),
    ("lesson_title", "lesson_concepts.csv", 3, "lesson_title"),
    ("cycle", "concept_edges.csv", 3, "target_id"),
    ("cycle", "concept_edges.csv", 7, "target_id"),
}


@pytest.fixture
def messy(tmp_path: Path) -> Path:
    return write_bundle(tmp_path / "messy", MESSY_CONCEPTS, MESSY_EDGES, MESSY_LINKS)


# ---------------------------------------------------------------------------------------------
# One pass, every problem


def test_every_problem_is_reported_in_one_run_and_nothing_is_written(
    gateway: WriteGateway, engine: Engine, messy: Path
) -> None:
    """A bundle with twelve different problems is refused once, naming all twelve (kind, file, line, column)."""
    build_graph(gateway, ["x", "y"], [("x", "y", "prerequisite")])
    before = row_counts(engine)
    with pytest.raises(BundleRejected) as info:
        import_bundle(gateway, messy)
    found = {(p.kind, p.file, p.line, p.column) for p in info.value.problems}
    assert found == EXPECTED
    assert row_counts(engine) == before


def test_cycles_are_reported_with_every_row_that_forms_them(gateway: WriteGateway, messy: Path) -> None:
    """A cycle problem lists the lines of all its rows and the row --set-aside would drop."""
    with pytest.raises(BundleRejected) as info:
        import_bundle(gateway, messy)
    cycles = sorted((p.lines, p.line) for p in info.value.problems if p.kind == "cycle")
    assert cycles == [((2, 3, 4), 3), ((6, 7), 7)]
    message = next(p.message for p in info.value.problems if p.lines == (2, 3, 4))
    assert "a -> b -> c -> a" in message


def test_a_cycle_through_stored_edges_is_found(gateway: WriteGateway, tmp_path: Path) -> None:
    """Stored active prerequisites count: a bundle row closing a cycle with them is named, not the stored edges."""
    build_graph(gateway, ["a", "b", "c"], [("a", "b", "prerequisite"), ("b", "c", "prerequisite")])
    folder = write_bundle(
        tmp_path / "b", concept_rows(["a", "b", "c"]), edge_rows([("c", "a", "prerequisite", 0.9)])
    )
    with pytest.raises(BundleRejected) as info:
        import_bundle(gateway, folder)
    (problem,) = info.value.problems
    assert (problem.kind, problem.line, problem.lines) == ("cycle", 2, (2,))
    assert "stored edges on it: 2" in problem.message


def test_mixed_encodings_name_every_bad_line(gateway: WriteGateway, engine: Engine, tmp_path: Path) -> None:
    """Lines in Latin-1 among UTF-8 lines are each reported by file, line and column; good lines are still checked."""
    concepts = "id,name,summary\na,Caf\u00e9,ok\n".encode() + b"b,Cr\xe8me,x\nc,Ok,Na\xefve\n" + b"d,Good,\n"
    edges = b"source_id,target_id,relation\na,b,prerequisite\na,d,prerequisit\xe9\n"
    folder = write_bundle(tmp_path / "b", concepts, edges)
    with pytest.raises(BundleRejected) as info:
        import_bundle(gateway, folder)
    found = {(p.kind, p.file, p.line, p.column) for p in info.value.problems}
    assert found == {
        ("encoding", "concepts.csv", 3, "name"),
        ("encoding", "concepts.csv", 4, "summary"),
        ("encoding", "concept_edges.csv", 3, "relation"),
    }
    assert row_counts(engine) == dict.fromkeys(TABLES, 0)


def test_the_report_groups_by_kind_counts_and_caps() -> None:
    """The printed report has a summary count per kind and prints at most the cap, counting the rest."""
    problems = [Problem("duplicate", "concepts.csv", n, "id", f"dup {n}") for n in range(2, 9)]
    problems += [Problem("time", "concepts.csv", 20, "valid_at", "bad time")]
    text = format_problems(problems, limit=3, bundle="x")
    assert text.splitlines()[0] == "bundle 'x' refused: 8 problems, nothing was written"
    assert "by kind: time 1, duplicate 7" in text
    assert text.count("concepts.csv:") == 3
    assert "5 of 8 problems not shown" in text


# ---------------------------------------------------------------------------------------------
# Hypothesis: planted cycles, dangling ids and duplicates


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "template.sqlite3"
    engine = connect(f"sqlite:///{path}")
    migrate(engine)
    engine.dispose()
    return path


@st.composite
def messy_graphs(draw: st.DrawFn) -> dict[str, Any]:
    """Disjoint cycles of length 2-6, an acyclic backbone, dangling rows and duplicate rows, shuffled."""
    lengths = draw(st.lists(st.integers(2, 6), min_size=0, max_size=4))
    ids: list[str] = []
    rows: list[dict[str, Any]] = []
    for k, n in enumerate(lengths):
        ring = [f"r{k}_{i}" for i in range(n)]
        ids += ring
        confs = draw(st.lists(st.sampled_from([0.2, 0.5, 0.9]), min_size=n, max_size=n))
        rows += [{"s": ring[i], "t": ring[(i + 1) % n], "conf": confs[i], "cycle": k} for i in range(n)]
    chain = [f"p{i}" for i in range(draw(st.integers(2, 6)))]
    ids += chain
    rows += [{"s": a, "t": b, "conf": 0.9, "cycle": None} for a, b in itertools.pairwise(chain)]
    dangling = draw(st.integers(0, 3))
    rows += [
        {"s": chain[0], "t": f"ghost{i}", "conf": 0.9, "cycle": None, "dangling": True}
        for i in range(dangling)
    ]
    order = draw(st.permutations(range(len(rows))))
    rows = [rows[i] for i in order]
    dups = draw(st.lists(st.sampled_from(range(len(rows))), max_size=2, unique=True)) if rows else []
    return {"ids": ids, "rows": rows, "dups": dups, "cycles": len(lengths), "dangling": dangling}


def _edges_text(graph: dict[str, Any], with_dups: bool) -> str:
    rows = [(r["s"], r["t"], "prerequisite", r["conf"]) for r in graph["rows"]]
    if with_dups:
        rows += [rows[i] for i in graph["dups"]]
    return edge_rows(rows)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graph=messy_graphs())
def test_every_planted_problem_is_reported_and_nothing_written(
    template_db: Path, graph: dict[str, Any]
) -> None:
    """For random bundles, each planted cycle, dangling row and duplicate is reported in the one refusal."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_bundle(Path(tmp) / "b", concept_rows(graph["ids"]), _edges_text(graph, with_dups=True))
        shutil.copy(template_db, Path(tmp) / "db.sqlite3")
        engine = connect(f"sqlite:///{tmp}/db.sqlite3")
        try:
            expected = graph["cycles"] + graph["dangling"] + len(graph["dups"])
            if expected == 0:
                import_bundle(WriteGateway(engine, clock=ManualClock()), folder)
                return
            with pytest.raises(BundleRejected) as info:
                import_bundle(WriteGateway(engine, clock=ManualClock()), folder)
            kinds = [p.kind for p in info.value.problems]
            assert kinds.count("cycle") == graph["cycles"]
            assert kinds.count("unknown_concept") == graph["dangling"]
            assert kinds.count("duplicate") == len(graph["dups"])
            for p in info.value.problems:
                if p.kind == "cycle":
                    rings = {graph["rows"][n - 2]["cycle"] for n in p.lines}
                    assert len(rings) == 1 and None not in rings  # the rows of exactly one planted ring
            assert row_counts(engine) == dict.fromkeys(TABLES, 0)
        finally:
            engine.dispose()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graph=messy_graphs())
def test_set_aside_writes_exactly_the_sound_rows_and_records_the_rest(
    template_db: Path, graph: dict[str, Any]
) -> None:
    """Under --set-aside: one row per cycle (its lowest confidence, latest line on ties) and every
    dangling row are recorded as set aside; every other row is imported; the graph is acyclic."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_bundle(
            Path(tmp) / "b", concept_rows(graph["ids"]), _edges_text(graph, with_dups=False)
        )
        shutil.copy(template_db, Path(tmp) / "db.sqlite3")
        engine = connect(f"sqlite:///{tmp}/db.sqlite3")
        clock = ManualClock()
        try:
            report = import_bundle(
                WriteGateway(engine, clock=clock), folder, policy=ImportPolicy(set_aside=True)
            )
            rows = graph["rows"]
            victims: set[int] = set()
            for k in range(graph["cycles"]):
                ring = [(n + 2, r) for n, r in enumerate(rows) if r["cycle"] == k]
                victims.add(min(ring, key=lambda lr: (lr[1]["conf"], -lr[0]))[0])
            dangling = {n + 2 for n, r in enumerate(rows) if r.get("dangling")}
            assert {s.line for s in report.set_aside} == victims | dangling
            assert {s.line for s in report.set_aside if s.kind == "cycle"} == victims
            reader = GraphReader(engine, clock=clock)
            stored = {(e.source_id, e.target_id) for e in reader.snapshot().edges}
            sound = {(r["s"], r["t"]) for n, r in enumerate(rows) if n + 2 not in victims | dangling}
            assert stored == sound
            assert nx.is_directed_acyclic_graph(nx.DiGraph(list(stored)))
            records = set_aside_records(reader)
            assert {v.grounding.evidence["line"] for v in records} == victims | dangling
            assert all(v.stamp.op == "retract" for v in records)
            again = import_bundle(
                WriteGateway(engine, clock=clock), folder, policy=ImportPolicy(set_aside=True)
            )
            assert again.new_versions == 0
        finally:
            engine.dispose()


def test_break_cycles_sets_aside_lowest_confidence_then_latest_line() -> None:
    """In a 3-cycle with a confidence tie the later row is set aside; stored arcs are never chosen."""
    arcs = [Arc(0, 1, 2, 0.5, True), Arc(1, 2, 3, 0.9, True), Arc(2, 0, 4, 0.5, True)]
    (cycle,) = break_cycles(arcs)
    assert cycle.removed == 2
    stored = [Arc(0, 1, 0, 0.1, False), Arc(1, 0, 5, 0.9, True)]
    (cycle,) = break_cycles(stored)
    assert cycle.removed == 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7), st.floats(0, 1)), max_size=30))
def test_removing_every_chosen_arc_leaves_an_acyclic_graph(edges: list[tuple[int, int, float]]) -> None:
    """For any graph, the arcs break_cycles sets aside leave it acyclic, and each reported cycle is a real cycle."""
    arcs = [Arc(s, t, n + 2, c, True) for n, (s, t, c) in enumerate(edges) if s != t]
    cycles = break_cycles(arcs)
    removed = {c.removed for c in cycles}
    kept = [(a.source, a.target) for i, a in enumerate(arcs) if i not in removed]
    assert nx.is_directed_acyclic_graph(nx.MultiDiGraph(kept)) or not kept
    for c in cycles:
        path = [arcs[i] for i in c.arcs]
        assert all(a.target == b.source for a, b in itertools.pairwise(path))
        assert path[-1].target == path[0].source
        assert c.removed in c.arcs


# ---------------------------------------------------------------------------------------------
# Policies


def test_mutual_prerequisites_become_one_related_edge(
    gateway: WriteGateway, reader: GraphReader, tmp_path: Path
) -> None:
    """'A before B, B before A' is kept as A related B; both prerequisite rows are recorded as set aside."""
    folder = write_bundle(
        tmp_path / "b",
        concept_rows(["a", "b", "c"]),
        edge_rows(
            [
                ("a", "b", "prerequisite", 0.6),
                ("b", "a", "prerequisite", 0.9),
                ("b", "c", "prerequisite", 0.9),
            ]
        ),
    )
    report = import_bundle(gateway, folder, policy=ImportPolicy(mutual_as_related=True))
    assert sorted((s.kind, s.line) for s in report.set_aside) == [("mutual", 2), ("mutual", 3)]
    edges = {(e.source_id, e.target_id, e.relation) for e in reader.snapshot().edges}
    assert edges == {("a", "b", "related"), ("b", "c", "prerequisite")}
    assert reader.edge("a", "b", "related").grounding.confidence == 0.9  # the higher-confidence row
    history = reader.history("concept_edges", ("a", "b", "prerequisite"))
    assert [v.stamp.op for v in history] == ["retract"]
    assert history[0].grounding.reason.startswith("set aside by kg import: mutual prerequisite with line 3")
    again = import_bundle(gateway, folder, policy=ImportPolicy(mutual_as_related=True))
    assert again.new_versions == 0


def test_without_a_policy_contradictions_still_refuse(
    gateway: WriteGateway, engine: Engine, tmp_path: Path
) -> None:
    """The default is unchanged: a mutual pair is a cycle and nothing is written."""
    folder = write_bundle(
        tmp_path / "b",
        concept_rows(["a", "b"]),
        edge_rows([("a", "b", "prerequisite", 0.6), ("b", "a", "prerequisite", 0.9)]),
    )
    with pytest.raises(BundleRejected):
        import_bundle(gateway, folder)
    assert row_counts(engine) == dict.fromkeys(TABLES, 0)


def test_set_aside_does_not_excuse_malformed_rows(gateway: WriteGateway, engine: Engine, messy: Path) -> None:
    """--set-aside only covers cycles and unknown concepts: a bundle with malformed rows is still refused whole."""
    with pytest.raises(BundleRejected) as info:
        import_bundle(gateway, messy, policy=ImportPolicy(set_aside=True, mutual_as_related=True))
    kinds = {p.kind for p in info.value.problems}
    assert "cycle" not in kinds and "unknown_concept" not in kinds
    assert "encoding" in kinds
    assert row_counts(engine) == dict.fromkeys(TABLES, 0)


# ---------------------------------------------------------------------------------------------
# The dry run (both engines)


def kg(url: str, *args: str) -> Any:
    return CliRunner().invoke(app, ["--db", url, *args], env=ENV)


def test_check_writes_nothing_and_its_exit_code_predicts_the_import(
    database_url: str, engine: Engine, messy: Path, tmp_path: Path
) -> None:
    """kg import --check writes nothing (row counts identical) and exits 1 on a bad bundle, 0 on a good one."""
    gateway = WriteGateway(engine)
    build_graph(gateway, ["x", "y"], [("x", "y", "prerequisite")])
    before = row_counts(engine)
    bad = kg(database_url, "import", "--check", str(messy))
    assert bad.exit_code == 1
    assert "12 problems" in bad.output
    good = write_bundle(
        tmp_path / "good", concept_rows(["a", "b"]), edge_rows([("a", "b", "prerequisite", 0.6)])
    )
    result = kg(database_url, "import", "--check", str(good))
    assert result.exit_code == 0, result.output
    assert "an import would succeed" in result.output
    assert row_counts(engine) == before
    assert kg(database_url, "import", str(good)).exit_code == 0
    assert row_counts(engine)["concept_edges"] == before["concept_edges"] + 1


def test_check_with_a_policy_lists_what_would_be_set_aside(
    database_url: str, engine: Engine, messy: Path
) -> None:
    """A policy dry run on a bundle with only contradictions succeeds, lists the rows, and writes nothing."""
    folder = messy.parent / "contradictions"
    write_bundle(
        folder,
        concept_rows(["a", "b", "c"]),
        MESSY_EDGES.split("\n")[0] + "\na,b,prerequisite,0.9\nb,a,prerequisite,0.4\nc,nowhere,part_of,\n",
    )
    before = row_counts(engine)
    plan = check_bundle(GraphReader(engine), folder, policy=ImportPolicy(set_aside=True))
    assert plan.ok
    assert [(s.kind, s.line) for s in plan.set_asides()] == [("cycle", 3), ("unknown_concept", 4)]
    result = kg(database_url, "import", "--check", "--set-aside", str(folder))
    assert result.exit_code == 0, result.output
    assert "2 rows would be set aside" in result.output
    assert row_counts(engine) == before


def test_cli_reports_set_aside_rows_and_audit_lists_them(database_url: str, tmp_path: Path) -> None:
    """A --set-aside import lists each set-aside row, and `kg audit set-aside` shows when and why."""
    folder = write_bundle(
        tmp_path / "b",
        concept_rows(["a", "b"]),
        edge_rows([("a", "b", "prerequisite", 0.9), ("a", "ghost", "related", None)]),
    )
    result = kg(database_url, "import", "--set-aside", str(folder))
    assert result.exit_code == 0, result.output
    assert "1 row set aside" in result.output
    audit = kg(database_url, "audit", "set-aside")
    assert audit.exit_code == 0, audit.output
    assert "a>related>ghost" in audit.output and "unknown concept 'ghost'" in audit.output


# ---------------------------------------------------------------------------------------------
# Plain prerequisite lists


def test_slugs() -> None:
    """Ids are lower-case slugs of the names."""
    assert slugify("Retrieval-Augmented  Generation (RAG)") == "retrieval_augmented_generation_rag"
    assert slugify("C++") == "c"


def test_pairs_become_a_bundle_with_slug_ids_and_stated_grounding(tmp_path: Path) -> None:
    """A pairs file (with header) and a names file give concepts by slug, collisions numbered, edges in order."""
    pairs = tmp_path / "pairs.csv"
    pairs.write_text(
        "prerequisite,concept\nLinear Algebra,Machine learning\nC++,Systems\nC,Systems\n\nlinear  algebra,Deep learning\n"
    )
    names = tmp_path / "names.csv"
    names.write_text("name,summary\nMachine Learning,Learning from data\nStatistics,\n")
    made = bundle_from_pairs(pairs, tmp_path / "out", names=names)
    assert (made.concepts, made.pairs) == (7, 4)
    concepts = (tmp_path / "out" / "concepts.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in concepts[1:]] == [
        "machine_learning",
        "statistics",
        "linear_algebra",
        "c",
        "systems",
        "c_2",
        "deep_learning",
    ]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["defaults"] == {
        "source": "pairs:pairs.csv",
        "reason": "prerequisite pair listed in pairs.csv",
        "confidence": 1.0,
    }
    edges = (tmp_path / "out" / "concept_edges.csv").read_text().splitlines()
    assert edges[1].startswith("linear_algebra,machine_learning,prerequisite,")
    assert made.edge_lines == {2: 2, 3: 3, 4: 4, 5: 6}


def test_import_pairs_reports_problems_by_the_pairs_file_line(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    """kg import --pairs imports a plain list; a cycle in it is reported with the pairs file's own lines."""
    good = tmp_path / "good.csv"
    good.write_text("Algebra,Calculus\nCalculus,Physics\n")
    assert kg(database_url, "import", "--pairs", str(good)).exit_code == 0
    assert row_counts(engine)["concept_edges"] == 2
    bad = tmp_path / "bad.csv"
    bad.write_text("before,after\nA,B\n\nB,C\nC,A\n")
    result = kg(database_url, "import", "--pairs", str(bad))
    assert result.exit_code == 1
    assert "bad.csv lines 2, 4, 5" in result.output
    assert row_counts(engine)["concept_edges"] == 2
    ok = kg(database_url, "import", "--pairs", str(bad), "--set-aside")
    assert ok.exit_code == 0, ok.output
    assert row_counts(engine)["concept_edges"] == 2 + 3  # two imported, one set-aside record


def test_a_pairs_import_names_the_users_file_line_and_column(database_url: str, tmp_path: Path) -> None:
    """Problems of a pairs import name the pairs file, its lines (blank lines counted) and its
    columns' headers, never the generated concept_edges.csv or source_id/target_id; the progress
    bar names the pairs file, not a temporary folder."""
    bad = tmp_path / "topics.csv"
    bad.write_text("before,after\nA,B\n\nB,C\nC,A\nD,D\n,E\nF,G\nG,F\n")
    result = kg(database_url, "import", "--pairs", str(bad), "--check")
    assert result.exit_code == 1
    out = result.output
    assert "topics.csv:7 column 'before': 'before' must not be empty" in out
    assert "topics.csv:6 column 'after': an edge may not connect 'd' to itself" in out
    assert "topics.csv lines 2, 4, 5" in out and "would set aside line 5" in out
    assert "topics.csv lines 8, 9" in out and "would set aside line 9" in out
    for internal in ("concept_edges.csv", "concepts.csv", "source_id", "target_id", "kg-pairs-"):
        assert internal not in out, internal


def test_rows_a_pairs_import_sets_aside_name_the_users_lines(database_url: str, tmp_path: Path) -> None:
    """Rows a pairs import sets aside are listed, and recorded (`kg audit set-aside`), by the pairs
    file's own lines, their reasons too."""
    pairs = tmp_path / "topics.csv"
    pairs.write_text("prerequisite,concept\nA,B\n\nB,C\nC,A\nF,G\nG,F\n")
    done = kg(database_url, "import", "--pairs", str(pairs), "--set-aside", "--mutual-as-related")
    assert done.exit_code == 0, done.output
    for said in (done.output, kg(database_url, "audit", "set-aside").output):
        assert "topics.csv:5" in said and "topics.csv lines 2, 4, 5" in said
        assert "topics.csv:6" in said and "mutual prerequisite with line 7" in said
        assert "concept_edges.csv" not in said


def test_bundle_from_pairs_command(tmp_path: Path) -> None:
    """kg bundle from-pairs writes a bundle folder and says how many concepts and pairs."""
    pairs = tmp_path / "p.csv"
    pairs.write_text("A,B\n")
    result = CliRunner().invoke(
        app, ["bundle", "from-pairs", str(pairs), "--out", str(tmp_path / "o")], env=ENV
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["pairs"] == 1
    assert (tmp_path / "o" / "manifest.json").is_file()


# ---------------------------------------------------------------------------------------------
# Bulk writes (COPY on PostgreSQL)


def test_a_large_import_round_trips_exactly_on_both_engines(
    gateway: WriteGateway, reader: GraphReader, engine: Engine, tmp_path: Path
) -> None:
    """A 6,000-edge bundle (batches large enough for PostgreSQL's COPY path) stores every row with
    its grounding intact: the counts match the files and a re-import writes nothing."""
    from evals.graphgen import generate
    from evals.graphgen import write_bundle as write_synthetic

    graph = generate(6_000, seed=3)
    folder = write_synthetic(graph, tmp_path / "big")
    report = import_bundle(gateway, folder)
    assert row_counts(engine)["concept_edges"] == len(graph.edges)
    assert report.counts["concepts"].asserted == len(graph.concepts)
    s, t, r, why = graph.edges[0]
    edge = reader.edge(s, t, r)
    assert (edge.grounding.reason, edge.grounding.evidence) == (why, {"generator": "evals.graphgen"})
    concept = reader.concept(graph.concepts[0][0])
    assert concept.aliases == (graph.concepts[0][2],)
    assert import_bundle(gateway, folder).new_versions == 0


def test_bulk_final_cycle_check_refuses_a_cycle_across_batches(gateway: WriteGateway, engine: Engine) -> None:
    """A cycle closed across batches of one bulk transaction (enough targets for the one-scan check) rolls everything back."""
    from data_plane import PrerequisiteCycle, Write
    from data_plane.testing import grounding

    ids = [f"n{i:05d}" for i in range(2_100)]
    g = grounding("bulk")
    with pytest.raises(PrerequisiteCycle), gateway.bulk() as bulk:
        bulk.apply([Write.concept(i, grounding=g, name=i) for i in ids])
        chain = [Write.edge(a, b, "prerequisite", grounding=g) for a, b in itertools.pairwise(ids)]
        bulk.apply(chain[:1_000])
        bulk.apply([*chain[1_000:], Write.edge(ids[-1], ids[0], "prerequisite", grounding=g)])
    assert row_counts(engine) == dict.fromkeys(TABLES, 0)
