"""A course catalogue read as students ask about it: codes as they type them, titles shortened,
the catalogue's own nouns, readiness, what a course opens, where to start, shared background,
which first, and an aside the answer says it set aside. One small catalogue (no lessons):

    CSE 11 (Introduction to Programming) -> CSE 12 (Data Structures) -> CSE 100 (Advanced Data
    Structures); MATH 20A (Calculus I) -> MATH 20B (Calculus II) -> CSE 100; CSE 12 -> CSE 101;
    MATH 20B -> CSE 101 (Algorithms); CSE 12 -> CSE 110 (Software Engineering).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from control_plane.planning.loop import Planner
from control_plane.synthesizers.offline import OfflineSynthesizer
from data_plane import GraphReader, WriteGateway
from data_plane.gateway import Write
from data_plane.names import normalise
from data_plane.testing import ManualClock, build_graph, grounding

COURSES = [
    ("cse_11", "CSE 11", ["Introduction to Programming"]),
    ("cse_12", "CSE 12", ["Data Structures"]),
    ("cse_100", "CSE 100", ["Advanced Data Structures"]),
    ("cse_101", "CSE 101", ["Algorithms"]),
    ("cse_110", "CSE 110", ["Software Engineering"]),
    ("math_20a", "MATH 20A", ["Calculus I"]),
    ("math_20b", "MATH 20B", ["Calculus II"]),
]
EDGES = [
    ("cse_11", "cse_12", "prerequisite"),
    ("cse_12", "cse_100", "prerequisite"),
    ("math_20a", "math_20b", "prerequisite"),
    ("math_20b", "cse_100", "prerequisite"),
    ("cse_12", "cse_101", "prerequisite"),
    ("math_20b", "cse_101", "prerequisite"),
    ("cse_12", "cse_110", "prerequisite"),
]


@pytest.fixture
def ask(sqlite_engine: Engine) -> Any:
    clock = ManualClock(now=datetime(2025, 1, 1, tzinfo=UTC))
    build_graph(WriteGateway(sqlite_engine, clock=clock), COURSES, EDGES)
    planner = Planner(GraphReader(sqlite_engine, clock=clock), OfflineSynthesizer(), clock=clock)

    def run(question: str) -> dict[str, Any]:
        return planner.ask(question, record=False).to_dict()

    return run


def members(a: dict[str, Any]) -> set[str]:
    assert not a["abstained"], a["abstain_reason"]
    return set(a["result"]["members"])


@pytest.mark.parametrize("typed", ["cse100", "CSE100", "cse-100", "Cse 100", "CSE 100"])
def test_a_course_code_is_one_name_however_it_is_typed(typed: str) -> None:
    """Where two or more letters meet digits is a word boundary, for every surface that compares
    names: the code as students type it normalises as the catalogue writes it."""
    assert normalise(typed) == normalise("CSE 100") == ("cse", "100")


def test_digits_before_letters_and_one_letter_before_digits_stay_one_word() -> None:
    """ "20C", "3D", "1st" and "B12", "F1", chat's "b4" are words of their own."""
    assert normalise("MATH 20C") == ("math", "20c") == normalise("math20c")
    assert normalise("B12 F1 b4 3D 1st") == ("b12", "f1", "b4", "3d", "1st")


@pytest.mark.parametrize(
    "question",
    [
        "What do I need before cse100?",
        "What do I need before cse-100?",
        "what do i need before CSE100",
        "What do I need before Advanced Data Structures?",
    ],
)
def test_a_code_as_typed_finds_its_course(ask: Any, question: str) -> None:
    assert members(ask(question)) == {"cse_11", "cse_12", "math_20a", "math_20b"}


def test_a_numeral_and_a_short_title_name_the_course(ask: Any) -> None:
    """ "Calculus 2" is "Calculus II", "intro to programming" is "Introduction to Programming"."""
    assert members(ask("What comes directly after calculus 2?")) == {"cse_100", "cse_101"}
    assert members(ask("What comes directly after intro to programming?")) == {"cse_12"}


