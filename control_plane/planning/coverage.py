"""Which concepts an answer's text names, and whether its citations cover them: pure, no I/O.

An answer "names" a concept when its text contains the concept's name, one of its aliases or its
id (``NameIndex``: normalised tokens, a name inside a longer name does not count: "Agent
orchestration" names agent orchestration, not "agent"). Text quoted verbatim from a cited record
(the summary of a cited concept, the reason on a cited edge, the title or id of a cited lesson) is
that record's own words,
not a claim of the answer, and is left out; the rest of the text is read piece by piece around it and
between list and clause punctuation (a name never runs across ",", ";", ":", brackets or a
sentence's end), so words on both sides never join into a name.

Used by the verifier (every named concept must be cited) and by ``kg eval`` (citation coverage:
named concepts that are cited / named concepts).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

from control_plane.evidence import EvidenceGraph
from control_plane.understanding.names import NameIndex

__all__ = ["evidence_names", "named_concepts", "quoted_records"]


# Where a name never runs on: list and clause punctuation, brackets, a sentence's end.
_BREAKS: Final = re.compile(r"[,;:()\[\]{}\n]|[.!?](?=\s|$)")


def _pieces(text: str, quoted: Iterable[str]) -> list[str]:
    """``text`` split around every occurrence of every quoted string (longest first), then at
    every break, so that the end of one listed name and the start of the next never read as a
    third name ("Embeddings, Vector search" is not "embedding vector")."""
    pieces = [text]
    for q in sorted({q for q in quoted if q.strip()}, key=len, reverse=True):
        pieces = [part for piece in pieces for part in piece.split(q)]
    return [part for piece in pieces for part in _BREAKS.split(piece) if part.strip()]


def named_concepts(text: str, names: NameIndex, *, quoted: Iterable[str] = ()) -> frozenset[str]:
    """The concept ids ``text`` names (module docstring), leaving out the ``quoted`` strings."""
    found: set[str] = set()
    for piece in _pieces(text, quoted):
        found.update(names.candidates(piece))
    return frozenset(found)


def evidence_names(evidence: EvidenceGraph[Any, Any]) -> NameIndex:
    """A name index over the evidence's own concepts (names, aliases when held, ids): what a
    caller without the graph's index can check a text against."""
    return NameIndex.from_names(
        (cid, c.name, tuple(getattr(c, "aliases", ()) or ())) for cid, c in evidence.concepts.items()
    )


def quoted_records(
    evidence: EvidenceGraph[Any, Any],
    concept_ids: Iterable[str],
    lesson_refs: Iterable[str] = (),
    edge_refs: Iterable[str] = (),
) -> tuple[str, ...]:
    """The texts an answer may quote without claiming what they name: the summaries of the
    cited concepts, the grounding reasons of the cited edges (where the evidence holds full
    records: "why" answers quote them), and the titles and ids of the cited lesson links' lessons
    (those in the evidence; a lesson id such as ``L25_prompting_fundamentals`` holds a concept's
    words too)."""
    out = [evidence.concepts[c].summary for c in dict.fromkeys(concept_ids) if c in evidence.concepts]
    for ref in dict.fromkeys(edge_refs):
        grounding = getattr(evidence.edges.get(ref), "grounding", None)
        out.append(str(getattr(grounding, "reason", "") or "").strip().rstrip("."))
    links = [evidence.lessons[r] for r in lesson_refs if r in evidence.lessons]
    out += [text for link in links for text in (link.title, link.lesson_id)]
    return tuple(t for t in out if t)
