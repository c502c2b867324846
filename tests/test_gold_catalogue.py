"""The catalogue forms' gold (evals.gold: ready, opens, start, requirement groups), on tiny graphs
whose answers are worked out by hand here, so a wrong helper fails."""

from __future__ import annotations

import itertools
from typing import Any

import networkx as nx
import pytest

from evals import gold

P = "prerequisite"

# a, b -> c;  c, d -> e;  e -> f;  a -> j;  m -> n;  g, h -> (alone or via groups), i needs h.
EDGES = [("a", "c"), ("b", "c"), ("c", "e"), ("d", "e"), ("e", "f"), ("a", "j"), ("m", "n"), ("h", "i")]
NODES = set("abcdefghijmn") | {"k"}

# e: c and d and one of (h, x9);  k: one of (g and a, b);  the rest single or all-of courses.
REQUIREMENTS: dict[str, Any] = {
    "c": {"type": "all", "courses": ["a", "b"]},
    "e": {"type": "all", "courses": ["c", "d", {"type": "one", "courses": ["h", "x9"]}]},
    "f": "e",
    "i": "h",
    "j": "a",
    "n": "m",
    "k": {"type": "one", "courses": [{"type": "all", "courses": ["g", "a"]}, "b"]},
}


@pytest.fixture
def g() -> nx.DiGraph:
    return gold.before_graph(gold.GraphView.of(NODES, [(s, t, P) for s, t in EDGES]))


@pytest.fixture
def groups() -> gold.RequirementGroups:
    return gold.requirement_groups(REQUIREMENTS)


# -- readiness -------------------------------------------------------------------------------------


def test_closure_is_the_knowns_and_everything_before_them(g: nx.DiGraph) -> None:
    assert gold.closure(g, ["c"]) == {"a", "b", "c"}
    assert gold.closure(g, ["c", "m"]) == {"a", "b", "c", "m"}
    assert gold.closure(g, []) == set()


def test_missing_is_what_x_needs_beyond_what_the_knowns_cover(g: nx.DiGraph) -> None:
    assert gold.missing_for(g, ["c"], "e") == {"d"}  # c covers a and b, not d
    assert gold.missing_for(g, ["a"], "e") == {"b", "c", "d"}  # one root of c is not c
    assert gold.missing_for(g, ["c", "d"], "f") == {"e"}  # transitive: f needs e, itself missing
    assert gold.missing_for(g, ["m"], "c") == {"a", "b"}  # an unrelated known covers nothing
    assert gold.missing_for(g, ["e"], "f") == set()


def test_ready_gold_holds_only_when_nothing_is_missing(g: nx.DiGraph) -> None:
    assert gold.ready_gold(g, ["c", "d"], "e") == gold.FormGold({"holds": True}, frozenset())
    assert gold.ready_gold(g, ["e"], "f") == gold.FormGold({"holds": True}, frozenset())
    # Having done a direct prerequisite (c) but not the other (d): not ready, d missing.
    assert gold.ready_gold(g, ["c"], "e") == gold.FormGold({"holds": False}, frozenset("d"))
    # Knowing only things before x's prerequisites is not knowing its prerequisites.
    assert gold.ready_gold(g, ["a", "b", "d"], "f") == gold.FormGold({"holds": False}, frozenset("ce"))
    # A root needs nothing: ready with no knowns at all.
    assert gold.ready_gold(g, [], "a") == gold.FormGold({"holds": True}, frozenset())


# -- opens and start -----------------------------------------------------------------------------------


def test_opens_is_the_dependents_whose_prerequisites_x_covers(g: nx.DiGraph) -> None:
    assert gold.opened_by(g, "a") == {"j"}  # c also needs b: not opened by a alone
    assert gold.opened_by(g, "c") == set()  # e also needs d
    assert gold.opened_by(g, "e") == {"f"}
    assert gold.opened_by(g, "f") == set() and gold.opened_by(g, "zz") == set()
    assert gold.opens_gold(g, "a") == gold.FormGold(concepts=frozenset("j"))
    # never the union of what every known opens, nor every dependent
    assert gold.opened_by(g, "c") != set(g.successors("c"))


def test_opens_counts_what_comes_before_x_as_known() -> None:
    # y needs x and w, and w is before x: knowing x (and so w) opens y.
    g = gold.before_graph(gold.GraphView.of("wxy", [("w", "x", P), ("x", "y", P), ("w", "y", P)]))
    assert gold.opened_by(g, "x") == {"y"}
    assert gold.opened_by(g, "w") == {"x"}


def test_starting_points_are_the_roots_before_x(g: nx.DiGraph) -> None:
    assert gold.starting_points(g, "f") == {"a", "b", "d"}
    assert gold.starting_points(g, "e") == {"a", "b", "d"}
    assert gold.starting_points(g, "c") == {"a", "b"}
    assert gold.starting_points(g, "a") == set()  # a root: nothing before it
    assert gold.start_gold(g, "n") == gold.FormGold(concepts=frozenset("m"))


def test_unique_chain_is_unique_path_on_a_built_graph(g: nx.DiGraph) -> None:
    assert gold.unique_chain(g, "a", "f") == ["a", "c", "e", "f"]
    assert gold.unique_chain(g, "f", "a") is None and gold.unique_chain(g, "a", "zz") is None
    diamond = gold.before_graph(
        gold.GraphView.of("wxyz", [("w", "x", P), ("w", "y", P), ("x", "z", P), ("y", "z", P)])
    )
    assert gold.unique_chain(diamond, "w", "z") is None  # two shortest paths: no unique one


# -- requirement groups -----------------------------------------------------------------------------


