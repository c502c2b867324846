"""Verification of a draft's claim against the evidence sub-graph: pure, no I/O.

A draft is a claim in its question form's contract (``semantics.claims``), never prose. The
verifier computes the evidence's own answer to the reading with the one meaning the offline
synthesizer answers with (``semantics.meaning.answer``) and holds the draft's claim to it
(``claims.judge``). A draft becomes the answer only when

* it carries no ``error`` (malformed model output) and states a claim in the reading's contract;
* its claim does not contradict the evidence: every id it names is in the evidence (which holds
  only versions read as of the query time); every step and path is made of evidence edges that
  say what the claim says they do; a complete claim equals the evidence's (the set, the polarity,
  the first concept, the count, a shortest path), and a partial one says nothing the evidence
  contradicts. A contradiction is a **fault** of the synthesizer (:attr:`Verdict.fault`): the
  loop does not expand further because of it, and a second one ends the question (``round``);
* its confidence is at least the threshold (0.80 by default), its claim says it is complete, and
  the evidence settles it (the evidence's finding is complete and confident: a "no learning path"
  or an unread subject is not an answer, whoever claims it).

**The words a learner reads are the verified claim's.** An accepted draft's text, citations and
result are the evidence's finding put into words (``semantics.meaning.draft_of``: the same
renderer the offline synthesizer writes with), so no unchecked sentence reaches a learner: a
model's draft carries no text at all. :attr:`Verdict.truth` is that rendering whether or not the
draft is accepted (what an abstention shows as the partial answer, and where the next round
looks after a fault). A rejected draft keeps its confidence capped just below the threshold.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace

from control_plane.semantics.claims import contract_of, judge
from control_plane.semantics.findings import Ask, Finding
from control_plane.semantics.meaning import answer, draft_of
from control_plane.synthesizers.base import Draft, SynthesisRequest
from control_plane.understanding.interpretation import Reading

__all__ = ["Verdict", "verify"]


@dataclass(frozen=True)
class Verdict:
    """The outcome of checking one draft."""

    accepted: bool
    confidence: float  # the draft's confidence, capped below the threshold when rejected
    reason: str  # "accepted", or why not (recorded in the round trace)
    # The draft's claim contradicts the evidence: a fault of the synthesizer, not a lack of evidence.
    fault: bool = False
    draft: Draft | None = None  # the accepted answer: the verified claim in the form's own words
    # What the evidence itself answers, in those words (accepted or not): a draft, or how to
    # compute it, once, when first asked (a draft rejected before its claim is compared, such as
    # one stating none, leaves it to :attr:`truth`: most such verdicts are superseded unread).
    truth_of: Draft | Callable[[], Draft] | None = None

    @property
    def truth(self) -> Draft | None:
        """What the evidence answered when the draft was checked (module docstring)."""
        return self.truth_of() if callable(self.truth_of) else self.truth_of


def _cap(confidence: float, threshold: float) -> float:
    """Just below the threshold (0.79 for 0.80), never above the draft's own confidence."""
    below = round(threshold - 0.01, 2) if threshold >= 0.01 else 0.0
    return max(0.0, min(confidence, below))


def verify(draft: Draft, request: SynthesisRequest, *, reading: Reading, threshold: float = 0.80) -> Verdict:
    """Accept or reject ``draft`` for ``reading`` over ``request``'s evidence; a rejection names
    the first reason found (module docstring)."""
    conf = draft.confidence if 0.0 <= draft.confidence <= 1.0 else 0.0

    def no(reason: str, *, fault: bool = False, confidence: float = conf) -> Verdict:
        return Verdict(False, _cap(confidence, threshold), reason, fault=fault, truth_of=later)

    # The evidence only grows: its answer as of now is computed when it is first needed, over
    # what the evidence holds now (``EvidenceGraph.at``), or at once when the claim needs it.
    held = request.evidence.size()

    @functools.cache
    def then() -> Draft:
        return _truth(replace(request, evidence=request.evidence.at(held)), reading)[1]

    later: Draft | Callable[[], Draft] = then
    if draft.error:
        return no(f"unusable model output: {draft.error}", confidence=0.0)
    claim = draft.claim
    if claim is None:
        return no("states no claim: an answer is its question form's claim, not prose")
    expected = contract_of(reading)
    if claim.contract != expected:
        return no(f"claims in the {claim.contract} contract; this question's is {expected}")
    finding, truth = _truth(request, reading)
    later = truth
    assert truth.claim is not None
    contradiction = judge(claim, truth.claim, request.evidence, reading, finding)
    if contradiction:
        return no(contradiction, fault=True)
    if conf < threshold:
        why = f"confidence {conf:.2f} below {threshold:.2f}"
        return no(f"{why}; missing: {draft.missing}" if draft.missing else why)
    if not claim.complete:
        return no("states a partial answer" + (f"; missing: {draft.missing}" if draft.missing else ""))
    if not finding.complete or finding.confidence < threshold:
        return no(
            f"the evidence does not settle it (confidence {finding.confidence:.2f})"
            + (f": {finding.missing}" if finding.missing else "")
        )
    confidence = min(conf, finding.confidence)
    accepted = replace(truth, confidence=confidence, usage=draft.usage, next_focus=draft.next_focus)
    return Verdict(True, confidence, "accepted", draft=accepted, truth_of=truth)


def _truth(request: SynthesisRequest, reading: Reading) -> tuple[Finding, Draft]:
    """The evidence's own answer to ``reading``, and that answer in words."""
    ask = Ask(request, reading)
    finding = answer(ask)
    return finding, draft_of(finding, ask)
