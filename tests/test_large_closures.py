"""Closures of any size have an answer: a count or a set of thousands is answered with its size,
its first layers and where the rest is; one larger than a question's walks gather is counted by
the database in its abstention, never listed id by id (generated topic maps, ``evals.graphgen``)."""

from __future__ import annotations

import re

import networkx as nx
from sqlalchemy.engine import Engine

from control_plane.planning.loop import Planner
from control_plane.planning.round import TOO_LARGE
from control_plane.planning.walk_order import WalkOrder, walk_order
from control_plane.semantics.findings import LONG_SET, SHOWN
from control_plane.surfaces.cli.answer_text import head_lines
from control_plane.synthesizers.offline import OfflineSynthesizer
from control_plane.understanding.interpretation import Reading
from data_plane import GraphReader, WriteGateway, migrate
from data_plane.relations import PREREQUISITE
from data_plane.temporal import AsOf
from data_plane.testing import ManualClock, build_graph
from data_plane.walks import closure_size, learning_steps
from evals.graphgen import topic_map


def _map(engine: Engine, topics: int) -> tuple[GraphReader, ManualClock, nx.DiGraph]:
    """``engine`` holding a topic map of ``topics`` topics, and the same map in networkx."""
    migrate(engine)
    clock = ManualClock()
    graph = topic_map(topics)
    build_graph(
        WriteGateway(engine, clock=clock),
        [(cid, name) for cid, name, *_ in graph.concepts],
        [(s, t, r) for s, t, r, _ in graph.edges],
    )
    g = nx.DiGraph()
    g.add_edges_from((s, t) for s, t, *_ in graph.edges)
    return GraphReader(engine, clock=clock), clock, g


def test_a_count_beyond_a_thousand_concepts_is_answered(engine: Engine) -> None:
    """A count ("How many topics must I master before X?") over a closure of more than 1,000
    topics (the old walk budget) is answered with networkx's count, in one round."""
    reader, clock, g = _map(engine, 1700)
    answer = Planner(reader, OfflineSynthesizer(), clock=clock).ask(
        "How many topics must I master before Topic 1699?", record=False
    )
    expected = nx.ancestors(g, "t0001699")
    assert len(expected) > 1000
    assert not answer.abstained, answer.abstain_reason
    assert len(answer.rounds) == 1
    assert answer.result is not None and set(answer.result.members) == expected
    assert answer.text.startswith(f"{len(expected)}. ")


def test_a_set_of_hundreds_is_its_size_first_layers_and_where_the_rest_is(engine: Engine) -> None:
    """A needed-before set longer than a screen of names is written as its size and its first
    layers in learning order, names only those, and says where every member is; the result
    holds them all."""
    reader, clock, g = _map(engine, 400)
    answer = Planner(reader, OfflineSynthesizer(), clock=clock).ask(
        "What must I master before Topic 399?", record=False
    )
    expected = nx.ancestors(g, "t0000399")
    assert len(expected) > LONG_SET
    assert answer.result is not None and set(answer.result.members) == expected
    assert f"{len(expected)} concepts; in learning order, the first " in answer.text
    assert "every one in the answer's result" in answer.text
    named = set(re.findall(r"Topic \d+", answer.text)) - {"Topic 399"}
    assert 0 < len(named) <= SHOWN
    assert "Topic 0" in answer.text  # the first layer: the topic needing none
    lines = head_lines(answer.to_dict(), 100, model_calls=0)
    assert f"all {len(expected):,}: --format json (result.members)" in "\n".join(lines)


def test_a_closure_beyond_what_a_question_gathers_is_counted_not_listed(engine: Engine) -> None:
    """When the question's walks may gather fewer concepts than the closure holds, the loop
    abstains with the closure's size counted by the database, naming no unexplored ids."""
    reader, clock, g = _map(engine, 300)

    def small(reading: Reading) -> WalkOrder | None:
        order = walk_order(reading)
        return None if order is None else WalkOrder(order.direction, order.relations, budget=50, total=50)

    answer = Planner(reader, OfflineSynthesizer(), clock=clock, walk_order=small).ask(
        "How many topics must I master before Topic 299?", record=False
    )
    size = len(nx.ancestors(g, "t0000299"))
    assert answer.abstained
    reason = answer.abstain_reason or ""
    assert reason.startswith(f"{TOO_LARGE}: {size:,} concepts come before Topic 299"), reason
    assert "unexplored" not in reason


def test_closure_size_is_the_walk_counted(engine: Engine) -> None:
    """The database's count of a closure equals networkx's, and stops at its budget (None)."""
    reader, clock, g = _map(engine, 200)
    point = AsOf(clock(), clock())
    steps = learning_steps("needed_before", (PREREQUISITE,))
    with reader.connection() as conn:
        assert closure_size(conn, ["t0000199"], as_of=point, steps=steps) == len(nx.ancestors(g, "t0000199"))
        assert closure_size(conn, ["t0000199"], as_of=point, steps=steps, budget=10) is None
