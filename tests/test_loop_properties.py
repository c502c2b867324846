"""Invariants of the planning loop over random graphs and scripted confidences (Hypothesis)."""

from __future__ import annotations

import itertools
from pathlib import Path

import hypothesis.strategies as st
from hypothesis import HealthCheck, given, settings

from control_plane.planning.graph_store import SQLPropertyGraphStore
from control_plane.planning.loop import Planner
from control_plane.synthesizers.base import Draft, SynthesisRequest
from control_plane.testing import RecordingExpander, ScriptedSynthesizer, draft
from data_plane import GraphReader, WriteGateway, connect, migrate
from data_plane.relations import RELATIONS, canonical_edge
from data_plane.testing import ManualClock, build_graph

_graph_no = itertools.count()


@st.composite
def graphs(draw: st.DrawFn) -> tuple[int, list[tuple[int, int, str]]]:
    n = draw(st.integers(min_value=1, max_value=40))
    pairs = draw(
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.sampled_from(RELATIONS)),
            max_size=120,
        )
    )
    # Keep prerequisite and other edges acyclic by pointing from a lower to a higher index.
    edges = {(min(a, b), max(a, b), r) for a, b, r in pairs if a != b}
    return n, sorted(edges)


@st.composite
def scripts(draw: st.DrawFn) -> list[tuple[float, int, int, bool]]:
    """Per call: confidence, how many evidence concepts to cite, whether to cite an unknown id."""
    return draw(
        st.lists(
            st.tuples(st.floats(0.0, 1.0), st.integers(0, 5), st.integers(0, 5), st.booleans()),
            min_size=1,
            max_size=4,
        )
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graph=graphs(), script=scripts(), seed=st.integers(0, 39))
def test_loop_invariants(
    tmp_path: Path,
    graph: tuple[int, list[tuple[int, int, str]]],
    script: list[tuple[float, int, int, bool]],
    seed: int,
) -> None:
    """Rounds <= 4, frontier <= 12, no concept expanded twice, calls == rounds that called, answers verified."""
    k = next(_graph_no)
    engine = connect(f"sqlite:///{tmp_path}/p{k}.sqlite3")
    migrate(engine)
    clock = ManualClock()
    gateway, reader = WriteGateway(engine, clock=clock), GraphReader(engine, clock=clock)
    n, edges = graph
    ids = [f"g{k}n{i}" for i in range(n)]
    build_graph(
        gateway,
        ids,
        sorted({canonical_edge(ids[a], ids[b], r) for a, b, r in edges}),
    )
    turn = itertools.count()

    def respond(request: SynthesisRequest) -> Draft:
        conf, nc, ne, ghost = script[min(next(turn), len(script) - 1)]
        ev = request.evidence
        cites = sorted(ev.concepts)[:nc] + (["ghost"] if ghost else [])
        return draft(conf, concept_ids=cites, edge_ids=sorted(ev.edges)[:ne])

    synth = ScriptedSynthesizer(respond)
    store = RecordingExpander(SQLPropertyGraphStore(reader))
    answer = Planner(reader, synth, store=store, clock=clock).ask(
        f"tell me about g{k}n{seed % n}", record=False
    )
    engine.dispose()

    assert len(answer.rounds) <= 4
    assert all(len(ids_) <= 12 for ids_, _ in store.calls)
    assert all(len(r.frontier_added) <= 12 for r in answer.rounds)
    expanded: set[str] = set()
    for ids_, exclude in store.calls:
        assert not ids_ & expanded and exclude == expanded
        expanded |= ids_
    called = [r for r in answer.rounds if r.decision != "stop-empty"]
    assert synth.calls == answer.llm_calls == len(called) == len(store.calls)
    if not answer.abstained:
        assert answer.confidence >= 0.8
        assert set(answer.cited_concept_ids) <= set(answer.evidence.concepts)
        assert set(answer.cited_edges) <= set(answer.evidence.edges)
    else:
        assert answer.confidence < 0.8
