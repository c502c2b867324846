"""Seeding: normalisation, matching and the specificity rules, and the planner's name-index cache."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import Engine

from control_plane.planning.loop import Planner
from control_plane.testing import ScriptedSynthesizer, draft
from control_plane.understanding.names import NameIndex, PhraseTable, normalise, singular
from data_plane import GraphReader, WriteGateway
from data_plane.testing import ManualClock, build_graph, grounding


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("embeddings", "embedding"),
        ("agents", "agent"),
        ("queries", "query"),
        ("batches", "batch"),
        ("loss", "loss"),
        ("bus", "bus"),
        ("analysis", "analysis"),
        ("bias", "bias"),
        ("gas", "gas"),
        ("rag", "rag"),
    ],
)
def test_singular_is_conservative(token: str, expected: str) -> None:
    """Plural tokens lose their ending; -ss, -us, -is, -as and short tokens are kept."""
    assert singular(token) == expected


def test_normalise_ignores_case_hyphens_and_punctuation() -> None:
    """Case, hyphens, punctuation and plurals do not change the token sequence."""
    assert normalise("Self-Supervised  Learning's Embeddings?!") == normalise(
        "self supervised learning embedding"
    )


def _index() -> NameIndex:
    return NameIndex.from_names(
        [
            ("agent", "AI agent", ["agent", "LLM agent"]),
            ("agent_orchestration", "Agent orchestration", []),
            ("rag", "Retrieval-augmented generation", ["RAG"]),
            ("embeddings", "Embeddings", []),
            ("tokenization", "Tokenization", []),
            ("self_attention", "Self-attention", []),
        ]
    )


def test_finds_names_and_aliases_case_and_plural_insensitively() -> None:
    """An alias in another case and a plural name both match."""
    assert set(_index().find("how do rag systems use EMBEDDING?")) == {"rag", "embeddings"}


def test_hyphenated_name_matches_spaced_text() -> None:
    """'Self-attention' is found in 'self attention'."""
    assert _index().find("explain self attention") == ["self_attention"]


def test_longer_match_beats_contained_shorter_one() -> None:
    """'agent orchestration' wins over the 'agent' inside it."""
    assert _index().find("before agent orchestration") == ["agent_orchestration"]


def test_shorter_match_elsewhere_is_kept() -> None:
    """'agent' outside the longer span still counts."""
    found = _index().find("agent orchestration and every agent")
    assert found[0] == "agent_orchestration" and "agent" in found


def test_ties_go_to_the_less_connected_concept() -> None:
    """With no containment, fewer active edges (more specific) ranks first."""
    found = _index().find("rag and tokenization", {"rag": 10, "tokenization": 2})
    assert found == ["tokenization", "rag"]


def test_equal_degree_ties_follow_appearance() -> None:
    """Equal degrees keep the order in which the question names them."""
    assert _index().find("tokenization and rag", {"rag": 1, "tokenization": 1}) == ["tokenization", "rag"]


def test_at_most_three_seeds() -> None:
    """Four named concepts give three seeds."""
    assert len(_index().find("rag embeddings tokenization self-attention")) == 3


def test_nothing_named_gives_no_seed() -> None:
    """A question naming no known concept yields no seed."""
    assert _index().find("what is the weather like?") == []


def test_index_is_cached_until_concepts_change(sqlite_engine: Engine) -> None:
    """Repeated questions on an unchanged graph build the index once; a new concept rebuilds it."""
    clock = ManualClock()
    gateway, reader = WriteGateway(sqlite_engine, clock=clock), GraphReader(sqlite_engine, clock=clock)
    build_graph(gateway, ["alpha", "beta"], [("alpha", "beta", "prerequisite")])
    planner = Planner(reader, ScriptedSynthesizer([draft(0.1)]), clock=clock)
    for _ in range(3):
        planner.ask("what comes before beta?", record=False)
    assert planner.index_builds == 1
    gateway.assert_concept("gamma", name="gamma", grounding=grounding())
    answer = planner.ask("what about gamma?", record=False)
    assert planner.index_builds == 2 and answer.seeds == ("gamma",)


def test_index_respects_as_of(sqlite_engine: Engine) -> None:
    """A concept asserted later is not a seed for a question asked as of before it existed."""
    clock = ManualClock()
    gateway, reader = WriteGateway(sqlite_engine, clock=clock), GraphReader(sqlite_engine, clock=clock)
    build_graph(gateway, ["alpha"])
    early = clock()
    clock.advance(clock.step * 10)
    build_graph(gateway, ["beta"])
    planner = Planner(reader, ScriptedSynthesizer([draft(0.1)]), clock=clock)
    assert planner.ask("beta?", record=False).seeds == ("beta",)
    assert planner.ask("beta?", as_of=early, known_at=early, record=False).seeds == ()


def test_head_of_a_qualified_name_finds_the_concept() -> None:
    """'linear algebra' names 'Linear algebra for ML' unless another concept is called that."""
    index = NameIndex.from_names([("linear_algebra_for_ml", "Linear algebra for ML", ())])
    assert index.find("how does linear algebra lead to lora?") == ["linear_algebra_for_ml"]
    both = NameIndex.from_names(
        [("linear_algebra_for_ml", "Linear algebra for ML", ()), ("linear_algebra", "Linear algebra", ())]
    )
    assert both.find("what is linear algebra?") == ["linear_algebra"]


def _merged(pairs: list[tuple[str, str]]) -> dict[str, str | tuple[str, ...]]:
    """What a plain dict holds for ``pairs``: one id, or the sorted ids sharing a phrase."""
    out: dict[str, str | tuple[str, ...]] = {}
    for phrase, cid in pairs:
        have = out.get(phrase)
        ids = () if have is None else (have,) if isinstance(have, str) else have
        if cid not in ids:
            out[phrase] = cid if not ids else tuple(sorted((*ids, cid)))
    return out


@settings(max_examples=200, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(st.text(min_size=1, max_size=6), st.sampled_from(["a", "b", "c_d", "é", "x y"])),
        max_size=40,
    ),
    colliding=st.booleans(),
    built=st.integers(min_value=0, max_value=40),
)
def test_the_packed_phrase_table_is_the_mapping_a_dict_would_be(
    pairs: list[tuple[str, str]], colliding: bool, built: int
) -> None:
    """The name index's packed table answers exactly as a dict: merged ids, membership, misses,
    iteration and entries in the order phrases first came, whether built from the pairs or added
    to afterwards (``built``: how many pairs it is built from); a hash that sends every phrase to
    one bucket never yields a false match."""
    table = PhraseTable(pairs[:built], hasher=(lambda _: 7) if colliding else hash)
    for phrase, cid in pairs[built:]:
        table.add(phrase, cid)
    want = _merged(pairs)
    assert dict(table) == want and len(table) == len(want)
    assert list(table.entries()) == list(want.items())
    assert all(table[p] == v and p in table for p, v in want.items())
    missing = "\u2603" * 7  # longer than any generated phrase
    assert table.get(missing) is None and missing not in table
    with pytest.raises(KeyError):
        table[missing]


def test_a_qualified_names_head_is_added_only_when_no_concept_owns_it() -> None:
    index = NameIndex.from_names(
        [
            ("la_ml", "Linear algebra for ML", ()),
            ("stats_ml", "Statistics for ML", ()),
            ("stats", "Statistics", ()),
        ]
    )
    assert index.phrases["linear algebra"] == "la_ml"
    assert index.phrases["statistic"] == "stats"  # the concept's own name, not the head of another


def test_a_qualifier_or_a_joined_hyphen_finds_the_name_when_unique() -> None:
    """ "motion" finds "Motion (physics)", "EM" finds "Expectation-Maximization (EM) Algorithm",
    "kmeans" finds "k-means": each only while no other concept could be meant."""
    index = NameIndex.from_names(
        [
            ("motion", "Motion (physics)", []),
            ("em", "Expectation-Maximization (EM) Algorithm", []),
            ("kmeans", "k-means", []),
            ("kmeans_pp", "k-means++", []),
        ]
    )
    assert index.find("what comes before motion?") == ["motion"]
    assert index.find("what does the EM algorithm need?") == ["em"]
    assert index.find("kmeans prerequisites") == ["kmeans"]
    assert index.find("k-means++ prerequisites") == ["kmeans_pp"]


def test_a_spelling_several_concepts_share_names_none_and_suggests_each() -> None:
    """ "motion" with "Motion (physics)" and "Motion (biology)" is no guess: both are offered."""
    index = NameIndex.from_names([("mp", "Motion (physics)", []), ("mb", "Motion (biology)", [])])
    assert index.find("what comes before motion?") == []
    assert {s.concept_id for s in index.suggest("motion")} == {"mp", "mb"}


def test_a_head_word_suggests_the_names_it_heads() -> None:
    """ "attention" names nothing but suggests "Attention mechanism"."""
    index = NameIndex.from_names([("am", "Attention mechanism", []), ("emb", "Embeddings", [])])
    assert index.find("what is attention?") == []
    assert [s.concept_id for s in index.suggest("attention")] == ["am"]
