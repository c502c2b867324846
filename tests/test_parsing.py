"""A model reply becomes a Draft only when it is exactly the JSON object the prompt asks for."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from control_plane.synthesizers.base import Claim, Draft, Focus, Step, Usage
from control_plane.synthesizers.parsing import parse_draft

USAGE = Usage(calls=1, prompt_tokens=10, completion_tokens=5, latency_ms=1.0)


def reply(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "claim": {"members": ["tokenization", "embeddings"], "complete": True},
        "confidence": 0.8,
        "missing": "",
        "next_focus": {"relations": ["prerequisite"], "concept_ids": ["rag"], "text": "what RAG needs"},
    }
    base.update(changes)
    return base


def assert_error(draft: Draft, fragment: str) -> None:
    assert draft.error is not None and fragment in draft.error, draft.error
    assert draft.confidence == 0.0
    assert draft.concept_ids == () and draft.edge_ids == ()
    assert draft.usage == USAGE


def test_a_well_formed_reply_becomes_a_draft() -> None:
    """Every field of a valid reply is carried into the draft, with the usage given; a model's
    draft has no text of its own (the learner reads the verified claim's words)."""
    draft = parse_draft(json.dumps(reply()), USAGE)
    assert draft == Draft(
        answer="",
        confidence=0.8,
        concept_ids=("tokenization", "embeddings"),
        edge_ids=(),
        missing="",
        next_focus=Focus(relations=("prerequisite",), concept_ids=("rag",), text="what RAG needs"),
        usage=USAGE,
        error=None,
        claim=Claim("set", True, members=("tokenization", "embeddings")),
    )


@pytest.mark.parametrize(
    ("contract", "claim", "expected"),
    [
        (
            "count",
            {"count": 2, "members": ["a", "b"], "complete": True},
            Claim("count", True, ("a", "b"), count=2),
        ),
        (
            "check",
            {"holds": True, "path": ["e1", "e2"], "complete": True},
            Claim("check", True, holds=True, path=("e1", "e2")),
        ),
        ("check", {"holds": None, "path": [], "complete": False}, Claim("check", False)),
        (
            "why",
            {
                "holds": True,
                "steps": [{"source": "a", "relation": "prerequisite", "target": "b", "edge_id": "e1"}],
                "complete": True,
            },
            Claim("why", True, holds=True, steps=(Step("a", "prerequisite", "b", "e1"),)),
        ),
        ("order", {"first": None, "path": [], "complete": True}, Claim("order", True)),
        (
            "order",
            {"first": "a", "path": ["e1"], "complete": True},
            Claim("order", True, first="a", path=("e1",)),
        ),
        ("path", {"path": ["e1"], "complete": False}, Claim("path", False, path=("e1",))),
        (
            "relate",
            {"how": "path", "members": ["a", "b"], "complete": True},
            Claim("relate", True, ("a", "b"), how="path"),
        ),
        ("next", {"members": [], "complete": True}, Claim("next", True)),
        ("lessons", {"lesson_link_ids": ["l3"], "complete": True}, Claim("lessons", True, lessons=("l3",))),
    ],
)
def test_each_contract_has_its_own_fields(contract: str, claim: dict[str, Any], expected: Claim) -> None:
    """A claim in each form's contract is read into the claim it states (ids, path order kept)."""
    draft = parse_draft(json.dumps(reply(claim=claim)), USAGE, contract=contract)
    assert draft.error is None and draft.claim == expected
    assert set(draft.concept_ids) == set(expected.concept_ids())
    assert draft.edge_ids == expected.edge_ids() and draft.lesson_refs == expected.lessons


@pytest.mark.parametrize(
    ("contract", "claim", "fragment"),
    [
        ("check", {"members": ["a"], "complete": True}, "missing key(s) holds, path"),
        ("set", {"members": ["a"], "complete": True, "holds": True}, "unexpected key(s) holds"),
        ("set", {"members": ["a"]}, "missing key(s) complete"),
        ("set", {"members": "a", "complete": True}, "claim.members must be a list of strings"),
        ("set", {"members": [], "complete": "yes"}, "claim.complete must be true or false"),
        ("check", {"holds": "yes", "path": [], "complete": True}, "claim.holds must be true, false or null"),
        ("count", {"count": -1, "members": [], "complete": True}, "claim.count must be a whole number"),
        ("count", {"count": True, "members": [], "complete": True}, "claim.count must be a whole number"),
        ("count", {"count": 1.0, "members": ["a"], "complete": True}, "claim.count must be a whole number"),
        ("order", {"first": 3, "path": [], "complete": True}, "claim.first must be a string"),
        ("why", {"holds": True, "steps": [{"source": "a"}], "complete": True}, "missing key(s) edge_id"),
        (
            "why",
            {
                "holds": True,
                "steps": [{"source": "a", "relation": "needs", "target": "b", "edge_id": "e1"}],
                "complete": True,
            },
            "not a relation type",
        ),
        ("relate", {"how": 1, "members": [], "complete": True}, "claim.how must be a string"),
        ("set", None, "claim must be an object"),
    ],
)
def test_a_claim_must_have_exactly_its_contracts_fields(contract: str, claim: Any, fragment: str) -> None:
    """A claim with another contract's fields, a missing or extra field, or a field of the wrong
    type is an unusable draft naming it."""
    assert_error(parse_draft(json.dumps(reply(claim=claim)), USAGE, contract=contract), fragment)


@pytest.mark.parametrize("confidence", [0, 1, 0.0, 1.0, 0.5])
def test_confidence_bounds_are_inclusive(confidence: float) -> None:
    """0 and 1 (integers or floats) are valid confidences, stored as floats."""
    draft = parse_draft(json.dumps(reply(confidence=confidence)), USAGE)
    assert draft.error is None
    assert draft.confidence == confidence and isinstance(draft.confidence, float)


@pytest.mark.parametrize("fence", ["```json\n{}\n```", "```\n{}\n```", "  ```JSON\n{}\n```\n"])
def test_a_json_code_fence_is_tolerated(fence: str) -> None:
    """A single ```json fence around the whole object (DeepSeek's habit) is accepted."""
    draft = parse_draft(fence.replace("{}", json.dumps(reply(), indent=2)), USAGE)
    assert draft.error is None and draft.concept_ids == ("tokenization", "embeddings")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("   \n ", "empty"),
        ("I think the answer is RAG.", "not one JSON object"),
        ("Here you go: " + json.dumps(reply()), "not one JSON object"),
        (json.dumps(reply()) + "\nHope this helps!", "not one JSON object"),
        ("```json\n" + json.dumps(reply()) + "\n```\nmore text", "not one JSON object"),
        (json.dumps([reply()]), "must be a JSON object"),
        ('"just a string"', "must be a JSON object"),
        ('{"missing": "a", "missing": "b"}', "duplicate key 'missing'"),
    ],
)
def test_anything_but_one_json_object_is_an_error(text: str, fragment: str) -> None:
    """Prose, extra text around the object, or a non-object is an error draft."""
    assert_error(parse_draft(text, USAGE), fragment)


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"confidence": "0.8"}, "confidence must be a number, got str"),
        ({"confidence": True}, "confidence must be a number, got bool"),
        ({"confidence": None}, "confidence must be a number, got NoneType"),
        ({"confidence": 1.5}, "confidence must be in [0, 1]"),
        ({"confidence": -0.1}, "confidence must be in [0, 1]"),
        ({"confidence": 10**400}, "confidence must be in [0, 1]"),
        ({"missing": None}, "missing must be a string"),
        ({"answer": "prose"}, "unexpected key(s) answer"),
        ({"next_focus": None}, "next_focus must be an object"),
        ({"next_focus": {"relations": [], "concept_ids": []}}, "next_focus is missing key(s) text"),
        (
            {"next_focus": {"relations": ["requires"], "concept_ids": [], "text": ""}},
            "unknown relation type(s) 'requires'",
        ),
        (
            {"next_focus": {"relations": [], "concept_ids": [1], "text": ""}},
            "next_focus.concept_ids[0] must be a string",
        ),
        (
            {"next_focus": {"relations": [], "concept_ids": [], "text": "", "why": ""}},
            "unexpected key(s) why",
        ),
        ({"reasoning": "because"}, "unexpected key(s) reasoning"),
    ],
)
def test_wrong_types_are_an_error(changes: dict[str, Any], fragment: str) -> None:
    """Every field must have exactly its type; a violation is an error draft naming the field."""
    assert_error(parse_draft(json.dumps(reply(**changes)), USAGE), fragment)