def test_requirement_groups_reads_targets_options_and_mentions(groups: gold.RequirementGroups) -> None:
    assert groups.targets == {"e", "k"}
    assert groups.options == {"h", "x9", "g", "a", "b"}  # inside a group, nested all-of too
    assert groups.mentions["e"] == {"c", "d", "h", "x9"}
    assert groups.mentions["f"] == {"e"} and groups.mentions["c"] == {"a", "b"}
    assert groups.named_by_targets == {"c", "d", "h", "x9", "g", "a", "b"}


def test_requirement_groups_refuses_what_is_not_an_expression() -> None:
    with pytest.raises(ValueError, match="not a requirement expression"):
        gold.requirement_groups({"x": {"type": "any", "courses": ["a"]}})
    with pytest.raises(ValueError):
        gold.requirement_groups({"x": 3})


def test_two_of_groups_count_as_groups() -> None:
    got = gold.requirement_groups({"z": {"type": "two", "courses": ["p", "q", "r"]}})
    assert got.targets == {"z"} and got.options == {"p", "q", "r"}


def test_group_free_before(g: nx.DiGraph, groups: gold.RequirementGroups) -> None:
    assert gold.group_free_before(g, groups, "c")  # c and a, b: no group target
    assert not gold.group_free_before(g, groups, "e")  # e is a target
    assert not gold.group_free_before(g, groups, "f")  # e is before f
    assert gold.group_free_before(g, groups, "i") and gold.group_free_before(g, groups, "a")


def test_group_free_after(g: nx.DiGraph, groups: gold.RequirementGroups) -> None:
    assert not gold.group_free_after(g, groups, "c", direct=True)  # c is named by target e
    assert not gold.group_free_after(g, groups, "a", direct=True)  # a is an option of k
    assert not gold.group_free_after(g, groups, "h", direct=True)  # an option of e
    assert gold.group_free_after(g, groups, "e", direct=True)  # named by none; f is no target
    assert gold.group_free_after(g, groups, "e", direct=False)
    assert gold.group_free_after(g, groups, "m", direct=False)
    # j's own dependents are none, but desc(a) includes c, named by e
    assert not gold.group_free_after(g, groups, "a", direct=False)


def test_group_free_next(g: nx.DiGraph, groups: gold.RequirementGroups) -> None:
    assert gold.group_free_next(g, groups, ["m"])
    assert not gold.group_free_next(g, groups, ["c"])  # e (a target, not known) names c
    assert not gold.group_free_next(g, groups, ["e"])  # a target among the knowns
    assert not gold.group_free_next(g, groups, ["g"])  # k names g
    assert not gold.group_free_next(g, groups, ["j"])  # K* holds a, which k names


def test_with_groups_builds_both_styles(g: nx.DiGraph, groups: gold.RequirementGroups) -> None:
    nodes = gold.with_groups(g, groups, style="nodes")
    assert set(nodes.predecessors("e")) == {"e#0"}
    assert set(nodes.predecessors("e#0")) == {"c", "d", "e#1"}
    assert set(nodes.predecessors("e#1")) == {"h", "x9"}
    assert set(nodes.predecessors("k")) == {"k#0"} and set(nodes.predecessors("k#1")) == {"g", "a"}
    flat = gold.with_groups(g, groups, style="flat")
    assert set(flat.predecessors("e")) == {"c", "d", "h", "x9"}
    assert set(flat.predecessors("c")) == {"a", "b"}  # not a target: as it was
    with pytest.raises(ValueError):
        gold.with_groups(g, groups, style="other")


@pytest.mark.parametrize("style", ["nodes", "flat"])
def test_a_group_free_gold_is_the_same_once_groups_are_in(
    g: nx.DiGraph, groups: gold.RequirementGroups, style: str
) -> None:
    """What the group_free tests promise, checked against both ways of bringing the groups in:
    every subject they pass has the same gold on the rebuilt graph."""
    h = gold.with_groups(g, groups, style=style)
    courses = sorted(g)
    for x in courses:
        if gold.group_free_before(g, groups, x):
            assert nx.ancestors(h, x) == nx.ancestors(g, x)
            assert gold.starting_points(h, x) == gold.starting_points(g, x)
            assert set(h.predecessors(x)) == set(g.predecessors(x))
        if gold.group_free_after(g, groups, x, direct=True):
            assert set(h.successors(x)) == set(g.successors(x))
            if gold.group_free_before(g, groups, x):
                assert gold.opened_by(h, x) == gold.opened_by(g, x)
        if gold.group_free_after(g, groups, x, direct=False):
            assert nx.descendants(h, x) == nx.descendants(g, x)
    for ks in itertools.chain(itertools.combinations(courses, 1), itertools.combinations(courses, 2)):
        if gold.group_free_next(g, groups, ks):
            assert gold.learn_next(h, ks) == gold.learn_next(g, ks)


def test_the_rules_are_not_vacuous(g: nx.DiGraph, groups: gold.RequirementGroups) -> None:
    """A subject the tests refuse can indeed change: f's prerequisites, a's dependents, what is
    next after c and d (e, until its one-of group is in)."""
    h = gold.with_groups(g, groups, style="flat")
    assert nx.ancestors(h, "f") != nx.ancestors(g, "f")
    assert set(h.successors("a")) != set(g.successors("a"))
    assert not gold.group_free_next(g, groups, ["c", "d"])
    assert gold.learn_next(g, ["c", "d"]) == {"e", "j"}
    assert gold.learn_next(gold.with_groups(g, groups, style="nodes"), ["c", "d"]) == {"j"}
