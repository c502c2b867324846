"""Learning order over evidence edges: what each concept needs, closures, and layers (pure).

Shared by the planner's study plans (``planning.study_plan``) and the compact closure prompt
(``synthesizers.prompts``). "x needs y" when y must be mastered before x: a prerequisite edge
``y -> x`` or a builds_on edge ``x -> y`` (``data_plane.relations``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Mapping

from data_plane.cycles import strongly_connected
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
    wanted = set(concepts)
    remaining = {c: set(needs.get(c, ())) & wanted for c in wanted}
    # Each concept's count of needs still unplaced, and who needs it: a layer costs what it
    # places, not what is left (thousands of concepts in a closure).
    unplaced = {c: len(n) for c, n in remaining.items()}
    needed_by: dict[str, list[str]] = {}
    for c, n in remaining.items():
        for d in n:
            needed_by.setdefault(d, []).append(c)
    ready = sorted(c for c, k in unplaced.items() if not k)
    out: list[list[str]] = []
    while unplaced:
        if not ready:
            # Only cycles are left at the bottom: take those that need nothing outside themselves.
            left = {c: remaining[c] & unplaced.keys() for c in unplaced}
            ready = sorted(_bottom_cycles(left))
        out.append(ready)
        for c in ready:
            del unplaced[c]
        freed: list[str] = []
        for c in ready:
            for d in needed_by.get(c, ()):
                if d in unplaced:
                    unplaced[d] -= 1
                    if not unplaced[d]:
                        freed.append(d)
        ready = sorted(freed)
    return out


def _bottom_cycles(needs: Mapping[str, set[str]]) -> set[str]:
    """The concepts of ``needs`` whose every need (transitively) needs them back: the cycles
    (strongly connected components, or a concept that needs itself) that need nothing outside
    themselves."""
    cycles = [set(c) for c in strongly_connected(sorted(needs), {c: sorted(n) for c, n in needs.items()})]
    cycles += [{c} for c, n in needs.items() if c in n]
    return {c for cycle in cycles if all(needs[d] <= cycle for d in cycle) for c in cycle}
