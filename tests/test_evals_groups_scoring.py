"""``expect.one_of``, ``expect.unmet`` and ``expect.requirements``: the question format's fields for
a graph with requirement groups and their scoring (evals.questions, evals.metrics): a wrong or
missing group makes an answer wrong, and questions without them score as before."""

from __future__ import annotations

from typing import Any

import pytest

from data_plane.errors import InputError
from evals.metrics import GroupsExpected, Response, score, summarise
from evals.questions import parse_question


def _row(**expect: Any) -> dict[str, Any]:
    return {
        "id": "q",
        "question": "What do I need before CSE 101?",
        "type": "needed_before",
        "expect": {"concepts": ["cse_12"], "abstain": False, **expect},
    }


def _answer(**result: Any) -> Response:
    return Response(abstained=False, result={"members": ["cse_12"], **result})


def _scored(response: Response, **groups: Any) -> Any:
    return score("q", "needed_before", ["cse_12"], False, response, groups=GroupsExpected(**groups))


def test_the_group_fields_parse_and_round_trip_and_default_to_absent() -> None:
    """Each field given is kept as given (lists in order, once) and written back; none is absent."""
    q = parse_question(_row(one_of="cse_101.1", unmet=["a.1", "a.1", "b.2"], requirements=[]))
    assert (q.one_of, q.unmet, q.requirements) == ("cse_101.1", ("a.1", "b.2"), ())
    assert parse_question(q.to_dict()) == q
    plain = parse_question(_row())
    assert (plain.one_of, plain.unmet, plain.requirements) == (None, None, None)
    assert not {"one_of", "unmet", "requirements"} & set(plain.to_dict()["expect"])


@pytest.mark.parametrize(
    "bad",
    [{"one_of": ""}, {"one_of": ["a.1"]}, {"unmet": "a.1"}, {"requirements": [1]}, {"unmet": [""]}],
)
def test_a_malformed_group_field_is_refused_naming_it(bad: dict[str, Any]) -> None:
    (name,) = bad
    with pytest.raises(InputError, match=f"expect.{name}"):
        parse_question(_row(**bad))


def test_group_fields_are_refused_on_a_question_to_abstain_on() -> None:
    row = {**_row(), "expect": {"concepts": [], "abstain": True, "unmet": []}}
    with pytest.raises(InputError, match="unmet"):
        parse_question(row)


def test_a_group_alone_makes_a_question_answerable() -> None:
    """CSE 101 has no plain prerequisite: its gold is no concept and two groups."""
    row = {**_row(), "expect": {"concepts": [], "abstain": False, "requirements": ["cse_101.1"]}}
    assert parse_question(row).requirements == ("cse_101.1",)
    with pytest.raises(InputError, match="at least one"):
        parse_question({**row, "expect": {"concepts": [], "abstain": False, "requirements": []}})


def test_a_wrong_or_missing_one_of_makes_the_answer_wrong() -> None:
    right = _scored(_answer(one_of="cse_101.1"), one_of="cse_101.1")
    assert right.exact_match and right.groups_ok is True
    for response in (_answer(one_of="cse_101.2"), _answer(), _answer(one_of=None)):
        got = _scored(response, one_of="cse_101.1")
        assert not got.exact_match and got.groups_ok is False and got.f1 == 1.0  # F1 is the sets'
    assert _scored(_answer(one_of={"group_id": "cse_101.1"}), one_of="cse_101.1").exact_match