def test_the_catalogues_nouns_ask_for_its_courses(ask: Any) -> None:
    """On a map with no lessons, "which courses / classes" ask for its concepts."""
    assert members(ask("Which courses need MATH 20B?")) == {"cse_100", "cse_101"}
    assert members(ask("What classes open up after CSE 12?")) == {"cse_100", "cse_101", "cse_110"}


def test_the_nouns_follow_the_graph_once_it_maps_lessons(sqlite_engine: Engine) -> None:
    """Whether the graph maps lessons is read per question (cached until a lesson link is
    written): once one is, "which courses" asks for lessons again, not for concepts."""
    clock = ManualClock(now=datetime(2025, 1, 1, tzinfo=UTC))
    gateway = WriteGateway(sqlite_engine, clock=clock)
    build_graph(gateway, COURSES, EDGES)
    planner = Planner(GraphReader(sqlite_engine, clock=clock), OfflineSynthesizer(), clock=clock)
    question = "Which courses need MATH 20B?"
    assert not planner.ask(question, record=False).to_dict()["reading"]["intent"].startswith("lessons")
    clock.advance(timedelta(minutes=1))
    gateway.link_lesson("l1", "cse_100", grounding=grounding("a lesson"), title="Trees")
    assert planner.ask(question, record=False).to_dict()["reading"]["intent"].startswith("lessons")


def test_readiness_says_whether_what_is_known_covers_the_course(ask: Any) -> None:
    """ "Can I take X if I've done A?" is whether A (and what it rests on) covers what X needs,
    and what is still missing, each with its edges."""
    a = ask("Can I take CSE 100 if I've done CSE 12?")
    assert a["reading"]["form"] == "ready" and a["result"]["holds"] is False
    assert members(a) == {"math_20a", "math_20b"}
    assert a["text"].startswith("Not yet.")
    b = ask("Am I ready for CSE 101 having taken CSE 12 and MATH 20B?")
    assert b["result"]["holds"] is True and members(b) == set()
    assert b["text"].startswith("Yes: ")


def test_a_must_question_about_a_known_concept_stays_a_check(ask: Any) -> None:
    """ "Must I have A down before B?" asks whether A is needed, not whether the learner is ready."""
    a = ask("Must I have CSE 11 down before starting CSE 100?")
    assert a["reading"]["form"] == "yes_no" and a["result"]["holds"] is True


def test_what_finishing_a_course_opens(ask: Any) -> None:
    """What finishing CSE 12 unlocks is what it makes possible now: CSE 110 (it needs nothing
    else), not CSE 100 or CSE 101, which still need MATH 20B."""
    a = ask("What does finishing CSE 12 unlock for me?")
    assert a["reading"]["intent"] == "opens" and members(a) == {"cse_110"}
    assert "still needing more" in a["text"]
    assert ask("What does CSE 12 unlock?")["reading"]["intent"] == "dependents"


@pytest.mark.parametrize("made", ["make available", "make accessible", "makes possible"])
def test_what_a_finished_course_makes_possible_is_what_it_opens(ask: Any, made: str) -> None:
    """A verb of making with a word of possibility says what X opens, however it is worded."""
    a = ask(f"Which courses does passing CSE 12 {made}?")
    assert a["reading"]["intent"] == "opens" and members(a) == {"cse_110"}


def test_where_to_start(ask: Any) -> None:
    """The starting points of a course's closure: what it rests on that needs nothing first."""
    a = ask("Where do I start if I want to take CSE 101?")
    assert a["reading"]["intent"] == "start" and members(a) == {"cse_11", "math_20a"}


def test_needed_for_a_and_also_for_b_is_what_both_need(ask: Any) -> None:
    a = ask("Which courses are needed for CSE 100 and also for CSE 101?")
    assert a["reading"]["combine"] == "both" and members(a) == {"cse_11", "cse_12", "math_20a", "math_20b"}
    b = ask("Which courses are needed for CSE 110 and also for MATH 20B?")
    assert members(b) == set()


