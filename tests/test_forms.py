"""Question forms (yes/no, how many, why, which first, how related, what next) and names as
learners write them: each form is read as a form of a relation, or not answered."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from control_plane.understanding.interpretation import Reading, interpret, mentions_in
from control_plane.understanding.names import NameIndex

NOW = datetime(2026, 11, 23, 15, 0, tzinfo=UTC)
INDEX = NameIndex.from_names(
    [
        ("rag", "Retrieval-augmented generation", ("RAG", "retrieval augmented generation")),
        ("embeddings", "Embeddings", ()),
        ("vector_search", "Vector search", ()),
        ("agent_orchestration", "Agent orchestration", ()),
        ("rhythm", "Rhythm", ()),
        ("triads", "Triads", ()),
        ("meter", "Meter", ()),
        ("seventh_chords", "Seventh chords", ()),
        ("intervals", "Intervals", ()),
        ("scales", "Scales", ()),
        ("fisher_information", "Fisher information", ()),
        ("fisher_information_matrix", "Fisher information matrix", ()),
        ("criteria", "Decision criteria", ()),
        ("rag_evaluation", "RAG evaluation", ()),
        ("adam", "Adam optimizer", ("Adam",)),
    ]
)
FULL = {"prerequisite": 40, "builds_on": 30, "part_of": 10, "related": 5, "contrasts_with": 5}


def read(question: str) -> Reading:
    return interpret(question, mentions_in(question, INDEX), now=NOW, relations=FULL, model=None)


@pytest.mark.parametrize(
    ("question", "transitive"),
    [
        ("Is embeddings a prerequisite for RAG?", True),
        ("Do I need embeddings before I start RAG?", True),
        ("Does RAG depend on embeddings?", True),
        ("should i learn embeddings before rag", True),
        ("Is embeddings directly required for RAG?", False),
    ],
)
def test_yes_no_asks_whether_the_candidate_is_needed_before_the_subject(
    question: str, transitive: bool
) -> None:
    """An auxiliary-first question about two concepts is a check: is X (candidate) in Y's needs."""
    r = read(question)
    assert r.sure and r.form == "yes_no", r.describe()
    assert (r.intent, r.subject, r.candidate, r.transitive) == (
        "needed_before",
        "rag",
        "embeddings",
        transitive,
    )


def test_yes_no_keeps_the_relation_its_words_name() -> None:
    """'Does RAG build on embeddings?' checks what RAG builds on, not learning order in general."""
    r = read("Does RAG build on embeddings?")
    assert (r.form, r.intent, r.subject, r.candidate) == ("yes_no", "builds_on", "rag", "embeddings")


@pytest.mark.parametrize(
    "question",
    [
        "Can you tell me what RAG needs?",
        "Do you know which concepts RAG needs?",
        "Are there prerequisites for RAG?",
    ],
)
def test_requests_and_existential_questions_are_not_yes_no(question: str) -> None:
    """'Can you tell me ...', 'do you know which ...', 'are there ...' ask for the list."""
    r = read(question)
    assert r.sure and r.form == "" and r.subject == "rag", r.describe()


def test_how_many_counts_the_reading_of_the_rest() -> None:
    """'How many direct prerequisites does Y have?' is the count of Y's direct prerequisites."""
    r = read("How many direct prerequisites does RAG have?")
    assert (r.form, r.intent, r.subject, r.transitive) == ("count", "prerequisites", "rag", False)
    r = read("how many concepts do I need before agent orchestration")
    assert (r.form, r.intent, r.subject, r.transitive) == (
        "count",
        "needed_before",
        "agent_orchestration",
        True,
    )


def test_any_number_of_is_not_a_count() -> None:
    """'... any number of steps later' is a scope, not 'how many'."""
    assert read("Name everything that comes after RAG, any number of steps later.").form == ""


@pytest.mark.parametrize(
    "question", ["Why do I need embeddings to learn RAG?", "Why is embeddings a prerequisite for RAG?"]
)
def test_why_asks_for_the_chain_from_the_candidate_to_the_subject(question: str) -> None:
    r = read(question)
    assert r.sure and (r.form, r.subject, r.candidate) == ("why", "rag", "embeddings"), r.describe()


def test_why_with_one_concept_says_what_it_understood() -> None:
    """'Why do I need RAG?' names no second concept: not answered, and the problem says so."""
    r = read("Why do I need RAG?")
    assert not r.sure and r.problem and "why" in r.problem


@pytest.mark.parametrize(
    "question",
    [
        "Please explain why basket weaving is needed before RAG",
        "tell me why folk dance is required for triads",
    ],
)
def test_a_why_before_the_names_with_a_topic_the_graph_lacks_is_not_answered(question: str) -> None:
    """A why that leads the request governs it: the other place holds words no concept has, so
    the question is not answered as what the named concept needs, and the words are named."""
    r = read(question)
    assert not r.sure and r.problem and "not a concept in this graph" in r.problem, r.describe()


