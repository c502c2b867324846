"""Relation types and their directions: the one place they are defined.

An edge is stored as ``(source_id, target_id, relation)``:

===============  ==========================================================  =========
relation         meaning of ``source -> target``                             symmetric
===============  ==========================================================  =========
prerequisite     source must be mastered before target                       no
builds_on        source builds on target (target is the foundation)          no
part_of          source is a part or component of target                     no
related          source and target are related                               yes
contrasts_with   source and target are alternatives or opposites             yes
===============  ==========================================================  =========

Symmetric edges are stored once, with the smaller id as source, so ``(a, b)`` and ``(b, a)`` are
the same key. Only ``prerequisite`` edges are checked for cycles (among active edges).

"Needed before X" (the learner's question) follows prerequisite edges *into* X and builds_on
edges *out of* X, transitively: both say the other concept comes first.
"""

from __future__ import annotations

from typing import Final

PREREQUISITE: Final = "prerequisite"
BUILDS_ON: Final = "builds_on"
PART_OF: Final = "part_of"
RELATED: Final = "related"
CONTRASTS_WITH: Final = "contrasts_with"

RELATIONS: Final[tuple[str, ...]] = (PREREQUISITE, BUILDS_ON, PART_OF, RELATED, CONTRASTS_WITH)
SYMMETRIC: Final[frozenset[str]] = frozenset({RELATED, CONTRASTS_WITH})

# How to read an edge as a sentence, for prompts, pictures and answers.
PHRASES: Final[dict[str, str]] = {
    PREREQUISITE: "must be mastered before",
    BUILDS_ON: "builds on",
    PART_OF: "is part of",
    RELATED: "is related to",
    CONTRASTS_WITH: "contrasts with",
}


def canonical_edge(source_id: str, target_id: str, relation: str) -> tuple[str, str, str]:
    """The stored key of an edge: symmetric relations put the smaller id first."""
    if relation in SYMMETRIC and target_id < source_id:
        return target_id, source_id, relation
    return source_id, target_id, relation


def edge_key(source_id: str, target_id: str, relation: str) -> str:
    """A stable, human-readable edge key: ``source>relation>target`` (canonical order)."""
    s, t, r = canonical_edge(source_id, target_id, relation)
    return f"{s}>{r}>{t}"


def parse_edge_key(key: str) -> tuple[str, str, str]:
    """Inverse of :func:`edge_key`; raises ValueError on anything else."""
    parts = key.split(">")
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"not an edge key (source>relation>target): {key!r}")
    source_id, relation, target_id = parts
    return source_id, target_id, relation
