"""Verification of a draft against the evidence sub-graph: pure, no I/O.

A draft may become the answer only when

* it carries no ``error`` (malformed model output),
* its confidence is at least the threshold (0.80 by default),
* it cites at least one concept or edge, and every cited concept, edge and lesson link id is in
  the evidence;
* given the question's reading, every cited concept stands in the interpreted relation to the
  subject along evidence edges (``control_plane.understanding.relating.standing``): an answer to
  "what has RAG as a prerequisite" that cites RAG's own prerequisites is rejected;
* cited lesson links fit a lesson reading: "lessons covering X" cites links to X only, "lessons
  before X" links to concepts needed before X from lessons that do not cover X itself.

The evidence holds only versions read as of the query time, so membership is the same as
"active as of the query time"; an id that is not in the evidence is unknown or out of scope.
A rejected draft keeps its confidence capped just below the threshold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from control_plane.evidence import EvidenceGraph
from control_plane.synthesizers.base import Draft
from control_plane.understanding.interpretation import Reading
from control_plane.understanding.relating import standing

__all__ = ["Verdict", "verify"]


@dataclass(frozen=True)
class Verdict:
    """The outcome of checking one draft."""

    accepted: bool
    confidence: float  # the draft's confidence, capped below the threshold when rejected
    reason: str  # "accepted", or why not (recorded in the round trace)
    unknown_concepts: tuple[str, ...] = ()
    unknown_edges: tuple[str, ...] = ()


def _cap(confidence: float, threshold: float) -> float:
    """Just below the threshold (0.79 for 0.80), never above the draft's own confidence."""
    below = round(threshold - 0.01, 2) if threshold >= 0.01 else 0.0
    return max(0.0, min(confidence, below))


def verify(
    draft: Draft,
    evidence: EvidenceGraph[Any, Any],
    *,
    threshold: float = 0.80,
    reading: Reading | None = None,
) -> Verdict:
    """Accept or reject ``draft``; a rejection names the first reason found."""
    conf = draft.confidence if 0.0 <= draft.confidence <= 1.0 else 0.0
    if draft.error:
        return Verdict(False, _cap(0.0, threshold), f"unusable model output: {draft.error}")
    unknown_c = tuple(sorted({c for c in draft.concept_ids if c not in evidence.concepts}))
    unknown_e = tuple(sorted({e for e in draft.edge_ids if e not in evidence.edges}))
    unknown_e += tuple(sorted({r for r in draft.lesson_refs if r not in evidence.lessons}))
    if unknown_c or unknown_e:
        cited = ", ".join([*unknown_c, *unknown_e])
        return Verdict(
            False,
            _cap(conf, threshold),
            f"cites ids outside the evidence: {cited}",
            unknown_c,
            unknown_e,
        )
    if conf < threshold:
        why = f"confidence {conf:.2f} below {threshold:.2f}"
        if draft.missing:
            why += f"; missing: {draft.missing}"
        return Verdict(False, _cap(conf, threshold), why)
    if not draft.concept_ids and not draft.edge_ids:
        return Verdict(False, _cap(conf, threshold), "cites nothing from the evidence")
    allowed = standing(reading, evidence) if reading is not None else None
    if allowed is not None:
        stray = sorted({c for c in draft.concept_ids if c not in allowed})
        if stray:
            return Verdict(
                False,
                _cap(conf, threshold),
                f"cites concepts that are not {reading.describe() if reading else ''} along the evidence: "
                + ", ".join(stray),
            )
    if reading is not None and draft.lesson_refs:
        misplaced = _misplaced_lessons(draft, evidence, reading, allowed)
        if misplaced:
            return Verdict(
                False,
                _cap(conf, threshold),
                f"cites lesson links that are not {reading.describe()}: " + ", ".join(misplaced),
            )
    return Verdict(True, conf, "accepted")


def _misplaced_lessons(
    draft: Draft, evidence: EvidenceGraph[Any, Any], reading: Reading, allowed: frozenset[str] | None
) -> list[str]:
    """Cited lesson links that do not answer the reading (module docstring)."""
    x = reading.subject
    links = {r: evidence.lessons[r] for r in draft.lesson_refs}
    if reading.intent == "lessons_covering":
        return sorted(r for r, link in links.items() if link.concept_id != x)
    if reading.intent == "lessons_before":
        own = {link.lesson_id for link in evidence.lessons_of(x)} if x is not None else set()
        return sorted(
            r
            for r, link in links.items()
            if link.concept_id == x
            or link.lesson_id in own
            or (allowed is not None and link.concept_id not in allowed)
        )
    return []
