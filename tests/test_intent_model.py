"""The learnt second reading (control_plane.understanding.intent_model): features, training,
the rule that doubts the grammar, the committed model's freshness, and the loop abstaining when
the two readings disagree."""

from __future__ import annotations

import gzip
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import Engine

from control_plane.planning.loop import UNSURE, Planner
from control_plane.synthesizers.offline import OfflineSynthesizer
from control_plane.understanding import intent_model
from control_plane.understanding.intent_model import (
    DISAGREE,
    NAME,
    IntentModel,
    compatible_labels,
    default_model,
    dump,
    features,
    load,
    phrasing_tokens,
    question_tokens,
    second_opinion,
    train,
)
from control_plane.understanding.interpretation import interpret, mentions_in
from control_plane.understanding.lexicon import respelt
from control_plane.understanding.names import NameIndex, normalise
from data_plane import GraphReader, WriteGateway
from data_plane.testing import ManualClock, build_graph
from evals import intent_training

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
INDEX = NameIndex.from_names([("rag", "Retrieval-augmented generation", ("RAG",)), ("emb", "Embeddings", ())])


def toy(examples: list[tuple[str, str]], copies: int = 1) -> IntentModel:
    return train([(phrasing_tokens(t), label) for t, label in examples for _ in range(copies)])


# -- features and training ---------------------------------------------------------------------


def test_features_are_words_and_adjacent_pairs() -> None:
    assert features(("what", "is", NAME)) == {"what", "is", NAME, "what is", f"is {NAME}"}


def test_a_name_is_one_token_in_phrasings_and_in_questions() -> None:
    """'{x}' in a corpus phrasing and a recognised name in a question become the same token."""
    assert phrasing_tokens("What builds on {x}?") == ("what", "build", "on", NAME)
    toks = normalise("What builds on retrieval-augmented generation?")
    assert question_tokens(toks, [(3, 6)]) == ("what", "build", "on", NAME)


@settings(max_examples=60, deadline=None)
@given(
    before=st.lists(
        st.sampled_from(["what", "comes", "after", "prereqs", "of", "lessons", "for"]), max_size=5
    ),
    after=st.lists(st.sampled_from(["please", "directly", "only", "next", "whole", "chain"]), max_size=4),
    name=st.lists(st.sampled_from(["graph", "neural", "network", "bayes", "x"]), min_size=1, max_size=3),
)
def test_training_and_questions_see_the_same_tokens(
    before: list[str], after: list[str], name: list[str]
) -> None:
    """No skew between training and use: a phrasing with ``{x}`` and the same question with a
    name filled in (its span known, as the reader knows it) give the same model tokens."""
    template = " ".join([*before, "{x}", *after])
    question = template.replace("{x}", " ".join(name))
    toks = tuple(respelt(t) for t in normalise(question))
    start = len(normalise(" ".join(before)))
    span = (start, start + len(normalise(" ".join(name))))
    assert question_tokens(toks, [span]) == phrasing_tokens(template)


def test_training_learns_each_label_and_round_trips() -> None:
    model = toy([("what comes after {x} after", "dependents"), ("prereqs of {x}", "prerequisites")], copies=3)
    assert model.documents == {"dependents": 3, "prerequisites": 3}
    assert model.labels == ("dependents", "prerequisites")
    after = model.scores(features(phrasing_tokens("what comes after {x}")))
    assert after["dependents"] > after["prerequisites"]
    again = IntentModel.from_dict(json.loads(json.dumps(model.to_dict())))
    assert again == model and again.scores(features(("after",))) == model.scores(features(("after",)))


def test_the_stored_form_is_compact_and_the_same_bytes_for_the_same_model(tmp_path: Path) -> None:
    """The model file is gzip-compressed canonical JSON with no time stamp: storing a model twice
    gives the same bytes, and loading them gives the same model back."""
    model = toy([("what comes after {x} after", "dependents"), ("prereqs of {x}", "prerequisites")], copies=3)
    assert dump(model) == dump(model)
    (tmp_path / "m.json.gz").write_bytes(dump(model))
    assert load(tmp_path / "m.json.gz") == model
    assert json.loads(gzip.decompress(dump(model)))["format"] == "kg-intent-model/2"


