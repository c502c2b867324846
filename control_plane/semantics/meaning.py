"""The one meaning of every reading: what its answer is over the evidence, as a finding and as a claim.

:func:`answer` is the meaning of a reading over a request's evidence (``semantics.sets`` for the
intents, ``semantics.forms`` for the question forms): the offline synthesizer answers with it,
and the verifier recomputes every claim with it (``planning.verify``), so there is one
implementation of what "everything needed before X", "is A needed for B" or "which first" means,
and the lie detector is never a weaker copy of the answerer. :func:`draft_of` puts a finding into
words (``findings.render``) and states its claim (``claims.claim_of``): the only way an answer's
text is written. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from control_plane.semantics.claims import claim_of
from control_plane.semantics.findings import NOTHING, Ask, Finding, render, unsettled
from control_plane.semantics.forms import FORMS, count, next_concepts, ready
from control_plane.semantics.sets import INTENTS, set_answer
from control_plane.synthesizers.base import Draft, Focus, Result, Usage
from control_plane.understanding.interpretation import Reading
from data_plane.relations import RELATIONS

__all__ = ["RESULT_INTENT", "answer", "draft_of", "result_intent"]

# What an answer's result calls a question form (its intent otherwise).
RESULT_INTENT: Final = {"yes_no": "check", "count": "count", "why": "why", "ready": "ready"}


def result_intent(reading: Reading) -> str:
    return RESULT_INTENT.get(reading.form, reading.intent)


def answer(ask: Ask) -> Finding:
    """What the evidence answers to the reading (module docstring); a reading whose words allow
    other intents as well (``Reading.agree``) is answered only where every one of them gives the
    same answer."""
    found = _answer(ask)
    for intent in ask.reading.agree:
        other = _answer(Ask(ask.request, read_as(ask.reading, intent)))
        if found.complete and not other.complete:
            # not settled until both are: what the other reading still lacks is read next
            return replace(
                found, complete=False, missing=other.missing, focus=other.focus, confidence=other.confidence
            )
        if found.complete and set(found.members) != set(other.members):
            return _two_ways(ask, found, other, intent)
    return found


def read_as(reading: Reading, intent: str) -> Reading:
    """``reading`` read as ``intent`` instead (``Reading.agree``): "what can I take next, knowing
    X" as "what X opens" makes its one known concept the subject."""
    if intent == "opens" and reading.intent == "next" and len(reading.known) == 1:
        (x,) = (s for s in reading.subjects if s.role == "known")
        return replace(reading, intent="opens", subjects=(replace(x, role="subject"),), cue="opens", agree=())
    if intent == "next" and reading.intent == "opens" and reading.subject is not None:
        (x,) = (s for s in reading.subjects if s.concept_id == reading.subject)
        return replace(
            reading,
            intent="next",
            subjects=(replace(x, role="known"),),
            cue="next",
            transitive=True,
            agree=(),
        )
    raise ValueError(f"no reading of {reading.intent!r} as {intent!r}")


def _two_ways(ask: Ask, found: Finding, other: Finding, intent: str) -> Finding:
    """The abstention of a question whose two readings answer differently here: both, in words,
    with the rewrites that ask each."""
    ev, reading = ask.ev, ask.reading
    alt = read_as(reading, intent)
    one, two = reading.describe(), alt.describe()
    x = ev.name(alt.subject or reading.subject or "")
    return Finding(
        (),
        (
            f"The question can be read as {one} ({len(found.members)}) or as {two} ({len(other.members)}), "
            "and the graph answers them differently.",
        ),
        # as sure as the two answers, never complete: no claim of it is an answer, and it is what
        # the abstention says rather than an earlier round's partial answer
        confidence=min(found.confidence, other.confidence),
        missing=(
            f"the question reads two ways that answer differently: {one}, or {two}; ask "
            f"'I know {x}: what can I take next?' or 'What does {x} open up?'"
        ),
        complete=False,
    )


def _answer(ask: Ask) -> Finding:
    ev, reading = ask.ev, ask.reading
    x = reading.subject
    if reading.intent == "next":  # about what is known: no subject
        return next_concepts(ask)
    if x is None or x not in ev.concepts:
        return unsettled(
            ("The evidence names no concept from the question.",),
            "a concept named in the question",
            Focus(RELATIONS, (), ask.request.question),
        )
    if reading.relations_missing:
        asked = " or ".join(reading.asked_relations) or "lesson"
        return Finding(
            (),
            (f"The question asks about {asked} links, and this graph has none.",),
            confidence=NOTHING,
            missing=reading.relation_note,
        )
    if reading.form == "count":
        return count(ask, INTENTS.get(reading.intent, set_answer))
    if reading.form == "ready":
        return ready(ask, INTENTS.get(reading.intent, set_answer))
    if reading.form in FORMS:
        return FORMS[reading.form](ask)
    return INTENTS.get(reading.intent, FORMS.get(reading.intent, set_answer))(ask)


def draft_of(finding: Finding, ask: Ask, usage: Usage | None = None) -> Draft:
    """``finding`` in words, with what the words name, what backs them and the claim they state.
    The draft cites exactly what its text names, every end of a cited edge, and the members."""
    ev = ask.ev
    text, spans = render(finding.says, ev)
    ends = [c for ref in finding.edges for c in (ev.edges[ref].source_id, ev.edges[ref].target_id)]
    cited = tuple(dict.fromkeys([*(s.concept_id for s in spans), *ends, *finding.members]))
    return Draft(
        text,
        finding.confidence,
        cited,
        finding.edges,
        finding.missing,
        finding.focus,
        usage or Usage(),  # answered from the graph: no model call
        lesson_refs=finding.lessons,
        result=Result(result_intent(ask.reading), finding.members, finding.facts),
        names=spans,
        claim=claim_of(finding, ask.reading, ev),
    )
