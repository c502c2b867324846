"""The paraphrase corpus and its instruments: the generated prerequisite map, the dev/test split,
gold computed by networkx (hand-checked on a few questions), and per-intent scoring."""

from __future__ import annotations

import filecmp
import functools
import importlib.util
import itertools
import json
import re
import statistics
import sys
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from data_plane import WriteGateway, connect
from data_plane.bundle import import_bundle
from data_plane.errors import InputError
from evals import gold, prereqmap
from evals.baselines import cited_lessons
from evals.metrics import Response, score, summarise, time_read_right
from evals.questions import Question, dump_questions, load_questions, parse_question, read_rows
from evals.report import failure_table, intent_table

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "evals" / "questions"
CURRICULUM = ROOT / "data_plane" / "curriculum"
PREREQMAP = prereqmap.default_bundle()
JAN_2025 = datetime(2025, 1, 1, tzinfo=UTC)


@functools.cache
def _builder() -> ModuleType:
    """evals/questions/build_paraphrases.py is a script (evals/questions is not a package)."""
    spec = importlib.util.spec_from_file_location("build_paraphrases", QUESTIONS / "build_paraphrases.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _split(graph: str, split: str) -> list[Question]:
    """The committed questions of one split (``dev``, ``test``, ``holdout``, ``holdout2``, ...)."""
    return list(_builder().questions(graph, split))


def _template_rows() -> list[dict[str, Any]]:
    return read_rows(QUESTIONS / "paraphrase_templates.jsonl.gz")


# -- the generated prerequisite map --------------------------------------------------------------------


@pytest.fixture(scope="module")
def pmap() -> prereqmap.PrereqMap:
    return prereqmap.generate()


def test_generator_is_deterministic_and_reproduces_the_committed_bundle(tmp_path: Path) -> None:
    """The same seed gives the same graph, and writing it gives the committed bundle byte for byte."""
    assert prereqmap.generate() == prereqmap.generate()
    assert prereqmap.generate(seed=1) != prereqmap.generate()
    out = prereqmap.write_bundle(prereqmap.generate(), tmp_path / "pm")
    names = ["manifest.json", "concepts.csv", "concept_edges.csv", "lesson_concepts.csv"]
    match, mismatch, errors = filecmp.cmpfiles(out, PREREQMAP, names, shallow=False)
    assert (mismatch, errors) == ([], []) and len(match) == 4


def test_prerequisite_map_has_the_promised_shape(pmap: prereqmap.PrereqMap) -> None:
    """300 uniquely named concepts, prerequisite edges only, ~2.5 per concept now, acyclic over all
    time, and a chain at least 10 deep today."""
    assert len(pmap.concepts) == 300
    assert len({c.id for c in pmap.concepts}) == 300
    assert len({c.name.lower() for c in pmap.concepts}) == 300
    view = gold.load_bundle_view(PREREQMAP)
    assert {r for _, _, r in view.edges} == {"prerequisite"}
    assert 2.3 <= len(view.edges) / len(view.concepts) <= 2.7
    ever = nx.DiGraph((e.source_id, e.target_id) for e in pmap.edges)
    assert nx.is_directed_acyclic_graph(ever)
    now = gold.before_graph(view)
    assert nx.dag_longest_path_length(now) >= 10
    assert any(c.alias for c in pmap.concepts)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_any_seed_gives_an_acyclic_prerequisite_map_with_deep_chains(seed: int) -> None:
    """For every seed: unique ids, edges only upward in the syllabus (acyclic), every edge's
    validity inside both ends' validity, and a chain at least 10 deep."""
    pmap = prereqmap.generate(seed=seed)
    level = {c.id: c.level for c in pmap.concepts}
    assert len(level) == len(pmap.concepts) == 300
    assert all(level[e.source_id] < level[e.target_id] for e in pmap.edges)
    span = {c.id: (c.valid_at, c.invalid_at) for c in pmap.concepts}
    for e in pmap.edges:
        for end in (e.source_id, e.target_id):
            assert e.valid_at >= span[end][0]
            assert not span[end][1] or (e.invalid_at and e.invalid_at <= span[end][1])
    g = nx.DiGraph((e.source_id, e.target_id) for e in pmap.edges if not e.invalid_at)
    assert nx.dag_longest_path_length(g) >= 10


def test_prerequisite_map_changes_over_time_and_has_lessons(pmap: prereqmap.PrereqMap) -> None:
    """Concepts and edges are added and dropped in 2019 and 2025; lessons cover most concepts."""
    assert {c.valid_at for c in pmap.concepts} >= {prereqmap.LATER, prereqmap.RECENT}
    assert any(c.invalid_at for c in pmap.concepts)
    assert {e.invalid_at for e in pmap.edges} >= {prereqmap.LATER, prereqmap.RECENT}
    in_2018 = gold.load_bundle_view(PREREQMAP, at=datetime(2018, 6, 1, tzinfo=UTC))
    assert in_2018.edges != gold.load_bundle_view(PREREQMAP).edges
    covered = {lk.concept_id for lk in pmap.links}
    assert len(covered) >= 0.85 * len(pmap.concepts)
    assert any(lk.invalid_at for lk in pmap.links) and any(lk.valid_at for lk in pmap.links)


def test_prerequisite_map_imports_through_the_real_importer(tmp_path: Path) -> None:
    """The bundle loads into a fresh database with every concept, edge and lesson link."""
    from control_plane.surfaces.runtime import ensure_initialised

    url = f"sqlite:///{tmp_path}/pm.sqlite3"
    ensure_initialised(url, load_curriculum=False)
    engine = connect(url)
    try:
        report = import_bundle(WriteGateway(engine), PREREQMAP)
    finally:
        engine.dispose()
    pmap = prereqmap.generate()
    assert report.counts["concepts"].asserted == len(pmap.concepts)
    assert report.counts["concept_edges"].asserted == len(pmap.edges)
    assert report.counts["lesson_concepts"].asserted == len(pmap.links)


# -- the split -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("graph", ["curriculum", "prereqmap"])
def test_split_is_disjoint_by_template_and_balanced(graph: str) -> None:
    """No template (hence no wording) appears in both splits; each split holds about half the
    questions and at least four templates of every intent."""
    round_two = {r["id"] for r in _template_rows() if r["round"] > 1 or r["split"] == "holdout"}
    splits = {s: _split(graph, s) for s in _builder().SPLITS}
    dev, test = splits["dev"], splits["test"]
    holdouts = [s for s in splits if s.startswith("holdout")]
    templates = {name: {q.template for q in qs} for name, qs in splits.items()}
    assert None not in set().union(*templates.values())
    for a, b in itertools.combinations(templates, 2):
        assert not templates[a] & templates[b], (a, b)
    held = set().union(*(templates[h] for h in holdouts))
    assert held <= round_two and not templates["test"] & round_two
    first_dev = [q for q in dev if q.template not in round_two]
    assert 0.4 <= len(first_dev) / (len(first_dev) + len(test)) <= 0.6
    for split in (dev, test):
        per_intent = Counter(q.asks for q in {q.template: q for q in split}.values())
        assert min(per_intent.values()) >= 4, per_intent
    every = [q.id for qs in splits.values() for q in qs]
    assert len(set(every)) == len(every)
    # seven to nine phrasings per intent were written for each holdout; those repeating an earlier
    # text were dropped
    least = {"holdout": 7, "holdout2": 4, "holdout3": 4}  # later holdouts: at least 3
    for name in holdouts:
        split = splits[name]
        per_intent = Counter(q.asks for q in {q.template: q for q in split if q.type != "temporal"}.values())
        assert min(per_intent.values()) >= least.get(name, 3), (name, per_intent)


def test_template_rounds_share_no_template_or_wording() -> None:
    """Every round of templates (dev, test, later dev rounds, holdouts) holds ids and texts no
    other round holds."""
    rows: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in _template_rows():
        rows.setdefault((r["split"], r["round"]), []).append(r)
    assert len(rows["dev", 1]) == len(rows["test", 1])
    for a, b in itertools.combinations(rows, 2):
        assert not {r["id"] for r in rows[a]} & {r["id"] for r in rows[b]}, (a, b)
        texts = [{r["text"] for r in rows[s] if r["kind"] != "unknown_name"} for s in (a, b)]
        assert not texts[0] & texts[1], (a, b)  # phrasings; unknown names may repeat


@given(
    groups=st.dictionaries(
        st.text(min_size=1, max_size=5), st.sets(st.text(min_size=1, max_size=8), max_size=12), max_size=6
    )
)
def test_split_deals_every_group_evenly_and_deterministically(groups: dict[str, set[str]]) -> None:
    """Any templates grouped by intent: each template gets one split, each group's dev and test
    sizes differ by at most one, and dealing again gives the same split."""
    keyed = [(tid, group) for group, tids in groups.items() for tid in sorted(tids)]
    keyed = list({tid: (tid, group) for tid, group in keyed}.values())  # an id is in one group
    dealt = _builder().split_of(keyed)
    assert dealt == _builder().split_of(list(reversed(keyed)))
    assert set(dealt) == {tid for tid, _ in keyed}
    for group in {g for _, g in keyed}:
        sides = Counter(dealt[tid] for tid, g in keyed if g == group)
        assert abs(sides["dev"] - sides["test"]) <= 1


def test_split_is_the_one_the_builder_deals() -> None:
    """The committed files follow the builder's template split (so the split is stable)."""
    bp = _builder()
    splits = bp.template_splits()
    for graph in ("curriculum", "prereqmap"):
        for split in ("dev", "test"):
            for q in _split(graph, split):
                assert q.template is not None and splits[q.template] == split


@pytest.mark.slow  # rebuilds every phrasing file
def test_committed_corpus_is_up_to_date() -> None:
    """Rebuilding the corpus from the bundles gives the committed files (gold is never typed in)."""
    bp = _builder()
    assert bp.main(["--check"]) == 0


@pytest.mark.parametrize("graph", ["curriculum", "prereqmap"])
def test_the_holdout_file_holds_every_blind_round_in_order(graph: str) -> None:
    """The holdout file's paraphrase rows are rounds 1, 2, ... 26, in that order, one per former
    holdout file; dev and test rows carry no round."""
    rows = load_questions(QUESTIONS / f"{graph}_holdout.jsonl.gz")
    rounds = [q.round for q in rows if q.corpus == "paraphrase"]
    assert rounds == sorted(rounds) and set(rounds) == set(range(1, 27))
    for split in ("dev", "test"):
        assert {q.round for q in _split(graph, split)} == {None}


def test_a_builder_rewrites_only_its_own_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A builder replaces its corpus's rows of a shared file and keeps the other corpus's as they
    were, in corpus order; ``--check`` looks at its own rows only."""
    from evals.corpus import run_builder

    def q(qid: str, corpus: str) -> Question:
        return Question(qid, "What is x?", "about", ("x",), False, corpus=corpus)

    path = tmp_path / "g_dev.jsonl.gz"
    dump_questions([q("f1", "forms"), q("p-old", "paraphrase"), q("f2", "forms")], path)

    def build(*ids: str) -> Callable[[], dict[Path, list[Question]]]:
        return lambda: {path: [q(i, "paraphrase") for i in ids]}

    run = functools.partial(run_builder, doc="build", corpus="paraphrase", script="b.py")
    assert run(["--check"], outputs=build("p1")) == 1
    assert run([], outputs=build("p1", "p2")) == 0
    assert [(x.id, x.corpus) for x in load_questions(path)] == [
        ("p1", "paraphrase"),
        ("p2", "paraphrase"),
        ("f1", "forms"),
        ("f2", "forms"),
    ]
    assert run(["--check"], outputs=build("p1", "p2")) == 0
    with pytest.raises(ValueError, match="only paraphrase rows"):
        run([], outputs=lambda: {path: [q("f3", "forms")]})
    capsys.readouterr()


def test_a_shared_file_with_a_row_of_no_known_corpus_stops_the_builder_before_it_writes(
    tmp_path: Path,
) -> None:
    """Every file is read before any is written: a row of an unknown corpus in the second file
    is refused by line, and the first file is left as it was."""
    from evals.corpus import run_builder

    first, second = tmp_path / "a_dev.jsonl.gz", tmp_path / "a_test.jsonl.gz"
    dump_questions([Question("f", "What is x?", "about", ("x",), False, corpus="forms")], first)
    dump_questions([Question("o", "What is x?", "about", ("x",), False, corpus="other")], second)
    before = first.read_bytes()
    new = {
        p: [Question(f"p-{p.name}", "What is y?", "about", ("y",), False, corpus="paraphrase")]
        for p in (first, second)
    }
    with pytest.raises(ValueError, match=r"a_test.jsonl.gz:1: corpus must be one of"):
        run_builder([], doc="build", outputs=lambda: new, corpus="paraphrase", script="b.py")
    assert first.read_bytes() == before


def test_every_intent_has_eight_phrasings_and_the_corpus_covers_the_hard_cases() -> None:
    """At least eight templates per intent over both splits; time words, unknown concepts, absent
    relations and bad input are all present."""
    qs = [q for g in ("curriculum", "prereqmap") for s in ("dev", "test") for q in _split(g, s)]
    templates = Counter(q.asks for q in {q.template: q for q in qs if q.type != "temporal"}.values())
    assert min(templates.values()) >= 8, templates
    types = Counter(q.type for q in qs)
    assert types["temporal"] >= 16 and types["unanswerable"] >= 16 and types["bad_input"] >= 16
    assert types["absent_relation"] >= 8
    assert any(q.question == "" for q in qs)


# -- gold, hand-checked ------------------------------------------------------------------------------------


def _find(graph: str, predicate: Callable[[Question], bool]) -> list[Question]:
    return [q for s in ("dev", "test") for q in _split(graph, s) if predicate(q)]


def test_curriculum_gold_matches_the_hand_read_csv() -> None:
    """Read off concept_edges.csv by hand: overfitting is a prerequisite of dropout and
    regularization; RAG builds on hybrid search today but on BM25 as of January 2025."""
    now = gold.load_bundle_view(CURRICULUM)
    past = gold.load_bundle_view(CURRICULUM, at=JAN_2025)
    assert gold.dependents(now, "overfitting") == {"dropout", "regularization"}
    rag_now = {"embeddings", "vector_search", "chunking", "prompting_fundamentals", "hybrid_search"}
    assert gold.foundations(now, "rag") == rag_now
    assert gold.foundations(past, "rag") == rag_now - {"hybrid_search"} | {"bm25"}
    assert "overfitting" in gold.needed_before(now, "dropout")
    assert "dropout" in gold.comes_after(now, "overfitting")


def test_lesson_gold_follows_lesson_concepts_as_of_the_time() -> None:
    """RAG is covered by L33 and, since the 2025-06-01 revision, by L36 (hybrid search)."""
    assert gold.lessons_covering(gold.load_bundle_lessons(CURRICULUM), "rag") == {
        "L33_rag_fundamentals",
        "L36_hybrid_search",
    }
    past = gold.load_bundle_lessons(CURRICULUM, at=JAN_2025)
    assert gold.lessons_covering(past, "rag") == {"L33_rag_fundamentals"}
    assert gold.lessons_covering(past, "hybrid_search") == set()


def test_lessons_before_excludes_the_subjects_own_lessons() -> None:
    """On a three-concept chain a -> b -> c with lessons L1 {a}, L2 {b, c}: before c, take L1 only."""
    view = gold.GraphView.of("abc", [("a", "b", "prerequisite"), ("b", "c", "prerequisite")])
    lessons = {"L1": frozenset("a"), "L2": frozenset("bc")}
    assert gold.lessons_before(view, lessons, "c") == {"L1"}
    assert gold.lessons_before(view, lessons, "a") == set()


def test_corpus_questions_carry_the_hand_checked_gold() -> None:
    """Questions in the files agree with the hand-read facts, and time words carry their window."""
    now = lambda q: q.type != "temporal"  # noqa: E731 - asked as of today
    for q in _find(
        "curriculum", lambda q: q.asks == "dependents" and "overfitting" in q.question.lower() and now(q)
    ):
        assert set(q.concepts) == {"dropout", "regularization"}
    timed = _find("curriculum", lambda q: q.type == "temporal" and q.expect_as_of is not None)
    assert timed and all(q.as_of is None for q in timed)
    jan = [q for q in timed if re.search(r"(?<!\d )January 2025", q.question)]  # not "1 January 2025"
    assert jan and all(q.time_window == (JAN_2025, datetime(2025, 2, 1, tzinfo=UTC)) for q in jan)
    absent = _find("prereqmap", lambda q: q.type == "absent_relation")
    assert absent and all(q.abstain and q.asks in {"parts", "wholes", "contrasts"} for q in absent)


def test_prereqmap_builds_on_is_read_from_prerequisite_edges() -> None:
    """On the prerequisite-only map, "what does X build on" has X's direct prerequisites as gold."""
    view = gold.load_bundle_view(PREREQMAP)
    graph = _builder().load_graph("prereqmap", PREREQMAP)
    found = _find("prereqmap", lambda q: q.type == "foundations")
    assert found
    for q in found:
        text = q.question.lower()
        named = [
            (len(n), cid)
            for cid, (name, aliases) in graph.names.items()
            for n in (name, *aliases)
            if n.lower() in text
        ]
        subject = max(named)[1]
        assert set(q.concepts) == gold.direct_prerequisites(view, subject)


# -- question format -------------------------------------------------------------------------------------


def test_question_format_round_trips_the_new_fields() -> None:
    """intent, template, lesson gold, the time window and the match rule survive a round trip."""
    obj = {
        "id": "q",
        "question": "Which lessons covered RAG as of January 2025?",
        "type": "temporal",
        "intent": "lessons_covering",
        "template": "tim-10",
        "expect": {
            "concepts": [],
            "lessons": ["L33"],
            "abstain": False,
            "as_of": "2025-01-01",
            "as_of_end": "2025-02-01",
        },
    }
    q = parse_question(obj)
    assert q.to_dict() == obj and q.asks == "lessons_covering" and q.lessons == ("L33",)
    assert parse_question({**obj, "intent": None}).asks == "temporal"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"expect": {"concepts": [], "abstain": False}}, "expect.concepts"),
        ({"expect": {"concepts": ["a"], "lessons": "L1"}}, "expect.lessons"),
        ({"expect": {"concepts": ["a"], "match": "fuzzy"}}, "expect.match"),
        ({"expect": {"concepts": ["a"], "as_of": "January"}}, "expect.as_of"),
        ({"question": ""}, "question"),
    ],
)
def test_question_format_rejects_bad_fields_by_name(change: dict[str, object], field: str) -> None:
    """Each malformed field is refused with an InputError naming it."""
    obj = {"id": "q", "question": "What is RAG?", "type": "about", "expect": {"concepts": ["rag"]}, **change}
    with pytest.raises(InputError) as info:
        parse_question(obj)
    assert info.value.field == field


