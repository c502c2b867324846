"""The loop on learning-order questions over random prerequisite maps (Hypothesis vs networkx)."""

from __future__ import annotations

import itertools
from pathlib import Path

import hypothesis.strategies as st
import networkx as nx
from hypothesis import HealthCheck, given, settings

from control_plane.planning.graph_store import SQLPropertyGraphStore
from control_plane.planning.loop import Planner
from control_plane.synthesizers.offline import OfflineSynthesizer
from data_plane import GraphReader, WriteGateway, connect, migrate
from data_plane.testing import ManualClock, build_graph

_graph_no = itertools.count()


@st.composite
def maps(draw: st.DrawFn) -> tuple[int, list[tuple[int, int, str]]]:
    """A prerequisite map: i is needed before j (i < j) through a prerequisite edge i -> j or a
    builds_on edge j -> i, so learning order never cycles."""
    n = draw(st.integers(2, 30))
    pairs = draw(
        st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.booleans()), max_size=80)
    )
    edges = {(min(a, b), max(a, b), "prerequisite" if p else "builds_on") for a, b, p in pairs if a != b}
    return n, sorted(edges)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graph=maps(), pick=st.integers(0, 29), unlocks=st.booleans())
def test_learning_order_closures_are_exact_in_at_most_two_rounds(
    tmp_path: Path, graph: tuple[int, list[tuple[int, int, str]]], pick: int, unlocks: bool
) -> None:
    """Needed-before questions get exactly networkx's ancestors of X and unlock questions its
    descendants, in at most two rounds and two synthesis calls; on a map with no learning edges
    at all the loop abstains and says so (it never states "none" for a relation the graph lacks)."""
    k = next(_graph_no)
    engine = connect(f"sqlite:///{tmp_path}/m{k}.sqlite3")
    migrate(engine)
    clock = ManualClock()
    gateway, reader = WriteGateway(engine, clock=clock), GraphReader(engine, clock=clock)
    n, raw = graph
    ids = [f"m{k}x{i}" for i in range(n)]
    edges = [(ids[a], ids[b], r) if r == "prerequisite" else (ids[b], ids[a], r) for a, b, r in raw]
    build_graph(gateway, ids, edges)
    before = nx.DiGraph()
    before.add_nodes_from(ids)
    before.add_edges_from((ids[a], ids[b]) for a, b, _ in raw)  # earlier -> later
    x = ids[pick % n]
    # A bare "unlock" reads as the direct step ("unlock next"); this asks for the whole closure.
    question = (
        f"What does {x} unlock, directly or indirectly?"
        if unlocks
        else f"What do I need to learn before {x}?"
    )
    answer = Planner(reader, OfflineSynthesizer(), store=SQLPropertyGraphStore(reader), clock=clock).ask(
        question, record=False
    )
    expected = nx.descendants(before, x) if unlocks else nx.ancestors(before, x)
    if not raw:
        assert answer.abstained and "no prerequisite or builds_on edges" in (answer.abstain_reason or "")
        engine.dispose()
        return
    assert not answer.abstained, answer.abstain_reason
    assert len(answer.rounds) <= 2 and answer.llm_calls <= 2
    assert answer.result is not None and set(answer.result.members) == expected
    # The text names the subject and every member: all cited.
    assert set(answer.cited_concept_ids) == expected | {x}
    engine.dispose()