@pytest.mark.parametrize(
    "question",
    [
        "do i take CSE 12 before CSE 101 or after",
        "Between CSE 101 and CSE 12, which class comes earlier?",
    ],
)
def test_which_first(ask: Any, question: str) -> None:
    a = ask(question)
    assert a["reading"]["intent"] == "order" and a["result"]["first"] == "cse_12"


def test_a_statement_tagged_needed_or_not_is_a_check(ask: Any) -> None:
    a = ask("CSE 11 before CSE 110, needed or not?")
    assert a["reading"]["form"] == "yes_no" and a["result"]["holds"] is True


def test_an_aside_is_said_to_be_set_aside(ask: Any) -> None:
    """The graph question is answered, and the answer says which part it did not answer."""
    a = ask(
        "Which courses list CSE 12 as a direct prerequisite? By the way, where's the best coffee on campus?"
    )
    assert members(a) == {"cse_100", "cse_101", "cse_110"}
    assert a["set_aside"] and "coffee" in a["set_aside"][0]
    assert "I did not answer the part about" in a["text"] and "coffee" in a["text"]
    assert ask("Which courses list CSE 12 as a direct prerequisite?")["set_aside"] == []


def test_a_joined_request_about_something_else_is_set_aside_with_its_date(ask: Any) -> None:
    """ "..., and also which laptop should I buy?" is set aside and said; a date in it ("in 2021")
    is the aside's, never the time the graph is read at; a second graph question still abstains."""
    a = ask("Everything I need before CSE 100, and also which laptop should I buy?")
    assert members(a) == {"cse_11", "cse_12", "math_20a", "math_20b"}
    assert a["set_aside"] == ["which laptop should I buy"]
    b = ask("List the prerequisites of CSE 101 and tell me the price of bitcoin in 2021.")
    assert members(b) == {"cse_12", "math_20b"} and b["reading"]["time"] is None
    assert "bitcoin" in b["set_aside"][0]
    c = ask("What do I need before CSE 100, and what do I need before CSE 110?")
    assert c["abstained"] and "two questions" in c["abstain_reason"]


def test_a_code_with_its_title_in_parentheses_is_one_course(ask: Any) -> None:
    a = ask("What do I need right before CSE 101 (Algorithms)?")
    assert members(a) == {"cse_12", "math_20b"}
    assert [s["concept_id"] for s in a["reading"]["subjects"]] == ["cse_101"]


def test_what_two_courses_have_in_common_is_everything_both_need(ask: Any) -> None:
    a = ask("What do CSE 100 and CSE 101 have in common?")
    assert a["reading"]["combine"] == "both" and members(a) == {"cse_11", "cse_12", "math_20a", "math_20b"}


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("What do I need to know before the CSE 100 midterm?", "midterm"),
        ("What's left before CSE 100? I'm fine with COGS 108.", "COGS"),
        ("I've done CSE 11 and LIGN101, what can I take next?", "LIGN"),
        ("Which careers use CSE 110?", "careers"),
    ],
)
def test_a_word_no_part_of_the_reading_explains_is_an_abstention(ask: Any, question: str, words: str) -> None:
    """A longer phrase of which only the start is a course, a code the catalogue lacks where what
    the learner knows stands, an attribute the graph does not hold: never the rest answered as if
    it were the whole question."""
    a = ask(question)
    assert a["abstained"] and words in a["abstain_reason"], a["text"]


def test_the_learners_background_is_reported_not_read(ask: Any) -> None:
    a = ask("I'm a DSC major. Trace the prerequisite chain from CSE 11 up to CSE 100 for me.")
    assert not a["abstained"] and a["reading"]["background"] == ["DSC major"]
    b = ask("just finished CSE 12 in my bootcamp, which courses list it as a direct prerequisite")
    assert members(b) == {"cse_100", "cse_101", "cse_110"} and b["reading"]["background"] == ["bootcamp"]