def test_only_bad_input_questions_may_be_empty() -> None:
    """An empty question is allowed as bad input that must be abstained on."""
    q = parse_question({"id": "b", "question": "", "type": "bad_input", "expect": {"abstain": True}})
    assert q.question == "" and q.abstain


# -- scoring per intent ------------------------------------------------------------------------------------


def test_lesson_questions_are_scored_on_cited_lessons() -> None:
    """Gold lessons are compared with the answer's cited lessons, not its concepts."""
    right = score(
        "q", "t", [], False, Response(abstained=False, cited=("x",), lessons=("L1",)), gold_lessons=["L1"]
    )
    wrong = score("q", "t", [], False, Response(abstained=False, cited=("L1",)), gold_lessons=["L1"])
    assert right.exact_match and right.f1 == 1.0 and right.evidence_recall is None
    assert not wrong.exact_match and wrong.f1 == 0.0


def test_cited_lessons_reads_ids_or_objects_from_the_answer_dict() -> None:
    """The contract with the answer object: ``cited_lessons`` holds ids or {"id": ...} objects."""
    assert cited_lessons({"cited_lessons": ["L1", {"id": "L2", "title": "t"}, "L1"]}) == ("L1", "L2")
    assert cited_lessons({}) == ()


def test_about_questions_accept_the_subject_as_cited_or_seeded() -> None:
    """'Tell me about X' is right when X is what the answer is about (cited, or its seed)."""
    seeded = Response(abstained=False, cited=("y", "z"), extra={"seeds": ["x"]})
    elsewhere = Response(abstained=False, cited=("y",), extra={"seeds": ["y"]})
    assert score("q", "about", ["x"], False, seeded, match="contains").exact_match
    assert not score("q", "about", ["x"], False, elsewhere, match="contains").exact_match


