"""Findings: an answer over the evidence before it is put into words, and how it is put into words.

A synthesizer's intent function computes a :class:`Finding`: the answer set (``members``, the
draft's ``result``), the sub-graph that backs it (``edges``, ``lessons``) and the text as pieces
in which concepts are references (:class:`Name`, :class:`Names`), not words. :func:`render` turns
the pieces into the text and says which concepts it named; :func:`draft_of` cites exactly those,
every end of a cited edge, and the members. So the text never names a concept the draft does not
cite. Pure: no I/O.
"""

from __future__ import annotations

import math
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from control_plane.evidence import EvidenceGraph
from control_plane.learning_order import layers, needs_from_edges
from control_plane.synthesizers.base import Draft, Focus, Result, SynthesisRequest, Usage
from control_plane.understanding.interpretation import Reading

__all__ = [
    "COMPLETE",
    "DECIDED",
    "LONG_LIST",
    "NOTHING",
    "NO_PATH",
    "PARTIAL_MAX",
    "Ask",
    "Finding",
    "Name",
    "Names",
    "Piece",
    "by_name",
    "by_ref",
    "draft_of",
    "fill",
    "partial",
    "relations_used",
    "render",
]

COMPLETE: Final = 0.9
DECIDED: Final = 0.85
PARTIAL_MAX: Final = 0.7
NO_PATH: Final = 0.5
NOTHING: Final = 0.2
# A list in learning order longer than this is written in groups by learning stage.
LONG_LIST: Final = 8
_MAX_GROUPS: Final = 4

# -- the finding and its words ----------------------------------------------------------------


@dataclass(frozen=True)
class Name:
    """A concept named in the text (rendered as its name)."""

    id: str


@dataclass(frozen=True)
class Names:
    """Concepts listed in the text, by name; ``staged``: a list in learning order, grouped by
    learning stage when it is long."""

    ids: tuple[str, ...]
    staged: bool = False


Piece = str | Name | Names


@dataclass(frozen=True)
class Finding:
    """One intent's answer over the evidence, before it is put into words: the one source of the
    draft's text (``says``), result (``members``, ``facts``) and citations (what the text names,
    ``edges``, ``lessons``)."""

    members: tuple[str, ...]
    says: tuple[Piece, ...]
    edges: tuple[str, ...] = ()
    lessons: tuple[str, ...] = ()
    confidence: float = COMPLETE
    missing: str = ""
    focus: Focus = field(default_factory=Focus)
    facts: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Ask:
    """What every intent function looks at."""

    request: SynthesisRequest
    reading: Reading

    @property
    def ev(self) -> EvidenceGraph[Any, Any]:
        return self.request.evidence

    @property
    def unexpanded(self) -> frozenset[str]:
        return self.request.unexpanded


def _stages(ids: Sequence[str], ev: EvidenceGraph[Any, Any]) -> list[list[str]]:
    """``ids`` in at most four groups of consecutive learning-order layers, each group closed
    where that keeps it nearest an equal share of what is left."""
    needs = needs_from_edges((e.source_id, e.target_id, e.relation) for e in ev.edges.values())
    order = layers(ids, needs)
    groups = min(_MAX_GROUPS, math.ceil(len(ids) / LONG_LIST), len(order))
    out: list[list[str]] = [[]]
    left = len(ids)  # concepts not in a closed group
    for layer in order:
        share = left / (groups - len(out) + 1)
        size = len(out[-1])
        if size and len(out) < groups and abs(size + len(layer) - share) > abs(size - share):
            left -= size
            out.append([])
        out[-1].extend(layer)
    return out


def _listed(ids: Sequence[str], ev: EvidenceGraph[Any, Any]) -> str:
    return ", ".join(ev.name(i) for i in sorted(ids, key=lambda c: (ev.name(c).lower(), c)))


def _names_text(piece: Names, ev: EvidenceGraph[Any, Any]) -> str:
    if not piece.staged or len(piece.ids) <= LONG_LIST:
        return _listed(piece.ids, ev)
    groups = _stages(piece.ids, ev)
    if len(groups) < 2:
        return _listed(piece.ids, ev)
    words = ["first", *["then"] * (len(groups) - 2), "and last"]
    body = "; ".join(f"{w} {_listed(g, ev)}" for w, g in zip(words, groups, strict=True))
    return f"{len(piece.ids)} concepts, in learning order: {body}"


def render(says: Iterable[Piece], ev: EvidenceGraph[Any, Any]) -> tuple[str, tuple[str, ...]]:
    """The text of ``says`` and the concepts it names, in order of appearance."""
    words: list[str] = []
    named: list[str] = []
    for piece in says:
        if isinstance(piece, str):
            words.append(piece)
        elif isinstance(piece, Name):
            words.append(ev.name(piece.id))
            named.append(piece.id)
        else:
            words.append(_names_text(piece, ev))
            named.extend(piece.ids)
    return "".join(words), tuple(dict.fromkeys(named))


def fill(template: str, **slots: Sequence[Piece] | str) -> tuple[Piece, ...]:
    """A sentence template (``{x}`` slots) as pieces; a slot is text or pieces."""
    out: list[Piece] = []
    for literal, name, _, _ in string.Formatter().parse(template):
        if literal:
            out.append(literal)
        if name is not None:
            value = slots[name]
            out.extend([value] if isinstance(value, str) else value)
    return tuple(out)


def draft_of(finding: Finding, ev: EvidenceGraph[Any, Any], intent: str) -> Draft:
    text, named = render(finding.says, ev)
    ends = [c for ref in finding.edges for c in (ev.edges[ref].source_id, ev.edges[ref].target_id)]
    cited = tuple(dict.fromkeys([*named, *ends, *finding.members]))
    return Draft(
        text,
        finding.confidence,
        cited,
        finding.edges,
        finding.missing,
        finding.focus,
        Usage(),  # answered from the graph: no model call
        lesson_refs=finding.lessons,
        result=Result(intent, finding.members, finding.facts),
    )


def by_ref(refs: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(refs), key=lambda r: int(r[1:])))


def by_name(ids: Iterable[str], ev: EvidenceGraph[Any, Any]) -> tuple[str, ...]:
    return tuple(sorted(set(ids), key=lambda c: (ev.name(c).lower(), c)))


def partial(
    finding: Finding, open_: Sequence[str], ev: EvidenceGraph[Any, Any], relations: tuple[str, ...]
) -> Finding:
    """``finding`` from incomplete evidence: below 0.80, naming what is still unexplored."""
    n = len(finding.members)
    share = n / (n + len(open_)) if n or open_ else 0.0
    names = ", ".join(ev.name(c) for c in open_)
    return Finding(
        finding.members,
        finding.says,
        finding.edges,
        finding.lessons,
        round(min(PARTIAL_MAX, 0.3 + 0.4 * share) if n else NOTHING, 2),
        f"unexplored: {names}",
        Focus(relations, tuple(open_), f"expand {names}"),
        finding.facts,
    )


def relations_used(reading: Reading) -> str:
    """How the answer names the relation it used."""
    if reading.relation_note:
        return f" ({reading.relation_note})"
    if not reading.relations or reading.intent in ("about", "neighbours"):
        return ""
    rels = " and ".join(reading.relations)
    return f" (from {rels} edges)"