def test_a_missing_key_is_an_error() -> None:
    """A reply without one of the required keys is an error draft naming it."""
    body = reply()
    del body["claim"]
    assert_error(parse_draft(json.dumps(body), USAGE), "missing key(s) claim")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_confidence_is_an_error(literal: str) -> None:
    """NaN and infinities (JSON extensions or overflowing literals) are not confidences."""
    text = json.dumps(reply(confidence=0.5)).replace("0.5", literal)
    assert_error(parse_draft(text, USAGE), "")


def test_an_absurdly_long_number_is_an_error() -> None:
    """An integer literal beyond Python's conversion limit is an error draft, not an exception."""
    text = json.dumps(reply(confidence=0.5)).replace("0.5", "9" * 5000)
    assert_error(parse_draft(text, USAGE), "not usable JSON")


def test_deep_nesting_is_an_error() -> None:
    """Pathologically nested JSON is an error draft, not a crash."""
    assert_error(parse_draft("[" * 100_000 + "]" * 100_000, USAGE), "")


@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    """Whatever the model says, parsing returns a draft; an error draft has confidence 0."""
    draft = parse_draft(text, USAGE)
    assert draft.error is not None
    assert draft.confidence == 0.0


json_values = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)


@given(st.dictionaries(st.sampled_from(sorted(reply())), json_values))
def test_arbitrary_objects_never_raise_and_errors_cite_nothing(obj: dict[str, Any]) -> None:
    """Any JSON object gives a draft; either it is valid or it has confidence 0 and no citations."""
    draft = parse_draft(json.dumps(obj), USAGE)
    if draft.error is not None:
        assert (draft.confidence, draft.concept_ids, draft.edge_ids) == (0.0, (), ())
    else:
        assert 0.0 <= draft.confidence <= 1.0