def test_the_difference_between_two_concepts_quotes_the_contrast(sqlite_engine: Engine) -> None:
    """ "What is the difference between A and B": the contrast edge's own reason, cited."""
    clock = ManualClock(now=datetime(2025, 1, 1, tzinfo=UTC))
    gw = WriteGateway(sqlite_engine, clock=clock)
    build_graph(gw, [("sup", "Supervised learning"), ("unsup", "Unsupervised learning")])
    gw.apply(
        [
            Write.edge(
                "sup",
                "unsup",
                "contrasts_with",
                grounding=grounding(
                    "Supervised learning needs labels while unsupervised learning finds structure"
                ),
            )
        ]
    )
    planner = Planner(GraphReader(sqlite_engine, clock=clock), OfflineSynthesizer(), clock=clock)
    a = planner.ask(
        "What is the difference between supervised learning and unsupervised learning?", record=False
    )
    assert a.text.startswith(
        "Supervised learning contrasts with Unsupervised learning: Supervised learning needs labels while "
        "unsupervised learning finds structure (e"
    ), a.text
    assert len(a.cited_edges) == 1


@pytest.mark.parametrize(
    "question",
    [
        "Is it possible for me to take CSE 100 after finishing CSE 12?",
        "Will CSE 12 be enough for me to take CSE 100?",
        "Is CSE 12 enough to get into CSE 100?",
        "Are CSE 12 and CSE 11 sufficient for CSE 100?",
    ],
)
def test_whether_what_is_done_is_enough_is_readiness(ask: Any, question: str) -> None:
    """A possibility for the learner, or a word of sufficiency, asks readiness: not whether the
    one course is needed for the other (it is, and the answer would be a wrong yes)."""
    a = ask(question)
    assert a["reading"]["form"] == "ready" and a["result"]["holds"] is False
    assert "MATH 20B" in a["text"]


def test_a_condition_still_to_come_is_answered_only_where_both_readings_agree(sqlite_engine: Engine) -> None:
    """ "Once I pass X, which courses am I then eligible for?" may ask what X itself opens or
    everything then open (X's own foundations open courses too): answered where the two agree,
    else abstained on with both rewrites; "having passed X" says X is done (what comes next)."""
    clock = ManualClock(now=datetime(2025, 1, 1, tzinfo=UTC))
    courses = [("a", "ALG 1"), ("x", "ALG 2"), ("b", "GEO 1"), ("c", "ALG 3"), ("d", "ALG 4")]
    edges = [("a", "x", "prerequisite"), ("a", "b", "prerequisite"), ("x", "c", "prerequisite")]
    build_graph(WriteGateway(sqlite_engine, clock=clock), courses, [*edges, ("c", "d", "prerequisite")])
    planner = Planner(GraphReader(sqlite_engine, clock=clock), OfflineSynthesizer(), clock=clock)

    def ask(question: str) -> dict[str, Any]:
        return planner.ask(question, record=False).to_dict()

    two = ask("Once I pass ALG 2, which courses am I then eligible for?")
    assert two["reading"]["agree"] == ["opens"]
    assert two["abstained"] and "reads two ways" in two["abstain_reason"]
    assert "What does ALG 2 open up?" in two["abstain_reason"]
    # ALG 1 rests on nothing: all it opens is all that is then open, the two readings agree
    one = ask("Once I pass ALG 1, which courses am I then eligible for?")
    assert one["reading"]["agree"] == ["opens"] and members(one) == {"x", "b"}
    done = ask("Having passed ALG 2, which courses am I eligible for now?")
    assert done["reading"]["agree"] == [] and members(done) == {"b", "c"}
    # the mirror: read as what X opens, with X a condition still to come
    mirror = ask("Which courses open up once I know ALG 2?")
    assert mirror["reading"]["intent"] == "opens" and mirror["reading"]["agree"] == ["next"]
    assert mirror["abstained"] and "reads two ways" in mirror["abstain_reason"]
    assert members(ask("Which courses open up once I know ALG 1?")) == {"x", "b"}