def test_unmet_groups_are_compared_as_a_set() -> None:
    assert _scored(_answer(unmet=["b.2", "a.1"]), unmet=["a.1", "b.2"]).exact_match
    assert _scored(_answer(unmet=[{"group_id": "a.1"}]), unmet=["a.1"]).exact_match
    assert not _scored(_answer(unmet=["a.1"]), unmet=["a.1", "b.2"]).exact_match  # one left out
    assert not _scored(_answer(unmet=["a.1", "c.1"]), unmet=["a.1"]).exact_match  # one too many
    assert not _scored(_answer(), unmet=["a.1"]).exact_match  # missing
    assert not _scored(_answer(unmet="a.1"), unmet=["a.1"]).exact_match  # not a list
    # Nothing unmet is asked: an answer that lists none, or leaves the list out, is right.
    assert _scored(_answer(unmet=[]), unmet=[]).exact_match and _scored(_answer(), unmet=[]).exact_match
    assert not _scored(_answer(unmet=["a.1"]), unmet=[]).exact_match


def test_requirements_must_list_exactly_the_groups_by_group_id() -> None:
    listed = [{"group_id": "cse_101.1", "needs": 1}, {"group_id": "cse_101.2", "needs": 1}]
    assert _scored(_answer(requirements=listed), requirements=["cse_101.2", "cse_101.1"]).exact_match
    assert not _scored(_answer(requirements=listed[:1]), requirements=["cse_101.1", "cse_101.2"]).exact_match
    assert not _scored(_answer(requirements=listed), requirements=["cse_101.1"]).exact_match
    assert not _scored(_answer(), requirements=["cse_101.1"]).exact_match
    assert not _scored(_answer(requirements=[{"id": "cse_101.1"}]), requirements=["cse_101.1"]).exact_match


def test_every_group_field_given_must_be_right_together_with_the_set_and_finding() -> None:
    both = _answer(holds=False, unmet=["a.1"], requirements=[])
    kw: dict[str, Any] = {"finding": {"holds": False}, "groups": GroupsExpected(unmet=["a.1"])}
    assert score("q", "ready", ["cse_12"], False, both, **kw).exact_match
    assert not score("q", "ready", ["cse_12"], False, _answer(holds=True, unmet=["a.1"]), **kw).exact_match
    assert not score("q", "ready", ["x"], False, both, **kw).exact_match  # the set is wrong
    two = GroupsExpected(one_of="g.1", unmet=["a.1"])
    assert not score("q", "ready", ["cse_12"], False, _answer(one_of="g.1"), groups=two).exact_match


def test_a_contains_question_checks_its_one_of_too() -> None:
    """A check ("is A needed for X") is matched by what it is about, and its one_of besides."""
    about = Response(abstained=False, cited=("cse_21", "cse_101"), result={"holds": False, "one_of": "x.1"})
    kw: dict[str, Any] = {"match": "contains", "finding": {"holds": False}}
    assert not score(
        "q", "check", ["cse_21", "cse_101"], False, about, groups=GroupsExpected("cse_101.2"), **kw
    ).exact_match
    assert score(
        "q", "check", ["cse_21", "cse_101"], False, about, groups=GroupsExpected("x.1"), **kw
    ).exact_match


def test_questions_without_group_fields_score_as_before() -> None:
    """An answer's extra group keys cost nothing where nothing is asked about groups."""
    response = _answer(one_of="z.9", unmet=["z.9"], requirements=[{"group_id": "z.9"}])
    for groups in (None, GroupsExpected()):
        got = score("q", "needed_before", ["cse_12"], False, response, groups=groups)
        assert got.exact_match and got.groups_ok is None


def test_an_abstention_is_not_right_about_groups_and_an_abstain_question_asks_none() -> None:
    none = _scored(Response(abstained=True), requirements=["cse_101.1"])
    assert not none.exact_match and none.groups_ok is False
    abstain = score("q", "unanswerable", [], True, Response(abstained=True), groups=GroupsExpected("g.1"))
    assert abstain.exact_match and abstain.groups_ok is None


def test_summary_reports_groups_accuracy() -> None:
    scores = [
        _scored(_answer(requirements=[{"group_id": "g.1"}]), requirements=["g.1"]),
        _scored(_answer(), requirements=["g.1"]),
        _scored(_answer()),
    ]
    assert summarise(scores)["groups_accuracy"] == 0.5
    assert summarise(scores[2:])["groups_accuracy"] is None
