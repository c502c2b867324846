"""Which neighbours win the frontier places: a pure, deterministic ranking.

:func:`rank` orders candidate neighbours (one :class:`~data_plane.records.Neighbour` per concept)
by relevance to the current focus. The sort key, most significant first:

1. the concept is named by the focus (``focus.concept_ids``): named concepts first, then
   neighbours reached *from* a named concept (a focus on an expanded concept asks for the rest
   of its neighbourhood), then the others;
2. the relation of the connecting edge is named by the focus (``focus.relations``): named
   relations first;
3. learning order: when the focus names ``prerequisite`` (a "what comes before" question), a
   neighbour that comes *before* the concept it was reached from (the source of a prerequisite
   into it, or the target of a builds_on out of it) ranks ahead of one that comes after it, and
   the reverse when ``focus.direction`` is "after" ("what comes after X");
4. among named relations, the order in which the focus names them;
5. edge confidence, higher first;
6. lexical similarity: the number of distinct normalised tokens shared by the concept's
   name + summary and the focused query (question + focus text), higher first;
7. concept id, ascending (a total order, so the result never depends on input order).

:class:`Ranking` ranks for one question, keeping each candidate's key per focus for the
question's later rankings (the loop re-ranks its reserve every round).

:func:`relations_named` finds the relation types a text names by cue phrases (the planner's first
focus); :func:`follows` says whether a neighbour lies along those relations (and, for a
learning-order question, comes before the concept it was reached from). Normalised token sets
of names and summaries are memoised, so ranking a neighbourhood costs set intersections only.
Nothing here reads the clock or the database.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from functools import lru_cache
from typing import Final

from control_plane.synthesizers.base import Focus
from control_plane.understanding.names import normalise
from data_plane.records import Neighbour
from data_plane.relations import BUILDS_ON, CONTRASTS_WITH, PART_OF, PREREQUISITE, RELATED

__all__ = ["Ranking", "comes_before", "follows", "rank", "relations_named", "similarity"]

# Cue phrases (normalised token sequences, see ``seeding.normalise``) → relation types they name.
# They mirror the intent table of ``control_plane.synthesizers.offline``: learning-order questions ("before",
# "lead to", "lead up to", "path", "chain") name prerequisite and builds_on; "prerequisite" alone
# names the stored relation; structural words ("connected", "hops", "link") name none.
_LEARNING: Final = (PREREQUISITE, BUILDS_ON)
_CUES: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("before", _LEARNING),
    ("first", _LEARNING),
    ("need", _LEARNING),
    ("require", _LEARNING),
    ("required", _LEARNING),
    ("master", _LEARNING),
    ("lead up to", _LEARNING),
    ("groundwork", _LEARNING),
    ("background", _LEARNING),
    ("end at", _LEARNING),
    ("indirect", _LEARNING),
    ("transitive", _LEARNING),
    ("transitively", _LEARNING),
    ("all the way", _LEARNING),
    ("lead to", _LEARNING),
    ("path", _LEARNING),
    ("chain", _LEARNING),
    ("get from", _LEARNING),
    ("prerequisite", (PREREQUISITE,)),
    ("build", (BUILDS_ON,)),
    ("built", (BUILDS_ON,)),
    ("based on", (BUILDS_ON,)),
    ("depend on", (BUILDS_ON, PREREQUISITE)),
    ("use", (BUILDS_ON,)),
    ("foundation", (BUILDS_ON,)),
    ("part", (PART_OF,)),
    ("component", (PART_OF,)),
    ("piece", (PART_OF,)),
    ("made of", (PART_OF,)),
    ("make up", (PART_OF,)),
    ("consist", (PART_OF,)),
    ("include", (PART_OF,)),
    ("belong to", (PART_OF,)),
    ("contrast", (CONTRASTS_WITH,)),
    ("contrasted", (CONTRASTS_WITH,)),
    ("versus", (CONTRASTS_WITH,)),
    ("vs", (CONTRASTS_WITH,)),
    ("alternative", (CONTRASTS_WITH,)),
    ("opposite", (CONTRASTS_WITH,)),
    ("difference", (CONTRASTS_WITH,)),
    ("related", (RELATED,)),
)
_CUE_TOKENS: Final = tuple((normalise(cue), rels) for cue, rels in _CUES)


def _contains(tokens: Sequence[str], phrase: Sequence[str]) -> int:
    """Position of the first occurrence of ``phrase`` in ``tokens``, or -1."""
    n = len(phrase)
    first = phrase[0]
    for i, tok in enumerate(tokens):
        if tok == first and tuple(tokens[i : i + n]) == tuple(phrase):
            return i
    return -1


def relations_named(text: str) -> tuple[str, ...]:
    """Relation types named by cue phrases in ``text``, in order of first appearance."""
    toks = normalise(text)
    hits: list[tuple[int, int, str]] = []
    for order, (cue, relations) in enumerate(_CUE_TOKENS):
        pos = _contains(toks, cue)
        if pos >= 0:
            hits.extend((pos, order * 10 + k, rel) for k, rel in enumerate(relations))
    out: list[str] = []
    for _, _, rel in sorted(hits):
        if rel not in out:
            out.append(rel)
    return tuple(out)


def comes_before(n: Neighbour) -> bool:
    """Is the reached concept learned before the one it was reached from?"""
    rel, d = n.edge.relation, n.direction
    return (rel == PREREQUISITE and d == "in") or (rel == BUILDS_ON and d == "out")


def follows(n: Neighbour, relations: Collection[str], direction: str = "") -> bool:
    """Does ``n`` lie along what a question with these named relations needs?

    No named relation: every neighbour does. Otherwise the edge's relation must be named, and
    when ``prerequisite`` is named (a learning-order question) the neighbour must come *before*
    the concept it was reached from (``direction="after"``: after it; ``"either"``: both ways).
    The planner uses this to chain expansions within a round
    and to decide whether an expanded concept still has relevant neighbours outside the evidence.
    """
    if not relations:
        return True
    if n.edge.relation not in relations:
        return False
    if direction == "after":
        return not comes_before(n)
    if direction == "either":
        return True
    return PREREQUISITE not in relations or comes_before(n)


@lru_cache(maxsize=8192)
def _token_set(text: str) -> frozenset[str]:
    return frozenset(normalise(text))


def similarity(text: str, query_tokens: frozenset[str]) -> int:
    """Distinct normalised tokens shared by ``text`` and the query."""
    return len(_token_set(text) & query_tokens)


# A candidate's entry: its sort key (unique: the concept id and edge key end it), then itself.
# The key's first four criteria (module docstring: named concept, named relation, learning
# order, order of naming) are one mixed-radix number, so comparing two keys that tie on them
# (most do) costs one comparison instead of four.
_Entry = tuple[int, float, int, str, str, Neighbour]
_CID: Final = 3  # the concept id's place in an entry


class _Context:
    """What ranking under one focus needs, and every candidate ranked under it so far, kept in
    key order: the loop re-ranks its growing reserve every round, mostly under an unchanged
    focus, so each candidate's key is computed once and a ranking only merges the new ones in.

    Entries are found by the neighbour's ``id``: an entry holds its neighbour, which keeps it
    alive, so the id stays its own (hashing a neighbour would hash all its nested fields)."""

    __slots__ = ("entries", "forward", "learning_order", "named", "order", "qtokens", "rel_order")

    def __init__(self, focus: Focus, query: str) -> None:
        self.qtokens = _token_set(f"{query} {focus.text}")
        self.named = frozenset(focus.concept_ids)
        self.rel_order = {rel: i for i, rel in enumerate(focus.relations)}
        self.learning_order = PREREQUISITE in self.rel_order
        self.forward = focus.direction == "after"  # "what comes after X": later concepts first
        self.entries: dict[int, _Entry] = {}
        self.order: list[_Entry] = []  # every entry, by key

    def entry(self, n: Neighbour) -> _Entry:
        edge, c = n.edge, n.concept
        rel, cid = edge.relation, c.concept_id
        rel_order, named = self.rel_order, self.named
        places = len(rel_order) + 1  # the range of the fourth criterion
        return (
            (
                (0 if cid in named else 1 if n.from_id in named else 2) * 4
                + (0 if rel in rel_order else 2)
                + (0 if not self.learning_order or comes_before(n) != self.forward else 1)
            )
            * places
            + rel_order.get(rel, places - 1),
            -edge.confidence,
            -len(_concept_tokens(c.name, c.summary) & self.qtokens),
            cid,
            edge.key,
            n,
        )


@lru_cache(maxsize=8192)
def _concept_tokens(name: str, summary: str) -> frozenset[str]:
    """The token set :func:`similarity` reads for a concept (name and summary), keyed by the two
    texts themselves: a candidate is re-ranked every round and its texts keep their hashes,
    where joining them anew cost a fresh string to hash each time. (Not through ``_token_set``:
    each concept is tokenised once per question, and a second cache only costs an eviction.)"""
    return frozenset(normalise(f"{name} {summary}"))


class Ranking:
    """The rankings of one question (``query``): :meth:`rank` is :func:`rank`, with each
    candidate's key kept per focus for the question's later rankings.

    One per question, dropped with it: what it keeps (an entry per candidate and focus) lives
    no longer than the candidates do, so it never ages into the collector's older generations
    or outlives a change to the graph."""

    __slots__ = ("_contexts", "query")

    def __init__(self, query: str) -> None:
        self.query = query
        self._contexts: dict[Focus, _Context] = {}

    def rank(
        self, neighbours: Iterable[Neighbour], focus: Focus, *, limit: int | None = None
    ) -> list[Neighbour]:
        """Neighbours ordered by relevance (module docstring), one per concept, at most ``limit``."""
        # Keys are unique (one version per edge key), so this is each concept's best neighbour
        # in key order: the context's entries are walked in key order, keeping the first entry
        # of each concept among this call's candidates, up to ``limit``.
        if limit is not None and limit < 1:
            return []
        ctx = self._contexts.get(focus)
        if ctx is None:
            ctx = self._contexts[focus] = _Context(focus, self.query)
        candidates = list(neighbours)
        entries, order = ctx.entries, ctx.order
        fresh = [ctx.entry(n) for n in candidates if id(n) not in entries]
        if fresh:
            entries.update((id(e[-1]), e) for e in fresh)
            # Sorted runs merge in linear time: the old entries need no comparing among themselves.
            order.extend(fresh)
            order.sort()
        wanted = set(map(id, candidates))
        out: list[Neighbour] = []
        taken: set[str] = set()
        for e in order:
            n = e[-1]
            if id(n) in wanted and e[_CID] not in taken:
                taken.add(e[_CID])
                out.append(n)
                if len(out) == limit:
                    break
        return out


def rank(
    neighbours: Iterable[Neighbour], focus: Focus, query: str, *, limit: int | None = None
) -> list[Neighbour]:
    """Neighbours ordered by relevance (module docstring), one per concept, at most ``limit``."""
    return Ranking(query).rank(neighbours, focus, limit=limit)
