"""Seeding: which known concepts does a question name?

Pure core: :func:`normalise` turns text into lowercase, singular tokens (hyphens and punctuation
become spaces); :class:`NameIndex` maps the token sequences of every concept's name and aliases
to concept ids, and :meth:`NameIndex.find` returns the concepts named in a question, most specific
first (at most three):

1. every occurrence of a known token sequence is a match;
2. a match whose token span lies inside a longer match is dropped
   ("agent orchestration" beats "agent");
3. the remaining concepts are ordered by degree (fewer active edges = more specific), then by
   the position of their first appearance, then by id.

A qualified name ("Linear algebra for ML") is also found by its head ("linear algebra") unless
the head is another concept's name or alias. The index is built from ``GraphReader.all_concepts`` by the planner, which caches it (see
``control_plane.planning.loop``); nothing here touches the database.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from data_plane.records import Concept

__all__ = ["ARROW", "MAX_SEEDS", "TOKEN_PATTERN", "Match", "NameIndex", "normalise", "singular"]

MAX_SEEDS: Final = 3
# Words and numbers; an arrow ("A -> B", "A → B") is a token of its own, spelt ARROW.
TOKEN_PATTERN: Final = r"[a-z0-9]+|->|=>|[→⟶➔➜⇒]"
ARROW: Final = "→"
_TOKEN = re.compile(TOKEN_PATTERN)
# Endings that look plural but are not: "loss", "bus", "analysis", "bias".
_NOT_PLURAL: Final = ("ss", "us", "is", "as")
# "<head> for <audience>": the head alone names the concept too.
_QUALIFIER: Final = "for"


@lru_cache(maxsize=65_536)
def singular(token: str) -> str:
    """Conservative singular: "embeddings"→"embedding", "queries"→"query", "batches"→"batch";
    tokens of three letters or fewer and "-ss", "-us", "-is", "-as" endings are left alone."""
    if len(token) <= 3 or not token.endswith("s") or token.endswith(_NOT_PLURAL):
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("ches", "shes", "xes", "sses", "zes")):
        return token[:-2]
    return token[:-1]


@lru_cache(maxsize=4096)
def normalise(text: str) -> tuple[str, ...]:
    """Lowercase tokens with hyphens and punctuation as separators, each made singular.

    Memoised: the same names, summaries and cue phrases are normalised on every question, and
    the result is an immutable tuple, so sharing it is safe."""
    return tuple(singular(t) if t[0].isalnum() else ARROW for t in _TOKEN.findall(text.lower()))


@dataclass(frozen=True)
class Match:
    """One occurrence of a concept's name or alias in the question: tokens ``[start, end)``."""

    concept_id: str
    start: int
    end: int

    def inside(self, other: Match) -> bool:
        """Strictly contained in ``other``'s span (same span does not count)."""
        return (
            other.start <= self.start
            and self.end <= other.end
            and (other.end - other.start) > (self.end - self.start)
        )


@dataclass(frozen=True)
class NameIndex:
    """Normalised names and aliases (tokens joined by spaces) → the concept id(s) they name.

    Kept lean because it is the one per-graph structure the planner holds in memory: a 10^6-edge
    graph has ~200,000 concepts and ~600,000 phrases. A phrase almost always names one concept, so
    the value is that id itself, and a sorted tuple only when several concepts share the phrase.
    """

    phrases: Mapping[str, str | tuple[str, ...]]
    longest: int = 0

    @classmethod
    def build(cls, concepts: Iterable[Concept]) -> NameIndex:
        return cls.from_names((c.concept_id, c.name, c.aliases) for c in concepts)

    @classmethod
    def from_names(cls, entries: Iterable[tuple[str, str, Iterable[str]]]) -> NameIndex:
        """From ``(concept id, name, aliases)``; the id with underscores as spaces is a name too,
        and so is the head of a qualified name ("linear algebra" for "Linear algebra for ML")
        unless that head is some concept's own name or alias."""
        phrases: dict[str, str | tuple[str, ...]] = {}
        heads: dict[str, set[str]] = {}
        longest = 0

        def add(table: dict[str, str | tuple[str, ...]], key: str, cid: str) -> None:
            have = table.get(key)
            if have is None:
                table[key] = cid
            elif isinstance(have, str):
                if have != cid:
                    table[key] = tuple(sorted((have, cid)))
            elif cid not in have:
                table[key] = tuple(sorted((*have, cid)))

        for cid, name, aliases in entries:
            cid = sys.intern(cid)
            for text in (name, *aliases, cid.replace("_", " ")):
                toks = normalise(text)
                if toks:
                    add(phrases, " ".join(toks), cid)
                    longest = max(longest, len(toks))
                    if _QUALIFIER in toks[1:-1]:
                        heads.setdefault(" ".join(toks[: toks.index(_QUALIFIER, 1)]), set()).add(cid)
        for head, ids in heads.items():
            if head not in phrases:
                phrases[head] = next(iter(ids)) if len(ids) == 1 else tuple(sorted(ids))
        return cls(phrases, longest)

    def matches(self, question: str) -> list[Match]:
        """Every occurrence of every known phrase in ``question``."""
        toks = normalise(question)
        out: list[Match] = []
        for start in range(len(toks)):
            for n in range(1, min(self.longest, len(toks) - start) + 1):
                ids = self.phrases.get(" ".join(toks[start : start + n]))
                if ids is None:
                    continue
                for cid in (ids,) if isinstance(ids, str) else ids:
                    out.append(Match(cid, start, start + n))
        return out

    def find(
        self, question: str, degrees: Mapping[str, int] | None = None, *, limit: int = MAX_SEEDS
    ) -> list[str]:
        """The concepts named in ``question``, most specific first (see the module docstring).

        ``degrees`` (active edge counts) break ties; missing ids count as degree 0.
        """
        found = self.matches(question)
        kept = [m for m in found if not any(m.inside(o) for o in found)]
        first: dict[str, int] = {}
        for m in kept:
            first[m.concept_id] = min(first.get(m.concept_id, m.start), m.start)
        deg = degrees or {}
        ordered = sorted(first, key=lambda cid: (deg.get(cid, 0), first[cid], cid))
        return ordered[:limit]

    def candidates(self, question: str) -> list[str]:
        """Concepts that survive the containment rule, before the degree tie-break (for degrees)."""
        found = self.matches(question)
        return sorted({m.concept_id for m in found if not any(m.inside(o) for o in found)})
