"""The LectureBank question sets: their files and templates, the split, gold that does not depend
on which rows break the map's cycles, names as learners type them, and `kg eval --set-aside`.

The map itself is not in the project: tests that need it read ``../shared/dev-graphs/lecturebank``
(or ``$KG_DEV_GRAPHS``) and are skipped with a note when it is not there. A failure names question
or template ids only, never a phrasing: the test file is scored, not read."""

from __future__ import annotations

import csv
import functools
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from typer.testing import CliRunner

from control_plane.surfaces.cli import app
from evals import corpus, gold
from evals.dev_graphs import dev_graph, dev_graphs_folder
from evals.questions import load_questions, read_rows

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "evals" / "questions"
SPLITS = ("dev", "test")
BUNDLE = dev_graph("lecturebank", os.environ)
needs_map = pytest.mark.skipif(
    BUNDLE is None,
    reason=f"no LectureBank map in {dev_graphs_folder(os.environ)} (../shared/dev-graphs, or set "
    "KG_DEV_GRAPHS): the sets' gold is checked where the map is",
)
ENV = {"KG_SYNTHESIZER": "offline", "DEEPSEEK_API_KEY": "", "KG_DATABASE_URL": "", "COLUMNS": "200"}


def _builder() -> ModuleType:
    return corpus.load_builder("build_lecturebank")


def _file(split: str) -> Path:
    return QUESTIONS / f"lecturebank_{split}.jsonl.gz"


def _fail_unless(problems: list[str], what: str) -> None:
    """Fail listing the ids that break ``what`` (no phrasing reaches the report)."""
    if problems:
        pytest.fail(f"{what}: {sorted(problems)}", pytrace=False)


@functools.cache
def _graph() -> Any:
    assert BUNDLE is not None
    return _builder().load_graph(BUNDLE)


@functools.cache
def _made() -> tuple[Any, ...]:
    return tuple(_builder().build(_graph()))


# -- files, templates, split (no map needed) --------------------------------------------------------


@pytest.mark.parametrize("split", SPLITS)
def test_every_row_loads_and_names_its_corpus_split_and_a_template_of_that_split(split: str) -> None:
    """Each file loads with the question loader, holds 250-400 questions of dealt templates (a
    later dev round comes on top), and every row names the lecturebank corpus, the file's split
    and a template of that split."""
    templates = {t.id: t for t in _builder().load_templates()}
    questions = load_questions(_file(split))
    rows = read_rows(_file(split))
    dealt = [q for q in questions if not templates[q.template or ""].later]
    assert 250 <= len(dealt) <= 400
    assert split == "dev" or len(dealt) == len(questions)
    _fail_unless(
        [
            r["id"]
            for r in rows
            if r.get("corpus") != "lecturebank"
            or r.get("split") != split
            or templates[r["template"]].split != split
        ],
        "rows of another corpus or split",
    )


def test_the_templates_are_dealt_once_and_every_wording_is_one_templates() -> None:
    """Every group of templates is split evenly (at most one apart) and no two templates share a
    text (so no wording is in both splits)."""
    templates = _builder().load_templates()
    _builder().check_dealing(templates)
    by_text: dict[str, list[str]] = {}
    for t in templates:
        by_text.setdefault(t.text.lower(), []).append(t.id)
    _fail_unless([t.id for t in templates if len(by_text[t.text.lower()]) > 1], "shared wordings")


def test_dealing_a_new_template_moves_no_other() -> None:
    """``--deal`` gives a split only to templates without one, to the split with fewer of its kind."""
    b = _builder()
    templates = b.load_templates()
    new = b.Template(id="lb-new-01", form="prerequisites", cls="plain", text="prereqs of {x}?", split="")
    dealt = b.deal([*templates, new])
    assert [t.split for t in dealt[:-1]] == [t.split for t in templates]
    assert dealt[-1].split in SPLITS