def test_a_why_pointing_back_at_a_claim_about_one_concept_is_not_answered() -> None:
    """ "My lecturer insists <words> has to come before X. Is there a chain that explains why?":
    the why asks about the claim it points back at, which names one concept; not answered as what
    X needs. The same claim about two concepts asks for the chain between them."""
    r = read("My lecturer insists basket weaving has to come before RAG. Is there a chain that explains why?")
    assert not r.sure and r.problem and "why one is needed for the other" in r.problem, r.describe()
    two = read("My lecturer insists embeddings has to come before RAG. Is there a chain that explains why?")
    assert two.sure and (two.form, two.subject, two.candidate) == ("why", "rag", "embeddings"), two.describe()


def test_a_why_told_before_the_names_that_the_asking_points_back_at_is_a_why() -> None:
    """ "My students keep asking why X has to come before Y. What's the chain that links them?":
    the chain asked for is the one that says why (not how the two relate)."""
    r = read(
        "My students keep asking why embeddings has to come before RAG. What's the chain that links them?"
    )
    assert r.sure and (r.form, r.subject, r.candidate) == ("why", "rag", "embeddings"), r.describe()


@pytest.mark.parametrize(
    "question",
    ["how is basket weaving connected to RAG?", "so where does folk dance stand in relation to triads?"],
)
def test_how_a_topic_the_graph_lacks_relates_to_a_concept_is_not_answered(question: str) -> None:
    """The first place of 'how is A connected to B' holds words no concept has: not answered as
    what B is related to, and the words are named."""
    r = read(question)
    assert not r.sure and r.problem and "not a concept in this graph" in r.problem, r.describe()


def test_what_a_concept_is_related_to_is_still_read() -> None:
    """One concept after a question word and a relation word, with nothing unexplained before it."""
    assert read("what is RAG related to?").intent == "related"
    assert read("how is RAG connected to embeddings?").intent == "relate"


def test_a_why_in_a_later_clause_does_not_make_a_why_question() -> None:
    """'..., so I can show them why it matters' is the asker's purpose, not what is asked."""
    r = read("I teach RAG to beginners; which concepts build on it, so I can show them why it matters?")
    assert r.sure and r.intent == "built_by" and r.form == "", r.describe()


@pytest.mark.parametrize(
    "question",
    [
        "Which should I learn first, rhythm or triads?",
        "rhythm or triads first?",
        "Do I learn rhythm before triads or triads before rhythm?",
        "should I start with rhythm or triads",
        "In what order should I learn rhythm and triads?",
    ],
)
def test_which_first_names_both_concepts(question: str) -> None:
    """Neither concept is dropped: the order of the two is asked."""
    r = read(question)
    assert r.sure and r.intent == "order" and set(r.ids()) == {"rhythm", "triads"}, r.describe()


def test_before_one_or_the_other_is_not_which_first() -> None:
    """'What do I need before rhythm or triads?' asks what comes before either."""
    assert read("What do I need before rhythm or triads?").intent != "order"


@pytest.mark.parametrize(
    "question",
    [
        "How are meter and seventh chords related?",
        "What's the connection between meter and triads?",
        "how do meter and triads relate",
        "Are meter and triads related?",
        "What does meter have to do with triads?",
        # a question word standing alone asks about the relation itself
        "Hi there, where does meter stand in relation to triads? Thanks",
        "what links meter with triads",
        "meter & triads: what's the connection?",
    ],
)
def test_how_related_asks_how_two_concepts_relate(question: str) -> None:
    r = read(question)
    assert r.sure and r.intent == "relate" and len(r.ids()) == 2, r.describe()


def test_related_to_both_is_still_a_neighbourhood() -> None:
    """'What is related to both meter and triads?' asks for concepts, not how the two relate; so
    does a question word before the noun it asks for."""
    assert read("What is related to both meter and triads?").intent == "related"
    assert read("what prerequisites do meter and triads have in common?").intent != "relate"


def test_what_next_keeps_every_known_concept() -> None:
    """'I know A, B and C, what can I learn next?' reads all three as known."""
    r = read("I know rhythm, intervals and scales, what can I learn next?")
    assert r.sure and r.intent == "next" and set(r.known) == {"rhythm", "intervals", "scales"}


def test_finished_x_what_does_it_unlock_stays_about_x() -> None:
    """'I finished RAG. What does it unlock?' asks what comes after RAG, not the learner's fringe."""
    assert read("I finished RAG. What does it unlock?").intent == "dependents"


def test_whats_left_keeps_both_known_concepts() -> None:
    """'I already know A and B, what's left before Y?' reads A and B as known."""
    r = read("I already know embeddings and vector search, what's left before RAG?")
    assert r.subject == "rag" and set(r.known) == {"embeddings", "vector_search"}