def test_a_name_the_learner_says_they_have_is_never_dropped(ask: Any) -> None:
    """A name in what the learner says they have or have done that the reading does not read
    ("I have pass X already", English the known-verbs miss) makes the reading unsure: what they
    have may be what the answer turns on. Said in passing ("I'm new to X"), it is context."""
    a = ask("I have pass CSE 11 already. It is enough for take CSE 100, or some course still is missing?")
    assert a["abstained"] and "also names 'CSE 11'" in a["abstain_reason"]
    b = ask("I'm new to CSE 11 stuff, honestly. What do I need before CSE 100?")
    assert members(b) == {"cse_11", "cse_12", "math_20a", "math_20b"}


def test_whether_what_is_known_covers_a_course_is_readiness(ask: Any) -> None:
    """ "Does that cover everything Y needs, or is a course still missing?" asks whether, not only
    what is left; a terse "have A; target Y. outstanding prereqs?" asks what is left."""
    a = ask(
        "I just finished CSE 12. Does that cover everything CSE 110 needs, or is there still a course I'd be missing?"
    )
    assert a["reading"]["form"] == "ready" and a["result"]["holds"] is True
    b = ask("have CSE 12; target CSE 100. outstanding prereqs?")
    assert b["reading"]["form"] == "" and members(b) == {"math_20a", "math_20b"}


@pytest.mark.parametrize(
    ("question", "written"),
    [
        ("My adviser says CSE 100 needs MATH21D somewhere in its chain of prerequisites. True?", "MATH21D"),
        ("I have passed CSE105 already. Is that enough to take CSE 110?", "CSE105"),
        ("What do I need before MATH 20A and cse 140?", "cse 140"),
    ],
)
def test_a_code_shaped_like_the_catalogues_that_it_does_not_hold_is_an_abstention(
    ask: Any, question: str, written: str
) -> None:
    """A word this graph's names write a number after ("CSE", "MATH"), written with a number
    outside every name, is a name the graph does not hold: the answer would drop it, so the
    question is abstained on and the code named (with close ones offered)."""
    a = ask(question)
    assert (
        a["abstained"] and f"names {written!r}, which is not a concept in this graph" in a["abstain_reason"]
    )


def test_a_number_after_a_word_no_name_writes_a_number_after_is_not_a_code(ask: Any) -> None:
    """Numbers beside other words are no codes: a year, a count, a week of the term."""
    assert members(ask("In week 3 of the term, what do I need before CSE 100?")) == {
        "cse_11",
        "cse_12",
        "math_20a",
        "math_20b",
    }
    assert members(ask("What comes directly before MATH 20B?")) == {"math_20a"}


def test_a_goal_heading_a_readiness_question_as_its_label_is_readiness(ask: Any) -> None:
    """ "Y: am I allowed in with only A behind me? If not, what's missing?" asks whether, and what
    is left: the goal as the question's label is still the goal (not a name said before it)."""
    a = ask("CSE 100: am I allowed in with only CSE 12 behind me? If not, what's missing?")
    assert a["reading"]["form"] == "ready" and a["result"]["holds"] is False
    assert members(a) == {"math_20a", "math_20b"}
    b = ask("CSE 110: am I allowed in with only CSE 12 behind me?")
    assert b["reading"]["form"] == "ready" and b["result"]["holds"] is True


def test_a_number_listed_after_a_code_is_offered_as_that_code_not_dropped(ask: Any) -> None:
    """ "CSE 100 and 101": the second code's word is left out; answering about CSE 100 alone would
    drop it, so the question is abstained on, offering CSE 101. A count after a code is no code."""
    a = ask("What do I need before CSE 100 and 101?")
    assert a["abstained"] and "names '101'" in a["abstain_reason"]
    assert [d["id"] for d in a["did_you_mean"]] == ["cse_101"]
    b = ask("I took CSE 11, 3 years ago. What is left before CSE 100?")
    assert members(b) == {"cse_12", "math_20a", "math_20b"}
