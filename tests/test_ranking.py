"""The frontier ranking: focus concepts, focus relations, learning order, confidence, lexical overlap, id."""

from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from control_plane.planning.ranking import Ranking, follows, rank, relations_named
from control_plane.planning.round import Reserve
from control_plane.synthesizers.base import Focus
from control_plane.testing import make_concept, make_neighbour
from data_plane.records import Neighbour
from data_plane.relations import RELATIONS


def _ids(ns: list) -> list[str]:  # type: ignore[type-arg]
    return [n.concept.concept_id for n in ns]


def test_focus_concepts_rank_first() -> None:
    """A concept the focus names beats a better-connected one it does not name."""
    ns = [
        make_neighbour("x", "a", "prerequisite", confidence=1.0),
        make_neighbour("x", "b", "related", confidence=0.1),
    ]
    assert _ids(rank(ns, Focus(relations=("prerequisite",), concept_ids=("b",)), "q")) == ["b", "a"]


def test_focus_relations_rank_before_confidence() -> None:
    """An edge of a named relation beats a more confident edge of another relation."""
    ns = [
        make_neighbour("x", "a", "related", confidence=1.0),
        make_neighbour("x", "b", "part_of", confidence=0.5),
    ]
    assert _ids(rank(ns, Focus(relations=("part_of",)), "q")) == ["b", "a"]


def test_learning_order_prefers_foundations() -> None:
    """With prerequisite in focus, what comes before the expanded concept beats what comes after it."""
    after = make_neighbour("x", "later", "prerequisite", direction="out")  # x before later
    before = make_neighbour("x", "earlier", "prerequisite", direction="in")  # earlier before x
    foundation = make_neighbour("x", "base", "builds_on", direction="out")  # x builds on base
    got = _ids(rank([after, before, foundation], Focus(relations=("prerequisite", "builds_on")), "q"))
    assert got.index("later") == 2


def test_confidence_breaks_relation_ties() -> None:
    """Within one relation tier, the more confident edge ranks first."""
    ns = [
        make_neighbour("x", "a", "related", confidence=0.5),
        make_neighbour("x", "b", "related", confidence=0.9),
    ]
    assert _ids(rank(ns, Focus(), "q")) == ["b", "a"]


def test_lexical_overlap_breaks_confidence_ties() -> None:
    """Sharing tokens with the question ranks a concept higher."""
    vec = make_concept("vector_search", "Vector search", "Finds nearest vectors.")
    other = make_concept("aaa", "Aaa", "Unrelated.")
    ns = [make_neighbour("x", other, "related"), make_neighbour("x", vec, "related")]
    assert _ids(rank(ns, Focus(), "how does vector search work?")) == ["vector_search", "aaa"]


def test_id_makes_the_order_total_and_input_independent() -> None:
    """Equal candidates are ordered by id whatever the input order."""
    ns = [make_neighbour("x", c, "related") for c in ("c", "a", "b")]
    assert _ids(rank(ns, Focus(), "q")) == _ids(rank(list(reversed(ns)), Focus(), "q")) == ["a", "b", "c"]


def test_one_entry_per_concept_and_limit() -> None:
    """A concept reached twice appears once, and the limit is honoured."""
    ns = [make_neighbour("x", "a", "related"), make_neighbour("y", "a", "related")]
    ns += [make_neighbour("x", f"c{i}", "related") for i in range(20)]
    got = _ids(rank(ns, Focus(), "q", limit=12))
    assert len(got) == 12 and len(set(got)) == 12


def test_relations_named_by_cues() -> None:
    """Cue phrases name relation types in order of appearance."""
    assert relations_named("What must I master before X, and which does Y build on?") == (
        "prerequisite",
        "builds_on",
    )
    assert relations_named("RAG vs fine-tuning") == ("contrasts_with",)
    assert relations_named("what are the components of a RAG pipeline") == ("part_of",)
    assert relations_named("tell me about RAG") == ()


def test_learning_cues_name_prerequisite_and_builds_on() -> None:
    """'lead up to', 'lead to' and path words name the learning-order relations only."""
    for text in ("Which topics lead up to X?", "How does A lead to B?", "the learning path that ends at X"):
        assert relations_named(text) == ("prerequisite", "builds_on"), text


def test_new_relation_wordings_are_named() -> None:
    """'contrasted', 'opposite', 'belong to' and 'consist of' name their relation; 'connected' names none."""
    assert relations_named("What is X contrasted with?") == ("contrasts_with",)
    assert relations_named("What is the opposite of X?") == ("contrasts_with",)
    assert relations_named("Which metrics belong to X?") == ("part_of",)
    assert relations_named("What does X consist of?") == ("part_of",)
    assert relations_named("Which concepts are connected to X?") == ()


