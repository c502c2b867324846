"""Learning order over evidence edges: what each concept needs, closures, and layers (pure).

Shared by the planner's study plans (``planning.study_plan``) and the compact closure prompt
(``synthesizers.prompts``). "x needs y" when y must be mastered before x: a prerequisite edge
``y -> x`` or a builds_on edge ``x -> y`` (``data_plane.relations``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Mapping

from data_plane.relations import BUILDS_ON, PREREQUISITE

__all__ = ["closure", "layers", "needs_from_edges"]


def needs_from_edges(edges: Iterable[tuple[str, str, str]]) -> dict[str, set[str]]:
    """``(source, target, relation)`` edges → concept → concepts needed immediately before it."""
    needs: dict[str, set[str]] = {}
    for source, target, relation in edges:
        if relation == PREREQUISITE:
            needs.setdefault(target, set()).add(source)
        elif relation == BUILDS_ON:
            needs.setdefault(source, set()).add(target)
    return needs


def closure(starts: Iterable[str], needs: Mapping[str, Collection[str]]) -> set[str]:
    """Everything needed, transitively, before any of ``starts`` (the starts only if on a cycle)."""
    seen: set[str] = set()
    queue = deque(starts)
    while queue:
        for nxt in needs.get(queue.popleft(), ()):
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return seen


def layers(concepts: Collection[str], needs: Mapping[str, Collection[str]]) -> list[list[str]]:
    """``concepts`` in learning order, as early as possible: layer 0 needs nothing among them,
    each later layer needs only earlier ones; ids sorted within a layer. Concepts on a
    learning-order cycle (possible through builds_on) share one layer, after what they need."""
    remaining = {c: set(needs.get(c, ())) & set(concepts) for c in concepts}
    out: list[list[str]] = []
    while remaining:
        ready = sorted(c for c, n in remaining.items() if not n)
        if not ready:
            # Only cycles are left at the bottom: take those that need nothing outside themselves.
            reach = {c: closure([c], remaining) for c in remaining}
            ready = sorted(c for c in remaining if all(c in reach[d] for d in reach[c]))
        out.append(ready)
        for c in ready:
            del remaining[c]
        for n in remaining.values():
            n.difference_update(ready)
    return out
