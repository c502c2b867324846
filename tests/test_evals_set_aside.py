"""``expect.set_aside``: the question format's field and its scoring (evals.questions, evals.metrics)
and how the loop's answer carries it (evals.baselines.set_aside_parts)."""

from __future__ import annotations

from typing import Any

import pytest

from data_plane.errors import InputError
from evals.baselines import set_aside_parts
from evals.metrics import Response, score, summarise
from evals.questions import parse_question


def _row(**expect: Any) -> dict[str, Any]:
    return {
        "id": "q",
        "question": "What needs MATH 3B? Also, which laptop?",
        "type": "dependents",
        "expect": {"concepts": ["math_3c"], "abstain": False, **expect},
    }


def test_set_aside_parses_round_trips_and_defaults_to_false() -> None:
    q = parse_question(_row(set_aside=True))
    assert q.set_aside is True and q.to_dict()["expect"]["set_aside"] is True
    assert parse_question(q.to_dict()) == q
    plain = parse_question(_row())
    assert plain.set_aside is False and "set_aside" not in plain.to_dict()["expect"]
    assert parse_question(_row(set_aside=False)).set_aside is False


def test_set_aside_is_refused_unless_true_or_false_on_an_answerable_question() -> None:
    with pytest.raises(InputError, match="set_aside"):
        parse_question(_row(set_aside="yes"))
    with pytest.raises(InputError, match="set_aside"):
        parse_question(
            {**_row(set_aside=True), "expect": {"concepts": [], "abstain": True, "set_aside": True}}
        )


def _scored(response: Response, *, set_aside: bool, finding: dict[str, Any] | None = None) -> Any:
    return score("q", "dependents", ["math_3c"], False, response, set_aside=set_aside, finding=finding)


def test_set_aside_scoring_needs_a_non_empty_set_aside_list_besides_the_set() -> None:
    right = {"members": ["math_3c"]}
    said = Response(abstained=False, result=right, set_aside=("which laptop to buy",))
    silent = Response(abstained=False, result=right)
    wrong_set = Response(abstained=False, result={"members": ["x"]}, set_aside=("laptop",))
    assert _scored(said, set_aside=True).exact_match and _scored(said, set_aside=True).set_aside_ok
    got = _scored(silent, set_aside=True)
    assert not got.exact_match and got.set_aside_ok is False and got.f1 == 1.0  # F1 is the sets'
    assert not _scored(wrong_set, set_aside=True).exact_match
    # Without expect.set_aside nothing is asked of it, either way.
    assert (
        _scored(silent, set_aside=False).exact_match and _scored(silent, set_aside=False).set_aside_ok is None
    )
    assert _scored(said, set_aside=False).exact_match
    # An abstention is not scored on it (and, on an answerable question, is not right anyway).
    none = _scored(Response(abstained=True), set_aside=True)
    assert not none.exact_match and none.set_aside_ok is None


def test_set_aside_and_a_finding_must_both_be_right() -> None:
    ready = {"members": [], "holds": True}
    both = Response(abstained=False, result=ready, set_aside=("tips for finals week",))
    assert score("q", "ready", [], False, both, set_aside=True, finding={"holds": True}).exact_match
    silent = Response(abstained=False, result=ready)
    assert not score("q", "ready", [], False, silent, set_aside=True, finding={"holds": True}).exact_match
    no_holds = Response(abstained=False, result={"members": []}, set_aside=("tips",))
    assert not score("q", "ready", [], False, no_holds, set_aside=True, finding={"holds": True}).exact_match


def test_summary_reports_set_aside_accuracy() -> None:
    right = {"members": ["math_3c"]}
    scores = [
        _scored(Response(abstained=False, result=right, set_aside=("laptop",)), set_aside=True),
        _scored(Response(abstained=False, result=right), set_aside=True),
        _scored(Response(abstained=False, result=right), set_aside=False),
    ]
    summary = summarise(scores)
    assert summary["set_aside_accuracy"] == 0.5
    assert summarise(scores[2:])["set_aside_accuracy"] is None


def test_a_contains_question_needs_the_set_aside_list_too() -> None:
    about = Response(abstained=False, cited=("math_3c",))
    kw: dict[str, Any] = {"match": "contains", "set_aside": True}
    assert not score("q", "check", ["math_3c"], False, about, **kw).exact_match
    said = Response(abstained=False, cited=("math_3c",), set_aside=("the laptop",))
    assert score("q", "check", ["math_3c"], False, said, **kw).exact_match


def test_blank_parts_do_not_count_as_set_aside() -> None:
    blank = Response(abstained=False, result={"members": ["math_3c"]}, set_aside=("  ",))
    assert _scored(blank, set_aside=True).set_aside_ok is False


def test_set_aside_parts_reads_the_answer_dicts_list() -> None:
    assert set_aside_parts({"set_aside": ["which laptop to buy", "", 3]}) == ("which laptop to buy",)
    assert set_aside_parts({"set_aside": "laptop"}) == () and set_aside_parts({}) == ()
