"""Which neighbours win the frontier places: a pure, deterministic ranking.

:func:`rank` orders candidate neighbours (one :class:`~data_plane.records.Neighbour` per concept)
by relevance to the current focus. The sort key, most significant first:

1. the concept is named by the focus (``focus.concept_ids``): named concepts first;
2. the relation of the connecting edge is named by the focus (``focus.relations``): named
   relations first;
3. learning order: when the focus names ``prerequisite`` (a "what comes before" question), a
   neighbour that comes *before* the concept it was reached from (the source of a prerequisite
   into it, or the target of a builds_on out of it) ranks ahead of one that comes after it;
4. among named relations, the order in which the focus names them;
5. edge confidence, higher first;
6. lexical similarity: the number of distinct normalised tokens shared by the concept's
   name + summary and the focused query (question + focus text), higher first;
7. concept id, ascending (a total order, so the result never depends on input order).

:func:`relations_named` finds the relation types a text names by cue phrases (the planner's first
focus). Nothing here reads the clock or the database.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from control_plane.seeding import normalise
from control_plane.synthesis import Focus
from data_plane.records import Neighbour
from data_plane.relations import BUILDS_ON, CONTRASTS_WITH, PART_OF, PREREQUISITE, RELATED

__all__ = ["comes_before", "rank", "relations_named", "similarity"]

# Cue phrases (normalised token sequences, see ``seeding.normalise``) → relation types they name.
_CUES: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("before", (PREREQUISITE, BUILDS_ON)),
    ("need to know", (PREREQUISITE, BUILDS_ON)),
    ("prerequisite", (PREREQUISITE,)),
    ("master first", (PREREQUISITE, BUILDS_ON)),
    ("master", (PREREQUISITE, BUILDS_ON)),
    ("required for", (PREREQUISITE, BUILDS_ON)),
    ("build on", (BUILDS_ON,)),
    ("built on", (BUILDS_ON,)),
    ("based on", (BUILDS_ON,)),
    ("depend on", (BUILDS_ON, PREREQUISITE)),
    ("use", (BUILDS_ON,)),
    ("foundation", (BUILDS_ON,)),
    ("part of", (PART_OF,)),
    ("component", (PART_OF,)),
    ("made of", (PART_OF,)),
    ("contrast", (CONTRASTS_WITH,)),
    ("versus", (CONTRASTS_WITH,)),
    ("vs", (CONTRASTS_WITH,)),
    ("alternative", (CONTRASTS_WITH,)),
    ("difference", (CONTRASTS_WITH,)),
    ("related", (RELATED,)),
    ("lead to", (PREREQUISITE, BUILDS_ON, PART_OF, RELATED)),
)


def _contains(tokens: Sequence[str], phrase: Sequence[str]) -> int:
    """Position of the first occurrence of ``phrase`` in ``tokens``, or -1."""
    n = len(phrase)
    for i in range(len(tokens) - n + 1):
        if tuple(tokens[i : i + n]) == tuple(phrase):
            return i
    return -1


def relations_named(text: str) -> tuple[str, ...]:
    """Relation types named by cue phrases in ``text``, in order of first appearance."""
    toks = normalise(text)
    hits: list[tuple[int, int, str]] = []
    for order, (cue, relations) in enumerate(_CUES):
        pos = _contains(toks, normalise(cue))
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


def similarity(text: str, query_tokens: frozenset[str]) -> int:
    """Distinct normalised tokens shared by ``text`` and the query."""
    return len(set(normalise(text)) & query_tokens)


def rank(
    neighbours: Iterable[Neighbour], focus: Focus, query: str, *, limit: int | None = None
) -> list[Neighbour]:
    """Neighbours ordered by relevance (module docstring), one per concept, at most ``limit``."""
    qtokens = frozenset(normalise(f"{query} {focus.text}"))
    named = set(focus.concept_ids)
    rel_order = {rel: i for i, rel in enumerate(focus.relations)}
    unnamed = len(rel_order)

    learning_order = PREREQUISITE in rel_order

    def key(n: Neighbour) -> tuple[int, int, int, int, float, int, str, str]:
        c = n.concept
        rel = n.edge.relation
        return (
            0 if c.concept_id in named else 1,
            0 if rel in rel_order else 1,
            0 if not learning_order or comes_before(n) else 1,
            rel_order.get(rel, unnamed),
            -n.edge.grounding.confidence,
            -similarity(f"{c.name} {c.summary}", qtokens),
            c.concept_id,
            n.edge.key,
        )

    best: dict[str, Neighbour] = {}
    for n in sorted(neighbours, key=key):
        best.setdefault(n.concept.concept_id, n)
    ordered = list(best.values())  # dict keeps the sorted order
    return ordered if limit is None else ordered[:limit]
