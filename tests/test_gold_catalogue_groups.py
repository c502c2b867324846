"""Gold with requirement groups (evals.gold_groups, the meaning of docs/control-plane.md
"Requirements with alternatives"): on a tiny graph worked out by hand here, on real catalogue
courses checked by reading requirements.json, and for every question of the catalogue-with-groups
sets, recomputed by a second oracle written differently (brute force over the CSV rows).

The catalogue is a development graph beside the checkout (``../shared/dev-graphs``, or
``$KG_DEV_GRAPHS``); the tests that need it are skipped with a note when it is absent. A failure
names question ids only, never a phrasing: the test file is scored, not read."""

from __future__ import annotations

import networkx as nx
import pytest

from evals import gold_groups as gg_
from evals.gold_groups import Group, GroupGold, GroupGraph

# Plain needs: a -> b, k -> b, b -> x, g -> d.  Groups:
#   x.1  x needs one of {c} or {d, e};   x.2  x needs two of {f}, {h}, {m};
#   b.1  b needs one of {n} or {m};      k.1  k needs one of {s} or {t};   c.1  c needs one of {p} or {q}.
PLAIN = [("a", "b"), ("k", "b"), ("b", "x"), ("g", "d")]
GROUPS = [
    Group("x.1", "x", 1, (frozenset("c"), frozenset("de"))),
    Group("x.2", "x", 2, (frozenset("f"), frozenset("h"), frozenset("m"))),
    Group("b.1", "b", 1, (frozenset("n"), frozenset("m"))),
    Group("k.1", "k", 1, (frozenset("s"), frozenset("t"))),
    Group("c.1", "c", 1, (frozenset("p"), frozenset("q"))),
]
NODES = "abcdefghkmnpqstx"


@pytest.fixture
def gg() -> GroupGraph:
    g = nx.DiGraph()
    g.add_nodes_from(NODES)
    g.add_edges_from(PLAIN)
    return GroupGraph(g, GROUPS, {c: c.upper() for c in NODES})


def _set(*ids: str) -> frozenset[str]:
    return frozenset(ids)


def test_required_is_the_plain_closure_and_choices_gather_the_groups_along_it(gg: GroupGraph) -> None:
    assert gg.plain_needs("x") == {"b"}
    assert gg.required("x") == {"a", "b", "k"}  # c, d, e, f, h, m are ways, not required
    assert [g.group_id for g in gg.groups_of("x")] == ["x.1", "x.2"]
    assert [g.group_id for g in gg.choices("x")] == ["b.1", "k.1", "x.1", "x.2"]  # not c.1: c is an option
    assert gg.credited(["b"]) == {"a", "b", "k"}


def test_the_requirement_sentence_sorts_plain_names_then_phrases(gg: GroupGraph) -> None:
    assert gg_.requirement_sentence(gg, "x") == "X requires: B; one of (D and E) or C; two of F, H or M."
    assert gg_.requirement_sentence(gg, "b") == "B requires: A; K; one of M or N."
    assert gg_.requirement_sentence(gg, "c") == "C requires: one of P or Q."
    assert gg_.requirement_sentence(gg, "a") is None


def test_an_option_of_several_concepts_lists_them_in_parentheses() -> None:
    names = {"y": "PHYS 1", "p2a": "PHYS 2A", "p2b": "PHYS 2B", "p2c": "phys 2c", "d": "CHEM 6"}
    g = nx.DiGraph()
    g.add_nodes_from(names)
    grp = Group("y.1", "y", 1, (frozenset({"p2c", "p2b", "p2a"}), frozenset({"d"})))
    view = GroupGraph(g, [grp], names)
    assert (
        gg_.requirement_sentence(view, "y")
        == "PHYS 1 requires: one of (PHYS 2A, PHYS 2B and phys 2c) or CHEM 6."
    )


def test_prerequisites_and_needed_before_list_their_groups(gg: GroupGraph) -> None:
    assert gg_.form_gold(gg, "prerequisites", ("x",)) == GroupGold(
        concepts=_set("b"), requirements=("x.1", "x.2")
    )
    assert gg_.form_gold(gg, "needed_before", ("x",)) == GroupGold(
        concepts=_set("a", "b", "k"), requirements=("b.1", "k.1", "x.1", "x.2")
    )