def test_a_feature_counts_once_per_phrasing() -> None:
    """A word said twice in one phrasing is one feature: the model learns the same weights."""
    once = toy([("after {x} after {x}", "dependents"), ("prereqs of {x}", "prerequisites")])
    twice = toy([("after {x} after {x} after {x}", "dependents"), ("prereqs of {x}", "prerequisites")])
    assert once.weights["after"] == twice.weights["after"]


def test_scores_are_the_bias_plus_the_weights_of_seen_features() -> None:
    """Softmax regression: a label's score is its bias plus its weight for every feature the
    model has seen; unseen features add nothing (checked against the sum written out)."""
    model = toy(
        [("after {x}", "dependents"), ("after {x} next", "dependents"), ("before {x}", "prerequisites")]
    )
    feats = {"after", "next", "never-seen"}
    for i, label in enumerate(model.labels):
        expected = model.bias[i] + sum(model.weights[f][i] for f in feats if f in model.weights)
        assert model.scores(feats)[label] == pytest.approx(expected)
        assert model.evidence(feats)[label] == pytest.approx(expected - model.bias[i])


def test_overlapping_features_do_not_outvote_word_order() -> None:
    """A phrase commoner in one label's phrasings ("directly or indirectly") does not outweigh the
    word order the other label's phrasings share ("{x} depends on" against "depends on {x}")."""
    model = toy(
        [
            ("everything that depends on {x}, directly or indirectly", "comes_after"),
            ("all topics depending on {x} directly or indirectly", "comes_after"),
            ("what depends on {x} directly or indirectly", "comes_after"),
            ("list what relies on {x}, directly or indirectly", "comes_after"),
            ("everything {x} depends on", "needed_before"),
            ("what {x} depends on, all the way down", "needed_before"),
            ("topics {x} depends on, directly or indirectly", "needed_before"),
        ],
        copies=3,
    )
    s = model.scores(features(phrasing_tokens("list every topic {x} depends on, directly or indirectly")))
    assert s["needed_before"] > s["comes_after"]


def test_training_is_deterministic() -> None:
    examples = [("after {x}", "dependents"), ("before {x}", "prerequisites"), ("parts of {x}", "parts")]
    assert toy(examples, copies=2) == toy(examples, copies=2)


def test_a_file_that_is_not_a_model_is_refused() -> None:
    with pytest.raises(ValueError, match="kg-intent-model/2"):
        IntentModel.from_dict({"format": "kg-intent-model/1", "documents": {}, "counts": {}})
    with pytest.raises(ValueError, match="one weight per label"):
        IntentModel(labels=("a", "b"), bias=(0.0, 0.0), weights={"x": (1.0,)}, documents={"a": 1, "b": 1})
    with pytest.raises(ValueError, match="no examples"):
        train([])


def test_the_freshness_check_compares_numbers_within_a_tolerance() -> None:
    """A weight off in the last stored decimal (another machine's floating point) is the same
    model; a weight off by more, or another feature set, is a stale one."""
    from dataclasses import replace

    model = toy([("after {x}", "dependents"), ("before {x}", "prerequisites")])
    nudged = {f: tuple(x + 0.001 for x in w) for f, w in model.weights.items()}
    assert intent_training.differences(replace(model, weights=nudged), model) == []
    moved = {f: tuple(x + 0.1 for x in w) for f, w in model.weights.items()}
    assert intent_training.differences(replace(model, weights=moved), model)
    fewer = dict(list(model.weights.items())[1:])
    assert intent_training.differences(replace(model, weights=fewer), model)


# -- the rule ----------------------------------------------------------------------------------

MODEL = toy(
    [
        ("what does {x} contrast with", "contrasts"),
        ("alternatives to {x}", "contrasts"),
        ("what are the prerequisites of {x}", "prerequisites"),
        ("from {x} to {y}: which steps", "path"),
    ],
    copies=5,
)


