"""Which evidence concepts stand in a reading's relation to its subject: pure graph walks.

Shared by the offline synthesizer (which answers from them) and the verifier (which rejects a
draft citing a concept outside them). Steps follow ``data_plane.relations``:

* ``before`` (what comes before X): prerequisite edges into X, builds_on edges out of X;
* ``after`` (what comes after X): the reverse;
* ``parts`` / ``wholes``: part_of edges into / out of X;
* ``either``: the symmetric relations (and neighbourhoods), both ways.

Only the relations the reading answers from (``Reading.relations``) are walked.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from control_plane.evidence import EvidenceGraph
from control_plane.understanding.interpretation import Reading
from data_plane.relations import BUILDS_ON, PART_OF, PREREQUISITE

__all__ = ["Adjacency", "Walk", "adjacency", "asked_adjacency", "mode_of", "standing", "walk"]

Adjacency = dict[str, list[tuple[str, str]]]


@dataclass
class Walk:
    """A breadth-first walk: reached concept → (previous concept, edge ref); and distances."""

    parent: dict[str, tuple[str, str] | None]
    dist: dict[str, int] = field(default_factory=dict)

    def path_edges(self, node: str) -> list[str]:
        refs: list[str] = []
        while (step := self.parent.get(node)) is not None:
            node, ref = step
            refs.append(ref)
        return refs

    def paths_edges(self, nodes: Iterable[str]) -> set[str]:
        """The refs of :meth:`path_edges` of every one of ``nodes``, together: each step is taken
        once, so thousands of members cost what their walk does, not members x depth."""
        refs: set[str] = set()
        seen: set[str] = set()
        for node in nodes:
            while node not in seen and (step := self.parent.get(node)) is not None:
                seen.add(node)
                node, ref = step
                refs.add(ref)
        return refs


def adjacency(evidence: EvidenceGraph[Any, Any], relations: Collection[str], mode: str) -> Adjacency:
    """x → the concepts one step from x in ``mode`` (module docstring) over ``relations``."""
    adj: Adjacency = {}
    for ref, e in sorted(evidence.edges.items(), key=lambda kv: int(kv[0][1:])):
        if relations and e.relation not in relations:
            continue
        s, t = e.source_id, e.target_id
        if mode == "either":
            pairs = [(s, t), (t, s)]
        elif e.relation == PREREQUISITE:
            pairs = [(t, s)] if mode == "before" else [(s, t)] if mode == "after" else []
        elif e.relation == BUILDS_ON:
            pairs = [(s, t)] if mode == "before" else [(t, s)] if mode == "after" else []
        elif e.relation == PART_OF:
            pairs = [(t, s)] if mode == "parts" else [(s, t)] if mode == "wholes" else []
        else:
            pairs = [(s, t), (t, s)] if mode not in ("before", "after", "parts", "wholes") else []
        for a, b in pairs:
            adj.setdefault(a, []).append((b, ref))
    return adj


def walk(start: str, adj: Mapping[str, list[tuple[str, str]]], *, depth: int | None = None) -> Walk:
    parent: dict[str, tuple[str, str] | None] = {start: None}
    dist = {start: 0}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if depth is not None and dist[node] >= depth:
            continue
        for nxt, ref in adj.get(node, []):
            if nxt not in parent:
                parent[nxt] = (node, ref)
                dist[nxt] = dist[node] + 1
                queue.append(nxt)
    return Walk(parent, dist)


def mode_of(reading: Reading) -> str | None:
    """The walk a reading's intent answers with, or None for intents without a relation."""
    intent = reading.intent
    if intent in ("parts", "wholes"):
        return intent
    if intent in ("contrasts", "related", "neighbours"):
        return "either"
    if reading.direction == "after":
        return "after"
    if reading.direction in ("before", "forward"):
        return "before"
    return None


def asked_adjacency(reading: Reading, evidence: EvidenceGraph[Any, Any]) -> tuple[Adjacency, str]:
    """The steps a reading's relation takes over the evidence, and their mode: its relations (any,
    for a neighbourhood) in its direction ("before" when it has none). The answer is walked over
    it and a claimed path is checked against it."""
    mode = mode_of(reading) or "before"
    relations = () if reading.intent == "neighbours" else reading.relations
    return adjacency(evidence, relations, mode), mode


def standing(reading: Reading, evidence: EvidenceGraph[Any, Any]) -> frozenset[str] | None:
    """Every evidence concept that stands in the reading's relation to one of its subjects (the
    subjects themselves included), or None when the intent puts no relation on citations."""
    mode = mode_of(reading)
    if mode is None or reading.intent in ("about", "lessons_covering", "unknown"):
        return None
    relations = () if reading.intent == "neighbours" else reading.relations
    adj = adjacency(evidence, relations, mode)
    transitive = reading.transitive or reading.intent in (
        "path",
        "before_uses",
        "study_plan",
        "lessons_before",
    )
    depth = reading.hops if reading.intent == "neighbours" else (None if transitive else 1)
    out: set[str] = set(reading.ids())
    starts = [reading.subject, reading.other] if reading.intent != "path" else [reading.other]
    for s in starts:
        if s is not None:
            out |= set(walk(s, adj, depth=depth).parent)
    if reading.intent == "before_uses" and reading.other is not None:
        out |= {t for t, _ in adjacency(evidence, (BUILDS_ON,), "before").get(reading.other, [])}
    return frozenset(out)
