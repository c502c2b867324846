"""Which concept already goes by a name: the pure rule behind refusing duplicate concept names.

Two concepts whose names or aliases read the same (as the question reader reads names: the
caller hands in its normaliser as ``key``) would answer as one ("GraphRAG and GraphRAG build
on ..."), so adding a second is refused unless the curator says it is intended. The rule knows
nothing about the database: the gateway and the bundle check feed it what they read.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["Claim", "NameBook", "NameKey"]

NameKey = Callable[[str], Hashable]
"""How names are compared: text -> a hashable key (e.g. lowercase singular tokens). A key that is
empty (``()``, ``""``) never clashes: such a name can never be read from a question anyway."""

Where = TypeVar("Where")


@dataclass(frozen=True)
class Claim(Generic[Where]):
    """A concept's name (or alias) as first claimed, and where it came from (e.g. a bundle line)."""

    concept_id: str
    name: str
    where: Where


class NameBook(Generic[Where]):
    """The concept each name key belongs to, first claim first."""

    def __init__(self, key: NameKey) -> None:
        self._key = key
        self._claims: dict[Hashable, Claim[Where]] = {}

    def claim(self, concept_id: str, name: str, where: Where) -> Claim[Where] | None:
        """Claim ``name`` for ``concept_id``; return the other concept's claim if the name (read
        as ``key`` reads it) already belongs to another concept, else None."""
        k = self._key(name)
        if not k:
            return None
        held = self._claims.get(k)
        if held is None:
            self._claims[k] = Claim(concept_id, name, where)
            return None
        return held if held.concept_id != concept_id else None

    def owner(self, name: str) -> Claim[Where] | None:
        """The claim on ``name``'s key, if any."""
        k = self._key(name)
        return self._claims.get(k) if k else None