def test_check_names_the_one_group_a_concept_is_a_way_through(gg: GroupGraph) -> None:
    def check(a: str) -> tuple[bool, str | None]:
        got = gg_.form_gold(gg, "check", (a, "x"))
        assert got.concepts == {a, "x"} and got.match == "contains"
        return got.finding["holds"], got.one_of

    assert check("a") == (True, None)  # required
    assert check("n") == (False, "b.1")  # in an option of a choice of x (b's group)
    assert check("d") == (False, "x.1")  # in an option of x's own group
    assert check("g") == (False, "x.1")  # required by d, a member of an option
    assert check("f") == (False, "x.2")
    # On the ways of two groups: no single group to name (a question set does not ask it).
    assert gg_.ways(gg, "m", "x") == {"b.1", "x.2"} and check("m") == (False, None)
    # p is an option of c's group, c only an option of x's: the spec's ways stop one level down.
    assert gg_.ways(gg, "p", "x") == set() and check("p") == (False, None)


def test_readiness_credits_what_the_knowns_require_and_lists_unmet_groups(gg: GroupGraph) -> None:
    def ready(*known: str) -> GroupGold:
        return gg_.form_gold(gg, "ready", (*known, "x"))

    assert ready("b", "c", "f", "h") == GroupGold({"holds": True}, frozenset(), unmet=())
    # Required all there, but only one of the two x.2 needs: not ready.
    assert ready("b", "c") == GroupGold({"holds": False}, frozenset(), unmet=("x.2",))
    # b and k missing: their groups count too, x's groups are met.
    assert ready("a", "c", "f", "h") == GroupGold({"holds": False}, _set("b", "k"), unmet=("b.1", "k.1"))
    assert gg_.form_gold(gg, "remaining", ("a", "f", "m", "x")) == GroupGold(
        concepts=_set("b", "k"), unmet=("k.1", "x.1")
    )


def test_count_dependents_and_what_comes_after_read_options(gg: GroupGraph) -> None:
    assert gg_.form_gold(gg, "count", ("x",), of="needed_before") == GroupGold(
        {"count": 3}, _set("a", "b", "k")
    )
    assert gg_.form_gold(gg, "count", ("c",), of="needed_before") == GroupGold(
        {"count": 0}, _set("c"), "contains"
    )
    assert gg_.form_gold(gg, "dependents", ("m",)).concepts == {"b", "x"}  # an option of b.1 and of x.2
    assert gg_.form_gold(gg, "count", ("m",), of="dependents").finding == {"count": 2}
    assert gg_.form_gold(gg, "comes_after", ("g",)).concepts == {"d", "x"}
    assert gg_.form_gold(gg, "comes_after", ("p",)).concepts == {"c", "x"}


def test_next_and_opens_need_every_plain_need_and_every_group_met(gg: GroupGraph) -> None:
    assert gg_.form_gold(gg, "next", ("a",)).concepts == set()  # b also needs k, and n or m
    assert gg_.form_gold(gg, "next", ("a", "k", "n")).concepts == {"b"}
    assert gg_.form_gold(gg, "next", ("s",)).concepts == {"k"}  # a group alone is something before
    assert gg_.form_gold(gg, "opens", ("p",)).concepts == {"c"}
    assert gg_.form_gold(gg, "opens", ("n",)).concepts == set()  # b still needs a and k


def test_shared_and_start_read_required_concepts_only(gg: GroupGraph) -> None:
    assert gg_.form_gold(gg, "shared", ("x", "b")).concepts == {"a", "k"}
    assert gg_.form_gold(gg, "start", ("x",)).concepts == {"a"}  # k needs nothing plain, but a group


def test_the_two_readings_a_set_is_compared_with(gg: GroupGraph) -> None:
    """Without groups nothing is a choice; flat, every alternative is required."""
    assert gg.without_groups().choices("x") == () and gg.without_groups().required("x") == {"a", "b", "k"}
    assert gg.flat().required("x") == set("abkcdefghmnpqst")