def test_every_later_round_template_is_dev_and_of_round_two() -> None:
    """A template written after the dealing (round 2) is dev only and takes no part in it: a new
    template of any form is dealt as it would be without the later rounds, and the balance check
    counts dealt templates only."""
    b = _builder()
    templates = b.load_templates()
    later = [t for t in templates if t.round is not None]
    assert later and {t.round for t in later} == {2}
    _fail_unless([t.id for t in later if not t.later], "later-round templates outside dev")
    dealt = [t for t in templates if not t.later]
    b.check_dealing(templates)
    for t in later:
        new = b.Template(**{**t.__dict__, "id": f"new-{t.id}", "split": "", "round": None})
        assert b.deal([*templates, new])[-1].split == b.deal([*dealt, new])[-1].split, t.id


@pytest.mark.parametrize(("split", "value"), [("test", 2), ("dev", 1), ("dev", 3)])
def test_a_later_round_outside_dev_or_of_another_round_is_refused(
    tmp_path: Path, split: str, value: int
) -> None:
    """A round on a test row, or a round other than 2 on a dev row, is refused, naming the template."""
    rows = read_rows(_builder().TEMPLATES)
    first = next(i for i, r in enumerate(rows) if r.get("split") == split and "round" not in r)
    changed = [*rows[:first], {**rows[first], "round": value}, *rows[first + 1 :]]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in changed), encoding="utf-8")
    with pytest.raises(ValueError, match="a later round is dev only") as info:
        _builder().load_templates(path)
    assert rows[first]["id"] in str(info.value)


def test_later_round_questions_follow_the_earlier_ones_in_dev() -> None:
    """The dev file lists every dealt question before any round-2 one, so adding a round leaves
    the earlier questions where they were."""
    rounds = {t.id: t.round if t.later else 1 for t in _builder().load_templates()}
    order = [rounds[r["template"]] for r in read_rows(_file("dev"))]
    assert order == sorted(order) and set(order) == {1, 2}


@pytest.mark.parametrize("split", SPLITS)
def test_every_question_is_well_formed_for_its_type(split: str) -> None:
    """Answerable questions have 1-15 gold concepts or a finding; abstain questions name no
    concept; only misspelt, ambiguous and partial names suggest, and they always do; time words
    before the map's valid time (2018-01-01) abstain, later ones are answered."""
    problems = []
    for q in load_questions(_file(split)):
        suggests = q.type in ("misspelt", "ambiguous_name", "partial_name")
        wrong_gold = q.concepts if q.abstain else not (1 <= len(q.concepts) <= 15 or q.finding)
        timed = q.expect_as_of is not None and q.type != "unanswerable"
        early = timed and str(q.expect_as_of) < "2018-01-01"
        if wrong_gold or bool(q.suggest) != suggests or (timed and q.abstain != early):
            problems.append(q.id)
    _fail_unless(problems, "ill-formed questions")


@pytest.mark.parametrize("split", SPLITS)
def test_each_split_asks_every_form_and_every_abstain_class(split: str) -> None:
    """Every form the issue lists, every abstain class and every names-template style is in both
    splits."""
    questions = load_questions(_file(split))
    asked = {q.asks for q in questions} | {q.type for q in questions}
    wanted = {
        *_builder().ANSWERABLE,
        *_builder().ABSTAIN,
        *_builder().ABSENT,
        "temporal",
        "unanswerable",
    }
    assert wanted <= asked
    styles = {t.style for t in _builder().load_templates() if t.split == split}
    assert {"apostrophe", "qualifier", "abbreviation", "joined", "contains"} <= styles


@needs_map
@pytest.mark.parametrize("split", SPLITS)
def test_each_split_writes_names_in_every_style(split: str) -> None:
    """Answerable questions of both splits write names as stored, in lower case and in every
    variant style, each at least twice."""
    b = _builder()
    styles = [b.style_of(m) for m in _made() if m.split == split]
    assert all(styles.count(s) >= 2 for s in ("stored", "lower", *b.NAME_STYLES))


# -- names (pure) --------------------------------------------------------------------------------


def test_names_a_learner_could_not_tell_apart_are_refused() -> None:
    """Two concepts whose names fold to one spelling (number, a qualifier, a dropped hyphen) leave
    the builder no way to write either unambiguously: it refuses the map."""
    names = _builder().Names
    for clash in (
        {"a": "Decision Trees", "b": "decision tree"},
        {"a": "Motion (physics)", "b": "Motion"},
        {"a": "K-nn", "b": "KNN"},
    ):
        with pytest.raises(ValueError, match="cannot tell apart"):
            names.build(clash)