def test_the_model_doubts_a_reading_only_by_a_wide_margin() -> None:
    tokens = phrasing_tokens("alternatives to {x}, what does {x} contrast with")
    doubt = second_opinion(MODEL, tokens, ("prerequisites",))
    assert doubt is not None and doubt[0] == "contrasts" and doubt[1] >= DISAGREE
    assert second_opinion(MODEL, tokens, ("contrasts",)) is None  # agrees
    assert second_opinion(MODEL, tokens, ()) is None  # nothing to check against
    weak = phrasing_tokens("alternatives {x}")
    best, margin = second_opinion(MODEL, weak, ("prerequisites",)) or ("", 0.0)
    scores = MODEL.evidence(features(weak))
    assert (best != "") == (scores["contrasts"] - scores["prerequisites"] >= DISAGREE)
    assert margin == 0.0 or margin >= DISAGREE


def test_a_path_is_no_rival_to_a_question_naming_one_concept() -> None:
    tokens = phrasing_tokens("from {x} to which steps")
    assert second_opinion(MODEL, tokens, ("prerequisites",), concepts=2) is not None
    found = second_opinion(MODEL, tokens, ("prerequisites",), concepts=1)
    assert found is None or found[0] != "path"


def test_compatible_labels_follow_scope_and_leave_unlabelled_readings_alone() -> None:
    assert compatible_labels("needed_before", transitive=False, combined=False) == (
        "prerequisites",
        "foundations",
    )
    assert compatible_labels("dependents", transitive=True, combined=False) == ("comes_after",)
    assert compatible_labels("contrasts", transitive=False, combined=True) == ()
    assert compatible_labels("a_relation_of_some_graph", transitive=False, combined=False) == ()


# -- in the reader and the loop ----------------------------------------------------------------


def test_a_doubted_reading_is_unsure_and_says_what_else_it_could_mean() -> None:
    """The grammar reads 'prerequisites of RAG'; a model that learnt this very wording as a
    contrast question makes the reading unsure and names the contrast reading."""
    q = "What are the prerequisites of RAG?"
    fooled = toy(
        [("what are the prerequisites of {x}", "contrasts"), ("before {x}", "prerequisites")], copies=20
    )
    plain = interpret(q, mentions_in(q, INDEX), now=NOW, model=None)
    doubted = interpret(q, mentions_in(q, INDEX), now=NOW, model=fooled)
    assert plain.sure and plain.intent == "prerequisites" and not plain.doubt
    assert not doubted.sure and doubted.intent == "prerequisites"
    assert doubted.doubt.startswith("what RAG contrasts with (log-odds")
    assert doubted.suggestions and doubted.to_dict()["doubt"] == doubted.doubt


def test_the_committed_model_agrees_with_plain_questions() -> None:
    """The shipped model does not doubt the plainest phrasing of each intent (no false alarms on
    what the grammar was built for), nor a bare name: the check vetoes on the question's words,
    and a name alone says nothing against "what is X" (by its prior the model once called it bad
    input)."""
    for q in (
        "What are the prerequisites of RAG?",
        "What comes after RAG?",
        "What does RAG build on?",
        "What is RAG part of?",
        "Which lessons cover RAG?",
        "What is RAG?",
        "What contrasts with RAG?",
        "Everything I need before RAG?",
        "RAG?",
        "RAG",
    ):
        r = interpret(q, mentions_in(q, INDEX), now=NOW)
        assert r.sure and not r.doubt, q


def test_the_loop_abstains_on_a_doubted_reading(sqlite_engine: Engine) -> None:
    clock = ManualClock(now=datetime(2024, 1, 1, tzinfo=UTC))
    build_graph(
        WriteGateway(sqlite_engine, clock=clock),
        ["algebra", "calculus", ("rag", "RAG", [])],
        [("algebra", "calculus", "prerequisite"), ("calculus", "rag", "prerequisite")],
    )
    fooled = toy(
        [("what are the prerequisites of {x}", "contrasts"), ("before {x}", "prerequisites")], copies=20
    )
    reader = GraphReader(sqlite_engine, clock=clock)
    q = "What are the prerequisites of RAG?"
    trusted = Planner(reader, OfflineSynthesizer(), clock=clock, intent_model=None).ask(q, record=False)
    doubted = Planner(reader, OfflineSynthesizer(), clock=clock, intent_model=fooled).ask(q, record=False)
    assert not trusted.abstained and trusted.result is not None and trusted.result.members == ("calculus",)
    assert doubted.abstained and doubted.llm_calls == 0
    assert doubted.abstain_reason is not None and doubted.abstain_reason.startswith(UNSURE)
    assert "it could also mean: what RAG contrasts with" in doubted.abstain_reason


