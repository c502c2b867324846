"""Study plans: the needed-before closure in learning order, with lessons, minus what is known."""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import Engine

from control_plane.learning_order import layers, needs_from_edges
from control_plane.planning.graph_store import SQLPropertyGraphStore
from control_plane.planning.loop import Planner
from control_plane.planning.study_plan import (
    study_plan,
)
from control_plane.synthesizers.offline import OfflineSynthesizer
from data_plane import GraphReader, WriteGateway
from data_plane.testing import ManualClock, build_graph, grounding

# x needs b and c; b needs a; c builds on a; a needs la (linear algebra); d is unrelated.
EDGES = [
    ("b", "x", "prerequisite"),
    ("c", "x", "prerequisite"),
    ("a", "b", "prerequisite"),
    ("c", "a", "builds_on"),
    ("la", "a", "prerequisite"),
    ("d", "la", "related"),
]


def test_layers_follow_learning_order() -> None:
    """Layer 0 needs nothing in the plan; every concept comes after everything it needs."""
    plan = study_plan("x", needs_from_edges(EDGES))
    assert [[s.concept_id for s in layer] for layer in plan.layers] == [["la"], ["a"], ["b", "c"]]
    assert plan.complete and plan.known == () and plan.skipped == ()


def test_known_concepts_and_what_they_need_are_left_out() -> None:
    """A known concept is skipped, and so is everything needed before it."""
    plan = study_plan("x", needs_from_edges(EDGES), known=["a"])
    assert [[s.concept_id for s in layer] for layer in plan.layers] == [["b", "c"]]
    assert plan.known == ("a",) and plan.skipped == ("a", "la")


def test_lessons_ride_on_each_step_and_the_plan_is_data() -> None:
    """Each step carries its lesson ids; to_dict gives ordered layers of ids, not text."""
    plan = study_plan("x", needs_from_edges(EDGES), lessons={"a": ["L2", "L1"], "la": ["L0"]}, complete=False)
    assert plan.to_dict() == {
        "subject": "x",
        "layers": [
            [{"concept_id": "la", "lesson_ids": ["L0"]}],
            [{"concept_id": "a", "lesson_ids": ["L1", "L2"]}],
            [{"concept_id": "b", "lesson_ids": []}, {"concept_id": "c", "lesson_ids": []}],
        ],
        "known": [],
        "skipped": [],
        "complete": False,
    }


def test_a_learning_order_cycle_is_learned_together() -> None:
    """Concepts on a builds_on/prerequisite cycle share one layer, after what they need."""
    edges = [
        ("p", "q", "prerequisite"),
        ("p", "q", "builds_on"),
        ("base", "p", "prerequisite"),
        ("q", "x", "prerequisite"),
    ]
    plan = study_plan("x", needs_from_edges(edges))
    assert [[s.concept_id for s in layer] for layer in plan.layers] == [["base"], ["p", "q"]]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=20),
    st.sets(st.integers(1, 7), max_size=2),
)
def test_plan_is_a_topological_order_of_the_closure(pairs: list[tuple[int, int]], known: set[int]) -> None:
    """On random DAGs the plan holds exactly the closure minus the known and what they need, and
    every concept's needs sit in earlier layers."""
    edges = [(f"n{min(a, b)}", f"n{max(a, b)}", "prerequisite") for a, b in pairs if a != b]
    g = nx.DiGraph([(s, t) for s, t, _ in edges])
    g.add_node("n7")
    known_ids = {f"n{k}" for k in known} - {"n7"}
    plan = study_plan("n7", needs_from_edges(edges), known=known_ids)
    skipped = {a for k in known_ids if k in g for a in nx.ancestors(g, k) | {k}}
    assert set(plan.concepts) == nx.ancestors(g, "n7") - skipped
    layer_of = {s.concept_id: i for i, layer in enumerate(plan.layers) for s in layer}
    for s, t, _ in edges:
        if s in layer_of and t in layer_of:
            assert layer_of[s] < layer_of[t]


def _layers_as_written(concepts: set[str], needs: dict[str, set[str]]) -> list[list[str]]:
    """``learning_order.layers``'s rule as its docstring states it, one layer at a time: the
    concepts whose needs among those left are placed; when none, the cycles that need nothing
    else (each of them reaches back every concept it reaches)."""
    left = {c: needs.get(c, set()) & concepts for c in concepts}
    out: list[list[str]] = []
    while left:
        ready = sorted(c for c, n in left.items() if not n)
        if not ready:
            g = nx.DiGraph([(c, d) for c, n in left.items() for d in n])
            ready = sorted(c for c in left if all(nx.has_path(g, d, c) for d in nx.descendants(g, c)))
        out.append(ready)
        left = {c: n - set(ready) for c, n in left.items() if c not in ready}
    return out


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 9), st.integers(0, 11)), max_size=30),
    st.sets(st.integers(0, 9), max_size=10),
)
def test_layers_are_the_rule_as_written(pairs: list[tuple[int, int]], picked: set[int]) -> None:
    """On random needs, cycles and concepts that need themselves included, ``layers`` gives the
    layers its rule says, computed one layer at a time (it places each concept once, so a
    closure of thousands costs what it holds)."""
    needs: dict[str, set[str]] = {}
    for a, b in pairs:
        needs.setdefault(f"n{a}", set()).add(f"n{b}")
    concepts = {f"n{i}" for i in picked}
    assert layers(concepts, needs) == _layers_as_written(concepts, needs)


def test_planner_attaches_the_plan_with_lessons(sqlite_engine: Engine) -> None:
    """A study-plan question is answered with the layered plan as data, lessons in force, known skipped."""
    clock = ManualClock()
    gateway = WriteGateway(sqlite_engine, clock=clock)
    build_graph(gateway, ["x", "a", "b", "c", ("la", "linear algebra"), "d"], EDGES)
    gateway.link_lesson("L1", "b", grounding=grounding("lesson"), title="Lesson on b")
    reader = GraphReader(sqlite_engine, clock=clock)
    planner = Planner(reader, OfflineSynthesizer(), store=SQLPropertyGraphStore(reader), clock=clock)
    answer = planner.ask(
        "In what order should I learn everything x needs? I already know linear algebra", record=False
    )
    body = answer.to_dict()
    assert not answer.abstained and len(answer.rounds) == 1
    assert body["study_plan"]["layers"] == [
        [{"concept_id": "a", "lesson_ids": []}],
        [{"concept_id": "b", "lesson_ids": ["L1"]}, {"concept_id": "c", "lesson_ids": []}],
    ]
    assert body["study_plan"]["known"] == ["la"] and body["study_plan"]["complete"] is True
    assert "in this order: 1. a; 2. b, c; then x." in answer.text  # the text states the same layers
