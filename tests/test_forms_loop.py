"""Question forms answered through the loop on a small graph: each answer states its finding
(holds, count, first, how) and cites the sub-graph that proves it; "no" and "none" only when the
evidence was read whole."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from control_plane.planning.loop import Planner
from control_plane.synthesizers.offline import OfflineSynthesizer
from data_plane import GraphReader, WriteGateway
from data_plane.testing import ManualClock, build_graph

T0 = datetime(2024, 1, 1, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(now=T0)


@pytest.fixture
def rd(sqlite_engine: Engine, clock: ManualClock) -> GraphReader:
    """A music map: rhythm → meter → syncopation; intervals → scales → triads → seventh chords;
    rhythm → triads too; ear training (no needs) contrasts with nothing but relates to
    solfege; notation is part of literacy."""
    gw = WriteGateway(sqlite_engine, clock=clock)
    build_graph(
        gw,
        ["rhythm", "meter", "syncopation", "intervals", "scales", "triads", "seventh_chords",
         "ear_training", "solfege", "notation", "literacy", "harmony"],
        [
            ("rhythm", "meter", "prerequisite"),
            ("meter", "syncopation", "prerequisite"),
            ("intervals", "scales", "prerequisite"),
            ("scales", "triads", "prerequisite"),
            ("triads", "seventh_chords", "prerequisite"),
            ("rhythm", "triads", "prerequisite"),
            ("ear_training", "solfege", "related"),
            ("notation", "literacy", "part_of"),
            ("triads", "harmony", "builds_on"),  # triads build on harmony
        ],
    )  # fmt: skip
    return GraphReader(sqlite_engine, clock=clock)


def ask(rd: GraphReader, clock: ManualClock, question: str) -> dict[str, Any]:
    return Planner(rd, OfflineSynthesizer(), clock=clock).ask(question, record=False).to_dict()


def cited(a: dict[str, Any]) -> set[str]:
    return {c["id"] for c in a["cited_concepts"]}


def test_yes_through_others_cites_the_chain(rd: GraphReader, clock: ManualClock) -> None:
    """'Do I need intervals before seventh chords?' is yes, through scales and triads, cited."""
    a = ask(rd, clock, "Do I need intervals before I start seventh chords?")
    assert not a["abstained"] and a["result"]["holds"] is True and a["result"]["direct"] is False
    assert {"intervals", "scales", "triads", "seventh_chords"} <= cited(a)
    assert a["text"].startswith("Yes, through")


def test_yes_direct(rd: GraphReader, clock: ManualClock) -> None:
    a = ask(rd, clock, "Is rhythm a prerequisite for meter?")
    assert a["result"] == {"intent": "check", "members": [], "holds": True, "direct": True}


def test_no_is_stated_over_the_whole_closure_and_names_the_reverse(
    rd: GraphReader, clock: ManualClock
) -> None:
    """'Does scales depend on triads?' is no: it is the other way round, and that path is cited."""
    a = ask(rd, clock, "Does scales depend on triads?")
    assert not a["abstained"] and a["result"]["holds"] is False
    assert "other way round" in a["text"] and {"scales", "triads"} <= cited(a)


def test_count_states_the_number_first(rd: GraphReader, clock: ManualClock) -> None:
    a = ask(rd, clock, "How many concepts do I need before seventh chords?")
    assert a["result"]["count"] == 5 and a["text"].startswith("5.")
    assert set(a["result"]["members"]) == {"triads", "scales", "intervals", "rhythm", "harmony"}


def test_why_gives_the_chain_with_reasons(rd: GraphReader, clock: ManualClock) -> None:
    """The chain from X to Y, each step with the reason recorded on its edge."""
    a = ask(rd, clock, "Why do I need intervals to learn triads?")
    assert a["result"]["holds"] is True and a["result"]["members"] == ["intervals", "scales", "triads"]
    assert a["text"].count("→") >= 2 and len(a["cited_edges"]) == 2


def test_which_first_names_both_and_neither(rd: GraphReader, clock: ManualClock) -> None:
    first = ask(rd, clock, "Which should I learn first, triads or rhythm?")
    assert first["result"]["first"] == "rhythm" and {"rhythm", "triads"} <= cited(first)
    neither = ask(rd, clock, "Which should I learn first, meter or scales?")
    assert neither["result"]["first"] is None and not neither["abstained"]


def test_relate_prefers_a_path_then_shared_foundations_then_other_links(
    rd: GraphReader, clock: ManualClock
) -> None:
    path = ask(rd, clock, "How are rhythm and seventh chords related?")
    assert path["result"]["how"] == "path" and path["result"]["members"][0] == "rhythm"
    shared = ask(rd, clock, "How are syncopation and triads related?")
    assert shared["result"] == {
        "intent": "relate",
        "members": ["rhythm"],
        "how": "shared_foundations",
    }
    other = ask(rd, clock, "How are ear training and solfege related?")
    assert other["result"]["how"] == "direct" and not other["abstained"]
    none = ask(rd, clock, "How are notation and ear training related?")
    assert none["result"]["how"] == "none"


def test_what_next_is_what_has_all_its_needs_known(rd: GraphReader, clock: ManualClock) -> None:
    """Knowing rhythm and scales: meter (needs rhythm) and ... triads needs harmony too: not yet."""
    a = ask(rd, clock, "I know rhythm and scales, what can I learn next?")
    assert set(a["result"]["members"]) == {"meter"}
    more = ask(rd, clock, "I know rhythm, scales and harmony, what can I learn next?")
    assert set(more["result"]["members"]) == {"meter", "triads"}


def test_whats_left_leaves_out_what_the_knowns_rest_on(rd: GraphReader, clock: ManualClock) -> None:
    a = ask(rd, clock, "I already know scales and rhythm, what's left before seventh chords?")
    assert set(a["result"]["members"]) == {"triads", "harmony"}


def test_what_is_left_reads_every_known_concept_even_beyond_the_seeds(
    rd: GraphReader, clock: ManualClock
) -> None:
    """Three known concepts and a goal are more than the three seeds: the known concept no seed's
    walk reaches (syncopation, which rests on rhythm) is read in a later round before anything is
    left out, so rhythm is not listed as still to learn."""
    a = ask(rd, clock, "I know notation, ear training and syncopation. What's left before seventh chords?")
    assert not a["abstained"], a["abstain_reason"]
    assert set(a["result"]["members"]) == {"triads", "scales", "intervals", "harmony"}