def test_a_plural_name_resolves_to_the_longer_concept() -> None:
    """'Fisher information matrices' is the matrix, not 'Fisher information'."""
    assert (
        read("What are the prerequisites of Fisher information matrices?").subject
        == "fisher_information_matrix"
    )
    assert read("what does the fisher information matrix need").subject == "fisher_information_matrix"


def test_classical_plurals_name_their_singular_and_back() -> None:
    """'criterion' names 'Decision criteria' (stored plural), 'matrices' names a matrix."""
    assert INDEX.find("decision criterion") == ["criteria"]
    assert INDEX.find("fisher information matrices") == ["fisher_information_matrix"]


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("embedings", "embeddings"),
        ("Retrieval Augmented Genration", "rag"),
        ("fisher information matric", "fisher_information_matrix"),
    ],
)
def test_suggest_finds_the_name_a_slip_missed(words: str, expected: str) -> None:
    assert INDEX.suggest(words)[0].concept_id == expected


@pytest.mark.parametrize("words", ["agent evaluation", "madam", "sourdough baking"])
def test_suggest_does_not_offer_a_different_word(words: str) -> None:
    """A slip changes letters inside words ("agent" is not "RAG"); a short word needs a closer
    match ("madam" is not "Adam")."""
    assert INDEX.suggest(words) == []


def test_count_asked_as_an_imperative() -> None:
    r = read("count the direct prerequisites of triads for me")
    assert r.sure and r.form == "count" and r.intent == "prerequisites", r.describe()


def test_two_questions_about_different_concepts_are_not_merged() -> None:
    """'What comes after meter? And what is the link with triads?' asks two things: one reading
    would answer neither."""
    for question in (
        "what comes after meter? and what does triads build on?",
        "what comes after meter? et puis, c'est quoi le lien avec triads ?",
    ):
        assert not read(question).sure, read(question).describe()
    same = read("What comes after meter? I mean everything after meter?")
    assert same.sure, same.describe()


@pytest.mark.parametrize(
    ("question", "known"),
    [
        (
            "Knowing rhythm, intervals, scales — what could I learn right after?",
            {"rhythm", "intervals", "scales"},
        ),
        (
            "just wrapped up rhythm and intervals this semester, what can i take on next",
            {"rhythm", "intervals"},
        ),
    ],
)
def test_what_next_with_knowns_said_in_other_words(question: str, known: set[str]) -> None:
    r = read(question)
    assert r.sure and r.intent == "next" and set(r.known) == known, r.describe()


@pytest.mark.parametrize(
    "question",
    [
        "I want to get to triads eventually. I already have rhythm and intervals. what's still missing?",
        "triads is my goal and rhythm is done. What's left on the list?",
        "knowing rhythm and intervals, what else stands between me and triads",
        "whats outstanding before triads if rhythm is already done",
    ],
)
def test_what_is_left_with_knowns_said_in_other_words(question: str) -> None:
    r = read(question)
    assert r.sure and r.intent == "needed_before" and r.subject == "triads" and "rhythm" in r.known, (
        r.describe()
    )


def test_an_unknown_topic_in_the_known_list_is_not_dropped() -> None:
    r = read("just wrapped up rhythm and jazz harmony this semester, what can i take on next")
    assert not r.sure and "jazz harmony" in (r.problem or ""), r.describe()


@pytest.mark.parametrize(
    "question",
    [
        "should i start with rhythm or with triads",
        "I have a week off and want to study rhythm and triads. Which goes first?",
        "in what sequence should rhythm and triads be learned",
        "tell me which to pick up first out of rhythm and triads",
        "What's the right order for rhythm and triads pls",
        "Does rhythm go first or does triads?",
    ],
)
def test_which_first_said_in_other_words(question: str) -> None:
    r = read(question)
    assert r.sure and r.intent == "order" and set(r.ids()) == {"rhythm", "triads"}, r.describe()


def test_concepts_in_order_between_two_are_a_path_not_which_first() -> None:
    r = read(
        "departing from rhythm, with triads as my destination. Which concepts should I pass through, and in what order?"
    )
    assert r.intent != "order", r.describe()


@pytest.mark.parametrize(
    "question",
    [
        "triads directly depends on scales, yes or no?",
        "pls confirm: scales is an immediate requirement for triads, correct?",
        "Tell me whether scales is required at some point on the way to triads.",
        "triads needs scales, right?",
    ],
)
def test_a_statement_put_up_for_confirmation_is_a_yes_no_question(question: str) -> None:
    r = read(question)
    assert r.sure and r.form == "yes_no" and r.subject == "triads" and r.candidate == "scales", r.describe()


def test_a_confirmation_tag_does_not_turn_a_wh_question_into_yes_no() -> None:
    assert read("what does triads need, right?").form != "yes_no"
