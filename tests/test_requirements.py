"""The pure rules of requirement groups: normalisation is exact, options keep their numbers, and a
malformed group is refused naming what is wrong."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from data_plane.errors import InputError, RequirementRejected
from data_plane.periods import Period
from data_plane.requirements import (
    GroupSpec,
    alternatives,
    check_group,
    label_options,
    normalise,
    period_fault,
    unlearnable,
)

ALPHABET = ("a", "b", "c", "d", "e")


def _meets(expression: Any, known: set[str]) -> bool:
    """The expression's meaning read directly off the tree (the reference the rules must keep)."""
    if isinstance(expression, str):
        return expression in known
    met = sum(_meets(p, known) for p in expression["courses"])
    k = {"all": len(expression["courses"]), "one": 1, "two": 2}[expression["type"]]
    return met >= k


def _expressions() -> st.SearchStrategy[Any]:
    leaf = st.sampled_from(ALPHABET)

    def compound(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.builds(
            lambda kind, parts: {"type": kind, "courses": parts},
            st.sampled_from(("all", "one", "two")),
            st.lists(children, min_size=2, max_size=4),
        )

    return st.recursive(leaf, compound, max_leaves=10)


@settings(max_examples=300, deadline=None)
@given(_expressions())
def test_normalised_expression_is_met_by_exactly_the_sets_that_meet_it(expression: Any) -> None:
    """For every set of known concepts, the plain prerequisites and groups are met exactly when the expression is."""
    try:
        normalised = normalise(expression)
    except InputError:
        return  # an expansion over MAX_OPTIONS is refused, never truncated
    for n in range(len(ALPHABET) + 1):
        for known in itertools.combinations(ALPHABET, n):
            assert normalised.satisfied_by(known) == _meets(expression, set(known)), (expression, known)


@settings(max_examples=200, deadline=None)
@given(_expressions())
def test_every_group_has_fewer_needs_than_options(expression: Any) -> None:
    """A normalised group is never a disguised plain prerequisite: 1 <= k < number of options."""
    try:
        normalised = normalise(expression)
    except InputError:
        return
    for g in normalised.groups:
        assert 1 <= g.needs < len(g.options)


def test_the_catalogue_shapes_normalise_as_documented() -> None:
    """CSE 101's two one-of groups and ECE 107's one-of over two all-of options normalise as the docs say."""
    cse_101 = {
        "type": "all",
        "courses": [
            {"type": "one", "courses": ["cse_21", "math_154", "math_158"]},
            {"type": "one", "courses": ["cse_12", "dsc_30"]},
        ],
    }
    assert normalise(cse_101).canonical() == (
        (),
        ((1, (("cse_12",), ("dsc_30",))), (1, (("cse_21",), ("math_154",), ("math_158",)))),
    )
    ece_107 = {
        "type": "all",
        "courses": [
            {
                "type": "one",
                "courses": [
                    {"type": "all", "courses": ["phys_2a", "phys_2b", "phys_2c"]},
                    {"type": "all", "courses": ["phys_4a", "phys_4b", "phys_4c"]},
                ],
            },
            "ece_45",
        ],
    }
    assert normalise(ece_107).canonical() == (
        ("ece_45",),
        ((1, (("phys_2a", "phys_2b", "phys_2c"), ("phys_4a", "phys_4b", "phys_4c"))),),
    )


def test_a_one_nested_in_an_option_expands_into_options() -> None:
    """one[all[x, one[y, z]], w] is the options {x, y}, {x, z}, {w}."""
    e = {
        "type": "one",
        "courses": [{"type": "all", "courses": ["x", {"type": "one", "courses": ["y", "z"]}]}, "w"],
    }
    assert alternatives(e) == [frozenset("xy"), frozenset("xz"), frozenset("w")]


def test_two_of_single_courses_stays_a_two_of_group() -> None:
    """two[a, b, all[c, d]] is k = 2 over three options, not an expansion."""
    spec = normalise({"type": "two", "courses": ["a", "b", {"type": "all", "courses": ["c", "d"]}]})
    assert spec.groups == (GroupSpec(2, (frozenset("a"), frozenset("b"), frozenset("cd"))),)


def test_two_of_parts_with_alternatives_becomes_the_exact_one_of() -> None:
    """two[a, one[b, c]] cannot count parts as options: it is one of {a, b}, {a, c}."""
    spec = normalise({"type": "two", "courses": ["a", {"type": "one", "courses": ["b", "c"]}]})
    assert spec.groups == (GroupSpec(1, (frozenset("ab"), frozenset("ac"))),)


def test_single_option_and_k_of_k_groups_are_plain() -> None:
    """one[a] and two[a, b] are plain prerequisites (every concept is needed)."""
    assert normalise({"type": "one", "courses": ["a"]}).canonical() == (("a",), ())
    assert normalise({"type": "two", "courses": ["a", "b"]}).canonical() == (("a", "b"), ())


@pytest.mark.parametrize(
    "expression",
    [
        {"type": "three", "courses": ["a"]},
        {"type": "one", "courses": []},
        {"type": "two", "courses": ["a"]},
        ["a"],
    ],
)
def test_malformed_expressions_are_refused(expression: Any) -> None:
    """An unknown type, an empty list, an unmeetable k and a bare list are refused with InputError."""
    with pytest.raises(InputError):
        normalise(expression)


def test_label_options_keeps_the_numbers_of_unchanged_options() -> None:
    """An option a revision keeps keeps its number; a new one takes the smallest free number."""
    old = {"1": frozenset("a"), "2": frozenset("b"), "3": frozenset("cd")}
    assert label_options(old, [frozenset("cd"), frozenset("e"), frozenset("a")]) == {
        "1": frozenset("a"),
        "2": frozenset("e"),
        "3": frozenset("cd"),
    }
    assert label_options({}, [["x"], ["y"]]) == {"1": frozenset("x"), "2": frozenset("y")}


@pytest.mark.parametrize(
    ("needs", "options", "field"),
    [
        (0, [["a"], ["b"]], "needs"),
        (3, [["a"], ["b"]], "needs"),
        (True, [["a"], ["b"]], "needs"),
        (1, [], "options"),
        (1, [["a"], []], "options"),
        (1, [["a"], ["t"]], "concept_id"),
    ],
)
def test_check_group_refuses_malformed_groups(needs: Any, options: Any, field: str) -> None:
    """k out of 1..n, no option, an empty option and the target as a member are each refused by name."""
    with pytest.raises(RequirementRejected) as exc:
        check_group("g", "t", needs, options)
    assert exc.value.field == field


T = [datetime(2025, m, 1, tzinfo=UTC) for m in range(1, 7)]


def test_period_fault_finds_too_few_options_at_some_valid_time() -> None:
    """A 1-of group whose only option ends before the group does is refused over the uncovered part."""
    versions = [(Period(T[0], None), "t", 1)]
    assert period_fault("g", versions, [(Period(T[0], None), "1", "a")]) is None
    fault = period_fault("g", versions, [(Period(T[0], T[2]), "1", "a")])
    assert fault is not None and fault.field == "needs"


def test_period_fault_refuses_a_member_outliving_its_group() -> None:
    """A member holding where its group does not is refused."""
    fault = period_fault("g", [(Period(T[0], T[3]), "t", 1)], [(Period(T[0], None), "1", "a")])
    assert fault is not None and fault.field == "valid_at"


def test_a_cycle_through_alternatives_that_can_be_entered_is_learnable() -> None:
    """MATH 10C needs 10B or 20B, 20B needs 20A, 10B or 10C: nothing is unlearnable."""
    groups = [
        ("10c.1", "10c", 1, "1", "10b"),
        ("10c.1", "10c", 1, "2", "20b"),
        ("20b.1", "20b", 1, "1", "20a"),
        ("20b.1", "20b", 1, "2", "10b"),
        ("20b.1", "20b", 1, "3", "10c"),
    ]
    assert unlearnable({"10b", "10c", "20a", "20b"}, [], groups) == set()


def test_a_cycle_no_order_can_enter_is_unlearnable() -> None:
    """a needs b (an edge) and b needs one of {a} or {a, c}: a and b can never be learnt."""
    groups = [("b.1", "b", 1, "1", "a"), ("b.1", "b", 1, "2", "a"), ("b.1", "b", 1, "2", "c")]
    assert unlearnable({"a", "b", "c"}, [("b", "a")], groups) == {"a", "b"}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(ALPHABET), st.sampled_from(ALPHABET)), max_size=8))
def test_with_plain_edges_alone_unlearnable_means_on_or_behind_a_cycle(pairs: list[tuple[str, str]]) -> None:
    """Without groups a concept is unlearnable exactly when a cycle lies on or before it (networkx's reading)."""
    import networkx as nx

    g = nx.DiGraph([(a, b) for a, b in pairs if a != b])
    g.add_nodes_from(ALPHABET)
    on_cycle = {n for c in nx.simple_cycles(g) for n in c}
    behind = {d for n in on_cycle for d in nx.descendants(g, n)} | on_cycle
    assert unlearnable(set(ALPHABET), [(a, b) for a, b in pairs if a != b], []) == behind