def test_every_variant_is_one_concepts_name_and_the_rules_make_the_learners_spellings() -> None:
    """Variants come from the rules (apostrophe, hyphen, joined, qualifier, abbreviation, number)
    and each folds to exactly its own concept."""
    names = _builder().Names.build(
        {
            "cnn": "CNN's",
            "em": "Expectation-Maximization (EM) Algorithm",
            "it": "Information Theory: coding",
            "knn": "K-nn",
            "fol": "First-order logic",
            "cfg": "Context Free Grammar",
            "dt": "Decision Trees",
        }
    )
    got = {cid: {text for _, text in v} for cid, v in names.variants.items()}
    assert {"CNNs", "CNN"} <= got["cnn"]
    assert {"EM Algorithm", "EM", "Expectation-Maximization Algorithm"} <= got["em"]
    assert "information theory" in got["it"] and "knn" in got["knn"]
    assert "first order logic" in got["fol"] and "context-free grammar" in got["cfg"]
    assert "decision tree" in got["dt"]
    assert all(names.owners(text) == {cid} for cid, texts in got.items() for text in texts)


def test_a_head_word_is_ambiguous_only_when_several_names_have_it() -> None:
    """``containing`` finds every name holding a word whole (plural folded), not inside a word."""
    names = _builder().Names.build(
        {
            "lr": "Linear Regression",
            "logr": "Logistic Regression",
            "r": "Regressions tutorial",
            "x": "Aggression",
        }
    )
    assert names.containing("regression") == {"lr", "logr", "r"}
    assert names.owners("regression") == set()


# -- the cycle rule (pure) ---------------------------------------------------------------------------


def _tiny(edges: list[tuple[str, str]]) -> Any:
    """A builder Graph over ``edges`` (all prerequisite), concepts named by their ids."""
    b = _builder()
    nodes = sorted({n for e in edges for n in e})
    view = gold.GraphView.of(nodes, {(s, t, "prerequisite") for s, t in edges})
    return b.Graph.of(view, b.Names.build({n: n for n in nodes}))


def test_a_gold_that_depends_on_which_cycle_row_is_set_aside_is_not_asked() -> None:
    """With ``dr`` and ``svd`` each before the other (both after ``la``), the prerequisites of
    either and what a learner knowing ``la`` can do next depend on the row an import sets aside,
    so neither is asked; the prerequisites of ``pca`` (after both) do not, so they are."""
    judge = _builder().Judge(
        _tiny([("la", "dr"), ("la", "svd"), ("dr", "svd"), ("svd", "dr"), ("svd", "pca"), ("dr", "pca")])
    )
    assert judge.gold("prerequisites", None, None, ("dr",)) is None
    assert judge.gold("next", None, None, ("la",)) is None
    _, answer = judge.gold("prerequisites", None, None, ("pca",))
    assert answer.concepts == {"dr", "svd"}


def test_next_is_asked_where_a_cycle_member_can_never_open() -> None:
    """A concept whose only prerequisites lie on a cycle the learner does not know is out at both
    ends and everywhere between, so "what next" is still asked (``b`` opens ``c`` only)."""
    judge = _builder().Judge(_tiny([("a", "b"), ("b", "c"), ("k", "r"), ("r", "k")]))
    _, answer = judge.gold("next", None, None, ("b",))
    assert answer.concepts == {"c"}


def test_relate_is_asked_only_where_no_cycle_edge_is_in_reach() -> None:
    """Two concepts whose ancestors hold a cycle are not asked how they relate; two that do not
    are."""
    judge = _builder().Judge(_tiny([("p", "q"), ("q", "p"), ("p", "x"), ("p", "y"), ("u", "v"), ("u", "w")]))
    assert judge.gold("relate", None, None, ("x", "y")) is None
    case, answer = judge.gold("relate", None, None, ("v", "w"))
    assert case == "shared_foundations" and answer.concepts == {"u"}


# -- the sets against the map (needs ../shared) ----------------------------------------------------


