"""Looking concepts up: the fuzzy search ranking (pure), and listing and profiles on both engines."""

from __future__ import annotations

import itertools

import pytest

from control_plane.surfaces.lookup import Hit, listing, profile, search
from control_plane.testing import make_concept
from data_plane import GraphReader, NotFound, WriteGateway
from data_plane.testing import build_graph, grounding

CATALOGUE = [
    make_concept("graphrag", "GraphRAG", summary="Retrieval over a knowledge graph."),
    make_concept("rag", "Retrieval-augmented generation", summary="Retrieve passages, then answer."),
    make_concept("cot", "Chain-of-thought prompting", summary="Ask the model to reason step by step."),
    make_concept("cosine_similarity", "Cosine similarity", summary="The angle between two vectors."),
    make_concept("schedules", "Learning rate schedules", summary="Warm-up, then cosine decay."),
]


def _ids(hits: list[Hit]) -> list[str]:
    return [h.concept_id for h in hits]


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("graph rag", "graphrag"),
        ("GRAPHRAG", "graphrag"),
        ("retreival augmented", "rag"),
        ("augmented generation retrieval", "rag"),
        ("chain of thougth", "cot"),
    ],
)
def test_search_finds_names_despite_typos_spacing_and_word_order(query: str, first: str) -> None:
    """A misspelt, differently spaced or reordered name finds its concept first."""
    assert _ids(search(query, CATALOGUE))[0] == first


def test_a_name_outranks_a_summary_that_mentions_the_words() -> None:
    """'cosine' is Cosine similarity's name and only a word of the schedules' summary: the name first."""
    assert _ids(search("cosine", CATALOGUE)) == ["cosine_similarity", "schedules"]


def test_aliases_are_searched() -> None:
    """An alias matches like a name, and the hit says it was the alias."""
    concepts = [make_concept("lora", "Low-rank adaptation", aliases=("LoRA",))]
    (hit,) = search("lora", concepts)
    assert (hit.concept_id, hit.field, hit.score) == ("lora", "alias", 100.0)


def test_a_short_alias_does_not_match_a_longer_query() -> None:
    """'CoT' is not a hit for 'cosine': a query is matched inside a name, never a name inside a query."""
    concepts = [make_concept("cot", "Chain-of-thought prompting", aliases=("CoT",), summary="Step by step.")]
    assert search("cosine", concepts) == []


def test_nothing_below_the_cutoff_and_at_most_limit_hits() -> None:
    """Hits score at least the cutoff; at most ``limit`` are returned, best first, ties by id."""
    hits = search("retrieval", CATALOGUE, cutoff=0, limit=3)
    assert len(hits) == 3 and all(a.score >= b.score for a, b in itertools.pairwise(hits))
    assert search("zzzz qqqq", CATALOGUE) == []


def test_listing_pages_by_id_with_filters(gateway: WriteGateway, reader: GraphReader) -> None:
    """Pages of concepts by id, filtered by relation and degree, each page saying where to go on."""
    build_graph(
        gateway,
        ["a", "b", "c", "d", "e"],
        [
            ("a", "b", "prerequisite"),
            ("a", "c", "prerequisite"),
            ("a", "d", "related"),
            ("b", "c", "builds_on"),
        ],
    )
    point = reader.as_of()
    page, nxt = listing(reader, point, limit=2)
    assert [i.concept.concept_id for i in page] == ["a", "b"] and nxt == "b"
    page, nxt = listing(reader, point, after=nxt, limit=2)
    assert [i.concept.concept_id for i in page] == ["c", "d"] and nxt == "d"
    page, nxt = listing(reader, point, after=nxt, limit=2)
    assert [(i.concept.concept_id, i.degree) for i in page] == [("e", 0)] and nxt is None
    related, _ = listing(reader, point, relation="related")
    assert [i.concept.concept_id for i in related] == ["a", "d"]
    busy, _ = listing(reader, point, min_degree=2)
    assert [(i.concept.concept_id, i.relations) for i in busy] == [
        ("a", {"prerequisite": 2, "related": 1}),
        ("b", {"prerequisite": 1, "builds_on": 1}),
        ("c", {"prerequisite": 1, "builds_on": 1}),
    ]
    assert [i.concept.concept_id for i in listing(reader, point, max_degree=0)[0]] == ["e"]


def test_profile_shows_edges_out_and_in_and_lessons(gateway: WriteGateway, reader: GraphReader) -> None:
    """A concept's profile: edges it starts (symmetric ones included), edges into it, its lessons."""
    build_graph(
        gateway, ["a", "b", "c"], [("a", "b", "prerequisite"), ("c", "b", "related"), ("b", "c", "builds_on")]
    )
    gateway.link_lesson("L1", "b", grounding=grounding(), title="Lesson one")
    found = profile(reader, "b", reader.as_of())
    assert [e.key for e in found.outgoing] == ["b>builds_on>c", "b>related>c"]
    assert [e.key for e in found.incoming] == ["a>prerequisite>b"]
    assert [(v.key, title) for v, title in found.lessons] == [(("L1", "b"), "Lesson one")]
    with pytest.raises(NotFound):
        profile(reader, "ghost", reader.as_of())