def test_follows_respects_relation_and_learning_direction() -> None:
    """A neighbour follows a learning-order question only if it comes before the concept it was reached from."""
    before = make_neighbour("x", "a", "prerequisite", direction="in")
    after = make_neighbour("x", "b", "prerequisite", direction="out")
    foundation = make_neighbour("x", "c", "builds_on", direction="out")
    other = make_neighbour("x", "d", "related")
    learning = ("prerequisite", "builds_on")
    assert [follows(n, learning) for n in (before, after, foundation, other)] == [True, False, True, False]
    assert follows(after, ("prerequisite",)) is False and follows(after, ("builds_on",)) is False
    assert all(follows(n, ()) for n in (before, after, foundation, other))


def test_a_next_question_counts_a_reserved_neighbour_either_way_as_outside_the_evidence() -> None:
    """What comes next reads before (what is known rests on) and after (what it opens): a known
    concept whose dependent waits in the reserve is not fully in the evidence. A learning-order
    question of one direction counts only that direction's reserved neighbours."""
    after = make_neighbour("x", "b", "prerequisite", direction="out")
    before = make_neighbour("x", "a", "prerequisite", direction="in")
    learning = ("prerequisite", "builds_on")
    assert follows(after, learning, "either") and follows(before, learning, "either")
    for direction, incomplete in (("either", {"x"}), ("", set())):
        reserve = Reserve(learning, direction)
        reserve.add(after)
        assert reserve.incomplete() == incomplete
        reserve.pop("b")
        assert reserve.incomplete() == set()


def test_neighbours_of_a_focused_concept_rank_next() -> None:
    """After named concepts, neighbours reached from a named concept beat everything else."""
    far = make_neighbour("other", "aaa", "prerequisite", confidence=0.99)
    near = make_neighbour("hub", "zzz", "related", confidence=0.1)
    assert _ids(rank([far, near], Focus(concept_ids=("hub",)), "q")) == ["zzz", "aaa"]


_NEIGHBOUR = st.builds(
    lambda f, c, r, d, conf: make_neighbour(f, c, r, direction=d, confidence=conf),
    st.sampled_from(["x", "y", "z"]),
    st.sampled_from(["a", "b", "c", "d", "e", "f"]),
    st.sampled_from(RELATIONS),
    st.sampled_from(["in", "out"]),
    st.sampled_from([0.3, 0.6, 0.9]),
)
_FOCUS = st.builds(
    Focus,
    st.lists(st.sampled_from(RELATIONS), max_size=3, unique=True).map(tuple),
    st.lists(st.sampled_from(["a", "x", "e"]), max_size=2, unique=True).map(tuple),
    st.sampled_from(["", "a b"]),
    st.sampled_from(["", "after"]),
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_NEIGHBOUR, max_size=25, unique_by=lambda n: n.edge.key),
    _FOCUS,
    st.integers(min_value=1, max_value=8),
    st.randoms(),
)
def test_rank_is_a_sort_of_each_concepts_best_neighbour(
    ns: list[Neighbour], focus: Focus, limit: int, rnd: random.Random
) -> None:
    """The ranking is one total order (one version per edge, as in force): each concept appears once, through the neighbour that ranks
    first among its own; any two entries keep their order when ranked alone; the limit takes a
    prefix; and the input order never matters."""
    full = rank(ns, focus, "what comes before a?")
    assert sorted(_ids(full)) == sorted({n.concept.concept_id for n in ns})
    for n in full:
        own = [m for m in ns if m.concept.concept_id == n.concept.concept_id]
        assert rank(own, focus, "what comes before a?") == [n]
    for first, second in itertools.pairwise(full):
        assert rank([second, first], focus, "what comes before a?") == [first, second]
    assert rank(ns, focus, "what comes before a?", limit=limit) == full[:limit]
    shuffled = list(ns)
    rnd.shuffle(shuffled)
    assert rank(shuffled, focus, "what comes before a?") == full


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_NEIGHBOUR, min_size=1, max_size=25, unique_by=lambda n: n.edge.key),
    st.integers(min_value=0, max_value=25),
    _FOCUS,
    _FOCUS,
    st.integers(min_value=1, max_value=8),
)
def test_a_questions_rankings_do_not_depend_on_the_rankings_before_them(
    ns: list[Neighbour], cut: int, focus: Focus, other: Focus, limit: int
) -> None:
    """A question's ``Ranking`` re-ranks (as the loop re-ranks its growing reserve every round,
    and its frontier in between, under one focus or another) exactly as a first ranking of the
    same candidates does."""
    earlier, later = ns[:cut], ns[cut:]
    query = "what comes before a?"
    ranking = Ranking(query)
    ranking.rank(earlier, focus, limit=limit)
    ranking.rank(later[:2], focus)
    ranking.rank(ns[::2], other, limit=limit)
    for candidates in (ns, later, earlier[::-1]):
        assert ranking.rank(candidates, focus, limit=limit) == rank(candidates, focus, query, limit=limit)
        assert ranking.rank(candidates, other) == rank(candidates, other, query)