@needs_map
def test_the_committed_files_are_what_the_builder_makes() -> None:
    """``python evals/questions/build_lecturebank.py --check`` holds: the files are current."""
    fresh = _builder().texts(list(_made()))
    from evals.questions import read_text

    _fail_unless([p.name for p, text in fresh.items() if read_text(p) != text], "stale files")


def _expected(m: Any) -> Any:
    q = m.question
    return _builder().Gold(frozenset(q.concepts), dict(q.finding), q.match)


@needs_map
def test_every_gold_is_the_same_at_both_ends_of_the_cycle_range() -> None:
    """Every answerable question's gold, recomputed with evals.gold on the map with every edge and
    on the map without any edge inside a cycle, is the committed gold."""
    b, g = _builder(), _graph()
    problems = []
    for end in (g.full_view, g.bare_view):
        judge = b.Judge(g.at(end))
        for m in _made():
            if m.subject and not m.question.abstain:
                t = m.template
                got = judge.gold(t.form, t.scope, t.of, m.subject)
                if got is None or got[1] != _expected(m):
                    problems.append(m.question.id)
    _fail_unless(problems, "gold that depends on the cycle rows")


@needs_map
def test_every_gold_holds_on_the_map_an_import_keeps(tmp_path: Path) -> None:
    """The rows `kg import --set-aside` sets aside all lie on cycles, and on the map it keeps every
    answerable question's gold is the committed gold."""
    from control_plane.surfaces.runtime import ensure_initialised
    from data_plane.bundle import ImportPolicy, check_bundle
    from data_plane.database import connect
    from data_plane.reads import GraphReader

    assert BUNDLE is not None
    url = f"sqlite:///{tmp_path}/kg.sqlite3"
    ensure_initialised(url, load_curriculum=False)
    engine = connect(url)
    try:
        plan = check_bundle(GraphReader(engine), BUNDLE, policy=ImportPolicy(set_aside=True))
    finally:
        engine.dispose()
    aside = {s.line for s in plan.set_asides() if s.file == "concept_edges.csv"}
    with (BUNDLE / "concept_edges.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    kept = [(r["source_id"], r["target_id"]) for n, r in enumerate(rows, start=2) if n not in aside]
    dropped = {(r["source_id"], r["target_id"]) for n, r in enumerate(rows, start=2) if n in aside}
    g = _graph()
    assert plan.ok and dropped and dropped <= g.cycle_edges
    view = gold.GraphView.of(g.full_view.concepts, {(s, t, "prerequisite") for s, t in kept})
    b = _builder()
    judge = b.Judge(g.at(view))
    problems = []
    for m in _made():
        if m.subject and not m.question.abstain:
            got = judge.gold(m.template.form, m.template.scope, m.template.of, m.subject)
            if got is None or got[1] != _expected(m):
                problems.append(m.question.id)
    _fail_unless(problems, "gold that the imported map does not give")


@needs_map
def test_every_name_list_does_what_it_says_on_the_map() -> None:
    """Misspellings are one or two slips from their concept and further from every other, head
    words are in the names the lists say, unknown topics name nothing (the builder refuses
    otherwise), and every suggestion lists a concept of the map."""
    b, g = _builder(), _graph()
    b.check_names(g.names)
    concepts = set(g.concepts)
    _fail_unless(
        [m.question.id for m in _made() if not set(m.question.suggest) <= concepts], "unknown suggestions"
    )
    assert g.names.containing("regression") == {"linear_regression", "logistic_regression"}
    assert g.names.owners("CNNs") == {"cnn_s"} and g.names.owners("EM") == {
        "expectation_maximization_em_algorithm"
    }


# -- kg eval --set-aside ---------------------------------------------------------------------------


def _cyclic_bundle(folder: Path) -> Path:
    folder.mkdir()
    (folder / "manifest.json").write_text(
        json.dumps(
            {
                "format": "kg-bundle/1",
                "name": "cyclic",
                "defaults": {
                    "source": "test",
                    "reason": "a test map",
                    "confidence": 0.8,
                    "evidence": {"test": "a cycle"},
                    "valid_at": "2018-01-01",
                },
            }
        )
    )
    (folder / "concepts.csv").write_text("id,name\na,Alpha\nb,Beta\nc,Gamma\n")
    (folder / "concept_edges.csv").write_text(
        "source_id,target_id,relation\na,b,prerequisite\nb,a,prerequisite\nb,c,prerequisite\n"
    )
    return folder


def test_kg_eval_refuses_a_map_with_cycles_unless_told_to_set_rows_aside(tmp_path: Path) -> None:
    """`kg eval --bundle` refuses a map with a prerequisite cycle, naming --set-aside; with
    --set-aside it imports the rest, scores, and records the option; --set-aside without --bundle
    is refused."""
    bundle = _cyclic_bundle(tmp_path / "map")
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps(
            {
                "id": "q1",
                "question": "What is Gamma?",
                "type": "about",
                "expect": {"concepts": ["c"], "match": "contains"},
            }
        )
        + "\n"
    )
    base = ["eval", "--questions", str(questions), "--bundle", str(bundle), "--baseline", "loop"]
    refused = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "no")], env=ENV)
    assert refused.exit_code != 0 and "--set-aside" in refused.output
    done = CliRunner().invoke(app, [*base, "--set-aside", "--out", str(tmp_path / "yes")], env=ENV)
    assert done.exit_code == 0, done.output
    report = json.loads((tmp_path / "yes" / "report.json").read_text())
    assert report["meta"]["set_aside"] is True and report["meta"]["questions"] == 1
    alone = ["eval", "--questions", str(questions), "--set-aside", "--out", str(tmp_path / "x")]
    lone = CliRunner().invoke(app, alone, env=ENV)
    assert lone.exit_code != 0 and "--bundle" in lone.output