# -- the committed model -----------------------------------------------------------------------


@pytest.mark.slow  # trains the model
def test_the_committed_model_is_fresh_and_never_learnt_from_held_out_splits() -> None:
    """``python -m evals.intent_training --check`` passes, and neither the test split nor the
    holdout measuring this reader is among the files it learnt from."""
    assert intent_training.main(["--check"]) == 0
    model = default_model()
    assert model is not None and model.trained_on
    for name in model.trained_on:
        assert intent_training.split_of(Path(name)) not in intent_training.HELD_OUT, name
    assert set(model.labels) >= {"prerequisites", "needed_before", "dependents", "comes_after", "bad_input"}
    assert intent_model.MODEL_FILE.exists()


def test_the_model_learns_each_round_under_the_name_of_the_file_it_was_written_in() -> None:
    """Every round of the template file is one source, named as its file once was and called by
    its split (dev rounds are all ``dev``), in the order of those names; the held-out ones are
    not learnt."""
    names = {
        ("dev", 1): ("paraphrase_templates_dev.jsonl", "dev"),
        ("dev", 3): ("paraphrase_templates_dev_round3.jsonl", "dev"),
        ("test", 1): ("paraphrase_templates_test.jsonl", "test"),
        ("holdout", 1): ("paraphrase_templates_holdout.jsonl", "holdout"),
        ("holdout", 17): ("paraphrase_templates_holdout17.jsonl", "holdout17"),
    }
    for (split, round_), (name, called) in names.items():
        assert intent_training.source_name(split, round_) == name
        assert intent_training.split_of(Path(name)) == called
    sources = intent_training.sources()
    assert [s.name for s in sources] == sorted(s.name for s in sources) and len(sources) == 32
    learnt = {s.split for s in intent_training.training_sources()}
    assert "dev" in learnt and "holdout15" in learnt and not learnt & set(intent_training.HELD_OUT)


def test_the_sweep_counts_what_the_check_would_have_caught(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``evals.second_reading sweep`` over recorded readings: a wrong answer whose reading the
    model doubts is caught; a right one it agrees with is kept."""
    from evals import second_reading

    def row(question: str, intent: str, right: bool) -> dict[str, object]:
        start = normalise(question).index("rag")
        reading = {
            "spans": [(start, start + 1)],
            "intent": intent,
            "transitive": False,
            "combined": False,
            "sure": True,
        }
        return {"question": question, "answered": True, "right": right, "reading": reading}

    data = {
        "split": "holdout99",
        "graph": "curriculum",
        "rows": [
            row("what are the alternatives to rag, what does rag contrast with?", "prerequisites", False),
            row("what are the prerequisites of rag?", "prerequisites", True),
        ],
    }
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    second_reading.main(["sweep", str(path)])
    out = capsys.readouterr().out
    assert f"selective accuracy at {DISAGREE}: 0.500 -> 1.000" in out
    assert re.search(rf"{DISAGREE}\s+1\s+0\s+1\s+1\s", out)


def test_scores_do_not_depend_on_the_order_features_arrive_in() -> None:
    """A question's features are a set, whose order follows the process's hash seed: the scores
    (and the doubt's rounded log-odds an abstention quotes) are the same whatever that order.
    Float addition is not associative: 1e16 + 1 - 1e16 is 0 one way and 1 the other."""
    model = IntentModel(
        labels=("a", "b"),
        bias=(0.0, 0.0),
        weights={"big": (1e16, 0.0), "one": (1.0, 0.0), "minus": (-1e16, 0.0)},
        documents={"big": 1, "one": 1, "minus": 1},
    )
    orders = [["big", "one", "minus"], ["big", "minus", "one"], ["one", "minus", "big"]]
    assert len({model.scores(order)["a"] for order in orders}) == 1
