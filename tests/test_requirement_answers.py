"""Answers on a graph that says "one of": every learning-order form reads requirement groups with
the meaning of docs/control-plane.md, "Requirements with alternatives", on both engines. One small
catalogue:

    ALG (Algorithms) needs DS (Data Structures), and one of DM (Discrete Math) or (LOGIC and SETS);
    DS needs PROG (Programming); DM needs PROG; OS needs one of ALG or ARCH, and two of C1, C2, C3.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from control_plane.planning.loop import Planner
from control_plane.synthesizers.base import Draft, SynthesisRequest, Usage
from control_plane.synthesizers.offline import OfflineSynthesizer
from control_plane.testing import ScriptedSynthesizer, truthful
from data_plane import GraphReader, WriteGateway
from data_plane.records import Grounding
from data_plane.testing import ManualClock, build_graph

CONCEPTS = [
    ("alg", "Algorithms"),
    ("ds", "Data Structures"),
    ("dm", "Discrete Math"),
    ("logic", "Logic"),
    ("sets", "Set Theory"),
    ("prog", "Programming"),
    ("os", "Operating Systems"),
    ("arch", "Computer Architecture"),
    ("c1", "Compilers I"),
    ("c2", "Compilers II"),
    ("c3", "Compilers III"),
]
EDGES = [("ds", "alg", "prerequisite"), ("prog", "ds", "prerequisite"), ("prog", "dm", "prerequisite")]
G = Grounding(confidence=1.0, reason="the catalogue says so", source="test", evidence={"page": "catalogue"})


@pytest.fixture
def ask(engine: Engine) -> Any:
    clock = ManualClock(now=datetime(2025, 1, 1, tzinfo=UTC))
    gw = WriteGateway(engine, clock=clock)
    build_graph(gw, CONCEPTS, EDGES)
    gw.assert_requirement("alg.1", target_id="alg", needs=1, options=[["dm"], ["logic", "sets"]], grounding=G)
    gw.assert_requirement("os.1", target_id="os", needs=1, options=[["alg"], ["arch"]], grounding=G)
    gw.assert_requirement("os.2", target_id="os", needs=2, options=[["c1"], ["c2"], ["c3"]], grounding=G)
    planner = Planner(GraphReader(engine, clock=clock), OfflineSynthesizer(), clock=clock)

    def run(question: str) -> dict[str, Any]:
        answer = planner.ask(question, record=False).to_dict()
        assert not answer["abstained"], answer["abstain_reason"]
        return answer

    return run


def groups(a: dict[str, Any]) -> set[str]:
    return {g["group_id"] for g in a["result"].get("requirements", [])}


def test_what_is_needed_states_the_requirement(ask: Any) -> None:
    a = ask("What do I need before Algorithms?")
    assert (
        "Algorithms requires: Data Structures; one of Discrete Math or (Logic and Set Theory)." in a["text"]
    )
    assert set(a["result"]["members"]) == {"ds", "prog"}  # what every way needs
    assert groups(a) == {"alg.1"}
    b = ask("What do I need right before Operating Systems?")
    assert b["text"].startswith(
        "Operating Systems requires: one of Algorithms or Computer Architecture; "
        "two of Compilers I, Compilers II or Compilers III."
    )
    assert b["result"]["members"] == [] and groups(b) == {"os.1", "os.2"}


def test_the_choices_along_the_way_are_stated(ask: Any) -> None:
    a = ask("What do I need before Operating Systems?")
    assert a["result"]["members"] == [] and groups(a) == {"os.1", "os.2"}
    assert "Algorithms" in a["text"] and "one of" in a["text"]


def test_required_is_told_from_one_way_to_meet_a_requirement(ask: Any) -> None:
    required = ask("Is Programming needed for Algorithms?")
    assert required["result"]["holds"] is True
    option = ask("Is Discrete Math needed for Algorithms?")
    assert option["result"]["holds"] is False and option["result"]["one_of"] == "alg.1"
    assert "one of the ways to meet what Algorithms requires" in option["text"]
    deeper = ask("Is Logic needed for Operating Systems?")
    assert deeper["result"]["holds"] is False and deeper["result"]["one_of"] == "os.1"
    assert "on the way to Algorithms" in deeper["text"]
    nothing = ask("Is Computer Architecture needed for Algorithms?")
    assert nothing["result"]["holds"] is False and "one_of" not in nothing["result"]


def test_readiness_is_the_groups_met_by_what_is_known(ask: Any) -> None:
    ready = ask("Can I take Algorithms having done Data Structures and Discrete Math?")
    assert ready["result"]["holds"] is True
    half = ask("Can I take Algorithms having done Data Structures and Logic?")
    assert half["result"]["holds"] is False and half["result"]["unmet"] == ["alg.1"]
    assert "Still to meet: Algorithms requires one of Discrete Math or (Logic and Set Theory)" in half["text"]
    two = ask("Can I take Operating Systems having done Computer Architecture and Compilers I?")
    assert two["result"]["holds"] is False and two["result"]["unmet"] == ["os.2"]


def test_what_needs_a_concept_includes_what_it_is_one_way_to(ask: Any) -> None:
    a = ask("Which concepts need Discrete Math?")
    assert set(a["result"]["members"]) == {"alg"} and groups(a) == {"alg.1"}
    assert "Discrete Math is one of the options for: Algorithms" in a["text"]


def test_what_comes_next_meets_every_group(ask: Any) -> None:
    a = ask("I know Data Structures and Discrete Math. What can I learn next?")
    assert "alg" in a["result"]["members"]
    b = ask("I know Data Structures and Logic. What can I learn next?")
    assert "alg" not in b["result"]["members"]
    assert "Algorithms (also needs one of Discrete Math or (Logic and Set Theory))" in b["text"]


def test_counting_counts_what_every_way_needs(ask: Any) -> None:
    a = ask("How many concepts come before Algorithms?")
    assert a["result"]["count"] == 2 and a["text"].startswith(
        "2 on every way, and 1 requirement with alternatives."
    )


LIES = {
    # an option said required
    "Is Discrete Math needed for Algorithms?": lambda c: replace(c, holds=True),
    # the options listed as what every way needs
    "What do I need before Algorithms?": lambda c: replace(c, members=(*c.members, "dm", "logic", "sets")),
    # ready while a group is unmet
    "Can I take Algorithms having done Data Structures and Logic?": lambda c: replace(c, holds=True),
    # a concept waiting on a group said available
    "I know Data Structures and Logic. What can I learn next?": lambda c: replace(
        c, members=(*c.members, "alg")
    ),
}


@pytest.mark.parametrize("question", sorted(LIES))
def test_a_model_that_lies_about_a_group_is_refused(sqlite_engine: Engine, question: str) -> None:
    """A model's claim is held to the evidence's own with groups read: flipping what an option
    is, listing options as required, calling a learner ready with a group unmet, or a concept
    available while it waits on a group gets through in no round; the loop abstains."""
    clock = ManualClock(now=datetime(2025, 1, 1, tzinfo=UTC))
    gw = WriteGateway(sqlite_engine, clock=clock)
    build_graph(gw, CONCEPTS, EDGES)
    gw.assert_requirement("alg.1", target_id="alg", needs=1, options=[["dm"], ["logic", "sets"]], grounding=G)
    offline = OfflineSynthesizer()
    lie = LIES[question]

    def script(request: SynthesisRequest) -> Draft:
        d = offline.synthesize(request)
        assert d.claim is not None
        return replace(d, claim=lie(d.claim), confidence=0.95, usage=Usage(calls=1))

    reader = GraphReader(sqlite_engine, clock=clock)
    honest = Planner(reader, ScriptedSynthesizer(truthful(0.95)), clock=clock).ask(question, record=False)
    assert not honest.abstained, honest.abstain_reason
    lied = Planner(reader, ScriptedSynthesizer(script), clock=clock).ask(question, record=False)
    assert lied.abstained, lied.text


def test_a_study_plan_takes_one_way_through_each_choice(ask: Any) -> None:
    """Each group takes the options that bring the fewest new concepts (as many as it needs),
    says which others would do, and the plan holds what they require."""
    a = ask("Give me a study plan for Operating Systems.")
    assert set(a["result"]["members"]) == {"arch", "c1", "c2"}
    assert "for Operating Systems, Computer Architecture (Algorithms would also do)" in a["text"]
    assert "for Operating Systems, Compilers I and Compilers II (Compilers III would also do)" in a["text"]
    assert [s["concept_id"] for layer in a["study_plan"]["layers"] for s in layer] == ["arch", "c1", "c2"]
    b = ask("Give me a study plan for Algorithms. I already know Logic and Set Theory.")
    assert set(b["result"]["members"]) == {"ds", "prog"}
    assert "for Algorithms, (Logic and Set Theory) (Discrete Math would also do)" in b["text"]


def test_which_first_and_where_to_start_read_the_options(ask: Any) -> None:
    a = ask("Which comes first, Logic or Operating Systems?")
    assert a["result"]["first"] == "logic" and a["result"]["one_of"] == "os.1"
    assert "on the way to Algorithms" in a["text"]
    b = ask("Where do I start for Operating Systems?")
    assert b["result"]["members"] == [] and "depends on the options you take" in b["text"]
    c = ask("Where do I start for Algorithms?")
    assert c["result"]["members"] == ["prog"]