def test_time_read_right_checks_the_window() -> None:
    """A reported valid time inside [start, end) is read right; outside, missing or garbage is not."""
    window = (JAN_2025, datetime(2025, 2, 1, tzinfo=UTC))
    assert time_read_right(window, "2025-01-20T00:00:00Z") is True
    assert time_read_right(window, "2026-11-23T10:00:00Z") is False
    assert time_read_right(window, None) is False and time_read_right(window, "soon") is False
    assert time_read_right(None, "2026-11-23T10:00:00Z") is None


def test_a_crash_is_a_wrong_answer_not_an_abstention() -> None:
    """A traceback on bad input costs abstention recall and counts as a crash."""
    s = score("q", "bad_input", [], True, Response(abstained=True, crashed=True, error="boom"))
    assert not s.exact_match and not s.abstained and s.crashed
    assert summarise([s])["crashes"] == 1 and summarise([s])["abstention_recall"] == 0.0


def _synthetic_run() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Four questions over two intents, answered by a scripted system; returns rows and by_intent."""
    cases = [
        (
            "p1",
            "prerequisites",
            ["a", "b"],
            False,
            Response(abstained=False, cited=("a", "b"), confidence=0.9),
        ),
        ("p2", "prerequisites", ["a"], False, Response(abstained=False, cited=("a", "c"), confidence=0.9)),
        ("p3", "prerequisites", [], True, Response(abstained=True)),
        ("d1", "dependents", ["x"], False, Response(abstained=True)),
    ]
    scores, rows = [], []
    for qid, intent, concepts, abstain, resp in cases:
        sc = score(qid, intent, concepts, abstain, resp, intent=intent)
        scores.append(sc)
        rows.append(
            {
                "id": qid,
                "question": f"question {qid}",
                "type": intent,
                "intent": intent,
                "template": f"t-{qid}",
                "expect": {"concepts": concepts, "abstain": abstain},
                "results": {"loop": {**sc.to_dict(), "cited": list(resp.cited), "abstain_reason": "low"}},
            }
        )
    by_intent = {
        i: {"loop": summarise([s for s in scores if s.intent == i])} for i in ("prerequisites", "dependents")
    }
    return rows, {"by_intent": by_intent, "overall": {"loop": summarise(scores)}}


def test_per_intent_summary_on_a_tiny_synthetic_set() -> None:
    """prerequisites: 2 of 3 answered, 1 of them exact; F1 mean over the answerable two; the abstain
    question abstained on. dependents: abstained on an answerable question."""
    _, summary = _synthetic_run()
    pre = summary["by_intent"]["prerequisites"]["loop"]
    assert pre["coverage"] == pytest.approx(2 / 3)
    assert pre["selective_accuracy"] == pytest.approx(0.5)
    assert pre["f1"] == pytest.approx((1.0 + 2 / 3) / 2)
    assert (pre["abstention_precision"], pre["abstention_recall"]) == (1.0, 1.0)
    dep = summary["by_intent"]["dependents"]["loop"]
    assert dep["coverage"] == 0.0 and dep["selective_accuracy"] is None
    assert dep["abstention_precision"] == 0.0 and dep["f1"] == 0.0


def test_report_tables_list_intents_and_failing_phrasings() -> None:
    """The intent table has a row per intent and an 'all' row; the failure table lists exactly the
    two misses with their templates."""
    rows, summary = _synthetic_run()
    table = intent_table(summary["by_intent"], summary["overall"], "loop")
    lines = table.splitlines()
    assert lines[0].startswith("| intent |") and len(lines) == 2 + 3
    assert any(line.startswith("| dependents | 1 |") for line in lines)
    n, failures = failure_table(rows, "loop")
    assert n == 2
    assert "| p2 | prerequisites |" in failures and "t-p2" in failures and "| d1 |" in failures
    assert "abstained: low" in failures and "| p1 |" not in failures


def test_eval_runs_a_question_file_against_a_bundle(tmp_path: Path) -> None:
    """kg eval --questions FILE --bundle DIR imports the bundle into a fresh database, scores the
    loop per intent and writes the failing phrasings."""
    from typer.testing import CliRunner

    from control_plane.surfaces.cli import app

    picked = [q for q in _split("prereqmap", "dev") if q.asks in {"prerequisites", "lessons_covering"}][:6]
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("".join(json.dumps(q.to_dict()) + "\n" for q in picked), encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--questions",
            str(qfile),
            "--bundle",
            str(PREREQMAP),
            "--baseline",
            "loop",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert set(report["summary"]["by_intent"]) == {q.asks for q in picked}
    assert report["meta"]["bundle"] == str(PREREQMAP)
    assert "## Per intent: loop" in (out / "report.md").read_text()
    assert statistics.fmean(1.0 for _ in report["questions"]) == 1.0 and len(report["questions"]) == 6


def test_eval_refuses_db_and_bundle_together(tmp_path: Path) -> None:
    """--db and --bundle name two different graphs: a clear error, no report."""
    from typer.testing import CliRunner

    from control_plane.surfaces.cli import app

    args = ["eval", "--db", f"sqlite:///{tmp_path}/x.sqlite3", "--bundle", str(PREREQMAP)]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "o")])
    assert result.exit_code != 0 and "--bundle" in result.output and not (tmp_path / "o").exists()