@needs_map
@pytest.mark.slow
def test_the_dev_set_scores_end_to_end_on_the_map(tmp_path: Path) -> None:
    """`kg eval --set-aside` scores every dev question on the real map without a crash."""
    args = ["eval", "--questions", str(_file("dev")), "--bundle", str(BUNDLE), "--set-aside"]
    done = CliRunner().invoke(app, [*args, "--baseline", "loop", "--out", str(tmp_path / "dev")], env=ENV)
    assert done.exit_code == 0, done.output
    report = json.loads((tmp_path / "dev" / "report.json").read_text())
    assert report["meta"]["questions"] == len(load_questions(_file("dev")))
    _fail_unless([q["id"] for q in report["questions"] if q["results"]["loop"]["crashed"]], "crashes")


# -- the report step -----------------------------------------------------------------------------


def test_the_report_step_skips_with_a_note_when_the_map_is_absent(tmp_path: Path) -> None:
    """Without the map, `report_all --only lecturebank` runs nothing and says why, under a title
    no docs table has (so the docs keep their last measured table)."""
    from evals import report_all

    ctx = report_all.Context(tmp_path / "lecturebank", False, None, dev_graphs=tmp_path / "nowhere")
    (section,) = report_all.lecturebank(ctx)
    assert section.title.endswith("(skipped)") and "no LectureBank graph" in section.table
    assert not any(tmp_path.iterdir())


def test_a_breakdown_shows_coverage_and_selective_accuracy_per_group_and_split() -> None:
    """Per group: questions answered / questions, and exact answers / answers (``-`` when none
    was answered); questions of no group are left out."""
    from evals.summary_tables import breakdown_table, group_shares

    def result(abstained: bool, exact: bool) -> dict[str, Any]:
        return {"results": {"loop": {"abstained": abstained, "exact_match": exact}}}

    report = {
        "questions": [
            {"id": "a", **result(False, True)},
            {"id": "b", **result(False, False)},
            {"id": "c", **result(True, False)},
            {"id": "d", **result(True, False)},
            {"id": "e", **result(False, True)},
        ]
    }
    shares = group_shares(report, {"a": "lower", "b": "lower", "c": "lower", "d": "joined"})
    assert shares["lower"] == {"n": 3, "coverage": 2 / 3, "selective_accuracy": 0.5}
    assert shares["joined"]["selective_accuracy"] is None
    table = breakdown_table("names written", [("dev", shares), ("test", {"lower": shares["lower"]})])
    assert table.splitlines()[2:] == [
        "| joined | 0.00 / - (1) | - |",
        "| lower | 0.67 / 0.50 (3) | 0.67 / 0.50 (3) |",
    ]
