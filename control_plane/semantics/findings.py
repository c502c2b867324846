"""Findings: an answer over the evidence before it is put into words, and how it is put into words.

Each reading's meaning (``semantics.sets``, ``semantics.forms``) computes a :class:`Finding`: the
answer set (``members``, the draft's ``result``), whether the evidence settles it
(``complete``), the sub-graph that backs it (``edges``, the ordered proof ``path``, ``lessons``)
and the text as pieces in which concepts are references (:class:`Name`, :class:`Names`), not
words. :func:`render` turns the pieces into the text and says which concepts it named;
:func:`draft_of` cites exactly those, every end of a cited edge, and the members, and states the
finding's claim (``semantics.claims``). So the text never names a concept the draft does not
cite, and says nothing its claim does not. Pure: no I/O.
"""

from __future__ import annotations

import math
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from control_plane.evidence import EvidenceGraph
from control_plane.learning_order import layers, needs_from_edges
from control_plane.synthesizers.base import Focus, NameSpan, SynthesisRequest
from control_plane.understanding.interpretation import Reading

__all__ = [
    "COMPLETE",
    "DECIDED",
    "LONG_LIST",
    "LONG_SET",
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
    "fill",
    "partial",
    "relations_used",
    "render",
    "unsettled",
]

COMPLETE: Final = 0.9
DECIDED: Final = 0.85
PARTIAL_MAX: Final = 0.7
NO_PATH: Final = 0.5
NOTHING: Final = 0.2
# A list in learning order longer than this is written in groups by learning stage.
LONG_LIST: Final = 8
_MAX_GROUPS: Final = 4
# A list longer than this (more than a screen of names) is written as its size and its first
# names (of a list in learning order, its first layers); the answer's result holds every one.
LONG_SET: Final = 200
SHOWN: Final = 20

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
    # Whether the evidence settles the finding: False while something it depends on is unread
    # (a partial finding) or when the question names too little to answer.
    complete: bool = True
    # The proof path's edge refs in order (a check, a which-first, a learning path), else ().
    path: tuple[str, ...] = ()


def unsettled(says: tuple[Piece, ...], missing: str = "", focus: Focus | None = None) -> Finding:
    """A finding that answers nothing yet: the question names too little, or what it needs is
    not read."""
    return Finding((), says, confidence=NOTHING, missing=missing, focus=focus or Focus(), complete=False)


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


class _Text:
    """Text being written, with the span of every concept name written into it."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.spans: list[NameSpan] = []

    def word(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)

    def name(self, cid: str, ev: EvidenceGraph[Any, Any]) -> None:
        name = ev.name(cid)
        self.spans.append(NameSpan(self.size, self.size + len(name), cid))
        self.word(name)

    def listed(self, ids: Sequence[str], ev: EvidenceGraph[Any, Any]) -> None:
        for i, cid in enumerate(sorted(ids, key=lambda c: (ev.name(c).lower(), c))):
            if i:
                self.word(", ")
            self.name(cid, ev)

    def names(self, piece: Names, ev: EvidenceGraph[Any, Any]) -> None:
        if len(piece.ids) > LONG_SET:
            self.first(piece, ev)
            return
        groups = _stages(piece.ids, ev) if piece.staged and len(piece.ids) > LONG_LIST else []
        if len(groups) < 2:
            self.listed(piece.ids, ev)
            return
        words = ["first", *["then"] * (len(groups) - 2), "and last"]
        self.word(f"{len(piece.ids)} concepts, in learning order: ")
        for i, (w, g) in enumerate(zip(words, groups, strict=True)):
            self.word(f"{'; ' if i else ''}{w} ")
            self.listed(g, ev)

    def first(self, piece: Names, ev: EvidenceGraph[Any, Any]) -> None:
        """A long list as its size and its first :data:`SHOWN` names: in learning order, its
        first whole layers (or the start of the first, when that alone is longer)."""
        n, ids = len(piece.ids), piece.ids
        shown: list[Sequence[str]]
        if piece.staged:
            needs = needs_from_edges((e.source_id, e.target_id, e.relation) for e in ev.edges.values())
            order = layers(ids, needs)
            shown = [by_name(order[0], ev)[:SHOWN]]
            for layer in order[1:]:
                if sum(map(len, shown)) + len(layer) > SHOWN:
                    break
                shown.append(by_name(layer, ev))
            if len(shown[0]) < len(order[0]):
                self.word(
                    f"{n} concepts; in learning order, {SHOWN} of the {len(order[0])} that come first: "
                )
            else:
                self.word(f"{n} concepts; in learning order, the first {len(shown)} of {len(order)} layers: ")
        else:
            shown = [by_name(ids, ev)[:SHOWN]]
            self.word(f"{n} concepts; the first {len(shown[0])} by name: ")
        for i, names in enumerate(shown):
            if i:
                self.word("; ")
            self.listed(names, ev)
        self.word(f"; and {n - sum(map(len, shown))} more, every one in the answer's result")


def render(says: Iterable[Piece], ev: EvidenceGraph[Any, Any]) -> tuple[str, tuple[NameSpan, ...]]:
    """The text of ``says`` and where it names which concept (every name it wrote, in order)."""
    out = _Text()
    for piece in says:
        if isinstance(piece, str):
            out.word(piece)
        elif isinstance(piece, Name):
            out.name(piece.id, ev)
        else:
            out.names(piece, ev)
    return "".join(out.parts), tuple(out.spans)


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
    return replace(
        finding,
        confidence=round(min(PARTIAL_MAX, 0.3 + 0.4 * share) if n else NOTHING, 2),
        missing=f"unexplored: {names}",
        focus=Focus(relations, tuple(open_), f"expand {names}"),
        complete=False,
    )


def relations_used(reading: Reading) -> str:
    """How the answer names the relation it used."""
    if reading.relation_note:
        return f" ({reading.relation_note})"
    if not reading.relations or reading.intent in ("about", "neighbours"):
        return ""
    rels = " and ".join(reading.relations)
    return f" (from {rels} edges)"
