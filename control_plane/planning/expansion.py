"""The planner's one data-plane call per round, as a protocol and its SQL implementation.

Two kinds of call: ``neighbours`` (one hop, both directions, any relation) and ``walk`` (the
focused learning-order relations followed transitively, ``data_plane.walks``). Each is one SQL
statement.

``SQLPropertyGraphStore`` (LlamaIndex's retrieval interface over our SQL graph) inherits
:class:`ReaderExpander`, so the loop and the property-graph store share one expansion; the loop
never imports the store (it would cost LlamaIndex's import on every offline ``kg ask``).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from data_plane.reads import GraphReader
from data_plane.records import Neighbour
from data_plane.temporal import AsOf
from data_plane.walks import FRINGE, Walk, fringe, learning_steps, walk

__all__ = ["Expander", "ReaderExpander"]


class Expander(Protocol):
    """The planner's one data-plane call per round (``SQLPropertyGraphStore`` implements it)."""

    def neighbours(
        self,
        ids: Collection[str],
        *,
        as_of: AsOf,
        exclude: Collection[str] = (),
        relations: Collection[str] | None = None,
    ) -> list[Neighbour]: ...

    def walk(
        self,
        ids: Collection[str],
        *,
        as_of: AsOf,
        direction: str,
        relations: Collection[str],
        max_depth: int | None,
        budget: int,
        exclude: Collection[str] = (),
    ) -> Walk: ...


class ReaderExpander:
    """The one implementation of :class:`Expander`: ``GraphReader.neighbourhood``, one SQL
    statement. ``SQLPropertyGraphStore`` inherits it (its ``get_rel_map`` and ``get_triplets``
    are built on it); this class alone serves callers that must not pay LlamaIndex's ~1.5 s
    import, such as the offline ``kg ask``."""

    def __init__(self, reader: GraphReader) -> None:
        self._reader = reader

    def neighbours(
        self,
        ids: Collection[str],
        *,
        as_of: AsOf,
        exclude: Collection[str] = (),
        relations: Collection[str] | None = None,
    ) -> list[Neighbour]:
        """Active neighbours of ``ids`` in both directions, in one SQL statement."""
        return self._reader.neighbourhood(ids, as_of=as_of, relations=relations, exclude=exclude)

    def walk(
        self,
        ids: Collection[str],
        *,
        as_of: AsOf,
        direction: str,
        relations: Collection[str],
        max_depth: int | None,
        budget: int,
        exclude: Collection[str] = (),
    ) -> Walk:
        """``relations`` followed transitively from ``ids`` in learning ``direction``
        (``needed_before`` or ``unlocks``, or the ``fringe`` of what a learner knowing ``ids`` can
        take up next), in one recursive SQL statement, with the thin edge and concept rows the
        evidence holds (grounded once per answer, like the one-hop rows)."""
        with self._reader.connection() as conn:  # the question's pinned one, if any
            if direction == FRINGE:
                return fringe(conn, ids, as_of=as_of, relations=relations, budget=budget)
            return walk(
                conn,
                ids,
                as_of=as_of,
                steps=learning_steps(direction, relations),
                max_depth=max_depth,
                budget=budget,
                exclude=exclude,
                detail=True,
            )
