"""Which concepts a text names, read from the text alone: the evals' independent check of citation coverage.

An answer's words are written from its verified claim (``control_plane.semantics``), which says
where it named each concept (``Draft.names``). ``kg eval`` does not take that on trust: it reads
every answer's text for the names in it with the graph's name index, by these rules, and scores
citation coverage (named concepts that are cited / named concepts):

* whole names only, the longest first: a name inside a longer one it is part of does not count
  ("Agent orchestration" names agent orchestration, not "agent"; "Evaluating multiple integrals:
  change of variables" does not also name "Multiple integrals");
* a name never runs across list or clause punctuation (",", ";", ":", brackets, a sentence's end)
  unless the name itself has that punctuation there, so the end of one listed name and the start
  of the next never read as a third ("Embeddings, Vector search" is not "embedding vector");
* a name that is also an everyday word ("Edge", "Graph", "Order", a one-letter name such as "C")
  counts only where the text writes it as a name: capitalised where a sentence does not ask for
  a capital, or in quotes; "(from prerequisite edges)" names no concept "Edge";
* text quoted verbatim from a cited record (the summary of a cited concept, the reason on a cited
  edge, the title or id of a cited lesson) is that record's own words, not a claim of the answer,
  and is left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Final

from control_plane.evidence import EvidenceGraph
from control_plane.understanding.lexicon import everyday
from control_plane.understanding.names import Match, NameIndex, tokenize

__all__ = ["evidence_names", "named_concepts", "quoted_records"]

# Quotes and emphasis a text may set a name in.
_MARKS: Final = "\"'`*“”‘’«»_"
_SENTENCE_START: Final = re.compile(r"(?:^|[.!?\n]\s*|[\-–—•]\s+)$")


def _pieces(text: str, quoted: Iterable[str]) -> list[tuple[int, str]]:
    """``text`` split around every occurrence of every quoted string (longest first), each piece
    with where it starts in ``text``."""
    pieces = [(0, text)]
    for q in sorted({q for q in quoted if q.strip()}, key=len, reverse=True):
        out: list[tuple[int, str]] = []
        for at, piece in pieces:
            pos = 0
            for m in re.finditer(re.escape(q), piece):
                out.append((at + pos, piece[pos : m.start()]))
                pos = m.end()
            out.append((at + pos, piece[pos:]))
        pieces = out
    return [(at, piece) for at, piece in pieces if piece.strip()]


def _longest_first(found: Sequence[Match]) -> list[Match]:
    """The matches a reader takes: the longest first, then each that overlaps none taken."""
    taken: list[Match] = []
    for m in sorted(found, key=lambda m: (m.start - m.end, m.start, m.concept_id)):
        if all(m.end <= t.start or t.end <= m.start or (m.start, m.end) == (t.start, t.end) for t in taken):
            taken.append(m)
    return taken


def _written_as_name(piece: str, lo: int, hi: int) -> bool:
    """Is the surface ``piece[lo:hi]`` set apart as a name: in quotes or emphasis, or with a
    capital letter where its sentence does not begin?"""
    before, after = piece[:lo].rstrip(" "), piece[hi:]
    if before[-1:] in _MARKS and after[:1] in _MARKS:
        return True
    return any(ch.isupper() for ch in piece[lo:hi]) and not _SENTENCE_START.search(piece[:lo])


def named_concepts(text: str, names: NameIndex, *, quoted: Iterable[str] = ()) -> frozenset[str]:
    """The concept ids the free ``text`` names (module docstring), leaving out the ``quoted``
    strings."""
    found: set[str] = set()
    for _, piece in _pieces(text, quoted):
        tokens = tokenize(piece)
        for m in _longest_first(names.matches(piece, breaks=True)):
            lo, hi = tokens[m.start].start, tokens[m.end - 1].end
            phrase = " ".join(t.text for t in tokens[m.start : m.end])
            if everyday(phrase) and not _written_as_name(piece, lo, hi):
                continue
            if len(phrase) == 1 and not piece[lo:hi].isupper():
                continue  # a one-letter name is written as one ("C", "R"), not "c" in "c'est"
            found.add(m.concept_id)
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
