"""Evals: metrics on hand-computed cases, gold answers on tiny graphs, the question format, and
smoke runs of ``kg eval``, ``kg bench`` and the GraphWalk-style benchmark."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from typer.testing import CliRunner

from control_plane.surfaces.cli import app
from data_plane import WriteGateway, connect
from data_plane.errors import InputError
from evals import gold, graphwalk
from evals.metrics import Response, expected_calibration_error, prf, score, summarise
from evals.questions import Question, dump_questions, load_questions, parse_question, select

ROOT = Path(__file__).resolve().parents[1]


# -- metrics -----------------------------------------------------------------------------------


def test_prf_matches_a_hand_computed_case() -> None:
    """Citing {a, b, c} against gold {b, c, d, e} gives P = 2/3, R = 1/2, F1 = 4/7."""
    p, r, f = prf(["a", "b", "c"], ["b", "c", "d", "e"])
    assert (p, r) == (pytest.approx(2 / 3), pytest.approx(0.5))
    assert f == pytest.approx(4 / 7)


def test_abstaining_on_an_answerable_question_scores_zero() -> None:
    """An abstention on an answerable question has P = R = F1 = 0 and keeps its evidence recall."""
    s = score("q", "t", ["a", "b"], False, Response(abstained=True, evidence=("a", "x")))
    assert (s.precision, s.recall, s.f1, s.exact_match) == (0.0, 0.0, 0.0, False)
    assert s.evidence_recall == pytest.approx(0.5)


def test_abstain_questions_have_no_prf_and_are_correct_only_when_abstained() -> None:
    """On an abstain question P/R/F1 are undefined; answering it is not an exact match."""
    answered = score("q", "t", [], True, Response(abstained=False, cited=("a",)))
    abstained = score("q", "t", [], True, Response(abstained=True))
    assert answered.f1 is None and answered.precision is None and not answered.exact_match
    assert abstained.exact_match


def test_summary_abstention_precision_and_recall() -> None:
    """Two abstentions, one of them right, and two abstain questions: abstention P = R = 1/2."""
    scores = [
        score("1", "t", [], True, Response(abstained=True)),
        score("2", "t", [], True, Response(abstained=False, cited=("x",), confidence=0.9)),
        score("3", "t", ["a"], False, Response(abstained=True)),
        score("4", "t", ["a"], False, Response(abstained=False, cited=("a",), confidence=0.9)),
    ]
    s = summarise(scores)
    assert s["abstention_precision"] == pytest.approx(0.5)
    assert s["abstention_recall"] == pytest.approx(0.5)
    assert s["f1"] == pytest.approx(0.5)  # mean over the two answerable questions: 0 and 1
    assert s["coverage"] == pytest.approx(0.5) and s["selective_accuracy"] == pytest.approx(0.5)


def test_expected_calibration_error_matches_a_hand_computed_case() -> None:
    """Confidence 0.9 on four answers of which two are right: ECE = |0.9 - 0.5| = 0.4."""
    assert expected_calibration_error([0.9] * 4, [True, True, False, False]) == pytest.approx(0.4)


# -- gold --------------------------------------------------------------------------------------


def test_needed_before_follows_prerequisites_in_and_builds_on_out_transitively() -> None:
    """x needs a (prerequisite a->x), f (x builds_on f) and, through f, g (g prerequisite f)."""
    view = gold.GraphView.of(
        "axfgz",
        [
            ("a", "x", "prerequisite"),
            ("x", "f", "builds_on"),
            ("g", "f", "prerequisite"),
            ("z", "x", "builds_on"),
        ],
    )
    assert gold.needed_before(view, "x") == {"a", "f", "g"}
    assert gold.builds_on_x(view, "x") == {"z"}


def test_unique_path_refuses_ambiguous_shortest_paths() -> None:
    """Two shortest before-paths from a to d make the path question ungradeable (None)."""
    view = gold.GraphView.of(
        "abcd",
        [
            ("a", "b", "prerequisite"),
            ("a", "c", "prerequisite"),
            ("b", "d", "prerequisite"),
            ("c", "d", "prerequisite"),
        ],
    )
    assert gold.unique_path(view, "a", "d") is None


def test_bundle_view_as_of_the_past_keeps_edges_invalidated_later() -> None:
    """As of 2025-01-01 RAG still builds on BM25 and hybrid search does not exist yet."""
    past = gold.load_bundle_view(ROOT / "data_plane" / "curriculum", at=datetime(2025, 1, 1, tzinfo=UTC))
    now = gold.load_bundle_view(ROOT / "data_plane" / "curriculum")
    assert "bm25" in gold.foundations(past, "rag") and "hybrid_search" not in past.concepts
    assert "bm25" not in gold.foundations(now, "rag") and "hybrid_search" in gold.foundations(now, "rag")


def test_graphwalk_middle_gold_is_the_single_common_neighbour() -> None:
    """Every "middle" question names two non-adjacent concepts with exactly one common neighbour."""
    graph = graphwalk.generate(60, seed=3)
    view = graph.view()
    adj: dict[str, set[str]] = {c: set() for c in view.concepts}
    for s, t, _ in view.edges:
        adj[s].add(t)
        adj[t].add(s)
    qs = [q for q in graphwalk.make_questions(graph, per_template=5, seed=3) if q.type == "middle"]
    assert qs
    for q in qs:
        a, c = (w.lower() for w in q.question.removeprefix("Which concept links ").rstrip("?").split(" and "))
        assert c not in adj[a] and set(q.concepts) == adj[a] & adj[c]


# -- question format ---------------------------------------------------------------------------


def test_questions_round_trip_through_json_lines(tmp_path: Path) -> None:
    """dump then load gives back the same questions, times included."""
    qs = [Question("a", "What is x?", "t", ("x",), False, "2025-01-01"), Question("b", "Why?", "u", (), True)]
    dump_questions(qs, tmp_path / "q.jsonl")
    assert load_questions(tmp_path / "q.jsonl") == qs


def test_duplicate_question_ids_are_refused(tmp_path: Path) -> None:
    """A question set with the same id twice is an InputError naming the line."""
    line = json.dumps(
        {"id": "a", "question": "q?", "type": "t", "expect": {"concepts": ["x"], "abstain": False}}
    )
    (tmp_path / "q.jsonl").write_text(line + "\n" + line + "\n")
    with pytest.raises(InputError, match=r"q.jsonl:2"):
        load_questions(tmp_path / "q.jsonl")


def test_gzip_question_sets_round_trip_with_corpus_and_round(tmp_path: Path) -> None:
    """A ``.gz`` question set is gzip on disk and loads back as written, corpus and round included;
    the same questions give the same bytes."""
    qs = [
        Question("a", "What is x?", "t", ("x",), False, corpus="paraphrase", round=3),
        Question("b", "Why?", "u", (), True, corpus="forms"),
    ]
    dump_questions(qs, tmp_path / "q.jsonl.gz")
    dump_questions(qs, tmp_path / "again.jsonl.gz")
    raw = (tmp_path / "q.jsonl.gz").read_bytes()
    assert raw[:2] == b"\x1f\x8b" and raw == (tmp_path / "again.jsonl.gz").read_bytes()
    assert load_questions(tmp_path / "q.jsonl.gz") == qs


def test_a_question_set_that_is_not_gzip_is_refused_by_name(tmp_path: Path) -> None:
    """A ``.gz`` file holding plain text is an InputError naming the file, not a traceback."""
    (tmp_path / "q.jsonl.gz").write_text("{}\n")
    with pytest.raises(InputError, match=r"q.jsonl.gz"):
        load_questions(tmp_path / "q.jsonl.gz")


@pytest.mark.parametrize(
    ("change", "field"), [({"corpus": ""}, "corpus"), ({"round": 0}, "round"), ({"round": "2"}, "round")]
)
def test_a_bad_corpus_or_round_is_refused_by_name(change: dict[str, object], field: str) -> None:
    """An empty corpus, or a round that is not an integer >= 1, is an InputError naming it."""
    obj = {"id": "q", "question": "What is RAG?", "type": "about", "expect": {"concepts": ["rag"]}, **change}
    with pytest.raises(InputError) as info:
        parse_question(obj)
    assert info.value.field == field


def test_select_keeps_the_questions_of_a_corpus_and_round_in_order() -> None:
    """Selecting by corpus, by round or both keeps exactly the matching questions, in order."""
    qs = [
        Question(str(i), "q?", "t", ("x",), False, corpus=c, round=r)
        for i, (c, r) in enumerate([("paraphrase", 1), ("forms", 1), ("paraphrase", 2), ("paraphrase", None)])
    ]
    assert [q.id for q in select(qs, corpus="paraphrase")] == ["0", "2", "3"]
    assert [q.id for q in select(qs, round=1)] == ["0", "1"]
    assert [q.id for q in select(qs, corpus="paraphrase", round=2)] == ["2"]
    assert select(qs) == qs


def test_eval_scores_only_the_selected_corpus_and_round(tmp_path: Path) -> None:
    """kg eval --corpus/--round scores the matching questions of a mixed file and records the
    selection; a selection that matches nothing is refused before anything is written."""
    picked = load_questions(ROOT / "evals" / "questions" / "curriculum.jsonl")[:4]
    mixed = [
        replace(q, corpus=c, round=r)
        for q, (c, r) in zip(
            picked, [("paraphrase", 1), ("forms", 1), ("paraphrase", 2), ("forms", None)], strict=True
        )
    ]
    dump_questions(mixed, tmp_path / "mixed.jsonl.gz")
    args = ["eval", "--questions", str(tmp_path / "mixed.jsonl.gz"), "--baseline", "loop"]
    result = CliRunner().invoke(
        app, [*args, "--corpus", "paraphrase", "--round", "2", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert [q["id"] for q in report["questions"]] == [picked[2].id]
    assert report["meta"]["selected"] == {"corpus": "paraphrase", "round": 2}
    result = CliRunner().invoke(
        app, [*args, "--corpus", "forms", "--round", "3", "--out", str(tmp_path / "n")]
    )
    assert result.exit_code != 0 and "--round 3" in result.output and not (tmp_path / "n").exists()


def test_committed_curriculum_set_is_current_and_large_enough() -> None:
    """curriculum.jsonl is what build_curriculum.py generates, with >= 80 questions of 9 types."""
    script = ROOT / "evals" / "questions" / "build_curriculum.py"
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    qs = load_questions(ROOT / "evals" / "questions" / "curriculum.jsonl")
    assert len(qs) >= 80 and len({q.type for q in qs}) == 9


# -- smoke runs --------------------------------------------------------------------------------


def test_eval_runs_every_system_on_an_imported_database(database_url: str, tmp_path: Path) -> None:
    """kg eval on 10 questions against a user database writes a report with every system scored."""
    from data_plane.bundle import import_bundle

    engine = connect(database_url)
    import_bundle(WriteGateway(engine), ROOT / "data_plane" / "curriculum")
    engine.dispose()
    result = CliRunner().invoke(
        app, ["--db", database_url, "eval", "--limit", "10", "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert set(report["summary"]["overall"]) == {
        "loop",
        "seed-only",
        "graphrag",
        "whole-graph",
        "loop-onehop",
    }
    assert len(report["questions"]) == 10 and (tmp_path / "out" / "f1_by_type.png").exists()
    assert report["summary"]["overall"]["loop"]["f1"] is not None
    # Every concept an answer's text names is cited, for every system, in every question type.
    for per_type in [report["summary"]["overall"], *report["summary"]["by_type"].values()]:
        for system, summary in per_type.items():
            assert summary["citation_coverage"] in (None, 1.0), (system, summary["named_uncited"])


def test_eval_reports_progress_question_by_question(engine: Engine) -> None:
    """run_eval tells its progress callback (done, total, question id) before each question and at the end."""
    from control_plane.synthesizers.offline import OfflineSynthesizer
    from data_plane.bundle import import_bundle
    from evals.runner import default_questions, run_eval

    import_bundle(WriteGateway(engine), ROOT / "data_plane" / "curriculum")
    questions = load_questions(default_questions())[:3]
    calls: list[tuple[int, int, str]] = []
    url = engine.url.render_as_string(hide_password=False)
    run_eval(
        questions,
        url=url,
        synthesizer=OfflineSynthesizer(),
        systems=["loop"],
        progress=lambda done, total, what: calls.append((done, total, what)),
    )
    assert calls == [
        (0, 3, questions[0].id),
        (1, 3, questions[1].id),
        (2, 3, questions[2].id),
        (3, 3, "scored"),
    ]


def test_bench_smoke_measures_the_loop_at_1000_edges(tmp_path: Path) -> None:
    """kg bench --sizes 1000 reports loop and expansion latencies and writes its plots."""
    args = ["bench", "--sizes", "1000", "--questions", "3", "--inmemory-max", "0", "--out", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    result = json.loads((tmp_path / "bench.json").read_text())["results"][0]
    assert result["edges"] == 1000 and result["mean_rounds"] == 4
    assert result["loop_p50_ms"] is not None and (tmp_path / "bench_latency.png").exists()


def test_bench_measures_raw_comparators_side_by_side(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every size carries the raw-driver comparators of the same run: the same expansion rows,
    a byte-identical raw export, a raw insert rate, and the ratios."""
    monkeypatch.delenv("KG_TEST_POSTGRES_URL", raising=False)  # the SQLite half only; fast
    args = ["bench", "--sizes", "1000", "--questions", "2", "--inmemory-max", "0", "--out", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    result = json.loads((tmp_path / "bench.json").read_text())["results"][0]
    assert result["raw_row_mismatches"] == 0 and result["export_same_bytes"] is True
    for key in ("expansion_to_raw", "loop_to_target", "export_to_raw", "import_to_raw_insert"):
        assert result[key] > 0, key
    assert result["raw_insert_edges_per_s"] > 0 and result["database"] == "sqlite"


def test_graphwalk_smoke_scores_every_template(tmp_path: Path) -> None:
    """The GraphWalk-style run on 30 concepts reports every template with n, correct and F1."""
    from control_plane.synthesizers.offline import OfflineSynthesizer

    res = graphwalk.run_size(
        30, synthesizer=OfflineSynthesizer(), url=f"sqlite:///{tmp_path}/w.sqlite3", per_template=2
    )
    assert set(res["by_template"]) == set(graphwalk.TEMPLATES)
    assert res["questions"] == sum(t["n"] for t in res["by_template"].values()) > 0


def test_graphwalk_at_100_concepts_answers_every_template_exactly(tmp_path: Path) -> None:
    """The published GraphWalk-style result (docs/graphwalk) holds: at 100 concepts the offline
    loop answers every template's questions exactly, none abstained (a reader change once made
    "exactly 2 hops from A, not directly linked to it" abstain, and nothing noticed)."""
    from control_plane.synthesizers.offline import OfflineSynthesizer

    res = graphwalk.run_size(100, synthesizer=OfflineSynthesizer(), url=f"sqlite:///{tmp_path}/w.sqlite3")
    for template, row in res["by_template"].items():
        assert (row["correct"], row["abstained"]) == (row["n"], 0), template
