"""Pure cycle analysis of a prospective prerequisite graph: every cycle, and which row breaks it.

The graph is given as :class:`Arc` values over small integer node ids (a bundle importer maps
concept ids to ints so that a million rows stay compact). :func:`break_cycles` finds the cycles
one at a time and says, for each, which arc to set aside, deterministically:

1. the non-trivial strongly connected components (iterative Tarjan) are taken in the order of
   the smallest line among their removable arcs;
2. in a component, the removable arc with the smallest line is the *start*; the cycle reported
   is the start followed by the shortest path (breadth first, arcs tried in line order) from
   its target back to its source;
3. the arc set aside is the removable arc of that cycle with the lowest confidence, ties broken
   by the latest line (the row that closed the cycle when the file is read top to bottom);
4. the component is split again without that arc and the procedure repeats until no cycle is
   left.

Removable arcs are the rows of the bundle that are not already stored and in force; stored
edges are never set aside (they form an acyclic graph on their own, so every cycle has at least
one removable arc). This is a greedy feedback-arc-set heuristic: not always minimal, always
deterministic and always acyclic at the end.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["Arc", "Cycle", "break_cycles", "strongly_connected"]

N = TypeVar("N", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Arc:
    """One prerequisite arc ``source -> target`` from row ``line`` (0 for a stored edge)."""

    source: int
    target: int
    line: int
    confidence: float
    removable: bool


@dataclass(frozen=True)
class Cycle:
    """A cycle as arc indices in path order, and the index of the arc set aside to break it."""

    arcs: tuple[int, ...]
    removed: int


def strongly_connected(nodes: Iterable[N], succ: Mapping[N, Sequence[N]]) -> list[list[N]]:
    """Strongly connected components with more than one node (iterative Tarjan, so deep graphs
    do not hit the recursion limit); ``succ`` maps a node to its successors."""
    index: dict[N, int] = {}
    low: dict[N, int] = {}
    on_stack: set[N] = set()
    stack: list[N] = []
    out: list[list[N]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work: list[tuple[N, int]] = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            children = succ.get(node, ())
            recursed = False
            while i < len(children):
                child = children[i]
                i += 1
                if child not in index:
                    work.append((node, i))
                    work.append((child, 0))
                    recursed = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if recursed:
                continue
            if low[node] == index[node]:
                component: list[N] = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    out.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return out


def break_cycles(arcs: Sequence[Arc]) -> list[Cycle]:
    """Every cycle the procedure of the module docstring finds, with the arc set aside for each.

    Removing every ``Cycle.removed`` arc leaves ``arcs`` acyclic.
    """
    alive = [True] * len(arcs)
    order = sorted(range(len(arcs)), key=lambda i: arcs[i].line)

    def components(nodes: Iterable[int]) -> list[set[int]]:
        members = set(nodes)
        succ: dict[int, list[int]] = {}
        for i in order:
            a = arcs[i]
            if alive[i] and a.source in members and a.target in members:
                succ.setdefault(a.source, []).append(a.target)
        found = [set(c) for c in strongly_connected(sorted(members), succ)]
        return sorted(found, key=lambda c: _first_line(arcs, alive, order, c))

    cycles: list[Cycle] = []
    work = deque(components({n for a in arcs for n in (a.source, a.target)}))
    while work:
        comp = work.popleft()
        inside = [i for i in order if alive[i] and arcs[i].source in comp and arcs[i].target in comp]
        removable = [i for i in inside if arcs[i].removable]
        start = removable[0] if removable else inside[0]
        path = _shortest_path(arcs, inside, arcs[start].target, arcs[start].source)
        cycle = (start, *path)
        candidates = [i for i in cycle if arcs[i].removable] or list(cycle)
        victim = min(candidates, key=lambda i: (arcs[i].confidence, -arcs[i].line))
        cycles.append(Cycle(cycle, victim))
        alive[victim] = False
        work.extendleft(reversed(components(comp)))
    return cycles


def _first_line(arcs: Sequence[Arc], alive: list[bool], order: list[int], comp: set[int]) -> int:
    lines = [
        arcs[i].line
        for i in order
        if alive[i] and arcs[i].removable and arcs[i].source in comp and arcs[i].target in comp
    ]
    return min(lines, default=0)


def _shortest_path(arcs: Sequence[Arc], inside: list[int], start: int, goal: int) -> list[int]:
    """Arc indices of a shortest path ``start -> ... -> goal`` using only ``inside`` arcs."""
    succ: dict[int, list[int]] = {}
    for i in inside:
        succ.setdefault(arcs[i].source, []).append(i)
    came: dict[int, int] = {}
    seen = {start}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            break
        for i in succ.get(node, ()):
            nxt = arcs[i].target
            if nxt not in seen:
                seen.add(nxt)
                came[nxt] = i
                queue.append(nxt)
    path: list[int] = []
    node = goal
    while node != start:
        i = came[node]
        path.append(i)
        node = arcs[i].source
    return path[::-1]
